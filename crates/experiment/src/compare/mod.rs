//! The comparison of two or more sides: per job and metric, each side's summary and, for every
//! side after the first, its change against the first, judged so that the verdicts hold up
//! across a whole comparison. This file owns the data model and the assembly:
//!
//! - `verdict`: the four verdicts (better/worse, equivalent, inconclusive, no claim) and the
//!   practical threshold;
//! - `context`: differences in the sides' environments and job options;
//! - `render`: text, markdown, CSV and JSON;
//! - `latency`: the completion-latency percentile table.
//!
//! Every p-value of one comparison is one family: Welch's p of every row with a test is
//! adjusted together (Holm by default, or Benjamini-Hochberg), and the verdict uses the
//! adjusted p. Values a run lacks stay missing (each row carries n per side); I/O errors are
//! rows of their own and are named beside any verdict on the same job.

mod context;
mod latency;
mod render;
mod verdict;

pub use latency::{latency_table, latency_text};
pub use render::{to_csv, to_json, to_markdown, to_text};
pub use verdict::{Thresholds, Verdict};

use crate::load::Side;
use crate::stats::{self, Adjust, MannWhitney, PairedT, Summary, Trend, Welch, Wilcoxon};
use serde::Serialize;
use std::collections::BTreeSet;

/// The metrics the text and markdown tables show unless asked for others.
pub const DEFAULT_METRICS: [&str; 4] = ["iops", "bw_mib", "lat_mean_us", "lat_p99_us"];

/// How to judge.
#[derive(Debug, Clone)]
pub struct Options {
    /// Significance level of the adjusted p-values (and 1 - the CIs' level is 0.05 regardless).
    pub alpha: f64,
    pub thresholds: Thresholds,
    pub adjust: Adjust,
    /// The metrics compared (suffix match, as `--metric`; empty: all). They are the family
    /// the p-values are adjusted over, so choosing them beforehand buys power.
    pub metrics: Vec<String>,
    /// Bootstrap resamples for the latency percentile rows (0: none).
    pub bootstrap: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            alpha: 0.05,
            thresholds: Thresholds::default(),
            adjust: Adjust::Holm,
            metrics: Vec::new(),
            bootstrap: 0,
            seed: 0,
        }
    }
}

/// The paired analysis of a change, when both sides ran in the same experiment rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Paired {
    /// Rounds with a value on both sides.
    pub n: usize,
    /// Paired t-test of the per-round differences.
    pub t: Option<PairedT>,
    /// Wilcoxon signed-rank test of the same differences.
    pub wilcoxon: Option<Wilcoxon>,
}

/// A side's change against the first side.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// mean / base mean - 1; `None` when the base mean is not positive.
    pub rel: Option<f64>,
    /// 95% confidence interval of `rel` on the ratio scale (log ratio of the means).
    pub rel_ci: Option<(f64, f64)>,
    pub welch: Option<Welch>,
    /// Welch's p adjusted over every test of the comparison; the verdict uses this.
    pub p_adjusted: Option<f64>,
    pub mann_whitney: Option<MannWhitney>,
    pub paired: Option<Paired>,
    /// Hedges' g (standardised difference of the means).
    pub hedges_g: Option<f64>,
    /// Hodges-Lehmann shift (median of pairwise differences), in the metric's unit.
    pub hodges_lehmann: Option<f64>,
    /// Percentile-bootstrap 95% CI of `rel` (latency percentiles, with --bootstrap).
    pub bootstrap_ci: Option<(f64, f64)>,
    /// The practical threshold this row is judged against.
    pub threshold: f64,
    pub verdict: Verdict,
    pub reason: String,
}

/// One job x metric line.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub job: String,
    pub metric: String,
    /// Per side (in order); `None` where the side has no value. `n` may be below the side's
    /// run count: runs lacking the metric are left out, not read as 0.
    pub summaries: Vec<Option<Summary>>,
    /// Per side after the first.
    pub changes: Vec<Option<Change>>,
}

/// A whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub sides: Vec<String>,
    pub runs: Vec<usize>,
    pub alpha: f64,
    /// How p-values were adjusted, and what that controls.
    pub adjust: Adjust,
    pub controls: String,
    /// Tests in the family (rows with a p-value).
    pub tests: usize,
    /// The default practical threshold (rows carry their own).
    pub threshold: f64,
    pub rows: Vec<Row>,
    pub warnings: Vec<String>,
    /// Samples with a coefficient of variation above 10%.
    pub noisy: Vec<Noisy>,
    /// Samples whose values trend over run order.
    pub drift: Vec<Drift>,
}

/// A side's sample of one job and metric that varies too much to say much.
#[derive(Debug, Clone, Serialize)]
pub struct Noisy {
    pub side: String,
    pub job: String,
    pub metric: String,
    pub cv: f64,
}

/// A side's sample that climbs or falls over run order.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    pub side: String,
    pub job: String,
    pub metric: String,
    pub trend: Trend,
    /// The trend's p adjusted over every trend test of the comparison.
    pub p_adjusted: f64,
}

/// One run's value with its experiment round, in run order.
type Sample = Vec<(Option<u64>, f64)>;

fn sample(side: &Side, job: &str, metric: &str) -> Sample {
    side.runs
        .iter()
        .filter_map(|r| Some((r.round, *r.jobs.get(job)?.get(metric)?)))
        .collect()
}

fn values(s: &Sample) -> Vec<f64> {
    s.iter().map(|(_, v)| *v).collect()
}

/// Compare `sides` (the first is the base).
pub fn compare(sides: &[Side], o: &Options) -> Comparison {
    let mut keys: BTreeSet<(String, String)> = BTreeSet::new();
    for s in sides {
        for r in &s.runs {
            for (job, m) in &r.jobs {
                // I/O errors are compared whatever the selection: no verdict without them.
                let wanted = m
                    .keys()
                    .filter(|k| *k == "errors" || selected(k, &o.metrics));
                keys.extend(wanted.map(|k| (job.clone(), k.clone())));
            }
        }
    }
    let mut rows: Vec<Row> = keys
        .into_iter()
        .map(|(job, metric)| row(sides, job, metric, o))
        .collect();
    let tests = adjust_rows(&mut rows, o.adjust);
    judge_rows(&mut rows, o);
    note_errors(&mut rows, sides);
    let mut c = Comparison {
        sides: sides.iter().map(|s| s.name.clone()).collect(),
        runs: sides.iter().map(|s| s.runs.len()).collect(),
        alpha: o.alpha,
        adjust: o.adjust,
        controls: o.adjust.controls().into(),
        tests,
        threshold: o.thresholds.default,
        rows,
        warnings: Vec::new(),
        noisy: Vec::new(),
        drift: Vec::new(),
    };
    warn(&mut c, sides, o);
    c
}

fn row(sides: &[Side], job: String, metric: String, o: &Options) -> Row {
    let data: Vec<Sample> = sides.iter().map(|s| sample(s, &job, &metric)).collect();
    let summaries = data.iter().map(|d| stats::summary(&values(d))).collect();
    let threshold = o.thresholds.of(&metric);
    let changes = data
        .iter()
        .skip(1)
        .map(|d| change(&data[0], d, &job, &metric, threshold, o))
        .collect();
    Row {
        job,
        metric,
        summaries,
        changes,
    }
}

/// Everything about a change but its verdict (which needs the family's adjusted p).
fn change(
    base: &Sample,
    other: &Sample,
    job: &str,
    metric: &str,
    threshold: f64,
    o: &Options,
) -> Option<Change> {
    let (a, b) = (values(base), values(other));
    let (sa, sb) = (stats::summary(&a)?, stats::summary(&b)?);
    let rel = (sa.mean > 0.0).then(|| sb.mean / sa.mean - 1.0);
    let bootstrap = o.bootstrap > 0 && metric.contains("lat_p");
    let row_seed = fnv(&format!("{job}\0{metric}")) ^ o.seed;
    Some(Change {
        rel,
        rel_ci: stats::ratio_ci(&a, &b, 0.95),
        welch: stats::welch(&a, &b),
        p_adjusted: None,
        mann_whitney: stats::mann_whitney(&a, &b),
        paired: paired(base, other),
        hedges_g: stats::hedges_g(&a, &b),
        hodges_lehmann: stats::hodges_lehmann(&a, &b),
        bootstrap_ci: bootstrap
            .then(|| stats::bootstrap_rel_ci(&a, &b, o.bootstrap, row_seed))
            .flatten(),
        threshold,
        verdict: Verdict::NoClaim,
        reason: String::new(),
    })
}

/// FNV-1a of `s`: a per-row seed that does not depend on the order of rows.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// The paired analysis when every value of both sides has a round and the rounds match.
fn paired(base: &Sample, other: &Sample) -> Option<Paired> {
    let rounds = |s: &Sample| s.iter().map(|(r, _)| *r).collect::<Option<BTreeSet<u64>>>();
    let (ra, rb) = (rounds(base)?, rounds(other)?);
    if ra != rb || ra.len() != base.len() || rb.len() != other.len() || ra.len() < 2 {
        return None;
    }
    let d: Vec<f64> = ra
        .iter()
        .filter_map(|r| {
            let a = base.iter().find(|(x, _)| *x == Some(*r))?.1;
            let b = other.iter().find(|(x, _)| *x == Some(*r))?.1;
            Some(b - a)
        })
        .collect();
    Some(Paired {
        n: d.len(),
        t: stats::paired_t(&d),
        wilcoxon: stats::wilcoxon(&d),
    })
}

/// Adjust every change's Welch p over the whole comparison; returns the family's size.
fn adjust_rows(rows: &mut [Row], how: Adjust) -> usize {
    let ps: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.changes.iter().flatten())
        .filter_map(|c| Some(c.welch?.p))
        .collect();
    let adjusted = stats::adjust(&ps, how);
    let mut it = adjusted.into_iter();
    for c in rows.iter_mut().flat_map(|r| r.changes.iter_mut().flatten()) {
        if c.welch.is_some() {
            c.p_adjusted = it.next();
        }
    }
    ps.len()
}

fn judge_rows(rows: &mut [Row], o: &Options) {
    let method = match o.adjust {
        Adjust::Holm => "Holm",
        Adjust::Bh => "BH",
        Adjust::None => "not",
    };
    for r in rows {
        let Some(Some(base)) = r.summaries.first() else {
            continue;
        };
        for (ch, other) in r.changes.iter_mut().zip(r.summaries.iter().skip(1)) {
            let (Some(ch), Some(other)) = (ch.as_mut(), other.as_ref()) else {
                continue;
            };
            let judge = verdict::Judge {
                base,
                other,
                metric: &r.metric,
                alpha: o.alpha,
                method,
            };
            (ch.verdict, ch.reason) = verdict::decide(ch, &judge);
            let notes = [verdict::disagreement(ch, o.alpha), verdict::paired_note(ch)];
            for note in notes.into_iter().flatten() {
                ch.reason.push_str(&note);
            }
        }
    }
}

/// Beside every verdict of a job where a side had I/O errors, say so: a faster side that
/// failed I/Os is not simply better.
fn note_errors(rows: &mut [Row], sides: &[Side]) {
    let errs: Vec<(String, Vec<f64>)> = rows
        .iter()
        .filter(|r| r.metric == "errors")
        .map(|r| {
            let per_side = r
                .summaries
                .iter()
                .map(|s| s.as_ref().map_or(0.0, |s| s.max))
                .collect();
            (r.job.clone(), per_side)
        })
        .collect();
    for (job, per_side) in errs {
        let bad: Vec<String> = per_side
            .iter()
            .zip(sides)
            .filter(|(e, _)| **e > 0.0)
            .map(|(_, s)| s.name.clone())
            .collect();
        if bad.is_empty() {
            continue;
        }
        for r in rows
            .iter_mut()
            .filter(|r| r.job == job && r.metric != "errors")
        {
            for ch in r.changes.iter_mut().flatten() {
                ch.reason.push_str(&format!(
                    "; I/O errors on {} (see the errors row)",
                    bad.join(", ")
                ));
            }
        }
    }
}

/// The comparison's warnings: too few runs, missing values, outliers, noise, drift, errors,
/// and differences in environment and job options.
fn warn(c: &mut Comparison, sides: &[Side], o: &Options) {
    for s in sides.iter().filter(|s| s.runs.len() < 3) {
        c.warnings.push(format!(
            "{}: {} run(s); at least 3 per side are needed for the tests to mean much",
            s.name,
            s.runs.len()
        ));
    }
    let mut trends = Vec::new();
    for r in &c.rows {
        for (si, s) in sides.iter().enumerate() {
            let xs = values(&sample(s, &r.job, &r.metric));
            sample_warnings(&mut c.warnings, s, r, &xs);
            if let Some(t) = stats::kendall_trend(&xs) {
                trends.push((si, r.job.clone(), r.metric.clone(), t));
            }
        }
        for (s, sum) in sides.iter().zip(&r.summaries) {
            if let Some(sum) = sum.as_ref().filter(|x| x.cv > 0.1) {
                c.noisy.push(Noisy {
                    side: s.name.clone(),
                    job: r.job.clone(),
                    metric: r.metric.clone(),
                    cv: sum.cv,
                });
            }
        }
    }
    let ps: Vec<f64> = trends.iter().map(|t| t.3.p).collect();
    for ((si, job, metric, trend), p) in trends.into_iter().zip(stats::adjust(&ps, o.adjust)) {
        if p < o.alpha {
            c.drift.push(Drift {
                side: sides[si].name.clone(),
                job,
                metric,
                trend,
                p_adjusted: p,
            });
        }
    }
    c.warnings.extend(context::context_differences(sides));
}

/// Outliers, missing values and I/O errors of one side's sample of a row.
fn sample_warnings(out: &mut Vec<String>, s: &Side, r: &Row, xs: &[f64]) {
    let head = format!("{} {} {}", s.name, r.job, r.metric);
    if r.metric == "errors" {
        let failed = xs.iter().filter(|x| **x > 0.0).count();
        if failed > 0 {
            let total: f64 = xs.iter().sum();
            out.push(format!(
                "{head}: {total} I/O error(s) in {failed} of {} run(s): its other numbers \
                 count only the I/Os that succeeded",
                xs.len()
            ));
        }
        return;
    }
    if !is_selected_default(&r.metric) {
        return;
    }
    if !xs.is_empty() && xs.len() < s.runs.len() {
        out.push(format!(
            "{head}: in {} of {} run(s) (the others lack it: left out, not counted as 0)",
            xs.len(),
            s.runs.len()
        ));
    }
    let idx = stats::outliers(xs);
    if !idx.is_empty() {
        let runs: Vec<String> = idx.iter().map(|i| (i + 1).to_string()).collect();
        let vals: Vec<String> = idx.iter().map(|&i| fmt_num(xs[i])).collect();
        out.push(format!(
            "{head}: outlier run(s) {} of {} (values {}): look at what else ran then",
            runs.join(", "),
            xs.len(),
            vals.join(", ")
        ));
    }
}

/// Whether `metric` is one of the headline metrics (outlier warnings are given for these).
fn is_selected_default(metric: &str) -> bool {
    let d: Vec<String> = DEFAULT_METRICS.iter().map(|m| m.to_string()).collect();
    selected(metric, &d)
}

/// Whether `metric` is selected by `wanted` (suffix match: "iops" selects "read.iops").
pub fn selected(metric: &str, wanted: &[String]) -> bool {
    wanted.is_empty()
        || wanted
            .iter()
            .any(|w| metric == w || metric.ends_with(&format!(".{w}")))
}

pub(crate) fn fmt_num(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

pub(crate) fn trunc(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

#[cfg(test)]
mod tests;
