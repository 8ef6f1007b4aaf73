//! fio's self-test switches, `--crctest`, `--memcpytest` and `--cpuclock-test`, against fio
//! 3.33 on this machine: the same lines in the same order (names, units, layout), each line
//! parsed; the rates are each tool's own, so only their form is compared.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::process::Command;

/// fio's stdout and exit status for `args`.
fn fio_out(args: &[&str]) -> (String, i32) {
    assert!(need_fio(), "fio 3.33 is needed (.ci/run installs it)");
    let o = Command::new("fio").args(args).output().expect("run fio");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

/// A rate as both tools print it: `%8.2f MiB/sec` after the separator, or `inf MiB/sec`.
fn rate_ok(r: &str) -> bool {
    r == "inf MiB/sec"
        || r.strip_suffix(" MiB/sec")
            .is_some_and(|n| n.len() >= 8 && n.trim_start().parse::<f64>().is_ok_and(|v| v >= 0.0))
}

/// The checksum names of `--crctest` output, each line checked: `name:` then one tab for
/// names of 7 characters or more, two for shorter ones, then the rate.
fn crc_names(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| {
            let (name, rest) = l.split_once(':').unwrap_or_else(|| panic!("{l:?}"));
            let tabs = if name.len() >= 7 { "\t" } else { "\t\t" };
            let rate = rest.strip_prefix(tabs).unwrap_or(rest);
            assert!(rate_ok(rate), "line {l:?}");
            name.to_string()
        })
        .collect()
}

#[test]
fn crctest_prints_fios_lines() {
    let (fio, fio_code) = fio_out(&["--crctest"]);
    let r = fiox(&["--crctest"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(fio_code, 0);
    let names = crc_names(&r.stdout);
    assert_eq!(names, crc_names(&fio), "fiox:\n{}fio:\n{fio}", r.stdout);
    assert_eq!(names.len(), 17);
    // One name: one line.
    let one = fiox(&["--crctest=crc32c"]);
    assert_eq!(one.code, 0);
    assert_eq!(crc_names(&one.stdout), ["crc32c"]);
    // A list: fio's names in fio's order; fio's `list` prints them and exits 1.
    let two = fiox(&["--crctest=sha3-224,md5"]);
    assert_eq!(crc_names(&two.stdout), ["md5", "sha3-224"]);
    let (fio_list, code) = fio_out(&["--crctest=list"]);
    let list = fiox(&["--crctest=list"]);
    assert_eq!((list.stdout.as_str(), list.code), (fio_list.as_str(), code));
    let bad = fiox(&["--crctest=md6"]);
    assert_eq!(bad.code, 1);
    assert_eq!(bad.stderr, "fiox: unknown hash `md6`. Available:\n");
    assert_eq!(bad.stdout, fio_list);
}

/// `--memcpytest` output as (method, [piece lines]), each line checked.
fn memcpy_shape(out: &str) -> Vec<(String, Vec<String>)> {
    let mut shape: Vec<(String, Vec<String>)> = Vec::new();
    for l in out.lines() {
        if let Some(piece) = l.strip_prefix('\t') {
            let (name, rest) = piece.split_once(':').unwrap_or_else(|| panic!("{l:?}"));
            assert!(name.ends_with(" bytes"), "{l:?}");
            let rate = rest.strip_prefix('\t').unwrap_or(rest);
            assert!(rate_ok(rate), "line {l:?}");
            shape
                .last_mut()
                .expect("a method line first")
                .1
                .push(name.into());
        } else {
            shape.push((l.to_string(), Vec::new()));
        }
    }
    shape
}

/// Two of the four methods (the other two copy a byte at a time: slow in a debug build);
/// `list` names all four as fio does.
#[test]
fn memcpytest_prints_fios_lines() {
    let (fio, fio_code) = fio_out(&["--memcpytest=memcpy,memmove"]);
    let r = fiox(&["--memcpytest=memcpy,memmove"]);
    assert_eq!((r.code, r.stderr.as_str(), fio_code), (0, "", 0));
    let shape = memcpy_shape(&r.stdout);
    assert_eq!(shape, memcpy_shape(&fio), "fiox:\n{}fio:\n{fio}", r.stdout);
    assert_eq!(shape.len(), 2);
    assert_eq!(shape[0].1.len(), 11);
    let (fio_list, code) = fio_out(&["--memcpytest=list"]);
    let list = fiox(&["--memcpytest=list"]);
    assert_eq!((list.stdout.as_str(), list.code), (fio_list.as_str(), code));
}

/// `--cpuclock-test`'s lines parsed: the TSC verdict, the calibration's debug lines (what
/// each names), the CPU count, the CPUs tested (in CPU order: fio prints them as its threads
/// finish), the mismatches and the verdict.
struct Clock {
    reliable: String,
    calibration: Vec<String>,
    testing: String,
    cpus: Vec<u32>,
    mismatches: usize,
    failed: Option<usize>,
}

fn parse_clock(out: &str) -> Clock {
    let mut lines = out.lines();
    let reliable = lines.next().unwrap_or_default().to_string();
    let mut calibration = Vec::new();
    let mut testing = String::new();
    for l in lines.by_ref() {
        let Some(rest) = l.strip_prefix("time     ") else {
            testing = l.to_string();
            break;
        };
        // "time     <tid> name=value[, name=value...]": the names, checked to have values.
        let (tid, text) = rest.split_once(' ').unwrap_or_else(|| panic!("{l:?}"));
        assert!(tid.trim().parse::<u32>().is_ok(), "{l:?}");
        let names: Vec<&str> = text
            .trim_start()
            .split(", ")
            .map(|kv| kv.split_once('=').unwrap_or_else(|| panic!("{l:?}")).0)
            .collect();
        calibration.push(names.join(","));
    }
    let (mut cpus, mut mismatches, mut failed, mut pass) = (Vec::new(), 0, None, false);
    while let Some(l) = lines.next() {
        if let Some(rest) = l.strip_prefix("cs: cpu") {
            let (cpu, seen) = rest.split_once(": ").unwrap_or_else(|| panic!("{l:?}"));
            assert_eq!(cpu.len(), 3, "{l:?}");
            cpus.push(cpu.trim().parse().unwrap());
            let (clocks, first) = seen.split_once(" clocks seen, first ").expect(l);
            assert!(
                clocks.parse::<u64>().is_ok() && first.parse::<u64>().is_ok(),
                "{l:?}"
            );
        } else if l.starts_with("cs: CPU clock mismatch (diff=") {
            mismatches += 1;
            for _ in 0..2 {
                let e = lines.next().unwrap_or_default();
                assert!(
                    e.starts_with("\t CPU") && e.contains(": TSC=") && e.contains(", SEQ="),
                    "{e:?}"
                );
            }
        } else if let Some(n) = l.strip_prefix("cs: Failed: ") {
            failed = Some(n.parse().unwrap());
        } else {
            assert_eq!(l, "cs: Pass!");
            pass = true;
        }
    }
    assert!(pass != failed.is_some(), "one verdict: {out}");
    cpus.sort_unstable();
    Clock {
        reliable,
        calibration,
        testing,
        cpus,
        mismatches,
        failed,
    }
}

/// fio on this project's VMs may well fail the test (its vCPUs' TSCs can disagree): only the
/// form is compared, and each tool's exit status must match its own verdict.
#[test]
fn cpuclock_test_prints_fios_lines() {
    let (fio, fio_code) = fio_out(&["--cpuclock-test"]);
    let r = fiox(&["--cpuclock-test"]);
    assert_eq!(r.stderr, "");
    let (ours, theirs) = (parse_clock(&r.stdout), parse_clock(&fio));
    assert!(
        ours.reliable == "cs: reliable_tsc: yes" || ours.reliable == "cs: reliable_tsc: no",
        "{}",
        ours.reliable
    );
    assert_eq!(ours.reliable, theirs.reliable);
    assert_eq!(ours.calibration, theirs.calibration, "{}", r.stdout);
    assert!(ours.calibration.len() > 60, "{}", r.stdout);
    assert_eq!(ours.testing, theirs.testing);
    assert_eq!(ours.cpus, theirs.cpus);
    for (c, code) in [(&ours, r.code), (&theirs, fio_code)] {
        assert_eq!(c.failed.unwrap_or(0), c.mismatches);
        assert_eq!(code, i32::from(c.failed.is_some()));
    }
}
