//! The per-job I/O loop: pulls requests from the generator, fills write buffers, queues them to
//! the engine (commit per `iodepth_batch_submit`), reaps with `getevents(min, max)` honouring
//! `iodepth_batch_complete_min/max` and `iodepth_low`, re-issues short I/Os, applies
//! `continue_on_error`/`ignore_error`, fsyncs every `fsync`/`fdatasync` writes, paces, and
//! measures slat/clat/lat. Time is kept as nanoseconds since the job's start ([`Clock`]).
//!
//! # A slot's life
//! Slot `i` is buffer `i` of the job's pool and is in exactly one place: `free`; drawn and
//! prepared (a request from [`request`], its buffer filled in [`submit`]); `pending` (queued to
//! the engine, not yet committed) or, for a unit the engine could not take or a short I/O's
//! remainder, `requeue`; in flight (`in_flight[i]`, counted in `inflight`); then completed by
//! [`complete`], which accounts it and returns it to `free` or, for a remainder, to `requeue`.
//! A synchronous engine completes the unit inside `queue`: it never stays in flight.
//!
//! # Who ends the loop
//! `end` is set once and never cleared within a run: `Done` when the generator is exhausted and
//! nothing waits to be re-queued, `Time` by [`timeline`] at the deadline, `Stopped` by the stop
//! flag (signal, `exitall`), `Error` by a fatal completion or an engine that accepts nothing.
//! [`IoLoop::run`] then drains: every unit still in flight is reaped and accounted (an engine
//! that completes nothing in 1,000 consecutive reaps is given up), so no buffer is released while
//! the kernel may still write it.
//!
//! # The lean path
//! A plain job on a synchronous engine ([`lean`]) skips the per-I/O hooks (logs, verify, flow,
//! locks, latency target, pacing, debug lines, `sync_file_range`, opens on demand) because it is
//! taken only when none of them is configured, and it defers the submit/complete/depth marks of
//! its I/Os, which `flush_plain` adds before anything reads them. Anything unusual (a short I/O,
//! a busy engine, an exhausted pass) returns to the general loop, which handles it.
//!
//! # The batch path and the ring loop
//! A plain job on io_uring or libaio ([`batch`]) queues each submit batch of units in one
//! engine call; the rest of the loop (commit, reap, accounting) is the general one. Where the
//! engine can be driven directly the same job takes the ring loop ([`ring`]): the batch
//! path's steps through the engine's typed calls, returning to the general loop for anything
//! unusual.
//!
//! The other parts: [`fileuse`] (files opened, operated on and unlinked as the loop goes),
//! [`vreads`] (verify reads and checks inside the loop).
//!
//! # State and plan
//! The loop's state is in owned parts ([`parts`]: the queue of units, the timeline, file
//! use, per-I/O statistics, observers, checks, control, the engine's traits), built once by
//! the builder in [`api`], which is also all its owner sees of it. At the start of each run
//! the job's features are computed into one set ([`features`]) and each fast path above is
//! taken only when that set is a subset of what the path declares it handles.

use crate::control::pacing::Pacer;
use crate::gen::{BufferFiller, Generator, IoReq};
use crate::io::acct::{Acct, JobState};
use crate::io::clock::Clock;
use features::{FastPath, Features};
use fiox_engine::{BufPool, BufSpan, IoEngine, IoOp};
use fiox_explain::marks;
use fiox_job::{Ddir, JobSpec};
use fiox_stats::log::rate_windows;
use fiox_stats::{JobLogs, RateSampler};

mod api;
mod batch;
mod complete;
mod features;
mod fileuse;
mod lean;
mod parts;
mod request;
mod ring;
mod submit;
mod timeline;
mod vreads;

pub use parts::Limits;

/// Sync units use this direction index (accounted in `sync_lat`, not in read/write/trim).
const SYNC: u8 = 3;

/// How often a job with per-I/O clocks looks at its stop flags and status requests: a stop
/// is seen this long (or one I/O) after it was asked for, far below a millisecond.
const POLL_NS: u64 = 50_000;

/// State of one I/O unit (slot `i` of the buffer pool).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    ddir: u8,
    op_data_only: bool,
    file: u32,
    offset: u64,
    len: u32,
    /// Bytes already transferred (short I/Os re-issue the rest).
    done: u32,
    start_ns: u64,
    issue_ns: u64,
    /// Verify sequence number of a write (0 without verify).
    seq: u64,
    /// A verify read (verify phase, verify_backlog): checked against the write log.
    check: bool,
    /// The I/O's priority: index into its direction's per-priority statistics, and the value.
    prio: u8,
    ioprio: u16,
    /// A sync slot of `sync_file_range`: its SYNC_FILE_RANGE_* flags (0: fsync/fdatasync).
    sfr: u32,
}

impl Slot {
    /// A fresh unit for `req`: started at `start_ns` (0 untimed), with its priority's index
    /// and value; nothing transferred, issued, verified or synced yet.
    #[inline(always)]
    fn of_req(req: &IoReq, start_ns: u64, (prio, ioprio): (u8, u16)) -> Slot {
        Slot {
            ddir: req.ddir.index() as u8,
            file: req.file,
            offset: req.offset,
            len: req.len,
            start_ns,
            prio,
            ioprio,
            ..Slot::default()
        }
    }
}

/// What `account` reads of a completed unit: the lean loop passes these without building a
/// [`Slot`] (which only the rarely used per-I/O hooks need).
#[derive(Debug, Clone, Copy)]
struct Done {
    ddir: u8,
    prio: u8,
    len: u32,
    start_ns: u64,
    issue_ns: u64,
}

impl Done {
    #[inline(always)]
    fn of(s: &Slot) -> Done {
        Done {
            ddir: s.ddir,
            prio: s.prio,
            len: s.len,
            start_ns: s.start_ns,
            issue_ns: s.issue_ns,
        }
    }
}

/// Why the loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// Size/io_size/number_ios/loops done.
    Done,
    /// runtime reached.
    Time,
    /// Stopped from outside (signal, exitall).
    Stopped,
    /// A fatal error: errno and fio-style description.
    Error(i32, String),
}

impl EndReason {
    /// The end an engine's failure makes: its errno (EIO when it has none), as fio reports
    /// an engine's error.
    fn engine(e: &fiox_engine::EngineError) -> EndReason {
        EndReason::Error(e.os_errno().unwrap_or(libc::EIO), e.to_string())
    }
}

/// Everything the loop needs, owned by the job thread, in parts ([`parts`]); built once by
/// [`IoLoopBuilder`]. Outside this module it is driven only through its methods.
pub struct IoLoop<'a> {
    job: &'a JobSpec,
    engine: &'a mut dyn IoEngine,
    gen: Generator,
    filler: BufferFiller,
    q: parts::Queue<'a>,
    time: parts::Timeline<'a>,
    files: parts::FileUse,
    acct: Acct,
    per_io: parts::PerIo,
    obs: parts::Observers,
    check: parts::Checks,
    ctl: parts::Control<'a>,
    eng: parts::EngineTraits,
    plan: Plan,
    counts: parts::DebugCounts,
    /// Requests drawn (of the generator or the replayed log).
    ios_issued: u64,
    /// The workload has nothing more to issue in this run.
    exhausted: bool,
    /// Why the loop ends, once decided (module note).
    end: Option<EndReason>,
    /// fill_device: a write hit ENOSPC/EDQUOT. fio terminates the job there, so no verify
    /// phase follows.
    filled: bool,
    /// I/Os the lean loop completed whose submit/complete/depth marks (one each, at depth 1)
    /// are not added yet: [`IoLoop::flush_plain`] adds them before anything reads them.
    plain_unmarked: u64,
}

/// What a run decided from the job's [`Features`], once at its start: which fast paths it
/// may take and the `--explain` marks of this thread.
#[derive(Default)]
struct Plan {
    features: Features,
    /// `account` calls `account_hooks` (per-I/O logs, max_latency, latency_target, act,
    /// `--explain` windows).
    hooks: bool,
    /// `account` takes its plain version ([`FastPath::PlainAccounting`]).
    acct_plain: bool,
    /// The ring loop counts completions without clocks ([`FastPath::UntimedAccounting`]).
    acct_untimed: bool,
    /// `next_slot` / `fill_queue` skip their feature checks ([`FastPath::PlainNext`]).
    plain_next: bool,
    /// The batch path ([`batch`]).
    batch_rw: bool,
    /// The ring loop's submit that fills the queue may wait for the reap's completions in
    /// the same system call ([`IoLoop::fill_wait`]): no per-I/O clocks, and no `--explain`
    /// watching (its programs read a call with submissions as a submission, wait and all).
    submit_waits: bool,
    /// `--explain` without syscall hooks: this thread's marks around the engine's syscalls,
    /// io_submit and io_getevents (libaio: `commit`, `reap`) or each read and write (psync,
    /// pvsync, pvsync2: `queue`, the lean loop's pread/pwrite). None otherwise: one branch
    /// per call site.
    mark_aio: Option<marks::Marker>,
    mark_sync: Option<marks::Marker>,
}

/// Fresh accounting, with empty per-priority statistics where the job has cmdprio.
fn acct_with_prios(job: &JobSpec) -> Acct {
    let mut acct = Acct::default();
    for (d, p) in acct.dirs.iter_mut().zip(crate::io::prio::prio_stats(job)) {
        d.prios = p;
    }
    acct.act = job.act.map(crate::io::act::ActCounter::new);
    acct
}

#[inline]
fn op_of(ddir: u8, data_only: bool) -> IoOp {
    match ddir {
        0 => IoOp::Read,
        1 => IoOp::Write,
        2 => IoOp::Trim,
        _ if data_only => IoOp::Fdatasync,
        _ => IoOp::Fsync,
    }
}

/// fio's name of an I/O direction in its I/O log.
fn iolog_name(op: IoOp) -> &'static str {
    match op {
        IoOp::Read => "read",
        IoOp::Write => "write",
        IoOp::Trim => "trim",
        IoOp::Fdatasync => "datasync",
        IoOp::SyncRange(_) => "sync_file_range",
        _ => "sync",
    }
}

impl<'a> IoLoop<'a> {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.time.clock.now_ns()
    }

    /// Run until done, out of time, stopped or failed; always drains in-flight I/O.
    pub fn run(&mut self) -> EndReason {
        let depth = self.q.slots.len() as u32;
        let low = if self.job.iodepth_low == 0 {
            depth
        } else {
            self.job.iodepth_low.min(depth)
        };
        // Limits may have changed since the last run (the verify phase): check at once.
        self.time.next_event_ns = 0;
        // Once per job: the loop runs again for loops= and the verify phase, whose I/Os add in.
        if self.per_io.win_lat.is_none() {
            self.per_io.win_lat = marks::WindowLat::this_run();
        }
        self.plan_run();
        if !self.check.verify_phase {
            self.set_log_epoch();
            self.ctl.progress.set_state(if self.time.ramp_done {
                JobState::Running
            } else {
                JobState::Ramp
            });
        }
        if self.plain_sync() {
            self.run_plain_sync();
        } else if self.ring_ok() {
            self.run_ring(depth, low);
        }
        let mut idle_rounds = 0u32;
        while self.end.is_none() {
            let before = self.ios_issued;
            self.ctl.flow_held = false;
            // latency_target: only the depth being probed is used.
            let depth = self
                .per_io
                .lat_target
                .as_ref()
                .map_or(depth, |t| t.qd.min(depth));
            self.fill_queue(depth);
            self.commit();
            if self.q.inflight == 0 {
                if self.exhausted && self.q.requeue.is_empty() {
                    self.end.get_or_insert(EndReason::Done);
                }
                // Nothing in flight and nothing new accepted: an engine that keeps answering
                // Busy with an empty queue would spin here forever.
                idle_rounds = if self.ios_issued == before && !self.ctl.flow_held {
                    idle_rounds + 1
                } else {
                    0
                };
                if idle_rounds > 1_000_000 {
                    self.end = Some(EndReason::Error(
                        libc::EIO,
                        format!(
                            "the {} engine accepts no I/O (busy with an empty queue)",
                            self.engine.name()
                        ),
                    ));
                }
                continue;
            }
            self.reap_round(depth, low, Self::reap);
            self.lat_target_step();
        }
        self.drain();
        // The live counters end exact (before a reset for a job that ended within its ramp).
        self.publish_progress();
        self.acct.dirs[0].drop_ios += self.engine.dropped();
        if let Some(g) = self.files.gate.as_mut() {
            if let Err(e) = g.close_all(self.engine) {
                self.end
                    .get_or_insert(EndReason::Error(libc::EIO, e.to_string()));
            }
        }
        if !self.time.ramp_done {
            self.acct.reset(); // ended within ramp_time: nothing counts, as in fio
            self.time.measured_start_ns = self.now_ns();
        }
        if let Some(l) = self.obs.iolog.as_mut() {
            l.close_files();
        }
        self.end.clone().unwrap_or(EndReason::Done)
    }
}

impl IoLoop<'_> {
    /// This run's plan: the `--explain` marks of this thread, then the job's features and
    /// the fast paths they allow (with the engine's part: the lean loop needs an engine that
    /// completes in `queue`, plain accounting one that moves data and completes later, the
    /// batch path `queue_rw`).
    fn plan_run(&mut self) {
        let inline = self.job.io_submit_mode == fiox_job::IoSubmitMode::Inline;
        (self.plan.mark_aio, self.plan.mark_sync) =
            match marks::marks_of(self.job.ioengine.engine(), inline) {
                Some(marks::Marks::Aio) => (marks::this_thread(), None),
                Some(marks::Marks::Sync) => (None, marks::this_thread()),
                None => (None, None),
            };
        let f = self.features();
        self.plan.features = f;
        self.plan.hooks = f.has_hooks();
        let moves_data = !self.eng.copy_lat && !self.eng.zero_bytes;
        self.plan.acct_plain = moves_data && FastPath::PlainAccounting.allows(f);
        self.plan.acct_untimed =
            moves_data && !self.time.timed && FastPath::UntimedAccounting.allows(f);
        self.plan.plain_next = FastPath::PlainNext.allows(f);
        self.plan.batch_rw = self.engine.flags().batches_rw && FastPath::Batch.allows(f);
        self.plan.submit_waits = !self.time.timed && !marks::watching();
    }

    /// A round of reaps after a fill with `reap` (the general loop's or the ring loop's): as
    /// fio, when the queue is full (or nothing more can be queued) reap at least
    /// `iodepth_batch_complete_min` and keep reaping until the depth falls to `iodepth_low`;
    /// otherwise take what has completed without waiting.
    #[inline(always)]
    fn reap_round(&mut self, depth: u32, low: u32, mut reap: impl FnMut(&mut Self, usize)) {
        if self.q.inflight >= depth || self.exhausted || !self.q.requeue.is_empty() {
            let min = self.job.iodepth_batch_complete_min.max(1) as usize;
            loop {
                reap(self, min);
                if self.end.is_some() || self.q.inflight <= low {
                    break;
                }
            }
        } else {
            reap(self, 0);
        }
    }
}

/// Two data units touch a common byte range of the same file and at least one writes.
fn conflicts(a: &Slot, b: &Slot) -> bool {
    a.ddir != SYNC
        && b.ddir != SYNC
        && (a.ddir == 1 || b.ddir == 1)
        && a.file == b.file
        && a.offset < b.offset + b.len as u64
        && b.offset < a.offset + a.len as u64
}

impl IoLoop<'_> {
    /// The memory of an I/O of `len` bytes `start` bytes into slot `id`: the one place where
    /// a unit's length meets its buffer ([`BufPool::span`]). A length past the slot is a fiox
    /// bug (issue 39: a 6,666-byte verify read of a 4,096-byte slot); the job ends with EFAULT
    /// naming it instead of the kernel writing past the buffer.
    #[inline(always)]
    fn span_of(&mut self, id: u32, start: u32, len: u32) -> Option<BufSpan> {
        let span = self.q.pool.span(id as usize, start, len);
        if span.is_none() {
            self.overrun(id, start, len);
        }
        span
    }

    #[cold]
    fn overrun(&mut self, id: u32, start: u32, len: u32) {
        let msg = format!(
            "internal error: an I/O of {len} bytes at byte {start} of I/O buffer {id} does not \
             fit its {} bytes; the I/O was not issued (please report this job)",
            self.q.pool.slot_size()
        );
        self.end = Some(EndReason::Error(libc::EFAULT, msg));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(ddir: u8, file: u32, offset: u64, len: u32) -> Slot {
        Slot {
            ddir,
            file,
            offset,
            len,
            ..Slot::default()
        }
    }

    #[test]
    fn overlapping_writes_conflict() {
        let w = slot(1, 0, 4096, 4096);
        assert!(conflicts(&w, &slot(1, 0, 6000, 4096)));
        assert!(
            conflicts(&w, &slot(0, 0, 4096, 512)),
            "a read of a block being written"
        );
        assert!(!conflicts(&w, &slot(1, 0, 8192, 4096)), "adjacent is fine");
        assert!(!conflicts(&w, &slot(1, 1, 4096, 4096)), "other file");
        assert!(
            !conflicts(&slot(0, 0, 0, 4096), &slot(0, 0, 0, 4096)),
            "reads share"
        );
        assert!(!conflicts(&w, &slot(SYNC, 0, 0, 0)));
    }
}
