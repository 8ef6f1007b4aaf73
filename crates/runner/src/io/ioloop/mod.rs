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

use crate::control::pacing::Pacer;
use crate::gen::{BufferFiller, Generator, IoReq};
use crate::io::acct::{Acct, JobState, Measure, Progress};
use crate::io::clock::Clock;
use crate::verify::VerifyRead;
use fiox_engine::{BufPool, BufSpan, Completion, IoEngine, IoOp};
use fiox_explain::marks;
use fiox_job::{Ddir, JobSpec};
use fiox_stats::log::{rate_windows, RateWindows};
use fiox_stats::{JobLogs, RateSampler};
use std::sync::atomic::AtomicBool;

mod batch;
mod complete;
mod fileuse;
mod lean;
mod request;
mod ring;
mod submit;
mod timeline;
mod vreads;

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

/// Limits and cadence of one job run.
pub struct Limits {
    pub ramp_ns: Option<u64>,
    /// `ramp_size`: the ramp ends after this many bytes (of the job or its group).
    pub ramp_bytes: Option<u64>,
    /// Absolute end (ns since start), ramp included.
    pub deadline_ns: Option<u64>,
    /// `runtime`: the deadline moves to `ramp end + runtime` when the ramp actually ends.
    pub runtime_ns: Option<u64>,
}

/// Everything the loop needs, owned by the job thread.
pub struct IoLoop<'a> {
    pub job: &'a JobSpec,
    pub engine: &'a mut dyn IoEngine,
    pub gen: Generator,
    pub filler: BufferFiller,
    pub pool: &'a mut BufPool,
    pub paths: Vec<String>,
    pub acct: Acct,
    pub progress: &'a Progress,
    pub stop: &'a AtomicBool,
    pub clock: Clock,
    pub(crate) measure: Measure,
    /// `measure.timed()`, asked several times per I/O (the measure is fixed at construction).
    timed: bool,
    /// bw/iops samplers of the directions the job uses.
    pub samplers: [Option<RateSampler>; 3],
    /// write_bw_log/write_lat_log/write_iops_log/write_hist_log files.
    pub logs: JobLogs,
    /// Per-I/O log lines are wanted (cached `logs.wants_io_samples()`).
    log_io: bool,
    windows: RateWindows,
    next_sample_ns: u64,
    /// With per-I/O clocks, when `after_io` next has something to check (0: at the next I/O).
    next_event_ns: u64,
    pub pacer: Pacer,
    pub limits: Limits,
    /// ns since start when measurement (after ramp) began.
    pub measured_start_ns: u64,
    /// Data verification (verify=), if enabled.
    pub verify: Option<crate::verify::JobVerify>,
    /// Check blocks as they are read (a read-only job verifying earlier writes).
    pub read_checks: bool,
    /// Hold back I/O overlapping an in-flight write (verify, serialize_overlap).
    pub serialize: bool,
    /// Verify reads to issue before anything else (a verify_backlog batch, the verify phase).
    vq: std::collections::VecDeque<VerifyRead>,
    /// Direction of the unit last submitted (fio's `last_ddir`: verify-trim rounds do not
    /// start right after a read).
    last_ddir: u8,
    /// The verify phase: the loop issues only `vq`'s reads and ends when they are done.
    verify_phase: bool,
    /// The engine moves no data (null): reads are counted but not checked, as fio does for
    /// its FIO_FAKEIO engines.
    fake_io: bool,
    in_flight: Vec<bool>,
    /// Base result for `--status-interval` snapshots (None: no status reports).
    pub status_template: Option<Box<fiox_stats::JobResult>>,
    /// `write_iolog`: every I/O as it is queued.
    pub iolog: Option<crate::replay::iolog::IoLogWriter>,
    /// `read_iolog`: the log's I/Os replace the generator's.
    pub replay: Option<crate::replay::ReplayQueue>,
    /// `flow`: this job's part in its flow.
    pub flow: Option<crate::control::flow::Member>,
    /// `lockfile=`: the locks each submission takes on its file.
    pub locks: Option<crate::control::filelock::Locks>,
    /// The flow held the job back in this round (not an idle engine).
    flow_held: bool,
    /// `latency_target`: the depth being probed, and what the last completion asked for.
    pub lat_target: Option<crate::control::latarget::LatTarget>,
    /// `block_error_percentiles`: trims and failures per trim-sized block of the file.
    pub blocks: Option<fiox_stats::blocks::BlockInfos>,
    lat_step: crate::control::latarget::Step,
    /// `max_latency` in ns for reads and writes (0: off).
    max_lat_ns: [u64; 2],
    /// `max_latency` is set for reads or writes (then `account` takes its hooks).
    max_lat_on: bool,
    /// `account` calls `account_hooks` (per-I/O logs, max_latency, latency_target, act):
    /// decided at the start of each run, as the loop's owner sets the last two before.
    hooks: bool,
    /// `account` takes its plain version ([`IoLoop::plain_accounting`]): decided at each
    /// run, after `hooks`.
    acct_plain: bool,
    /// None of the features that give `next_slot` / `fill_queue` something other than the
    /// generator's next request (verify, replay, fsync/fdatasync/sync_file_range intervals,
    /// the open-file gate, file operations, flow, trim_backlog, serialize_overlap): their
    /// checks are skipped per I/O. Decided at each `run`, like `hooks`.
    plain_next: bool,
    /// The batch path ([`batch`]): decided at each `run`, like `plain_next`.
    batch_rw: bool,
    /// `--explain` without syscall hooks: this thread's marks around the engine's syscalls,
    /// io_submit and io_getevents (libaio: `commit`, `reap`) or each read and write (psync,
    /// pvsync, pvsync2: `queue`, the lean loop's pread/pwrite). None otherwise: one branch
    /// per call site. Taken at each `run`, on the job thread.
    mark_aio: Option<marks::Marker>,
    mark_sync: Option<marks::Marker>,
    /// --explain in windows: the latency of the I/Os inside them (what the phases add up to).
    pub(crate) win_lat: Option<marks::WindowLat>,
    /// Scratch lists of the batch path: the units of one `queue_rw` call and their slots.
    batch_ids: Vec<u32>,
    batch_units: Vec<fiox_engine::IoUnit>,
    batch_reqs: Vec<IoReq>,
    /// Scratch lists of the ring loop ([`ring`]): one submit batch's SQE fields, one reap's
    /// completions (as long as the queue is deep, sized at the loop's start).
    ring_ios: Vec<fiox_engine::RingIo>,
    ring_cqes: Vec<fiox_engine::RingCqe>,
    /// `--debug=io`: fio's fill/prep/queue/complete line for each I/O.
    dbg_io: bool,
    /// `--debug=random`: the generator notes its random offset draws for fio's lines.
    dbg_random: bool,
    /// `sync_file_range`: per file, the range (first, end) written since its last sync
    /// (empty without the option: nothing is tracked).
    sfr_ranges: Vec<(u64, u64)>,
    /// The request drawn to see that one more I/O follows a due `sync_file_range` (fio
    /// syncs only before a next I/O), issued after the sync.
    held: Option<IoReq>,
    /// Ramp time is over (or there was none).
    pub ramp_done: bool,
    /// Thread CPU counters when measurement began (reset at the end of ramp), the engine's
    /// helper threads included.
    pub cpu_start: fiox_stats::sys::ThreadUsage,
    /// The engine's helper threads (guasi workers, offload submit threads): their CPU time
    /// and context switches are the job's too.
    helpers: Vec<libc::pid_t>,
    pub writes_since_sync: u64,
    pub ios_issued: u64,
    /// Pacing or thinktime configured (checked per I/O, so cached).
    paced: bool,
    /// The engine completes in `queue`: lat equals clat and is copied at the end.
    pub copy_lat: bool,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots to queue (again) before pulling new requests: short I/O remainders, Busy units.
    requeue: Vec<u32>,
    /// Queued but not yet committed.
    pending: Vec<u32>,
    inflight: u32,
    events: Vec<Completion>,
    /// The engine moves no data (cpuio, fio's FIO_NOIO): its I/Os count 0 bytes.
    zero_bytes: bool,
    /// The engine sets the thinktime itself (cpuio), asked before every I/O.
    engine_think: bool,
    /// A 0-byte read means the peer is done (net): the job ends normally.
    eof_ends: bool,
    /// cpuio's `exit_on_io_done`: true once every I/O job of the run has finished.
    pub(crate) io_jobs_done: Option<Box<dyn Fn() -> bool + 'a>>,
    /// `ramp_size` with group_reporting: the bytes of the group's jobs still ramping, and
    /// whether one of them already ended its ramp (then the whole group has).
    pub(crate) ramp_group: Option<Box<dyn Fn() -> (u64, bool) + 'a>>,
    /// `job_start_clock_id`: that clock's ms at the job's epoch.
    pub(crate) job_start_ms: Option<u64>,
    /// thinkcycles spins done (for the debug-build count tests read).
    pub(crate) spins: u64,
    /// `queue_rw` calls of the batch path, and the units it drew (one at a time or in
    /// batches), for the debug-build count tests read.
    pub(crate) batches: u64,
    pub(crate) batch_drawn: u64,
    /// Submit rounds of the ring loop (of `batches`), for the same tests.
    pub(crate) rings: u64,
    /// fio's file-operation engines: the operation done at each open of a file.
    pub(crate) file_ops: Option<crate::io::fileop::FileOps>,
    /// `openfiles` below nrfiles: real opens follow the generator's open/close model.
    pub(crate) gate: Option<crate::files::opengate::OpenGate>,
    /// `unlink_each_loop`: the files are removed before the next open (a new loop began).
    unlink_due: bool,
    /// Scratch list of the files the generator closed since the last I/O (with a gate).
    closed_files: Vec<u32>,
    /// What a new pass does to the files' page cache (`invalidate`, as fio).
    pub(crate) pass_cache: Option<crate::files::cache::PassCache>,
    /// File of the last request: a due fsync goes to it when files open lazily.
    last_file: u32,
    exhausted: bool,
    end: Option<EndReason>,
    /// fill_device: a write hit ENOSPC/EDQUOT. fio terminates the job there, so no verify
    /// phase follows.
    pub(crate) filled: bool,
    ios_since_clock: u32,
    /// I/Os the lean loop completed whose submit/complete/depth marks (one each, at depth 1)
    /// are not added yet: [`IoLoop::flush_plain`] adds them before anything reads them.
    plain_unmarked: u64,
    /// psync's descriptors by file index while the lean loop runs (the engine's
    /// `positional_fds`): the loop issues their reads and writes itself. Empty otherwise.
    direct: Vec<std::os::fd::RawFd>,
    /// Each I/O's priority (the job's, or cmdprio's pick).
    prio: crate::io::prio::PrioPicker,
    /// Per-priority statistics hold lat (lat_percentiles) rather than clat, as fio's.
    prio_on_lat: bool,
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
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        job: &'a JobSpec,
        engine: &'a mut dyn IoEngine,
        gen: Generator,
        filler: BufferFiller,
        logs: JobLogs,
        pool: &'a mut BufPool,
        paths: Vec<String>,
        progress: &'a Progress,
        stop: &'a AtomicBool,
        measure: Measure,
        limits: Limits,
    ) -> IoLoop<'a> {
        let mut gen = gen;
        if crate::debug::on(crate::debug::RANDOM) {
            gen.note_random();
        }
        let depth = pool.len();
        let nfiles = paths.len();
        let rw = job.rw.mode;
        let active = [rw.has_read(), rw.has_write(), rw.has_trim()];
        let windows = rate_windows(job);
        let samplers = [Ddir::Read, Ddir::Write, Ddir::Trim].map(|d| {
            active[d.index()].then(|| RateSampler::new(d, 0, windows.bw_ms, windows.iops_ms))
        });
        let copy_lat = engine.flags().sync;
        let fake_io = engine.flags().no_io;
        let helpers = engine.helper_threads();
        let mut pacer = Pacer::new(job);
        let engine_think = engine.thinktime();
        if let Some(t) = engine_think {
            pacer.engine_think(t);
        }
        pacer.restart(0);
        let zero_bytes = engine.flags().zero_bytes;
        let eof_ends = engine.flags().eof_ends;
        IoLoop {
            job,
            engine,
            gen,
            filler,
            pool,
            paths,
            acct: acct_with_prios(job),
            progress,
            stop,
            clock: Clock::for_source(job.clocksource),
            measure,
            timed: measure.timed(),
            samplers,
            next_sample_ns: 0,
            next_event_ns: 0,
            log_io: logs.wants_io_samples(),
            logs,
            windows,
            paced: pacer.active() || engine_think.is_some(),
            copy_lat,
            pacer,
            ramp_done: limits.ramp_ns.is_none() && limits.ramp_bytes.is_none(),
            status_template: None,
            iolog: None,
            replay: None,
            flow: None,
            locks: None,
            flow_held: false,
            lat_target: None,
            blocks: None,
            lat_step: crate::control::latarget::Step::Nothing,
            max_lat_ns: [job.lat_target.max_ns.read, job.lat_target.max_ns.write],
            max_lat_on: job.lat_target.max_ns.read != 0 || job.lat_target.max_ns.write != 0,
            hooks: true,
            acct_plain: false,
            plain_next: false,
            batch_rw: false,
            mark_aio: None,
            mark_sync: None,
            win_lat: None,
            batch_ids: Vec::with_capacity(depth.min(4096)),
            batch_units: Vec::with_capacity(depth.min(4096)),
            batch_reqs: Vec::with_capacity(depth.min(4096)),
            ring_ios: Vec::new(),
            ring_cqes: Vec::new(),
            dbg_io: crate::debug::on(crate::debug::IO),
            dbg_random: crate::debug::on(crate::debug::RANDOM),
            held: None,
            sfr_ranges: if job.files.sync_file_range.is_some() {
                vec![(u64::MAX, 0); nfiles]
            } else {
                Vec::new()
            },
            verify: None,
            read_checks: false,
            serialize: (job.verify.serialize_overlap
                || job.verify.method != fiox_job::VerifyMethod::None)
                && depth > 1,
            in_flight: vec![false; depth],
            vq: std::collections::VecDeque::new(),
            last_ddir: 1,
            verify_phase: false,
            fake_io,
            cpu_start: crate::sys::job_usage(&helpers),
            helpers,
            limits,
            measured_start_ns: 0,
            writes_since_sync: 0,
            ios_issued: 0,
            slots: vec![Slot::default(); depth],
            free: (0..depth as u32).rev().collect(),
            requeue: Vec::with_capacity(depth),
            pending: Vec::with_capacity(depth),
            inflight: 0,
            events: Vec::with_capacity(depth),
            zero_bytes,
            eof_ends,
            engine_think: engine_think.is_some(),
            io_jobs_done: None,
            ramp_group: None,
            job_start_ms: None,
            spins: 0,
            batches: 0,
            batch_drawn: 0,
            rings: 0,
            file_ops: None,
            gate: None,
            unlink_due: false,
            closed_files: Vec::new(),
            pass_cache: None,
            last_file: 0,
            exhausted: false,
            end: None,
            filled: false,
            ios_since_clock: 0,
            plain_unmarked: 0,
            direct: Vec::new(),
            prio: crate::io::prio::PrioPicker::new(job, job.rand.randseed ^ u64::from(job.index)),
            prio_on_lat: job.stats.lat_percentiles,
        }
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    /// Run until done, out of time, stopped or failed; always drains in-flight I/O.
    pub fn run(&mut self) -> EndReason {
        let depth = self.slots.len() as u32;
        let low = if self.job.iodepth_low == 0 {
            depth
        } else {
            self.job.iodepth_low.min(depth)
        };
        // Limits may have changed since the last run (the verify phase): check at once.
        self.next_event_ns = 0;
        // Once per job: the loop runs again for loops= and the verify phase, whose I/Os add in.
        if self.win_lat.is_none() {
            self.win_lat = marks::WindowLat::this_run();
        }
        self.hooks = self.log_io
            || self.max_lat_on
            || self.lat_target.is_some()
            || self.acct.act.is_some()
            || self.win_lat.is_some();
        self.acct_plain = self.plain_accounting();
        self.plain_next = self.verify.is_none()
            && !self.verify_phase
            && self.vq.is_empty()
            && self.replay.is_none()
            && self.io_jobs_done.is_none()
            && self.job.fsync == 0
            && self.job.fdatasync == 0
            && self.job.files.sync_file_range.is_none()
            && self.gate.is_none()
            && self.file_ops.is_none()
            && self.flow.is_none()
            && self.job.verify.trim_backlog == 0
            && !self.serialize;
        self.batch_rw = self.batch_ok();
        let inline = self.job.io_submit_mode == fiox_job::IoSubmitMode::Inline;
        (self.mark_aio, self.mark_sync) = match marks::marks_of(self.job.ioengine.engine(), inline)
        {
            Some(marks::Marks::Aio) => (marks::this_thread(), None),
            Some(marks::Marks::Sync) => (None, marks::this_thread()),
            None => (None, None),
        };
        if !self.verify_phase {
            self.set_log_epoch();
            self.progress.set_state(if self.ramp_done {
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
            self.flow_held = false;
            // latency_target: only the depth being probed is used.
            let depth = self.lat_target.as_ref().map_or(depth, |t| t.qd.min(depth));
            self.fill_queue(depth);
            self.commit();
            if self.inflight == 0 {
                if self.exhausted && self.requeue.is_empty() {
                    self.end.get_or_insert(EndReason::Done);
                }
                // Nothing in flight and nothing new accepted: an engine that keeps answering
                // Busy with an empty queue would spin here forever.
                idle_rounds = if self.ios_issued == before && !self.flow_held {
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
        if let Some(g) = self.gate.as_mut() {
            if let Err(e) = g.close_all(self.engine) {
                self.end
                    .get_or_insert(EndReason::Error(libc::EIO, e.to_string()));
            }
        }
        if !self.ramp_done {
            self.acct.reset(); // ended within ramp_time: nothing counts, as in fio
            self.measured_start_ns = self.now_ns();
        }
        if let Some(l) = self.iolog.as_mut() {
            l.close_files();
        }
        self.end.clone().unwrap_or(EndReason::Done)
    }
}

impl IoLoop<'_> {
    /// A round of reaps after a fill with `reap` (the general loop's or the ring loop's): as
    /// fio, when the queue is full (or nothing more can be queued) reap at least
    /// `iodepth_batch_complete_min` and keep reaping until the depth falls to `iodepth_low`;
    /// otherwise take what has completed without waiting.
    #[inline(always)]
    fn reap_round(&mut self, depth: u32, low: u32, mut reap: impl FnMut(&mut Self, usize)) {
        if self.inflight >= depth || self.exhausted || !self.requeue.is_empty() {
            let min = self.job.iodepth_batch_complete_min.max(1) as usize;
            loop {
                reap(self, min);
                if self.end.is_some() || self.inflight <= low {
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
        let span = self.pool.span(id as usize, start, len);
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
            self.pool.slot_size()
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
