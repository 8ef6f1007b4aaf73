//! `ioengine=pmemblk` (PMDK block pools through libpmemblk, loaded at run time): a pool fiox
//! creates, writes, reads back and removes; a pool's size as fio's engine gives it; the jobs
//! fio fails (no thread=1, a missing pool) failed alike; a user's file never written. fio
//! 3.33's examples/pmemblk.fio itself is compared in tests/fio_examples.rs. Without
//! libpmemblk.so.1 (Debian: libpmemblk1, which fio's package depends on) fiox refuses such
//! jobs; these tests need it (ci/packages.txt) and fail naming the package without it.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;

/// libpmemblk.so.1 is installed (ci/packages.txt: libpmemblk1, which fio's package depends
/// on; the test fails naming it otherwise) and fiox loads it: a pmemblk job is not refused.
fn have_libpmemblk(dir: &Path) -> bool {
    require_file("/usr/lib/x86_64-linux-gnu/libpmemblk.so.1");
    let r = fiox_in(
        dir,
        &[
            "--name=probe",
            "--thread",
            "--ioengine=pmemblk",
            "--filename=absent",
            "--size=1m",
        ],
    );
    assert!(
        !r.stderr.contains("cannot be loaded"),
        "libpmemblk.so.1 is installed but fiox cannot load it: {}",
        r.stderr
    );
    true
}

/// One pmemblk job in `dir`: exit code and JSON report.
fn run(dir: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["--ioengine=pmemblk", "--output-format=json"];
    all.extend_from_slice(args);
    let r = fiox_in(dir, &all);
    (r.code, r.json())
}

fn ios(v: &serde_json::Value, dir: &str) -> (u64, u64) {
    let d = &v["jobs"][0][dir];
    (
        d["total_ios"].as_u64().unwrap(),
        d["io_bytes"].as_u64().unwrap(),
    )
}

#[test]
fn a_pool_is_created_written_read_back_and_removed() {
    let d = TempDir::new("pmemblk");
    if !have_libpmemblk(d.path()) {
        return;
    }
    // Created (32 MiB, 4 KiB blocks), written and verified through the pool.
    let (code, v) = run(
        d.path(),
        &[
            "--name=w",
            "--thread",
            "--rw=write",
            "--bs=8k",
            "--size=1m",
            "--verify=crc32c",
            "--filename=pool,4096,32",
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["jobs"][0]["error"], 0, "{v}");
    assert_eq!(ios(&v, "write"), (128, 1 << 20));
    assert_eq!(
        ios(&v, "read"),
        (128, 1 << 20),
        "the verify phase reads it back"
    );
    let pool = d.path().join("pool");
    let m = std::fs::metadata(&pool).expect("the pool file");
    assert_eq!(m.len(), 32 << 20);
    let head = std::fs::read(&pool).unwrap();
    assert!(head.starts_with(b"PMEMBLK\0"), "a libpmemblk pool");
    // The pool and the verify state file (as fio's): no file named with the sizes.
    let mut names = d.entries();
    names.sort();
    assert_eq!(names, ["local-w-0-verify.state", "pool"]);
    // Opened again as a pool (no sizes in the name now), read, then removed: fiox made it.
    let (code, v) = run(
        d.path(),
        &[
            "--name=r",
            "--thread",
            "--rw=randread",
            "--bs=4k",
            "--size=1m",
            "--unlink=1",
            "--filename=pool",
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(ios(&v, "read"), (256, 1 << 20));
    assert!(!pool.exists(), "unlink=1 removed the pool");
}

/// Without size=, a job covers the pool's blocks (fewer bytes than the file: libpmemblk keeps
/// metadata there), as fio's engine reports the file's size; I/O that is not whole blocks
/// fails with EINVAL, as in fio.
#[test]
fn a_pool_is_as_large_as_fios_and_takes_whole_blocks_only() {
    need_fio();
    let mut seen = Vec::new();
    for tool in ["fio", "fiox"] {
        let d = TempDir::new("pmemblk-size");
        if tool == "fiox" && !have_libpmemblk(d.path()) {
            return;
        }
        let job = [
            "--name=w",
            "--thread",
            "--ioengine=pmemblk",
            "--rw=write",
            "--bs=64k",
            "--filename=pool,4096,20",
        ];
        let (code, v, err) = tool_json(tool, d.path(), &job, Some(120));
        assert_eq!(code, 0, "{tool}: {err}");
        let w = &v["jobs"][0]["write"];
        seen.push((w["io_bytes"].as_u64(), w["total_ios"].as_u64()));
        // 512-byte writes in 4 KiB blocks: EINVAL (22), in both tools.
        let small = ["--bs=512", "--size=64k", "--filename=pool,4096,20"];
        let mut args = job[..4].to_vec();
        args.extend_from_slice(&small);
        let (code, v, _) = tool_json(tool, d.path(), &args, Some(120));
        assert_ne!(code, 0, "{tool}");
        assert_eq!(v["jobs"][0]["error"], 22, "{tool}: {v}");
    }
    assert_eq!(seen[0], seen[1], "fio's bytes and I/Os, then fiox's");
    assert!(seen[1].0.unwrap() < 20 << 20);
}

/// fio fails these jobs before any I/O with no error number (err=0), counted in its exit
/// status: fiox too, and leaves no file.
#[test]
fn jobs_fio_fails_fail_alike_and_leave_nothing() {
    let d = TempDir::new("pmemblk-fail");
    if !have_libpmemblk(d.path()) {
        return;
    }
    let cases: [(&[&str], &str); 4] = [
        (&["--filename=pool,4096,32"], "must set thread=1"),
        (
            &["--thread", "--filename=missing"],
            "No such file or directory",
        ),
        (&["--thread", "--filename=tiny,4096,1"], "smaller than"),
        (
            &["--thread", "--filename=bad,4k,32"],
            "filename=bad,4k,32: bsize 4k",
        ),
    ];
    for (args, why) in cases {
        let mut all = vec!["--name=j", "--ioengine=pmemblk", "--rw=write", "--size=1m"];
        all.extend_from_slice(args);
        let r = fiox_in(d.path(), &all);
        assert_ne!(r.code, 0, "{args:?}");
        assert!(r.stderr.contains(why), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        let mut json = all.clone();
        json.push("--output-format=json");
        let v = fiox_in(d.path(), &json).json();
        assert_eq!(v["jobs"][0]["error"], 0, "{args:?}: {v}");
        assert!(d.entries().is_empty(), "{args:?}: {:?}", d.entries());
    }
}

/// A file of the user's where the pool should be is not written over (nor made a pool).
#[test]
fn a_users_file_is_not_made_a_pool() {
    let d = TempDir::new("pmemblk-user");
    if !have_libpmemblk(d.path()) {
        return;
    }
    let data = vec![0x5a_u8; 20 << 20];
    std::fs::write(d.path().join("mine"), &data).unwrap();
    let r = fiox_in(
        d.path(),
        &[
            "--name=j",
            "--thread",
            "--ioengine=pmemblk",
            "--rw=write",
            "--size=1m",
            "--filename=mine,4096,20",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("mine"), "{}", r.stderr);
    assert!(
        std::fs::read(d.path().join("mine")).unwrap() == data,
        "untouched"
    );
}
