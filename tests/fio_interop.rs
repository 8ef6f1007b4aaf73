//! Verification across jobs and tools, against fio 3.33 on the same jobs: a reader job verifies
//! what a writer job of the same run wrote; fiox verifies data fio wrote and fio verifies data
//! fiox wrote, for every checksum method both implement (fio's block header and digests, byte
//! for byte), each finding the same injected damage; and each tool loads the verify state file
//! the other saved.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// Every method both tools implement, and fiox's `verify_pattern` alone (fio's pattern with a
/// header).
const METHODS: [&str; 15] = [
    "md5",
    "crc64",
    "crc32",
    "crc32c",
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
    "pattern_hdr",
];

/// The options that select `m` (fio has no `verify=pattern_hdr`: a pattern alone means it).
fn method_args(m: &str) -> Vec<String> {
    if m == "pattern_hdr" {
        vec!["--verify_pattern=\"abc\"0x1234".into()]
    } else {
        vec![format!("--verify={m}")]
    }
}

/// fio's exit status, its error field (terse) and stderr, run in `dir`.
fn fio_in(dir: &Path, args: &[String]) -> (i32, i64, String) {
    assert!(need_fio(), "fio 3.33 is needed (.ci/run installs it)");
    let o = Command::new("fio")
        .current_dir(dir)
        .args(args)
        .args(["--output-format=terse", "--terse-version=3"])
        .stdin(Stdio::null())
        .output()
        .expect("run fio");
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = out
        .lines()
        .find(|l| l.starts_with("3;"))
        .and_then(|l| l.split(';').nth(4))
        .and_then(|e| e.parse().ok())
        .unwrap_or(-1);
    (
        o.status.code().unwrap_or(-1),
        err,
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

fn fiox_args(dir: &Path, args: &[String]) -> Run {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    fiox_in(dir, &a)
}

fn job(name: &str, rw: &str, file: &str, m: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        format!("--name={name}"),
        format!("--rw={rw}"),
        "--bs=4k".into(),
        "--size=64k".into(),
        format!("--filename={file}"),
    ];
    a.extend(method_args(m));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Flips one byte in the data part of block `blk`, in its last 1 KiB interval (fio 3.33 logs
/// a bad interval of a block but reports an error only when the last interval checked is bad:
/// the next good one clears it without verify_fatal), 268 bytes in: past every header and
/// within the 128 data bytes fio's "sha512" covers (data bytes 88..128 of a 1 KiB interval).
fn damage(file: &str, blk: usize) {
    damage_at(file, blk * 4096 + 3072 + 268);
}

fn damage_at(file: &str, at: usize) {
    let mut d = std::fs::read(file).unwrap();
    d[at] ^= 0x20;
    std::fs::write(file, &d).unwrap();
}

/// A stonewalled reader job with verify= checks what the writer job wrote, in fio and in
/// fiox; with fiox's verify_strict=1 the reader insists on its own writes.
#[test]
fn reader_job_verifies_what_a_writer_job_wrote() {
    let dir = TempDir::new("xjob");
    for tool in ["fio", "fiox"] {
        let f = dir.join(&format!("{tool}-data"));
        let mut a = job("w", "write", &f, "crc32c", &["--do_verify=0"]);
        a.extend(job("r", "read", &f, "crc32c", &["--stonewall"]));
        if tool == "fio" {
            let (code, err, stderr) = fio_in(dir.path(), &a);
            assert_eq!((code, err), (0, 0), "fio: {stderr}");
        } else {
            let r = fiox_args(dir.path(), &a);
            assert_eq!(r.code, 0, "fiox: {}", r.stderr);
            assert!(!r.stderr.contains("verify failed"), "{}", r.stderr);
            a.push("--verify_strict=1".into());
            let r = fiox_args(dir.path(), &a);
            assert_eq!(r.code, 1, "strict reader: {}", r.stderr);
            assert!(
                r.stderr.contains("written by another job or run"),
                "{}",
                r.stderr
            );
        }
    }
}

/// fio writes, fiox verifies: every method passes clean data and names the damaged block.
#[test]
fn fiox_verifies_what_fio_wrote() {
    let dir = TempDir::new("fio2fiox");
    for m in METHODS {
        let f = dir.join(&format!("{m}.dat"));
        let w = job(
            "w",
            "randwrite",
            &f,
            m,
            &["--do_verify=0", "--verify_interval=1k"],
        );
        let (code, err, stderr) = fio_in(dir.path(), &w);
        assert_eq!((code, err), (0, 0), "fio {m}: {stderr}");
        let r = job("r", "read", &f, m, &["--verify_interval=1k"]);
        let run = fiox_args(dir.path(), &r);
        assert_eq!(run.code, 0, "fiox {m} on fio's data: {}", run.stderr);
        damage(&f, 5);
        let run = fiox_args(dir.path(), &r);
        assert_eq!(run.code, 1, "{m}: damage not found: {}", run.stderr);
        assert!(
            run.stderr
                .contains("verify failed at offset 23552, length 1024"),
            "{m}: {}",
            run.stderr
        );
        // fio's verdict on the same damaged file is the same.
        let (_, err, stderr) = fio_in(dir.path(), &r);
        assert_eq!(err, 84, "fio {m} on damaged data: {stderr}");
        assert!(stderr.contains("offset 23552"), "fio {m}: {stderr}");
    }
}

/// fiox writes, fio verifies: every method passes clean data and fio finds the damage.
#[test]
fn fio_verifies_what_fiox_wrote() {
    let dir = TempDir::new("fiox2fio");
    for m in METHODS {
        let f = dir.join(&format!("{m}.dat"));
        let w = job(
            "w",
            "randwrite",
            &f,
            m,
            &["--do_verify=0", "--verify_interval=1k"],
        );
        let run = fiox_args(dir.path(), &w);
        assert_eq!(run.code, 0, "fiox {m}: {}", run.stderr);
        let r = job("r", "read", &f, m, &["--verify_interval=1k"]);
        let (code, err, stderr) = fio_in(dir.path(), &r);
        assert_eq!((code, err), (0, 0), "fio {m} on fiox's data: {stderr}");
        damage(&f, 9);
        let (_, err, stderr) = fio_in(dir.path(), &r);
        assert_eq!(err, 84, "fio {m}: damage not found: {stderr}");
        assert!(stderr.contains("offset 39936"), "fio {m}: {stderr}");
        let run = fiox_args(dir.path(), &r);
        assert_eq!(run.code, 1, "fiox {m}: {}", run.stderr);
        assert!(
            run.stderr.contains("verify failed at offset 39936"),
            "{m}: {}",
            run.stderr
        );
    }
}

/// sha3-224 and sha3-384 with verify_only over what fiox wrote: fio's check and fiox's own
/// pass it clean and fail it with one flipped byte (fio's data is checked by fiox's read job
/// in fiox_verifies_what_fio_wrote and by its verify_only in
/// verify_only_checks_what_fio_wrote_as_fio_does).
#[test]
fn sha3_verify_only_checks_fiox_data() {
    let dir = TempDir::new("sha3only");
    for m in ["sha3-224", "sha3-384"] {
        let f = dir.join(m);
        let w = job("w", "write", &f, m, &["--do_verify=0"]);
        let run = fiox_args(dir.path(), &w);
        assert_eq!(run.code, 0, "fiox {m}: {}", run.stderr);
        let v = job("w", "write", &f, m, &["--verify_only=1"]);
        for bad in [false, true] {
            if bad {
                damage(&f, 3);
            }
            let (_, err, stderr) = fio_in(dir.path(), &v);
            assert_eq!(
                err,
                if bad { 84 } else { 0 },
                "fio {m}, damaged {bad}: {stderr}"
            );
            let run = fiox_args(dir.path(), &v);
            assert_eq!(run.code, i32::from(bad), "fiox {m}: {}", run.stderr);
            assert_eq!(
                run.stderr
                    .contains("verify failed at offset 12288, length 4096"),
                bad,
                "{m}: {}",
                run.stderr
            );
        }
    }
}

/// fio writes (sequential and random), fiox's verify_only checks it as fio's does: fio 3.33
/// skips the write number in verify_only and copies the write seed from the header for a
/// write-only workload, so fio's intact blocks in place pass, with verify_strict=0 as without
/// it (verify_strict=1, fiox's identity check, reports fio's blocks as another writer's).
/// Damaged data, a damaged header and a block copied to another offset fail in both tools.
#[test]
fn verify_only_checks_what_fio_wrote_as_fio_does() {
    let dir = TempDir::new("fioonly");
    for m in ["crc32c", "md5"] {
        for rw in ["write", "randwrite"] {
            let f = dir.join(&format!("{m}-{rw}.dat"));
            let (code, err, stderr) = fio_in(dir.path(), &job("w", rw, &f, m, &["--do_verify=0"]));
            assert_eq!((code, err), (0, 0), "fio {m} {rw}: {stderr}");
            let clean = std::fs::read(&f).unwrap();
            let v = job("w", rw, &f, m, &["--verify_only=1"]);
            let both = |what: &str, bad: bool| {
                let (_, err, stderr) = fio_in(dir.path(), &v);
                assert_eq!(
                    err,
                    if bad { 84 } else { 0 },
                    "fio {m} {rw} {what}: {stderr}"
                );
                for strict in [None, Some("--verify_strict=0")] {
                    let mut a = v.clone();
                    a.extend(strict.map(String::from));
                    let run = fiox_args(dir.path(), &a);
                    assert_eq!(
                        run.code,
                        i32::from(bad),
                        "fiox {m} {rw} {what} {strict:?}: {}",
                        run.stderr
                    );
                    assert_eq!(
                        run.stderr.contains("verify failed"),
                        bad,
                        "{m} {rw} {what}: {}",
                        run.stderr
                    );
                }
            };
            both("clean", false);
            let mut a = v.clone();
            a.push("--verify_strict=1".into());
            let run = fiox_args(dir.path(), &a);
            assert_eq!(run.code, 1, "fiox {m} {rw} verify_strict=1: {}", run.stderr);
            assert!(
                run.stderr.contains("written by another job or run"),
                "{}",
                run.stderr
            );
            // A flipped data byte of block 3, a flipped header byte (its offset field) of
            // block 5, block 2 copied over block 6.
            let mut copied = clean.clone();
            copied.copy_within(2 * 4096..3 * 4096, 6 * 4096);
            let mut header = clean.clone();
            header[5 * 4096 + 17] ^= 0x01;
            for (what, bytes) in [("header", header), ("copied block", copied)] {
                std::fs::write(&f, &bytes).unwrap();
                both(what, true);
            }
            std::fs::write(&f, &clean).unwrap();
            damage(&f, 3);
            both("data", true);
        }
    }
}

/// With varying write sizes (bsrange) and verify, fio puts a header at every smallest write
/// (its fixup_options sets verify_interval to min_bs); fiox does the same, so each tool's
/// verify_only passes the other's data, and a flipped byte in the file's last interval (the
/// last interval of its block: fio 3.33 reports only those) fails both.
#[test]
fn bsrange_headers_are_where_fio_puts_them() {
    let dir = TempDir::new("bsrange");
    for (writer, reader) in [("fio", "fiox"), ("fiox", "fio")] {
        let f = dir.join(&format!("{writer}.dat"));
        let args = |extra: &str| -> Vec<String> {
            [
                "--name=b",
                "--rw=randwrite",
                "--bsrange=4k-64k",
                "--size=1m",
                "--verify=crc32c",
                extra,
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("--filename={f}")])
            .collect()
        };
        let check = |bad: bool| match reader {
            "fio" => {
                let (_, err, stderr) = fio_in(dir.path(), &args("--verify_only=1"));
                assert_eq!(
                    err,
                    if bad { 84 } else { 0 },
                    "fio, damaged {bad}: {stderr}"
                );
            }
            _ => {
                let run = fiox_args(dir.path(), &args("--verify_only=1"));
                assert_eq!(
                    run.code,
                    i32::from(bad),
                    "fiox, damaged {bad}: {}",
                    run.stderr
                );
            }
        };
        match writer {
            "fio" => {
                let (code, err, stderr) = fio_in(dir.path(), &args("--do_verify=0"));
                assert_eq!((code, err), (0, 0), "fio: {stderr}");
            }
            _ => {
                let run = fiox_args(dir.path(), &args("--do_verify=0"));
                assert_eq!(run.code, 0, "fiox: {}", run.stderr);
            }
        }
        check(false);
        damage_at(&f, (1 << 20) - 1000);
        check(true);
    }
}

/// fio's verify_state_save file loads in fiox's verify_only run and fiox's in fio's; both
/// check every block of the other's data and find the damage.
#[test]
fn verify_state_files_load_in_both_tools() {
    for (writer, reader) in [("fio", "fiox"), ("fiox", "fio")] {
        let dir = TempDir::new(&format!("vstate-{writer}"));
        let f = dir.join("data");
        let w = job(
            "st",
            "write",
            &f,
            "sha256",
            &["--do_verify=0", "--iodepth=4"],
        );
        if writer == "fio" {
            let (code, err, stderr) = fio_in(dir.path(), &w);
            assert_eq!((code, err), (0, 0), "{stderr}");
        } else {
            let run = fiox_args(dir.path(), &w);
            assert_eq!(run.code, 0, "{}", run.stderr);
        }
        let state = dir.path().join("local-st-0-verify.state");
        assert!(state.exists(), "{writer} saved no state");
        let v = job(
            "st",
            "write",
            &f,
            "sha256",
            &["--verify_only=1", "--verify_state_load=1", "--iodepth=4"],
        );
        let check = |expect_bad: bool| {
            if reader == "fio" {
                let (_, err, stderr) = fio_in(dir.path(), &v);
                assert_eq!(err, if expect_bad { 84 } else { 0 }, "fio: {stderr}");
            } else {
                let mut v = v.clone();
                v.push("--output-format=json".into());
                let run = fiox_args(dir.path(), &v);
                assert_eq!(run.code, i32::from(expect_bad), "fiox: {}", run.stderr);
                if !expect_bad {
                    assert_eq!(issued(&run.json(), "read"), (16, 64 << 10));
                }
            }
        };
        check(false);
        damage(&f, 3);
        check(true);
    }
}

/// fio's "sha512" stores 128 bytes of the data instead of a digest, so fio misses damage
/// elsewhere in a block; fiox finds it in data it wrote (regenerated from the header), and,
/// like fio, cannot tell in data fio wrote.
#[test]
fn sha512_damage_fio_cannot_see() {
    let dir = TempDir::new("sha512");
    let f = dir.join("fiox.dat");
    let w = job("w", "write", &f, "sha512", &["--do_verify=0"]);
    assert_eq!(fiox_args(dir.path(), &w).code, 0);
    damage_at(&f, 2 * 4096 + 2000);
    let r = job("r", "read", &f, "sha512", &[]);
    let (_, err, stderr) = fio_in(dir.path(), &r);
    assert_eq!(err, 0, "fio's sha512 covers this byte after all: {stderr}");
    let run = fiox_args(dir.path(), &r);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("1 bytes differ, first at offset 10192"),
        "{}",
        run.stderr
    );
    let g = dir.join("fio.dat");
    let w = job("w", "write", &g, "sha512", &["--do_verify=0"]);
    assert_eq!(fio_in(dir.path(), &w).1, 0);
    damage_at(&g, 2 * 4096 + 2000);
    let r = job("r", "read", &g, "sha512", &[]);
    assert_eq!(fio_in(dir.path(), &r).1, 0);
    assert_eq!(fiox_args(dir.path(), &r).code, 0);
}

/// Pattern files in `dir`: `short.bin` (13 bytes) and `long.bin` (700 bytes: more than fio's
/// 512-byte pattern holds, so both tools use its first bytes only).
fn pattern_files(dir: &Path) {
    std::fs::write(dir.join("short.bin"), b"fiox\x00pattern\xff").unwrap();
    let long: Vec<u8> = (0..700u32).map(|i| (i * 7 + i / 256) as u8).collect();
    std::fs::write(dir.join("long.bin"), long).unwrap();
}

/// `buffer_pattern` and `verify_pattern` in every form fio's parser takes, 'files' too: the
/// bytes both tools write are the same, byte for byte.
#[test]
fn patterns_write_fios_bytes() {
    let dir = TempDir::new("patterns");
    pattern_files(dir.path());
    let forms = [
        "\"abcd\"-120xdeadface",
        "0xFF0X1",
        "-1024",
        "66",
        "0xabc\"x\"7",
        "\"123\"0xFFeeCC",
        "'short.bin'",
        "\"ab\"'short.bin'7",
        "0xdead'long.bin'",
    ];
    let mut n = 0;
    for form in forms {
        for (opt, extra) in [
            ("buffer_pattern", vec![]),
            ("verify_pattern", vec!["--verify=pattern", "--do_verify=0"]),
        ] {
            let mut files = Vec::new();
            for tool in ["fio", "fiox"] {
                n += 1;
                let f = dir.join(&format!("{tool}-{n}"));
                let mut a = vec![
                    "--name=p".to_string(),
                    "--rw=write".into(),
                    "--bs=4k".into(),
                    "--size=16k".into(),
                    format!("--filename={f}"),
                    format!("--{opt}={form}"),
                ];
                a.extend(extra.iter().map(|s| s.to_string()));
                if tool == "fio" {
                    let (code, _, stderr) = fio_in(dir.path(), &a);
                    assert_eq!(code, 0, "fio {opt}={form}: {stderr}");
                } else {
                    let r = fiox_args(dir.path(), &a);
                    assert_eq!(r.code, 0, "fiox {opt}={form}: {}", r.stderr);
                }
                files.push(std::fs::read(&f).unwrap());
            }
            assert!(
                files[0] == files[1],
                "{opt}={form}: bytes differ from fio's"
            );
        }
    }
    // %o: the offset of each write pasted into the pattern, checked by fio's verify.
    let f = dir.join("offsets");
    let a = job(
        "w",
        "write",
        &f,
        "pattern_hdr",
        &[
            "--verify=pattern",
            "--verify_pattern=-100xab\"1\"%o\"2\"",
            "--do_verify=0",
        ],
    );
    assert_eq!(fiox_args(dir.path(), &a).code, 0);
    let r = job(
        "r",
        "read",
        &f,
        "pattern_hdr",
        &["--verify=pattern", "--verify_pattern=-100xab\"1\"%o\"2\""],
    );
    let (_, err, stderr) = fio_in(dir.path(), &r);
    assert_eq!(err, 0, "{stderr}");
}

/// The queued engines' batch paths (io_uring's ring loop, libaio's) fill every write's
/// buffer: with `refill_buffers` each of fio's random writes in batches carries data of its
/// own, and so does each of fiox's (a write sent without its fill would repeat what its
/// buffer held for an earlier write: 16 buffers for 512 blocks).
#[test]
fn batched_queued_writes_are_each_filled() {
    let dir = TempDir::new("batchbytes");
    for engine in ["io_uring", "libaio"] {
        for tool in ["fio", "fiox"] {
            let f = dir.join(&format!("{tool}-{engine}"));
            let a: Vec<String> = [
                "--name=b",
                "--rw=randwrite",
                "--bs=4k",
                "--size=2m",
                "--iodepth=16",
                "--iodepth_batch_submit=4",
                "--iodepth_batch_complete_min=4",
                "--refill_buffers=1",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("--ioengine={engine}"), format!("--filename={f}")])
            .collect();
            if tool == "fio" {
                let (code, _, stderr) = fio_in(dir.path(), &a);
                assert_eq!(code, 0, "fio {engine}: {stderr}");
            } else {
                let r = fiox_args(dir.path(), &a);
                assert_eq!(r.code, 0, "fiox {engine}: {}", r.stderr);
            }
            let data = std::fs::read(&f).unwrap();
            assert_eq!(data.len(), 2 << 20, "{tool} {engine}");
            let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
            assert_eq!(
                blocks.len(),
                512,
                "{tool} {engine}: a block repeats another"
            );
        }
    }
}

/// A verify_pattern read from a file: fiox verifies the blocks fio wrote with it (with and
/// without fio's header), and both tools find the same damage.
#[test]
fn verify_pattern_from_a_file_checks_fios_data() {
    let dir = TempDir::new("patfile");
    pattern_files(dir.path());
    for (i, extra) in [vec![], vec!["--verify=pattern"]].into_iter().enumerate() {
        let f = dir.join(&format!("data{i}"));
        let mut opts = vec!["--verify_pattern='long.bin'"];
        opts.extend(extra);
        let mut w = job("w", "write", &f, "crc32c", &opts);
        w.retain(|a| a != "--verify=crc32c");
        w.push("--do_verify=0".into());
        let (code, err, stderr) = fio_in(dir.path(), &w);
        assert_eq!((code, err), (0, 0), "fio: {stderr}");
        let mut r = job("r", "read", &f, "crc32c", &opts);
        r.retain(|a| a != "--verify=crc32c");
        let run = fiox_args(dir.path(), &r);
        assert_eq!(run.code, 0, "fiox on fio's data: {}", run.stderr);
        damage_at(&f, 6 * 4096 + 700);
        let run = fiox_args(dir.path(), &r);
        assert_eq!(run.code, 1, "damage not found: {}", run.stderr);
        assert!(run.stderr.contains("offset 24576"), "{}", run.stderr);
        let (_, err, stderr) = fio_in(dir.path(), &r);
        assert_eq!(err, 84, "fio on damaged data: {stderr}");
    }
}

/// Block sizes fio reads leniently (trailing characters after a number and its unit ignored,
/// bsrange split at its first separator, bssplit shares read with atoi) give fio's totals, and
/// fiox says what was ignored.
#[test]
fn lenient_block_sizes_match_fio() {
    let dir = TempDir::new("lenient");
    for (i, opt) in [
        "--bs=65536)",
        "--bsrange=16k/25:16k:25:2k:25:4k/25",
        "--bssplit=8k/50):8k/x",
        "--bs=4kfoo",
    ]
    .into_iter()
    .enumerate()
    {
        let f = dir.join(&format!("f{i}"));
        let g = dir.join(&format!("g{i}"));
        let a = |file: &str| {
            vec![
                "--name=l".to_string(),
                "--rw=write".into(),
                "--size=1m".into(),
                format!("--filename={file}"),
                opt.to_string(),
            ]
        };
        let fa = a(&g);
        let fa: Vec<&str> = fa.iter().map(String::as_str).collect();
        let theirs = issued(&fio_json(&fa), "write");
        let mut xa = a(&f);
        xa.push("--output-format=json".into());
        let run = fiox_args(dir.path(), &xa);
        assert_eq!(run.code, 0, "{opt}: {}", run.stderr);
        assert_eq!(
            issued(&run.json(), "write"),
            theirs,
            "{opt}: totals differ from fio's"
        );
        // With JSON output the parser's notes are in the document (stderr stays quiet).
        let notes = run.json()["fiox"]["notes"].to_string();
        assert!(notes.contains("ignored"), "{opt}: no note: {notes}");
        assert!(run.stderr.is_empty(), "{opt}: {}", run.stderr);
    }
    // What fio refuses, fiox refuses.
    for opt in ["--bs=k", "--bsrange=4k", "--bssplit=x/10"] {
        let run = fiox_args(
            dir.path(),
            &["--name=l".into(), opt.into(), "--parse-only".into()],
        );
        assert_eq!(run.code, 1, "{opt} accepted");
    }
}

/// unified_rw_reporting=mixed (1): one `mixed` direction with every I/O, in normal, JSON and
/// terse output, as fio; none/0 report per direction (`both`: tests/cmdprio.rs).
#[test]
fn unified_rw_reporting_mixed_as_fio() {
    let dir = TempDir::new("unified");
    let args = |file: &str, v: &str, fmt: &str| {
        vec![
            "--name=u".to_string(),
            "--rw=randrw".into(),
            "--bs=4k".into(),
            "--size=1m".into(),
            format!("--filename={file}"),
            format!("--unified_rw_reporting={v}"),
            format!("--output-format={fmt}"),
        ]
    };
    let fio_out = |a: &[String]| {
        let o = Command::new("fio")
            .current_dir(dir.path())
            .args(a)
            .output()
            .expect("run fio");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let (f, g) = (dir.join("x"), dir.join("f"));
    for v in ["mixed", "1"] {
        let theirs = fio_out(&args(&f, v, "normal"));
        let run = fiox_args(dir.path(), &args(&g, v, "normal"));
        assert_eq!(run.code, 0, "{}", run.stderr);
        for out in [&theirs, &run.stdout] {
            assert!(out.contains("  mixed: IOPS="), "{out}");
            assert!(out.contains("  MIXED: bw="), "{out}");
            assert!(out.contains("issued rwts: total=256,0,0,0"), "{out}");
            assert!(
                !out.contains("  read: IOPS") && !out.contains(" READ: bw"),
                "{out}"
            );
        }
        let theirs: serde_json::Value =
            serde_json::from_str(&fio_out(&args(&f, v, "json"))).unwrap();
        let run = fiox_args(dir.path(), &args(&g, v, "json"));
        let ours = run.json();
        for j in [&theirs["jobs"][0], &ours["jobs"][0]] {
            assert_eq!(j["mixed"]["total_ios"], 256, "{j}");
            assert_eq!(j["mixed"]["io_bytes"], 1 << 20);
            for k in ["read", "write", "trim", "sync"] {
                assert!(j.get(k).is_none(), "{k} in {j}");
            }
        }
        let t = fio_out(&args(&f, v, "terse"));
        let theirs: Vec<&str> = t.lines().last().unwrap().split(';').collect();
        let run = fiox_args(dir.path(), &args(&g, v, "terse"));
        let ours: Vec<&str> = run.stdout.lines().last().unwrap().split(';').collect();
        // One direction only (fio leaves the write section out), holding every I/O.
        assert_eq!(ours.len(), theirs.len(), "{ours:?}");
        assert_eq!((ours[5], theirs[5]), ("1024", "1024"));
    }
    let run = fiox_args(dir.path(), &args(&g, "0", "normal"));
    assert!(run.stdout.contains("  read: IOPS="), "{}", run.stdout);
}

/// zonemode=strided (zonesize, zonerange, zoneskip): the same offsets as fio, in the same
/// order (sequential and random), read from both tools' latency logs; fio's refusals kept.
#[test]
fn strided_zones_issue_fios_offsets() {
    let dir = TempDir::new("strided");
    let cases: [&[&str]; 4] = [
        &["--rw=write"],
        &["--rw=randread"],
        &["--rw=randwrite", "--zoneskip=512k"],
        &["--rw=read", "--zonesize=256k", "--zonerange=64k"],
    ];
    for (i, extra) in cases.into_iter().enumerate() {
        let mut offsets = Vec::new();
        for tool in ["fio", "fiox"] {
            let f = dir.join(&format!("{tool}{i}"));
            let log = dir.join(&format!("{tool}{i}log"));
            let mut a = vec![
                "--name=z".to_string(),
                "--bs=4k".into(),
                "--size=4m".into(),
                "--zonemode=strided".into(),
                "--zonesize=64k".into(),
                "--zonerange=1m".into(),
                format!("--filename={f}"),
                format!("--write_lat_log={log}"),
                "--log_offset=1".into(),
                "--output=/dev/null".into(),
            ];
            a.extend(extra.iter().map(|s| s.to_string()));
            if tool == "fio" {
                let (code, _, stderr) = fio_in(dir.path(), &a);
                assert_eq!(code, 0, "{stderr}");
            } else {
                let r = fiox_args(dir.path(), &a);
                assert_eq!(r.code, 0, "{}", r.stderr);
            }
            let text = std::fs::read_to_string(format!("{log}_clat.1.log")).unwrap();
            let offs: Vec<u64> = text
                .lines()
                .map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap())
                .collect();
            offsets.push(offs);
        }
        assert_eq!(offsets[0].len(), 1024, "{extra:?}");
        assert!(
            offsets[0] == offsets[1],
            "{extra:?}: offsets differ from fio's"
        );
    }
    // fio refuses zonesize without zonemode=strided, and strided without zonesize.
    for a in [&["--zonesize=64k"][..], &["--zonemode=strided"]] {
        let f = dir.join("r");
        let mut args = vec![
            "--name=z".to_string(),
            "--rw=read".into(),
            "--size=1m".into(),
            format!("--filename={f}"),
        ];
        args.extend(a.iter().map(|s| s.to_string()));
        let (code, _, _) = fio_in(dir.path(), &args);
        assert_ne!(code, 0, "fio accepted {a:?}");
        let r = fiox_args(dir.path(), &args);
        assert_eq!(r.code, 1, "fiox accepted {a:?}");
        assert!(r.stderr.contains("zone"), "{}", r.stderr);
    }
}

/// verify_offset moves the header inside each interval as fio does: each tool verifies the
/// other's blocks.
#[test]
fn verify_offset_layout_is_fios() {
    let dir = TempDir::new("voffset");
    let opts = ["--verify_offset=512", "--verify_interval=1k"];
    for writer in ["fio", "fiox"] {
        let f = dir.join(&format!("{writer}.dat"));
        let mut w = job("w", "write", &f, "md5", &["--do_verify=0"]);
        w.extend(opts.iter().map(|s| s.to_string()));
        let mut r = job("r", "read", &f, "md5", &[]);
        r.extend(opts.iter().map(|s| s.to_string()));
        if writer == "fio" {
            assert_eq!(fio_in(dir.path(), &w).0, 0);
            let run = fiox_args(dir.path(), &r);
            assert_eq!(run.code, 0, "{}", run.stderr);
        } else {
            assert_eq!(fiox_args(dir.path(), &w).code, 0);
            let (code, err, stderr) = fio_in(dir.path(), &r);
            assert_eq!((code, err), (0, 0), "{stderr}");
        }
    }
}

/// The dedupe modes write fio 3.33's bytes: `dedupe_percentage` in repeat mode (fiox used to
/// draw the dedupe decisions from a stream of its own), `dedupe_mode=working_set` alone, with
/// compression and with a working set of less than one page, and `dedupe_global` across two
/// jobs, each of which repeats pages of the other's stream.
#[test]
fn dedupe_modes_write_fios_bytes() {
    let dir = TempDir::new("dedupe");
    let cases: [&[&str]; 5] = [
        &["--dedupe_percentage=50"],
        &["--dedupe_percentage=50", "--dedupe_mode=working_set"],
        &[
            "--dedupe_percentage=30",
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=20",
            "--buffer_compress_percentage=40",
            "--rw=randwrite",
        ],
        &[
            "--dedupe_percentage=50",
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=1",
        ],
        &[
            "--dedupe_percentage=60",
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=20",
            "--dedupe_global=1",
        ],
    ];
    for (n, extra) in cases.iter().enumerate() {
        let mut bytes = Vec::new();
        for tool in ["fio", "fiox"] {
            let mut a = vec![
                "--rw=write".to_string(),
                "--bs=4k".into(),
                "--size=256k".into(),
            ];
            a.extend(extra.iter().map(|s| s.to_string()));
            let files: Vec<String> = (0..2)
                .map(|j| dir.join(&format!("{tool}-{n}-{j}")))
                .collect();
            for (j, f) in files.iter().enumerate() {
                a.push(format!("--name=j{j}"));
                a.push(format!("--filename={f}"));
            }
            if tool == "fio" {
                let (code, _, stderr) = fio_in(dir.path(), &a);
                assert_eq!(code, 0, "fio {extra:?}: {stderr}");
            } else {
                let r = fiox_args(dir.path(), &a);
                assert_eq!(r.code, 0, "fiox {extra:?}: {}", r.stderr);
            }
            bytes.push(
                files
                    .iter()
                    .map(|f| std::fs::read(f).unwrap())
                    .collect::<Vec<_>>(),
            );
        }
        for (j, (fio, fiox)) in bytes[0].iter().zip(&bytes[1]).enumerate() {
            assert!(fio == fiox, "{extra:?}: job {j}'s bytes differ from fio's");
        }
    }
}

/// fio refuses a dedupe working set it cannot size or reach; so does fiox, before any I/O.
#[test]
fn dedupe_working_set_is_refused_where_fio_refuses_it() {
    let dir = TempDir::new("dedupe-refused");
    let f = dir.join("f");
    for (extra, says) in [
        (
            vec!["--size=1m", "--dedupe_percentage=96"],
            "cannot be reached",
        ),
        (vec!["--dedupe_percentage=50"], "needs size="),
    ] {
        let mut a = vec![
            "--name=d".to_string(),
            "--rw=write".into(),
            format!("--filename={f}"),
            "--dedupe_mode=working_set".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        if std::path::Path::new(&f).exists() || extra.len() == 1 {
            std::fs::write(&f, vec![0u8; 65536]).unwrap();
        }
        assert_ne!(fio_in(dir.path(), &a).0, 0, "fio accepts {extra:?}");
        let r = fiox_args(dir.path(), &a);
        assert_eq!(r.code, 1, "{extra:?}");
        assert!(r.stderr.contains(says), "{}", r.stderr);
    }
}
