//! `fiox testbed` and experiments' testbeds against the adversarial round of 2026-11-27, through
//! the binary: a link planted at a testbed's directory name by another user (D1, with fiox as
//! PID 1 of a new PID namespace so the name is known), a slow server that fails (M3) or is
//! killed and left a zombie (M5), and the messages of refused input (M1, M2, D12). Root runs
//! them (mounts, loop devices, unshare); scratch directories and state are each test's own.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod harness;

use harness::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

fn fiox_tb(state: &TempDir, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut c = Command::new(fiox_bin());
    c.env("FIOX_TESTBED_DIR", state.path()).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    Run::from(c.stdin(Stdio::null()).output().expect("run fiox"))
}

fn user_file(p: &Path) {
    std::fs::write(p, b"the user's data").unwrap();
}

fn intact(p: &Path) -> bool {
    std::fs::read(p).is_ok_and(|b| b == b"the user's data")
}

/// A sticky world-writable TMPDIR holding nobody's link `fiox-testbed-NAME-1` to a victim
/// directory; returns (tmpdir, victim).
fn planted(dir: &TempDir, names: &[&str]) -> (String, String) {
    let (tmp, victim) = (dir.join("tmp"), dir.join("victim"));
    std::fs::create_dir_all(format!("{victim}/nested")).unwrap();
    user_file(Path::new(&format!("{victim}/secret1")));
    user_file(Path::new(&format!("{victim}/nested/secret2")));
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    for n in names {
        let link = format!("{tmp}/fiox-testbed-{n}-1");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        sh("chown", &["-h", "65534:65534", &link]).unwrap();
    }
    (tmp, victim)
}

fn victim_intact(victim: &str) -> bool {
    intact(Path::new(&format!("{victim}/secret1")))
        && intact(Path::new(&format!("{victim}/nested/secret2")))
}

#[test]
fn d1_testbed_up_and_an_experiment_leave_a_planted_link_and_its_target_alone() {
    require_root("testbeds mount");
    require_tool("unshare");
    let dir = TempDir::new("tb-d1");
    let state = TempDir::new("tb-d1-state");
    let (tmp, victim) = planted(&dir, &["tmpfs1", "exp1-rd"]);
    let mut c = Command::new("unshare");
    c.args(["-pf", fiox_bin(), "testbed", "up", "tmpfs", "--size=4m"])
        .env("TMPDIR", &tmp)
        .env("FIOX_TESTBED_DIR", state.path());
    let r = Run::from(c.output().unwrap());
    // M8: the planted name is passed over for another one, and left alone.
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(victim_intact(&victim), "the victim was emptied");
    let down = Command::new(fiox_bin())
        .args(["testbed", "down", "tmpfs1"])
        .env("FIOX_TESTBED_DIR", state.path())
        .output()
        .unwrap();
    let down = Run::from(down);
    assert_eq!(down.code, 0, "{}", down.stderr);
    assert!(victim_intact(&victim), "down emptied the victim");
    let toml = dir.join("e.toml");
    std::fs::write(
        &toml,
        "name = \"d1\"\nrepetitions = 1\ntelemetry_ms = 0\njobs = \"\"\"\n[n]\nioengine=null\n\
         rw=read\nsize=1m\n\"\"\"\n[[variant]]\nname = \"rd\"\ntestbed = { kind = \"tmpfs\", \
         size = \"4m\" }\n",
    )
    .unwrap();
    let mut c = Command::new("unshare");
    c.args([
        "-pf",
        fiox_bin(),
        "experiment",
        &toml,
        &format!("--out={}", dir.join("out")),
    ])
    .env("TMPDIR", &tmp)
    .env("FIOX_TESTBED_DIR", state.path());
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(victim_intact(&victim), "the experiment emptied the victim");
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

/// M5: a slow server killed with -9 and not reaped (its parent, `up --hold`, lives on) is seen
/// as gone, and cleanup unmounts its dead FUSE mount.
#[test]
fn m5_a_zombie_server_is_dead_to_list_and_cleanup() {
    require_root("testbeds mount");
    if !kernel_device("/dev/fuse", "FUSE") {
        return;
    }
    let state = TempDir::new("tb-m5");
    let mut hold = Command::new(fiox_bin())
        .env("FIOX_TESTBED_DIR", state.path())
        .args(["testbed", "up", "slow", "--size=1m", "--name=z", "--hold"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(hold.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let field = |k: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("no {k} in {line}"))
            .to_string()
    };
    let (mnt, pid) = (field("mount"), field("server_pid"));
    sh("kill", &["-9", &pid]).unwrap();
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_default()
        .contains(") Z ")
    {
        assert!(t0.elapsed().as_secs() < 10, "server {pid} is no zombie");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let l = fiox_tb(&state, &[], &["testbed", "list"]);
    assert!(l.stdout.contains("owner gone"), "{}", l.stdout);
    let c = fiox_tb(&state, &[], &["testbed", "cleanup"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(c.stdout.contains("testbed z removed"), "{}", c.stdout);
    assert!(
        c.stderr.is_empty(),
        "a cleanup that goes well is quiet on stderr: {}",
        c.stderr
    );
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(&mnt), "{mnt} still mounted");
    assert!(!Path::new(&mnt).exists());
    let _ = hold.kill();
    let _ = hold.wait();
}

/// M3: the slow server's reason for failing reaches the user.
#[test]
fn m3_a_failed_slow_server_says_why() {
    require_root("testbeds mount");
    if !kernel_device("/dev/fuse", "FUSE") {
        return;
    }
    let state = TempDir::new("tb-m3");
    let r = fiox_tb(
        &state,
        &[("TMPDIR", "/nonexistent-fiox-tmp")],
        &["testbed", "up", "slow", "--size=1m", "--name=s"],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("did not get ready"), "{}", r.stderr);
    assert!(r.stderr.contains("/nonexistent-fiox-tmp"), "{}", r.stderr);
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

/// M1, M2, D12: causes said once, a clear size refusal, and mkfs given no path.
#[test]
fn refused_input_says_why_once_and_touches_nothing() {
    let state = TempDir::new("tb-msg");
    let r = fiox_tb(
        &state,
        &[],
        &["testbed", "up", "loop", "--dir=/nonexistent-fiox"],
    );
    assert_ne!(r.code, 0);
    if is_root() {
        assert_eq!(r.stderr.matches("No such file").count(), 1, "{}", r.stderr);
    }
    let r = fiox_tb(
        &state,
        &[],
        &["testbed", "up", "loop", "--size=18446744073709551615"],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("above the largest file size"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("integral type"), "{}", r.stderr);
    let dir = TempDir::new("tb-d12");
    let user = dir.join("user.img");
    std::fs::write(&user, vec![7u8; 1 << 20]).unwrap();
    let opts = format!("--mkfs_options=-f {user}");
    let r = fiox_tb(
        &state,
        &[],
        &["testbed", "up", "fs", "--fs=btrfs", "--size=128m", &opts],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("existing path"), "{}", r.stderr);
    assert_eq!(std::fs::read(&user).unwrap(), vec![7u8; 1 << 20]);
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}
