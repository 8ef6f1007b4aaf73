//! The completion-latency table `fiox compare --latency` adds: per job and direction, each
//! side's latency at fixed percentiles, from the runs' merged json+ histograms where every
//! run has them, else the mean of the runs' reported percentiles.

use super::{fmt_num, trunc};
use crate::load::{LatDist, Side};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Percentiles the latency table shows.
pub const LAT_PCTS: [f64; 8] = [1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0];

/// Per job/direction, each side's completion latency (µs) at `LAT_PCTS`: from the merged
/// json+ histograms of all its runs where every run has them, else the mean of the runs'
/// reported percentiles (fio's default list; 100 is then missing).
pub fn latency_table(sides: &[Side]) -> Vec<(String, Vec<Vec<Option<f64>>>)> {
    let keys: BTreeSet<&String> = sides
        .iter()
        .flat_map(|s| s.runs.iter().flat_map(|r| r.latency.keys()))
        .collect();
    keys.into_iter()
        .map(|k| {
            let cols = sides.iter().map(|s| side_percentiles(s, k)).collect();
            (k.clone(), cols)
        })
        .collect()
}

fn side_percentiles(side: &Side, key: &str) -> Vec<Option<f64>> {
    let dists: Vec<&LatDist> = side
        .runs
        .iter()
        .filter_map(|r| r.latency.get(key))
        .collect();
    if dists.is_empty() {
        return vec![None; LAT_PCTS.len()];
    }
    let mut merged: BTreeMap<u64, u64> = BTreeMap::new();
    let all_bins = dists.iter().all(|d| matches!(d, LatDist::Bins(_)));
    if all_bins {
        for d in &dists {
            if let LatDist::Bins(b) = d {
                for (k, v) in b {
                    *merged.entry(*k).or_default() += v;
                }
            }
        }
        let total: u64 = merged.values().sum();
        return LAT_PCTS
            .iter()
            .map(|p| {
                let want = (p / 100.0 * total as f64).ceil().max(1.0) as u64;
                let mut seen = 0;
                merged.iter().find_map(|(lat, n)| {
                    seen += n;
                    (seen >= want).then_some(*lat as f64 / 1e3)
                })
            })
            .collect();
    }
    LAT_PCTS
        .iter()
        .map(|p| {
            let key = format!("{p:.6}");
            let vals: Vec<f64> = dists
                .iter()
                .filter_map(|d| match d {
                    LatDist::Percentiles(m) => m.get(&key).copied(),
                    LatDist::Bins(_) => None,
                })
                .collect();
            (!vals.is_empty()).then(|| crate::stats::mean(&vals) / 1e3)
        })
        .collect()
}

/// The latency table as text: one block per job/direction, one line per percentile.
pub fn latency_text(sides: &[Side]) -> String {
    let mut out = String::new();
    for (key, cols) in latency_table(sides) {
        let _ = write!(out, "\ncompletion latency (us), {key}\n{:<10}", "pct");
        for s in sides {
            let _ = write!(out, " {:>12}", trunc(&s.name, 12));
        }
        out.push('\n');
        for (i, p) in LAT_PCTS.iter().enumerate() {
            let _ = write!(out, "{:<10}", format!("{p}"));
            for c in &cols {
                match c[i] {
                    Some(v) => write!(out, " {:>12}", fmt_num(v)),
                    None => write!(out, " {:>12}", "-"),
                }
                .ok();
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Run;

    #[test]
    fn latency_percentiles_from_merged_histograms() {
        let run = |bins: &[(u64, u64)]| {
            let mut r = Run::default();
            r.latency.insert(
                "j/read".into(),
                LatDist::Bins(bins.iter().copied().collect()),
            );
            r
        };
        // 100 I/Os at 1 µs and 100 at 3 µs over two runs; the other side 1 I/O at 2 µs.
        let a = Side {
            name: "a".into(),
            runs: vec![
                run(&[(1000, 60), (3000, 40)]),
                run(&[(1000, 40), (3000, 60)]),
            ],
            baseline: None,
        };
        let b = Side {
            name: "b".into(),
            runs: vec![run(&[(2000, 1)])],
            baseline: None,
        };
        let t = latency_table(&[a, b]);
        assert_eq!(t.len(), 1);
        let (key, cols) = &t[0];
        assert_eq!(key, "j/read");
        // 1, 10, 50 -> 1 µs (the 100th of 200 is still 1 µs); 90 and up -> 3 µs.
        let want_a = [1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0, 3.0].map(Some);
        assert_eq!(cols[0], want_a);
        assert_eq!(cols[1], [Some(2.0); 8]);
    }
}
