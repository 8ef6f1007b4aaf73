//! `fiox experiment FILE.toml` (variants x repetitions on managed testbeds, results directory
//! with a manifest, resume) and `fiox env` (what a result needs to be trusted or reproduced).
//! The work is in fiox-experiment; this file parses switches, wires Ctrl-C and prints.

use anyhow::{bail, Context, Result};
use fiox_experiment::{compare, env, load, run};
use fiox_job::help::Flag;
use std::path::{Path, PathBuf};

const USAGE: &str = "usage: fiox experiment FILE.toml [--repeat=N] [--runtime=SECONDS] \
                     [--out=DIR] [--variant=NAME]\n  Results go to DIR (default FILE-results): \
                     one JSON per run and manifest.json; running again resumes.";

/// The switches of `fiox experiment`, for the man page and the completions.
pub const FLAGS: &[Flag] = &[
    Flag {
        long: "repeat",
        short: None,
        value: Some("N"),
        choices: &[],
        help: "Runs per variant (overrides the file)",
    },
    Flag {
        long: "runtime",
        short: None,
        value: Some("SECONDS"),
        choices: &[],
        help: "Runtime of each run (overrides the file)",
    },
    Flag {
        long: "out",
        short: None,
        value: Some("DIR"),
        choices: &[],
        help: "Results directory (default FILE-results)",
    },
    Flag {
        long: "variant",
        short: None,
        value: Some("NAME"),
        choices: &[],
        help: "Run only this variant",
    },
    Flag {
        long: "help",
        short: Some('h'),
        value: None,
        choices: &[],
        help: "Print this text",
    },
];

/// The switches of `fiox env`.
pub const ENV_FLAGS: &[Flag] = &[
    Flag {
        long: "json",
        short: None,
        value: None,
        choices: &[],
        help: "As JSON",
    },
    Flag {
        long: "help",
        short: Some('h'),
        value: None,
        choices: &[],
        help: "Print this text",
    },
];

/// `fiox experiment`; returns the exit code.
pub fn main(args: &[String]) -> Result<i32> {
    let mut file = None;
    let (mut out, mut repeat, mut runtime, mut variant) = (None, None, None, None);
    let mut w = fiox_job::help::Words::new(args);
    while let Some(key) = w.next_key() {
        let a = w.word();
        let mut value = || -> Result<String> {
            w.value()
                .map(str::to_string)
                .with_context(|| format!("{key} needs a value"))
        };
        match key {
            "-h" | "--help" => {
                println!("{USAGE}\n\n{}", fiox_job::help::flags_text(FLAGS));
                return Ok(0);
            }
            "--out" => out = Some(PathBuf::from(value()?)),
            "--repeat" => {
                let v = value()?;
                repeat = Some(
                    v.parse::<u32>()
                        .ok()
                        .filter(|n| *n > 0)
                        .with_context(|| format!("--repeat={v}: expected a count above 0"))?,
                );
            }
            "--runtime" => runtime = Some(value()?),
            "--variant" => variant = Some(value()?),
            k if k.starts_with('-') => bail!("unknown switch {k}\n{USAGE}"),
            _ if file.is_none() => file = Some(PathBuf::from(a)),
            _ => bail!("one experiment file at a time ({a:?} too)\n{USAGE}"),
        }
    }
    let Some(file) = file else {
        bail!("{USAGE}");
    };
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
    if outcome.interrupted {
        eprintln!(
            "fiox: interrupted after {} run(s); run the same command again to resume",
            outcome.runs_done
        );
        return Ok(130);
    }
    eprintln!("fiox: results in {}", outcome.out.display());
    print_comparison(&outcome.out)?;
    Ok(0)
}

/// The comparison of the results directory's variants, as `fiox compare DIR` prints it.
fn print_comparison(out: &Path) -> Result<()> {
    let sides = load::load_sides(out)?;
    let sides: Vec<_> = sides.into_iter().filter(|s| !s.runs.is_empty()).collect();
    if sides.len() >= 2 {
        let c = compare::compare(&sides, 0.05);
        let wanted: Vec<String> = compare::DEFAULT_METRICS
            .iter()
            .map(|m| m.to_string())
            .collect();
        print!("{}", compare::to_text(&c, &wanted));
    }
    Ok(())
}

/// `fiox env [PATH...] [--json]`: the environment, with PATHs' devices and filesystems.
pub fn env_main(args: &[String]) -> Result<i32> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!(
            "usage: fiox env [--json] [TARGET...]\n  The machine, and each TARGET (file, \
             directory or device), as results record them.\n\n{}",
            fiox_job::help::flags_text(ENV_FLAGS)
        );
        return Ok(0);
    }
    let json = args
        .iter()
        .any(|a| a == "--json" || a == "--output-format=json");
    let paths: Vec<&Path> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(Path::new)
        .collect();
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
        println!("{}", serde_json::to_string_pretty(&e)?);
    } else {
        print!("{}", env::text(&e));
    }
    Ok(0)
}
