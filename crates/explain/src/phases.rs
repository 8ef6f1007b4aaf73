//! From a thread's record to a job's phases: per direction, the mean time per I/O spent in
//! the submitting syscall on and off CPU, queued in the block layer, at the device, and from
//! completion to being reaped by fiox, fiox's own time on and off CPU between syscalls (sync
//! engines), with the rest (whatever the tracepoints cannot see) shown as such, so that the phases add up to the mean latency
//! fiox measured. Percentiles come from the programs' log2 histograms (interpolated inside
//! a bucket, so they are estimates to within a factor of two). Also the normal report's block.

use crate::layout::*;
use crate::{Coverage, Record, Sampling};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// What fiox measured for a job: its thread and, for read and write, I/Os and mean latency;
/// for engines with a worker pool of fiox's own, how long requests waited on its lists.
#[derive(Debug, Clone)]
pub struct JobInput {
    pub name: String,
    /// The job's `ioengine` as its job file names it: the notes say whose completions they
    /// are about.
    pub engine: String,
    pub tid: u32,
    pub dirs: [(u64, f64); 2],
    pub handoff: Option<Handoff>,
    /// What the tracer traced of the run: in windows, the phases are per I/O seen in them.
    pub coverage: Coverage,
}

/// fiox's worker pool's waits (totals in ns over the run): requests on the run list until a
/// helper took them, completions on the done list until the job thread reaped them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Handoff {
    pub queued_ns: u64,
    pub done_ns: u64,
}

/// The phases every job has, in order; jobs whose I/O syscalls run on helper threads (thread
/// pool engines) add [`POOL_PHASES`] before `other`.
const PHASE_NAMES: [&str; 7] = [
    "submit_on_cpu",
    "submit_off_cpu",
    "block_queued",
    "device",
    "completion_to_reaped",
    "fiox_on_cpu",
    "fiox_off_cpu",
];
const POOL_PHASES: [&str; 5] = [
    "pool_queued",
    "helper_user_cpu",
    "helper_syscall_on_cpu",
    "helper_syscall_off_cpu",
    "pool_done_to_reaped",
];

/// How a thread's I/Os end: inside the syscall (sync engines: the return is the completion,
/// and fiox's own time between calls is its own phase), reaped by a syscall (the time from
/// completion to reaping measured, fiox's own time inside it), or unknown.
enum Reaping {
    InCall,
    Measured(f64),
    Unmeasured(Unpaired),
}

/// Why completion->reaped was not measured.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unpaired {
    /// In sampled windows the syscall hooks cannot pair a window's first reaps; only engines
    /// whose reaps fiox marks itself are paired there.
    Windows,
    /// The engine read its completions without a reaping syscall (from a ring in memory).
    NoSyscall,
    /// Fewer than 90% of the I/Os were seen both completing and being reaped (the share seen).
    Few(f64),
}

impl Unpaired {
    fn note(self, engine: &str) -> String {
        let why = match self {
            Unpaired::Windows => format!(
                "in sampled windows only reaps fiox marks itself pair with their completions, \
                 and {engine}'s are not marked (--explain=full measures it)"
            ),
            Unpaired::NoSyscall => format!(
                "{engine} read its completions without a syscall (from its ring in memory), so \
                 no reaping call is seen"
            ),
            Unpaired::Few(share) => format!(
                "only {:.0}% of {engine}'s I/Os were seen both completing and being reaped \
                 (90% are needed)",
                share * 100.0
            ),
        };
        format!("not measured: {why}; counted in other")
    }
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

    /// The thread of this process that created this one (0: unknown).
    pub fn parent(&self) -> u32 {
        self.g(G_PARENT) as u32
    }
}

/// The helper threads of job thread `tid`: those it created, and those they created.
pub fn helpers_of(recs: &HashMap<u32, Record>, tid: u32) -> Vec<&Record> {
    let children: Vec<u32> = recs
        .iter()
        .filter(|(&t, r)| r.parent() == tid && t != tid)
        .map(|(&t, _)| t)
        .collect();
    recs.iter()
        .filter(|(&t, r)| {
            children.contains(&t) || (r.parent() != 0 && children.contains(&r.parent()))
        })
        .map(|(_, r)| r)
        .collect()
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
/// read from the ring without a syscall), or in windows unless the thread marked its reaps
/// (the syscall hooks cannot tell a window's first reaps, which return I/Os submitted before
/// it, from the others: they would pair them with the window's completions, too early).
fn reaping(r: &Record, n_total: u64, sampled: bool) -> Reaping {
    if sampled && r.g(G_REAPED) > 0 && r.g(M_WIN) == 0 {
        return Reaping::Unmeasured(Unpaired::Windows);
    }
    if r.g(G_REAPED) == 0 {
        return if r.g(G_TAIL) == 0 {
            Reaping::InCall
        } else {
            Reaping::Unmeasured(Unpaired::NoSyscall)
        };
    }
    let n = r.g(G_C2R_N);
    if n > 0 && n * 10 >= n_total * 9 {
        Reaping::Measured(r.g(G_C2R_NS) as f64 / n as f64)
    } else {
        Reaping::Unmeasured(Unpaired::Few(n as f64 / n_total.max(1) as f64))
    }
}

/// A set of threads' records read as one: the job thread's, or its helpers'.
struct Threads<'a> {
    recs: Vec<&'a Record>,
}

impl Threads<'_> {
    /// Direction `di`'s word `f`, summed, with its share of the direction-less (io_uring) ones.
    fn dir(&self, di: usize, f: usize, share: f64) -> f64 {
        self.recs
            .iter()
            .map(|r| r.d(di, f) as f64 + r.d(2, f) as f64 * share)
            .sum()
    }

    fn total(&self, word: usize) -> u64 {
        self.recs.iter().map(|r| r.g(word)).sum()
    }

    fn hist(&self, di: usize, ph: usize) -> Vec<u64> {
        let mut h = vec![0; BUCKETS];
        for r in &self.recs {
            for (dst, (a, b)) in h
                .iter_mut()
                .zip(r.hist(di, ph).into_iter().zip(r.hist(2, ph)))
            {
                *dst += a + b;
            }
        }
        h
    }
}

fn add_hists(a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
    a.into_iter().zip(b).map(|(x, y)| x + y).collect()
}

/// One phase of a direction: its mean per I/O, its histogram if kept, a note if it needs one.
struct Phase {
    name: &'static str,
    mean: f64,
    hist: Option<Vec<u64>>,
    note: Option<String>,
}

const NOTE_OVERLAP: &str =
    "inside completion_to_reaped: fiox's own time overlaps the other I/Os in flight";
const NOTE_POOL_OVERLAP: &str =
    "the job thread's own time overlaps the I/Os its helper threads run: not a phase of them";
const NOTE_OVERSHOOT: &str = "the phases measured add up to slightly more than the run's mean latency (they are means of the I/Os traced): nothing is left unmeasured";
const NOTE_GLIBC: &str = "not measured: the requests wait in glibc's queue (POSIX AIO), which neither fiox nor the tracepoints see; counted in other";

/// A job's `explain` object (`jobs[].fiox.explain`), from its thread's record and those of
/// the helper threads it created (a thread pool engine's: their I/O syscalls are the job's).
pub fn explain_job(job: &JobInput, recs: &HashMap<u32, Record>) -> Value {
    let Some(r) = recs.get(&job.tid) else {
        return json!({"error": "the job's thread left no trace (it did no I/O while traced)"});
    };
    let helpers = Threads {
        recs: helpers_of(recs, job.tid),
    };
    let n_run: u64 = job.dirs.iter().map(|d| d.0).sum();
    let own = Threads { recs: vec![r] };
    // In windows, what is summed is of the I/Os seen: divided by them, not the run's.
    let seen = |di: usize| {
        let share = job.dirs[di].0 as f64 / n_run.max(1) as f64;
        (own.dir(di, D_IOS, share) + helpers.dir(di, D_IOS, share)).round() as u64
    };
    let sampled = job.coverage.is_sampled();
    // The run's own counts: a direction the job never did is not "missed by the windows".
    let ran = [job.dirs[0].0, job.dirs[1].0];
    let mut job = job.clone();
    if sampled {
        for di in 0..2 {
            job.dirs[di].0 = if job.dirs[di].0 > 0 { seen(di) } else { 0 };
        }
    }
    let n_total: u64 = job.dirs.iter().map(|d| d.0).sum();
    let hel_ios: f64 = (0..3).map(|d| helpers.dir(d, D_IOS, 1.0)).sum();
    let t = Traced {
        r,
        own,
        pool: hel_ios > 0.0 || job.handoff.is_some(),
        helpers,
        reap: reaping(r, n_total, sampled && !job.coverage.traced_whole_run()),
        n_total,
        n_run,
    };
    let mut out = Map::new();
    out.insert("tid".into(), json!(job.tid));
    out.insert("sampling".into(), sampling(&job, n_total));
    for (di, dname) in ["read", "write"].iter().enumerate() {
        let v = if job.dirs[di].0 > 0 {
            explain_dir(&t, &job, di)
        } else if sampled && ran[di] > 0 && job.coverage.run_ns > 0 {
            json!({"error": format!("no {dname} was seen inside the tracing windows: trace the whole run (--explain=full) or run longer")})
        } else {
            continue;
        };
        out.insert(dname.to_string(), v);
    }
    out.insert("reap".into(), reap_counts(r));
    out.insert("workers".into(), woken(r, n_total));
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

/// `sampling`: how the run was traced, and the I/Os the phases are of. In windows, a note
/// when the job's I/Os are long against the window: one counts only when it starts and ends
/// inside one window, so the longest are under-sampled.
fn sampling(job: &JobInput, seen: u64) -> Value {
    let mut v = job.coverage.json();
    v["ios_seen"] = json!(seen);
    if let Sampling::Windows { window, .. } = job.coverage.sampling {
        // Windows stretch to the I/Os (`window::stretch`): this is left when they could not
        // (a latency that rose late in the run, or past the longest window).
        let w = (window.as_nanos() as f64).max(job.coverage.longest_window_ns as f64);
        let longest = job.dirs.iter().map(|d| d.1).fold(0.0, f64::max);
        if longest * f64::from(crate::window::STRETCH) > w {
            v["note"] = json!(format!(
                "I/Os of {} in windows of {}: an I/O is seen only when it starts and ends inside one window, so the longest are under-sampled; --explain=full traces them all",
                us(longest),
                us(w)
            ));
        }
    }
    v
}

/// What a job's directions are read from: its thread's record, its helpers', how it reaps;
/// the I/Os seen (`n_total`: the run's when not sampled) and the run's (`n_run`).
struct Traced<'a> {
    r: &'a Record,
    own: Threads<'a>,
    helpers: Threads<'a>,
    pool: bool,
    reap: Reaping,
    n_total: u64,
    n_run: u64,
}

impl Traced<'_> {
    /// A word of the job thread's (`own`) or its helpers' totals per I/O of the job.
    fn per_io(&self, own: bool, word: usize) -> f64 {
        let v = if own {
            self.r.g(word)
        } else {
            self.helpers.total(word)
        };
        v as f64 / self.n_total.max(1) as f64
    }
}

fn ph(name: &'static str, mean: f64, hist: Option<Vec<u64>>, note: Option<&str>) -> Phase {
    Phase {
        name,
        mean,
        hist,
        note: note.map(str::to_string),
    }
}

/// Direction `di`'s phases (without `other`): the job thread's, its helpers' added in.
fn dir_phases(t: &Traced, job: &JobInput, di: usize) -> Vec<Phase> {
    let n = job.dirs[di].0;
    // io_uring_enter's batches have no direction: shared by the I/Os' mix.
    let share = n as f64 / t.n_total.max(1) as f64;
    let per = |field: usize| t.own.dir(di, field, share) / n as f64;
    let hper = |field: usize| t.helpers.dir(di, field, share) / n as f64;
    let (c2r, mut fiox_on, mut fiox_off) = match t.reap {
        Reaping::InCall => (0.0, t.per_io(true, G_USER), t.per_io(true, G_USER_OFF)),
        Reaping::Measured(c) => (c, 0.0, 0.0),
        Reaping::Unmeasured(_) => (0.0, 0.0, 0.0),
    };
    let mut fiox_note = matches!(t.reap, Reaping::Measured(_)).then_some(NOTE_OVERLAP);
    if t.pool {
        (fiox_on, fiox_off, fiox_note) = (0.0, 0.0, Some(NOTE_POOL_OVERLAP));
    }
    let both = |p| Some(add_hists(t.own.hist(di, p), t.helpers.hist(di, p)));
    let c2r_note = match t.reap {
        Reaping::Unmeasured(why) => Some(why.note(&job.engine)),
        _ => None,
    };
    let mut phases = vec![
        ph(
            PHASE_NAMES[0],
            per(D_ON),
            Some(t.r.hist(di, H_SUBMIT_ON)),
            None,
        ),
        ph(
            PHASE_NAMES[1],
            per(D_OFF),
            Some(t.r.hist(di, H_SUBMIT_OFF)),
            None,
        ),
        ph(
            PHASE_NAMES[2],
            per(D_Q2D) + hper(D_Q2D),
            both(H_QUEUED),
            None,
        ),
        ph(
            PHASE_NAMES[3],
            per(D_D2C) + hper(D_D2C),
            both(H_DEVICE),
            None,
        ),
        // Helpers that reap (an offload thread driving libaio) count theirs here too.
        ph(
            PHASE_NAMES[4],
            c2r + t.per_io(false, G_C2R_NS),
            None,
            c2r_note.as_deref(),
        ),
        ph(PHASE_NAMES[5], fiox_on, None, fiox_note),
        ph(PHASE_NAMES[6], fiox_off, None, fiox_note),
    ];
    if t.pool {
        let glibc = job.handoff.is_none().then_some(NOTE_GLIBC);
        let ho = job.handoff.unwrap_or_default();
        // The pool's own timing is of the whole run (fiox's, not sampled).
        let n_total = t.n_run.max(1) as f64;
        phases.extend([
            ph(POOL_PHASES[0], ho.queued_ns as f64 / n_total, None, glibc),
            ph(POOL_PHASES[1], t.per_io(false, G_USER), None, None),
            ph(
                POOL_PHASES[2],
                hper(D_ON),
                Some(t.helpers.hist(di, H_SUBMIT_ON)),
                None,
            ),
            ph(
                POOL_PHASES[3],
                hper(D_OFF),
                Some(t.helpers.hist(di, H_SUBMIT_OFF)),
                None,
            ),
            ph(POOL_PHASES[4], ho.done_ns as f64 / n_total, None, glibc),
        ]);
    }
    phases
}

/// Direction `di`'s object: its phases adding up to its mean latency, the submitting calls,
/// block requests, a stacked device's lower requests, the helpers' calls.
fn explain_dir(t: &Traced, job: &JobInput, di: usize) -> Value {
    let (n, lat) = job.dirs[di];
    let share = n as f64 / t.n_total.max(1) as f64;
    let f = |field: usize| t.own.dir(di, field, share);
    let hf = |field: usize| t.helpers.dir(di, field, share);
    let mut phases = dir_phases(t, job, di);
    let measured: f64 = phases.iter().map(|p| p.mean).sum();
    // The phases are means of the traced I/Os, the latency the run's: they can add up to a
    // little more, which is no negative time.
    let other = lat - measured;
    phases.push(ph(
        "other",
        other.max(0.0),
        None,
        (other < 0.0).then_some(NOTE_OVERSHOOT),
    ));
    let phases: Vec<Value> = phases
        .into_iter()
        .map(|ph| {
            let mut p = json!({"name": ph.name, "mean_ns": ph.mean.round() as i64});
            if let Some(h) = &ph.hist {
                p["percentiles"] = pcts(h);
            }
            if let Some(note) = &ph.note {
                p["note"] = json!(note);
            }
            p
        })
        .collect();
    let mut d = json!({
        "ios": n,
        "lat_mean_ns": lat.round() as i64,
        "phases": phases,
        "measured_ns": measured.round() as i64,
        "measured_pct": if lat > 0.0 { (measured / lat * 1000.0).round() / 10.0 } else { 0.0 },
        "submit": submit_counts(&f, n),
        "block": {
            "requests": (f(D_REQS) + hf(D_REQS)).round() as u64,
            "merges": (f(D_MERGES) + hf(D_MERGES)).round() as u64,
            "splits": (f(D_SPLITS) + hf(D_SPLITS)).round() as u64,
        },
    });
    let lreqs = f(D_LREQS) + hf(D_LREQS);
    if lreqs > 0.0 {
        let per_req = |field: usize| ((f(field) + hf(field)) / lreqs).round() as u64;
        d["lower"] = json!({
            "requests": lreqs.round() as u64,
            "queued_mean_ns": per_req(D_LQ2D),
            "device_mean_ns": per_req(D_LD2C),
            "note": "a stacked device's lower device (a loop device's backing file's), per request made for these I/Os by the workers they woke; inside `device`, not a phase of its own",
        });
    }
    if t.pool {
        let mut h = submit_counts(&hf, n);
        h["threads"] = json!(t.helpers.recs.len());
        d["helpers"] = h;
    }
    d
}

/// A direction's submitting calls (`f`: its words summed over the threads read), per I/O of
/// the direction's `n`.
fn submit_counts(f: &dyn Fn(usize) -> f64, n: u64) -> Value {
    let per = |field: usize| (f(field) / n.max(1) as f64).round() as u64;
    json!({
        "calls": f(D_CALLS).round() as u64,
        "ios": f(D_IOS).round() as u64,
        "syscall_mean_ns": per(D_RAWSYS),
        "off_cpu_mean_ns": per(D_RAWOFF),
        "block_inside_mean_ns": per(D_BLKIN),
        "waits": {
            "blocked": f(D_WAIT_D).round() as u64,
            "sleeping": f(D_WAIT_S).round() as u64,
            "preempted": f(D_WAIT_R).round() as u64,
        },
    })
}

fn reap_counts(r: &Record) -> Value {
    let reap_calls = r.g(G_REAP_CALLS);
    json!({
        "calls": reap_calls,
        "events": r.g(G_REAPED),
        "mean_ns": r.g(G_REAP_NS).checked_div(reap_calls).unwrap_or(0),
        "off_cpu_mean_ns": r.g(G_REAP_OFF).checked_div(reap_calls).unwrap_or(0),
        "completions_paired": r.g(G_C2R_N),
        "completions_lost": r.g(G_LOST),
    })
}

/// The threads the job's wakeups ran (`workers`), by kind.
fn woken(r: &Record, n_total: u64) -> Value {
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
    Value::Object(wk)
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
        let smp = &v["sampling"];
        if smp["mode"] == "windows" {
            s.push_str(&format!(
                "  {name}: sampled {:.1}% of the run ({} ms in every {} ms), phases of the {} I/Os seen\n",
                smp["traced_fraction"].as_f64().unwrap_or(0.0) * 100.0,
                smp["window_ms"],
                smp["period_ms"],
                smp["ios_seen"]
            ));
            if let Some(at) = smp.get("full_from_ms").and_then(Value::as_f64) {
                s.push_str(&format!(
                    "  {name}: traced in full from {:.2} s on: {}\n",
                    at / 1e3,
                    smp["full_because"].as_str().unwrap_or("")
                ));
            }
            if let Some(n) = smp.get("note").and_then(Value::as_str) {
                s.push_str(&format!("  {name}: {n}\n"));
            }
        }
        for dir in ["read", "write"] {
            let Some(d) = v.get(dir) else { continue };
            if let Some(e) = d.get("error").and_then(Value::as_str) {
                s.push_str(&format!("  {name} {dir}: {e}\n"));
                continue;
            }
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
            if let Some(n) = d.get("note").and_then(Value::as_str) {
                s.push_str(&format!("    {n}\n"));
            }
            if let Some(l) = d.get("lower") {
                s.push_str(&format!(
                    "    lower device: requests={} queued {} + device {} per request (inside device)\n",
                    l["requests"],
                    us(l["queued_mean_ns"].as_f64().unwrap_or(0.0)),
                    us(l["device_mean_ns"].as_f64().unwrap_or(0.0))
                ));
            }
            if let Some(h) = d.get("helpers") {
                let w = &h["waits"];
                s.push_str(&format!(
                    "    helper threads={} I/O calls={} off-CPU waits: blocked={} sleeping={} preempted={}\n",
                    h["threads"], h["calls"], w["blocked"], w["sleeping"], w["preempted"]
                ));
            }
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
            engine: "io_uring".into(),
            name: "j".into(),
            tid: 1,
            dirs: [(10, 10_000.0), (0, 0.0)],
            handoff: None,
            coverage: Coverage::full(),
        };
        let v = explain_job(&job, &HashMap::from([(1, Record(w))]));
        let ph = v["read"]["phases"].as_array().unwrap();
        let sum: i64 = ph.iter().map(|p| p["mean_ns"].as_i64().unwrap()).sum();
        assert_eq!(sum, 10_000);
        assert_eq!(ph[3]["mean_ns"], 8000);
        assert_eq!(ph[7]["mean_ns"], 400);
        assert!(v.get("write").is_none());
        let t = text_block(&[("j".into(), v)], None);
        assert!(t.contains("device 8.0us (80%)"), "{t}");
    }

    /// completion_to_reaped's note says why it was not measured and names the job's own
    /// engine (seed 000's libaio job was told about io_uring).
    #[test]
    fn an_unmeasured_reap_names_the_jobs_engine_and_the_reason() {
        let job = |engine: &str| JobInput {
            engine: engine.into(),
            name: "j".into(),
            tid: 1,
            dirs: [(100, 10_000.0), (0, 0.0)],
            handoff: None,
            coverage: Coverage::full(),
        };
        let note = |engine: &str, w: Vec<u64>| {
            let v = explain_job(&job(engine), &HashMap::from([(1, Record(w))]));
            v["read"]["phases"][4]["note"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        let mut few = vec![0u64; WORDS];
        few[DIR_BASE + D_IOS] = 100;
        few[G_REAPED] = 100;
        few[G_C2R_N] = 40;
        let n = note("libaio", few);
        assert!(n.contains("only 40% of libaio's I/Os"), "{n}");
        assert!(!n.contains("io_uring"), "{n}");
        let mut ring = vec![0u64; WORDS];
        ring[DIR_BASE + D_IOS] = 100;
        ring[G_TAIL] = 100;
        let n = note("io_uring", ring);
        assert!(
            n.contains("io_uring read its completions without a syscall"),
            "{n}"
        );
    }

    /// In windows, the sums are of the I/Os seen: divided by them (not the run's 1000), said
    /// in `sampling` and in the report's block.
    #[test]
    fn sampled_phases_are_per_io_seen() {
        let mut w = vec![0u64; WORDS];
        w[DIR_BASE + D_IOS] = 10;
        w[DIR_BASE + D_ON] = 1000 * 10;
        w[DIR_BASE + D_D2C] = 8000 * 10;
        w[DIR_BASE + D_REQS] = 10;
        let coverage = Coverage {
            sampling: Sampling::DEFAULT,
            traced_ns: 1_000,
            run_ns: 10_000,
            windows: 3,
            longest_window_ns: 0,
            full_from: None,
            error: None,
        };
        let job = JobInput {
            engine: "io_uring".into(),
            name: "j".into(),
            tid: 1,
            dirs: [(1000, 10_000.0), (5, 10_000.0)],
            handoff: None,
            coverage,
        };
        let v = explain_job(&job, &HashMap::from([(1, Record(w))]));
        let ph = v["read"]["phases"].as_array().unwrap();
        assert_eq!(ph[0]["mean_ns"], 1000, "{v:#}");
        assert_eq!(ph[3]["mean_ns"], 8000, "{v:#}");
        assert_eq!(v["read"]["ios"], 10);
        assert_eq!(v["sampling"]["ios_seen"], 10);
        assert_eq!(v["sampling"]["traced_fraction"], 0.1);
        assert!(v["sampling"].get("note").is_none(), "{v:#}");
        // A direction the windows missed says so, with what to do.
        assert!(
            v["write"]["error"].as_str().unwrap().contains("full"),
            "{v:#}"
        );
        // A direction the job never did is not reported as missed (issue 41: a randread job
        // was told to trace longer to see writes).
        let read_only = JobInput {
            dirs: [(1000, 10_000.0), (0, 0.0)],
            ..job.clone()
        };
        let ro = explain_job(&read_only, &HashMap::from([(1, Record(vec![0; WORDS]))]));
        assert!(ro.get("write").is_none(), "{ro:#}");
        let ro_text = text_block(&[("j".into(), ro)], None);
        assert!(!ro_text.contains("j write"), "{ro_text}");
        let t = text_block(&[("j".into(), v)], None);
        assert!(
            t.contains("sampled 10.0% of the run (20.0 ms in every 200.0 ms)"),
            "{t}"
        );
        // I/Os of 5 ms in windows of 20: under-sampled, said so.
        let slow = JobInput {
            dirs: [(1000, 5e6), (0, 0.0)],
            ..job
        };
        let v = explain_job(&slow, &HashMap::from([(1, Record(vec![0; WORDS]))]));
        assert!(
            v["sampling"]["note"].as_str().unwrap().contains("full"),
            "{v:#}"
        );
    }

    /// Phases that add up to more than the run's mean latency leave `other` at 0 with a note,
    /// never a negative time (issue 41: `other -1.2us (-0%)`).
    #[test]
    fn other_is_never_negative() {
        let mut w = vec![0u64; WORDS];
        w[DIR_BASE + D_ON] = 1000 * 10;
        w[DIR_BASE + D_D2C] = 8000 * 10;
        w[DIR_BASE + D_REQS] = 10;
        let job = JobInput {
            engine: "io_uring".into(),
            name: "j".into(),
            tid: 1,
            dirs: [(10, 8800.0), (0, 0.0)],
            handoff: None,
            coverage: Coverage::full(),
        };
        let v = explain_job(&job, &HashMap::from([(1, Record(w))]));
        let ph = v["read"]["phases"].as_array().unwrap();
        let other = ph.iter().find(|p| p["name"] == "other").unwrap();
        assert_eq!(other["mean_ns"], 0, "{other}");
        assert!(
            other["note"].as_str().unwrap().contains("slightly more"),
            "{other}"
        );
        let t = text_block(&[("j".into(), v)], None);
        assert!(!t.contains("other -"), "{t}");
        assert!(t.contains("other 0"), "{t}");
    }

    #[test]
    fn a_pools_helpers_syscalls_are_the_jobs() {
        let job_rec = vec![0u64; WORDS];
        let mut h = vec![0u64; WORDS];
        h[G_PARENT] = 7;
        h[DIR_BASE + D_IOS] = 10;
        h[DIR_BASE + D_ON] = 2000 * 10;
        h[DIR_BASE + D_D2C] = 5000 * 10;
        h[DIR_BASE + D_REQS] = 10;
        h[G_USER] = 300 * 10;
        let mut stranger = h.clone();
        stranger[G_PARENT] = 1;
        let recs = HashMap::from([(7, Record(job_rec)), (8, Record(h)), (9, Record(stranger))]);
        let job = JobInput {
            engine: "io_uring".into(),
            name: "j".into(),
            tid: 7,
            dirs: [(10, 10_000.0), (0, 0.0)],
            handoff: Some(Handoff {
                queued_ns: 1000 * 10,
                done_ns: 1500 * 10,
            }),
            coverage: Coverage::full(),
        };
        let v = explain_job(&job, &recs);
        let mean = |name: &str| {
            v["read"]["phases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == name)
                .unwrap()["mean_ns"]
                .as_i64()
                .unwrap()
        };
        assert_eq!(mean("device"), 5000);
        assert_eq!(mean("helper_syscall_on_cpu"), 2000);
        assert_eq!(mean("helper_user_cpu"), 300);
        assert_eq!(mean("pool_queued"), 1000);
        assert_eq!(mean("pool_done_to_reaped"), 1500);
        assert_eq!(mean("other"), 200);
        assert_eq!(v["read"]["helpers"]["threads"], 1);
        assert_eq!(v["read"]["block"]["requests"], 10);
        // Without the pool's own timing (glibc's helpers) the waits are unmeasured, said so.
        let glibc = JobInput {
            handoff: None,
            ..job
        };
        let v = explain_job(&glibc, &recs);
        let q = &v["read"]["phases"].as_array().unwrap()[7];
        assert_eq!(q["name"], "pool_queued");
        assert!(q["note"].as_str().unwrap().contains("glibc"), "{q}");
    }
}
