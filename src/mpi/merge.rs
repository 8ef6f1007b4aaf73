//! One report from every rank's results: the jobs of all ranks as one fio run with numjobs =
//! ranks x jobs (a group_reporting group merged over every rank, histograms added bucket for
//! bucket so the percentiles are those of one histogram of all samples), the groups' totals
//! recomputed from them, and fiox's own view under `fiox.mpi`: a row per rank and per host,
//! the slowest and fastest rank, and what `stonewall_ranks` measured.

use crate::cluster::Reduced;
use fiox_job::JobSpec;
use fiox_runner::{PhaseSync, RunOutcome};
use fiox_stats::{JobResult, RunResult};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// What one rank sends: its results, failures and phases.
#[derive(Debug, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: u32,
    pub host: String,
    pub pid: u32,
    pub result: RunResult,
    pub errors: Vec<String>,
    pub interrupted: bool,
    pub phases: Vec<PhaseSync>,
    /// `--bandwidth-log`: the texts of this rank's agg-read/write/trim logs.
    pub agg_logs: Vec<String>,
}

impl RankReport {
    pub fn new(rank: u32, host: &str, o: RunOutcome) -> RankReport {
        RankReport {
            rank,
            host: host.to_string(),
            pid: std::process::id(),
            errors: o.errors.iter().map(ToString::to_string).collect(),
            interrupted: o.interrupted,
            phases: o.phases,
            result: o.result,
            agg_logs: Vec::new(),
        }
    }
}

/// The ranks' aggregate bandwidth logs (`msec, KiB/s, ddir, 0, 0` lines) as one: the n-th
/// sample of every rank (the same interval from the common start) summed, at rank 0's time.
pub fn sum_agg_logs(texts: &[&str]) -> String {
    let parsed: Vec<Vec<Vec<&str>>> = texts
        .iter()
        .map(|t| {
            t.lines()
                .map(|l| l.split(',').map(str::trim).collect::<Vec<_>>())
                .filter(|f| f.len() >= 3)
                .collect()
        })
        .collect();
    let n = parsed.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    for k in 0..n {
        let Some(first) = parsed.iter().find_map(|p| p.get(k)) else {
            continue;
        };
        let sum: u64 = parsed
            .iter()
            .filter_map(|p| p.get(k)?.get(1)?.parse::<u64>().ok())
            .sum();
        let rest = first[2..].join(", ");
        out.push_str(&format!("{}, {sum}, {rest}\n", first[0]));
    }
    out
}

/// Every rank's report as one.
pub fn combine(jobs: &[JobSpec], reports: Vec<RankReport>) -> Reduced {
    let result = merged_result(jobs, &reports);
    let errors = reports
        .iter()
        .flat_map(|r| {
            r.errors
                .iter()
                .map(move |e| format!("rank {} ({}): {e}", r.rank, r.host))
        })
        .collect();
    let rows: Vec<RankRow> = reports.iter().map(RankRow::of).collect();
    let stonewalls = stonewall_phases(jobs, &reports);
    Reduced {
        result,
        errors,
        interrupted: reports.iter().any(|r| r.interrupted),
        section: Some(section(&rows, &stonewalls)),
        text: text_block(&rows, &stonewalls),
    }
}

/// The jobs of every rank in rank order, each group_reporting group merged into one entry
/// (where the group first appears); groups, disks and warnings over all ranks.
fn merged_result(jobs: &[JobSpec], reports: &[RankReport]) -> RunResult {
    let grouped = |gid: u32| {
        jobs.iter()
            .find(|j| j.group_id == gid)
            .is_some_and(|j| j.stats.group_reporting)
    };
    let mut out: Vec<JobResult> = Vec::new();
    let mut done_groups: Vec<u32> = Vec::new();
    for job in reports.iter().flat_map(|r| &r.result.jobs) {
        if !grouped(job.groupid) {
            out.push(job.clone());
            continue;
        }
        if done_groups.contains(&job.groupid) {
            continue;
        }
        done_groups.push(job.groupid);
        let members: Vec<JobResult> = reports
            .iter()
            .flat_map(|r| &r.result.jobs)
            .filter(|m| m.groupid == job.groupid)
            .cloned()
            .collect();
        let mut merged = fiox_stats::merge_jobs(&members);
        merged.steadystate = members.iter().rev().find_map(|m| m.steadystate.clone());
        out.push(merged);
    }
    let (kb, unit) = jobs
        .first()
        .map(|j| (j.kb_base, j.unit_base))
        .unwrap_or((1024, 0));
    let mut hosts_seen: Vec<&str> = Vec::new();
    let mut disks = Vec::new();
    let mut warnings: Vec<fiox_stats::Warning> = Vec::new();
    for r in reports {
        // One rank per host reports that host's disks: its ranks share them.
        if !hosts_seen.contains(&r.host.as_str()) {
            hosts_seen.push(&r.host);
            disks.extend(r.result.disks.iter().cloned());
        }
        for w in &r.result.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    let first = reports.first().map(|r| &r.result);
    RunResult {
        groups: fiox_stats::group_results(&out, kb, unit),
        jobs: out,
        disks,
        global_options: first.map(|r| r.global_options.clone()).unwrap_or_default(),
        start_unix_ms: reports
            .iter()
            .map(|r| r.result.start_unix_ms)
            .min()
            .unwrap_or(0),
        warnings,
        // --idle-prof measures one host's CPUs: rank 0's, like the ETA line and telemetry.
        idle: first.and_then(|r| r.idle.clone()),
    }
}

/// One rank's totals.
struct RankRow {
    rank: u32,
    host: String,
    pid: u32,
    jobs: u32,
    bytes: [u64; 3],
    ios: u64,
    runtime_ms: u64,
    errors: Vec<String>,
}

impl RankRow {
    fn of(r: &RankReport) -> RankRow {
        let mut bytes = [0u64; 3];
        let mut ios = 0;
        let mut runtime_ms = 0;
        let mut jobs = 0;
        for j in &r.result.jobs {
            for (k, d) in [&j.dirs.read, &j.dirs.write, &j.dirs.trim]
                .iter()
                .enumerate()
            {
                bytes[k] += d.io_bytes;
                ios += d.total_ios;
            }
            // A group_reporting entry sums its members' runtimes: per member, the longest.
            runtime_ms = runtime_ms.max(j.runtime_ms / u64::from(j.jobs.max(1)));
            jobs += j.jobs.max(1);
        }
        RankRow {
            rank: r.rank,
            host: r.host.clone(),
            pid: r.pid,
            jobs,
            bytes,
            ios,
            runtime_ms,
            errors: r.errors.clone(),
        }
    }

    fn total(&self) -> u64 {
        self.bytes.iter().sum()
    }

    /// Bytes per second over the rank's longest job.
    fn bw(&self) -> u64 {
        per_second(self.total(), self.runtime_ms)
    }

    fn json(&self) -> Value {
        json!({
            "rank": self.rank,
            "host": self.host,
            "pid": self.pid,
            "jobs": self.jobs,
            "read_bytes": self.bytes[0],
            "write_bytes": self.bytes[1],
            "trim_bytes": self.bytes[2],
            "total_ios": self.ios,
            "runtime_ms": self.runtime_ms,
            "bw_bytes": self.bw(),
            "iops": per_second(self.ios, self.runtime_ms),
            "errors": self.errors,
        })
    }
}

fn per_second(n: u64, ms: u64) -> u64 {
    if ms == 0 {
        0
    } else {
        (u128::from(n) * 1000 / u128::from(ms)) as u64
    }
}

/// What stonewall_ranks measured in one phase.
struct Stonewall {
    jobs: Vec<String>,
    /// Per rank: (rank, host, done bytes, planned bytes, elapsed ms, ms it would have needed).
    ranks: Vec<(u32, String, u64, u64, u64, u64)>,
}

impl Stonewall {
    /// The rank that finished first (did all it planned, soonest).
    fn first(&self) -> Option<&(u32, String, u64, u64, u64, u64)> {
        self.ranks
            .iter()
            .filter(|r| r.3 > 0 && r.2 >= r.3)
            .min_by_key(|r| r.4)
    }
    /// The rank that would have needed the longest.
    fn slowest(&self) -> Option<&(u32, String, u64, u64, u64, u64)> {
        self.ranks.iter().max_by_key(|r| r.5)
    }
    /// All ranks' bytes over the time until every rank had stopped.
    fn bw(&self) -> u64 {
        let bytes = self.ranks.iter().map(|r| r.2).sum();
        per_second(bytes, self.ranks.iter().map(|r| r.4).max().unwrap_or(0))
    }
}

fn stonewall_phases(jobs: &[JobSpec], reports: &[RankReport]) -> Vec<Stonewall> {
    let Some(first) = reports.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, p) in first.phases.iter().enumerate() {
        if !reports
            .iter()
            .any(|r| r.phases.get(k).is_some_and(|q| q.stonewalled))
        {
            continue;
        }
        let ranks = reports
            .iter()
            .filter_map(|r| {
                let q = r.phases.get(k)?;
                // Done at this rank's pace: the time its whole planned amount would take.
                let needed = if q.done_bytes > 0 && q.planned_bytes > q.done_bytes {
                    (u128::from(q.elapsed_ms) * u128::from(q.planned_bytes)
                        / u128::from(q.done_bytes)) as u64
                } else {
                    q.elapsed_ms
                };
                Some((
                    r.rank,
                    r.host.clone(),
                    q.done_bytes,
                    q.planned_bytes,
                    q.elapsed_ms,
                    needed,
                ))
            })
            .collect();
        let mut names: Vec<String> = Vec::new();
        for n in p.jobs.iter().filter_map(|&i| jobs.get(i)).map(|j| &j.name) {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        out.push(Stonewall { jobs: names, ranks });
    }
    out
}

fn stonewall_json(s: &Stonewall) -> Value {
    let who = |r: Option<&(u32, String, u64, u64, u64, u64)>| {
        r.map(|r| json!({"rank": r.0, "host": r.1, "elapsed_ms": r.4, "needed_ms": r.5}))
    };
    json!({
        "jobs": s.jobs,
        "first_rank": who(s.first()),
        "stonewalled_bw_bytes": s.bw(),
        "slowest_rank": who(s.slowest()),
        "slowest_needed_ms": s.slowest().map(|r| r.5),
        "ranks": s.ranks.iter().map(|r| json!({
            "rank": r.0, "host": r.1, "done_bytes": r.2, "planned_bytes": r.3,
            "elapsed_ms": r.4, "needed_ms": r.5,
        })).collect::<Vec<_>>(),
    })
}

/// Hosts in order of their first rank, with their ranks.
fn hosts(rows: &[RankRow]) -> Vec<(&str, Vec<&RankRow>)> {
    let mut out: Vec<(&str, Vec<&RankRow>)> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|(h, _)| *h == r.host) {
            Some((_, v)) => v.push(r),
            None => out.push((&r.host, vec![r])),
        }
    }
    out
}

/// `fiox.mpi` in JSON.
fn section(rows: &[RankRow], stonewalls: &[Stonewall]) -> Value {
    let per_host: Vec<Value> = hosts(rows)
        .iter()
        .map(|(h, rs)| {
            let bytes: u64 = rs.iter().map(|r| r.total()).sum();
            let ms = rs.iter().map(|r| r.runtime_ms).max().unwrap_or(0);
            json!({
                "host": h,
                "ranks": rs.iter().map(|r| r.rank).collect::<Vec<_>>(),
                "io_bytes": bytes,
                "bw_bytes": per_second(bytes, ms),
            })
        })
        .collect();
    let pick = |r: Option<&RankRow>| {
        r.map(|r| {
            json!({"rank": r.rank, "host": r.host, "bw_bytes": r.bw(), "runtime_ms": r.runtime_ms})
        })
    };
    json!({
        "ranks": rows.len(),
        "hosts": per_host.len(),
        "per_rank": rows.iter().map(RankRow::json).collect::<Vec<_>>(),
        "per_host": per_host,
        "slowest_rank": pick(slowest(rows)),
        "fastest_rank": pick(fastest(rows)),
        "stonewall": stonewalls.iter().map(stonewall_json).collect::<Vec<_>>(),
    })
}

/// The slowest rank: the lowest bandwidth (a time-based run) or, alike, the longest runtime.
fn slowest(rows: &[RankRow]) -> Option<&RankRow> {
    rows.iter()
        .min_by(|a, b| a.bw().cmp(&b.bw()).then(b.runtime_ms.cmp(&a.runtime_ms)))
}

fn fastest(rows: &[RankRow]) -> Option<&RankRow> {
    rows.iter()
        .max_by(|a, b| a.bw().cmp(&b.bw()).then(b.runtime_ms.cmp(&a.runtime_ms)))
}

fn mib(bps: u64) -> String {
    format!("{:.1}MiB/s", bps as f64 / 1048576.0)
}

/// The block after the normal report.
fn text_block(rows: &[RankRow], stonewalls: &[Stonewall]) -> String {
    let hs = hosts(rows);
    let list: Vec<String> = hs
        .iter()
        .map(|(h, rs)| format!("{h}: {}", rs.len()))
        .collect();
    let mut s = format!(
        "\nMPI: {} ranks on {} host{} ({})\n",
        rows.len(),
        hs.len(),
        if hs.len() == 1 { "" } else { "s" },
        list.join(", ")
    );
    for (what, r) in [("slowest", slowest(rows)), ("fastest", fastest(rows))] {
        if let Some(r) = r {
            s.push_str(&format!(
                "  {what} rank: {} on {}, bw={}, runtime={}msec\n",
                r.rank,
                r.host,
                mib(r.bw()),
                r.runtime_ms
            ));
        }
    }
    for w in stonewalls {
        s.push_str(&format!("  stonewall_ranks ({}):", w.jobs.join(", ")));
        if let Some(f) = w.first() {
            s.push_str(&format!(
                " rank {} on {} finished first after {}ms;",
                f.0, f.1, f.4
            ));
        }
        s.push_str(&format!(" stonewalled bw={}", mib(w.bw())));
        if let Some(sl) = w.slowest() {
            s.push_str(&format!(
                "; rank {} on {} would have needed {}ms",
                sl.0, sl.1, sl.5
            ));
        }
        s.push('\n');
    }
    s
}

/// Failures before the run, one line per message with the ranks and hosts that gave it.
pub fn failure_lines(failed: &[(u32, String, String)]) -> Vec<String> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (rank, host, msg) in failed {
        let who = format!("{rank} ({host})");
        match out.iter_mut().find(|(m, _)| m == msg) {
            Some((_, v)) => v.push(who),
            None => out.push((msg.clone(), vec![who])),
        }
    }
    out.into_iter()
        .map(|(msg, who)| {
            let s = if who.len() == 1 { "" } else { "s" };
            format!("rank{s} {}: {msg}", who.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(rank: u32, host: &str, lat: &[u64], bytes: u64, ms: u64) -> RankReport {
        let mut j = JobResult {
            name: "a".into(),
            jobs: 1,
            runtime_ms: ms,
            ..Default::default()
        };
        j.dirs.read.io_bytes = bytes;
        j.dirs.read.total_ios = lat.len() as u64;
        j.dirs.read.runtime_ms = ms;
        for &v in lat {
            j.dirs.read.clat.add(v);
        }
        RankReport {
            rank,
            host: host.into(),
            pid: 1,
            result: RunResult {
                jobs: vec![j],
                ..Default::default()
            },
            errors: Vec::new(),
            interrupted: false,
            phases: Vec::new(),
            agg_logs: Vec::new(),
        }
    }

    #[test]
    fn aggregate_logs_add_the_ranks_samples_of_each_interval() {
        let a = "500, 100, 0, 0, 0\n1000, 200, 0, 0, 0\n";
        let b = "501, 10, 0, 0, 0\n1002, 20, 0, 0, 0\n1500, 5, 0, 0, 0\n";
        assert_eq!(
            sum_agg_logs(&[a, b]),
            "500, 110, 0, 0, 0\n1000, 220, 0, 0, 0\n1500, 5, 0, 0, 0\n"
        );
    }

    fn spec(group_reporting: bool) -> Vec<JobSpec> {
        let mut args = vec![
            "--name=a".to_string(),
            "--ioengine=null".into(),
            "--size=1m".into(),
        ];
        if group_reporting {
            args.push("--group_reporting".into());
        }
        fiox_job::parse_invocation(&args).unwrap().jobs
    }

    /// Travel as JSON, as between ranks.
    fn sent(r: RankReport) -> RankReport {
        serde_json::from_slice(&serde_json::to_vec(&r).unwrap()).unwrap()
    }

    #[test]
    fn merged_percentiles_are_those_of_one_histogram_of_all_samples() {
        let a: Vec<u64> = (1..2000).map(|i| i * 37 % 90_000 + 1000).collect();
        let b: Vec<u64> = (1..500).map(|i| i * 7919 % 5_000_000 + 20_000).collect();
        let reduced = combine(
            &spec(true),
            vec![
                sent(report(0, "h1", &a, 4096, 900)),
                sent(report(1, "h2", &b, 8192, 1000)),
            ],
        );
        let mut one = fiox_stats::model::LatStat::default();
        a.iter().chain(&b).for_each(|&v| one.add(v));
        let j = &reduced.result.jobs;
        assert_eq!(j.len(), 1, "group_reporting: one entry over both ranks");
        assert_eq!(j[0].jobs, 2);
        assert_eq!(j[0].dirs.read.clat.hist, one.hist);
        let ps = [1.0, 50.0, 99.0, 99.9];
        assert_eq!(
            j[0].dirs.read.clat.hist.percentiles(&ps),
            one.hist.percentiles(&ps)
        );
        assert_eq!(j[0].dirs.read.io_bytes, 4096 + 8192);
        assert_eq!(reduced.result.groups[0].dirs.read.io_bytes, 4096 + 8192);
        let m = reduced.section.unwrap();
        assert_eq!(m["ranks"], 2);
        assert_eq!(m["hosts"], 2);
        assert_eq!(
            m["slowest_rank"]["rank"], 0,
            "4096 B in 900 ms is the slower"
        );
        assert_eq!(m["fastest_rank"]["host"], "h2");
    }

    #[test]
    fn without_group_reporting_every_ranks_jobs_are_listed_and_errors_name_the_rank() {
        let mut bad = report(1, "h2", &[5000], 0, 10);
        bad.errors
            .push("job 'a': open /x: Permission denied".into());
        let reduced = combine(&spec(false), vec![report(0, "h1", &[4000], 4096, 10), bad]);
        assert_eq!(reduced.result.jobs.len(), 2);
        assert_eq!(
            reduced.errors,
            ["rank 1 (h2): job 'a': open /x: Permission denied"]
        );
        assert!(
            reduced.text.contains("MPI: 2 ranks on 2 hosts"),
            "{}",
            reduced.text
        );
    }

    #[test]
    fn failures_before_the_run_are_said_once_per_message() {
        let lines = failure_lines(&[
            (0, "h1".into(), "no such file: j.fio".into()),
            (1, "h1".into(), "no such file: j.fio".into()),
            (2, "h2".into(), "other".into()),
        ]);
        assert_eq!(
            lines,
            [
                "ranks 0 (h1), 1 (h1): no such file: j.fio",
                "rank 2 (h2): other"
            ]
        );
    }
}
