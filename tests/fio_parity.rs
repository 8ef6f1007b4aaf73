//! fio 3.33 features of issue 10 that fiox runs, each compared with fio itself where fio is
//! installed (same totals, same report shapes): I/O memory (`mem`, `iomem_align`, `lockmem`,
//! `hugepage-size`), ...

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
        let r = fiox(&a);
        assert_eq!(r.code, 0, "mem={mem}: {}", r.stderr);
        let ours = r.json();
        assert_eq!(ours["jobs"][0]["error"], 0, "mem={mem}");
        // Writes, then the verify phase's reads, all through that memory.
        assert_eq!(issued(&ours, "write"), (64, 256 << 10), "mem={mem}");
        assert_eq!(issued(&ours, "read"), (64, 256 << 10), "mem={mem}");
        assert!(!Path::new(&map_file).exists(), "the buffer file is removed");
        // fio 3.33 does not size the file of `mmapshared:FILE` and dies of SIGBUS on its
        // first buffer; fiox sizes it (checked above), so there is nothing to compare.
        if fio_available() && !mem.starts_with("mmapshared:") {
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
        eprintln!(
            "skipped: this machine reserves huge pages ({})",
            reserved.trim()
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
        if fio_available() {
            let fio = std::process::Command::new("fio").args(a).output().unwrap();
            assert!(!fio.status.success(), "fio {mem}");
        }
    }
}

/// Run fio in `dir` with the normal report; (exit code, stdout).
fn fio_normal(dir: &Path, args: &[&str]) -> (i32, String) {
    let o = std::process::Command::new("fio")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run fio");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    (o.status.code().unwrap_or(-1), out)
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
    if fio_available() {
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
    let backing = dir.join("backing");
    std::fs::File::create(&backing)
        .and_then(|f| f.set_len(1 << 20))
        .unwrap();
    let lo =
        match fiox_testbed::loopdev::LoopDevice::attach(Path::new(&backing), &Default::default()) {
            Ok(lo) => lo,
            Err(e) => {
                eprintln!("skipped: cannot attach a loop device: {e}");
                return;
            }
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
    if fio_available() {
        let theirs = fio_json(&args[..5]);
        assert_eq!(theirs["jobs"][0]["error"], 0, "fio");
        for d in ["trim", "write", "read"] {
            assert_eq!(issued(&ours, d), issued(&theirs, d), "{d} vs fio");
        }
    }
    lo.detach().unwrap();
}

/// create_only: the file is laid out and nothing else is done, as fio.
#[test]
fn create_only_lays_out_and_does_no_io_like_fio() {
    for tool in ["fiox", "fio"] {
        if tool == "fio" && !fio_available() {
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
    let tools = if fio_available() {
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
        let code = if tool == "fiox" {
            fiox_in(dir.path(), &args).code
        } else {
            fio_normal(dir.path(), &args).0
        };
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
