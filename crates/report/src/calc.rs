//! Figures every format derives from the result model the same way fio derives them:
//! percentile lists, depth and latency bucket percentages (with fio's floors so that rare
//! events still show), a job's share of its group's bandwidth, and the group a job reports in.

use fiox_job::Ddir;
use fiox_stats::{GroupResult, Histogram, JobResult, LatStat, RunResult};

/// fio reports at most this many percentiles (`FIO_IO_U_LIST_MAX_LEN`); terse pads to it.
pub const MAX_PERCENTILES: usize = 20;

/// The percentile list as fio uses it: sorted ascending, zero (fio's list terminator) and
/// out-of-range entries dropped, at most [`MAX_PERCENTILES`] entries.
pub fn percentile_list(list: &[f64]) -> Vec<f64> {
    let mut l: Vec<f64> = list
        .iter()
        .copied()
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .collect();
    l.sort_by(|a, b| a.total_cmp(b));
    l.truncate(MAX_PERCENTILES);
    l
}

/// Decimals fio shows for percentiles: 2 for its default list; for a user's `percentile_list`,
/// the most digits written after a dot in any entry (`50:99:99.9999` -> 4, `50:99` -> 0). The
/// option text comes from the job's options; without it the decimals are read off the values.
pub fn percentile_precision(job: &JobResult) -> usize {
    let raw = job
        .job_options
        .iter()
        .rev()
        .find(|(k, _)| k == "percentile_list")
        .map(|(_, v)| v.as_str());
    match raw {
        Some(text) => text
            .split(':')
            .map(|t| {
                t.split_once('.').map_or(0, |(_, frac)| {
                    frac.chars().take_while(char::is_ascii_digit).count()
                })
            })
            .max()
            .unwrap_or(0),
        None if job.percentile_list == fiox_job::DEFAULT_PERCENTILES => 2,
        None => job
            .percentile_list
            .iter()
            .map(|p| {
                let s = p.to_string();
                s.split_once('.').map_or(0, |(_, frac)| frac.len())
            })
            .max()
            .unwrap_or(0),
    }
}

/// `(percentile, value in ns)` pairs read from a histogram.
pub fn percentiles(list: &[f64], hist: &Histogram) -> Vec<(f64, u64)> {
    percentile_list(list)
        .into_iter()
        .map(|p| (p, hist.percentile(p)))
        .collect()
}

/// min, max, mean, stddev of a latency stat, or None without samples (fio prints no line).
pub fn lat_summary(s: &LatStat) -> Option<(u64, u64, f64, f64)> {
    (s.n > 0).then(|| (s.min, s.max, s.mean(), s.stddev()))
}

/// Depth/submit/complete bucket percentages; a non-empty bucket shows at least 0.1%.
pub fn dist_pct(buckets: &[u64], total: u64) -> Vec<f64> {
    floored_pct(buckets, total, 0.1)
}

/// Latency bucket percentages of all read/write/trim I/Os; a non-empty bucket shows at least
/// 0.01%.
pub fn lat_pct(counts: &[u64], total: u64) -> Vec<f64> {
    floored_pct(counts, total, 0.01)
}

fn floored_pct(counts: &[u64], total: u64, floor: f64) -> Vec<f64> {
    let mut out = vec![0.0; counts.len()];
    fiox_stats::acct::pct_into(counts, total, floor, &mut out);
    out
}

/// I/Os issued over read, write and trim (fio's `ddir_rw_sum(total_io_u)`).
pub fn total_rw_ios(job: &JobResult) -> u64 {
    Ddir::ALL
        .iter()
        .map(|d| job.dirs.get(*d).total_ios)
        .fold(0, u64::saturating_add)
}

/// Total of a distribution's buckets (fio's `total_submit`/`total_complete`).
pub fn bucket_total(buckets: &[u64]) -> u64 {
    buckets.iter().fold(0, |a, b| a.saturating_add(*b))
}

/// A job's bw mean (KiB/s) as a percentage of its group's aggregate bandwidth (bytes/s), as
/// fio's `per=`/`bw_agg`: the mean is truncated to an integer first and the result capped at
/// 100; groups below 1 KiB/s count as 100%.
pub fn bw_share(group_agg_bytes: u64, mean_kib: f64) -> f64 {
    if group_agg_bytes <= 1024 {
        return 100.0;
    }
    let mean = mean_kib as i64 as f64;
    (mean * 100.0 / (group_agg_bytes as f64 / 1024.0)).min(100.0)
}

/// The terse variant of [`bw_share`]: fio divides the aggregate by 1024 in integers there.
pub fn bw_share_terse(group_agg_bytes: u64, mean_kib: f64) -> f64 {
    let kib = group_agg_bytes / 1024;
    if group_agg_bytes == 0 || kib == 0 {
        return 100.0;
    }
    (mean_kib * 100.0 / kib as f64).min(100.0)
}

/// The reporting group a job belongs to; a default group (kb_base 1024, bytes) if the run has
/// none for it, so a partial result still prints.
pub fn group_of(run: &RunResult, groupid: u32) -> GroupResult {
    run.groups
        .iter()
        .find(|g| g.groupid == groupid)
        .cloned()
        .unwrap_or_else(|| GroupResult {
            groupid,
            kb_base: 1024,
            ..Default::default()
        })
}

/// The per-priority statistics fio prints for a direction: those with samples, in order, and
/// only when at least two priorities have samples (stat.c `get_nr_prios_with_samples`).
pub fn shown_prios(r: &fiox_stats::DirResult) -> Vec<&fiox_stats::PrioStat> {
    let with: Vec<&fiox_stats::PrioStat> = r.prios.iter().filter(|p| p.stat.n > 0).collect();
    if with.len() >= 2 {
        with
    } else {
        Vec::new()
    }
}

/// `(class, level)` of an ioprio value as fio prints them (`>> 13` and `& 7`).
pub fn prio_class_level(ioprio: u32) -> (u32, u32) {
    (ioprio >> 13, ioprio & 7)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_list_sorted_and_bounded() {
        let l = percentile_list(&[99.0, 0.0, 50.0, 1.0, 101.0]);
        assert_eq!(l, vec![1.0, 50.0, 99.0]);
        let many: Vec<f64> = (1..=30).map(f64::from).collect();
        assert_eq!(percentile_list(&many).len(), MAX_PERCENTILES);
    }

    #[test]
    fn percentile_precision_as_fio() {
        let mut job = JobResult {
            percentile_list: fiox_job::DEFAULT_PERCENTILES.to_vec(),
            ..Default::default()
        };
        assert_eq!(percentile_precision(&job), 2);
        job.job_options = vec![("percentile_list".into(), "50:99:99.9999".into())];
        assert_eq!(percentile_precision(&job), 4);
        job.job_options = vec![("percentile_list".into(), "50:99".into())];
        assert_eq!(percentile_precision(&job), 0);
        job.job_options.clear();
        job.percentile_list = vec![50.0, 99.5];
        assert_eq!(percentile_precision(&job), 1);
    }

    #[test]
    fn floors_make_rare_buckets_visible() {
        assert_eq!(dist_pct(&[1, 9999], 10_000), vec![0.1, 99.99]);
        assert_eq!(lat_pct(&[1, 0], 1_000_000), vec![0.01, 0.0]);
        assert_eq!(dist_pct(&[3], 0), vec![0.0]);
    }

    #[test]
    fn bw_share_as_fio() {
        // A mean above the aggregate (sampling jitter) is capped at 100.
        assert_eq!(bw_share(115_664_407, 120_000.0), 100.0);
        let p = bw_share(115_664_407, 110_669.33);
        assert!((p - 97.977_467).abs() < 1e-5, "{p}");
        assert_eq!(bw_share(500, 10.0), 100.0);
    }
}
