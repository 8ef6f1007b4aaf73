//! Data integrity through the whole runner, for every engine that moves data: a write job with
//! `verify=crc32c` writes checksummed blocks and reads every one back, buffered and with
//! O_DIRECT, sequential and random; then a `verify_only` run through a different engine
//! (psync) checks what actually reached the file, so a write that an engine lost, misplaced or
//! only pretended to complete is caught even if that engine's own read-back agreed with it.

mod harness;

use harness::*;
use std::path::Path;

/// Engines that transfer data (null does not).
const ENGINES: [&str; 10] = [
    "sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "libaio", "io_uring", "posixaio",
    "guasi",
];

const BLOCKS: u64 = 512;
const BS: u64 = 4096;

fn job(f: &str, engine: &str, rw: &str, direct: bool, extra: &[&str]) -> Vec<String> {
    let sync = matches!(
        engine,
        "sync" | "psync" | "vsync" | "pvsync" | "pvsync2" | "mmap"
    );
    let mut a = vec![
        "--name=integrity".to_string(),
        format!("--ioengine={engine}"),
        format!("--rw={rw}"),
        format!("--bs={BS}"),
        format!("--size={}", BLOCKS * BS),
        format!("--iodepth={}", if sync { 1 } else { 8 }),
        format!("--direct={}", u8::from(direct)),
        format!("--filename={f}"),
        "--verify=crc32c".into(),
        "--output-format=json".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run(dir: &Path, args: &[String]) -> Run {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    fiox_in(dir, &a)
}

/// One engine, one pattern: write + verify with that engine, then verify_only with psync.
fn check(dir: &TempDir, engine: &str, rw: &str, direct: bool) {
    let f = dir.join(&format!("{engine}-{rw}-{}", u8::from(direct)));
    let what = format!("{engine} rw={rw} direct={}", u8::from(direct));
    let w = run(dir.path(), &job(&f, engine, rw, direct, &[]));
    assert_eq!(w.code, 0, "{what}: {}", w.stderr);
    let v = w.json();
    assert_eq!(issued(&v, "write"), (BLOCKS, BLOCKS * BS), "{what}: writes");
    assert_eq!(
        issued(&v, "read"),
        (BLOCKS, BLOCKS * BS),
        "{what}: verify reads"
    );
    let r = run(
        dir.path(),
        &job(&f, "psync", rw, direct, &["--verify_only=1"]),
    );
    assert_eq!(r.code, 0, "{what}: psync re-check: {}", r.stderr);
    assert_eq!(
        issued(&r.json(), "read"),
        (BLOCKS, BLOCKS * BS),
        "{what}: psync re-check reads"
    );
}

fn matrix(direct: bool) {
    // O_DIRECT needs a filesystem that supports it: /var/tmp is on the machine's disk.
    let dir = TempDir::under(Path::new("/var/tmp"), "integrity");
    for engine in ENGINES {
        for rw in ["write", "randwrite"] {
            check(&dir, engine, rw, direct);
        }
    }
}

#[test]
fn every_engine_writes_and_reads_back_buffered() {
    matrix(false);
}

#[test]
fn every_engine_writes_and_reads_back_direct() {
    matrix(true);
}
