//! The subcommands' command line (`fiox quick|plot|compare|testbed|experiment|env|history|man ...`), parsed
//! by clap; fio's own command line (switches, job options, job files) keeps fiox-job's
//! hand-written parser, which fio compatibility needs. `--help` prints clap's help on stdout
//! and exits 0; a usage error prints clap's message (with a suggestion for a misspelt switch)
//! on stderr and exits 1, as every other fiox error does. The subcommands' one-line
//! descriptions come from `fiox_job::help::SUBCOMMANDS`, which `fiox --help` lists too.

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Subcommand};

/// The subcommands; each variant's arguments are defined beside its code.
#[derive(Debug, Subcommand)]
pub enum Sub {
    Quick(crate::quick::QuickArgs),
    Plot(fiox_plot::cli::PlotArgs),
    Compare(crate::compare::CompareArgs),
    Testbed(crate::testbed::TestbedArgs),
    Experiment(crate::experiment::ExperimentArgs),
    Env(crate::experiment::EnvArgs),
    History(crate::history::HistoryArgs),
    Man(ManArgs),
}

/// What `fiox man` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Generated {
    /// The man page (roff), as docs/fiox.1
    Page,
    /// bash's completion script, as completions/fiox.bash
    Bash,
    /// zsh's, as completions/_fiox
    Zsh,
    /// fish's, as completions/fiox.fish
    Fish,
}

/// `fiox man`'s command line.
#[derive(Debug, clap::Args)]
#[command(after_help = "For users of `cargo install`, who have no checkout: \
`fiox man | man -l -` reads the page; `fiox man > ~/.local/share/man/man1/fiox.1`, \
`fiox man bash > ~/.local/share/bash-completion/completions/fiox`, `fiox man zsh > \
SITE-FUNCTIONS/_fiox` and `fiox man fish > ~/.config/fish/completions/fiox.fish` install them.")]
pub struct ManArgs {
    /// What to print: page (the default), bash, zsh or fish
    #[arg(value_name = "WHAT", value_enum, default_value_t = Generated::Page, hide_default_value = true)]
    pub what: Generated,
}

/// A parser for `fiox SUBCOMMAND ...` only.
#[derive(Debug, clap::Parser)]
#[command(name = "fiox", disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    sub: Sub,
}

/// The clap command of every subcommand, with its description from `SUBCOMMANDS`, built
/// (so `--help` is among each one's arguments): for parsing, the man page and completions.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    for s in fiox_job::help::SUBCOMMANDS {
        cmd = cmd.mut_subcommand(s.name, |c| c.about(s.about));
    }
    cmd.build();
    cmd
}

/// Whether `word` (the first argument) names a subcommand.
pub fn is_subcommand(word: &str) -> bool {
    fiox_job::help::SUBCOMMANDS.iter().any(|s| s.name == word)
}

/// Parse `args` (starting with the subcommand's name); clap's error for `--help` too.
fn parse(args: &[String]) -> Result<Sub, clap::Error> {
    let argv = std::iter::once("fiox").chain(args.iter().map(String::as_str));
    let m = command().try_get_matches_from(argv)?;
    Ok(Cli::from_arg_matches(&m)?.sub)
}

/// The exit code after clap's `e`: 0 for `--help`, 1 for a usage error.
fn exit_code(e: &clap::Error) -> i32 {
    if e.use_stderr() {
        1
    } else {
        0
    }
}

/// Run the subcommand `args[0]`; returns the exit code. `man` is `fiox man` (the generators
/// read this module's command, so they are handed in rather than named: no module cycle).
pub fn run(args: &[String], man: fn(ManArgs) -> Result<i32>) -> Result<i32> {
    let sub = match parse(args) {
        Ok(s) => s,
        Err(e) => {
            // Help goes to stdout, errors to stderr (a closed stdout is not an error here).
            let _ = e.print();
            return Ok(exit_code(&e));
        }
    };
    match sub {
        Sub::Quick(a) => crate::quick::main(a),
        Sub::Plot(a) => Ok(fiox_plot::cli::run(a)?),
        Sub::Compare(a) => crate::compare::main(a),
        Sub::Testbed(a) => crate::testbed::main(a),
        Sub::Experiment(a) => crate::experiment::main(a),
        Sub::Env(a) => crate::experiment::env_main(a),
        Sub::History(a) => crate::history::main(a),
        Sub::Man(a) => man(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_listed_subcommand_is_parsed_with_its_description() {
        let cmd = command();
        let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
        let listed: Vec<&str> = fiox_job::help::SUBCOMMANDS.iter().map(|s| s.name).collect();
        assert_eq!(names, listed);
        for s in fiox_job::help::SUBCOMMANDS {
            let c = cmd.find_subcommand(s.name).unwrap();
            assert_eq!(c.get_about().map(|a| a.to_string()), Some(s.about.into()));
        }
    }

    #[test]
    fn usage_errors_exit_1_and_help_exits_0() {
        let code = |v: &[&str]| parse(&words(v)).err().map(|e| exit_code(&e));
        assert_eq!(code(&["quick", "--sise=1g"]), Some(1));
        assert_eq!(code(&["compare", "--alpha=2", "a", "b"]), Some(1));
        assert_eq!(code(&["testbed"]), Some(1));
        assert_eq!(code(&["testbed", "down"]), Some(1));
        assert_eq!(code(&["experiment"]), Some(1));
        assert_eq!(code(&["env", "--help"]), Some(0));
        assert_eq!(code(&["testbed", "up", "--help"]), Some(0));
        assert!(matches!(
            parse(&words(&["compare", "--output-format", "md", "a", "b"])),
            Ok(Sub::Compare(_))
        ));
        assert!(matches!(
            parse(&words(&[
                "testbed", "up", "loop", "--dio=on", "--size", "8m"
            ])),
            Ok(Sub::Testbed(_))
        ));
    }
}
