//! The hot path allocates nothing: a counting global allocator sees how many allocations a
//! null-engine run makes, and a run of many more I/Os must not make more than a handful more
//! (O(1) in the number of I/Os, not O(N)). Only counts, never timings.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::{EtaMode, JobSpec, RwMode, RwSpec, SizeSpec};
use fiox_runner::{run, RunOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts every allocation and reallocation of the process (all threads).
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to the system allocator unchanged; counting has no effect on
// the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by one null-engine job of `ios` 4 KiB I/Os with default statistics.
fn allocations_for(mode: RwMode, ios: u64) -> (u64, u64) {
    let job = JobSpec {
        name: "alloc".into(),
        ioengine: "null".into(),
        rw: RwSpec { mode, n: 0 },
        size: Some(SizeSpec::Bytes(64 << 20)),
        io_size: Some(SizeSpec::Bytes(ios * 4096)),
        thread: true,
        ..JobSpec::default()
    };
    let opts = RunOptions {
        eta: EtaMode::Never,
        ..Default::default()
    };
    let before = ALLOCS.load(Ordering::Relaxed);
    let out = run(&[job], &opts, &mut |_| {});
    let after = ALLOCS.load(Ordering::Relaxed);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = &out.result.jobs[0];
    (
        after - before,
        r.dirs.read.total_ios + r.dirs.write.total_ios,
    )
}

#[test]
fn null_run_allocates_o1_in_the_number_of_ios() {
    for mode in [RwMode::RandRead, RwMode::Write, RwMode::RandRw] {
        let (few, n_few) = allocations_for(mode, 16 << 10);
        let (many, n_many) = allocations_for(mode, 256 << 10);
        assert_eq!((n_few, n_many), (16 << 10, 256 << 10), "{mode:?}");
        // 240k more I/Os: a per-I/O (or per-64-I/O) allocation would add 3,750 or more. The
        // slack covers what grows with wall time rather than I/Os (the bw/iops sample vectors,
        // the run's helper threads): on a loaded machine the longer run took 85 more.
        assert!(
            many <= few + 1024,
            "{mode:?}: {few} allocations for {n_few} I/Os but {many} for {n_many}"
        );
    }
}
