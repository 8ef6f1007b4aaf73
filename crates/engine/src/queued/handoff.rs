//! How long fiox's worker pool kept requests waiting, for `--explain`: on the run list until a
//! worker took them, and on the done list until the job thread reaped them. The kernel's
//! tracepoints cannot see these waits (the lists are in fiox's memory, no syscall marks them),
//! so the pool stamps them itself, only while [`enable`] has been called (otherwise a stamp
//! is one relaxed load and no clock read). Totals are kept per pool and found by the thread
//! that created it (a job's thread), which is how `--explain` reads them after the run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

static ON: AtomicBool = AtomicBool::new(false);
static BASE: OnceLock<Instant> = OnceLock::new();
/// Pools created while timing is on: (creating thread, its totals).
static POOLS: Mutex<Vec<(i32, Arc<Totals>)>> = Mutex::new(Vec::new());

/// Start timing hand-offs in the pools created from now on (`--explain`).
pub fn enable() {
    BASE.get_or_init(Instant::now);
    ON.store(true, Relaxed);
}

/// A time stamp in ns (never 0), or 0 when timing is off.
pub(crate) fn stamp() -> u64 {
    if !ON.load(Relaxed) {
        return 0;
    }
    BASE.get()
        .map(|b| b.elapsed().as_nanos() as u64 + 1)
        .unwrap_or(0)
}

/// One pool's sums of waits (ns) and the requests they cover.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    queued_ns: AtomicU64,
    queued: AtomicU64,
    done_ns: AtomicU64,
    done: AtomicU64,
}

impl Totals {
    /// Totals for a pool created by the calling thread; registered only while timing is on.
    pub(crate) fn for_new_pool() -> Arc<Totals> {
        let t = Arc::new(Totals::default());
        if ON.load(Relaxed) {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
            pools.push((tid, Arc::clone(&t)));
        }
        t
    }

    /// A worker took a request queued at `since` (0: not timed).
    pub(crate) fn taken(&self, since: u64) {
        if since != 0 {
            self.queued_ns
                .fetch_add(stamp().saturating_sub(since), Relaxed);
            self.queued.fetch_add(1, Relaxed);
        }
    }

    /// The reaper took completions posted at `stamps` (0: not timed), all at one moment.
    pub(crate) fn reaped(&self, stamps: impl Iterator<Item = u64>) {
        let mut now = 0;
        let (mut sum, mut n) = (0, 0);
        for s in stamps.filter(|&s| s != 0) {
            if now == 0 {
                now = stamp();
            }
            sum += now.saturating_sub(s);
            n += 1;
        }
        if n > 0 {
            self.done_ns.fetch_add(sum, Relaxed);
            self.done.fetch_add(n, Relaxed);
        }
    }
}

/// The waits of the pools a thread created: totals in ns and the requests timed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Handoff {
    /// On the run list until a worker took the request.
    pub queued_ns: u64,
    pub queued: u64,
    /// On the done list until the job thread reaped the completion.
    pub done_ns: u64,
    pub done: u64,
}

/// The hand-off waits of the pools thread `tid` created (summed), forgotten once read; None
/// if it created none while timing was on.
pub fn take(tid: i32) -> Option<Handoff> {
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = None;
    pools.retain(|(t, tot)| {
        if *t != tid {
            return true;
        }
        let h: &mut Handoff = out.get_or_insert_with(Handoff::default);
        h.queued_ns += tot.queued_ns.load(Relaxed);
        h.queued += tot.queued.load(Relaxed);
        h.done_ns += tot.done_ns.load(Relaxed);
        h.done += tot.done.load(Relaxed);
        false
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_pools_waits_are_summed_and_read_once() {
        enable();
        let t = Totals::for_new_pool();
        let q = stamp();
        assert_ne!(q, 0);
        std::thread::sleep(std::time::Duration::from_millis(2));
        t.taken(q);
        t.taken(0); // not timed: not counted
        t.reaped([stamp(), 0].into_iter());
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() };
        let h = take(me).unwrap();
        assert_eq!((h.queued, h.done), (1, 1));
        assert!(h.queued_ns >= 2_000_000, "{h:?}");
        assert_eq!(take(me), None);
    }
}
