//! Golden tests against real fio 3.33 output.
//!
//! Two sources:
//! - `tests/data/fio-3.33-reference/`: the project's reference runs of fio 3.33 (copied into
//!   the repository so a plain clone tests without any sibling directory);
//! - `tests/data/*.txt`: fio 3.33 runs captured with several output formats at once
//!   (`--output-format=normal,json+` etc.), so the normal text and the JSON describe the very
//!   same numbers.
//!
//! A `RunResult` is rebuilt from fio's JSON (summary figures via `from_parts`, histograms from
//! json+ `bins` or from the percentile list, bucket counts from the percentages) and every
//! format we print is compared with what fio printed: line by line exactly, except the values
//! inside percentile rows (fiox's histogram buckets differ from fio's, so those are compared
//! with digits masked) and the date/pid of the job line.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use std::path::{Path, PathBuf};

use fiox_job::{Ddir, JobSpec, PerDir, RwMode, RwSpec};
use fiox_report::{header, json, normal, terse, to_fio_json_text};
use fiox_stats::{
    DepthDist, DirResult, DiskResult, GroupDir, GroupResult, Histogram, JobResult, LatBuckets,
    LatStat, PrioStat, RunResult, SampleStat,
};
use serde_json::Value;

/// The captures were made on a UTC machine; dates are compared in UTC whatever the local zone
/// of the machine running the tests. Every test calls this before printing anything.
fn utc() {
    std::env::set_var("TZ", "UTC");
}

fn ref_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio-3.33-reference")
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

fn data(name: &str) -> String {
    read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
}

/// A captured multi-format fio run: (text before JSON, JSON, normal report after JSON).
fn split_capture(text: &str) -> (String, Value, String) {
    let start = text.find("\n{\n").expect("JSON start") + 1;
    let end = text.find("\n}\n").expect("JSON end") + 3;
    let v: Value = serde_json::from_str(&text[start..end]).expect("fio JSON parses");
    (text[..start].to_string(), v, text[end..].to_string())
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} not an integer in {v}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} not a number"))
}

/// A histogram fio would summarise the same way: json+ bins if present, else samples placed so
/// that each listed percentile falls on its value.
fn hist_from(v: &Value) -> Histogram {
    let mut h = Histogram::new();
    if let Some(bins) = v.get("bins").and_then(Value::as_object) {
        for (k, c) in bins {
            let val: u64 = k.parse().unwrap();
            for _ in 0..c.as_u64().unwrap() {
                h.record(val);
            }
        }
        return h;
    }
    let Some(pct) = v.get("percentile").and_then(Value::as_object) else {
        return h;
    };
    let points: Vec<(f64, u64)> = pct
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
        .collect();
    place_percentiles(&points, u(v, "N"), u(v, "max"))
}

/// `n` samples placed so that each `(percentile, ns)` point holds: sample of rank i gets the
/// value of the first percentile whose rank reaches i, samples past the last one get `max`.
fn place_percentiles(points: &[(f64, u64)], n: u64, max: u64) -> Histogram {
    let mut h = Histogram::new();
    for i in 1..=n {
        let val = points
            .iter()
            .find(|(p, _)| (p / 100.0 * n as f64).ceil() as u64 >= i)
            .map(|(_, v)| *v)
            .unwrap_or(max);
        h.record(val);
    }
    h
}

fn lat_from(v: &Value) -> LatStat {
    LatStat::from_parts(
        u(v, "N"),
        u(v, "min"),
        u(v, "max"),
        f(v, "mean"),
        f(v, "stddev"),
        hist_from(v),
    )
}

/// fio's per-priority `prios` entries (clat_ns, or lat_ns with lat_percentiles).
fn prios_from(v: &Value) -> Vec<PrioStat> {
    let Some(list) = v["prios"].as_array() else {
        return Vec::new();
    };
    list.iter()
        .map(|p| {
            let stat = p.get("clat_ns").or_else(|| p.get("lat_ns")).unwrap();
            PrioStat {
                ioprio: (u(p, "prioclass") << 13 | u(p, "prio")) as u32,
                stat: lat_from(stat),
            }
        })
        .collect()
}

fn dir_from(v: &Value) -> DirResult {
    DirResult {
        prios: prios_from(v),
        io_bytes: u(v, "io_bytes"),
        total_ios: u(v, "total_ios"),
        short_ios: u(v, "short_ios"),
        drop_ios: u(v, "drop_ios"),
        runtime_ms: u(v, "runtime"),
        slat: lat_from(&v["slat_ns"]),
        clat: lat_from(&v["clat_ns"]),
        lat: lat_from(&v["lat_ns"]),
        bw: SampleStat::from_parts(
            u(v, "bw_samples"),
            u(v, "bw_min"),
            u(v, "bw_max"),
            f(v, "bw_mean"),
            f(v, "bw_dev"),
        ),
        iops: SampleStat::from_parts(
            u(v, "iops_samples"),
            u(v, "iops_min"),
            u(v, "iops_max"),
            f(v, "iops_mean"),
            f(v, "iops_stddev"),
        ),
    }
}

/// Counts that reproduce fio's percentages over `total`. fio's floors (0.1% for depths, 0.01%
/// for latency buckets) stand for a handful of I/Os, so they become a count of 1.
/// The total passed for distributions whose total fio does not print (submit, complete).
const UNKNOWN_TOTAL: u64 = 1_000_000;

fn counts<const N: usize>(obj: &Value, total: u64) -> [u64; N] {
    let mut out = [0u64; N];
    for (i, (_, p)) in obj.as_object().unwrap().iter().enumerate() {
        let p = p.as_f64().unwrap();
        // fio shows a non-empty bucket as at least 0.1% (depths) or 0.01% (latencies): out of
        // an unknown total that is one I/O; out of a known one, at least one.
        let n = (p / 100.0 * total as f64).round() as u64;
        out[i] = if (p == 0.1 || p == 0.01) && total == UNKNOWN_TOTAL {
            1
        } else if p > 0.0 {
            n.max(1)
        } else {
            n
        };
    }
    out
}

fn job_from(v: &Value, pid: u32) -> JobResult {
    let dirs = PerDir {
        read: dir_from(&v["read"]),
        write: dir_from(&v["write"]),
        trim: dir_from(&v["trim"]),
    };
    let total: u64 = Ddir::ALL.iter().map(|d| dirs.get(*d).total_ios).sum();
    // Which latency kinds carry percentiles, and the list they use.
    let has_pct = |kind: &str| {
        ["read", "write", "trim"]
            .iter()
            .any(|d| v[*d][kind].get("percentile").is_some())
    };
    let percentile_list = ["read", "write", "trim"]
        .iter()
        .flat_map(|d| ["clat_ns", "lat_ns", "slat_ns"].map(|k| &v[*d][k]["percentile"]))
        .chain([&v["sync"]["lat_ns"]["percentile"]])
        .find_map(Value::as_object)
        .map(|m| m.keys().map(|k| k.parse().unwrap()).collect())
        .unwrap_or_default();
    let options = options_from(&v["job options"]);
    JobResult {
        name: v["jobname"].as_str().unwrap().into(),
        groupid: u(v, "groupid") as u32,
        jobs: 1,
        error: 0,
        pid,
        elapsed_s: u(v, "elapsed"),
        runtime_ms: u(v, "job_runtime"),
        has_slat: dirs.read.slat.n + dirs.write.slat.n > 0,
        dirs,
        sync_lat: lat_from(&v["sync"]["lat_ns"]),
        usr_cpu_pct: f(v, "usr_cpu"),
        sys_cpu_pct: f(v, "sys_cpu"),
        ctx: u(v, "ctx"),
        majf: u(v, "majf"),
        minf: u(v, "minf"),
        io_depth: DepthDist {
            buckets: counts(&v["iodepth_level"], total),
        },
        submit: DepthDist {
            buckets: counts(&v["iodepth_submit"], UNKNOWN_TOTAL),
        },
        complete: DepthDist {
            buckets: counts(&v["iodepth_complete"], UNKNOWN_TOTAL),
        },
        lat_buckets: LatBuckets {
            ns: counts(&v["latency_ns"], total),
            us: counts(&v["latency_us"], total),
            ms: counts(&v["latency_ms"], total),
        },
        iodepth: u(v, "latency_depth") as u32,
        job_options: options,
        percentile_list,
        clat_percentiles: has_pct("clat_ns"),
        lat_percentiles: has_pct("lat_ns"),
        slat_percentiles: has_pct("slat_ns"),
        description: v["desc"].as_str().unwrap_or("").into(),
        continue_on_error: v.get("total_err").is_some(),
        total_err: v["total_err"].as_u64().unwrap_or(0),
        first_error: v["first_error"].as_i64().unwrap_or(0) as i32,
        // unified_rw_reporting=both: fio prints "mixed" beside the directions.
        unified_both: v.get("mixed").is_some() && v.get("read").is_some(),
        ..Default::default()
    }
}

/// fio's group totals: slowest/fastest job, longest runtime for the aggregate.
fn groups_for(jobs: &[JobResult]) -> Vec<GroupResult> {
    let mut ids: Vec<u32> = jobs.iter().map(|j| j.groupid).collect();
    ids.dedup();
    ids.into_iter()
        .map(|gid| {
            let mut dirs = PerDir::<GroupDir>::default();
            for d in Ddir::ALL {
                let g = dirs.get_mut(d);
                g.min_bw = u64::MAX;
                for j in jobs.iter().filter(|j| j.groupid == gid) {
                    let r = j.dirs.get(d);
                    if r.runtime_ms == 0 {
                        continue;
                    }
                    if g.min_runtime_ms == 0 || r.runtime_ms < g.min_runtime_ms {
                        g.min_runtime_ms = r.runtime_ms;
                    }
                    g.max_runtime_ms = g.max_runtime_ms.max(r.runtime_ms);
                    let bw = r.io_bytes * 1000 / r.runtime_ms;
                    g.min_bw = g.min_bw.min(bw);
                    g.max_bw = g.max_bw.max(bw);
                    g.io_bytes += r.io_bytes;
                }
                g.agg_bw = (g.io_bytes * 1000)
                    .checked_div(g.max_runtime_ms)
                    .unwrap_or(0);
            }
            GroupResult {
                groupid: gid,
                mixed: false,
                both: jobs.iter().any(|j| j.groupid == gid && j.unified_both),
                dirs,
                kb_base: 1024,
                unit_base: 0,
                sig_figs: 0,
            }
        })
        .collect()
}

fn disks_from(v: &Value) -> Vec<DiskResult> {
    v["disk_util"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| DiskResult {
                    name: d["name"].as_str().unwrap().into(),
                    ios: [u(d, "read_ios"), u(d, "write_ios")],
                    merges: [u(d, "read_merges"), u(d, "write_merges")],
                    ticks: [u(d, "read_ticks"), u(d, "write_ticks")],
                    in_queue: u(d, "in_queue"),
                    util: f(d, "util"),
                    ..Default::default()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Rebuild a RunResult from fio's JSON; `(jobs=, pid=)` of each job come from the normal text
/// when known (fio's JSON has neither).
fn run_from(v: &Value, members: &[(u32, u32)]) -> RunResult {
    let jobs: Vec<JobResult> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let (m, pid) = members.get(i).copied().unwrap_or((1, 0));
            let job = job_from(j, pid);
            JobResult {
                jobs: m,
                // fio dates the job block when it prints the report, as its JSON timestamp.
                start_unix: u(v, "timestamp") - job.elapsed_s,
                ..job
            }
        })
        .collect();
    RunResult {
        groups: groups_for(&jobs),
        jobs,
        disks: disks_from(v),
        start_unix_ms: u(v, "timestamp_ms"),
        global_options: options_from(&v["global options"]),
        ..Default::default()
    }
}

fn options_from(v: &Value) -> Vec<(String, String)> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// (jobs=N, pid) of every job line in fio's normal text.
fn members_and_pids(normal_text: &str) -> Vec<(u32, u32)> {
    normal_text
        .lines()
        .filter(|l| l.contains("(groupid="))
        .map(|line| {
            let num_after = |key: &str| -> u32 {
                let rest = &line[line.find(key).unwrap() + key.len()..];
                rest.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .unwrap()
            };
            (num_after("jobs="), num_after(" pid="))
        })
        .collect()
}

fn mask_digits(s: &str) -> String {
    let mut out = String::new();
    let mut prev_digit = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !prev_digit {
                out.push('#');
            }
            prev_digit = true;
        } else {
            out.push(c);
            prev_digit = false;
        }
    }
    out
}

/// Compare our normal report with fio's: exact lines, except digits inside percentile rows
/// and the date at the end of the job line.
fn assert_normal_matches(ours: &str, fio: &str) {
    assert_normal_matches_dates(ours, fio, false)
}

/// [`assert_normal_matches`], optionally comparing the job lines' dates too.
fn assert_normal_matches_dates(ours: &str, fio: &str, exact_dates: bool) {
    let a: Vec<&str> = ours.lines().collect();
    let b: Vec<&str> = fio.lines().collect();
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if y.starts_with("     |") {
            assert_eq!(mask_digits(x), mask_digits(y), "percentile row {i}");
        } else if y.contains("(groupid=") && !exact_dates {
            let cut = |s: &str| s[..s.rfind(": ").unwrap()].to_string();
            assert_eq!(cut(x), cut(y), "job line {i}");
        } else {
            assert_eq!(x, y, "line {i}\nours:\n{ours}\nfio:\n{fio}");
        }
    }
    assert_eq!(a.len(), b.len(), "line count\nours:\n{ours}\nfio:\n{fio}");
}

#[test]
fn normal_equals_fio_for_same_numbers_randrw_libaio() {
    utc();
    let (_, v, fio_normal) = split_capture(&data("randrw-libaio.normal-jsonplus.txt"));
    let run = run_from(&v, &members_and_pids(&fio_normal));
    assert_normal_matches(&normal(&run), &fio_normal);
}

/// cmdprio_percentage=30 with cmdprio_class=3 on io_uring: fio's `clat prio 0/0` and
/// `clat prio 3/0` lines and their percentile blocks with the share of I/Os, per direction.
#[test]
fn normal_equals_fio_for_same_numbers_cmdprio() {
    utc();
    let (_, v, fio_normal) = split_capture(&data("cmdprio-uring.normal-jsonplus.txt"));
    assert!(fio_normal.contains("    clat prio 3/0 (30.21% of IOs) percentiles (usec):"));
    let run = run_from(&v, &members_and_pids(&fio_normal));
    assert_normal_matches(&normal(&run), &fio_normal);
}

/// unified_rw_reporting=both: the `mixed` block after the directions (fio's line of zeros
/// first, then the merged latencies) and the `MIXED` group line.
#[test]
fn normal_equals_fio_for_same_numbers_unified_both() {
    utc();
    let (_, v, fio_normal) = split_capture(&data("both-psync.normal-jsonplus.txt"));
    assert!(fio_normal.contains("  mixed: IOPS=0, BW=0 (0)(0B/93msec)"));
    let run = run_from(&v, &members_and_pids(&fio_normal));
    assert_normal_matches(&normal(&run), &fio_normal);
}

#[test]
fn normal_equals_fio_for_same_numbers_group_sync_description() {
    utc();
    let (_, v, fio_normal) = split_capture(&data("write-psync-group.all.txt"));
    let members = members_and_pids(&fio_normal);
    assert_eq!(members[0].0, 2);
    let run = run_from(&v, &members);
    assert_normal_matches(&normal(&run), &fio_normal);
}

#[test]
fn normal_equals_fio_for_same_numbers_percentile_options_bits_si() {
    utc();
    // lat/slat percentiles, percentile_list=50:99:99.9999, kb_base=1000, unit_base=1.
    let (_, v, fio_normal) = split_capture(&data("randread-pctopts.all.txt"));
    let mut run = run_from(&v, &members_and_pids(&fio_normal));
    for g in &mut run.groups {
        g.kb_base = 1000;
        g.unit_base = 1;
    }
    assert_normal_matches(&normal(&run), &fio_normal);
}

#[test]
fn normal_equals_fio_for_same_numbers_two_groups_three_jobs() {
    utc();
    // Group 0: psync randwrite; group 1 (stonewall): two io_uring readers, bsrange 4k-64k.
    let (_, v, fio_normal) = split_capture(&data("two-groups.all.txt"));
    let run = run_from(&v, &members_and_pids(&fio_normal));
    assert_eq!(run.groups.len(), 2);
    assert_normal_matches(&normal(&run), &fio_normal);
}

#[test]
fn normal_equals_fio_with_continue_on_error_and_dates() {
    utc();
    // continue_on_error=all on the null engine: the `errors` line with no error, no disks.
    // The captures' JSON timestamps fall in the same second as the normal report, so the job
    // line's date is compared exactly here.
    for file in [
        "null-coe.all.txt",
        "randrw-libaio.normal-jsonplus.txt",
        "two-groups.all.txt",
    ] {
        let (_, v, fio_normal) = split_capture(&data(file));
        let run = run_from(&v, &members_and_pids(&fio_normal));
        assert_normal_matches_dates(&normal(&run), &fio_normal, true);
    }
}

/// Job specs of the captured runs, as the job parser would resolve them.
fn spec(name: &str, mode: RwMode, engine: &str, depth: u32, bs: u64) -> JobSpec {
    JobSpec {
        name: name.into(),
        rw: RwSpec { mode, n: 0 },
        ioengine: engine.into(),
        iodepth: depth,
        bs: PerDir::all(fiox_job::BsSpec::fixed(bs)),
        ..JobSpec::default()
    }
}

fn assert_header_matches(ours: &str, fio_pre: &str) {
    // fio's text before the report also holds runner lines ("Laying out IO file") and the
    // terse line; the header is the first lines up to "Starting".
    let fio_lines: Vec<&str> = fio_pre
        .lines()
        .take_while(|l| !l.starts_with("Starting"))
        .collect();
    let starting = fio_pre.lines().find(|l| l.starts_with("Starting")).unwrap();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours.len(), fio_lines.len() + 1);
    for (x, y) in ours.iter().zip(&fio_lines) {
        if y.starts_with("fio-") {
            assert!(x.starts_with("fiox-"), "{x}");
        } else {
            assert_eq!(x, y);
        }
    }
    assert_eq!(ours.last().unwrap(), &starting);
}

#[test]
fn header_equals_fio() {
    utc();
    let (pre, _, _) = split_capture(&data("randrw-libaio.normal-jsonplus.txt"));
    let job = spec("mix", RwMode::RandRw, "libaio", 8, 4096);
    assert_header_matches(&header(&[job]), &pre);

    let (pre, _, _) = split_capture(&data("write-psync-group.all.txt"));
    let jobs: Vec<JobSpec> = (0..2)
        .map(|i| JobSpec {
            clone_index: i,
            numjobs: 2,
            thread: true,
            ..spec("seq", RwMode::Write, "psync", 1, 131_072)
        })
        .collect();
    assert_header_matches(&header(&jobs), &pre);

    let (pre, _, _) = split_capture(&data("two-groups.all.txt"));
    let mut jobs = vec![spec("a", RwMode::RandWrite, "psync", 1, 4096)];
    for i in 0..2 {
        jobs.push(JobSpec {
            group_id: 1,
            clone_index: i,
            numjobs: 2,
            bs: PerDir::all(fiox_job::BsSpec {
                min: 4096,
                max: 65_536,
                split: Vec::new(),
            }),
            ..spec("b", RwMode::Read, "io_uring", 16, 65_536)
        });
    }
    assert_header_matches(&header(&jobs), &pre);

    let (pre, _, _) = split_capture(&data("randread-pctopts.all.txt"));
    let job = JobSpec {
        kb_base: 1000,
        unit_base: 1,
        ..spec("pct", RwMode::RandRead, "libaio", 4, 8192)
    };
    assert_header_matches(&header(&[job]), &pre);

    let reference = read(ref_dir().join("randrw-libaio.normal.txt"));
    let job = spec("sample", RwMode::RandRw, "libaio", 8, 4096);
    assert_header_matches(&header(&[job]), &reference);
}

/// The project's reference normal output, rebuilt by hand from its own printed figures.
fn reference_normal_run() -> RunResult {
    let us = |v: u64| v * 1000;
    let mut job = JobResult {
        name: "sample".into(),
        jobs: 1,
        pid: 9888,
        has_slat: true,
        clat_percentiles: true,
        percentile_list: fiox_job::DEFAULT_PERCENTILES.to_vec(),
        usr_cpu_pct: 4.70,
        sys_cpu_pct: 41.00,
        ctx: 17556,
        minf: 14,
        iodepth: 8,
        ..Default::default()
    };
    let pct_hist = |vals: [u64; 17], n: u64| {
        let points: Vec<(f64, u64)> = fiox_job::DEFAULT_PERCENTILES
            .iter()
            .zip(vals)
            .map(|(p, v)| (*p, us(v) - 300))
            .collect();
        place_percentiles(&points, n, us(vals[16]))
    };
    let r = &mut job.dirs.read;
    r.total_ios = 54786;
    r.io_bytes = 54786 * 4096;
    r.runtime_ms = 2001;
    r.slat = LatStat::from_parts(54786, 3_100, 272_300, 6_310.0, 6_240.0, Histogram::new());
    r.clat = LatStat::from_parts(
        54786,
        722,
        1_830_949,
        127_325.97,
        43_858.78,
        pct_hist(
            [
                71, 86, 92, 101, 108, 115, 121, 129, 139, 151, 169, 186, 229, 253, 529, 832, 1795,
            ],
            54786,
        ),
    );
    r.lat = LatStat::from_parts(
        54786,
        25_500,
        1_834_100,
        133_640.0,
        44_100.0,
        Histogram::new(),
    );
    r.bw = SampleStat::from_parts(3, 98_880, 127_240, 109_930.67, 15_180.60);
    r.iops = SampleStat::from_parts(3, 24_720, 31_810, 27_482.67, 3_795.15);
    let w = &mut job.dirs.write;
    w.total_ios = 54545;
    w.io_bytes = 54545 * 4096;
    w.runtime_ms = 2001;
    w.slat = LatStat::from_parts(54545, 3_200, 139_900, 6_650.0, 6_460.0, Histogram::new());
    w.clat = LatStat::from_parts(
        54545,
        us(22),
        us(2809),
        151_590.0,
        55_630.0,
        pct_hist(
            [
                77, 100, 109, 119, 127, 135, 145, 155, 167, 182, 202, 223, 269, 297, 562, 865, 2704,
            ],
            54545,
        ),
    );
    w.lat = LatStat::from_parts(
        54545,
        us(45),
        us(2814),
        158_240.0,
        56_160.0,
        Histogram::new(),
    );
    w.bw = SampleStat::from_parts(3, 97_592, 126_792, 109_573.33, 15_288.30);
    w.iops = SampleStat::from_parts(3, 24_398, 31_698, 27_393.33, 3_822.08);
    let total = 54786 + 54545;
    let c = |pct: f64| (pct / 100.0 * total as f64).round() as u64;
    job.lat_buckets.ns[8] = 1;
    job.lat_buckets.us = [
        0,
        0,
        0,
        1,
        c(0.11),
        c(12.11),
        c(86.61),
        c(1.04),
        c(0.04),
        c(0.06),
    ];
    job.lat_buckets.ms[0] = 1;
    job.lat_buckets.ms[1] = 1;
    job.io_depth.buckets = [1, 1, 1, total, 0, 0, 0];
    job.submit.buckets = [0, 1000, 0, 0, 0, 0, 0];
    job.complete.buckets = [0, 10_000, 1, 0, 0, 0, 0];
    let run_jobs = vec![job];
    RunResult {
        groups: groups_for(&run_jobs),
        jobs: run_jobs,
        disks: vec![DiskResult {
            name: "vda".into(),
            ios: [52178, 51975],
            ticks: [4759, 4573],
            in_queue: 9333,
            util: 76.47,
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn normal_matches_project_reference() {
    utc();
    let reference = read(ref_dir().join("randrw-libaio.normal.txt"));
    // The report starts at the blank line after "Starting 1 process".
    let report = &reference[reference.find("\n\n").unwrap() + 1..];
    assert_normal_matches(&normal(&reference_normal_run()), report);
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

/// Same keys in the same order and the same value kinds (int/float/string/object/array) all
/// the way down; our extra `fiox` keys are skipped; `bins` keys must be numeric with integer
/// counts (their values are our histogram's, not fio's).
fn assert_same_structure(ours: &Value, fio: &Value, path: &str) {
    assert_eq!(kind(ours), kind(fio), "kind at {path}");
    match (ours, fio) {
        (Value::Object(a), Value::Object(b)) => {
            if path.ends_with("/bins") {
                assert!(!a.is_empty(), "empty bins at {path}");
                for (k, v) in a {
                    assert!(k.parse::<u64>().is_ok() && v.is_u64(), "bin {k} at {path}");
                }
                return;
            }
            let ak: Vec<&String> = a.keys().filter(|k| *k != "fiox").collect();
            let bk: Vec<&String> = b.keys().collect();
            assert_eq!(ak, bk, "keys at {path}");
            for k in bk {
                assert_same_structure(&a[k], &b[k], &format!("{path}/{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "length at {path}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_same_structure(x, y, &format!("{path}/{i}"));
            }
        }
        _ => {}
    }
}

/// Keys whose values legitimately differ from fio's: the clock, our version, and figures fio
/// derives from its own histogram buckets or that we rebuilt from rounded percentages.
const LOOSE: &[&str] = &[
    "/fio version",
    "/eta",
    "/timestamp",
    "/time",
    "/percentile",
    "/bins",
    "/iodepth_",
    "/latency_ns",
    "/latency_us",
    "/latency_ms",
];

/// Equal values everywhere except under [`LOOSE`] keys (floats to fio's 6 decimals).
fn assert_same_values(ours: &Value, fio: &Value, path: &str) {
    if LOOSE.iter().any(|l| path.contains(l)) {
        return;
    }
    match (ours, fio) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                assert_same_values(&a[k], v, &format!("{path}/{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_same_values(x, y, &format!("{path}/{i}"));
            }
        }
        (Value::Number(x), Value::Number(y)) if y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-6 * y.abs().max(1.0),
                "{path}: {x} vs {y}"
            );
        }
        _ => assert_eq!(ours, fio, "value at {path}"),
    }
}

#[test]
fn json_same_keys_types_and_values_as_fio() {
    utc();
    for (file, plus) in [
        ("randrw-libaio.json", false),
        ("randread-psync.jsonplus.json", true),
    ] {
        let fio: Value = serde_json::from_str(&read(ref_dir().join(file))).unwrap();
        let ours = json(&run_from(&fio, &[]), plus);
        assert_same_structure(&ours, &fio, "");
        assert_same_values(&ours, &fio, "");
    }
    // A job file with [global]: `global options`, two groups, bare booleans left out.
    let fio: Value = serde_json::from_str(&data("global-options.jsonplus.json")).unwrap();
    let mut run = run_from(&fio, &[]);
    run.global_options
        .push(("time_based".into(), String::new()));
    let ours = json(&run, true);
    assert_same_structure(&ours, &fio, "");
    assert_same_values(&ours, &fio, "");
    for (file, plus) in [
        ("randrw-libaio.normal-jsonplus.txt", true),
        ("write-psync-group.all.txt", false),
        ("randread-pctopts.all.txt", false),
        ("two-groups.all.txt", false),
        ("null-coe.all.txt", false),
        ("cmdprio-uring.normal-jsonplus.txt", true),
        ("both-psync.normal-jsonplus.txt", true),
    ] {
        let (_, fio, _) = split_capture(&data(file));
        let ours = json(&run_from(&fio, &[]), plus);
        assert_same_structure(&ours, &fio, "");
        assert_same_values(&ours, &fio, "");
    }
}

#[test]
fn json_plus_has_bins_like_fio() {
    utc();
    let fio: Value =
        serde_json::from_str(&read(ref_dir().join("randread-psync.jsonplus.json"))).unwrap();
    let run = run_from(&fio, &[]);
    let ours = json(&run, true);
    let bins = ours["jobs"][0]["read"]["clat_ns"]["bins"]
        .as_object()
        .expect("json+ bins");
    let n: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(n, u(&fio["jobs"][0]["read"]["clat_ns"], "N"));
    assert!(ours["jobs"][0]["write"]["clat_ns"].get("bins").is_none());
    assert!(json(&run, false)["jobs"][0]["read"]["clat_ns"]
        .get("bins")
        .is_none());
}

#[test]
fn json_text_layout_equals_fio_file() {
    utc();
    // Our printer on fio's own tree reproduces fio's file byte for byte.
    for file in ["randrw-libaio.json", "randread-psync.jsonplus.json"] {
        let text = read(ref_dir().join(file));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(to_fio_json_text(&v), text, "{file}");
    }
}

/// Kind of a terse field: int, float (6 decimals), percentage, percentile pair, or text.
fn terse_kind(s: &str) -> &'static str {
    let is_float = |t: &str| {
        t.split_once('.')
            .is_some_and(|(a, b)| a.parse::<i64>().is_ok() && b.chars().all(|c| c.is_ascii_digit()))
    };
    if s.parse::<i64>().is_ok() {
        "int"
    } else if is_float(s) {
        "float"
    } else if let Some(p) = s.strip_suffix('%') {
        if is_float(p) {
            "pct"
        } else {
            "text"
        }
    } else if let Some((p, v)) = s.split_once("%=") {
        if (is_float(p) || p == "0") && v.parse::<u64>().is_ok() {
            "percentile"
        } else {
            "text"
        }
    } else {
        "text"
    }
}

fn assert_terse_shape(ours: &str, fio: &str) {
    let a: Vec<&str> = ours.trim_end().split(';').collect();
    let b: Vec<&str> = fio.trim_end().split(';').collect();
    assert_eq!(a.len(), b.len(), "field count\nours {ours}\nfio  {fio}");
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if i == 1 {
            assert!(x.starts_with("fiox-") && y.starts_with("fio-"));
            continue;
        }
        assert_eq!(terse_kind(x), terse_kind(y), "field {i}: {x} vs {y}");
    }
}

#[test]
fn terse_same_fields_as_fio_reference() {
    utc();
    let fio_line = read(ref_dir().join("randrw-libaio.terse.txt"));
    let fio_json: Value =
        serde_json::from_str(&read(ref_dir().join("randrw-libaio.json"))).unwrap();
    let run = run_from(&fio_json, &[]);
    let ours = terse(&run);
    assert_eq!(ours.lines().count(), 1);
    assert_terse_shape(&ours, &fio_line);
    assert_eq!(fio_line.trim_end().split(';').count(), 130);
}

#[test]
fn terse_equals_fio_for_same_numbers() {
    utc();
    for file in [
        "write-psync-group.all.txt",
        "randread-pctopts.all.txt",
        "two-groups.all.txt",
        "null-coe.all.txt",
    ] {
        terse_equals_capture(file);
    }
}

fn terse_equals_capture(file: &str) {
    let text = data(file);
    let fio_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("3;")).collect();
    let (_, v, _) = split_capture(&text);
    let ours = terse(&run_from(&v, &[]));
    assert_eq!(
        ours.lines().count(),
        fio_lines.len(),
        "{file}: one line per job"
    );
    for (ours, fio_line) in ours.lines().zip(fio_lines) {
        assert_terse_shape(ours, fio_line);
        let a: Vec<&str> = ours.split(';').collect();
        let b: Vec<&str> = fio_line.split(';').collect();
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            // Percentile values come from different histogram buckets; the version differs.
            // Field 99 (ns buckets folded into the first usec bucket) depends on exact counts
            // that fio's JSON only gives as floored percentages (0.01% for any small count), so
            // the rebuilt counts cannot always reproduce it; the folding itself has a unit test.
            if i == 1 || i == 99 || y.contains("%=") {
                continue;
            }
            assert_eq!(
                x, y,
                "{file}: terse field {i}\nours {ours}\nfio  {fio_line}"
            );
        }
    }
}
