//! One job's life on its own thread: start delay, CPU placement and priorities, engine creation,
//! file planning/safety checks/layout/opening, cache invalidation and pre-reading, the I/O loop,
//! end-of-job syncs and unlinking, and turning what was measured into a `JobResult` with its
//! warnings.

use crate::error::RunError;
use crate::files::opengate::OpenGate;
use crate::files::{self, FileKind, FilePlan};
use crate::io::acct::{JobState, Measure, Progress};
use crate::io::ioloop::{EndReason, IoLoop, Limits};
use crate::io::result::fill_result;
use crate::job::warn;
use crate::sys;
use fiox_engine::{BufPool, EngineFile, IoEngine, MemSpec, OpenSpec, Pinned};
use fiox_job::{Ddir, JobSpec};
use fiox_stats::{JobResult, Warning};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a job thread gets from the coordinator.
pub struct JobEnv<'a> {
    pub job: &'a JobSpec,
    pub progress: &'a Progress,
    /// Every job of the run and its progress (cpuio's exit_on_io_done watches them).
    pub run: (&'a [JobSpec], &'a [Progress]),
    pub stop: &'a AtomicBool,
    /// Print fio's informational lines ("Laying out IO file ...") through `info`.
    pub messages: bool,
    pub info: &'a crate::InfoSink,
    pub readonly: bool,
    /// Skip the block-device safety checks (`--allow-destructive`).
    pub allow_destructive: bool,
    /// `--allow-destructive=PATH`: writing allowed to exactly these devices or files.
    pub allow_targets: &'a [std::path::PathBuf],
    /// CPUs this job may use after `cpus_allowed_policy` was applied.
    pub cpus: Option<Vec<usize>>,
    /// `--status-interval` is set: publish snapshots when asked.
    pub status: bool,
    /// The job's part in its flow (`flow` > 0), lent to the I/O loop and given back when the
    /// loop ends: the job leaves its flow when the coordinator reaps it (`flow::Parts`), as
    /// fio's reap_threads does, not the moment its own loop stops.
    pub flow: &'a std::sync::Mutex<Option<crate::control::flow::Member>>,
    /// `lockfile=`: the file locks this job shares with its clones (None: no locking).
    pub locks: Option<&'a crate::control::filelock::Shared>,
    /// In a run with other processes: the job's place at its phase's start gate, where it waits
    /// after its setup for the common start (None: start at once).
    pub start: Option<crate::sync::Ticket<'a>>,
    /// The cgroups this run created (`cgroup=`), removed when the run ends.
    pub(crate) cgroups: &'a crate::job::cgroup::Created,
}

/// A job's outcome: its result (also on failure, with `error` set) and the failure, if any.
pub struct JobOutcome {
    pub result: JobResult,
    pub error: Option<RunError>,
    /// Files the job created and must remove on cleanup (`unlink=1`), if not yet removed.
    pub leftovers: Vec<std::path::PathBuf>,
}

/// Files opened for the run (kept open until the end of the job).
pub(crate) struct Opened {
    pub handles: Vec<Option<File>>,
    pub plan: FilePlan,
    /// Per file, the inode its setup open created or checked (None: not opened at setup), so
    /// a lazy reopen of the same inode is not checked again.
    checked: Vec<Option<crate::files::owned::Identity>>,
    /// Problems met while preparing files that do not stop the job (cache invalidation).
    warnings: Vec<Warning>,
    /// Exclusive claims on the block devices the job writes, held until the job is done so
    /// nobody mounts them mid-run.
    _claims: Vec<crate::files::blockdev::BlockClaim>,
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
        ..Default::default()
    }
}

fn execute(
    env: &JobEnv,
    result: &mut JobResult,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<(), RunError> {
    let job = env.job;
    // Stopped, or terminated by another job's exitall (fio: start_delay is then 0).
    let halted =
        || env.stop.load(Ordering::Relaxed) || env.progress.terminate.load(Ordering::Relaxed);
    start_delay(job, &halted);
    if halted() {
        // Stopped before starting: nothing to set up or measure.
        return Ok(());
    }
    place_thread(job, env.cpus.as_deref())?;
    if let Some(name) = &job.comm {
        // fio's prctl(PR_SET_NAME) at the job's start; like fio, a failure is not an error.
        let _ = sys::set_thread_name(name);
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
    let e4defrag = job.ioengine.trim().eq_ignore_ascii_case("e4defrag");
    let new_donor = e4defrag && crate::files::owned::check_donor(job, allow_all(env))?;
    let mut engine = fiox_engine::create(job)?;
    if new_donor {
        crate::files::owned::mark_created_donor(job)?;
    }
    crate::dprint!(crate::debug::IO, "load ioengine {}", job.ioengine);
    let flags = engine.flags();
    crate::files::owned::check_end_syncfs(job)?;
    check_ramp_size(job, env.run.0)?;
    if let Some(msg) = crate::control::steady::interval_problem(env.run.0) {
        return Err(RunError::Job {
            job: job.name.clone(),
            msg,
        });
    }
    check_log_options(job)?;
    if matches!(engine.name(), "filedelete" | "dirdelete") {
        crate::files::owned::check_deletable(job, allow_all(env))?;
    }
    if matches!(engine.name(), "dirstat" | "dirdelete") {
        crate::io::fileop::setup_dirs(job)?;
    }
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
    let mut _sched = crate::job::iosched::Switched::default();
    if let (Some(name), false) = (&job.ioscheduler, flags.no_io) {
        let paths: Vec<_> = opened.plan.files.iter().map(|f| f.path.clone()).collect();
        let notes = crate::job::iosched::switch(&paths, name, &mut _sched).map_err(|msg| {
            RunError::Job {
                job: job.name.clone(),
                msg,
            }
        })?;
        for n in notes {
            result.warnings.push(fiox_stats::Warning {
                code: "ioscheduler-not-tunable".into(),
                message: format!("job {}: {n}", job.name),
                fix: "the device has no scheduler to switch (fio says the same)".into(),
            });
        }
    }
    if env.messages && crate::io::noio::net_waits(job) {
        env.info.say("fio: waiting for connection\n");
    }
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
    let gate = lazy_open_gate(env, &mut opened, engine.as_mut(), flags.no_io)?;
    if let Some(ticket) = &env.start {
        ticket.wait(env.stop);
        if env.stop.load(Ordering::Relaxed) {
            // Another process failed or was stopped before the common start: no I/O.
            return finish_files(job, &mut opened, flags.no_io, leftovers);
        }
    }
    result.warnings = warn::job_warnings(job, &opened.plan, flags);
    result.warnings.extend(opened.warnings.iter().cloned());
    let mut measure = Measure::of(job, flags.sync);
    // fio's file-operation engines time the operation on each file, not the I/Os.
    let file_ops = flags
        .file_ops
        .then(|| crate::io::fileop::FileOps::new(job, opened.plan.files.len(), measure.lat));
    if file_ops.is_some() {
        measure = Measure {
            slat: false,
            clat: false,
            lat: false,
            bw: measure.bw,
        };
    }
    result.has_slat = measure.slat;
    let cache = crate::files::cache::Residency::begin(job, &opened.plan.files, flags.no_io);
    let ran = run_io(
        env,
        engine.as_mut(),
        &opened,
        (gate, file_ops),
        measure,
        result,
    );
    result.page_cache = cache.end(&opened.plan.files);
    result
        .warnings
        .extend(warn::page_cache_warning(job, result));
    ran?;
    // filecreate is diskless but unlink=1 removes the files it created, as fio's does.
    finish_files(job, &mut opened, flags.no_io && !flags.file_ops, leftovers)
}

/// log_issue_time needs write_lat_log and log_offset (fio refuses the job otherwise, EINVAL);
/// fio 3.42's compressed sample layouts with the issue time or two values are not written yet.
fn check_log_options(job: &JobSpec) -> Result<(), RunError> {
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
fn check_ramp_size(job: &JobSpec, run: &[JobSpec]) -> Result<(), RunError> {
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

/// The bytes moved by the jobs of reporting group `group` still in their ramp, and whether
/// one of them has left it.
fn ramp_group_bytes(jobs: &[JobSpec], progress: &[Progress], group: u32) -> (u64, bool) {
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

/// `openfiles` below nrfiles: close the files opened at setup (the engine forgets them) and
/// hand them to a gate that reopens each when the generator first uses it.
fn lazy_open_gate(
    env: &JobEnv,
    opened: &mut Opened,
    engine: &mut dyn IoEngine,
    diskless: bool,
) -> Result<Option<OpenGate>, RunError> {
    let (job, allow) = (env.job, allow_all(env));
    if !files::lazy_open(job, opened.plan.files.len(), diskless) {
        return Ok(None);
    }
    let mut list = Vec::with_capacity(opened.plan.files.len());
    for (i, f) in opened.plan.files.iter().enumerate() {
        if opened.handles[i].is_some() {
            engine.close_file(i as u32)?;
        }
        opened.handles[i] = None;
        list.push(crate::files::opengate::GateEntry {
            path: f.path.clone(),
            size: f.real_size.max(f.offset + f.size),
            offset: f.offset,
            checked: opened.checked[i],
        });
    }
    let spec = fiox_engine::OpenSpec::from_job(job);
    let gate = OpenGate::new(list, spec, files::job_writes(job), &job.name, allow);
    Ok(Some(
        gate.fsync_on_close(job.fsync_on_close)
            .advise(files::access_advice(job))
            .write_hint(job.files.write_hint, job.direct)
            .invalidate(job.files.invalidate),
    ))
}

/// Sleep `startdelay` (a range picks a point in it), waking early when stopped.
fn start_delay(job: &JobSpec, stop: &dyn Fn() -> bool) {
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
fn place_thread(job: &JobSpec, cpus: Option<&[usize]>) -> Result<(), RunError> {
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

/// Plan, check, lay out and open the job's files.
fn prepare_files(
    env: &JobEnv,
    diskless: bool,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<Opened, RunError> {
    let job = env.job;
    crate::dprint!(crate::debug::FILE, "setup files");
    let mut plan = files::plan(job, diskless)?;
    env.progress
        .files
        .store(plan.files.len() as u64, Ordering::Relaxed);
    if diskless {
        take_creds(job)?;
        let handles = plan.files.iter().map(|_| None).collect();
        return Ok(Opened {
            checked: vec![None; plan.files.len()],
            handles,
            plan,
            warnings: Vec::new(),
            _claims: Vec::new(),
        });
    }
    let allowed =
        |p: &std::path::Path| env.allow_destructive || allowed_target(env.allow_targets, p);
    crate::files::owned::check_user_files(job, &plan, &allowed)?;
    crate::verify::vstate::check_targets(job, &plan)?;
    let mut claims = Vec::new();
    if files::job_writes(job) && !job.files.allow_mounted_write {
        let blocks = plan.files.iter().filter(|f| f.kind == FileKind::Block);
        for f in blocks.filter(|f| !allowed(&f.path)) {
            claims.push(crate::files::blockdev::check_block_write(&f.path)?);
        }
    }
    // Before the job opens (or lays out) the files it keeps: they go into its own table.
    crate::job::fdtable::enter(job, &claims);
    lay_out_all(env, &mut plan, leftovers)?;
    take_creds(job)?;
    let spec = OpenSpec::from_job(job);
    let mut handles = Vec::with_capacity(plan.files.len());
    let mut warnings = Vec::new();
    let mut checked = Vec::with_capacity(plan.files.len());
    // create_on_open: a missing file is created by its first open during the I/O phase.
    let defer = job.files.create_on_open && files::lazy_open(job, plan.files.len(), diskless);
    for f in &mut plan.files {
        let who = crate::files::safeopen::Writer {
            job: &job.name,
            allow: allow_all(env) || allowed_target(env.allow_targets, &f.path),
        };
        if defer && !f.path.exists() {
            // Created at its first open (create_on_open): still removed on an aborted run,
            // by path, once it carries fiox's mark (see the cleanup in lib.rs).
            if job.files.unlink {
                crate::files::owned::leave(leftovers, &f.path);
            }
            handles.push(None);
            checked.push(None);
            continue;
        }
        let o = crate::files::safeopen::open_job_file(&who, &f.path, &spec, f.offset, None)?;
        checked.push(Some(o.id));
        let h = o.file;
        if o.created {
            f.created = true;
            if job.files.unlink {
                crate::files::owned::leave(leftovers, &f.path);
            }
        }
        warnings.extend(prepare_cache(job, f, &h)?);
        handles.push(Some(h));
    }
    Ok(Opened {
        handles,
        plan,
        checked,
        warnings,
        _claims: claims,
    })
}

/// uid/gid: the job's thread becomes that user once its files are laid out and before it
/// opens them, as in fio (whose parent process lays the files out, create_serialize being
/// on by default, before the job's process calls setgid/setuid and opens them).
fn take_creds(job: &JobSpec) -> Result<(), RunError> {
    sys::set_thread_creds(job.cpu.uid, job.cpu.gid).map_err(|(what, e)| RunError::Target {
        msg: format!("job '{}': {what}: {e}", job.name),
        errno: e.raw_os_error().unwrap_or(libc::EPERM),
    })
}

/// Whether `path` is one of the targets `--allow-destructive=PATH` named: the same device
/// (a block device's number) or the same file (device and inode), links followed as the
/// job's open follows them.
fn allowed_target(targets: &[std::path::PathBuf], path: &std::path::Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let key = |p: &std::path::Path| {
        std::fs::metadata(p).ok().map(|m| {
            if m.file_type().is_block_device() {
                (0, m.rdev())
            } else {
                (m.dev(), m.ino())
            }
        })
    };
    let Some(k) = key(path) else {
        return false;
    };
    targets.iter().any(|t| key(t) == Some(k))
}

/// The user allowed writing over anything (`allow_mounted_write=1` or `--allow-destructive`).
fn allow_all(env: &JobEnv) -> bool {
    env.job.files.allow_mounted_write || env.allow_destructive
}

fn lay_out_all(
    env: &JobEnv,
    plan: &mut FilePlan,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<(), RunError> {
    let job = env.job;
    // Jobs sharing a file must not lay it out concurrently: one does, the others find it
    // large enough once they get the lock.
    static LAYOUT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LAYOUT.lock().unwrap_or_else(|p| p.into_inner());
    for f in plan.files.iter_mut().filter(|f| f.needs_layout) {
        if let Ok(m) = std::fs::metadata(&f.path) {
            f.real_size = m.len();
            f.needs_layout =
                m.len() < f.offset + f.size || crate::files::owned::layout_incomplete(&f.path);
        }
    }
    let need: Vec<usize> = (0..plan.files.len())
        .filter(|&i| plan.files[i].needs_layout)
        .collect();
    if need.is_empty() {
        return Ok(());
    }
    if env.readonly {
        return Err(RunError::Refused(format!(
            "job '{}': {} must be laid out (created or extended), but --readonly was given",
            job.name,
            plan.files[need[0]].path.display()
        )));
    }
    for &i in &need {
        files::check_parent(&plan.files[i].path)?;
    }
    if env.messages {
        let total: u64 = need
            .iter()
            .map(|&i| plan.files[i].offset + plan.files[i].size)
            .sum();
        let n = need.len();
        env.info.say(&format!(
            "{}: Laying out IO file{} ({} file{} / {}{}MiB)\n",
            job.name,
            if n > 1 { "s" } else { "" },
            n,
            if n > 1 { "s" } else { "" },
            if n > 1 { "total " } else { "" },
            total >> 20
        ));
    }
    let stop = || env.stop.load(Ordering::Relaxed);
    for &i in &need {
        let f = &mut plan.files[i];
        // Registered before it exists, so a forced exit during the layout removes it too
        // (only once it carries fiox's mark: a file someone else made there is never touched).
        if job.files.unlink && !f.path.exists() {
            crate::files::owned::leave(leftovers, &f.path);
        }
        files::lay_out(job, f, allow_all(env), &stop)?;
    }
    if job.files.fill_device {
        files::refresh_io_bytes(job, plan);
    }
    Ok(())
}

/// invalidate (drop cached pages), the access hint and pre_read (load them) before the job.
/// A failed invalidation is a warning (as in fio): the job runs, but may read cached data.
fn prepare_cache(
    job: &JobSpec,
    f: &files::PlannedFile,
    h: &File,
) -> Result<Vec<Warning>, RunError> {
    let fd = h.as_raw_fd();
    let mut warnings = Vec::new();
    if matches!(f.kind, FileKind::Regular | FileKind::Block) {
        files::apply_write_hint(job, fd, &f.path)?;
    }
    // fio's order at every open: drop the cache (even for direct jobs), then the hint.
    if job.files.invalidate {
        if let Err(e) = crate::files::cache::drop_cached(f.kind, fd, f.offset, f.size) {
            warnings.push(Warning {
                code: "invalidate-failed".into(),
                message: format!(
                    "dropping the cached pages of {} failed ({e}); reads may be served from \
                     the page cache",
                    f.path.display()
                ),
                fix: "run as root for block devices, or use direct=1".into(),
            });
        }
    }
    if matches!(f.kind, FileKind::Regular | FileKind::Block) {
        if let Err(e) = files::advise_access(job, fd, f.offset, f.size) {
            warnings.push(Warning {
                code: "fadvise-failed".into(),
                message: format!(
                    "the fadvise_hint access hint for {} failed ({e}); the kernel's default \
                     readahead applies",
                    f.path.display()
                ),
                fix: "fadvise_hint=0 to run without the hint".into(),
            });
        }
    }
    if job.files.pre_read {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; 1 << 20];
        let mut off = f.offset;
        let end = f.offset + f.size;
        // A buffered handle: pre_read fills the page cache even for direct jobs (as fio).
        let rh = File::open(&f.path).map_err(|e| RunError::io("open for pre_read", &f.path, e))?;
        while off < end {
            let n = ((end - off) as usize).min(buf.len());
            let got = rh
                .read_at(&mut buf[..n], off)
                .map_err(|e| RunError::io("pre_read", &f.path, e))?;
            if got == 0 {
                break;
            }
            off += got as u64;
        }
    }
    Ok(warnings)
}

/// Build the loop, run it, and store what it measured in `result`.
fn run_io(
    env: &JobEnv,
    engine: &mut dyn IoEngine,
    opened: &Opened,
    (gate, file_ops): (Option<OpenGate>, Option<crate::io::fileop::FileOps>),
    measure: Measure,
    result: &mut JobResult,
) -> Result<(), RunError> {
    let job = env.job;
    let plan = &opened.plan;
    let mut gen = crate::gen::generator(job, plan)?;
    let mut filler = crate::gen::filler(job, &gen);
    let mut verify = crate::verify::JobVerify::new(job, gen.seed(), plan.files.len())?;
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
    if verify_phase_only {
        crate::job::vphase::prepare_verify_only(job, &mut gen, verify.as_mut(), plan.files.len())?;
    }
    // experimental_verify replays the I/O sequence: a copy of the generator as it starts.
    let replay = (job.verify.experimental_verify && verify.is_some() && !verify_phase_only)
        .then(|| gen.clone());
    let mut pool = buffer_pool(job, &mut filler)?;
    engine.register_buffers(&pool)?;
    // lockmem: pinned for as long as the job's I/O runs (dropped with this frame).
    let _pinned = pin_memory(job, result)?;
    let limits = limits_of(job);
    if !job.timing.time_based {
        let total = plan.io_bytes.saturating_mul(job.timing.loops.max(1) as u64);
        env.progress.planned_bytes.store(total, Ordering::Relaxed);
    }
    let paths = plan
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    let here = std::path::Path::new(".");
    let create = crate::files::safeopen::create_output;
    let logs =
        fiox_stats::JobLogs::for_job_with(here, job, &create).map_err(|e| RunError::Job {
            job: job.name.clone(),
            msg: format!("cannot open log file: {e}"),
        })?;
    let mut lp = IoLoop::new(
        job,
        engine,
        gen,
        filler,
        logs,
        &mut pool,
        paths,
        env.progress,
        env.stop,
        measure,
        limits,
    );
    if env.status {
        lp.status_template = Some(Box::new(result.clone()));
    }
    if let Some(name) = &job.logs.write_iolog {
        let names = lp.paths.clone();
        let w = crate::replay::iolog::IoLogWriter::create(std::path::Path::new(name), names);
        lp.iolog = Some(w.map_err(|e| RunError::Job {
            job: job.name.clone(),
            msg: format!("cannot create write_iolog file '{name}': {e}"),
        })?);
    }
    if job.replay.read_iolog.is_some() {
        lp.replay = Some(replay_queue(job, result)?);
    }
    lp.locks = env
        .locks
        .map(|s| crate::control::filelock::Locks::new(s, job.files.lockfile, &lp.paths));
    if job.lat_target.target_ns > 0 {
        let now = lp.clock.now_ns();
        lp.lat_target = Some(crate::control::latarget::LatTarget::new(
            job.lat_target,
            job.iodepth,
            now,
            0,
        ));
    }
    lp.read_checks = !files::job_writes(job) && !verify_phase_only;
    lp.verify = verify;
    if gate.is_none() {
        let fds: Vec<_> = opened
            .handles
            .iter()
            .map(|h| h.as_ref().map_or(-1, |h| h.as_raw_fd()))
            .collect();
        lp.pass_cache = Some(crate::files::cache::PassCache::new(job, &plan.files, &fds));
    }
    lp.gate = gate;
    lp.file_ops = file_ops;
    if job.timing.ramp_size.is_some() && job.stats.group_reporting {
        let (jobs, progress) = env.run;
        let group = job.group_id;
        lp.ramp_group = Some(Box::new(move || ramp_group_bytes(jobs, progress, group)));
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
            lp.io_jobs_done = Some(Box::new(move || {
                crate::io::noio::io_jobs_done(jobs, progress)
            }));
        }
    }
    lp.blocks = block_infos(job, plan)?;
    lp.flow = env.flow.lock().ok().and_then(|mut m| m.take());
    let done = run_phases(env, &mut lp, verify_phase_only, replay, measure, result);
    if let (Some(m), Ok(mut slot)) = (lp.flow.take(), env.flow.lock()) {
        *slot = Some(m);
    }
    done
}

/// `block_error_percentiles`: the blocks of the job's one file, of the trim block size (fio
/// fails a job whose file has none or more than 8192).
fn block_infos(
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
fn run_phases(
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
    if let Some(g) = lp.gate.as_ref() {
        debug_open_counts(job, g);
    }
    if cfg!(debug_assertions) && std::env::var_os("FIOX_DEBUG_THINKCYCLES").is_some() {
        // Debug builds, on request: how many I/Os were followed by a thinkcycles spin.
        eprintln!(
            "fiox-debug: job {}: thinkcycles spins {}",
            job.name, lp.spins
        );
    }
    if let Some(v) = lp.verify.as_mut() {
        v.finish_offloaded(); // a read job's verify_async checks still queued
    }
    if let (Some(mut g), Some(v)) = (replay, lp.verify.as_mut()) {
        let done = &lp.acct.dirs;
        let bytes = done[Ddir::Write.index()].io_bytes + done[Ddir::Trim.index()].io_bytes;
        let min_bs = job.bs.write.min.min(job.bs.read.min).min(job.bs.trim.min);
        v.set_replayed(crate::verify::vstate::replayed_reads(&mut g, bytes, min_bs));
    }
    let state_warning = crate::verify::vstate::save_after_write(job, lp.verify.as_ref());
    let phase = crate::job::vphase::verify_phase(env, lp, &end, verify_phase_only);
    env.progress.set_state(JobState::Finishing);
    let phase_ms = phase
        .as_ref()
        .map(|p| lp.clock.now_ns().saturating_sub(p.start_ns) / 1_000_000);
    collect(job, lp, measure, result)?;
    result.warnings.extend(state_warning);
    result.block_infos = lp.blocks.take().map(|b| b.into_infos());
    if let Some(t) = &lp.lat_target {
        let s = job.lat_target;
        result.lat_target = Some((t.qd, s.target_ns, s.window_us, s.percentile));
    }
    if let Some(e) = lp.iolog.as_mut().and_then(|l| l.finish().err()) {
        return Err(RunError::Job {
            job: job.name.clone(),
            msg: format!("writing the write_iolog file: {e}"),
        });
    }
    if let Some(ms) = phase_ms {
        crate::job::vphase::split_runtime(result, ms, job.rw.mode);
    }
    if let Some(v) = lp.verify.as_ref().filter(|v| v.failures > 0) {
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
fn replay_queue(
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
        result.warnings.push(fiox_stats::Warning {
            code: "replay-trims".into(),
            message: format!(
                "job {}: read_iolog: {} trim(s) in the log were not replayed",
                job.name, r.skipped_trims
            ),
            fix: "fio 3.33 does not replay trims from an I/O log either".into(),
        });
    }
    if r.zero_byte_traces > 0 {
        result.warnings.push(fiox_stats::Warning {
            code: "replay-zero-bytes".into(),
            message: format!(
                "job {}: read_iolog: {} zero-byte queue event(s) in the blktrace were not replayed",
                job.name, r.zero_byte_traces
            ),
            fix: "fio 3.33 ignores zero-byte traces too".into(),
        });
    }
    for note in &r.notes {
        result.warnings.push(fiox_stats::Warning {
            code: "replay-log".into(),
            message: format!("job {}: read_iolog: {note}", job.name),
            fix: "the I/Os read before it are replayed, as fio 3.33 does".into(),
        });
    }
    Ok(crate::replay::ReplayQueue::new(r))
}

/// fio's `exec_string`: `CMD > JOB.MODE.txt 2>&1` through the shell (the redirection applies
/// to the command's last part, exactly as in fio). True when it exited with status 0.
fn exec_string(env: &JobEnv, cmd: &str, mode: &str) -> bool {
    let name = &env.job.name;
    if env.messages {
        eprintln!("{name} : Saving output of {mode} in {name}.{mode}.txt");
    }
    let line = format!("{cmd} > {name}.{mode}.txt 2>&1");
    match std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .status()
    {
        Ok(s) => s.success(),
        Err(e) => {
            eprintln!("fiox: exec of cmd <{line}> failed: {e}");
            false
        }
    }
}

/// `lockmem`: pin that much memory while the job runs; a smaller pin (fio leaves 128 MiB of
/// the machine unpinned) is said in a warning, as fio says it.
fn pin_memory(job: &JobSpec, result: &mut JobResult) -> Result<Option<Pinned>, RunError> {
    if job.buffers.lockmem == 0 {
        return Ok(None);
    }
    let want = usize::try_from(job.buffers.lockmem).unwrap_or(usize::MAX);
    crate::dprint!(crate::debug::MEM, "pinning {} bytes", job.buffers.lockmem);
    let pinned = Pinned::new(want).map_err(|msg| RunError::Job {
        job: job.name.clone(),
        msg,
    })?;
    if pinned.len < want {
        result.warnings.push(fiox_stats::Warning {
            code: "lockmem-limited".into(),
            message: format!(
                "job {}: limiting mlocked memory to {}MiB",
                job.name,
                pinned.len >> 20
            ),
            fix: "lockmem leaves 128 MiB of the machine unpinned, as fio does".into(),
        });
    }
    Ok(Some(pinned))
}

/// fio's `mem=`, `iomem_align` and `hugepage-size` as the engine crate takes them.
fn mem_spec(job: &JobSpec) -> MemSpec {
    MemSpec {
        kind: job.buffers.mem,
        file: job.buffers.mmapfile.clone(),
        hugepage_size: usize::try_from(job.buffers.hugepage_size).unwrap_or(usize::MAX),
    }
}

/// One aligned slot per queue entry, as large as the largest block, pre-filled for writes.
/// A job that does not write leaves them as allocated (zero pages the kernel maps only when
/// the I/O touches them), as fio does: filling 64 jobs' depth-64 pools cost 33 MB of RSS.
pub(crate) fn buffer_pool(
    job: &JobSpec,
    filler: &mut crate::gen::BufferFiller,
) -> Result<BufPool, RunError> {
    let max_bs = [&job.bs.read, &job.bs.write, &job.bs.trim]
        .iter()
        .map(|b| b.max.max(b.split.iter().map(|s| s.0).max().unwrap_or(0)))
        .max()
        .unwrap_or(4096) as usize;
    let depth = job.iodepth.max(1) as usize;
    let offset = usize::try_from(job.buffers.mem_align).unwrap_or(usize::MAX);
    let mut pool = BufPool::new_in(&mem_spec(job), depth, max_bs, 4096, offset).map_err(|e| {
        RunError::Job {
            job: job.name.clone(),
            msg: e,
        }
    })?;
    if job.rw.mode.has_write() {
        for i in 0..pool.len() {
            filler.fill(pool.slice_mut(i), true);
        }
    }
    if crate::debug::on(crate::debug::MEM) {
        debug_buffers(job, &pool, depth * max_bs);
    }
    Ok(pool)
}

/// fio's `--debug=mem` lines for a job's buffers (allocate_io_mem, then init_io_u per unit;
/// the slot number stands for fio's io_u pointer).
#[cold]
fn debug_buffers(job: &JobSpec, pool: &BufPool, size: usize) {
    let mut total = size as u64;
    // fio adds room to align the buffers where they must be aligned.
    if job.direct || job.buffers.mem_align > 0 {
        total += 4095 + job.buffers.mem_align.saturating_sub(4096);
    }
    crate::dprint!(crate::debug::MEM, "Alloc {total} for buffers");
    // The backing's line, where fiox's allocation is the one fio names (the shm backings'
    // lines carry a segment id fiox's buffer pool does not expose).
    let base = pool.ptr(0).as_ptr();
    use fiox_job::MemKind as K;
    match job.buffers.mem {
        K::Malloc => crate::dprint!(crate::debug::MEM, "malloc {total} {base:p}"),
        K::Mmap | K::MmapShared | K::MmapHuge if job.buffers.mmapfile.is_none() => {
            crate::dprint!(crate::debug::MEM, "mmap {total}/-1 {base:p}");
        }
        _ => {}
    }
    for i in 0..pool.len() {
        crate::dprint!(crate::debug::MEM, "io_u alloc {i:#x}, index {i}");
        let mem = pool.ptr(i).as_ptr();
        crate::dprint!(crate::debug::MEM, "io_u {i:#x}, mem {mem:p}");
    }
}

/// After the loop: CPU use, rates, logs closed, evidence-based warnings, all into `result`.
fn collect(
    job: &JobSpec,
    lp: &mut IoLoop,
    measure: Measure,
    result: &mut JobResult,
) -> Result<(), RunError> {
    let end_ns = lp.clock.now_ns();
    // The loop's clock counts from its start: the wall time then is now less that count.
    let wall_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    result.io_start_unix_ms = wall_ms.saturating_sub(end_ns / 1_000_000);
    let cpu = lp.cpu_usage().since(&lp.cpu_start);
    let rates = lp.take_rates();
    let log_end_ms = end_ns.saturating_sub(lp.measured_start_ns) / 1_000_000;
    let log_result = lp.logs.finish(log_end_ms);
    fill_result(result, lp, end_ns, cpu, measure);
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

fn limits_of(job: &JobSpec) -> Limits {
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

/// end_fsync, fsync_on_close, close, unlink (see [`crate::files::owned::finish_files`]).
fn finish_files(
    job: &JobSpec,
    opened: &mut Opened,
    diskless: bool,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<(), RunError> {
    if diskless {
        return Ok(());
    }
    if crate::debug::on(crate::debug::FILE) {
        for (f, h) in opened.plan.files.iter().zip(&opened.handles) {
            if h.is_some() {
                crate::dprint!(crate::debug::FILE, "fd close {}", f.path.display());
            }
        }
    }
    crate::files::owned::finish_files(job, &mut opened.handles, &opened.plan, leftovers)
}

/// Debug builds only, on request (`FIOX_DEBUG_OPENFILES=1`): print how many files the job had
/// open at most and how many opens it did, so tests can check `openfiles` without timing.
fn debug_open_counts(job: &JobSpec, g: &OpenGate) {
    if cfg!(debug_assertions) && std::env::var_os("FIOX_DEBUG_OPENFILES").is_some() {
        eprintln!(
            "fiox-debug: job {}: files open at most {}, opens {}",
            job.name, g.max_open, g.opens
        );
    }
}
