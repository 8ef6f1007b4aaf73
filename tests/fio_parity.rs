//! fio 3.33 features of issue 10 that fiox runs, each compared with fio itself where fio is
//! installed (same totals, same report shapes): I/O memory (`mem`, `iomem_align`, `lockmem`,
//! `hugepage-size`), ...

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;

/// A verified random write through buffers of `mem` starting 512 bytes past a page boundary,
/// with O_DIRECT (so the kernel reads and writes that memory itself).
fn mem_args(file: &str, mem: &str) -> Vec<String> {
    [
        "--name=m",
        &format!("--filename={file}"),
        "--rw=randwrite",
        "--bs=4k",
        "--size=256k",
        "--direct=1",
        "--iomem_align=512",
        "--iodepth=4",
        "--ioengine=io_uring",
        "--verify=crc32c",
        "--lockmem=1m",
        &format!("--mem={mem}"),
    ]
    .map(String::from)
    .to_vec()
}

/// Every `mem=` backing fio runs here runs in fiox, with fio's totals and a clean verify.
#[test]
fn every_mem_backing_runs_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "mem");
    let file = dir.join("f");
    let map_file = dir.join("buffers");
    for mem in [
        "malloc".to_string(),
        "shm".into(),
        "mmap".into(),
        "mmapshared".into(),
        format!("mmap:{map_file}"),
        format!("mmapshared:{map_file}"),
    ] {
        let args = mem_args(&file, &mem);
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.push("--output-format=json");
        let r = fiox_in(dir.path(), &a);
        assert_eq!(r.code, 0, "mem={mem}: {}", r.stderr);
        let ours = r.json();
        assert_eq!(ours["jobs"][0]["error"], 0, "mem={mem}");
        // Writes, then the verify phase's reads, all through that memory.
        assert_eq!(issued(&ours, "write"), (64, 256 << 10), "mem={mem}");
        assert_eq!(issued(&ours, "read"), (64, 256 << 10), "mem={mem}");
        assert!(!Path::new(&map_file).exists(), "the buffer file is removed");
        // fio 3.33 does not size the file of `mmapshared:FILE` and dies of SIGBUS on its
        // first buffer; fiox sizes it (checked above), so there is nothing to compare.
        if need_fio() && !mem.starts_with("mmapshared:") {
            a.pop();
            let theirs = fio_json(&a);
            assert_eq!(theirs["jobs"][0]["error"], 0, "fio mem={mem}");
            for d in ["read", "write"] {
                assert_eq!(issued(&ours, d), issued(&theirs, d), "mem={mem} {d}");
            }
        }
    }
}

/// With no huge pages reserved, huge backings fail as in fio (the job errors, nothing is
/// written), and fiox says where huge pages are reserved.
#[test]
fn huge_backings_without_huge_pages_fail_like_fio() {
    let reserved = std::fs::read_to_string("/proc/sys/vm/nr_hugepages").unwrap_or_default();
    if reserved.trim() != "0" {
        // The kernel's huge page pool is not the test's to empty (other users hold it).
        skip_for_kernel(
            "an empty huge page pool",
            &format!("vm.nr_hugepages = {}", reserved.trim()),
        );
        return;
    }
    let dir = TempDir::new("memhuge");
    let file = format!("--filename={}", dir.join("f"));
    for mem in ["shmhuge", "mmaphuge"] {
        let m = format!("--mem={mem}");
        let a = [
            "--name=h",
            &file,
            "--rw=write",
            "--size=64k",
            &m,
            "--hugepage-size=2m",
        ];
        let r = fiox(&a);
        assert_eq!(r.code, 1, "{mem}: {}", r.stderr);
        assert!(r.stderr.contains("nr_hugepages"), "{mem}: {}", r.stderr);
        if need_fio() {
            let fio = std::process::Command::new("fio").args(a).output().unwrap();
            assert!(!fio.status.success(), "fio {mem}");
        }
    }
}

/// Run fio in `dir` with the normal report; (exit code, stdout).
fn fio_normal(dir: &Path, args: &[&str]) -> (i32, String) {
    let r = tool_in("fio", dir, args);
    (r.code, r.stdout)
}

/// The parts of a normal report that do not depend on timing: the header line and the
/// `(io/` and `io=... (...)` figures of the direction and group lines.
fn stable_parts(report: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in report.lines() {
        if l.contains("(g=0)") {
            out.push(l.to_string());
        }
        if let Some(i) = l.find(")(") {
            out.push(l[i..].split('/').next().unwrap_or("").to_string());
        }
        if let Some(i) = l.find(" io=") {
            out.push(l[i..].split(", run=").next().unwrap_or("").to_string());
        }
    }
    out
}

/// significant_figures=6 prints sizes and rates with 6 digits, and bs_is_seq_rand's header
/// names it instead of the trim size, as fio.
#[test]
fn significant_figures_and_bs_is_seq_rand_print_like_fio() {
    let args = [
        "--name=s",
        "--ioengine=null",
        "--rw=read",
        "--bs=12345",
        "--size=1234500",
        "--significant_figures=6",
        "--bs_is_seq_rand=1",
    ];
    let r = fiox(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ours = stable_parts(&r.stdout);
    assert_eq!(
        ours,
        [
            "s: (g=0): rw=read, bs=(R) 12345B-12345B, (W) 12345B-12345B, bs_is_seq_rand, ioengine=null, iodepth=1",
            ")(1205.6KiB",
            " io=1205.6KiB (1234.5kB)",
        ]
    );
    if need_fio() {
        let dir = TempDir::new("sigfig");
        let (code, out) = fio_normal(dir.path(), &args);
        assert_eq!(code, 0);
        assert_eq!(stable_parts(&out), ours, "vs fio");
    }
}

/// rw=randtrimwrite: every trim is followed by a write of the same block (the sequence
/// itself is checked I/O by I/O against fio in fiox-workload's sweep), with fio's totals. On a
/// loop device: fio 3.33 trims only block devices (ENOTTY on a regular file).
#[test]
fn randtrimwrite_runs_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "rtw");
    let Some(lo) = loop_over(dir.path(), "backing", 1 << 20) else {
        return;
    };
    let file = format!("--filename={}", lo.path().display());
    let args = [
        "--name=t",
        file.as_str(),
        "--rw=randtrimwrite",
        "--bsrange=4k-16k",
        "--size=512k",
        "--output-format=json",
        // The test's own scratch device: fiox otherwise protects a loop device's backing file.
        "--allow-destructive",
    ];
    let r = fiox(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ours = r.json();
    let (trims, trimmed) = issued(&ours, "trim");
    let (writes, written) = issued(&ours, "write");
    assert_eq!(
        (trims, trimmed),
        (writes, written),
        "each trim has its write"
    );
    assert!(trims > 0);
    if need_fio() {
        let theirs = fio_json(&args[..5]);
        assert_eq!(theirs["jobs"][0]["error"], 0, "fio");
        for d in ["trim", "write", "read"] {
            assert_eq!(issued(&ours, d), issued(&theirs, d), "{d} vs fio");
        }
    }
    lo.detach().unwrap();
}

/// A trim of a regular file: fio 3.33 discards with BLKDISCARD whatever the file is, so every
/// engine but falloc fails the job with ENOTTY (errno 25) and exit status 1; fiox does the same
/// instead of punching holes (which changed the outcome of examples/enospc-pressure.fio). The
/// file keeps its data.
#[test]
fn trim_of_a_regular_file_fails_like_fio() {
    for engine in ["psync", "libaio", "io_uring", "mmap"] {
        for tool in ["fiox", "fio"] {
            if tool == "fio" && !need_fio() {
                continue;
            }
            let dir = TempDir::new("trimfile");
            let path = dir.join("f");
            std::fs::write(&path, vec![0x5au8; 64 << 10]).unwrap();
            let file = format!("--filename={}", path);
            let eng = format!("--ioengine={engine}");
            let args = [
                "--name=t",
                file.as_str(),
                eng.as_str(),
                "--rw=trim",
                "--bs=4k",
                "--size=64k",
            ];
            // fiox: the test's own file (fiox otherwise refuses to trim a user's data).
            let extra: &[&str] = if tool == "fiox" {
                &["--allow-destructive"]
            } else {
                &[]
            };
            let all: Vec<&str> = args.iter().chain(extra).copied().collect();
            let (code, v, stderr) = tool_json(tool, dir.path(), &all, Some(60));
            assert_eq!(v["jobs"][0]["error"], 25, "{tool} {engine}: {stderr}");
            assert_eq!(code, 1, "{tool} {engine}: {stderr}");
            let data = std::fs::read(&path).unwrap();
            assert!(
                data.len() == 64 << 10 && data.iter().all(|&b| b == 0x5a),
                "{tool} {engine}: the file was changed"
            );
        }
    }
}

/// create_only: the file is laid out and nothing else is done, as fio.
#[test]
fn create_only_lays_out_and_does_no_io_like_fio() {
    for tool in ["fiox", "fio"] {
        if tool == "fio" && !need_fio() {
            continue;
        }
        let dir = TempDir::new("createonly");
        let file = format!("--filename={}", dir.join("f"));
        let args = [
            "--name=c",
            file.as_str(),
            "--rw=randrw",
            "--size=1m",
            "--create_only=1",
            "--output-format=json",
        ];
        let v = if tool == "fiox" {
            let r = fiox(&args);
            assert_eq!(r.code, 0, "{}", r.stderr);
            r.json()
        } else {
            fio_json(&args[..5])
        };
        assert_eq!(v["jobs"][0]["error"], 0, "{tool}");
        for d in ["read", "write"] {
            assert_eq!(issued(&v, d), (0, 0), "{tool} {d}");
        }
        let len = std::fs::metadata(dir.join("f")).map(|m| m.len());
        assert_eq!(len.ok(), Some(1 << 20), "{tool} laid the file out");
    }
}

/// The lines of an I/O log without their time stamps, checking the stamps never go back.
fn iolog_lines(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("fio version 3 iolog"));
    let mut last = 0u64;
    lines
        .map(|l| {
            let (t, rest) = l.split_once(' ').unwrap();
            let t: u64 = t.parse().unwrap();
            assert!(t >= last, "time stamps go back: {l}");
            last = t;
            rest.to_string()
        })
        .collect()
}

/// write_iolog writes fio's version 3 log: the same file actions and I/Os, line by line.
#[test]
fn write_iolog_writes_fios_log() {
    let tools = if need_fio() {
        vec!["fiox", "fio"]
    } else {
        vec!["fiox"]
    };
    let mut logs = Vec::new();
    for tool in tools {
        let dir = TempDir::new("wiolog");
        let args = [
            "--name=t",
            "--rw=randrw",
            "--bs=4k",
            "--size=64k",
            "--nrfiles=2",
            "--write_iolog=io.log",
            "--output-format=terse",
        ];
        let code = tool_in(tool, dir.path(), &args).code;
        assert_eq!(code, 0, "{tool}");
        logs.push(iolog_lines(&dir.join("io.log")));
    }
    let ours = &logs[0];
    assert_eq!(&ours[..3], ["t.0.0 add", "t.0.1 add", "t.0.0 open"]);
    assert_eq!(
        ours.iter()
            .filter(|l| l.contains(" read ") || l.contains(" write "))
            .count(),
        16
    );
    if let Some(theirs) = logs.get(1) {
        assert_eq!(ours, theirs, "vs fio");
    }
}

/// With `filesize`, fio's region: filesize is where the file ends, offset where the I/O starts
/// inside it, size only bounds the job's bytes. offset=32k filesize=64k writes 32-64 KiB and
/// leaves a 64 KiB file (fiox wrote 32-96 KiB and grew it); an existing file whose size is
/// within a filesize range keeps its size; size=16k filesize=64k writes 16 KiB; an offset past
/// filesize is fio's "you need to specify valid offset=" (exit 1). Same I/Os as fio's log.
#[test]
fn filesize_ends_the_file_and_offset_stays_inside_like_fio() {
    let cases: [(&[&str], u64, Option<u64>); 5] = [
        (
            &["--offset=32k", "--size=64k", "--filesize=64k", "--rw=write"],
            0,
            Some(64 << 10),
        ),
        (
            &[
                "--offset=32k",
                "--size=64k",
                "--filesize=64k",
                "--rw=randwrite",
            ],
            0,
            Some(64 << 10),
        ),
        (
            &[
                "--offset=32k",
                "--size=64k",
                "--filesize=64k-128k",
                "--rw=write",
            ],
            100 << 10,
            Some(100 << 10),
        ),
        (
            &["--size=16k", "--filesize=64k", "--rw=write"],
            0,
            Some(64 << 10),
        ),
        (
            &["--offset=80k", "--size=64k", "--filesize=64k", "--rw=write"],
            0,
            None,
        ),
    ];
    for (extra, existing, want_len) in cases {
        let mut logs = Vec::new();
        for tool in ["fiox", "fio"] {
            if tool == "fio" && !need_fio() {
                continue;
            }
            let dir = TempDir::new("fsregion");
            if existing > 0 {
                std::fs::write(dir.join("f"), vec![0u8; existing as usize]).unwrap();
            }
            let mut args = vec![
                "--name=t",
                "--filename=f",
                "--bs=16k",
                "--write_iolog=io.log",
            ];
            args.extend(extra);
            args.push("--output-format=terse");
            if tool == "fiox" && existing > 0 {
                // The test's own file (fiox otherwise keeps a user's existing data).
                args.push("--allow-destructive");
            }
            let r = tool_in(tool, dir.path(), &args);
            let len = std::fs::metadata(dir.join("f")).ok().map(|m| m.len());
            match want_len {
                Some(n) => {
                    assert_eq!(r.code, 0, "{tool} {extra:?}: {}", r.stderr);
                    assert_eq!(len, Some(n), "{tool} {extra:?}: the file's size");
                    logs.push(iolog_lines(&dir.join("io.log")));
                }
                None => {
                    assert_eq!(r.code, 1, "{tool} {extra:?}: {} {}", r.stdout, r.stderr);
                    let all = format!("{}{}", r.stdout, r.stderr);
                    assert!(
                        all.contains("you need to specify valid offset="),
                        "{tool}: {all}"
                    );
                }
            }
        }
        let io = |l: &Vec<String>| -> Vec<String> {
            l.iter()
                .filter(|x| x.contains(" write "))
                .cloned()
                .collect()
        };
        if let [ours, theirs] = &logs[..] {
            assert_eq!(io(ours), io(theirs), "{extra:?} vs fio");
        }
        if let Some(ours) = logs.first() {
            assert!(!io(ours).is_empty(), "{extra:?}: no writes");
        }
    }
}

/// read_iolog replays a version 3 log (here one fiox wrote) with fio's I/Os in fio's order,
/// and fio's totals.
#[test]
fn read_iolog_replays_like_fio() {
    require_tool("strace");
    let dir = TempDir::under(Path::new("/var/tmp"), "riolog");
    let make = [
        "--name=t",
        "--rw=randrw",
        "--bs=4k",
        "--size=64k",
        "--nrfiles=2",
        "--write_iolog=orig.log",
        "--output-format=terse",
    ];
    assert_eq!(fiox_in(dir.path(), &make).code, 0);
    let replay = ["--name=r", "--read_iolog=orig.log", "--output-format=terse"];
    let ours = io_trace(fiox_bin(), dir.path(), &replay);
    assert_eq!(ours.len(), 16, "{ours:?}");
    assert!(ours[0].starts_with("pread64 4096 "), "{ours:?}");
    if need_fio() {
        assert_eq!(io_trace("fio", dir.path(), &replay), ours, "vs fio");
        let mut a = replay.to_vec();
        a[2] = "--output-format=json";
        let r = fiox_in(dir.path(), &a);
        let theirs = {
            let o = std::process::Command::new("fio")
                .current_dir(dir.path())
                .args(&replay[..2])
                .arg("--output-format=json")
                .output()
                .unwrap();
            serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
        };
        for d in ["read", "write"] {
            assert_eq!(issued(&r.json(), d), issued(&theirs, d), "{d}");
        }
    }
}

/// A version 2 log with replay_redirect, replay_scale and replay_align: the I/Os land on the
/// one file, offsets divided then aligned, as fio replays them.
#[test]
fn read_iolog_v2_redirect_scale_align_like_fio() {
    require_tool("strace");
    let dir = TempDir::under(Path::new("/var/tmp"), "riolog2");
    std::fs::write(dir.join("target"), vec![0u8; 64 << 10]).unwrap();
    let log = "fio version 2 iolog\n/nowhere/a add\n/nowhere/b add\n/nowhere/a open\n\
               /nowhere/a write 40960 4096\n/nowhere/b read 20000 4096\n/nowhere/a close\n";
    std::fs::write(dir.join("v2.log"), log).unwrap();
    let args = [
        "--name=r",
        "--read_iolog=v2.log",
        "--replay_redirect=target",
        "--replay_scale=2",
        "--replay_align=4096",
        "--output-format=terse",
        // The test's own file, which fiox did not create: fiox otherwise refuses to write it.
        "--allow-destructive",
    ];
    let ours = io_trace(fiox_bin(), dir.path(), &args);
    assert_eq!(ours, ["pwrite64 4096 20480", "pread64 4096 8192"]);
    if need_fio() {
        let fio_args = &args[..args.len() - 1];
        assert_eq!(io_trace("fio", dir.path(), fio_args), ours, "vs fio");
    }
}

/// Version 3 time stamps are waited out (scaled by replay_time_scale); replay_no_stall
/// ignores them. Lower bounds only: a wait is never shorter than asked.
#[test]
fn read_iolog_keeps_the_logs_timing() {
    let dir = TempDir::new("riolog3");
    std::fs::write(dir.join("f"), vec![0u8; 8192]).unwrap();
    let log =
        "fio version 3 iolog\n1 f add\n2 f open\n10 f read 0 4096\n2000010 f read 4096 4096\n";
    std::fs::write(dir.join("v3.log"), log).unwrap();
    let run = |extra: &str| {
        let t = std::time::Instant::now();
        let r = fiox_in(
            dir.path(),
            &[
                "--name=r",
                "--read_iolog=v3.log",
                extra,
                "--output-format=json",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(issued(&r.json(), "read"), (2, 8192));
        t.elapsed()
    };
    assert!(run("--replay_time_scale=100") >= std::time::Duration::from_millis(2000));
    assert!(run("--replay_time_scale=200") >= std::time::Duration::from_millis(1000));
    // The log's 2 s are not waited (generous: a loaded machine still runs this in far less).
    assert!(run("--replay_no_stall=1") < std::time::Duration::from_millis(1900));
}

/// `tool --inflate-log=FILE` in `dir`: (exit code, stdout).
fn inflate_with(tool: &str, dir: &Path, file: &str) -> (i32, String) {
    let o = std::process::Command::new(tool)
        .current_dir(dir)
        .arg(format!("--inflate-log={file}"))
        .output()
        .expect("run --inflate-log");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// log_store_compressed writes fio's `.log.fz` files: fio's --inflate-log reads fiox's, fiox's
/// reads fio's, both print the same text; log_compression alone (chunks compressed in memory,
/// inflated at the end) leaves the text logs as they are (fio's are too).
#[test]
fn compressed_logs_are_fios() {
    let dir = TempDir::new("gzlog");
    let job = |prefix: &str, store: &str| -> Vec<String> {
        [
            "--name=t",
            "--rw=randrw",
            "--bs=4k",
            "--size=64k",
            &format!("--write_lat_log={prefix}"),
            &format!("--write_bw_log={prefix}"),
            "--log_offset=1",
            "--log_compression=1m",
            &format!("--log_store_compressed={store}"),
            "--output-format=terse",
        ]
        .map(String::from)
        .to_vec()
    };
    let a = job("x", "1");
    let r = fiox_in(
        dir.path(),
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, ours) = inflate_with(fiox_bin(), dir.path(), "x_clat.1.log.fz");
    assert_eq!(code, 0);
    // One line per I/O: "time, clat, ddir, 4096, offset, 0".
    assert_eq!(ours.lines().count(), 16, "{ours}");
    assert!(
        ours.lines()
            .all(|l| l.split(", ").count() == 6 && l.contains(", 4096, ")),
        "{ours}"
    );
    let plain = job("p", "0");
    let r = fiox_in(
        dir.path(),
        &plain.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(dir.join("p_clat.1.log")).unwrap();
    assert_eq!(
        text.lines().count(),
        16,
        "log_compression keeps the text log"
    );
    if need_fio() {
        for f in ["x_clat.1.log.fz", "x_bw.1.log.fz", "x_lat.1.log.fz"] {
            assert_eq!(
                inflate_with("fio", dir.path(), f),
                inflate_with(fiox_bin(), dir.path(), f),
                "{f}"
            );
        }
        let theirs = job("f", "1");
        let (code, _) = fio_normal(
            dir.path(),
            &theirs.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert_eq!(code, 0);
        let (c1, fio_text) = inflate_with("fio", dir.path(), "f_clat.1.log.fz");
        let (c2, our_text) = inflate_with(fiox_bin(), dir.path(), "f_clat.1.log.fz");
        assert_eq!((c1, c2), (0, 0));
        assert_eq!(our_text, fio_text, "fiox inflates fio's log");
        assert_eq!(fio_text.lines().count(), 16);
    }
    let bad = fiox_in(dir.path(), &["--inflate-log=p_clat.1.log"]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("--inflate-log: p_clat.1.log"),
        "{}",
        bad.stderr
    );
}

/// The keys of a JSON object, recursively ("a.b"), for comparing shapes.
fn shape(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    if let Some(m) = v.as_object() {
        for (k, x) in m {
            let p = format!("{at}.{k}");
            out.push(p.clone());
            shape(x, &p, out);
        }
    }
}

/// steadystate: a rate-limited job is steady within its window and stops early (far before
/// its runtime), with fio's `steadystate` JSON section; a criterion that cannot hold runs the
/// whole runtime and says attained=0.
#[test]
fn steadystate_stops_early_with_fios_section() {
    let steady = [
        "--name=s",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=100g",
        "--time_based",
        "--runtime=30",
        "--ss=iops:50%",
        "--ss_dur=2",
        "--rate_iops=2000",
    ];
    let mut a = steady.to_vec();
    a.push("--output-format=json");
    let r = fiox(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let job = &v["jobs"][0];
    let ss = &job["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["ss"], "iops:50.000000%");
    assert_eq!(ss["duration"], 2);
    assert_eq!(ss["data"]["iops"].as_array().map(Vec::len), Some(2));
    assert!(
        job["read"]["runtime"].as_u64().unwrap() < 30_000,
        "stopped early"
    );
    let mut ours = Vec::new();
    shape(ss, "steadystate", &mut ours);
    if need_fio() {
        let theirs = fio_json(&steady);
        let fss = &theirs["jobs"][0]["steadystate"];
        assert_eq!(fss["attained"], 1, "fio: {fss}");
        let mut fshape = Vec::new();
        shape(fss, "steadystate", &mut fshape);
        assert_eq!(ours, fshape, "same section");
    }
    let never = [
        "--name=n",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=100g",
        "--time_based",
        "--runtime=2500ms",
        "--ss=iops:0%",
        "--ss_dur=2",
        "--output-format=normal",
    ];
    let r = fiox(&never);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("steadystate  :"))
        .unwrap_or("");
    assert!(
        line.starts_with("  steadystate  : attained=no, bw="),
        "{}",
        r.stdout
    );
    assert!(line.contains(", iops mean dev="), "{line}");
}

/// `--terse-version` 2 to 5: fio's field counts, version fields and I/O totals.
#[test]
fn terse_versions_are_fios() {
    for v in 2..=5 {
        let tv = format!("--terse-version={v}");
        let args = [
            "--name=t",
            "--ioengine=null",
            "--rw=randrw",
            "--bs=4k",
            "--size=1m",
            "--minimal",
            tv.as_str(),
        ];
        let r = fiox(&args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let f: Vec<&str> = r.stdout.trim_end().split(';').collect();
        let want = [161, 121, 162, 180][v - 2];
        assert_eq!(f.len(), want, "v{v}: {}", r.stdout);
        assert_eq!(f[0], v.to_string());
        // read KiB, then write KiB one direction later: 1 MiB in all.
        let (read_at, per_dir) = if v == 2 { (4, 41) } else { (5, 41) };
        let per_dir = if v == 5 { per_dir + 6 } else { per_dir };
        let kib = |i: usize| f[i].parse::<u64>().unwrap();
        assert_eq!(kib(read_at) + kib(read_at + per_dir), 1024, "v{v}");
        if need_fio() {
            let dir = TempDir::new("terse");
            let (code, out) = fio_normal(dir.path(), &args);
            assert_eq!(code, 0);
            let g: Vec<&str> = out.trim_end().split(';').collect();
            assert_eq!(g.len(), f.len(), "v{v} vs fio");
            assert_eq!(g[read_at], f[read_at], "v{v} read KiB vs fio");
        }
    }
    let bad = fiox(&["--terse-version=6", "--name=x"]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("bad terse version"), "{}", bad.stderr);
}

/// --append-terse adds the terse line to the normal report (fio's output_format |= terse);
/// --eta-interval updates the ETA line that often; too short periods are refused as fio does.
#[test]
fn append_terse_and_eta_switches() {
    let r = fiox(&[
        "--name=t",
        "--ioengine=null",
        "--rw=read",
        "--size=1m",
        "--append-terse",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Run status group 0"), "{}", r.stdout);
    assert_eq!(
        r.stdout.lines().filter(|l| l.starts_with("3;")).count(),
        1,
        "{}",
        r.stdout
    );
    let eta_lines = |extra: &[&str]| {
        let mut a = vec![
            "--name=e",
            "--ioengine=null",
            "--rw=read",
            "--size=1g",
            "--time_based",
            "--runtime=1700ms",
            "--rate_iops=100",
            "--eta=always",
        ];
        a.extend_from_slice(extra);
        let r = fiox(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        // The ETA line goes to stdout as fio's (each ends with a carriage return).
        r.stdout
            .split(['\r', '\n'])
            .filter(|l| l.starts_with("Jobs: "))
            .count()
    };
    // A lower bound: the job lasts 1.7 s at least, so a 250 ms period draws 4 lines or more.
    assert!(eta_lines(&["--eta-interval=250ms"]) >= 4);
    assert!(eta_lines(&["--eta-newline=1"]) >= 1);
    for (arg, msg) in [
        ("--eta-interval=100ms", "too short (250 ms at least)"),
        ("--eta-newline=0", "too short"),
    ] {
        let bad = fiox(&["--name=x", arg]);
        assert_eq!(bad.code, 1);
        assert!(bad.stderr.contains(msg), "{arg}: {}", bad.stderr);
    }
}

/// --aux-path: the verify state files go there, as fio's do (fio names them the same way).
#[test]
fn aux_path_holds_the_verify_state() {
    for tool in ["fiox", "fio"] {
        if tool == "fio" && !need_fio() {
            continue;
        }
        let dir = TempDir::new("auxpath");
        let aux = TempDir::new("auxpath-state");
        let aux_arg = format!("--aux-path={}", aux.path().display());
        let args = [
            aux_arg.as_str(),
            "--name=v",
            "--rw=write",
            "--size=64k",
            "--verify=crc32c",
            "--output-format=terse",
        ];
        let code = tool_in(tool, dir.path(), &args).code;
        assert_eq!(code, 0, "{tool}");
        assert!(
            Path::new(&aux.join("local-v-0-verify.state")).exists(),
            "{tool}: {:?}",
            aux.entries()
        );
        assert!(
            !dir.entries().iter().any(|e| e.ends_with(".state")),
            "{tool}: {:?}",
            dir.entries()
        );
    }
}

/// --trigger-timeout and --trigger-file stop every job (fio's local trigger) and run
/// --trigger's command; the trigger file is removed.
#[test]
fn triggers_stop_the_run_and_run_the_command() {
    let dir = TempDir::new("trigger");
    let fired = dir.join("fired");
    let cmd = format!("--trigger=touch {fired}");
    let job = [
        "--name=t",
        "--ioengine=null",
        "--rw=read",
        "--size=1g",
        "--time_based",
        "--runtime=60",
        "--output-format=json",
    ];
    let mut a = vec!["--trigger-timeout=1", cmd.as_str()];
    a.extend_from_slice(&job);
    let r = fiox(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.json()["jobs"][0]["read"]["runtime"].as_u64().unwrap() < 60_000);
    assert!(Path::new(&fired).exists(), "the trigger command ran");
    std::fs::remove_file(&fired).unwrap();
    let tf = dir.join("go");
    let tf_arg = format!("--trigger-file={tf}");
    let mut a = vec![tf_arg.as_str(), cmd.as_str()];
    a.extend_from_slice(&job);
    let child = spawn_fiox(&a);
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(&tf, b"").unwrap();
    let r = wait(child);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(Path::new(&fired).exists(), "the trigger command ran");
    assert!(!Path::new(&tf).exists(), "the trigger file is removed");
}

/// M9: a trigger file that names no file (`--trigger-file=/`) fires once and says why once;
/// it was asked again every 20 ms until the jobs were done and printed its refusal each time.
#[test]
fn a_trigger_file_that_cannot_be_removed_is_reported_once() {
    let r = fiox(&[
        "--trigger-file=/",
        "--name=t",
        "--ioengine=null",
        "--rw=read",
        "--size=1g",
        "--time_based",
        "--runtime=20",
        "--output-format=json",
    ]);
    assert!(r.json()["jobs"][0]["read"]["runtime"].as_u64().unwrap() < 20_000);
    let lines: Vec<&str> = r.stderr.lines().filter(|l| l.contains('/')).collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
}

/// The windows (end time, IOPS) of an iops log written with `log_avg_msec`.
fn windows(path: &str) -> Vec<(u64, f64)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(',').map(str::trim);
            Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
        })
        .collect()
}

/// The ratio of two jobs' I/O over the middle half of the time both ran, from iops logs with
/// Unix epoch times (so their windows line up whenever each job started): at either end one
/// job of a flow may run alone, if it started or ended a while before the other.
fn common_ratio(num: &str, den: &str) -> f64 {
    let (n, d) = (windows(num), windows(den));
    assert!(
        n.len() >= 20 && d.len() >= 20,
        "{num}: {}, {den}: {}",
        n.len(),
        d.len()
    );
    let from = n[0].0.max(d[0].0);
    let to = n[n.len() - 1].0.min(d[d.len() - 1].0);
    assert!(
        to > from + 1000,
        "the jobs ran together {} ms",
        to.saturating_sub(from)
    );
    let (lo, hi) = (from + (to - from) / 4, to - (to - from) / 4);
    let sum = |w: &[(u64, f64)]| -> f64 {
        w.iter()
            .filter(|(t, _)| (lo..=hi).contains(t))
            .map(|(_, v)| v)
            .sum()
    };
    sum(&n) / sum(&d)
}

/// flow: two jobs of one flow_id with weights 1 and 3 issue I/O about 1:3 while they run
/// together, as fio's do (with and without flow_sleep); a job of another flow_id is not held.
/// The exact 1:3 of the algorithm is checked in fiox-runner's flow tests. On a loaded machine
/// one job may start or end a while before the other and run alone, which skewed a ratio of
/// whole-job totals; so the ratio is taken from per-job iops logs (100 ms windows) over the
/// middle half of the time both ran, aligned by their Unix epoch times.
#[test]
fn flow_keeps_the_weights_like_fio() {
    let dir = TempDir::new("flow");
    let file = dir.join("flow.fio");
    for sleep in ["0", "100"] {
        let text = format!(
            "[global]\nioengine=null\nrw=read\nbs=4k\nsize=1g\ntime_based\nruntime=4\nflow_sleep={sleep}\n\
             log_avg_msec=100\nlog_unix_epoch=1\n\
             [a]\nflow=1\nwrite_iops_log=a\n[b]\nflow=3\nwrite_iops_log=b\n[c]\nflow=1\nflow_id=9\n"
        );
        std::fs::write(&file, text).unwrap();
        // Job numbers 1 and 2 in the log names, as fio's per-job logs.
        let ratio = |cwd: &Path| {
            let log = |name: &str| format!("{}/{name}", cwd.display());
            common_ratio(&log("b_iops.2.log"), &log("a_iops.1.log"))
        };
        let ours_dir = TempDir::new("flow-fiox");
        let r = fiox_in(ours_dir.path(), &[file.as_str(), "--output-format=json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let c = r.json()["jobs"][2]["read"]["total_ios"].as_u64().unwrap();
        assert!(c > 0, "flow_sleep={sleep}: c was held");
        let ours = ratio(ours_dir.path());
        let weights = 2.5..3.6;
        assert!(weights.contains(&ours), "flow_sleep={sleep}: b/a = {ours}");
        if need_fio() {
            let fio_dir = TempDir::new("flow-fio");
            let (code, out) = fio_normal(fio_dir.path(), &[file.as_str()]);
            assert_eq!(code, 0, "fio: {out}");
            let theirs = ratio(fio_dir.path());
            assert!(weights.contains(&theirs), "fio: b/a = {theirs}");
        }
    }
}

/// latency_target probing: a target every I/O meets takes the depth up to iodepth, then one
/// final window runs at it and the job ends, with fio's latency fields; a target no I/O meets
/// fails at depth 1 with ETIMEDOUT, as fio's does.
#[test]
fn latency_target_probes_the_depth_like_fio() {
    let met = [
        "--name=lt",
        "--ioengine=null",
        "--rw=randread",
        "--size=64g",
        "--iodepth=16",
        "--latency_target=1s",
        "--latency_window=100ms",
        "--latency_percentile=95",
        "--time_based",
        "--runtime=30",
    ];
    let fields = |v: &serde_json::Value| {
        let j = &v["jobs"][0];
        [
            "latency_depth",
            "latency_target",
            "latency_percentile",
            "latency_window",
            "error",
        ]
        .map(|k| j[k].to_string())
    };
    let mut a = met.to_vec();
    a.push("--output-format=json");
    let r = fiox(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ours = r.json();
    assert_eq!(fields(&ours), ["16", "1000000000", "95.0", "100000", "0"]);
    // Only the final window is reported, and the job ended long before its runtime.
    assert!(ours["jobs"][0]["read"]["runtime"].as_u64().unwrap() < 30_000);
    if need_fio() {
        assert_eq!(fields(&fio_json(&met)), fields(&ours), "vs fio");
    }
    let dir = TempDir::under(Path::new("/var/tmp"), "lt");
    let file = format!("--filename={}", dir.join("f"));
    let missed = [
        "--name=lt",
        file.as_str(),
        "--rw=randread",
        "--size=8m",
        "--direct=1",
        "--iodepth=4",
        "--ioengine=libaio",
        "--latency_target=1",
        "--latency_window=100ms",
    ];
    let mut a = missed.to_vec();
    a.push("--output-format=json");
    let r = fiox(&a);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("exceeds specified max (1000 nsec)"),
        "{}",
        r.stderr
    );
    assert_eq!(r.json()["jobs"][0]["error"], 110);
    if need_fio() {
        // fio prints the job's error line on stdout before the JSON.
        let (_, out) = fio_normal(dir.path(), &a);
        let v: serde_json::Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
        assert_eq!(v["jobs"][0]["error"], 110, "fio");
    }
}

/// clocksource=gettimeofday: latencies in whole microseconds, as fio's; the other sources
/// parse and run.
#[test]
fn clocksource_gettimeofday_times_in_microseconds_like_fio() {
    let args = [
        "--name=c",
        "--ioengine=null",
        "--rw=read",
        "--size=16m",
        "--clocksource=gettimeofday",
    ];
    let whole_us = |v: &serde_json::Value| {
        let l = &v["jobs"][0]["read"]["lat_ns"];
        let (min, max) = (l["min"].as_u64().unwrap(), l["max"].as_u64().unwrap());
        min.is_multiple_of(1000) && max.is_multiple_of(1000)
    };
    let mut a = args.to_vec();
    a.push("--output-format=json");
    let r = fiox(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(whole_us(&r.json()), "{}", r.stdout);
    if need_fio() {
        assert!(whole_us(&fio_json(&args)), "fio");
    }
    for src in ["--clocksource=clock_gettime", "--clocksource=cpu"] {
        let r = fiox(&["--name=c", "--ioengine=null", "--size=1m", src]);
        assert_eq!(r.code, 0, "{src}: {}", r.stderr);
    }
}

/// ioscheduler: the loop device's scheduler is switched for the job and put back afterwards
/// (fio switches it and leaves it); a scheduler the device lacks fails the job, in both.
#[test]
fn ioscheduler_switches_and_restores() {
    let dir = TempDir::under(Path::new("/var/tmp"), "iosched");
    let Some(lo) = loop_over(dir.path(), "backing", 16 << 20) else {
        return;
    };
    let sched = format!("/sys/block/{}/queue/scheduler", lo.name());
    let current = || {
        let t = std::fs::read_to_string(&sched).unwrap_or_default();
        t.split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(['[', ']']).to_string())
    };
    let Some(before) = current() else {
        let t = std::fs::read_to_string(&sched).unwrap_or_default();
        skip_for_kernel(
            "a tunable I/O scheduler on loop devices",
            &format!("{sched} selects none: {t:?}"),
        );
        return;
    };
    let other = if before == "none" {
        "mq-deadline"
    } else {
        "none"
    };
    let file = format!("--filename={}", lo.path().display());
    let want = format!("--ioscheduler={other}");
    let args = [
        "--name=s",
        file.as_str(),
        "--rw=read",
        "--time_based",
        "--runtime=5",
        want.as_str(),
        "--output-format=terse",
    ];
    let child = spawn_fiox(&args);
    // Look while the job runs (polled: a loaded machine may start it late).
    let mut during = None;
    for _ in 0..40 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        during = current();
        if during.as_deref() == Some(other) {
            break;
        }
    }
    let r = wait(child);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(during.as_deref(), Some(other), "switched while the job ran");
    assert_eq!(current(), Some(before.clone()), "put back afterwards");
    let bad = [
        "--name=s",
        file.as_str(),
        "--rw=read",
        "--size=1m",
        "--ioscheduler=nosuch",
    ];
    let r = fiox(&bad);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("unable to set io scheduler to nosuch"),
        "{}",
        r.stderr
    );
    assert_eq!(current(), Some(before.clone()));
    if need_fio() {
        let fio = std::process::Command::new("fio")
            .args(bad)
            .output()
            .unwrap();
        assert!(!fio.status.success() || String::from_utf8_lossy(&fio.stderr).contains("nosuch"));
        let ok = [
            "--name=s",
            file.as_str(),
            "--rw=read",
            "--size=1m",
            want.as_str(),
        ];
        let fio = std::process::Command::new("fio").args(ok).output().unwrap();
        assert!(fio.status.success());
        assert_eq!(current().as_deref(), Some(other), "fio leaves it switched");
        std::fs::write(&sched, &before).unwrap();
    }
    lo.detach().unwrap();
}

/// verify=meta: written and checked by its header alone (fio's VERIFY_HDR_ONLY), with fio's
/// totals; with a verify_pattern the data is checked too.
#[test]
fn verify_meta_runs_like_fio() {
    let dir = TempDir::new("vmeta");
    for extra in [None, Some("--verify_pattern=0xaa555aa5")] {
        let file = format!("--filename={}", dir.join("f"));
        let mut args = vec![
            "--name=m",
            file.as_str(),
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--verify=meta",
        ];
        args.extend(extra);
        let mut a = args.clone();
        a.push("--output-format=json");
        let r = fiox_in(dir.path(), &a);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let ours = r.json();
        assert_eq!(
            issued(&ours, "read"),
            (64, 256 << 10),
            "verified every block"
        );
        if need_fio() {
            let theirs = fio_json(&args);
            assert_eq!(theirs["jobs"][0]["error"], 0);
            for d in ["read", "write"] {
                assert_eq!(issued(&ours, d), issued(&theirs, d), "{extra:?} {d}");
            }
        }
    }
}

/// write_iolog with numjobs: every clone appends its own log to the same file, as fio's do
/// (fio opens it with "a").
#[test]
fn write_iolog_clones_append() {
    let dir = TempDir::new("wiolog-clones");
    let args = [
        "--name=t",
        "--ioengine=null",
        "--rw=read",
        "--size=16k",
        "--numjobs=2",
        "--write_iolog=io.log",
        "--output-format=terse",
    ];
    assert_eq!(fiox_in(dir.path(), &args).code, 0);
    let text = std::fs::read_to_string(dir.join("io.log")).unwrap();
    assert_eq!(
        text.lines().filter(|l| *l == "fio version 3 iolog").count(),
        2,
        "{text}"
    );
    for f in ["t.0.0", "t.1.0"] {
        let reads = text
            .lines()
            .filter(|l| l.contains(&format!(" {f} read ")))
            .count();
        assert_eq!(reads, 4, "{f}: {text}");
    }
}

/// A job of a flow that fails before its I/O takes its weight out of the flow (as fio's job
/// exit does): the other job is not held back forever.
#[test]
fn flow_member_that_fails_does_not_stall_the_flow() {
    let dir = TempDir::new("flowfail");
    let file = dir.join("flow.fio");
    let text = format!(
        "[global]\nflow=1\nruntime=20\n[a]\nfilename={}/missing/dir/f\nrw=read\nsize=1m\n\
         [b]\nioengine=null\nrw=read\nsize=1m\n",
        dir.path().display()
    );
    std::fs::write(&file, text).unwrap();
    let r = fiox(&[file.as_str(), "--output-format=json"]);
    assert_eq!(r.code, 1, "job a fails: {}", r.stderr);
    let v = r.json();
    assert_eq!(
        v["jobs"][1]["read"]["io_bytes"],
        1 << 20,
        "b finished: {}",
        r.stdout
    );
}

/// exec_prerun / exec_postrun: run through the shell with fio's redirection into
/// JOB.prerun.txt / JOB.postrun.txt; a failing prerun leaves the job without I/O (and without
/// an error), as in fio.
#[test]
fn exec_prerun_and_postrun_like_fio() {
    for tool in ["fiox", "fio"] {
        if tool == "fio" && !need_fio() {
            continue;
        }
        let dir = TempDir::new("exec");
        let run = |extra: &[&str]| -> serde_json::Value {
            let mut a = vec![
                "--name=e",
                "--ioengine=null",
                "--size=1m",
                "--output-format=json",
            ];
            a.extend_from_slice(extra);
            if tool == "fiox" {
                let r = fiox_in(dir.path(), &a);
                assert_eq!(r.code, 0, "{}", r.stderr);
                r.json()
            } else {
                let (code, out) = fio_normal(dir.path(), &a);
                assert_eq!(code, 0);
                serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap()
            }
        };
        let v = run(&["--exec_prerun=echo pre", "--exec_postrun=echo post"]);
        assert_eq!(issued(&v, "read"), (256, 1 << 20), "{tool}");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        assert_eq!(read("e.prerun.txt"), "pre\n", "{tool}");
        assert_eq!(read("e.postrun.txt"), "post\n", "{tool}");
        let v = run(&["--exec_prerun=exit 2"]);
        assert_eq!(
            issued(&v, "read"),
            (0, 0),
            "{tool}: no I/O after a failed prerun"
        );
        assert_eq!(v["jobs"][0]["error"], 0, "{tool}");
    }
}

/// fio's verify-trim (`trim_percentage`, `trim_backlog`, `trim_backlog_batch`,
/// `trim_verify_zero`) on a loop device, which reads zeroes where it was discarded: the same
/// writes are picked and trimmed (fio's trim stream), so the trim counts and bytes, the reads
/// of the verify phase (trimmed blocks are checked for zeroes, or dropped without
/// trim_verify_zero) and the verdict are fio 3.33's, at depth 1 and 4. fio 3.33 aborts when
/// the workload itself does not trim; fiox refuses that job.
#[test]
fn verify_trim_runs_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "vtrim");
    let Some(lo) = loop_over(dir.path(), "backing", 2 << 20) else {
        return;
    };
    let file = format!("--filename={}", lo.path().display());
    let cases: [&[&str]; 4] = [
        &["--rw=trimwrite", "--trim_percentage=50", "--trim_backlog=4"],
        &[
            "--rw=trimwrite",
            "--trim_percentage=30",
            "--trim_backlog=8",
            "--trim_backlog_batch=2",
        ],
        &[
            "--rw=randtrimwrite",
            "--trim_percentage=50",
            "--trim_backlog=4",
            "--trim_verify_zero=0",
        ],
        &[
            "--rw=randtrimwrite",
            "--trim_percentage=20",
            "--trim_backlog=3",
            "--ioengine=libaio",
            "--iodepth=4",
            "--direct=1",
        ],
    ];
    for extra in cases {
        let mut args = vec!["--name=t", file.as_str(), "--bs=4k", "--size=1m"];
        args.extend(["--verify=crc32c", "--output-format=json"]);
        args.extend(extra);
        let fio_args = args.clone();
        // The test's own scratch device: fiox otherwise protects a loop device's backing file.
        args.push("--allow-destructive");
        let r = fiox_in(dir.path(), &args);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let ours = r.json();
        let (trims, writes) = (issued(&ours, "trim").0, issued(&ours, "write").0);
        assert!(
            trims > writes,
            "{extra:?}: verify-trims on top of the workload's"
        );
        if need_fio() {
            let theirs = fio_json(&fio_args);
            assert_eq!(theirs["jobs"][0]["error"], 0, "fio {extra:?}");
            for d in ["trim", "write", "read"] {
                assert_eq!(
                    issued(&ours, d),
                    issued(&theirs, d),
                    "{extra:?}: {d} vs fio"
                );
            }
        }
    }
    let refused = fiox(&[
        "--name=t",
        file.as_str(),
        "--rw=write",
        "--size=1m",
        "--verify=crc32c",
        "--trim_percentage=50",
        "--trim_backlog=4",
        "--allow-destructive",
    ]);
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.contains("needs a workload that trims"),
        "{}",
        refused.stderr
    );
    lo.detach().unwrap();
}

/// `block_error_percentiles`: a job that trims nothing prints fio 3.33's two lines (every
/// state 0, no percentile) and no JSON `block`; a job that trims every block of a loop device
/// twice reports each block trimmed twice at every percentile. (fio 3.33 aborts on an assertion as soon as a
/// block was trimmed, so only the first is compared with it.)
#[test]
fn block_error_percentiles_report_trims_per_block() {
    let dir = TempDir::under(Path::new("/var/tmp"), "blockerr");
    let f = format!("--filename={}", dir.join("f"));
    let base = ["--name=t", f.as_str(), "--bs=4k", "--size=256k"];
    let lines = |text: &str| -> Vec<String> {
        let at = text.find("  block lifetime").expect("block lines");
        text[at..].lines().take(2).map(String::from).collect()
    };
    let mut a = base.to_vec();
    a.extend(["--rw=write", "--block_error_percentiles=1"]);
    let r = fiox(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ours = lines(&r.stdout);
    assert_eq!(
        ours[1],
        "   |        states               : unwritten=0, trimmed=0, written=0, trim failure=0, \
         write failure=0"
    );
    let mut j = a.clone();
    j.push("--output-format=json");
    assert!(fiox(&j).json()["jobs"][0].get("block").is_none());
    if need_fio() {
        let o = std::process::Command::new("fio").args(&a).output().unwrap();
        assert_eq!(lines(&String::from_utf8_lossy(&o.stdout)), ours, "vs fio");
    }
    // Trims on a loop device: fio 3.33 (and fiox) cannot trim a regular file (ENOTTY).
    let Some(lo) = loop_over(dir.path(), "backing", 1 << 20) else {
        return;
    };
    let dev = format!("--filename={}", lo.path().display());
    let mut t = vec!["--name=t", dev.as_str(), "--bs=4k", "--size=256k"];
    t.extend(["--rw=trim", "--loops=2", "--block_error_percentiles=1"]);
    t.extend(["--percentile_list=50:1:99.9", "--output-format=json"]);
    // The test's own scratch device: fiox otherwise protects a loop device's backing file.
    t.push("--allow-destructive");
    let r = fiox(&t);
    lo.detach().unwrap();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let block = &v["jobs"][0]["block"];
    assert_eq!(block["states"]["trimmed"], 64, "{block}");
    assert_eq!(block["states"]["unwritten"], 0, "{block}");
    for p in ["1.000000", "50.000000", "99.900000"] {
        assert_eq!(block["percentiles"][p], 2, "{block}");
    }
}

/// One `struct blk_io_trace` record (48 bytes, no payload) in the given byte order, as
/// blktrace writes it: magic|version, sequence, time (ns), sector, bytes, action, pid,
/// device (12-bit major above a 20-bit minor), cpu, error, pdu_len.
fn blk_record(le: bool, time: u64, sector: u64, bytes: u32, action: u32, dev: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity(48);
    let w32 =
        |v: &mut Vec<u8>, x: u32| v.extend(if le { x.to_le_bytes() } else { x.to_be_bytes() });
    w32(&mut v, 0x6561_7407);
    w32(&mut v, 0);
    for x in [time, sector] {
        v.extend(if le { x.to_le_bytes() } else { x.to_be_bytes() });
    }
    for x in [bytes, action, 42, dev, 0] {
        w32(&mut v, x);
    }
    v.extend([0u8; 4]);
    v
}

/// A trace of reads, writes, a flush, a discard, merges, completions, a notify and a
/// zero-byte write, all on device `dev`, 10 us apart.
fn blk_trace(le: bool, dev: u32) -> Vec<u8> {
    // Action: __BLK_TA_* in the low half, BLK_TC_* categories shifted up by 16.
    const QUEUE: u32 = 1 | 1 << 20;
    const MERGE: u32 = 2 | 1 << 20;
    const COMPLETE: u32 = 8 | 1 << 23;
    const READ: u32 = 1 << 16;
    const WRITE: u32 = 1 << 17;
    const FLUSH: u32 = 1 << 18;
    const DISCARD: u32 = 1 << 29;
    const NOTIFY: u32 = 1 << 26;
    let events: &[(u64, u32, u32)] = &[
        (0, 4096, QUEUE | READ),
        (64, 8192, QUEUE | WRITE),
        (80, 4096, MERGE | WRITE),
        (200, 4096, QUEUE | READ),
        (8, 4096, COMPLETE | READ),
        (1000, 4096, QUEUE | WRITE),
        (0, 0, QUEUE | WRITE | FLUSH),
        (512, 8192, QUEUE | WRITE | DISCARD),
        (0, 0, 1 | NOTIFY),
        (16, 0, QUEUE | WRITE),
        (1536, 16384, QUEUE | READ),
        (64, 8192, COMPLETE | WRITE),
    ];
    events
        .iter()
        .enumerate()
        .flat_map(|(i, &(sector, bytes, action))| {
            blk_record(
                le,
                1_000_000 + 10_000 * i as u64,
                sector,
                bytes,
                action,
                dev,
            )
        })
        .collect()
}

/// The I/O calls `tool` makes on `target` for `args` (in `dir`), in order: "pread64 LEN OFF",
/// "pwrite64 LEN OFF", "fsync", "discard OFF LEN". (fio 3.33 refuses write_iolog with
/// read_iolog, so the system calls are the record of what each replayed.)
fn blk_calls(tool: &str, dir: &Path, args: &[&str], target: &str) -> Vec<String> {
    let calls = "trace=openat,close,pread64,pwrite64,fsync,ioctl";
    let text = strace_text(tool, dir, args, &["-s0", "-e", calls]);
    let opened = format!(", \"{target}\"");
    let mut fds = std::collections::HashSet::new();
    let mut out = Vec::new();
    for l in text.lines() {
        // "PID call(...)": strace pads short pids with more spaces.
        let Some(rest) = l.split_once(' ').map(|(_, r)| r.trim_start()) else {
            continue;
        };
        let ret = l
            .rsplit_once("= ")
            .and_then(|(_, r)| r.trim().parse::<i64>().ok());
        let Some((call, a)) = rest.split_once('(') else {
            continue;
        };
        let f: Vec<&str> = a.split(')').next().unwrap_or("").split(", ").collect();
        match call {
            "openat" if rest.contains(&opened) => fds.extend(ret),
            "close" => {
                fds.remove(&f[0].parse::<i64>().unwrap_or(-1));
            }
            _ if !f[0].parse::<i64>().is_ok_and(|fd| fds.contains(&fd)) => {}
            "pread64" | "pwrite64" if f.len() == 4 => out.push(format!("{call} {} {}", f[2], f[3])),
            "fsync" => out.push("fsync".into()),
            "ioctl" if f.get(1) == Some(&"BLKDISCARD") => {
                let range = a.split_once('[').and_then(|(_, r)| r.split_once(']'));
                out.push(format!(
                    "discard {}",
                    range.map_or("?", |r| r.0).replace(',', "")
                ));
            }
            _ => {}
        }
    }
    out
}

/// A blktrace binary file replays its queue events: on the loop device whose major:minor it
/// names, then (big-endian, on a redirected file, scaled and aligned) without trims and syncs;
/// the same I/Os and totals as fio 3.33 where fio is installed.
#[test]
fn read_iolog_replays_blktrace_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "blktrace");
    let Some(lo) = loop_over(dir.path(), "backing", 2 << 20) else {
        return;
    };
    let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(lo.path()).unwrap());
    let (maj, min) = (
        ((rdev >> 8) & 0xfff) as u32,
        ((rdev & 0xff) | ((rdev >> 12) & !0xff)) as u32,
    );
    std::fs::write(dir.join("le.bin"), blk_trace(true, maj << 20 | min)).unwrap();
    std::fs::write(dir.join("be.bin"), blk_trace(false, maj << 20 | min)).unwrap();
    std::fs::write(dir.join("target"), vec![0u8; 1 << 20]).unwrap();
    let cases: [&[&str]; 2] = [
        &["--name=r", "--read_iolog=le.bin"],
        &[
            "--name=r",
            "--read_iolog=be.bin",
            "--replay_redirect=target",
            "--replay_scale=2",
            "--replay_align=4096",
            "--replay_skip=trim,sync",
            "--replay_no_stall=1",
        ],
    ];
    let dev = lo.path().display().to_string();
    let expect: [&[&str]; 2] = [
        &[
            "pread64 4096 0",
            "pwrite64 8192 32768",
            "pread64 4096 102400",
            "pwrite64 4096 512000",
            "fsync",
            "discard 262144 8192",
            "pread64 16384 786432",
        ],
        &[
            "pread64 4096 0",
            "pwrite64 8192 16384",
            "pread64 4096 49152",
            "pwrite64 4096 253952",
            "pread64 16384 393216",
        ],
    ];
    for (args, want) in cases.iter().zip(expect) {
        let target = if args.len() == 2 {
            dev.as_str()
        } else {
            "target"
        };
        // The test's own scratch targets: fiox otherwise protects them.
        let ours_args = [*args, &["--allow-destructive"]].concat();
        let calls = blk_calls(fiox_bin(), dir.path(), &ours_args, target);
        assert_eq!(calls, want, "{args:?}");
        let json = [*args, &["--allow-destructive", "--output-format=json"]].concat();
        let r = fiox_in(dir.path(), &json);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        if need_fio() {
            assert_eq!(
                blk_calls("fio", dir.path(), args, target),
                calls,
                "{args:?} vs fio"
            );
            let theirs = fio_json_in(dir.path(), &json[..json.len() - 2]);
            for d in ["read", "write", "trim"] {
                assert_eq!(
                    issued(&r.json(), d),
                    issued(&theirs, d),
                    "{args:?} {d} vs fio"
                );
            }
        }
    }
    let bad = fiox_in(
        dir.path(),
        &["--name=r", "--read_iolog=le.bin", "--replay_skip=flush"],
    );
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("unknown kind 'flush'"),
        "{}",
        bad.stderr
    );
    lo.detach().unwrap();
}

/// The (time, sector, device) of each record of a blktrace file in this machine's byte
/// order, and that no record carries a payload.
fn blk_records(bytes: &[u8]) -> Vec<(u64, u64, u32)> {
    assert_eq!(bytes.len() % 48, 0, "whole 48-byte records");
    bytes
        .chunks(48)
        .map(|r| {
            let u64_at = |o: usize| u64::from_ne_bytes(r[o..o + 8].try_into().unwrap());
            let u32_at = |o: usize| u32::from_ne_bytes(r[o..o + 4].try_into().unwrap());
            assert_eq!(u32_at(0), 0x6561_7407, "magic and version kept");
            assert_eq!(&r[46..48], &[0, 0], "no payload");
            (u64_at(8), u64_at(16), u32_at(36))
        })
        .collect()
}

/// A loop device over a fresh `size`-byte file `name` in `dir`; None (the skip recorded) when
/// the kernel has no loop driver.
fn loop_over(dir: &Path, name: &str, size: u64) -> Option<fiox_testbed::loopdev::LoopDevice> {
    let backing = dir.join(name);
    std::fs::File::create(&backing)
        .and_then(|f| f.set_len(size))
        .unwrap();
    if !loop_devices() {
        return None;
    }
    let lo = fiox_testbed::loopdev::LoopDevice::attach(&backing, &Default::default());
    Some(lo.expect("attach a loop device"))
}

/// A loop device over a fresh 2 MiB file in `dir`, and its device number as blktrace
/// records it (major << 20 | minor); None as [`loop_over`].
fn scratch_loop(dir: &Path, name: &str) -> Option<(fiox_testbed::loopdev::LoopDevice, u32)> {
    let lo = loop_over(dir, name, 2 << 20)?;
    let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(lo.path()).unwrap());
    let (maj, min) = ((rdev >> 8) & 0xfff, (rdev & 0xff) | ((rdev >> 12) & !0xff));
    Some((lo, (maj << 20 | min) as u32))
}

/// merge_blktrace_file: two traces (one little-, one big-endian, on two loop devices) merge
/// into one file, queue events only, interleaved by time (a tie to the file listed first),
/// each keeping its device; merge_blktrace_scalars=50:100 with merge_blktrace_iters=2:1
/// runs the first twice at double speed; --merge-blktrace-only runs nothing, and a job with
/// the merge replays each trace's I/O on its own device. (fio 3.33's merge fails with
/// "iolog short read", so there is no fio to compare with.)
#[test]
fn merge_blktrace_files_interleave_scale_repeat_and_replay() {
    const QUEUE: u32 = 1 | 1 << 20;
    const COMPLETE: u32 = 8 | 1 << 23;
    const READ: u32 = 1 << 16;
    const WRITE: u32 = 1 << 17;
    const NOTIFY: u32 = 1 << 26;
    let dir = TempDir::under(Path::new("/var/tmp"), "blkmerge");
    let Some((lo_a, a)) = scratch_loop(dir.path(), "backing-a") else {
        return;
    };
    let Some((lo_b, b)) = scratch_loop(dir.path(), "backing-b") else {
        return;
    };
    let trace_a = [
        blk_record(true, 1000, 0, 4096, QUEUE | READ, a),
        blk_record(true, 1500, 0, 4096, COMPLETE | READ, a),
        blk_record(true, 3000, 8, 4096, QUEUE | READ, a),
        blk_record(true, 4000, 0, 0, 1 | NOTIFY, 0),
        blk_record(true, 5000, 16, 4096, QUEUE | READ, a),
    ]
    .concat();
    let trace_b = [
        blk_record(false, 2000, 100, 8192, QUEUE | WRITE, b),
        blk_record(false, 3000, 200, 8192, QUEUE | WRITE, b),
        blk_record(false, 7000, 300, 8192, QUEUE | WRITE, b),
    ]
    .concat();
    std::fs::write(dir.join("a.bin"), trace_a).unwrap();
    std::fs::write(dir.join("b.bin"), trace_b).unwrap();
    let base = [
        "--name=m",
        "--read_iolog=a.bin:b.bin",
        "--merge_blktrace_file=m.bin",
    ];
    let only = fiox_in(
        dir.path(),
        &[&base[..], &["--merge-blktrace-only"]].concat(),
    );
    assert_eq!(
        (only.code, only.stdout.as_str()),
        (0, ""),
        "{}",
        only.stderr
    );
    assert_eq!(only.stderr, "");
    let merged = std::fs::read(dir.join("m.bin")).unwrap();
    assert_eq!(
        blk_records(&merged),
        [
            (1000, 0, a),
            (2000, 100, b),
            (3000, 8, a),
            (3000, 200, b),
            (5000, 16, a),
            (7000, 300, b)
        ]
    );
    // The first trace twice at double speed: its length is 5000 ns, so the second pass
    // starts at (1000 + 5000) / 2.
    let scaled = [
        &base[..],
        &[
            "--merge_blktrace_scalars=50:100",
            "--merge_blktrace_iters=2:1",
            "--merge-blktrace-only",
        ],
    ]
    .concat();
    let r = fiox_in(dir.path(), &scaled);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let merged = std::fs::read(dir.join("m.bin")).unwrap();
    assert_eq!(
        blk_records(&merged),
        [
            (500, 0, a),
            (1500, 8, a),
            (2000, 100, b),
            (2500, 16, a),
            (3000, 0, a),
            (3000, 200, b),
            (4000, 8, a),
            (5000, 16, a),
            (7000, 300, b)
        ]
    );
    // Replayed: the first trace's reads on its device, the second's writes on its own.
    let run = [&base[..], &["--replay_no_stall=1", "--allow-destructive"]].concat();
    let calls_a = blk_calls(
        fiox_bin(),
        dir.path(),
        &run,
        &lo_a.path().display().to_string(),
    );
    assert_eq!(
        calls_a,
        ["pread64 4096 0", "pread64 4096 4096", "pread64 4096 8192"]
    );
    let calls_b = blk_calls(
        fiox_bin(),
        dir.path(),
        &run,
        &lo_b.path().display().to_string(),
    );
    assert_eq!(
        calls_b,
        [
            "pwrite64 8192 51200",
            "pwrite64 8192 102400",
            "pwrite64 8192 153600"
        ]
    );
    let bad = fiox_in(
        dir.path(),
        &[
            &base[..],
            &["--merge_blktrace_iters=1", "--merge-blktrace-only"],
        ]
        .concat(),
    );
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr
            .contains("merge_blktrace_iters has 1 value(s) but read_iolog lists 2"),
        "{}",
        bad.stderr
    );
    let alone = fiox_in(
        dir.path(),
        &["--name=m", "--merge_blktrace_file=m.bin", "--size=4k"],
    );
    assert_eq!(alone.code, 1);
    assert!(
        alone
            .stderr
            .contains("merge_blktrace_file needs read_iolog"),
        "{}",
        alone.stderr
    );
    lo_a.detach().unwrap();
    lo_b.detach().unwrap();
}

/// fio's JSON output for `args`, run in `dir`.
fn fio_json_in(dir: &Path, args: &[&str]) -> serde_json::Value {
    // fio notes a probed depth above 1 with a synchronous engine on stdout, before the JSON.
    let (code, v, stderr) = tool_json("fio", dir, args, None);
    assert_eq!(code, 0, "fio {args:?}: {stderr}");
    v
}

/// The JSON `jobs[].read.io_bytes` of a report.
fn read_bytes(v: &serde_json::Value) -> Vec<u64> {
    let jobs = v["jobs"].as_array().expect("jobs array");
    jobs.iter()
        .map(|j| j["read"]["io_bytes"].as_u64().unwrap_or(0))
        .collect()
}

/// numjobs clones take fio's subjob numbers: after the job itself (`d.0.0`) fio adds its
/// clones counting down, so with numjobs=3 the second thread writes `d.2.0` and the third
/// `d.1.0`, each with the seeds of its place in the run. From one seed, the files fio and fiox
/// write match byte for byte by name; `offset_increment` (subjob number x increment) gives the
/// JSON jobs in fio's order: on a file of N MiB with 1 MiB increments the threads read
/// N, 1, 2, ... N-1 MiB (measured with fio 3.33).
#[test]
fn clones_are_numbered_like_fio() {
    for n in [3u32, 4] {
        let dir = TempDir::new("clones");
        let numjobs = format!("--numjobs={n}");
        let write = [
            "--name=d",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--randseed=7",
            "--refill_buffers",
            "--ioengine=psync",
            &numjobs,
            "--output-format=json",
        ];
        let names: Vec<String> = (0..n).map(|i| format!("d.{i}.0")).collect();
        let (ours, theirs) = (dir.path().join("fiox"), dir.path().join("fio"));
        std::fs::create_dir_all(&ours).unwrap();
        let r = fiox_in(&ours, &write);
        assert_eq!(r.code, 0, "{}", r.stderr);
        for name in &names {
            assert!(ours.join(name).is_file(), "numjobs={n}: no {name}");
        }
        if need_fio() {
            std::fs::create_dir_all(&theirs).unwrap();
            assert_eq!(fio_normal(&theirs, &write).0, 0, "fio numjobs={n}");
            for name in &names {
                let a = std::fs::read(ours.join(name)).unwrap();
                let b = std::fs::read(theirs.join(name)).unwrap();
                assert!(a == b, "numjobs={n}: {name} differs from fio's");
            }
        }
        let shared = dir.join("shared");
        std::fs::write(&shared, vec![0u8; (n as usize) << 20]).unwrap();
        let file = format!("--filename={shared}");
        let read = [
            "--name=d",
            "--rw=read",
            "--bs=64k",
            &file,
            "--offset_increment=1M",
            "--ioengine=psync",
            &numjobs,
            "--output-format=json",
        ];
        let r = fiox(&read);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mib: Vec<u64> = std::iter::once(n)
            .chain(1..n)
            .map(|m| u64::from(m) << 20)
            .collect();
        assert_eq!(read_bytes(&r.json()), mib, "numjobs={n}");
        if need_fio() {
            let fio = fio_json(&read[..read.len() - 1]);
            assert_eq!(read_bytes(&fio), mib, "fio numjobs={n}");
        }
    }
}

/// The `--debug=CAT` lines `tool` prints for `args` (run in a fresh directory, file `f` in
/// it), normalised: the thread id and io_u pointers (fiox prints its slot numbers) left out.
fn debug_lines(tool: &str, cat: &str, args: &[&str]) -> Vec<String> {
    let dir = TempDir::new("debug-cat");
    let file = format!("--filename={}", dir.join("f"));
    let o = std::process::Command::new(tool)
        .args(args)
        .arg(&file)
        .arg(format!("--debug={cat}"))
        .arg("--output-format=terse")
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert!(o.status.success(), "{tool} {args:?}");
    let prefix = format!("{cat:<8} ");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|l| {
            let msg = l.split_once(' ').map_or("", |(_, m)| m.trim_start());
            msg.split(' ')
                .map(|w| match (w.starts_with("0x"), w.ends_with(',')) {
                    (true, true) => "P,",
                    (true, false) => "P",
                    _ => w,
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// `--debug=verify`, `random` and `rate` print fio 3.33's lines at fio's points: a verified
/// write and its read-back (per header: fill and check lines, the verify loop's start, each
/// read and its end), each random offset's raw Tausworthe number (the same numbers: fiox draws
/// as fio), latency_target's probing, and one line per poisson gap.
#[test]
fn debug_categories_print_fios_lines() {
    let verify = [
        "--name=v",
        "--rw=write",
        "--bs=8k",
        "--size=32k",
        "--verify=md5",
        "--verify_interval=4k",
    ];
    let random = ["--name=r", "--rw=randread", "--bs=4k", "--size=64k"];
    let lat = [
        "--name=lt",
        "--ioengine=null",
        "--rw=randread",
        "--size=64g",
        "--iodepth=4",
        "--latency_target=1s",
        "--latency_window=50ms",
        "--latency_percentile=95",
        "--time_based",
        "--runtime=2",
    ];
    let poisson = [
        "--name=p",
        "--rw=read",
        "--bs=4k",
        "--size=64k",
        "--rate_iops=200",
        "--rate_process=poisson",
    ];
    let ours_v = debug_lines(fiox_bin(), "verify", &verify);
    assert_eq!(ours_v.len(), 4 * 3 + 1 + 4 * 3 + 2, "{ours_v:#?}");
    assert_eq!(ours_v[0], "fill random bytes len=8192");
    assert_eq!(ours_v[1], "fill md5 io_u P, len 4096");
    let ours_r = debug_lines(fiox_bin(), "random", &random);
    // One draw per I/O; a drawn block done already is reported busy.
    let draws = ours_r.iter().filter(|l| l.starts_with("off rand ")).count();
    assert_eq!(draws, 16, "{ours_r:#?}");
    assert!(ours_r.iter().any(|l| l.ends_with(" busy")), "{ours_r:#?}");
    let ours_l = debug_lines(fiox_bin(), "rate", &lat);
    assert_eq!(
        ours_l.first().map(String::as_str),
        Some("Latency target=1000000000")
    );
    assert_eq!(ours_l.last().map(String::as_str), Some("We are done"));
    let ours_p = debug_lines(fiox_bin(), "rate", &poisson);
    let poisson_line = |l: &String| {
        l.strip_prefix("poisson rate iops=")
            .and_then(|r| r.strip_suffix(", ddir=0"))
            .is_some_and(|n| n.parse::<u64>().is_ok())
    };
    assert!(
        ours_p.len() >= 10 && ours_p.iter().all(poisson_line),
        "{ours_p:#?}"
    );
    need_fio();
    assert_eq!(ours_v, debug_lines("fio", "verify", &verify));
    let pattern = [
        "--name=v",
        "--rw=write",
        "--bs=4k",
        "--size=16k",
        "--verify=crc32c",
        "--verify_pattern=0xaabb",
    ];
    let ours_pat = debug_lines(fiox_bin(), "verify", &pattern);
    assert_eq!(
        ours_pat[0],
        "using already filled verify pattern b=2 len=4096"
    );
    assert_eq!(ours_pat, debug_lines("fio", "verify", &pattern));
    assert_eq!(ours_r, debug_lines("fio", "random", &random));
    assert_eq!(ours_l, debug_lines("fio", "rate", &lat));
    let theirs_p = debug_lines("fio", "rate", &poisson);
    assert!(
        theirs_p.len() >= 10 && theirs_p.iter().all(poisson_line),
        "{theirs_p:#?}"
    );
}

/// The other categories fiox has events for print fio's lines for them (checked by the line
/// fio prints for the same job); the ones fiox has no event for say so, in `--debug=?` and
/// when turned on; `job:N` keeps job N's lines only.
#[test]
fn debug_categories_name_what_they_print() {
    let null = ["--name=n", "--ioengine=null", "--size=64k"];
    let steady = [
        "--name=s",
        "--ioengine=null",
        "--rw=read",
        "--size=1g",
        "--time_based",
        "--runtime=3",
        "--steadystate=iops:50%",
        "--steadystate_duration=2",
    ];
    let cases: [(&str, &[&str], &str); 5] = [
        (
            "mem",
            &["--name=m", "--rw=read", "--bs=4k", "--size=16k"],
            "Alloc 4096 for buffers",
        ),
        (
            "steadystate",
            &steady,
            "steadystate_check() thread: 0, groupid: 0, ",
        ),
        (
            "diskutil",
            &["--name=d", "--rw=read", "--bs=4k", "--size=16k"],
            "belongs to maj/min",
        ),
        ("time", &null, "gettime: clocksource="),
        ("helperthread", &null, "clk_tck = "),
    ];
    for (cat, args, want) in cases {
        let has = |lines: &[String]| lines.iter().any(|l| l.contains(want));
        let ours = debug_lines(fiox_bin(), cat, args);
        assert!(has(&ours), "{cat}: {ours:#?}");
        if need_fio() {
            let theirs = debug_lines("fio", cat, args);
            assert!(has(&theirs), "fio {cat}: {theirs:#?}");
        }
    }
    let list = fiox(&["--debug=?"]);
    for c in ["mutex", "profile", "net", "zbd", "compress"] {
        assert!(
            list.stdout
                .contains(&format!("fiox: {c} prints nothing in fiox: ")),
            "{}",
            list.stdout
        );
    }
    let on = fiox(&["--name=n", "--ioengine=null", "--size=8k", "--debug=mutex"]);
    assert!(on
        .stdout
        .contains("debug option mutex prints nothing in fiox: "));
    // job:1: the second job's process lines only (one thread id where both jobs have two).
    let two = [
        "--name=a",
        "--ioengine=null",
        "--size=8k",
        "--name=b",
        "--ioengine=null",
        "--size=8k",
        "--output-format=terse",
    ];
    let tids = |debug: &str| {
        let mut a = two.to_vec();
        a.push(debug);
        let r = fiox(&a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let ids: std::collections::BTreeSet<String> = r
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix("process  "))
            .filter_map(|l| l.split_whitespace().next().map(String::from))
            .collect();
        ids.len()
    };
    assert_eq!(tids("--debug=process"), 2);
    assert_eq!(tids("--debug=process,job:1"), 1);
    assert_ne!(
        fiox(&["--name=n", "--ioengine=null", "--debug=job"]).code,
        0
    );
}

/// The compression thread's allowed CPUs as /proc shows them, once it is seen in `pid`.
fn logzip_cpus(pid: u32) -> Option<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() == "fiox-logzip" {
            let status = std::fs::read_to_string(t.path().join("status")).ok()?;
            return status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_string());
        }
    }
    None
}

/// log_compression runs fio's compression thread, pinned to log_compression_cpus: /proc shows
/// it on that CPU while the job runs, the text log still has one line per I/O, and a CPU that
/// cannot be used is an error naming the option.
#[test]
fn log_compression_thread_is_pinned() {
    let dir = TempDir::new("logzip");
    let last = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    let cpus = format!("--log_compression_cpus={last}");
    let args = [
        "--name=z",
        "--ioengine=null",
        "--rw=randread",
        "--size=16m",
        "--time_based",
        "--runtime=3",
        "--rate_iops=500",
        "--write_lat_log=z",
        "--write_hist_log=z",
        "--log_hist_msec=100",
        "--log_compression=4k",
        &cpus,
        "--output-format=json",
    ];
    let mut child = spawn_fiox_in(dir.path(), &args);
    // Polled while the run lasts (its 3 s count from the job's start, not from the spawn).
    let mut seen = None;
    while seen.is_none() && child.try_wait().unwrap().is_none() {
        seen = logzip_cpus(child.id());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = wait(child);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(seen.as_deref(), Some(last.to_string().as_str()));
    let (ios, _) = issued(&r.json(), "read");
    let text = std::fs::read_to_string(dir.join("z_clat.1.log")).unwrap();
    assert_eq!(text.lines().count() as u64, ios, "one clat line per I/O");
    assert!(
        ios > 500,
        "{ios} I/Os: more than one 4k chunk was compressed"
    );
    assert!(text.lines().all(|l| l.split(", ").count() == 5), "{text}");
    // The histogram log goes through the same thread: about one line per 100 ms of 3 s.
    let hist = std::fs::read_to_string(dir.join("z_clat_hist.1.log")).unwrap();
    assert!(hist.lines().count() >= 20, "{hist}");
    assert!(hist.lines().all(|l| l.contains(", 0, 4096, ")), "{hist}");
    // A CPU that does not exist.
    let bad = fiox_in(
        dir.path(),
        &[
            "--name=b",
            "--ioengine=null",
            "--size=1m",
            "--write_bw_log=b",
            "--log_compression=4k",
            "--log_compression_cpus=1000",
        ],
    );
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(
        bad.stderr
            .contains("log compression thread (log_compression_cpus=1000)"),
        "{}",
        bad.stderr
    );
    // Without log_compression there is no thread to pin: a note says so.
    let note = fiox(&[
        "--parse-only",
        "--name=n",
        "--size=1m",
        "--log_compression_cpus=0",
    ]);
    assert_eq!(note.code, 0, "{}", note.stderr);
    assert!(
        note.stdout.contains("log_compression_cpus has no effect"),
        "{}",
        note.stdout
    );
}

/// The fields of each line of a text log.
fn log_rows(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split(", ").map(|f| f.parse().unwrap()).collect())
        .collect()
}

/// fio 3.42's log_issue_time: clat and slat lines end with the I/O's issue time in ns since
/// the job's epoch (the same for both lines of one I/O, before its completion, growing from
/// one I/O to the next at iodepth 1), lat lines with 0; the first six columns are fio 3.33's
/// log_offset lines. Without write_lat_log or log_offset the job is refused, as fio 3.42's.
#[test]
fn log_issue_time_ends_clat_and_slat_lines_with_the_issue_time() {
    let dir = TempDir::new("issuetime");
    let base = [
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--filename=f",
        // Sync engines record no slat; libaio at depth 1 issues in order.
        "--ioengine=libaio",
        "--write_lat_log=x",
        "--log_offset=1",
    ];
    let mut args = base.to_vec();
    args.push("--log_issue_time=1");
    let r = fiox_in(dir.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let clat = log_rows(&dir.path().join("x_clat.1.log"));
    let slat = log_rows(&dir.path().join("x_slat.1.log"));
    let lat = log_rows(&dir.path().join("x_lat.1.log"));
    assert_eq!(clat.len(), 16);
    assert_eq!((slat.len(), lat.len()), (16, 16));
    for (i, ((c, s), l)) in clat.iter().zip(&slat).zip(&lat).enumerate() {
        assert_eq!((c.len(), s.len(), l.len()), (7, 7, 7), "line {i}");
        assert_eq!(c[4], i as u64 * 4096, "offset column");
        assert_eq!(c[6], s[6], "one issue time per I/O");
        assert!(
            c[6] > 0 && c[6] / 1_000_000 <= c[0],
            "issued before completion: {c:?}"
        );
        assert_eq!(l[6], 0, "lat lines carry 0");
        if i > 0 {
            assert!(c[6] > clat[i - 1][6], "issued in order at depth 1");
        }
    }
    // Without log_issue_time the lines are fio 3.33's (6 columns), for both tools.
    for tool in ["fiox", "fio"] {
        if tool == "fio" && !need_fio() {
            continue;
        }
        let sub = dir.path().join(tool);
        std::fs::create_dir_all(&sub).unwrap();
        let bin = if tool == "fio" { "fio" } else { fiox_bin() };
        let o = std::process::Command::new(bin)
            .args(base)
            .current_dir(&sub)
            .output()
            .unwrap();
        assert!(o.status.success(), "{tool}");
        let rows = log_rows(&sub.join("x_clat.1.log"));
        assert!(
            rows.len() == 16 && rows.iter().all(|r| r.len() == 6),
            "{tool}"
        );
    }
    for missing in ["--log_offset=0", "--write_lat_log="] {
        let mut a: Vec<&str> = base
            .iter()
            .copied()
            .filter(|o| !o.starts_with(&missing[..8]))
            .collect();
        a.push("--log_issue_time=1");
        if missing == "--log_offset=0" {
            a.push(missing);
        }
        let r = fiox_in(dir.path(), &a);
        assert_ne!(r.code, 0, "{missing}");
        assert!(
            r.stderr.contains("requires write_lat_log and log_offset"),
            "{}",
            r.stderr
        );
    }
}

/// fio 3.42's log_window_value: `both` gives averaged lines a second value (the window's
/// maximum, never below the mean), `max` is fio 3.33's log_max_value=1; with
/// log_store_compressed `both` is refused (fio 3.42's binary layout is not written yet).
#[test]
fn log_window_value_both_adds_the_window_maximum() {
    let dir = TempDir::new("window");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "--name=j",
            "--rw=write",
            "--size=256k",
            "--filename=f",
            "--write_lat_log=x",
            "--log_avg_msec=1",
            "--rate_iops=4000",
        ];
        a.extend_from_slice(extra);
        fiox_in(dir.path(), &a)
    };
    let r = run(&["--log_window_value=both"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = log_rows(&dir.path().join("x_clat.1.log"));
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row.len(), 6, "{row:?}");
        assert!(row[2] >= row[1], "max below the mean: {row:?}");
    }
    assert_eq!(run(&["--log_window_value=max"]).code, 0);
    assert!(log_rows(&dir.path().join("x_clat.1.log"))
        .iter()
        .all(|r| r.len() == 5));
    let r = run(&["--log_window_value=both", "--log_store_compressed=1"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("log_window_value=both"), "{}", r.stderr);
}

/// fio 3.42's steadystate_check_interval (ss_interval): the ss_dur window holds one sample per
/// interval (ss_dur=4 with ss_interval=2: two samples, each a per-second rate; the reported
/// duration stays 4); the same checks as fio 3.42: at least 1s, ss_dur a multiple of it,
/// and one value for the whole run.
#[test]
fn ss_interval_takes_one_sample_per_interval() {
    let dir = TempDir::new("ssint");
    let f = format!("--filename={}", dir.join("f"));
    let base = ["--name=s", f.as_str(), "--size=1m", "--ioengine=null"];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        fiox_in(dir.path(), &a)
    };
    // A limit any rate meets: attained on the first full window (runtime is only a cap).
    let r = run(&[
        "--time_based",
        "--runtime=60",
        "--ss=iops:100000%",
        "--ss_dur=4",
        "--ss_interval=2",
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let ss = &v["jobs"][0]["steadystate"];
    assert_eq!(ss["duration"], 4);
    assert_eq!(ss["attained"], 1);
    assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 2, "{ss}");
    assert_eq!(ss["data"]["bw"].as_array().unwrap().len(), 2, "{ss}");
    for (extra, want) in [
        (
            &["--ss_dur=5", "--ss_interval=2"][..],
            "must be multiple of ss_check_interval",
        ),
        (
            &["--ss_dur=4", "--ss_interval=500ms"],
            "must be at least 1s",
        ),
    ] {
        let r = run(extra);
        assert_ne!(r.code, 0, "{extra:?}");
        assert!(r.stderr.contains(want), "{extra:?}: {}", r.stderr);
    }
    let job = dir.path().join("two.fio");
    let text = format!(
        "[global]\nsize=64k\nioengine=null\nfilename={}\n[a]\nss_interval=2\n[b]\n",
        dir.join("g")
    );
    std::fs::write(&job, text).unwrap();
    let r = fiox_in(dir.path(), &[job.to_str().unwrap()]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("conflicting ss_check_interval"),
        "{}",
        r.stderr
    );
}

/// N4 (ecosystem round): fio's keep_running counts a pass's verify reads with its writes, so
/// a writing job whose io_size is more than one pass stops once writes and verify reads reach
/// io_size: 2 MiB written and 2 MiB verified with a backlog, 4 MiB and 4 MiB after a pass of
/// 4 MiB; fiox wrapped on until io_size of writes alone (4 and 8 MiB). On /var/tmp (ext4,
/// O_DIRECT), each tool on a fresh file.
#[test]
fn verify_reads_count_towards_io_size_as_fio_counts_them() {
    let dir = TempDir::under(Path::new("/var/tmp"), "n4");
    let cases: [&[&str]; 2] = [
        &[
            "--bs=16k",
            "--direct=1",
            "--rw=write:112k",
            "--verify=crc32c",
            "--verify_backlog=1",
            "--offset=120k",
            "--io_size=4m",
            "--size=16m",
        ],
        &[
            "--bs=16k",
            "--rw=write",
            "--verify=crc32c",
            "--io_size=8m",
            "--size=4m",
        ],
    ];
    for (i, case) in cases.iter().enumerate() {
        let counts = |tool: &str| {
            let file = format!("--filename={}/{tool}{i}", dir.path().display());
            let mut args = vec!["--name=n", file.as_str()];
            args.extend_from_slice(case);
            let (code, v, err) = tool_json(tool, dir.path(), &args, Some(120));
            assert_eq!(code, 0, "{tool} {args:?}: {err}");
            let j = &v["jobs"][0];
            [&j["write"], &j["read"]].map(|d| d["io_bytes"].as_u64().unwrap())
        };
        assert_eq!(counts("fiox"), counts("fio"), "{case:?}");
    }
}

/// The ring loop (io_uring and libaio through their rings, submit batches) counts what fio
/// counts, with fio's default statistics and without per-I/O clocks (`gtod_reduce`, where
/// its reaps account bytes and I/Os only): the same I/Os and bytes per direction, a clat
/// sample per I/O with clocks and none without.
#[test]
fn the_ring_loop_counts_like_fio() {
    let dir = TempDir::under(Path::new("/dev/shm"), "ring");
    let file = dir.join("f");
    for engine in ["io_uring", "libaio"] {
        for extra in ["--gtod_reduce=0", "--gtod_reduce=1"] {
            let args = [
                "--name=r",
                &format!("--filename={file}"),
                &format!("--ioengine={engine}"),
                "--rw=randrw",
                "--bs=4k",
                "--size=2m",
                "--iodepth=16",
                "--iodepth_batch_submit=4",
                "--iodepth_batch_complete_min=2",
                "--iodepth_batch_complete_max=16",
                extra,
                "--output-format=json",
            ];
            let r = fiox_in(dir.path(), &args);
            assert_eq!(r.code, 0, "{engine} {extra}: {}", r.stderr);
            assert_eq!(r.stderr, "", "{engine} {extra}");
            let ours = r.json();
            let (reads, writes) = (issued(&ours, "read"), issued(&ours, "write"));
            assert_eq!(reads.1 + writes.1, 2 << 20, "{engine} {extra}");
            for d in ["read", "write"] {
                let (ios, _) = issued(&ours, d);
                let n = ours["jobs"][0][d]["clat_ns"]["N"].as_u64().unwrap_or(0);
                let want = if extra.ends_with('1') { 0 } else { ios };
                assert_eq!(n, want, "{engine} {extra} {d}: clat samples");
            }
            if need_fio() {
                let theirs = fio_json(&args[..args.len() - 1]);
                for d in ["read", "write"] {
                    assert_eq!(issued(&ours, d), issued(&theirs, d), "{engine} {extra} {d}");
                }
            }
        }
    }
}

/// The strace reader joins a call another thread interrupted (`<unfinished ...>`, later
/// `<... resumed>`) into one line where it began: the blktrace replay test above once lost
/// every read after a split openat of its target.
#[test]
fn an_interrupted_strace_call_is_joined_where_it_began() {
    let text = "7 openat(AT_FDCWD, \"target\", O_RDWR <unfinished ...>\n\
                8 pread64(3, \"\", 4096, 0) = 4096\n\
                7 <... openat resumed>) = 5\n";
    assert_eq!(
        join_resumed(text),
        "7 openat(AT_FDCWD, \"target\", O_RDWR ) = 5\n8 pread64(3, \"\", 4096, 0) = 4096\n"
    );
}
