//! fio's job language: one option table drives parsing of job files and command lines,
//! validation, `--cmdhelp`, `--enghelp` and `docs/options.md`; resolution turns the parsed
//! sections into typed [`JobSpec`]s that the rest of fiox consumes.
//!
//! Entry points: [`parse_invocation`] for the `fiox` binary, [`parse_job_text`] for tests and
//! tools, `showcmd` to turn jobs back into a command line.
#![forbid(unsafe_code)]

pub mod cli;
pub mod cmdprio;
pub mod defs;
pub mod engine;
pub mod error;
mod getopt;
pub mod help;
pub mod jobfile;
pub mod profile;
pub mod resolve;
pub mod showcmd;
pub mod spec;
pub mod suggest;
pub mod value;

pub use engine::{Engine, IoEngineName};
pub use error::{JobError, Location};
pub use showcmd::{showcmd, showcmd_args};
pub use spec::*;

use jobfile::{FileReader, Section, SubstEnv};

/// What the binary should do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run the jobs.
    Run,
    /// `--parse-only`: the jobs parsed (none when only options were given: fio reads them as
    /// global options); exit 0 when fiox can run them all, 1 when a refusal says a job (or a
    /// switch) will not run.
    ParseOnly,
    /// `--merge-blktrace-only`: write the jobs' `merge_blktrace_file`s and exit.
    MergeBlktraceOnly,
    /// `--showcmd`: print this command line and exit.
    ShowCmd(String),
    /// `--cmdhelp[=opt]`: print this text and exit.
    CmdHelp(String),
    /// `--enghelp[=engine]`: print this text and exit.
    EngHelp(String),
    /// `--version`: print the version and exit.
    Version,
    /// `--help`: print this text and exit.
    Help(String),
    /// `--inflate-log=FILE`: print the compressed log FILE as text and exit.
    InflateLog(String),
    /// `--idle-prof=calibrate`: print the idle profiler's calibration and exit.
    IdleCalibrate,
    /// `--debug=?`: list the debug categories and exit.
    DebugList,
    /// `--crctest[=names]`: time the checksum functions and exit (None: all).
    CrcTest(Option<String>),
    /// `--memcpytest[=names]`: time the memory copy methods and exit (None: all).
    MemcpyTest(Option<String>),
    /// `--cpuclock-test`: check the CPU clock across CPUs and exit.
    CpuClockTest,
    /// No job was defined (no arguments, or options without a `--name=`): print the usage
    /// text, then say so on stderr and exit 1, as fio does, so a script does not take a run
    /// that did nothing for a success. The second field explains what was missing.
    NoJobs(String, String),
}

/// A parsed command line with its jobs resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub settings: RunSettings,
    pub action: Action,
    /// Fully resolved jobs (numjobs expanded, group ids assigned). Empty for the help actions.
    pub jobs: Vec<JobSpec>,
    /// Global options as written (command line, then each file's `[global]`) under fio's
    /// names (`bs` for `blocksize`), for fio's JSON `global options` object.
    pub global_options: Vec<(String, String)>,
}

impl Invocation {
    /// Why these jobs must not run: one line per fio feature fiox does not support yet, for
    /// each job (numjobs clones once), e.g. "job a: `flow` is a fio option that fiox does not
    /// support yet; this job will not run", after one line per unsupported switch.
    /// `--parse-only` prints them and exits 1; a run is refused with them before any I/O.
    pub fn refusals(&self) -> Vec<String> {
        let switches = self.settings.unsupported_switches.iter();
        switches
            .map(cli::UnsupportedSwitch::describe)
            .chain(
                self.jobs
                    .iter()
                    .filter(|j| j.clone_index == 0)
                    .flat_map(JobSpec::refusal),
            )
            .collect()
    }

    /// The jobs that will run and fail as fio 3.33's do, their engine being one fiox lacks and
    /// fio loads but cannot use here, one line each (numjobs clones once); `--parse-only`
    /// prints them with the refusals.
    pub fn failing(&self) -> Vec<String> {
        self.jobs
            .iter()
            .filter(|j| j.clone_index == 0)
            .filter_map(JobSpec::failing)
            .collect()
    }

    /// fio's parser warnings among the notes ("job a: ..."), which `--warnings-fatal` stops on.
    pub fn fio_warnings(&self) -> Vec<String> {
        self.jobs
            .iter()
            .filter(|j| j.clone_index == 0)
            .flat_map(|j| {
                j.fio_warnings
                    .iter()
                    .map(move |n| format!("job {}: {n}", j.name))
            })
            .collect()
    }

    /// Notes about how the jobs' options were read ("job a: ..."), numjobs clones once.
    pub fn notes(&self) -> Vec<String> {
        self.jobs
            .iter()
            .filter(|j| j.clone_index == 0)
            .flat_map(|j| j.notes.iter().map(move |n| format!("job {}: {n}", j.name)))
            .fold(Vec::new(), |mut all, n| {
                // Once each (`bs=4q` is read for every direction, noted once).
                if !all.contains(&n) {
                    all.push(n);
                }
                all
            })
    }
}

/// `--latency-log`, as fio 2.x had it (fio 3.33 rejects it as deprecated, which would stop
/// seed command lines like `fio job.fio --latency-log --bandwidth-log`): every job without a
/// latency log of its own logs as `write_lat_log=<job name>` would.
fn old_latency_logs(jobs: &mut [JobSpec]) {
    for j in jobs.iter_mut().filter(|j| j.logs.write_lat_log.is_none()) {
        j.logs.write_lat_log = Some(j.name.clone());
        // --showcmd (and anything else reading the options as written) sees the option the
        // switch stands for.
        j.raw_options
            .push(("write_lat_log".to_string(), j.name.clone()));
        j.notes.push(format!(
            "--latency-log (a fio 2.x switch fio 3.33 rejects): writing latency logs as \
             write_lat_log={} would",
            j.name
        ));
    }
}

/// Parse `fiox [switches] [--option=value ...] [jobfile ...]`. `args` excludes the program
/// name (`std::env::args().skip(1)`). Job files are read from disk (`-` = stdin), `${VAR}`
/// comes from the process environment.
pub fn parse_invocation(args: &[String]) -> Result<Invocation, JobError> {
    parse_invocation_with(args, &SubstEnv::from_system(), &mut |path| {
        // One bounded reader (fiox_guard::input): a FIFO or /dev/zero named as a job file is
        // refused at once instead of read for ever.
        if path == "-" {
            fiox_guard::input::read_stdin(fiox_guard::input::JOB_FILE_MAX)
        } else {
            fiox_guard::input::read_text(
                std::path::Path::new(path),
                fiox_guard::input::JOB_FILE_MAX,
            )
        }
    })
}

/// [`parse_invocation`] with an explicit environment and job file reader (for tests);
/// included files still come from the real file system.
pub fn parse_invocation_with(
    args: &[String],
    env: &SubstEnv,
    read: &mut dyn FnMut(&str) -> std::io::Result<String>,
) -> Result<Invocation, JobError> {
    parse_invocation_in(args, env, read, &jobfile::RealFs)
}

/// [`parse_invocation`] with every input explicit: environment, job file reader and the file
/// system `include` reads from (the fuzzer keeps it all in memory).
pub fn parse_invocation_in(
    args: &[String],
    env: &SubstEnv,
    read: &mut dyn FnMut(&str) -> std::io::Result<String>,
    fs: &dyn jobfile::IncludeFs,
) -> Result<Invocation, JobError> {
    let cl = cli::parse_cmdline(args, env)?;
    let mut inv = Invocation {
        settings: cl.settings.clone(),
        action: Action::Run,
        jobs: Vec::new(),
        global_options: Vec::new(),
    };
    if let Some(early) = &cl.early {
        inv.action = match early {
            cli::Early::Help => Action::Help(help::usage()),
            cli::Early::Version => Action::Version,
            cli::Early::CmdHelp(o) => Action::CmdHelp(help::cmdhelp(o)?),
            cli::Early::EngHelp(e) => Action::EngHelp(help::enghelp(e)?),
            cli::Early::InflateLog(f) => Action::InflateLog(f.clone()),
            cli::Early::IdleCalibrate => Action::IdleCalibrate,
            cli::Early::DebugList => Action::DebugList,
            cli::Early::ProfileHelp(p, o) => Action::CmdHelp(profile_help(p, o)?),
            cli::Early::CrcTest(t) => Action::CrcTest(t.clone()),
            cli::Early::MemcpyTest(t) => Action::MemcpyTest(t.clone()),
            cli::Early::CpuClockTest => Action::CpuClockTest,
        };
        return Ok(inv);
    }
    let has_cmdline_jobs = cl.sections.iter().any(|s| !s.global);
    let no_jobs = cl.job_files.is_empty() && !has_cmdline_jobs && cl.profile.is_none();
    if no_jobs && cl.settings.parse_only {
        // fio parses options without a job as global options (each value checked) and exits
        // 0 (with no option too): scripts check option parsing this way. They are read as a
        // job named `global` would inherit them, whose notes and refusals say how fiox reads
        // them.
        if let Some(first) = cl.sections.first() {
            let probe = Section {
                global: false,
                opts: Vec::new(),
                ..first.clone()
            };
            let all: Vec<Section> = cl.sections.iter().cloned().chain([probe]).collect();
            inv.jobs = resolve::resolve(&all)?;
        }
        for j in &mut inv.jobs {
            j.own_options.clear(); // not a job of fio's: no `name=global` of its own
        }
        inv.global_options = global_options(&cl.sections);
        inv.action = Action::ParseOnly;
        return Ok(inv);
    }
    if no_jobs {
        let why = if cl.sections.is_empty() {
            "no job file and no --name= given".to_string()
        } else {
            "options were given, but no --name= starts a job (options before the first \
             --name= are global)"
                .to_string()
        };
        inv.action = Action::NoJobs(help::usage(), why);
        return Ok(inv);
    }
    let mut sections = cl.sections.clone();
    for (i, path) in cl.job_files.iter().enumerate() {
        let shown = if path == "-" {
            "<stdin>"
        } else {
            path.as_str()
        };
        let text = read(path)
            .map_err(|e| JobError::bare(format!("cannot read job file '{shown}': {e}")))?;
        let file_sections =
            FileReader::with_fs(env, &cl.settings.sections, fs).parse_text(&text, shown, i + 1)?;
        if !file_sections.iter().any(|s| !s.global) {
            return Err(JobError::bare(format!(
                "{shown}: no jobs defined (a job file needs at least one [job] section{})",
                if cl.settings.sections.is_empty() {
                    ""
                } else {
                    " matching --section"
                }
            )));
        }
        sections.extend(file_sections);
    }
    let act = match &cl.profile {
        Some(name) => {
            let before = if sections.iter().any(|s| !s.global) {
                resolve::resolve(&sections)?.len()
            } else {
                0
            };
            inv.settings.profile_jobs_from = Some(before);
            add_profile(&mut sections, name, &cl, env)?
        }
        None => None,
    };
    // fio lists a profile's options with the command line's other global options.
    inv.global_options = cl
        .profile_opts
        .iter()
        .map(|o| (o.name.clone(), o.value.clone().unwrap_or_default()))
        .chain(global_options(&sections))
        .collect();
    inv.jobs = resolve::resolve(&sections)?;
    for j in &mut inv.jobs {
        j.act = act;
    }
    if let (Some(name), Some(from)) = (&cl.profile, inv.settings.profile_jobs_from) {
        let call = profile::ProfileCall::new(name, &cl.profile_opts);
        for j in inv.jobs.iter_mut().skip(from) {
            j.profile = Some(call.clone());
        }
    }
    for j in &mut inv.jobs {
        j.aux_path.clone_from(&cl.settings.aux_path);
    }
    if cl.settings.latency_log {
        old_latency_logs(&mut inv.jobs);
    }
    inv.action = if cl.settings.showcmd {
        Action::ShowCmd(showcmd(&inv.jobs))
    } else if cl.settings.merge_blktrace_only {
        Action::MergeBlktraceOnly
    } else if cl.settings.parse_only {
        Action::ParseOnly
    } else {
        Action::Run
    };
    Ok(inv)
}

/// `--profile=NAME`: check its options, expand it and append its sections after every other
/// job, as fio loads a profile once all job files are read. The profile's global options come
/// after the command line's, so they win, as in fio. Returns act's runner hooks, if any.
fn add_profile(
    sections: &mut Vec<Section>,
    name: &str,
    cl: &cli::CmdLine,
    env: &SubstEnv,
) -> Result<Option<profile::ActSpec>, JobError> {
    let p = profile::find(name).ok_or_else(|| JobError::bare(format!("no profile '{name}'")))?;
    let values = profile::ProfValues::new(p, &cl.profile_opts)?;
    let list =
        profile::expand_list(&values).map_err(|m| JobError::new(Location::CommandLine, m))?;
    sections.extend(profile::sections(p, &list, env, cl.job_files.len() + 1)?);
    Ok(profile::act_spec(&values))
}

/// `--profile=NAME --cmdhelp[=OPTION]`.
fn profile_help(name: &str, opt: &str) -> Result<String, JobError> {
    let p = profile::find(name).ok_or_else(|| JobError::bare(format!("no profile '{name}'")))?;
    match opt.trim() {
        "" | "all" => Ok(profile::cmdhelp_all(p)),
        o => profile::cmdhelp_one(p, o),
    }
}

fn global_options(sections: &[Section]) -> Vec<(String, String)> {
    sections
        .iter()
        .filter(|s| s.global)
        .flat_map(|s| s.opts.iter())
        .map(|o| {
            (
                defs::canonical(&o.name),
                o.value.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Parse one job file's text (`name` is used in messages and anchors relative includes).
pub fn parse_job_text(text: &str, name: &str) -> Result<Vec<JobSpec>, JobError> {
    let env = SubstEnv::from_system();
    let sections = FileReader::new(&env, &[]).parse_text(text, name, 1)?;
    if !sections.iter().any(|s| !s.global) {
        return Err(JobError::bare(format!("{name}: no jobs defined")));
    }
    resolve::resolve(&sections)
}
