//! One job's life on its own thread, in order: start delay and placement ([`begin`]), the
//! checks that need the engine, the job's files ([`super::prepare`]), the disks' scheduler, the
//! engine given its files, the I/O phases ([`super::phases`]), then the files' end (syncs,
//! unlinking) and the result with its warnings. [`run_job`] is the entry; whatever happens, it
//! returns what was measured and the files the job created and must still remove.
use super::env::JobEnv;
use super::phases::*;
use super::prepare::*;
use crate::error::RunError;
use crate::files::{self};
use crate::io::acct::{JobState, Measure};
use crate::job::warn;
use crate::sys;
use fiox_engine::{EngineFile, IoEngine};
use fiox_job::JobSpec;
use fiox_stats::{JobResult, WarningCode};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A job's outcome: its result (also on failure, with `error` set) and the failure, if any.
pub struct JobOutcome {
    pub result: JobResult,
    pub error: Option<RunError>,
    /// Files the job created and must remove on cleanup (`unlink=1`), if not yet removed.
    pub leftovers: Vec<std::path::PathBuf>,
}

/// Run one job to completion on the calling thread.
pub fn run_job(env: &JobEnv) -> JobOutcome {
    let job = env.job;
    let start_wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let t0 = Instant::now();
    env.progress.set_state(JobState::Setup);
    let mut result = base_result(job, start_wall);
    let mut leftovers = Vec::new();
    let ran = execute(env, &mut result, &mut leftovers);
    // exec_postrun: after a job that ran to its end (fio skips it on its error path).
    if let (Some(cmd), Ok(())) = (&job.exec_postrun, &ran) {
        exec_string(env, cmd, "postrun");
    }
    let err = match ran {
        Ok(()) => None,
        Err(e) => {
            // A failed I/O already set its own errno and description.
            if result.error == 0 {
                result.error = e.errno();
                result.verror = e.to_string();
            }
            Some(e)
        }
    };
    // fio counts started seconds: a 2.0x s job shows elapsed=3.
    result.elapsed_s = t0.elapsed().as_secs() + 1;
    if env.status {
        if let Ok(mut g) = env.progress.snapshot.lock() {
            *g = Some(result.clone());
        }
    }
    env.progress.set_state(JobState::Done);
    JobOutcome {
        result,
        error: err,
        leftovers,
    }
}

pub(crate) fn base_result(job: &JobSpec, start_unix: u64) -> JobResult {
    JobResult {
        name: job.name.clone(),
        groupid: job.group_id,
        jobs: 1,
        // Jobs are threads: like fio with thread=1, show the thread id.
        pid: sys::gettid() as u32,
        start_unix,
        iodepth: job.iodepth,
        job_options: job.own_options.clone(),
        percentile_list: job.stats.percentile_list.clone(),
        clat_percentiles: job.stats.clat_percentiles,
        lat_percentiles: job.stats.lat_percentiles,
        slat_percentiles: job.stats.slat_percentiles,
        description: job.description.clone().unwrap_or_default(),
        sig_figs: job.stats.sig_figs,
        ioprio: u32::from(job.default_ioprio()),
        unified_both: job.stats.unified_both,
        // fio's JSON has total_err/first_error for such a job even when it failed before any
        // I/O (an engine it cannot use).
        continue_on_error: crate::io::ioerr::continue_bits(&job.errors) != 0,
        ..Default::default()
    }
}

pub(super) fn execute(
    env: &JobEnv,
    result: &mut JobResult,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<(), RunError> {
    let job = env.job;
    if !begin(env)? {
        // Stopped before starting: nothing to set up or measure.
        return Ok(());
    }
    // cgroup=: the thread is in the group until this frame ends.
    let _cgroup = crate::job::cgroup::join(job, env.cgroups)?;
    if env.readonly && files::job_writes(job) {
        return Err(RunError::Refused(format!(
            "job '{}': rw={} writes, but --readonly was given",
            job.name,
            job.rw.mode.fio_name()
        )));
    }
    if let Some(ticket) = &env.start {
        // Files shared with other processes are laid out by one process at a time.
        ticket.wait_setup(env.stop);
        if env.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
    }
    let e4defrag = job.ioengine.is(fiox_job::Engine::E4defrag);
    let new_donor = e4defrag && crate::files::owned::check_donor(job, allow_all(env))?;
    let mut engine = match env.engine_factory {
        Some(f) => f.create(job)?,
        None => fiox_engine::create(job)?,
    };
    if job.zoned() {
        return Err(zoned_failure(job, engine.flags().no_io));
    }
    if new_donor {
        crate::files::owned::mark_created_donor(job)?;
    }
    crate::dprint!(crate::debug::IO, "load ioengine {}", job.ioengine);
    let flags = engine.flags();
    check_job(env)?;
    let mut opened = prepare_files(env, flags.no_io, leftovers)?;
    if flags.file_ops && flags.no_io && job.files.unlink {
        // filecreate creates its files during the run: an aborted run removes them too
        // (only those that carry fiox's mark by then).
        for f in opened.plan.files.iter().filter(|f| !f.path.exists()) {
            crate::files::owned::leave(leftovers, &f.path);
        }
    }
    // Stopped while laying out: the files may be incomplete, so do no I/O on them.
    // create_only: the setup was the whole job (fio marks the job done after file setup).
    if env.stop.load(Ordering::Relaxed) || job.files.create_only {
        return finish_files(job, &mut opened, flags.no_io, leftovers);
    }
    // exec_prerun: a failing command ends the job before its I/O (fio: no error recorded).
    if let Some(cmd) = &job.exec_prerun {
        if !exec_string(env, cmd, "prerun") {
            return finish_files(job, &mut opened, flags.no_io, leftovers);
        }
    }
    // ioscheduler: switched for the job's I/O, put back when this frame ends.
    let _sched = switch_scheduler(job, &opened, flags.no_io, result)?;
    if env.messages && crate::io::noio::net_waits(job) {
        env.info.say("fio: waiting for connection\n");
    }
    attach_files(job, &opened, engine.as_mut())?;
    let gate = lazy_open_gate(env, &mut opened, engine.as_mut(), flags.no_io)?;
    result.warnings = warn::job_warnings(job, &opened.plan, flags);
    result.warnings.extend(opened.warnings.iter().cloned());
    let (measure, file_ops) = measure_for(job, flags, opened.plan.files.len());
    result.has_slat = measure.slat;
    // The common start comes after the whole set-up (the loop built too), so that the jobs'
    // I/O starts together: work left after it would stagger thousands of jobs' starts.
    let mut cache = None;
    let files = &opened.plan.files;
    let mut start = || {
        if let Some(ticket) = &env.start {
            ticket.wait(env.stop);
            if env.stop.load(Ordering::Relaxed) {
                // Another process failed or was stopped before the common start: no I/O.
                return false;
            }
        }
        cache = Some(crate::files::cache::Residency::begin(
            job,
            files,
            flags.no_io,
        ));
        true
    };
    let ran = run_io(
        env,
        engine.as_mut(),
        &opened,
        (gate, file_ops),
        (measure, &mut start),
        result,
    );
    if let Some(cache) = cache {
        result.page_cache = cache.end(&opened.plan.files);
        result
            .warnings
            .extend(warn::page_cache_warning(job, result));
    }
    ran?;
    // filecreate is diskless but unlink=1 removes the files it created, as fio's does.
    finish_files(job, &mut opened, flags.no_io && !flags.file_ops, leftovers)
}

/// The job's start: `start_delay`, then the thread's CPU placement, priorities and name.
/// False when the run was stopped (or the job terminated) before it began.
fn begin(env: &JobEnv) -> Result<bool, RunError> {
    let job = env.job;
    // Stopped, or terminated by another job's exitall (fio: start_delay is then 0).
    let halted =
        || env.stop.load(Ordering::Relaxed) || env.progress.terminate.load(Ordering::Relaxed);
    start_delay(job, &halted);
    if halted() {
        return Ok(false);
    }
    place_thread(job, env.cpus.as_deref())?;
    if let Some(name) = &job.comm {
        // fio's prctl(PR_SET_NAME) at the job's start; like fio, a failure is not an error.
        let _ = sys::set_thread_name(name);
    }
    Ok(true)
}

/// The checks a job passes before its files are touched: options that need each other, the
/// deletion engines' targets, the directory engines' set-up.
fn check_job(env: &JobEnv) -> Result<(), RunError> {
    let job = env.job;
    let engine = job.ioengine.engine();
    crate::files::owned::check_end_syncfs(job)?;
    check_ramp_size(job, env.run.0)?;
    if let Some(msg) = crate::control::steady::interval_problem(env.run.0) {
        return Err(RunError::Job {
            job: job.name.clone(),
            msg,
        });
    }
    check_log_options(job)?;
    use fiox_job::Engine;
    if matches!(engine, Some(Engine::Filedelete | Engine::Dirdelete)) {
        crate::files::owned::check_deletable(job, allow_all(env))?;
    }
    if matches!(engine, Some(Engine::Dirstat | Engine::Dirdelete)) {
        crate::io::fileop::setup_dirs(job)?;
    }
    Ok(())
}

/// `ioscheduler`: switch the disks under the job's files, noting disks without a scheduler.
fn switch_scheduler(
    job: &JobSpec,
    opened: &Opened,
    no_io: bool,
    result: &mut JobResult,
) -> Result<crate::job::iosched::Switched, RunError> {
    let mut sched = crate::job::iosched::Switched::default();
    if let (Some(name), false) = (&job.ioscheduler, no_io) {
        let paths: Vec<_> = opened.plan.files.iter().map(|f| f.path.clone()).collect();
        let notes =
            crate::job::iosched::switch(&paths, name, &mut sched).map_err(|msg| RunError::Job {
                job: job.name.clone(),
                msg,
            })?;
        for n in notes {
            result.warnings.push(fiox_stats::Warning::new(
                WarningCode::IoschedulerNotTunable,
                format!("job {}: {n}", job.name),
            ));
        }
    }
    Ok(sched)
}

/// Hand the job's files (descriptor, path, size) to the engine.
fn attach_files(job: &JobSpec, opened: &Opened, engine: &mut dyn IoEngine) -> Result<(), RunError> {
    for (i, f) in opened.plan.files.iter().enumerate() {
        let fd = opened.handles[i]
            .as_ref()
            .map(|h| h.as_raw_fd())
            .unwrap_or(-1);
        engine.add_file(&EngineFile {
            fd,
            path: f.path.clone(),
            size: f.real_size.max(f.offset + f.size),
            writable: files::job_writes(job),
        })?;
    }
    Ok(())
}

/// What the job measures, and the file-operation engines' per-file timing, which replaces it.
fn measure_for(
    job: &JobSpec,
    flags: fiox_engine::EngineFlags,
    nfiles: usize,
) -> (Measure, Option<crate::io::fileop::FileOps>) {
    let mut measure = Measure::of(job, flags.sync);
    // fio's file-operation engines time the operation on each file, not the I/Os.
    let file_ops = flags
        .file_ops
        .then(|| crate::io::fileop::FileOps::new(job, nfiles, measure.lat));
    if file_ops.is_some() {
        measure = Measure {
            slat: false,
            clat: false,
            lat: false,
            bw: measure.bw,
            slat_hist: false,
            lat_hist: false,
        };
    }
    (measure, file_ops)
}

/// log_issue_time needs write_lat_log and log_offset (fio refuses the job otherwise, EINVAL);
/// fio 3.42's compressed sample layouts with the issue time or two values are not written yet.
pub(super) fn check_log_options(job: &JobSpec) -> Result<(), RunError> {
    let l = &job.logs;
    if l.log_window_both && l.log_store_compressed {
        return Err(RunError::Job {
            job: job.name.clone(),
            msg: "log_window_value=both with log_store_compressed is not supported yet; drop \
                  one of them"
                .into(),
        });
    }
    if !l.log_issue_time {
        return Ok(());
    }
    let msg = if l.write_lat_log.is_none() || !l.log_offset {
        "log_issue_time option requires write_lat_log and log_offset options (fio says the \
         same); add write_lat_log=NAME and log_offset=1"
    } else if l.log_store_compressed {
        "log_issue_time with log_store_compressed is not supported yet; drop one of them"
    } else {
        return Ok(());
    };
    Err(RunError::Job {
        job: job.name.clone(),
        msg: msg.into(),
    })
}

/// ramp_size: not with ramp_time, and the same in every job of the reporting group (fio's
/// td_ramp_period_init refuses the job otherwise, EINVAL).
pub(super) fn check_ramp_size(job: &JobSpec, run: &[JobSpec]) -> Result<(), RunError> {
    let t = &job.timing;
    let msg = if t.ramp_size.is_some() && t.ramp_time.is_some() {
        "job rejected: cannot specify both ramp_time and ramp_size (fio says the same)"
    } else if t.ramp_size.is_some()
        && run
            .iter()
            .any(|o| o.group_id == job.group_id && o.timing.ramp_size != t.ramp_size)
    {
        "job rejected: inconsistent ramp_size within reporting group (fio says the same); \
         give every job of the group the same ramp_size"
    } else {
        return Ok(());
    };
    Err(RunError::Job {
        job: job.name.clone(),
        msg: msg.into(),
    })
}

/// Sleep `startdelay` (a range picks a point in it), waking early when stopped.
pub(super) fn start_delay(job: &JobSpec, stop: &dyn Fn() -> bool) {
    let (lo, hi) = job.timing.startdelay;
    let d = if hi > lo {
        let span = (hi - lo).as_nanos() as u64;
        let pick = (job.rand.randseed ^ (job.index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
            % (span + 1);
        lo + Duration::from_nanos(pick)
    } else {
        lo
    };
    let end = Instant::now() + d;
    while !stop() {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

/// cpus_allowed, nice, prio/prioclass for the job's thread.
pub(super) fn place_thread(job: &JobSpec, cpus: Option<&[usize]>) -> Result<(), RunError> {
    let fail = |what: &str, e: std::io::Error| RunError::Job {
        job: job.name.clone(),
        msg: format!("{what}: {e}"),
    };
    if let Some(c) = cpus {
        sys::set_affinity(c).map_err(|e| fail(&format!("cpus_allowed={c:?}"), e))?;
    }
    if job.cpu.nice != 0 {
        sys::set_thread_nice(job.cpu.nice)
            .map_err(|e| fail(&format!("nice={}", job.cpu.nice), e))?;
    }
    if job.cpu.prio.is_some() || job.cpu.prioclass.is_some() || job.cpu.priohint.is_some() {
        // fio's ioprio_value: an unset or 0 class is best-effort, an unset level 0; the
        // priohint bits above the level.
        let v = u32::from(job.default_ioprio());
        let (class, level) = (v >> fiox_job::cmdprio::IOPRIO_CLASS_SHIFT, v & 7);
        let hint = (v >> 3) & 0x3ff;
        sys::set_thread_ioprio(v).map_err(|e| {
            fail(
                &format!("prioclass={class}/prio={level}/priohint={hint}"),
                e,
            )
        })?;
    }
    // After cpus_allowed, as fio: numa_cpu_nodes replaces the CPU set.
    crate::job::numa::place(job)
}

/// A `zonemode=zbd` job ([`JobSpec::zoned`]) fails before its files are touched, with
/// EINVAL as fio 3.33's does on a file smaller than a zone (in fio's words); on a larger one,
/// where fio would emulate zones, the same errno and why.
fn zoned_failure(job: &JobSpec, diskless: bool) -> RunError {
    let zone = job.zone.size;
    let files = files::plan(job, diskless)
        .map(|p| p.files)
        .unwrap_or_default();
    let small = files.iter().find_map(|f| {
        let size = f.real_size.max(f.offset + f.size);
        (size < zone).then(|| (f.path.display().to_string(), size))
    });
    let msg = match small {
        Some((path, size)) => {
            format!("{path}: file/device size {size} is smaller than zone size {zone}")
        }
        None => "zonemode=zbd: fiox does not support zoned block devices or emulate zones on a \
                 file yet (fio 3.33 would run this job)"
            .to_string(),
    };
    RunError::Target {
        msg: format!("job '{}': {msg}", job.name),
        errno: libc::EINVAL,
    }
}
