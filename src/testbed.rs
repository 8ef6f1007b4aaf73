//! `fiox testbed up|list|down|cleanup`: named test targets that outlive the command (loop
//! devices with direct I/O on or off, tmpfs, ramfs, mkfs'd filesystems on a fiox loop device),
//! recorded in a state directory so `down` and `cleanup` (after a kill -9) remove exactly what
//! fiox made. The work is fiox-testbed's `managed` module; this file parses switches and prints.

use anyhow::{bail, Result};
use fiox_job::help::Flag;
use fiox_testbed::managed::{self, Record, Spec, SPEC_KEYS};

const USAGE: &str = "usage: fiox testbed up KIND [--name=N] [--hold] [--KEY=VALUE...]\n       \
     fiox testbed list\n       fiox testbed down NAME...|--all\n       fiox testbed cleanup\n  \
     KIND: loop, tmpfs, ramfs, fs (mkfs on a fiox loop device) or slow (a FUSE file with a \
     per-request delay and error rate, served by a fiox process)\n  --hold: keep it only until \
     Ctrl-C (a kill -9 leaves it to `cleanup`)\n  KEY: ";

/// The switches of `fiox testbed`, for the man page and the completions.
pub const FLAGS: &[Flag] = &[
    Flag {
        long: "name",
        short: None,
        value: Some("N"),
        choices: &[],
        help: "Name of the testbed to make (up)",
    },
    Flag {
        long: "hold",
        short: None,
        value: None,
        choices: &[],
        help: "Keep it only until Ctrl-C (up)",
    },
    Flag {
        long: "all",
        short: None,
        value: None,
        choices: &[],
        help: "Remove every testbed (down)",
    },
    Flag {
        long: "help",
        short: Some('h'),
        value: None,
        choices: &[],
        help: "Print this text",
    },
];

/// Entry point; returns the exit code.
pub fn main(args: &[String]) -> Result<i32> {
    let usage = || format!("{USAGE}{SPEC_KEYS}");
    match args.first().map(String::as_str) {
        Some("up") => up(&args[1..]),
        Some("serve-slow") => serve_slow(&args[1..]),
        Some("list") => {
            for r in managed::list()? {
                println!("{}", describe(&r));
            }
            Ok(0)
        }
        Some("down") => {
            let names: Vec<String> = if args[1..].iter().any(|a| a == "--all") {
                managed::list()?.into_iter().map(|r| r.name).collect()
            } else {
                args[1..].to_vec()
            };
            if names.is_empty() {
                bail!("testbed down needs a NAME or --all\n{}", usage());
            }
            for n in names {
                managed::down(&n)?;
                eprintln!("fiox: testbed {n} removed");
            }
            Ok(0)
        }
        Some("cleanup") => {
            for n in managed::cleanup()? {
                eprintln!("fiox: testbed {n} removed (its owner is gone)");
            }
            Ok(0)
        }
        Some("-h" | "--help") => {
            println!("{}\n\n{}", usage(), fiox_job::help::flags_text(FLAGS));
            Ok(0)
        }
        _ => bail!("{}", usage()),
    }
}

fn up(args: &[String]) -> Result<i32> {
    let Some(kind) = args.first() else {
        bail!("testbed up needs a KIND\n{USAGE}{SPEC_KEYS}");
    };
    let mut name = None;
    let mut hold = false;
    let mut pairs = Vec::new();
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        if a == "--hold" {
            hold = true;
            continue;
        }
        let Some(kv) = a.strip_prefix("--") else {
            bail!("testbed up: unexpected {a:?} (options are --KEY=VALUE)");
        };
        let (k, v) = match kv.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => match it.next() {
                Some(v) => (kv.to_string(), v.clone()),
                None => bail!("testbed up: --{kv} needs a value"),
            },
        };
        if k == "name" {
            name = Some(v);
        } else {
            pairs.push((k, v));
        }
    }
    let mut spec = Spec::from_pairs(kind, &pairs)?;
    spec.server = Some(std::env::current_exe()?);
    if hold {
        // Installed before anything is made: Ctrl-C during `up` still reaches the teardown.
        fiox_runner::install_signal_handlers()?;
    }
    let rec = managed::up(&spec, name.as_deref(), !hold)?;
    println!("{}", describe(&rec));
    if hold {
        while !fiox_runner::interrupted() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        managed::down(&rec.name)?;
        eprintln!("fiox: testbed {} removed", rec.name);
    }
    Ok(0)
}

/// `testbed serve-slow --size=N --delay_us=N --error_rate=R` (started by `up slow`): serve a
/// FaultFs file, print "ready MOUNT FILE", and unmount it on SIGTERM or SIGINT.
fn serve_slow(args: &[String]) -> Result<i32> {
    use fiox_testbed::{FaultFs, FaultFsOptions};
    let mut pairs = Vec::new();
    for a in args {
        let Some((k, v)) = a.strip_prefix("--").and_then(|kv| kv.split_once('=')) else {
            bail!("testbed serve-slow: unexpected {a:?}");
        };
        pairs.push((k.to_string(), v.to_string()));
    }
    let spec = Spec::from_pairs("slow", &pairs)?;
    fiox_runner::install_signal_handlers()?;
    let fs = FaultFs::mount(FaultFsOptions {
        file_name: "slow.dat".into(),
        size: spec.size,
        delay: std::time::Duration::from_micros(spec.delay_us),
        error_rate: spec.error_rate,
        ..FaultFsOptions::default()
    })?;
    println!(
        "ready {} {}",
        fs.mount_point().display(),
        fs.file_path().display()
    );
    while !fiox_runner::interrupted() {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    fs.unmount()?;
    Ok(0)
}

/// "NAME KIND TARGET key=value..." on one line.
fn describe(r: &Record) -> String {
    let mut s = format!("{} {} {}", r.name, r.kind, r.target.display());
    for (k, v) in &r.info {
        s.push_str(&format!(" {k}={v}"));
    }
    if !r.ready {
        s.push_str(" (incomplete)");
    }
    if r.orphaned() {
        s.push_str(" (owner gone: `fiox testbed cleanup` removes it)");
    }
    s
}
