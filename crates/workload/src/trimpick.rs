//! `trim_percentage`: which logged writes fio's verify-trim later discards. fio draws once per
//! write it logs for verification from the job's trim stream and picks the write when the draw
//! is at most `percentage` hundredths of the stream's maximum (its `io_u_should_trim`).

use crate::rand::FRand;
use crate::seeds::{Seeds, Stream};

/// Picks writes for verify-trim, as fio does.
#[derive(Debug, Clone)]
pub struct TrimPicker {
    state: FRand,
    limit: u64,
}

impl TrimPicker {
    /// The picker of a job with these seeds; `use64`: random_generator=tausworthe64.
    pub fn new(seeds: &Seeds, percentage: u32, use64: bool) -> TrimPicker {
        let state = FRand::new(seeds.get(Stream::Trim), use64);
        // fio: (max / 100) * percentage, in integers.
        let limit = (state.max() / 100).saturating_mul(u64::from(percentage.min(100)));
        TrimPicker { state, limit }
    }

    /// Whether the next logged write is to be trimmed.
    pub fn pick(&mut self) -> bool {
        self.state.next() <= self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_about_the_percentage_and_is_seeded() {
        let seeds = Seeds::derive(0x89, 1, true, false);
        for (pct, lo, hi) in [(0u32, 0, 30), (50, 4_500, 5_500), (100, 10_000, 10_000)] {
            let mut p = TrimPicker::new(&seeds, pct, false);
            let n = (0..10_000).filter(|_| p.pick()).count();
            assert!((lo..=hi).contains(&n), "{pct}%: {n} of 10000");
        }
        let mut a = TrimPicker::new(&seeds, 30, false);
        let mut b = TrimPicker::new(&seeds, 30, false);
        assert!((0..100).all(|_| a.pick() == b.pick()));
    }
}
