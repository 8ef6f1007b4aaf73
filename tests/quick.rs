//! `fiox quick` as a new user meets it (issue 41): a filesystem too small for the test file,
//! signals (GNU timeout sends two), a kill -9, and a set stopped half way. Each test keeps its
//! own testbed state directory (`FIOX_TESTBED_DIR`), where quick records its file.

#![allow(clippy::disallowed_methods)]

mod harness;

use harness::{fiox_bin, require_root, wait, Run, TempDir};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `fiox quick ARGS` with the testbed state in `state`, started without waiting.
fn spawn_quick(state: &TempDir, args: &[&str]) -> Child {
    Command::new(fiox_bin())
        .arg("quick")
        .args(args)
        .env("FIOX_TESTBED_DIR", state.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fiox quick")
}

fn quick(state: &TempDir, args: &[&str]) -> Run {
    wait(spawn_quick(state, args))
}

/// Wait until quick's hidden test file is in `dir` and has data (the first test is running).
fn wait_for_file(dir: &TempDir) {
    for _ in 0..200 {
        let has_data = std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.metadata().is_ok_and(|m| m.len() > 0));
        if has_data {
            std::thread::sleep(Duration::from_millis(300));
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no test file appeared in {}", dir.path().display());
}

fn signal(child: &Child, sig: &str) {
    let pid = child.id().to_string();
    harness::sh("kill", &[sig, &pid]).expect("send the signal");
}

/// D3: a --size larger than the free space is refused before anything is laid out (it used
/// to fill the filesystem, fail, and print numbers for the failed tests); the default size
/// shrinks to fit, says so, and every test passes.
#[test]
fn a_filesystem_smaller_than_the_file_is_checked_before_laying_out() {
    require_root("a tmpfs mount");
    let state = TempDir::new("quick-state");
    let small = fiox_testbed::TmpfsMount::new(24 << 20).expect("a 24 MiB tmpfs");
    let dir = small.path().to_str().unwrap();
    let r = quick(&state, &[dir, "--size=64m", "--runtime=100ms"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "no table: {}", r.stdout);
    assert!(
        r.stderr
            .contains("free, less than the 64.0MiB test file (--size); try --size="),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_dir(small.path()).unwrap().count(), 0);
    // The default (1 GiB) shrinks to the free space.
    let r = quick(&state, &[dir, "--runtime=100ms", "--output-format=json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let q = &v["fiox_quick"];
    assert!(q["size"].as_u64().unwrap() <= 24 << 20, "{q}");
    assert!(
        q["notes"].to_string().contains("free: the test file is"),
        "{q}"
    );
    let tests = q["tests"].as_array().unwrap();
    assert!(tests.iter().all(|t| t["status"] == "ok"), "{q}");
    assert_eq!(std::fs::read_dir(small.path()).unwrap().count(), 0);
}

/// D2: two SIGTERMs (GNU timeout's TERM to the process and to its group) force the exit and
/// still remove the test file; a set stopped by one signal says which tests were interrupted
/// and which did not run, with no numbers for them (D1).
#[test]
fn signals_remove_the_file_and_stopped_tests_say_so() {
    let state = TempDir::new("quick-state");
    let dir = TempDir::new("quick-sig");
    let d = dir.path().to_str().unwrap();
    let args = [d, "--size=8m", "--runtime=30", "--output-format=json"];
    let child = spawn_quick(&state, &args);
    wait_for_file(&dir);
    signal(&child, "-TERM");
    signal(&child, "-TERM");
    let r = wait(child);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
    // One signal: the report, with the first test interrupted and the others not run.
    let child = spawn_quick(&state, &args);
    wait_for_file(&dir);
    signal(&child, "-INT");
    let r = wait(child);
    assert_eq!(r.code, 130, "{}", r.stderr);
    let v = r.json();
    let tests = v["fiox_quick"]["tests"].as_array().unwrap();
    let st: Vec<&str> = tests
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        st,
        [
            "interrupted",
            "not_run",
            "not_run",
            "not_run",
            "not_run",
            "not_run"
        ]
    );
    assert!(tests.iter().all(|t| t["iops"].is_null()), "{v}");
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
}

/// Start quick in `dir`, kill -9 it while it runs; its file stays behind.
fn killed_quick(state: &TempDir, dir: &TempDir) {
    let d = dir.path().to_str().unwrap();
    let mut child = spawn_quick(state, &[d, "--size=8m", "--runtime=30"]);
    wait_for_file(dir);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(dir.entries().len(), 1, "{:?}", dir.entries());
}

/// D2: after a kill -9 the file is recorded; the next `fiox quick` (anywhere) removes it and
/// says so, and so does `fiox testbed cleanup`.
#[test]
fn a_killed_runs_file_goes_with_the_next_quick_or_testbed_cleanup() {
    let state = TempDir::new("quick-state");
    let dir = TempDir::new("quick-kill");
    let other = TempDir::new("quick-next");
    killed_quick(&state, &dir);
    let o = other.path().to_str().unwrap();
    let r = quick(
        &state,
        &[o, "--size=2m", "--runtime=100ms", "--output-format=json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
    let notes = r.json()["fiox_quick"]["notes"].to_string();
    assert!(
        notes.contains("left by an earlier fiox quick that was killed"),
        "{notes}"
    );
    killed_quick(&state, &dir);
    let c = Command::new(fiox_bin())
        .args(["testbed", "cleanup"])
        .env("FIOX_TESTBED_DIR", state.path())
        .output()
        .unwrap();
    let c = Run::from(c);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
    assert!(
        std::fs::read_dir(state.path()).unwrap().count() == 0,
        "records left: {:?}",
        state.entries()
    );
}
