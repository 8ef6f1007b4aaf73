//! Reporting groups: the `Run status group N` totals ([`group_results`]), the group_reporting
//! merge of a group's jobs into one result ([`merge_jobs`]) and a job's share of its group's
//! bandwidth (`per=` / JSON `bw_agg`, [`bw_agg_pct`]), with fio 3.33's definitions
//! (stat.c: `__show_run_stats`, `sum_thread_stats`, `convert_agg_kbytes_percent`).

use crate::model::{DirResult, GroupDir, GroupResult, JobResult, PrioStat, Warning};
use fiox_job::{Ddir, PerDir};

/// One `GroupResult` per distinct `groupid`, ascending.
///
/// Pass the results exactly as they will be reported: with group_reporting that is the merged
/// result of the group ([`merge_jobs`]), so — as in fio — min/max bandwidth then describe the
/// merged job. Per direction, jobs that did not run it (runtime 0) are skipped; for the rest:
/// `io_bytes` is summed, a job's bandwidth is `io_bytes * 1000 / runtime_ms` (bytes/s, integer
/// division), `min_bw`/`max_bw` and `min_runtime_ms`/`max_runtime_ms` are the extremes over jobs,
/// and `agg_bw = io_bytes * 1000 / max_runtime_ms`. Directions nobody ran stay all zero.
pub fn group_results(jobs: &[JobResult], kb_base: u32, unit_base: u32) -> Vec<GroupResult> {
    let mut ids: Vec<u32> = jobs.iter().map(|j| j.groupid).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|gid| {
            let members: Vec<&JobResult> = jobs.iter().filter(|j| j.groupid == gid).collect();
            let mut dirs = PerDir::<GroupDir>::default();
            for d in Ddir::ALL {
                *dirs.get_mut(d) = group_dir(members.iter().map(|j| j.dirs.get(d)));
            }
            GroupResult {
                groupid: gid,
                mixed: members.iter().any(|j| j.mixed),
                both: members.iter().any(|j| j.unified_both),
                dirs,
                kb_base,
                unit_base,
                // fio takes the group's figures from its last job.
                sig_figs: members.last().map_or(0, |j| j.sig_figs),
            }
        })
        .collect()
}

fn group_dir<'a>(dirs: impl Iterator<Item = &'a DirResult>) -> GroupDir {
    let mut g = GroupDir::default();
    let mut any = false;
    for d in dirs.filter(|d| d.runtime_ms > 0) {
        let bw = d.io_bytes.saturating_mul(1000) / d.runtime_ms;
        if !any {
            g.min_runtime_ms = d.runtime_ms;
            g.min_bw = bw;
            any = true;
        }
        g.min_runtime_ms = g.min_runtime_ms.min(d.runtime_ms);
        g.max_runtime_ms = g.max_runtime_ms.max(d.runtime_ms);
        g.min_bw = g.min_bw.min(bw);
        g.max_bw = g.max_bw.max(bw);
        g.io_bytes += d.io_bytes;
    }
    g.agg_bw = g
        .io_bytes
        .saturating_mul(1000)
        .checked_div(g.max_runtime_ms)
        .unwrap_or(0);
    g
}

/// A job's share of its group's aggregate bandwidth, in percent (`per=` and JSON `bw_agg`):
/// the job's mean bw sample (KiB/s, truncated to an integer as fio does) over the group's
/// `agg_bw` in KiB/s, capped at 100; 100 when the group moved at most 1 KiB/s.
pub fn bw_agg_pct(bw_mean_kib: f64, group: &GroupDir) -> f64 {
    if group.agg_bw <= 1024 {
        return 100.0;
    }
    let mean = bw_mean_kib.trunc();
    (mean * 100.0 / (group.agg_bw as f64 / 1024.0)).min(100.0)
}

/// Merge the jobs of one group for group_reporting, with fio's semantics:
/// - identity (name, groupid, pid, start, description, options, percentile settings, iodepth)
///   from the first job; `jobs` is the total number of jobs merged; `error`/`verror` are the first
///   non-zero error; `elapsed_s` is the longest;
/// - slat/clat/lat/sync latencies are merged as one sample set (exact min/max/mean/stddev,
///   summed histograms);
/// - bw and iops samples are added up as parallel rates ([`crate::SampleStat::sum_parallel`]);
/// - bytes, I/O counts, cpu time, ctx/majf/minf, depth and latency buckets are summed;
/// - per-direction runtime is the longest; `runtime_ms` (JSON `job_runtime`) is the sum, and
///   cpu percentages are total cpu time over that sum;
/// - warnings are the union (by code, first occurrence kept).
///
/// fio prints the options of the *last* job of the group beside the name of the first (a known
/// inconsistency); here both come from the first job. An empty slice gives a default result.
pub fn merge_jobs(jobs: &[JobResult]) -> JobResult {
    let Some(first) = jobs.first() else {
        return JobResult::default();
    };
    let mut m = first.clone();
    m.jobs = first.jobs.max(1);
    let mut usr_ms = cpu_ms(first.usr_cpu_pct, first.runtime_ms);
    let mut sys_ms = cpu_ms(first.sys_cpu_pct, first.runtime_ms);
    for j in &jobs[1..] {
        m.jobs += j.jobs.max(1);
        if m.error == 0 && j.error != 0 {
            m.error = j.error;
            m.verror = j.verror.clone();
        }
        m.elapsed_s = m.elapsed_s.max(j.elapsed_s);
        for d in Ddir::ALL {
            merge_dir(m.dirs.get_mut(d), j.dirs.get(d));
        }
        m.sync_lat.merge(&j.sync_lat);
        usr_ms += cpu_ms(j.usr_cpu_pct, j.runtime_ms);
        sys_ms += cpu_ms(j.sys_cpu_pct, j.runtime_ms);
        m.runtime_ms += j.runtime_ms;
        m.ctx += j.ctx;
        m.majf += j.majf;
        m.minf += j.minf;
        m.io_depth.merge(&j.io_depth);
        m.submit.merge(&j.submit);
        m.complete.merge(&j.complete);
        m.lat_buckets.merge(&j.lat_buckets);
        m.has_slat |= j.has_slat;
        if let Some(js) = &j.act_slices {
            crate::model::merge_act_slices(m.act_slices.get_or_insert_with(Vec::new), js);
        }
        merge_warnings(&mut m.warnings, &j.warnings);
        match (&mut m.page_cache, &j.page_cache) {
            (Some(a), Some(b)) => a.merge(b),
            (a @ None, Some(b)) => *a = Some(b.clone()),
            _ => {}
        }
    }
    merge_prios(&mut m, jobs);
    if m.runtime_ms > 0 {
        m.usr_cpu_pct = usr_ms * 100.0 / m.runtime_ms as f64;
        m.sys_cpu_pct = sys_ms * 100.0 / m.runtime_ms as f64;
    }
    m
}

/// CPU milliseconds behind a percentage of a runtime (inverse of fio's `usr_time*100/runtime`).
fn cpu_ms(pct: f64, runtime_ms: u64) -> f64 {
    pct * runtime_ms as f64 / 100.0
}

/// Per-priority statistics of a group_reporting merge, as fio's `sum_clat_prio_stats`: kept
/// when some job has them (cmdprio) or the jobs ran at different priorities; then each job
/// adds its lists, or its whole clat (lat with lat_percentiles) under its own priority.
fn merge_prios(m: &mut JobResult, jobs: &[JobResult]) {
    let any_lists = jobs
        .iter()
        .any(|j| Ddir::ALL.iter().any(|&d| !j.dirs.get(d).prios.is_empty()));
    let mixed_prios = jobs.iter().any(|j| j.ioprio != m.ioprio);
    if !any_lists && !mixed_prios {
        return;
    }
    for d in Ddir::ALL {
        let mut out = Vec::new();
        for j in jobs {
            add_prios(&mut out, &prio_view(j, d));
        }
        m.dirs.get_mut(d).prios = out;
    }
}

/// A direction's per-priority statistics; a direction without them is all at the job's
/// priority (fio's `sum_clat_prio_stats_src_single_prio`).
fn prio_view(job: &JobResult, d: Ddir) -> Vec<PrioStat> {
    let r = job.dirs.get(d);
    if !r.prios.is_empty() {
        return r.prios.clone();
    }
    let stat = if job.lat_percentiles { &r.lat } else { &r.clat };
    vec![PrioStat {
        ioprio: job.ioprio,
        stat: stat.clone(),
    }]
}

/// Add `from` into `into` by priority; priorities new to `into` go at the end, in order.
fn add_prios(into: &mut Vec<PrioStat>, from: &[PrioStat]) {
    for p in from {
        match into.iter_mut().find(|x| x.ioprio == p.ioprio) {
            Some(x) => x.stat.merge(&p.stat),
            None => into.push(p.clone()),
        }
    }
}

/// `unified_rw_reporting=mixed`: writes and trims summed into the read slot (fio sums them
/// into one direction the same way), which reports print as `mixed`. Per-priority statistics,
/// where the job has them, are summed by priority across the directions.
pub fn fold_mixed(job: &mut JobResult) {
    if job.mixed {
        return;
    }
    let has_prios = Ddir::ALL.iter().any(|&d| !job.dirs.get(d).prios.is_empty());
    let mut prios = Vec::new();
    if has_prios {
        for d in Ddir::ALL {
            add_prios(&mut prios, &prio_view(job, d));
        }
    }
    for d in [Ddir::Write, Ddir::Trim] {
        let other = std::mem::take(job.dirs.get_mut(d));
        merge_dir(job.dirs.get_mut(Ddir::Read), &other);
    }
    job.dirs.get_mut(Ddir::Read).prios = prios;
    job.mixed = true;
}

/// `unified_rw_reporting=both`: the `mixed` figures printed after the directions (fio's
/// `gen_mixed_ddir_stats_from_ts`), in the read slot of a copy of the job.
pub fn mixed_view(job: &JobResult) -> JobResult {
    let mut m = job.clone();
    fold_mixed(&mut m);
    m
}

fn merge_dir(a: &mut DirResult, b: &DirResult) {
    a.io_bytes += b.io_bytes;
    a.total_ios += b.total_ios;
    a.short_ios += b.short_ios;
    a.drop_ios += b.drop_ios;
    a.runtime_ms = a.runtime_ms.max(b.runtime_ms);
    a.slat.merge(&b.slat);
    a.clat.merge(&b.clat);
    a.lat.merge(&b.lat);
    a.bw.sum_parallel(&b.bw);
    a.iops.sum_parallel(&b.iops);
}

fn merge_warnings(into: &mut Vec<Warning>, from: &[Warning]) {
    for w in from {
        if !into.iter().any(|x| x.code == w.code) {
            into.push(w.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LatStat, SampleStat, WarningCode};

    fn job(name: &str, gid: u32, read_bytes: u64, read_ms: u64, write: (u64, u64)) -> JobResult {
        let mut j = JobResult {
            name: name.into(),
            groupid: gid,
            jobs: 1,
            runtime_ms: read_ms.max(write.1),
            ..Default::default()
        };
        j.dirs.read.io_bytes = read_bytes;
        j.dirs.read.runtime_ms = read_ms;
        j.dirs.write.io_bytes = write.0;
        j.dirs.write.runtime_ms = write.1;
        j
    }

    #[test]
    fn group_totals_follow_fio_definitions() {
        let jobs = vec![
            job("a", 0, 100 << 20, 2000, (0, 0)),
            job("b", 0, 300 << 20, 1000, (10 << 20, 500)),
            job("c", 1, 1 << 20, 1000, (0, 0)),
        ];
        let g = group_results(&jobs, 1024, 0);
        assert_eq!(g.len(), 2);
        let r = &g[0].dirs.read;
        assert_eq!(r.io_bytes, 400 << 20);
        assert_eq!(r.min_runtime_ms, 1000);
        assert_eq!(r.max_runtime_ms, 2000);
        assert_eq!(r.min_bw, (100u64 << 20) * 1000 / 2000);
        assert_eq!(r.max_bw, (300u64 << 20) * 1000 / 1000);
        assert_eq!(
            r.agg_bw,
            (400u64 << 20) * 1000 / 2000,
            "over the longest runtime"
        );
        // Only job b wrote: a's zero-runtime write direction does not drag min down.
        let w = &g[0].dirs.write;
        assert_eq!((w.min_runtime_ms, w.max_runtime_ms), (500, 500));
        assert_eq!(w.min_bw, w.max_bw);
        assert_eq!(g[0].dirs.trim, GroupDir::default());
        assert_eq!((g[1].groupid, g[1].dirs.read.io_bytes), (1, 1 << 20));
        assert_eq!((g[0].kb_base, g[0].unit_base), (1024, 0));
        assert!(group_results(&[], 1000, 8).is_empty());
    }

    /// Figures of a real fio 3.33 run (two jobs, one group): per-job io_bytes/runtime/bw mean
    /// from its JSON, group line `READ: bw=3237MiB/s (3394MB/s), 463MiB/s-2777MiB/s
    /// (485MB/s-2912MB/s), io=3263MiB (3421MB), run=1001-1008msec` and `bw_agg` per job.
    #[test]
    fn matches_a_real_fio_run() {
        let mut a = job("a", 0, 485_965_824, 1001, (485_289_984, 1001));
        let b = job("b", 0, 2_935_160_832, 1008, (0, 0));
        a.dirs.read.bw = SampleStat::from_parts(2, 0, 0, 439_376.0, 0.0);
        let g = &group_results(&[a.clone(), b], 1024, 0)[0];
        let r = &g.dirs.read;
        assert_eq!(
            (r.agg_bw, r.min_bw, r.max_bw),
            (3_393_974_857, 485_480_343, 2_911_865_904)
        );
        assert_eq!(
            (r.io_bytes, r.min_runtime_ms, r.max_runtime_ms),
            (3_421_126_656, 1001, 1008)
        );
        let w = &g.dirs.write;
        assert_eq!(
            (w.agg_bw, w.min_runtime_ms, w.max_runtime_ms),
            (484_805_178, 1001, 1001)
        );
        let per = bw_agg_pct(a.dirs.read.bw.mean(), r);
        assert!((per - 13.256463).abs() < 1e-6, "{per}");
        assert!((bw_agg_pct(437_344.0, w) - 92.375304).abs() < 1e-6);
    }

    #[test]
    fn per_share_of_group() {
        let g = GroupDir {
            agg_bw: 200 * 1024 * 1024,
            ..Default::default()
        };
        let pct = bw_agg_pct(51200.9, &g); // trunc -> 51200 KiB/s of 204800 KiB/s
        assert!((pct - 25.0).abs() < 1e-9, "{pct}");
        assert_eq!(bw_agg_pct(1e9, &g), 100.0, "capped");
        assert_eq!(bw_agg_pct(5.0, &GroupDir::default()), 100.0);
    }

    fn prio(ioprio: u32, vals: &[u64]) -> PrioStat {
        let mut stat = LatStat::default();
        for &v in vals {
            stat.add(v);
        }
        PrioStat { ioprio, stat }
    }

    #[test]
    fn prios_merge_by_priority_as_fio() {
        // a: cmdprio (default 0 and RT 0); b: no cmdprio, its whole clat at its own prio 0.
        let mut a = job("a", 0, 4096, 10, (0, 0));
        a.dirs.read.prios = vec![prio(0, &[10, 20]), prio(1 << 13, &[30])];
        let mut b = job("b", 0, 4096, 10, (0, 0));
        b.dirs.read.clat.add(40);
        let m = merge_jobs(&[b.clone(), a.clone()]);
        let got: Vec<(u32, u64)> = m
            .dirs
            .read
            .prios
            .iter()
            .map(|p| (p.ioprio, p.stat.n))
            .collect();
        assert_eq!(
            got,
            vec![(0, 3), (1 << 13, 1)],
            "b's entry first, a's merged in"
        );
        // Same priority, no cmdprio: no per-priority statistics at all.
        assert!(merge_jobs(&[b.clone(), b.clone()])
            .dirs
            .read
            .prios
            .is_empty());
        // mixed: directions summed by priority; a job without lists keeps none.
        let mut c = a.clone();
        c.dirs.write.prios = vec![prio(0, &[5]), prio(3 << 13, &[6])];
        fold_mixed(&mut c);
        let got: Vec<(u32, u64)> = c
            .dirs
            .read
            .prios
            .iter()
            .map(|p| (p.ioprio, p.stat.n))
            .collect();
        assert_eq!(got, vec![(0, 3), (1 << 13, 1), (3 << 13, 1)]);
        fold_mixed(&mut b);
        assert!(b.dirs.read.prios.is_empty());
    }

    #[test]
    fn merge_follows_sum_thread_stats() {
        let mut a = job("first", 2, 1000, 1000, (0, 0));
        let mut b = job("second", 2, 3000, 1500, (0, 0));
        a.pid = 11;
        b.pid = 22;
        b.error = 5;
        b.verror = "io error".into();
        a.usr_cpu_pct = 10.0; // 100 ms of 1000
        b.usr_cpu_pct = 20.0; // 300 ms of 1500
        a.ctx = 3;
        b.ctx = 4;
        for v in [10u64, 20, 30] {
            a.dirs.read.clat.add(v);
        }
        b.dirs.read.clat.add(1000);
        a.dirs.read.bw = SampleStat::from_parts(2, 100, 200, 150.0, 10.0);
        b.dirs.read.bw = SampleStat::from_parts(3, 300, 500, 400.0, 20.0);
        a.io_depth.mark_depth(1, 5);
        b.io_depth.mark_depth(1, 7);
        a.lat_buckets.add(10);
        b.lat_buckets.add(10);
        a.warnings
            .push(Warning::with_fix(WarningCode::PageCache, "m", "f"));
        b.warnings = a.warnings.clone();

        let m = merge_jobs(&[a, b]);
        assert_eq!(
            (m.name.as_str(), m.pid, m.groupid, m.jobs),
            ("first", 11, 2, 2)
        );
        assert_eq!((m.error, m.verror.as_str()), (5, "io error"));
        assert_eq!(m.dirs.read.io_bytes, 4000);
        assert_eq!(m.dirs.read.runtime_ms, 1500, "longest direction runtime");
        assert_eq!(m.runtime_ms, 2500, "job_runtime is summed");
        assert!((m.usr_cpu_pct - 400.0 * 100.0 / 2500.0).abs() < 1e-9);
        assert_eq!(m.ctx, 7);
        let c: &LatStat = &m.dirs.read.clat;
        assert_eq!((c.n, c.min, c.max), (4, 10, 1000));
        assert!((c.mean() - 265.0).abs() < 1e-9);
        assert_eq!(c.hist.count(), 4);
        let bw = &m.dirs.read.bw;
        assert_eq!((bw.n, bw.min, bw.max), (5, 400, 700), "rates add up");
        assert!((bw.mean() - 550.0).abs() < 1e-9);
        assert_eq!(m.io_depth.buckets[0], 12);
        assert_eq!(m.lat_buckets.ns[3], 2);
        assert_eq!(m.warnings.len(), 1, "deduplicated by code");
        assert_eq!(merge_jobs(&[]), JobResult::default());
    }
}
