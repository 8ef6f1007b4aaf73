//! sync, psync, vsync, pvsync, pvsync2, mmap and null against real files.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod common;

use common::*;
use fiox_engine::{create, BufPool, IoOp};
use fiox_job::spec::EngineOptions;

#[test]
fn psync() {
    battery("psync", 1, EngineOptions::default());
}

#[test]
fn sync_lseek_read_write() {
    battery("sync", 1, EngineOptions::default());
}

#[test]
fn pvsync() {
    battery("pvsync", 1, EngineOptions::default());
}

#[test]
fn pvsync2_plain_and_hipri() {
    battery("pvsync2", 1, EngineOptions::default());
    let hipri = EngineOptions {
        hipri: true,
        hipri_percentage: 50,
        ..Default::default()
    };
    battery("pvsync2", 1, hipri);
}

#[test]
fn pvsync2_nowait_reads_or_eagain() {
    let dir = need_disk("nowait");
    let opts = EngineOptions {
        nowait: true,
        ..Default::default()
    };
    let j = job("pvsync2", 1, false, opts);
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    match e.add_file(&engine_file(&f, &path)) {
        Ok(()) => {}
        Err(err) => {
            // Refusal must name the option.
            assert!(err.to_string().contains("nowait"), "{err}");
            return;
        }
    }
    let pool = BufPool::new(1, 4096, 4096).unwrap();
    let r = run(e.as_mut(), 1, &[unit(IoOp::Read, 0, 4096, pool.slot(0))]);
    assert!(r[0] == 4096 || r[0] == -(libc::EAGAIN as i64), "{r:?}");
}

#[test]
fn pvsync2_uncached_is_used_or_refused_by_name() {
    let dir = need_disk("uncached");
    let opts = EngineOptions {
        uncached: 1,
        ..Default::default()
    };
    let j = job("pvsync2", 1, false, opts.clone());
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    match e.add_file(&engine_file(&f, &path)) {
        Ok(()) => roundtrip("pvsync2", 1, false, opts, &dir.0),
        Err(err) => {
            let msg = err.to_string();
            assert!(
                msg.contains("uncached") && msg.contains("EOPNOTSUPP"),
                "{msg}"
            );
        }
    }
}

#[test]
fn vsync_single_and_merged() {
    battery("vsync", 1, EngineOptions::default());
    battery("vsync", 4, EngineOptions::default());
}

#[test]
fn vsync_merges_contiguous_units_into_one_call() {
    let dir = need_disk("vmerge");
    let j = job("vsync", 4, false, EngineOptions::default());
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(4, 4096, 4096).unwrap();
    use fiox_engine::Queued;
    for s in 0..3 {
        let u = unit(IoOp::Read, s as u64 * 4096, 4096, pool.slot(s));
        assert_eq!(e.queue(s as u32, &u).unwrap(), Queued::Queued);
    }
    // Not contiguous: must wait for the run to go out.
    let far = unit(IoOp::Read, 65536, 4096, pool.slot(3));
    assert_eq!(e.queue(3, &far).unwrap(), Queued::Busy);
    assert_eq!(e.commit().unwrap(), 3);
    let mut ev = Vec::new();
    assert_eq!(e.getevents(3, 8, &mut ev).unwrap(), 3);
    assert!(ev.iter().all(|c| c.result == 4096));
    // The last run crosses EOF: the byte count is split over the units in order.
    let tail = unit(IoOp::Read, FILE_SIZE - 4096, 4096, pool.slot(3));
    assert_eq!(e.queue(7, &tail).unwrap(), Queued::Queued);
    let past = unit(IoOp::Read, FILE_SIZE, 4096, pool.slot(0));
    assert_eq!(e.queue(8, &past).unwrap(), Queued::Queued);
    e.commit().unwrap();
    ev.clear();
    e.getevents(2, 8, &mut ev).unwrap();
    assert_eq!(ev.len(), 2);
    assert_eq!((ev[0].unit, ev[0].result), (7, 4096));
    assert_eq!((ev[1].unit, ev[1].result), (8, 0));
}

#[test]
fn mmap() {
    battery_with("mmap", 1, EngineOptions::default(), false);
}

#[test]
fn mmap_write_past_end_is_einval_not_sigbus() {
    let dir = need_disk("mmapend");
    let j = job("mmap", 1, false, EngineOptions::default());
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(1, 8192, 4096).unwrap();
    let r = run(
        e.as_mut(),
        1,
        &[unit(IoOp::Write, FILE_SIZE - 4096, 8192, pool.slot(0))],
    );
    assert_eq!(r, vec![-(libc::EINVAL as i64)]);
}

#[test]
fn null_completes_everything_without_io() {
    for depth in [1u32, 8] {
        let j = job("null", depth, false, EngineOptions::default());
        let mut e = create(&j).unwrap();
        let pool = BufPool::new(1, 4096, 4096).unwrap();
        let units: Vec<_> = (0..100)
            .map(|i| {
                let op = [IoOp::Read, IoOp::Write, IoOp::Trim, IoOp::Fsync][i % 4];
                unit(op, i as u64 * 4096, 4096, pool.slot(0))
            })
            .collect();
        let r = run(e.as_mut(), depth as usize, &units);
        for (i, x) in r.iter().enumerate() {
            let want = if i % 4 == 3 { 0 } else { 4096 };
            assert_eq!(*x, want, "depth {depth} unit {i}");
        }
    }
}

#[test]
fn unknown_file_index_is_an_error_not_a_panic() {
    let j = job("psync", 1, false, EngineOptions::default());
    let mut e = create(&j).unwrap();
    let pool = BufPool::new(1, 4096, 4096).unwrap();
    let u = unit(IoOp::Read, 0, 4096, pool.slot(0));
    let err = e.queue(0, &u).unwrap_err();
    assert!(err.to_string().contains("file 0"), "{err}");
}
