//! The vm testbed end to end (`--vm`, an experiment's `vm = {...}`): a guest really boots
//! (KVM where it runs a guest, else TCG: ~20-40 s a boot, so each test boots as few guests
//! as it can and checks several things per boot), a job runs on its virtio-blk disk and its
//! JSON comes back with the guest's kernel and the accelerator; two variants compare (with
//! the guest's telemetry beside the host's); and a
//! guest whose fiox is stopped with Ctrl-C, or killed with kill -9 (QEMU dies with it, even
//! when killed the moment QEMU starts) and then cleaned up by `fiox testbed cleanup`, leaves
//! no QEMU and no file behind.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Everything a guest needs on this machine, or the test fails naming the package.
fn need_vm() {
    assert!(
        is_root(),
        "the vm testbed needs root (9p shares of the host's root)"
    );
    require_tool("qemu-system-x86_64");
    require_tool("busybox");
    require_tool("modinfo");
    require_file("/boot/vmlinuz-*");
}

/// The record files in a state directory, as text.
fn records(state: &TempDir) -> Vec<String> {
    state
        .entries()
        .iter()
        .filter(|n| n.ends_with(".testbed"))
        .map(|n| std::fs::read_to_string(state.path().join(n)).unwrap_or_default())
        .collect()
}

/// What a vm record names: its newest QEMU (pid, start time) and its directories.
struct Recorded {
    qemu: Option<(u32, u64)>,
    dirs: Vec<PathBuf>,
}

fn recorded(text: &str) -> Recorded {
    let mut r = Recorded {
        qemu: None,
        dirs: Vec::new(),
    };
    for l in text.lines() {
        let w: Vec<&str> = l.splitn(6, ' ').collect();
        match w.as_slice() {
            ["program", pid, start, ..] => {
                r.qemu = Some((pid.parse().unwrap(), start.parse().unwrap()))
            }
            ["tree", _, _, _, path] => r.dirs.push(PathBuf::from(path)),
            _ => {}
        }
    }
    r
}

/// Whether the process `pid` started at `start` still runs (not a zombie).
fn alive(pid: u32, start: u64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    f[0] != "Z" && f[19].parse::<u64>().ok() == Some(start)
}

/// Start `fiox ARGS` with its records in `state`; wait until its record names a running QEMU.
fn spawn_until_qemu(state: &TempDir, cwd: &Path, args: &[&str]) -> (Child, Recorded) {
    let mut child = Command::new(fiox_bin())
        .args(args)
        .env("FIOX_TESTBED_DIR", state.path())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    // The newest QEMU of the record, still the newest and running a second later (under
    // accel=auto a KVM attempt that QEMU ends at once comes first).
    let newest = || {
        records(state)
            .iter()
            .map(|t| recorded(t))
            .find(|r| r.qemu.is_some_and(|(pid, start)| alive(pid, start)))
    };
    let rec = loop {
        let found = newest();
        if let Some(r) = &found {
            std::thread::sleep(Duration::from_secs(1));
            if newest().is_some_and(|again| again.qemu == r.qemu) {
                break found;
            }
        }
        if t0.elapsed() > Duration::from_secs(60) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let Some(rec) = rec else {
        let _ = child.kill();
        let r = wait(child);
        panic!("no QEMU recorded after 60 s: {}", r.stderr);
    };
    (child, rec)
}

fn assert_all_gone(state: &TempDir, r: &Recorded, when: &str) {
    let (pid, start) = r.qemu.unwrap();
    assert!(!alive(pid, start), "QEMU {pid} still runs {when}");
    for d in &r.dirs {
        assert!(!d.exists(), "{} left {when}", d.display());
    }
    assert!(
        state.entries().is_empty(),
        "records left {when}: {:?}",
        state.entries()
    );
}

#[test]
fn a_job_runs_in_a_guest_on_virtio_blk_and_its_json_comes_back() {
    need_vm();
    let state = TempDir::new("vm-state");
    let dir = TempDir::under(Path::new("/var/tmp"), "vm-run");
    // One boot: a write with verify (the data went to the disk and came back), the guest's
    // scheduler set, the report with the guest's kernel and the accelerator.
    let o = Command::new(fiox_bin())
        .args([
            "--vm=disk_size=64m,memory=512m,cpus=1,aio=io_uring,sched=mq-deadline",
            "--name=vblk",
            "--filename=/dev/vda",
            "--rw=write",
            "--bs=64k",
            "--size=16m",
            "--ioengine=libaio",
            "--iodepth=4",
            "--direct=1",
            "--verify=crc32c",
            "--write_bw_log=vblk",
            "--log_avg_msec=100",
            "--output-format=json",
        ])
        .env("FIOX_TESTBED_DIR", state.path())
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let r = Run::from(o);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "", "a run that goes well says nothing on stderr");
    let j: Value = r.json();
    let env = &j["fiox"]["env"];
    let vm = &env["vm"];
    let accel = vm["accel"].as_str().unwrap();
    assert!(accel == "kvm" || accel == "tcg", "{vm}");
    let release = env["kernel"]["release"].as_str().unwrap();
    assert_eq!(vm["kernel"], release, "fiox.env.kernel is the guest's");
    assert!(
        Path::new(&format!("/lib/modules/{release}")).is_dir(),
        "{release}"
    );
    assert!(
        vm["sched"].as_str().unwrap().contains("[mq-deadline]"),
        "{vm}"
    );
    assert_eq!(vm["aio"], "io_uring");
    let dev = &env["targets"][0]["devices"][0];
    assert_eq!(dev["name"], "vda", "{}", env["targets"]);
    assert_eq!(dev["scheduler"], "mq-deadline", "{dev}");
    let job = &j["jobs"][0];
    assert_eq!(job["write"]["io_bytes"], 16u64 << 20, "{job}");
    assert_eq!(
        job["read"]["io_bytes"],
        16u64 << 20,
        "the verify pass read it all back"
    );
    assert_eq!(job["error"], 0);
    let tcg_warned = j["fiox"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "vm-tcg");
    assert_eq!(tcg_warned, accel == "tcg", "{}", j["fiox"]["warnings"]);
    assert!(state.entries().is_empty(), "{:?}", state.entries());
    // The job's bandwidth log (and its verify state) came back beside the report: the files
    // a host run of this job leaves (besides its data file, here the guest's disk).
    let mut left = dir.entries();
    left.sort();
    assert_eq!(left, ["local-vblk-0-verify.state", "vblk_bw.1.log"]);
    let log = std::fs::read_to_string(dir.join("vblk_bw.1.log")).unwrap();
    let rows: Vec<Vec<u64>> = log
        .lines()
        .map(|l| l.split(',').map(|f| f.trim().parse().unwrap()).collect())
        .collect();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.len() >= 4),
        "{log}"
    );
}

/// A loop device the test attached (and mounted): unmounted and detached when dropped.
struct TestLoop {
    dev: String,
    mnt: Option<String>,
}

impl Drop for TestLoop {
    fn drop(&mut self) {
        if let Some(m) = self.mnt.take() {
            let _ = sh("umount", &[&m]);
        }
        let _ = sh("losetup", &["-d", &self.dev]);
    }
}

#[test]
fn a_device_is_the_guests_disk_only_when_it_holds_nothing_or_is_allowed() {
    need_vm();
    require_tool("losetup");
    require_tool("mkfs.ext4");
    require_tool("mount");
    require_tool("blkid");
    let dir = TempDir::under(Path::new("/var/tmp"), "vm-dev");
    let state = TempDir::new("vm-dev-state");
    let img = dir.join("img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .unwrap();
    sh("mkfs.ext4", &["-q", "-F", &img]).unwrap();
    let dev = sh("losetup", &["-f", "--show", &img]).unwrap();
    let mut lo = TestLoop {
        dev: dev.trim().to_string(),
        mnt: None,
    };
    let mnt = dir.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    sh("mount", &[&lo.dev, &mnt]).unwrap();
    lo.mnt = Some(mnt);
    let run = |allow: &str| {
        let mut args = vec![
            format!("--vm=disk={},memory=256m,cpus=1", lo.dev),
            "--name=w".into(),
            "--filename=/dev/vda".into(),
            "--rw=write".into(),
            "--bs=64k".into(),
            "--size=1m".into(),
            "--ioengine=psync".into(),
            "--direct=1".into(),
            "--output-format=json".into(),
        ];
        if !allow.is_empty() {
            args.push(allow.into());
        }
        fiox_with_state(&state, &args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    // Mounted: refused before any guest starts.
    let r = run("");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("mounted"), "{}", r.stderr);
    assert!(state.entries().is_empty(), "{:?}", state.entries());
    let m = lo.mnt.take().unwrap();
    sh("umount", &[&m]).unwrap();
    // Holding a filesystem: refused.
    let r = run("");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("ext4"), "{}", r.stderr);
    assert!(state.entries().is_empty(), "{:?}", state.entries());
    // Named in --allow-destructive: the guest writes it (the filesystem's superblock, in the
    // first MiB, is gone afterwards).
    let r = run(&format!("--allow-destructive={}", lo.dev));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(
        j["fiox"]["env"]["vm"]["disk"],
        lo.dev.as_str(),
        "{}",
        j["fiox"]["env"]["vm"]
    );
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 1u64 << 20);
    assert!(
        sh("blkid", &["-p", &lo.dev]).is_err(),
        "the ext4 signature is still there"
    );
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

/// The kernel a guest boots by default (the newest /boot/vmlinuz-RELEASE, ordered by version
/// as fiox orders them): (its path, RELEASE).
fn newest_kernel_image() -> (PathBuf, String) {
    let k = fiox_testbed::vm::initramfs::resolve(None).expect("a kernel in /boot");
    (k.image, k.release)
}

#[test]
fn two_variants_run_in_guests_and_compare() {
    need_vm();
    let dir = TempDir::under(Path::new("/var/tmp"), "vm-exp");
    let toml = dir.join("v.toml");
    // `kernel =` as a release on one side and as the image's path on the other (a kernel
    // A/B's keys; this machine has one kernel, so both name it).
    let image = newest_kernel_image();
    std::fs::write(
        &toml,
        format!(
            "name = \"v\"\njobs = \"\"\"\n[rr]\nrw=randread\nbs=4k\nioengine=libaio\ndirect=1\n\
             iodepth=4\nsize=32m\nruntime=1\ntime_based\n\"\"\"\n\
             vm = {{ disk_size = \"64m\", memory = \"512m\", cpus = 1 }}\n\
             [[variant]]\nname = \"threads\"\nvm = {{ aio = \"threads\", kernel = \"{release}\" }}\n\
             [[variant]]\nname = \"uring\"\n\
             vm = {{ aio = \"io_uring\", sched = \"none\", kernel = \"{path}\", \
             guest_loop = \"direct\", loop_size = \"64m\", disk_size = \"160m\" }}\n",
            release = image.1,
            path = image.0.display()
        ),
    )
    .unwrap();
    // The results in /dev/shm, which the guest does not see (its own /dev is mounted there):
    // each run's job file reaches the guest through fiox's share (issue 45).
    let shm = TempDir::new("vm-exp-out");
    let out = shm.join("out");
    let state = TempDir::new("vm-exp-state");
    let o = Command::new(fiox_bin())
        .args(["experiment", &toml, &format!("--out={out}")])
        .env("FIOX_TESTBED_DIR", state.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let r = Run::from(o);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Each variant's line names its kernel (issue 45).
    for v in ["threads", "uring"] {
        let line = format!(
            "fiox: variant {v}: each run in a QEMU guest, kernel {} (",
            image.1
        );
        assert!(r.stderr.contains(&line), "{line}\n{}", r.stderr);
    }
    let run = |v: &str| -> Value {
        let text = std::fs::read_to_string(format!("{out}/runs/{v}-000.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let (a, b) = (run("threads"), run("uring"));
    for (j, aio) in [(&a, "threads"), (&b, "io_uring")] {
        let env = &j["fiox"]["env"];
        assert_eq!(env["vm"]["aio"], aio, "{}", env["vm"]);
        assert_eq!(env["kernel"]["release"], env["vm"]["kernel"]);
        assert!(
            env["host"]["kernel"].is_object(),
            "the host's env beside the guest's"
        );
        assert!(
            j["fiox"]["guest_telemetry"].is_object(),
            "the guest's own telemetry"
        );
        assert!(j["fiox"]["telemetry"].is_object(), "the host's telemetry");
        assert!(j["jobs"][0]["read"]["iops"].as_f64().unwrap() > 0.0);
    }
    assert!(b["fiox"]["env"]["vm"]["sched"]
        .as_str()
        .unwrap()
        .contains("[none]"));
    // Seed 001's stack in the guest: the job ran in the directory of ext4 on a loop device
    // with direct I/O on, over a file on the disk's ext4.
    let gl = &b["fiox"]["env"]["vm"]["guest_loop"];
    assert_eq!(gl["direct_io"], "on", "{gl}");
    assert!(gl["loop"].as_str().unwrap().ends_with(" 1"), "{gl}");
    let t = &b["fiox"]["env"]["targets"][0];
    assert_eq!(t["path"], "/run/fiox-loop", "{t}");
    assert!(a["fiox"]["env"]["vm"]["guest_loop"].is_null());
    // The bzImage's own release, read from its header, is the guest's.
    assert_eq!(b["fiox"]["env"]["kernel"]["release"], image.1);
    assert_eq!(
        b["fiox"]["env"]["vm"]["kernel_image"],
        image.0.display().to_string()
    );
    let c = fiox(&["compare", &out, "--metric=iops"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(
        c.stdout.contains("threads") && c.stdout.contains("uring"),
        "{}",
        c.stdout
    );
    assert!(c.stdout.contains("rr"), "{}", c.stdout);
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

#[test]
fn ctrl_c_and_kill_9_then_cleanup_leave_no_qemu_and_no_file() {
    need_vm();
    let dir = TempDir::under(Path::new("/var/tmp"), "vm-kill");
    let state = TempDir::new("vm-kill-state");
    let args = [
        "--vm=disk_size=32m,memory=256m,cpus=1",
        "--name=long",
        "--filename=/dev/vda",
        "--rw=randread",
        "--ioengine=psync",
        "--time_based",
        "--runtime=600",
        "--output-format=json",
    ];
    // A bad key: refused before anything is made.
    let r = fiox(&[
        "--vm=aio=posix",
        "--name=x",
        "--filename=/dev/vda",
        "--size=1m",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("threads, native or io_uring"),
        "{}",
        r.stderr
    );
    // Ctrl-C while the guest boots or runs: QEMU stopped, files and record removed.
    let (child, rec) = spawn_until_qemu(&state, dir.path(), &args);
    assert!(
        rec.dirs.len() >= 2 && rec.dirs.iter().all(|d| d.is_dir()),
        "{:?}",
        rec.dirs
    );
    sh("kill", &["-INT", &child.id().to_string()]).unwrap();
    let r = wait(child);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert_all_gone(&state, &rec, "after Ctrl-C");
    // kill -9 while the guest boots: QEMU dies with its fiox (the kernel's parent-death
    // signal); the files stay, recorded, until `fiox testbed cleanup`.
    let (mut child, rec) = spawn_until_qemu(&state, dir.path(), &args);
    child.kill().unwrap();
    child.wait().unwrap();
    let (pid, start) = rec.qemu.unwrap();
    assert!(
        wait_until(|| !alive(pid, start)),
        "QEMU {pid} outlived its fiox killed with kill -9"
    );
    assert!(rec.dirs.iter().all(|d| d.is_dir()), "{:?}", rec.dirs);
    let listed = fiox_with_state(&state, &["testbed", "list"]);
    assert!(listed.stdout.contains("vm"), "{}", listed.stdout);
    let c = fiox_with_state(&state, &["testbed", "cleanup"]);
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    assert_all_gone(&state, &rec, "after cleanup");
    // kill -9 the moment QEMU's record appears (its intent, written before the start, or
    // the pid right after): no QEMU of that fiox runs afterwards, and cleanup leaves nothing.
    let mut child = Command::new(fiox_bin())
        .args(args)
        .env("FIOX_TESTBED_DIR", state.path())
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let fiox_pid = child.id();
    let seen = wait_until(|| records(&state).iter().any(|t| t.contains("\nprogram ")));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(seen, "no QEMU recorded: {:?}", records(&state));
    let tag = format!("fiox-vm-{fiox_pid}-");
    assert!(
        wait_until(|| tagged_processes(&tag).is_empty()),
        "a QEMU of the killed fiox still runs: {:?}",
        tagged_processes(&tag)
    );
    let rec = recorded(&records(&state).concat());
    let c = fiox_with_state(&state, &["testbed", "cleanup"]);
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    for d in &rec.dirs {
        assert!(!d.exists(), "{} left after cleanup", d.display());
    }
    assert!(state.entries().is_empty(), "{:?}", state.entries());
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}

/// Poll `f` for up to 10 s.
fn wait_until(f: impl Fn() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(10) {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f()
}

/// The processes with an argument starting with `tag` (QEMU's `-name fiox-vm-PID-N`).
fn tagged_processes(tag: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a.starts_with(tag.as_bytes())))
                && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
        })
        .collect()
}

fn fiox_with_state(state: &TempDir, args: &[&str]) -> Run {
    let o = Command::new(fiox_bin())
        .args(args)
        .env("FIOX_TESTBED_DIR", state.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run::from(o)
}

/// A guest that panics in early boot (issue 45: the reason was cut off, the console deleted,
/// no retry): forced here with `kernel_cmdline = "panic=1 rdinit=/nonexistent
/// init=/nonexistent"` (fiox's initramfs runs rdinit, so init= alone boots). Each boot is
/// tried `boot_retries` more times; the error quotes the console from the kernel's panic line,
/// says that every boot failed and carries the whole console log; nothing stays behind.
#[test]
fn a_guest_that_panics_is_retried_and_its_console_is_kept() {
    need_vm();
    let state = TempDir::new("vm-panic-state");
    let r = fiox_with_state(
        &state,
        &[
            "--vm=accel=tcg,disk_size=16m,memory=256m,cpus=1,boot_s=120,boot_retries=1,\
             kernel_cmdline=panic=1 rdinit=/nonexistent init=/nonexistent",
            "--name=p",
            "--filename=/dev/vda",
            "--rw=read",
            "--size=1m",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    for want in [
        "Kernel panic",
        "boot 1 of 2 also failed",
        "--- the guest's console (",
    ] {
        assert!(r.stderr.contains(want), "{want}: {}", r.stderr);
    }
    assert!(
        records(&state).is_empty(),
        "the guest's record stayed: {:?}",
        state.entries()
    );
}
