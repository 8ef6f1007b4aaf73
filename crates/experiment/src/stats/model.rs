//! The one model a change is tested and estimated with, so that the verdict's test and the
//! printed interval always agree (a p under 0.05 exactly when the 95% interval excludes no
//! change). Throughput and latency are multiplicative (a stall halves a run, it does not
//! subtract a constant), so the model is the log ratio:
//!
//! - runs of both sides in the same rounds (blocked): the paired t-test of the per-round log
//!   ratios ln(b_r / a_r), so that what slowed a whole round cancels;
//! - independent runs: Welch's t-test of the logs (the change is the ratio of geometric means);
//! - a value that is not positive (no log): Welch's t-test of the raw values, the change and
//!   its interval relative to the base mean.

use super::{mean, paired_t, t_quantile, variance, welch};
use serde::Serialize;

/// Which model a change was tested with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// Paired t-test of per-round log ratios.
    PairedLog,
    /// Welch's t-test of the logs of independent runs.
    WelchLog,
    /// Welch's t-test of the raw values (some value not positive).
    WelchRaw,
}

impl Power {
    /// "±4%" while both directions round alike, else "-89%/+787%"; an increase of 1000% or
    /// more as a factor ("-97%/x37"), which keeps the column narrow, and past a hundredfold
    /// ">x100" (two runs a side after the family's adjustment can find only absurd factors,
    /// which are not worth their digits).
    pub fn text(&self) -> String {
        let (down, up) = (self.mde_down * 100.0, self.mde * 100.0);
        if format!("{down:.0}") == format!("{up:.0}") {
            format!("±{up:.0}%")
        } else if self.mde.is_nan() || 1.0 + self.mde >= 100.0 {
            format!("-{down:.0}%/>x100")
        } else if up >= 999.5 {
            format!("-{down:.0}%/x{:.0}", 1.0 + self.mde)
        } else {
            format!("-{down:.0}%/+{up:.0}%")
        }
    }
}

impl Model {
    /// How the text names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Model::PairedLog => "paired t of log ratios",
            Model::WelchLog => "Welch t of logs",
            Model::WelchRaw => "Welch t",
        }
    }
}

/// A change's test and estimate under its model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Test {
    pub model: Model,
    /// Estimate on the model's scale: mean log ratio, or the difference of the means.
    pub estimate: f64,
    /// Its standard error.
    pub se: f64,
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value (unadjusted).
    pub p: f64,
    /// The relative change (b over a, minus 1) and its 95% confidence interval.
    pub rel: f64,
    pub rel_ci: (f64, f64),
    /// The spread of one run (or of one round's log ratio) on the model's scale, for the
    /// runs an experiment needs: the per-side standard deviations (equal for paired).
    pub unit_sd: (f64, f64),
    /// Base mean on the model's scale's denominator (1 for log models).
    pub scale: f64,
}

fn logs(xs: &[f64]) -> Option<Vec<f64>> {
    xs.iter().map(|x| (*x > 0.0).then(|| x.ln())).collect()
}

fn sd(xs: &[f64]) -> f64 {
    variance(xs, mean(xs)).sqrt()
}

/// Welch's t-test of ln b against ln a; `None` when a value is not positive, below two
/// values a side, or without spread.
pub fn welch_log(a: &[f64], b: &[f64]) -> Option<Test> {
    let (la, lb) = (logs(a)?, logs(b)?);
    let w = welch(&la, &lb)?;
    let est = mean(&lb) - mean(&la);
    Some(Test {
        model: Model::WelchLog,
        estimate: est,
        se: (variance(&la, mean(&la)) / la.len() as f64
            + variance(&lb, mean(&lb)) / lb.len() as f64)
            .sqrt(),
        t: w.t,
        df: w.df,
        p: w.p,
        rel: est.exp() - 1.0,
        rel_ci: (w.diff_ci.0.exp() - 1.0, w.diff_ci.1.exp() - 1.0),
        unit_sd: (sd(&la), sd(&lb)),
        scale: 1.0,
    })
}

/// The paired t-test of per-round log ratios ln(b / a) of `pairs` (a, b); `None` when a value
/// is not positive, below two pairs, or when every ratio is the same.
pub fn paired_log(pairs: &[(f64, f64)]) -> Option<Test> {
    let d: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| (*a > 0.0 && *b > 0.0).then(|| (b / a).ln()))
        .collect::<Option<_>>()?;
    let p = paired_t(&d)?;
    let est = mean(&d);
    let s = sd(&d);
    Some(Test {
        model: Model::PairedLog,
        estimate: est,
        se: s / (d.len() as f64).sqrt(),
        t: p.t,
        df: (d.len() - 1) as f64,
        p: p.p,
        rel: est.exp() - 1.0,
        rel_ci: (p.diff_ci.0.exp() - 1.0, p.diff_ci.1.exp() - 1.0),
        unit_sd: (s, s),
        scale: 1.0,
    })
}

/// Welch's t-test of the raw values, the change relative to the base mean; `None` when the
/// base mean is not positive, below two values a side, or without spread.
pub fn welch_raw(a: &[f64], b: &[f64]) -> Option<Test> {
    let w = welch(a, b)?;
    let ma = mean(a);
    if ma <= 0.0 {
        return None;
    }
    let est = mean(b) - ma;
    Some(Test {
        model: Model::WelchRaw,
        estimate: est,
        se: (variance(a, ma) / a.len() as f64 + variance(b, mean(b)) / b.len() as f64).sqrt(),
        t: w.t,
        df: w.df,
        p: w.p,
        rel: est / ma,
        rel_ci: (w.diff_ci.0 / ma, w.diff_ci.1 / ma),
        unit_sd: (sd(a), sd(b)),
        scale: ma,
    })
}

/// The power of an experiment: the smallest change it could have found, and the runs a side
/// it needs to find a change of the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Power {
    /// The relative change this test finds 80% of the time at its noise, n and the level
    /// each test of the family gets (alpha over the family's size: Holm's first step, so a
    /// bound on what the step-down can need).
    pub mde: f64,
    /// The same as a decrease (1 - exp(-m) on log models: a factor either way; `mde` on the
    /// raw one).
    pub mde_down: f64,
    /// Runs (rounds, when paired) a side for 80% power against a change of the threshold at
    /// that level; `None` when more than [`RUNS_CAP`] would be needed.
    pub runs_needed: Option<usize>,
}

/// Beyond this many runs a side an experiment is not the answer: a quieter machine or a
/// metric with less noise is.
pub const RUNS_CAP: usize = 200;

/// The power wanted: the chance of finding a real change of the given size.
pub const POWER: f64 = 0.8;

/// The change `t` could find with 80% power at two-sided level `level`, as a relative change
/// (an increase: exp(m) - 1 on log models, m / base mean on the raw one); and the runs a side
/// needed for `threshold`.
pub fn power(t: &Test, level: f64, threshold: f64) -> Power {
    let m = (t_quantile(1.0 - level / 2.0, t.df) + t_quantile(POWER, t.df)) * t.se;
    let (mde, mde_down) = match t.model {
        Model::WelchRaw => (m / t.scale, m / t.scale),
        _ => (m.exp() - 1.0, 1.0 - (-m).exp()),
    };
    Power {
        mde,
        mde_down,
        runs_needed: runs_needed(t, level, threshold),
    }
}

/// The runs a side needed: the smallest n with (t(1 - level/2, df) + t(power, df)) se(n) <=
/// delta, where se(n) is the standard error at n runs a side with this test's per-run spread
/// (paired: s / sqrt(n), df n - 1; Welch: sqrt((s_a^2 + s_b^2) / n), df 2n - 2).
fn runs_needed(t: &Test, level: f64, threshold: f64) -> Option<usize> {
    let delta = match t.model {
        Model::WelchRaw => threshold * t.scale,
        _ => (1.0 + threshold).ln(),
    };
    if delta <= 0.0 {
        return None;
    }
    let var = match t.model {
        Model::PairedLog => t.unit_sd.0.powi(2),
        _ => t.unit_sd.0.powi(2) + t.unit_sd.1.powi(2),
    };
    let df = |n: usize| match t.model {
        Model::PairedLog => (n - 1) as f64,
        _ => (2 * n - 2) as f64,
    };
    let enough = |n: usize| {
        let q = t_quantile(1.0 - level / 2.0, df(n)) + t_quantile(POWER, df(n));
        q * (var / n as f64).sqrt() <= delta
    };
    // Bisection: `enough` only turns true as n grows.
    if !enough(RUNS_CAP) {
        return None;
    }
    let (mut lo, mut hi) = (1, RUNS_CAP);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if enough(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::super::tests::close;
    use super::*;

    #[test]
    fn power_text_stays_readable() {
        let p = |mde_down: f64, mde: f64| {
            Power {
                mde,
                mde_down,
                runs_needed: None,
            }
            .text()
        };
        assert_eq!(p(0.04, 0.04), "±4%");
        assert_eq!(p(0.89, 7.87), "-89%/+787%");
        assert_eq!(p(0.97, 36.0), "-97%/x37");
        // Two rounds after a family's adjustment: no 30-digit factors.
        assert_eq!(p(1.0, 1.66e25), "-100%/>x100");
        assert_eq!(p(1.0, f64::INFINITY), "-100%/>x100");
    }

    #[test]
    fn the_test_and_the_interval_agree() {
        // A p under 0.05 exactly when the 95% interval excludes 0, on every model.
        let a = [100.0, 130.0, 90.0, 160.0, 110.0];
        for b in [
            [80.0, 95.0, 70.0, 120.0, 85.0],
            [99.0, 140.0, 80.0, 150.0, 100.0],
            [60.0, 70.0, 65.0, 80.0, 62.0],
        ] {
            let pairs: Vec<(f64, f64)> = a.iter().copied().zip(b).collect();
            for t in [welch_log(&a, &b), paired_log(&pairs), welch_raw(&a, &b)] {
                let t = t.unwrap();
                let excludes = t.rel_ci.0 > 0.0 || t.rel_ci.1 < 0.0;
                assert_eq!(t.p < 0.05, excludes, "{t:?}");
                assert!(t.rel_ci.0 < t.rel && t.rel < t.rel_ci.1, "{t:?}");
            }
        }
    }

    #[test]
    fn logs_need_positive_values() {
        assert!(welch_log(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0]).is_none());
        assert!(paired_log(&[(1.0, 0.0), (2.0, 1.0)]).is_none());
        assert!(welch_raw(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0]).is_some());
        // Every round the same ratio: no spread, no test.
        assert!(paired_log(&[(1.0, 2.0), (3.0, 6.0), (5.0, 10.0)]).is_none());
    }

    #[test]
    fn power_shrinks_with_noise_and_is_capped() {
        let quiet = paired_log(&[(100.0, 80.0), (50.0, 41.0), (200.0, 159.0), (90.0, 73.0)]);
        let quiet = quiet.unwrap();
        let p = power(&quiet, 0.05, 0.02);
        assert!(p.mde > 0.0 && p.mde < 0.2, "{p:?}");
        let n = p.runs_needed.unwrap();
        assert!((2..RUNS_CAP).contains(&n), "{p:?}");
        // A stricter level (a bigger family) needs more.
        let strict = power(&quiet, 0.001, 0.02);
        assert!(
            strict.mde > p.mde && strict.runs_needed.unwrap() > n,
            "{strict:?}"
        );
        // 50% noise against a 2% threshold: beyond any sane experiment.
        let noisy = welch_log(&[100.0, 200.0, 50.0], &[150.0, 60.0, 120.0]).unwrap();
        let pw = power(&noisy, 0.05, 0.02);
        assert_eq!(pw.runs_needed, None);
        // On the log scale a large detectable change is a factor either way.
        assert!(pw.mde_down < 1.0 && pw.mde > pw.mde_down, "{pw:?}");
        assert!((1.0 + pw.mde) * (1.0 - pw.mde_down) - 1.0 < 1e-12);
        assert!(
            pw.text().starts_with('-') && pw.text().contains("%/+"),
            "{}",
            pw.text()
        );
    }

    #[test]
    fn welch_log_is_welch_of_the_logs() {
        let (a, b) = ([1.0, 2.0, 4.0], [2.0, 4.0, 8.0]);
        let t = welch_log(&a, &b).unwrap();
        assert!(close(t.estimate, 2f64.ln(), 1e-12) && close(t.rel, 1.0, 1e-12));
        assert!(close(t.t, 2f64.ln() / t.se, 1e-12));
    }
}
