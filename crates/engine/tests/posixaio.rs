//! posixaio (glibc's thread-based POSIX AIO) against real files.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod common;

use common::*;
use fiox_job::spec::EngineOptions;

#[test]
fn posixaio_depth_1_and_8() {
    battery("posixaio", 1, EngineOptions::default());
    battery("posixaio", 8, EngineOptions::default());
}

/// More in flight than one aio_suspend waits on (8): completions outside the wait list must
/// still be found, and a wait for all of them must return all of them.
#[test]
fn posixaio_deeper_than_the_suspend_list() {
    battery("posixaio", 32, EngineOptions::default());
    let Some(dir) = need_shm("posixaio-deep") else {
        return;
    };
    let j = job("posixaio", 32, false, EngineOptions::default());
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    let mut e = fiox_engine::create(&j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let bufs = fiox_engine::BufPool::new(32, 4096, 4096).unwrap();
    for i in 0..32u32 {
        let u = unit(
            fiox_engine::IoOp::Read,
            u64::from(i) * 4096,
            4096,
            bufs.slot(i as usize),
        );
        assert_eq!(e.queue(i, &u).unwrap(), fiox_engine::Queued::Queued);
    }
    e.commit().unwrap();
    let mut out = Vec::new();
    assert_eq!(e.getevents(32, 32, &mut out).unwrap(), 32);
    let mut units: Vec<u32> = out.iter().map(|c| c.unit).collect();
    units.sort();
    assert_eq!(units, (0..32).collect::<Vec<u32>>());
    assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
}
