//! Multiplicity: adjusted p-values over a family of tests (every row of one comparison), so
//! that a verdict at level alpha keeps its meaning when a comparison has dozens of rows.
//! Holm's step-down method bounds the chance of any false claim (family-wise error) by alpha
//! under any dependence; Benjamini-Hochberg bounds the expected share of false claims among
//! the claims (false discovery rate) by alpha for independent or positively dependent tests.

use serde::Serialize;

/// How p-values are adjusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Adjust {
    /// Holm (family-wise error rate).
    #[default]
    Holm,
    /// Benjamini-Hochberg (false discovery rate).
    Bh,
    /// None: each row at its own level.
    None,
}

impl Adjust {
    /// What the adjustment controls, for the output's header.
    pub fn controls(self) -> &'static str {
        match self {
            Adjust::Holm => "family-wise error rate (Holm)",
            Adjust::Bh => "false discovery rate (Benjamini-Hochberg)",
            Adjust::None => "nothing: each row is tested on its own",
        }
    }
}

/// The adjusted p-values of `ps`, in the same order (NaNs count as 1).
pub fn adjust(ps: &[f64], how: Adjust) -> Vec<f64> {
    let m = ps.len();
    let p = |i: usize| if ps[i].is_nan() { 1.0 } else { ps[i] };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p(i).total_cmp(&p(j)));
    let mut out = vec![1.0; m];
    match how {
        Adjust::None => return (0..m).map(p).collect(),
        Adjust::Holm => {
            let mut run = 0.0f64;
            for (k, &i) in order.iter().enumerate() {
                run = run.max(((m - k) as f64 * p(i)).min(1.0));
                out[i] = run;
            }
        }
        Adjust::Bh => {
            let mut run = 1.0f64;
            for (k, &i) in order.iter().enumerate().rev() {
                run = run.min((m as f64 / (k + 1) as f64 * p(i)).min(1.0));
                out[i] = run;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_and_bh_by_hand() {
        let ps = [0.01, 0.04, 0.03, 0.005];
        // Holm: sorted 0.005*4, 0.01*3, 0.03*2, 0.04*1 -> 0.02, 0.03, 0.06, 0.06 (monotone).
        let h = adjust(&ps, Adjust::Holm);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (x, y) in h.iter().zip(want) {
            assert!((x - y).abs() < 1e-12, "{h:?}");
        }
        // BH: 0.005*4/1, 0.01*4/2, 0.03*4/3, 0.04*4/4 -> 0.02, 0.02, 0.04, 0.04.
        let b = adjust(&ps, Adjust::Bh);
        let want = [0.02, 0.04, 0.04, 0.02];
        for (x, y) in b.iter().zip(want) {
            assert!((x - y).abs() < 1e-12, "{b:?}");
        }
        assert_eq!(adjust(&[f64::NAN], Adjust::Holm), [1.0]);
        assert!(adjust(&[], Adjust::Bh).is_empty());
    }
}
