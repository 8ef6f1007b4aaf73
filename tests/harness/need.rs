//! What a test needs from the machine. A missing tool fails the test, naming the tool and the
//! package from `ci/packages.txt` (ci/test.sh installs them all); a test that needs root fails
//! too (the suite runs as root). Only a kernel feature the machine lacks, checked by the test,
//! skips it: [`skip_for_kernel`] names the feature and records the skip in
//! `target/tmp/fiox-skips.log`, which ci/test.sh counts at the end of the run.
//!
//! Shared by the test crates of the workspace (`#[path]` from crates/*/tests).

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

/// The package list, one `TOOL PACKAGE  # who needs it` a line.
pub const PACKAGES: &str = include_str!("../../ci/packages.txt");

/// The package providing `tool` according to ci/packages.txt.
pub fn package_of(tool: &str) -> Option<&'static str> {
    PACKAGES.lines().find_map(|l| {
        let l = l.split('#').next().unwrap_or("");
        let mut w = l.split_whitespace();
        (w.next() == Some(tool)).then(|| w.next()).flatten()
    })
}

/// Whether `tool` is an executable on PATH (what `Command::new(tool)` runs).
pub fn has_tool(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| {
        std::fs::metadata(d.join(tool))
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    })
}

/// Fail the test unless `tool` is installed, naming the tool and how to install it. A tool
/// missing from ci/packages.txt fails too: the list must name every program a test runs.
pub fn require_tool(tool: &str) {
    let Some(pkg) = package_of(tool) else {
        panic!("{tool} is not in ci/packages.txt: add `{tool} PACKAGE  # tests` there");
    };
    assert!(
        has_tool(tool),
        "{tool} is not installed: run `apt-get install {pkg}` as root, or ci/test.sh \
         (installs every package in ci/packages.txt, then runs the tests)"
    );
}

/// Fail the test unless a file matching `entry` (a ci/packages.txt entry of the form
/// `/DIR/PREFIX*`, e.g. `/boot/vmlinuz-*`) exists, naming the package that installs it.
pub fn require_file(entry: &str) {
    let Some(pkg) = package_of(entry) else {
        panic!("{entry} is not in ci/packages.txt: add `{entry} PACKAGE  # tests` there");
    };
    let (dir, prefix) = entry.rsplit_once('/').unwrap_or(("/", entry));
    let prefix = prefix.trim_end_matches('*');
    let found = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(prefix))
        });
    assert!(
        found,
        "no {entry}: run `apt-get install {pkg}` as root, or ci/test.sh (installs every \
         package in ci/packages.txt, then runs the tests)"
    );
}

/// fio, installed: always true, or the test fails naming `apt-get install fio`. Comparisons
/// against fio are what most tests exist for; none passes without making them.
pub fn need_fio() -> bool {
    require_tool("fio");
    true
}

/// Whether this process runs as root (effective uid 0).
pub fn running_as_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        .unwrap_or(false)
}

/// Fail the test unless it runs as root: the suite runs as root (`sudo ci/test.sh`), and a test
/// that needs root (loop devices, mounts, cgroups, other users) checks nothing without it.
pub fn require_root(why: &str) {
    assert!(
        running_as_root(),
        "this test needs root ({why}): the suite runs as root, e.g. `sudo ci/test.sh`"
    );
}

/// Where skips are recorded: `target/tmp/fiox-skips.log` (ci/test.sh empties it first). Unit
/// tests (no CARGO_TARGET_TMPDIR) find `target/tmp` beside the workspace's ci/packages.txt.
pub fn skip_log() -> std::path::PathBuf {
    let tmp = match option_env!("CARGO_TARGET_TMPDIR") {
        Some(t) => std::path::PathBuf::from(t),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .find(|d| d.join("ci/packages.txt").is_file())
            .unwrap_or(Path::new(env!("CARGO_MANIFEST_DIR")))
            .join("target/tmp"),
    };
    tmp.join("fiox-skips.log")
}

/// Skip the rest of a test because the kernel lacks `feature` (checked by the caller: `why` is
/// what the check found). Prints a `skip:` line and appends `feature<TAB>test<TAB>why` to
/// [`skip_log`]. The caller returns right after.
#[allow(clippy::disallowed_methods)]
pub fn skip_for_kernel(feature: &str, why: &str) {
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let why = why.replace(['\n', '\t'], " ");
    eprintln!("skip: the kernel lacks {feature}: {why}");
    let line = format!("{feature}\t{}::{test}\t{why}\n", env!("CARGO_CRATE_NAME"));
    let log = skip_log();
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Loop devices for a test: fails without root; false (the test skipped, recorded) when the
/// kernel has no loop driver.
pub fn loop_devices() -> bool {
    require_root("loop devices");
    if Path::new("/dev/loop-control").exists() {
        true
    } else {
        skip_for_kernel(
            "the loop driver",
            "no /dev/loop-control (try `modprobe loop`)",
        );
        false
    }
}

/// Whether the kernel knows filesystem `fs` (listed in /proc/filesystems); when not, the skip is
/// recorded with what the check found and false returned (the caller returns right after).
pub fn kernel_filesystem(fs: &str) -> bool {
    let list = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if list
        .lines()
        .any(|l| l.split_whitespace().last() == Some(fs))
    {
        return true;
    }
    skip_for_kernel(
        &format!("the {fs} filesystem"),
        &format!("{fs} is not in /proc/filesystems (try `modprobe {fs}`)"),
    );
    false
}

/// Whether the device node `dev` exists (a kernel driver's: /dev/fuse, /dev/full); when not,
/// the skip names `feature` and is recorded, and false is returned.
pub fn kernel_device(dev: &str, feature: &str) -> bool {
    if Path::new(dev).exists() {
        return true;
    }
    skip_for_kernel(feature, &format!("no {dev}"));
    false
}

/// Whether io_uring works here: `kernel.io_uring_disabled` is 0 (or absent) and an
/// io_uring_setup of one entry succeeds. When not, the skip is recorded with what the check
/// found and false returned.
pub fn kernel_io_uring() -> bool {
    match io_uring_probe() {
        Ok(()) => true,
        Err(why) => {
            skip_for_kernel("io_uring", &why);
            false
        }
    }
}

/// Why io_uring cannot be used here, or Ok.
#[allow(unsafe_code)] // the probe is a system call (crates that include this deny unsafe code)
pub fn io_uring_probe() -> Result<(), String> {
    if let Ok(s) = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        if s.trim() != "0" {
            return Err(format!("kernel.io_uring_disabled = {}", s.trim()));
        }
    }
    // struct io_uring_params is 120 bytes; zeroed asks for defaults.
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup(2) reads and writes `params`, a live buffer of the size the kernel
    // expects; the descriptor it returns is closed right below.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(format!(
            "io_uring_setup: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: `fd` is the descriptor io_uring_setup just returned, owned by nobody else.
    unsafe { libc::close(fd as libc::c_int) };
    Ok(())
}

/// The blkio cgroup hierarchy (cgroup v1 `blkio`, else cgroup2), as fio finds it, and
/// whether it is cgroup2.
pub fn blkio_mount() -> Option<(std::path::PathBuf, bool)> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let v1 = f[2] == "cgroup" && f[3].split(',').any(|o| o == "blkio");
        (v1 || f[2] == "cgroup2").then(|| (std::path::PathBuf::from(f[1]), f[2] == "cgroup2"))
    })
}
