//! fio's `json` and `json+` output: the same keys in the same order with the same types
//! (integers stay integers, rates and percentages are floats, `job options` values are
//! strings, percentile keys look like `"99.000000"`, json+ adds `bins`). fiox's additions live
//! only under new `fiox` keys so existing consumers see nothing unexpected.
//!
//! [`json`] builds the tree; [`to_fio_json_text`] prints it in fio's exact layout
//! (`"key" : value`, two-space indent, six decimals for floats) and [`json_status_line`] prints
//! one compact object per line for `--status-interval`, which stays valid JSON Lines unlike
//! fio's concatenated objects.

use fiox_job::Ddir;
use fiox_stats::{DepthDist, DirResult, DiskResult, GroupResult, JobResult, LatStat, RunResult};
use fiox_stats::{Histogram, Warning};
use serde_json::{Map, Value};

use crate::calc;
use crate::normal::{disk_agg, flatten_disks, version_line};
use crate::units::{self, bytes_per_sec};

/// `--profile=act`'s table (fio prints it as text before the JSON, which breaks the JSON; fiox
/// keeps it here): per hour the I/O count and the percent over 1, 8 and 64 ms, and the verdict.
fn act_json(slices: &[fiox_stats::ActSlice]) -> Value {
    let rows: Vec<Value> = slices
        .iter()
        .map(|s| {
            let mut o = Map::new();
            o.insert("total_ios".into(), s.total_ios.into());
            for (i, c) in fiox_stats::ACT_CRITERIA.iter().enumerate() {
                o.insert(
                    format!("pct_over_{}ms", c.usec / 1000),
                    json_f64(s.percent(i)),
                );
            }
            o.insert("passed".into(), (s.failures() == 0).into());
            Value::Object(o)
        })
        .collect();
    let mut o = Map::new();
    o.insert(
        "passed".into(),
        slices.iter().all(|s| s.failures() == 0).into(),
    );
    o.insert("slices".into(), Value::Array(rows));
    Value::Object(o)
}

/// The whole run as fio's JSON (`plus` = json+: latency `bins` too).
pub fn json(run: &RunResult, plus: bool) -> Value {
    let mut root = Map::new();
    root.insert("fio version".into(), version_line().into());
    root.insert("timestamp".into(), (run.start_unix_ms / 1000).into());
    root.insert("timestamp_ms".into(), run.start_unix_ms.into());
    root.insert("time".into(), units::ctime(run.start_unix_ms / 1000).into());
    if let Some(opts) = options_object(&run.global_options) {
        root.insert("global options".into(), opts);
    }
    let jobs = run
        .jobs
        .iter()
        .map(|j| job_json(j, &calc::group_of(run, j.groupid), plus))
        .collect();
    root.insert("jobs".into(), Value::Array(jobs));
    if !run.disks.is_empty() {
        let disks = flatten_disks(&run.disks).into_iter().map(disk_json);
        root.insert("disk_util".into(), Value::Array(disks.collect()));
    }
    if let Some(i) = &run.idle {
        // fio's cpu_idleness object: system, cpu-N with percpu, the unit of work.
        let mut o = Map::new();
        o.insert("system".into(), json_f64(i.system));
        if i.percpu_shown {
            for (n, p) in i.percpu.iter().enumerate() {
                o.insert(format!("cpu-{n}"), json_f64(*p));
            }
        }
        o.insert("unit_mean".into(), json_f64(i.unit_mean));
        o.insert("unit_stddev".into(), json_f64(i.unit_stddev));
        root.insert("cpu_idleness".into(), Value::Object(o));
    }
    let mut fiox = Map::new();
    fiox.insert("version".into(), env!("CARGO_PKG_VERSION").into());
    fiox.insert("warnings".into(), warnings_json(&run.warnings));
    fiox.insert("backing_disks".into(), backing_disks_json(&run.disks));
    if let Some(slices) = crate::normal::act_slices(run) {
        fiox.insert("act".into(), act_json(&slices));
    }
    root.insert("fiox".into(), Value::Object(fiox));
    Value::Object(root)
}

/// Every complete top-level JSON object in `text`, in order, as fio prints them: text before
/// the JSON (fio's notes on stdout, a normal report beside it) and between objects
/// (`--status-interval` writes one per report) is skipped.
pub fn json_objects(text: &str) -> Vec<Value> {
    let mut all = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let mut stream = serde_json::Deserializer::from_str(&rest[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) if v.is_object() => {
                let used = stream.byte_offset();
                all.push(v);
                rest = &rest[start + used..];
            }
            _ => rest = &rest[start + 1..],
        }
    }
    all
}

/// Why `text` holds no JSON object, when it has one that fails to parse: the parser's reason
/// and where, counted in `text`'s own lines ("not valid JSON: number out of range at line 12
/// column 20"), for
/// the first `{` that starts a line (a value out of range such as `1e999` made every object
/// unreadable, and the loaders only said that none was found). None when no line starts one.
pub fn json_problem(text: &str) -> Option<String> {
    let start = text.match_indices('{').map(|(i, _)| i).find(|&i| {
        text[..i]
            .rsplit('\n')
            .next()
            .is_some_and(|l| l.trim().is_empty())
    })?;
    let err = serde_json::from_str::<Value>(&text[start..]).err()?;
    let before = text[..start].matches('\n').count();
    let column = if err.line() == 1 {
        start - text[..start].rfind('\n').map_or(0, |n| n + 1) + err.column()
    } else {
        err.column()
    };
    let full = err.to_string();
    let why = full.split(" at line ").next().unwrap_or(&full);
    Some(format!(
        "not valid JSON: {why} at line {} column {column}",
        before + err.line()
    ))
}

/// One status report as a single line of compact JSON followed by `\n`, so a stream of them is
/// valid JSON Lines.
pub fn json_status_line(run: &RunResult, plus: bool) -> String {
    let mut s = json(run, plus).to_string();
    s.push('\n');
    s
}

/// `job options`/`global options`: values as strings; like fio, options without a value (bare
/// booleans such as `time_based`) are left out. None when nothing remains (fio omits the key).
fn options_object(opts: &[(String, String)]) -> Option<Value> {
    let m: Map<String, Value> = opts
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    (!m.is_empty()).then_some(Value::Object(m))
}

/// The page-cache evidence of a reading job: bytes of its region cached as its I/O began and
/// ended, and how it was measured.
fn page_cache_json(pc: &fiox_stats::PageCache) -> Value {
    let mut m = Map::new();
    m.insert("method".into(), pc.method.clone().into());
    m.insert("region_bytes".into(), pc.region_bytes.into());
    m.insert("cached_before_bytes".into(), pc.cached_before.into());
    m.insert("cached_after_bytes".into(), pc.cached_after.into());
    Value::Object(m)
}

fn warnings_json(ws: &[Warning]) -> Value {
    ws.iter()
        .map(|w| {
            let mut m = Map::new();
            m.insert("code".into(), w.code.code().into());
            m.insert("message".into(), w.message.clone().into());
            m.insert("fix".into(), w.fix.clone().into());
            Value::Object(m)
        })
        .collect()
}

/// A float as fio stores it; non-finite values (impossible in practice) become 0.
fn float(v: f64) -> Value {
    Value::from(if v.is_finite() { v } else { 0.0 })
}

pub fn job_json(job: &JobResult, group: &GroupResult, plus: bool) -> Value {
    let mut m = Map::new();
    m.insert("jobname".into(), job.name.clone().into());
    m.insert("groupid".into(), job.groupid.into());
    if let Some(ms) = job.job_start_ms {
        m.insert("job_start".into(), ms.into());
    }
    // fio's thread_stat keeps it unsigned: gfapi's -5 is 4294967291 there.
    m.insert("error".into(), (job.error as u32).into());
    // Printed at the end of the run, when nothing is left to do.
    m.insert("eta".into(), 0.into());
    m.insert("elapsed".into(), job.elapsed_s.into());
    if let Some(opts) = options_object(&job.job_options) {
        m.insert("job options".into(), opts);
    }
    if job.mixed {
        // fio: one "mixed" object and no per-direction or sync objects.
        let share = group.dirs.get(Ddir::Read).agg_bw;
        let mixed = dir_json(job, job.dirs.get(Ddir::Read), share, plus);
        m.insert("mixed".into(), mixed);
        return job_tail(job, m);
    }
    for (d, key) in [
        (Ddir::Read, "read"),
        (Ddir::Write, "write"),
        (Ddir::Trim, "trim"),
    ] {
        let share = group.dirs.get(d).agg_bw;
        m.insert(key.into(), dir_json(job, job.dirs.get(d), share, plus));
    }
    let mut sync = Map::new();
    sync.insert("total_ios".into(), job.sync_lat.n.into());
    let sync_pct = job.lat_percentiles || job.clat_percentiles;
    sync.insert(
        "lat_ns".into(),
        lat_json(job, &job.sync_lat, sync_pct, plus),
    );
    m.insert("sync".into(), Value::Object(sync));
    if job.unified_both {
        // fio: the sum of the directions after them, as a "mixed" direction object.
        let mixed = fiox_stats::mixed_view(job);
        let share = group.dirs.get(Ddir::Read).agg_bw;
        let obj = dir_json(&mixed, mixed.dirs.get(Ddir::Read), share, plus);
        m.insert("mixed".into(), obj);
    }
    job_tail(job, m)
}

/// The job object's fields after the directions: runtime, cpu, depths, latency buckets, ...
fn job_tail(job: &JobResult, mut m: Map<String, Value>) -> Value {
    m.insert("job_runtime".into(), job.runtime_ms.into());
    m.insert("usr_cpu".into(), float(job.usr_cpu_pct));
    m.insert("sys_cpu".into(), float(job.sys_cpu_pct));
    m.insert("ctx".into(), job.ctx.into());
    m.insert("majf".into(), job.majf.into());
    m.insert("minf".into(), job.minf.into());
    depth_objects(job, &mut m);
    latency_objects(job, &mut m);
    if job.continue_on_error {
        m.insert("total_err".into(), job.total_err.into());
        m.insert("first_error".into(), job.first_error.into());
    }
    if let Some((depth, target, window, pct)) = job.lat_target {
        m.insert("latency_depth".into(), depth.into());
        m.insert("latency_target".into(), target.into());
        m.insert("latency_percentile".into(), float(pct));
        m.insert("latency_window".into(), window.into());
    } else if job.iodepth > 0 {
        // Without latency_target: fio's values for unset options.
        m.insert("latency_depth".into(), job.iodepth.into());
        m.insert("latency_target".into(), 0.into());
        m.insert("latency_percentile".into(), float(100.0));
        m.insert("latency_window".into(), 0.into());
    }
    if !job.description.is_empty() {
        m.insert("desc".into(), job.description.clone().into());
    }
    if let Some(block) = block_json(job) {
        m.insert("block".into(), block);
    }
    if let Some(ss) = &job.steadystate {
        m.insert("steadystate".into(), steadystate_json(ss));
    }
    let mut fiox = Map::new();
    fiox.insert("warnings".into(), warnings_json(&job.warnings));
    if job.io_start_unix_ms > 0 {
        // With the top-level timestamp_ms (the run's start): where the job sits in the run.
        fiox.insert("io_start_unix_ms".into(), job.io_start_unix_ms.into());
    }
    if let Some(pc) = &job.page_cache {
        fiox.insert("page_cache".into(), page_cache_json(pc));
    }
    m.insert("fiox".into(), Value::Object(fiox));
    Value::Object(m)
}

/// fio's `block` object of `block_error_percentiles`: the trim-count percentiles (keys as
/// `%f`) and the blocks per state; none when no block left the unwritten state.
fn block_json(job: &JobResult) -> Option<Value> {
    use fiox_stats::blocks::{block_percentiles, STATE_NAMES};
    let infos = job.block_infos.as_ref()?;
    let (pcts, states) = block_percentiles(infos, &job.percentile_list)?;
    let p: Map<String, Value> = pcts
        .iter()
        .map(|(p, n)| (format!("{p:.6}"), Value::from(*n)))
        .collect();
    let s: Map<String, Value> = STATE_NAMES
        .iter()
        .zip(states)
        .map(|(name, n)| (name.to_string(), Value::from(n)))
        .collect();
    let mut m = Map::new();
    m.insert("percentiles".into(), Value::Object(p));
    m.insert("states".into(), Value::Object(s));
    Some(Value::Object(m))
}

/// fio's `steadystate` object (stat.c): limit and criterion as `%f` text.
fn steadystate_json(ss: &fiox_stats::model::SteadyResult) -> Value {
    let pct = if ss.pct { "%" } else { "" };
    let mut m = Map::new();
    m.insert(
        "ss".into(),
        format!(
            "{}{}:{:.6}{pct}",
            if ss.iops { "iops" } else { "bw" },
            if ss.slope { "_slope" } else { "" },
            ss.limit as f32
        )
        .into(),
    );
    m.insert("duration".into(), ss.duration.into());
    m.insert("attained".into(), u32::from(ss.attained).into());
    m.insert(
        "criterion".into(),
        format!("{:.6}{pct}", ss.criterion as f32).into(),
    );
    m.insert("max_deviation".into(), float(ss.max_deviation));
    m.insert("slope".into(), float(ss.slope_value));
    let mut data = Map::new();
    data.insert("bw_mean".into(), ss.bw_mean.into());
    data.insert("iops_mean".into(), ss.iops_mean.into());
    data.insert("iops".into(), ss.iops_data.clone().into());
    data.insert("bw".into(), ss.bw.clone().into());
    m.insert("data".into(), Value::Object(data));
    Value::Object(m)
}

fn dir_json(job: &JobResult, r: &DirResult, group_agg: u64, plus: bool) -> Value {
    let mut m = Map::new();
    let bw_bytes = bytes_per_sec(r.io_bytes, r.runtime_ms);
    let iops = if r.runtime_ms == 0 {
        0.0
    } else {
        1000.0 * r.total_ios as f64 / r.runtime_ms as f64
    };
    m.insert("io_bytes".into(), r.io_bytes.into());
    m.insert("io_kbytes".into(), (r.io_bytes >> 10).into());
    m.insert("bw_bytes".into(), bw_bytes.into());
    m.insert("bw".into(), (bw_bytes / 1024).into());
    m.insert("iops".into(), float(iops));
    m.insert("runtime".into(), r.runtime_ms.into());
    m.insert("total_ios".into(), r.total_ios.into());
    m.insert("short_ios".into(), r.short_ios.into());
    m.insert("drop_ios".into(), r.drop_ios.into());
    let slat_pct = job.slat_percentiles && job.has_slat;
    let empty = LatStat::default();
    let slat = if job.has_slat { &r.slat } else { &empty };
    m.insert("slat_ns".into(), lat_json(job, slat, slat_pct, plus));
    m.insert(
        "clat_ns".into(),
        lat_json(job, &r.clat, job.clat_percentiles, plus),
    );
    m.insert(
        "lat_ns".into(),
        lat_json(job, &r.lat, job.lat_percentiles, plus),
    );
    let prios = calc::shown_prios(r);
    if !prios.is_empty() {
        m.insert("prios".into(), prios_json(job, &prios, plus));
    }
    let (bmin, bmax, per, bmean, bdev) = if r.bw.n > 0 {
        let mean = r.bw.mean();
        let per = calc::bw_share(group_agg, mean);
        (r.bw.min, r.bw.max, per, mean, r.bw.stddev())
    } else {
        (0, 0, 0.0, 0.0, 0.0)
    };
    m.insert("bw_min".into(), bmin.into());
    m.insert("bw_max".into(), bmax.into());
    m.insert("bw_agg".into(), float(per));
    m.insert("bw_mean".into(), float(bmean));
    m.insert("bw_dev".into(), float(bdev));
    m.insert("bw_samples".into(), r.bw.n.into());
    let s = &r.iops;
    let (imin, imax, imean, idev) = if s.n > 0 {
        (s.min, s.max, s.mean(), s.stddev())
    } else {
        (0, 0, 0.0, 0.0)
    };
    m.insert("iops_min".into(), imin.into());
    m.insert("iops_max".into(), imax.into());
    m.insert("iops_mean".into(), float(imean));
    m.insert("iops_stddev".into(), float(idev));
    m.insert("iops_samples".into(), s.n.into());
    Value::Object(m)
}

/// fio's `prios` array: `{prioclass, prio, clat_ns}` per priority with samples (`lat_ns` with
/// lat_percentiles), percentiles when either of clat/lat percentiles is on.
fn prios_json(job: &JobResult, prios: &[&fiox_stats::PrioStat], plus: bool) -> Value {
    let key = if job.lat_percentiles {
        "lat_ns"
    } else {
        "clat_ns"
    };
    let pct = job.clat_percentiles || job.lat_percentiles;
    let list = prios.iter().map(|p| {
        let (class, level) = calc::prio_class_level(p.ioprio);
        let mut o = Map::new();
        o.insert("prioclass".into(), class.into());
        o.insert("prio".into(), level.into());
        o.insert(key.into(), lat_json(job, &p.stat, pct, plus));
        Value::Object(o)
    });
    Value::Array(list.collect())
}

/// `{min, max, mean, stddev, N[, percentile{..}[, bins{..}]]}`.
fn lat_json(job: &JobResult, s: &LatStat, percentiles: bool, plus: bool) -> Value {
    let mut m = Map::new();
    let (min, max, mean, dev) = calc::lat_summary(s).unwrap_or((0, 0, 0.0, 0.0));
    m.insert("min".into(), min.into());
    m.insert("max".into(), max.into());
    m.insert("mean".into(), float(mean));
    m.insert("stddev".into(), float(dev));
    m.insert("N".into(), s.n.into());
    if percentiles && s.n > 0 {
        m.insert(
            "percentile".into(),
            percentile_object(&job.percentile_list, &s.hist),
        );
        if plus {
            m.insert("bins".into(), bins_object(&s.hist));
        }
    }
    Value::Object(m)
}

fn percentile_object(list: &[f64], hist: &Histogram) -> Value {
    let m: Map<String, Value> = calc::percentiles(list, hist)
        .into_iter()
        .map(|(p, v)| (format!("{p:.6}"), Value::from(v)))
        .collect();
    Value::Object(m)
}

/// json+ `bins`: every non-empty histogram bucket, keyed by its value in ns, ascending.
fn bins_object(hist: &Histogram) -> Value {
    let m: Map<String, Value> = hist
        .bins()
        .map(|(v, c)| (v.to_string(), Value::from(c)))
        .collect();
    Value::Object(m)
}

/// `iodepth_level`, `iodepth_submit`, `iodepth_complete`.
fn depth_objects(job: &JobResult, m: &mut Map<String, Value>) {
    const LEVEL: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const SUBMIT: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    let level = calc::dist_pct(&job.io_depth.buckets, calc::total_rw_ios(job));
    m.insert("iodepth_level".into(), keyed(&LEVEL, &level));
    let dist = |d: &DepthDist| calc::dist_pct(&d.buckets, calc::bucket_total(&d.buckets));
    m.insert("iodepth_submit".into(), keyed(&SUBMIT, &dist(&job.submit)));
    m.insert(
        "iodepth_complete".into(),
        keyed(&SUBMIT, &dist(&job.complete)),
    );
}

/// `latency_ns`, `latency_us`, `latency_ms`.
fn latency_objects(job: &JobResult, m: &mut Map<String, Value>) {
    const KEYS: [&str; 12] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    let total = calc::total_rw_ios(job);
    let b = &job.lat_buckets;
    for (key, counts) in [
        ("latency_ns", &b.ns[..]),
        ("latency_us", &b.us[..]),
        ("latency_ms", &b.ms[..]),
    ] {
        let pct = calc::lat_pct(counts, total);
        m.insert(key.into(), keyed(&KEYS[..pct.len()], &pct));
    }
}

fn keyed(keys: &[&str], values: &[f64]) -> Value {
    let m: Map<String, Value> = keys
        .iter()
        .zip(values)
        .map(|(k, v)| (k.to_string(), float(*v)))
        .collect();
    Value::Object(m)
}

/// The disks holding loop devices' backing files (fio's `disk_util` shows a loop device
/// alone): each as a `disk_util` entry plus `backs`, the loop device's name.
fn backing_disks_json(disks: &[DiskResult]) -> Value {
    let mut out = Vec::new();
    for d in flatten_disks(disks) {
        for b in &d.backing {
            let mut v = disk_json(b);
            if let Some(m) = v.as_object_mut() {
                m.insert("backs".into(), d.name.clone().into());
            }
            out.push(v);
        }
    }
    Value::Array(out)
}

/// One `disk_util` entry; stacked devices add fio's `aggr_*` keys (including fio's spelling
/// `aggr_write_merge`).
pub fn disk_json(d: &DiskResult) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), d.name.clone().into());
    m.insert("read_ios".into(), d.ios[0].into());
    m.insert("write_ios".into(), d.ios[1].into());
    m.insert("read_merges".into(), d.merges[0].into());
    m.insert("write_merges".into(), d.merges[1].into());
    m.insert("read_ticks".into(), d.ticks[0].into());
    m.insert("write_ticks".into(), d.ticks[1].into());
    m.insert("in_queue".into(), d.in_queue.into());
    m.insert("util".into(), float(d.util.min(100.0)));
    if let Some(a) = disk_agg(d) {
        m.insert("aggr_read_ios".into(), a.ios[0].into());
        m.insert("aggr_write_ios".into(), a.ios[1].into());
        m.insert("aggr_read_merges".into(), a.merges[0].into());
        m.insert("aggr_write_merge".into(), a.merges[1].into());
        m.insert("aggr_read_ticks".into(), a.ticks[0].into());
        m.insert("aggr_write_ticks".into(), a.ticks[1].into());
        m.insert("aggr_in_queue".into(), a.in_queue.into());
        m.insert("aggr_util".into(), float(a.util));
    }
    Value::Object(m)
}

/// Print a JSON tree in fio's layout: `"key" : value`, two spaces per level, floats with six
/// decimals, integers as integers, and a final newline. Strings are escaped as JSON requires
/// (fio escapes only `"` and `\`, which can produce invalid JSON; fiox does not copy that).
pub fn to_fio_json_text(v: &Value) -> String {
    let mut out = String::new();
    print_value(v, 0, &mut out);
    out.push('\n');
    out
}

fn indent(level: usize, out: &mut String) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn print_value(v: &Value, level: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_u64() {
                out.push_str(&i.to_string());
            } else if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else {
                out.push_str(&format!("{:.6}", n.as_f64().unwrap_or(0.0)));
            }
        }
        Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Value::Array(a) => {
            out.push_str("[\n");
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(level + 1, out);
                print_value(e, level + 1, out);
            }
            out.push('\n');
            indent(level, out);
            out.push(']');
        }
        Value::Object(m) => {
            out.push_str("{\n");
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(level + 1, out);
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(" : ");
                print_value(e, level + 1, out);
            }
            out.push('\n');
            indent(level, out);
            out.push('}');
        }
    }
}

/// A float as fio's JSON writes it (NaN, which fio prints for one CPU's stddev, as null).
fn json_f64(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_stats::WarningCode;

    #[test]
    fn json_problem_names_the_reason_and_the_line() {
        let text = "fio: a note\n{\n  \"jobs\": [\n    {\"iops\": 1e999}\n  ]\n}\n";
        assert_eq!(
            json_problem(text).as_deref(),
            Some("not valid JSON: number out of range at line 4 column 18")
        );
        assert_eq!(json_problem("no braces here"), None);
        assert_eq!(json_problem("{\"jobs\": []}"), None);
    }

    fn sample_job() -> JobResult {
        let mut job = JobResult {
            name: "sample".into(),
            jobs: 1,
            iodepth: 8,
            has_slat: true,
            clat_percentiles: true,
            percentile_list: fiox_job::DEFAULT_PERCENTILES.to_vec(),
            job_options: vec![
                ("name".into(), "sample".into()),
                ("time_based".into(), String::new()),
                ("bs".into(), "4k".into()),
            ],
            ..Default::default()
        };
        let r = &mut job.dirs.read;
        r.io_bytes = 4096 * 1000;
        r.total_ios = 1000;
        r.runtime_ms = 1000;
        for v in 0..1000u64 {
            r.clat.add(50_000 + v * 10);
            r.lat.add(55_000 + v * 10);
            r.slat.add(5_000);
        }
        job
    }

    #[test]
    fn types_and_keys_follow_fio() {
        let run = RunResult {
            jobs: vec![sample_job()],
            start_unix_ms: 1_795_323_896_323,
            ..Default::default()
        };
        let v = json(&run, false);
        assert_eq!(v["timestamp"], 1_795_323_896u64);
        assert_eq!(v["time"], units::ctime(1_795_323_896).as_str());
        assert!(v.get("global options").is_none());
        assert!(v.get("disk_util").is_none());
        let job = &v["jobs"][0];
        let opts = job["job options"].as_object().unwrap();
        assert_eq!(opts.keys().collect::<Vec<_>>(), ["name", "bs"]);
        let read = &job["read"];
        assert!(read["iops"].is_f64());
        assert!(read["bw"].is_u64());
        assert_eq!(read["io_kbytes"], 4000);
        let pct = read["clat_ns"]["percentile"].as_object().unwrap();
        assert_eq!(pct.len(), 17);
        assert!(pct.contains_key("99.990000"));
        assert!(read["clat_ns"].get("bins").is_none());
        assert!(read["slat_ns"].get("percentile").is_none());
        assert!(job["latency_ms"][">=2000"].is_f64());
        assert_eq!(job["latency_percentile"], 100.0);
        let plus = json(&run, true);
        let bins = plus["jobs"][0]["read"]["clat_ns"]["bins"]
            .as_object()
            .unwrap();
        let total: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(total, 1000);
    }

    #[test]
    fn fio_text_layout() {
        let v: Value = serde_json::json!({"a": 1, "b": {"c": 2.5, "d": [1, 2]}, "e": "x\"y"});
        assert_eq!(
            to_fio_json_text(&v),
            "{\n  \"a\" : 1,\n  \"b\" : {\n    \"c\" : 2.500000,\n    \"d\" : [\n      1,\n      2\n    ]\n  },\n  \"e\" : \"x\\\"y\"\n}\n"
        );
    }

    #[test]
    fn status_line_is_one_json_object() {
        let run = RunResult {
            jobs: vec![sample_job()],
            ..Default::default()
        };
        let line = json_status_line(&run, false);
        assert!(line.ends_with('\n'));
        assert_eq!(line.matches('\n').count(), 1);
        let back: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["jobs"][0]["jobname"], "sample");
    }

    /// fio's disk_util shows a loop device alone; its backing disk is under fiox's key.
    #[test]
    fn loop_backing_disk_under_fiox_key() {
        let run = RunResult {
            jobs: vec![sample_job()],
            disks: vec![DiskResult {
                name: "loop0".into(),
                backing: vec![DiskResult {
                    name: "vda".into(),
                    ios: [2, 0],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let v = json(&run, false);
        let du = v["disk_util"].as_array().unwrap();
        assert_eq!(du.len(), 1);
        assert_eq!(du[0]["name"], "loop0");
        assert!(du[0].get("aggr_read_ios").is_none());
        let b = &v["fiox"]["backing_disks"];
        assert_eq!(b[0]["name"], "vda");
        assert_eq!(b[0]["backs"], "loop0");
        assert_eq!(b[0]["read_ios"], 2);
    }

    #[test]
    fn warnings_under_fiox_keys() {
        let mut job = sample_job();
        job.warnings
            .push(Warning::with_fix(WarningCode::BufferedLibaio, "m", "f"));
        let run = RunResult {
            jobs: vec![job],
            ..Default::default()
        };
        let v = json(&run, false);
        assert_eq!(
            v["jobs"][0]["fiox"]["warnings"][0]["code"],
            "buffered-libaio"
        );
        assert_eq!(v["fiox"]["warnings"].as_array().unwrap().len(), 0);
    }
}
