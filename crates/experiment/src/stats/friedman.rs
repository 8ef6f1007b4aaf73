//! Friedman's test: do k treatments differ, judged within blocks? Here the treatments are an
//! experiment's rounds and the blocks its (side, job) samples, so one test asks whether some
//! rounds ran faster or slower for every job (a machine whose load came and went), where a
//! trend test per sample needed hundreds of tests that small samples can never pass.

use super::chi2_sf;
use super::rank::mid_ranks;
use serde::Serialize;

/// Friedman's chi-square test of `blocks`, each holding one value per treatment (all the same
/// length k).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Friedman {
    /// Blocks.
    pub n: usize,
    /// Treatments.
    pub k: usize,
    /// The tie-corrected statistic, chi-square with k - 1 degrees of freedom.
    pub chi2: f64,
    pub p: f64,
}

/// As scipy's `friedmanchisquare(*treatments)`; `None` below two blocks or three treatments,
/// for blocks of unequal length, or when every block is constant.
pub fn friedman(blocks: &[Vec<f64>]) -> Option<Friedman> {
    let n = blocks.len();
    let k = blocks.first()?.len();
    if n < 2 || k < 3 || blocks.iter().any(|b| b.len() != k) {
        return None;
    }
    let mut sums = vec![0.0; k];
    let mut ties = 0.0;
    for b in blocks {
        let (r, t) = mid_ranks(b);
        ties += t;
        for (s, x) in sums.iter_mut().zip(r) {
            *s += x;
        }
    }
    let (nf, kf) = (n as f64, k as f64);
    let c = 1.0 - ties / (nf * kf * (kf * kf - 1.0));
    if c <= 0.0 {
        return None;
    }
    let ssq: f64 = sums.iter().map(|s| s * s).sum();
    let chi2 = (12.0 / (nf * kf * (kf + 1.0)) * ssq - 3.0 * nf * (kf + 1.0)) / c;
    Some(Friedman {
        n,
        k,
        chi2,
        p: chi2_sf(chi2, kf - 1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_that_move_every_block_are_found() {
        // scipy.stats.friedmanchisquare([1, 2, 3], [2, 3, 4], [3, 4, 5]) over blocks
        // (1,2,3), (2,3,4), (3,4,5) as treatments: every block ranks them 1, 2, 3.
        let blocks = vec![
            vec![1.0, 2.0, 3.0],
            vec![2.0, 3.0, 4.0],
            vec![3.0, 4.0, 5.0],
        ];
        let f = friedman(&blocks).unwrap();
        assert!((f.chi2 - 6.0).abs() < 1e-12, "{f:?}");
        assert!((f.p - (-3.0f64).exp()).abs() < 1e-12, "{f:?}");
        assert!(friedman(&[vec![1.0, 2.0, 3.0]]).is_none());
        assert!(friedman(&[vec![1.0; 3], vec![2.0; 3]]).is_none());
    }
}
