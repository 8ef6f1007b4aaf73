//! Integration tests of the `fiox` binary: exact I/O counts against fio, JSON output, Ctrl-C
//! handling and cleanup, `fiox quick`, and the refusal to write to a mounted block device.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::time::Duration;

/// Size-bound jobs: fiox must issue the same number of I/Os and bytes per direction as fio
/// (compared with fio's own JSON when fio is installed; totals are checked in any case).
#[test]
fn size_bound_jobs_issue_what_fio_issues() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("read", "4k", &[]),
        ("randread", "4k", &[]),
        ("write", "64k", &[]),
        ("randwrite", "16k", &[]),
        ("randrw", "4k", &["--rwmixread=70"]),
        ("rw", "8k", &[]),
        ("randrw", "4k-32k", &[]),
        ("randread", "4k", &["--nrfiles=3"]),
    ];
    let with_fio = need_fio();
    for (rw, bs, extra) in cases {
        let dir = TempDir::new("count");
        let size = 8u64 << 20;
        let mut args = vec![
            "--name=c".to_string(),
            "--ioengine=psync".into(),
            format!("--rw={rw}"),
            if bs.contains('-') {
                format!("--bsrange={bs}")
            } else {
                format!("--bs={bs}")
            },
            format!("--size={size}"),
            format!("--directory={}", dir.path().display()),
            "--output-format=json".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = fiox(&a);
        assert_eq!(r.code, 0, "{rw} {bs}: {}", r.stderr);
        let v = r.json();
        let (rd, wr) = (issued(&v, "read"), issued(&v, "write"));
        let label = format!("rw={rw} bs={bs} {extra:?}");
        assert!(
            rd.1 + wr.1 <= size && rd.1 + wr.1 > size - (64 << 10),
            "{label}: {rd:?} {wr:?}"
        );
        if !bs.contains('-') {
            let b = fiox_job::value::parse_size(bs, 1024).unwrap();
            assert_eq!((rd.0 + wr.0) * b, rd.1 + wr.1, "{label}: fixed bs");
        }
        if with_fio {
            let fdir = TempDir::new("count-fio");
            let mut fargs = args.clone();
            fargs[5] = format!("--directory={}", fdir.path().display());
            let fa: Vec<&str> = fargs.iter().map(String::as_str).collect();
            let f = fio_json(&fa);
            assert_eq!(rd, issued(&f, "read"), "{label}: read vs fio");
            assert_eq!(wr, issued(&f, "write"), "{label}: write vs fio");
        }
    }
}

#[test]
fn null_engine_json_parses_and_counts() {
    let r = fiox(&[
        "--name=n",
        "--ioengine=null",
        "--rw=randread",
        "--size=64m",
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(issued(&v, "read"), (16384, 64 << 20));
    assert_eq!(v["jobs"][0]["jobname"], "n");
    assert!(v["jobs"][0]["read"]["clat_ns"]["N"].as_u64() == Some(16384));
    // A machine format alone gets no header lines at all (as fio), on stdout or stderr, and a
    // run that goes well prints nothing on stderr.
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert_eq!(v["fiox"]["notes"], serde_json::json!([]));
}

#[test]
fn normal_output_has_fio_shape() {
    let dir = TempDir::new("normal");
    let f = dir.join("f");
    let r = fiox(&[
        "--name=x",
        "--ioengine=psync",
        "--rw=randread",
        "--size=4m",
        &format!("--filename={f}"),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("x: (g=0): rw=randread"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Starting 1 process\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("issued rwts: total=1024,0,0,0"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Run status group 0 (all jobs):"));
    // Where fio prints it: stdout, after the header, before the report.
    let layout = r.stdout.find("x: Laying out IO file (1 file / 4MiB)\n");
    let starting = r.stdout.find("Starting 1 process\n");
    let report = r.stdout.find("x: (groupid=0");
    assert!(
        starting < layout && layout.is_some() && layout < report,
        "{}",
        r.stdout
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn bad_option_is_a_clear_error_not_a_panic() {
    let r = fiox(&["--name=x", "--rw=sideways", "--size=1m"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("rw"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let r = fiox(&[
        "--name=x",
        "--size=1m",
        "--filename=/nonexistent-dir-fiox/f",
    ]);
    assert_eq!(r.code, 1);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

/// Ctrl-C stops I/O, prints valid JSON of what was measured, removes the files fiox created for
/// an unlink=1 job and exits with 130.
#[test]
fn sigint_reports_and_cleans_up() {
    let dir = TempDir::new("sigint");
    let f = dir.join("f");
    let child = spawn_fiox(&[
        "--name=t",
        "--ioengine=psync",
        "--rw=randrw",
        "--size=8m",
        "--time_based",
        "--runtime=60",
        "--unlink=1",
        &format!("--filename={f}"),
        "--output-format=json",
    ]);
    let pid = child.id().to_string();
    // Wait until the job reads: a thousand read syscalls after its file exists (the layout
    // only writes), however slowly a loaded machine gets there.
    let reads = || proc_io(child.id(), "syscr");
    let mut laid_out = None;
    for _ in 0..2000 {
        match laid_out {
            None if std::path::Path::new(&f).exists() => laid_out = Some(reads()),
            Some(n) if reads() > n + 1000 => break,
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    sh("kill", &["-INT", &pid]).expect("send SIGINT");
    let r = wait(child);
    assert_eq!(r.code, 130, "stderr: {}", r.stderr);
    let v = r.json();
    let (ios, _) = issued(&v, "read");
    assert!(ios > 0, "measured I/O before the signal");
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
}

#[test]
fn quick_leaves_nothing_behind() {
    let dir = TempDir::new("quick");
    let r = fiox(&[
        "quick",
        dir.path().to_str().unwrap(),
        "--size=8m",
        "--runtime=200ms",
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let tests = v["fiox_quick"]["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 6);
    assert!(
        tests.iter().all(|t| t["iops"].as_f64().unwrap() > 0.0),
        "{v}"
    );
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
}

/// A loop device that is mounted (or carries a filesystem) must not be written to.
#[test]
fn refuses_to_write_a_mounted_loop_device() {
    require_root("a loop device");
    let dir = TempDir::under(std::path::Path::new("/tmp"), "loop");
    let img = dir.join("img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    require_tool("mkfs.ext4");
    sh("mkfs.ext4", &["-q", "-F", &img]).unwrap();
    if !loop_devices() {
        return;
    }
    require_tool("losetup");
    let dev = sh("losetup", &["-f", "--show", &img]).expect("losetup attaches the image");
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    require_tool("mount");
    let mounted = sh("mount", &[&dev, &mnt]);
    let write_job = |extra: &str| {
        fiox(&[
            "--name=w",
            "--ioengine=psync",
            "--rw=write",
            "--size=1m",
            &format!("--filename={dev}"),
            extra,
        ])
    };
    let r_mounted = write_job("--bs=4k");
    if mounted.is_ok() {
        let _ = sh("umount", &[&mnt]);
    }
    // Unmounted, the ext4 signature still protects it; allow_mounted_write overrides.
    let r_sig = write_job("--bs=4k");
    let r_global = fiox(&[
        "--allow-destructive",
        "--name=w",
        "--ioengine=psync",
        "--rw=write",
        "--size=64k",
        "--offset=1m",
        &format!("--filename={dev}"),
    ]);
    let r_forced = write_job("--allow_mounted_write=1");
    let _ = sh("losetup", &["-d", &dev]);
    if let Err(e) = mounted {
        // Only a kernel without ext4 may refuse the mount (recorded as a skip of that part);
        // the signature is still checked below.
        assert!(
            !kernel_filesystem("ext4"),
            "cannot mount the ext4 image: {e}"
        );
    } else {
        assert_eq!(r_mounted.code, 1, "{}", r_mounted.stderr);
        assert!(
            r_mounted.stderr.contains("is mounted on"),
            "{}",
            r_mounted.stderr
        );
    }
    assert_eq!(r_sig.code, 1, "{}", r_sig.stderr);
    assert!(r_sig.stderr.contains("ext4 filesystem"), "{}", r_sig.stderr);
    assert_eq!(r_global.code, 0, "{}", r_global.stderr);
    assert_eq!(r_forced.code, 0, "{}", r_forced.stderr);
}

#[test]
fn status_interval_json_is_json_lines() {
    let r = fiox(&[
        "--name=s",
        "--ioengine=null",
        "--rw=read",
        "--size=1g",
        "--time_based",
        "--runtime=1",
        "--status-interval=300ms",
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert!(lines.len() >= 2, "{}", r.stdout);
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).expect("each line is a JSON object");
        assert_eq!(v["jobs"][0]["jobname"], "s");
    }
}

/// fio draws the ETA line on stdout (with `--eta=always` also when stdout is not a terminal),
/// each line ended by a carriage return, and none when a machine format alone goes to stdout
/// (it would break the JSON); stderr stays quiet.
#[test]
fn eta_always_draws_lines_on_stdout() {
    let dir = TempDir::new("eta");
    let out = dir.join("out.json");
    let eta = [
        "--name=e",
        "--ioengine=null",
        "--rw=randread",
        "--size=1g",
        "--time_based",
        "--runtime=1500ms",
        "--eta=always",
    ];
    let r = fiox(&[&eta[..], &["--output-format=json"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    r.json();
    let to_file = format!("--output={out}");
    let r = fiox(&[&eta[..], &["--output-format=json", &to_file]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert!(r.stdout.contains("Jobs: 1 (f=1): [r(1)]["), "{}", r.stdout);
    assert!(r.stdout.contains(" IOPS][eta "), "{}", r.stdout);
    assert!(r.stdout.contains("]\r"), "{:?}", r.stdout);
    serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let normal = fiox(&eta);
    assert!(normal.stdout.contains(" IOPS][eta "), "{}", normal.stdout);
    assert!(normal.stderr.is_empty(), "{}", normal.stderr);
    if need_fio() {
        let fio = |args: &[&str]| {
            let o = std::process::Command::new("fio")
                .args(args)
                .output()
                .unwrap();
            (o.stdout, o.stderr)
        };
        let (stdout, stderr) = fio(&[&eta[..], &["--output-format=json"]].concat());
        assert!(stderr.is_empty());
        assert!(!String::from_utf8_lossy(&stdout).contains("Jobs: "));
        let (stdout, stderr) = fio(&eta);
        assert!(stderr.is_empty());
        assert!(String::from_utf8_lossy(&stdout).contains("Jobs: 1 (f=1)"));
    }
}

/// I/O errors name the errno, file, offset and length. As in fio 3.33, continue_on_error alone
/// survives only EIO/EILSEQ (ENOSPC still ends the job: err=28, total_err=1, exit 1), and an
/// ignore_error list tolerates its errors with a warning, the first one still reported as the
/// job's error (exit 0). /dev/full fails every write with ENOSPC.
#[test]
fn io_errors_follow_continue_on_error() {
    if !kernel_device("/dev/full", "the mem driver's /dev/full") {
        return;
    }
    let base = [
        "--name=f",
        "--rw=write",
        "--size=64k",
        "--filename=/dev/full",
        "--output-format=json",
    ];
    let r = fiox(&base);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("/dev/full: No space left on device (ENOSPC): write offset=0, length=4096"),
        "{}",
        r.stderr
    );
    assert_eq!(r.json()["jobs"][0]["error"], libc::ENOSPC);
    // (extra argument, exit code, total_err, total_ios), each as fio 3.33 reports it.
    for (extra, code, total_err, ios) in [
        ("--continue_on_error=write", 1, 1, 1),
        ("--ignore_error=,ENOSPC", 0, 16, 16),
    ] {
        let mut args = base.to_vec();
        args.push(extra);
        let r = fiox(&args);
        assert_eq!(r.code, code, "{extra}: {}", r.stderr);
        let v = r.json();
        let j = &v["jobs"][0];
        assert_eq!(j["error"], libc::ENOSPC, "{extra}: {v}");
        assert_eq!(j["total_err"], total_err, "{extra}: {v}");
        assert_eq!(j["first_error"], libc::ENOSPC, "{extra}");
        assert_eq!(j["write"]["total_ios"], ios, "{extra}");
    }
}

#[test]
fn ramp_time_is_excluded_from_the_measured_runtime() {
    let r = fiox(&[
        "--name=r",
        "--ioengine=null",
        "--rw=read",
        "--size=1g",
        "--time_based",
        "--runtime=500ms",
        "--ramp_time=2s",
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let job = &v["jobs"][0];
    // job_runtime counts from the end of the ramp: it is the runtime, not runtime + ramp.
    let rt = job["job_runtime"].as_u64().unwrap();
    assert!((500..2000).contains(&rt), "job_runtime={rt}");
}

/// verify=crc32c: the write job checks its blocks after writing; a later read job with the same
/// options checks them again and names a corrupted block precisely.
#[test]
fn verify_detects_a_flipped_bit() {
    let dir = TempDir::new("verify");
    let f = dir.join("f");
    // The write job saves its verify state in the working directory: the temp dir.
    let job = |rw: &str| {
        fiox_in(
            dir.path(),
            &[
                "--name=v",
                &format!("--rw={rw}"),
                "--bs=4k",
                "--size=1m",
                &format!("--filename={f}"),
                "--verify=crc32c",
                "--output-format=json",
            ],
        )
    };
    let w = job("randwrite");
    assert_eq!(w.code, 0, "{}", w.stderr);
    // As in fio, the verify phase shows as the job's reads.
    assert_eq!(issued(&w.json(), "read"), (256, 1 << 20));
    assert_eq!(job("read").code, 0);
    let mut data = std::fs::read(&f).unwrap();
    data[5 * 4096 + 100] ^= 0x10;
    std::fs::write(&f, &data).unwrap();
    let r = job("read");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("verify failed at offset 20480, length 4096"),
        "{}",
        r.stderr
    );
    assert_eq!(r.json()["jobs"][0]["error"], libc::EILSEQ);
}

/// Verify at queue depth 16 with repeated random writes (no random map): the write log must
/// track which write each block holds last, and the verify phase must find every block intact.
#[test]
fn verify_with_a_deep_queue_and_rewrites_passes() {
    let dir = TempDir::new("verify-qd");
    // The verify state lands in the working directory: the temp dir.
    let r = fiox_in(
        dir.path(),
        &[
            "--name=v",
            "--rw=randwrite",
            "--norandommap",
            "--bs=4k",
            "--size=256k",
            "--io_size=4m",
            "--ioengine=io_uring",
            "--iodepth=16",
            "--verify=md5",
            &format!("--directory={}", dir.path().display()),
            "--output-format=json",
        ],
    );
    if r.code != 0 && r.stderr.contains("io_uring") && !kernel_io_uring() {
        return;
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(issued(&r.json(), "write"), (1024, 4 << 20));
}

/// rate_iops caps the job: without pacing the null engine would do millions of IOPS. Only an
/// upper bound is checked (a loaded machine can only make it slower).
#[test]
fn rate_iops_paces_the_job() {
    let r = fiox(&[
        "--name=p",
        "--ioengine=null",
        "--rw=randread",
        "--size=64m",
        "--rate_iops=500",
        "--time_based",
        "--runtime=600ms",
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let (ios, _) = issued(&v, "read");
    let ms = v["jobs"][0]["read"]["runtime"].as_u64().unwrap().max(1);
    let iops = ios as f64 * 1000.0 / ms as f64;
    assert!(ios > 0 && iops <= 550.0, "{ios} I/Os in {ms} ms");
}

/// A block device is a target like a file; without size= the job covers the whole device, and
/// a blank device (no mount, no signature, over a file fiox created) may be written.
#[test]
fn blank_loop_device_is_a_target_sized_from_the_device() {
    require_root("a loop device");
    let dir = TempDir::under(std::path::Path::new("/tmp"), "blank-loop");
    let img = dir.join("img");
    // fiox creates (and marks) the backing file: a loop device over a user's file is refused.
    let made = fiox(&[
        "--name=mk",
        "--rw=write",
        "--size=8m",
        "--zero_buffers=1",
        &format!("--filename={img}"),
    ]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    if !loop_devices() {
        return;
    }
    require_tool("losetup");
    let dev = sh("losetup", &["-f", "--show", &img]).expect("losetup attaches the image");
    let job = |rw: &str| {
        fiox(&[
            "--name=b",
            &format!("--rw={rw}"),
            "--bs=64k",
            &format!("--filename={dev}"),
            "--output-format=json",
        ])
    };
    let w = job("write");
    let r = job("randread");
    let _ = sh("losetup", &["-d", &dev]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(issued(&w.json(), "write"), (128, 8 << 20));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(issued(&r.json(), "read"), (128, 8 << 20));
}

/// Ctrl-C during `fiox quick` still removes its temporary file and exits with 130.
#[test]
fn quick_interrupted_removes_its_file() {
    let dir = TempDir::new("quick-int");
    let child = spawn_fiox(&[
        "quick",
        dir.path().to_str().unwrap(),
        "--size=8m",
        "--runtime=30",
        "--output-format=json",
    ]);
    let pid = child.id().to_string();
    for _ in 0..100 {
        if !dir.entries().is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    sh("kill", &["-INT", &pid]).expect("send SIGINT");
    let r = wait(child);
    assert_eq!(r.code, 130, "stderr: {}", r.stderr);
    r.json();
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
}

/// Seed 000's command line (`fio job.fio --max-jobs=2 --latency-log --bandwidth-log`) runs:
/// --latency-log (fio 2.x; fio 3.33 rejects it) writes each job's latency logs, said on
/// stderr; --bandwidth-log writes fio 3.33's aggregate logs with one line per interval and
/// direction, the read and write sums over both jobs.
#[test]
fn old_and_new_log_switches_of_seed_000_command_line() {
    let dir = TempDir::new("loglines");
    let data = format!("--filename={}", dir.join("d"));
    // Two rate-capped jobs (8 MiB/s read, 4 MiB/s write each); b also names a file.
    let job = |name: &'static str| {
        [
            name,
            "--ioengine=null",
            "--rw=randrw",
            "--size=64m",
            "--runtime=1200ms",
            "--time_based",
            "--rate=8m,4m",
        ]
    };
    let mut args = vec!["--max-jobs=2", "--latency-log", "--bandwidth-log"];
    args.extend(job("--name=a"));
    args.extend(job("--name=b"));
    args.extend([data.as_str(), "--output-format=json"]);
    let r = fiox_in(dir.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let v = r.json();
    assert!(
        v["fiox"]["notes"][0]
            .as_str()
            .unwrap_or("")
            .contains("--latency-log (a fio 2.x switch"),
        "{}",
        v["fiox"]
    );
    let names = dir.entries();
    for f in ["a_lat.1.log", "a_clat.1.log", "b_lat.2.log", "b_clat.2.log"] {
        assert!(names.iter().any(|n| n == f), "{f} in {names:?}");
    }
    for (file, ddir, kib) in [
        ("agg-read_bw.log", 0, 16384.0),
        ("agg-write_bw.log", 1, 8192.0),
    ] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        let lines: Vec<Vec<u64>> = text
            .lines()
            .map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect())
            .collect();
        assert!(lines.len() >= 2, "{file}: {text}");
        for l in &lines {
            assert_eq!(
                (l.len(), l[2], l[3], l[4]),
                (5, ddir, 0, 0),
                "{file}: {text}"
            );
        }
        // rate=8m,4m per job, two jobs: the full-interval samples sit near the sum. Their
        // mean, since rate pacing catches up after a stall: a job thread held off the CPU
        // late in one window makes up for it early in the next.
        let mid = (lines[0][1] + lines[1][1]) as f64 / 2.0;
        assert!((mid - kib).abs() / kib < 0.4, "{file}: {text}");
    }
    let trim = std::fs::read_to_string(dir.path().join("agg-trim_bw.log")).unwrap();
    assert!(
        trim.lines().all(|l| l.split(", ").nth(1) == Some("0")),
        "{trim}"
    );
}

/// The non-DONTNEED posix_fadvise calls a run makes, fds dropped: `offset, len, advice`.
fn fadvise_calls(tool: &str, dir: &TempDir, args: &[&str]) -> Vec<String> {
    fadvise_trace(tool, dir.path(), args)
        .into_iter()
        .filter(|c| !c.contains("DONTNEED"))
        .collect()
}

/// fadvise_hint (fio's default 1) gives every file the job's access pattern over its region,
/// so a random buffered job runs without readahead, exactly as fio 3.33 does (compared call for
/// call when fio is installed); 0 gives none; noreuse gives POSIX_FADV_NOREUSE as fio 3.35+.
#[test]
fn fadvise_hint_advises_like_fio() {
    require_tool("strace");
    let dir = TempDir::new("fadvise");
    let file = format!("--filename={}", dir.join("f"));
    for (rw, hint, want) in [
        ("randread", None, Some("POSIX_FADV_RANDOM")),
        ("read", None, Some("POSIX_FADV_SEQUENTIAL")),
        ("randrw", Some("sequential"), Some("POSIX_FADV_SEQUENTIAL")),
        ("read", Some("random"), Some("POSIX_FADV_RANDOM")),
        ("randread", Some("0"), None),
        ("randread", Some("noreuse"), Some("POSIX_FADV_NOREUSE")),
    ] {
        let rw_arg = format!("--rw={rw}");
        let hint_arg = hint.map(|h| format!("--fadvise_hint={h}"));
        let mut args = vec![
            "--name=fa",
            file.as_str(),
            "--size=1m",
            "--offset=64k",
            "--bs=4k",
            "--thread",
            rw_arg.as_str(),
            "--output-format=terse",
        ];
        args.extend(hint_arg.as_deref());
        let ours = fadvise_calls(fiox_bin(), &dir, &args);
        let expect: Vec<String> = want
            .map(|a| format!("65536, 1048576, {a}"))
            .into_iter()
            .collect();
        assert_eq!(ours, expect, "{args:?}");
        // noreuse is fio 3.35+'s (ioengines.c gives it as the others); fio 3.33 refuses it.
        if need_fio() && hint != Some("noreuse") {
            assert_eq!(fadvise_calls("fio", &dir, &args), ours, "vs fio: {args:?}");
        }
    }
}

/// Options without `--name=`, or no arguments at all, define no job: fio prints its usage,
/// says "No job(s) defined" on stderr and exits 1, so a script never takes a run that did
/// nothing for a success. fiox used to print the help and exit 0.
#[test]
fn no_job_defined_fails_like_fio() {
    for args in [&["--rw=read", "--size=16m"][..], &[]] {
        let r = fiox(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with("No job(s) defined"), "{}", r.stderr);
        assert!(r.stdout.contains("Usage"), "{}", r.stdout);
        if need_fio() {
            let code = std::process::Command::new("fio")
                .args(args)
                .output()
                .unwrap()
                .status
                .code();
            assert_eq!(code, Some(1), "fio {args:?}");
        }
    }
    assert_eq!(fiox(&["--help"]).code, 0);
}

/// `--output` that cannot take the report: the header check stops the run before any I/O,
/// naming the file; a report that fails late is printed on stdout (still valid JSON) with a
/// message naming the file, and the exit status is 1. The results used to be lost with a
/// message that named no file.
#[test]
fn unwritable_output_loses_no_results() {
    if !kernel_device("/dev/full", "the mem driver's /dev/full") {
        return;
    }
    let job = [
        "--name=o",
        "--ioengine=null",
        "--size=1m",
        "--output=/dev/full",
    ];
    let r = fiox(&job);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--output file /dev/full") && r.stderr.contains("nothing was run"),
        "{}",
        r.stderr
    );
    let r = fiox(&[&job[..], &["--output-format=json"]].concat());
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--output file /dev/full"), "{}", r.stderr);
    assert_eq!(issued(&r.json(), "read").1, 1 << 20);
    let r = fiox(&[
        "--name=o",
        "--ioengine=null",
        "--size=1m",
        "--output=/nonexistent-dir/x",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("/nonexistent-dir/x"), "{}", r.stderr);
}

/// A depth above the kernel's largest io_uring submission ring (32768 entries) runs: the ring
/// is submitted in batches and the completion ring holds the depth (it said only
/// "io_uring_setup(65536): Invalid argument"; tests/scale.rs runs it deep).
#[test]
fn io_uring_deeper_than_the_kernels_largest_ring_runs() {
    let dir = TempDir::new("deep");
    let file = format!("--filename={}", dir.join("f"));
    let r = fiox(&[
        "--name=d",
        "--ioengine=io_uring",
        "--iodepth=65536",
        "--rw=randread",
        "--size=1m",
        &file,
    ]);
    if r.code != 0 && !kernel_io_uring() {
        return;
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

/// Every JSON result describes where it was made (issue 11's self-describing results): kernel,
/// CPU, memory and the fiox build under `fiox.env`, and the job's target.
#[test]
fn json_results_carry_the_environment() {
    let dir = TempDir::new("env");
    let file = format!("--filename={}", dir.join("f"));
    let r = fiox(&["--name=e", &file, "--size=1m", "--output-format=json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let env = &r.json()["fiox"]["env"];
    for key in ["kernel", "cpu", "memory", "fiox", "targets"] {
        assert!(!env[key].is_null(), "{key} missing: {env}");
    }
}

/// `fiox man [page|bash|zsh|fish]` prints the man page and completion scripts a `cargo install`
/// user has no checkout to copy them from (issue 41): the very text of docs/ and completions/.
#[test]
fn fiox_man_prints_the_page_and_each_completion_script() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (what, file) in [
        (None, "docs/fiox.1"),
        (Some("page"), "docs/fiox.1"),
        (Some("bash"), "completions/fiox.bash"),
        (Some("zsh"), "completions/_fiox"),
        (Some("fish"), "completions/fiox.fish"),
    ] {
        let mut args = vec!["man"];
        args.extend(what);
        let r = fiox(&args);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        let want = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(r.stdout == want, "fiox {args:?} differs from {file}");
    }
    let r = fiox(&["man", "pdf"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("[possible values: page, bash, zsh, fish]"),
        "{}",
        r.stderr
    );
}
