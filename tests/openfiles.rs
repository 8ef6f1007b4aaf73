//! `openfiles` below `nrfiles`: fiox opens files lazily, never more than `openfiles` at once,
//! and issues exactly what fio 3.33 issues for the same size-bound job.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::{fio_json, fiox, issued, need_fio, TempDir};

/// `(files open at most, opens)` from the debug line a debug build prints on request.
fn open_counts(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("fiox-debug: job"))
        .unwrap_or_else(|| panic!("no open counts in stderr:\n{stderr}"));
    let num = |key: &str| -> u64 {
        let rest = &line[line.find(key).expect(key) + key.len()..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().expect("count")
    };
    (num("open at most "), num("opens "))
}

fn job_args(dir: &TempDir, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "--name=of".to_string(),
        "--nrfiles=4".into(),
        "--size=256k".into(),
        "--bs=4k".into(),
        "--rw=randrw".into(),
        format!("--directory={}", dir.path().display()),
        "--output-format=json".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Run fiox with `args` in `dir` (verify state files land in the working directory) and the
/// open-count debug line on: (JSON report, stderr). The run must succeed.
fn run_debug(dir: &TempDir, args: &[String]) -> (serde_json::Value, String) {
    let o = std::process::Command::new(harness::fiox_bin())
        .args(args)
        .env("FIOX_DEBUG_OPENFILES", "1")
        .current_dir(dir.path())
        .output()
        .expect("run fiox");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {stderr}");
    (serde_json::from_slice(&o.stdout).expect("json"), stderr)
}

fn run_fiox(extra: &[&str]) -> (serde_json::Value, (u64, u64)) {
    let dir = TempDir::new("openfiles");
    let (v, stderr) = run_debug(&dir, &job_args(&dir, extra));
    let warned = v["jobs"][0]["fiox"]["warnings"]
        .as_array()
        .is_some_and(|w| w.iter().any(|w| w["code"] == "openfiles"));
    assert!(
        !warned,
        "{extra:?}: openfiles is honoured: {}",
        v["jobs"][0]["fiox"]
    );
    (v, open_counts(&stderr))
}

#[test]
fn openfiles_caps_open_files_for_every_engine() {
    for (engine, cap) in [
        ("--ioengine=psync", 1),
        ("--ioengine=sync", 2),
        ("--ioengine=libaio", 1),
        ("--ioengine=io_uring", 1),
        ("--ioengine=mmap", 3),
        ("--ioengine=posixaio", 1),
        ("--ioengine=guasi", 1),
        ("--ioengine=vsync", 1),
        ("--ioengine=pvsync2", 2),
    ] {
        let of = format!("--openfiles={cap}");
        let mut extra = vec![engine, of.as_str(), "--iodepth=4"];
        if engine.ends_with("io_uring") {
            extra.push("--registerfiles=1");
        }
        // Inline, and behind io_submit_mode=offload (every submit thread's engine instance
        // forgets and re-learns each file as the gate closes and reopens it).
        for offload in [false, true] {
            let mut extra = extra.clone();
            if offload {
                extra.push("--io_submit_mode=offload");
            }
            let (v, (peak, opens)) = run_fiox(&extra);
            let (rd, wr) = (issued(&v, "read"), issued(&v, "write"));
            assert_eq!(rd.1 + wr.1, 256 << 10, "{extra:?}: {rd:?} {wr:?}");
            assert_eq!(peak, cap, "{extra:?}: files open at most");
            assert!(opens >= 4, "{extra:?}: every file is opened ({opens})");
        }
    }
}

#[test]
fn openfiles_issues_what_fio_issues() {
    need_fio();
    for extra in [
        &["--ioengine=psync", "--openfiles=1"][..],
        &[
            "--ioengine=psync",
            "--openfiles=2",
            "--file_service_type=random",
        ][..],
        &[
            "--ioengine=libaio",
            "--iodepth=8",
            "--openfiles=1",
            "--rw=randwrite",
        ][..],
        &[
            "--ioengine=psync",
            "--openfiles=1",
            "--loops=2",
            "--rw=read",
        ][..],
        &[
            "--ioengine=io_uring",
            "--openfiles=3",
            "--file_service_type=sequential",
        ][..],
    ] {
        let (v, (peak, _)) = run_fiox(extra);
        let fdir = TempDir::new("openfiles-fio");
        let args = job_args(&fdir, extra);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let f = fio_json(&a);
        assert_eq!(
            issued(&v, "read"),
            issued(&f, "read"),
            "{extra:?}: read vs fio"
        );
        assert_eq!(
            issued(&v, "write"),
            issued(&f, "write"),
            "{extra:?}: write vs fio"
        );
        assert!(peak <= 2, "{extra:?}: peak {peak}");
    }
}

#[test]
fn write_then_verify_reads_back_every_file() {
    for extra in [
        &[
            "--ioengine=psync",
            "--openfiles=1",
            "--rw=write",
            "--verify=crc32c",
        ][..],
        &[
            "--ioengine=libaio",
            "--iodepth=4",
            "--openfiles=2",
            "--rw=randwrite",
            "--verify=md5",
        ],
    ] {
        let (v, (peak, _)) = run_fiox(extra);
        assert_eq!(issued(&v, "write"), (64, 256 << 10), "{extra:?}");
        assert_eq!(
            issued(&v, "read"),
            (64, 256 << 10),
            "{extra:?}: verify reads"
        );
        assert!(peak <= 2, "{extra:?}: peak {peak}");
        if need_fio() {
            let fdir = TempDir::new("openfiles-verify-fio");
            let args = job_args(&fdir, extra);
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            // fio saves its verify state in the working directory: keep it in the temp dir.
            let o = std::process::Command::new("fio")
                .args(&a)
                .current_dir(fdir.path())
                .output()
                .expect("run fio");
            let f: serde_json::Value = serde_json::from_slice(&o.stdout).expect("fio json");
            assert_eq!(issued(&v, "read"), issued(&f, "read"), "{extra:?}: vs fio");
        }
    }
}

#[test]
fn without_the_cap_files_stay_open_from_setup() {
    let dir = TempDir::new("openfiles-all");
    let args = job_args(&dir, &["--ioengine=psync"]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = fiox(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stderr.contains("fiox-debug"),
        "no gate without openfiles"
    );
}

/// Run a create_on_open job in a fresh directory: (fiox's notes, which with JSON output hold
/// the "Laying out IO file" lines, JSON, sorted (name, size) of files).
fn create_on_open_run(
    fio: bool,
    extra: &[&str],
) -> (String, serde_json::Value, Vec<(String, u64)>) {
    let dir = TempDir::new("create-on-open");
    let mut args = job_args(&dir, extra);
    args.retain(|a| a != "--rw=randrw");
    args.extend(["--rw=write".to_string(), "--io_size=128k".into()]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (stderr, v) = if fio {
        (String::new(), fio_json(&a))
    } else {
        let r = fiox(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stderr.is_empty(),
            "a good run is quiet on stderr: {}",
            r.stderr
        );
        let v = r.json();
        (v["fiox"]["notes"].to_string(), v)
    };
    let mut files: Vec<(String, u64)> = dir
        .entries()
        .into_iter()
        .map(|n| {
            let len = std::fs::metadata(dir.path().join(&n)).unwrap().len();
            (n, len)
        })
        .collect();
    files.sort();
    (stderr, v, files)
}

#[test]
fn create_on_open_creates_files_as_the_job_reaches_them() {
    // io_size covers two of the four 64 KiB files: only those two are ever opened.
    let on = ["--ioengine=psync", "--openfiles=1", "--create_on_open=1"];
    let (notes, v, files) = create_on_open_run(false, &on);
    assert!(!notes.contains("Laying out"), "{notes}");
    assert_eq!(issued(&v, "write"), (32, 128 << 10));
    let want = vec![("of.0.0".to_string(), 65536), ("of.0.1".to_string(), 65536)];
    assert_eq!(files, want);
    // Without create_on_open every file is laid out first, as fio does.
    let (notes, _, files) = create_on_open_run(false, &on[..2]);
    assert!(notes.contains("Laying out"), "{notes}");
    assert_eq!(files.len(), 4, "{files:?}");
    if need_fio() {
        let (_, f, fio_files) = create_on_open_run(true, &on);
        assert_eq!(issued(&v, "write"), issued(&f, "write"), "vs fio");
        assert_eq!(want, fio_files, "files vs fio");
    }
    // Every file open at once (openfiles unset): round robin writes half of each file, and
    // still nothing is laid out first.
    let all = ["--ioengine=psync", "--create_on_open=1"];
    let (notes, _, files) = create_on_open_run(false, &all);
    assert!(!notes.contains("Laying out"), "{notes}");
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(files.iter().all(|f| f.1 == 32768), "{files:?}");
    if need_fio() {
        let (_, _, fio_files) = create_on_open_run(true, &all);
        assert_eq!(files, fio_files, "files vs fio");
    }
}

/// `(files open at most, opens)` of the verify phase after the writes, from its debug line.
fn verify_open_counts(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("fiox-debug: verify phase of job"))
        .unwrap_or_else(|| panic!("no verify phase open counts in stderr:\n{stderr}"));
    open_counts(&line.replacen("verify phase of job", "job", 1))
}

/// The verify phase after the writes keeps within `openfiles` too: each file the job wrote is
/// opened once, read back and closed before the next; a create_on_open file the job never
/// reached is not opened (it does not exist). Every block is still checked.
#[test]
fn verify_phase_keeps_within_openfiles() {
    for (extra, files, blocks) in [
        (&["--ioengine=psync", "--openfiles=1"][..], 4, 64),
        (
            &["--ioengine=libaio", "--iodepth=4", "--openfiles=2"][..],
            4,
            64,
        ),
        (
            &[
                "--ioengine=psync",
                "--openfiles=1",
                "--create_on_open=1",
                "--io_size=128k",
            ][..],
            2,
            32,
        ),
    ] {
        let dir = TempDir::new("openfiles-vphase");
        let mut args = job_args(&dir, extra);
        args.retain(|a| a != "--rw=randrw");
        args.extend(["--rw=randwrite".to_string(), "--verify=crc32c".into()]);
        let (v, stderr) = run_debug(&dir, &args);
        assert_eq!(issued(&v, "read"), (blocks, blocks * 4096), "{extra:?}");
        assert_eq!(
            verify_open_counts(&stderr),
            (1, files),
            "{extra:?}: verify phase (open at most, opens)"
        );
    }
}

/// Paths fsync(2)ed by a fiox run traced with strace (`-y` resolves fds to paths).
fn fsynced_paths(dir: &TempDir, extra: &[&str]) -> Vec<String> {
    let directory = format!("--directory={}", dir.path().display());
    let mut args = vec![
        "--name=fs",
        "--nrfiles=4",
        "--size=256k",
        "--bs=4k",
        "--rw=write",
        directory.as_str(),
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    let text = harness::strace_text(
        harness::fiox_bin(),
        dir.path(),
        &args,
        &["-y", "-e", "trace=fsync"],
    );
    let mut paths: Vec<String> = text
        .lines()
        .filter_map(|l| {
            Some(
                l.split_once("fsync(")?
                    .1
                    .split_once('<')?
                    .1
                    .split_once('>')?
                    .0,
            )
        })
        .map(str::to_string)
        .collect();
    paths.sort();
    paths
}

/// end_fsync and fsync_on_close reach every file also when openfiles closed them during the
/// run (they used to be skipped: only files still open from setup were synced). fio 3.33 syncs
/// each of the 4 files once with end_fsync; with fsync_on_close it syncs each at every close.
#[test]
fn end_fsync_and_fsync_on_close_cover_files_openfiles_closed() {
    harness::require_tool("strace");
    for opts in [
        vec!["--end_fsync=1", "--openfiles=1"],
        vec!["--fsync_on_close=1", "--openfiles=1"],
        vec!["--fsync_on_close=1", "--openfiles=2"],
        vec!["--end_fsync=1"],
    ] {
        let dir = TempDir::new("fsyncs");
        let mut paths = fsynced_paths(&dir, &opts);
        paths.dedup();
        let want: Vec<String> = (0..4)
            .map(|i| format!("{}/fs.0.{i}", dir.path().display()))
            .collect();
        assert_eq!(paths, want, "{opts:?}");
    }
    // Nothing asks for a sync: none (a write job's files have no laid-out data to sync).
    let dir = TempDir::new("fsyncs");
    assert_eq!(
        fsynced_paths(&dir, &["--openfiles=1"]),
        Vec::<String>::new()
    );
}

/// verify_only keeps within `openfiles` too (its reads go through the same loop): a writing
/// workload's verify phase opens each file once, one at a time; a read workload opens files
/// as its reads reach them. Every block is checked and nothing is warned about.
#[test]
fn verify_only_keeps_within_openfiles() {
    let dir = TempDir::new("openfiles-vonly");
    let mut write = job_args(&dir, &["--ioengine=psync", "--openfiles=1"]);
    write.retain(|a| a != "--rw=randrw");
    write.extend(["--rw=randwrite".to_string(), "--verify=crc32c".into()]);
    run_debug(&dir, &write);
    for (rw, engine) in [
        ("randwrite", "psync"),
        ("randwrite", "libaio"),
        ("read", "libaio"),
    ] {
        let mut only = write.clone();
        only.retain(|a| !a.starts_with("--rw=") && !a.starts_with("--ioengine="));
        only.extend([
            format!("--rw={rw}"),
            format!("--ioengine={engine}"),
            "--verify_only=1".into(),
        ]);
        if engine == "libaio" {
            only.push("--iodepth=4".into());
        }
        let (v, stderr) = run_debug(&dir, &only);
        let what = format!("rw={rw} ioengine={engine}");
        assert_eq!(issued(&v, "read"), (64, 256 << 10), "{what}");
        assert!(!stderr.contains("[openfiles]"), "{what}: {stderr}");
        let counts = if rw == "read" {
            open_counts(&stderr)
        } else {
            verify_open_counts(&stderr)
        };
        assert_eq!(counts, (1, 4), "{what}: (open at most, opens)");
    }
}

/// verify_backlog with files `openfiles` closes and reopens: a backlog read never goes to a
/// file closed since its write (its descriptor may belong to another file by then); such
/// blocks are checked by the verify phase, and every block is read back once, as in fio.
#[test]
fn verify_backlog_within_openfiles_reads_each_block_once() {
    for engine in ["psync", "libaio", "io_uring"] {
        let dir = TempDir::new("openfiles-backlog");
        let eng = format!("--ioengine={engine}");
        // fio notes (on stdout) that a sync engine ignores iodepth: give it to the others.
        let depth = if engine == "psync" {
            "--iodepth=1"
        } else {
            "--iodepth=4"
        };
        let extra = [
            eng.as_str(),
            depth,
            "--openfiles=1",
            "--file_service_type=roundrobin",
            "--verify=crc32c",
            "--verify_backlog=4",
        ];
        let mut args = job_args(&dir, &extra);
        args.retain(|a| a != "--rw=randrw");
        args.push("--rw=randwrite".into());
        let (v, stderr) = run_debug(&dir, &args);
        assert_eq!(v["jobs"][0]["error"], 0, "{engine}: {stderr}");
        assert_eq!(issued(&v, "read"), (64, 256 << 10), "{engine}");
        if need_fio() {
            let fdir = TempDir::new("openfiles-backlog-fio");
            let a = job_args(&fdir, &extra);
            let mut a: Vec<&str> = a
                .iter()
                .map(String::as_str)
                .filter(|a| *a != "--rw=randrw")
                .collect();
            a.push("--rw=randwrite");
            assert_eq!(
                issued(&fio_json(&a), "read"),
                issued(&v, "read"),
                "{engine}: vs fio"
            );
        }
    }
}
