//! fio 3.33's job-flow options of issue 10 (`exit_what`, `max_latency`, `thinktime_iotime`,
//! `rate_ignore_thinktime`, `thinktime_blocks_type`, `disk_util`), each run by fiox and, where
//! fio is installed, by fio with the same arguments; what they must agree on is compared
//! (which jobs ran or were cut short, the error and exit code, the I/O counts).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// fio's JSON and exit code; fio prints its `fio: pid=...` error lines on stdout before the
/// JSON document, so the document starts at the first line that is `{`.
fn fio_json_code(args: &[&str]) -> (serde_json::Value, i32) {
    let cwd = TempDir::new("fio-cwd");
    let (code, v, _) = tool_json("fio", cwd.path(), args, None);
    (v, code)
}

fn fiox_json_code(args: &[&str]) -> (serde_json::Value, i32, String) {
    let mut a = args.to_vec();
    a.push("--output-format=json");
    let r = fiox(&a);
    (r.json(), r.code, r.stderr)
}

/// Per job: (name, ran at all, cut short of its own runtime).
fn fates(v: &serde_json::Value, runtimes_ms: &[u64]) -> Vec<(String, bool, bool)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(runtimes_ms)
        .map(|(j, &want)| {
            let ran = j["read"]["total_ios"].as_u64().unwrap() > 0;
            let got = j["job_runtime"].as_u64().unwrap();
            // Half the runtime: a job cut short ends when a 500 ms job ends, others run 3 s.
            (
                j["jobname"].as_str().unwrap().to_string(),
                ran,
                ran && got < want / 2,
            )
        })
        .collect()
}

/// exitall with each exit_what stops the jobs fio stops: `group` the finishing job's group
/// only (the next groups run whole), `stonewall` every running job (a job of another group
/// running beside it too), `all` every job, started or not.
#[test]
fn exit_what_stops_the_jobs_fio_stops() {
    let job = [
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--exitall",
        "--name=a",
        "--runtime=500ms",
        "--name=b",
        "--runtime=3s",
        "--name=c",
        "--stonewall",
        "--runtime=500ms",
        "--name=d",
        "--new_group",
        "--runtime=3s",
    ];
    let runtimes = [500, 3000, 500, 3000];
    let expect = |w: &str| -> Vec<(String, bool, bool)> {
        let f = |n: &str, ran, cut| (n.to_string(), ran, cut);
        match w {
            "group" => vec![
                f("a", true, false),
                f("b", true, true),
                f("c", true, false),
                f("d", true, false),
            ],
            "stonewall" => vec![
                f("a", true, false),
                f("b", true, true),
                f("c", true, false),
                f("d", true, true),
            ],
            _ => vec![
                f("a", true, false),
                f("b", true, true),
                f("c", false, false),
                f("d", false, false),
            ],
        }
    };
    for w in ["group", "stonewall", "all"] {
        let what = format!("--exit_what={w}");
        let mut args = vec![what.as_str()];
        args.extend_from_slice(&job);
        let (ours, code, err) = fiox_json_code(&args);
        assert_eq!(code, 0, "{w}: {err}");
        assert!(err.is_empty(), "{w}: {err}");
        assert_eq!(fates(&ours, &runtimes), expect(w), "fiox, exit_what={w}");
        if need_fio() {
            let (theirs, code) = fio_json_code(&args);
            assert_eq!(code, 0);
            assert_eq!(fates(&theirs, &runtimes), expect(w), "fio, exit_what={w}");
        }
    }
}

/// max_latency: the first I/O over the limit ends the job with fio's ETIMEDOUT (110), its
/// message and exit code 1.
#[test]
fn max_latency_ends_the_job_with_etimedout_like_fio() {
    let dir = TempDir::new("maxlat");
    let file = dir.join("f");
    let fname = format!("--filename={file}");
    let args = [
        "--name=ml",
        fname.as_str(),
        "--size=1m",
        "--rw=randread",
        "--ioengine=psync",
        "--max_latency=1",
    ];
    let (ours, code, err) = fiox_json_code(&args);
    assert_eq!(code, 1, "{err}");
    assert_eq!(ours["jobs"][0]["error"], 110);
    assert_eq!(issued(&ours, "read").0, 1);
    let want = format!("exceeds specified max (1000 nsec): {file} read ");
    assert!(err.contains("latency of ") && err.contains(&want), "{err}");
    // A limit no I/O reaches changes nothing; writes have their own (the second value).
    let (ok, code, err) = fiox_json_code(&[
        "--name=ml",
        fname.as_str(),
        "--size=1m",
        "--rw=randread",
        "--max_latency=1h,1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(ok["jobs"][0]["error"], 0);
    assert_eq!(issued(&ok, "read").0, 256);
    if need_fio() {
        let (theirs, code) = fio_json_code(&args);
        assert_eq!(code, 1);
        assert_eq!(theirs["jobs"][0]["error"], 110);
        assert_eq!(issued(&theirs, "read").0, 1);
    }
}

fn read_ios(v: &serde_json::Value) -> f64 {
    v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() as f64
}

/// thinktime_iotime (I/O for 500 ms, think 500 ms) with a rate: by default the rate catches
/// up after each think time (about the full rate's count), with rate_ignore_thinktime the
/// thinking is lost (about 3/4 of it over 2 s); fio's counts move the same way.
#[test]
fn thinktime_iotime_and_rate_ignore_thinktime_like_fio() {
    let base = [
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--time_based",
        "--runtime=2s",
        "--rate_iops=200",
        "--thinktime=500ms",
        "--thinktime_iotime=500ms",
    ];
    let counts = |tool: &dyn Fn(&[&str]) -> serde_json::Value| {
        let mut a = base.to_vec();
        let catch_up = read_ios(&tool(&a));
        a.push("--rate_ignore_thinktime=1");
        let ignore = read_ios(&tool(&a));
        (catch_up, ignore)
    };
    let ours = |a: &[&str]| {
        let (v, code, err) = fiox_json_code(a);
        assert_eq!(code, 0, "{err}");
        v
    };
    let (catch_up, ignore) = counts(&ours);
    // Bounds on the ratio, not on time: a loaded machine slows both runs alike.
    let r = ignore / catch_up;
    assert!((0.6..0.9).contains(&r), "{ignore} / {catch_up}");
    if need_fio() {
        let theirs = |a: &[&str]| fio_json_code(a).0;
        let (c2, i2) = counts(&theirs);
        let r2 = i2 / c2;
        assert!((0.6..0.9).contains(&r2), "fio: {i2} / {c2}");
    }
}

/// thinktime_blocks_type=issue runs (it was refused before) and does the job's whole size.
#[test]
fn thinktime_blocks_type_issue_runs() {
    for t in ["issue", "complete"] {
        let ty = format!("--thinktime_blocks_type={t}");
        let (v, code, err) = fiox_json_code(&[
            "--name=t",
            "--ioengine=null",
            "--size=64k",
            "--iodepth=4",
            "--thinktime=1ms",
            "--thinktime_blocks=4",
            ty.as_str(),
        ]);
        assert_eq!(code, 0, "{t}: {err}");
        assert_eq!(issued(&v, "read").0, 16, "{t}");
    }
}

/// disk_util=0: no Disk stats block and no disk_util key, as fio.
#[test]
fn disk_util_off_leaves_out_the_disk_stats() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "du");
    let file = dir.join("f");
    let fname = format!("--filename={file}");
    let args = ["--name=d", fname.as_str(), "--size=256k", "--disk_util=0"];
    let r = fiox(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Run status group 0"), "{}", r.stdout);
    assert!(!r.stdout.contains("Disk stats"), "{}", r.stdout);
    let (v, _, _) = fiox_json_code(&args);
    assert!(v.get("disk_util").is_none());
    if need_fio() {
        let (theirs, _) = fio_json_code(&args);
        assert!(theirs.get("disk_util").is_none());
    }
}

/// The kind of each report line: terse, blank, a job's normal report header, or other.
fn line_kinds(stdout: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for l in stdout.lines() {
        let k = if l.starts_with("3;") {
            "terse"
        } else if l.is_empty() {
            "blank"
        } else if l.contains(": (groupid=") {
            "job"
        } else if l.starts_with("Run status group") {
            "group"
        } else {
            continue;
        };
        out.push(k);
    }
    out
}

/// --append-terse (and --output-format=normal,terse): fio prints the terse lines before the
/// normal report, whatever the order asked.
#[test]
fn terse_lines_come_before_the_normal_report_like_fio() {
    let base = [
        "--ioengine=null",
        "--size=1m",
        "--name=t",
        "--name=u",
        "--disk_util=0",
    ];
    for extra in ["--append-terse", "--output-format=normal,terse"] {
        let mut a = base.to_vec();
        a.push(extra);
        let r = fiox(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let ours = line_kinds(&r.stdout);
        assert_eq!(
            ours[..4],
            ["terse", "terse", "blank", "job"],
            "{extra}: {}",
            r.stdout
        );
        if need_fio() {
            let o = Command::new("fio").args(&a).output().expect("run fio");
            let theirs = line_kinds(&String::from_utf8_lossy(&o.stdout));
            assert_eq!(ours, theirs, "{extra}");
        }
    }
}

/// The fcntl(2) calls of a run that set write hints (cmd 1036 F_SET_RW_HINT, 1038
/// F_SET_FILE_RW_HINT), with the hint value strace decodes.
fn hint_calls(tool: &str, dir: &std::path::Path, args: &[&str]) -> Vec<String> {
    strace_text(tool, dir, args, &["-e", "trace=fcntl"])
        .lines()
        .filter(|l| l.contains("RW_HINT") || l.contains("0x40c") || l.contains("0x40e"))
        .map(|l| {
            let cmd = if l.contains("FILE_RW_HINT") || l.contains("0x40e") {
                "file"
            } else {
                "inode"
            };
            let ok = if l.contains("= 0") { "ok" } else { "fail" };
            format!("{cmd} {ok}")
        })
        .collect()
}

/// write_hint: fio's fcntl on the file at open (on the inode for buffered I/O), and with
/// direct=1 on the open file, which kernels since 5.18 refuse (EINVAL, the job's error).
#[test]
fn write_hint_sets_the_hint_like_fio() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "wh");
    let file = dir.join("f");
    let fname = format!("--filename={file}");
    let args = [
        "--name=wh",
        fname.as_str(),
        "--size=256k",
        "--rw=write",
        "--write_hint=short",
    ];
    let (v, code, err) = fiox_json_code(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["jobs"][0]["error"], 0);
    let ours = hint_calls(fiox_bin(), dir.path(), &args);
    assert!(ours.iter().any(|c| c == "inode ok"), "{ours:?}");
    let mut direct = args.to_vec();
    direct.push("--direct=1");
    let (v, code, err) = fiox_json_code(&direct);
    let refused = v["jobs"][0]["error"].as_i64().unwrap();
    if refused != 0 {
        assert_eq!(refused, 22, "{err}");
        assert_eq!(code, 1);
        assert!(err.contains("fcntl write hint"), "{err}");
    }
    if need_fio() {
        assert_eq!(ours, hint_calls("fio", dir.path(), &args));
        let (theirs, _) = fio_json_code(&direct);
        assert_eq!(theirs["jobs"][0]["error"].as_i64().unwrap(), refused);
    }
}

/// opendir: every regular file under the directory, at any depth (links skipped), is one of
/// the job's files: the same bytes read as fio reads, and fio's count of files added.
#[test]
fn opendir_uses_every_file_below_like_fio() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "opendir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::write(root.join("a"), vec![1u8; 64 << 10]).unwrap();
    std::fs::write(root.join("sub/b"), vec![2u8; 128 << 10]).unwrap();
    std::fs::write(root.join("sub/deeper/c"), vec![3u8; 64 << 10]).unwrap();
    std::os::unix::fs::symlink("a", root.join("link")).unwrap();
    let od = format!("--opendir={}", root.display());
    let args = ["--name=o", od.as_str(), "--rw=read"];
    let r = fiox(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("opendir added 3 files"), "{}", r.stdout);
    let (v, code, err) = fiox_json_code(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(issued(&v, "read"), (64, 256 << 10));
    // A directory that cannot be read is an error before anything runs.
    let bad = fiox(&["--name=o", "--opendir=/nonexistent-fiox-dir"]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("opendir(/nonexistent-fiox-dir)"),
        "{}",
        bad.stderr
    );
    if need_fio() {
        let o = Command::new("fio").args(args).output().expect("run fio");
        assert!(String::from_utf8_lossy(&o.stdout).contains("opendir added 3 files"));
        let (theirs, _) = fio_json_code(&args);
        assert_eq!(issued(&theirs, "read"), (64, 256 << 10));
        let o = Command::new("fio")
            .args(["--name=o", "--opendir=/nonexistent-fiox-dir"])
            .output()
            .expect("run fio");
        assert_eq!(o.status.code(), Some(1));
    }
}

/// uid/gid: the job opens its files as that user, as fio's job process does: a file only
/// root may read fails with EACCES (13), one of that user's is read; a new file is laid out
/// (as root, before the switch) and then cannot be opened for writing, as in fio.
#[test]
fn uid_and_gid_run_the_job_as_that_user_like_fio() {
    use std::os::unix::fs::PermissionsExt;
    require_root("switching users");
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "uid");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let secret = dir.join("secret");
    let own = dir.join("own");
    for f in [&secret, &own] {
        std::fs::write(f, vec![0u8; 64 << 10]).unwrap();
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    std::os::unix::fs::chown(&own, Some(65534), Some(65534)).unwrap();
    let run = |tool: &str, file: &str, rw: &str| -> (i32, serde_json::Value) {
        let _ = std::fs::remove_file(dir.join("new"));
        let f = format!("--filename={file}");
        let rw = format!("--rw={rw}");
        let args = [
            "--name=u",
            f.as_str(),
            rw.as_str(),
            "--size=64k",
            "--uid=65534",
            "--gid=65534",
        ];
        let (v, code) = if tool == "fio" {
            fio_json_code(&args)
        } else {
            let (v, code, _) = fiox_json_code(&args);
            (v, code)
        };
        (code, v["jobs"][0]["error"].clone())
    };
    let new = dir.join("new");
    for tool in ["fiox", "fio"] {
        if tool == "fio" && !need_fio() {
            continue;
        }
        assert_eq!(run(tool, &secret, "read"), (1, 13.into()), "{tool}");
        assert_eq!(run(tool, &own, "read"), (0, 0.into()), "{tool}");
        assert_eq!(run(tool, &new, "write"), (1, 13.into()), "{tool}");
    }
}

/// The lines of a log file, split into columns.
fn log_rows(path: &std::path::Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(", ").map(|c| c.trim().parse().unwrap()).collect())
        .collect()
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// log_unix_epoch, log_alternate_epoch (CLOCK_MONOTONIC), log_max_value, log_hist_coarseness
/// and log_entries: the logs' times count from the clock's epoch, and the histogram log has
/// fio's number of columns, in fiox's logs as in fio's.
#[test]
fn log_epochs_max_value_and_coarseness_like_fio() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "logs");
    let run_in = |tool: &str, sub: &str, extra: &[&str]| -> std::path::PathBuf {
        let d = dir.path().join(sub);
        std::fs::create_dir_all(&d).unwrap();
        let mut a = vec![
            "--name=l",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=1200ms",
            "--rate_iops=2000",
            "--write_bw_log=l",
            "--write_lat_log=l",
            "--write_hist_log=l",
            "--log_avg_msec=200",
            "--log_hist_msec=200",
            "--log_entries=2048",
        ];
        a.extend_from_slice(extra);
        let ok = if tool == "fio" {
            Command::new("fio")
                .args(&a)
                .current_dir(&d)
                .output()
                .unwrap()
                .status
                .success()
        } else {
            fiox_in(&d, &a).code == 0
        };
        assert!(ok, "{tool} {extra:?}");
        d
    };
    let mut tools = vec!["fiox"];
    if need_fio() {
        tools.push("fio");
    }
    for tool in tools {
        let before = unix_ms();
        let d = run_in(
            tool,
            &format!("{tool}-unix"),
            &["--log_unix_epoch=1", "--log_hist_coarseness=2"],
        );
        let after = unix_ms();
        for log in ["l_bw.1.log", "l_clat.1.log"] {
            let rows = log_rows(&d.join(log));
            assert!(!rows.is_empty(), "{tool} {log}");
            for r in &rows {
                assert!((before..=after).contains(&r[0]), "{tool} {log}: {r:?}");
            }
        }
        let hist = log_rows(&d.join("l_clat_hist.1.log"));
        assert!(!hist.is_empty(), "{tool}");
        for r in &hist {
            assert!((before..=after).contains(&r[0]), "{tool} hist: {}", r[0]);
            // time, direction, bs, then fio's 1856 buckets summed in fours.
            assert_eq!(r.len(), 3 + 1856 / 4, "{tool} hist columns");
        }
        // CLOCK_MONOTONIC: times near the system's uptime, not near the Unix epoch.
        let d = run_in(
            tool,
            &format!("{tool}-mono"),
            &[
                "--log_alternate_epoch=1",
                "--log_alternate_epoch_clock_id=1",
                "--log_max_value=1",
            ],
        );
        let up: f64 = std::fs::read_to_string("/proc/uptime")
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let rows = log_rows(&d.join("l_clat.1.log"));
        assert!(!rows.is_empty(), "{tool}");
        for r in &rows {
            let t = r[0] as f64 / 1000.0;
            assert!((t - up).abs() < 120.0, "{tool}: {t} vs uptime {up}");
            assert!(r[1] > 0, "{tool}: {r:?}");
        }
    }
}

/// read_iolog_chunked and replay_skip with a text I/O log: as in fio 3.33, every I/O of the
/// log is replayed (fio honours replay_skip in blktrace replays only).
#[test]
fn replay_skip_and_chunked_replay_every_io_like_fio() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "rskip");
    let file = dir.join("rf");
    let f = format!("--filename={file}");
    let made = fiox(&["--name=mk", f.as_str(), "--rw=write", "--size=1m"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let log = dir.path().join("log2.txt");
    let mut text = format!("fio version 2 iolog\n{file} add\n{file} open\n");
    for i in 0..100 {
        text.push_str(&format!("{file} read {} 4096\n", i * 4096));
    }
    text.push_str(&format!("{file} write 0 8192\n{file} close\n"));
    std::fs::write(&log, text).unwrap();
    let rl = format!("--read_iolog={}", log.display());
    let args = [
        "--name=r",
        rl.as_str(),
        "--read_iolog_chunked=1",
        "--replay_skip=write,trim",
    ];
    let (v, code, err) = fiox_json_code(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(issued(&v, "read"), (100, 409_600));
    assert_eq!(issued(&v, "write"), (1, 8192));
    let bad = fiox(&["--name=r", rl.as_str(), "--replay_skip=writes"]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("unknown kind 'writes'"),
        "{}",
        bad.stderr
    );
    if need_fio() {
        let (theirs, _) = fio_json_code(&args);
        assert_eq!(issued(&theirs, "read"), (100, 409_600));
        assert_eq!(issued(&theirs, "write"), (1, 8192));
    }
}

/// The `read OFFSET LEN` lines of a write_iolog (version 3: a time stamp first).
fn iolog_reads(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() == 5 && f[2] == "read").then(|| format!("{} {}", f[3], f[4]))
        })
        .collect()
}

/// rw_sequencer=identical with rw=randread:4: each random offset is read 4 times; the same
/// offsets in the same order as fio (seen through write_iolog); `sequential` continues from it.
#[test]
fn rw_sequencer_identical_repeats_offsets_like_fio() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "rwseq");
    let file = dir.join("f");
    let f = format!("--filename={file}");
    let made = fiox(&["--name=mk", f.as_str(), "--rw=write", "--size=64k"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let trace = |tool: &str, seq: &str| -> Vec<String> {
        let log = dir.path().join(format!("{tool}-{seq}.iolog"));
        let wl = format!("--write_iolog={}", log.display());
        let s = format!("--rw_sequencer={seq}");
        let args = [
            "--name=r",
            f.as_str(),
            "--rw=randread:4",
            "--size=64k",
            s.as_str(),
            wl.as_str(),
        ];
        let ok = if tool == "fio" {
            let o = Command::new("fio").args(args).output().unwrap();
            o.status.success()
        } else {
            fiox(&args).code == 0
        };
        assert!(ok, "{tool} {seq}");
        iolog_reads(&log)
    };
    let ours = trace("fiox", "identical");
    assert_eq!(ours.len(), 16);
    for chunk in ours.chunks(4) {
        assert!(chunk.iter().all(|c| c == &chunk[0]), "{ours:?}");
    }
    let seq = trace("fiox", "sequential");
    assert_ne!(
        seq[0..4]
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len(),
        1
    );
    if need_fio() {
        assert_eq!(ours, trace("fio", "identical"));
        assert_eq!(seq, trace("fio", "sequential"));
    }
}

/// softrandommap: a random map too large for memory (512 PiB at 512 bytes a block) fails the
/// job without it (no I/O done, fio's advice named), and with it the job runs without a map;
/// fio's I/O counts are the same.
#[test]
fn softrandommap_runs_without_a_map_that_cannot_be_had_like_fio() {
    let base = [
        "--name=h",
        "--ioengine=null",
        "--size=512p",
        "--bs=512",
        "--rw=randread",
        "--random_generator=tausworthe64",
        "--number_ios=10",
    ];
    let r = fiox(&base);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("failed allocating the random map"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("softrandommap"), "{}", r.stderr);
    let mut soft = base.to_vec();
    soft.push("--softrandommap=1");
    let (v, code, err) = fiox_json_code(&soft);
    assert_eq!(code, 0, "{err}");
    assert_eq!(issued(&v, "read").0, 10);
    if need_fio() {
        let (theirs, _) = fio_json_code(&base);
        assert_eq!(issued(&theirs, "read").0, 0);
        let (theirs, _) = fio_json_code(&soft);
        assert_eq!(issued(&theirs, "read").0, 10);
    }
}

/// cgroup: the job runs inside the group (its thread listed there while it runs), a group the
/// run created is removed at the end unless cgroup_nodelete, and cgroup_weight without a
/// blkio.weight file fails as fio's (EACCES); the same as fio.
#[test]
fn cgroup_puts_the_job_in_the_group_like_fio() {
    require_root("creates cgroups");
    let Some((mnt, v2)) = blkio_mount() else {
        let cgroups = std::fs::read_to_string("/proc/cgroups").unwrap_or_default();
        assert!(
            !cgroups
                .lines()
                .any(|l| l.starts_with("blkio\t") && l.ends_with("\t1")),
            "the kernel has the blkio controller but it is not mounted: \
             `mount -t cgroup -o blkio cgroup /sys/fs/cgroup/blkio`"
        );
        skip_for_kernel(
            "a blkio cgroup hierarchy",
            "no blkio controller in /proc/cgroups and no cgroup2 mounted",
        );
        return;
    };
    let name = format!("fiox-test-{}", std::process::id());
    let group = mnt.join(&name);
    let members = if v2 { "cgroup.procs" } else { "tasks" };
    let cg = format!("--cgroup={name}");
    let run = |tool: &str, extra: &[&str]| -> (i32, i64, bool) {
        let mut a = vec![
            "--name=c",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--runtime=1500ms",
            "--rate_iops=100",
            cg.as_str(),
        ];
        a.extend_from_slice(extra);
        a.push("--output-format=json");
        let prog = if tool == "fio" { "fio" } else { fiox_bin() };
        let mut child = Command::new(prog)
            .args(&a)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // While it runs, a thread of it is in the group (polled until the run ends, however
        // slowly a loaded machine starts it; only the JSON report goes to the pipe).
        let mut seen = false;
        while child.try_wait().unwrap().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(10));
            let t = std::fs::read_to_string(group.join(members)).unwrap_or_default();
            if !t.trim().is_empty() {
                seen = true;
                break;
            }
        }
        let o = child.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let v: serde_json::Value = serde_json::from_str(&out[out.find("{\n").unwrap_or(0)..])
            .unwrap_or_else(|e| panic!("{tool} JSON ({e}): {out}"));
        let err = v["jobs"][0]["error"].as_i64().unwrap();
        (o.status.code().unwrap_or(-1), err, seen)
    };
    let mut tools = vec!["fiox"];
    if need_fio() {
        tools.push("fio");
    }
    for tool in tools {
        let _ = std::fs::remove_dir(&group);
        assert_eq!(run(tool, &[]), (0, 0, true), "{tool}");
        assert!(!group.exists(), "{tool}: the group it created is removed");
        assert_eq!(run(tool, &["--cgroup_nodelete=1"]), (0, 0, true), "{tool}");
        assert!(group.exists(), "{tool}: cgroup_nodelete keeps it");
        let members_left = std::fs::read_to_string(group.join(members)).unwrap_or_default();
        assert!(members_left.trim().is_empty(), "{tool}: {members_left}");
        std::fs::remove_dir(&group).unwrap();
        if !v2 && !group.parent().unwrap().join("blkio.weight").exists() {
            let (code, err, _) = run(tool, &["--cgroup_weight=500"]);
            assert_eq!((code, err), (1, 13), "{tool}");
            assert!(!group.exists(), "{tool}");
        }
    }
}

/// The job's NUMA calls in a trace: the CPU lists of `sched_setaffinity(0, ...)` (the calling
/// thread) and the modes of set_mempolicy with the first word of their node mask (library
/// probes of other modes left out).
fn numa_calls(tool: &str, dir: &std::path::Path, args: &[&str]) -> Vec<String> {
    let text = strace_text(
        tool,
        dir,
        args,
        &["-e", "trace=set_mempolicy,sched_setaffinity"],
    );
    let mut out = Vec::new();
    for l in text.lines() {
        if let Some(a) = l.split_once("sched_setaffinity(0, ").map(|(_, a)| a) {
            let cpus = a.split_once('[').and_then(|(_, c)| c.split_once(']'));
            out.push(format!("cpus {}", cpus.map_or("?", |(c, _)| c)));
        } else if let Some(a) = l.split_once("set_mempolicy(").map(|(_, a)| a) {
            let mode = a.split(',').next().unwrap_or("");
            if matches!(
                mode,
                "MPOL_BIND" | "MPOL_INTERLEAVE" | "MPOL_PREFERRED" | "MPOL_LOCAL"
            ) {
                let word = a.split_once('[').map_or("0", |(_, w)| {
                    w.split(',').next().unwrap_or("").trim_start_matches("0x")
                });
                let word = word.trim_start_matches('0');
                out.push(format!(
                    "{mode} {}",
                    if word.is_empty() { "0" } else { word }
                ));
            }
        }
    }
    out
}

/// numa_cpu_nodes and numa_mem_policy: the job's thread runs on the CPUs of node 0 and takes
/// the memory policy, the same system calls as fio's (through libnuma); a node that is not
/// online fails the job.
#[test]
fn numa_placement_makes_fios_calls() {
    if !kernel_device("/sys/devices/system/node/node0", "NUMA nodes in sysfs") {
        return;
    }
    let dir = TempDir::new("numa");
    let cpus = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap();
    for policy in ["bind:0", "interleave", "prefer:0", "local", "default"] {
        let p = format!("--numa_mem_policy={policy}");
        let args = [
            "--name=n",
            "--ioengine=null",
            "--size=64k",
            "--numa_cpu_nodes=0",
            p.as_str(),
        ];
        let ours = numa_calls(fiox_bin(), dir.path(), &args);
        assert!(
            !ours.is_empty() && ours[0].starts_with("cpus "),
            "{policy}: {ours:?}"
        );
        let n = parse_cpu_count(&cpus);
        assert_eq!(
            ours[0].split(' ').count() - 1,
            n,
            "{policy}: {ours:?} vs {cpus}"
        );
        assert_eq!(
            ours.len(),
            if policy == "default" { 1 } else { 2 },
            "{policy}: {ours:?}"
        );
        if need_fio() {
            assert_eq!(ours, numa_calls("fio", dir.path(), &args), "{policy}");
        }
    }
    let r = fiox(&[
        "--name=n",
        "--ioengine=null",
        "--size=64k",
        "--numa_cpu_nodes=1000",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("NUMA node 1000 is not online"),
        "{}",
        r.stderr
    );
    // As fio's parser (libnuma refuses the node): the whole file is rejected before any job
    // runs, with no report, --parse-only too.
    let two = [
        "--name=a",
        "--ioengine=null",
        "--size=64k",
        "--name=n",
        "--ioengine=null",
        "--size=64k",
        "--numa_cpu_nodes=1000",
        "--output-format=json",
    ];
    let r = fiox(&two);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.trim().is_empty(), "{}", r.stdout);
    let parse: Vec<&str> = ["--parse-only"].iter().chain(&two).copied().collect();
    let r = fiox(&parse);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.contains("NUMA node 1000 is not online"),
        "{}",
        r.stderr
    );
    if need_fio() {
        let fio = tool_in("fio", std::path::Path::new("/tmp"), &two);
        // fio prints the jobs' banner lines it parsed before the bad one, and no report.
        assert_eq!(fio.code, 1, "{}", fio.stderr);
        assert!(!fio.stdout.contains("\"jobs\""), "{}", fio.stdout);
    }
}

/// How many CPUs a kernel list (`0-3,8`) names.
fn parse_cpu_count(list: &str) -> usize {
    list.trim()
        .split(',')
        .map(|p| match p.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

/// The CPU idleness block of a normal report with its numbers replaced by `N`.
fn idle_shape(stdout: &str) -> Vec<String> {
    let Some(at) = stdout.find("CPU idleness:") else {
        return Vec::new();
    };
    stdout[at..]
        .lines()
        .map(|l| {
            let mut out = String::new();
            let mut in_num = false;
            for c in l.chars() {
                let num = c.is_ascii_digit() || c == '.' || (in_num && c == 'n');
                if num && !in_num {
                    out.push('N');
                }
                if !num {
                    out.push(c);
                }
                in_num = num;
            }
            out.replace("nan", "N")
        })
        .collect()
}

/// --idle-prof: fio's `CPU idleness` block (system, percpu for each CPU, unit of work) and
/// JSON `cpu_idleness` keys; `calibrate` prints the unit of work alone and runs no job; an
/// unknown mode fails as fio's.
#[test]
fn idle_prof_reports_cpu_idleness_like_fio() {
    let job = ["--name=i", "--ioengine=null", "--size=64m"];
    let run = |tool: &str, extra: &[&str]| -> (i32, String) {
        let mut a: Vec<&str> = job.to_vec();
        a.extend_from_slice(extra);
        let prog = if tool == "fio" { "fio" } else { fiox_bin() };
        let o = Command::new(prog).args(&a).output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (code, out) = run(fiox_bin(), &["--idle-prof=percpu"]);
    assert_eq!(code, 0, "{out}");
    let shape = idle_shape(&out);
    let percpu = format!("  percpu: {}", vec!["N%"; ncpu].join(", "));
    assert_eq!(
        shape,
        [
            "CPU idleness:",
            "  system: N%",
            percpu.as_str(),
            "  unit work: mean=Nus, stddev=N"
        ],
        "{out}"
    );
    let (v, code, err) = fiox_json_code(&[job[0], job[1], job[2], "--idle-prof=system"]);
    assert_eq!(code, 0, "{err}");
    let keys: Vec<&String> = v["cpu_idleness"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["system", "unit_mean", "unit_stddev"]);
    let (code, cal) = run(fiox_bin(), &["--idle-prof=calibrate"]);
    assert_eq!(code, 0);
    assert_eq!(
        idle_shape(&cal),
        ["CPU idleness:", "  unit work: mean=Nus, stddev=N"]
    );
    assert!(!cal.contains("groupid"), "no job runs: {cal}");
    assert_eq!(run(fiox_bin(), &["--idle-prof=most"]).0, 1);
    if need_fio() {
        let (_, theirs) = run("fio", &["--idle-prof=percpu"]);
        assert_eq!(shape, idle_shape(&theirs));
        let (_, theirs) = run("fio", &["--idle-prof=calibrate"]);
        assert_eq!(idle_shape(&cal), idle_shape(&theirs));
        assert_eq!(run("fio", &["--idle-prof=most"]).0, 1);
        let v = fio_json(&[job[0], job[1], job[2], "--idle-prof=system"]);
        let theirs: Vec<&String> = v["cpu_idleness"].as_object().unwrap().keys().collect();
        assert_eq!(keys, theirs);
    }
}

/// The `io` debug lines of an I/O unit's life, without the thread id and the unit's address.
fn debug_io_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("io "))
        .filter_map(|l| {
            let (_, msg) = l.split_once(": io_u ")?;
            let verb = l.split_whitespace().nth(2)?;
            let (_, fields) = msg.split_once(": ")?;
            Some(format!("{verb} {fields}"))
        })
        .collect()
}

/// --debug: fio's categories (`?` lists them, an unknown one fails), and for `io` the same
/// fill/prep/queue/complete lines for each I/O as fio's, `process` run states and `file`
/// opens as fio prints them.
#[test]
fn debug_prints_fios_lines() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "debug");
    let file = dir.join("f");
    let f = format!("--filename={file}");
    let made = fiox(&["--name=mk", f.as_str(), "--rw=write", "--size=16k"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let args = [
        "--debug=io,process,file",
        "--name=d",
        f.as_str(),
        "--size=16k",
        "--rw=randread",
    ];
    let r = fiox(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let ours = debug_io_lines(&r.stdout);
    assert_eq!(ours.len(), 4 * 4, "{}", r.stdout);
    assert!(ours[0].starts_with("fill: off=0x"), "{ours:?}");
    assert!(
        r.stdout.contains(&format!("fd open {file}")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(": runstate SETTING_UP -> RUNNING"),
        "{}",
        r.stdout
    );
    let list = fiox(&["--debug=?"]);
    assert_eq!(list.code, 0);
    let bad = fiox(&["--debug=disks", "--name=x"]);
    assert_eq!(bad.code, 1);
    if need_fio() {
        let o = Command::new("fio").args(args).output().unwrap();
        let theirs = String::from_utf8_lossy(&o.stdout);
        assert_eq!(ours, debug_io_lines(&theirs));
        assert!(theirs.contains(&format!("fd open {file}")));
        assert!(theirs.contains(": runstate INITIALIZED -> RUNNING"));
        let o = Command::new("fio").arg("--debug=?").output().unwrap();
        let theirs = String::from_utf8_lossy(&o.stdout);
        // fio's line; fiox's notes on the categories that print nothing follow it.
        let cats = |t: &str| {
            t.split_once("options:")
                .and_then(|(_, c)| c.lines().next())
                .map(|c| c.trim().to_string())
        };
        assert_eq!(cats(&list.stdout), cats(&theirs));
        let o = Command::new("fio")
            .args(["--debug=disks", "--name=x"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
    }
}

/// gtod_cpu: the latencies come from the time thread's wall clock (whole microseconds), as
/// fio's; the time thread runs on that CPU and a job naming it leaves it out of its set.
#[test]
fn gtod_cpu_keeps_the_time_on_one_cpu_like_fio() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "gtod");
    let file = dir.join("f");
    let f = format!("--filename={file}");
    let made = fiox(&["--name=mk", f.as_str(), "--rw=write", "--size=1m"]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = if ncpu > 1 { "1" } else { "0" };
    let g = format!("--gtod_cpu={cpu}");
    let args = ["--name=g", f.as_str(), "--size=1m", g.as_str()];
    let whole_us = |v: &serde_json::Value| {
        let c = &v["jobs"][0]["read"]["clat_ns"];
        // min, max and the sum (mean x N) are exact (percentiles are histogram bucket
        // values). On a loaded machine the time thread may barely move: zeros pass too.
        let vals = [c["min"].as_u64().unwrap(), c["max"].as_u64().unwrap()];
        let sum = c["mean"].as_f64().unwrap() * c["N"].as_f64().unwrap();
        let off = sum.round() as u64 % 1000;
        vals.iter().all(|n| n % 1000 == 0) && (off <= 1 || off >= 999)
    };
    let (ours, code, err) = fiox_json_code(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(issued(&ours, "read").0, 256);
    assert!(whole_us(&ours), "{}", ours["jobs"][0]["read"]["clat_ns"]);
    if need_fio() {
        let (theirs, _) = fio_json_code(&args);
        assert!(
            whole_us(&theirs),
            "{}",
            theirs["jobs"][0]["read"]["clat_ns"]
        );
    }
    if ncpu > 1 {
        // fio 3.33's own time thread dies under strace (SIGSEGV), so only fiox is traced:
        // the time thread on CPU 1, the job on the rest of its set (fio's calls, untraced).
        let t = strace_text(
            fiox_bin(),
            dir.path(),
            &[
                "--name=g",
                "--ioengine=null",
                "--size=1m",
                "--gtod_cpu=1",
                "--cpus_allowed=0-1",
            ],
            &["-e", "trace=sched_setaffinity"],
        );
        let mut sets: Vec<&str> = t
            .lines()
            .filter_map(|l| l.split_once("sched_setaffinity(0, ").map(|(_, a)| a))
            .filter_map(|a| a.split_once('[').and_then(|(_, c)| c.split_once(']')))
            .map(|(c, _)| c)
            .collect();
        sets.sort_unstable();
        assert_eq!(sets, ["0", "1"], "{t}");
    } else {
        eprintln!("one CPU: the affinity part needs two");
    }
}

/// fsync=N and fdatasync=N: a sync before every write that follows N writes, none after the
/// job's last write (fio's loop ends first): 16 writes with N=4 make 3 syncs, as fio's.
#[test]
fn fsync_every_n_writes_makes_fios_calls() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "fsyncn");
    let count = |tool: &str, name: &str, opt: &str, call: &str| -> usize {
        let f = format!("--filename={}", dir.join(name));
        let args = [
            "--name=s",
            f.as_str(),
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            opt,
        ];
        let trace = format!("trace={call}");
        strace_text(tool, dir.path(), &args, &["-e", trace.as_str()])
            .lines()
            .filter(|l| l.contains(&format!("{call}(")))
            .count()
    };
    for (opt, call, want) in [
        ("--fsync=4", "fsync", 3),
        ("--fdatasync=4", "fdatasync", 3),
        ("--fsync=5", "fsync", 3),
        ("--fsync=16", "fsync", 0),
    ] {
        let ours = count(fiox_bin(), "ours", opt, call);
        assert_eq!(ours, want, "{opt}: fiox");
        if need_fio() {
            assert_eq!(count("fio", "theirs", opt, call), want, "{opt}: fio");
        }
    }
}

/// sync_file_range: every N writes, sync_file_range(2) over the range written since the last
/// sync, with the flags named: the same calls as fio's (none after the last write).
#[test]
fn sync_file_range_makes_fios_calls() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "sfr");
    let calls = |tool: &str, name: &str, sfr: &str| -> Vec<String> {
        let f = format!("--filename={}", dir.join(name));
        let s = format!("--sync_file_range={sfr}");
        let args = [
            "--name=s",
            f.as_str(),
            "--rw=write",
            "--size=64k",
            s.as_str(),
        ];
        strace_text(tool, dir.path(), &args, &["-e", "trace=sync_file_range"])
            .lines()
            .filter_map(|l| l.split_once("sync_file_range(").map(|(_, a)| a))
            // Without the descriptor number.
            .filter_map(|a| a.split_once(", ").map(|(_, rest)| rest.to_string()))
            .collect()
    };
    for sfr in ["write:4", "wait_before,write,wait_after:3"] {
        let ours = calls(fiox_bin(), "ours", sfr);
        assert_eq!(ours.len(), if sfr == "write:4" { 3 } else { 5 }, "{ours:?}");
        assert!(ours[0].starts_with("0, "), "{ours:?}");
        if need_fio() {
            assert_eq!(ours, calls("fio", "theirs", sfr), "{sfr}");
        }
    }
}

/// One traced pread64/pwrite64: start and end (s), thread, whether it read.
struct Traced {
    start: f64,
    end: f64,
    tid: u32,
    read: bool,
}

/// Parse `strace -f -ttt -T` lines of pread64/pwrite64 (a call another thread interrupted
/// comes as `unfinished ...` and `<... resumed>`).
fn traced_ios(trace: &str) -> Vec<Traced> {
    let mut open: std::collections::HashMap<u32, (f64, bool)> = Default::default();
    let mut out = Vec::new();
    for l in trace.lines() {
        let mut w = l.split_whitespace();
        let (Some(tid), Some(ts), Some(call)) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        let (Ok(tid), Ok(ts)) = (tid.parse::<u32>(), ts.parse::<f64>()) else {
            continue;
        };
        let dur = l
            .rsplit_once('<')
            .and_then(|(_, d)| d.trim_end().strip_suffix('>')?.parse::<f64>().ok());
        let read = l.contains("pread64");
        if call.starts_with("pread64(") || call.starts_with("pwrite64(") {
            match dur {
                Some(d) => out.push(Traced {
                    start: ts,
                    end: ts + d,
                    tid,
                    read,
                }),
                None => {
                    open.insert(tid, (ts, read));
                }
            }
        } else if call == "<..." {
            if let Some((start, read)) = open.remove(&tid) {
                out.push(Traced {
                    start,
                    end: ts,
                    tid,
                    read,
                });
            }
        }
    }
    out.sort_by(|a, b| a.start.total_cmp(&b.start));
    out
}

/// Pairs of I/Os of different threads that overlap in time: (any, with a write among them).
fn overlaps(ios: &[Traced]) -> (usize, usize) {
    let (mut any, mut with_write) = (0, 0);
    for (i, a) in ios.iter().enumerate() {
        for b in ios[i + 1..].iter().take_while(|b| b.start < a.end) {
            if b.tid != a.tid {
                any += 1;
                with_write += usize::from(!a.read || !b.read);
            }
        }
    }
    (any, with_write)
}

/// `tool args` under strace in `dir`: its job I/Os (the layout's too, which come before the
/// jobs start) and its JSON report.
fn traced_run(tool: &str, dir: &Path, args: &[&str]) -> (Vec<Traced>, serde_json::Value) {
    let trace = dir.join("io.trace");
    let o = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-ttt",
            "-T",
            "-e",
            "trace=pread64,pwrite64",
            "-o",
        ])
        .arg(&trace)
        .arg(tool)
        .args(args)
        .arg("--output-format=json")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run strace");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{tool} {args:?}: {out}");
    let start = out.find("{\n").unwrap_or(0);
    let v =
        serde_json::from_str(&out[start..]).unwrap_or_else(|e| panic!("{tool} JSON ({e}): {out}"));
    let text = std::fs::read_to_string(&trace).unwrap();
    (traced_ios(&text), v)
}

/// The reads and writes all jobs of a report issued.
fn all_ios(v: &serde_json::Value) -> u64 {
    let jobs = v["jobs"].as_array().unwrap();
    jobs.iter()
        .flat_map(|j| ["read", "write"].map(|d| j[d]["total_ios"].as_u64().unwrap_or(0)))
        .sum()
}

/// `lockfile`: two clones of a job on one file. With `exclusive` no two of their I/Os ever
/// overlap in time (strace's entry and exit of each pread/pwrite), with `readwrite` no write
/// overlaps anything while reads do overlap, and without locking they overlap (so the trace
/// can see it); fio 3.33 the same, with the same totals. (fio makes the file's lock only when
/// `lockfile` comes before `filename`, hence the order of the arguments.)
#[test]
fn lockfile_serialises_clones_like_fio() {
    let dir = TempDir::new("lockfile");
    let file = dir.join("f");
    let run = |tool: &str, mode: &str, rw: &str| {
        let args = [
            "--name=lk".to_string(),
            format!("--lockfile={mode}"),
            format!("--filename={file}"),
            format!("--rw={rw}"),
            "--bs=256k".into(),
            "--size=64m".into(),
            "--numjobs=2".into(),
            "--ioengine=psync".into(),
        ];
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ios, v) = traced_run(tool, dir.path(), &a);
        (overlaps(&ios), all_ios(&v))
    };
    // Whether two jobs ever run at once is up to the scheduler: the checks that they do
    // overlap get a few tries; the checks that they must not get one run each.
    let overlapped = |tool: &str, mode: &str, rw: &str| {
        (0..5).any(|_| {
            let ((any, _), n) = run(tool, mode, rw);
            assert_eq!(n, 512, "{tool} lockfile={mode} rw={rw}");
            any > 0
        })
    };
    let tools: &[&str] = if need_fio() {
        &[fiox_bin(), "fio"]
    } else {
        &[fiox_bin()]
    };
    for &tool in tools {
        assert!(
            overlapped(tool, "none", "write"),
            "{tool}: unlocked writers never overlapped"
        );
        let ((any, _), n) = run(tool, "exclusive", "write");
        assert_eq!(any, 0, "{tool}: lockfile=exclusive writers overlapped");
        assert_eq!(n, 512, "{tool}");
        let ((_, with_write), n) = run(tool, "readwrite", "randrw");
        assert_eq!(
            with_write, 0,
            "{tool}: lockfile=readwrite let a write overlap"
        );
        assert_eq!(n, 512, "{tool}");
        assert!(
            overlapped(tool, "readwrite", "read"),
            "{tool}: lockfile=readwrite readers never overlapped"
        );
    }
}

/// fio 3.42's end_syncfs: one syncfs(2) per filesystem at the end of the writes instead of
/// end_fsync's fsync(2) per file (fio 3.33's end_fsync makes the same 3 fsyncs fiox makes
/// without end_syncfs); an engine that cannot sync (mmap) is refused with EINVAL, as fio 3.42.
#[test]
fn end_syncfs_makes_one_syncfs_per_filesystem() {
    let dir = TempDir::under(std::path::Path::new("/var/tmp"), "syncfs");
    let d = format!("--directory={}", dir.path().display());
    let count = |tool: &str, opts: &[&str], call: &str| -> usize {
        let mut args = vec![
            "--name=s",
            d.as_str(),
            "--rw=write",
            "--nrfiles=3",
            "--size=48k",
        ];
        args.extend_from_slice(opts);
        let trace = format!("trace={call}");
        strace_text(tool, dir.path(), &args, &["-e", trace.as_str()])
            .lines()
            .filter(|l| l.contains(&format!("{call}(")))
            .count()
    };
    assert_eq!(count(fiox_bin(), &["--end_fsync=1"], "fsync"), 3);
    if need_fio() {
        assert_eq!(count("fio", &["--end_fsync=1"], "fsync"), 3);
    }
    for opts in [
        &["--end_syncfs=1"][..],
        &["--end_syncfs=1", "--end_fsync=1"],
    ] {
        assert_eq!(count(fiox_bin(), opts, "syncfs"), 1, "{opts:?}");
        assert_eq!(count(fiox_bin(), opts, "fsync"), 0, "{opts:?}");
    }
    // A reading job has nothing to sync.
    assert_eq!(
        count(fiox_bin(), &["--end_syncfs=1", "--rw=read"], "syncfs"),
        0
    );
    let r = fiox_in(
        dir.path(),
        &[
            "--name=m",
            d.as_str(),
            "--ioengine=mmap",
            "--rw=write",
            "--size=16k",
            "--end_syncfs=1",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("does not support syncfs"), "{}", r.stderr);
    assert_eq!(r.json()["jobs"][0]["error"], 22);
}

/// fio 3.42's ramp_size: statistics count from when the job (with group_reporting, its group)
/// has moved ramp_size bytes; the job still does its size in all (as with ramp_time, the
/// ramp's I/O is not repeated). Refused with ramp_time, or when a group's jobs disagree.
#[test]
fn ramp_size_starts_statistics_after_that_many_bytes() {
    let dir = TempDir::new("rampsize");
    let f = format!("--filename={}", dir.join("f"));
    let bytes = |extra: &[&str]| -> Vec<u64> {
        let mut a = vec!["--name=r", f.as_str(), "--rw=write", "--bs=4k", "--size=1m"];
        a.extend_from_slice(extra);
        a.push("--output-format=json");
        let r = fiox_in(dir.path(), &a);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let v = r.json();
        let jobs = v["jobs"].as_array().unwrap();
        jobs.iter()
            .map(|j| j["write"]["io_bytes"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(bytes(&[]), vec![1 << 20]);
    let one = bytes(&["--ramp_size=256k"]);
    assert!(one[0] > 0 && one[0] <= 768 << 10, "{one:?}");
    let each = bytes(&["--ramp_size=256k", "--numjobs=2"]);
    assert!(each.iter().all(|&b| b > 0 && b <= 768 << 10), "{each:?}");
    let group = bytes(&["--ramp_size=256k", "--numjobs=2", "--group_reporting"]);
    assert!(
        group[0] > 0 && group[0] <= (2 << 20) - (256 << 10),
        "{group:?}"
    );
    let r = fiox_in(
        dir.path(),
        &[
            "--name=r",
            f.as_str(),
            "--size=64k",
            "--ramp_size=8k",
            "--ramp_time=1",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("cannot specify both ramp_time and ramp_size"),
        "{}",
        r.stderr
    );
    let job = dir.path().join("g.fio");
    let text = format!(
        "[global]\nsize=64k\nfilename={}\n[a]\nramp_size=8k\n[b]\nramp_size=16k\n",
        dir.join("g")
    );
    std::fs::write(&job, text).unwrap();
    let r = fiox_in(dir.path(), &[job.to_str().unwrap()]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("inconsistent ramp_size"), "{}", r.stderr);
}

/// fio 3.42's comm: the job's thread names itself with prctl(PR_SET_NAME) (the kernel keeps
/// 15 bytes), after fiox's own name for it.
#[test]
fn comm_names_the_job_thread() {
    let dir = TempDir::new("comm");
    let f = format!("--filename={}", dir.join("f"));
    let args = [
        "--name=t",
        f.as_str(),
        "--size=16k",
        "--comm=fiox-io-job-longname",
    ];
    let trace = strace_text(
        fiox_bin(),
        dir.path(),
        &args,
        &["-s", "64", "-e", "trace=prctl"],
    );
    // The job thread's names, in order (other threads name themselves concurrently).
    let sets: Vec<(&str, &str)> = trace
        .lines()
        .filter(|l| l.contains("PR_SET_NAME"))
        .filter_map(|l| Some((l.split_whitespace().next()?, l.split('"').nth(1)?)))
        .collect();
    let tid = sets.iter().find(|(_, n)| *n == "fiox-t").map(|(t, _)| *t);
    let names: Vec<&str> = sets
        .iter()
        .filter(|(t, _)| Some(*t) == tid)
        .map(|(_, n)| *n)
        .collect();
    // strace shows what the kernel takes: 15 bytes.
    assert_eq!(names.last(), Some(&"fiox-io-job-lon"), "{trace}");
    let plain = strace_text(
        fiox_bin(),
        dir.path(),
        &args[..3],
        &["-s", "64", "-e", "trace=prctl"],
    );
    assert!(!plain.contains("fiox-io-job"), "{plain}");
}

/// fio 3.42's thinkcycles: one spin after each read, write or trim issued (not after the
/// fsyncs of fsync=N), on the sync and the queued paths. Counted by a debug build
/// (FIOX_DEBUG_THINKCYCLES), since its effect is only time.
#[test]
fn thinkcycles_spins_once_per_io() {
    if !cfg!(debug_assertions) {
        eprintln!("release build: the spin count is printed by debug builds only");
        return;
    }
    let dir = TempDir::new("thinkcycles");
    let f = format!("--filename={}", dir.join("f"));
    let spins = |extra: &[&str]| -> String {
        let mut a = vec![
            "--name=t",
            f.as_str(),
            "--size=64k",
            "--output-format=terse",
        ];
        a.extend_from_slice(extra);
        let o = std::process::Command::new(fiox_bin())
            .args(&a)
            .env("FIOX_DEBUG_THINKCYCLES", "1")
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stderr).trim().to_string()
    };
    let want = "fiox-debug: job t: thinkcycles spins 16";
    assert_eq!(spins(&["--rw=randrw", "--thinkcycles=1000"]), want);
    let queued = [
        "--rw=write",
        "--fsync=4",
        "--ioengine=libaio",
        "--iodepth=4",
        "--thinkcycles=10",
    ];
    assert_eq!(spins(&queued), want);
    assert_eq!(
        spins(&["--rw=read"]),
        "fiox-debug: job t: thinkcycles spins 0"
    );
}

/// fio 3.42's job_start_clock_id: the job's JSON object gets `job_start`, the clock's ms at the
/// job's start: on CLOCK_REALTIME between the times read before and after the run (also for a
/// group_reporting group), on CLOCK_BOOTTIME (7) within the uptime read around the run (10 ms
/// resolution); without the option the JSON is fio 3.33's (no field); an unknown clock fails the
/// job with EINVAL.
#[test]
fn job_start_clock_id_adds_job_start_to_json() {
    let dir = TempDir::new("jobstart");
    let f = format!("--filename={}", dir.join("f"));
    let realtime = || {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        d.as_millis() as u64
    };
    let uptime = || {
        let t = std::fs::read_to_string("/proc/uptime").unwrap();
        let s: f64 = t.split_whitespace().next().unwrap().parse().unwrap();
        (s * 1000.0) as u64
    };
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut a = vec!["--name=a", f.as_str(), "--size=64k", "--output-format=json"];
        a.extend_from_slice(extra);
        fiox_in(dir.path(), &a).json()
    };
    let start = |v: &serde_json::Value| {
        let jobs = v["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1);
        jobs[0]["job_start"].as_u64().unwrap()
    };
    let opt = "--job_start_clock_id=0";
    for extra in [&[opt][..], &[opt, "--numjobs=2", "--group_reporting"]] {
        let before = realtime();
        let s = start(&run(extra));
        let after = realtime();
        assert!(before <= s && s <= after, "{extra:?}: {before} {s} {after}");
    }
    let before = uptime();
    let s = start(&run(&["--job_start_clock_id=7"]));
    let after = uptime() + 10;
    assert!(before <= s && s <= after, "boottime: {before} {s} {after}");
    assert!(run(&[])["jobs"][0].get("job_start").is_none());
    let v = run(&["--job_start_clock_id=99"]);
    assert_eq!(v["jobs"][0]["error"], 22);
}

/// fio 3.42's libaio_vectored: every read and write goes to io_submit as IOCB_CMD_PREADV /
/// IOCB_CMD_PWRITEV of one iovec (the data still verifies); without it IOCB_CMD_PREAD /
/// IOCB_CMD_PWRITE, as fio 3.33's libaio.
#[test]
fn libaio_vectored_submits_vectored_iocbs() {
    let dir = TempDir::new("aiovec");
    let f = format!("--filename={}", dir.join("f"));
    let ops = |extra: &[&str]| -> [usize; 4] {
        let mut a = vec![
            "--name=v",
            f.as_str(),
            "--rw=write",
            "--size=64k",
            "--ioengine=libaio",
            "--iodepth=4",
            "--verify=crc32c",
        ];
        a.extend_from_slice(extra);
        let t = strace_text(fiox_bin(), dir.path(), &a, &["-e", "trace=io_submit"]);
        [
            "IOCB_CMD_PREAD,",
            "IOCB_CMD_PWRITE,",
            "IOCB_CMD_PREADV,",
            "IOCB_CMD_PWRITEV,",
        ]
        .map(|op| t.matches(op).count())
    };
    // 16 writes, then 16 verify reads.
    assert_eq!(ops(&["--libaio_vectored=1"]), [0, 0, 16, 16]);
    assert_eq!(ops(&[]), [16, 16, 0, 0]);
}

/// fio 3.42's priohint: the hint goes into the job thread's ioprio_set(2) value above the
/// level (class << 13 | hint << 3 | level; best-effort when no class is given); without it
/// the value is fio 3.33's (checked against fio when installed).
#[test]
fn priohint_sets_the_hint_bits_of_the_job_ioprio() {
    let dir = TempDir::new("priohint");
    let f = format!("--filename={}", dir.join("f"));
    let value = |tool: &str, extra: &[&str]| -> Vec<String> {
        let mut a = vec!["--name=p", f.as_str(), "--size=16k"];
        a.extend_from_slice(extra);
        let t = strace_text(
            tool,
            dir.path(),
            &a,
            &["-e", "trace=ioprio_set", "-e", "raw=ioprio_set"],
        );
        t.lines()
            .filter_map(|l| l.split_once("ioprio_set(").map(|(_, r)| r))
            .filter_map(|r| r.split(')').next()?.rsplit(", ").next().map(str::to_string))
            .collect()
    };
    assert_eq!(
        value(fiox_bin(), &["--prioclass=2", "--prio=4", "--priohint=1"]),
        ["0x400c"]
    );
    assert_eq!(value(fiox_bin(), &["--priohint=3"]), ["0x4018"]);
    assert_eq!(
        value(fiox_bin(), &["--prioclass=2", "--prio=4"]),
        ["0x4004"]
    );
    if need_fio() {
        assert_eq!(value("fio", &["--prioclass=2", "--prio=4"]), ["0x4004"]);
    }
    assert!(value(fiox_bin(), &[]).is_empty());
}
