//! From a thread's record to a job's phases: per direction, the mean time per I/O spent in
//! the submitting syscall on and off CPU, queued in the block layer, at the device, and from
//! completion to being reaped by fiox, fiox's own time on and off CPU between syscalls (sync
//! engines), with the rest (whatever the tracepoints cannot see) shown as such, so that the phases add up to the mean latency
//! fiox measured. Percentiles come from the programs' log2 histograms (interpolated inside
//! a bucket, so they are estimates to within a factor of two). Also the normal report's block.

use crate::layout::*;
use crate::Record;
use serde_json::{json, Map, Value};

/// What fiox measured for a job: its thread and, for read and write, I/Os and mean latency.
#[derive(Debug, Clone)]
pub struct JobInput {
    pub name: String,
    pub tid: u32,
    pub dirs: [(u64, f64); 2],
}

const PHASE_NAMES: [&str; 8] = [
    "submit_on_cpu",
    "submit_off_cpu",
    "block_queued",
    "device",
    "completion_to_reaped",
    "fiox_on_cpu",
    "fiox_off_cpu",
    "other",
];

/// How a thread's I/Os end: inside the syscall (sync engines: the return is the completion,
/// and fiox's own time between calls is its own phase), reaped by a syscall (the time from
/// completion to reaping measured, fiox's own time inside it), or unknown.
enum Reaping {
    InCall,
    Measured(f64),
    Unmeasured,
}

impl Record {
    fn g(&self, i: usize) -> u64 {
        self.0.get(i).copied().unwrap_or(0)
    }

    fn d(&self, dir: usize, f: usize) -> u64 {
        self.g(DIR_BASE + dir * DIR_WORDS + f)
    }

    fn hist(&self, dir: usize, ph: usize) -> Vec<u64> {
        let base = HIST_BASE + (dir * PHASES + ph) * BUCKETS;
        (0..BUCKETS).map(|b| self.g(base + b)).collect()
    }
}

/// The value at percentile `p` (0..100) of a log2 histogram, interpolated inside its bucket.
pub fn percentile(h: &[u64], p: f64) -> Option<f64> {
    let total: u64 = h.iter().sum();
    if total == 0 {
        return None;
    }
    let want = (p / 100.0 * total as f64).max(1.0);
    let mut seen = 0.0;
    for (b, &c) in h.iter().enumerate() {
        if c == 0 {
            continue;
        }
        if seen + c as f64 >= want {
            // Bucket 0 holds 0 and 1 ns: read as 0 (an empty phase).
            if b == 0 {
                return Some(0.0);
            }
            let (lo, hi) = { ((1u64 << b) as f64, (1u128 << (b + 1)) as f64) };
            return Some(lo + (hi - lo) * (want - seen) / c as f64);
        }
        seen += c as f64;
    }
    None
}

fn pcts(h: &[u64]) -> Value {
    let mut m = Map::new();
    for p in [50.0, 90.0, 99.0] {
        if let Some(v) = percentile(h, p) {
            m.insert(format!("{p:.6}"), json!(v.round() as u64));
        }
    }
    Value::Object(m)
}

/// Completion->reaped per I/O for the thread, when the programs paired (nearly) every I/O's
/// completion with its reaping; unmeasured when too few were paired (io_uring's completions,
/// read from the ring without a syscall).
fn reaping(r: &Record, n_total: u64) -> Reaping {
    if r.g(G_REAPED) == 0 {
        return if r.g(G_TAIL) == 0 {
            Reaping::InCall
        } else {
            Reaping::Unmeasured
        };
    }
    let n = r.g(G_C2R_N);
    if n > 0 && n * 10 >= n_total * 9 {
        Reaping::Measured(r.g(G_C2R_NS) as f64 / n as f64)
    } else {
        Reaping::Unmeasured
    }
}

/// A job's `explain` object (`jobs[].fiox.explain`), from its thread's record.
pub fn explain_job(job: &JobInput, rec: Option<&Record>) -> Value {
    let Some(r) = rec else {
        return json!({"error": "the job's thread left no trace (it did no I/O while traced)"});
    };
    let n_total: u64 = job.dirs.iter().map(|d| d.0).sum();
    let reap = reaping(r, n_total);
    let per_io = |word: usize| r.g(word) as f64 / n_total.max(1) as f64;
    let mut out = Map::new();
    out.insert("tid".into(), json!(job.tid));
    for (di, dname) in ["read", "write"].iter().enumerate() {
        let (n, lat) = job.dirs[di];
        if n == 0 {
            continue;
        }
        // io_uring_enter's batches have no direction: shared by the I/Os' mix.
        let share = n as f64 / n_total.max(1) as f64;
        let f = |field: usize| r.d(di, field) as f64 + r.d(2, field) as f64 * share;
        let per = |field: usize| f(field) / n as f64;
        let (c2r, fiox_on, fiox_off) = match reap {
            Reaping::InCall => (0.0, per_io(G_USER), per_io(G_USER_OFF)),
            Reaping::Measured(c) => (c, 0.0, 0.0),
            Reaping::Unmeasured => (0.0, 0.0, 0.0),
        };
        let mut means = [
            per(D_ON),
            per(D_OFF),
            per(D_Q2D),
            per(D_D2C),
            c2r,
            fiox_on,
            fiox_off,
            0.0,
        ];
        let measured: f64 = means[..7].iter().sum();
        means[7] = lat - measured;
        let hists = [
            Some(r.hist(di, H_SUBMIT_ON)),
            Some(r.hist(di, H_SUBMIT_OFF)),
            Some(r.hist(di, H_QUEUED)),
            Some(r.hist(di, H_DEVICE)),
            None,
            None,
            None,
            None,
        ];
        let phases: Vec<Value> = PHASE_NAMES
            .iter()
            .zip(means)
            .zip(&hists)
            .map(|((name, mean), h)| {
                let mut p = json!({"name": name, "mean_ns": mean.round() as i64});
                if let Some(h) = h {
                    p["percentiles"] = pcts(h);
                }
                match (*name, &reap) {
                    ("completion_to_reaped", Reaping::Unmeasured) => {
                        p["note"] = json!("not measured: fewer than 90% of the I/Os were seen completing and being reaped (io_uring reads its completions without a syscall); counted in other");
                    }
                    ("fiox_on_cpu" | "fiox_off_cpu", Reaping::Measured(_)) => {
                        p["note"] = json!("inside completion_to_reaped: fiox's own time overlaps the other I/Os in flight");
                    }
                    _ => {}
                }
                p
            })
            .collect();
        out.insert(
            dname.to_string(),
            json!({
                "ios": n,
                "lat_mean_ns": lat.round() as i64,
                "phases": phases,
                "measured_ns": measured.round() as i64,
                "measured_pct": if lat > 0.0 { (measured / lat * 1000.0).round() / 10.0 } else { 0.0 },
                "submit": {
                    "calls": f(D_CALLS).round() as u64,
                    "ios": f(D_IOS).round() as u64,
                    "syscall_mean_ns": (per(D_RAWSYS)).round() as u64,
                    "off_cpu_mean_ns": (per(D_RAWOFF)).round() as u64,
                    "block_inside_mean_ns": (per(D_BLKIN)).round() as u64,
                    "waits": {
                        "blocked": f(D_WAIT_D).round() as u64,
                        "sleeping": f(D_WAIT_S).round() as u64,
                        "preempted": f(D_WAIT_R).round() as u64,
                    },
                },
                "block": {
                    "requests": f(D_REQS).round() as u64,
                    "merges": f(D_MERGES).round() as u64,
                    "splits": f(D_SPLITS).round() as u64,
                },
            }),
        );
    }
    let reap_calls = r.g(G_REAP_CALLS);
    out.insert(
        "reap".into(),
        json!({
            "calls": reap_calls,
            "events": r.g(G_REAPED),
            "mean_ns": r.g(G_REAP_NS).checked_div(reap_calls).unwrap_or(0),
            "off_cpu_mean_ns": r.g(G_REAP_OFF).checked_div(reap_calls).unwrap_or(0),
            "completions_paired": r.g(G_C2R_N),
            "completions_lost": r.g(G_LOST),
        }),
    );
    let mut wk = Map::new();
    for (k, name) in ["io_uring", "kworker", "other"].iter().enumerate() {
        let runs = r.g(G_WK_RUNS + k);
        if runs == 0 {
            continue;
        }
        let ns = r.g(G_WK_NS + k);
        wk.insert(
            name.to_string(),
            json!({
                "runs": runs,
                "cpu_ns": ns,
                "cpu_ns_per_io": ns.checked_div(n_total).unwrap_or(0),
                "runs_per_io": (runs as f64 / n_total.max(1) as f64 * 1000.0).round() / 1000.0,
            }),
        );
    }
    out.insert("workers".into(), Value::Object(wk));
    out.insert(
        "fiox_user_cpu_ns_per_io".into(),
        json!(r.g(G_USER).checked_div(n_total).unwrap_or(0)),
    );
    out.insert(
        "fiox_preempted_ns_per_io".into(),
        json!(r.g(G_USER_OFF).checked_div(n_total).unwrap_or(0)),
    );
    Value::Object(out)
}

fn us(ns: f64) -> String {
    if ns.abs() >= 1e6 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.1}us", ns / 1e3)
    }
}

/// The normal report's block: per job and direction, the mean latency as its phases.
/// `jobs`: (name, explain object); `error`: why there are no phases, when tracing failed.
pub fn text_block(jobs: &[(String, Value)], error: Option<&str>) -> String {
    let mut s = String::from("\nfiox explain (kernel tracepoints: where the mean latency went)\n");
    if let Some(e) = error {
        s.push_str(&format!("  not available: {e}\n"));
        return s;
    }
    for (name, v) in jobs {
        if let Some(e) = v.get("error").and_then(Value::as_str) {
            s.push_str(&format!("  {name}: {e}\n"));
            continue;
        }
        for dir in ["read", "write"] {
            let Some(d) = v.get(dir) else { continue };
            let lat = d["lat_mean_ns"].as_f64().unwrap_or(0.0);
            let parts: Vec<String> = d["phases"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| {
                            let m = p["mean_ns"].as_f64().unwrap_or(0.0);
                            let pct = if lat > 0.0 { m / lat * 100.0 } else { 0.0 };
                            format!(
                                "{} {} ({pct:.0}%)",
                                p["name"].as_str().unwrap_or("?"),
                                us(m)
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            s.push_str(&format!(
                "  {name} {dir}: lat {} =\n    {}\n",
                us(lat),
                parts.join(" + ")
            ));
            let w = &d["submit"]["waits"];
            let b = &d["block"];
            s.push_str(&format!(
                "    submit calls={} off-CPU waits: blocked={} sleeping={} preempted={}; block requests={} merges={} splits={}\n",
                d["submit"]["calls"], w["blocked"], w["sleeping"], w["preempted"],
                b["requests"], b["merges"], b["splits"]
            ));
        }
        if let Some(wk) = v.get("workers").and_then(Value::as_object) {
            if !wk.is_empty() {
                let parts: Vec<String> = wk
                    .iter()
                    .map(|(k, w)| {
                        format!(
                            "{k} {} CPU/IO in {} runs",
                            us(w["cpu_ns_per_io"].as_f64().unwrap_or(0.0)),
                            w["runs"]
                        )
                    })
                    .collect();
                s.push_str(&format!(
                    "  {name}: threads woken for it: {}\n",
                    parts.join(", ")
                ));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_interpolates_inside_a_bucket() {
        let mut h = vec![0u64; BUCKETS];
        h[10] = 100; // [1024, 2048)
        let p50 = percentile(&h, 50.0).unwrap();
        assert!((1500.0..1600.0).contains(&p50), "{p50}");
        assert!(percentile(&vec![0; BUCKETS], 50.0).is_none());
    }

    #[test]
    fn phases_add_up_to_the_mean_latency() {
        let mut w = vec![0u64; WORDS];
        let base = DIR_BASE; // read
        w[base + D_ON] = 1000 * 10;
        w[base + D_OFF] = 500 * 10;
        w[base + D_Q2D] = 100 * 10;
        w[base + D_D2C] = 8000 * 10;
        w[base + D_REQS] = 10;
        let job = JobInput {
            name: "j".into(),
            tid: 1,
            dirs: [(10, 10_000.0), (0, 0.0)],
        };
        let v = explain_job(&job, Some(&Record(w)));
        let ph = v["read"]["phases"].as_array().unwrap();
        let sum: i64 = ph.iter().map(|p| p["mean_ns"].as_i64().unwrap()).sum();
        assert_eq!(sum, 10_000);
        assert_eq!(ph[3]["mean_ns"], 8000);
        assert_eq!(ph[7]["mean_ns"], 400);
        assert!(v.get("write").is_none());
        let t = text_block(&[("j".into(), v)], None);
        assert!(t.contains("device 8.0us (80%)"), "{t}");
    }
}
