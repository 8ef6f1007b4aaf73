//! The runner: lays out files, starts one thread per job, groups them (stonewall, new_group,
//! wait_for), drives the engine with the workload generator under the job's timing and pacing,
//! measures latencies and fills [`fiox_stats::RunResult`].
//!
//! Entry point: [`run`] with the resolved jobs and [`RunOptions`]; it returns a [`RunOutcome`]
//! whose `result` is complete even when jobs failed or the run was interrupted (Ctrl-C), so the
//! binary can always print what was measured. fio's process model is not used: every job is a
//! thread (the header's `Starting N processes` stays fio's line, for readers of fio's output).

mod control;
pub mod debug;
mod error;
mod files;
mod gen;
mod io;
mod job;
mod observe;
mod phase;
mod replay;
pub mod sync;
mod sys;
/// The workspace's test harness for what a test needs from the machine (tests/harness/need.rs).
#[cfg(test)]
#[path = "../../../tests/harness/need.rs"]
mod test_need;
mod verify;

pub use observe::{clocktest, idleprof, selftest};

pub use error::RunError;

/// Jobs that name a NUMA node that is not online here: fio's parser hands the node lists to
/// libnuma, which refuses such a node, and the whole job file is rejected before any job runs
/// (`--parse-only` too), with no report. One line per job (numjobs clones once).
pub fn numa_refusals(jobs: &[fiox_job::JobSpec]) -> Vec<String> {
    jobs.iter()
        .filter(|j| j.clone_index == 0)
        .filter_map(|j| job::numa::check(j).err())
        .map(|e| e.to_string())
        .collect()
}
pub use files::blockdev::{claim_for_guest, BlockClaim};
pub use files::safeopen::create_output;
pub use io::acct::{JobState, Progress};
pub use observe::agglog::names as agg_log_names;
pub use replay::iolog::is_fio_iolog;
pub use sync::{GroupSync, PhaseSync, SyncFlags};

use fiox_job::{EtaMode, JobSpec};
use fiox_stats::disk::DiskStatsSampler;
use fiox_stats::{JobResult, RunResult, WarningCode};
#[cfg(test)]
use phase::cpus_for;
use phase::{phases, run_phase};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How a run behaves beyond the jobs themselves.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Print fio's informational lines (file layout) through `info`.
    pub messages: bool,
    /// Where informational lines go (fio's `log_info`: stdout by default; the binary sends
    /// them to the report sink or into the JSON's `fiox.notes`).
    pub info: InfoSink,
    /// `--readonly`: refuse every write.
    pub readonly: bool,
    pub eta: EtaMode,
    /// `--status-interval`: call the status callback this often with a snapshot.
    pub status_interval: Option<Duration>,
    /// `[global]` options for the result's `global options`.
    pub global_options: Vec<(String, String)>,
    /// `--max-jobs`: at most this many jobs run at the same time (None: no limit).
    pub max_jobs: Option<u32>,
    /// `--allow-destructive`: skip the mounted/signature checks of block devices for every
    /// job (as `allow_mounted_write=1` does per job).
    pub allow_destructive: bool,
    /// `--allow-destructive=PATH`: writing allowed to exactly these devices or files.
    pub allow_targets: Vec<std::path::PathBuf>,
    /// `--bandwidth-log`: write fio's aggregate bandwidth logs (agg-*_bw.log).
    pub bandwidth_log: bool,
    /// `--eta-interval` (None: every second).
    pub eta_interval: Option<Duration>,
    /// `--eta-newline`: begin a new ETA line this often.
    pub eta_newline: Option<Duration>,
    /// `--trigger-file`, `--trigger-timeout`, `--trigger` (fio's local trigger).
    pub trigger: Trigger,
    /// Put into the names of the aggregate bandwidth logs (`agg-read_bw.TAG.log`): each rank
    /// of an MPI run writes its own, and rank 0 their sum under fio's names.
    pub log_tag: Option<String>,
    /// `--idle-prof=system|percpu`: profile CPU idleness while the jobs run.
    pub idle_prof: Option<fiox_job::IdleProfMode>,
    /// Build each job's engine with this instead of `ioengine=` (None: the job's engine). For
    /// tests that run whole jobs on a scripted engine (`fiox_engine::scripted`).
    pub engine_factory: Option<EngineFactory>,
}

/// Makes the engine of a job in place of [`fiox_engine::create`] ([`RunOptions::engine_factory`]):
/// called once per job, on the job's thread, where `ioengine=` would be loaded.
#[derive(Clone)]
pub struct EngineFactory(std::sync::Arc<MakeEngine>);

/// What an [`EngineFactory`] calls.
type MakeEngine = dyn Fn(&JobSpec) -> Result<Box<dyn fiox_engine::IoEngine>, fiox_engine::EngineError>
    + Send
    + Sync;

impl EngineFactory {
    /// A factory calling `f` for each job.
    pub fn new(
        f: impl Fn(&JobSpec) -> Result<Box<dyn fiox_engine::IoEngine>, fiox_engine::EngineError>
            + Send
            + Sync
            + 'static,
    ) -> EngineFactory {
        EngineFactory(std::sync::Arc::new(f))
    }

    /// The engine for `job`.
    pub fn create(
        &self,
        job: &JobSpec,
    ) -> Result<Box<dyn fiox_engine::IoEngine>, fiox_engine::EngineError> {
        (self.0)(job)
    }
}

impl std::fmt::Debug for EngineFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EngineFactory")
    }
}

/// fio's local trigger: when `file` appears (it is removed) or `timeout` has passed since the
/// start, every job stops as at the end of its runtime and `cmd` runs in a shell.
#[derive(Debug, Clone, Default)]
pub struct Trigger {
    pub file: Option<std::path::PathBuf>,
    pub timeout: Option<Duration>,
    pub cmd: Option<String>,
}

/// Where a run's informational lines ("Laying out IO file ...") go: stdout, as fio's log_info,
/// unless a consumer is given. Never stderr, which is for errors.
#[derive(Clone, Default)]
pub struct InfoSink(Option<std::sync::Arc<SayFn>>);

/// A consumer of informational lines.
type SayFn = dyn Fn(&str) + Send + Sync;

impl InfoSink {
    /// Hand every line (with its newline) to `f`.
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> InfoSink {
        InfoSink(Some(std::sync::Arc::new(f)))
    }

    /// Say `line` (one line, with its newline).
    pub fn say(&self, line: &str) {
        match &self.0 {
            Some(f) => f(line),
            None => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
            }
        }
    }
}

impl std::fmt::Debug for InfoSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "InfoSink(custom)"
        } else {
            "InfoSink(stdout)"
        })
    }
}

/// A counting semaphore for `--max-jobs`.
struct Slots {
    free: std::sync::Mutex<u32>,
    cv: std::sync::Condvar,
}

impl Slots {
    fn new(n: u32) -> Slots {
        Slots {
            free: std::sync::Mutex::new(n.max(1)),
            cv: std::sync::Condvar::new(),
        }
    }
    fn acquire(&self) {
        let mut g = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *g == 0 {
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        *g -= 1;
    }
    fn release(&self) {
        *self.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.cv.notify_one();
    }
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Everything measured (jobs that failed carry `error`/`verror`).
    pub result: RunResult,
    /// Failures, one per failed job, in job order.
    pub errors: Vec<RunError>,
    /// A SIGINT/SIGTERM stopped the run.
    pub interrupted: bool,
    /// With a [`GroupSync`] ([`run_synced`]): what this process saw of each phase it ran.
    pub phases: Vec<PhaseSync>,
}

/// Process-wide stop request: set by SIGINT/SIGTERM (see [`install_signal_handlers`]) or
/// [`request_stop`]; every running [`run`] passes it on to its jobs within ~20 ms.
static STOP: AtomicBool = AtomicBool::new(false);

/// Ask all running jobs of every run to stop (as Ctrl-C does).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
    // Engines that wait on a peer (net) stop waiting: a job blocked there ends too.
    fiox_engine::stop_waits();
}

fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Install SIGINT/SIGTERM handlers: the first signal stops I/O (results are still printed), a
/// second one exits with status 130 without a report, after removing the files fiox created
/// for jobs with `unlink` (a third signal exits at once). A watcher thread turns the signal
/// count into the stop flag and the forced exit.
pub fn install_signal_handlers() -> std::io::Result<()> {
    sys::install_stop_handlers()?;
    std::thread::Builder::new()
        .name("fiox-signals".into())
        .spawn(|| loop {
            let n = sys::signals_seen();
            if n > 0 {
                request_stop();
            }
            if n > 1 {
                forced_exit();
            }
            std::thread::sleep(Duration::from_millis(20));
        })?;
    Ok(())
}

/// The second signal: remove what must not be left behind, then exit 130 at once. The removal
/// runs in its own thread and gets one second: an unlink on a frozen or hung filesystem must
/// not keep fiox from exiting.
fn forced_exit() -> ! {
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("fiox-cleanup".into())
        .spawn(move || {
            files::owned::remove_left_files();
            let _ = tx.send(());
        });
    let _ = rx.recv_timeout(Duration::from_secs(1));
    sys::exit_now(130)
}

/// Remove `path`, a file fiox made and marked for these jobs but no job unlinks (`fiox quick`'s
/// test file), also when a second signal forces the exit; [`forget_on_forced_exit`] once the
/// caller removed it.
pub fn remove_on_forced_exit(path: &std::path::Path) {
    files::owned::remove_on_exit(path);
}

/// `path` is gone: a forced exit need not remove it (see [`remove_on_forced_exit`]).
pub fn forget_on_forced_exit(path: &std::path::Path) {
    files::owned::forget(path);
}

/// Call before printing the report: when a second signal has already arrived, exit as the
/// watcher thread would (it polls every 20 ms, and the run may end within that time after a
/// first signal stopped it), so two signals never give a report.
pub fn exit_if_forced() {
    if sys::signals_seen() > 1 {
        forced_exit();
    }
}

/// Whether a signal asked the run to stop.
pub fn interrupted() -> bool {
    sys::signals_seen() > 0
}

/// Run all jobs: each stonewalled phase after the previous one, the jobs of a phase in
/// parallel threads. `on_status` receives periodic snapshots when `status_interval` is set.
pub fn run(
    jobs: &[JobSpec],
    opts: &RunOptions,
    on_status: &mut (dyn FnMut(&RunResult) + Send),
) -> RunOutcome {
    run_synced(jobs, opts, on_status, None)
}

/// [`run`] in step with other processes through `sync` (see the `sync` module): one exchange
/// before any I/O (a process that refuses its jobs stops every process), then each phase
/// starts on all processes together and ends on all at the same exchange.
pub fn run_synced(
    jobs: &[JobSpec],
    opts: &RunOptions,
    on_status: &mut (dyn FnMut(&RunResult) + Send),
    sync: Option<&dyn GroupSync>,
) -> RunOutcome {
    let start_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let checked = check_jobs(jobs, opts);
    if let Some(sync) = sync {
        let refused = checked.is_err();
        let all = sync.exchange(SyncFlags {
            stop: refused,
            ..SyncFlags::default()
        });
        if all.stop && !refused {
            // Another process refused: nothing runs anywhere; that process says why.
            return refused_run(jobs, Vec::new(), opts, start_ms);
        }
    }
    let (mut reshaped, allowed) = match checked {
        Ok(v) => v,
        Err((jobs, errors)) => return refused_run(&jobs, errors, opts, start_ms),
    };
    let fd_warnings = files::fdbudget::fit(&mut reshaped, sys::raise_nofile_limit());
    run_checked(
        &reshaped,
        (opts, &allowed),
        on_status,
        sync,
        (start_ms, fd_warnings),
    )
}

/// A refusal before any I/O: the jobs as far as they were reshaped, and the refused ones.
type Refusal = (Vec<JobSpec>, Vec<(usize, RunError)>);

/// The checks before any I/O: the jobs as they will run (read_iolog jobs reshaped by their
/// log) and the objects `--allow-destructive=PATH` names now, or why they cannot.
fn check_jobs(
    jobs: &[JobSpec],
    opts: &RunOptions,
) -> Result<(Vec<JobSpec>, fiox_guard::Allowed), Refusal> {
    // read_iolog jobs take their files, size and direction from the log.
    let reshaped = match replay_jobs(jobs) {
        Ok(v) => v,
        Err(errors) => return Err((jobs.to_vec(), errors)),
    };
    let jobs = &reshaped[..];
    if opts.readonly {
        let refused = files::owned::readonly_refusals(jobs);
        if !refused.is_empty() {
            return Err((reshaped, refused));
        }
    }
    // Jobs using fio features fiox cannot execute (JobSpec::unsupported) never start.
    let unsupported: Vec<(usize, RunError)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(i, j)| {
            j.refusal()
                .into_iter()
                .map(move |m| (i, RunError::Refused(m)))
        })
        .chain(files::pools::unloadable(jobs))
        .collect();
    if !unsupported.is_empty() {
        return Err((reshaped, unsupported));
    }

    // Every job's files before the first group: a later group's refusal does not wait for
    // the earlier groups' runtime.
    let allowed =
        match files::precheck::before_run(jobs, opts.allow_destructive, &opts.allow_targets) {
            Ok(a) => a,
            Err(refused) => return Err((reshaped, refused)),
        };
    if let Err(errors) = replay::iolog::prepare(jobs) {
        return Err((reshaped, errors));
    }
    Ok((reshaped, allowed))
}

/// Run jobs that passed [`check_jobs`].
fn run_checked(
    jobs: &[JobSpec],
    (opts, allowed): (&RunOptions, &fiox_guard::Allowed),
    on_status: &mut (dyn FnMut(&RunResult) + Send),
    sync: Option<&dyn GroupSync>,
    (start_ms, mut warnings): (u64, Vec<fiox_stats::Warning>),
) -> RunOutcome {
    let progress: Vec<Progress> = jobs.iter().map(|_| Progress::default()).collect();
    let mut results: Vec<Option<JobResult>> = vec![None; jobs.len()];
    let mut errors = Vec::new();
    let done = AtomicBool::new(false);
    // This run's stop flag (exitall, or a signal passed on by the helper thread).
    let run_stop = AtomicBool::new(stop_requested());
    let disks = watch_disks(jobs, &mut warnings);
    let flows = control::flow::table(jobs);
    let locks = control::filelock::table(jobs);
    let mut synced = Vec::new();
    let cgroups = job::cgroup::Created::default();
    // gtod_cpu: one thread keeps the time for every job while the run lasts.
    let _gtod = match jobs.iter().find_map(|j| j.cpu.gtod_cpu) {
        Some(cpu) => match io::gtod::start(cpu) {
            Ok((g, warn)) => {
                warnings.extend(warn.map(|m| {
                    fiox_stats::Warning::with_fix(
                        WarningCode::GtodCpu,
                        m,
                        "name a CPU this machine has in gtod_cpu",
                    )
                }));
                Some(g)
            }
            Err(e) => {
                warnings.push(fiox_stats::Warning::with_fix(
                    WarningCode::GtodCpu,
                    format!("gtod_cpu: cannot start the time thread: {e}"),
                    "run without gtod_cpu",
                ));
                None
            }
        },
        None => None,
    };
    // Calibrated before the jobs start, stopped once they are all done (fio's order).
    let idle = match opts.idle_prof.map(observe::idleprof::IdleProf::start) {
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            warnings.push(fiox_stats::Warning::new(
                WarningCode::IdleProf,
                format!("--idle-prof: cannot start its threads: {e}"),
            ));
            None
        }
        None => None,
    };
    std::thread::scope(|s| {
        let eta = s.spawn(|| {
            observe::eta::run_eta(jobs, &progress, opts, &done, &run_stop, start_ms, on_status)
        });
        // With other processes, whether to go on is what they agreed at the last exchange
        // (a stop seen here later reaches them at the next phase's first exchange).
        let mut agreed_stop = false;
        for phase in phases(jobs) {
            let stop = match sync {
                Some(_) => agreed_stop,
                None => run_stop.load(Ordering::Relaxed) || stop_requested(),
            };
            if stop {
                break;
            }
            let ran = run_phase(
                jobs,
                &phase,
                &progress,
                opts,
                &run_stop,
                &mut results,
                &mut errors,
                &flows,
                &locks,
                sync,
                (&cgroups, allowed),
            );
            if let Some((rec, stop)) = ran {
                synced.push(rec);
                agreed_stop = stop;
            }
        }
        done.store(true, Ordering::SeqCst);
        let _ = eta.join();
    });
    // The groups the run created are empty now: every job went back to the root group.
    cgroups.remove_all();
    let idle = idle.map(observe::idleprof::IdleProf::finish);
    let disks = match disks.finish() {
        Ok(d) => d,
        Err(e) => {
            warnings.push(disk_warning(e.to_string()));
            Vec::new()
        }
    };
    // Steady state sections, kept by the status thread on the jobs that hold the data.
    for (r, p) in results.iter_mut().zip(&progress) {
        if let (Some(r), Ok(ss)) = (r.as_mut(), p.steady.lock()) {
            r.steadystate = ss.clone();
        }
    }
    let mut jobs_out = observe::grouprep::apply(results.into_iter().flatten().collect(), jobs);
    // fio's `elapsed`: one value for every job, the started seconds since the run began.
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let elapsed_s = (now_ms as u64).saturating_sub(start_ms).div_ceil(1000);
    jobs_out.iter_mut().for_each(|j| j.elapsed_s = elapsed_s);
    let (kb, unit) = jobs
        .first()
        .map(|j| (j.kb_base, j.unit_base))
        .unwrap_or((1024, 0));
    let groups = fiox_stats::group_results(&jobs_out, kb, unit);
    RunOutcome {
        result: RunResult {
            jobs: jobs_out,
            groups,
            disks,
            global_options: opts.global_options.clone(),
            start_unix_ms: start_ms,
            warnings,
            idle,
        },
        errors,
        interrupted: interrupted(),
        phases: synced,
    }
}

/// `--merge-blktrace-only`: write every job's `merge_blktrace_file` (each once) and run
/// nothing, as fio; one "job 'NAME': why" line per merge that failed.
pub fn merge_blktraces(jobs: &[JobSpec]) -> Result<(), Vec<String>> {
    let mut done = Vec::new();
    let errors: Vec<String> = jobs
        .iter()
        .filter_map(|j| {
            merged(j, &mut done)
                .err()
                .map(|e| format!("job '{}': {e}", j.name))
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The job with its `merge_blktrace_file` written (once per run: numjobs clones and jobs
/// sharing it merge the same traces) and named as the log it replays.
fn merged(j: &JobSpec, done: &mut Vec<String>) -> Result<JobSpec, String> {
    let mut j = j.clone();
    if let Some(out) = j.replay.merge_file.clone() {
        if !done.contains(&out) {
            replay::blkmerge::merge(&j.replay)?;
            done.push(out.clone());
        }
        j.replay.read_iolog = Some(out);
    }
    Ok(j)
}

/// The jobs, each `read_iolog` job reshaped by its log (merged first with
/// `merge_blktrace_file`); the logs that cannot be read.
fn replay_jobs(jobs: &[JobSpec]) -> Result<Vec<JobSpec>, Vec<(usize, RunError)>> {
    let mut out = Vec::with_capacity(jobs.len());
    let mut errors = Vec::new();
    let mut done = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        if j.replay.read_iolog.is_none() && j.replay.merge_file.is_none() {
            out.push(j.clone());
            continue;
        }
        // merge_blktrace_file without read_iolog is an error here (fio crashes on it).
        let j = &match merged(j, &mut done) {
            Ok(j) => j,
            Err(msg) => {
                errors.push((
                    i,
                    RunError::Job {
                        job: j.name.clone(),
                        msg,
                    },
                ));
                continue;
            }
        };
        match replay::load(j) {
            Ok(r) => out.push(replay::reshape(j, &r)),
            Err(msg) => errors.push((
                i,
                RunError::Job {
                    job: j.name.clone(),
                    msg,
                },
            )),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The outcome of a run refused before any job started: each refused job reports its error
/// (EPERM, as other refusals), the others report nothing done.
fn refused_run(
    jobs: &[JobSpec],
    errors: Vec<(usize, RunError)>,
    opts: &RunOptions,
    start_ms: u64,
) -> RunOutcome {
    let mut results: Vec<JobResult> = jobs
        .iter()
        .map(|j| job::worker::base_result(j, start_ms / 1000))
        .collect();
    for (i, e) in &errors {
        results[*i].error = e.errno();
        results[*i].verror = e.to_string();
    }
    let jobs_out = observe::grouprep::apply(results, jobs);
    let (kb, unit) = jobs
        .first()
        .map(|j| (j.kb_base, j.unit_base))
        .unwrap_or((1024, 0));
    RunOutcome {
        result: RunResult {
            groups: fiox_stats::group_results(&jobs_out, kb, unit),
            jobs: jobs_out,
            disks: Vec::new(),
            global_options: opts.global_options.clone(),
            start_unix_ms: start_ms,
            warnings: Vec::new(),
            idle: None,
        },
        errors: errors.into_iter().map(|(_, e)| e).collect(),
        interrupted: false,
        phases: Vec::new(),
    }
}

/// Watch the disks under every job's files (fio's `Disk stats`); diskless-engine jobs touch none.
fn watch_disks(jobs: &[JobSpec], warnings: &mut Vec<fiox_stats::Warning>) -> DiskStatsSampler {
    let mut d = DiskStatsSampler::new();
    // fio's diskless engines (FIO_DISKLESSIO: null, cpuio, exec, filecreate, net...) have no
    // disks to watch; disk_util=0: that job's disks are not watched (fio's init_disk_util,
    // per job).
    let watched =
        |j: &&JobSpec| j.stats.disk_util && !j.ioengine.has(fiox_job::Engine::is_diskless);
    for j in jobs.iter().filter(watched) {
        for p in files::file_paths(j) {
            if debug::on(debug::DISKUTIL) {
                debug_disk_of(&p);
            }
            match d.add_path(&p) {
                Err(e) => warnings.push(disk_warning(format!("{}: {e}", p.display()))),
                Ok(true) => {
                    if let Some(name) = d.names().last() {
                        dprint!(debug::DISKUTIL, "add {name} to list");
                    }
                }
                Ok(false) => {}
            }
        }
    }
    d
}

/// fio's `--debug=diskutil` line naming the device numbers of a job's file (its directory's
/// when the file does not exist yet; device 0:N for tmpfs and other disk-less file systems).
#[cold]
fn debug_disk_of(path: &std::path::Path) {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(path).or_else(|_| {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        std::fs::metadata(dir.unwrap_or(std::path::Path::new(".")))
    });
    if let Ok(md) = md {
        let dev = if md.file_type().is_block_device() {
            md.rdev()
        } else {
            md.dev()
        };
        let (major, minor) = fiox_stats::disk::dev_major_minor(dev);
        dprint!(
            debug::DISKUTIL,
            "{} belongs to maj/min {major}/{minor}",
            path.display()
        );
    }
}

fn disk_warning(msg: String) -> fiox_stats::Warning {
    fiox_stats::Warning::new(
        WarningCode::DiskStats,
        format!("disk statistics are unavailable: {msg}"),
    )
}

#[cfg(test)]
mod scripted_tests;
#[cfg(test)]
mod tests;
