//! Ctrl-C: a process holding every kind of resource gets SIGINT; `cleanup_on_signals` must
//! leave no loop device, mount or temp path behind. The parent test re-runs this test binary
//! as the child (the ignored test below) and checks from outside.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

#[allow(dead_code)] // each test binary uses part of the shared helpers
mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "FIOX_TESTBED_INTERRUPT_CHILD";

#[test]
fn interrupted_process_leaves_nothing_behind() {
    // Fails without root or mkfs.ext4; skipped (recorded) without loop, tmpfs or ext4.
    if !common::supported() {
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_holds_everything",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    loop {
        let mut l = String::new();
        assert!(
            out.read_line(&mut l).unwrap() > 0,
            "child ended early: {lines:?}"
        );
        if l.trim_end() == "TESTBED ready" {
            break;
        }
        lines.push(l.trim_end().to_string());
    }
    let traces = common::Traces::from_lines(lines.iter().map(String::as_str));
    assert!(traces.paths.len() >= 4, "{lines:?}");
    // The shell's builtin kill: no procps needed, no unsafe here.
    let kill = format!("kill -INT {}", child.id());
    assert!(Command::new("sh")
        .args(["-c", &kill])
        .status()
        .unwrap()
        .success());
    let end = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!("child ignored SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128 + 2), "{status}");
    traces.assert_all_gone();
}

/// Child side of the test above; does nothing unless started by it.
#[test]
#[ignore = "child process of interrupted_process_leaves_nothing_behind"]
fn child_holds_everything() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    fiox_testbed::cleanup_on_signals().unwrap();
    let all = common::Everything::new();
    for l in all.traces().to_lines() {
        println!("{l}");
    }
    println!("TESTBED ready");
    // Wait for the signal; the watcher thread cleans up and exits the process.
    std::thread::sleep(Duration::from_secs(60));
    drop(all);
    panic!("no signal arrived within 60 s");
}
