//! Integration tests of the verify options the runner acts on: verify_only (check an earlier
//! run's data without writing), verify_state_save/verify_state_load (a time-bound write run
//! saves what it wrote, a verify_only run loads it), verify_dump and verify_fatal. Failures
//! must name the file, offset and length, set err=84 (EILSEQ) and exit non-zero.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;

const EILSEQ: i64 = libc::EILSEQ as i64;

fn verify_job(dir: &Path, f: &str, rw: &str, extra: &[&str]) -> Run {
    let mut a = vec![
        "--name=v".to_string(),
        format!("--rw={rw}"),
        "--bs=4k".into(),
        "--size=1m".into(),
        format!("--filename={f}"),
        "--verify=crc32c".into(),
        "--output-format=json".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    fiox_in(dir, &a)
}

/// fiox's advice of a JSON run (run-wide and per job `fiox.warnings`), as text.
fn advice(r: &Run) -> String {
    let v = r.json();
    let jobs = v["jobs"].as_array().cloned().unwrap_or_default();
    let mut all = vec![v["fiox"]["warnings"].clone()];
    all.extend(jobs.iter().map(|j| j["fiox"]["warnings"].clone()));
    serde_json::Value::Array(all).to_string()
}

fn flip(f: &str, at: usize) {
    let mut data = std::fs::read(f).unwrap();
    data[at] ^= 0x04;
    std::fs::write(f, &data).unwrap();
}

/// verify_only checks what the write run left without writing; a flipped bit is found and
/// named, with err=84 and exit status 1.
#[test]
fn verify_only_checks_an_earlier_run() {
    let dir = TempDir::new("vonly");
    let f = dir.join("f");
    let w = verify_job(dir.path(), &f, "randwrite", &[]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let before = std::fs::read(&f).unwrap();
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    let r = verify_job(dir.path(), &f, "randwrite", &["--verify_only=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    // As fio 3.33's, the write section holds the replayed writes (bytes and I/Os, no time);
    // the file's bytes and times below show that none was issued.
    assert_eq!(issued(&v, "write"), (256, 1 << 20), "the replayed writes");
    assert_eq!(v["jobs"][0]["write"]["runtime"], 0);
    assert_eq!(issued(&v, "read"), (256, 1 << 20));
    if need_fio() {
        let fdir = TempDir::new("vonly-fio");
        let ff = fdir.join("f");
        let job = |extra: &[&str]| {
            let mut a = vec![
                "--name=v".to_string(),
                "--rw=randwrite".into(),
                "--bs=4k".into(),
                "--size=1m".into(),
                format!("--filename={ff}"),
                "--verify=crc32c".into(),
            ];
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        };
        let w = job(&[]);
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        assert_eq!(tool_json("fio", fdir.path(), &w, Some(60)).0, 0);
        let o = job(&["--verify_only=1"]);
        let o: Vec<&str> = o.iter().map(String::as_str).collect();
        let (code, theirs, _) = tool_json("fio", fdir.path(), &o, Some(60));
        assert_eq!(code, 0);
        for d in ["write", "read"] {
            assert_eq!(issued(&v, d), issued(&theirs, d), "{d} vs fio");
        }
    }
    assert_eq!(std::fs::read(&f).unwrap(), before);
    assert_eq!(std::fs::metadata(&f).unwrap().modified().unwrap(), mtime);
    // verify_only writes nothing, so --readonly allows it.
    let r = verify_job(
        dir.path(),
        &f,
        "randwrite",
        &["--verify_only=1", "--readonly"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    flip(&f, 7 * 4096 + 1000);
    let r = verify_job(dir.path(), &f, "randwrite", &["--verify_only=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("{f}: verify failed at offset 28672, length 4096")),
        "{}",
        r.stderr
    );
    let v = r.json();
    assert_eq!(v["jobs"][0]["error"], EILSEQ);
    let warnings = v["jobs"][0]["fiox"]["warnings"].as_array().unwrap();
    let w = warnings
        .iter()
        .find(|w| w["code"] == "verify-failed")
        .unwrap_or_else(|| panic!("no verify-failed warning: {v}"));
    let want = format!("1 block(s) failed verification: {f}: verify failed at offset 28672");
    assert!(w["message"].as_str().unwrap().starts_with(&want), "{v}");
    // The normal report's job line carries fio's err= with the description.
    let r = verify_job(
        dir.path(),
        &f,
        "randwrite",
        &["--verify_only=1", "--output-format=normal"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let want = format!("err=84 ({f}: verify failed at offset 28672, length 4096");
    assert!(r.stdout.contains(&want), "{}", r.stdout);
}

/// verify_only needs data to check: a missing file is a clear error, not a layout.
#[test]
fn verify_only_on_a_missing_file_is_an_error() {
    let dir = TempDir::new("vonly-missing");
    let f = dir.join("none");
    let r = verify_job(dir.path(), &f, "write", &["--verify_only=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("does not exist"), "{}", r.stderr);
    assert!(!Path::new(&f).exists(), "verify_only created the file");
}

/// A time-bound write run saves its write log (fio's local-<job>-<index>-verify.state in the
/// current directory); verify_only needs it for a time_based job and checks with it.
#[test]
fn verify_state_is_saved_and_loaded() {
    let dir = TempDir::new("vstate");
    let f = dir.join("f");
    let timed = ["--time_based", "--runtime=300ms"];
    let w = verify_job(dir.path(), &f, "write", &timed);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let state = dir.path().join("local-v-0-verify.state");
    assert!(state.exists(), "no state file: {:?}", dir.entries());
    let mut only = timed.to_vec();
    only.push("--verify_only=1");
    let r = verify_job(dir.path(), &f, "write", &only);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("verify_state_load=1"), "{}", r.stderr);
    only.push("--verify_state_load=1");
    let r = verify_job(dir.path(), &f, "write", &only);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        issued(&r.json(), "read"),
        (256, 1 << 20),
        "every block written"
    );
    flip(&f, 100);
    let r = verify_job(dir.path(), &f, "write", &only);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("offset 0, length 4096"), "{}", r.stderr);
    // Another seed is another run: its state is refused, naming both.
    let mut other = only.clone();
    other.push("--randseed=5");
    let r = verify_job(dir.path(), &f, "write", &other);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("was saved by another job or seed (job 0, seed 0x")
            && r.stderr.contains("; this job is job 0, seed 0x"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(&state).unwrap();
    let r = verify_job(dir.path(), &f, "write", &only);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("verify_state_load"), "{}", r.stderr);
}

/// verify_dump writes the received and expected interval next to the data file; verify_fatal
/// stops at the first failure, otherwise every bad block is counted.
#[test]
fn verify_dump_and_fatal() {
    let dir = TempDir::new("vdump");
    let f = dir.join("f");
    assert_eq!(verify_job(dir.path(), &f, "write", &[]).code, 0);
    flip(&f, 2 * 4096 + 200);
    flip(&f, 9 * 4096 + 200);
    let r = verify_job(dir.path(), &f, "read", &["--verify_dump=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("2 block(s) failed verification"),
        "{}",
        r.stderr
    );
    let received = dir.path().join("f.8192.received");
    let expected = dir.path().join("f.8192.expected");
    assert!(
        r.stderr.contains(&received.display().to_string()),
        "{}",
        r.stderr
    );
    let (got, want) = (
        std::fs::read(&received).unwrap(),
        std::fs::read(&expected).unwrap(),
    );
    let data = std::fs::read(&f).unwrap();
    assert_eq!(got, data[8192..12288]);
    assert_eq!(want.len(), 4096);
    let diff: Vec<usize> = (0..4096).filter(|&i| got[i] != want[i]).collect();
    assert_eq!(diff, vec![200], "exactly the flipped byte differs");
    // verify_async checks on other threads and finds the same blocks.
    let r = verify_job(dir.path(), &f, "read", &["--verify_async=2"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("2 block(s) failed verification"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("verify_async"),
        "no warning: {}",
        r.stderr
    );
    let only = ["--verify_only=1", "--verify_async=3"];
    let r = verify_job(dir.path(), &f, "write", &only);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("2 block(s) failed verification"),
        "{}",
        r.stderr
    );
    let r = verify_job(dir.path(), &f, "read", &["--verify_fatal=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("1 block(s) failed verification"),
        "{}",
        r.stderr
    );
    assert_eq!(r.json()["jobs"][0]["error"], EILSEQ);
}

/// One repeat of the test patterns below for the write at `offset`.
fn offset_pattern(pattern: &str, offset: u64) -> Vec<u8> {
    match pattern {
        "%o" => offset.to_le_bytes().to_vec(),
        "0xdeadbeef%o\"ab\"" => {
            [&[0xde, 0xad, 0xbe, 0xef], &offset.to_le_bytes()[..], b"ab"].concat()
        }
        _ => unreachable!("no expectation for {pattern}"),
    }
}

/// A 4 KiB block filled with `offset_pattern`.
fn offset_block(pattern: &str, offset: u64) -> Vec<u8> {
    let unit = offset_pattern(pattern, offset);
    (0..4096).map(|i| unit[i % unit.len()]).collect()
}

/// `verify_pattern` with `%o`: each write carries its own offset (8 bytes, little-endian) where
/// `%o` stands, repeated over the block. The file is byte for byte what fio 3.33 writes for the
/// same job (when fio is installed), verification passes, and a block copied over another one
/// (same pattern, wrong offset) is reported at the block it landed on.
#[test]
fn verify_pattern_carries_the_write_offset() {
    for pattern in ["%o", "0xdeadbeef%o\"ab\""] {
        let dir = TempDir::new("voffpat");
        let f = dir.join("f");
        let pat_arg = format!("--verify_pattern={pattern}");
        let opts = ["--bs=4k", "--size=64k", "--verify=pattern", &pat_arg];
        let file_arg = format!("--filename={f}");
        let mut args = vec!["--name=p", "--rw=write", "--output-format=json", &file_arg];
        args.extend(opts);
        let w = fiox_in(dir.path(), &args);
        assert_eq!(w.code, 0, "{pattern}: {}", w.stderr);
        assert_eq!(issued(&w.json(), "read"), (16, 64 << 10), "verified all");
        let data = std::fs::read(&f).unwrap();
        for blk in 0..16u64 {
            let b = &data[blk as usize * 4096..][..4096];
            assert!(
                b == offset_block(pattern, blk * 4096),
                "{pattern}: block {blk}"
            );
        }
        if need_fio() {
            let g = dir.join("fio-file");
            let fio_file = format!("--filename={g}");
            let mut fa = vec!["--name=p", "--rw=write", "--output-format=terse", &fio_file];
            fa.extend(opts);
            sh_in(dir.path(), "fio", &fa).unwrap();
            assert!(
                std::fs::read(&g).unwrap() == data,
                "{pattern}: fio wrote other bytes"
            );
        }
        // Block 2 copied over block 9: right pattern, wrong offset inside it.
        let mut bad = data.clone();
        bad.copy_within(2 * 4096..3 * 4096, 9 * 4096);
        std::fs::write(&f, &bad).unwrap();
        let mut only = args.clone();
        only.push("--verify_only=1");
        let r = fiox_in(dir.path(), &only);
        assert_eq!(r.code, 1, "{pattern}: {}", r.stderr);
        assert!(
            r.stderr.contains("1 block(s) failed verification"),
            "{pattern}: {}",
            r.stderr
        );
        let want = offset_block(pattern, 9 * 4096);
        let found = &bad[9 * 4096..][..4096];
        let diff: Vec<usize> = (0..4096).filter(|&i| want[i] != found[i]).collect();
        // 0x2000 and 0x9000 little-endian differ in their second byte only: once per repeat
        // of the pattern (both patterns have that byte in their last, partial repeat too).
        let len = offset_pattern(pattern, 0).len();
        let second = if pattern == "%o" { 1 } else { 5 };
        assert!(diff.iter().all(|i| i % len == second), "{diff:?}");
        assert_eq!(diff.len(), 4096usize.div_ceil(len));
        assert!(
            r.stderr.contains(&format!(
                "{f}: verify failed at offset 36864, length 4096 (block offset 36864, length 4096): \
                 pattern mismatch at offset {}: expected 0x90, found 0x20 ({} bytes differ)",
                9 * 4096 + diff[0],
                diff.len()
            )),
            "{pattern}: {}",
            r.stderr
        );
    }
}

/// As in fio, `verify_pattern` without `verify=` turns verification on: each block gets a
/// header and the pattern, and the verify phase reads every block back (fio reads as many);
/// a `verify=` method given with it wins, in either order.
#[test]
fn verify_pattern_alone_verifies_with_a_header() {
    let dir = TempDir::new("vpatonly");
    let f = dir.join("f");
    let file_arg = format!("--filename={f}");
    let base = ["--name=p", "--rw=write", "--bs=4k", "--size=64k", &file_arg];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        a.push("--output-format=json");
        let r = fiox_in(dir.path(), &a);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        (issued(&r.json(), "read"), std::fs::read(&f).unwrap())
    };
    let (reads, data) = run(&["--verify_pattern=0xab"]);
    assert_eq!(reads, (16, 64 << 10), "the verify phase ran");
    // fio's header (magic 0xacca, verify type 17 = pattern with header, length 4096; 40
    // bytes), then the pattern.
    assert_eq!(&data[..6], b"\xca\xac\x11\x00\x00\x10");
    assert!(data[40..4096].iter().all(|&b| b == 0xab));
    if need_fio() {
        let mut a = base.to_vec();
        a.push("--verify_pattern=0xab");
        let g = dir.join("fio-file");
        let fio_file = format!("--filename={g}");
        a[4] = &fio_file;
        assert_eq!(issued(&fio_json(&a), "read"), reads, "vs fio");
    }
    // With %o the pattern's phase runs from the start of each write, header included, as in
    // fio: past the 40-byte header (the same layout in both tools) every byte is fio's.
    let (_, data) = run(&["--verify_pattern=\"abc\"%o"]);
    for blk in 0..16 {
        let unit = [&b"abc"[..], &(blk as u64 * 4096).to_le_bytes()].concat();
        let b = &data[blk * 4096..][..4096];
        assert!((40..4096).all(|i| b[i] == unit[i % 11]), "block {blk}");
    }
    if need_fio() {
        let g = dir.join("fio-file2");
        let fio_file = format!("--filename={g}");
        let mut a = base.to_vec();
        a[4] = &fio_file;
        a.extend(["--verify_pattern=\"abc\"%o", "--output-format=terse"]);
        sh_in(dir.path(), "fio", &a).unwrap();
        let theirs = std::fs::read(&g).unwrap();
        for blk in 0..16 {
            let r = blk * 4096 + 40..(blk + 1) * 4096;
            assert!(
                theirs[r.clone()] == data[r],
                "block {blk}: data part differs from fio's"
            );
        }
    }
    for order in [
        ["--verify_pattern=0xab", "--verify=crc32c"],
        ["--verify=crc32c", "--verify_pattern=0xab"],
    ] {
        let (reads, data) = run(&order);
        assert_eq!(reads, (16, 64 << 10), "{order:?}");
        assert_eq!(&data[..4], b"\xca\xac\x05\x00", "{order:?}: crc32c header");
    }
}

/// `verify=pattern_hdr` (fio 3.42's name for fio's VERIFY_PATTERN) is the header + pattern
/// verify that `verify_pattern` alone gives: the same block layout (verify type 17), the verify
/// phase reads every block, verify_only finds a flipped byte, and without a pattern the job
/// fails naming verify_pattern. fiox used to refuse the job.
#[test]
fn verify_pattern_hdr_checks_a_header_and_the_pattern() {
    let dir = TempDir::new("vpathdr");
    let f = dir.join("f");
    let opts = [
        "--size=64k",
        "--verify=pattern_hdr",
        "--verify_pattern=0xab",
    ];
    let w = verify_job(dir.path(), &f, "write", &opts);
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(
        issued(&w.json(), "read"),
        (16, 64 << 10),
        "the verify phase ran"
    );
    let data = std::fs::read(&f).unwrap();
    for blk in data.chunks(4096) {
        assert_eq!(&blk[..6], b"\xca\xac\x11\x00\x00\x10");
        assert!(blk[40..].iter().all(|&b| b == 0xab));
    }
    let mut only = opts.to_vec();
    only.push("--verify_only=1");
    let r = verify_job(dir.path(), &f, "write", &only);
    assert_eq!(r.code, 0, "{}", r.stderr);
    flip(&f, 3 * 4096 + 1000);
    let r = verify_job(dir.path(), &f, "write", &only);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("verify failed at offset 12288"),
        "{}",
        r.stderr
    );
    let r = verify_job(
        dir.path(),
        &f,
        "write",
        &["--size=64k", "--verify=pattern_hdr"],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("needs verify_pattern="), "{}", r.stderr);
}

/// numjobs with offset_increment: four jobs write and verify their own quarter of one file;
/// verify_only (same job line) re-checks all four, and a block zeroed outside fiox in the third
/// job's quarter is reported at its offset, by that job only.
#[test]
fn numjobs_with_offset_increment_verify_their_own_regions() {
    let dir = TempDir::new("vnumjobs");
    let f = dir.join("f");
    let file_arg = format!("--filename={f}");
    let args = [
        "--name=nj",
        &file_arg,
        "--rw=randwrite",
        "--bs=4k",
        "--size=256k",
        "--numjobs=4",
        "--offset_increment=256k",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let jobs = |r: &Run| -> Vec<(u64, u64, u64)> {
        r.json()["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| {
                let n = |d: &str| j[d]["total_ios"].as_u64().unwrap();
                (j["error"].as_u64().unwrap(), n("write"), n("read"))
            })
            .collect()
    };
    let w = fiox_in(dir.path(), &args);
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(jobs(&w), vec![(0, 64, 64); 4]);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20);
    let mut only = args.to_vec();
    only.push("--verify_only=1");
    let r = fiox_in(dir.path(), &only);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The replayed writes are counted as writes, as fio 3.33 counts them; none was issued.
    assert_eq!(jobs(&r), vec![(0, 64, 64); 4]);
    // Block 150 (offset 614400) is in the third job's quarter (512k..768k).
    let mut data = std::fs::read(&f).unwrap();
    data[150 * 4096..151 * 4096].fill(0);
    std::fs::write(&f, &data).unwrap();
    let r = fiox_in(dir.path(), &only);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let errs: Vec<u64> = jobs(&r).iter().map(|j| j.0).collect();
    assert_eq!(errs, [0, 0, 84, 0], "{}", r.stderr);
    let bad: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("verify failed at offset"))
        .collect();
    assert!(!bad.is_empty(), "{}", r.stderr);
    assert!(
        bad.iter().all(|l| l.contains("offset 614400,")),
        "{}",
        r.stderr
    );
}

/// A disk-backed temporary directory (O_DIRECT needs a filesystem that supports it).
fn disk_dir(tag: &str) -> TempDir {
    TempDir::under(&std::env::temp_dir(), tag)
}

/// `iodepth_level` of a JSON report as (depth label, percent) pairs.
fn depth_levels(v: &serde_json::Value) -> Vec<(String, f64)> {
    v["jobs"][0]["iodepth_level"]
        .as_object()
        .expect("iodepth_level")
        .iter()
        .map(|(k, p)| (k.clone(), p.as_f64().unwrap()))
        .collect()
}

/// The verify phase reads through the job's engine at the job's depth, as fio's does: with
/// libaio at iodepth=8 the verify reads fill the queue, so the IO depths histogram (writes and
/// verify reads together) is ~100% at 8, the reads have submission latencies, and their count
/// is fio's.
#[test]
fn verify_phase_reads_at_the_job_depth_through_the_engine() {
    let dir = disk_dir("vdepth");
    let f = dir.join("v");
    let args = [
        "--ioengine=libaio",
        "--direct=1",
        "--iodepth=8",
        "--size=8m",
    ];
    let r = verify_job(dir.path(), &f, "randwrite", &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(issued(&v, "read"), (2048, 8 << 20));
    let levels = depth_levels(&v);
    let sum: f64 = levels.iter().map(|l| l.1).sum();
    assert!(
        (99.0..=101.0).contains(&sum),
        "depths add up to {sum}: {levels:?}"
    );
    let at8 = levels.iter().find(|l| l.0 == "8").unwrap().1;
    assert!(at8 > 95.0, "{levels:?}");
    let rd = &v["jobs"][0]["read"];
    assert_eq!(rd["slat_ns"]["N"], 2048, "verify reads are submitted: {rd}");
    if need_fio() {
        let fdir = disk_dir("vdepth-fio");
        let ff = fdir.join("v");
        let file = format!("--filename={ff}");
        let mut a = vec![
            "--name=v",
            "--rw=randwrite",
            "--bs=4k",
            &file,
            "--verify=crc32c",
        ];
        a.extend(args);
        let fv = fio_json(&a);
        assert_eq!(issued(&fv, "read"), issued(&v, "read"), "vs fio");
        let fio8 = depth_levels(&fv).iter().find(|l| l.0 == "8").unwrap().1;
        assert!((fio8 - at8).abs() < 2.0, "depth 8: fio {fio8}, fiox {at8}");
        assert_eq!(fv["jobs"][0]["read"]["slat_ns"]["N"], 2048, "fio");
    }
}

/// verify_backlog verifies each written block once (fio: 256 reads for 256 writes, whatever
/// the batch), while writing: the first verify read completes long before the last write. The
/// final verify phase checks only what the backlog did not. With do_verify=0 nothing is
/// verified, as in fio (its backlog reads the write history only do_verify keeps).
#[test]
fn verify_backlog_verifies_each_block_once() {
    let dir = TempDir::new("vbacklog1");
    let f = dir.join("f");
    for (extra, reads) in [
        (&["--verify_backlog=16"][..], 256),
        (&["--verify_backlog=16", "--verify_backlog_batch=4"], 256),
        (&["--verify_backlog=16", "--verify_backlog_batch=32"], 256),
        (&["--verify_backlog=16", "--do_verify=0"], 0),
        (
            &["--verify_backlog=16", "--ioengine=libaio", "--iodepth=8"],
            256,
        ),
    ] {
        let mut a = extra.to_vec();
        a.extend(["--write_lat_log=bl", "--log_offset=1"]);
        let r = verify_job(dir.path(), &f, "write", &a);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let v = r.json();
        assert_eq!(issued(&v, "write"), (256, 1 << 20), "{extra:?}");
        assert_eq!(issued(&v, "read").0, reads, "{extra:?}");
        // Completion order from the per-I/O clat log: `time, clat, ddir, bs, offset`.
        let log = std::fs::read_to_string(dir.path().join("bl_clat.1.log")).unwrap();
        let ddirs: Vec<&str> = log
            .lines()
            .map(|l| l.split(", ").nth(2).unwrap_or("?"))
            .collect();
        let first_read = ddirs.iter().position(|d| *d == "0");
        let last_write = ddirs.iter().rposition(|d| *d == "1").unwrap();
        if reads > 0 {
            let first_read = first_read.unwrap_or(usize::MAX);
            assert!(
                first_read < last_write / 2,
                "{extra:?}: first verify read at completion {first_read}, last write at {last_write}"
            );
        } else {
            assert_eq!(first_read, None, "{extra:?}");
        }
        if need_fio() {
            let file = format!("--filename={}", dir.join("fio"));
            let mut a = vec![
                "--name=v",
                "--rw=write",
                "--bs=4k",
                "--size=1m",
                &file,
                "--verify=crc32c",
            ];
            a.extend(extra);
            let fv = fio_json(&a);
            assert_eq!(issued(&fv, "read"), issued(&v, "read"), "{extra:?}: vs fio");
        }
    }
}

/// Write a 16 MiB verified file without checking it, then damage three blocks as in the issue:
/// a byte flipped in block 7, block 100 zeroed, block 999 copied over block 1000.
fn damaged_16m(dir: &Path, f: &str, extra: &[&str]) {
    let mut a = vec!["--size=16m", "--do_verify=0"];
    a.extend(extra);
    let w = verify_job(dir, f, "write", &a);
    assert_eq!(w.code, 0, "{}", w.stderr);
    damage_three(f);
}

/// The damage: flip a byte in block 7, zero block 100, copy block 999 over 1000.
fn damage_three(f: &str) {
    const B: usize = 4096;
    let mut d = std::fs::read(f).unwrap();
    d[7 * B + 1000] ^= 0x04;
    d[100 * B..101 * B].fill(0);
    d.copy_within(999 * B..1000 * B, 1000 * B);
    std::fs::write(f, &d).unwrap();
}

/// verify_only with a read workload reads the whole file and checks every block (fio: all
/// three damaged blocks named, err=84, total_err=3, first_error=84 with
/// continue_on_error=verify). total_err/first_error appear only with continue_on_error, as in
/// fio. A trim-only workload has nothing to verify and is refused.
#[test]
fn verify_only_with_a_read_workload_checks_every_block() {
    let dir = TempDir::new("vonly-read");
    let f = dir.join("v");
    damaged_16m(dir.path(), &f, &[]);
    for rw in ["read", "randread"] {
        let only = [
            "--size=16m",
            "--verify_only=1",
            "--continue_on_error=verify",
        ];
        let r = verify_job(dir.path(), &f, rw, &only);
        assert_eq!(r.code, 1, "{rw}: {}", r.stderr);
        let v = r.json();
        let j = &v["jobs"][0];
        assert_eq!(issued(&v, "read"), (4096, 16 << 20), "{rw}");
        assert_eq!(issued(&v, "write"), (0, 0), "{rw}");
        assert_eq!(
            (&j["error"], &j["total_err"], &j["first_error"]),
            (&EILSEQ.into(), &3.into(), &EILSEQ.into()),
            "{rw}"
        );
        for off in [28672, 409600, 4096000] {
            let at = format!("{f}: verify failed at offset {off}, length 4096");
            assert!(r.stderr.contains(&at), "{rw}: {off}: {}", r.stderr);
        }
        if need_fio() {
            // fio checks a file fio wrote (fio's headers), damaged the same way.
            let ff = dir.join(&format!("fio-{rw}"));
            let file = format!("--filename={ff}");
            let fio = |rw: &str, extra: &[&str]| {
                let rw = format!("--rw={rw}");
                let mut a = vec!["--name=v", &file, &rw, "--bs=4k", "--size=16m"];
                a.extend(["--verify=crc32c"]);
                a.extend(extra);
                fio_json(&a)
            };
            fio("write", &["--do_verify=0"]);
            damage_three(&ff);
            let fv = fio(rw, &only[1..]);
            let fj = &fv["jobs"][0];
            assert_eq!(issued(&fv, "read"), issued(&v, "read"), "{rw}: vs fio");
            for k in ["error", "total_err", "first_error"] {
                assert_eq!(fj[k], j[k], "{rw}: {k} vs fio");
            }
        }
        // Without continue_on_error fio prints neither key.
        let r = verify_job(dir.path(), &f, rw, &only[..2]);
        assert_eq!(r.code, 1, "{rw}: {}", r.stderr);
        let j = &r.json()["jobs"][0];
        assert_eq!(j["error"], EILSEQ, "{rw}");
        assert!(j.get("total_err").is_none() && j.get("first_error").is_none());
    }
    // An intact file: both keys, both 0 (fio's values).
    let good = dir.join("good");
    let w = verify_job(dir.path(), &good, "write", &["--size=16m", "--do_verify=0"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let only = [
        "--size=16m",
        "--verify_only=1",
        "--continue_on_error=verify",
    ];
    let r = verify_job(dir.path(), &good, "read", &only);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = &r.json()["jobs"][0];
    assert_eq!(
        (&j["error"], &j["total_err"], &j["first_error"]),
        (&0.into(), &0.into(), &0.into())
    );
    let before = std::fs::read(&f).unwrap();
    let r = verify_job(dir.path(), &f, "trim", &only);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("verify_only=1 with rw=trim"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(&f).unwrap(),
        before,
        "trim verify_only changed the file"
    );
}

/// A complete verify run rewrites the state file (as fio does on every run): a state left by
/// an earlier, interrupted run is not what verify_state_load checks afterwards.
#[test]
fn a_complete_run_rewrites_the_verify_state() {
    let dir = TempDir::new("vstate-stale");
    let f = dir.join("f");
    // Interrupted: 1m at 1 MiB/s for 200 ms writes the first ~50 blocks, then saves its state.
    let w = verify_job(dir.path(), &f, "write", &["--rate=1m", "--runtime=200ms"]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let state = dir.path().join("local-v-0-verify.state");
    let old = std::fs::read(&state).expect("interrupted run saved its state");
    let w = verify_job(dir.path(), &f, "write", &[]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    let new = std::fs::read(&state).unwrap();
    assert!(new != old, "state not rewritten ({} bytes both)", old.len());
    let load = ["--verify_only=1", "--verify_state_load=1"];
    let r = verify_job(dir.path(), &f, "write", &load);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(issued(&r.json(), "read"), (256, 1 << 20), "every block");
    flip(&f, 250 * 4096 + 100);
    let r = verify_job(dir.path(), &f, "write", &load);
    assert_eq!(r.code, 1, "damage past the old state passed: {}", r.stderr);
    assert!(
        r.stderr.contains("offset 1024000, length 4096"),
        "{}",
        r.stderr
    );
    let leftovers: Vec<String> = dir
        .entries()
        .into_iter()
        .filter(|e| e.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The state file's implicit name never replaces a file fiox did not write and never follows
/// a symlink: the run refuses to save, saying what is there and how to proceed (a warning, as
/// fio's failed state save: the job's I/O and checks are done), and leaves it alone.
#[test]
fn verify_state_never_replaces_a_foreign_file_or_follows_a_symlink() {
    let dir = TempDir::new("vstate-foreign");
    let f = dir.join("f");
    let state = dir.path().join("local-v-0-verify.state");
    std::fs::write(&state, b"my own notes\n").unwrap();
    let r = verify_job(dir.path(), &f, "write", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // fiox's advice is in the report (JSON: fiox.warnings); stderr stays quiet.
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let w = advice(&r);
    assert!(w.contains("verify-state-not-saved"), "{w}");
    assert!(
        w.contains("not a fiox verify state file") && w.contains("verify_state_save=0"),
        "{w}"
    );
    assert_eq!(std::fs::read(&state).unwrap(), b"my own notes\n");
    std::fs::remove_file(&state).unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, b"keep me\n").unwrap();
    std::os::unix::fs::symlink(&target, &state).unwrap();
    let r = verify_job(dir.path(), &f, "write", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(advice(&r).contains("symbolic link"), "{}", advice(&r));
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me\n");
    assert!(std::fs::symlink_metadata(&state)
        .unwrap()
        .file_type()
        .is_symlink());
    // With the state off, the name is not touched and nothing is said.
    let r = verify_job(dir.path(), &f, "write", &["--verify_state_save=0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert!(!advice(&r).contains("verify_state_save"), "{}", advice(&r));
    let mut names = dir.entries();
    names.sort();
    assert_eq!(names, ["f", "local-v-0-verify.state", "precious"]);
}

/// The null engine moves no data: its verify reads are counted (through the engine, as the
/// verify phase's reads are) but not checked, as fio does for engines that fake their I/O.
#[test]
fn null_engine_verify_reads_are_counted_not_checked() {
    let dir = TempDir::new("vnull");
    let f = dir.join("n");
    for rw in ["write", "read"] {
        let r = verify_job(dir.path(), &f, rw, &["--ioengine=null"]);
        assert_eq!(r.code, 0, "{rw}: {}", r.stderr);
        let v = r.json();
        assert_eq!(issued(&v, "read"), (256, 1 << 20), "{rw}");
        assert_eq!(v["jobs"][0]["error"], 0, "{rw}");
        if need_fio() {
            let fv = fio_json(&[
                "--name=v",
                &format!("--rw={rw}"),
                "--bs=4k",
                "--size=1m",
                "--ioengine=null",
                "--verify=crc32c",
            ]);
            assert_eq!(issued(&fv, "read"), issued(&v, "read"), "{rw}: vs fio");
            assert_eq!(fv["jobs"][0]["error"], 0, "{rw}: fio");
        }
    }
}

/// `experimental_verify`: the verify phase replays the job's I/O sequence instead of reading
/// the write log, with fio 3.33's verdicts and counts: every write is read back once (reads of
/// a mixed workload are skipped), variable block sizes included; a block a later write
/// overwrote (norandommap) fails the replayed check of the earlier write (err=84), where the
/// log-based verify, which checks only the last write, passes in both tools.
#[test]
fn experimental_verify_replays_the_writes_as_fio_does() {
    let dir = TempDir::new("expver");
    let f = dir.join("e");
    let cases: [(&str, &[&str], i64); 7] = [
        ("randwrite", &["--experimental_verify=1"], 0),
        // A block written twice: fio 3.33 passes on a queued engine, fails on a sync one.
        (
            "randwrite",
            &[
                "--experimental_verify=1",
                "--norandommap",
                "--ioengine=libaio",
            ],
            0,
        ),
        (
            "write:4096",
            &["--experimental_verify=1", "--ioengine=libaio"],
            0,
        ),
        ("randrw", &["--experimental_verify=1"], 0),
        ("write", &["--experimental_verify=1", "--bsrange=4k-16k"], 0),
        (
            "randwrite",
            &["--experimental_verify=1", "--norandommap"],
            EILSEQ,
        ),
        (
            "randwrite",
            &["--experimental_verify=0", "--norandommap"],
            0,
        ),
    ];
    for (rw, extra, want) in cases {
        let _ = std::fs::remove_file(&f);
        let mut a = vec![
            "--name=e".to_string(),
            format!("--rw={rw}"),
            "--bs=4k".into(),
            "--size=256k".into(),
            format!("--filename={f}"),
            "--verify=crc32c".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        let mut j = a.clone();
        j.push("--output-format=json".into());
        let j: Vec<&str> = j.iter().map(String::as_str).collect();
        let r = fiox_in(dir.path(), &j);
        let v = r.json();
        let job = &v["jobs"][0];
        assert_eq!(job["error"], want, "{rw} {extra:?}: {}", r.stderr);
        assert_eq!(r.code, i32::from(want != 0), "{}", r.stderr);
        let (reads, writes) = (issued(&v, "read").0, issued(&v, "write").0);
        if want == 0 && rw != "randrw" && extra[0].ends_with("=1") {
            assert_eq!(reads, writes, "{rw} {extra:?}: every write read back once");
        }
        need_fio();
        let _ = std::fs::remove_file(&f);
        let fv = fio_json_after_errors(dir.path(), &a);
        let fj = &fv["jobs"][0];
        assert_eq!(fj["error"], job["error"], "{rw} {extra:?}: fio {fj}");
        assert_eq!(issued(&fv, "write").0, writes, "{rw} {extra:?}");
        if want == 0 {
            assert_eq!(issued(&fv, "read").0, reads, "{rw} {extra:?}");
        }
    }
}

/// fio's JSON output of a run that may fail: fio prints its `err=` line before the JSON.
fn fio_json_after_errors(dir: &Path, args: &[String]) -> serde_json::Value {
    let o = std::process::Command::new("fio")
        .current_dir(dir)
        .args(args)
        .arg("--output-format=json")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run fio");
    let out = String::from_utf8_lossy(&o.stdout);
    let at = match out.starts_with('{') {
        true => 0,
        false => out.find("\n{").map_or(0, |i| i + 1),
    };
    serde_json::from_str(&out[at..]).unwrap_or_else(|e| panic!("fio JSON ({e}): {out}"))
}

/// fio 3.42's verify_write_sequence and verify_header_seed. A block given back its content of
/// an earlier run (a lost write) is intact but holds an older write: reported as stale by
/// default, accepted with verify_write_sequence=0 (checksum only, fio's advice for atomic
/// writes), and failed again when verify_header_seed=1 asks for the expected write's seed.
/// A file written with another randseed: verify_only accepts it (fio 3.33), verify_header_seed=1
/// and verify_strict=1 report its seeds, verify_header_seed=0 accepts them.
#[test]
fn verify_write_sequence_and_header_seed_choose_the_checks() {
    let dir = TempDir::new("vseq");
    let f = dir.join("f");
    let w = |extra: &[&str]| verify_job(dir.path(), &f, "write", extra);
    assert_eq!(w(&["--do_verify=0"]).code, 0);
    let old = std::fs::read(&f).unwrap();
    assert_eq!(w(&["--loops=2"]).code, 0);
    let mut cur = std::fs::read(&f).unwrap();
    cur[3 * 4096..4 * 4096].copy_from_slice(&old[3 * 4096..4 * 4096]);
    std::fs::write(&f, &cur).unwrap();
    let check = |extra: &[&str]| {
        let mut a = vec!["--loops=2", "--verify_only=1"];
        a.extend_from_slice(extra);
        w(&a)
    };
    let r = check(&[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("offset 12288") && r.stderr.contains("stale data"),
        "{}",
        r.stderr
    );
    let r = check(&["--verify_write_sequence=0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = check(&["--verify_write_sequence=0", "--verify_header_seed=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("offset 12288"), "{}", r.stderr);
    assert!(
        !r.stderr.contains("stale data"),
        "the seed check: {}",
        r.stderr
    );
    // Another randseed: the data is intact, the seeds are not this job's. verify_only
    // accepts it as fio 3.33 does; verify_header_seed=1 or verify_strict=1 report the seeds,
    // and verify_header_seed=0 accepts them even with verify_strict.
    assert_eq!(w(&["--randseed=7"]).code, 0);
    let r = check(&["--loops=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = check(&["--loops=1", "--verify_header_seed=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let r = check(&["--loops=1", "--verify_strict=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let r = check(&["--loops=1", "--verify_strict=1", "--verify_header_seed=0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}
