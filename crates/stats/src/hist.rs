//! Log-linear histogram of nanosecond values.
//!
//! Values below 2^SUB_BITS are counted exactly; above, each power-of-two range is split into
//! 2^SUB_BITS equal buckets, so a bucket's width is at most 1/128 of its lower bound — the same
//! relative error bound as fio's histogram, but over the whole u64 range (fio stops near 17 s).
//! Memory is fixed: (64 - SUB_BITS + 1) * 2^SUB_BITS counters, allocated lazily.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const NBUCKETS: usize = ((64 - SUB_BITS + 1) as usize) * SUB as usize;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

/// Bucket index of a value.
fn index(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = e - SUB_BITS;
    let sub = (v >> shift) & (SUB - 1);
    ((e - SUB_BITS + 1) as usize) * SUB as usize + sub as usize
}

/// Lowest value that falls in bucket `i`.
fn lower(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let group = i / SUB; // >= 1
    let sub = i % SUB;
    let e = group + SUB_BITS as u64 - 1;
    let shift = e - SUB_BITS as u64;
    (1u64 << e) | (sub << shift)
}

/// Representative value of bucket `i` (its midpoint; exact for small values).
fn mid(i: usize) -> u64 {
    let lo = lower(i);
    if (i as u64) < SUB {
        return lo;
    }
    let hi = if i + 1 < NBUCKETS {
        lower(i + 1) - 1
    } else {
        u64::MAX
    };
    lo + (hi - lo) / 2
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; NBUCKETS];
        }
        self.counts[index(v)] += 1;
        self.total += 1;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.total == 0 {
            return;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; NBUCKETS];
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += *b;
        }
        self.total += other.total;
    }

    /// Value at percentile `p` (0..=100): the representative value of the bucket holding the
    /// sample of rank ceil(p/100 * N). 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return mid(i);
            }
        }
        mid(NBUCKETS - 1)
    }

    /// Non-empty buckets as (representative value, count), ascending (json+ `bins`).
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (mid(i), c))
    }

    /// Forget all samples (ramp_time end), keeping the allocation.
    pub fn reset(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.total = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_lower_agree() {
        for v in [
            0u64,
            1,
            127,
            128,
            129,
            255,
            256,
            1000,
            123_456,
            17_000_000_000,
            u64::MAX,
        ] {
            let i = index(v);
            assert!(lower(i) <= v, "v={v}");
            if i + 1 < NBUCKETS {
                assert!(lower(i + 1) > v, "v={v}");
            }
        }
    }

    #[test]
    fn relative_error_bounded() {
        let mut v = 1u64;
        while v < u64::MAX / 3 {
            let m = mid(index(v));
            let err = (m as f64 - v as f64).abs() / v as f64;
            assert!(err <= 1.0 / 128.0, "v={v} m={m} err={err}");
            v = v * 3 + 1;
        }
    }

    #[test]
    fn percentiles_of_uniform() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p50 = h.percentile(50.0) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.01, "{p50}");
        assert_eq!(h.count(), 1000);
    }
}
