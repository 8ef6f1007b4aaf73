//! A comparison as text (one block per metric, shaped like seed 002's tables), markdown, CSV
//! (long form, one line per job, metric and side) or JSON. Every format shows the same rows,
//! those of the comparison's family (the I/O error rows only when a side had errors), and
//! carries n per side, the adjusted p-value, what the experiment could have found, the
//! verdict and its reason.

use super::verdict::fmt_p;
use super::{fmt_num, trunc, Change, Comparison, Noisy, Row};
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

/// The general warnings and the noise and drift warnings.
fn warnings_of(c: &Comparison) -> impl Iterator<Item = String> + '_ {
    c.warnings
        .iter()
        .cloned()
        .chain(c.noisy.iter().map(Noisy::text))
        .chain(
            c.round_effect
                .iter()
                .filter(|e| e.significant)
                .map(|e| e.text()),
        )
}

/// The rows shown: every row of the comparison, the error counts only where a side had
/// errors (without errors they have no test, so the family is the same).
fn shown(c: &Comparison) -> impl Iterator<Item = &Row> {
    let errors = has_errors(c);
    c.rows
        .iter()
        .filter(move |r| r.metric != "errors" || errors)
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
         ±{:.1}%; tests and 95% CIs on the log ratio (paired by round when the runs share \
         rounds, else Welch); \"could find\": the change found 80% of the time at this noise, \
         n and level",
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
        let _ = write!(s, " [{},{}]", ci_bound(lo), ci_bound(hi));
    }
    s
}

/// A CI bound in percent for the text table: past +999% as a factor (">x10"), so that a wild
/// interval keeps the row within 120 columns (JSON and CSV keep the numbers).
fn ci_bound(x: f64) -> String {
    if x * 100.0 > 999.0 {
        let f = 1.0 + x;
        if f.is_finite() && f < 100.0 {
            format!("x{f:.0}")
        } else {
            ">x100".into()
        }
    } else {
        format!("{:+.1}", x * 100.0)
    }
}

fn p_or_dash(p: Option<f64>) -> String {
    p.map_or("-".into(), fmt_p)
}

/// What the experiment could find ("±12%") and the runs it needs for the threshold.
fn power_cells(c: &Change) -> (String, String) {
    match c.power {
        Some(pw) => (
            pw.text(),
            pw.runs_needed
                .map_or(format!(">{}", crate::stats::RUNS_CAP), |n| n.to_string()),
        ),
        None => ("-".into(), "-".into()),
    }
}

/// The text table: one block per metric, one line per job (mean, stddev and n per side, then
/// each further side's change, adjusted p, power and verdict) fitting 120 columns for two sides,
/// each verdict's reason on the lines below its row. The raw p is in the other formats.
pub fn to_text(c: &Comparison) -> String {
    let mut out = String::new();
    let sides: Vec<String> = c
        .sides
        .iter()
        .zip(&c.runs)
        .map(|(s, n)| format!("{s} ({n} runs)"))
        .collect();
    let _ = writeln!(out, "sides: {}", sides.join(", "));
    wrap_into(&mut out, "", &rule(c));
    let metrics: BTreeSet<&str> = shown(c).map(|r| r.metric.as_str()).collect();
    for metric in metrics {
        text_block(&mut out, c, metric);
    }
    for w in warnings_of(c) {
        wrap_into(&mut out, "", &format!("warning: {w}"));
    }
    out
}

/// The width the text format keeps to.
const TEXT_WIDTH: usize = 120;

/// `text` on lines of at most [`TEXT_WIDTH`] columns, each starting with `indent`, broken at
/// spaces (greedily, as `fiox --help` wraps its entries in fiox-job's help.rs; a word longer
/// than a line stands on its own).
fn wrap_into(out: &mut String, indent: &str, text: &str) {
    let width = TEXT_WIDTH.saturating_sub(indent.len()).max(40);
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
}

fn text_block(out: &mut String, c: &Comparison, metric: &str) {
    let _ = writeln!(out, "\n{metric}");
    let mut head = format!("{:<16}", "test");
    for s in &c.sides {
        let _ = write!(head, " {:>9} {:>8} {:>2}", trunc(s, 9), "stddev", "n");
    }
    for (s, b) in c.sides.get(1..).unwrap_or_default().iter().zip(&c.bases) {
        let _ = write!(
            head,
            "  {:<20} {:>6} {:>10} {:>4} verdict",
            format!("{} vs {}", trunc(s, 9), trunc(b, 9)),
            "p adj",
            "finds",
            format!("n@{:.0}%", c.threshold * 100.0),
        );
    }
    let _ = writeln!(out, "{}", head.trim_end());
    for r in shown(c).filter(|r| r.metric == metric) {
        let mut line = format!("{:<16}", trunc(&r.job, 16));
        for s in &r.summaries {
            match s {
                Some(s) => write!(
                    line,
                    " {:>9} {:>8} {:>2}",
                    fmt_num(s.mean),
                    fmt_num(s.sd),
                    s.n
                ),
                None => write!(line, " {:>9} {:>8} {:>2}", "-", "-", 0),
            }
            .ok();
        }
        let mut reasons = Vec::new();
        for ch in &r.changes {
            let (finds, need) = ch.as_ref().map(power_cells).unwrap_or_default();
            match ch {
                Some(ch) => {
                    write!(
                        line,
                        "  {:<20} {:>6} {:>10} {:>4} {}",
                        fmt_change(ch),
                        p_or_dash(ch.p_adjusted),
                        finds,
                        need,
                        ch.verdict.as_str(),
                    )
                    .ok();
                    reasons.push(format!("{}: {}", ch.verdict.as_str(), ch.reason));
                }
                None => write!(line, "  {:<20}", "-").unwrap_or(()),
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
        for reason in reasons {
            wrap_into(out, "    ", &reason);
        }
    }
}

/// A markdown table: job, metric, mean ± sd (n) per side, change, p-values, verdict, reason.
pub fn to_markdown(c: &Comparison) -> String {
    let mut out = String::from("| test | metric |");
    for (s, n) in c.sides.iter().zip(&c.runs) {
        let _ = write!(out, " {s} ({n} runs) |");
    }
    for (s, b) in c.sides.get(1..).unwrap_or_default().iter().zip(&c.bases) {
        let _ = write!(
            out,
            " {s} vs {b} | p | p adj | could find | runs for ±{:.0}% | verdict |",
            c.threshold * 100.0
        );
    }
    out.push_str("\n|---|---|");
    for _ in 0..c.sides.len() + 6 * c.sides.len().saturating_sub(1) {
        out.push_str("---:|");
    }
    out.push('\n');
    for r in shown(c) {
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
            let (finds, need) = ch.as_ref().map(power_cells).unwrap_or_default();
            match ch {
                Some(ch) => write!(
                    out,
                    " {} | {} | {} | {finds} | {need} | {}: {} |",
                    fmt_change(ch),
                    p_or_dash(ch.test.map(|t| t.p)),
                    p_or_dash(ch.p_adjusted),
                    ch.verdict.as_str(),
                    ch.reason.replace('|', "/")
                ),
                None => write!(out, " - | - | - | - | - | - |"),
            }
            .ok();
        }
        out.push('\n');
    }
    let _ = writeln!(out, "\n{}", rule(c));
    let warnings: Vec<String> = warnings_of(c).collect();
    if !warnings.is_empty() {
        out.push_str("\nWarnings:\n\n");
        for w in warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
    out
}

const CSV_HEAD: &str = "job,metric,side,n,mean,sd,cv,ci_low,ci_high,base,change,change_ci_low,\
change_ci_high,test,p,p_adjusted,could_find,runs_needed,p_welch_raw,p_mann_whitney,p_paired_t,\
p_wilcoxon,hedges_g,hodges_lehmann,bootstrap_ci_low,bootstrap_ci_high,threshold,verdict,\
reason\n";

/// CSV in long form: one line per job, metric and side.
pub fn to_csv(c: &Comparison) -> String {
    let mut out = String::from(CSV_HEAD);
    let opt = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
    let pair = |x: Option<(f64, f64)>| (opt(x.map(|p| p.0)), opt(x.map(|p| p.1)));
    for r in shown(c) {
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
                out.push_str(&",".repeat(20));
                out.push('\n');
                continue;
            };
            let (clo, chi) = pair(ch.rel_ci);
            let (blo, bhi) = pair(ch.bootstrap_ci);
            let paired = ch.paired.as_ref();
            let _ = writeln!(
                out,
                ",{},{},{clo},{chi},{},{},{},{},{},{},{},{},{},{},{},{blo},{bhi},{},{},{}",
                csv(&c.bases[i - 1]),
                opt(ch.rel),
                ch.test.map_or("", |t| t.model.as_str()),
                opt(ch.test.map(|t| t.p)),
                opt(ch.p_adjusted),
                opt(ch.power.map(|p| p.mde)),
                ch.power
                    .and_then(|p| p.runs_needed)
                    .map_or(String::new(), |n| n.to_string()),
                opt(ch.welch.map(|w| w.p)),
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

/// The comparison as pretty JSON (the same rows as every format).
pub fn to_json(c: &Comparison) -> String {
    let mut c = c.clone();
    let errors = has_errors(&c);
    c.rows.retain(|r| r.metric != "errors" || errors);
    serde_json::to_string_pretty(&c).unwrap_or_default() + "\n"
}
