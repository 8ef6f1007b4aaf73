//! Data integrity through the whole runner, for every engine that moves data: a write job with
//! `verify=crc32c` writes checksummed blocks and reads every one back, buffered and with
//! O_DIRECT, sequential and random; then a `verify_only` run through a different engine
//! (psync) checks what actually reached the file, so a write that an engine lost, misplaced or
//! only pretended to complete is caught even if that engine's own read-back agreed with it.
//! Reads and mixed jobs: each engine reads a file psync wrote with checksummed blocks (every
//! block read is checked), and runs a randrw job over such a file whose writes are read back,
//! after which psync re-checks every block of the file. The same again with every engine
//! behind `io_submit_mode=offload`.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

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

/// Read jobs: psync lays down checksummed blocks; `engine` reads them all (randomly), and each
/// block it reads is checked against its header and checksum.
fn check_read(dir: &TempDir, engine: &str, direct: bool, extra: &[&str]) {
    let f = dir.join(&format!("{engine}-read-{}", u8::from(direct)));
    let what = format!("{engine} rw=randread direct={} {extra:?}", u8::from(direct));
    let w = run(dir.path(), &job(&f, "psync", "write", direct, &[]));
    assert_eq!(w.code, 0, "{what}: psync write: {}", w.stderr);
    let r = run(dir.path(), &job(&f, engine, "randread", direct, extra));
    assert_eq!(r.code, 0, "{what}: {}", r.stderr);
    assert_eq!(issued(&r.json(), "read"), (BLOCKS, BLOCKS * BS), "{what}");
}

/// Mixed jobs: over a file of checksummed blocks, `engine` runs randrw (its writes are read
/// back by its own verify phase), then psync re-checks every block of the file: the ones the
/// mixed job wrote and the ones it only read.
fn check_randrw(dir: &TempDir, engine: &str, direct: bool, extra: &[&str]) {
    let f = dir.join(&format!("{engine}-randrw-{}", u8::from(direct)));
    let what = format!("{engine} rw=randrw direct={} {extra:?}", u8::from(direct));
    let w = run(dir.path(), &job(&f, "psync", "write", direct, &[]));
    assert_eq!(w.code, 0, "{what}: psync write: {}", w.stderr);
    let m = run(dir.path(), &job(&f, engine, "randrw", direct, extra));
    assert_eq!(m.code, 0, "{what}: {}", m.stderr);
    let v = m.json();
    let (writes, _) = issued(&v, "write");
    let (reads, _) = issued(&v, "read");
    assert!(writes > 0 && writes < BLOCKS, "{what}: {writes} writes");
    // Each block is touched once (random map): BLOCKS - writes mixed-phase reads, then the
    // verify phase reads each of the `writes` blocks back.
    assert_eq!(reads, BLOCKS, "{what}: reads");
    let all = run(dir.path(), &job(&f, "psync", "read", direct, &[]));
    assert_eq!(all.code, 0, "{what}: psync re-check: {}", all.stderr);
    assert_eq!(issued(&all.json(), "read"), (BLOCKS, BLOCKS * BS), "{what}");
}

fn matrix(direct: bool) {
    // O_DIRECT needs a filesystem that supports it: /var/tmp is on the machine's disk.
    let dir = TempDir::under(Path::new("/var/tmp"), "integrity");
    for engine in ENGINES {
        for rw in ["write", "randwrite"] {
            check(&dir, engine, rw, direct);
        }
        check_read(&dir, engine, direct, &[]);
        check_randrw(&dir, engine, direct, &[]);
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

/// Every engine behind io_submit_mode=offload (iodepth submit threads, each with its own
/// engine instance): reads, mixed, buffered and direct.
#[test]
fn every_engine_offloaded_reads_and_mixes_intact() {
    let dir = TempDir::under(Path::new("/var/tmp"), "integrity-offload");
    let extra = ["--io_submit_mode=offload", "--iodepth=8"];
    for engine in ENGINES {
        for direct in [false, true] {
            check_read(&dir, engine, direct, &extra);
            check_randrw(&dir, engine, direct, &extra);
        }
    }
}

/// mmap on a file create_on_open just made (nothing laid it out): the engine extends the empty
/// file to the job's range before mapping it, so the writes land and read back intact (fio
/// 3.33 maps the empty file and dies of SIGBUS at the first write).
#[test]
fn mmap_writes_into_a_file_created_on_open() {
    let dir = TempDir::under(Path::new("/var/tmp"), "integrity-mmap-coo");
    for rw in ["write", "randwrite"] {
        let f = dir.join(&format!("coo-{rw}"));
        let w = run(
            dir.path(),
            &job(&f, "mmap", rw, false, &["--create_on_open=1"]),
        );
        assert_eq!(w.code, 0, "rw={rw}: {}", w.stderr);
        let v = w.json();
        assert_eq!(issued(&v, "write"), (BLOCKS, BLOCKS * BS), "rw={rw}");
        assert_eq!(issued(&v, "read"), (BLOCKS, BLOCKS * BS), "rw={rw}");
        assert_eq!(std::fs::metadata(&f).unwrap().len(), BLOCKS * BS);
        let r = run(dir.path(), &job(&f, "psync", "read", false, &[]));
        assert_eq!(r.code, 0, "rw={rw}: psync re-check: {}", r.stderr);
    }
}
