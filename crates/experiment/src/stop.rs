//! The adaptive stop (`[stop]`): after each round, whether the experiment's results are precise
//! enough to end it. Precision is judged on what `fiox compare` will show: every row of the
//! comparison's family (the headline metrics of every job by default, `metric = "all"` for
//! every metric, or the one named) and every change in it (each variant against its baseline),
//! with the interval compare prints (the paired or Welch model of the log ratio). The stop
//! looks only at the intervals' widths, never at a p-value or a verdict: stopping when a
//! difference first looks significant would inflate false claims, stopping on width does not
//! (the width hardly depends on the estimate). With one variant there is no change to judge,
//! and each row's own mean interval is used.

use crate::compare::{self, Metrics};
use crate::config::Stop;
use crate::load::{self, Side};
use std::path::Path;

/// How precisely one row is known so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Precision {
    /// The 95% interval's half-width as a share of the value (for a change: of the log ratio,
    /// which is the relative half-width for small changes).
    Half(f64),
    /// Every run on every side the same value: more runs would not narrow anything (a rate
    /// limit, a quantised count), so the row does not hold the stop back.
    NoSpread,
    /// Not enough runs yet for an interval (or a mean of 0, which has no relative width).
    Unknown,
}

/// One row of the family and its precision.
#[derive(Debug, Clone)]
pub struct RowWidth {
    /// `job metric` and, for a change, `variant vs baseline`.
    pub label: String,
    pub precision: Precision,
}

/// The metrics `[stop]` judges.
pub fn metrics_of(s: &Stop) -> Metrics {
    match s.metric.as_deref() {
        None => Metrics::Headline,
        Some("all") => Metrics::All,
        Some(m) => Metrics::Named(vec![m.to_string()]),
    }
}

/// The precision of every row of the family over the measured runs in `out` of the variants
/// `names`. An error when the runs hold none of the metrics asked for.
pub fn widths(out: &Path, names: &[String], s: &Stop) -> Result<Vec<RowWidth>, String> {
    let sides: Vec<Side> = load::load_sides(out)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|side| names.contains(&side.name) && !side.runs.is_empty())
        .collect();
    if sides.is_empty() {
        return Ok(Vec::new());
    }
    let metrics = metrics_of(s);
    let rows = if sides.len() == 1 {
        one_side(&sides[0], &metrics)
    } else {
        let o = compare::Options {
            metrics: metrics.clone(),
            ..Default::default()
        };
        match compare::compare(&sides, &o) {
            Ok(c) => changes(&c),
            Err(compare::CompareError::NoMetric { .. }) => Vec::new(),
            Err(e) => return Err(e.to_string()),
        }
    };
    if rows.is_empty() {
        return Err(format!(
            "[stop] metric = \"{}\" matches no metric of the runs (e.g. iops, bw_mib, \
             lat_mean_us, lat_p99_us, read.iops, or leave it out for the headline metrics)",
            s.metric.as_deref().unwrap_or("the headline metrics")
        ));
    }
    Ok(rows)
}

/// Whether every row is known to within `ci`.
pub fn reached(rows: &[RowWidth], ci: f64) -> bool {
    rows.iter().all(|r| match r.precision {
        Precision::Half(h) => h < ci,
        Precision::NoSpread => true,
        Precision::Unknown => false,
    })
}

/// The rows of a comparison: each change with the interval compare prints.
fn changes(c: &compare::Comparison) -> Vec<RowWidth> {
    let mut out = Vec::new();
    for row in c.rows.iter().filter(|r| r.metric != "errors") {
        for (i, ch) in row.changes.iter().enumerate() {
            let side = &c.sides[i + 1];
            let base = &c.bases[i];
            let (bi, si) = (index(&c.sides, base), i + 1);
            let spread = |k: usize| row.summaries[k].as_ref().map(|s| (s.n, s.sd));
            let precision = match (ch, spread(bi), spread(si)) {
                (_, Some((na, sa)), Some((nb, sb)))
                    if na >= 2 && nb >= 2 && sa == 0.0 && sb == 0.0 =>
                {
                    Precision::NoSpread
                }
                (Some(ch), _, _) => match ch.rel_ci {
                    Some((lo, hi)) if lo > -1.0 => {
                        Precision::Half(((1.0 + hi).ln() - (1.0 + lo).ln()) / 2.0)
                    }
                    _ => Precision::Unknown,
                },
                (None, _, _) => Precision::Unknown,
            };
            out.push(RowWidth {
                label: format!("{} {}: {side} vs {base}", row.job, row.metric),
                precision,
            });
        }
    }
    out
}

fn index(names: &[String], name: &str) -> usize {
    names.iter().position(|n| n == name).unwrap_or(0)
}

/// With one variant: each (job, metric) row's own 95% interval of the mean.
fn one_side(side: &Side, metrics: &Metrics) -> Vec<RowWidth> {
    let mut keys = std::collections::BTreeSet::new();
    for run in &side.runs {
        for (job, ms) in &run.jobs {
            for m in ms.keys().filter(|m| *m != "errors" && metrics.selects(m)) {
                keys.insert((job.clone(), m.clone()));
            }
        }
    }
    keys.into_iter()
        .map(|(job, metric)| {
            let vals: Vec<f64> = side
                .runs
                .iter()
                .filter_map(|r| r.jobs.get(&job)?.get(&metric).copied())
                .collect();
            let precision = match crate::stats::summary(&vals) {
                Some(s) if s.n >= 2 && s.sd == 0.0 => Precision::NoSpread,
                Some(s) => match s.ci {
                    Some((_, hi)) if s.mean != 0.0 => Precision::Half((hi - s.mean) / s.mean.abs()),
                    _ => Precision::Unknown,
                },
                None => Precision::Unknown,
            };
            RowWidth {
                label: format!("{job} {metric}: {}", side.name),
                precision,
            }
        })
        .collect()
}

/// What the adaptive stop says when it reaches max_runs short of its target: the rows still
/// too wide, widest first.
pub fn gave_up(s: &Stop, rows: &[RowWidth]) -> String {
    let mut wide: Vec<(&RowWidth, f64)> = rows
        .iter()
        .filter_map(|r| match r.precision {
            Precision::Half(h) if h >= s.ci => Some((r, h)),
            Precision::Unknown => Some((r, f64::INFINITY)),
            _ => None,
        })
        .collect();
    wide.sort_by(|a, b| b.1.total_cmp(&a.1));
    let shown: Vec<String> = wide
        .iter()
        .take(5)
        .map(|(r, h)| match h.is_finite() {
            true => format!("{} ±{:.2}%", r.label, h * 100.0),
            false => format!("{} (no interval)", r.label),
        })
        .collect();
    let more = match wide.len().saturating_sub(shown.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "adaptive stop: max_runs = {} reached without the target: {} of {} rows of {} are \
         wider than ±{:.2}%: {}{more}",
        s.max_runs,
        wide.len(),
        rows.len(),
        s.metric.as_deref().unwrap_or("the headline metrics"),
        s.ci * 100.0,
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(p: Precision) -> RowWidth {
        RowWidth {
            label: "j iops: b vs a".into(),
            precision: p,
        }
    }

    #[test]
    fn every_row_must_be_narrow_and_rows_without_spread_never_hold_it_back() {
        let narrow = row(Precision::Half(0.01));
        assert!(reached(&[narrow.clone(), row(Precision::NoSpread)], 0.02));
        assert!(!reached(
            &[narrow.clone(), row(Precision::Half(0.03))],
            0.02
        ));
        assert!(!reached(&[narrow, row(Precision::Unknown)], 0.02));
    }

    #[test]
    fn giving_up_names_the_widest_rows_first() {
        let s = Stop {
            ci: 0.02,
            max_runs: 4,
            metric: None,
        };
        let rows: Vec<RowWidth> = [0.05, 0.01, 0.5, 0.03, 0.04, 0.06, 0.07]
            .iter()
            .map(|&h| RowWidth {
                label: format!("r{h}"),
                precision: Precision::Half(h),
            })
            .collect();
        let m = gave_up(&s, &rows);
        assert!(
            m.starts_with("adaptive stop: max_runs = 4 reached without the target: 6 of 7 rows"),
            "{m}"
        );
        assert!(m.contains("r0.5 ±50.00%, r0.07 ±7.00%, r0.06"), "{m}");
        assert!(m.ends_with("and 1 more"), "{m}");
        assert!(!m.contains("r0.01"), "{m}");
    }
}
