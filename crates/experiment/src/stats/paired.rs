//! The paired t-test: per-round differences of two variants run in the same rounds of an
//! experiment, so that what slowed a round for both (a stall, a noisy neighbour) cancels.

use super::{mean, t_quantile, t_two_sided, variance};
use serde::Serialize;

/// The paired t-test of differences b_i - a_i.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedT {
    /// Pairs.
    pub n: usize,
    /// Mean difference / its standard error.
    pub t: f64,
    /// Two-sided p-value (n - 1 degrees of freedom).
    pub p: f64,
    /// 95% confidence interval of the mean difference.
    pub diff_ci: (f64, f64),
}

/// The paired t-test of the differences `d`; `None` below two pairs or when every difference
/// is the same (no spread: no test).
pub fn paired_t(d: &[f64]) -> Option<PairedT> {
    let n = d.len();
    if n < 2 {
        return None;
    }
    let m = mean(d);
    let se = (variance(d, m) / n as f64).sqrt();
    if se == 0.0 {
        return None;
    }
    let df = (n - 1) as f64;
    let h = t_quantile(0.975, df) * se;
    Some(PairedT {
        n,
        t: m / se,
        p: t_two_sided(m / se, df),
        diff_ci: (m - h, m + h),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::close;
    use super::*;

    #[test]
    fn paired_t_of_differences() {
        // d = 1, 2, 3: mean 2, sd 1, se 1/sqrt(3), t = 3.4641, df 2: p = 0.07418 (t table).
        let p = paired_t(&[1.0, 2.0, 3.0]).unwrap();
        assert!(close(p.t, 12f64.sqrt(), 1e-12), "{}", p.t);
        assert!(close(p.p, 0.0741799002, 1e-6), "{}", p.p);
        assert!(paired_t(&[1.0]).is_none());
        assert!(paired_t(&[2.0, 2.0, 2.0]).is_none());
    }
}
