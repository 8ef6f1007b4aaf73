//! The loop as its owner sees it: [`IoLoopBuilder`] gathers what a job's loop needs and makes
//! it once; [`IoLoop::start`] begins its time at the run's common start; the readers give what
//! the job's result and its phases take from it afterwards. Nothing outside `ioloop` touches
//! the loop's parts.

use super::parts::{
    Checks, Control, DebugCounts, EngineTraits, FileUse, Observers, PerIo, Queue, Timeline,
};
use super::*;
use crate::control::latarget::{LatTarget, Step};
use crate::files::opengate::OpenGate;
use crate::io::acct::{Measure, Progress};
use std::sync::atomic::AtomicBool;

/// Builds an [`IoLoop`]: the job, its engine, buffers and request source are given up front;
/// everything optional is set once here, before the loop exists.
pub struct IoLoopBuilder<'a> {
    job: &'a JobSpec,
    engine: &'a mut dyn IoEngine,
    pool: &'a mut BufPool,
    gen: Generator,
    filler: BufferFiller,
    progress: &'a Progress,
    stop: &'a AtomicBool,
    measure: Measure,
    limits: Limits,
    logs: JobLogs,
    files: FileUse,
    check: Checks,
    status_template: Option<Box<fiox_stats::JobResult>>,
    iolog: Option<crate::replay::iolog::IoLogWriter>,
    replay: Option<crate::replay::ReplayQueue>,
    locks: Option<crate::control::filelock::Locks>,
    blocks: Option<fiox_stats::blocks::BlockInfos>,
    ramp_group: Option<Box<dyn Fn() -> (u64, bool) + 'a>>,
    io_jobs_done: Option<Box<dyn Fn() -> bool + 'a>>,
}

impl<'a> IoLoop<'a> {
    /// A builder for `job`'s loop on `engine`, one unit per buffer of `pool`, requests from
    /// `gen` with write buffers filled by `filler`; `progress` and `stop` are the run's live
    /// counters and stop flag. Measurement, limits and logs start as `job` says
    /// ([`IoLoopBuilder::measure`] and the others change them).
    pub fn builder(
        job: &'a JobSpec,
        engine: &'a mut dyn IoEngine,
        pool: &'a mut BufPool,
        (gen, filler): (Generator, BufferFiller),
        (progress, stop): (&'a Progress, &'a AtomicBool),
    ) -> IoLoopBuilder<'a> {
        let measure = Measure::of(job, engine.flags().sync);
        IoLoopBuilder {
            job,
            engine,
            pool,
            gen,
            filler,
            progress,
            stop,
            measure,
            limits: Limits::of(job),
            logs: JobLogs::default(),
            files: FileUse::default(),
            check: Checks::default(),
            status_template: None,
            iolog: None,
            replay: None,
            locks: None,
            blocks: None,
            ramp_group: None,
            io_jobs_done: None,
        }
    }
}

impl Limits {
    /// The job's `ramp_time`, `ramp_size` and `runtime`.
    pub fn of(job: &JobSpec) -> Limits {
        let ramp = job.timing.ramp_time.map(|d| d.as_nanos() as u64);
        let deadline = job
            .timing
            .runtime
            .map(|r| r.as_nanos() as u64 + ramp.unwrap_or(0));
        Limits {
            ramp_ns: ramp.filter(|&r| r > 0),
            ramp_bytes: job.timing.ramp_size,
            // ramp_size: the runtime starts when the ramp ends (check_ramp sets the deadline).
            deadline_ns: deadline.filter(|_| job.timing.ramp_size.is_none()),
            runtime_ns: job.timing.runtime.map(|r| r.as_nanos() as u64),
        }
    }
}

impl<'a> IoLoopBuilder<'a> {
    /// What is measured per I/O (default: [`Measure::of`] the job and engine).
    pub fn measure(mut self, m: Measure) -> Self {
        self.measure = m;
        self
    }

    /// The job's log files (default: none).
    pub fn logs(mut self, logs: JobLogs) -> Self {
        self.logs = logs;
        self
    }

    /// The files' names, by index (for `--debug=io` lines and messages).
    pub fn paths(mut self, paths: Vec<String>) -> Self {
        self.files.paths = paths;
        self
    }

    /// `--status-interval`: snapshots are published on request, built on `template`.
    pub fn status_template(mut self, template: fiox_stats::JobResult) -> Self {
        self.status_template = Some(Box::new(template));
        self
    }

    /// `write_iolog`: every I/O is written to `w` as it is queued.
    pub fn iolog(mut self, w: crate::replay::iolog::IoLogWriter) -> Self {
        self.iolog = Some(w);
        self
    }

    /// `read_iolog`: the log's I/Os replace the generator's.
    pub fn replay(mut self, q: crate::replay::ReplayQueue) -> Self {
        self.replay = Some(q);
        self
    }

    /// `lockfile=`: the locks each submission takes.
    pub fn locks(mut self, l: Option<crate::control::filelock::Locks>) -> Self {
        self.locks = l;
        self
    }

    /// `verify=`: the job's verifier; `read_checks`: a read-only job checks blocks as it
    /// reads them.
    pub fn verify(mut self, v: Option<crate::verify::JobVerify>, read_checks: bool) -> Self {
        self.check.verify = v;
        self.check.read_checks = read_checks;
        self
    }

    /// What a new pass does to the files' page cache.
    pub fn pass_cache(mut self, c: crate::files::cache::PassCache) -> Self {
        self.files.pass_cache = Some(c);
        self
    }

    /// `openfiles` below nrfiles: real opens follow the generator's open/close model (the
    /// generator then reports the files it closes).
    pub fn open_gate(mut self, g: Option<OpenGate>) -> Self {
        if g.is_some() {
            self.gen.track_closes();
        }
        self.files.gate = g;
        self
    }

    /// fio's file-operation engines: the operation done at each open of a file.
    pub fn file_ops(mut self, f: Option<crate::io::fileop::FileOps>) -> Self {
        self.files.file_ops = f;
        self
    }

    /// `block_error_percentiles`: the blocks of the job's file.
    pub fn blocks(mut self, b: Option<fiox_stats::blocks::BlockInfos>) -> Self {
        self.blocks = b;
        self
    }

    /// `ramp_size` with group_reporting: the group's bytes still ramping, and whether one of
    /// its jobs already ended its ramp.
    pub fn ramp_group(mut self, f: impl Fn() -> (u64, bool) + 'a) -> Self {
        self.ramp_group = Some(Box::new(f));
        self
    }

    /// cpuio's `exit_on_io_done`: whether every I/O job of the run has finished.
    pub fn io_jobs_done(mut self, f: impl Fn() -> bool + 'a) -> Self {
        self.io_jobs_done = Some(Box::new(f));
        self
    }

    /// The loop, its time counting from now until [`IoLoop::start`].
    pub fn build(self) -> IoLoop<'a> {
        let IoLoopBuilder { job, engine, .. } = self;
        let mut gen = self.gen;
        if crate::debug::on(crate::debug::RANDOM) {
            gen.note_random();
        }
        let depth = self.pool.len();
        let flags = engine.flags();
        let helpers = engine.helper_threads();
        let engine_think = engine.thinktime();
        let mut pacer = Pacer::new(job);
        if let Some(t) = engine_think {
            pacer.engine_think(t);
        }
        pacer.restart(0);
        let mut files = self.files;
        if job.files.sync_file_range.is_some() {
            files.sfr_ranges = vec![(u64::MAX, 0); files.paths.len()];
        }
        let mut check = self.check;
        check.serialize = (job.verify.serialize_overlap
            || job.verify.method != fiox_job::VerifyMethod::None)
            && depth > 1;
        check.last_ddir = 1;
        let limits = self.limits;
        IoLoop {
            job,
            gen,
            filler: self.filler,
            q: Queue::new(self.pool),
            time: Timeline {
                clock: Clock::for_source(job.clocksource),
                measure: self.measure,
                timed: self.measure.timed(),
                ramp_done: limits.ramp_ns.is_none() && limits.ramp_bytes.is_none(),
                limits,
                next_event_ns: 0,
                measured_start_ns: 0,
                cpu_start: crate::sys::job_usage(&helpers),
                helpers,
                ios_since_clock: 0,
                clock_stride: 1,
                last_clock_ns: 0,
                job_start_ms: None,
                ramp_group: self.ramp_group,
                paced: pacer.active() || engine_think.is_some(),
                pacer,
                engine_think: engine_think.is_some(),
            },
            files,
            acct: acct_with_prios(job),
            per_io: PerIo {
                prio: crate::io::prio::PrioPicker::new(
                    job,
                    job.rand.randseed ^ u64::from(job.index),
                ),
                prio_on_lat: job.stats.lat_percentiles,
                max_lat_ns: [job.lat_target.max_ns.read, job.lat_target.max_ns.write],
                max_lat_on: job.lat_target.max_ns.read != 0 || job.lat_target.max_ns.write != 0,
                lat_target: None,
                lat_step: Step::Nothing,
                blocks: self.blocks,
                win_lat: None,
            },
            obs: observers(job, self.logs, self.status_template, self.iolog),
            check,
            ctl: Control {
                progress: self.progress,
                stop: self.stop,
                replay: self.replay,
                flow: None,
                flow_held: false,
                locks: self.locks,
                io_jobs_done: self.io_jobs_done,
            },
            eng: EngineTraits {
                copy_lat: flags.sync,
                zero_bytes: flags.zero_bytes,
                eof_ends: flags.eof_ends,
                fake_io: flags.no_io,
            },
            engine,
            plan: Plan::default(),
            counts: DebugCounts::default(),
            ios_issued: 0,
            exhausted: false,
            end: None,
            filled: false,
            plain_unmarked: 0,
        }
    }
}

/// The observers of `job`: its logs, a rate sampler for each direction it uses, status
/// snapshots and `write_iolog` if given, `--debug` lines if asked for.
fn observers(
    job: &JobSpec,
    logs: JobLogs,
    status_template: Option<Box<fiox_stats::JobResult>>,
    iolog: Option<crate::replay::iolog::IoLogWriter>,
) -> Observers {
    let rw = job.rw.mode;
    let active = [rw.has_read(), rw.has_write(), rw.has_trim()];
    let windows = rate_windows(job);
    let samplers = [Ddir::Read, Ddir::Write, Ddir::Trim]
        .map(|d| active[d.index()].then(|| RateSampler::new(d, 0, windows.bw_ms, windows.iops_ms)));
    Observers {
        log_io: logs.wants_io_samples(),
        logs,
        samplers,
        windows,
        next_sample_ns: 0,
        status_template,
        iolog,
        dbg_io: crate::debug::on(crate::debug::IO),
        dbg_random: crate::debug::on(crate::debug::RANDOM),
    }
}

impl<'a> IoLoop<'a> {
    /// The run's common start: the job's times and CPU count from here, not from the loop's
    /// making; `latency_target` begins probing; `flow` is the job's part in its flow (given
    /// back by [`IoLoop::take_flow`]).
    pub fn start(&mut self, flow: Option<crate::control::flow::Member>) {
        self.time.clock.restart();
        self.time.cpu_start = self.cpu_usage();
        if self.job.lat_target.target_ns > 0 {
            let now = self.time.clock.now_ns();
            let t = LatTarget::new(self.job.lat_target, self.job.iodepth, now, 0);
            self.per_io.lat_target = Some(t);
        }
        self.ctl.flow = flow;
    }

    /// The job's part in its flow, handed back at the end.
    pub fn take_flow(&mut self) -> Option<crate::control::flow::Member> {
        self.ctl.flow.take()
    }

    pub fn job(&self) -> &'a JobSpec {
        self.job
    }

    /// Nanoseconds since the job's start.
    pub fn now(&self) -> u64 {
        self.time.clock.now_ns()
    }

    /// When measurement began (after the ramp), in ns since the start.
    pub fn measured_start_ns(&self) -> u64 {
        self.time.measured_start_ns
    }

    /// `job_start_clock_id`: that clock's ms at the job's epoch.
    pub fn job_start_ms(&self) -> Option<u64> {
        self.time.job_start_ms
    }

    /// The job's CPU use since measurement began.
    pub fn cpu_since_start(&self) -> fiox_stats::sys::ThreadUsage {
        self.cpu_usage().since(&self.time.cpu_start)
    }

    /// What was counted and measured.
    pub fn acct(&self) -> &Acct {
        &self.acct
    }

    /// The engine completes in `queue`: its lat is its clat.
    pub fn copies_lat(&self) -> bool {
        self.eng.copy_lat
    }

    pub fn engine_name(&self) -> &'static str {
        self.engine.name()
    }

    /// fill_device: a write hit ENOSPC/EDQUOT (the job is over, no verify phase follows).
    pub fn filled(&self) -> bool {
        self.filled
    }

    pub fn verify(&self) -> Option<&crate::verify::JobVerify> {
        self.check.verify.as_ref()
    }

    pub fn verify_mut(&mut self) -> Option<&mut crate::verify::JobVerify> {
        self.check.verify.as_mut()
    }

    pub fn open_gate(&self) -> Option<&OpenGate> {
        self.files.gate.as_ref()
    }

    /// `block_error_percentiles`' blocks, taken for the result.
    pub fn take_blocks(&mut self) -> Option<fiox_stats::blocks::BlockInfos> {
        self.per_io.blocks.take()
    }

    /// `latency_target`: the depth it settled on.
    pub fn lat_target_depth(&self) -> Option<u32> {
        self.per_io.lat_target.as_ref().map(|t| t.qd)
    }

    /// `write_iolog`: the log written to its end (None without one).
    pub fn finish_iolog(&mut self) -> Option<std::io::Result<()>> {
        self.obs.iolog.as_mut().map(|l| l.finish())
    }

    /// The log files written to their end (`end_ms`: the job's measured time).
    pub fn finish_logs(&mut self, end_ms: u64) -> Result<(), fiox_stats::log::LogError> {
        self.obs.logs.finish(end_ms)
    }

    /// `--explain` windows: how many I/Os fell inside them and their summed latency, per
    /// direction.
    pub fn window_lat(&self) -> Option<[(u64, u64); 2]> {
        self.per_io
            .win_lat
            .map(|w| [(w.n[0], w.sum[0]), (w.n[1], w.sum[1])])
    }

    /// Counters only debug builds keep.
    pub fn debug_counts(&self) -> DebugCounts {
        self.counts
    }
}
