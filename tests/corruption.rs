//! Corruption matrix: for every data engine and every verify method (with fio's pattern_hdr,
//! `verify_pattern` without `verify=`), fiox writes a verified file, the test damages chosen
//! blocks outside fiox (flips a byte, zeroes a block, swaps two blocks, restores an older copy
//! of a block = a lost write), then fiox verifies. Every damaged
//! block must be reported, at its offset and with the right kind, and no other block; the job
//! fails with err=84 (EILSEQ) in valid JSON and exit status 1. `verify=null` checks nothing, so
//! the same damage must pass unreported.
//!
//! Two verify passes per file: `verify_only=1` (through the engine under test, knows which write
//! each block must hold, so a lost write shows as stale data), and a read job (it
//! checks what it reads without a write log: a lost write that left an intact older block of
//! the same job is invisible there, as in fio, whose read-only verify takes any seed).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::collections::BTreeMap;

const BS: usize = 4096;
const BLOCKS: usize = 32;
const EILSEQ: i64 = libc::EILSEQ as i64;

/// Every engine that moves data (the `null` engine has no data to verify).
const ENGINES: &[&str] = &[
    "sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "libaio", "io_uring", "posixaio",
    "guasi",
];

/// Engines with one I/O in flight at a time (iodepth is not given to them).
const SYNC_ENGINES: &[&str] = &["sync", "psync", "vsync", "pvsync", "pvsync2", "mmap"];

/// Every `verify=` method fiox implements (meta is not here: it checks no data),
/// and `pattern_hdr`: fio's header + pattern verification, chosen by giving `verify_pattern`
/// without `verify=`.
const METHODS: &[&str] = &[
    "pattern_hdr",
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "pattern",
    "null",
];

/// Bytes flipped: (block, byte in block). Past the largest header (sha512: 128 bytes), and the
/// last byte of a block.
const FLIPS: &[(usize, usize)] = &[(1, 1000), (13, 200), (30, BS - 1)];
const ZEROED: &[usize] = &[4, 17];
/// Swapped pairs, one of them neighbours.
const SWAPS: &[(usize, usize)] = &[(6, 22), (9, 10)];
/// Blocks given back the content of the first write run (lost writes of the second run).
const DROPPED: &[usize] = &[26, 27, 31];

/// The pattern of `verify=pattern`: `%o` makes misplaced blocks detectable; the first run uses
/// other text so that a restored block of it differs.
const PATTERN_NEW: &str = "%o\"new!\"";
const PATTERN_OLD: &str = "%o\"old!\"";

struct Combo<'a> {
    engine: &'a str,
    method: &'a str,
    file: String,
}

impl Combo<'_> {
    fn args(&self, rw: &str, extra: &[&str]) -> Vec<String> {
        let mut a: Vec<String> = [
            "--name=c",
            &format!("--filename={}", self.file),
            &format!("--ioengine={}", self.engine),
            &format!("--rw={rw}"),
            "--bs=4k",
            &format!("--size={}", BS * BLOCKS),
            "--output-format=json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        match self.method {
            "pattern_hdr" => a.push(format!("--verify_pattern={PATTERN_NEW}")),
            m => a.push(format!("--verify={m}")),
        }
        if !SYNC_ENGINES.contains(&self.engine) {
            a.push("--iodepth=4".into());
        }
        if self.method == "pattern" {
            a.push(format!("--verify_pattern={PATTERN_NEW}"));
        }
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    }

    fn run(&self, rw: &str, extra: &[&str]) -> Run {
        let a = self.args(rw, extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        // Verify state files go to the working directory: keep them with the data file.
        let dir = std::path::Path::new(&self.file).parent().unwrap();
        fiox_in(dir, &a)
    }

    fn what(&self) -> String {
        format!("ioengine={} verify={}", self.engine, self.method)
    }
}

/// Write the file twice: a first run (whose blocks become the "older copies"), then the
/// verified run the verification expects — two passes (loops=2), so with a header method
/// every block holds a newer write of the same job than the first run left (the first pass
/// rewrites the same data as the first run). Returns the first run's file contents.
fn write_runs(c: &Combo) -> Vec<u8> {
    let first_extra: Vec<String> = if c.method == "pattern" {
        vec![format!("--verify_pattern={PATTERN_OLD}")]
    } else {
        Vec::new()
    };
    let mut first: Vec<&str> = first_extra.iter().map(String::as_str).collect();
    first.push("--do_verify=0");
    let r = c.run("write", &first);
    assert_eq!(r.code, 0, "{}: first write: {}", c.what(), r.stderr);
    let old = std::fs::read(&c.file).unwrap();
    // A verified write phase: the data is good before the test damages it.
    let r = c.run("write", &["--loops=2"]);
    assert_eq!(r.code, 0, "{}: second write: {}", c.what(), r.stderr);
    // verify=null reads back too (fio 3.33 does: it only pretends to check).
    let reads = issued(&r.json(), "read").0;
    assert_eq!(reads, BLOCKS as u64, "{}: verify phase", c.what());
    old
}

/// Apply every damage to the file.
fn damage(file: &str, old: &[u8]) {
    let mut d = std::fs::read(file).unwrap();
    assert_eq!(d.len(), BS * BLOCKS);
    for &(b, i) in FLIPS {
        d[b * BS + i] ^= 0x04;
    }
    for &b in ZEROED {
        d[b * BS..(b + 1) * BS].fill(0);
    }
    for &(x, y) in SWAPS {
        let bx = d[x * BS..(x + 1) * BS].to_vec();
        d.copy_within(y * BS..(y + 1) * BS, x * BS);
        d[y * BS..(y + 1) * BS].copy_from_slice(&bx);
    }
    for &b in DROPPED {
        d[b * BS..(b + 1) * BS].copy_from_slice(&old[b * BS..(b + 1) * BS]);
    }
    std::fs::write(file, &d).unwrap();
}

/// What the report of each damaged block must say: block -> phrases of its message.
/// `with_log`: the verifier knows which write each block holds (verify_only).
fn expected(method: &str, with_log: bool) -> BTreeMap<usize, Vec<String>> {
    // verify=pattern: the block is the pattern, no header; pattern_hdr: a header, then the
    // pattern (checked against the pattern, not a checksum).
    let pattern = method == "pattern";
    let pattern_data = pattern || method == "pattern_hdr";
    let mut want = BTreeMap::new();
    for &(b, i) in FLIPS {
        let at = b * BS + i;
        let says = if pattern_data {
            vec![
                format!("pattern mismatch at offset {at}: "),
                "(1 bytes differ)".into(),
            ]
        } else {
            // The checksum fails, and the regenerated data names the flipped byte.
            vec![
                " mismatch: expected ".into(),
                format!("; 1 bytes differ, first at offset {at}"),
            ]
        };
        want.insert(b, says);
    }
    for &b in ZEROED {
        want.insert(b, vec!["block reads back as all zeros".into()]);
    }
    for &(x, y) in SWAPS {
        for (at, from) in [(x, y), (y, x)] {
            let says = if pattern {
                // %o little-endian: the first byte that differs between the two offsets.
                let a = ((at * BS) as u64).to_le_bytes();
                let f = ((from * BS) as u64).to_le_bytes();
                let i = (0..8).find(|&i| a[i] != f[i]).unwrap();
                format!("pattern mismatch at offset {}: ", at * BS + i)
            } else {
                format!("header says this data belongs at offset {}", from * BS)
            };
            want.insert(at, vec![says]);
        }
    }
    for &b in DROPPED {
        if pattern {
            // "new!" and "old!" differ from their first byte, right after the offset.
            want.insert(
                b,
                vec![format!("pattern mismatch at offset {}: ", b * BS + 8)],
            );
        } else if with_log {
            // Block b got write #b+1 in the first pass and #BLOCKS+b+1 in the second.
            want.insert(
                b,
                vec![format!(
                    "stale data (lost write): expected write #{}, found older write #{}",
                    BLOCKS + b + 1,
                    b + 1
                )],
            );
        }
    }
    want
}

/// The blocks reported on stderr and their messages; panics on a report that is not one
/// block-aligned 4 KiB block of the file.
fn reported(c: &Combo, stderr: &str) -> BTreeMap<usize, String> {
    let prefix = format!("fiox: c: {}: verify failed at offset ", c.file);
    let mut out = BTreeMap::new();
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        let off: usize = rest.split(',').next().unwrap().parse().unwrap();
        assert_eq!(off % BS, 0, "{}: {line}", c.what());
        let block = format!("{off}, length {BS} (block offset {off}, length {BS}): ");
        assert!(rest.starts_with(&block), "{}: {line}", c.what());
        let dup = out.insert(off / BS, rest.to_string());
        assert!(
            dup.is_none(),
            "{}: block {} reported twice",
            c.what(),
            off / BS
        );
    }
    out
}

/// Run a verify pass and check its reports against `want`: every damaged block is described
/// (on stderr), none other.
fn check_pass(c: &Combo, pass: &str, r: &Run, want: &BTreeMap<usize, Vec<String>>) {
    let what = format!("{} ({pass})", c.what());
    let v = r.json(); // the report is valid JSON whatever happened
    let got = reported(c, &r.stderr);
    if want.is_empty() {
        assert_eq!(r.code, 0, "{what}: {}", r.stderr);
        assert!(got.is_empty(), "{what}: {}", r.stderr);
        assert_eq!(v["jobs"][0]["error"], 0, "{what}");
        return;
    }
    assert_eq!(r.code, 1, "{what}: {}", r.stderr);
    assert_eq!(v["jobs"][0]["error"], EILSEQ, "{what}");
    let blocks_got: Vec<usize> = got.keys().copied().collect();
    let blocks_want: Vec<usize> = want.keys().copied().collect();
    assert_eq!(
        blocks_got, blocks_want,
        "{what}: reported blocks\n{}",
        r.stderr
    );
    for (b, says) in &got {
        for p in &want[b] {
            assert!(
                says.contains(p.as_str()),
                "{what}: block {b}: want '{p}' in '{says}'"
            );
        }
    }
    let total = format!("{} block(s) failed verification", want.len());
    assert!(r.stderr.contains(&total), "{what}: {}", r.stderr);
}

/// Every method on one engine.
fn matrix(engine: &str) {
    let dir = TempDir::new(&format!("corrupt-{engine}"));
    for method in METHODS {
        let c = Combo {
            engine,
            method,
            file: dir.join(&format!("f-{method}")),
        };
        let old = write_runs(&c);
        damage(&c.file, &old);
        // verify=null writes and checks nothing: the damage must pass unreported.
        let want = |with_log| match *method {
            "null" => BTreeMap::new(),
            m => expected(m, with_log),
        };
        let r = c.run("write", &["--loops=2", "--verify_only=1"]);
        check_pass(&c, "verify_only", &r, &want(true));
        if engine == "psync" {
            // The verify_async threads check what any engine read: once, with one engine.
            let r = c.run(
                "write",
                &["--loops=2", "--verify_only=1", "--verify_async=2"],
            );
            check_pass(&c, "verify_only, verify_async=2", &r, &want(true));
        }
        let r = c.run("read", &[]);
        check_pass(&c, "read", &r, &want(false));
        std::fs::remove_file(&c.file).unwrap();
    }
}

#[test]
fn sync() {
    matrix("sync");
}

#[test]
fn psync() {
    matrix("psync");
}

#[test]
fn vsync() {
    matrix("vsync");
}

#[test]
fn pvsync() {
    matrix("pvsync");
}

#[test]
fn pvsync2() {
    matrix("pvsync2");
}

#[test]
fn mmap() {
    matrix("mmap");
}

#[test]
fn libaio() {
    matrix("libaio");
}

#[test]
fn io_uring() {
    matrix("io_uring");
}

#[test]
fn posixaio() {
    matrix("posixaio");
}

#[test]
fn guasi() {
    matrix("guasi");
}

/// The matrix covers every engine with a test of its own.
#[test]
fn every_engine_is_covered() {
    assert_eq!(ENGINES.len(), 10);
    let src = include_str!("corruption.rs");
    for e in ENGINES {
        assert!(
            src.contains(&format!("fn {e}() {{\n    matrix(\"{e}\");")),
            "{e}"
        );
    }
}

/// With verify_interval (and verify_offset moving each header into its interval) the same
/// damage is found, each block reported once, at its first bad interval: the byte flipped
/// near the end of a block names the block's last 1 KiB interval.
#[test]
fn damage_with_verify_interval_and_offset() {
    let dir = TempDir::new("corrupt-interval");
    for (method, layout) in [
        ("md5", &["--verify_interval=1k"][..]),
        (
            "crc32c",
            &["--verify_interval=1k", "--verify_offset=512"][..],
        ),
        (
            "sha512",
            &["--verify_interval=2k", "--verify_offset=1k"][..],
        ),
        ("pattern_hdr", &["--verify_interval=1k"][..]),
    ] {
        let c = Combo {
            engine: "psync",
            method,
            file: dir.join(&format!("f-{method}")),
        };
        let interval = if layout[0].ends_with("2k") {
            2048
        } else {
            1024
        };
        fn with<'a>(layout: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
            [layout, extra].concat()
        }
        let r = c.run("write", &with(layout, &["--do_verify=0"]));
        assert_eq!(r.code, 0, "{method}: {}", r.stderr);
        let old = std::fs::read(&c.file).unwrap();
        let r = c.run("write", &with(layout, &["--loops=2"]));
        assert_eq!(r.code, 0, "{method}: {}", r.stderr);
        damage(&c.file, &old);
        let r = c.run("write", &with(layout, &["--loops=2", "--verify_only=1"]));
        assert_eq!(r.code, 1, "{method}: {}", r.stderr);
        let v = r.json();
        assert_eq!(v["jobs"][0]["error"], EILSEQ, "{method}");
        // (block, interval) of each report, and its message.
        let prefix = format!("fiox: c: {}: verify failed at offset ", c.file);
        let mut got = BTreeMap::new();
        for line in r.stderr.lines() {
            let Some(rest) = line.strip_prefix(&prefix) else {
                continue;
            };
            let off: usize = rest.split(',').next().unwrap().parse().unwrap();
            let head = format!(
                "{off}, length {interval} (block offset {}, length {BS}): ",
                off / BS * BS
            );
            assert!(rest.starts_with(&head), "{method}: {line}");
            assert!(
                got.insert(off / BS, (off % BS / interval, rest.to_string()))
                    .is_none(),
                "{line}"
            );
        }
        let want = expected(method, true);
        let blocks: Vec<_> = got.keys().copied().collect();
        assert_eq!(
            blocks,
            want.keys().copied().collect::<Vec<_>>(),
            "{method}:\n{}",
            r.stderr
        );
        for (b, (iv, says)) in &got {
            let last = FLIPS.iter().any(|&(fb, i)| fb == *b && i >= BS - interval);
            let want_iv = if last { BS / interval - 1 } else { 0 };
            assert_eq!(*iv, want_iv, "{method}: block {b}: {says}");
            // With verify_offset the data is checked in logical order: the flipped byte's
            // position is named in that order, so only the kind is compared there.
            let moved = layout.iter().any(|o| o.starts_with("--verify_offset"));
            for p in &want[b] {
                if moved && p.contains("first at offset") {
                    continue;
                }
                assert!(
                    says.contains(p.as_str()),
                    "{method}: block {b}: want '{p}' in '{says}'"
                );
            }
        }
        let total = format!("{} block(s) failed verification", want.len());
        assert!(r.stderr.contains(&total), "{method}: {}", r.stderr);
    }
}

/// The same damage on files fio 3.33 wrote, checked by fio's verify_only with
/// continue_on_error=verify (without it fio stops at the first bad block): fio names the same
/// blocks fiox names, except the lost writes under a header method, which fio's verify_only does
/// not look for (verify.c skips its numberio check for verify_only); fiox reports them as stale.
#[test]
fn fio_reports_no_block_fiox_misses() {
    need_fio();
    let dir = TempDir::new("corrupt-fio");
    for method in ["md5", "crc32c", "sha256", "xxhash", "pattern"] {
        let f = dir.join(&format!("fio-{method}"));
        let file = format!("--filename={f}");
        let size = format!("--size={}", BS * BLOCKS);
        let verify = format!("--verify={method}");
        let fio = |extra: &[&str]| {
            let mut a = vec!["--name=c", &file, "--rw=write", "--bs=4k", &size, &verify];
            a.extend(extra);
            std::process::Command::new("fio")
                .args(&a)
                .current_dir(dir.path())
                .output()
                .expect("run fio")
        };
        // verify=pattern: the first run writes other text, as in the matrix.
        let pattern = |p: &str| match method {
            "pattern" => vec![format!("--verify_pattern={p}")],
            _ => Vec::new(),
        };
        let with = |p: &str, extra: &[&str]| -> Vec<String> {
            let mut a = pattern(p);
            a.extend(extra.iter().map(|s| s.to_string()));
            a.push("--output-format=terse".into());
            a
        };
        let run = |a: Vec<String>| fio(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(run(with(PATTERN_OLD, &["--do_verify=0"])).status.success());
        let old = std::fs::read(&f).unwrap();
        assert!(run(with(PATTERN_NEW, &["--loops=2"])).status.success());
        damage(&f, &old);
        let check = with(
            PATTERN_NEW,
            &["--loops=2", "--verify_only=1", "--continue_on_error=verify"],
        );
        let o = run(check);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let mut named: Vec<usize> = stderr
            .lines()
            .filter_map(|l| l.split(" at file ").nth(1))
            .filter_map(|l| l.split(" offset ").nth(1))
            .filter_map(|l| l.split(',').next()?.parse::<usize>().ok())
            .map(|off| off / BS)
            .collect();
        named.sort_unstable();
        named.dedup();
        let mut want: Vec<usize> = expected(method, true).into_keys().collect();
        if method != "pattern" {
            want.retain(|b| !DROPPED.contains(b));
        }
        assert_eq!(named, want, "{method}: blocks fio names\n{stderr}");
    }
}

/// Random writes at queue depth 8 (libaio, io_uring): the write order and sequence numbers
/// differ, the findings do not.
#[test]
fn damage_after_random_writes_at_depth() {
    let dir = TempDir::new("corrupt-rand");
    for (engine, method) in [
        ("libaio", "crc32c"),
        ("io_uring", "sha1"),
        ("libaio", "pattern_hdr"),
        ("io_uring", "pattern"),
    ] {
        let c = Combo {
            engine,
            method,
            file: dir.join(&format!("f-{engine}-{method}")),
        };
        let rand = ["--rw=randwrite", "--iodepth=8"];
        let pattern = match method {
            "pattern" => vec![format!("--verify_pattern={PATTERN_OLD}")],
            _ => Vec::new(),
        };
        let first: Vec<&str> = pattern
            .iter()
            .map(String::as_str)
            .chain(rand)
            .chain(["--do_verify=0"])
            .collect();
        let r = c.run("write", &first);
        assert_eq!(r.code, 0, "{}: {}", c.what(), r.stderr);
        let old = std::fs::read(&c.file).unwrap();
        let r = c.run("write", &[&rand[..], &["--loops=2"]].concat());
        assert_eq!(r.code, 0, "{}: {}", c.what(), r.stderr);
        assert_eq!(issued(&r.json(), "read").0, BLOCKS as u64, "{}", c.what());
        damage(&c.file, &old);
        let mut want = expected(method, true);
        for says in want.values_mut() {
            // Which write a block held depends on the random order: keep the kind only.
            for p in says.iter_mut().filter(|p| p.starts_with("stale data")) {
                *p = "stale data (lost write): expected write #".into();
            }
        }
        let r = c.run(
            "write",
            &[&rand[..], &["--loops=2", "--verify_only=1"]].concat(),
        );
        check_pass(&c, "verify_only after randwrite", &r, &want);
        if method != "pattern" {
            // The writes really were in random order: a lost write's numbers differ from
            // what sequential writing gives.
            let sequential = expected(method, true);
            let differs = DROPPED.iter().any(|b| {
                let says = r
                    .stderr
                    .lines()
                    .find(|l| l.contains(&format!("at offset {}, ", b * BS)));
                !says.is_some_and(|l| l.contains(sequential[b][0].as_str()))
            });
            assert!(differs, "{}: sequential order?\n{}", c.what(), r.stderr);
        }
    }
}

/// The damage on a 16 MiB file: a byte flipped in block 7, block 100 zeroed, block 999
/// copied over block 1000. verify_only finds exactly these three with a read workload (every
/// block read and checked as read) and with the writing workload (every block written checked
/// against its write), with every engine and the common methods; with
/// continue_on_error=verify the job reports err=84, total_err=3, first_error=84, fio 3.33's
/// values (tests/verify.rs compares them with fio's).
#[test]
fn verify_only_read_and_write_find_the_damage_on_every_engine() {
    const BLOCKS_16M: usize = 4096;
    let dir = TempDir::new("corrupt-vonly");
    for engine in ENGINES {
        for method in ["crc32c", "md5", "sha256", "xxhash"] {
            let f = dir.join(&format!("f-{engine}-{method}"));
            let file = format!("--filename={f}");
            let (eng, verify) = (format!("--ioengine={engine}"), format!("--verify={method}"));
            let run = |rw: &str, extra: &[&str]| {
                let rw = format!("--rw={rw}");
                let mut a = vec!["--name=c", &file, &eng, &rw, "--bs=4k", "--size=16m"];
                a.extend([verify.as_str(), "--output-format=json"]);
                if !SYNC_ENGINES.contains(engine) {
                    a.push("--iodepth=4");
                }
                a.extend(extra);
                fiox_in(dir.path(), &a)
            };
            let what = format!("ioengine={engine} verify={method}");
            let w = run("write", &["--do_verify=0"]);
            assert_eq!(w.code, 0, "{what}: {}", w.stderr);
            let mut d = std::fs::read(&f).unwrap();
            assert_eq!(d.len(), BS * BLOCKS_16M);
            d[7 * BS + 1000] ^= 0x04;
            d[100 * BS..101 * BS].fill(0);
            d.copy_within(999 * BS..1000 * BS, 1000 * BS);
            std::fs::write(&f, &d).unwrap();
            for rw in ["read", "write"] {
                let what = format!("{what} rw={rw}");
                let r = run(rw, &["--verify_only=1", "--continue_on_error=verify"]);
                assert_eq!(r.code, 1, "{what}: {}", r.stderr);
                let v = r.json();
                let j = &v["jobs"][0];
                assert_eq!(issued(&v, "read"), (4096, 16 << 20), "{what}");
                // A write job's replayed writes are its writes, as fio 3.33 counts them.
                let writes = if rw == "write" {
                    (4096, 16 << 20)
                } else {
                    (0, 0)
                };
                assert_eq!(issued(&v, "write"), writes, "{what}");
                let got = (&j["error"], &j["total_err"], &j["first_error"]);
                assert_eq!(got, (&EILSEQ.into(), &3.into(), &EILSEQ.into()), "{what}");
                let c = Combo {
                    engine,
                    method,
                    file: f.clone(),
                };
                let found = reported(&c, &r.stderr);
                let blocks: Vec<usize> = found.keys().copied().collect();
                assert_eq!(blocks, [7, 100, 1000], "{what}:\n{}", r.stderr);
                let says = [
                    (7, " mismatch: expected ".to_string()),
                    (100, "block reads back as all zeros".into()),
                    (
                        1000,
                        format!("header says this data belongs at offset {}", 999 * BS),
                    ),
                ];
                for (b, p) in says {
                    assert!(found[&b].contains(&p), "{what}: block {b}: {}", found[&b]);
                }
                assert!(
                    r.stderr.contains("3 block(s) failed verification"),
                    "{what}"
                );
            }
            std::fs::remove_file(&f).unwrap();
        }
    }
}
