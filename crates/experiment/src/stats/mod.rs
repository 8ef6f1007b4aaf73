//! The statistics `fiox compare` reports. This file owns a sample's summary (n, mean, standard
//! deviation, coefficient of variation, 95% confidence interval of the mean from Student's t)
//! and the outlier check; the tests live in submodules:
//!
//! - `twosample`: Welch's unequal-variance t-test, the relative change on a ratio scale (CI of
//!   the log ratio of the means, delta method), Hedges' g and the Hodges-Lehmann shift;
//! - `rank`: Mann-Whitney U (exact without ties for small samples, else normal with tie and
//!   continuity corrections, as scipy's `mannwhitneyu(method="auto")`) and the Wilcoxon
//!   signed-rank test of paired differences;
//! - `paired`: the paired t-test of per-round differences;
//! - `model`: the model a change is tested and estimated with (paired t of per-round log
//!   ratios, Welch of logs, Welch of raw values) and its power;
//! - `trend`: Kendall's tau of the values against run order (drift);
//! - `friedman`: Friedman's test of rounds within blocks (a round effect across jobs);
//! - `adjust`: Holm and Benjamini-Hochberg adjusted p-values over a family of tests;
//! - `bootstrap`: a seeded percentile bootstrap of the relative change of two means.
//!
//! Distributions come from statrs.

mod adjust;
mod bootstrap;
mod friedman;
mod model;
mod paired;
mod rank;
mod trend;
mod twosample;

pub use adjust::{adjust, Adjust};
pub use bootstrap::{bootstrap_rel_ci, SplitMix};
pub use friedman::{friedman, Friedman};
pub use model::{paired_log, power, welch_log, welch_raw, Model, Power, Test, RUNS_CAP};
pub use paired::{paired_t, PairedT};
pub use rank::{mann_whitney, mann_whitney_floor, wilcoxon, wilcoxon_floor, MannWhitney, Wilcoxon};
pub use trend::{kendall_trend, Trend};
pub use twosample::{hedges_g, hodges_lehmann, ratio_ci, welch, Welch};

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal, StudentsT};

/// Summary of one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for one value.
    pub sd: f64,
    /// sd / mean (0 when the mean is 0).
    pub cv: f64,
    /// 95% confidence interval of the mean; `None` below two values.
    pub ci: Option<(f64, f64)>,
    pub min: f64,
    pub max: f64,
}

/// The mean of `xs` (non-empty) computed as the first value plus the mean deviation from it, so
/// that identical values give exactly that value and an sd of exactly 0 (a plain sum of five
/// 37.12s is not five times 37.12 in floating point).
pub(crate) fn mean(xs: &[f64]) -> f64 {
    let x0 = xs[0];
    x0 + xs.iter().map(|x| x - x0).sum::<f64>() / xs.len() as f64
}

/// Sample variance (n - 1 in the denominator) around `m`; 0 below two values.
pub(crate) fn variance(xs: &[f64], m: f64) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Summarise `xs` (`None` when empty).
pub fn summary(xs: &[f64]) -> Option<Summary> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = mean(xs);
    let sd = variance(xs, mean).sqrt();
    let ci = (n > 1).then(|| {
        let h = t_quantile(0.975, (n - 1) as f64) * sd / (n as f64).sqrt();
        (mean - h, mean + h)
    });
    Some(Summary {
        n,
        mean,
        sd,
        cv: if mean != 0.0 { sd / mean.abs() } else { 0.0 },
        ci,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The quantile `p` of Student's t with `df` degrees of freedom (normal for huge df).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) if df.is_finite() => t.inverse_cdf(p),
        _ => Normal::new(0.0, 1.0).map_or(1.96, |n| n.inverse_cdf(p)),
    }
}

/// Two-sided p-value of `t` under Student's t with `df` degrees of freedom.
pub(crate) fn t_two_sided(t: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => (2.0 * d.sf(t.abs())).min(1.0),
        Err(_) => f64::NAN,
    }
}

/// P(X > x) under chi-square with `df` degrees of freedom.
pub(crate) fn chi2_sf(x: f64, df: f64) -> f64 {
    ChiSquared::new(df).map_or(f64::NAN, |d| d.sf(x))
}

/// Two-sided p-value of `z` under the standard normal.
pub(crate) fn z_two_sided(z: f64) -> f64 {
    (2.0 * normal_sf(z.abs())).min(1.0)
}

/// P(Z > z) under the standard normal.
pub(crate) fn normal_sf(z: f64) -> f64 {
    Normal::new(0.0, 1.0).map_or(f64::NAN, |d| d.sf(z))
}

/// The median of `v` (sorted in place); `v` must not be empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Indices of outliers in `xs` by the modified z-score (Iglewicz and Hoaglin): |x - median|
/// / (1.4826 MAD) above 3.5. Needs at least 3 values. When over half the values are equal
/// (quantised IOPS: a stall among identical runs) the MAD is 0, and the score falls back to
/// the mean absolute deviation, |x - median| / (1.2533 meanAD), as IBM's SPSS does; then a
/// value is only an outlier when it is also more than 1% away from the median, so that one
/// count of difference among identical runs is not called a stall.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    if xs.len() < 3 {
        return Vec::new();
    }
    let m = median(&mut xs.to_vec());
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    let mad = median(&mut dev.clone());
    let (scale, floor) = if mad > 0.0 {
        (1.4826 * mad, 0.0)
    } else {
        let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
        (1.2533 * mean_ad, 0.01 * m.abs())
    };
    if scale == 0.0 {
        return Vec::new();
    }
    (0..xs.len())
        .filter(|&i| dev[i] / scale > 3.5 && dev[i] > floor)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from scipy 1.17.1 (numpy 2.4.6), computed outside fiox:
    //   a = [8015, 8102, 7950, 8060, 7990]
    //   stats.t.interval(0.95, 4, loc=mean, scale=stats.sem(a))
    pub(crate) const A: [f64; 5] = [8015.0, 8102.0, 7950.0, 8060.0, 7990.0];
    pub(crate) const B: [f64; 5] = [8136.0, 8210.0, 8090.0, 8175.0, 8150.0];

    pub(crate) fn close(x: f64, y: f64, tol: f64) -> bool {
        (x - y).abs() <= tol * y.abs().max(1e-300)
    }

    #[test]
    fn summary_matches_reference() {
        let s = summary(&A).unwrap();
        assert_eq!(s.n, 5);
        assert!(close(s.mean, 8023.4, 1e-12), "{}", s.mean);
        assert!(close(s.sd, 59.35318020123269, 1e-9), "{}", s.sd);
        let (lo, hi) = s.ci.unwrap();
        assert!(close(lo, 7949.703292965229, 1e-9), "{lo}");
        assert!(close(hi, 8097.096707034771, 1e-9), "{hi}");
        assert!(summary(&[]).is_none());
        let one = summary(&[3.0]).unwrap();
        assert_eq!((one.sd, one.ci), (0.0, None));
    }

    #[test]
    fn identical_values_have_exactly_their_mean_and_no_spread() {
        let s = summary(&[37.12; 5]).unwrap();
        assert_eq!((s.mean, s.sd), (37.12, 0.0));
        let s = summary(&[0.1, 0.1, 0.1]).unwrap();
        assert_eq!((s.mean, s.sd), (0.1, 0.0));
    }

    #[test]
    fn outliers_by_modified_z_score() {
        // Median 11, MAD 1 (|deviations| 0,0,1,1,2,2,29): 40 has z = 29/1.4826 = 19.6.
        let xs = [10.0, 9.0, 11.0, 11.0, 9.0, 12.0, 40.0];
        assert_eq!(outliers(&xs), vec![6]);
        // Without it: median 10.5, MAD 1; 12 has z = 1.5/1.4826 = 1.01.
        assert!(outliers(&xs[..6]).is_empty());
        assert!(outliers(&[1.0, 100.0]).is_empty(), "too few values");
        // From three: a stall among steady runs (the seeds' 3 runs a side).
        assert_eq!(outliers(&[2000.0, 2010.0, 1000.0]), [2]);
    }

    #[test]
    fn a_stall_among_identical_runs_is_an_outlier() {
        // The report's e10_06: MAD 0; meanAD 148, z = 740 / (1.2533 * 148) = 3.99.
        assert_eq!(outliers(&[1987.0, 1987.0, 1247.0, 1987.0, 1987.0]), [2]);
        // One count off among identical runs is quantisation, not a stall.
        assert!(outliers(&[1987.0, 1987.0, 1986.0, 1987.0, 1987.0]).is_empty());
        assert!(outliers(&[5.0; 6]).is_empty());
    }
}
