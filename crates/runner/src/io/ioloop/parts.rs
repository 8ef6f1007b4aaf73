//! The loop's state in owned parts. Each part is built once by [`super::IoLoopBuilder`] and
//! owned by the loop; its fields are visible inside `ioloop` only (the loop's files read
//! them directly on the per-I/O path), never outside it: callers go through the loop's
//! methods. Who changes what:
//! - [`Queue`]: the I/O units and their buffers ([`super::submit`], [`super::complete`], the
//!   fast paths' scratch lists);
//! - [`Timeline`]: clocks, limits, ramp, pacing and the job's CPU counters
//!   ([`super::timeline`], pacing in [`super::submit`]);
//! - [`FileUse`]: files opened, synced and operated on as the loop goes ([`super::fileuse`],
//!   [`super::request`]);
//! - [`PerIo`]: what each I/O adds beyond the counts: its priority, `max_latency`,
//!   `latency_target`, block infos, `--explain` window latencies ([`super::complete`]);
//! - [`Observers`]: what watches the I/O without changing it: logs, rate samplers, status
//!   snapshots, `write_iolog`, `--debug` lines;
//! - [`Checks`]: data verification and overlap holds ([`super::vreads`]);
//! - [`Control`]: what decides from outside whether and when I/O goes: stop flags, live
//!   progress, `read_iolog`, flows, file locks, cpuio's end;
//! - [`EngineTraits`]: what the engine is, read once;
//! - [`DebugCounts`]: counters only debug builds keep (tests read them).

use super::{Slot, POLL_NS};
use crate::control::pacing::Pacer;
use crate::io::acct::{Measure, Progress};
use crate::io::clock::Clock;
use crate::verify::VerifyRead;
use fiox_engine::{BufPool, Completion};
use fiox_explain::marks;
use fiox_stats::log::RateWindows;
use fiox_stats::{JobLogs, RateSampler};
use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;

/// The job's I/O units: slot `i` is buffer `i` of the pool and is in exactly one place
/// (module note of [`super`]), plus the scratch lists of the fast paths.
pub(super) struct Queue<'a> {
    pub(super) pool: &'a mut BufPool,
    pub(super) slots: Vec<Slot>,
    pub(super) free: Vec<u32>,
    /// Slots to queue (again) before pulling new requests: short I/O remainders, Busy units.
    pub(super) requeue: Vec<u32>,
    /// Queued but not yet committed.
    pub(super) pending: Vec<u32>,
    pub(super) inflight: u32,
    pub(super) in_flight: Vec<bool>,
    pub(super) events: Vec<Completion>,
    /// Scratch lists of the batch path: the units of one `queue_rw` call and their slots.
    pub(super) batch_ids: Vec<u32>,
    pub(super) batch_units: Vec<fiox_engine::IoUnit>,
    pub(super) batch_reqs: Vec<crate::gen::IoReq>,
    /// Scratch lists of the ring loop: one submit batch's SQE fields, one reap's completions
    /// (as long as the queue is deep, sized at the loop's start).
    pub(super) ring_ios: Vec<fiox_engine::RingIo>,
    pub(super) ring_cqes: Vec<fiox_engine::RingCqe>,
    /// Requests drawn ahead by the lean loop (one batch of the generator) and not issued yet,
    /// served first, in order, from `ahead_at` on by [`Queue::take_ahead`] (the lean loop,
    /// then `next_request` when the general path takes over). Counted as issued when drawn.
    pub(super) ahead: Vec<crate::gen::IoReq>,
    pub(super) ahead_at: usize,
    /// psync's descriptors by file index while the lean loop runs (the engine's
    /// `positional_fds`): the loop issues their reads and writes itself. Empty otherwise.
    pub(super) direct: Vec<std::os::fd::RawFd>,
}

impl<'a> Queue<'a> {
    pub(super) fn new(pool: &'a mut BufPool) -> Queue<'a> {
        let depth = pool.len();
        let scratch = depth.min(4096);
        Queue {
            pool,
            slots: vec![Slot::default(); depth],
            free: (0..depth as u32).rev().collect(),
            requeue: Vec::with_capacity(depth),
            pending: Vec::with_capacity(depth),
            inflight: 0,
            in_flight: vec![false; depth],
            events: Vec::with_capacity(depth),
            batch_ids: Vec::with_capacity(scratch),
            batch_units: Vec::with_capacity(scratch),
            batch_reqs: Vec::with_capacity(scratch),
            ring_ios: Vec::new(),
            ring_cqes: Vec::new(),
            ahead: Vec::new(),
            ahead_at: 0,
            direct: Vec::new(),
        }
    }

    /// The next request drawn ahead and not issued yet (see `ahead`).
    #[inline(always)]
    pub(super) fn take_ahead(&mut self) -> Option<crate::gen::IoReq> {
        let r = self.ahead.get(self.ahead_at).copied()?;
        self.ahead_at += 1;
        Some(r)
    }

    /// The requests drawn ahead and not issued yet.
    pub(super) fn ahead(&self) -> &[crate::gen::IoReq] {
        self.ahead.get(self.ahead_at..).unwrap_or_default()
    }

    /// Unit `id`, a read or write in flight, completed with `res`: when that is the whole
    /// unit it is marked done and freed, and its [`super::Done`] returned; None (nothing
    /// changed) for anything the general `finish` handles (short, failed, a remainder, a
    /// unit that is not in flight).
    #[inline(always)]
    pub(super) fn take_done(&mut self, id: u32, res: i64) -> Option<super::Done> {
        let i = id as usize;
        let (Some(flag), Some(s)) = (self.in_flight.get_mut(i), self.slots.get(i)) else {
            return None;
        };
        if !*flag || s.done != 0 || res != i64::from(s.len) || s.len == 0 {
            return None;
        }
        *flag = false;
        self.inflight = self.inflight.saturating_sub(1);
        self.free.push(id);
        Some(super::Done::of(s))
    }
}

/// Limits and cadence of one job run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    pub ramp_ns: Option<u64>,
    /// `ramp_size`: the ramp ends after this many bytes (of the job or its group).
    pub ramp_bytes: Option<u64>,
    /// Absolute end (ns since start), ramp included.
    pub deadline_ns: Option<u64>,
    /// `runtime`: the deadline moves to `ramp end + runtime` when the ramp actually ends.
    pub runtime_ns: Option<u64>,
}

/// The job's time: its clock and what is measured, the limits, the ramp, pacing and the CPU
/// counters measurement started from.
pub(super) struct Timeline<'a> {
    pub(super) clock: Clock,
    pub(super) measure: Measure,
    /// `measure.timed()`, asked several times per I/O (the measure is fixed at construction).
    pub(super) timed: bool,
    pub(super) limits: Limits,
    /// With per-I/O clocks, when `after_io` next has something to check (0: at the next I/O).
    pub(super) next_event_ns: u64,
    /// Ramp time is over (or there was none).
    pub(super) ramp_done: bool,
    /// ns since start when measurement (after ramp) began.
    pub(super) measured_start_ns: u64,
    /// Thread CPU counters when measurement began (reset at the end of ramp), the engine's
    /// helper threads included.
    pub(super) cpu_start: fiox_stats::sys::ThreadUsage,
    /// The engine's helper threads (guasi workers, offload submit threads): their CPU time
    /// and context switches are the job's too.
    pub(super) helpers: Vec<libc::pid_t>,
    /// Completions since the clock was last read (without per-I/O clocks).
    pub(super) ios_since_clock: u32,
    /// Completions between two clock reads (without per-I/O clocks): 1 at first, then as
    /// the I/O's pace allows (`timeline::next_stride`).
    pub(super) clock_stride: u32,
    /// The clock's time at its last read (without per-I/O clocks).
    pub(super) last_clock_ns: u64,
    /// `job_start_clock_id`: that clock's ms at the job's epoch.
    pub(super) job_start_ms: Option<u64>,
    /// `ramp_size` with group_reporting: the bytes of the group's jobs still ramping, and
    /// whether one of them already ended its ramp (then the whole group has).
    pub(super) ramp_group: Option<Box<dyn Fn() -> (u64, bool) + 'a>>,
    pub(super) pacer: Pacer,
    /// Pacing or thinktime configured (checked per I/O, so cached).
    pub(super) paced: bool,
    /// The engine sets the thinktime itself (cpuio), asked before every I/O.
    pub(super) engine_think: bool,
}

impl Timeline<'_> {
    /// The earliest a stop flag or status request is looked at after `now`.
    pub(super) fn next_poll(&self, now: u64) -> u64 {
        if self.clock.steady() {
            now + POLL_NS
        } else {
            now
        }
    }
}

/// Files as the loop uses them: names, the open-file gate, file operations, page cache
/// passes, and the sync bookkeeping (fsync/fdatasync/`sync_file_range` intervals).
#[derive(Default)]
pub(super) struct FileUse {
    pub(super) paths: Vec<String>,
    /// `openfiles` below nrfiles: real opens follow the generator's open/close model.
    pub(super) gate: Option<crate::files::opengate::OpenGate>,
    /// fio's file-operation engines: the operation done at each open of a file.
    pub(super) file_ops: Option<crate::io::fileop::FileOps>,
    /// `unlink_each_loop`: the files are removed before the next open (a new loop began).
    pub(super) unlink_due: bool,
    /// Scratch list of the files the generator closed since the last I/O (with a gate).
    pub(super) closed_files: Vec<u32>,
    /// What a new pass does to the files' page cache (`invalidate`, as fio).
    pub(super) pass_cache: Option<crate::files::cache::PassCache>,
    /// File of the last request: a due fsync goes to it when files open lazily.
    pub(super) last_file: u32,
    /// `sync_file_range`: per file, the range (first, end) written since its last sync
    /// (empty without the option: nothing is tracked).
    pub(super) sfr_ranges: Vec<(u64, u64)>,
    /// The request drawn to see that one more I/O follows a due `sync_file_range` (fio
    /// syncs only before a next I/O), issued after the sync.
    pub(super) held: Option<crate::gen::IoReq>,
    pub(super) writes_since_sync: u64,
}

/// What each I/O adds beyond the counts.
pub(super) struct PerIo {
    /// Each I/O's priority (the job's, or cmdprio's pick).
    pub(super) prio: crate::io::prio::PrioPicker,
    /// Per-priority statistics hold lat (lat_percentiles) rather than clat, as fio's.
    pub(super) prio_on_lat: bool,
    /// `max_latency` in ns for reads and writes (0: off).
    pub(super) max_lat_ns: [u64; 2],
    /// `max_latency` is set for reads or writes (then `account` takes its hooks).
    pub(super) max_lat_on: bool,
    /// `latency_target`: the depth being probed, and what the last completion asked for.
    pub(super) lat_target: Option<crate::control::latarget::LatTarget>,
    pub(super) lat_step: crate::control::latarget::Step,
    /// `block_error_percentiles`: trims and failures per trim-sized block of the file.
    pub(super) blocks: Option<fiox_stats::blocks::BlockInfos>,
    /// --explain in windows: the latency of the I/Os inside them (what the phases add up to).
    pub(super) win_lat: Option<marks::WindowLat>,
}

/// What watches the I/O without changing it.
pub(super) struct Observers {
    /// write_bw_log/write_lat_log/write_iops_log/write_hist_log files.
    pub(super) logs: JobLogs,
    /// Per-I/O log lines are wanted (cached `logs.wants_io_samples()`).
    pub(super) log_io: bool,
    /// bw/iops samplers of the directions the job uses.
    pub(super) samplers: [Option<RateSampler>; 3],
    pub(super) windows: RateWindows,
    pub(super) next_sample_ns: u64,
    /// Base result for `--status-interval` snapshots (None: no status reports).
    pub(super) status_template: Option<Box<fiox_stats::JobResult>>,
    /// `write_iolog`: every I/O as it is queued.
    pub(super) iolog: Option<crate::replay::iolog::IoLogWriter>,
    /// `--debug=io`: fio's fill/prep/queue/complete line for each I/O.
    pub(super) dbg_io: bool,
    /// `--debug=random`: the generator notes its random offset draws for fio's lines.
    pub(super) dbg_random: bool,
}

/// Data verification and the holds it needs.
#[derive(Default)]
pub(super) struct Checks {
    /// Data verification (verify=), if enabled.
    pub(super) verify: Option<crate::verify::JobVerify>,
    /// Check blocks as they are read (a read-only job verifying earlier writes).
    pub(super) read_checks: bool,
    /// Verify reads to issue before anything else (a verify_backlog batch, the verify phase).
    pub(super) vq: VecDeque<VerifyRead>,
    /// The verify phase: the loop issues only `vq`'s reads and ends when they are done.
    pub(super) verify_phase: bool,
    /// Hold back I/O overlapping an in-flight write (verify, serialize_overlap).
    pub(super) serialize: bool,
    /// Direction of the unit last submitted (fio's `last_ddir`: verify-trim rounds do not
    /// start right after a read).
    pub(super) last_ddir: u8,
}

/// What decides from outside the loop whether and when I/O goes.
pub(super) struct Control<'a> {
    pub(super) progress: &'a Progress,
    pub(super) stop: &'a AtomicBool,
    /// `read_iolog`: the log's I/Os replace the generator's.
    pub(super) replay: Option<crate::replay::ReplayQueue>,
    /// `flow`: this job's part in its flow (taken at the start, given back at the end).
    pub(super) flow: Option<crate::control::flow::Member>,
    /// The flow held the job back in this round (not an idle engine).
    pub(super) flow_held: bool,
    /// `lockfile=`: the locks each submission takes on its file.
    pub(super) locks: Option<crate::control::filelock::Locks>,
    /// cpuio's `exit_on_io_done`: true once every I/O job of the run has finished.
    pub(super) io_jobs_done: Option<Box<dyn Fn() -> bool + 'a>>,
}

/// What the engine is, read once from its flags.
#[derive(Debug, Clone, Copy)]
pub(super) struct EngineTraits {
    /// The engine completes in `queue`: lat equals clat and is copied at the end.
    pub(super) copy_lat: bool,
    /// The engine moves no data (cpuio, fio's FIO_NOIO): its I/Os count 0 bytes.
    pub(super) zero_bytes: bool,
    /// A 0-byte read means the peer is done (net): the job ends normally.
    pub(super) eof_ends: bool,
    /// The engine moves no data (null): reads are counted but not checked, as fio does for
    /// its FIO_FAKEIO engines.
    pub(super) fake_io: bool,
}

/// Counters of how the loop went that only debug builds keep (the count tests read them
/// through `FIOX_DEBUG_*`); in release builds they are empty and counting is a no-op.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct DebugCounts {
    /// thinkcycles spins done.
    #[cfg(debug_assertions)]
    pub(crate) spins: u64,
    /// `queue_rw` calls of the batch path, and the units it drew (one at a time or in batches).
    #[cfg(debug_assertions)]
    pub(crate) batches: u64,
    #[cfg(debug_assertions)]
    pub(crate) batch_drawn: u64,
    /// Submit rounds of the ring loop (of `batches`).
    #[cfg(debug_assertions)]
    pub(crate) rings: u64,
}

impl DebugCounts {
    #[inline(always)]
    pub(super) fn spin(&mut self) {
        #[cfg(debug_assertions)]
        {
            self.spins += 1;
        }
    }

    /// A batch the batch path queued (`ring`: the ring loop's).
    #[inline(always)]
    pub(super) fn batch(&mut self, ring: bool) {
        #[cfg(debug_assertions)]
        {
            self.batches += 1;
            self.rings += u64::from(ring);
        }
        let _ = ring;
    }

    /// Debug builds, on request (`FIOX_DEBUG_THINKCYCLES`, `FIOX_DEBUG_BATCHES`): how many
    /// I/Os were followed by a thinkcycles spin; how many units the batch path drew in all,
    /// how many batches it queued and how many of those were the ring loop's.
    pub(crate) fn print(&self, job: &str) {
        #[cfg(debug_assertions)]
        {
            if std::env::var_os("FIOX_DEBUG_THINKCYCLES").is_some() {
                fiox_guard::eprintln!("fiox-debug: job {job}: thinkcycles spins {}", self.spins);
            }
            if std::env::var_os("FIOX_DEBUG_BATCHES").is_some() {
                fiox_guard::eprintln!(
                    "fiox-debug: job {job}: batch path units {} batches {} ring {}",
                    self.batch_drawn,
                    self.batches,
                    self.rings
                );
            }
        }
        let _ = job;
    }

    /// Units the batch path drew (one at a time or for a batch).
    #[inline(always)]
    pub(super) fn drawn(&mut self, units: u64) {
        #[cfg(debug_assertions)]
        {
            self.batch_drawn += units;
        }
        let _ = units;
    }
}
