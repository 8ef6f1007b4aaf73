//! `fiox`: the binary is thin glue over the library crates. It parses the command line
//! (fiox-job), handles the informational switches, prints fio's header lines, runs the jobs
//! (fiox-runner) and prints the reports (fiox-report) in every requested format. As in fio,
//! stderr is for errors only: reports, the header, informational lines and the ETA go to stdout
//! (or `--output`); with JSON the informational lines go into the document under `fiox.notes`
//! and fiox's advice under `fiox.warnings` (the normal report ends with a `fiox advice` block),
//! so stdout stays one JSON document and a run that goes well says nothing on stderr.
//! The subcommands are parsed by clap (`cli.rs`): `fiox quick [DIR]` is a six-test disk check
//! (see `quick.rs`); `fiox plot` charts results (fiox-plot); `fiox compare` compares results
//! with statistics (`compare.rs`); `fiox testbed` manages test targets (`testbed.rs`);
//! `fiox experiment` and `fiox env` are in `experiment.rs`; `fiox history` (and the recording
//! of runs into it) is in `history.rs`; `--vm` runs the jobs inside a QEMU guest (`vm.rs`);
//! `--server` serves fio 3.33's clients (`server.rs`); `--client` drives fio and fiox servers
//! (`client/`).

// The man page and completions: `fiox man` prints them; its tests keep docs/ in sync.
mod cli;
mod clidoc;
mod client;
mod cluster;
mod compare;
mod experiment;
mod explain;
mod history;
mod machine;
#[cfg(feature = "mpi")]
mod mpi;
mod output;
mod parsedebug;
mod quick;
mod report_page;
mod server;
mod telemetry;
mod testbed;
mod vm;

use anyhow::{Context, Result};
use cluster::Peers;
use fiox_job::{Action, Invocation, OutputFormat};
use fiox_runner::RunOptions;
use output::Out;
use serde_json::Value;
use std::io::Write;
use std::sync::{Arc, Mutex};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match std::panic::catch_unwind(|| real_main(&args)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            if output::is_broken_pipe(&e) {
                0
            } else {
                fiox_guard::eprintln!("fiox: {}", output::error_text(&e));
                1
            }
        }
        // The panic message was already printed by the default hook.
        Err(_) => {
            fiox_guard::eprintln!(
                "fiox: internal error (a bug); please report it with the command line"
            );
            1
        }
    };
    // Under MPI an error that ended this process outside the agreed points would leave the
    // others waiting for it: end them all (the error was printed above, with rank and host).
    #[cfg(feature = "mpi")]
    if code != 0 {
        mpi::abort_if_unfinished(code);
    }
    std::process::exit(code);
}

fn real_main(args: &[String]) -> Result<i32> {
    fiox_report::identity::present_as_fio(as_fio(
        std::env::args_os().next().as_deref(),
        std::env::var_os("FIOX_AS_FIO").as_deref(),
    )?);
    // `--server`: fio's server (fiox-netproto); the jobs come from the clients.
    if server::wanted(args) {
        return server::main(args);
    }
    // `--client`: fio's client, driving fio and fiox servers (fiox-netproto).
    if client::wanted(args) {
        return client::main(args);
    }
    // Subcommands have clap's parser; everything else is fio's command line.
    if args.first().is_some_and(|a| cli::is_subcommand(a)) {
        return cli::run(args, clidoc::man_main);
    }
    if let Some(launch) = cluster::launched() {
        #[cfg(feature = "mpi")]
        return mpi::main(args, launch);
        #[cfg(not(feature = "mpi"))]
        if let Some(why) = cluster::refuse_without_mpi(launch) {
            anyhow::bail!(why);
        }
    }
    let inv = fiox_job::parse_invocation(args)?;
    if inv.settings.vm.is_some() && matches!(inv.action, Action::Run) {
        return vm::run(args, &inv);
    }
    act(&inv, &cluster::Alone)
}

/// Whether fiox stands in fio's place, so that its version line begins with fio's release
/// (for programs that check `fio --version`): `FIOX_AS_FIO=1` or `0` says so; without it, fiox
/// does when run under the name `fio` (a link or copy named so, found first on PATH).
fn as_fio(argv0: Option<&std::ffi::OsStr>, env: Option<&std::ffi::OsStr>) -> Result<bool> {
    match env.map(|v| v.to_string_lossy()) {
        Some(v) if v == "1" => return Ok(true),
        Some(v) if v == "0" => return Ok(false),
        Some(v) => anyhow::bail!(
            "FIOX_AS_FIO={v}: use 1 (present fiox as fio: `fio-3.33 (fiox ...)` in --version \
             and the reports) or 0 (as fiox, even when run as `fio`)"
        ),
        None => {}
    }
    let name = argv0.map(std::path::Path::new).and_then(|p| p.file_name());
    Ok(name.is_some_and(|n| n == "fio"))
}

/// Do what the command line asks; `peers`: the other processes of a run under MPI.
fn act(inv: &Invocation, peers: &dyn Peers) -> Result<i32> {
    let mut stdout = std::io::stdout().lock();
    match &inv.action {
        Action::Version => writeln!(stdout, "{}", fiox_report::normal::version_line())?,
        Action::DebugList => {
            // fio's --debug=?: the categories it knows, on one line.
            let all = fiox_job::cli::DEBUG_CATEGORIES.join(",");
            writeln!(stdout, "fiox: dumping debug options:{all}")?;
            // Not fio's: the categories that print nothing here, and why.
            for (c, why) in fiox_job::cli::DEBUG_SILENT {
                writeln!(stdout, "fiox: {c} prints nothing in fiox: {why}")?;
            }
            writeln!(
                stdout,
                "fiox: job:N prints only job N's lines (N counting from 0)"
            )?;
        }
        // fio's self-tests: their lines on stdout, fio's exit codes (1: a list was asked
        // for, a name is unknown, or the clock went backwards).
        Action::CrcTest(t) => {
            let mut err = std::io::stderr();
            return Ok(fiox_runner::selftest::crctest(
                t.as_deref(),
                &mut stdout,
                &mut err,
            )?);
        }
        Action::MemcpyTest(t) => {
            let mut err = std::io::stderr();
            return Ok(fiox_runner::selftest::memcpytest(
                t.as_deref(),
                &mut stdout,
                &mut err,
            )?);
        }
        Action::CpuClockTest => {
            let mut err = std::io::stderr();
            return Ok(fiox_runner::clocktest::cpuclock_test(
                &mut stdout,
                &mut err,
            )?);
        }
        Action::IdleCalibrate => {
            // fio's --idle-prof=calibrate: the unit of work timed on every CPU, no jobs run.
            let p = fiox_runner::idleprof::IdleProf::start(fiox_job::IdleProfMode::Calibrate)
                .context("--idle-prof=calibrate: cannot start its threads")?;
            write!(stdout, "{}", fiox_report::normal::idle_stats(&p.finish()))?;
        }
        Action::InflateLog(path) => {
            // fio's --inflate-log: the text of a log stored with log_store_compressed.
            // A regular file only, bounded: /dev/zero here filled gigabytes of memory.
            let data = fiox_guard::input::read_bytes(
                std::path::Path::new(path),
                fiox_guard::input::RESULT_MAX,
            )
            .with_context(|| format!("--inflate-log: {path}"))?;
            // fio 3.33 reads the file in one fread of its size, which fails on an empty one.
            anyhow::ensure!(
                !data.is_empty(),
                "--inflate-log: {path}: short read on reading log (the file is empty)"
            );
            let mut out = std::io::BufWriter::new(&mut stdout);
            fiox_stats::gzlog::inflate(&data, &mut out)
                .map_err(|e| anyhow::anyhow!("--inflate-log: {path}: {e}"))?;
            out.flush()?;
        }
        Action::Help(t) | Action::CmdHelp(t) | Action::EngHelp(t) | Action::ShowCmd(t) => {
            write!(stdout, "{t}")?;
            if !t.ends_with('\n') {
                writeln!(stdout)?;
            }
        }
        // fio switches that act without jobs (--server, --crctest, --inflate-log...).
        Action::NoJobs(..) if !inv.refusals().is_empty() => {
            for line in &inv.refusals() {
                fiox_guard::eprintln!("fiox: {line}");
            }
            return Ok(1);
        }
        Action::NoJobs(usage, why) => {
            // fio: usage on stdout, "No job(s) defined" on stderr, exit 1.
            write!(stdout, "{usage}")?;
            stdout.flush()?;
            fiox_guard::eprintln!("No job(s) defined: {why}");
            return Ok(1);
        }
        Action::MergeBlktraceOnly => {
            // fio's --merge-blktrace-only: the merged traces are written, nothing runs.
            if let Err(errors) = fiox_runner::merge_blktraces(&inv.jobs) {
                for line in &errors {
                    fiox_guard::eprintln!("fiox: merge_blktrace_file: {line}");
                }
                return Ok(1);
            }
        }
        Action::ParseOnly => {
            if let Some(d) = &inv.settings.debug {
                debug_setup(d, inv);
            }
            // The jobs parsed: notes on how they were read go where fio's parser notes go
            // (stdout); which of them fiox would refuse to run, and why, on stderr. A script
            // checking a job file with --parse-only must not take "will not run" for a pass.
            let notes = inv.notes();
            let fio_warnings = inv.fio_warnings();
            let fatal = inv.settings.warnings_fatal && !fio_warnings.is_empty();
            // Jobs that will fail as fio's do (an engine fiox lacks that fio loads) parse, as
            // in fio (exit 0): run, each fails alone with fio's error. That they will fail is
            // a note (stdout), so a check of the file still learns it.
            if !fatal {
                for line in notes.iter().chain(&inv.failing()) {
                    writeln!(stdout, "fiox: {line}")?;
                }
                stdout.flush()?;
            }
            let refusals = refusals(inv);
            for line in &refusals {
                fiox_guard::eprintln!("fiox: {line}");
            }
            if fatal {
                return Ok(warnings_fatal_stop(&fio_warnings));
            }
            if !refusals.is_empty() {
                return Ok(1);
            }
        }
        Action::Run => {
            drop(stdout);
            // Jobs using fio features fiox cannot execute are refused before any I/O. Every
            // process of an MPI run read the same jobs and stops alike; rank 0 says why.
            let refusals = refusals(inv);
            if !refusals.is_empty() {
                for line in refusals.iter().filter(|_| peers.lead()) {
                    fiox_guard::eprintln!("fiox: {line}");
                }
                return Ok(1);
            }
            let fio_warnings = inv.fio_warnings();
            if inv.settings.warnings_fatal && !fio_warnings.is_empty() {
                return Ok(if peers.lead() {
                    warnings_fatal_stop(&fio_warnings)
                } else {
                    1
                });
            }
            return run(inv, inv.settings.telemetry, peers);
        }
    }
    stdout.flush()?;
    Ok(0)
}

/// `--warnings-fatal` with fio's parser warnings among the notes on how the jobs were read:
/// they stop it before any I/O, as in fio; say each on stderr and exit 1.
fn warnings_fatal_stop(notes: &[String]) -> i32 {
    for note in notes {
        fiox_guard::eprintln!("fiox: {note}");
    }
    fiox_guard::eprintln!(
        "fiox: --warnings-fatal: stopping on fio's parser warning(s) above; nothing was run"
    );
    1
}

/// fio's header lines before a run: each job's line (a clone as `...`), version, `Starting`
/// (with every rank's threads under MPI).
fn header_text(inv: &Invocation, ranks: u32) -> String {
    let mut header = String::new();
    // fio prints its version once the jobs it parsed are set up; a profile's jobs come later.
    let version_at = inv.settings.profile_jobs_from.unwrap_or(inv.jobs.len());
    for (i, job) in inv.jobs.iter().enumerate() {
        if i == version_at && i > 0 {
            header.push_str(&fiox_report::normal::version_line());
            header.push('\n');
        }
        match job.clone_index {
            0 => header.push_str(&fiox_report::normal::job_header_line(job)),
            1 => header.push_str("...\n"),
            _ => {}
        }
    }
    if version_at == inv.jobs.len() && (version_at > 0 || inv.settings.profile_jobs_from.is_none())
    {
        header.push_str(&fiox_report::normal::version_line());
        header.push('\n');
    }
    header.push_str(&if ranks > 1 {
        cluster::starting_line(&inv.jobs, ranks)
    } else {
        // fio's line (processes unless `thread`), though fiox's jobs are threads (README).
        fiox_report::normal::starting_line(&inv.jobs)
            .trim_end()
            .to_string()
    });
    header.push('\n');
    header
}

/// fiox's sections of a JSON result beside fio's: `env` (machine, targets, fiox build: what a
/// reader needs to trust or reproduce the numbers) in every JSON result, and `--telemetry`'s
/// samples when asked. None when neither applies (no JSON, no telemetry).
fn fiox_sections(
    inv: &Invocation,
    sampler: Option<fiox_experiment::telemetry::Sampler>,
    json: bool,
    limits: Option<Value>,
) -> Option<serde_json::Value> {
    let mut m = serde_json::Map::new();
    let mut limits = limits;
    if let Some(s) = sampler {
        m.insert("telemetry".into(), s.finish());
    }
    if json || !m.is_empty() || limits.is_some() {
        let mut env = telemetry::env(&inv.jobs);
        let backing = fiox_experiment::env::backing_cache(&env);
        if let Some(l) = limits.as_mut() {
            fiox_experiment::env::check_limits(l, &backing, m.get("telemetry"));
        }
        if !backing.is_empty() {
            m.insert("backing_cache".into(), Value::Array(backing));
        }
        if let (Some(l), Some(e)) = (limits, env.as_object_mut()) {
            e.insert("limits".into(), l);
        }
        m.insert("env".into(), env);
    }
    (!m.is_empty()).then_some(serde_json::Value::Object(m))
}

/// Run the jobs and print every requested report; returns the exit code. `telemetry`:
/// `--telemetry`'s sampling interval. Under MPI every rank runs its jobs and rank 0 alone
/// prints: the header, its own informational lines and ETA, then the combined reports.
fn run(inv: &Invocation, telemetry: Option<std::time::Duration>, peers: &dyn Peers) -> Result<i32> {
    if let Some(d) = &inv.settings.debug {
        debug_setup(d, inv);
    }
    let s = &inv.settings;
    let lead = peers.lead();
    let mut formats = if s.output_formats.is_empty() {
        vec![OutputFormat::Normal]
    } else {
        s.output_formats.clone()
    };
    // fio prints its reports in one order whatever order they were asked in (its output
    // buffers: terse, JSON, normal), so `--append-terse` puts the terse lines first.
    formats.sort_by_key(|f| match f {
        OutputFormat::Terse => 0,
        OutputFormat::Json | OutputFormat::JsonPlus => 1,
        OutputFormat::Normal => 2,
    });
    let out = if lead {
        Out::open(s.output.as_deref())?
    } else {
        Out::discard()
    };
    let normal = formats.contains(&OutputFormat::Normal);
    let json = formats
        .iter()
        .any(|f| matches!(f, OutputFormat::Json | OutputFormat::JsonPlus));
    let notes: Vec<String> = inv.notes();
    // Where fio prints them (stdout or --output): the notes before the header (fio's parser
    // notes come first), the header with the normal report only (as fio). JSON alone on stdout
    // stays one document: the notes go into it instead.
    let mut early = String::new();
    if normal || !json {
        for n in &notes {
            early.push_str(&format!("fiox: {n}\n"));
        }
    }
    if normal {
        early.push_str(&header_text(inv, peers.ranks()));
    }
    if !early.is_empty() {
        out.write_early(&early)?;
    }
    // Informational lines of the run: printed with the normal report (fio prints "Laying out
    // IO file" with it only), kept for the JSON's fiox.notes.
    let json_notes = Arc::new(Mutex::new(notes));
    let info = {
        let (out, json_notes) = (out.clone(), json_notes.clone());
        fiox_runner::InfoSink::new(move |line: &str| {
            if normal {
                let _ = out.write(line);
            }
            if json {
                let mut n = json_notes.lock().unwrap_or_else(|p| p.into_inner());
                n.push(line.trim_end().to_string());
            }
        })
    };
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    let opts = RunOptions {
        log_tag: peers.log_tag(),
        ..run_options(inv, info, normal, lead)
    };
    let status_out = out.clone();
    let status_formats = formats.clone();
    let tv = s.terse_version;
    let mut on_status = move |snap: &fiox_stats::RunResult| {
        let _ = status_out.write(&output::status_text(snap, &status_formats, &[], tv));
    };
    // Before any worker starts: the whole process goes into the limits' cgroup.
    let machine = machine::enter(s)?;
    let sampler = telemetry
        .filter(|_| lead)
        .map(|every| telemetry::start(&inv.jobs, every));
    let tracer = (s.explain && lead).then(|| explain::start(&inv.jobs, s.explain_mode));
    let outcome = fiox_runner::run_synced(&inv.jobs, &opts, &mut on_status, peers.sync());
    let limits = machine.map(machine::finish);
    // A second signal means "exit now, no report", even if the run ended before the signal
    // watcher acted on it (the limits' group is left and removed just above; a forced exit
    // during the run leaves it to `fiox testbed cleanup`).
    fiox_runner::exit_if_forced();
    let all = peers.reduce(inv, outcome)?;
    let lost = out.failure();
    // --warnings=fatal (fiox's switch, not fio's -w): advice (on stderr below) fails the run.
    let warnings = fiox_report::warnings_text(&all.result);
    let fatal_advice = s.advice_fatal && !warnings.is_empty();
    // As fio: the exit status counts the jobs that failed (fio's exit_value, one per failed
    // job or clone; kept below 256 so that 256 failures never read as success).
    let code = if all.interrupted {
        130
    } else if !all.errors.is_empty() {
        all.errors.len().min(255) as i32
    } else if lost.is_none() && !fatal_advice {
        0
    } else {
        1
    };
    if !lead {
        return Ok(code);
    }
    let mut tele = fiox_sections(inv, sampler, json, limits);
    if let Some(t) = tracer {
        let e = explain::finish(t, &all.result, &inv.jobs);
        match &mut tele {
            Some(Value::Object(m)) => {
                m.insert("explain".into(), e);
            }
            _ => tele = Some(serde_json::json!({ "explain": e })),
        }
    }
    if let (Some(Value::Object(m)), Some(sec)) = (&mut tele, &all.section) {
        m.insert("mpi".into(), sec.clone());
    }
    if all.interrupted {
        fiox_guard::eprintln!("fiox: interrupted: reporting what was measured so far");
    }
    for e in &all.errors {
        fiox_guard::eprintln!("fiox: {e}");
    }
    // fiox's advice is in the report; on stderr only when asked.
    if !warnings.is_empty() && s.warnings_stderr {
        fiox_guard::eprint!("{warnings}");
    }
    let notes = json_notes.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for f in &formats {
        // With status reports, JSON stays one object per line to the end (valid JSON Lines).
        let mut text = if s.status_interval.is_some() {
            output::status_text(&all.result, &[*f], &notes, tv)
        } else {
            output::report_text(&all.result, *f, &notes, tele.as_ref(), tv)
        };
        if *f == OutputFormat::Normal {
            text.push_str(&all.text);
        }
        out.write(&text)?;
    }
    out.flush()?;
    report_page::write(inv, &all.result, tele.as_ref())?;
    // --history (or FIOX_HISTORY=1): the run's JSON result into the history; a failure to
    // record is said and fails the run, the reports above stand.
    let unrecorded = (!all.interrupted)
        .then(|| history::record_plain_run(inv, &all.result, &notes, tele.as_ref()).err())
        .flatten();
    if let Some(e) = &unrecorded {
        fiox_guard::eprintln!("fiox: history: {}", output::error_text(e));
    }
    let lost = out.failure();
    if let Some(why) = &lost {
        fiox_guard::eprintln!("fiox: {why}");
    }
    Ok(if code == 0 && (lost.is_some() || unrecorded.is_some()) {
        1
    } else {
        code
    })
}

/// The runner's options from the command line. `normal`: the normal report is asked for;
/// `lead`: this process prints (the other ranks of an MPI run draw no ETA line).
fn run_options(
    inv: &Invocation,
    info: fiox_runner::InfoSink,
    normal: bool,
    lead: bool,
) -> RunOptions {
    let s = &inv.settings;
    RunOptions {
        messages: true,
        info,
        readonly: s.readonly,
        // fio draws no ETA line when a machine format alone goes to stdout.
        eta: if !lead || (!normal && s.output.is_none()) {
            fiox_job::EtaMode::Never
        } else {
            s.eta
        },
        status_interval: s.status_interval,
        global_options: inv.global_options.clone(),
        max_jobs: s.max_jobs,
        allow_destructive: s.allow_destructive,
        allow_targets: s.allow_targets.clone(),
        bandwidth_log: s.bandwidth_log,
        eta_interval: s.eta_interval,
        eta_newline: s.eta_newline,
        trigger: fiox_runner::Trigger {
            file: s.trigger_file.clone().map(Into::into),
            timeout: s.trigger_timeout,
            cmd: s.trigger_cmd.clone(),
        },
        log_tag: None,
        idle_prof: s.idle_prof,
        engine_factory: None,
    }
}

/// `--debug=LIST`: say which categories are on (as fio does when parsing), turn them on, and
/// print fio's `parse` lines (`parsedebug.rs`).
fn debug_setup(list: &str, inv: &Invocation) {
    use fiox_runner::debug;
    let Some(mask) = debug::mask_of(list) else {
        return; // checked by the parser already
    };
    if mask == u32::MAX {
        fiox_guard::println!("fiox: set all debug options");
    }
    for c in list.split(',').map(str::trim) {
        if let Some(n) = c.strip_prefix("job:") {
            fiox_guard::println!("fiox: set debug jobno {}", n.trim());
            continue;
        }
        if mask != u32::MAX {
            fiox_guard::println!("fiox: set debug option {c}");
        }
        if let Some((_, why)) = fiox_job::cli::DEBUG_SILENT.iter().find(|(k, _)| *k == c) {
            fiox_guard::println!("fiox: debug option {c} prints nothing in fiox: {why}");
        }
    }
    if let Some(n) = debug::job_of(list) {
        debug::only_job(n);
    }
    debug::enable(mask);
    parsedebug::print(inv);
}

/// Why the jobs must not run: fio features fiox does not support yet, and NUMA nodes that are
/// not online here (fio's parser rejects the file for those).
pub(crate) fn refusals(inv: &fiox_job::Invocation) -> Vec<String> {
    let mut r = inv.refusals();
    r.extend(fiox_runner::numa_refusals(&inv.jobs));
    r
}

#[cfg(test)]
mod tests {
    use super::as_fio;
    use std::ffi::OsStr;

    #[test]
    fn fiox_stands_in_for_fio_by_its_name_or_when_told() {
        let yes = |a: &str, e: Option<&str>| as_fio(Some(OsStr::new(a)), e.map(OsStr::new));
        assert!(yes("/usr/local/bin/fio", None).unwrap());
        assert!(yes("fio", None).unwrap());
        assert!(!yes("/usr/bin/fiox", None).unwrap());
        assert!(!yes("/opt/fio/bin/fio-3", None).unwrap());
        assert!(yes("fiox", Some("1")).unwrap());
        assert!(!yes("/usr/bin/fio", Some("0")).unwrap());
        let e = yes("fiox", Some("yes")).unwrap_err().to_string();
        assert!(e.starts_with("FIOX_AS_FIO=yes: use 1"), "{e}");
    }
}
