//! `--status-interval` reports as values over time: fio and fiox print a cumulative result
//! every interval (fiox one JSON object per line, fio objects one after another), so the I/Os,
//! bytes and latency sums between two reports, over the job runtime between them, give each
//! interval's IOPS, bandwidth and mean completion latency.

use crate::fiolog::{LogKind, LogSeries};
use serde_json::Value;
use std::collections::BTreeMap;

/// Cumulative counters of one job direction in one report.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    runtime_ms: f64,
    ios: f64,
    bytes: f64,
    /// Completion latency sum (mean x N) and N.
    clat_sum: f64,
    clat_n: f64,
}

/// Series of IOPS, bandwidth (KiB/s, as bw logs) and mean clat (ns) per job and direction,
/// when `reports` (in order) hold at least two results.
pub fn series(reports: &[Value], source: &str) -> Vec<LogSeries> {
    let reports: Vec<&Value> = reports.iter().filter(|r| r.get("jobs").is_some()).collect();
    if reports.len() < 2 {
        return Vec::new();
    }
    // (job index, name, ddir) -> counters per report.
    let mut by_key: BTreeMap<(usize, String, &'static str), Vec<Counters>> = BTreeMap::new();
    for r in &reports {
        for (i, j) in r["jobs"].as_array().into_iter().flatten().enumerate() {
            let name = j["jobname"].as_str().unwrap_or("?").to_string();
            for ddir in ["read", "write", "trim"] {
                let d = &j[ddir];
                let n = |v: &Value| v.as_f64().unwrap_or(0.0);
                let c = Counters {
                    runtime_ms: n(&j["job_runtime"]),
                    ios: n(&d["total_ios"]),
                    bytes: n(&d["io_bytes"]),
                    clat_sum: n(&d["clat_ns"]["mean"]) * n(&d["clat_ns"]["N"]),
                    clat_n: n(&d["clat_ns"]["N"]),
                };
                by_key.entry((i, name.clone(), ddir)).or_default().push(c);
            }
        }
    }
    let mut out = Vec::new();
    for ((i, name, ddir), reps) in by_key {
        if reps.last().is_none_or(|c| c.ios == 0.0) {
            continue;
        }
        let job = format!("{name}.{}", i + 1);
        let mut iops = Vec::new();
        let mut bw = Vec::new();
        let mut clat = Vec::new();
        let mut prev = Counters::default();
        for c in reps {
            let dt = c.runtime_ms - prev.runtime_ms;
            if dt > 0.0 {
                let t = c.runtime_ms / 1000.0;
                iops.push((t, (c.ios - prev.ios) * 1000.0 / dt));
                bw.push((t, (c.bytes - prev.bytes) * 1000.0 / dt / 1024.0));
                let dn = c.clat_n - prev.clat_n;
                if dn > 0.0 {
                    clat.push((t, (c.clat_sum - prev.clat_sum) / dn));
                }
                prev = c;
            }
        }
        for (kind, points) in [
            (LogKind::Iops, iops),
            (LogKind::Bw, bw),
            (LogKind::Clat, clat),
        ] {
            if !points.is_empty() {
                out.push(LogSeries {
                    source: source.to_string(),
                    job: job.clone(),
                    kind,
                    ddir,
                    points,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(rt: u64, ios: u64, mean: f64) -> Value {
        json!({"jobs": [{"jobname": "s", "job_runtime": rt,
            "read": {"total_ios": ios, "io_bytes": ios * 4096, "clat_ns": {"mean": mean, "N": ios}},
            "write": {"total_ios": 0, "io_bytes": 0}}]})
    }

    #[test]
    fn interval_rates_and_means_from_cumulative_reports() {
        let s = series(&[report(500, 1000, 100.0), report(1000, 3000, 200.0)], "st");
        assert_eq!(s.len(), 3, "{s:?}");
        let iops = s.iter().find(|x| x.kind == LogKind::Iops).unwrap();
        assert_eq!(iops.points, vec![(0.5, 2000.0), (1.0, 4000.0)]);
        assert_eq!(iops.job, "s.1");
        let bw = s.iter().find(|x| x.kind == LogKind::Bw).unwrap();
        assert_eq!(bw.points[1], (1.0, 4000.0 * 4.0));
        // Second interval: (3000*200 - 1000*100) / 2000 = 250 ns.
        let clat = s.iter().find(|x| x.kind == LogKind::Clat).unwrap();
        assert_eq!(clat.points[1], (1.0, 250.0));
        assert!(series(&[report(500, 1000, 1.0)], "st").is_empty());
    }
}
