//! Running an experiment: make the variants' testbeds (owned by this process, so `fiox
//! testbed cleanup` removes them after a kill -9), run the fiox binary once per planned run in
//! the planned order with telemetry sampled around it, write each run's fio-shaped JSON (with
//! `fiox.telemetry`, `fiox.env` and `fiox.experiment` added) and the manifest after every run,
//! so an interrupted experiment resumes where it stopped; then add rounds while the adaptive
//! stop asks for them, and remove the testbeds (also after Ctrl-C).

use crate::config::{apply_overrides, plan, testbed_pairs, Experiment, Planned, Variant};
use crate::definition::{pins_randseed, run_seed, Definition, SEED_VAR};
use crate::{env, telemetry};
use fiox_testbed::managed;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Errors of an experiment run.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("variant {variant}: testbed: {source}")]
    Testbed {
        variant: String,
        #[source]
        source: fiox_testbed::TestbedError,
    },
    /// The guard refused or failed a write or removal in the results directory.
    #[error(transparent)]
    Guard(#[from] fiox_guard::GuardError),
    #[error("{0}")]
    Other(String),
}

/// Write an output of the experiment (a job file, a result, a CSV, the manifest): new, or
/// replacing only fiox's own (see fiox_guard::output).
fn write_output(path: &Path, bytes: &[u8]) -> Result<(), ExperimentError> {
    use fiox_guard::output::{self, Named};
    Ok(output::write(path, bytes, Named::ByFiox)?)
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ExperimentError + '_ {
    move |source| ExperimentError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// How to run an experiment (command-line overrides included).
pub struct Options<'a> {
    pub file: PathBuf,
    pub out: Option<PathBuf>,
    pub repeat: Option<u32>,
    pub runtime: Option<String>,
    pub variant: Option<String>,
    /// The fiox binary that runs the jobs.
    pub fiox_exe: PathBuf,
    pub version: String,
    pub commit: String,
    pub command_line: Vec<String>,
    /// Polled between runs and while one runs (Ctrl-C).
    pub interrupted: &'a dyn Fn() -> bool,
}

/// What a finished (or interrupted) experiment did.
#[derive(Debug)]
pub struct Outcome {
    pub out: PathBuf,
    pub runs_done: usize,
    /// Runs that failed: not recorded (a resume re-runs them), the experiment went on.
    pub runs_failed: usize,
    pub interrupted: bool,
}

/// How one run ended.
enum Ran {
    Recorded,
    /// Stopped by a signal before it finished: nothing recorded.
    Interrupted,
    /// The run failed; why (its status and messages). Not recorded.
    Failed(String),
}

/// Runs of one variant that may fail in a row before the experiment stops: one failure (a
/// guest that panicked in early boot under TCG, a device that hiccupped) should not cost the
/// other runs, but a variant that fails every time is not worth the rest of the plan.
const FAILURES_IN_A_ROW: usize = 3;

/// A variant ready to run: its job file and environment.
struct Ready {
    name: String,
    job_file: PathBuf,
    env: BTreeMap<String, String>,
    target: Option<PathBuf>,
    /// The job takes its `randseed` from the run's seed (false: the job pins its own).
    seeded: bool,
    /// The target is a block device of a testbed this experiment made: its runs may write to
    /// it (the data there is the experiment's own scratch, which fiox's safety check cannot
    /// know: it sees a loop device over a file some other process created).
    own_device: bool,
    /// The testbed this experiment made for the variant: re-proven before and after each run
    /// (a loop device detached and reused mid-experiment is not written, nor recorded).
    testbed: Option<managed::Record>,
    /// `explain = ...`: the runs trace their jobs (`--explain[=MODE]`, the argument).
    explain: Option<String>,
    fiox_env: Value,
    /// `--machine-memory`/`--machine-cpus` for the run's fiox (machine limits).
    machine_args: Vec<String>,
    /// `--vm=...` for the run's fiox: each run in a fresh guest, on its /dev/vda (the run's
    /// own fiox.env, the guest's, is kept; its telemetry goes to fiox.guest_telemetry).
    vm: Option<String>,
    /// The experiment's telemetry interval in ms (0: off), for the guest fiox's own.
    telemetry_ms: u64,
}

/// Testbeds this run made; removed on drop (normal end, error, Ctrl-C).
struct Testbeds(Vec<String>);

impl Drop for Testbeds {
    fn drop(&mut self) {
        for n in self.0.drain(..).rev() {
            if let Err(e) = managed::down(&n) {
                fiox_guard::eprintln!(
                    "fiox: removing testbed {n}: {e} (`fiox testbed cleanup` retries)"
                );
            }
        }
    }
}

/// Run the experiment.
pub fn run(o: &Options) -> Result<Outcome, ExperimentError> {
    let (exp, jobs) = Experiment::load(&o.file)?;
    let stem = o
        .file
        .file_stem()
        .map_or("experiment".into(), |s| s.to_string_lossy().into_owned());
    let out = o
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{stem}-results")));
    fiox_guard::Dir::create_all(&out.join("runs"), 0o755)?;
    // One experiment at a time per results directory: a second one would consume the first
    // one's partial results and measure while it runs.
    let lock_path = out.join(".fiox-experiment.lock");
    let _lock = fiox_guard::output::try_lock(&lock_path)?.ok_or_else(|| {
        ExperimentError::Other(format!(
            "{} is in use by another fiox experiment (it holds {}); wait for it or use \
             another --out",
            out.display(),
            lock_path.display()
        ))
    })?;
    // Runs start in the results directory; every path handed to them must be absolute.
    let out = out.canonicalize().map_err(io_err(&out))?;
    let mut manifest = Manifest::open(&out, exp.name.as_deref().unwrap_or(&stem), &o.file)?;
    let chosen = select(&exp, o.variant.as_deref())?;
    for v in &chosen {
        let def = Definition::of(&exp, &jobs, v, o.runtime.as_deref());
        manifest.check_definition(&v.name, &def)?;
    }
    for v in &exp.variants {
        manifest.add_variant(&v.name);
    }
    manifest.save()?;
    let mut beds = Testbeds(Vec::new());
    let mut ready = Vec::new();
    for v in &chosen {
        ready.push(prepare(&exp, &jobs, v, o, &out, &mut beds)?);
    }
    let names: Vec<String> = ready.iter().map(|r| r.name.clone()).collect();
    let reps = o.repeat.unwrap_or(exp.repetitions);
    let seed = names.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, n| {
        n.bytes()
            .fold(h, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
    });
    manifest.order = json!({"order": exp.order, "seed": seed});
    for v in exp.variants.iter() {
        if let Some(b) = &v.baseline {
            manifest.baselines.insert(v.name.clone(), json!(b));
        }
    }
    manifest.save()?;
    check_jobs(&ready, o, &out)?;
    let mut rounds = exp.warmup + reps;
    let mut todo = plan(&exp, &names, 0, rounds, seed);
    let (mut done, mut failed) = (0, 0);
    let mut in_a_row: std::collections::HashMap<String, usize> = Default::default();
    loop {
        todo.retain(|p| !manifest.has(p));
        let total = todo.len();
        let started = Instant::now();
        for (i, p) in todo.iter().enumerate() {
            if (o.interrupted)() {
                break;
            }
            // The plan is made from `ready`'s names.
            let Some(r) = ready.iter().find(|r| r.name == p.variant) else {
                continue;
            };
            progress(i, total, p, started);
            if exp.drop_caches {
                drop_caches()?;
            }
            match run_one(&exp, r, p, o, &out, &mut manifest)? {
                Ran::Recorded => {
                    done += 1;
                    in_a_row.remove(&p.variant);
                }
                Ran::Interrupted => {}
                Ran::Failed(why) => {
                    failed += 1;
                    let n = in_a_row.entry(p.variant.clone()).or_default();
                    *n += 1;
                    if *n >= FAILURES_IN_A_ROW {
                        return Err(ExperimentError::Other(format!(
                            "variant {}: {n} runs in a row failed, no further run is made; \
                             the last: {why}",
                            p.variant
                        )));
                    }
                    fiox_guard::eprintln!(
                        "fiox: {why}\nfiox: this run is not recorded and the experiment goes \
                         on (running the same command again re-runs it)"
                    );
                }
            }
        }
        if (o.interrupted)() {
            break;
        }
        let Some(s) = &exp.stop else { break };
        let widths = crate::stop::widths(&out, &names, s).map_err(ExperimentError::Other)?;
        if crate::stop::reached(&widths, s.ci) {
            break;
        }
        if rounds - exp.warmup >= s.max_runs {
            fiox_guard::eprintln!("fiox: {}", crate::stop::gave_up(s, &widths));
            break;
        }
        todo = plan(&exp, &names, rounds, rounds + 1, seed);
        rounds += 1;
    }
    drop(beds);
    Ok(Outcome {
        out,
        runs_done: done,
        runs_failed: failed,
        interrupted: (o.interrupted)(),
    })
}

/// Every variant's job file parsed and checked (`fiox --parse-only`, with the variant's
/// environment) before the first run, so that a bad option of the last variant is not found
/// after the others ran.
fn check_jobs(ready: &[Ready], o: &Options, out: &Path) -> Result<(), ExperimentError> {
    for r in ready {
        let res = Command::new(&o.fiox_exe)
            .arg("--parse-only")
            .arg(&r.job_file)
            .envs(&r.env)
            .env(SEED_VAR, "1")
            .current_dir(out)
            .stdin(Stdio::null())
            .output()
            .map_err(io_err(&o.fiox_exe))?;
        if !res.status.success() {
            return Err(ExperimentError::Other(format!(
                "variant {}: its job file {} is refused before any run:\n{}",
                r.name,
                r.job_file.display(),
                String::from_utf8_lossy(&res.stderr).trim_end()
            )));
        }
    }
    Ok(())
}

/// The variants to run: all, or the one `--variant` names.
fn select<'a>(
    exp: &'a Experiment,
    only: Option<&str>,
) -> Result<Vec<&'a Variant>, ExperimentError> {
    let Some(v) = only else {
        return Ok(exp.variants.iter().collect());
    };
    let found: Vec<&Variant> = exp.variants.iter().filter(|x| x.name == v).collect();
    if found.is_empty() {
        let names: Vec<&str> = exp.variants.iter().map(|x| x.name.as_str()).collect();
        return Err(ExperimentError::Other(format!(
            "--variant {v}: no such variant; the file has {}",
            names.join(", ")
        )));
    }
    Ok(found)
}

fn progress(i: usize, total: usize, p: &Planned, started: Instant) {
    let el = started.elapsed().as_secs_f64();
    let left = if i > 0 {
        el / i as f64 * (total - i) as f64
    } else {
        f64::NAN
    };
    let left = if left.is_finite() {
        format!(", ~{left:.0}s left")
    } else {
        String::new()
    };
    fiox_guard::eprintln!(
        "fiox: run {}/{total}: {} #{}{} ({el:.0}s elapsed{left})",
        i + 1,
        p.variant,
        p.index,
        if p.warmup { " (warm-up)" } else { "" }
    );
}

/// Make the variant's testbed (if any) and write its job file.
fn prepare(
    exp: &Experiment,
    jobs: &str,
    v: &Variant,
    o: &Options,
    out: &Path,
    beds: &mut Testbeds,
) -> Result<Ready, ExperimentError> {
    let tb_err = |source| ExperimentError::Testbed {
        variant: v.name.clone(),
        source,
    };
    let made = v.testbed.is_some();
    let vm = exp.vm_of(v);
    // In a guest: its disk, or the directory of its loop stack (guest_loop).
    let mut guest = None;
    if let Some(text) = &vm {
        // Refused here, before any run: no QEMU, no kernel, not root.
        let (spec, kernel) = fiox_testbed::vm::VmSpec::parse(text)
            .and_then(|s| fiox_testbed::vm::check(&s).map(|k| (s, k)))
            .map_err(|e| ExperimentError::Other(format!("variant {}: vm: {e}", v.name)))?;
        let (key, path) = spec.guest_target();
        // The kernel by name (issue 45): an -rt kernel installed later silently became the
        // default once, and the variant lines did not say which kernel ran.
        fiox_guard::eprintln!(
            "fiox: variant {}: each run in a QEMU guest, kernel {} ({}; {text}), {key}={path} \
             there",
            v.name,
            kernel.release,
            kernel.image.display()
        );
        guest = Some((key, path));
    }
    let mut testbed = None;
    let target = if let Some((_, t)) = guest {
        Some(PathBuf::from(t))
    } else if let Some(t) = &v.testbed {
        let (kind, pairs) = testbed_pairs(t)
            .map_err(|w| ExperimentError::Other(format!("variant {}: {w}", v.name)))?;
        let mut spec = managed::Spec::from_pairs(&kind, &pairs).map_err(tb_err)?;
        spec.server = Some(o.fiox_exe.clone());
        let name = format!("exp{}-{}", std::process::id(), v.name);
        let rec = managed::up(&spec, Some(&name), false).map_err(tb_err)?;
        beds.0.push(rec.name.clone());
        fiox_guard::eprintln!(
            "fiox: variant {}: testbed {} at {}",
            v.name,
            rec.name,
            rec.target.display()
        );
        let target = rec.target.clone();
        testbed = Some(rec);
        Some(target)
    } else {
        v.target.clone()
    };
    let mut lines: Vec<String> = exp
        .options
        .iter()
        .filter(|(k, _)| !v.options.contains_key(*k))
        .chain(&v.options)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if let Some(rt) = &o.runtime {
        lines.push(format!("runtime={rt}"));
    }
    // Each repetition its own seed for offsets and pacing, unless the job pins one.
    let seeded = !pins_randseed(exp, jobs, v);
    if seeded {
        lines.push(format!("randseed=${{{SEED_VAR}}}"));
    } else {
        fiox_guard::eprintln!(
            "fiox: variant {}: the job pins randseed: every repetition replays the same random \
             offsets and pacing",
            v.name
        );
    }
    if let Some(t) = target.as_ref().filter(|_| !jobs.contains("${TARGET}")) {
        let key = match guest {
            Some((key, _)) => key,
            None if t.is_dir() => "directory",
            None => "filename",
        };
        lines.push(format!("{key}={}", t.display()));
    }
    let job_file = out.join(format!("{}.fio", v.name));
    write_output(&job_file, apply_overrides(jobs, &lines).as_bytes())?;
    let mut envs = exp.env.clone();
    envs.extend(v.env.clone());
    if let Some(t) = &target {
        envs.insert("TARGET".into(), t.display().to_string());
    }
    // A guest's disk is no host path (the host's own /dev/vda may be its root disk).
    let targets: Vec<&Path> = target
        .iter()
        .filter(|_| vm.is_none())
        .map(PathBuf::as_path)
        .collect();
    let fiox_env = env::collect(&targets, (&o.version, &o.commit), &o.command_line);
    let machine = exp.machine_of(v);
    if !machine.text().is_empty() {
        // Refused here, before any run, rather than by every run's fiox.
        fiox_testbed::machine::Limits::parse(
            machine.memory.as_deref(),
            machine.cpus.map(|c| c.to_string()).as_deref(),
        )
        .and_then(|l| fiox_testbed::machine::Machine::check(&l))
        .map_err(|e| ExperimentError::Other(format!("variant {}: machine: {e}", v.name)))?;
        fiox_guard::eprintln!(
            "fiox: variant {}: runs under machine limits: {}",
            v.name,
            machine.text()
        );
    }
    Ok(Ready {
        vm,
        telemetry_ms: exp.telemetry_ms,
        machine_args: machine.args(),
        name: v.name.clone(),
        job_file,
        env: envs,
        seeded,
        own_device: made && target.as_ref().is_some_and(|t| !t.is_dir()),
        testbed,
        target,
        explain: exp.explain.arg(),
        fiox_env,
    })
}

/// Run one planned run; false when it was interrupted (not recorded).
fn run_one(
    exp: &Experiment,
    r: &Ready,
    p: &Planned,
    o: &Options,
    out: &Path,
    manifest: &mut Manifest,
) -> Result<Ran, ExperimentError> {
    let rel = format!(
        "runs/{}-{:03}{}.json",
        p.variant,
        p.index,
        if p.warmup { "-warmup" } else { "" }
    );
    let file = out.join(&rel);
    let tmp = file.with_extension("partial");
    let errlog = file.with_extension("stderr");
    // Made here as fiox's output (a user's file or a link at that name is refused), so the
    // run's --output reopens this very file.
    drop(fiox_guard::output::open(
        &tmp,
        fiox_guard::Open::Truncate,
        fiox_guard::Named::ByFiox,
    )?);
    let devices = r
        .target
        .as_deref()
        .filter(|_| r.vm.is_none())
        .map(telemetry::devices_for)
        .unwrap_or_default();
    let sampler = (exp.telemetry_ms > 0)
        .then(|| telemetry::Sampler::start(devices, Duration::from_millis(exp.telemetry_ms)));
    let seed = r.seeded.then(|| run_seed(&manifest.name, p));
    prove_testbed(r, &rel)?;
    let t0 = Instant::now();
    let Some(status) = spawn_and_wait(r, seed, o, out, &tmp, &errlog)? else {
        return Ok(Ran::Interrupted);
    };
    // Changed during the run: what it measured was not the testbed, and is not recorded.
    if let Err(e) = prove_testbed(r, &rel) {
        let _ = fiox_guard::output::remove(&tmp);
        return Err(e);
    }
    let seconds = t0.elapsed().as_secs_f64();
    let tele = sampler.map(telemetry::Sampler::finish);
    if !status.success() {
        let why = std::fs::read_to_string(&errlog).unwrap_or_default();
        use std::os::unix::process::ExitStatusExt;
        let oom = if status.signal() == Some(libc_sigkill())
            && r.machine_args
                .iter()
                .any(|a| a.starts_with("--machine-memory"))
        {
            "; killed under a machine memory limit: most likely by the OOM killer (memory that \
             cannot be reclaimed, the job's buffers or files on tmpfs/ramfs, must fit in the \
             limit; raise machine memory or put the files on a disk)"
        } else {
            ""
        };
        // The partial output goes; the messages stay beside the results.
        let _ = fiox_guard::output::remove(&tmp);
        return Ok(Ran::Failed(format!(
            "run {rel} failed ({status}{oom}); its messages ({}):\n{}",
            errlog.display(),
            why.trim_end()
        )));
    }
    write_result(&tmp, &file, tele, r, p, seed)?;
    let _ = fiox_guard::output::remove(&tmp);
    if std::fs::metadata(&errlog).is_ok_and(|m| m.len() == 0) {
        let _ = fiox_guard::output::remove(&errlog);
    }
    manifest.record(p, &rel, seconds, seed)?;
    Ok(Ran::Recorded)
}

/// Stop the experiment when the variant's testbed is no longer what it made (see
/// [`managed::prove`]): its runs would write someone else's device and record it as valid.
fn prove_testbed(r: &Ready, rel: &str) -> Result<(), ExperimentError> {
    match r.testbed.as_ref().map(managed::prove) {
        Some(Err(why)) => Err(ExperimentError::Other(format!(
            "variant {}: run {rel}: stopped, the testbed changed: {why}; this run is not \
             recorded and no further run is made",
            r.name
        ))),
        _ => Ok(()),
    }
}

/// SIGKILL's number (the OOM killer's signal), without a libc dependency for one constant.
fn libc_sigkill() -> i32 {
    9
}

/// Run the fiox binary on the variant's job file with JSON output to `tmp`; `None` when a
/// signal interrupted it (it is asked to stop as Ctrl-C would, so it removes its own files).
fn spawn_and_wait(
    r: &Ready,
    seed: Option<u64>,
    o: &Options,
    out: &Path,
    tmp: &Path,
    errlog: &Path,
) -> Result<Option<std::process::ExitStatus>, ExperimentError> {
    let mut cmd = Command::new(&o.fiox_exe);
    // The experiment records its runs in the history itself (with experiment and variant):
    // a FIOX_HISTORY=1 in the environment must not record each run a second time.
    cmd.env_remove("FIOX_HISTORY");
    if let Some(t) = r.target.as_ref().filter(|_| r.own_device) {
        // Exactly the testbed's own device may be written, nothing else the job names.
        cmd.arg(format!("--allow-destructive={}", t.display()));
    }
    if let Some(a) = &r.explain {
        cmd.arg(a);
    }
    if let Some(vm) = &r.vm {
        cmd.arg(format!("--vm={vm}"));
        // The guest's own telemetry (its memory, CPU and /dev/vda), beside the host's.
        if r.telemetry_ms > 0 {
            cmd.arg(format!("--telemetry={}", r.telemetry_ms));
        }
    }
    let mut child = cmd
        .args(&r.machine_args)
        // json+: the latency histograms, so compare can merge them over runs.
        .arg("--output-format=json+")
        .arg(format!("--output={}", tmp.display()))
        .arg(&r.job_file)
        .envs(&r.env)
        .envs(seed.map(|s| (SEED_VAR, s.to_string())))
        .current_dir(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fiox_guard::output::open(
            errlog,
            fiox_guard::Open::Truncate,
            fiox_guard::Named::ByFiox,
        )?)
        .spawn()
        .map_err(io_err(&o.fiox_exe))?;
    loop {
        if let Some(s) = child.try_wait().map_err(io_err(&o.fiox_exe))? {
            return Ok(Some(s));
        }
        if (o.interrupted)() {
            let _ = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run's JSON from `tmp` with `fiox.telemetry` (its series also as a CSV log beside it),
/// `fiox.env` and `fiox.experiment` added, written to `file`.
fn write_result(
    tmp: &Path,
    file: &Path,
    tele: Option<Value>,
    r: &Ready,
    p: &Planned,
    seed: Option<u64>,
) -> Result<(), ExperimentError> {
    let text = std::fs::read_to_string(tmp).map_err(io_err(tmp))?;
    let mut doc: Value = serde_json::from_str(&text)
        .map_err(|e| ExperimentError::Other(format!("{}: not JSON: {e}", tmp.display())))?;
    let fiox = &mut doc["fiox"];
    if !fiox.is_object() {
        *fiox = json!({});
    }
    if r.vm.is_some() {
        // The guest fiox's telemetry is the guest's; fiox.telemetry stays the host's.
        if let Some(t) = fiox.as_object_mut().and_then(|m| m.remove("telemetry")) {
            fiox["guest_telemetry"] = t;
        }
    }
    if let Some(t) = tele {
        let log = file.with_extension("telemetry.csv");
        write_output(&log, telemetry::series_csv(&t).as_bytes())?;
        fiox["telemetry"] = t;
    }
    // The loop devices' backing files' page cache after the run: as the run's own fiox
    // measured it when its jobs ended, else measured now (before the next run).
    let backing = match (&r.vm, fiox["backing_cache"].as_array()) {
        (Some(_), _) => Vec::new(),
        (None, Some(measured)) => measured.clone(),
        (None, None) => env::backing_cache(&r.fiox_env),
    };
    if !backing.is_empty() {
        let kb: u64 = backing
            .iter()
            .filter_map(|b| b["cached_bytes"].as_u64())
            .sum::<u64>()
            / 1024;
        if let Some(sum) = fiox["telemetry"]["summary"].as_object_mut() {
            sum.insert("loop_backing_cached_kb".into(), json!(kb));
        }
        fiox["backing_cache"] = json!(backing);
    }
    // The run's own fiox knows what its machine limits saw; the rest of env is the
    // experiment's description of the variant.
    let mut limits = fiox["env"].get("limits").cloned();
    if let Some(l) = limits.as_mut() {
        env::check_limits(l, &backing, fiox.get("telemetry"));
    }
    if r.vm.is_some() && fiox["env"].is_object() {
        // The run's own env is the guest's (its kernel, its targets, fiox.env.vm); the
        // experiment's description of this host goes beside it.
        fiox["env"]["host"] = r.fiox_env.clone();
    } else {
        fiox["env"] = r.fiox_env.clone();
    }
    if let (Some(l), Some(e)) = (limits, fiox["env"].as_object_mut()) {
        e.insert("limits".into(), l);
    }
    fiox["experiment"] = json!({"variant": p.variant, "index": p.index, "position": p.position,
                                "warmup": p.warmup, "seed": seed});
    let pretty = serde_json::to_string_pretty(&doc).unwrap_or_default();
    write_output(file, (pretty + "\n").as_bytes())
}

/// sync, then drop the page cache, dentries and inodes.
fn drop_caches() -> Result<(), ExperimentError> {
    let _ = Command::new("sync").status();
    let p = Path::new("/proc/sys/vm/drop_caches");
    fiox_guard::kernel::write_knob(p, b"3\n", fiox_guard::kernel::KernelFs::Proc).map_err(|e| {
        ExperimentError::Other(format!(
            "drop_caches = true needs root: writing {}: {e}; set drop_caches = false",
            p.display()
        ))
    })
}

/// manifest.json: the variants and the finished runs.
struct Manifest {
    path: PathBuf,
    name: String,
    file: PathBuf,
    variants: Vec<String>,
    runs: Vec<Value>,
    /// Variant -> its definition when its runs were made (see `definition`).
    definitions: Map<String, Value>,
    /// How runs were ordered within rounds and the seed of the shuffle.
    order: Value,
    /// Variant -> the variant it is compared against (`baseline =`).
    baselines: Map<String, Value>,
}

impl Manifest {
    fn open(out: &Path, name: &str, file: &Path) -> Result<Manifest, ExperimentError> {
        let path = out.join("manifest.json");
        let mut m = Manifest {
            path: path.clone(),
            name: name.to_string(),
            file: file.to_path_buf(),
            variants: Vec::new(),
            runs: Vec::new(),
            definitions: Map::new(),
            order: Value::Null,
            baselines: Map::new(),
        };
        if let Ok(text) = std::fs::read_to_string(&path) {
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| ExperimentError::Other(format!("{}: {e}", path.display())))?;
            if v["name"] != name {
                return Err(ExperimentError::Other(format!(
                    "{} belongs to experiment {}; use another --out",
                    path.display(),
                    v["name"]
                )));
            }
            m.variants = v["variants"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(String::from))
                .collect();
            m.runs = v["runs"].as_array().cloned().unwrap_or_default();
            m.definitions = v["definitions"].as_object().cloned().unwrap_or_default();
            if !m.runs.is_empty() {
                fiox_guard::eprintln!(
                    "fiox: resuming: {} run(s) already in {}",
                    m.runs.len(),
                    out.display()
                );
            }
        }
        Ok(m)
    }

    /// Record `def` for `variant`, or refuse when its runs here were made with another one.
    fn check_definition(&mut self, variant: &str, def: &Definition) -> Result<(), ExperimentError> {
        let has_runs = self.runs.iter().any(|r| r["variant"] == variant);
        match self.definitions.get(variant) {
            Some(old) if has_runs && old["hash"] != def.hash().as_str() => {
                Err(ExperimentError::Other(format!(
                    "{}: variant {variant} changed since its runs there ({}): new runs would \
                     be pooled with runs of another set-up; use another --out, or put the \
                     definition back",
                    self.path.display(),
                    def.changes_from(old).join("; ")
                )))
            }
            _ => {
                self.definitions.insert(variant.to_string(), def.to_json());
                Ok(())
            }
        }
    }

    fn add_variant(&mut self, v: &str) {
        if !self.variants.iter().any(|x| x == v) {
            self.variants.push(v.to_string());
        }
    }

    fn has(&self, p: &Planned) -> bool {
        self.runs.iter().any(|r| {
            r["variant"] == p.variant.as_str() && r["index"] == p.index && r["status"] == "done"
        })
    }

    fn record(
        &mut self,
        p: &Planned,
        file: &str,
        seconds: f64,
        seed: Option<u64>,
    ) -> Result<(), ExperimentError> {
        self.runs.push(json!({
            "variant": p.variant, "index": p.index, "position": p.position,
            "warmup": p.warmup, "file": file, "status": "done", "seconds": seconds, "seed": seed,
        }));
        self.save()
    }

    fn save(&self) -> Result<(), ExperimentError> {
        let v = json!({
            "name": self.name,
            "experiment_file": self.file.display().to_string(),
            "variants": self.variants,
            "definitions": self.definitions,
            "order": self.order,
            "baselines": self.baselines,
            "runs": self.runs,
        });
        // Replaced atomically (a temporary name and renameat, by the guard).
        write_output(
            &self.path,
            (serde_json::to_string_pretty(&v).unwrap_or_default() + "\n").as_bytes(),
        )
    }
}
