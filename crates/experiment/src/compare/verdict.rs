//! The verdict of one change, and the practical threshold it is judged against. Four answers
//! a reader can act on, each with its reason:
//!
//! - better / worse ("different" for telemetry, which has no good direction): the adjusted
//!   p-value is under alpha and the change is at least the threshold;
//! - equivalent: the confidence interval of the change lies inside ±threshold;
//! - inconclusive: neither (the interval is too wide, or a significant change is smaller than
//!   the threshold without the interval showing it);
//! - no claim: no test is possible (under two values on a side, both sides constant, a base
//!   mean that is not positive).

use super::Change;
use crate::load::higher_is_better;
use crate::stats::Summary;
use serde::Serialize;

/// What a change amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    #[serde(rename = "better")]
    Better,
    #[serde(rename = "worse")]
    Worse,
    /// Significant and beyond the threshold on a metric with no better direction.
    #[serde(rename = "different")]
    Different,
    #[serde(rename = "equivalent")]
    Equivalent,
    #[serde(rename = "inconclusive")]
    Inconclusive,
    #[serde(rename = "no claim")]
    NoClaim,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Different => "different",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NoClaim => "no claim",
        }
    }

    /// Whether the verdict claims a difference.
    pub fn is_claim(self) -> bool {
        matches!(self, Verdict::Better | Verdict::Worse | Verdict::Different)
    }
}

/// The practical threshold: relative changes smaller than this are not claimed (criterion's
/// noise threshold); a default and per-metric overrides (suffix match, as `--metric`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    pub default: f64,
    pub per_metric: Vec<(String, f64)>,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            default: 0.02,
            per_metric: Vec::new(),
        }
    }
}

impl Thresholds {
    /// Parse `--threshold`'s list: `2%`, `0.02`, `lat_p99_us=10%` (comma-separated).
    pub fn parse(list: &[String]) -> Result<Thresholds, String> {
        let mut t = Thresholds::default();
        for item in list {
            let (metric, value) = match item.split_once('=') {
                Some((m, v)) => (Some(m.trim()), v),
                None => (None, item.as_str()),
            };
            let v = value.trim();
            let x = match v.strip_suffix('%') {
                Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
                None => v.parse::<f64>(),
            }
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0 && *x < 1.0)
            .ok_or_else(|| {
                format!("--threshold {item}: expected a share like 2% or 0.02 (0 to under 100%)")
            })?;
            match metric {
                Some(m) if !m.is_empty() => t.per_metric.push((m.to_string(), x)),
                Some(_) => return Err(format!("--threshold {item}: no metric before '='")),
                None => t.default = x,
            }
        }
        Ok(t)
    }

    /// The threshold of `metric` (the last matching override wins).
    pub fn of(&self, metric: &str) -> f64 {
        self.per_metric
            .iter()
            .rev()
            .find(|(m, _)| super::selected(metric, std::slice::from_ref(m)))
            .map_or(self.default, |(_, x)| *x)
    }
}

/// What the verdict is judged on besides the change itself.
pub struct Judge<'a> {
    pub base: &'a Summary,
    pub other: &'a Summary,
    pub metric: &'a str,
    pub alpha: f64,
    pub method: &'a str,
}

impl Judge<'_> {
    fn method_family(&self) -> String {
        match self.method {
            "not" => "tests (not adjusted)".into(),
            m => format!("tests ({m})"),
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// The verdict of `ch` and why.
pub fn decide(ch: &Change, j: &Judge) -> (Verdict, String) {
    let (a, b) = (j.base, j.other);
    let th = ch.threshold;
    if a.n < 2 || b.n < 2 {
        let why = format!("n = {} and {}: a test needs two values a side", a.n, b.n);
        return (Verdict::NoClaim, why);
    }
    if a.sd == 0.0 && b.sd == 0.0 {
        return constant_sides(a, b, j.metric, th);
    }
    let (Some(rel), Some(p), Some(t)) = (ch.rel, ch.p_adjusted, ch.test) else {
        return (
            Verdict::NoClaim,
            "the base mean is not positive: no relative change".into(),
        );
    };
    let ci = ch.rel_ci;
    let ci_text = ci.map_or("-".into(), |(lo, hi)| format!("[{}, {}]", pct(lo), pct(hi)));
    let p_text = p_vs(p, j.alpha);
    if p < j.alpha && rel.abs() >= th {
        let v = match higher_is_better(j.metric) {
            None => Verdict::Different,
            Some(up) if up == (rel > 0.0) => Verdict::Better,
            Some(_) => Verdict::Worse,
        };
        let why = format!(
            "{} (CI {ci_text}), {} p {p_text} ({} adjusted) < {}, beyond ±{:.1}%",
            pct(rel),
            t.model.as_str(),
            j.method,
            j.alpha,
            th * 100.0
        );
        return (v, why);
    }
    if let Some((lo, hi)) = ci.filter(|(lo, hi)| *lo > -th && *hi < th) {
        let why = format!("CI [{}, {}] inside ±{:.1}%", pct(lo), pct(hi), th * 100.0);
        return (Verdict::Equivalent, why);
    }
    if p < j.alpha {
        let why = format!(
            "significant (p {p_text}) but {} is within ±{:.1}% and the CI {ci_text} is not",
            pct(rel),
            th * 100.0
        );
        return (Verdict::Inconclusive, why);
    }
    if let Some((lo, hi)) = ci.filter(|(lo, hi)| *lo >= th || *hi <= -th) {
        let why = format!(
            "CI [{}, {}] lies beyond ±{:.1}%, but p {p_text} adjusted over the comparison's {} \
             is not under {}{}",
            pct(lo),
            pct(hi),
            th * 100.0,
            j.method_family(),
            j.alpha,
            power_text(ch, th)
        );
        return (Verdict::Inconclusive, why);
    }
    let why = match ci {
        Some((lo, hi)) => format!(
            "CI [{}, {}] too wide to tell against ±{:.1}%{}",
            pct(lo),
            pct(hi),
            th * 100.0,
            power_text(ch, th)
        ),
        None => format!(
            "p not under alpha and no CI to compare with ±{:.1}%",
            th * 100.0
        ),
    };
    (Verdict::Inconclusive, why)
}

/// Both sides gave one value in every run. With at least [`EXACT_N`] runs a side and a change
/// beyond the threshold, the difference is exact (a rate limit holding, a setting that
/// changed): there is no spread for a test, and none is needed, so it is claimed without a
/// p-value (it takes no part in the family's adjustment: no noise can have made it). Fewer
/// runs, or a change inside the threshold (a quantised count one step apart), claim nothing.
fn constant_sides(a: &Summary, b: &Summary, metric: &str, th: f64) -> (Verdict, String) {
    if a.mean == b.mean {
        let why = format!("every value on both sides is {}: nothing to test", a.mean);
        return (Verdict::NoClaim, why);
    }
    let rel = (a.mean > 0.0).then(|| b.mean / a.mean - 1.0);
    match rel {
        Some(rel) if a.n >= EXACT_N && b.n >= EXACT_N && rel.abs() >= th => {
            let v = match higher_is_better(metric) {
                None => Verdict::Different,
                Some(up) if up == (rel > 0.0) => Verdict::Better,
                Some(_) => Verdict::Worse,
            };
            let why = format!(
                "{} exactly: every run gave the same value on each side ({} vs {}, n = {} \
                 and {}), so the change is not noise (no spread to test, none needed), beyond \
                 ±{:.1}%",
                pct(rel),
                a.mean,
                b.mean,
                a.n,
                b.n,
                th * 100.0
            );
            (v, why)
        }
        _ => {
            let why = format!(
                "each side is constant ({} vs {}): with no spread no test is possible, and an \
                 exact change is claimed only beyond ±{:.1}% with {EXACT_N} runs a side \
                 (quantised values: judge a finer metric)",
                a.mean,
                b.mean,
                th * 100.0
            );
            (Verdict::NoClaim, why)
        }
    }
}

/// Runs a side from which sides that never vary are read as exact (two equal runs may be
/// chance; three in a row of a measured rate are not).
pub const EXACT_N: usize = 3;

/// What this experiment could find and what it would take to find the threshold.
fn power_text(ch: &Change, th: f64) -> String {
    let Some(pw) = ch.power else {
        return String::new();
    };
    let runs = if ch.paired.is_some() {
        "rounds"
    } else {
        "runs a side"
    };
    let need = match pw.runs_needed {
        Some(n) => format!("about {n} {runs} would find ±{:.1}%", th * 100.0),
        None => format!(
            "more than {} {runs} would be needed for ±{:.1}%: a quieter machine or a steadier \
             metric",
            crate::stats::RUNS_CAP,
            th * 100.0
        ),
    };
    format!(
        "; this experiment could find about {} (80% power at its noise, n and level); {need}",
        pw.text()
    )
}

/// "= 0.012", "< 0.001", or as many digits as it takes not to round across `alpha`
/// ("= 0.0497", never "= 0.050" for a p under 0.05).
pub(crate) fn p_vs(p: f64, alpha: f64) -> String {
    if p < 0.001 {
        return "< 0.001".into();
    }
    for digits in 3..=6 {
        let shown = format!("{p:.digits$}");
        let x: f64 = shown.parse().unwrap_or(p);
        if (x < alpha) == (p < alpha) && (x != alpha || p == alpha) {
            return format!("= {shown}");
        }
    }
    format!("= {p}")
}

/// When the verdict's test and its rank check (Wilcoxon of the per-round log ratios when
/// paired, else Mann-Whitney) disagree at `alpha` (unadjusted), a note saying so: one
/// stalled run moves a mean far more than the ranks. Only where the check can reach
/// `alpha` at all: at three runs a side Mann-Whitney's smallest p is 0.1, at five rounds
/// Wilcoxon's 0.0625, and a "disagreement" there is arithmetic, not evidence.
pub fn disagreement(ch: &Change, na: usize, nb: usize, alpha: f64) -> Option<String> {
    let t = ch.test?;
    let (name, p, floor) = match (&ch.paired, t.model) {
        (Some(pr), crate::stats::Model::PairedLog) => {
            let w = pr.wilcoxon?;
            ("Wilcoxon", w.p, crate::stats::wilcoxon_floor(w.n))
        }
        _ => (
            "Mann-Whitney",
            ch.mann_whitney?.p,
            crate::stats::mann_whitney_floor(na, nb),
        ),
    };
    (floor < alpha && (t.p < alpha) != (p < alpha)).then(|| {
        format!(
            "; {} p {} and {name} p {} disagree: a skewed sample or a stalled run?",
            t.model.as_str(),
            p_vs(t.p, alpha),
            p_vs(p, alpha)
        )
    })
}

pub(crate) fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_with_overrides() {
        let t =
            Thresholds::parse(&["3%".into(), "lat_p99_us=10%".into(), "iops=0.01".into()]).unwrap();
        assert_eq!(t.default, 0.03);
        assert_eq!(t.of("read.lat_p99_us"), 0.1);
        assert_eq!(t.of("read.iops"), 0.01);
        assert_eq!(t.of("read.bw_mib"), 0.03);
        assert!(Thresholds::parse(&["x".into()]).is_err());
        assert!(Thresholds::parse(&["150%".into()]).is_err());
        assert!(Thresholds::parse(&["=1%".into()]).is_err());
        assert_eq!(Thresholds::default().default, 0.02);
    }
}
