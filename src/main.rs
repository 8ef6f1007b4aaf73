//! `fiox`: the binary is thin glue over the library crates. It parses the command line
//! (fiox-job), handles the informational switches, prints fio's header lines, runs the jobs
//! (fiox-runner) and prints the reports (fiox-report) in every requested format. Reports go to
//! stdout (or `--output`), messages and warnings to stderr, so machine formats stay parseable.
//! `fiox quick [DIR]` is a four-test disk check (see `quick.rs`).

mod output;
mod quick;

use anyhow::{Context, Result};
use fiox_job::{Action, Invocation, OutputFormat};
use fiox_runner::RunOptions;
use output::Out;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match std::panic::catch_unwind(|| real_main(&args)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            if output::is_broken_pipe(&e) {
                0
            } else {
                eprintln!("fiox: {e:#}");
                1
            }
        }
        // The panic message was already printed by the default hook.
        Err(_) => {
            eprintln!("fiox: internal error (a bug); please report it with the command line");
            1
        }
    };
    std::process::exit(code);
}

fn real_main(args: &[String]) -> Result<i32> {
    if args.first().map(String::as_str) == Some("quick") {
        return quick::main(&args[1..]);
    }
    let inv = fiox_job::parse_invocation(args)?;
    let mut stdout = std::io::stdout().lock();
    match &inv.action {
        Action::Version => writeln!(stdout, "{}", fiox_report::normal::version_line())?,
        Action::InflateLog(path) => {
            // fio's --inflate-log: the text of a log stored with log_store_compressed.
            let data = std::fs::read(path).with_context(|| format!("--inflate-log: {path}"))?;
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
                eprintln!("fiox: {line}");
            }
            return Ok(1);
        }
        Action::NoJobs(usage, why) => {
            // fio: usage on stdout, "No job(s) defined" on stderr, exit 1.
            write!(stdout, "{usage}")?;
            stdout.flush()?;
            eprintln!("No job(s) defined: {why}");
            return Ok(1);
        }
        Action::ParseOnly => {
            // The jobs parsed; say which of them fiox would refuse to run, and why. A script
            // checking a job file with --parse-only must not take "will not run" for a pass.
            let refusals = inv.refusals();
            for line in inv.notes().iter().chain(&refusals) {
                eprintln!("fiox: {line}");
            }
            if !refusals.is_empty() {
                return Ok(1);
            }
        }
        Action::Run => {
            drop(stdout);
            for note in inv.notes() {
                eprintln!("fiox: {note}");
            }
            // Jobs using fio features fiox cannot execute are refused before any I/O.
            let refusals = inv.refusals();
            if !refusals.is_empty() {
                for line in &refusals {
                    eprintln!("fiox: {line}");
                }
                return Ok(1);
            }
            return run(&inv);
        }
    }
    stdout.flush()?;
    Ok(0)
}

/// Run the jobs and print every requested report; returns the exit code.
fn run(inv: &Invocation) -> Result<i32> {
    let s = &inv.settings;
    let formats = if s.output_formats.is_empty() {
        vec![OutputFormat::Normal]
    } else {
        s.output_formats.clone()
    };
    let out = Out::open(s.output.as_deref())?;
    let only_normal = formats.iter().all(|f| *f == OutputFormat::Normal);
    // fio prints the header with the normal report only; beside a machine format on stdout it
    // goes to stderr, and a machine format alone gets none (as fio).
    let mut header = String::new();
    for job in &inv.jobs {
        match job.clone_index {
            0 => header.push_str(&fiox_report::normal::job_header_line(job)),
            1 => header.push_str("...\n"),
            _ => {}
        }
    }
    header.push_str(&fiox_report::normal::version_line());
    header.push('\n');
    header.push_str(&fiox_runner::starting_line(&inv.jobs));
    header.push('\n');
    if only_normal {
        out.write_early(&header)?;
    } else if formats.contains(&OutputFormat::Normal) {
        eprint!("{header}");
    }
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    let opts = RunOptions {
        messages: true,
        readonly: s.readonly,
        eta: s.eta,
        status_interval: s.status_interval,
        global_options: inv.global_options.clone(),
        max_jobs: s.max_jobs,
        allow_destructive: s.allow_destructive,
        bandwidth_log: s.bandwidth_log,
        eta_interval: s.eta_interval,
        eta_newline: s.eta_newline,
        trigger: fiox_runner::Trigger {
            file: s.trigger_file.clone().map(Into::into),
            timeout: s.trigger_timeout,
            cmd: s.trigger_cmd.clone(),
        },
    };
    let status_out = out.clone();
    let status_formats = formats.clone();
    let tv = s.terse_version;
    let mut on_status = move |snap: &fiox_stats::RunResult| {
        let _ = status_out.write(&output::status_text(snap, &status_formats, tv));
    };
    let outcome = fiox_runner::run(&inv.jobs, &opts, &mut on_status);
    if outcome.interrupted {
        eprintln!("fiox: interrupted: reporting what was measured so far");
    }
    for e in &outcome.errors {
        eprintln!("fiox: {e}");
    }
    let warnings = fiox_report::warnings_text(&outcome.result);
    if !warnings.is_empty() {
        eprint!("{warnings}");
    }
    for f in &formats {
        // With status reports, JSON stays one object per line to the end (valid JSON Lines).
        let text = if s.status_interval.is_some() {
            output::status_text(&outcome.result, &[*f], tv)
        } else {
            output::report_text(&outcome.result, *f, tv)
        };
        out.write(&text)?;
    }
    out.flush()?;
    let lost = out.failure();
    if let Some(why) = &lost {
        eprintln!("fiox: {why}");
    }
    Ok(if outcome.interrupted {
        130
    } else if outcome.errors.is_empty() && lost.is_none() {
        0
    } else {
        1
    })
}
