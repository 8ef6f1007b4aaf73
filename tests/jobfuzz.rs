//! A fuzzer that runs real jobs (issue 39): random combinations of block sizes (bs, bsrange,
//! bssplit, blockalign, bs_unaligned), regions (offset, size, filesize, io_size), rw with
//! suffixes, every verify kind with verify_interval/verify_offset/verify_pattern, queue depth
//! and batching, strided zones, on psync, libaio, io_uring and mmap against tmpfs files. fiox
//! runs under glibc's checking allocator (MALLOC_CHECK_=3, MALLOC_PERTURB_) and each run must
//! end by itself with no signal, no panic and no allocator abort; where fio 3.33 runs the same
//! job, fiox must succeed where fio succeeds and fail where fio fails.
//!
//! The cases come from a seeded generator, so a failure names its seed and command lines and
//! replays exactly. `fuzz/jobs/corpus.txt` holds the cases that once failed (each line a job's
//! options): they run first, every time. Budget: FIOX_JOBFUZZ_CASES (default 48) or
//! FIOX_JOBFUZZ_SECS (run until that many seconds passed, e.g. 600 for the 10-minute run of
//! BENCHMARKS.md); FIOX_JOBFUZZ_SEED picks the stream (default: a fixed one, so CI is
//! repeatable).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// xorshift64*: the cases' stream (no dependency, the same on every machine).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// One random job's options (without --name and --filename).
fn case(r: &mut Rng) -> Vec<String> {
    let mut o: Vec<String> = Vec::new();
    let mut add = |k: &str, v: &str| o.push(format!("--{k}={v}"));
    let rw = r.pick(&["read", "write", "randread", "randwrite", "rw", "randrw"]);
    let suffix = if r.chance(15) {
        format!(":{}", r.pick(&["4k", "8k", "12k"]))
    } else {
        String::new()
    };
    add("rw", &format!("{rw}{suffix}"));
    match r.below(4) {
        0 | 1 => add(
            "bs",
            r.pick(&["512", "1k", "4k", "8k", "16k", "3k", "6000"]),
        ),
        2 => add("bsrange", r.pick(&["512-8k", "4k-16k", "1k-6k", "2k-10k"])),
        _ => add(
            "bssplit",
            r.pick(&[
                "4k/50:8k/50",
                "4k/30:16k/70",
                "512/20:4k/80",
                "4k/40:6k/30:12k/30",
            ]),
        ),
    }
    if r.chance(15) {
        add("blockalign", r.pick(&["512", "1k", "4k"]));
    }
    if r.chance(10) {
        add("bs_unaligned", "1");
    }
    add("size", r.pick(&["64k", "256k", "1m", "100k"]));
    if r.chance(25) {
        add("offset", r.pick(&["4k", "1000", "32k", "512"]));
    }
    if r.chance(15) {
        add("filesize", r.pick(&["64k", "512k", "1m"]));
    }
    if r.chance(15) {
        add("io_size", r.pick(&["32k", "512k", "2m"]));
    }
    if r.chance(70) {
        let kind = r.pick(&[
            "crc32c", "md5", "pattern", "meta", "sha1", "crc64", "crc16", "crc7", "xxhash",
            "sha256", "null",
        ]);
        add("verify", kind);
        if kind == "pattern" || r.chance(20) {
            add(
                "verify_pattern",
                r.pick(&["0xab", "0xdeadbeef", "\"abcd\""]),
            );
        }
        if r.chance(40) {
            add(
                "verify_interval",
                r.pick(&["512", "1000", "2222", "3000", "4096", "8192"]),
            );
        }
        if r.chance(10) {
            add("verify_offset", r.pick(&["8", "64", "512"]));
        }
        if r.chance(20) {
            add("verify_backlog", r.pick(&["4", "16"]));
        }
        if r.chance(10) {
            add("verify_async", "2");
        }
    }
    let engine = r.pick(&["psync", "libaio", "io_uring", "mmap"]);
    add("ioengine", engine);
    if engine != "psync" && engine != "mmap" {
        add("iodepth", r.pick(&["1", "4", "16"]));
        if r.chance(30) {
            add("iodepth_batch_submit", r.pick(&["2", "4"]));
        }
    }
    if r.chance(15) {
        add("norandommap", "1");
    }
    if r.chance(10) {
        add("zonemode", "strided");
        add("zonesize", r.pick(&["16k", "32k"]));
        add("zonerange", r.pick(&["64k", "128k"]));
    }
    o
}

/// How a run ended.
struct Outcome {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    stderr: String,
}

/// Run `bin` with `opts` on `file` in `dir`, killed after 30 s.
fn run(bin: &str, dir: &Path, file: &Path, opts: &[String], checked_malloc: bool) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    let mut c = Command::new(bin);
    c.current_dir(dir)
        .arg("--name=fz")
        .arg(format!("--filename={}", file.display()))
        .args(opts)
        .arg("--output-format=json")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if checked_malloc {
        c.env("MALLOC_CHECK_", "3").env("MALLOC_PERTURB_", "165");
    }
    let mut child = c.spawn().expect("spawn");
    // Read stderr as it comes: a run that reports thousands of failures must not stall on a
    // full pipe.
    let mut pipe = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut s);
        s
    });
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            let stderr = reader.join().unwrap_or_default();
            return Outcome {
                code: st.code(),
                signal: st.signal(),
                timed_out: false,
                stderr,
            };
        }
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            let _ = reader.join();
            return Outcome {
                code: None,
                signal: None,
                timed_out: true,
                stderr: String::new(),
            };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What is wrong with fiox's run of a case (None: nothing), beside fio's run of it when
/// fio ran.
fn judge(fiox: &Outcome, fio: Option<&Outcome>) -> Option<String> {
    if fiox.timed_out {
        return Some("fiox did not finish in 30 s".into());
    }
    if let Some(s) = fiox.signal {
        return Some(format!("fiox killed by signal {s}: {}", tail(&fiox.stderr)));
    }
    let err = &fiox.stderr;
    for bad in [
        "panicked",
        "double free",
        "corrupted",
        "malloc(",
        "munmap_chunk",
        "free():",
    ] {
        if err.contains(bad) {
            return Some(format!("fiox: {bad}: {}", tail(err)));
        }
    }
    if fiox.code == Some(101) {
        return Some(format!("fiox panicked: {}", tail(err)));
    }
    let fio = fio.filter(|f| !f.timed_out && f.signal.is_none())?;
    let (a, b) = (fiox.code == Some(0), fio.code == Some(0));
    if b && !a && !err.contains("not supported") {
        return Some(format!("fio succeeded, fiox failed: {}", tail(err)));
    }
    // fio's own verify bookkeeping fails some jobs that overwrite blocks (norandommap with
    // varying sizes, blockalign below the block, zones off the block grid: fio warns "verify
    // limited"); fiox tracks every overwrite and verifies what is still whole, so its success
    // on a tmpfs file is right there.
    let fio_verify_only =
        fio.stderr.lines().any(|l| l.starts_with("verify: ")) && !fio.stderr.contains("fio: pid");
    if a && !b && !fio_verify_only {
        return Some(format!(
            "fio failed ({}), fiox succeeded",
            tail(&fio.stderr)
        ));
    }
    None
}

fn tail(s: &str) -> String {
    let t: Vec<&str> = s.lines().rev().take(3).collect();
    t.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// The corpus: cases that once failed, one job's options a line.
fn corpus() -> Vec<Vec<String>> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/jobs/corpus.txt");
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn random_real_jobs_match_fio_and_never_corrupt_memory() {
    need_fio();
    let seed = env_u64("FIOX_JOBFUZZ_SEED").unwrap_or(0x39_f10e_5eed);
    let cases = env_u64("FIOX_JOBFUZZ_CASES").unwrap_or(48);
    let budget = env_u64("FIOX_JOBFUZZ_SECS").map(Duration::from_secs);
    let mut r = Rng(seed | 1);
    let t0 = Instant::now();
    let mut failures = Vec::new();
    let mut ran = 0u64;
    let fixed = corpus();
    let mut i = 0usize;
    loop {
        let opts = if i < fixed.len() {
            fixed[i].clone()
        } else {
            let done = (i - fixed.len()) as u64;
            let more = match budget {
                Some(b) => t0.elapsed() < b,
                None => done < cases,
            };
            if !more {
                break;
            }
            case(&mut r)
        };
        i += 1;
        let d = TempDir::new("jobfuzz");
        let (fx, fo) = (d.join("fx"), d.join("fo"));
        let fiox = run(fiox_bin(), d.path(), Path::new(&fx), &opts, true);
        let fio = run("fio", d.path(), Path::new(&fo), &opts, false);
        ran += 1;
        if let Some(why) = judge(&fiox, Some(&fio)) {
            failures.push(format!("{why}\n    fiox {}", opts.join(" ")));
        }
    }
    eprintln!(
        "jobfuzz: {ran} jobs (seed {seed:#x}) in {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {ran} jobs (seed {seed:#x}):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Issue 39's report, as fio 3.33's t/verify.py runs it: verify_interval values that do not
/// divide the block corrupted fiox's heap (a 6,666-byte verify read into a 4,096-byte
/// buffer). Both tools must read back every block and exit 0.
#[test]
fn verify_interval_that_does_not_divide_the_block() {
    need_fio();
    for vi in ["2222", "3000"] {
        let opts: Vec<String> = [
            "--size=4m",
            "--bs=4096",
            "--rw=randwrite",
            "--ioengine=psync",
            "--verify=pattern",
            "--verify_pattern=0xab",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--verify_interval={vi}")])
        .collect();
        let d = TempDir::new("vinterval");
        let f = d.join("v.img");
        let fiox = run(fiox_bin(), d.path(), Path::new(&f), &opts, true);
        assert_eq!(judge(&fiox, None), None, "verify_interval={vi}");
        assert_eq!(fiox.code, Some(0), "verify_interval={vi}: {}", fiox.stderr);
        let a: Vec<&str> = ["--name=v", "--output-format=json"].to_vec();
        let mut args: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        args.push(format!("--filename={f}"));
        args.extend(opts.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let x = fiox_in(d.path(), &args);
        let o = tool_in("fio", d.path(), &args);
        assert_eq!((x.code, o.code), (0, 0), "{}\n{}", x.stderr, o.stderr);
        for run in [&x, &o] {
            let v = run.json();
            assert_eq!(issued(&v, "read"), (1024, 4 << 20), "verify_interval={vi}");
            assert_eq!(v["jobs"][0]["error"], 0);
        }
    }
}
