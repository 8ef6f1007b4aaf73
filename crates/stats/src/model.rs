//! The result model: what one job (or a group_reporting merge of jobs) measured, what a
//! reporting group adds up to, and what the disks under the jobs did. The runner fills these;
//! `fiox-report` prints them in fio's formats. Everything here is plain data plus merging.

use crate::hist::Histogram;
use fiox_job::PerDir;

/// Running statistics of one latency kind (slat, clat or lat) in nanoseconds: min/max (exact),
/// mean and sample variance (from running sums), plus a histogram for percentiles.
///
/// Mean and variance come from the sum and sum of squares of the samples' distances to a
/// shift (the first sample), accumulated in f64: two independent additions per sample instead
/// of Welford's dependent division (about 4x cheaper per I/O), and — the values being centred —
/// no cancellation: integer-valued partial sums stay exact up to 2^53.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LatStat {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    shift: u64,
    sum: f64,
    sumsq: f64,
    pub hist: Histogram,
}

impl LatStat {
    #[inline]
    pub fn add(&mut self, ns: u64) {
        self.add_summary(ns);
        self.hist.record(ns);
    }

    /// Count one sample in min/max/mean/stddev only, not in the histogram: for a statistic
    /// whose percentiles no report asks for (fio keeps no slat/lat histogram unless
    /// `slat_percentiles` / `lat_percentiles`), which saves a bucket update per I/O.
    #[inline]
    pub fn add_summary(&mut self, ns: u64) {
        if self.n == 0 {
            self.shift = ns;
            self.min = ns;
        } else if ns < self.min {
            self.min = ns;
        }
        if ns > self.max {
            self.max = ns;
        }
        self.n += 1;
        let d = ns.wrapping_sub(self.shift) as i64 as f64;
        self.sum += d;
        self.sumsq += d * d;
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        self.shift as f64 + self.sum / self.n as f64
    }

    /// Sum of squared deviations from the mean.
    fn m2(&self) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        (self.sumsq - self.sum * self.sum / self.n as f64).max(0.0)
    }

    /// Sample standard deviation (n-1), as fio prints it.
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2() / (self.n - 1) as f64).sqrt()
        }
    }

    /// Combine two disjoint sample sets: `o`'s sums are re-based onto this shift.
    pub fn merge(&mut self, o: &LatStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = o.clone();
            return;
        }
        // o's values are d + o.shift = (d + delta) + self.shift.
        let delta = o.shift as f64 - self.shift as f64;
        let on = o.n as f64;
        self.sum += o.sum + on * delta;
        self.sumsq += o.sumsq + 2.0 * delta * o.sum + on * delta * delta;
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.hist.merge(&o.hist);
    }

    /// Rebuild from summary figures (sample standard deviation), e.g. results read back from
    /// another fiox/fio or figures a test wants printed exactly.
    pub fn from_parts(n: u64, min: u64, max: u64, mean: f64, stddev: f64, hist: Histogram) -> Self {
        let m2 = if n > 1 {
            stddev * stddev * (n - 1) as f64
        } else {
            0.0
        };
        // Shift to the integer below the mean, so the sums are small and the mean exact.
        let shift = mean.max(0.0).floor() as u64;
        let sum = n as f64 * (mean - shift as f64);
        let sumsq = if n > 0 {
            m2 + sum * sum / n as f64
        } else {
            0.0
        };
        LatStat {
            n,
            min,
            max,
            shift,
            sum,
            sumsq,
            hist,
        }
    }

    /// Forget all samples (ramp_time end) in place, keeping the histogram's allocation.
    pub fn reset(&mut self) {
        self.n = 0;
        self.min = 0;
        self.max = 0;
        self.shift = 0;
        self.sum = 0.0;
        self.sumsq = 0.0;
        self.hist.reset();
    }
}

/// Summary of periodic samples (bw in KiB/s or IOPS), as fio's `bw (...)` and `iops` rows.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SampleStat {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    mean: f64,
    m2: f64,
}

impl SampleStat {
    pub fn add(&mut self, v: u64) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        self.n += 1;
        let d = v as f64 - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v as f64 - self.mean);
    }
    pub fn mean(&self) -> f64 {
        self.mean
    }
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }
    /// Rebuild from summary figures (sample standard deviation); see [`LatStat::from_parts`].
    pub fn from_parts(n: u64, min: u64, max: u64, mean: f64, stddev: f64) -> Self {
        let m2 = if n > 1 {
            stddev * stddev * (n - 1) as f64
        } else {
            0.0
        };
        SampleStat {
            n,
            min,
            max,
            mean,
            m2,
        }
    }
    /// fio's group_reporting sum of bw/iops samples (`sum_stat(.., pure_sum = true)`): the
    /// jobs ran side by side, so min, max, mean, sample count and the sum of squares are each
    /// added up — the group's figures describe the aggregate rate, not one job's.
    pub fn sum_parallel(&mut self, o: &SampleStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = o.clone();
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.n += o.n;
        self.mean += o.mean;
        self.m2 += o.m2;
    }

    pub fn merge(&mut self, o: &SampleStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = o.clone();
            return;
        }
        let n = self.n + o.n;
        let d = o.mean - self.mean;
        self.m2 += o.m2 + d * d * (self.n as f64) * (o.n as f64) / n as f64;
        self.mean += d * o.n as f64 / n as f64;
        self.n = n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }
}

/// One direction (read, write or trim) of one job.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DirResult {
    pub io_bytes: u64,
    pub total_ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    /// Milliseconds this direction was active (fio's per-direction `runtime`).
    pub runtime_ms: u64,
    pub slat: LatStat,
    pub clat: LatStat,
    pub lat: LatStat,
    /// Bandwidth samples in KiB/s (every `bwavgtime`).
    pub bw: SampleStat,
    pub iops: SampleStat,
    /// Per-priority latencies (fio's `clat_prio`), in the order fio keeps them (the job's
    /// default priority first); empty when the job has no per-priority statistics.
    pub prios: Vec<PrioStat>,
}

/// The latencies of one priority's I/Os: clat, or lat with `lat_percentiles` (fio reports one
/// kind per priority).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PrioStat {
    /// ioprio value: `class << 13 | level`.
    pub ioprio: u32,
    pub stat: LatStat,
}

/// Distribution buckets fio prints as `IO depths`, `submit`, `complete`.
/// Depth buckets: 1, 2, 4, 8, 16, 32, >=64. Submit/complete buckets: 0, 4, 8, 16, 32, 64, >=64.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DepthDist {
    pub buckets: [u64; 7],
}

/// Exact latency bucket counts (`lat (nsec/usec/msec)` lines and JSON `latency_ns/us/ms`),
/// counted per I/O on its completion latency (clat), as fio does; see [`LatBuckets::add`].
/// ns and us: 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000; ms adds 2000 and >=2000.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LatBuckets {
    pub ns: [u64; 10],
    pub us: [u64; 10],
    pub ms: [u64; 12],
}

/// Page-cache residency of a job's I/O region, measured with cachestat(2) (or mincore).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PageCache {
    /// `cachestat` or `mincore`.
    pub method: String,
    /// Bytes of the job's region over all its files.
    pub region_bytes: u64,
    /// Cached bytes of the region when the I/O began (after `invalidate`).
    pub cached_before: u64,
    /// Cached bytes of the region when the I/O ended.
    pub cached_after: u64,
}

impl PageCache {
    /// Sum over jobs (group_reporting).
    pub fn merge(&mut self, o: &PageCache) {
        self.region_bytes += o.region_bytes;
        self.cached_before += o.cached_before;
        self.cached_after += o.cached_after;
    }
}

pub use crate::warning::{Warning, WarningCode};

/// Everything one job measured (or several, merged for group_reporting).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JobResult {
    pub name: String,
    /// `significant_figures` (0 = fio's default 4).
    pub sig_figs: u32,
    pub groupid: u32,
    /// fio 3.42's `job_start` (`job_start_clock_id`): ms on that clock at the job's epoch.
    pub job_start_ms: Option<u64>,
    /// How many jobs were merged into this result (`jobs=N` in the header line).
    pub jobs: u32,
    /// First error (errno) or 0.
    pub error: i32,
    pub pid: u32,
    /// `--explain` in windows: per direction (read, write) the count and summed latency (ns)
    /// of the I/Os that started and ended inside one window, what the phases add up to.
    #[cfg_attr(feature = "serde", serde(default, skip))]
    pub explain_window_lat: Option<[(u64, u64); 2]>,
    /// Wall-clock start of the job, seconds since the epoch (fio's `Sun Nov 22 05:04:54 2026`).
    pub start_unix: u64,
    /// Seconds from job start to end, including ramp (`elapsed`).
    pub elapsed_s: u64,
    /// Wall-clock ms since the epoch when the job's I/O began (after setup, before its
    /// ramp_time; 0: unknown): where `fiox plot` places the job's logs on the run's clock.
    pub io_start_unix_ms: u64,
    /// Milliseconds of measured run time (fio's `job_runtime`).
    pub runtime_ms: u64,
    pub dirs: PerDir<DirResult>,
    /// fsync/fdatasync calls (fio's `sync` JSON object).
    pub sync_lat: LatStat,
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    pub io_depth: DepthDist,
    pub submit: DepthDist,
    pub complete: DepthDist,
    pub lat_buckets: LatBuckets,
    pub iodepth: u32,
    /// The job's own ioprio value (`prio`/`prioclass`; 0 when unset): fio's `ts->ioprio`, the
    /// priority of every I/O that cmdprio did not pick.
    pub ioprio: u32,
    /// `unified_rw_reporting=both`: the directions, then their `mixed` sum.
    pub unified_both: bool,
    /// Options as the user wrote them, for JSON `job options`.
    pub job_options: Vec<(String, String)>,
    pub warnings: Vec<Warning>,
    /// How much of the job's files was in the page cache when its I/O began and when it ended
    /// (reading jobs on storage; the evidence behind the `page-cache` warning).
    pub page_cache: Option<PageCache>,
    /// `latency_target`: (final depth, target ns, window µs, percentile).
    pub lat_target: Option<(u32, u64, u64, f64)>,
    /// `block_error_percentiles`: the job's blocks as fio encodes them (see [`crate::blocks`]).
    pub block_infos: Option<Vec<u32>>,
    /// fio's steady state detection (`ss_dur` set): its window and verdict.
    pub steadystate: Option<SteadyResult>,
    /// Percentiles to print (0..=100) and whether each latency kind shows them.
    pub percentile_list: Vec<f64>,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    /// Whether slat is meaningful (false for sync engines: fio prints no slat line).
    pub has_slat: bool,
    /// `unified_rw_reporting=mixed`: every direction was folded into the read slot, which is
    /// reported as `mixed`.
    pub mixed: bool,
    /// `description=` of the job (empty: none), printed as fio's `Description  : [..]`.
    pub description: String,
    /// `--profile=act`: the job's hour-long latency slices (None: not an act run).
    pub act_slices: Option<Vec<ActSlice>>,
    /// Text fio shows after a non-zero `err=` (e.g. `file:engine, func=io_u error,
    /// error=Input/output error`); empty when `error` is 0.
    pub verror: String,
    /// `continue_on_error` was set (not `none`): fio then reports the tolerated errors (normal
    /// `errors` line, JSON `total_err`/`first_error`, two extra terse fields).
    pub continue_on_error: bool,
    /// I/O errors tolerated under continue_on_error/ignore_error.
    pub total_err: u64,
    /// errno of the first tolerated error, 0 if none.
    pub first_error: i32,
}

/// fio's act profile pass criteria: at most `per_mille`/1000 of the I/Os of an hour may take
/// longer than `usec` (5% over 1 ms, 1% over 8 ms, 0.1% over 64 ms).
pub const ACT_CRITERIA: [ActCriterion; 3] = [
    ActCriterion {
        usec: 1000,
        per_mille: 50,
    },
    ActCriterion {
        usec: 8000,
        per_mille: 10,
    },
    ActCriterion {
        usec: 64000,
        per_mille: 1,
    },
];

/// One of act's latency limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActCriterion {
    pub usec: u64,
    pub per_mille: u64,
}

/// One hour of an act run: I/Os completed, and how many of them went over each criterion's
/// latency (an I/O counts only in the highest limit it exceeds, as in fio).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ActSlice {
    pub total_ios: u64,
    pub over: [u64; 3],
}

impl ActSlice {
    /// Count one I/O that took `usec` (total latency).
    pub fn add(&mut self, usec: u64) {
        self.total_ios += 1;
        if let Some(i) = ACT_CRITERIA.iter().rposition(|c| usec > c.usec) {
            self.over[i] += 1;
        }
    }

    /// Percent of the slice's I/Os over limit `i` (0 without I/O).
    pub fn percent(&self, i: usize) -> f64 {
        if self.total_ios == 0 {
            return 0.0;
        }
        100.0 * self.over[i] as f64 / self.total_ios as f64
    }

    /// How many criteria the slice fails (fio's show_slice: percent x 10 >= the limit).
    pub fn failures(&self) -> usize {
        (0..3)
            .filter(|&i| self.percent(i) * 10.0 >= ACT_CRITERIA[i].per_mille as f64)
            .count()
    }
}

/// Add `from`'s slices into `into`, slice by slice (the run's total over its jobs).
pub fn merge_act_slices(into: &mut Vec<ActSlice>, from: &[ActSlice]) {
    if into.len() < from.len() {
        into.resize(from.len(), ActSlice::default());
    }
    for (d, s) in into.iter_mut().zip(from) {
        d.total_ios += s.total_ios;
        for i in 0..3 {
            d.over[i] += s.over[i];
        }
    }
}

/// One reporting group's totals per direction (`Run status group N`).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GroupDir {
    pub io_bytes: u64,
    /// Aggregate bandwidth: io_bytes over the longest runtime, bytes/s.
    pub agg_bw: u64,
    /// Slowest and fastest job bandwidth, bytes/s.
    pub min_bw: u64,
    pub max_bw: u64,
    pub min_runtime_ms: u64,
    pub max_runtime_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GroupResult {
    pub groupid: u32,
    /// The group's jobs report one `mixed` direction (in the read slot).
    pub mixed: bool,
    /// `unified_rw_reporting=both`: a `MIXED` line follows the per-direction lines.
    pub both: bool,
    pub dirs: PerDir<GroupDir>,
    pub kb_base: u32,
    pub unit_base: u32,
    /// `significant_figures` of the group's last job, as fio takes it (0 = default 4).
    pub sig_figs: u32,
}

/// `/sys/block/DEV/stat` deltas over the run, plus the underlying disks of stacked devices.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DiskResult {
    pub name: String,
    /// read, write
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks: [u64; 2],
    pub io_ticks: u64,
    pub in_queue: u64,
    /// Percent of the run the device was busy.
    pub util: f64,
    /// For stacked devices (md, dm): the devices underneath, aggregated (fio's slaves).
    pub slaves: Vec<DiskResult>,
    /// For a loop device: the disk holding its backing file. fio does not follow loop devices,
    /// so this is shown only in fiox's part of the reports (JSON `fiox.backing_disks`).
    pub backing: Vec<DiskResult>,
}

/// A whole run: what every report format prints.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RunResult {
    pub jobs: Vec<JobResult>,
    pub groups: Vec<GroupResult>,
    pub disks: Vec<DiskResult>,
    /// Options from `[global]` sections, for JSON `global options`.
    pub global_options: Vec<(String, String)>,
    pub start_unix_ms: u64,
    pub warnings: Vec<Warning>,
    /// `--idle-prof=system|percpu`: the CPU idleness measured while the jobs ran.
    pub idle: Option<IdleResult>,
}

/// fio's idle profiling (`--idle-prof`): how much of each CPU a lowest-priority thread could
/// use while the jobs ran, from the work it got done against its calibrated speed.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct IdleResult {
    /// `percpu`: each CPU's idleness is reported too.
    pub percpu_shown: bool,
    /// `calibrate`: only the unit of work was measured (no jobs ran).
    pub calibrate_only: bool,
    /// Mean idleness over all CPUs, in percent.
    pub system: f64,
    /// Each CPU's idleness, in percent.
    pub percpu: Vec<f64>,
    /// Mean and standard deviation over the CPUs of the time one unit of work took when
    /// calibrating, in µs.
    pub unit_mean: f64,
    pub unit_stddev: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_parts_keeps_summary() {
        let mut all = LatStat::default();
        for v in [10u64, 20, 45, 80] {
            all.add(v);
        }
        let rebuilt = LatStat::from_parts(4, 10, 80, all.mean(), all.stddev(), Histogram::new());
        assert!((rebuilt.mean() - all.mean()).abs() < 1e-9);
        assert!((rebuilt.stddev() - all.stddev()).abs() < 1e-9);
        let s = SampleStat::from_parts(3, 1, 9, 5.0, 4.0);
        assert_eq!((s.n, s.min, s.max), (3, 1, 9));
        assert!((s.stddev() - 4.0).abs() < 1e-9);
    }

    #[test]
    fn summary_only_samples_keep_every_figure_but_the_histogram() {
        let (mut full, mut summary) = (LatStat::default(), LatStat::default());
        for v in [7_000u64, 1_200, 950_000, 33, 7_000, 2_000_000_000] {
            full.add(v);
            summary.add_summary(v);
        }
        assert_eq!(
            (summary.n, summary.min, summary.max),
            (6, 33, 2_000_000_000)
        );
        assert_eq!(
            (summary.n, summary.min, summary.max),
            (full.n, full.min, full.max)
        );
        assert_eq!(summary.mean(), full.mean());
        assert_eq!(summary.stddev(), full.stddev());
        assert!(summary.hist.is_empty());
        assert_eq!(full.hist.count(), 6);
    }

    /// Two-pass reference on values re-based to their minimum (so f64 sums stay exact).
    fn reference(v: &[u64]) -> (f64, f64) {
        let base = *v.iter().min().unwrap();
        let n = v.len() as f64;
        let mean = v.iter().map(|&x| (x - base) as f64).sum::<f64>() / n;
        let m2: f64 = v.iter().map(|&x| ((x - base) as f64 - mean).powi(2)).sum();
        (base as f64 + mean, (m2 / (n - 1.0)).sqrt())
    }

    #[test]
    fn accurate_far_from_the_first_sample_and_for_huge_values() {
        // First sample an outlier, then a tight cluster far away: no cancellation trouble.
        let mut v = vec![5_000_000u64];
        v.extend((0..100_000u64).map(|i| 80_000 + (i * 7919) % 1000));
        // And a cluster around 10^15 ns (11 days) with a spread of a few ns.
        let big: Vec<u64> = (0..1000u64)
            .map(|i| 1_000_000_000_000_000 + i % 5)
            .collect();
        for set in [&v, &big] {
            let mut s = LatStat::default();
            set.iter().for_each(|&x| s.add(x));
            let (mean, sd) = reference(set);
            assert!(
                (s.mean() - mean).abs() <= mean * 1e-12,
                "{} vs {mean}",
                s.mean()
            );
            assert!(
                (s.stddev() - sd).abs() <= sd * 1e-6,
                "{} vs {sd}",
                s.stddev()
            );
        }
        let mut one = LatStat::default();
        one.add(42);
        assert_eq!(
            (one.mean(), one.stddev(), one.min, one.max),
            (42.0, 0.0, 42, 42)
        );
        assert_eq!(LatStat::default().mean(), 0.0);
        let p = LatStat::from_parts(1, 6, 6, 6.31, 0.0, Histogram::new());
        assert!(
            (p.mean() - 6.31).abs() < 1e-12,
            "figures survive from_parts"
        );
    }

    #[test]
    fn merge_equals_sequential() {
        let (mut a, mut b, mut all) = (LatStat::default(), LatStat::default(), LatStat::default());
        for v in 1..100u64 {
            a.add(v * 7);
            all.add(v * 7);
        }
        for v in 1..50u64 {
            b.add(v * 13 + 5);
            all.add(v * 13 + 5);
        }
        a.merge(&b);
        assert_eq!(a.n, all.n);
        assert_eq!((a.min, a.max), (all.min, all.max));
        assert!((a.mean() - all.mean()).abs() < 1e-9);
        assert!((a.stddev() - all.stddev()).abs() < 1e-6);
    }
}

/// fio's `steadystate` section: the criterion, the window's samples (oldest first) and
/// whether steady state was attained.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SteadyResult {
    /// Judged on IOPS (else bandwidth).
    pub iops: bool,
    /// By slope (else by largest deviation from the mean).
    pub slope: bool,
    /// The limit and criterion are percentages of the mean.
    pub pct: bool,
    pub limit: f64,
    /// `ss_dur` in seconds (samples in the window).
    pub duration: u64,
    pub attained: bool,
    /// The last value of the criterion.
    pub criterion: f64,
    pub max_deviation: f64,
    pub slope_value: f64,
    /// Bytes/s per sample.
    pub bw: Vec<u64>,
    /// IOPS per sample.
    pub iops_data: Vec<u64>,
    pub bw_mean: u64,
    pub iops_mean: u64,
}
