//! Two independent samples: Welch's unequal-variance t-test, the relative change of the means
//! with a confidence interval on the ratio scale, and two effect sizes (Hedges' g, the
//! Hodges-Lehmann shift).

use super::{mean, median, summary, t_quantile, t_two_sided, variance};
use serde::Serialize;

/// Welch's two-sample t-test of `b` against `a`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Welch {
    /// (mean b - mean a) / standard error.
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// 95% confidence interval of mean b - mean a.
    pub diff_ci: (f64, f64),
}

/// Welch-Satterthwaite degrees of freedom of two variance components `va` and `vb` (each a
/// variance over its n) with `na` and `nb` values.
fn satterthwaite(va: f64, vb: f64, na: usize, nb: usize) -> f64 {
    (va + vb).powi(2) / (va.powi(2) / (na - 1) as f64 + vb.powi(2) / (nb - 1) as f64)
}

/// Welch's t-test; `None` when either side has fewer than two values or both are constant
/// (then no test is possible: a zero standard error makes any difference look certain).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (sa, sb) = (summary(a)?, summary(b)?);
    if sa.n < 2 || sb.n < 2 {
        return None;
    }
    let (va, vb) = (sa.sd.powi(2) / sa.n as f64, sb.sd.powi(2) / sb.n as f64);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        return None;
    }
    let diff = sb.mean - sa.mean;
    let df = satterthwaite(va, vb, sa.n, sb.n);
    let t = diff / se;
    let h = t_quantile(0.975, df) * se;
    Some(Welch {
        t,
        df,
        p: t_two_sided(t, df),
        diff_ci: (diff - h, diff + h),
    })
}

/// The `level` confidence interval of mean b / mean a - 1 (the relative change), computed on
/// the log scale: log(mean b / mean a) has the delta-method variance cv_a^2 / n_a + cv_b^2 /
/// n_b with Welch-Satterthwaite degrees of freedom; the interval is exponentiated back, so it
/// never reaches below -100% and is not symmetric around the estimate. `None` below two
/// values a side, for a mean that is not positive, or when both sides are constant.
pub fn ratio_ci(a: &[f64], b: &[f64], level: f64) -> Option<(f64, f64)> {
    let (sa, sb) = (summary(a)?, summary(b)?);
    if sa.n < 2 || sb.n < 2 || sa.mean <= 0.0 || sb.mean <= 0.0 {
        return None;
    }
    let va = (sa.sd / sa.mean).powi(2) / sa.n as f64;
    let vb = (sb.sd / sb.mean).powi(2) / sb.n as f64;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        return None;
    }
    let df = satterthwaite(va, vb, sa.n, sb.n);
    let h = t_quantile(0.5 + level / 2.0, df) * se;
    let l = (sb.mean / sa.mean).ln();
    Some(((l - h).exp() - 1.0, (l + h).exp() - 1.0))
}

/// Hedges' g: the difference of the means (b - a) over the pooled standard deviation, times
/// the small-sample correction 1 - 3 / (4 (n_a + n_b) - 9). `None` below two values a side
/// or without spread.
pub fn hedges_g(a: &[f64], b: &[f64]) -> Option<f64> {
    let (na, nb) = (a.len(), b.len());
    if na < 2 || nb < 2 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let pooled = ((na - 1) as f64 * variance(a, ma) + (nb - 1) as f64 * variance(b, mb))
        / (na + nb - 2) as f64;
    if pooled <= 0.0 {
        return None;
    }
    let j = 1.0 - 3.0 / (4.0 * (na + nb) as f64 - 9.0);
    Some((mb - ma) / pooled.sqrt() * j)
}

/// The Hodges-Lehmann shift: the median of all differences b_j - a_i (`None` when a side is
/// empty). Robust to a stalled run, unlike the difference of the means.
pub fn hodges_lehmann(a: &[f64], b: &[f64]) -> Option<f64> {
    let mut d: Vec<f64> = b
        .iter()
        .flat_map(|y| a.iter().map(move |x| y - x))
        .collect();
    (!d.is_empty()).then(|| median(&mut d))
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::tests::{close, A, B};
    use super::*;

    // scipy 1.17.1: stats.ttest_ind(b, a, equal_var=False) and its confidence_interval();
    // c, d: stats.ttest_ind(d, c, equal_var=False).
    pub(crate) const C: [f64; 10] = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 6.0, 7.0, 9.0];
    pub(crate) const D: [f64; 12] = [
        3.0, 4.0, 5.0, 6.0, 7.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 14.0,
    ];

    #[test]
    fn welch_matches_reference() {
        let w = welch(&A, &B).unwrap();
        assert!(close(w.t, 3.8757224093235316, 1e-9), "t {}", w.t);
        assert!(close(w.df, 7.43405419369717, 1e-9), "df {}", w.df);
        assert!(close(w.p, 0.005417444288932234, 1e-6), "p {}", w.p);
        assert!(
            close(w.diff_ci.0, 51.13820762912755, 1e-6),
            "{:?}",
            w.diff_ci
        );
        assert!(
            close(w.diff_ci.1, 206.46179237087281, 1e-6),
            "{:?}",
            w.diff_ci
        );
        let w = welch(&C, &D).unwrap();
        assert!(close(w.t, 2.8907419833905843, 1e-9), "t {}", w.t);
        assert!(close(w.p, 0.009091680533281467, 1e-6), "p {}", w.p);
        assert!(welch(&[1.0], &B).is_none());
    }

    #[test]
    fn constant_sides_have_no_test() {
        assert!(welch(&[2.0, 2.0], &[2.0, 2.0]).is_none());
        assert!(welch(&[2001.0; 3], &[2002.0; 3]).is_none());
        assert!(ratio_ci(&[2001.0; 3], &[2002.0; 3], 0.95).is_none());
        assert!(hedges_g(&[2001.0; 3], &[2002.0; 3]).is_none());
    }

    #[test]
    fn ratio_ci_never_goes_below_minus_100_percent() {
        // The report's D8: the old interval was [-315.5%, +139.5%].
        let (lo, hi) = ratio_ci(&[100.0, 400.0, 1000.0], &[50.0, 60.0, 70.0], 0.95).unwrap();
        assert!(lo > -1.0 && lo < -0.88 && hi > 0.0, "[{lo}, {hi}]");
        assert!(ratio_ci(&[0.0, 0.0, 1.0], &[1.0, 2.0], 0.95).is_some());
        assert!(ratio_ci(&[-1.0, 0.0, 0.5], &[1.0, 2.0], 0.95).is_none());
    }

    #[test]
    fn effect_sizes() {
        // Variances 3522.8 and 1999.2, difference of the means 128.8; J = 1 - 3/31.
        let g = hedges_g(&A, &B).unwrap();
        let want = 128.8 / 2761.0f64.sqrt() * (1.0 - 3.0 / 31.0);
        assert!(close(g, want, 1e-9), "{g} vs {want}");
        assert_eq!(hodges_lehmann(&[1.0, 2.0], &[4.0, 6.0]), Some(3.5));
        assert_eq!(hodges_lehmann(&[], &[4.0]), None);
    }
}
