//! A fio or fiox JSON/json+ result as numbers: per job and direction the IOPS, bandwidth and
//! the `lat_ns`/`clat_ns`/`slat_ns` summaries with their percentiles and (json+) histogram
//! `bins`; the header facts (versions, time, disks, `fiox.env` when present) and the job
//! options, the job's group and runtime (which the timeline of runs is drawn from), and fiox's telemetry
//! samples (`fiox.telemetry.series`) when the run recorded them. Keys follow fio 3.33's json
//! output; anything absent is simply not shown.

use crate::error::InputError;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One result file.
#[derive(Debug, Clone)]
pub struct ResultDoc {
    pub label: String,
    pub path: PathBuf,
    /// (name, value) facts for the page header.
    pub facts: Vec<(String, String)>,
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobRes>,
    /// `fiox.telemetry.series`: (seconds since the sampler started, about when the run did;
    /// values by name), counters cumulative as the kernel reports them.
    pub telemetry: Vec<(f64, BTreeMap<String, f64>)>,
    /// The experiment variant this run belongs to (read from an experiment's manifest): runs
    /// of one variant become one bar with a confidence interval.
    pub variant: Option<String>,
}

/// One job (one clone) of a result.
#[derive(Debug, Clone)]
pub struct JobRes {
    pub name: String,
    /// `groupid`: jobs of a later group start when the earlier group is done (stonewall).
    pub group: u64,
    /// `job_runtime`: ms of measured I/O (after ramp_time).
    pub runtime_ms: f64,
    /// fiox's `fiox.io_start_unix_ms` less the run's `timestamp_ms`: seconds from the run's
    /// start to the job's first I/O (before its ramp). None in fio's JSON.
    pub io_start_s: Option<f64>,
    pub options: Vec<(String, String)>,
    pub dirs: Vec<DirRes>,
}

/// One direction of a job that did I/O.
#[derive(Debug, Clone)]
pub struct DirRes {
    pub ddir: &'static str,
    pub iops: f64,
    /// Bytes per second.
    pub bw: f64,
    pub lats: Vec<LatRes>,
    /// `fiox.explain`'s phases of this direction (name, mean ns) in their order: where the
    /// mean latency went (`--explain`). Empty without it.
    pub phases: Vec<(String, f64)>,
}

/// `lat_ns`, `clat_ns` or `slat_ns`.
#[derive(Debug, Clone)]
pub struct LatRes {
    /// "lat", "clat" or "slat".
    pub kind: &'static str,
    pub mean_ns: f64,
    /// (percent, ns), ascending.
    pub percentiles: Vec<(f64, f64)>,
    /// json+ histogram: (ns, count), ascending.
    pub bins: Vec<(f64, u64)>,
}

impl ResultDoc {
    /// Read fio's JSON tree.
    pub fn from_json(v: &Value, label: &str, path: &Path) -> Result<Self, InputError> {
        let jobs = v
            .get("jobs")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                InputError::format(
                    path,
                    "no \"jobs\" array: not a fio/fiox --output-format=json result",
                )
            })?
            .iter()
            .map(|j| job(j, v.get("timestamp_ms").and_then(Value::as_f64)))
            .collect();
        Ok(ResultDoc {
            label: label.to_string(),
            path: path.to_path_buf(),
            facts: facts(v),
            global_options: options(v.get("global options")),
            jobs,
            telemetry: telemetry(v),
            variant: None,
        })
    }

    /// A job option, falling back to the global options.
    pub fn option(&self, job: &JobRes, name: &str) -> Option<String> {
        let find =
            |o: &[(String, String)]| o.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        find(&job.options).or_else(|| find(&self.global_options))
    }
}

/// `fiox.telemetry.series` as (t, values); samples without a time are dropped.
fn telemetry(v: &Value) -> Vec<(f64, BTreeMap<String, f64>)> {
    let rows = v
        .pointer("/fiox/telemetry/series")
        .and_then(Value::as_array);
    let mut out: Vec<(f64, BTreeMap<String, f64>)> = rows
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let m = r.as_object()?;
            let t = m.get("t")?.as_f64().filter(|t| t.is_finite())?;
            let vals = m
                .iter()
                .filter(|(k, _)| *k != "t")
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64().filter(|x| x.is_finite())?)))
                .collect();
            Some((t, vals))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

fn options(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), String::from),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Header facts: fio/fiox versions, start time, disks and every `fiox.env` entry.
fn facts(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(s) = v.get("fio version").and_then(Value::as_str) {
        out.push(("version".into(), s.to_string()));
    }
    if let Some(s) = v.pointer("/fiox/version").and_then(Value::as_str) {
        out.push(("fiox version".into(), s.to_string()));
    }
    if let Some(s) = v.get("time").and_then(Value::as_str) {
        out.push(("time".into(), s.to_string()));
    }
    if let Some(env) = v.pointer("/fiox/env").and_then(Value::as_object) {
        flatten("", env, &mut out);
    }
    let disks: Vec<&str> = v
        .get("disk_util")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|d| d.get("name")?.as_str()).collect())
        .unwrap_or_default();
    if !disks.is_empty() {
        out.push(("disks".into(), disks.join(", ")));
    }
    out
}

fn flatten(prefix: &str, m: &serde_json::Map<String, Value>, out: &mut Vec<(String, String)>) {
    for (k, v) in m {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(inner) => flatten(&key, inner, out),
            Value::String(s) => out.push((key, s.clone())),
            Value::Null => {}
            other => out.push((key, other.to_string())),
        }
    }
}

/// One job; `run_start_ms`: the document's `timestamp_ms` (fiox: the run's start).
fn job(v: &Value, run_start_ms: Option<f64>) -> JobRes {
    let dirs = ["read", "write", "trim"]
        .into_iter()
        .filter_map(|d| {
            let mut r = dir(v.get(d)?, d)?;
            r.phases = phases(v.pointer(&format!("/fiox/explain/{d}/phases")));
            Some(r)
        })
        .collect();
    JobRes {
        name: v
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
        group: v.get("groupid").and_then(Value::as_u64).unwrap_or(0),
        runtime_ms: v
            .get("job_runtime")
            .and_then(Value::as_f64)
            .filter(|t| t.is_finite() && *t >= 0.0)
            .unwrap_or(0.0),
        io_start_s: v
            .pointer("/fiox/io_start_unix_ms")
            .and_then(Value::as_f64)
            .zip(run_start_ms)
            .map(|(io, run)| (io - run) / 1000.0)
            .filter(|s| s.is_finite() && *s >= 0.0),
        options: options(v.get("job options")),
        dirs,
    }
}

/// `--explain`'s phases: (name, mean_ns) of each entry that has both.
fn phases(v: Option<&Value>) -> Vec<(String, f64)> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let name = p.get("name")?.as_str()?;
            let mean = p.get("mean_ns")?.as_f64().filter(|m| m.is_finite())?;
            Some((name.to_string(), mean))
        })
        .collect()
}

fn dir(v: &Value, ddir: &'static str) -> Option<DirRes> {
    let ios = v.get("total_ios").and_then(Value::as_u64).unwrap_or(0);
    let bytes = v.get("io_bytes").and_then(Value::as_u64).unwrap_or(0);
    if ios == 0 && bytes == 0 {
        return None;
    }
    let lats = [("lat", "lat_ns"), ("clat", "clat_ns"), ("slat", "slat_ns")]
        .into_iter()
        .filter_map(|(kind, key)| lat(v.get(key)?, kind))
        .collect();
    Some(DirRes {
        ddir,
        iops: v.get("iops").and_then(Value::as_f64).unwrap_or(0.0),
        bw: v
            .get("bw_bytes")
            .and_then(Value::as_f64)
            .unwrap_or_else(|| {
                // fio's `bw` is KiB/s.
                v.get("bw").and_then(Value::as_f64).unwrap_or(0.0) * 1024.0
            }),
        lats,
        phases: Vec::new(),
    })
}

fn lat(v: &Value, kind: &'static str) -> Option<LatRes> {
    if v.get("N").and_then(Value::as_u64).unwrap_or(0) == 0 {
        return None;
    }
    let pairs = |key: &str| -> Vec<(f64, f64)> {
        let mut p: Vec<(f64, f64)> = v
            .get(key)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_f64()?)))
                    .collect()
            })
            .unwrap_or_default();
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        p
    };
    Some(LatRes {
        kind,
        mean_ns: v.get("mean").and_then(Value::as_f64).unwrap_or(0.0),
        percentiles: pairs("percentile"),
        bins: pairs("bins")
            .into_iter()
            .map(|(ns, c)| (ns, c as u64))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_directions_percentiles_and_bins() {
        let v = json!({
            "fio version": "fio-3.33",
            "global options": {"iodepth": "8"},
            "jobs": [{
                "jobname": "a",
                "job options": {"rw": "randread"},
                "read": {"io_bytes": 4096, "total_ios": 1, "iops": 10.0, "bw": 40,
                         "clat_ns": {"N": 1, "mean": 1000.0,
                                     "percentile": {"99.000000": 2000, "50.000000": 1000},
                                     "bins": {"1000": 1}},
                         "slat_ns": {"N": 0, "mean": 0.0}},
                "write": {"io_bytes": 0, "total_ios": 0}
            }]
        });
        let r = ResultDoc::from_json(&v, "r", Path::new("r.json")).unwrap();
        assert_eq!(r.facts[0], ("version".into(), "fio-3.33".into()));
        let j = &r.jobs[0];
        assert_eq!(j.dirs.len(), 1);
        assert_eq!(j.dirs[0].bw, 40.0 * 1024.0);
        let clat = &j.dirs[0].lats[0];
        assert_eq!(clat.kind, "clat");
        assert_eq!(clat.percentiles, vec![(50.0, 1000.0), (99.0, 2000.0)]);
        assert_eq!(clat.bins, vec![(1000.0, 1)]);
        assert_eq!(r.option(j, "iodepth").as_deref(), Some("8"));
        assert_eq!(r.option(j, "rw").as_deref(), Some("randread"));
    }

    #[test]
    fn a_document_without_jobs_is_refused() {
        let e = ResultDoc::from_json(&json!({"x": 1}), "r", Path::new("r.json")).unwrap_err();
        assert!(
            e.to_string().starts_with("r.json: no \"jobs\" array"),
            "{e}"
        );
    }
}
