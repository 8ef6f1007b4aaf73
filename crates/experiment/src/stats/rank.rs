//! Rank tests: Mann-Whitney U of two independent samples, and the Wilcoxon signed-rank test of
//! paired differences. Both choose their method as scipy 1.17 does with `method="auto"`, so
//! the reference test can compare them value for value.

use super::normal_sf;
use serde::Serialize;

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
            (2.0 * normal_sf(z)).min(1.0)
        }
    };
    Some(MannWhitney { u: u1, p, exact })
}

/// Mid-ranks of the pooled sample (a first, then b) and the tie term sum(t^3 - t).
fn ranks_of(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    mid_ranks(&pooled)
}

/// Mid-ranks (1-based; ties share the mean of their ranks) of `xs` and the tie term
/// sum(t^3 - t) over groups of t equal values.
pub(super) fn mid_ranks(xs: &[f64]) -> (Vec<f64>, f64) {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&i, &j| xs[i].total_cmp(&xs[j]));
    let mut ranks = vec![0.0; xs.len()];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && xs[order[j + 1]] == xs[order[i]] {
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

/// The Wilcoxon signed-rank test of paired differences `d` (zeros dropped, Wilcoxon's rule).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Wilcoxon {
    /// min(R+, R-), scipy's two-sided statistic.
    pub w: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Non-zero differences ranked.
    pub n: usize,
    /// Whether the p-value is exact (every sign pattern counted) rather than normal.
    pub exact: bool,
}

/// The smallest two-sided p Mann-Whitney can give with `n1` and `n2` values (exact, no ties):
/// 2 / C(n1 + n2, n1). At 3 a side it is 0.1, so there it can never agree with a significant
/// t-test, and a disagreement says nothing.
pub fn mann_whitney_floor(n1: usize, n2: usize) -> f64 {
    // C(n1 + n2, n1) as a running product (exact enough in f64 for any n here).
    let c = (1..=n1).fold(1.0, |c, i| c * (n2 + i) as f64 / i as f64);
    (2.0 / c).min(1.0)
}

/// The smallest two-sided p the signed-rank test can give with `n` pairs: 2 / 2^n (0.0625 at
/// five pairs: it cannot reach 0.05 below six).
pub fn wilcoxon_floor(n: usize) -> f64 {
    (2.0 / 2f64.powi(n.min(1000) as i32)).min(1.0)
}

/// Wilcoxon's signed-rank test; `None` when no difference is non-zero. As scipy's
/// `wilcoxon(d)` (method "auto"): exact for up to 50 differences without ties or zeros, the
/// full sign-flip distribution for up to 13 with them, else the normal approximation with
/// the tie correction and no continuity correction.
pub fn wilcoxon(d: &[f64]) -> Option<Wilcoxon> {
    let nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return None;
    }
    let abs: Vec<f64> = nz.iter().map(|x| x.abs()).collect();
    let (ranks, tie_term) = ranks_of(&abs, &[]);
    let r_plus: f64 = (0..n).filter(|&i| nz[i] > 0.0).map(|i| ranks[i]).sum();
    let total = (n * (n + 1)) as f64 / 2.0;
    let w = r_plus.min(total - r_plus);
    let irregular = tie_term > 0.0 || nz.len() < d.len();
    let exact = if irregular { d.len() <= 13 } else { n <= 50 };
    let p = if exact {
        sign_flip_p(&ranks, r_plus)
    } else {
        let mn = total / 2.0;
        let se = ((n * (n + 1) * (2 * n + 1)) as f64 - tie_term / 2.0) / 24.0;
        (2.0 * normal_sf((r_plus - mn).abs() / se.sqrt())).min(1.0)
    };
    Some(Wilcoxon { w, p, n, exact })
}

/// Two-sided p of the rank sum `r_plus` over all 2^n sign patterns of `ranks` (mid-ranks are
/// halves at most, so doubled ranks are integers and the distribution a count table).
fn sign_flip_p(ranks: &[f64], r_plus: f64) -> f64 {
    let twice: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
    let max: usize = twice.iter().sum();
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    for &r in &twice {
        for s in (r..=max).rev() {
            counts[s] += counts[s - r];
        }
    }
    let all: f64 = counts.iter().sum();
    let obs = (r_plus * 2.0).round() as usize;
    let upper: f64 = counts[obs.min(max)..].iter().sum();
    let lower: f64 = counts[..=obs.min(max)].iter().sum();
    (2.0 * upper.min(lower) / all).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{close, A, B};
    use super::super::twosample::tests::{C, D};
    use super::*;

    // scipy 1.17.1: stats.mannwhitneyu(a, b), stats.mannwhitneyu(c, d) (ties: asymptotic).
    #[test]
    fn mann_whitney_exact_matches_reference() {
        let m = mann_whitney(&A, &B).unwrap();
        assert!(m.exact);
        assert_eq!(m.u, 1.0);
        assert!(close(m.p, 0.015873015873015872, 1e-9), "p {}", m.p);
        let m = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!(close(m.p, 0.1, 1e-12), "p {}", m.p);
    }

    #[test]
    fn mann_whitney_asymptotic_with_ties_matches_reference() {
        let m = mann_whitney(&C, &D).unwrap();
        assert!(!m.exact);
        assert_eq!(m.u, 23.0);
        assert!(close(m.p, 0.015708403451832463, 1e-9), "p {}", m.p);
    }

    #[test]
    fn wilcoxon_counts_every_sign_pattern() {
        // Five positive differences: R+ = 15, P(R+ = 15) = 1/32, two-sided 1/16.
        let w = wilcoxon(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!((w.w, w.n, w.exact), (0.0, 5, true));
        assert!(close(w.p, 0.0625, 1e-12), "{}", w.p);
        assert!(wilcoxon(&[0.0, 0.0]).is_none());
        let w = wilcoxon(&[1.0, -1.0, 2.0, 0.0]).unwrap();
        assert!(w.exact && w.p > 0.5, "{w:?}");
    }
}
