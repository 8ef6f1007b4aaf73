//! libaio against real files: buffered and O_DIRECT, batches, userspace reaping, nowait.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod common;

use common::*;
use fiox_engine::{create, BufPool, IoOp, Queued};
use fiox_job::spec::EngineOptions;

#[test]
fn libaio_depth_1_and_8() {
    battery("libaio", 1, EngineOptions::default());
    battery("libaio", 8, EngineOptions::default());
}

#[test]
fn libaio_userspace_reap() {
    let opts = EngineOptions {
        userspace_reap: true,
        ..Default::default()
    };
    battery("libaio", 8, opts.clone());
    // Poll with min=0 so the ring path is taken.
    let dir = need_disk("ureap");
    let j = job("libaio", 4, false, opts);
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(4, 4096, 4096).unwrap();
    for s in 0..4u32 {
        let u = unit(IoOp::Read, s as u64 * 8192, 4096, pool.slot(s as usize));
        assert_eq!(e.queue(s, &u).unwrap(), Queued::Queued);
    }
    assert_eq!(
        e.queue(9, &unit(IoOp::Read, 0, 4096, pool.slot(0)))
            .unwrap(),
        Queued::Busy
    );
    assert_eq!(e.commit().unwrap(), 4);
    let mut ev = Vec::new();
    let mut spins = 0;
    while ev.len() < 4 {
        e.getevents(0, 4, &mut ev).unwrap();
        spins += 1;
        assert!(spins < 100_000_000, "ring never filled");
    }
    let mut units: Vec<u32> = ev.iter().map(|c| c.unit).collect();
    units.sort();
    assert_eq!(units, vec![0, 1, 2, 3]);
    assert!(ev.iter().all(|c| c.result == 4096));
}

#[test]
fn libaio_nowait_completes_or_says_why() {
    let dir = need_disk("aionowait");
    let opts = EngineOptions {
        nowait: true,
        ..Default::default()
    };
    let j = job("libaio", 2, false, opts);
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(1, 4096, 4096).unwrap();
    let r = run(e.as_mut(), 2, &[unit(IoOp::Read, 0, 4096, pool.slot(0))]);
    let ok = [4096, -(libc::EAGAIN as i64), -(libc::EOPNOTSUPP as i64)];
    assert!(ok.contains(&r[0]), "{r:?}");
}

#[test]
fn libaio_fsync_waits_for_inflight_io() {
    let dir = need_disk("aiofsync");
    let j = job("libaio", 4, false, EngineOptions::default());
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(1, 4096, 4096).unwrap();
    let w = unit(IoOp::Write, 0, 4096, pool.slot(0));
    assert_eq!(e.queue(0, &w).unwrap(), Queued::Queued);
    let s = unit(IoOp::Fsync, 0, 0, fiox_engine::BufSpan::empty());
    assert_eq!(e.queue(1, &s).unwrap(), Queued::Busy);
    e.commit().unwrap();
    let mut ev = Vec::new();
    e.getevents(1, 4, &mut ev).unwrap();
    assert_eq!(ev.len(), 1);
    assert_eq!(e.queue(1, &s).unwrap(), Queued::Done(0));
}
