//! The command line in fio's form: `fiox [switches] [--option=value ...] [jobfile ...]`.
//! Switches set [`RunSettings`] or pick an action; every other `--name[=value]` is a job
//! option: before the first `--name=` it is global, after it belongs to that job
//! (`--name=global` starts more global options). Anything else is a job file (`-` = stdin).
//! A single dash works as two, as in fio (`-name=t`, `-w`: see `getopt.rs`).

use crate::defs;
use crate::error::{JobError, Location};
use crate::jobfile::{RawOpt, Section, SubstEnv};
use crate::resolve::find_def;
use crate::{suggest, EtaMode, IdleProfMode, OutputFormat, RunSettings};
// Defined with the run settings that hold it; named here too, where it is parsed.
pub use crate::spec::UnsupportedSwitch;

/// What the command line asks for before any job is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Early {
    Help,
    Version,
    /// `--cmdhelp[=option]` (empty = all).
    CmdHelp(String),
    /// `--enghelp[=engine[,option]]` (empty = list engines).
    EngHelp(String),
    /// `--inflate-log=FILE`: print a compressed log (`log_store_compressed`) as text.
    InflateLog(String),
    /// `--idle-prof=calibrate`: measure the idle profiler's unit of work, print it, exit.
    IdleCalibrate,
    /// `--debug=?`: list fio's debug categories and exit.
    DebugList,
    /// `--cmdhelp[=option]` after `--profile=NAME`: the profile's options (fio's order
    /// matters: `--cmdhelp` before `--profile` shows the job options).
    ProfileHelp(String, String),
    /// `--crctest[=names]`: time fio's checksum functions (None: all of them).
    CrcTest(Option<String>),
    /// `--memcpytest[=names]`: time fio's memory copy methods (None: all of them).
    MemcpyTest(Option<String>),
    /// `--cpuclock-test`: check that the CPU clock only moves forward across CPUs.
    CpuClockTest,
}

/// The command line split into its parts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CmdLine {
    pub settings: RunSettings,
    pub early: Option<Early>,
    /// Sections from `--option` arguments (file_index 0).
    pub sections: Vec<Section>,
    pub job_files: Vec<String>,
    /// `--profile=NAME`: a fio profile to expand after all other jobs.
    pub profile: Option<String>,
    /// The profile's options, taken from the command line's global options.
    pub profile_opts: Vec<RawOpt>,
}

/// Switches fiox implements (for did-you-mean).
pub(crate) const SWITCHES: &[&str] = &[
    "parse-only",
    "showcmd",
    "section",
    "output",
    "output-format",
    "eta",
    "status-interval",
    "minimal",
    "readonly",
    "version",
    "help",
    "cmdhelp",
    "enghelp",
    "max-jobs",
    "allow-destructive",
    "bandwidth-log",
    "latency-log",
    "telemetry",
    "machine-memory",
    "machine-cpus",
    "vm",
    "explain",
    "html",
    "history",
    "warnings",
    "warnings-fatal",
    "inflate-log",
    "terse-version",
    "append-terse",
    "eta-newline",
    "eta-interval",
    "alloc-size",
    "aux-path",
    "trigger-file",
    "trigger-timeout",
    "trigger",
    "idle-prof",
    "debug",
    "merge-blktrace-only",
    "profile",
    "crctest",
    "memcpytest",
    "cpuclock-test",
];

/// fio switches fiox parses but does not implement yet, each with the reason. They are
/// recorded in [`RunSettings::unsupported_switches`]: `--parse-only` names them and exits 1,
/// a run is refused before any I/O. fio's `--exitall_on_error` is not here: it is also a job
/// option, and parses as such, so `--showcmd` output that carries it parses again.
const FIO_SWITCHES: &[(&str, &str)] = &[
    (
        "server-internal",
        "fiox's server has no internal mode (run `fiox --server`)",
    ),
    ("daemonize", "--daemonize=PIDFILE goes with --server"),
    (
        "remote-config",
        "--remote-config=FILE goes after the --client whose server holds FILE",
    ),
    (
        "trigger-remote",
        "fiox's client has no --trigger-remote yet",
    ),
];

/// fio switches without a value (`no_argument` in fio's getopt table); the rest need one.
const FIO_BARE_SWITCHES: &[&str] = &[];

/// fio's `--debug` categories (plus `all`; `?` lists them).
pub const DEBUG_CATEGORIES: &[&str] = &[
    "process",
    "file",
    "io",
    "mem",
    "blktrace",
    "verify",
    "random",
    "parse",
    "diskutil",
    "job",
    "mutex",
    "profile",
    "time",
    "net",
    "rate",
    "compress",
    "steadystate",
    "helperthread",
    "zbd",
    "all",
];

/// fio's `--debug` categories that print nothing in fiox, with the reason: no such event in
/// fiox at all, or (`compress`) lines not written yet (`--debug=?` and turning them on say
/// it).
pub const DEBUG_SILENT: &[(&str, &str)] = &[
    (
        "mutex",
        "fio's start-up semaphores between its processes; fiox's job threads start without them",
    ),
    (
        "profile",
        "fio's built-in profiles, which fiox does not have",
    ),
    (
        "net",
        "fio's --server/--client connections, which fiox does not have",
    ),
    (
        "zbd",
        "zoned block devices (zonemode=zbd), which fiox does not support",
    ),
    (
        "compress",
        "not yet: fiox compresses logs (log_compression) without fio's chunk lines",
    ),
];

/// Check one `--debug` word: a category, `all`, or fio's `job:N` (only job N's lines).
fn check_debug_word(c: &str) -> Result<(), JobError> {
    let err = |msg: String| Err(JobError::new(Location::CommandLine, msg));
    if let Some(n) = c.strip_prefix("job:") {
        return match n.trim().parse::<u32>() {
            Ok(_) => Ok(()),
            Err(_) => err(format!(
                "--debug: '{c}' needs a job number (job:N, N counting the jobs from 0)"
            )),
        };
    }
    if c == "job" {
        // fio says "missing job number" and ignores it; a word that does nothing is refused.
        return err(
            "--debug: 'job' needs a job number: job:N prints only job N's lines (N counting \
             the jobs from 0)"
                .into(),
        );
    }
    if !DEBUG_CATEGORIES.contains(&c) {
        return err(format!(
            "--debug: unknown category '{c}' (use {})",
            DEBUG_CATEGORIES.join(", ")
        ));
    }
    Ok(())
}

/// Check a fio-only switch's value as fio would, then record it.
fn fio_switch(
    s: &mut RunSettings,
    name: &str,
    value: Option<&str>,
    reason: &'static str,
) -> Result<(), JobError> {
    let err = |m: String| JobError::new(Location::CommandLine, m);
    let bare = FIO_BARE_SWITCHES.contains(&name);
    match (bare, value) {
        (true, Some(_)) => return Err(err(format!("switch '--{name}' takes no value"))),
        (false, None) => {
            return Err(err(format!(
                "switch '--{name}' needs a value (--{name}=...)"
            )))
        }
        _ => {}
    }
    s.unsupported_switches.push(UnsupportedSwitch {
        name: name.to_string(),
        value: value.map(str::to_string),
        reason,
    });
    Ok(())
}

/// Parse the arguments (without the program name).
pub fn parse_cmdline(args: &[String], env: &SubstEnv) -> Result<CmdLine, JobError> {
    let mut cl = CmdLine::default();
    let mut current = new_section("global", true);
    let mut i = 0;
    while i < args.len() {
        let mut arg = args[i].clone();
        i += 1;
        if arg == "-" || !arg.starts_with('-') {
            cl.job_files.push(arg);
            continue;
        }
        if !arg.starts_with("--") {
            arg = crate::getopt::long_form(&arg, &is_long_name)?;
        }
        let body = arg.trim_start_matches('-');
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            // fio's switches with a required argument take it as the next word too.
            None if VALUE_SWITCHES.contains(&body) => (body, Some(take_next(args, &mut i, body)?)),
            None => (body, None),
        };
        // `--profile` is fiox's switch before the first `--name=`; inside a job it is the
        // job option fio ignores (and fiox refuses), so `--showcmd` output parses again.
        let job_option = name == "profile" && !current.global;
        if !job_option && switch(&mut cl, name, value.as_deref())? {
            continue;
        }
        option(&mut cl, &mut current, name, value, args, &mut i, env)?;
    }
    cl.sections.push(current);
    take_profile_opts(&mut cl)?;
    cl.sections.retain(|s| !(s.global && s.opts.is_empty()));
    Ok(cl)
}

/// Whether `name` is a long switch or a job option (so `-name` means `--name`, as fio reads it).
fn is_long_name(name: &str) -> bool {
    name.eq_ignore_ascii_case("name")
        || SWITCHES.contains(&name)
        || VALUE_SWITCHES.contains(&name)
        || FIO_SWITCHES.iter().any(|(n, _)| *n == name)
        || defs::lookup(name).is_some()
        || defs::fio_only::lookup(name).is_some()
        || crate::profile::is_profile_option(name)
}

/// Move the profile's options out of the global command-line options (fio parses them
/// wherever they stand; fiox takes them before the first `--name=`, where they cannot be
/// meant for a job). Without `--profile`, an option only a profile has is an error naming it.
fn take_profile_opts(cl: &mut CmdLine) -> Result<(), JobError> {
    let profile = cl.profile.as_deref().and_then(crate::profile::find);
    for sec in &mut cl.sections {
        let mut kept = Vec::new();
        for o in std::mem::take(&mut sec.opts) {
            let mine = profile.is_some_and(|p| p.options.iter().any(|d| d.name == o.name));
            if mine && sec.global {
                cl.profile_opts.push(o);
                continue;
            }
            if crate::profile::is_profile_option(&o.name)
                && defs::lookup(&o.name).is_none()
                && defs::fio_only::lookup(&o.name).is_none()
            {
                let owners = crate::profile::owners(&o.name).join(" or ");
                let why = if mine {
                    "give it before the first --name=".to_string()
                } else {
                    format!("add --profile={owners}")
                };
                return Err(JobError::new(
                    o.loc.clone(),
                    format!("--{} is an option of fio's {owners} profile; {why}", o.name),
                ));
            }
            kept.push(o);
        }
        sec.opts = kept;
    }
    Ok(())
}

fn new_section(name: &str, global: bool) -> Section {
    Section {
        name: name.to_string(),
        global,
        opts: Vec::new(),
        loc: Location::CommandLine,
        source: None,
        file_index: 0,
    }
}

/// A job option (or `--name=` starting a job).
fn option(
    cl: &mut CmdLine,
    current: &mut Section,
    name: &str,
    value: Option<String>,
    args: &[String],
    i: &mut usize,
    env: &SubstEnv,
) -> Result<(), JobError> {
    let loc = Location::CommandLine;
    if name.eq_ignore_ascii_case("name") {
        let v = match value {
            Some(v) => v,
            None => take_next(args, i, name)?,
        };
        if v.trim().is_empty() {
            return Err(JobError::new(loc, "--name needs a job name"));
        }
        let global = v.starts_with("global");
        let prev = std::mem::replace(current, new_section(v.trim(), global));
        cl.sections.push(prev);
        return Ok(());
    }
    let bare_ok = match find_def(name, &loc) {
        Ok(def) => def.kind.allows_bare(),
        // A profile's own option; checked once the profile is known (see take_profile_opts).
        Err(_) if crate::profile::is_profile_option(name) => name == "prep",
        Err(e) => return Err(e),
    };
    let value = match value {
        Some(v) => Some(v),
        None if bare_ok => None,
        None => Some(take_next(args, i, name)?),
    };
    let written = value.clone();
    let value = match value {
        Some(v) => Some(
            crate::jobfile::substitute(&v, env)
                .map_err(|m| JobError::new(loc.clone(), format!("{name}: {m}")))?,
        ),
        None => None,
    };
    current.opts.push(RawOpt {
        name: name.to_string(),
        value,
        written,
        loc,
    });
    Ok(())
}

fn take_next(args: &[String], i: &mut usize, name: &str) -> Result<String, JobError> {
    let v = args.get(*i).cloned().ok_or_else(|| {
        JobError::new(
            Location::CommandLine,
            format!("option '--{name}' needs a value (--{name}=...)"),
        )
    })?;
    *i += 1;
    Ok(v)
}

/// Switches whose value is required, so `--switch value` works as `--switch=value` (fio's
/// getopt table marks them `required_argument`; `--cmdhelp`/`--enghelp` take theirs only
/// after `=`).
pub(crate) const VALUE_SWITCHES: &[&str] = &[
    "section",
    "machine-memory",
    "machine-cpus",
    "vm",
    "output",
    "output-format",
    "eta",
    "status-interval",
    "max-jobs",
    "html",
    "warnings",
    "debug",
    "terse-version",
    "eta-newline",
    "eta-interval",
    "client",
    "server",
    "daemonize",
    "remote-config",
    "trigger-file",
    "trigger-timeout",
    "trigger",
    "trigger-remote",
    "aux-path",
    "idle-prof",
    "inflate-log",
    "alloc-size",
    "profile",
];

/// Handle a switch; Ok(false) if `name` is not a switch.
fn switch(cl: &mut CmdLine, name: &str, value: Option<&str>) -> Result<bool, JobError> {
    let s = &mut cl.settings;
    let need = |v: Option<&str>| -> Result<String, JobError> {
        v.map(str::to_string).ok_or_else(|| {
            JobError::new(
                Location::CommandLine,
                format!("switch '--{name}' needs a value (--{name}=...)"),
            )
        })
    };
    match name {
        "parse-only" => s.parse_only = true,
        "merge-blktrace-only" => s.merge_blktrace_only = true,
        "showcmd" => s.showcmd = true,
        "section" => s.sections.push(need(value)?),
        "output" => s.output = Some(need(value)?),
        "html" => s.html = Some(need(value)?),
        "history" => {
            s.history = true;
            s.history_db = value.map(String::from);
        }
        "output-format" => s.output_formats = parse_formats(&need(value)?)?,
        "minimal" => s.output_formats = vec![OutputFormat::Terse],
        "eta" => s.eta = parse_eta(&need(value)?)?,
        "status-interval" => {
            let us = crate::value::parse_time_us(&need(value)?, 1_000_000).map_err(|m| {
                JobError::new(Location::CommandLine, format!("--status-interval: {m}"))
            })?;
            s.status_interval = (us > 0).then(|| std::time::Duration::from_micros(us));
        }
        "readonly" => s.readonly = true,
        "bandwidth-log" | "latency-log" if value.is_some() => {
            return Err(JobError::new(
                Location::CommandLine,
                format!("switch '--{name}' takes no value"),
            ))
        }
        "bandwidth-log" => s.bandwidth_log = true,
        "latency-log" => s.latency_log = true,
        "explain" => {
            s.explain = true;
            if let Some(v) = value {
                s.explain_mode = crate::spec::ExplainMode::parse(v)
                    .map_err(|m| JobError::new(Location::CommandLine, format!("--explain={m}")))?;
            }
        }
        "telemetry" => {
            let ms = match value {
                None => 1000,
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&ms| ms > 0)
                    .ok_or_else(|| {
                        JobError::new(
                            Location::CommandLine,
                            format!(
                            "--telemetry={v}: expected a sampling interval in milliseconds above 0"
                        ),
                        )
                    })?,
            };
            s.telemetry = Some(std::time::Duration::from_millis(ms));
        }
        "machine-memory" => s.machine_memory = Some(need(value)?),
        "machine-cpus" => s.machine_cpus = Some(need(value)?),
        "vm" => s.vm = Some(need(value)?),
        "allow-destructive" => match value {
            None => s.allow_destructive = true,
            Some(v) => s.allow_targets.push(v.into()),
        },
        "warnings" => (s.warnings_stderr, s.advice_fatal) = parse_warnings(&need(value)?)?,
        "warnings-fatal" if value.is_some() => {
            return Err(JobError::new(
                Location::CommandLine,
                "switch '--warnings-fatal' takes no value",
            ))
        }
        "warnings-fatal" => s.warnings_fatal = true,
        "max-jobs" => {
            let v = need(value)?;
            let n: u32 = v.trim().parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                JobError::new(
                    Location::CommandLine,
                    format!("--max-jobs={v}: not a positive number"),
                )
            })?;
            s.max_jobs = Some(n);
        }
        "version" => set_early(cl, Early::Version),
        "help" => set_early(cl, Early::Help),
        "cmdhelp" => {
            let arg = value.unwrap_or("").to_string();
            let early = match &cl.profile {
                Some(p) => Early::ProfileHelp(p.clone(), arg),
                None => Early::CmdHelp(arg),
            };
            set_early(cl, early)
        }
        "profile" => {
            let v = need(value)?;
            if crate::profile::find(&v).is_none() {
                let names: Vec<&str> = crate::profile::PROFILES.iter().map(|p| p.name).collect();
                return Err(JobError::new(
                    Location::CommandLine,
                    format!(
                        "--profile={v}: no such profile (fio 3.33 has: {})",
                        names.join(", ")
                    ),
                ));
            }
            cl.profile = Some(v);
        }
        "enghelp" => set_early(cl, Early::EngHelp(value.unwrap_or("").to_string())),
        "inflate-log" => set_early(cl, Early::InflateLog(need(value)?)),
        // fio's self-tests: optional values (getopt's optional_argument), run instead of jobs.
        "crctest" => set_early(cl, Early::CrcTest(value.map(str::to_string))),
        "memcpytest" => set_early(cl, Early::MemcpyTest(value.map(str::to_string))),
        "cpuclock-test" if value.is_some() => {
            return Err(JobError::new(
                Location::CommandLine,
                "switch '--cpuclock-test' takes no value",
            ))
        }
        "cpuclock-test" => set_early(cl, Early::CpuClockTest),
        // fio's debug categories; `?` lists them and exits.
        "debug" => {
            let v = need(value)?;
            if v == "?" {
                set_early(cl, Early::DebugList);
            } else {
                for c in v.split(',').map(str::trim) {
                    check_debug_word(c)?;
                }
                s.debug = Some(v);
            }
        }
        // fio's idle profiling; `calibrate` measures and exits without running jobs.
        "idle-prof" => match need(value)?.as_str() {
            "calibrate" => set_early(cl, Early::IdleCalibrate),
            "system" => s.idle_prof = Some(IdleProfMode::System),
            "percpu" => s.idle_prof = Some(IdleProfMode::Percpu),
            v => {
                return Err(JobError::new(
                    Location::CommandLine,
                    format!(
                        "--idle-prof: incorrect option '{v}' (use calibrate, system or percpu)"
                    ),
                ))
            }
        },
        _ if more_switches(s, name, value)? => {}
        _ if FIO_SWITCHES.iter().any(|(n, _)| *n == name) => {
            let reason = FIO_SWITCHES
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("", |f| f.1);
            fio_switch(s, name, value, reason)?;
        }
        _ if defs::lookup(name).is_none()
            && defs::fio_only::lookup(name).is_none()
            && !name.contains('_')
            && name.contains('-')
            && !crate::profile::is_profile_option(name) =>
        {
            let hint = suggest::closest(name, SWITCHES.iter().copied())
                .map(|s| format!(" (did you mean '--{s}'?)"))
                .unwrap_or_default();
            return Err(JobError::new(
                Location::CommandLine,
                format!("unknown switch '--{name}'{hint}"),
            ));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The switches fio has beyond the basic ones: output details, ETA timing, state path,
/// triggers, pool size. Ok(false) if `name` is none of them.
fn more_switches(s: &mut RunSettings, name: &str, value: Option<&str>) -> Result<bool, JobError> {
    let need = |v: Option<&str>| -> Result<String, JobError> {
        v.map(str::to_string).ok_or_else(|| {
            JobError::new(
                Location::CommandLine,
                format!("switch '--{name}' needs a value (--{name}=...)"),
            )
        })
    };
    match name {
        "append-terse" if value.is_some() => {
            return Err(JobError::new(
                Location::CommandLine,
                "switch '--append-terse' takes no value",
            ))
        }
        // fio: terse output in addition to the formats chosen so far.
        "append-terse" => {
            if s.output_formats.is_empty() {
                s.output_formats.push(OutputFormat::Normal);
            }
            if !s.output_formats.contains(&OutputFormat::Terse) {
                s.output_formats.push(OutputFormat::Terse);
            }
        }
        "aux-path" => s.aux_path = Some(need(value)?),
        "trigger-file" => s.trigger_file = Some(need(value)?),
        "trigger" => s.trigger_cmd = Some(need(value)?),
        "trigger-timeout" => {
            let v = need(value)?;
            let us = crate::value::parse_time_us(&v, 1_000_000).map_err(|m| {
                JobError::new(Location::CommandLine, format!("--trigger-timeout: {m}"))
            })?;
            // fio keeps whole seconds.
            s.trigger_timeout = Some(std::time::Duration::from_secs(us / 1_000_000));
        }
        "terse-version" => {
            let v = need(value)?;
            s.terse_version = v
                .trim()
                .parse()
                .ok()
                .filter(|n| (2..=5).contains(n))
                .ok_or_else(|| {
                    JobError::new(
                        Location::CommandLine,
                        format!("--terse-version={v}: bad terse version (use 2, 3, 4 or 5)"),
                    )
                })?;
        }
        "eta-newline" => s.eta_newline = Some(eta_period(name, &need(value)?, 1)?),
        // fio's limit: ETA updates at least 250 ms apart.
        "eta-interval" => s.eta_interval = Some(eta_period(name, &need(value)?, 250)?),
        // fio sizes its shared-memory allocator (smalloc) with it; fiox allocates job state
        // from the heap, so the pool has nothing to size. The value is checked as fio reads it.
        "alloc-size" => {
            let v = need(value)?;
            v.trim().parse::<u32>().map_err(|_| {
                JobError::new(
                    Location::CommandLine,
                    format!("--alloc-size={v}: not a number of KiB"),
                )
            })?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `--eta-newline`/`--eta-interval`: a time (seconds by default) of at least `min_ms`.
fn eta_period(name: &str, v: &str, min_ms: u64) -> Result<std::time::Duration, JobError> {
    let us = crate::value::parse_time_us(v, 1_000_000)
        .map_err(|m| JobError::new(Location::CommandLine, format!("--{name}: {m}")))?;
    if us / 1000 < min_ms {
        return Err(JobError::new(
            Location::CommandLine,
            format!("--{name}={v}: too short ({min_ms} ms at least)"),
        ));
    }
    Ok(std::time::Duration::from_millis(us / 1000))
}

fn set_early(cl: &mut CmdLine, e: Early) {
    // The first of --help/--version/--cmdhelp/--enghelp wins, as fio acts on it at once.
    if cl.early.is_none() {
        cl.early = Some(e);
    }
}

/// `normal,json` -> formats (duplicates removed, order kept).
pub fn parse_formats(s: &str) -> Result<Vec<OutputFormat>, JobError> {
    let mut out = Vec::new();
    for f in s.split(',').map(str::trim) {
        let fmt = match f {
            "normal" => OutputFormat::Normal,
            "json" => OutputFormat::Json,
            "json+" => OutputFormat::JsonPlus,
            "terse" => OutputFormat::Terse,
            other => {
                return Err(JobError::new(
                    Location::CommandLine,
                    format!(
                    "--output-format: unknown format '{other}' (use normal, json, json+ or terse)"
                ),
                ))
            }
        };
        if !out.contains(&fmt) {
            out.push(fmt);
        }
    }
    Ok(out)
}

/// `--warnings=report|stderr|fatal`: whether the advice also goes to stderr, and whether it
/// makes the exit status 1.
fn parse_warnings(s: &str) -> Result<(bool, bool), JobError> {
    match s {
        "report" => Ok((false, false)),
        "stderr" => Ok((true, false)),
        "fatal" => Ok((true, true)),
        other => Err(JobError::new(
            Location::CommandLine,
            format!("--warnings={other}: use report (the default), stderr or fatal"),
        )),
    }
}

fn parse_eta(s: &str) -> Result<EtaMode, JobError> {
    match s {
        "auto" => Ok(EtaMode::Auto),
        "always" => Ok(EtaMode::Always),
        "never" => Ok(EtaMode::Never),
        other => Err(JobError::new(
            Location::CommandLine,
            format!("--eta={other}: use auto, always or never"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> SubstEnv {
        SubstEnv {
            vars: Default::default(),
            pagesize: 4096,
            mb_memory: 1024,
            ncpus: 2,
        }
    }

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn globals_then_jobs() {
        let cl = parse_cmdline(&args("--bs=8k --name=a --size=1m --name=b a.fio"), &env()).unwrap();
        let names: Vec<_> = cl
            .sections
            .iter()
            .map(|s| (s.name.as_str(), s.global))
            .collect();
        assert_eq!(names, [("global", true), ("a", false), ("b", false)]);
        assert_eq!(cl.job_files, ["a.fio"]);
    }

    #[test]
    fn explain_takes_a_mode() {
        use crate::ExplainMode;
        let mode = |a: &str| parse_cmdline(&args(a), &env()).map(|c| c.settings);
        let s = mode("--explain --name=a").unwrap();
        assert!(s.explain);
        assert_eq!(s.explain_mode, ExplainMode::Sampled);
        assert_eq!(
            mode("--explain=full --name=a").unwrap().explain_mode,
            ExplainMode::Full
        );
        assert_eq!(
            mode("--explain=5/50 --name=a").unwrap().explain_mode,
            ExplainMode::Windows {
                window_us: 5000,
                period_us: 50_000
            }
        );
        assert_eq!(
            mode("--explain=20ms/20ms --name=a").unwrap().explain_mode,
            ExplainMode::Full
        );
        for bad in ["--explain=often", "--explain=50/5", "--explain=0/5"] {
            let e = mode(&format!("{bad} --name=a")).unwrap_err().to_string();
            assert!(e.contains("--explain="), "{bad}: {e}");
        }
    }

    #[test]
    fn switches() {
        let cl = parse_cmdline(
            &args("--output-format=normal,json+ --eta=never --status-interval=2 --readonly --parse-only --section=x"),
            &env(),
        )
        .unwrap();
        let s = &cl.settings;
        assert_eq!(
            s.output_formats,
            [OutputFormat::Normal, OutputFormat::JsonPlus]
        );
        assert_eq!(s.eta, EtaMode::Never);
        assert_eq!(s.status_interval, Some(std::time::Duration::from_secs(2)));
        assert!(s.readonly && s.parse_only);
        assert_eq!(s.sections, ["x"]);
        let d = parse_cmdline(&args("--allow-destructive --max-jobs=3"), &env()).unwrap();
        assert!(d.settings.allow_destructive);
        assert_eq!(d.settings.max_jobs, Some(3));
        let h = parse_cmdline(&args("--html report.html --name=x"), &env()).unwrap();
        assert_eq!(h.settings.html.as_deref(), Some("report.html"));
        assert!(parse_cmdline(&args("--html"), &env()).is_err());
        let m = parse_cmdline(&args("--minimal"), &env()).unwrap();
        assert_eq!(m.settings.output_formats, [OutputFormat::Terse]);
    }

    #[test]
    fn value_in_next_argument() {
        let sw = parse_cmdline(
            &args("--output-format json --output /tmp/o --eta never --max-jobs 2 --section s --status-interval 1"),
            &env(),
        )
        .unwrap()
        .settings;
        assert_eq!(sw.output_formats, [OutputFormat::Json]);
        assert_eq!(sw.output.as_deref(), Some("/tmp/o"));
        assert_eq!((sw.max_jobs, sw.sections.len()), (Some(2), 1));
        assert!(parse_cmdline(&args("--output"), &env()).is_err());
        let cl = parse_cmdline(&args("--name x --bs 4k --time_based"), &env()).unwrap();
        let opts = &cl.sections[0].opts;
        assert_eq!(cl.sections[0].name, "x");
        assert_eq!(opts[0].value.as_deref(), Some("4k"));
        assert_eq!(opts[1].value, None);
    }

    #[test]
    fn log_switches_of_old_and_new_fio() {
        let cl = parse_cmdline(&args("--latency-log --bandwidth-log --name=x"), &env()).unwrap();
        assert!(cl.settings.latency_log && cl.settings.bandwidth_log);
        let cl = parse_cmdline(&args("--name=x"), &env()).unwrap();
        assert!(!cl.settings.latency_log && !cl.settings.bandwidth_log);
        let e = parse_cmdline(&args("--bandwidth-log=1"), &env()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "command line: switch '--bandwidth-log' takes no value"
        );
    }

    #[test]
    fn warning_switches() {
        let s = parse_cmdline(&args("--name=x"), &env()).unwrap().settings;
        assert!(!s.warnings_stderr && !s.warnings_fatal);
        let s = parse_cmdline(&args("--warnings=stderr --warnings-fatal"), &env())
            .unwrap()
            .settings;
        assert!(s.warnings_stderr && s.warnings_fatal);
        let s = parse_cmdline(&args("--warnings report -w"), &env())
            .unwrap()
            .settings;
        assert!(!s.warnings_stderr && s.warnings_fatal);
        let s = parse_cmdline(&args("--warnings=fatal"), &env())
            .unwrap()
            .settings;
        assert!(s.warnings_stderr && s.advice_fatal && !s.warnings_fatal);
        let e = parse_cmdline(&args("--warnings=loud"), &env()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "command line: --warnings=loud: use report (the default), stderr or fatal"
        );
        assert!(parse_cmdline(&args("--warnings-fatal=1"), &env()).is_err());
    }

    #[test]
    fn bad_switches() {
        let e = parse_cmdline(&args("--output-format=xml"), &env()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "command line: --output-format: unknown format 'xml' (use normal, json, json+ or terse)"
        );
        let e = parse_cmdline(&args("--parse-onyl"), &env()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "command line: unknown switch '--parse-onyl' (did you mean '--parse-only'?)"
        );
        let cl = parse_cmdline(&args("--debug=io,file"), &env()).unwrap();
        assert_eq!(cl.settings.debug.as_deref(), Some("io,file"));
        assert!(cl.settings.unsupported_switches.is_empty());
        let cl = parse_cmdline(&args("--debug=?"), &env()).unwrap();
        assert_eq!(cl.early, Some(Early::DebugList));
        let cl = parse_cmdline(&args("--debug=io,job:1"), &env()).unwrap();
        assert_eq!(cl.settings.debug.as_deref(), Some("io,job:1"));
        for bad in ["--debug=job", "--debug=job:x"] {
            let e = parse_cmdline(&args(bad), &env()).unwrap_err();
            assert!(e.to_string().contains("needs a job number"), "{e}");
        }
        // fio options with a dash in their name are options, not unknown switches.
        let cl = parse_cmdline(&args("--name=x --hugepage-size=2m"), &env()).unwrap();
        assert_eq!(cl.sections[0].opts[0].name, "hugepage-size");
        let e = parse_cmdline(&args("--append-terse=1"), &env()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "command line: switch '--append-terse' takes no value"
        );
    }
}
