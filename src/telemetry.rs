//! `--telemetry[=MS]` on a fio command line: system telemetry (fiox-experiment's sampler)
//! around the run, for the jobs' targets and the devices below them; reported under
//! `fiox.telemetry` in JSON and as a block after the normal report. Off by default, so plain
//! fio command lines run and print exactly as fio's.

use anyhow::{bail, Result};
use fiox_experiment::telemetry::{devices_for, Sampler};
use fiox_job::JobSpec;
use std::path::Path;
use std::time::Duration;

/// Remove `--telemetry` / `--telemetry=MS` from `args`; returns the rest and the interval.
pub fn take_switch(args: &[String]) -> Result<(Vec<String>, Option<Duration>)> {
    let mut rest = Vec::with_capacity(args.len());
    let mut every = None;
    for a in args {
        if a == "--telemetry" {
            every = Some(Duration::from_secs(1));
        } else if let Some(v) = a.strip_prefix("--telemetry=") {
            match v.parse::<u64>() {
                Ok(ms) if ms > 0 => every = Some(Duration::from_millis(ms)),
                _ => bail!("--telemetry={v}: expected a sampling interval in milliseconds above 0"),
            }
        } else {
            rest.push(a.clone());
        }
    }
    Ok((rest, every))
}

/// Start sampling the system and the devices under the jobs' files and directories.
pub fn start(jobs: &[JobSpec], every: Duration) -> Sampler {
    let mut devices: Vec<String> = Vec::new();
    for j in jobs {
        let paths = j.files.filenames.iter().chain(&j.files.directories);
        let mut found: Vec<String> = paths.flat_map(|p| devices_for(Path::new(p))).collect();
        if j.files.filenames.is_empty() && j.files.directories.is_empty() {
            found = devices_for(Path::new("."));
        }
        for d in found {
            if !devices.contains(&d) {
                devices.push(d);
            }
        }
    }
    Sampler::start(devices, every)
}
