//! A comparison as text (one block per metric, shaped like seed 002's tables), markdown, CSV
//! (long form, one line per job, metric and side) or JSON. Every format carries n per side,
//! the adjusted p-value, the verdict and its reason.

use super::verdict::fmt_p;
use super::{fmt_num, selected, trunc, Change, Comparison, Drift, Noisy};
use std::collections::BTreeSet;
use std::fmt::Write;

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

impl Drift {
    fn text(&self) -> String {
        format!(
            "{} {} {}: {} over run order (Kendall tau {:+.2}, p = {} adjusted): interleave \
             variants, warm up, or look at what changed during the runs",
            self.side,
            self.job,
            self.metric,
            if self.trend.tau > 0.0 {
                "rises"
            } else {
                "falls"
            },
            self.trend.tau,
            fmt_p(self.p_adjusted)
        )
    }
}

/// The general warnings and the noise and drift warnings of the selected metrics.
fn warnings_of<'a>(c: &'a Comparison, wanted: &'a [String]) -> impl Iterator<Item = String> + 'a {
    let noisy = c.noisy.iter().filter(|n| selected(&n.metric, wanted));
    let drift = c.drift.iter().filter(|d| selected(&d.metric, wanted));
    c.warnings
        .iter()
        .cloned()
        .chain(noisy.map(Noisy::text))
        .chain(drift.map(Drift::text))
}

/// The metrics shown: those selected, and the error counts wherever a side had errors.
fn shown(c: &Comparison, metric: &str, wanted: &[String]) -> bool {
    selected(metric, wanted) || (metric == "errors" && has_errors(c))
}

fn has_errors(c: &Comparison) -> bool {
    c.rows
        .iter()
        .filter(|r| r.metric == "errors")
        .flat_map(|r| r.summaries.iter().flatten())
        .any(|s| s.max > 0.0)
}

/// One line saying how verdicts are reached.
fn rule(c: &Comparison) -> String {
    format!(
        "verdicts: adjusted p < {} ({} test(s); controls the {}) and a change of at least \
         ±{:.1}%; CIs 95%, relative change on the ratio scale",
        c.alpha,
        c.tests,
        c.controls,
        c.threshold * 100.0
    )
}

fn fmt_change(c: &Change) -> String {
    let Some(rel) = c.rel else {
        return "-".into();
    };
    let mut s = format!("{:+.1}%", rel * 100.0);
    if let Some((lo, hi)) = c.rel_ci {
        let _ = write!(s, " [{:+.1},{:+.1}]", lo * 100.0, hi * 100.0);
    }
    s
}

fn p_or_dash(p: Option<f64>) -> String {
    p.map_or("-".into(), fmt_p)
}

/// The text table: one block per metric, one line per job, mean, stddev and n per side, then
/// the change of each further side with its verdict and reason.
pub fn to_text(c: &Comparison, wanted: &[String]) -> String {
    let mut out = String::new();
    let sides: Vec<String> = c
        .sides
        .iter()
        .zip(&c.runs)
        .map(|(s, n)| format!("{s} ({n} runs)"))
        .collect();
    let _ = writeln!(out, "sides: {}\n{}", sides.join(", "), rule(c));
    let metrics: BTreeSet<&str> = c
        .rows
        .iter()
        .map(|r| r.metric.as_str())
        .filter(|m| shown(c, m, wanted))
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
        let _ = write!(head, " {:>12} {:>10} {:>3}", trunc(s, 12), "stddev", "n");
    }
    for s in c.sides.get(1..).unwrap_or_default() {
        let _ = write!(
            head,
            "  {:<24} {:>7} {:>7} {:>7} verdict",
            format!("{} vs {}", trunc(s, 10), trunc(&c.sides[0], 10)),
            "p(t)",
            "p adj",
            "p(U)",
        );
    }
    let _ = writeln!(out, "{}", head.trim_end());
    for r in c.rows.iter().filter(|r| r.metric == metric) {
        let mut line = format!("{:<24}", trunc(&r.job, 24));
        for s in &r.summaries {
            match s {
                Some(s) => write!(
                    line,
                    " {:>12} {:>10} {:>3}",
                    fmt_num(s.mean),
                    fmt_num(s.sd),
                    s.n
                ),
                None => write!(line, " {:>12} {:>10} {:>3}", "-", "-", 0),
            }
            .ok();
        }
        for ch in &r.changes {
            match ch {
                Some(ch) => write!(
                    line,
                    "  {:<24} {:>7} {:>7} {:>7} {}: {}",
                    fmt_change(ch),
                    p_or_dash(ch.welch.map(|w| w.p)),
                    p_or_dash(ch.p_adjusted),
                    p_or_dash(ch.mann_whitney.map(|m| m.p)),
                    ch.verdict.as_str(),
                    ch.reason
                ),
                None => write!(line, "  {:<24}", "-"),
            }
            .ok();
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// A markdown table: job, metric, mean ± sd (n) per side, change, p-values, verdict, reason.
pub fn to_markdown(c: &Comparison, wanted: &[String]) -> String {
    let mut out = String::from("| test | metric |");
    for (s, n) in c.sides.iter().zip(&c.runs) {
        let _ = write!(out, " {s} ({n} runs) |");
    }
    for s in c.sides.get(1..).unwrap_or_default() {
        let _ = write!(
            out,
            " {s} vs {} | p (Welch) | p adj | p (M-W) | verdict |",
            c.sides[0]
        );
    }
    out.push_str("\n|---|---|");
    for _ in 0..c.sides.len() + 5 * c.sides.len().saturating_sub(1) {
        out.push_str("---:|");
    }
    out.push('\n');
    for r in c.rows.iter().filter(|r| shown(c, &r.metric, wanted)) {
        let _ = write!(out, "| {} | {} |", r.job, r.metric);
        for s in &r.summaries {
            match s {
                Some(s) => write!(
                    out,
                    " {} ± {} (n={}) |",
                    fmt_num(s.mean),
                    fmt_num(s.sd),
                    s.n
                ),
                None => write!(out, " - |"),
            }
            .ok();
        }
        for ch in &r.changes {
            match ch {
                Some(ch) => write!(
                    out,
                    " {} | {} | {} | {} | {}: {} |",
                    fmt_change(ch),
                    p_or_dash(ch.welch.map(|w| w.p)),
                    p_or_dash(ch.p_adjusted),
                    p_or_dash(ch.mann_whitney.map(|m| m.p)),
                    ch.verdict.as_str(),
                    ch.reason.replace('|', "/")
                ),
                None => write!(out, " - | - | - | - | - |"),
            }
            .ok();
        }
        out.push('\n');
    }
    let _ = writeln!(out, "\n{}", rule(c));
    let warnings: Vec<String> = warnings_of(c, wanted).collect();
    if !warnings.is_empty() {
        out.push_str("\nWarnings:\n\n");
        for w in warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
    out
}

const CSV_HEAD: &str = "job,metric,side,n,mean,sd,cv,ci_low,ci_high,change,change_ci_low,\
change_ci_high,p_welch,p_adjusted,p_mann_whitney,p_paired_t,p_wilcoxon,hedges_g,\
hodges_lehmann,bootstrap_ci_low,bootstrap_ci_high,threshold,verdict,reason\n";

/// CSV in long form: one line per job, metric and side.
pub fn to_csv(c: &Comparison, wanted: &[String]) -> String {
    let mut out = String::from(CSV_HEAD);
    let opt = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
    let pair = |x: Option<(f64, f64)>| (opt(x.map(|p| p.0)), opt(x.map(|p| p.1)));
    for r in c.rows.iter().filter(|r| selected(&r.metric, wanted)) {
        for (i, s) in r.summaries.iter().enumerate() {
            let Some(s) = s else { continue };
            let (lo, hi) = pair(s.ci);
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
            let Some(ch) = i.checked_sub(1).and_then(|k| r.changes[k].as_ref()) else {
                out.push_str(&",".repeat(15));
                out.push('\n');
                continue;
            };
            let (clo, chi) = pair(ch.rel_ci);
            let (blo, bhi) = pair(ch.bootstrap_ci);
            let paired = ch.paired.as_ref();
            let _ = writeln!(
                out,
                ",{},{clo},{chi},{},{},{},{},{},{},{},{blo},{bhi},{},{},{}",
                opt(ch.rel),
                opt(ch.welch.map(|w| w.p)),
                opt(ch.p_adjusted),
                opt(ch.mann_whitney.map(|m| m.p)),
                opt(paired.and_then(|p| p.t).map(|t| t.p)),
                opt(paired.and_then(|p| p.wilcoxon).map(|w| w.p)),
                opt(ch.hedges_g),
                opt(ch.hodges_lehmann),
                ch.threshold,
                ch.verdict.as_str(),
                csv(&ch.reason)
            );
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
    c.drift.retain(|d| selected(&d.metric, wanted));
    serde_json::to_string_pretty(&c).unwrap_or_default() + "\n"
}
