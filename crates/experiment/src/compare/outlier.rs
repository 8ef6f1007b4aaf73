//! Outliers that matter: a run is an outlier of its sample by the median/MAD rule on the log
//! scale (`stats::outliers`, from three runs a side), and it is named only when it decides a
//! verdict: the change judged again without it (and, when paired, without its round on the
//! other side) reads otherwise. On a noisy machine most samples hold a run that looks odd;
//! the one worth a look is the one the conclusion rests on.

use super::{change, pairs_rounds, sample, values, verdict, Change, Row, Sample};
use crate::load::Side;
use crate::stats;

/// The runs of `s` (indices into the sample) that are outliers on the log scale.
fn outlier_runs(s: &Sample) -> Vec<usize> {
    let xs = values(s);
    if xs.iter().all(|x| *x > 0.0) {
        stats::outliers(&xs.iter().map(|x| x.ln()).collect::<Vec<_>>())
    } else {
        stats::outliers(&xs)
    }
}

/// `s` without the runs at `drop`, and without the rounds `rounds` names.
fn without(s: &Sample, drop: &[usize], rounds: &[Option<u64>]) -> Sample {
    s.iter()
        .enumerate()
        .filter(|(i, (r, _))| {
            let round_dropped = r.is_some() && rounds.contains(r);
            !drop.contains(i) && !round_dropped
        })
        .map(|(_, x)| *x)
        .collect()
}

/// The file names of `side`'s runs behind the sample's entries `idx`.
fn run_names(side: &Side, job: &str, metric: &str, idx: &[usize]) -> Vec<String> {
    let runs: Vec<&crate::load::Run> = side
        .runs
        .iter()
        .filter(|r| r.jobs.get(job).is_some_and(|m| m.contains_key(metric)))
        .collect();
    idx.iter()
        .filter_map(|&i| runs.get(i))
        .map(|r| {
            let name = r
                .source
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            name.unwrap_or_else(|| r.source.display().to_string())
        })
        .collect()
}

/// The warnings of outlier runs that decide a verdict of `rows` (the changes judged already).
pub fn deciding(
    rows: &[Row],
    sides: &[Side],
    bases: &[usize],
    o: &super::Options,
    method: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.metric != "errors") {
        let data: Vec<Sample> = sides.iter().map(|s| sample(s, &r.job, &r.metric)).collect();
        for (k, ch) in r.changes.iter().enumerate() {
            let Some(ch) = ch else { continue };
            let (b, i) = (bases[k], k + 1);
            let (ob, oi) = (outlier_runs(&data[b]), outlier_runs(&data[i]));
            if ob.is_empty() && oi.is_empty() {
                continue;
            }
            // Paired: an outlier's round goes from both sides.
            let paired = pairs_rounds(&data[b], &data[i]);
            let rounds: Vec<Option<u64>> = if paired {
                let of = |s: &Sample, idx: &[usize]| -> Vec<Option<u64>> {
                    idx.iter().map(|&j| s[j].0).collect()
                };
                [of(&data[b], &ob), of(&data[i], &oi)].concat()
            } else {
                Vec::new()
            };
            let (sb, si) = (
                without(&data[b], &ob, &rounds),
                without(&data[i], &oi, &rounds),
            );
            let Some(again) = judged_again(ch, &sb, &si, r, o, method) else {
                continue;
            };
            // Without them too little may be left to judge: then they decide nothing.
            if again.0 == ch.verdict || again.0 == verdict::Verdict::NoClaim {
                continue;
            }
            let mut named = run_names(&sides[b], &r.job, &r.metric, &ob);
            named.extend(run_names(&sides[i], &r.job, &r.metric, &oi));
            out.push(format!(
                "{} vs {} {} {}: outlier run(s) {} (median/MAD) decide the verdict: {} with \
                 them, {} without ({}): look at what else ran then",
                sides[i].name,
                sides[b].name,
                r.job,
                r.metric,
                named.join(", "),
                ch.verdict.as_str(),
                again.0.as_str(),
                again.1
            ));
        }
    }
    out
}

/// The verdict of the change between `a` and `b`, its p adjusted by the factor the family
/// gave the original row (so the family's size still counts).
fn judged_again(
    ch: &Change,
    a: &Sample,
    b: &Sample,
    r: &Row,
    o: &super::Options,
    method: &str,
) -> Option<(verdict::Verdict, String)> {
    let mut again = change(a, b, &r.job, &r.metric, ch.threshold, o)?;
    let factor = match (ch.p_adjusted, ch.test) {
        (Some(adj), Some(t)) if t.p > 0.0 => adj / t.p,
        _ => 1.0,
    };
    again.p_adjusted = again.test.map(|t| (t.p * factor).min(1.0));
    let (sa, sb) = (stats::summary(&values(a))?, stats::summary(&values(b))?);
    let judge = verdict::Judge {
        base: &sa,
        other: &sb,
        metric: &r.metric,
        alpha: o.alpha,
        method,
    };
    Some(verdict::decide(&again, &judge))
}
