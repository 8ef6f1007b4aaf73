//! Scale (issue 28): many files in time linear in the files, jobs with more files than the
//! process may open, Ctrl-C in the middle of laying out 100,000 files, and a queue as deep as
//! fio allows on io_uring. The file counts are real (on tmpfs); the only budget is relative:
//! the CPU time of a run of N files against N/1,000 times that of the same machine's
//! 1,000-file run, with a slack linear code meets and quadratic code cannot.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Run fiox and return its exit code, JSON report and the CPU seconds (user + system) it used.
fn timed_json(args: &[&str]) -> (i32, serde_json::Value, f64) {
    let before = children_cpu();
    let r = fiox(args);
    let cpu = children_cpu() - before;
    assert!(
        r.stderr.is_empty(),
        "a good run prints nothing on stderr: {}",
        r.stderr
    );
    (r.code, r.json(), cpu)
}

/// CPU seconds used by the test's finished children so far (getrusage(RUSAGE_CHILDREN)).
fn children_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("read /proc/self/stat");
    // Fields after the command name's closing parenthesis: cutime and cstime are the 14th
    // and 15th of those (fields 16 and 17 of the line), in clock ticks.
    let rest = &stat[stat.rfind(')').expect("stat line") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[13].parse::<f64>().unwrap() + f[14].parse::<f64>().unwrap();
    ticks / 100.0
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

/// A filecreate job with unlink=1 over `n` files in `dir`: the CPU seconds it took.
fn filecreate_cpu(dir: &Path, n: u32) -> f64 {
    let nr = format!("--nrfiles={n}");
    let d = format!("--directory={}", dir.display());
    let (code, v, cpu) = timed_json(&[
        "--name=fc",
        "--ioengine=filecreate",
        &nr,
        "--filesize=4k",
        &d,
        "--unlink=1",
        "--output-format=json",
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["jobs"][0]["error"], 0, "{v}");
    assert_eq!(files_in(dir), 0, "unlink=1 removes every file it created");
    cpu
}

#[test]
fn creating_and_unlinking_files_is_linear_in_the_files() {
    let dir = TempDir::new("scale-fc");
    let one = filecreate_cpu(dir.path(), 1_000).max(0.05);
    for n in [16_000u32, 64_000] {
        let cpu = filecreate_cpu(dir.path(), n);
        let linear = one * f64::from(n) / 1_000.0;
        // Linear code lands near `linear`; quadratic code at 16x (64,000 files: 64x) of it.
        assert!(
            cpu <= 4.0 * linear + 1.0,
            "{n} files took {cpu:.2} s of CPU, 1,000 took {one:.2} s: not linear"
        );
    }
}

/// A job file of `n` sections of a short null job: the CPU seconds fiox took to parse, start,
/// run and report them all (one group each, so every job is reported).
fn sections_cpu(dir: &Path, n: usize) -> f64 {
    let mut text = String::from("[global]\nioengine=null\nsize=64k\nrw=read\n");
    for i in 0..n {
        text.push_str(&format!("[j{i}]\n"));
    }
    let file = dir.join(format!("sections-{n}.fio"));
    std::fs::write(&file, text).unwrap();
    let (code, v, cpu) = timed_json(&[file.to_str().unwrap(), "--output-format=json"]);
    assert_eq!(code, 0, "{v}");
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), n, "every section ran as a job");
    assert!(
        jobs.iter().all(|j| j["read"]["io_bytes"] == 65536),
        "every job read its 64 KiB"
    );
    cpu
}

/// 10,000 sections (fio 3.33 refuses more than 4,096 jobs, and starts 4,000 in 300 s here)
/// parse, start and run in CPU time linear in the sections: jobs waiting at the start gate
/// used to wake every 20 ms, each waking all, which took 4,000 jobs to 25 s.
#[test]
fn ten_thousand_sections_start_in_linear_time() {
    let dir = TempDir::new("scale-sections");
    let one = sections_cpu(dir.path(), 1_000).max(0.05);
    let cpu = sections_cpu(dir.path(), 10_000);
    let linear = one * 10.0;
    assert!(
        cpu <= 4.0 * linear + 1.0,
        "10,000 sections took {cpu:.2} s of CPU, 1,000 took {one:.2} s: not linear"
    );
}

/// Run `args` with the open-file limit at `nofile` (soft and hard): a shell's `ulimit`.
fn fiox_with_nofile(nofile: u32, args: &[&str]) -> Run {
    let script = format!("ulimit -n {nofile} && exec \"$0\" \"$@\"");
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(fiox_bin())
        .args(args)
        .output()
        .expect("run sh");
    Run::from(o)
}

#[test]
fn a_job_with_more_files_than_descriptors_runs_as_openfiles_would() {
    let dir = TempDir::new("scale-nofile");
    let d = format!("--directory={}", dir.path().display());
    let r = fiox_with_nofile(
        512,
        &[
            "--name=w",
            "--ioengine=psync",
            "--rw=write",
            "--nrfiles=2000",
            "--filesize=4k",
            "--bs=4k",
            &d,
            "--unlink=1",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0, "{v}");
    assert_eq!(
        j["write"]["io_bytes"],
        2000 * 4096,
        "every file written: {v}"
    );
    let codes: Vec<&str> = v["fiox"]["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(|w| w["code"].as_str()).collect())
        .unwrap_or_default();
    assert!(codes.contains(&"openfiles-capped"), "{codes:?}");
    assert_eq!(files_in(dir.path()), 0);
}

#[test]
fn sigint_while_laying_out_100000_files_stops_the_layout_and_removes_them() {
    let dir = TempDir::new("scale-sigint");
    let d = format!("--directory={}", dir.path().display());
    let child = spawn_fiox(&[
        "--name=w",
        "--ioengine=psync",
        "--rw=write",
        "--nrfiles=100000",
        "--filesize=4k",
        "--bs=4k",
        &d,
        "--unlink=1",
        "--output-format=json",
    ]);
    let start = Instant::now();
    while files_in(dir.path()) < 2_000 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let at_signal = files_in(dir.path());
    assert!(at_signal >= 2_000, "the layout never started");
    // SAFETY: signalling our own child, which has not been waited for (its pid is live).
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // The most files seen after the signal: a layout that went on would make all 100,000.
    let mut child = child;
    let mut most = at_signal;
    while child.try_wait().expect("wait for fiox").is_none() {
        most = most.max(files_in(dir.path()));
        std::thread::sleep(Duration::from_millis(10));
    }
    let r = wait(child);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert!(
        most < at_signal + 5_000,
        "the layout went on after SIGINT: {at_signal} files at the signal, {most} after"
    );
    assert_eq!(
        files_in(dir.path()),
        0,
        "every file the layout made is removed"
    );
}

#[test]
fn io_uring_runs_a_queue_deeper_than_its_largest_submission_ring() {
    let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled");
    if disabled.is_ok_and(|s| s.trim() == "2") {
        skip_for_kernel("io_uring", "kernel.io_uring_disabled = 2");
        return;
    }
    let dir = TempDir::new("scale-depth");
    let f = format!("--filename={}", dir.path().join("f").display());
    // Batches of 65,536 (the batch path): the ring takes 32,768 at a time and turns the rest
    // away; those wait their turn and go out as the queue drains.
    for batch in ["--iodepth_batch_submit=1", "--iodepth_batch_submit=65536"] {
        let (code, v, _) = timed_json(&[
            "--name=deep",
            "--ioengine=io_uring",
            "--rw=randread",
            "--bs=4k",
            "--size=512m",
            &f,
            "--iodepth=65536",
            batch,
            "--output-format=json",
        ]);
        assert_eq!(code, 0, "{batch}: {v}");
        let j = &v["jobs"][0];
        assert_eq!(j["error"], 0, "{batch}: {v}");
        assert_eq!(j["read"]["total_ios"], 131_072, "{batch}: {v}");
        assert!(
            j["iodepth_level"][">=64"].as_f64().unwrap_or(0.0) > 50.0,
            "{batch}: the queue ran deep: {}",
            j["iodepth_level"]
        );
    }
}

/// The ring loop's writes land where the generator put them, with the job's buffer contents:
/// a random write of every block of a file (the random map: each block once) with a buffer
/// pattern, on libaio and on io_uring (over fixed buffers and registered files and over
/// plain ones), leaves the whole file holding the pattern; debug builds check the ring loop
/// did the writing.
#[test]
fn ring_loop_writes_every_block_with_the_jobs_buffers() {
    let mut cases = vec![("libaio", &[][..])];
    if kernel_io_uring() {
        cases.extend([
            ("io_uring", &["--fixedbufs", "--registerfiles"][..]),
            ("io_uring", &[][..]),
        ]);
    }
    let dir = TempDir::new("ring-writes");
    for (i, (engine, extra)) in cases.into_iter().enumerate() {
        let path = dir.join(&format!("f{i}"));
        // A file of other bytes first (the test's, so fiox is told it may overwrite it):
        // what the writes do not reach shows.
        std::fs::write(&path, vec![0x11u8; 1 << 20]).unwrap();
        let file = format!("--filename={path}");
        let eng = format!("--ioengine={engine}");
        let mut args = vec![
            "--name=w",
            file.as_str(),
            eng.as_str(),
            "--rw=randwrite",
            "--bs=4k",
            "--size=1m",
            "--iodepth=16",
            "--iodepth_batch_submit=4",
            "--iodepth_batch_complete_max=4",
            "--buffer_pattern=0x5a",
            "--output-format=json",
            "--allow-destructive",
        ];
        args.extend_from_slice(extra);
        let o = Command::new(fiox_bin())
            .args(&args)
            .env("FIOX_DEBUG_BATCHES", "1")
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{engine} {extra:?}: {stderr}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            v["jobs"][0]["write"]["total_ios"], 256,
            "{engine} {extra:?}"
        );
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 1 << 20);
        let wrong = data.iter().position(|&b| b != 0x5a);
        assert_eq!(
            wrong, None,
            "{extra:?}: first byte not written at {wrong:?}"
        );
        if cfg!(debug_assertions) {
            assert!(
                stderr.lines().any(
                    |l| l.contains("batch path units 256") && !l.trim_end().ends_with("ring 0")
                ),
                "{engine} {extra:?}: {stderr}"
            );
        }
    }
}

/// Every per-I/O latency is counted once in each statistic, whichever loop and accounting
/// took it (the ring loop and the batch path with fio's default statistics take
/// `account_plain`; per-I/O log lines send the same job through the general accounting):
/// slat, clat and lat each count every I/O, and since each I/O's lat is its slat plus its
/// clat, lat's mean is the sum of the other two means and its min and max lie within
/// theirs. A statistic left out or fed the wrong difference breaks one of these.
#[test]
fn slat_clat_and_lat_add_up_on_every_path() {
    let dir = TempDir::new("lat-sums");
    let file = format!("--filename={}", dir.join("f"));
    let log = format!("--write_lat_log={}", dir.join("lat"));
    let mut cases = vec![("libaio", None), ("libaio", Some(log.as_str()))];
    if kernel_io_uring() {
        cases.extend([("io_uring", None), ("io_uring", Some(log.as_str()))]);
    }
    for (engine, extra) in cases {
        let eng = format!("--ioengine={engine}");
        let mut args = vec![
            "--name=s",
            file.as_str(),
            eng.as_str(),
            "--rw=randread",
            "--bs=4k",
            "--size=4m",
            "--iodepth=8",
            "--iodepth_batch_submit=4",
            "--output-format=json",
        ];
        args.extend(extra);
        let o = Command::new(fiox_bin())
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{engine} {extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let r = &v["jobs"][0]["read"];
        let n = r["total_ios"].as_u64().unwrap();
        assert_eq!(n, 1024, "{engine} {extra:?}");
        let stat = |k: &str, f: &str| r[k][f].as_f64().unwrap_or(-1.0);
        for k in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(r[k]["N"].as_u64(), Some(n), "{engine} {extra:?} {k}: {r}");
        }
        let (s, c, l) = (
            stat("slat_ns", "mean"),
            stat("clat_ns", "mean"),
            stat("lat_ns", "mean"),
        );
        assert!(
            (l - (s + c)).abs() <= 1e-6 * l + 1e-3,
            "{engine} {extra:?}: lat mean {l} against slat {s} + clat {c}"
        );
        assert!(
            stat("lat_ns", "min") >= stat("slat_ns", "min") + stat("clat_ns", "min"),
            "{engine} {extra:?}: {r}"
        );
        assert!(
            stat("lat_ns", "max") <= stat("slat_ns", "max") + stat("clat_ns", "max"),
            "{engine} {extra:?}: {r}"
        );
    }
}

/// The batch path (a plain io_uring or libaio job queues each submit batch in one engine call)
/// issues what the general loop issues (through the ring loop, `ring.rs`): the
/// same job with serialize_overlap (which takes the general path and, for reads that never
/// conflict, changes nothing else) writes the same I/O log offset for offset, and debug builds
/// count the batch path's engine calls (none on the general path), so the comparison cannot
/// pass with both runs on one path.
#[test]
fn batch_path_issues_what_the_general_path_issues() {
    let dir = TempDir::new("batch-path");
    let file = format!("--filename={}", dir.join("f"));
    for engine in ["io_uring", "libaio"] {
        if engine == "io_uring" && !kernel_io_uring() {
            continue; // the skip is recorded with its reason
        }
        let run = |serialize: bool| -> (Vec<String>, String) {
            let log = dir.join(&format!("iolog-{engine}-{serialize}"));
            let log_arg = format!("--write_iolog={log}");
            let eng = format!("--ioengine={engine}");
            let ser = format!("--serialize_overlap={}", u8::from(serialize));
            let args = [
                "--name=b",
                file.as_str(),
                eng.as_str(),
                "--rw=randread",
                "--bs=4k",
                "--size=1m",
                "--iodepth=8",
                "--iodepth_batch_submit=4",
                "--iodepth_batch_complete_max=4",
                ser.as_str(),
                log_arg.as_str(),
                "--output-format=json",
            ];
            let o = Command::new(fiox_bin())
                .args(args)
                .env("FIOX_DEBUG_BATCHES", "1")
                .current_dir(dir.path())
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr).to_string();
            assert!(o.status.success(), "{engine}: {stderr}");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(v["jobs"][0]["read"]["total_ios"], 256, "{engine}");
            // Version 3 lines start with a timestamp: compare what was issued, not when.
            let text = std::fs::read_to_string(&log).unwrap();
            let lines = text
                .lines()
                .map(|l| match l.split_once(' ') {
                    Some((t, rest)) if t.bytes().all(|b| b.is_ascii_digit()) => rest.to_string(),
                    _ => l.to_string(),
                })
                .collect();
            (lines, stderr)
        };
        let (batch, batch_err) = run(false);
        let (general, general_err) = run(true);
        let reads = batch.iter().filter(|l| l.contains(" read ")).count();
        assert_eq!(reads, 256, "{engine}: {batch:?}");
        assert_eq!(batch, general, "{engine}");
        if cfg!(debug_assertions) {
            // "batch path units U batches B": every read drawn by the batch path (one at a
            // time when one slot is free), some of them in batches (the first fill: two of 4).
            let counts = |e: &str| -> (u64, u64, u64) {
                let line = e
                    .lines()
                    .find(|l| l.contains("batch path units"))
                    .unwrap_or("");
                let num = |key: &str| {
                    line.split(key)
                        .nth(1)
                        .and_then(|r| r.split_whitespace().next())
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0)
                };
                (num("units "), num("batches "), num("ring "))
            };
            let (units, batches, rings) = counts(&batch_err);
            assert_eq!(units, 256, "{engine}: {batch_err}");
            assert!(batches >= 2, "{engine}: {batch_err}");
            // The plain job takes the ring loop, every round of it.
            assert_eq!(rings, batches, "{engine}: {batch_err}");
            assert_eq!(counts(&general_err), (0, 0, 0), "{engine}: {general_err}");
        }
    }
}
