//! What one recorded run holds, and how it is derived from the run's fio-shaped JSON (fiox's
//! and fio 3.33's share the shape): the metrics are those `fiox compare` reads
//! (`fiox_experiment::load::run_from_value`: per job name, clones merged), the environment is
//! `fiox.env` (kernel, CPU, fiox's build, targets), the variant is `fiox.experiment.variant`.
//! What the JSON does not say (a fio result has no host or kernel) the recorder may add: the
//! live machine's when fiox records its own run, or what `import --host/--kernel` gives.

use crate::{HistoryError, Result};
use serde_json::Value;
use std::path::Path;

/// How a run came into the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A plain `fiox JOBFILE` run with `--history` (or FIOX_HISTORY=1).
    Run,
    /// One run of `fiox experiment`.
    Experiment,
    /// One test of `fiox quick`.
    Quick,
    /// `fiox history import`.
    Import,
}

impl Source {
    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Run => "run",
            Source::Experiment => "experiment",
            Source::Quick => "quick",
            Source::Import => "import",
        }
    }
}

/// One run to record.
#[derive(Debug, Clone)]
pub struct Record {
    pub source: Source,
    /// The file an import came from.
    pub origin: Option<String>,
    /// The run's JSON, as produced.
    pub result: String,
    pub job_file: Option<String>,
    /// The command line.
    pub options: Vec<String>,
    pub experiment: Option<String>,
    pub variant: Option<String>,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub cpu: Option<String>,
    /// fiox's commit, when the result says (a fio result does not).
    pub commit: Option<String>,
    /// The result's "fio version".
    pub tool: Option<String>,
    /// Files, directories or devices the jobs used, sorted.
    pub targets: Vec<String>,
    /// `fiox.env`.
    pub env: Option<Value>,
    /// The result's timestamp (Unix seconds).
    pub run_at: Option<i64>,
    pub tags: Vec<String>,
    /// (job, metric, value).
    pub metrics: Vec<(String, String, f64)>,
}

/// The last JSON object with a "jobs" array in `text` (fio's result; text around it, and
/// status objects before it, are skipped).
pub fn result_doc(text: &str) -> Option<Value> {
    fiox_report::json_objects(text)
        .into_iter()
        .rfind(|v| v.get("jobs").is_some_and(Value::is_array))
}

impl Record {
    /// A record of the fio-shaped JSON `text`; an error when it holds no result.
    pub fn from_json(source: Source, text: String, what: &str) -> Result<Record> {
        let doc = result_doc(&text).ok_or_else(|| HistoryError::Input {
            what: what.to_string(),
            why: fiox_report::json_problem(&text).unwrap_or_else(|| {
                "no JSON object with a \"jobs\" array (fio or fiox --output-format=json)".into()
            }),
        })?;
        let run = fiox_experiment::load::run_from_value(Path::new(what), &doc);
        let metrics = run
            .jobs
            .iter()
            .flat_map(|(job, m)| m.iter().map(move |(k, v)| (job.clone(), k.clone(), *v)))
            .filter(|(_, _, v)| v.is_finite())
            .collect();
        let env = doc["fiox"].get("env").cloned();
        let s = |v: &Value| {
            v.as_str()
                .map(str::trim)
                .filter(|s| !s.is_empty() && *s != "unknown")
                .map(String::from)
        };
        let e = env.clone().unwrap_or(Value::Null);
        Ok(Record {
            source,
            origin: None,
            job_file: None,
            options: Vec::new(),
            experiment: None,
            variant: s(&doc["fiox"]["experiment"]["variant"]),
            host: s(&e["hostname"]),
            kernel: s(&e["kernel"]["release"]),
            cpu: s(&e["cpu"]["model"]),
            commit: s(&e["fiox"]["commit"]),
            tool: s(&doc["fio version"]),
            targets: targets(&doc, &e),
            run_at: doc["timestamp"].as_i64(),
            env,
            tags: Vec::new(),
            metrics,
            result: text,
        })
    }

    /// Fill what the result did not say (host, kernel, CPU) from this machine: for runs fiox
    /// records as they finish.
    pub fn on_this_machine(mut self) -> Record {
        let read = |p: &str| {
            fiox_guard::input::read_text(Path::new(p), 4096)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        self.host = self.host.or_else(|| read("/proc/sys/kernel/hostname"));
        self.kernel = self.kernel.or_else(|| read("/proc/sys/kernel/osrelease"));
        self
    }

    /// The digest that makes a result recorded twice one run (FNV-1a, 64 bits, as hex).
    pub fn digest(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.result.trim().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// The targets a result names: fiox.env's targets, else each job's filename (fio's `:`
/// separated list) or directory.
fn targets(doc: &Value, env: &Value) -> Vec<String> {
    let mut out: Vec<String> = env["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["path"].as_str().map(String::from))
        .collect();
    if out.is_empty() {
        for job in doc["jobs"].as_array().into_iter().flatten() {
            let opt = |k: &str| {
                job["job options"][k]
                    .as_str()
                    .or_else(|| doc["global options"][k].as_str())
            };
            if let Some(f) = opt("filename") {
                out.extend(f.split(':').filter(|s| !s.is_empty()).map(String::from));
            } else if let Some(d) = opt("directory") {
                out.push(d.to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}
