//! Running a job's I/O: the loop built for the job (limits, logs, replay, flow, locks, latency
//! target, block infos), the write phase then the verify phase, `exec_prerun`/`exec_postrun`,
//! and what was measured collected into the job's result.

use super::env::JobEnv;
use super::memory::*;
use super::prepare::*;
use crate::error::RunError;
use crate::files::opengate::OpenGate;
use crate::files::{self, FilePlan};
use crate::io::acct::{JobState, Measure, Progress};
use crate::io::ioloop::{EndReason, IoLoop};
use crate::io::result::fill_result;
use crate::job::warn;
use fiox_engine::IoEngine;
use fiox_job::{Ddir, JobSpec};
use fiox_stats::{JobResult, WarningCode};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

/// The bytes moved by the jobs of reporting group `group` still in their ramp, and whether
/// one of them has left it.
pub(super) fn ramp_group_bytes(jobs: &[JobSpec], progress: &[Progress], group: u32) -> (u64, bool) {
    let mut bytes = 0;
    for (j, p) in jobs.iter().zip(progress) {
        if j.group_id != group {
            continue;
        }
        match JobState::from_u8(p.state.load(Ordering::Relaxed)) {
            JobState::Ramp => {
                bytes += p
                    .bytes
                    .iter()
                    .map(|b| b.load(Ordering::Relaxed))
                    .sum::<u64>();
            }
            JobState::Running => return (bytes, true),
            _ => {}
        }
    }
    (bytes, false)
}

/// Build the loop, wait for the start (`start`: false when the run stopped before it, and
/// then no I/O is done), run it, and store what it measured in `result`.
pub(super) fn run_io(
    env: &JobEnv,
    engine: &mut dyn IoEngine,
    opened: &Opened,
    (gate, file_ops): (Option<OpenGate>, Option<crate::io::fileop::FileOps>),
    (measure, start): (Measure, &mut dyn FnMut() -> bool),
    result: &mut JobResult,
) -> Result<(), RunError> {
    let job = env.job;
    let plan = &opened.plan;
    let mut gen = crate::gen::generator(job, plan)?;
    let mut filler = crate::gen::filler(job, &gen);
    let origins: Vec<u64> = plan.files.iter().map(|f| f.offset).collect();
    let mut verify = crate::verify::JobVerify::new(job, gen.seed(), &origins)?;
    if let Some(v) = verify.as_mut() {
        result.warnings.extend(v.warnings(job));
        v.enable_trim(job, gen.seeds());
    }
    // verify_only of a writing workload: no write phase, only the verify phase. Of a read
    // workload: the reads run as usual, each block checked as it is read (as fio does).
    let only = job.verify.verify_only;
    let verify_phase_only = only && job.rw.mode.has_write();
    if only && verify.is_none() {
        return Err(crate::job::vphase::no_method(job));
    }
    let replayed = if verify_phase_only {
        crate::job::vphase::prepare_verify_only(job, &mut gen, verify.as_mut(), plan.files.len())?
    } else {
        Default::default()
    };
    // experimental_verify replays the I/O sequence: a copy of the generator as it starts.
    let replay = (job.verify.experimental_verify && verify.is_some() && !verify_phase_only)
        .then(|| gen.clone());
    let mut pool = buffer_pool(job, &mut filler)?;
    engine.register_buffers(&pool)?;
    // lockmem: pinned for as long as the job's I/O runs (dropped with this frame).
    let _pinned = pin_memory(job, result)?;
    if !job.timing.time_based {
        let total = plan.io_bytes.saturating_mul(job.timing.loops.max(1) as u64);
        env.progress.planned_bytes.store(total, Ordering::Relaxed);
    }
    let paths: Vec<String> = plan
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    let here = std::path::Path::new(".");
    let create = crate::files::safeopen::create_log_output;
    let logs =
        fiox_stats::JobLogs::for_job_with(here, job, &create).map_err(|e| RunError::Job {
            job: job.name.clone(),
            msg: format!("cannot open log file: {e}"),
        })?;
    let mut b = IoLoop::builder(
        job,
        engine,
        &mut pool,
        (gen, filler),
        (env.progress, env.stop),
    )
    .measure(measure)
    .logs(logs)
    .verify(verify, !files::job_writes(job) && !verify_phase_only)
    .locks(
        env.locks
            .map(|s| crate::control::filelock::Locks::new(s, job.files.lockfile, &paths)),
    )
    .blocks(block_infos(job, plan)?);
    if env.status {
        b = b.status_template(result.clone());
    }
    if let Some(name) = &job.logs.write_iolog {
        let w =
            crate::replay::iolog::IoLogWriter::create(std::path::Path::new(name), paths.clone());
        b = b.iolog(w.map_err(|e| RunError::Job {
            job: job.name.clone(),
            msg: format!("cannot create write_iolog file '{name}': {e}"),
        })?);
    }
    if job.replay.read_iolog.is_some() {
        b = b.replay(replay_queue(job, result)?);
    }
    if gate.is_none() {
        let fds: Vec<_> = opened
            .handles
            .iter()
            .map(|h| h.as_ref().map_or(-1, |h| h.as_raw_fd()))
            .collect();
        b = b.pass_cache(crate::files::cache::PassCache::new(job, &plan.files, &fds));
    }
    b = b.open_gate(gate).file_ops(file_ops).paths(paths);
    if job.timing.ramp_size.is_some() && job.stats.group_reporting {
        let (jobs, progress) = env.run;
        let group = job.group_id;
        b = b.ramp_group(move || ramp_group_bytes(jobs, progress, group));
    }
    if crate::io::noio::is_exec(job) && env.messages {
        env.info.say(&crate::io::noio::exec_lines(job));
    }
    if crate::io::noio::is_cpuio(job) {
        if env.messages {
            env.info.say(&crate::io::noio::start_line(job));
        }
        if job.engine.exit_on_io_done {
            let (jobs, progress) = env.run;
            b = b.io_jobs_done(move || crate::io::noio::io_jobs_done(jobs, progress));
        }
    }
    let mut lp = b.build();
    if !start() {
        return Ok(());
    }
    lp.start(env.flow.lock().ok().and_then(|mut m| m.take()));
    let done = run_phases(env, &mut lp, verify_phase_only, replay, measure, result);
    // fio 3.33 counts verify_only's replayed writes as the job's writes (bytes and I/Os, no
    // time): a parser reading the write section sees what the job would have written.
    result.dirs.write.total_ios += replayed.ios;
    result.dirs.write.io_bytes += replayed.bytes;
    if let (Some(m), Ok(mut slot)) = (lp.take_flow(), env.flow.lock()) {
        *slot = Some(m);
    }
    done
}

/// `block_error_percentiles`: the blocks of the job's one file, of the trim block size (fio
/// fails a job whose file has none or more than 8192).
pub(super) fn block_infos(
    job: &JobSpec,
    plan: &FilePlan,
) -> Result<Option<fiox_stats::blocks::BlockInfos>, RunError> {
    let Some(f) = plan
        .files
        .first()
        .filter(|_| job.stats.block_error_percentiles)
    else {
        return Ok(None);
    };
    fiox_stats::blocks::BlockInfos::new(f.size, job.bs.trim.min, f.offset)
        .map(Some)
        .map_err(|msg| RunError::Job {
            job: job.name.clone(),
            msg,
        })
}

/// The I/O phase (none for a writing workload's `verify_only`), the verify state, the verify
/// phase; then what they measured into `result`, and the job's error if any. `replay`: the
/// generator copy experimental_verify replays.
pub(super) fn run_phases(
    env: &JobEnv,
    lp: &mut IoLoop,
    verify_phase_only: bool,
    replay: Option<crate::gen::Generator>,
    measure: Measure,
    result: &mut JobResult,
) -> Result<(), RunError> {
    let job = env.job;
    let end = if verify_phase_only {
        EndReason::Done
    } else {
        lp.run()
    };
    if let Some(g) = lp.open_gate() {
        debug_open_counts(job, g);
    }
    lp.debug_counts().print(&job.name);
    if let Some(v) = lp.verify_mut() {
        v.finish_offloaded(); // a read job's verify_async checks still queued
    }
    let done = &lp.acct().dirs;
    let bytes = done[Ddir::Write.index()].io_bytes + done[Ddir::Trim.index()].io_bytes;
    // A queued engine's replayed read accepts a block's newer write, as fio's does.
    let newest = !lp.copies_lat();
    if let (Some(mut g), Some(v)) = (replay, lp.verify_mut()) {
        let min_bs = job.bs.write.min.min(job.bs.read.min).min(job.bs.trim.min);
        v.set_replayed(crate::verify::vstate::replayed_reads(
            &mut g, bytes, min_bs, newest,
        ));
    }
    let state_warning = crate::verify::vstate::save_after_write(job, lp.verify());
    let unaligned = lp.verify().and_then(|v| v.unaligned_warning());
    let phase = crate::job::vphase::verify_phase(env, lp, &end, verify_phase_only);
    env.progress.set_state(JobState::Finishing);
    let phase_ms = phase
        .as_ref()
        .map(|p| lp.now().saturating_sub(p.start_ns) / 1_000_000);
    collect(job, lp, measure, result)?;
    result.warnings.extend(state_warning);
    result.warnings.extend(unaligned);
    result.block_infos = lp.take_blocks().map(|b| b.into_infos());
    if let Some(qd) = lp.lat_target_depth() {
        let s = job.lat_target;
        result.lat_target = Some((qd, s.target_ns, s.window_us, s.percentile));
    }
    if let Some(e) = lp.finish_iolog().and_then(|r| r.err()) {
        return Err(RunError::Job {
            job: job.name.clone(),
            msg: format!("writing the write_iolog file: {e}"),
        });
    }
    if let Some(ms) = phase_ms {
        crate::job::vphase::split_runtime(result, ms, job.rw.mode);
    }
    if let Some(v) = lp.verify().filter(|v| v.failures > 0) {
        return Err(crate::job::vphase::verify_failed(env, v, result));
    }
    // An error of the write phase, else one of the verify phase (a failed read).
    let end = match (end, phase.map(|p| p.end)) {
        (EndReason::Error(e, m), _) | (_, Some(EndReason::Error(e, m))) => EndReason::Error(e, m),
        (end, _) => end,
    };
    match end {
        EndReason::Error(errno, msg) => {
            result.error = errno;
            result.verror = msg.clone();
            Err(RunError::IoFailed(format!("job '{}': {msg}", job.name)))
        }
        _ => Ok(()),
    }
}

/// The log of a `read_iolog` job (already reshaped by it: the files must still be the same).
pub(super) fn replay_queue(
    job: &JobSpec,
    result: &mut JobResult,
) -> Result<crate::replay::ReplayQueue, RunError> {
    let err = |msg: String| RunError::Job {
        job: job.name.clone(),
        msg,
    };
    let r = crate::replay::load(job).map_err(err)?;
    // Only a blktrace replay has a probed depth.
    if r.depth.is_some() && crate::debug::on(crate::debug::BLKTRACE) {
        crate::replay::blktrace::debug_stored(&r);
    }
    if r.files != job.files.filenames {
        return Err(err(
            "the read_iolog file changed while the run started".into()
        ));
    }
    if r.skipped_trims > 0 {
        result.warnings.push(fiox_stats::Warning::new(
            WarningCode::ReplayTrims,
            format!(
                "job {}: read_iolog: {} trim(s) in the log were not replayed",
                job.name, r.skipped_trims
            ),
        ));
    }
    if r.zero_byte_traces > 0 {
        result.warnings.push(fiox_stats::Warning::new(
            WarningCode::ReplayZeroBytes,
            format!(
                "job {}: read_iolog: {} zero-byte queue event(s) in the blktrace were not replayed",
                job.name, r.zero_byte_traces
            ),
        ));
    }
    for note in &r.notes {
        result.warnings.push(fiox_stats::Warning::new(
            WarningCode::ReplayLog,
            format!("job {}: read_iolog: {note}", job.name),
        ));
    }
    Ok(crate::replay::ReplayQueue::new(r))
}

/// fio's `exec_string`: `CMD > JOB.MODE.txt 2>&1` through the shell (the redirection applies
/// to the command's last part, exactly as in fio). True when it exited with status 0.
pub(super) fn exec_string(env: &JobEnv, cmd: &str, mode: &str) -> bool {
    let name = &env.job.name;
    if env.messages {
        fiox_guard::eprintln!("{name} : Saving output of {mode} in {name}.{mode}.txt");
    }
    let line = format!("{cmd} > {name}.{mode}.txt 2>&1");
    match std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .status()
    {
        Ok(s) => s.success(),
        Err(e) => {
            fiox_guard::eprintln!("fiox: exec of cmd <{line}> failed: {e}");
            false
        }
    }
}

/// After the loop: CPU use, rates, logs closed, evidence-based warnings, all into `result`.
pub(super) fn collect(
    job: &JobSpec,
    lp: &mut IoLoop,
    measure: Measure,
    result: &mut JobResult,
) -> Result<(), RunError> {
    let end_ns = lp.now();
    // The loop's clock counts from its start: the wall time then is now less that count.
    let wall_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    result.io_start_unix_ms = wall_ms.saturating_sub(end_ns / 1_000_000);
    let cpu = lp.cpu_since_start();
    let rates = lp.take_rates();
    let log_end_ms = end_ns.saturating_sub(lp.measured_start_ns()) / 1_000_000;
    let log_result = lp.finish_logs(log_end_ms);
    fill_result(result, lp, end_ns, cpu, measure);
    result.explain_window_lat = lp.window_lat();
    for (i, r) in rates.into_iter().enumerate() {
        if let Some((bw, iops)) = r {
            let d = result.dirs.get_mut(fiox_job::Ddir::ALL[i]);
            d.bw = bw;
            d.iops = iops;
        }
    }
    let evidence = warn::result_warnings(job, result);
    result.warnings.extend(evidence);
    log_result.map_err(|e| RunError::Job {
        job: job.name.clone(),
        msg: format!("writing log files: {e}"),
    })
}
