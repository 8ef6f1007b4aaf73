//! `--telemetry[=MS]` on a fio command line: system telemetry (fiox-experiment's sampler)
//! around the run, for the jobs' targets and the devices below them; reported under
//! `fiox.telemetry` in JSON and as a block after the normal report, with `fiox env`'s
//! description of the machine and the targets under `fiox.env`. Off by default, so plain
//! fio command lines run and print exactly as fio's.

use fiox_experiment::telemetry::{devices_for, Sampler};
use fiox_job::JobSpec;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The jobs' targets: their files and directories (the current directory for jobs naming
/// neither), each once.
fn targets(jobs: &[JobSpec]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for j in jobs {
        let mut paths: Vec<PathBuf> = j
            .files
            .filenames
            .iter()
            .chain(&j.files.directories)
            .map(PathBuf::from)
            .collect();
        if paths.is_empty() {
            paths.push(PathBuf::from("."));
        }
        for p in paths {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Start sampling the system and the devices under the jobs' targets.
pub fn start(jobs: &[JobSpec], every: Duration) -> Sampler {
    let mut devices: Vec<String> = Vec::new();
    for d in targets(jobs).iter().flat_map(|p| devices_for(p)) {
        if !devices.contains(&d) {
            devices.push(d);
        }
    }
    Sampler::start(devices, every)
}

/// `fiox env`'s description of the machine and the jobs' targets, for `fiox.env`.
pub fn env(jobs: &[JobSpec]) -> serde_json::Value {
    let t = targets(jobs);
    let refs: Vec<&Path> = t.iter().map(PathBuf::as_path).collect();
    let cmd: Vec<String> = std::env::args().collect();
    let fiox = (env!("CARGO_PKG_VERSION"), env!("FIOX_COMMIT"));
    fiox_experiment::env::collect(&refs, fiox, &cmd)
}
