//! The comparison of two or more sides: per job and metric, each side's summary and, for every
//! side after the first, its change against the first (relative change with a 95% confidence
//! interval, Welch and Mann-Whitney p-values, and a verdict at the chosen alpha). Rendered as a
//! text table shaped like seed 002's (mean and stddev per variant per test), markdown, CSV or
//! JSON.

use crate::load::{higher_is_better, LatDist, Side};
use crate::stats::{self, MannWhitney, Summary, Welch};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The metrics the text and markdown tables show unless asked for others.
pub const DEFAULT_METRICS: [&str; 4] = ["iops", "bw_mib", "lat_mean_us", "lat_p99_us"];

/// A side's change against the first side.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// (mean - base mean) / base mean.
    pub rel: f64,
    /// 95% confidence interval of `rel` (Welch's interval of the difference over the base mean).
    pub rel_ci: Option<(f64, f64)>,
    pub welch: Option<Welch>,
    pub mann_whitney: Option<MannWhitney>,
    /// "better", "worse", "different" (telemetry), "no difference" or "too few runs".
    pub verdict: String,
}

/// One job x metric line.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub job: String,
    pub metric: String,
    /// Per side (in order); `None` where the side has no value.
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
    pub rows: Vec<Row>,
    pub warnings: Vec<String>,
    /// Samples with a coefficient of variation above 10%.
    pub noisy: Vec<Noisy>,
}

/// A side's sample of one job and metric that varies too much to say much.
#[derive(Debug, Clone, Serialize)]
pub struct Noisy {
    pub side: String,
    pub job: String,
    pub metric: String,
    pub cv: f64,
}

impl Noisy {
    fn text(&self) -> String {
        format!(
            "{} {} {}: noisy (CV {:.1}%): more runs or a quieter machine",
            self.side,
            self.job,
            self.metric,
            self.cv * 100.0
        )
    }
}

/// The general warnings and the noise warnings of the selected metrics.
fn warnings_of<'a>(c: &'a Comparison, wanted: &'a [String]) -> impl Iterator<Item = String> + 'a {
    c.warnings.iter().cloned().chain(
        c.noisy
            .iter()
            .filter(|n| selected(&n.metric, wanted))
            .map(Noisy::text),
    )
}

/// Compare `sides` (the first is the base) at significance level `alpha`.
pub fn compare(sides: &[Side], alpha: f64) -> Comparison {
    let mut keys: BTreeSet<(String, String)> = BTreeSet::new();
    for s in sides {
        for r in &s.runs {
            for (job, m) in &r.jobs {
                keys.extend(m.keys().map(|k| (job.clone(), k.clone())));
            }
        }
    }
    let rows: Vec<Row> = keys
        .into_iter()
        .map(|(job, metric)| row(sides, job, metric, alpha))
        .collect();
    let mut warnings = Vec::new();
    for s in sides {
        if s.runs.len() < 3 {
            warnings.push(format!(
                "{}: {} run(s); at least 3 per side are needed for the tests to mean much",
                s.name,
                s.runs.len()
            ));
        }
    }
    let mut noisy = Vec::new();
    for r in &rows {
        for s in sides {
            let xs = samples(s, &r.job, &r.metric);
            let out = stats::outliers(&xs);
            if !out.is_empty() && is_selected_default(&r.metric) {
                let vals: Vec<String> = out.iter().map(|&i| fmt_num(xs[i])).collect();
                warnings.push(format!(
                    "{} {} {}: outlier run(s) {} of {} (values {}): look at what else ran then",
                    s.name,
                    r.job,
                    r.metric,
                    out.iter()
                        .map(|i| (i + 1).to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    xs.len(),
                    vals.join(", ")
                ));
            }
        }
        for (s, sum) in sides.iter().zip(&r.summaries) {
            if let Some(sum) = sum.as_ref().filter(|x| x.cv > 0.1) {
                noisy.push(Noisy {
                    side: s.name.clone(),
                    job: r.job.clone(),
                    metric: r.metric.clone(),
                    cv: sum.cv,
                });
            }
        }
    }
    warnings.extend(env_differences(sides));
    Comparison {
        sides: sides.iter().map(|s| s.name.clone()).collect(),
        runs: sides.iter().map(|s| s.runs.len()).collect(),
        alpha,
        rows,
        warnings,
        noisy,
    }
}

fn samples(side: &Side, job: &str, metric: &str) -> Vec<f64> {
    side.runs
        .iter()
        .filter_map(|r| r.jobs.get(job)?.get(metric).copied())
        .collect()
}

fn row(sides: &[Side], job: String, metric: String, alpha: f64) -> Row {
    let data: Vec<Vec<f64>> = sides.iter().map(|s| samples(s, &job, &metric)).collect();
    let summaries = data.iter().map(|d| stats::summary(d)).collect();
    let changes = data
        .iter()
        .skip(1)
        .map(|d| change(&data[0], d, &metric, alpha))
        .collect();
    Row {
        job,
        metric,
        summaries,
        changes,
    }
}

fn change(base: &[f64], other: &[f64], metric: &str, alpha: f64) -> Option<Change> {
    let (sa, sb) = (stats::summary(base)?, stats::summary(other)?);
    let rel = if sa.mean != 0.0 {
        (sb.mean - sa.mean) / sa.mean.abs()
    } else {
        0.0
    };
    let welch = stats::welch(base, other);
    let rel_ci = welch
        .filter(|_| sa.mean != 0.0)
        .map(|w| (w.diff_ci.0 / sa.mean.abs(), w.diff_ci.1 / sa.mean.abs()));
    let verdict = match welch {
        None => "too few runs".to_string(),
        Some(w) if w.p >= alpha || sb.mean == sa.mean => "no difference".to_string(),
        Some(_) => match higher_is_better(metric) {
            None => "different".to_string(),
            Some(up) if up == (sb.mean > sa.mean) => "better".to_string(),
            Some(_) => "worse".to_string(),
        },
    };
    Some(Change {
        rel,
        rel_ci,
        welch,
        mann_whitney: stats::mann_whitney(base, other),
        verdict,
    })
}

/// Warnings where the sides' recorded environments differ ("kernel differs").
fn env_differences(sides: &[Side]) -> Vec<String> {
    const FIELDS: [(&str, &str); 7] = [
        ("/kernel/release", "kernel"),
        ("/kernel/cmdline", "kernel command line"),
        ("/cpu/model", "CPU model"),
        ("/cpu/governor", "CPU governor"),
        ("/fiox/version", "fiox version"),
        ("/targets/0/devices/0/scheduler", "scheduler"),
        ("/thp", "transparent huge pages"),
    ];
    let first_env = |s: &Side| s.runs.iter().find_map(|r| r.env.clone());
    let Some(base) = sides.first().and_then(first_env) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in &sides[1..] {
        let Some(env) = first_env(s) else { continue };
        for (ptr, what) in FIELDS {
            let (a, b) = (base.pointer(ptr), env.pointer(ptr));
            if a.is_some() && b.is_some() && a != b {
                out.push(format!(
                    "{what} differs: {} has {}, {} has {}",
                    sides[0].name,
                    show(a),
                    s.name,
                    show(b)
                ));
            }
        }
    }
    out
}

fn show(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
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

fn fmt_num(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

fn fmt_change(c: &Change) -> String {
    let mut s = format!("{:+.1}%", c.rel * 100.0);
    if let Some((lo, hi)) = c.rel_ci {
        let _ = write!(s, " [{:+.1},{:+.1}]", lo * 100.0, hi * 100.0);
    }
    s
}

fn fmt_p(p: Option<f64>) -> String {
    p.map_or("-".into(), |p| {
        if p < 0.001 {
            "<0.001".into()
        } else {
            format!("{p:.3}")
        }
    })
}

/// The text table: one block per metric, one line per job, mean and stddev per side, then the
/// change of each further side.
pub fn to_text(c: &Comparison, wanted: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "sides: {}",
        c.sides
            .iter()
            .zip(&c.runs)
            .map(|(s, n)| format!("{s} ({n} runs)"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let metrics: BTreeSet<&str> = c
        .rows
        .iter()
        .map(|r| r.metric.as_str())
        .filter(|m| selected(m, wanted))
        .collect();
    for metric in metrics {
        text_block(&mut out, c, metric);
    }
    for w in warnings_of(c, wanted) {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn text_block(out: &mut String, c: &Comparison, metric: &str) {
    let _ = writeln!(out, "\n{metric}");
    let mut head = format!("{:<24}", "test");
    for s in &c.sides {
        let _ = write!(head, " {:>12} {:>10}", trunc(s, 12), "stddev");
    }
    for s in c.sides.get(1..).unwrap_or_default() {
        let _ = write!(
            head,
            "  {:<24} {:>7} {:>7} verdict",
            format!("{} vs {}", trunc(s, 10), trunc(&c.sides[0], 10)),
            "p(t)",
            "p(U)",
        );
    }
    let _ = writeln!(out, "{}", head.trim_end());
    for r in c.rows.iter().filter(|r| r.metric == metric) {
        let mut line = format!("{:<24}", trunc(&r.job, 24));
        for s in &r.summaries {
            match s {
                Some(s) => write!(line, " {:>12} {:>10}", fmt_num(s.mean), fmt_num(s.sd)),
                None => write!(line, " {:>12} {:>10}", "-", "-"),
            }
            .ok();
        }
        for ch in &r.changes {
            match ch {
                Some(ch) => write!(
                    line,
                    "  {:<24} {:>7} {:>7} {}",
                    fmt_change(ch),
                    fmt_p(ch.welch.map(|w| w.p)),
                    fmt_p(ch.mann_whitney.map(|m| m.p)),
                    ch.verdict
                ),
                None => write!(line, "  {:<24}", "-"),
            }
            .ok();
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

fn trunc(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// A markdown table: job, metric, mean ± sd per side, change, p-values, verdict.
pub fn to_markdown(c: &Comparison, wanted: &[String]) -> String {
    let mut out = String::from("| test | metric |");
    for s in &c.sides {
        let _ = write!(
            out,
            " {s} (n={}) |",
            c.runs[c.sides.iter().position(|x| x == s).unwrap_or(0)]
        );
    }
    for s in c.sides.get(1..).unwrap_or_default() {
        let _ = write!(
            out,
            " {s} vs {} | p (Welch) | p (M-W) | verdict |",
            c.sides[0]
        );
    }
    out.push_str("\n|---|---|");
    for _ in 0..c.sides.len() + 4 * c.sides.len().saturating_sub(1) {
        out.push_str("---:|");
    }
    out.push('\n');
    for r in c.rows.iter().filter(|r| selected(&r.metric, wanted)) {
        let _ = write!(out, "| {} | {} |", r.job, r.metric);
        for s in &r.summaries {
            match s {
                Some(s) => write!(out, " {} ± {} |", fmt_num(s.mean), fmt_num(s.sd)),
                None => write!(out, " - |"),
            }
            .ok();
        }
        for ch in &r.changes {
            match ch {
                Some(ch) => write!(
                    out,
                    " {} | {} | {} | {} |",
                    fmt_change(ch),
                    fmt_p(ch.welch.map(|w| w.p)),
                    fmt_p(ch.mann_whitney.map(|m| m.p)),
                    ch.verdict
                ),
                None => write!(out, " - | - | - | - |"),
            }
            .ok();
        }
        out.push('\n');
    }
    let warnings: Vec<String> = warnings_of(c, wanted).collect();
    if !warnings.is_empty() {
        out.push_str("\nWarnings:\n\n");
        for w in warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
    out
}

/// CSV in long form: one line per job, metric and side.
pub fn to_csv(c: &Comparison, wanted: &[String]) -> String {
    let mut out = String::from(
        "job,metric,side,n,mean,sd,cv,ci_low,ci_high,change,change_ci_low,change_ci_high,\
         p_welch,p_mann_whitney,verdict\n",
    );
    for r in c.rows.iter().filter(|r| selected(&r.metric, wanted)) {
        for (i, s) in r.summaries.iter().enumerate() {
            let Some(s) = s else { continue };
            let (lo, hi) = s.ci.map_or((String::new(), String::new()), |(a, b)| {
                (a.to_string(), b.to_string())
            });
            let _ = write!(
                out,
                "{},{},{},{},{},{},{},{lo},{hi}",
                csv(&r.job),
                csv(&r.metric),
                csv(&c.sides[i]),
                s.n,
                s.mean,
                s.sd,
                s.cv
            );
            match i.checked_sub(1).and_then(|k| r.changes[k].as_ref()) {
                Some(ch) => {
                    let (clo, chi) = ch.rel_ci.map_or((String::new(), String::new()), |(a, b)| {
                        (a.to_string(), b.to_string())
                    });
                    let opt = |p: Option<f64>| p.map_or(String::new(), |p| p.to_string());
                    let _ = writeln!(
                        out,
                        ",{},{clo},{chi},{},{},{}",
                        ch.rel,
                        opt(ch.welch.map(|w| w.p)),
                        opt(ch.mann_whitney.map(|m| m.p)),
                        ch.verdict
                    );
                }
                None => out.push_str(",,,,,,\n"),
            }
        }
    }
    out
}

fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The comparison as pretty JSON.
pub fn to_json(c: &Comparison, wanted: &[String]) -> String {
    let mut c = c.clone();
    c.rows.retain(|r| selected(&r.metric, wanted));
    c.noisy.retain(|n| selected(&n.metric, wanted));
    serde_json::to_string_pretty(&c).unwrap_or_default() + "\n"
}

/// Percentiles the latency table shows.
const LAT_PCTS: [f64; 8] = [1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0];

/// Per job/direction, each side's completion latency (µs) at [`LAT_PCTS`]: from the merged
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
            (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64 / 1e3)
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

    fn side(name: &str, vals: &[f64]) -> Side {
        Side {
            name: name.into(),
            runs: vals
                .iter()
                .map(|v| {
                    let mut r = Run::default();
                    r.jobs
                        .entry("randread".into())
                        .or_default()
                        .insert("read.iops".into(), *v);
                    r.jobs
                        .entry("randread".into())
                        .or_default()
                        .insert("read.lat_mean_us".into(), 1e6 / v);
                    r
                })
                .collect(),
        }
    }

    #[test]
    fn verdicts_follow_the_metric_direction() {
        // Same numbers as stats' scipy reference: p(Welch) = 0.0054.
        let a = side("base", &[8015.0, 8102.0, 7950.0, 8060.0, 7990.0]);
        let b = side("dio", &[8136.0, 8210.0, 8090.0, 8175.0, 8150.0]);
        let c = compare(&[a, b], 0.05);
        let iops = c.rows.iter().find(|r| r.metric == "read.iops").unwrap();
        let ch = iops.changes[0].as_ref().unwrap();
        assert_eq!(ch.verdict, "better");
        assert!((ch.rel - 0.0164).abs() < 1e-3, "{}", ch.rel);
        let (lo, hi) = ch.rel_ci.unwrap();
        assert!((lo - 51.13820762912755 / 8023.4).abs() < 1e-9, "{lo}");
        assert!((hi - 206.46179237087281 / 8023.4).abs() < 1e-9, "{hi}");
        let lat = c
            .rows
            .iter()
            .find(|r| r.metric == "read.lat_mean_us")
            .unwrap();
        assert_eq!(lat.changes[0].as_ref().unwrap().verdict, "better");
        let strict = compare(
            &[side("a", &[1.0, 2.0, 3.0]), side("b", &[1.5, 2.5, 3.5])],
            0.05,
        );
        assert_eq!(
            strict.rows[0].changes[0].as_ref().unwrap().verdict,
            "no difference"
        );
        let text = to_text(&c, &[]);
        assert!(text.contains("read.iops"), "{text}");
        assert!(text.contains("better"), "{text}");
        let csv = to_csv(&c, &["iops".into()]);
        assert_eq!(csv.lines().count(), 3, "{csv}");
        let md = to_markdown(&c, &[]);
        assert!(
            md.contains("| randread | read.iops | 8023 ± 59.4 |"),
            "{md}"
        );
    }

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
        };
        let b = Side {
            name: "b".into(),
            runs: vec![run(&[(2000, 1)])],
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

    #[test]
    fn differing_environments_are_named() {
        let mut a = side("a", &[1.0, 2.0, 3.0]);
        let mut b = side("b", &[1.0, 2.0, 3.0]);
        let env = |rel: &str, sched: &str| {
            serde_json::json!({"kernel": {"release": rel}, "cpu": {"model": "x"},
                               "targets": [{"devices": [{"scheduler": sched}]}]})
        };
        a.runs[0].env = Some(env("6.1", "none"));
        b.runs[1].env = Some(env("6.18", "mq-deadline"));
        let c = compare(&[a, b], 0.05);
        let w = c.warnings.join("\n");
        assert!(w.contains("kernel differs: a has 6.1, b has 6.18"), "{w}");
        assert!(
            w.contains("scheduler differs: a has none, b has mq-deadline"),
            "{w}"
        );
        assert!(!w.contains("CPU model"), "{w}");
    }

    #[test]
    fn an_outlier_run_is_named() {
        let a = side("a", &[100.0, 101.0, 99.0, 100.0, 102.0, 98.0, 40.0]);
        let b = side("b", &[100.0, 101.0, 99.0, 100.0, 102.0]);
        let c = compare(&[a, b], 0.05);
        let w = c.warnings.join("\n");
        assert!(
            w.contains("a randread read.iops: outlier run(s) 7 of 7 (values 40.0)"),
            "{w}"
        );
        assert!(!w.contains("b randread read.iops: outlier"), "{w}");
    }

    #[test]
    fn one_run_per_side_says_too_few() {
        let c = compare(&[side("a", &[1.0]), side("b", &[2.0])], 0.05);
        assert_eq!(
            c.rows[0].changes[0].as_ref().unwrap().verdict,
            "too few runs"
        );
        assert!(c.warnings.iter().any(|w| w.contains("at least 3")));
    }
}
