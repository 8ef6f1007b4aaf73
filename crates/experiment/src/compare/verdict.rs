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
        let why = if a.mean == b.mean {
            format!("every value on both sides is {}: nothing to test", a.mean)
        } else {
            format!(
                "each side is constant ({} vs {}): with no spread no test is possible \
                 (quantised values: judge a finer metric)",
                a.mean, b.mean
            )
        };
        return (Verdict::NoClaim, why);
    }
    let (Some(rel), Some(p)) = (ch.rel, ch.p_adjusted) else {
        return (
            Verdict::NoClaim,
            "the base mean is not positive: no relative change".into(),
        );
    };
    let ci = ch.rel_ci;
    let ci_text = ci.map_or("-".into(), |(lo, hi)| format!("[{}, {}]", pct(lo), pct(hi)));
    if p < j.alpha && rel.abs() >= th {
        let v = match higher_is_better(j.metric) {
            None => Verdict::Different,
            Some(up) if up == (rel > 0.0) => Verdict::Better,
            Some(_) => Verdict::Worse,
        };
        let why = format!(
            "{} (CI {ci_text}), p {} ({} adjusted) < {}, beyond ±{:.1}%",
            pct(rel),
            p_is(p),
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
            "significant (p {}) but {} is within ±{:.1}% and the CI {ci_text} is not",
            p_is(p),
            pct(rel),
            th * 100.0
        );
        return (Verdict::Inconclusive, why);
    }
    if let Some((lo, hi)) = ci.filter(|(lo, hi)| *lo >= th || *hi <= -th) {
        let why = format!(
            "CI [{}, {}] lies beyond ±{:.1}%, but p = {} adjusted over the comparison's tests \
             is not under {}: more runs, or fewer metrics (--metric), would tell",
            pct(lo),
            pct(hi),
            th * 100.0,
            fmt_p(p),
            j.alpha
        );
        return (Verdict::Inconclusive, why);
    }
    (Verdict::Inconclusive, too_wide(ci, a.n.min(b.n), th))
}

/// Why an interval says nothing, and about how many runs per side would narrow it to the
/// threshold (the half-width shrinks with the square root of n).
fn too_wide(ci: Option<(f64, f64)>, n: usize, th: f64) -> String {
    let Some((lo, hi)) = ci else {
        return format!(
            "p not under alpha and no CI to compare with ±{:.1}%",
            th * 100.0
        );
    };
    let half = (hi - lo) / 2.0;
    let mut why = format!(
        "CI [{}, {}] too wide to tell against ±{:.1}%",
        pct(lo),
        pct(hi),
        th * 100.0
    );
    if th > 0.0 {
        let need = (n as f64 * (half / th).powi(2)).ceil();
        if need.is_finite() && need > n as f64 && need < 1e6 {
            why.push_str(&format!(": about {need} runs a side would tell"));
        }
    }
    why
}

/// "= 0.012" or "< 0.001".
fn p_is(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("= {p:.3}")
    }
}

/// When Welch's test and Mann-Whitney's disagree at `alpha` (unadjusted), a note saying so:
/// one stalled run moves a mean far more than the ranks.
pub fn disagreement(ch: &Change, alpha: f64) -> Option<String> {
    let (w, m) = (ch.welch?.p, ch.mann_whitney?.p);
    ((w < alpha) != (m < alpha)).then(|| {
        format!(
            "; Welch p {} and Mann-Whitney p {} disagree: a skewed sample or a stalled run?",
            p_is(w),
            p_is(m)
        )
    })
}

/// The paired analysis, when the sides ran in the same rounds, as a note (unadjusted p).
pub fn paired_note(ch: &Change) -> Option<String> {
    let pr = ch.paired.as_ref()?;
    let t = pr.t.map_or("-".into(), |t| p_is(t.p));
    let w = pr.wilcoxon.map_or("-".into(), |w| p_is(w.p));
    Some(format!(
        "; paired by round ({} pairs, unadjusted): t p {t}, Wilcoxon p {w}",
        pr.n
    ))
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
