//! A percentile bootstrap of the relative change of two means (mean b / mean a - 1), for
//! skewed metrics such as latency percentiles whose spread over runs is far from normal. The
//! resampling is seeded (splitmix64), so the same inputs and seed give the same interval.

/// splitmix64: small, fast, and the same sequence on every platform (the simulation tests
/// draw their synthetic results from it too).
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (n > 0); the modulo bias is below 2^-50 for any sample size.
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The 95% percentile-bootstrap interval of mean(b) / mean(a) - 1 over `resamples` resamples
/// of each side (with replacement); `None` below two values a side, with fewer than 100
/// resamples, or when a resampled base mean is not positive.
pub fn bootstrap_rel_ci(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> Option<(f64, f64)> {
    if a.len() < 2 || b.len() < 2 || resamples < 100 {
        return None;
    }
    let mut rng = SplitMix(seed);
    let mut mean_of =
        |xs: &[f64]| (0..xs.len()).map(|_| xs[rng.below(xs.len())]).sum::<f64>() / xs.len() as f64;
    let mut rels = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let ma = mean_of(a);
        let mb = mean_of(b);
        if ma <= 0.0 {
            return None;
        }
        rels.push(mb / ma - 1.0);
    }
    rels.sort_by(f64::total_cmp);
    let at = |q: f64| rels[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    Some((at(0.025), at(0.975)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_change() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0, 100.0];
        let b = [110.0, 112.0, 108.0, 111.0, 109.0, 110.0];
        let x = bootstrap_rel_ci(&a, &b, 2000, 7).unwrap();
        assert_eq!(Some(x), bootstrap_rel_ci(&a, &b, 2000, 7));
        assert!(x.0 < 0.1 && x.1 > 0.1 && x.0 > 0.07 && x.1 < 0.13, "{x:?}");
        assert_ne!(Some(x), bootstrap_rel_ci(&a, &b, 2000, 8));
        assert!(bootstrap_rel_ci(&a[..1], &b, 2000, 7).is_none());
    }
}
