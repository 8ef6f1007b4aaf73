//! Drift over run order: Kendall's tau between each run's position and its value, with the
//! p-value scipy's `kendalltau(range(n), values)` gives (exact without ties for up to 33 runs,
//! else the normal approximation with the tie correction). A small p says the values climb or
//! fall over the experiment (a filling device, a warming cache, a neighbour starting up).

use super::z_two_sided;
use serde::Serialize;

/// Kendall's trend test of a sample in run order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    /// Kendall's tau-b: +1 rising with every run, -1 falling.
    pub tau: f64,
    /// Two-sided p-value.
    pub p: f64,
    pub exact: bool,
}

/// The trend test of `xs` (in run order); `None` below three values or when all are equal.
pub fn kendall_trend(xs: &[f64]) -> Option<Trend> {
    let n = xs.len();
    if n < 3 {
        return None;
    }
    let (mut con, mut dis) = (0usize, 0usize);
    for i in 0..n {
        for j in i + 1..n {
            if xs[j] > xs[i] {
                con += 1;
            } else if xs[j] < xs[i] {
                dis += 1;
            }
        }
    }
    let ties = tie_sizes(xs);
    let tot = n * (n - 1) / 2;
    let ytie: usize = ties.iter().map(|t| t * (t - 1) / 2).sum();
    if ytie == tot {
        return None;
    }
    let tau = (con as f64 - dis as f64) / ((tot * (tot - ytie)) as f64).sqrt();
    let c = dis.min(tot - dis);
    let exact = ytie == 0 && (n <= 33 || c <= 1);
    let p = if exact {
        exact_p(n, c)
    } else {
        let m = (n * (n - 1)) as f64;
        let y1: f64 = ties
            .iter()
            .map(|&t| (t * (t - 1) * (2 * t + 5)) as f64)
            .sum();
        let var = (m * (2 * n + 5) as f64 - y1) / 18.0;
        z_two_sided((con as f64 - dis as f64) / var.sqrt())
    };
    Some(Trend { tau, p, exact })
}

/// Sizes of the groups of equal values (groups of one left out).
fn tie_sizes(xs: &[f64]) -> Vec<usize> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let j = v[i..].iter().take_while(|x| **x == v[i]).count();
        if j > 1 {
            out.push(j);
        }
        i += j;
    }
    out
}

/// 2 P(at most `c` inversions) over the n! orderings, as scipy's `_kendall_p_exact`.
fn exact_p(n: usize, c: usize) -> f64 {
    if n <= 2 {
        return 1.0;
    }
    if 4 * c == n * (n - 1) {
        return 1.0;
    }
    // counts[k] = orderings of j items with k inversions (Mahonian numbers), k <= c.
    let mut counts = vec![0.0f64; c + 1];
    counts[0] = 1.0;
    let mut factorial = 1.0f64;
    for j in 2..=n {
        factorial *= j as f64;
        let mut next = vec![0.0f64; c + 1];
        let mut window = 0.0;
        for k in 0..=c {
            window += counts[k];
            if k >= j {
                window -= counts[k - j];
            }
            next[k] = window;
        }
        counts = next;
    }
    (2.0 * counts.iter().sum::<f64>() / factorial).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_climb_is_a_trend() {
        // The report's lat200 base: 302, 327, 402, 437, 551 µs rise with every run:
        // tau 1, p = 2 / 5! = 0.0167.
        let t = kendall_trend(&[302.0, 327.0, 402.0, 437.0, 551.0]).unwrap();
        assert_eq!(t.tau, 1.0);
        assert!((t.p - 2.0 / 120.0).abs() < 1e-12, "{t:?}");
        assert!(t.exact);
        // One inversion: P(<= 1) = (1 + 4) / 120, doubled.
        let t = kendall_trend(&[2.0, 1.0, 3.0, 4.0, 5.0]).unwrap();
        assert!((t.p - 10.0 / 120.0).abs() < 1e-12, "{t:?}");
        assert!(kendall_trend(&[1.0, 1.0, 1.0]).is_none());
        assert!(kendall_trend(&[1.0, 2.0]).is_none());
        let t = kendall_trend(&[1.0, 1.0, 2.0, 2.0, 3.0]).unwrap();
        assert!(!t.exact && t.p < 0.2, "{t:?}");
    }
}
