//! The comparison of two or more sides: per job and metric, each side's summary and, for every
//! side after the first, its change against the first, judged so that the verdicts hold up
//! across a whole comparison. This file owns the data model and the assembly:
//!
//! - `family`: which metrics are compared (the rows shown are the rows tested), and the
//!   errors when nothing is comparable;
//! - `verdict`: the four verdicts (better/worse, equivalent, inconclusive, no claim) and the
//!   practical threshold;
//! - `context`: differences in the sides' environments and job options;
//! - `render`: text, markdown, CSV and JSON;
//! - `latency`: the completion-latency percentile table;
//! - `rounds`: the round effect (drift) across all jobs, one test;
//! - `outlier`: outlier runs, named when they decide a verdict.
//!
//! Every change is tested and estimated with one model (`stats::model`: the paired t of
//! per-round log ratios when both sides ran in the same rounds, else Welch of the logs), so
//! the test and the printed interval agree. Every p-value of one comparison is one family:
//! adjusted together (Holm by default, or Benjamini-Hochberg), and the verdict uses the
//! adjusted p. Values a run lacks stay missing (each row carries n per side); I/O errors are
//! rows of their own and are named beside any verdict on the same job.

mod context;
mod family;
mod latency;
mod outlier;
mod render;
mod rounds;
mod verdict;

pub use context::context_differences;
pub use family::{CompareError, Metrics, DEFAULT_METRICS};
pub use latency::{latency_table, latency_text};
pub use render::{to_csv, to_json, to_markdown, to_text};
pub use rounds::RoundEffect;
pub use verdict::{Thresholds, Verdict};

use crate::load::Side;
use crate::stats::{self, Adjust, MannWhitney, PairedT, Power, Summary, Test, Welch, Wilcoxon};
use serde::Serialize;
use std::collections::BTreeSet;

/// How to judge.
#[derive(Debug, Clone)]
pub struct Options {
    /// Significance level of the adjusted p-values (and 1 - the CIs' level is 0.05 regardless).
    pub alpha: f64,
    pub thresholds: Thresholds,
    pub adjust: Adjust,
    /// The metrics compared: the rows shown and the family the p-values are adjusted over
    /// (choosing them beforehand buys power).
    pub metrics: Metrics,
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
            metrics: Metrics::Headline,
            bootstrap: 0,
            seed: 0,
        }
    }
}

/// The rounds both sides ran in, when every run of both has a round and they match.
#[derive(Debug, Clone, Serialize)]
pub struct Paired {
    /// Rounds with a value on both sides.
    pub n: usize,
    /// Paired t-test of the per-round log ratios (the verdict's test, when there is one).
    pub t: Option<PairedT>,
    /// Wilcoxon signed-rank test of the same log ratios: the robust check.
    pub wilcoxon: Option<Wilcoxon>,
}

/// A side's change against the first side.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The relative change under the test's model (the ratio of geometric means, or of the
    /// per-round geometric mean ratio when paired; mean / base mean - 1 without a log model);
    /// `None` when the base mean is not positive.
    pub rel: Option<f64>,
    /// 95% confidence interval of `rel`, from the same model as `test`.
    pub rel_ci: Option<(f64, f64)>,
    /// The verdict's test (paired t of log ratios, Welch of logs, or Welch of raw values).
    pub test: Option<Test>,
    /// The test's p adjusted over every test of the comparison; the verdict uses this.
    pub p_adjusted: Option<f64>,
    /// What this experiment could have found, and the runs it would need for the threshold.
    pub power: Option<Power>,
    /// Welch's t-test of the raw values, for reference.
    pub welch: Option<Welch>,
    /// Mann-Whitney U: the robust check of unpaired runs.
    pub mann_whitney: Option<MannWhitney>,
    pub paired: Option<Paired>,
    /// Hedges' g (standardised difference of the means).
    pub hedges_g: Option<f64>,
    /// Hodges-Lehmann shift (median of pairwise differences), in the metric's unit.
    pub hodges_lehmann: Option<f64>,
    /// Percentile-bootstrap 95% CI of mean / base mean - 1 (latency percentiles, with
    /// --bootstrap).
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
    /// Per side after the first, against its base (`Comparison::bases`).
    pub changes: Vec<Option<Change>>,
}

/// A whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub sides: Vec<String>,
    /// Per side after the first: the side it is compared against.
    pub bases: Vec<String>,
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
    /// Whether some rounds ran faster or slower for every job (one test over all jobs).
    pub round_effect: Option<RoundEffect>,
}

/// A side's sample of one job and metric that varies too much to say much.
#[derive(Debug, Clone, Serialize)]
pub struct Noisy {
    pub side: String,
    pub job: String,
    pub metric: String,
    pub cv: f64,
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

/// Compare `sides` (the first is the base); an error when nothing is comparable.
pub fn compare(sides: &[Side], o: &Options) -> Result<Comparison, CompareError> {
    let keys = family::rows_of(sides, &o.metrics)?;
    let bases = bases(sides);
    let mut rows: Vec<Row> = keys
        .into_iter()
        .map(|(job, metric)| row(sides, &bases, job, metric, o))
        .collect();
    let tests = adjust_rows(&mut rows, o.adjust);
    let level = match o.adjust {
        Adjust::None => o.alpha,
        _ => o.alpha / tests.max(1) as f64,
    };
    for ch in rows.iter_mut().flat_map(|r| r.changes.iter_mut().flatten()) {
        ch.power = ch.test.map(|t| stats::power(&t, level, ch.threshold));
    }
    judge_rows(&mut rows, &bases, o);
    note_errors(&mut rows, sides);
    let mut c = Comparison {
        sides: sides.iter().map(|s| s.name.clone()).collect(),
        bases: bases.iter().map(|&b| sides[b].name.clone()).collect(),
        runs: sides.iter().map(|s| s.runs.len()).collect(),
        alpha: o.alpha,
        adjust: o.adjust,
        controls: o.adjust.controls().into(),
        tests,
        threshold: o.thresholds.default,
        rows,
        warnings: Vec::new(),
        noisy: Vec::new(),
        round_effect: None,
    };
    warn(&mut c, sides, &bases, o);
    Ok(c)
}

/// The side each side after the first is compared against: the one its experiment declared
/// (`baseline =`) when that side is in the comparison, else the first.
fn bases(sides: &[Side]) -> Vec<usize> {
    sides
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, s)| {
            let named = s.baseline.as_ref();
            named
                .and_then(|b| sides.iter().position(|x| &x.name == b))
                .filter(|&j| j != i)
                .unwrap_or(0)
        })
        .collect()
}

fn row(sides: &[Side], bases: &[usize], job: String, metric: String, o: &Options) -> Row {
    let data: Vec<Sample> = sides.iter().map(|s| sample(s, &job, &metric)).collect();
    let summaries = data.iter().map(|d| stats::summary(&values(d))).collect();
    let threshold = o.thresholds.of(&metric);
    let changes = data
        .iter()
        .skip(1)
        .zip(bases)
        .map(|(d, &b)| change(&data[b], d, &job, &metric, threshold, o))
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
    let pairs = pairs(base, other);
    let test = match &pairs {
        Some(p) => stats::paired_log(p),
        None => stats::welch_log(&a, &b),
    }
    .or_else(|| stats::welch_raw(&a, &b));
    let rel = test
        .map(|t| t.rel)
        .or_else(|| (sa.mean > 0.0).then(|| sb.mean / sa.mean - 1.0));
    let bootstrap = o.bootstrap > 0 && metric.contains("lat_p");
    let row_seed = fnv(&format!("{job}\0{metric}")) ^ o.seed;
    Some(Change {
        rel,
        rel_ci: test.map(|t| t.rel_ci),
        test,
        p_adjusted: None,
        power: None,
        welch: stats::welch(&a, &b),
        mann_whitney: stats::mann_whitney(&a, &b),
        paired: pairs.as_deref().map(paired),
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

/// Whether `base` and `other` pair by round.
fn pairs_rounds(base: &Sample, other: &Sample) -> bool {
    pairs(base, other).is_some()
}

/// The (base, other) values by round, when every value of both sides has a round, the
/// rounds match and there are at least two.
fn pairs(base: &Sample, other: &Sample) -> Option<Vec<(f64, f64)>> {
    let rounds = |s: &Sample| s.iter().map(|(r, _)| *r).collect::<Option<BTreeSet<u64>>>();
    let (ra, rb) = (rounds(base)?, rounds(other)?);
    if ra != rb || ra.len() != base.len() || rb.len() != other.len() || ra.len() < 2 {
        return None;
    }
    ra.iter()
        .map(|r| {
            let a = base.iter().find(|(x, _)| *x == Some(*r))?.1;
            let b = other.iter().find(|(x, _)| *x == Some(*r))?.1;
            Some((a, b))
        })
        .collect()
}

/// The paired tests of per-round log ratios (raw differences where a value is not
/// positive).
fn paired(pairs: &[(f64, f64)]) -> Paired {
    let d: Vec<f64> = if pairs.iter().all(|(a, b)| *a > 0.0 && *b > 0.0) {
        pairs.iter().map(|(a, b)| (b / a).ln()).collect()
    } else {
        pairs.iter().map(|(a, b)| b - a).collect()
    };
    Paired {
        n: d.len(),
        t: stats::paired_t(&d),
        wilcoxon: stats::wilcoxon(&d),
    }
}

/// Adjust every change's test p over the whole comparison; returns the family's size.
fn adjust_rows(rows: &mut [Row], how: Adjust) -> usize {
    let ps: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.changes.iter().flatten())
        .filter_map(|c| Some(c.test?.p))
        .collect();
    let adjusted = stats::adjust(&ps, how);
    let mut it = adjusted.into_iter();
    for c in rows.iter_mut().flat_map(|r| r.changes.iter_mut().flatten()) {
        if c.test.is_some() {
            c.p_adjusted = it.next();
        }
    }
    ps.len()
}

/// How the text names the adjustment.
fn method(o: &Options) -> &'static str {
    match o.adjust {
        Adjust::Holm => "Holm",
        Adjust::Bh => "BH",
        Adjust::None => "not",
    }
}

fn judge_rows(rows: &mut [Row], bases: &[usize], o: &Options) {
    let method = method(o);
    for r in rows {
        let others = r.summaries.iter().skip(1).zip(bases);
        for (ch, (other, &b)) in r.changes.iter_mut().zip(others) {
            let (Some(ch), Some(other), Some(base)) =
                (ch.as_mut(), other.as_ref(), r.summaries[b].as_ref())
            else {
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
            if let Some(note) = verdict::disagreement(ch, base.n, other.n, o.alpha) {
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
fn warn(c: &mut Comparison, sides: &[Side], bases: &[usize], o: &Options) {
    for s in sides.iter().filter(|s| s.runs.len() < 3) {
        c.warnings.push(format!(
            "{}: {} run(s); at least 3 per side are needed for the tests to mean much",
            s.name,
            s.runs.len()
        ));
    }
    for r in &c.rows {
        for s in sides {
            let xs = values(&sample(s, &r.job, &r.metric));
            sample_warnings(&mut c.warnings, s, r, &xs);
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
    let deciding = outlier::deciding(&c.rows, sides, bases, o, method(o));
    c.warnings.extend(deciding);
    c.round_effect = rounds::round_effect(&c.rows, sides, o.alpha);
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
    if !xs.is_empty() && xs.len() < s.runs.len() {
        out.push(format!(
            "{head}: in {} of {} run(s) (the others lack it: left out, not counted as 0)",
            xs.len(),
            s.runs.len()
        ));
    }
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
