//! io_submit_mode=offload: every engine's battery (data round trips buffered and O_DIRECT, EOF
//! reads, misaligned direct I/O, trims) through the offload adapter, plus what only offload
//! has: one submit thread per iodepth, and engines that seek keeping their positions apart.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod common;

use std::sync::atomic::Ordering;

use common::*;
use fiox_engine::{create, BufPool, IoOp};
use fiox_job::spec::EngineOptions;

fn offload() {
    OFFLOAD.store(true, Ordering::Relaxed);
}

#[test]
fn every_data_engine_moves_data_through_submit_threads() {
    offload();
    for name in [
        "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "posixaio", "guasi",
    ] {
        battery(name, 4, EngineOptions::default());
    }
    battery_with("mmap", 4, EngineOptions::default(), false);
    battery("psync", 1, EngineOptions::default());
}

#[test]
fn io_uring_runs_offloaded_unlike_fio() {
    offload();
    if !kernel_io_uring() {
        return;
    }
    // Each submit thread uses a ring it did not create: the ring must not be SINGLE_ISSUER.
    battery("io_uring", 4, EngineOptions::default());
}

#[test]
fn one_submit_thread_per_iodepth_named_and_distinct() {
    offload();
    let e = create(&job("psync", 6, false, EngineOptions::default())).unwrap();
    let mut tids = e.helper_threads();
    assert_eq!(tids.len(), 6);
    tids.sort();
    tids.dedup();
    assert_eq!(tids.len(), 6);
    for tid in tids {
        let comm = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).unwrap();
        assert!(comm.starts_with("fiox-submit-"), "{comm}");
    }
    assert_eq!(e.name(), "psync");
    assert!(!e.flags().sync, "offload completes through getevents");
}

/// 256 random-order 4 KiB writes then reads at depth 16 with the seeking `sync` engine: if two
/// submit threads shared a file position, blocks would land at each other's offsets.
#[test]
fn seeking_engines_keep_positions_apart_under_concurrency() {
    offload();
    let Some(dir) = need_shm("offload-seek") else {
        return;
    };
    for name in ["sync", "vsync"] {
        let j = job(name, 16, false, EngineOptions::default());
        let mut e = create(&j).unwrap();
        let (f, path) = open_test_file(&dir.0, &j).unwrap();
        e.add_file(&engine_file(&f, &path)).unwrap();
        let n = 256usize;
        let mut pool = BufPool::new(2 * n, 4096, 4096).unwrap();
        // A fixed permutation of the blocks (multiplier coprime with n).
        let order: Vec<usize> = (0..n).map(|i| (i * 97 + 13) % n).collect();
        for (s, &b) in order.iter().enumerate() {
            pool.slice_mut(s).fill((b % 251) as u8 + 1);
            pool.slice_mut(s)[..8].copy_from_slice(&(b as u64).to_le_bytes());
        }
        let writes: Vec<_> = order
            .iter()
            .enumerate()
            .map(|(s, &b)| unit(IoOp::Write, b as u64 * 4096, 4096, pool.slot(s)))
            .collect();
        let r = run(e.as_mut(), 16, &writes);
        assert!(r.iter().all(|&x| x == 4096), "{name}: {r:?}");
        let reads: Vec<_> = (0..n)
            .map(|b| unit(IoOp::Read, b as u64 * 4096, 4096, pool.slot(n + b)))
            .collect();
        let r = run(e.as_mut(), 16, &reads);
        assert!(r.iter().all(|&x| x == 4096), "{name}: {r:?}");
        for b in 0..n {
            let got = pool.slice(n + b);
            assert_eq!(&got[..8], &(b as u64).to_le_bytes(), "{name}: block {b}");
            assert!(got[8..].iter().all(|&x| x == (b % 251) as u8 + 1));
        }
    }
}

#[test]
fn errors_come_back_as_completions_with_their_errno() {
    offload();
    let Some(dir) = need_shm("offload-err") else {
        return;
    };
    let j = job("psync", 2, false, EngineOptions::default());
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    // The file is open read-write; a second, read-only registration makes writes fail EBADF.
    let ro = std::fs::File::open(&path).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    e.add_file(&engine_file(&ro, &path)).unwrap();
    let pool = BufPool::new(2, 4096, 4096).unwrap();
    let mut bad = unit(IoOp::Write, 0, 4096, pool.slot(0));
    bad.file = 1;
    let good = unit(IoOp::Read, 0, 4096, pool.slot(1));
    let r = run(e.as_mut(), 2, &[bad, good]);
    assert_eq!(r, vec![-(libc::EBADF as i64), 4096]);
}
