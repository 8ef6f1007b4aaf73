//! fio reads its command line with getopt_long_only, so a single dash works as two:
//! `-name=t -ioengine=psync -thread` (TiDB's and many vendors' documented commands) are the
//! long options `--name=t ...`, and a word that names no long option but begins with one of
//! fio's one-letter switches is that switch with the rest as its value (`-ofile` is
//! `--output=file`, `-d parse` is `--debug=parse`, `-w` is `--warnings-fatal`). This module
//! rewrites each single-dash word into its `--long[=value]` form before the command line is
//! read, so every form goes through one parser.

use crate::error::{JobError, Location};

/// fio 3.33's one-letter switches (the `val` of its getopt table), each with the long switch
/// it stands for. Whether it takes a value is the long switch's business: `-o file` and
/// `-ofile` become `--output file` and `--output=file`, which the parser reads as fio does.
const SHORT: &[(char, &str)] = &[
    ('o', "output"),
    ('l', "latency-log"),
    ('b', "bandwidth-log"),
    ('m', "minimal"),
    ('F', "output-format"),
    ('f', "append-terse"),
    ('v', "version"),
    ('h', "help"),
    ('c', "cmdhelp"),
    ('i', "enghelp"),
    ('s', "showcmd"),
    ('r', "readonly"),
    ('e', "eta"),
    ('O', "eta-interval"),
    ('E', "eta-newline"),
    ('d', "debug"),
    ('P', "parse-only"),
    ('x', "section"),
    ('X', "inflate-log"),
    ('a', "alloc-size"),
    ('p', "profile"),
    ('w', "warnings-fatal"),
    ('j', "max-jobs"),
    ('V', "terse-version"),
    ('S', "server"),
    ('D', "daemonize"),
    ('C', "client"),
    ('R', "remote-config"),
    ('T', "cpuclock-test"),
    ('G', "crctest"),
    ('M', "memcpytest"),
    ('I', "idle-prof"),
    ('L', "status-interval"),
    ('W', "trigger-file"),
    ('B', "trigger-timeout"),
    ('H', "trigger"),
    ('J', "trigger-remote"),
    ('K', "aux-path"),
    ('A', "merge-blktrace-only"),
];

/// The `--` form of a word written with one dash (`-` alone, stdin, is not one).
/// `known(name)`: whether a long switch or option has this name.
pub fn long_form(arg: &str, known: &dyn Fn(&str) -> bool) -> Result<String, JobError> {
    let body = &arg[1..];
    let name = body.split_once('=').map_or(body, |(n, _)| n);
    let mut chars = body.chars();
    let short = chars
        .next()
        .and_then(|c| SHORT.iter().find(|(s, _)| *s == c));
    let rest = chars.as_str();
    // A long name wins (getopt_long_only tries it first); so does a word no letter explains,
    // which the parser then names as an unknown option, with a suggestion.
    if body.chars().count() > 1 && (known(name) || short.is_none()) {
        return Ok(format!("-{arg}"));
    }
    match short {
        Some((_, long)) if rest.is_empty() => Ok(format!("--{long}")),
        Some((_, long)) => Ok(format!("--{long}={rest}")),
        None => Err(JobError::new(
            Location::CommandLine,
            format!("unknown switch '{arg}' (options are written --name=value or -name=value)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(arg: &str) -> Result<String, String> {
        let known = |n: &str| ["name", "ioengine", "thread", "bs", "output"].contains(&n);
        long_form(arg, &known).map_err(|e| e.to_string())
    }

    #[test]
    fn single_dash_long_options_and_fios_letters() {
        assert_eq!(long("-name=t").unwrap(), "--name=t");
        assert_eq!(long("-ioengine=psync").unwrap(), "--ioengine=psync");
        assert_eq!(long("-thread").unwrap(), "--thread");
        assert_eq!(long("-bs=4k").unwrap(), "--bs=4k");
        assert_eq!(long("-output").unwrap(), "--output");
        assert_eq!(long("-v").unwrap(), "--version");
        assert_eq!(long("-w").unwrap(), "--warnings-fatal");
        assert_eq!(long("-d").unwrap(), "--debug");
        assert_eq!(long("-dparse").unwrap(), "--debug=parse");
        assert_eq!(long("-ofile.json").unwrap(), "--output=file.json");
        // No letter explains it: the parser names the unknown option.
        assert_eq!(long("-nmae=t").unwrap(), "--nmae=t");
        let e = long("-y").unwrap_err();
        assert_eq!(
            e,
            "command line: unknown switch '-y' (options are written --name=value or -name=value)"
        );
    }

    #[test]
    fn every_letter_stands_for_a_switch_fiox_reads() {
        for (c, name) in SHORT {
            let known =
                crate::cli::SWITCHES.contains(name) || crate::cli::VALUE_SWITCHES.contains(name);
            assert!(known, "-{c}: --{name} is not a switch");
        }
    }
}
