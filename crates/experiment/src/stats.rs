//! The statistics `fiox compare` reports: a sample's summary (n, mean, standard deviation,
//! coefficient of variation, 95% confidence interval of the mean from Student's t), the
//! difference of two samples (relative change with its Welch confidence interval), Welch's
//! unequal-variance t-test and the Mann-Whitney U test (exact distribution for small samples
//! without ties, else the normal approximation with tie and continuity corrections, as scipy's
//! `mannwhitneyu(method="auto")` does). Distributions come from statrs.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

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

/// Summarise `xs` (`None` when empty).
pub fn summary(xs: &[f64]) -> Option<Summary> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let sd = if n > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
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
fn t_quantile(p: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) if df.is_finite() => t.inverse_cdf(p),
        _ => Normal::new(0.0, 1.0).map_or(1.96, |n| n.inverse_cdf(p)),
    }
}

/// Indices of outliers in `xs` by the modified z-score (Iglewicz and Hoaglin): |x - median|
/// / (1.4826 MAD) above 3.5. Needs at least 5 values; none when the MAD is 0.
pub fn outliers(xs: &[f64]) -> Vec<usize> {
    if xs.len() < 5 {
        return Vec::new();
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let m = median(&mut xs.to_vec());
    let mad = median(&mut xs.iter().map(|x| (x - m).abs()).collect());
    if mad == 0.0 {
        return Vec::new();
    }
    (0..xs.len())
        .filter(|&i| (xs[i] - m).abs() / (1.4826 * mad) > 3.5)
        .collect()
}

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

/// Welch's t-test; `None` when either side has fewer than two values.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (sa, sb) = (summary(a)?, summary(b)?);
    if sa.n < 2 || sb.n < 2 {
        return None;
    }
    let (va, vb) = (sa.sd.powi(2) / sa.n as f64, sb.sd.powi(2) / sb.n as f64);
    let diff = sb.mean - sa.mean;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // Both samples constant: equal means are no difference, different ones are certain.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Some(Welch {
            t,
            df: (sa.n + sb.n - 2) as f64,
            p,
            diff_ci: (diff, diff),
        });
    }
    let df = (va + vb).powi(2) / (va.powi(2) / (sa.n - 1) as f64 + vb.powi(2) / (sb.n - 1) as f64);
    let t = diff / se;
    let p = match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => (2.0 * (1.0 - d.cdf(t.abs()))).min(1.0),
        Err(_) => f64::NAN,
    };
    let h = t_quantile(0.975, df) * se;
    Some(Welch {
        t,
        df,
        p,
        diff_ci: (diff - h, diff + h),
    })
}

/// The Mann-Whitney U test of `a` against `b`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// U of the first sample (count of pairs where a > b, ties counting one half).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether the exact distribution was used (no ties, a side of at most 8 values, at most
    /// 10,000 pairs).
    pub exact: bool,
}

/// Mann-Whitney U; `None` when either side is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (ranks, tie_term) = ranks_of(a, b);
    let r1: f64 = ranks[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let nm = (n1 * n2) as f64;
    let u_max = u1.max(nm - u1);
    // scipy's rule (exact without ties when a side has at most 8 values), bounded so the
    // exact table stays small: beyond 10,000 pairs the normal approximation is as good.
    let exact = tie_term == 0.0 && (n1 <= 8 || n2 <= 8) && n1 * n2 <= 10_000;
    let p = if exact {
        // P(U >= u_max) from the exact null distribution, doubled for two sides.
        let counts = u_counts(n1, n2);
        let total: f64 = counts.iter().sum();
        let start = u_max.round() as usize;
        let upper: f64 = counts.iter().skip(start).sum();
        (2.0 * upper / total).min(1.0)
    } else {
        let n = (n1 + n2) as f64;
        let var = nm / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
        if var <= 0.0 {
            1.0
        } else {
            let z = (u_max - nm / 2.0 - 0.5) / var.sqrt();
            let sf = Normal::new(0.0, 1.0).map_or(f64::NAN, |d| 1.0 - d.cdf(z));
            (2.0 * sf).min(1.0)
        }
    };
    Some(MannWhitney { u: u1, p, exact })
}

/// Mid-ranks of the pooled sample (a first, then b) and the tie term sum(t^3 - t).
fn ranks_of(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && pooled[order[j + 1]] == pooled[order[i]] {
            j += 1;
        }
        // Positions i..=j share the mean of ranks i+1..=j+1.
        let rank = (i + j + 2) as f64 / 2.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        let t = (j - i + 1) as f64;
        tie_term += t.powi(3) - t;
        i = j + 1;
    }
    (ranks, tie_term)
}

/// counts[u] = number of orderings of n1 + n2 distinct values giving U = u for sample one,
/// by the recurrence c(n, m, u) = c(n - 1, m, u - m) + c(n, m - 1, u).
fn u_counts(n1: usize, n2: usize) -> Vec<f64> {
    // table[m][u] for the current n, built up from n = 0.
    let max_u = n1 * n2;
    let mut prev: Vec<Vec<f64>> = (0..=n2)
        .map(|_| {
            let mut v = vec![0.0; max_u + 1];
            v[0] = 1.0;
            v
        })
        .collect();
    for n in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
        cur[0][0] = 1.0;
        for m in 1..=n2 {
            for u in 0..=n * m {
                let from_n = if u >= m { prev[m][u - m] } else { 0.0 };
                cur[m][u] = from_n + cur[m - 1][u];
            }
        }
        prev = cur;
    }
    prev.swap_remove(n2)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from scipy 1.17.1 (numpy 2.4.6), computed outside fiox:
    //   a = [8015, 8102, 7950, 8060, 7990]; b = [8136, 8210, 8090, 8175, 8150]
    //   stats.ttest_ind(b, a, equal_var=False) (and its confidence_interval); stats.mannwhitneyu(a, b)
    //   c, d below: stats.ttest_ind(c, d, equal_var=False); stats.mannwhitneyu(c, d) (ties)
    //   stats.t.interval(0.95, 4, loc=mean, scale=stats.sem(a))
    const A: [f64; 5] = [8015.0, 8102.0, 7950.0, 8060.0, 7990.0];
    const B: [f64; 5] = [8136.0, 8210.0, 8090.0, 8175.0, 8150.0];

    fn close(x: f64, y: f64, tol: f64) -> bool {
        (x - y).abs() <= tol * y.abs().max(1e-300)
    }

    #[test]
    fn summary_matches_reference() {
        let s = summary(&A).unwrap();
        assert_eq!(s.n, 5);
        assert!(close(s.mean, REF_MEAN_A, 1e-12), "{}", s.mean);
        assert!(close(s.sd, REF_SD_A, 1e-9), "{}", s.sd);
        let (lo, hi) = s.ci.unwrap();
        assert!(close(lo, REF_CI_A.0, 1e-9), "{lo}");
        assert!(close(hi, REF_CI_A.1, 1e-9), "{hi}");
        assert!(summary(&[]).is_none());
        let one = summary(&[3.0]).unwrap();
        assert_eq!((one.sd, one.ci), (0.0, None));
    }

    #[test]
    fn outliers_by_modified_z_score() {
        // Median 11, MAD 1 (|deviations| 0,0,1,1,2,2,29): 40 has z = 29/1.4826 = 19.6.
        let xs = [10.0, 9.0, 11.0, 11.0, 9.0, 12.0, 40.0];
        assert_eq!(outliers(&xs), vec![6]);
        // Without it: median 10.5, MAD 1; 12 has z = 1.5/1.4826 = 1.01.
        assert!(outliers(&xs[..6]).is_empty());
        assert!(
            outliers(&[1.0, 100.0, 1.0, 1.0]).is_empty(),
            "too few values"
        );
    }

    #[test]
    fn welch_matches_reference() {
        let w = welch(&A, &B).unwrap();
        assert!(close(w.t, REF_WELCH_T, 1e-9), "t {}", w.t);
        assert!(close(w.df, REF_WELCH_DF, 1e-9), "df {}", w.df);
        assert!(close(w.p, REF_WELCH_P, 1e-6), "p {}", w.p);
        assert!(close(w.diff_ci.0, REF_DIFF_CI.0, 1e-6), "{:?}", w.diff_ci);
        assert!(close(w.diff_ci.1, REF_DIFF_CI.1, 1e-6), "{:?}", w.diff_ci);
        // Unequal sizes and variances.
        let w = welch(&C, &D).unwrap();
        assert!(close(w.t, REF_WELCH_CD_T, 1e-9), "t {}", w.t);
        assert!(close(w.p, REF_WELCH_CD_P, 1e-6), "p {}", w.p);
        assert!(welch(&[1.0], &B).is_none());
        assert_eq!(welch(&[2.0, 2.0], &[2.0, 2.0]).unwrap().p, 1.0);
    }

    #[test]
    fn mann_whitney_exact_matches_reference() {
        let m = mann_whitney(&A, &B).unwrap();
        assert!(m.exact);
        assert_eq!(m.u, REF_MWU_U);
        assert!(close(m.p, REF_MWU_P, 1e-9), "p {}", m.p);
        let m = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!(close(m.p, 0.1, 1e-12), "p {}", m.p);
    }

    #[test]
    fn mann_whitney_asymptotic_with_ties_matches_reference() {
        let m = mann_whitney(&C, &D).unwrap();
        assert!(!m.exact);
        assert_eq!(m.u, REF_MWU_CD_U);
        assert!(close(m.p, REF_MWU_CD_P, 1e-9), "p {}", m.p);
    }

    const C: [f64; 10] = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 6.0, 7.0, 9.0];
    const D: [f64; 12] = [
        3.0, 4.0, 5.0, 6.0, 7.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 14.0,
    ];
    const REF_MEAN_A: f64 = 8023.4;
    const REF_SD_A: f64 = 59.35318020123269;
    const REF_CI_A: (f64, f64) = (7949.703292965229, 8097.096707034771);
    const REF_WELCH_T: f64 = 3.8757224093235316;
    const REF_WELCH_DF: f64 = 7.43405419369717;
    const REF_WELCH_P: f64 = 0.005417444288932234;
    const REF_DIFF_CI: (f64, f64) = (51.13820762912755, 206.46179237087281);
    // scipy's t for (c, d) is -2.89...; fiox's sign is mean d - mean c.
    const REF_WELCH_CD_T: f64 = 2.8907419833905843;
    const REF_WELCH_CD_P: f64 = 0.009091680533281467;
    const REF_MWU_U: f64 = 1.0;
    const REF_MWU_P: f64 = 0.015873015873015872;
    const REF_MWU_CD_U: f64 = 23.0;
    const REF_MWU_CD_P: f64 = 0.015708403451832463;
}
