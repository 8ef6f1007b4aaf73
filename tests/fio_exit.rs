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
