//! Drift as one question: did some rounds run faster or slower for every job? One Friedman
//! test over all (side, job) samples, rounds as treatments, one metric per job (its
//! throughput, else its mean latency), so that it has power at 5 rounds where ~280 trend
//! tests adjusted together never could. Runs without rounds are taken in run order.

use super::{sample, Row};
use crate::load::Side;
use crate::stats::{self, Friedman};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The round effect of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct RoundEffect {
    pub test: Friedman,
    /// Whether its p is under alpha (then a warning says so).
    pub significant: bool,
    /// Per round: how far its runs lay from their sample's geometric mean (median over the
    /// samples, as a relative change of the metric tested).
    pub rounds: Vec<(u64, f64)>,
}

/// The metric a job's round effect is judged on: its first throughput row, else its mean
/// latency, else its first row.
fn metric_of<'a>(rows: &'a [Row], job: &str) -> Option<&'a str> {
    let of_job: Vec<&str> = rows
        .iter()
        .filter(|r| r.job == job && r.metric != "errors")
        .map(|r| r.metric.as_str())
        .collect();
    ["iops", "bw_mib", "lat_mean_us"]
        .iter()
        .find_map(|w| of_job.iter().find(|m| m.ends_with(w)).copied())
        .or(of_job.first().copied())
}

/// A side's values of one job and metric by round (run order where runs have none).
fn by_round(s: &Side, job: &str, metric: &str) -> BTreeMap<u64, f64> {
    let xs = sample(s, job, metric);
    let rounded = xs.iter().all(|(r, _)| r.is_some());
    xs.iter()
        .enumerate()
        .map(|(i, (r, v))| (if rounded { r.unwrap_or(0) } else { i as u64 }, *v))
        .collect()
}

/// The comparison's round effect; `None` below three rounds common to two samples.
pub fn round_effect(rows: &[Row], sides: &[Side], alpha: f64) -> Option<RoundEffect> {
    let jobs: BTreeSet<&str> = rows
        .iter()
        .map(|r| r.job.as_str())
        .filter(|j| *j != "(system)")
        .collect();
    let mut samples: Vec<BTreeMap<u64, f64>> = Vec::new();
    for job in jobs {
        let Some(metric) = metric_of(rows, job) else {
            continue;
        };
        samples.extend(sides.iter().map(|s| by_round(s, job, metric)));
    }
    samples.retain(|s| s.len() >= 3);
    let mut common: BTreeSet<u64> = samples.first()?.keys().copied().collect();
    for s in &samples {
        common.retain(|r| s.contains_key(r));
    }
    let blocks: Vec<Vec<f64>> = samples
        .iter()
        .map(|s| common.iter().map(|r| s[r]).collect())
        .collect();
    let test = stats::friedman(&blocks)?;
    Some(RoundEffect {
        test,
        significant: test.p < alpha,
        rounds: deviations(&blocks, &common),
    })
}

/// Per round, the median over blocks of exp(ln x - mean ln x) - 1 (blocks with a value that
/// is not positive are left out).
fn deviations(blocks: &[Vec<f64>], rounds: &BTreeSet<u64>) -> Vec<(u64, f64)> {
    let logs: Vec<Vec<f64>> = blocks
        .iter()
        .filter(|b| b.iter().all(|x| *x > 0.0))
        .map(|b| {
            let l: Vec<f64> = b.iter().map(|x| x.ln()).collect();
            let m = l.iter().sum::<f64>() / l.len() as f64;
            l.iter().map(|x| x - m).collect()
        })
        .collect();
    rounds
        .iter()
        .enumerate()
        .filter(|_| !logs.is_empty())
        .map(|(i, r)| {
            let mut col: Vec<f64> = logs.iter().map(|b| b[i]).collect();
            (*r, stats::median(&mut col).exp() - 1.0)
        })
        .collect()
}

impl RoundEffect {
    /// The warning: which rounds stood out, and what that means for the verdicts.
    pub fn text(&self) -> String {
        let mut by_size = self.rounds.clone();
        by_size.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
        let worst: Vec<String> = by_size
            .iter()
            .take(2)
            .map(|(r, d)| format!("round {r} {:+.1}%", d * 100.0))
            .collect();
        format!(
            "rounds differ across {} samples of {} rounds (Friedman chi2 {:.1}, p = {}): {} \
             (median over jobs, throughput or mean latency): something on the machine came \
             and went; the paired analysis cancels what a round did to every variant, \
             unpaired runs carry it as noise",
            self.test.n,
            self.test.k,
            self.test.chi2,
            super::verdict::fmt_p(self.test.p),
            worst.join(", ")
        )
    }
}
