//! fiox's exit status is fio 3.33's (issue 43): the number of jobs that failed, numjobs clones
//! counted one by one, 0 when none did. Writes to /dev/full fail with ENOSPC in both tools,
//! the kernel's test sink that fio and fiox both accept as a target.

#![allow(clippy::disallowed_methods)] // the shared harness builds scratch files

mod harness;

use harness::*;

/// `n` jobs (or one job with numjobs=`n` when `clones`) writing to /dev/full, and one good job.
fn args(n: usize, clones: bool) -> Vec<String> {
    let full = [
        "--filename=/dev/full",
        "--rw=write",
        "--bs=4k",
        "--size=16k",
    ];
    let mut a = Vec::new();
    if clones {
        a.push("--name=full".to_string());
        a.extend(full.iter().map(|s| s.to_string()));
        a.push(format!("--numjobs={n}"));
    } else {
        for i in 0..n {
            a.push(format!("--name=full{i}"));
            a.extend(full.iter().map(|s| s.to_string()));
        }
    }
    a.extend(
        [
            "--name=fine",
            "--ioengine=null",
            "--size=16k",
            "--numjobs=1",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a.push("--output-format=terse".into());
    a
}

#[test]
fn exit_status_counts_the_failed_jobs_like_fio() {
    need_fio();
    let dir = TempDir::new("exit");
    for (n, clones) in [(0, false), (1, false), (2, false), (3, true)] {
        let a = args(n, clones);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let fio = tool_in("fio", dir.path(), &a);
        let fiox = fiox_in(dir.path(), &a);
        assert_eq!(fio.code, n as i32, "fio: {}", fio.stderr);
        assert_eq!(fiox.code, fio.code, "{n} failing jobs: {}", fiox.stderr);
    }
}

/// fiox with stdout and stderr sent where writes fail with ENOSPC (/dev/full: a disk that
/// filled up under the run, issue 43's N9): never a panic (exit 101 with every result lost).
/// Its messages are lost, as fio's; the exit status is still the number of failed jobs, or 1
/// for a job file error; a report that cannot be written is the run's error (exit 1; fio 3.33
/// ignores it and exits 0).
fn to_full(args: &[&str], stdout_full: bool) -> i32 {
    let full = || {
        std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let mut c = std::process::Command::new(fiox_bin());
    c.args(args)
        .stdin(std::process::Stdio::null())
        .stderr(full());
    if stdout_full {
        c.stdout(full());
    } else {
        c.stdout(std::process::Stdio::null());
    }
    c.status().unwrap().code().unwrap_or(-1)
}

#[test]
fn a_full_disk_under_stdout_or_stderr_is_never_a_panic() {
    let dir = TempDir::new("exit-full");
    let a = args(2, false);
    let mut a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = dir.join("out.json");
    let out = format!("--output={out}");
    assert_eq!(
        to_full(&a, false),
        2,
        "two failing jobs, their errors lost on stderr"
    );
    assert_eq!(
        to_full(&["--name=x", "--ioengine=null", "--bogus_option=1"], false),
        1
    );
    a.push(&out);
    assert_eq!(to_full(&a, true), 2, "the report to a file, messages lost");
    let fine = ["--name=x", "--ioengine=null", "--size=64k"];
    assert_eq!(
        to_full(&fine, true),
        1,
        "the report itself could not be written"
    );
}
