//! The completion loop of the queued engines' `getevents`, written once for libaio and
//! io_uring (the loop of guasi and offload is their shared pool's `Queue::reap`).
//!
//! The protocol (the crate's Result contract): units the kernel pushed back at the last
//! `commit` are submitted first, so they can complete; completions an engine already holds
//! (finished at queue or commit time) go out first; then completions are collected, and the
//! engine waits only while fewer than `min` are in hand, fewer than `max`, and some are still
//! in flight. `min` never exceeds what is in flight, so a reap never waits for I/O that was
//! not committed. What differs per engine is behind [`Reap`]: how completions are collected
//! (a ring in shared memory, a syscall that may block for `want`) and how to wait. The loop is
//! generic and inlined (no `dyn`), so each engine's hot path compiles as if written out.

use crate::{Completion, EngineError};

/// An engine's side of [`getevents`].
pub(crate) trait Reap {
    /// Submit what the last commit left queued (EAGAIN/EBUSY), if anything.
    fn submit_leftovers(&mut self) -> Result<(), EngineError>;
    /// Completions the engine holds already (handed out first, in order).
    fn held(&mut self) -> &mut Vec<Completion>;
    /// Units submitted and not yet collected.
    fn in_flight(&self) -> usize;
    /// Whether the first wait must be a poll even when nothing more is wanted (io_uring's
    /// IOPOLL: its completions only appear when someone polls).
    fn poll_first(&self, _min: usize) -> bool {
        false
    }
    /// Move up to `room` completions into `out` and count them out of [`Reap::in_flight`].
    /// An engine whose collecting call can wait (libaio's io_getevents) waits for `want`;
    /// others return what is there.
    fn collect(
        &mut self,
        want: usize,
        room: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError>;
    /// Wait until more completions can be collected; with `poll`, only make the kernel look.
    fn wait(&mut self, poll: bool) -> Result<(), EngineError>;
}

/// `IoEngine::getevents` for an engine that implements [`Reap`].
#[inline(always)]
pub(crate) fn getevents<R: Reap>(
    r: &mut R,
    min: usize,
    max: usize,
    out: &mut Vec<Completion>,
) -> Result<usize, EngineError> {
    r.submit_leftovers()?;
    let held = r.held();
    let mut n = max.min(held.len());
    out.extend(held.drain(..n));
    if n >= max || r.in_flight() == 0 {
        return Ok(n);
    }
    let min = min.min(r.in_flight() + n);
    let mut poll = r.poll_first(min);
    loop {
        n += r.collect(min.saturating_sub(n), max - n, out)?;
        if (n >= min && !poll) || n >= max || r.in_flight() == 0 {
            return Ok(n);
        }
        r.wait(poll)?;
        poll = false;
    }
}
