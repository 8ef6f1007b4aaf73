//! `--explain` on a fio command line (and `explain = true` in an experiment file): the jobs'
//! threads traced by fiox-explain while they run; per job and direction, the phases of the
//! mean latency under `jobs[].fiox.explain` in JSON and as a block after the normal report.
//! When tracing cannot start (no root, no tracefs, another architecture) the run goes on and
//! the report says why (`fiox.explain.error`). fiox's worker pool times its own queues while
//! tracing (the tracepoints do not see them): read per job thread after the run.

use fiox_explain::{explain_job, Handoff, JobInput, Sampling, Tracer};
use fiox_stats::RunResult;
use serde_json::{json, Value};

/// Whether every job's I/O syscalls are made by its own thread in calls the runner marks
/// (fiox_explain::marks::marks_of); otherwise the raw_syscalls hooks are needed, and then all
/// jobs use them.
fn all_marked(jobs: &[fiox_job::JobSpec]) -> bool {
    jobs.iter().all(|j| {
        let inline = j.io_submit_mode == fiox_job::IoSubmitMode::Inline;
        fiox_explain::marks::marks_of(j.ioengine.engine(), inline).is_some()
    })
}

/// fiox-explain's sampling for `--explain=MODE`.
fn sampling(mode: fiox_job::ExplainMode) -> Result<Sampling, String> {
    use std::time::Duration;
    match mode {
        fiox_job::ExplainMode::Sampled => Ok(Sampling::DEFAULT),
        fiox_job::ExplainMode::Full => Ok(Sampling::Full),
        fiox_job::ExplainMode::Windows {
            window_us,
            period_us,
        } => Sampling::windows(
            Duration::from_micros(window_us),
            Duration::from_micros(period_us),
        )
        .map_err(|e| format!("--explain: {e}")),
    }
}

/// Start tracing (`mode`: how), or the reason it could not start.
pub fn start(jobs: &[fiox_job::JobSpec], mode: fiox_job::ExplainMode) -> Result<Tracer, String> {
    let t = Tracer::start_sampled(!all_marked(jobs), sampling(mode)?).map_err(|e| e.to_string())?;
    fiox_engine::handoff::enable();
    Ok(t)
}

/// Stop tracing and explain each job: `{"jobs": [per job, in the result's order]}` or
/// `{"error": why}`.
pub fn finish(
    tracer: Result<Tracer, String>,
    run: &RunResult,
    jobs: &[fiox_job::JobSpec],
) -> Value {
    let tracer = match tracer {
        Ok(t) => t,
        Err(e) => return json!({ "error": e }),
    };
    let seen_by = tracer.calls_seen_by();
    let (recs, coverage) = tracer.finish_covered();
    let jobs: Vec<Value> = run
        .jobs
        .iter()
        .map(|j| {
            // Per direction: the mean latency the phases add up to, of which I/Os, how many,
            // and the whole run's. In windows the phases are of the I/Os inside them: their
            // own mean (the programs lengthen them by their cost).
            let windowed = j.explain_window_lat.filter(|_| coverage.is_sampled());
            let lats: Vec<(f64, &str, u64, f64)> = fiox_job::Ddir::ALL[..2]
                .iter()
                .enumerate()
                .map(|(i, &dd)| {
                    let d = j.dirs.get(dd);
                    let run = if d.lat.n > 0 {
                        d.lat.mean()
                    } else {
                        d.slat.mean() + d.clat.mean()
                    };
                    match windowed {
                        Some(w) if w[i].0 > 0 => {
                            (w[i].1 as f64 / w[i].0 as f64, "ios_in_windows", w[i].0, run)
                        }
                        _ => (run, "all_ios", d.total_ios, run),
                    }
                })
                .collect();
            let engine = jobs
                .iter()
                .find(|s| s.name == j.name)
                .map_or("the engine", |s| s.ioengine.as_str());
            let input = JobInput {
                name: j.name.clone(),
                engine: engine.to_string(),
                tid: j.pid,
                dirs: [
                    (j.dirs.read.total_ios, lats[0].0),
                    (j.dirs.write.total_ios, lats[1].0),
                ],
                handoff: fiox_engine::handoff::take(j.pid as i32).map(|h| Handoff {
                    queued_ns: h.queued_ns,
                    done_ns: h.done_ns,
                }),
                coverage: coverage.clone(),
            };
            let mut e = explain_job(&input, &recs);
            if let Some(o) = e.as_object_mut() {
                o.insert("calls_seen_by".into(), json!(seen_by));
            }
            for (dir, &(mean, of, n, run)) in ["read", "write"].iter().zip(&lats) {
                if let Some(d) = e.get_mut(*dir).and_then(Value::as_object_mut) {
                    d.insert("lat_mean_of".into(), json!(of));
                    d.insert("lat_mean_ios".into(), json!(n));
                    d.insert("run_lat_mean_ns".into(), json!(run.round() as i64));
                    let measured = d["measured_ns"].as_f64().unwrap_or(0.0);
                    if let Some(n) = missed_long_ios(of, mean, run, measured) {
                        d.insert("note".into(), json!(n));
                    }
                }
            }
            e
        })
        .collect();
    json!({ "jobs": jobs })
}

/// In windows, when the phases explain less than 90% of the run's mean latency, why: the
/// phases are of the I/Os seen in the windows, and the long ones (rare long waits, as a
/// throttle's once a slice, or a preemption on a loaded machine) straddle the windows' edges,
/// so the I/Os seen average less than the run's. (Seen I/Os longer than the run's are
/// expected: the programs lengthen them.)
fn missed_long_ios(of: &str, mean: f64, run: f64, measured: f64) -> Option<String> {
    if of != "ios_in_windows" || run <= 0.0 || measured >= 0.9 * run {
        return None;
    }
    let pct = 100.0 * measured / run;
    Some(if mean < 0.9 * run {
        format!(
            "the phases explain {pct:.0}% of the run's mean latency ({:.1} us): they are of the I/Os seen in the windows, which average {:.1} us; the run's longer I/Os straddle the windows' edges and are missing from them; --explain=full traces them all",
            run / 1e3,
            mean / 1e3,
        )
    } else {
        format!(
            "the phases explain {pct:.0}% of the run's mean latency ({:.1} us): the rest is in `other` (a phase's note says what was not measured); --explain=full traces every I/O",
            run / 1e3,
        )
    })
}

/// Move the per-job objects of `explain` (from [`finish`]) into the JSON document's jobs;
/// an error stays at `fiox.explain`.
pub fn place(doc: &mut Value, explain: &Value) {
    if let Some(jobs) = explain.get("jobs").and_then(Value::as_array) {
        for (i, e) in jobs.iter().enumerate() {
            if let Some(f) = doc
                .get_mut("jobs")
                .and_then(|j| j.get_mut(i))
                .and_then(|j| j.get_mut("fiox"))
                .and_then(Value::as_object_mut)
            {
                f.insert("explain".into(), e.clone());
            }
        }
    } else if let Some(f) = doc.get_mut("fiox").and_then(Value::as_object_mut) {
        f.insert("explain".into(), explain.clone());
    }
}

/// The block after the normal report.
pub fn text(run: &RunResult, explain: &Value) -> String {
    let error = explain.get("error").and_then(Value::as_str);
    let jobs: Vec<(String, Value)> = run
        .jobs
        .iter()
        .zip(
            explain
                .get("jobs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .map(|(j, v)| (j.name.clone(), v.clone()))
        .collect();
    fiox_explain::text_block(&jobs, error)
}
