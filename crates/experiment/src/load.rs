//! Loading results into samples: a fio-shaped JSON document (fiox's, or fio 3.33's own, also
//! with text before it or several status objects in one file, of which the last counts) becomes
//! one [`Run`]: per job name, the metrics compare reports. Jobs sharing a name (numjobs clones
//! without group_reporting) are merged: IOPS, bandwidth and context switches add up, latencies
//! are weighted by each clone's I/O count. The telemetry summary under the top-level `fiox` key
//! become metrics of the pseudo-job `(system)`. A side is a file, a directory of JSON files, or
//! an experiment results directory (one side per variant, from its manifest).

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Errors while loading results.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("reading {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {why}", path.display())]
    Format { path: PathBuf, why: String },
}

/// Metrics of one job in one run, by metric name ("read.iops", "ctx", ...).
pub type JobMetrics = BTreeMap<String, f64>;

/// One run's results.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub source: PathBuf,
    /// Job name -> metrics.
    pub jobs: BTreeMap<String, JobMetrics>,
    /// The `fiox.env` section, when the run recorded one.
    pub env: Option<Value>,
    /// Completion latency per "job/direction": json+ histograms merged over clones, or else
    /// the reported percentiles.
    pub latency: BTreeMap<String, LatDist>,
    /// Job name -> its options as the result lists them (global options, then the job's).
    pub options: BTreeMap<String, BTreeMap<String, String>>,
    /// The experiment round (the manifest's run index) when the run belongs to one: runs of
    /// two variants with the same round ran next to each other and can be paired.
    pub round: Option<u64>,
    /// The program and release that made it (`fio version`: "fio-3.33", "fiox-0.1.0").
    pub tool: Option<String>,
}

/// One run's latency distribution of a job and direction.
#[derive(Debug, Clone, PartialEq)]
pub enum LatDist {
    /// fio's json+ `bins`: latency in ns -> count.
    Bins(BTreeMap<u64, u64>),
    /// Percentile (e.g. 99.9) -> latency in ns, I/O-weighted over clones.
    Percentiles(BTreeMap<String, f64>),
}

/// The runs of one side of a comparison.
#[derive(Debug, Clone)]
pub struct Side {
    pub name: String,
    pub runs: Vec<Run>,
    /// The side this one is compared against, when the experiment file names one
    /// (`baseline =`); else the first side.
    pub baseline: Option<String>,
}

/// Whether a larger value of `metric` is better (IOPS, bandwidth) or worse (latency, CPU,
/// context switches); `None` for telemetry, where neither is implied.
pub fn higher_is_better(metric: &str) -> Option<bool> {
    let last = metric.rsplit('.').next().unwrap_or(metric);
    if metric.starts_with("telemetry.") {
        None
    } else if last == "iops" || last == "bw_mib" {
        Some(true)
    } else {
        Some(false)
    }
}

/// Parse one results file.
pub fn load_run(path: &Path) -> Result<Run, LoadError> {
    // Only a regular file, and not without bound: a FIFO named *.json in a results
    // directory blocked compare for ever.
    let text =
        fiox_guard::input::read_text(path, fiox_guard::input::RESULT_MAX).map_err(|source| {
            LoadError::Io {
                path: path.to_path_buf(),
                source,
            }
        })?;
    let doc = last_json_object(&text).ok_or_else(|| LoadError::Format {
        path: path.to_path_buf(),
        why: if text.contains("NaN") || text.contains("Infinity") {
            "holds NaN or Infinity, which JSON cannot carry: no valid JSON object with a \"jobs\" array".into()
        } else if let Some(problem) = fiox_report::json_problem(&text) {
            problem
        } else {
            "no JSON object with a \"jobs\" array (make it with --output-format=json)".into()
        },
    })?;
    Ok(run_from_value(path, &doc))
}

/// The last JSON object with "jobs" in `text` (fio's result; text around it is skipped).
fn last_json_object(text: &str) -> Option<Value> {
    fiox_report::json_objects(text)
        .into_iter()
        .rfind(|v| v.get("jobs").is_some_and(Value::is_array))
}

/// Build a run from a parsed fio-shaped document.
pub fn run_from_value(path: &Path, doc: &Value) -> Run {
    let mut acc: BTreeMap<String, Acc> = BTreeMap::new();
    let mut latency = BTreeMap::new();
    let mut options = BTreeMap::new();
    for job in doc["jobs"].as_array().into_iter().flatten() {
        let name = job["jobname"].as_str().unwrap_or("?").to_string();
        add_latency(&mut latency, &name, job);
        options
            .entry(name.clone())
            .or_insert_with(|| job_options(doc, job));
        acc.entry(name).or_default().add(job);
    }
    finish_latency(&mut latency);
    let mut jobs: BTreeMap<String, JobMetrics> =
        acc.into_iter().map(|(k, a)| (k, a.finish())).collect();
    // The host's telemetry, and in a guest (`vm =`) the guest's own beside it: the guest's
    // env describes the guest's target devices, `env.host` the host's.
    let env = &doc["fiox"]["env"];
    let host_env = if env.get("host").is_some() {
        &env["host"]
    } else {
        env
    };
    let sources = [
        (&doc["fiox"]["telemetry"]["summary"], "telemetry.", host_env),
        (
            &doc["fiox"]["guest_telemetry"]["summary"],
            "telemetry.guest.",
            env,
        ),
    ];
    let mut system = JobMetrics::new();
    for (summary, prefix, env) in sources {
        let roles = device_roles(env);
        for (k, v) in summary.as_object().into_iter().flatten() {
            if let Some(x) = v.as_f64() {
                system.insert(format!("{prefix}{}", by_role(k, &roles)), x);
            }
        }
    }
    // The page cache of the loop devices' backing files after the run (`fiox.backing_cache`:
    // the host's, or in a guest run the guest's own loop devices').
    if let Some(b) = doc["fiox"]["backing_cache"].as_array() {
        let kb: f64 = b
            .iter()
            .filter_map(|d| d["cached_bytes"].as_f64())
            .sum::<f64>()
            / 1024.0;
        let prefix = if env.get("host").is_some() {
            "telemetry.guest."
        } else {
            "telemetry."
        };
        system
            .entry(format!("{prefix}loop_backing_cached_kb"))
            .or_insert(kb);
    }
    if !system.is_empty() {
        jobs.insert("(system)".into(), system);
    }
    let env = doc["fiox"].get("env").cloned();
    Run {
        source: path.to_path_buf(),
        jobs,
        env,
        latency,
        options,
        round: None,
        tool: doc["fio version"].as_str().map(String::from),
    }
}

/// Device name -> its role for the first target's devices in a run's environment: the target
/// itself, then the devices below it (a partition's disk, a loop device's backing disk) as
/// below1, below2... Loop numbers change between runs and variants; roles line up.
fn device_roles(env: &Value) -> BTreeMap<String, String> {
    let devices = env["targets"][0]["devices"].as_array();
    devices
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, d)| {
            let role = if i == 0 {
                "target".to_string()
            } else {
                format!("below{i}")
            };
            Some((d["name"].as_str()?.to_string(), role))
        })
        .collect()
}

/// "disk.loop3.read_ios" -> "disk.target.read_ios" when loop3 has a role.
fn by_role(key: &str, roles: &BTreeMap<String, String>) -> String {
    let mut parts = key.splitn(3, '.');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("disk"), Some(dev), Some(rest)) if roles.contains_key(dev) => {
            format!("disk.{}.{rest}", roles[dev])
        }
        _ => key.to_string(),
    }
}

/// A job's options as strings: the document's global options overridden by the job's own.
fn job_options(doc: &Value, job: &Value) -> BTreeMap<String, String> {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), String::from);
    [&doc["global options"], &job["job options"]]
        .into_iter()
        .filter_map(Value::as_object)
        .flat_map(|o| o.iter().map(|(k, v)| (k.clone(), text(v))))
        .collect()
}

/// Merge one job's completion-latency distributions into `out` (clones add up).
fn add_latency(out: &mut BTreeMap<String, LatDist>, name: &str, job: &Value) {
    for dir in ["read", "write", "trim"] {
        let d = &job[dir];
        let ios = d["total_ios"].as_f64().unwrap_or(0.0);
        if ios <= 0.0 {
            continue;
        }
        let key = format!("{name}/{dir}");
        if let Some(bins) = d["clat_ns"]["bins"].as_object() {
            let entry = out
                .entry(key)
                .or_insert_with(|| LatDist::Bins(BTreeMap::new()));
            if let LatDist::Bins(b) = entry {
                for (k, v) in bins {
                    if let (Ok(k), Some(v)) = (k.parse::<u64>(), v.as_u64()) {
                        *b.entry(k).or_default() += v;
                    }
                }
            }
        } else if let Some(p) = d["clat_ns"]["percentile"].as_object() {
            // Clones: weight each clone's percentiles by its I/O count (divided out below).
            let entry = out
                .entry(key)
                .or_insert_with(|| LatDist::Percentiles(BTreeMap::new()));
            if let LatDist::Percentiles(m) = entry {
                let w = m.entry("_ios".into()).or_default();
                *w += ios;
                for (k, v) in p {
                    *m.entry(k.clone()).or_default() += v.as_f64().unwrap_or(0.0) * ios;
                }
            }
        }
    }
}

/// Divide the I/O-weighted percentile sums by their weights.
fn finish_latency(out: &mut BTreeMap<String, LatDist>) {
    for dist in out.values_mut() {
        if let LatDist::Percentiles(m) = dist {
            if let Some(w) = m.remove("_ios") {
                m.values_mut().for_each(|v| *v /= w);
            }
        }
    }
}

/// What the clones of one job name add up to. A metric is missing (not 0) when a clone that
/// did I/O in that direction lacks the field: `None` marks it.
#[derive(Default)]
struct Acc {
    /// Metrics that add up over clones (IOPS, bandwidth, context switches, errors).
    sums: BTreeMap<String, Option<f64>>,
    /// Metrics averaged over clones weighted by I/O count: (value, ios) per clone.
    weighted: BTreeMap<String, Option<Vec<(f64, f64)>>>,
    ios: f64,
    /// The longest clone's run time (ms): clones run side by side.
    runtime_ms: f64,
}

/// The CPU time of the clones (µs) among the sums, divided by the I/Os at the end.
const CPU_US: &str = "_cpu_us";

const PCTS: [(&str, &str); 3] = [
    ("lat_p50_us", "50.000000"),
    ("lat_p99_us", "99.000000"),
    ("lat_p999_us", "99.900000"),
];

/// Add `v` to the sum under `key`; a missing value makes the sum missing for good.
fn add_sum(m: &mut BTreeMap<String, Option<f64>>, key: String, v: Option<f64>) {
    let e = m.entry(key).or_insert(Some(0.0));
    *e = e.zip(v).map(|(a, b)| a + b);
}

/// Add (value, weight) under `key`; a missing value makes the mean missing for good.
fn add_weighted(
    m: &mut BTreeMap<String, Option<Vec<(f64, f64)>>>,
    key: String,
    v: Option<f64>,
    w: f64,
) {
    let e = m.entry(key).or_insert_with(|| Some(Vec::new()));
    match (e.as_mut(), v) {
        (Some(list), Some(v)) => list.push((v, w)),
        _ => *e = None,
    }
}

/// The weighted mean of (value, weight) pairs; exactly the value when all are equal (one
/// clone, or clones reporting the same bin), so fio's quantised percentiles stay ties.
fn weighted_mean(list: &[(f64, f64)]) -> Option<f64> {
    let first = list.first()?.0;
    if list.iter().all(|(v, _)| *v == first) {
        return Some(first);
    }
    let w: f64 = list.iter().map(|(_, w)| w).sum();
    (w > 0.0).then(|| list.iter().map(|(v, w)| v * w).sum::<f64>() / w)
}

impl Acc {
    fn add(&mut self, job: &Value) {
        for dir in ["read", "write", "trim"] {
            let d = &job[dir];
            let ios = d["total_ios"].as_f64().unwrap_or(0.0);
            if ios <= 0.0 {
                continue;
            }
            self.ios += ios;
            add_sum(&mut self.sums, format!("{dir}.iops"), num(&d["iops"]));
            // fio's "bw" is KiB/s.
            let bw = num(&d["bw"]).map(|b| b / 1024.0);
            add_sum(&mut self.sums, format!("{dir}.bw_mib"), bw);
            let us = |v: &Value| num(v).map(|ns| ns / 1e3);
            let w = &mut self.weighted;
            add_weighted(
                w,
                format!("{dir}.lat_mean_us"),
                us(&d["lat_ns"]["mean"]),
                ios,
            );
            add_weighted(
                w,
                format!("{dir}.slat_mean_us"),
                us(&d["slat_ns"]["mean"]),
                ios,
            );
            let pct = if d["lat_ns"]["percentile"].is_object() {
                &d["lat_ns"]["percentile"]
            } else {
                &d["clat_ns"]["percentile"]
            };
            for (metric, key) in PCTS {
                add_weighted(w, format!("{dir}.{metric}"), us(&pct[key]), ios);
            }
            // --explain's phases (`read.explain.device_us`...): which phase an A/B moved.
            let phases = job["fiox"]["explain"][dir]["phases"].as_array();
            for p in phases.into_iter().flatten() {
                if let Some(name) = p["name"].as_str() {
                    let key = format!("{dir}.explain.{name}_us");
                    add_weighted(w, key, us(&p["mean_ns"]), ios);
                }
            }
        }
        add_sum(&mut self.sums, "ctx".into(), num(&job["ctx"]));
        self.runtime_ms = self.runtime_ms.max(num(&job["job_runtime"]).unwrap_or(0.0));
        // fio's `total_err` (with continue_on_error) counts failed I/Os; without it `error` is
        // the errno that ended the job: one error.
        let errors = num(&job["total_err"])
            .or_else(|| num(&job["error"]).map(|e| if e != 0.0 { 1.0 } else { 0.0 }));
        if job.get("total_err").is_some() || job.get("error").is_some() {
            add_sum(&mut self.sums, "errors".into(), errors);
        }
        let cpu_pct = num(&job["usr_cpu"])
            .zip(num(&job["sys_cpu"]))
            .map(|(u, s)| u + s);
        let cpu = cpu_pct
            .zip(num(&job["job_runtime"]))
            .map(|(c, rt)| c / 100.0 * rt * 1e3);
        add_sum(&mut self.sums, CPU_US.into(), cpu);
    }

    fn finish(mut self) -> JobMetrics {
        let cpu_us = self.sums.remove(CPU_US).flatten();
        let mut m: JobMetrics = self
            .sums
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .collect();
        for (k, list) in self.weighted {
            if let Some(v) = list.as_deref().and_then(weighted_mean) {
                m.insert(k, v);
            }
        }
        if let Some(cpu) = cpu_us.filter(|_| self.ios > 0.0) {
            m.insert("cpu_us_per_io".into(), cpu / self.ios);
        }
        // Context switches per I/O (a submission that blocks switches once per I/O; seed
        // 001's "ctx -50%") and per second (comparable across runs of different length).
        if let Some(ctx) = m.get("ctx").copied() {
            if self.ios > 0.0 {
                m.insert("ctx_per_io".into(), ctx / self.ios);
            }
            if self.runtime_ms > 0.0 {
                m.insert("ctx_per_s".into(), ctx / (self.runtime_ms / 1e3));
            }
        }
        m
    }
}

/// A number, or `None` when the field is missing or not a number.
fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// The sides named by one command-line argument: a file is one side; a directory with a
/// `manifest.json` is one side per variant; any other directory is one side of its `*.json`.
pub fn load_sides(arg: &Path) -> Result<Vec<Side>, LoadError> {
    let io = |source| LoadError::Io {
        path: arg.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(arg).map_err(io)?;
    let name = arg
        .file_name()
        .map_or_else(|| arg.display().to_string(), |n| n.to_string_lossy().into());
    if meta.is_file() {
        return Ok(vec![Side {
            name: name.trim_end_matches(".json").to_string(),
            runs: vec![load_run(arg)?],
            baseline: None,
        }]);
    }
    let manifest = arg.join("manifest.json");
    if manifest.exists() {
        return load_manifest(arg, &manifest);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(arg)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(LoadError::Format {
            path: arg.to_path_buf(),
            why: "directory holds no .json results and no manifest.json".into(),
        });
    }
    let runs = files
        .iter()
        .map(|p| load_run(p))
        .collect::<Result<_, _>>()?;
    Ok(vec![Side {
        name,
        runs,
        baseline: None,
    }])
}

/// One side per variant of an experiment results directory, in the manifest's variant order;
/// only completed, measured (not warm-up) runs count.
fn load_manifest(dir: &Path, manifest: &Path) -> Result<Vec<Side>, LoadError> {
    let bad = |why: String| LoadError::Format {
        path: manifest.to_path_buf(),
        why,
    };
    let text = fiox_guard::input::read_text(manifest, fiox_guard::input::RESULT_MAX).map_err(
        |source| LoadError::Io {
            path: manifest.to_path_buf(),
            source,
        },
    )?;
    let m: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let variants = m["variants"]
        .as_array()
        .ok_or_else(|| bad("no \"variants\" array".into()))?;
    let mut sides = Vec::new();
    for v in variants {
        let vname = v
            .as_str()
            .ok_or_else(|| bad("variant is not a string".into()))?;
        let mut runs = Vec::new();
        for r in m["runs"].as_array().into_iter().flatten() {
            let done = r["status"] == "done" && r["warmup"] != true;
            if done && r["variant"] == vname {
                let file = r["file"]
                    .as_str()
                    .ok_or_else(|| bad("run without file".into()))?;
                let mut run = load_run(&dir.join(file))?;
                run.round = r["index"].as_u64();
                runs.push(run);
            }
        }
        sides.push(Side {
            name: vname.to_string(),
            runs,
            baseline: m["baselines"][vname].as_str().map(String::from),
        });
    }
    Ok(sides)
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clones_merge_and_text_before_json_is_skipped() {
        let job = |iops: f64, mean: f64| {
            json!({"jobname": "rr", "ctx": 10, "usr_cpu": 10.0, "sys_cpu": 40.0,
                   "job_runtime": 1000,
                   "read": {"total_ios": 100, "iops": iops, "bw": 2048.0,
                            "lat_ns": {"mean": mean},
                            "clat_ns": {"percentile": {"50.000000": 1000, "99.000000": 4000,
                                                       "99.900000": 8000}}},
                   "write": {"total_ios": 0}})
        };
        let doc = json!({"jobs": [job(100.0, 1000.0), job(300.0, 3000.0)]});
        let lat = run_from_value(Path::new("x"), &doc).latency;
        assert_eq!(
            lat["rr/read"],
            LatDist::Percentiles(
                [
                    ("50.000000", 1000.0),
                    ("99.000000", 4000.0),
                    ("99.900000", 8000.0)
                ]
                .map(|(k, v)| (k.to_string(), v))
                .into()
            )
        );
        let text = format!("fio: some note\n{doc}\n");
        let dir = std::env::temp_dir().join(format!("fiox-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.json");
        std::fs::write(&f, text).unwrap();
        let run = load_run(&f).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let m = &run.jobs["rr"];
        assert_eq!(m["read.iops"], 400.0);
        assert_eq!(m["read.bw_mib"], 4.0);
        assert_eq!(m["read.lat_mean_us"], 2.0);
        assert_eq!(m["read.lat_p99_us"], 4.0);
        assert_eq!(m["ctx"], 20.0);
        // 20 switches over 200 I/Os and over 1 s (the clones ran side by side).
        assert_eq!((m["ctx_per_io"], m["ctx_per_s"]), (0.1, 20.0));
        // 50% of 1 s on each of two clones over 200 I/Os.
        assert_eq!(m["cpu_us_per_io"], 5000.0);
        assert!(!m.contains_key("write.iops"));
    }

    #[test]
    fn explain_phases_are_metrics() {
        let doc = json!({"jobs": [{"jobname": "e", "ctx": 0, "error": 0,
            "read": {"total_ios": 10, "iops": 1.0, "bw": 1.0, "lat_ns": {"mean": 9000.0}},
            "fiox": {"explain": {"read": {"phases": [
                {"name": "device", "mean_ns": 8000}, {"name": "other", "mean_ns": 1000}]}}}}]});
        let m = &run_from_value(Path::new("x"), &doc).jobs["e"];
        assert_eq!(m["read.explain.device_us"], 8.0);
        assert_eq!(m["read.explain.other_us"], 1.0);
        assert_eq!(higher_is_better("read.explain.device_us"), Some(false));
    }

    #[test]
    fn missing_fields_stay_missing_and_percentiles_stay_exact() {
        // No lat_ns (the report's D4): no read.lat_mean_us rather than 0; fio's integer
        // percentile 37120 ns stays 37.12 µs whatever the I/O count (D7b).
        let doc = json!({"jobs": [{"jobname": "j", "ctx": 0, "error": 0,
            "read": {"total_ios": 9527741, "iops": 1.0, "bw": 1.0,
                     "clat_ns": {"percentile": {"99.000000": 37120}}}}]});
        let m = &run_from_value(Path::new("x"), &doc).jobs["j"];
        assert!(!m.contains_key("read.lat_mean_us"), "{m:?}");
        assert_eq!(m["read.lat_p99_us"], 37.12);
        assert_eq!(m["errors"], 0.0);
        assert!(!m.contains_key("cpu_us_per_io"), "{m:?}");
        // A failed job counts one error; fio's total_err counts them all.
        let doc = json!({"jobs": [{"jobname": "j", "error": 5, "read": {"total_ios": 0}},
                                   {"jobname": "j", "error": 0, "total_err": 7}]});
        assert_eq!(
            run_from_value(Path::new("x"), &doc).jobs["j"]["errors"],
            8.0
        );
    }

    #[test]
    fn device_rows_are_named_by_role_not_loop_number() {
        let doc = |dev: &str| {
            json!({"jobs": [], "fiox": {
                "env": {"targets": [{"devices": [{"name": dev}, {"name": "vda"}]}]},
                "telemetry": {"summary": {format!("disk.{dev}.read_ios"): 5.0,
                                          "disk.vda.read_ios": 7.0, "ctxt": 1.0}}}})
        };
        let a = run_from_value(Path::new("a"), &doc("loop3"));
        let b = run_from_value(Path::new("b"), &doc("loop7"));
        let (ma, mb) = (&a.jobs["(system)"], &b.jobs["(system)"]);
        assert_eq!(ma["telemetry.disk.target.read_ios"], 5.0);
        assert_eq!(mb["telemetry.disk.target.read_ios"], 5.0);
        assert_eq!(ma["telemetry.disk.below1.read_ios"], 7.0);
        assert_eq!(ma["telemetry.ctxt"], 1.0);
        // A run in a guest: the host's rows by the host's devices, the guest's beside them.
        let vm = json!({"jobs": [], "fiox": {
            "env": {"targets": [{"devices": [{"name": "vda"}]}],
                    "host": {"targets": [{"devices": [{"name": "loop9"}]}]}},
            "telemetry": {"summary": {"disk.loop9.read_ios": 3.0}},
            "guest_telemetry": {"summary": {"disk.vda.read_ios": 4.0, "ctxt": 9.0}}}});
        let g = &run_from_value(Path::new("g"), &vm).jobs["(system)"];
        assert_eq!(g["telemetry.disk.target.read_ios"], 3.0);
        assert_eq!(g["telemetry.guest.disk.target.read_ios"], 4.0);
        assert_eq!(g["telemetry.guest.ctxt"], 9.0);
    }

    #[test]
    fn a_loop_devices_backing_cache_is_a_row_of_the_host_or_the_guest() {
        let cache = json!([{"device": "loop0", "cached_bytes": 2048}, {"cached_bytes": 1024}]);
        let host = json!({"jobs": [], "fiox": {"env": {}, "backing_cache": cache}});
        let h = &run_from_value(Path::new("h"), &host).jobs["(system)"];
        assert_eq!(h["telemetry.loop_backing_cached_kb"], 3.0);
        let guest = json!({"jobs": [], "fiox": {"env": {"host": {}}, "backing_cache": cache}});
        let g = &run_from_value(Path::new("g"), &guest).jobs["(system)"];
        assert_eq!(g["telemetry.guest.loop_backing_cached_kb"], 3.0);
        assert!(!g.contains_key("telemetry.loop_backing_cached_kb"));
    }
}
