//! `fiox experiment FILE.toml` (variants x repetitions on managed testbeds, results directory
//! with a manifest, resume) and `fiox env` (what a result needs to be trusted or reproduced).
//! The work is in fiox-experiment; this file parses switches, wires Ctrl-C and prints.

use anyhow::{bail, Context, Result};
use fiox_experiment::{compare, env, load, run};
use std::path::{Path, PathBuf};

/// `fiox experiment`'s command line.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Results go to DIR (default FILE-results): one JSON per run and \
manifest.json; running again resumes. Every key of FILE.toml, with its type, default and an \
example: docs/experiments.md, \"The experiment file: every key\" \
(examples/experiments/ has files to start from)."
)]
pub struct ExperimentArgs {
    /// The experiment file (TOML)
    #[arg(value_name = "FILE.toml")]
    file: PathBuf,
    /// Runs per variant (overrides the file)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    repeat: Option<u32>,
    /// Runtime of each run (overrides the file)
    #[arg(long, value_name = "SECONDS")]
    runtime: Option<String>,
    /// Results directory (default FILE-results)
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run only this variant
    #[arg(long, value_name = "NAME")]
    variant: Option<String>,
    /// Do not record the runs in the history (fiox history)
    #[arg(long)]
    no_history: bool,
}

/// What `fiox env` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EnvFormat {
    Normal,
    Json,
}

/// `fiox env`'s command line.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The machine, and each TARGET (file, directory or device), as results \
record them."
)]
pub struct EnvArgs {
    /// Files, directories or devices to describe
    #[arg(value_name = "TARGET")]
    targets: Vec<PathBuf>,
    /// As JSON
    #[arg(long)]
    json: bool,
    /// normal or json (as --json)
    #[arg(long, value_name = "FORMAT", value_enum)]
    output_format: Option<EnvFormat>,
}

/// `fiox experiment`; returns the exit code.
pub fn main(args: ExperimentArgs) -> Result<i32> {
    let ExperimentArgs {
        file,
        out,
        repeat,
        runtime,
        variant,
        no_history,
    } = args;
    let experiment_file = file.clone();
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    let interrupted = fiox_runner::interrupted;
    let opts = run::Options {
        file,
        out,
        repeat,
        runtime,
        variant,
        fiox_exe: std::env::current_exe().context("finding the fiox binary")?,
        version: env!("CARGO_PKG_VERSION").into(),
        commit: env!("FIOX_COMMIT").into(),
        command_line: std::env::args().collect(),
        interrupted: &interrupted,
    };
    let outcome = run::run(&opts)?;
    // What finished is recorded, also after an interruption (a resume adds the rest).
    if !no_history {
        crate::history::record_experiment(&outcome.out, &experiment_file)?;
    }
    if outcome.interrupted {
        fiox_guard::eprintln!(
            "fiox: interrupted after {} run(s); run the same command again to resume",
            outcome.runs_done
        );
        return Ok(130);
    }
    fiox_guard::eprintln!("fiox: results in {}", outcome.out.display());
    print_comparison(&outcome.out)?;
    if outcome.runs_failed > 0 {
        fiox_guard::eprintln!(
            "fiox: {} run(s) failed and are not recorded (their messages are beside the \
             results, runs/*.stderr); run the same command again to re-run them",
            outcome.runs_failed
        );
    }
    // As fio's exit status counts failed jobs: the number of failed runs (0: all recorded).
    Ok(outcome.runs_failed.min(255) as i32)
}

/// The comparison of the results directory's variants, as `fiox compare DIR` prints it.
fn print_comparison(out: &Path) -> Result<()> {
    let sides = load::load_sides(out)?;
    let sides: Vec<_> = sides.into_iter().filter(|s| !s.runs.is_empty()).collect();
    if sides.len() >= 2 {
        let c = compare::compare(&sides, &compare::Options::default())?;
        fiox_guard::print!("{}", compare::to_text(&c));
    }
    Ok(())
}

/// `fiox env [TARGET...] [--json]`: the environment, with the targets' devices and filesystems.
pub fn env_main(args: EnvArgs) -> Result<i32> {
    let json = args.json || args.output_format == Some(EnvFormat::Json);
    let paths: Vec<&Path> = args.targets.iter().map(PathBuf::as_path).collect();
    for p in &paths {
        if !p.exists() {
            bail!("fiox env: {} does not exist", p.display());
        }
    }
    let cmd: Vec<String> = std::env::args().collect();
    let e = env::collect(
        &paths,
        (env!("CARGO_PKG_VERSION"), env!("FIOX_COMMIT")),
        &cmd,
    );
    if json {
        fiox_guard::println!("{}", serde_json::to_string_pretty(&e)?);
    } else {
        fiox_guard::print!("{}", env::text(&e));
    }
    Ok(0)
}
