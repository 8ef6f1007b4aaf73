//! fio's terse output (`--minimal`, `--output-format=terse`), version 3 by default: one
//! `;`-separated line per job with a fixed field order — general info, read and write status
//! (41 fields each), cpu, IO depths, latency buckets (ns folded into the first usec bucket),
//! disk utilization, then the description if any. Field positions never move, so scripts
//! indexing fields keep working. `--terse-version` picks fio's others (stat.c): 2 (no fio
//! version field, a trim status, no disk utilization, the description on a line of its own),
//! 4 (a trim status) and 5 (a trim status; bw sample count and IOPS min/max/mean/dev/samples
//! after each direction).

use std::fmt::Write as _;

use fiox_job::Ddir;
use fiox_stats::{DirResult, DiskResult, GroupResult, JobResult, LatStat, RunResult};

use crate::calc::{self, MAX_PERCENTILES};
use crate::normal::{disk_agg, flatten_disks, version_line};
use crate::units::bytes_per_sec;

/// The terse version fiox prints.
pub const TERSE_VERSION: u32 = 3;

/// One terse v3 line per job.
pub fn terse(run: &RunResult) -> String {
    terse_version(run, TERSE_VERSION)
}

/// One terse line per job in fio's terse format `ver` (2..=5; anything else is 3).
pub fn terse_version(run: &RunResult, ver: u32) -> String {
    let ver = if (2..=5).contains(&ver) {
        ver
    } else {
        TERSE_VERSION
    };
    let mut out = String::new();
    for job in &run.jobs {
        out.push_str(&job_line_v(
            job,
            &calc::group_of(run, job.groupid),
            &run.disks,
            ver,
        ));
    }
    out
}

/// One job's terse v3 line, newline included.
pub fn job_line(job: &JobResult, group: &GroupResult, disks: &[DiskResult]) -> String {
    job_line_v(job, group, disks, TERSE_VERSION)
}

/// One job's terse line in format `ver`, newline included.
pub fn job_line_v(job: &JobResult, group: &GroupResult, disks: &[DiskResult], ver: u32) -> String {
    let mut out = if ver == 2 {
        format!("2;{};{};{}", job.name, job.groupid, job.error)
    } else {
        format!(
            "{};{};{};{};{}",
            ver,
            version_line(),
            job.name,
            job.groupid,
            job.error
        )
    };
    // unified_rw_reporting=mixed: fio writes the mixed direction alone.
    let dirs: &[Ddir] = if job.mixed {
        &[Ddir::Read]
    } else if ver == 3 {
        &[Ddir::Read, Ddir::Write]
    } else {
        &Ddir::ALL
    };
    for &d in dirs {
        dir_fields(job, job.dirs.get(d), group.dirs.get(d).agg_bw, &mut out);
        if ver == 5 {
            v5_fields(job.dirs.get(d), &mut out);
        }
    }
    if job.unified_both && !job.mixed {
        // unified_rw_reporting=both: the mixed direction's fields after the others.
        let m = fiox_stats::mixed_view(job);
        let r = m.dirs.get(Ddir::Read);
        dir_fields(&m, r, group.dirs.get(Ddir::Read).agg_bw, &mut out);
        if ver == 5 {
            v5_fields(r, &mut out);
        }
    }
    let (usr, sys) = (job.usr_cpu_pct, job.sys_cpu_pct);
    let _ = write!(
        out,
        ";{:.6}%;{:.6}%;{};{};{}",
        usr, sys, job.ctx, job.majf, job.minf
    );
    for p in calc::dist_pct(&job.io_depth.buckets, calc::total_rw_ios(job)) {
        let _ = write!(out, ";{p:3.1}%");
    }
    for p in usec_buckets(job) {
        let _ = write!(out, ";{p:3.2}%");
    }
    for p in calc::lat_pct(&job.lat_buckets.ms, calc::total_rw_ios(job)) {
        let _ = write!(out, ";{p:3.2}%");
    }
    if ver >= 3 {
        for d in flatten_disks(disks) {
            disk_fields(d, &mut out);
        }
    }
    if job.continue_on_error {
        let _ = write!(out, ";{};{}", job.total_err, job.first_error);
    }
    if !job.description.is_empty() {
        if ver == 2 {
            out.push('\n');
        }
        let _ = write!(out, ";{}", job.description);
    }
    out.push('\n');
    out
}

/// usec bucket percentages with every nanosecond bucket added to the first one, which keeps
/// the terse field count unchanged since the ns buckets were introduced.
fn usec_buckets(job: &JobResult) -> Vec<f64> {
    let total = calc::total_rw_ios(job);
    let mut us = calc::lat_pct(&job.lat_buckets.us, total);
    if total > 0 {
        let ns = calc::bucket_total(&job.lat_buckets.ns);
        us[0] += 100.0 * ns as f64 / total as f64;
    }
    us
}

/// `;min;max;mean;stddev` of a latency in usec (integers truncated, floats with 6 decimals).
fn lat_fields(s: &LatStat, out: &mut String) {
    match calc::lat_summary(s) {
        Some((min, max, mean, dev)) => {
            let _ = write!(
                out,
                ";{};{};{:.6};{:.6}",
                min / 1000,
                max / 1000,
                mean / 1000.0,
                dev / 1000.0
            );
        }
        None => out.push_str(";0;0;0.000000;0.000000"),
    }
}

/// Version 5's fields after a direction: bw samples, then IOPS min;max;mean;dev;samples.
fn v5_fields(r: &DirResult, out: &mut String) {
    let _ = write!(out, ";{}", r.bw.n);
    let s = &r.iops;
    if s.n > 0 {
        let _ = write!(
            out,
            ";{};{};{:.6};{:.6};{}",
            s.min,
            s.max,
            s.mean(),
            s.stddev(),
            s.n
        );
    } else {
        out.push_str(";0;0;0.000000;0.000000;0");
    }
}

/// The 41 fields of one direction.
fn dir_fields(job: &JobResult, r: &DirResult, group_agg: u64, out: &mut String) {
    let bw_kib = bytes_per_sec(r.io_bytes, r.runtime_ms) / 1024;
    let iops = bytes_per_sec(r.total_ios, r.runtime_ms);
    let _ = write!(
        out,
        ";{};{};{};{}",
        r.io_bytes >> 10,
        bw_kib,
        iops,
        r.runtime_ms
    );
    let empty = LatStat::default();
    lat_fields(if job.has_slat { &r.slat } else { &empty }, out);
    lat_fields(&r.clat, out);
    let source = if job.lat_percentiles {
        Some(&r.lat)
    } else if job.clat_percentiles {
        Some(&r.clat)
    } else {
        None
    };
    // fio lists its percentiles, as zeros, for a direction without samples too.
    let values = match source {
        Some(s) if s.n > 0 => calc::percentiles(&job.percentile_list, &s.hist),
        Some(_) => job.percentile_list.iter().map(|p| (*p, 0)).collect(),
        None => Vec::new(),
    };
    for i in 0..MAX_PERCENTILES {
        match values.get(i) {
            Some((p, v)) => {
                let _ = write!(out, ";{:.6}%={}", p, v / 1000);
            }
            None => out.push_str(";0%=0"),
        }
    }
    lat_fields(&r.lat, out);
    if r.bw.n > 0 {
        let mean = r.bw.mean();
        let per = calc::bw_share_terse(group_agg, mean);
        let _ = write!(
            out,
            ";{};{};{:.6}%;{:.6};{:.6}",
            r.bw.min,
            r.bw.max,
            per,
            mean,
            r.bw.stddev()
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
}

/// `;name;rios;wios;rmerge;wmerge;rticks;wticks;in_queue;util%` plus `;slaves;...` averages for
/// a stacked device.
fn disk_fields(d: &DiskResult, out: &mut String) {
    let _ = write!(
        out,
        ";{};{};{};{};{};{};{};{};{:3.2}%",
        d.name,
        d.ios[0],
        d.ios[1],
        d.merges[0],
        d.merges[1],
        d.ticks[0],
        d.ticks[1],
        d.in_queue,
        d.util.min(100.0)
    );
    if let Some(a) = disk_agg(d) {
        let _ = write!(
            out,
            ";slaves;{};{};{};{};{};{};{};{:3.2}%",
            a.ios[0],
            a.ios[1],
            a.merges[0],
            a.merges[1],
            a.ticks[0],
            a.ticks[1],
            a.in_queue,
            a.util
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_count_is_fixed() {
        let mut job = JobResult {
            name: "j".into(),
            clat_percentiles: true,
            percentile_list: fiox_job::DEFAULT_PERCENTILES.to_vec(),
            ..Default::default()
        };
        let line = job_line(&job, &GroupResult::default(), &[]);
        // 5 general + 2 x 41 direction + 5 cpu + 7 depth + 10 usec + 12 msec.
        assert_eq!(line.trim_end().split(';').count(), 121);
        job.dirs.read.runtime_ms = 10;
        job.dirs.read.total_ios = 10;
        job.dirs.read.io_bytes = 40_960;
        for v in 1..=10u64 {
            job.dirs.read.clat.add(v * 1000);
        }
        let disk = DiskResult {
            name: "vda".into(),
            ..Default::default()
        };
        let line = job_line(&job, &GroupResult::default(), &[disk]);
        assert_eq!(line.trim_end().split(';').count(), 130);
        assert!(line.contains(";1.000000%=1;"), "{line}");
    }

    #[test]
    fn ns_buckets_fold_into_first_usec_bucket() {
        let mut job = JobResult::default();
        job.dirs.read.total_ios = 100;
        job.lat_buckets.ns[9] = 10;
        job.lat_buckets.us[0] = 5;
        assert_eq!(usec_buckets(&job)[0], 15.0);
    }
}
