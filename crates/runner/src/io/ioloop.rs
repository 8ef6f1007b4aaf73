//! The per-job I/O loop: pulls requests from the generator, fills write buffers, queues them to
//! the engine (commit per `iodepth_batch_submit`), reaps with `getevents(min, max)` honouring
//! `iodepth_batch_complete_min/max` and `iodepth_low`, re-issues short I/Os, applies
//! `continue_on_error`/`ignore_error`, fsyncs every `fsync`/`fdatasync` writes, paces, and
//! measures slat/clat/lat. Time is kept as nanoseconds since the job's start ([`Clock`]).

use crate::control::pacing::{self, Pacer};
use crate::gen::{BufferFiller, Generator, IoReq};
use crate::io::acct::{Acct, JobState, Measure, Progress};
use crate::io::clock::Clock;
use crate::verify::VerifyRead;
use fiox_engine::{BufPool, BufPtr, Completion, IoEngine, IoOp, IoUnit, Queued};
use fiox_job::{Ddir, JobSpec};
use fiox_stats::log::{rate_windows, RateWindows};
use fiox_stats::{IoSample, JobLogs, RateSampler};
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// fio's file-operation engines: the operation done at each open of a file.
    pub(crate) file_ops: Option<crate::io::fileop::FileOps>,
    /// `openfiles` below nrfiles: real opens follow the generator's open/close model.
    pub(crate) gate: Option<crate::files::opengate::OpenGate>,
    /// `unlink_each_loop`: the files are removed before the next open (a new loop began).
    unlink_due: bool,
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
            file_ops: None,
            gate: None,
            unlink_due: false,
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
        self.hooks =
            self.log_io || self.max_lat_on || self.lat_target.is_some() || self.acct.act.is_some();
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
            let full = self.inflight >= depth || self.exhausted || !self.requeue.is_empty();
            if full {
                // As fio: when the queue is full, reap at least iodepth_batch_complete_min, and
                // keep reaping until the depth falls to iodepth_low.
                let min = self.job.iodepth_batch_complete_min.max(1) as usize;
                loop {
                    self.reap(min);
                    if self.end.is_some() || self.inflight <= low {
                        break;
                    }
                }
            } else {
                self.reap(0);
            }
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

    /// Whether the job can take the lean loop: a synchronous engine (every unit completes in
    /// `queue`) and none of the features that hook into the loop per I/O. Decided once per
    /// run, so a plain job pays one branch for all of them instead of one each.
    fn plain_sync(&self) -> bool {
        self.copy_lat
            && self.verify.is_none()
            && self.replay.is_none()
            && self.flow.is_none()
            && self.locks.is_none()
            && self.lat_target.is_none()
            && self.iolog.is_none()
            && self.gate.is_none()
            && self.file_ops.is_none()
            && self.io_jobs_done.is_none()
            && self.job.files.sync_file_range.is_none()
            && !self.dbg_io
            && !self.dbg_random
            && !self.paced
            && !self.serialize
            && self.job.fsync == 0
            && self.job.pacing.thinkcycles == 0
            && self.job.fdatasync == 0
            && !self.verify_phase
            && self.vq.is_empty()
    }

    /// The loop of a plain job on a synchronous engine ([`IoLoop::plain_sync`]): request,
    /// prepare, queue (which completes and accounts the unit), until the job ends. Anything
    /// out of the ordinary (a short I/O to re-issue, a busy engine, a unit left in flight, an
    /// exhausted pass) returns to the general loop in [`IoLoop::run`], which handles it.
    fn run_plain_sync(&mut self) {
        self.plain_loop();
        self.direct.clear();
        self.flush_plain();
    }

    fn plain_loop(&mut self) {
        if self.inflight != 0 || !self.requeue.is_empty() {
            return;
        }
        // The unit stays on the free list unless the engine does not complete it in full
        // right away (`plain_io`): a sync engine's unit is free again when queue returns, so
        // the same unit (and buffer) serves every I/O until then.
        let Some(&id) = self.free.last() else {
            return;
        };
        // Asked at each entry: the general path may have reopened files since.
        self.direct = self.engine.positional_fds().unwrap_or_default();
        if self.direct.is_empty() {
            self.plain_ios::<false>(id);
        } else {
            self.plain_ios::<true>(id);
        }
    }

    /// The lean loop's I/Os on unit `id`; `DIRECT`: psync's reads and writes issued here
    /// (`direct`), decided once so that other engines' loops carry no test for it.
    #[inline(always)]
    fn plain_ios<const DIRECT: bool>(&mut self, id: u32) {
        let buf = self.pool.ptr(id as usize);
        while self.end.is_none() {
            let Some(req) = self.next_request_of(true) else {
                return;
            };
            self.last_file = req.file;
            if !self.plain_io::<DIRECT>(id, buf, req) {
                // The unit took the general path: so does the rest of the job.
                return;
            }
        }
    }

    /// Add the lean loop's pending submit/complete/depth marks: each of its I/Os was one
    /// submit of 1 and one completion of 1 at depth 1. Called when the lean loop ends and
    /// before a snapshot or the ramp's reset reads or clears those counts.
    fn flush_plain(&mut self) {
        let n = std::mem::take(&mut self.plain_unmarked);
        if n > 0 {
            self.acct.submit.mark_counts(1, n);
            self.acct.depth.mark_depth(1, n);
            self.acct.complete.mark_counts(1, n);
        }
    }

    /// `prepare` + `submit` + `finish` of one I/O in the lean loop, without the slot's round
    /// trips through `slots`: the same clock reads, priority draw, buffer fill and accounting.
    /// An I/O the engine does not complete in full in `queue` (short, failed, busy, queued)
    /// takes the general path from its result on, its unit off the free list as there.
    /// True: the unit completed in full and is free again (the lean loop goes on).
    #[inline(always)]
    fn plain_io<const DIRECT: bool>(&mut self, id: u32, buf: BufPtr, req: IoReq) -> bool {
        let d = req.ddir.index() as u8;
        if req.ddir == Ddir::Write {
            self.writes_since_sync += 1;
            let buf = self.pool.slice_mut(id as usize);
            let n = (req.len as usize).min(buf.len());
            self.filler.fill(&mut buf[..n], false);
        }
        let start_ns = if self.timed { self.now_ns() } else { 0 };
        let (prio, ioprio) = self.prio.pick(d, req.len);
        self.last_ddir = d;
        let unit = IoUnit {
            op: op_of(d, false),
            file: req.file,
            offset: req.offset,
            len: req.len,
            buf,
            ioprio,
        };
        // Built only where needed (the general path, the per-I/O hooks): not per I/O.
        let slot = || Slot {
            ddir: d,
            file: req.file,
            offset: req.offset,
            len: req.len,
            start_ns,
            issue_ns: start_ns,
            prio,
            ioprio,
            ..Slot::default()
        };
        let direct = if DIRECT {
            self.direct.get(req.file as usize)
        } else {
            None
        };
        let r = match direct {
            // psync's read or write inline: no dynamic call to return through after the syscall.
            Some(&fd) if d < 2 => {
                match self.pool.slice_mut(id as usize).get_mut(..req.len as usize) {
                    Some(b) => Ok(Queued::Done(fiox_engine::positional_io(
                        fd,
                        d == 1,
                        b,
                        req.offset,
                    ))),
                    None => self.engine.queue(id, &unit),
                }
            }
            _ => self.engine.queue(id, &unit),
        };
        match r {
            Ok(Queued::Done(res)) if res == i64::from(req.len) && req.len > 0 => {
                // Read the clock first: the bookkeeping below is not part of the I/O.
                let now = if self.timed { self.now_ns() } else { 0 };
                // submit/complete/depth: added in bulk by flush_plain.
                self.plain_unmarked += 1;
                if let Some(b) = self.blocks.as_mut().filter(|_| d == 2) {
                    b.trimmed(req.offset);
                }
                let done = Done {
                    ddir: d,
                    prio,
                    len: req.len,
                    start_ns,
                    issue_ns: start_ns,
                };
                self.account_done(done, now, true, true, slot);
                true
            }
            r => {
                let s = slot();
                self.free.pop();
                self.slots[id as usize] = Slot { issue_ns: 0, ..s };
                self.queued(id, &s, r);
                false
            }
        }
    }

    /// Queue units until the queue is full, the workload is exhausted or the engine is busy.
    fn fill_queue(&mut self, depth: u32) {
        while self.inflight < depth && self.end.is_none() {
            if self.requeue.is_empty() && self.flow.as_mut().is_some_and(|f| f.ahead()) {
                self.hold_for_flow();
                return;
            }
            if self.verify.as_ref().is_some_and(|v| v.backlog_due()) {
                self.queue_backlog();
            }
            if self.job.verify.trim_backlog > 0 && !self.verify_phase {
                self.queue_trim();
            }
            let id = match self.next_slot() {
                Some(id) => id,
                None => return,
            };
            if self.end.is_some() {
                // Its turn came after the end (pace): the unit goes back unsent.
                self.free.push(id);
                return;
            }
            if self.serialize && self.overlaps_in_flight(id) {
                // Wait for the overlapping write: its data must not race this one.
                self.requeue.push(id);
                return;
            }
            if !self.submit(id) {
                return;
            }
            if self.pending.len() >= self.job.iodepth_batch_submit.max(1) as usize {
                self.commit();
            }
        }
    }

    /// latency_target after completions: judge the window, act on what was asked.
    fn lat_target_step(&mut self) {
        use crate::control::latarget::Step;
        let Some(t) = self.lat_target.as_mut() else {
            return;
        };
        let mut step = std::mem::replace(&mut self.lat_step, Step::Nothing);
        if step == Step::Nothing && self.ramp_done && !self.verify_phase {
            let now = self.clock.now_ns();
            let ios = self.acct.dirs[0].total_ios + self.acct.dirs[1].total_ios;
            step = t.check(now, ios);
        }
        match step {
            Step::Nothing | Step::Fatal => {}
            Step::Quiesce => self.drain(),
            Step::FinalWindow => {
                // Only the settled depth's results count, as in fio.
                self.drain();
                self.acct.reset();
                let now = self.now_ns();
                self.measured_start_ns = now;
                // The final window counts from the reset I/O counts.
                if let Some(t) = self.lat_target.as_mut() {
                    t.new_cycle(now, 0);
                }
            }
            Step::Done => {
                self.end.get_or_insert(EndReason::Done);
            }
        }
    }

    /// fio's flow hold: with `flow_sleep`, finish the I/O in flight and sleep; then check the
    /// stop flags and the runtime (no completion may come to check them). Without
    /// `flow_sleep` the held job spins straight back to its check, as fio's do_io loop does
    /// (`continue`): yielding here handed the job's CPU time to any other runnable thread, so
    /// under CPU contention a flow ran at a fraction of fio's rate.
    fn hold_for_flow(&mut self) {
        self.flow_held = true;
        let sleep = self.flow.as_ref().map_or(0, |f| f.sleep_us);
        if sleep > 0 {
            self.drain();
            pacing::wait_until(
                std::time::Instant::now() + std::time::Duration::from_micros(sleep),
                self.stop,
            );
        } else {
            std::hint::spin_loop();
        }
        let terminated = self.progress.terminate.load(Ordering::Relaxed) && !self.verify_phase;
        let late = self
            .limits
            .deadline_ns
            .is_some_and(|dl| self.now_ns() >= dl);
        if self.stop.load(Ordering::Relaxed) {
            self.end.get_or_insert(EndReason::Stopped);
        } else if terminated || late {
            self.end.get_or_insert(EndReason::Time);
        }
    }

    /// Whether slot `id` touches a byte range of a write still in flight (or the other way).
    fn overlaps_in_flight(&self, id: u32) -> bool {
        let s = &self.slots[id as usize];
        if s.ddir == SYNC {
            return false;
        }
        self.slots
            .iter()
            .enumerate()
            .any(|(j, o)| j != id as usize && self.in_flight[j] && conflicts(s, o))
    }

    /// Pick the next unit to queue: a re-issue, an fsync that is due, or a new request.
    fn next_slot(&mut self) -> Option<u32> {
        if let Some(id) = self.requeue.pop() {
            return Some(id);
        }
        if self.verify_phase || !self.vq.is_empty() {
            return self.next_verify_read();
        }
        if self.exhausted {
            return None;
        }
        if self.io_jobs_done.as_ref().is_some_and(|done| done()) {
            // cpuio's exit_on_io_done: the job is done, as fio sets td->done.
            self.exhausted = true;
            return None;
        }
        if self.replay.is_some() {
            return self.next_replayed();
        }
        let sync_every = if self.job.fsync > 0 {
            self.job.fsync
        } else {
            self.job.fdatasync
        };
        if sync_every > 0 && self.writes_since_sync >= sync_every {
            if self.held.is_none() {
                // As fio: a sync comes before the next I/O, so none follows the job's last
                // write (fio's loop ends first; end_fsync is the option for that one).
                self.held = Some(self.next_request()?);
            }
            let id = self.free.pop()?;
            self.writes_since_sync = 0;
            self.slots[id as usize] = Slot {
                ddir: SYNC,
                op_data_only: self.job.fsync == 0,
                file: if self.gate.is_some() {
                    self.last_file
                } else {
                    0
                },
                ..Default::default()
            };
            self.stamp_start(id);
            return Some(id);
        }
        if let Some(id) = self.sync_range_due(sync_every) {
            return Some(id);
        }
        let req = match self.held.take() {
            Some(r) => r,
            None => self.next_request()?,
        };
        // Most jobs keep every file open: skip the gate's bookkeeping call.
        if self.gate.is_some() && !self.follow_opens(req.file) {
            return None;
        }
        if self.file_ops.is_some() && !self.file_op(req.file) {
            return None;
        }
        self.last_file = req.file;
        let id = self.free.pop()?;
        self.prepare(id, req);
        Some(id)
    }

    /// fio's `sync_file_range`: every N writes (when no fsync/fdatasync interval is set), a
    /// sync over the range of the current file written since its last sync.
    fn sync_range_due(&mut self, sync_every: u64) -> Option<u32> {
        let (flags, every) = self.job.files.sync_file_range?;
        if sync_every > 0 || self.writes_since_sync < every {
            return None;
        }
        if self.held.is_none() {
            // The last write of the job is not followed by a sync (fio's loop ends first).
            self.held = Some(self.next_request()?);
        }
        let id = self.free.pop()?;
        self.writes_since_sync = 0;
        let file = if self.gate.is_some() {
            self.last_file
        } else {
            0
        };
        let (first, end) = self
            .sfr_ranges
            .get(file as usize)
            .copied()
            .unwrap_or((0, 0));
        // Longer than a unit's 32-bit length: u32::MAX, which the engine syncs to the end.
        let (offset, len) = if end > first {
            (first, (end - first).min(u64::from(u32::MAX)) as u32)
        } else {
            (0, 0)
        };
        self.slots[id as usize] = Slot {
            ddir: SYNC,
            sfr: flags,
            file,
            offset,
            len,
            ..Default::default()
        };
        self.stamp_start(id);
        Some(id)
    }

    /// The next unit of a `read_iolog` replay, once its time has come.
    fn next_replayed(&mut self) -> Option<u32> {
        use crate::replay::Act;
        loop {
            if self.free.is_empty() {
                return None;
            }
            let q = self.replay.as_mut()?;
            let Some(e) = q.pop() else {
                self.exhausted = true;
                return None;
            };
            if let Some(at) = q.due(&e) {
                if !pacing::wait_until(at, self.stop) {
                    self.exhausted = true;
                    return None;
                }
            }
            let id = match e.act {
                Act::WaitUntilMs(_) => continue,
                Act::Sync | Act::Datasync => {
                    let id = self.free.pop()?;
                    self.slots[id as usize] = Slot {
                        ddir: SYNC,
                        op_data_only: e.act == Act::Datasync,
                        file: e.file,
                        ..Default::default()
                    };
                    self.stamp_start(id);
                    id
                }
                Act::Io(ddir) => {
                    if !self.follow_opens(e.file) {
                        if let Some(q) = self.replay.as_mut() {
                            q.push_front(e);
                        }
                        return None;
                    }
                    self.ios_issued += 1;
                    self.last_file = e.file;
                    let id = self.free.pop()?;
                    let req = IoReq {
                        ddir,
                        file: e.file,
                        offset: e.offset,
                        len: e.len,
                    };
                    self.prepare(id, req);
                    id
                }
            };
            if let Some(q) = self.replay.as_mut() {
                q.issued();
            }
            return Some(id);
        }
    }

    /// Next request from the generator, starting further passes as fio would (loops,
    /// time_based wrap-around, io_size larger than the files).
    #[inline(always)]
    fn next_request(&mut self) -> Option<IoReq> {
        self.next_request_of(false)
    }

    /// `next_request`; `lean`: called from the lean loop, which runs neither paced nor with
    /// `--debug=random` (its checks fold away).
    #[inline(always)]
    fn next_request_of(&mut self, lean: bool) -> Option<IoReq> {
        // A pass that yields nothing would make a time_based job spin: stop after one.
        for _ in 0..2 {
            let next = if !lean
                && self.paced
                && self.job.rw.mode.has_read()
                && self.job.rw.mode.has_write()
            {
                let now = self.now_ns();
                let pacer = &self.pacer;
                self.gen
                    .next_rated(|d| Ddir::ALL[pacer.pick(d.index(), now)])
            } else {
                self.gen.next()
            };
            if let Some(r) = next {
                self.ios_issued += 1;
                if !lean && self.dbg_random {
                    self.debug_random();
                }
                if let Some(file) = self.gen.take_wrapped() {
                    if let Some(c) = &self.pass_cache {
                        c.wrapped(file);
                    }
                }
                return Some(r);
            }
            if !self.gen.another_pass() {
                break;
            }
            if self.gen.take_new_loop() && crate::files::unlinks_each_loop(self.job) {
                self.unlink_due = true;
            }
            self.gen.restart();
            if let Some(c) = &self.pass_cache {
                c.new_pass();
            }
        }
        self.exhausted = true;
        None
    }

    /// `openfiles`: close the files the generator closed (once their I/O is out), then open
    /// `file` if it is not open yet. False when an open or close failed (the job ends).
    fn follow_opens(&mut self, file: u32) -> bool {
        let Some(mut gate) = self.gate.take() else {
            return true;
        };
        let mut res = Ok(());
        if std::mem::take(&mut self.unlink_due) {
            res = self.unlink_files(&mut gate);
        }
        for i in 0..gate.len() {
            if res.is_ok() && gate.is_open(i) && !self.gen.is_open(i) {
                self.quiesce_file(i as u32);
                res = gate.close(self.engine, i);
            }
        }
        if res.is_ok() && !gate.is_open(file as usize) {
            res = gate.open(self.engine, file as usize);
        }
        self.gate = Some(gate);
        if let Err(e) = res {
            self.end
                .get_or_insert(EndReason::Error(libc::EIO, e.to_string()));
            return false;
        }
        self.end.is_none()
    }

    /// `unlink_each_loop` at a new loop: every file closed (its I/O done first), then those
    /// fiox created removed, as fio's unlink_all_files before the loop's first open.
    fn unlink_files(
        &mut self,
        gate: &mut crate::files::opengate::OpenGate,
    ) -> Result<(), crate::error::RunError> {
        for i in 0..gate.len() {
            if gate.is_open(i) {
                self.quiesce_file(i as u32);
                gate.close(self.engine, i)?;
            }
        }
        gate.unlink_owned()
    }

    /// fio's file-operation engines: the engine's operation when the generator opened `file`
    /// since the last one. False when it failed (the job ends with its errno, as in fio).
    fn file_op(&mut self, file: u32) -> bool {
        let Some(ops) = self.file_ops.as_mut() else {
            return true;
        };
        let path = self.paths.get(file as usize).map(String::as_str);
        match ops.before_io(self.engine, &self.gen, file, path, &mut self.acct) {
            Ok(()) => true,
            Err((errno, msg)) => {
                self.end.get_or_insert(EndReason::Error(errno, msg));
                false
            }
        }
    }

    /// Wait until no unit for `file` is queued, in flight or waiting to be re-issued (fio
    /// closes a file only after its last I/O completed).
    fn quiesce_file(&mut self, file: u32) {
        while self.end.is_none() {
            if let Some(pos) = self
                .requeue
                .iter()
                .position(|&id| self.slots[id as usize].file == file)
            {
                let id = self.requeue.remove(pos);
                self.submit(id);
                self.commit();
                if self.inflight > 0 {
                    self.reap(1);
                }
                continue;
            }
            let busy = self
                .slots
                .iter()
                .zip(&self.in_flight)
                .any(|(s, &f)| f && s.file == file);
            if !busy {
                return;
            }
            self.commit();
            self.reap(1);
        }
    }

    #[inline]
    fn stamp_start(&mut self, id: u32) {
        if self.timed {
            self.slots[id as usize].start_ns = self.now_ns();
        }
    }

    /// Set up slot `id` for `req`, fill its buffer for writes and pace it.
    #[inline(always)]
    fn prepare(&mut self, id: u32, req: IoReq) {
        let d = req.ddir.index() as u8;
        self.slots[id as usize] = Slot {
            ddir: d,
            op_data_only: false,
            file: req.file,
            offset: req.offset,
            len: req.len,
            done: 0,
            start_ns: 0,
            issue_ns: 0,
            seq: 0,
            check: false,
            prio: 0,
            ioprio: 0,
            sfr: 0,
        };
        if req.ddir == Ddir::Write {
            self.writes_since_sync += 1;
            let now = if self.verify.is_some() {
                self.now_ns()
            } else {
                0
            };
            let buf = self.pool.slice_mut(id as usize);
            let n = (req.len as usize).min(buf.len());
            self.filler.fill(&mut buf[..n], false);
            if let Some(v) = self.verify.as_mut() {
                match v.fill(&mut buf[..n], req.offset, now) {
                    Ok(seq) => self.slots[id as usize].seq = seq,
                    Err(e) => self.end = Some(EndReason::Error(libc::EINVAL, e)),
                }
                if crate::debug::on(crate::debug::VERIFY) {
                    self.debug_verify_fill(id, n as u64);
                }
            }
        }
        if self.paced {
            self.pace(d as usize, req.len as u64);
        }
        self.stamp_start(id);
        if self.dbg_io {
            let s = self.slots[id as usize];
            self.debug_io("fill", id, &s);
            self.debug_io("prep", id, &s);
        }
    }

    /// fio's `--debug=random` lines for the random offset draws of the last request.
    #[cold]
    fn debug_random(&mut self) {
        for n in self.gen.take_rand_notes() {
            match n {
                fiox_workload::RandNote::Drawn(r) => {
                    crate::debug::log(crate::debug::RANDOM, format_args!("off rand {r}"));
                }
                fiox_workload::RandNote::Busy(b) => crate::debug::log(
                    crate::debug::RANDOM,
                    format_args!("get_next_rand_offset: offset {b} busy"),
                ),
            }
        }
    }

    /// fio's `--debug=verify` lines for a write's verify contents (fill_verify_pattern, then
    /// populate_hdr per header).
    #[cold]
    fn debug_verify_fill(&self, id: u32, len: u64) {
        let vs = &self.job.verify;
        if vs.verify_pattern.is_empty() {
            crate::dprint!(crate::debug::VERIFY, "fill random bytes len={len}");
        } else if vs.verify_pattern_offsets.is_empty() {
            // fio fills the buffers with a fixed pattern once, up front; a pattern with `%o`
            // is pasted per write, without a line.
            crate::dprint!(
                crate::debug::VERIFY,
                "using already filled verify pattern b={} len={len}",
                vs.verify_pattern.len()
            );
        }
        let interval = vs.verify_interval.unwrap_or(len);
        crate::debug::verify_headers(vs.method, true, id, len, interval);
    }

    /// fio's `--debug=io` line for an I/O unit (the slot number stands for fio's pointer).
    #[cold]
    fn debug_io(&self, what: &str, id: u32, s: &Slot) {
        let path = self.paths.get(s.file as usize).map_or("", String::as_str);
        crate::debug::log(
            crate::debug::IO,
            format_args!(
                "{what}: io_u {:#x}: off={:#x},len={:#x},ddir={},file={path}",
                id, s.offset, s.len, s.ddir
            ),
        );
    }

    fn pace(&mut self, d: usize, len: u64) {
        let now = self.now_ns();
        // Never wait past the end of the run.
        let deadline = self.limits.deadline_ns.unwrap_or(u64::MAX);
        let due = self.pacer.admit(d, len, now);
        let at = due.min(deadline);
        if at > now {
            // As fio: let in-flight I/O complete first, so waiting does not inflate its clat.
            self.quiesce();
            // exitall/exit_what (the job's terminate flag) ends the wait, as a signal does.
            let terminate = (!self.verify_phase).then_some(&self.progress.terminate);
            let until = self.clock.instant_at(at);
            if !pacing::wait_until_or(until, self.stop, terminate) {
                self.poll_stop();
                return;
            }
        }
        if due >= deadline && self.verify.is_none() {
            // This I/O's turn comes only as the run time ends: as in fio, the job ends without
            // it, so the queue does not fill with `iodepth` unpaced I/Os at the end. (A verify
            // job's unit is already in its write log, so it still goes.)
            self.end.get_or_insert(EndReason::Time);
            return;
        }
        if self.engine_think {
            if let Some(t) = self.engine.thinktime() {
                self.pacer.engine_think(t);
            }
        }
        let done = self.acct.dirs.iter().map(|d| d.total_ios).sum();
        if let Some((spin, sleep)) = self.pacer.think_due(done, now) {
            self.quiesce();
            let t0 = std::time::Instant::now();
            pacing::spin_for(spin, self.stop);
            if !sleep.is_zero() {
                // Not past the end of the run, and woken by a stop (both within 20 ms).
                let end = self.now_ns().saturating_add(sleep.as_nanos() as u64);
                let end = end.min(self.limits.deadline_ns.unwrap_or(u64::MAX));
                pacing::wait_until(self.clock.instant_at(end), self.stop);
            }
            self.pacer.thought(d, t0.elapsed());
        }
    }

    /// Hand slot `id` to the engine; returns false when the engine is busy.
    fn submit(&mut self, id: u32) -> bool {
        let mut s = self.slots[id as usize];
        if s.ddir != SYNC {
            (s.prio, s.ioprio) = self.prio.pick(s.ddir, s.len);
            self.slots[id as usize] = s;
        }
        self.last_ddir = s.ddir;
        let buf = if s.ddir == SYNC {
            BufPtr::none()
        } else {
            // The remainder of a short I/O starts `done` bytes into the slot.
            let p = self.pool.ptr(id as usize);
            offset_ptr(p, s.done as usize)
        };
        let unit = IoUnit {
            op: if s.sfr != 0 {
                IoOp::SyncRange(s.sfr)
            } else {
                op_of(s.ddir, s.op_data_only)
            },
            file: s.file,
            offset: s.offset + s.done as u64,
            len: s.len - s.done,
            buf,
            ioprio: s.ioprio,
        };
        if let Some(l) = self.iolog.as_mut() {
            l.io(unit.file, iolog_name(unit.op), unit.offset, unit.len);
        }
        if self.dbg_io {
            self.debug_io("queue", id, &s);
        }
        let r = match self.locks.as_ref() {
            // As fio: the file's lock is held while the engine takes the I/O (all of it for
            // a synchronous engine) and released as soon as queue returns.
            Some(l) => {
                let _held = l.lock(unit.file, matches!(unit.op, IoOp::Read));
                self.engine.queue(id, &unit)
            }
            None => self.engine.queue(id, &unit),
        };
        self.queued(id, &s, r)
    }

    /// What became of the unit `submit` handed to the engine: completed (accounted now),
    /// queued, refused as busy (re-issued later) or failed (the job ends).
    #[inline(always)]
    fn queued(&mut self, id: u32, s: &Slot, r: Result<Queued, fiox_engine::EngineError>) -> bool {
        let ok = match r {
            Ok(Queued::Done(res)) => {
                // Read the clock first: the bookkeeping below is not part of the I/O.
                let now = if self.timed { self.now_ns() } else { 0 };
                self.acct.submit.mark_count(1);
                self.acct.depth.mark_depth(self.inflight + 1, 1);
                self.acct.complete.mark_count(1);
                self.slots[id as usize].issue_ns = s.start_ns;
                self.finish(id, res, now, true);
                true
            }
            Ok(Queued::Queued) => {
                self.inflight += 1;
                self.in_flight[id as usize] = true;
                self.pending.push(id);
                true
            }
            Ok(Queued::Busy) => {
                self.requeue.push(id);
                false
            }
            Err(e) => {
                self.free.push(id);
                self.end = Some(EndReason::Error(libc::EIO, e.to_string()));
                false
            }
        };
        if ok && s.ddir != SYNC && self.job.pacing.thinkcycles != 0 {
            self.think_cycles();
        }
        ok
    }

    /// thinkcycles: busy-wait that many pause instructions after an I/O (fio's cycles_spin,
    /// whose nop is x86's pause too).
    #[cold]
    fn think_cycles(&mut self) {
        for _ in 0..self.job.pacing.thinkcycles {
            std::hint::spin_loop();
        }
        self.spins += 1;
    }

    /// Submit what was queued; stamps issue times (slat ends here).
    fn commit(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let n = self.pending.len();
        if let Err(e) = self.engine.commit() {
            self.end = Some(EndReason::Error(libc::EIO, e.to_string()));
        }
        self.acct.submit.mark_count(n as u64);
        self.acct.depth.mark_depth(self.inflight, n as u64);
        let now = if self.timed { self.now_ns() } else { 0 };
        for &id in &self.pending {
            self.slots[id as usize].issue_ns = now;
        }
        self.pending.clear();
    }

    /// Reap completions: wait for at least `min` (0 = poll).
    fn reap(&mut self, min: usize) {
        let min = min.min(self.inflight as usize);
        let max = (self.job.iodepth_batch_complete_max as usize)
            .max(min)
            .max(1)
            .min(self.inflight as usize);
        self.events.clear();
        let mut events = std::mem::take(&mut self.events);
        let r = self.engine.getevents(min, max, &mut events);
        match r {
            Ok(_) => {
                self.acct.complete.mark_count(events.len() as u64);
                let now = if self.timed || !events.is_empty() {
                    self.now_ns()
                } else {
                    0
                };
                for c in &events {
                    if !self
                        .in_flight
                        .get(c.unit as usize)
                        .copied()
                        .unwrap_or(false)
                    {
                        // An engine bug: a completion for a unit that is not in flight. Using
                        // it would corrupt another I/O's slot; count it and drop it.
                        self.acct.bogus_completions += 1;
                        continue;
                    }
                    self.inflight = self.inflight.saturating_sub(1);
                    self.finish(c.unit, c.result, now, false);
                }
            }
            Err(e) => self.end = Some(EndReason::Error(libc::EIO, e.to_string())),
        }
        self.events = events;
    }

    /// Submit what is queued and wait until nothing is in flight.
    fn quiesce(&mut self) {
        self.commit();
        while self.inflight > 0 && self.end.is_none() {
            self.reap(1);
        }
    }

    /// verify_backlog: queue a batch of the writes completed since the last batch; they are
    /// read back next, through the engine like any read (fio's backlog verify).
    fn queue_backlog(&mut self) {
        if let Some(v) = self.verify.as_mut() {
            self.vq.extend(v.take_backlog());
        }
    }

    /// trim_backlog: the next verify-trim of a picked write, when a round is due (fio's
    /// `check_get_trim`, asked before every I/O of the write phase).
    fn queue_trim(&mut self) {
        let after_read = self.last_ddir == 0;
        if let Some(t) = self.verify.as_mut().and_then(|v| v.next_trim(after_read)) {
            self.vq.push_back(t);
        }
    }

    /// The next verify read as slot (None: none left, no free slot, or an open failed).
    fn next_verify_read(&mut self) -> Option<u32> {
        loop {
            let Some(r) = self.vq.front().copied() else {
                if self.verify_phase {
                    if !self.exhausted {
                        crate::dprint!(crate::debug::VERIFY, "get_next_verify: empty");
                    }
                    self.exhausted = true;
                }
                return None;
            };
            // A backlog entry a later write replaced is not read: that write is checked later.
            let current = self
                .verify
                .as_ref()
                .is_some_and(|v| v.holds(r.file, r.offset, r.len as u64, r.seq));
            // A backlog entry of a file `openfiles` closed since: the verify phase checks it.
            let closed = !self.verify_phase
                && self
                    .gate
                    .as_ref()
                    .is_some_and(|g| !g.is_open(r.file as usize));
            if !current || closed {
                self.vq.pop_front();
                continue;
            }
            if !self.open_for_verify(r.file) {
                return None;
            }
            let id = self.free.pop()?;
            self.vq.pop_front();
            self.slots[id as usize] = Slot {
                ddir: if r.trim { 2 } else { 0 },
                file: r.file,
                offset: r.offset,
                len: r.len,
                seq: r.seq,
                check: true,
                ..Slot::default()
            };
            self.stamp_start(id);
            crate::dprint!(crate::debug::VERIFY, "get_next_verify: ret io_u {id:#x}");
            return Some(id);
        }
    }

    /// `openfiles` in the verify phase: the files are read back one at a time, so before the
    /// first read of `file` the previous file's I/O completes and it is closed. False when an
    /// open or close failed (the phase ends).
    fn open_for_verify(&mut self, file: u32) -> bool {
        if !self.verify_phase {
            return true;
        }
        let Some(mut gate) = self.gate.take() else {
            return true;
        };
        let mut res = Ok(());
        if !gate.is_open(file as usize) {
            self.quiesce();
            res = gate
                .close_all(self.engine)
                .and_then(|()| gate.open(self.engine, file as usize));
        }
        self.gate = Some(gate);
        if let Err(e) = res {
            self.end
                .get_or_insert(EndReason::Error(libc::EIO, e.to_string()));
            return false;
        }
        self.end.is_none()
    }

    /// Start the verify phase after the write phase (or as the whole job, `verify_only`): every
    /// block the write logs hold and no backlog batch checked yet is read back through the
    /// engine at the job's depth by the next [`IoLoop::run`], counted as the job's reads. The
    /// phase is not bound by `runtime`.
    pub fn begin_verify_phase(&mut self) {
        let Some(v) = self.verify.as_ref() else {
            return;
        };
        self.vq = v.phase_reads().into();
        if let Some(c) = &self.pass_cache {
            c.before_verify();
        }
        self.verify_phase = true;
        self.exhausted = false;
        self.end = None;
        self.limits.deadline_ns = None;
        // Every verify read counts, also after a write phase that ended within ramp_time.
        self.ramp_done = true;
        if let Some(g) = self.gate.as_mut() {
            g.max_open = 0;
            g.opens = 0;
        }
        self.progress.set_state(JobState::Verifying);
    }

    /// Wait for everything in flight (also after errors: buffers must outlive the I/O).
    fn drain(&mut self) {
        self.commit();
        let mut idle = 0;
        while self.inflight > 0 && idle < 1000 {
            let before = self.inflight;
            self.reap(1);
            idle = if self.inflight == before { idle + 1 } else { 0 };
        }
    }

    /// Account a completed unit (or re-issue its short remainder).
    #[inline(always)]
    fn finish(&mut self, id: u32, res: i64, now: u64, sync_done: bool) {
        let s = self.slots[id as usize];
        self.in_flight[id as usize] = false;
        if s.ddir == SYNC {
            self.free.push(id);
            // Any sync starts the file's written range afresh (fio's first/last_write).
            if let Some(r) = self.sfr_ranges.get_mut(s.file as usize) {
                *r = (u64::MAX, 0);
            }
            if res < 0 {
                self.fail(&s, (-res) as i32);
            } else if self.measure.clat {
                self.acct.sync_lat.add(now.saturating_sub(s.start_ns));
            }
            return;
        }
        let want = (s.len - s.done) as i64;
        if res == 0 && want > 0 && self.eof_ends {
            // The peer finished (net): no more I/O, and this unit moved nothing.
            self.free.push(id);
            self.exhausted = true;
            self.end.get_or_insert(EndReason::Done);
            return;
        }
        if res < 0 || (res == 0 && want > 0) {
            self.free.push(id);
            let errno = if res < 0 { (-res) as i32 } else { libc::EIO };
            self.fail(&s, errno);
            return;
        }
        if res < want {
            let d = &mut self.acct.dirs[s.ddir as usize];
            d.short_ios += 1;
            self.slots[id as usize].done += res as u32;
            self.requeue.push(id);
            return;
        }
        self.free.push(id);
        if s.ddir == 1 && !self.sfr_ranges.is_empty() {
            // sync_file_range: the file's written range grows (fio's file_log_write_comp).
            if let Some(r) = self.sfr_ranges.get_mut(s.file as usize) {
                let end = s.offset + u64::from(s.len);
                *r = (r.0.min(s.offset), r.1.max(end));
            }
        }
        if self.verify.is_some() {
            self.verify_io(id, &s);
        }
        if let Some(b) = self.blocks.as_mut().filter(|_| s.ddir == 2) {
            b.trimmed(s.offset);
        }
        if self.dbg_io {
            self.debug_io("complete", id, &s);
        }
        self.account(&s, now, sync_done);
    }

    #[inline(always)]
    fn account(&mut self, s: &Slot, now: u64, sync_done: bool) {
        self.account_done(Done::of(s), now, sync_done, false, || *s);
    }

    /// `account` of a unit given by its [`Done`] part; `slot` builds the whole unit for the
    /// per-I/O hooks, which few jobs use. `lean`: from the lean loop, whose engine completes
    /// in `queue` (`copy_lat`) and which never runs paced (their checks fold away).
    #[inline(always)]
    fn account_done(
        &mut self,
        s: Done,
        now: u64,
        sync_done: bool,
        lean: bool,
        slot: impl FnOnce() -> Slot,
    ) {
        let di = s.ddir as usize;
        let d = &mut self.acct.dirs[di];
        let bytes = if self.zero_bytes { 0 } else { s.len as u64 };
        d.io_bytes += bytes;
        d.total_ios += 1;
        let m = self.measure;
        if self.timed {
            let clat = now.saturating_sub(s.issue_ns);
            if m.clat {
                d.clat.add(clat);
                self.acct.lat_buckets.add(clat);
            }
            if !sync_done && m.slat {
                d.slat.add(s.issue_ns.saturating_sub(s.start_ns));
            }
            if m.lat && !lean && !self.copy_lat {
                d.lat.add(now.saturating_sub(s.start_ns));
            }
            // Jobs without cmdprio have no per-priority statistics: one length check.
            if let Some(p) = d.prios.get_mut(s.prio as usize) {
                if self.prio_on_lat {
                    if m.lat {
                        p.stat.add(now.saturating_sub(s.start_ns));
                    }
                } else if m.clat {
                    p.stat.add(clat);
                }
            }
        } else {
            // With per-I/O clocks the live counters are published at each poll of after_io.
            self.progress.bytes[di].store(d.io_bytes, Ordering::Relaxed);
            self.progress.ios[di].store(d.total_ios, Ordering::Relaxed);
        }
        // One branch for the per-I/O hooks most jobs do not use.
        if self.hooks {
            self.account_hooks(&slot(), now, sync_done);
        }
        self.after_io(di, bytes, now, lean);
    }

    /// The per-I/O hooks of `account`: latency_target's judgement and the per-I/O log lines.
    #[inline(never)]
    fn account_hooks(&mut self, s: &Slot, now: u64, sync_done: bool) {
        // act counts what fio's lat statistic measures (nothing with disable_lat).
        if let Some(a) = self
            .acct
            .act
            .as_mut()
            .filter(|_| self.measure.lat && s.ddir < 3)
        {
            if let Err(msg) = a.add(s.start_ns, now) {
                self.end.get_or_insert(EndReason::Error(libc::EPERM, msg));
            }
        }
        if s.ddir < 2 && self.timed {
            self.lat_target_io(s, now);
            let di = s.ddir as usize;
            if self.measure.lat && self.max_lat_ns[di] != 0 {
                self.max_latency_io(s, di, now);
            }
        }
        if self.log_io && self.ramp_done {
            self.log_io_sample(s, now, sync_done);
        }
    }

    /// Record a completed write in the verify log, or check a read-only job's block.
    fn verify_io(&mut self, id: u32, s: &Slot) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        match s.ddir {
            1 => v.written(s.file, s.offset, s.len as u64, s.seq),
            2 if s.check => v.trim_done(s.file, s.offset, s.len as u64),
            0 if self.fake_io => {}
            0 if s.check => {
                let path = self
                    .paths
                    .get(s.file as usize)
                    .map(String::as_str)
                    .unwrap_or("?");
                let buf = &self.pool.slice(id as usize)[..s.len as usize];
                if crate::debug::on(crate::debug::VERIFY) {
                    let vs = &self.job.verify;
                    let interval = vs.verify_interval.unwrap_or(s.len as u64);
                    crate::debug::verify_headers(vs.method, false, id, s.len as u64, interval);
                }
                let ok = if v.replays() {
                    v.check_replayed(path, buf, s.offset, s.seq)
                } else {
                    v.check_logged(s.file, path, buf, s.offset)
                };
                if !ok {
                    let first = v.first.last().cloned().unwrap_or_default();
                    self.end = Some(EndReason::Error(libc::EILSEQ, first));
                }
            }
            0 if self.read_checks => {
                let path = self.paths.get(s.file as usize).map(String::as_str);
                let buf = &self.pool.slice(id as usize)[..s.len as usize];
                if !v.check_read(path.unwrap_or("?"), buf, s.offset) {
                    let first = v.first.last().cloned().unwrap_or_default();
                    self.end = Some(EndReason::Error(libc::EILSEQ, first));
                }
            }
            _ => {}
        }
    }

    /// Per-I/O lines of the latency (and unaveraged bw/iops) logs; nothing during ramp.
    fn log_io_sample(&mut self, s: &Slot, now: u64, sync_done: bool) {
        let ddir = Ddir::ALL[s.ddir as usize];
        let io = IoSample {
            t_ms: now.saturating_sub(self.measured_start_ns) / 1_000_000,
            ddir,
            bytes: s.len as u64,
            offset: s.offset,
            ioprio: u32::from(s.ioprio),
            issue_ns: s.issue_ns.saturating_sub(self.measured_start_ns),
        };
        let m = self.measure;
        let clat = now.saturating_sub(s.issue_ns);
        let lat = if self.copy_lat || sync_done {
            clat
        } else {
            now.saturating_sub(s.start_ns)
        };
        if m.slat && !sync_done {
            self.logs.slat(&io, s.issue_ns.saturating_sub(s.start_ns));
        }
        self.logs
            .completion(&io, m.clat.then_some(clat), m.lat.then_some(lat));
        self.logs
            .clat_hist(&io, &self.acct.dirs[s.ddir as usize].clat.hist);
    }

    /// max_latency: an I/O slower than its direction's limit ends the job (fio's lat_fatal).
    fn max_latency_io(&mut self, s: &Slot, di: usize, now: u64) {
        let lat = now.saturating_sub(s.start_ns);
        let max = self.max_lat_ns[di];
        if lat > max {
            let msg = self.lat_fatal_msg(s, lat, max);
            self.end
                .get_or_insert(EndReason::Error(libc::ETIMEDOUT, msg));
        }
    }

    /// fio's message for an I/O over a latency limit.
    fn lat_fatal_msg(&self, s: &Slot, lat: u64, max: u64) -> String {
        let path = self.paths.get(s.file as usize).map_or("", String::as_str);
        format!(
            "latency of {lat} nsec exceeds specified max ({max} nsec): {path} {} {} {}",
            ["read", "write"][(s.ddir as usize).min(1)],
            s.offset,
            s.len
        )
    }

    /// latency_target: an I/O over the target is a miss (at depth 1 with 100%, the error).
    fn lat_target_io(&mut self, s: &Slot, now: u64) {
        let Some(t) = self.lat_target.as_mut() else {
            return;
        };
        let lat = now.saturating_sub(s.start_ns);
        let ios = self.acct.dirs[0].total_ios + self.acct.dirs[1].total_ios;
        match t.completed(lat, now, ios) {
            crate::control::latarget::Step::Fatal => {
                let target = t.target_ns();
                let msg = self.lat_fatal_msg(s, lat, target);
                self.end
                    .get_or_insert(EndReason::Error(libc::ETIMEDOUT, msg));
            }
            crate::control::latarget::Step::Nothing => {}
            step => self.lat_step = step,
        }
    }

    /// Per-completion checks: stop flag, time limits, ramp end, samples, rate_min. Inline in
    /// the per-I/O path: as a call its frame cost as much as the checks. With per-I/O clocks
    /// everything but rate_min is due at one time, `next_event_ns` (one comparison per I/O).
    #[inline(always)]
    fn after_io(&mut self, di: usize, bytes: u64, now: u64, lean: bool) {
        if self.timed {
            if now >= self.next_event_ns && !self.timed_checks(now) {
                return;
            }
        } else if !self.untimed_checks() {
            return;
        }
        if !lean && self.paced && self.ramp_done && !self.verify_phase {
            if let Some(msg) = self.pacer.check_min(di, bytes, now) {
                self.end = Some(EndReason::Error(libc::EIO, msg));
            }
        }
    }

    /// The stop flags: a signal or exitall (false: the job ends), steady state's terminate.
    #[inline(always)]
    fn poll_stop(&mut self) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            self.end.get_or_insert(EndReason::Stopped);
            return false;
        }
        if self.progress.terminate.load(Ordering::Relaxed) && !self.verify_phase {
            // Steady state attained: the job ends as fio's terminated job does.
            self.end.get_or_insert(EndReason::Time);
            return false;
        }
        true
    }

    /// `after_io` once `next_event_ns` is reached: the stop flags, then the time checks; then
    /// the next time any of them is due. False: the job was stopped.
    #[inline(never)]
    fn timed_checks(&mut self, now: u64) -> bool {
        if !self.poll_stop() {
            return false;
        }
        self.publish_progress();
        self.time_checks(now);
        self.next_event_ns = self.next_event(now);
        true
    }

    /// The earliest time a check of `after_io` is due after one at `now`: the stop flags and
    /// status requests are polled every [`POLL_NS`] (every I/O on a wall clock, which may step
    /// back), the deadline, the ramp's end (every I/O for ramp_size) and the next bw/iops
    /// sample exactly when they are due, as when each was compared per I/O.
    fn next_event(&self, now: u64) -> u64 {
        let poll = if self.clock.steady() {
            now + POLL_NS
        } else {
            now
        };
        let ramp = match (self.ramp_done, self.limits.ramp_ns, self.limits.ramp_bytes) {
            (true, _, _) => u64::MAX,
            (false, Some(r), _) => r,
            (false, None, Some(_)) => 0,
            (false, None, None) => u64::MAX,
        };
        let sample = if self.measure.bw {
            self.next_sample_ns
        } else {
            u64::MAX
        };
        poll.min(ramp)
            .min(sample)
            .min(self.limits.deadline_ns.unwrap_or(u64::MAX))
    }

    /// `after_io` without per-I/O clocks (gtod_reduce): the stop flags every I/O, the clock
    /// and the time checks every 64 completions. False: nothing more to check (or stopped).
    #[inline(always)]
    fn untimed_checks(&mut self) -> bool {
        if !self.poll_stop() {
            return false;
        }
        self.ios_since_clock += 1;
        if self.ios_since_clock < 64 {
            return false;
        }
        self.ios_since_clock = 0;
        let now = self.now_ns();
        self.time_checks(now);
        true
    }

    /// The live counters of the ETA line, steady state and group ramps (`Progress`).
    fn publish_progress(&mut self) {
        for (i, d) in self.acct.dirs.iter().enumerate() {
            self.progress.bytes[i].store(d.io_bytes, Ordering::Relaxed);
            self.progress.ios[i].store(d.total_ios, Ordering::Relaxed);
        }
    }

    /// The deadline, the ramp's end, a requested status snapshot and the bw/iops samples.
    fn time_checks(&mut self, now: u64) {
        // The ramp's reset and a snapshot read the lean loop's marks.
        self.flush_plain();
        if let Some(dl) = self.limits.deadline_ns {
            if now >= dl {
                self.end.get_or_insert(EndReason::Time);
            }
        }
        if !self.ramp_done {
            self.check_ramp(now);
        }
        if self.status_template.is_some() && self.progress.snap_req.load(Ordering::Relaxed) {
            self.publish_snapshot(now);
        }
        // Without a ramp, a sample due as the run time ends is not taken, as in fio 3.33 (a
        // 2 s job has 3 samples, at 500, 1000 and 1500 ms: fio's job is over when its helper
        // thread looks); after a ramp both clocks restart together and fio takes it (4).
        let at_end = self.end == Some(EndReason::Time) && self.limits.ramp_ns.is_none();
        if self.measure.bw && now >= self.next_sample_ns && !at_end {
            self.sample(now);
        }
    }

    /// `log_unix_epoch`/`log_alternate_epoch`: the logs' times count from the clock's time at
    /// the job's epoch (its start, then the end of ramp), as fio's set_epoch_time. A clock the
    /// kernel does not know ends the job (fio would log garbage times).
    fn set_log_epoch(&mut self) {
        if let Some(id) = self.job.logs.job_start_clock_id {
            // fio's set_epoch_time records job_start at the same moments.
            match crate::sys::clock_ms(id) {
                Ok(ms) => self.job_start_ms = Some(ms),
                Err(e) => {
                    let msg = format!("job_start_clock_id={id}: clock_gettime: {e}");
                    self.end.get_or_insert(EndReason::Error(libc::EINVAL, msg));
                }
            }
        }
        let l = &self.job.logs;
        if !(l.log_unix_epoch || l.log_alternate_epoch) {
            return;
        }
        let id = l.log_epoch_clock_id;
        match crate::sys::clock_ms(id) {
            Ok(ms) => {
                let since = self.now_ns().saturating_sub(self.measured_start_ns) / 1_000_000;
                self.logs.set_epoch_ms(ms.saturating_sub(since));
            }
            Err(e) => {
                let msg = format!("log_alternate_epoch_clock_id={id}: clock_gettime: {e}");
                self.end.get_or_insert(EndReason::Error(libc::EINVAL, msg));
            }
        }
    }

    /// Whether `ramp_size` bytes were transferred: by this job, or with group_reporting by
    /// the jobs of its group still ramping (fio's ramp_period_check).
    fn ramp_bytes_over(&self, want: u64) -> bool {
        if let Some(group) = self.ramp_group.as_ref() {
            let (bytes, ended) = group();
            return ended || bytes >= want;
        }
        let own: u64 = self.acct.dirs.iter().map(|d| d.io_bytes).sum();
        own >= want
    }

    fn check_ramp(&mut self, now: u64) {
        let over = match (self.limits.ramp_ns, self.limits.ramp_bytes) {
            (Some(r), _) => now >= r,
            (None, Some(b)) => self.ramp_bytes_over(b),
            (None, None) => false,
        };
        if !over {
            return;
        }
        self.ramp_done = true;
        self.acct.reset();
        // New samplers: their epoch (log time zero) is the end of the ramp.
        let w = self.windows;
        for (i, s) in self.samplers.iter_mut().enumerate() {
            if s.is_some() {
                *s = Some(RateSampler::new(Ddir::ALL[i], now, w.bw_ms, w.iops_ms));
            }
        }
        self.next_sample_ns = 0;
        self.pacer.restart(now);
        self.measured_start_ns = now;
        self.set_log_epoch();
        self.gen.ramp_over();
        if let Some(rt) = self.limits.runtime_ns {
            self.limits.deadline_ns = Some(now + rt);
        }
        self.cpu_start = self.cpu_usage();
        self.progress.set_state(JobState::Running);
    }

    /// CPU counters of the job: its thread plus the engine's helper threads.
    pub fn cpu_usage(&self) -> fiox_stats::sys::ThreadUsage {
        crate::sys::job_usage(&self.helpers)
    }

    /// Threads whose CPU the job's counters add up: its own and the engine's helpers.
    pub fn cpu_threads(&self) -> usize {
        1 + self.helpers.len()
    }

    /// Publish what was measured so far for a status report.
    fn publish_snapshot(&mut self, now: u64) {
        let Some(t) = self.status_template.as_ref() else {
            return;
        };
        let mut r = (**t).clone();
        let cpu = self.cpu_usage().since(&self.cpu_start);
        crate::io::result::fill_result(&mut r, self, now, cpu, self.measure);
        for (i, s) in self.samplers.iter().enumerate() {
            if let Some(s) = s {
                let d = r.dirs.get_mut(Ddir::ALL[i]);
                d.bw = s.bw().clone();
                d.iops = s.iops().clone();
            }
        }
        if let Ok(mut g) = self.progress.snapshot.lock() {
            *g = Some(r);
        }
        self.progress.snap_req.store(false, Ordering::Relaxed);
    }

    /// Feed the bw/iops samplers. They keep fio's sampling grid themselves; the loop asks
    /// them when the earliest is due, so the per-I/O cost is a single comparison and a sample
    /// is late only by the I/O that was in flight.
    fn sample(&mut self, now: u64) {
        let mut next = u64::MAX;
        for (i, s) in self.samplers.iter_mut().enumerate() {
            if let Some(s) = s {
                let d = &self.acct.dirs[i];
                s.tick_into(now, d.io_bytes, d.total_ios, &mut self.logs);
                next = next.min(s.next_due_ns());
            }
        }
        self.next_sample_ns = next;
    }

    /// The bw/iops statistics per direction (consumes the samplers).
    pub fn take_rates(&mut self) -> [Option<(fiox_stats::SampleStat, fiox_stats::SampleStat)>; 3] {
        std::mem::take(&mut self.samplers).map(|s| s.map(RateSampler::into_stats))
    }

    /// Apply continue_on_error / ignore_error to a failed unit.
    fn fail(&mut self, s: &Slot, errno: i32) {
        let ddir = Ddir::ALL.get(s.ddir as usize).copied();
        if let Some(b) = self.blocks.as_mut().filter(|_| s.ddir == 1 || s.ddir == 2) {
            b.failed(s.offset, s.ddir == 2);
        }
        let op = crate::io::ioerr::op_name(s.ddir, s.op_data_only);
        let path = self.paths.get(s.file as usize).map(String::as_str);
        let what =
            crate::io::ioerr::describe(op, errno, path, s.offset + s.done as u64, s.len - s.done);
        // fio counts every queued I/O as issued, failed ones included.
        if let Some(d) = ddir {
            let n = &mut self.acct.dirs[d.index()].total_ios;
            *n += 1;
            if *n == 1 && errno == libc::EINVAL && self.job.direct {
                self.acct.first_direct_einval = true;
            }
        }
        if self.job.files.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT) {
            // fill_device: the device or file system is full, which is the job's goal; it
            // ends without error (fio clears the error and terminates the job).
            self.filled = true;
            self.end.get_or_insert(EndReason::Done);
            return;
        }
        if crate::io::ioerr::tolerated(&self.job.errors, ddir, errno) {
            // fio's error_dump: a survived error is printed as it happens (a fatal one is
            // printed by the caller of the run, once).
            if self.job.errors.error_dump {
                eprintln!("fiox: {}: {what}", self.job.name);
            }
            self.acct.tolerate(errno, what);
        } else {
            self.acct.count_fatal(errno);
            self.end = Some(EndReason::Error(errno, what));
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

fn offset_ptr(p: BufPtr, by: usize) -> BufPtr {
    if by == 0 {
        return p;
    }
    p.add(by)
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
