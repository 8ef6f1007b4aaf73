//! Everything fio 3.33 accepts on its command line, fiox accepts too: each switch `fio --help`
//! lists (and the few more in fio's getopt table), each option `fio --cmdhelp=all` lists and
//! each option of every engine `fio --enghelp` lists. "Accepted" means it parses; where fiox
//! cannot run it, `--parse-only` exits 1 with a "not supported yet" line naming it (a job fio
//! runs and fails, fiox too: exit 0 and a note, as in fio).
//!
//! Option sample values are checked with fio itself first (`fio --parse-only` must take them),
//! so the test compares like with like. fio must be installed (the test fails naming it).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use fiox_job::defs::{self, Kind, OptDef};
use harness::*;
use std::process::Command;

/// fio's output for `args` (the test fails, naming the package, when fio is not installed),
/// or None when fio could not be started.
fn fio(args: &[&str]) -> Option<(i32, String)> {
    need_fio();
    let out = Command::new("fio").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some((out.status.code().unwrap_or(-1), text))
}

/// Switches fio's getopt table has but `--help` does not list.
const UNLISTED_SWITCHES: &[&str] = &["append-terse", "eta-interval", "memcpytest"];

/// A value for each switch fio lists (None = the switch takes none).
/// The log `--inflate-log` reads (made by the test): one zlib stream of no samples, which fio
/// 3.33 inflates to nothing (an empty file is its "short read on reading log").
const INFLATE_INPUT: &str = "/tmp/fiox-accept-inflate.log.fz";

fn switch_value(name: &str) -> Option<&'static str> {
    Some(match name {
        "debug" => "io,file",
        "output" => "/dev/null",
        "output-format" => "json",
        "terse-version" => "3",
        "cmdhelp" => "bs",
        "enghelp" => "io_uring",
        "eta" => "never",
        "eta-newline" | "eta-interval" | "status-interval" => "1",
        "section" => "x",
        "alloc-size" => "16384",
        "max-jobs" => "4",
        "server" => "localhost",
        "daemonize" => "/tmp/fiox-accept-test.pid",
        "client" => "localhost",
        "remote-config" => "x.fio",
        "idle-prof" => "system",
        // A regular file: inputs are read from regular files only (issue 40's H1-H3).
        "inflate-log" => INFLATE_INPUT,
        "trigger-file" => "/tmp/fiox-accept-trigger",
        "trigger-timeout" => "10",
        "trigger" | "trigger-remote" => "true",
        "aux-path" => "/tmp",
        // The self-tests run instead of the jobs (tests/selftests.rs checks their output):
        // short ones.
        "crctest" => "md5",
        "memcpytest" => "memcpy",
        _ => return None,
    })
}

/// fio's switch names from `fio --help` ("  --name[=value]\tdescription").
fn fio_switches(help: &str) -> Vec<String> {
    let mut names: Vec<String> = help
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .map(|l| {
            let end = l.find(|c: char| c == '=' || c.is_whitespace());
            l[..end.unwrap_or(l.len())].to_string()
        })
        .collect();
    names.extend(UNLISTED_SWITCHES.iter().map(|s| s.to_string()));
    names.sort();
    names.dedup();
    names
}

/// Exit 0, or exit 1 with every stderr line saying what is not supported yet, naming `what`.
fn accepted_or_refused(r: &Run, what: &str) -> Result<(), String> {
    let refused = r.code == 1
        && r.stderr.contains(what)
        && !r.stderr.is_empty()
        && r.stderr
            .lines()
            .all(|l| l.contains("not support yet") || l.contains("not supported yet"));
    if r.code == 0 || refused {
        Ok(())
    } else {
        Err(format!("{what}: exit {} stderr {}", r.code, r.stderr))
    }
}

#[test]
fn every_fio_switch_is_accepted() {
    need_fio();
    let Some((_, help)) = fio(&["--help"]) else {
        panic!("fio --help did not run");
    };
    let names = fio_switches(&help);
    std::fs::write(INFLATE_INPUT, [0x78, 0x9c, 0x03, 0, 0, 0, 0, 0x01]).unwrap();
    let mut failed = Vec::new();
    assert!(names.len() > 35, "fio --help lists {names:?}");
    for name in names {
        let arg = match switch_value(&name) {
            Some(v) => format!("--{name}={v}"),
            None => format!("--{name}"),
        };
        let r = fiox(&["--parse-only", &arg, "--name=x", "--size=1m"]);
        // The clock test exits 1 when it saw the clock go backwards, as fio's does.
        let clock_verdict = name == "cpuclock-test"
            && (r.stdout.ends_with("cs: Pass!\n") || r.stdout.contains("\ncs: Failed: "));
        if clock_verdict {
            continue;
        }
        if let Err(e) = accepted_or_refused(&r, &format!("--{name}")) {
            failed.push(e);
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A value of the option's type that fio accepts too (checked against fio).
fn sample(d: &OptDef) -> String {
    let special = match d.name {
        "bssplit" => "4k/50:8k/50",
        "bsrange" | "blocksize_range" => "4k-8k",
        "cpus_allowed" | "cpumask" | "cpus_allowed_policy" => "",
        "ignore_error" => "EIO",
        "wait_for" => "w",
        "random_distribution" => "zipf:1.2",
        "percentage_random" | "rwmixcycle" | "percentage_sequential" => "50",
        "buffer_pattern" | "verify_pattern" => "0xdeadbeef",
        "ioscheduler" => "none",
        "prio" => "4",
        "prioclass" => "2",
        "cmdprio_bssplit" => "4k/100",
        "numa_cpu_nodes" => "0",
        "numa_mem_policy" => "default",
        "flow_watermark" => "2",
        "latency_percentile" => "50",
        "zone_reset_threshold" | "zone_reset_frequency" => "0.5",
        "ioengine" => "psync",
        "sync_file_range" => "wait_before",
        "log_entries" => "1024",
        // fiox reads the directory when the option is parsed (fio skips that with
        // --parse-only): a small directory that is always there.
        "opendir" => "/proc/sys/kernel/random",
        // fio checks the words only when it runs (not with --parse-only).
        "replay_skip" => "write",
        "log_compression" => "1m",
        "profile" => "tiobench",
        "steadystate" | "ss" => "iops:10%",
        "merge_blktrace_iters" => "1",
        _ => "",
    };
    if !special.is_empty() {
        return special.to_string();
    }
    let lo = d.range.map_or(1, |(lo, hi)| lo.max(1).min(hi));
    match d.kind {
        Kind::Bool => "1".into(),
        Kind::Int => lo.to_string(),
        Kind::Size | Kind::SizeOrPercent => "4k".into(),
        Kind::Time(_) => "1".into(),
        Kind::Choice(c) => c[0].into(),
        Kind::Str | Kind::OptStr | Kind::Complex(_) => "1".into(),
    }
}

/// The engine to name before `d` (fio knows an engine's options only after `ioengine=`).
fn engine_of(d: &OptDef, listed_for: Option<&str>) -> Option<String> {
    listed_for
        .map(str::to_string)
        .or_else(|| d.engines.first().map(|e| e.to_string()))
}

/// Option names from `fio --cmdhelp=all` or `fio --enghelp=engine` ("name : help").
fn option_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, _)| n.trim().to_string())
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .collect()
}

/// fio's options with the engine that owns each (None = core option).
fn fio_options() -> Option<Vec<(String, Option<String>)>> {
    let (_, all) = fio(&["--cmdhelp=all"])?;
    let mut out: Vec<_> = option_names(&all).into_iter().map(|n| (n, None)).collect();
    let (_, engines) = fio(&["--enghelp"])?;
    for e in engines
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let (code, text) = fio(&[&format!("--enghelp={e}")])?;
        if code == 0 {
            out.extend(
                option_names(&text)
                    .into_iter()
                    .map(|n| (n, Some(e.to_string()))),
            );
        }
    }
    Some(out)
}

fn args_for(name: &str, engine: &Option<String>, value: &str) -> Vec<String> {
    // Job w comes first so that `wait_for=w` names an earlier job.
    let mut a = ["--parse-only", "--name=w", "--name=x"]
        .map(String::from)
        .to_vec();
    if let Some(e) = engine {
        a.push(format!("--ioengine={e}"));
    }
    a.push(format!("--{name}={value}"));
    a
}

/// fio's verdict on all the samples in one run (one job per option; 150 ms per fio start
/// would make ~450 runs slow); when it fails, the samples it rejects, one by one.
fn fio_rejects(cases: &[Vec<String>]) -> Vec<String> {
    let mut all = vec!["--parse-only".to_string(), "--name=w".to_string()];
    for (i, a) in cases.iter().enumerate() {
        all.push(format!("--name=x{i}"));
        all.extend(a[3..].iter().cloned());
    }
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    if fio(&all).is_some_and(|(code, _)| code == 0) {
        return Vec::new();
    }
    cases
        .iter()
        .filter(|a| {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            fio(&a).is_none_or(|(code, _)| code != 0)
        })
        .map(|a| a.join(" "))
        .collect()
}

#[test]
fn every_fio_option_is_accepted() {
    need_fio();
    let Some(options) = fio_options() else {
        panic!("fio --cmdhelp=all or --enghelp did not run");
    };
    assert!(options.len() > 300, "fio lists {} options", options.len());
    let mut unknown = Vec::new();
    let mut cases = Vec::new();
    for (name, listed_for) in &options {
        let Some(d) = defs::lookup(name).or_else(|| defs::fio_only::lookup(name)) else {
            unknown.push(name.clone());
            continue;
        };
        let engine = engine_of(d, listed_for.as_deref());
        cases.push((name, engine.clone(), args_for(name, &engine, &sample(d))));
    }
    assert!(unknown.is_empty(), "fiox does not know {unknown:?}");
    let args: Vec<Vec<String>> = cases.iter().map(|c| c.2.clone()).collect();
    let bad_samples = fio_rejects(&args);
    assert!(bad_samples.is_empty(), "fio rejects {bad_samples:#?}");
    let mut failed = Vec::new();
    for (name, engine, a) in &cases {
        let r = fiox(&a.iter().map(String::as_str).collect::<Vec<_>>());
        if r.code == 0 {
            continue;
        }
        // Refused: every line says "not supported yet", naming the option or its engine.
        let what = match engine {
            Some(e) if !r.stderr.contains(&format!("`{name}")) => format!("`{e}`"),
            _ => format!("`{name}"),
        };
        if let Err(e) = accepted_or_refused(&r, &what) {
            failed.push(format!("{a:?}: {e}"));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
