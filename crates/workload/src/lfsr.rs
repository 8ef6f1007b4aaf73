//! `random_generator=lfsr`: a maximal-length linear feedback shift register over the block
//! numbers of a file. It visits every block exactly once per period without any map, so it
//! needs no memory and never collides. Tap positions are the standard maximal-length table
//! (Xilinx XAPP052), the same polynomials fio uses, so the block order matches fio's.

/// Tap positions per register width (index = width in bits); widths below 3 do not exist.
const TAPS: [&[u8]; 64] = [
    &[],
    &[],
    &[],
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

#[derive(Debug, Clone)]
pub(crate) struct Lfsr {
    xormask: u64,
    top_bit: u64,
    max_val: u64,
    last_val: u64,
    num_vals: u64,
    /// fio's first draw steps the register twice (its spin bookkeeping starts one cycle early);
    /// later draws step once.
    first: bool,
}

/// Why an LFSR cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LfsrError {
    /// More than 2^63 blocks.
    TooLarge,
    /// The seed maps onto the register's forbidden all-ones state.
    BadSeed,
}

impl Lfsr {
    /// A register producing each of `0..nums` once per period, started from `seed`.
    pub(crate) fn new(nums: u64, seed: u64) -> Result<Lfsr, LfsrError> {
        // The all-ones state is forbidden, so the register must be strictly wider than needed.
        let width = (3..64)
            .find(|&i| (1u64 << i) > nums)
            .ok_or(LfsrError::TooLarge)?;
        let taps = TAPS[width];
        let xormask = taps.iter().fold(0u64, |m, &t| m | 1u64 << (t - 1));
        let mut l = Lfsr {
            xormask,
            top_bit: 1u64 << (taps[0] - 1),
            max_val: nums.saturating_sub(1),
            last_val: 0,
            num_vals: 0,
            first: true,
        };
        l.reset(seed)?;
        Ok(l)
    }

    pub(crate) fn reset(&mut self, seed: u64) -> Result<(), LfsrError> {
        let mask = (self.top_bit << 1) - 1;
        self.num_vals = 0;
        self.first = true;
        self.last_val = seed & mask;
        if self.last_val == mask {
            return Err(LfsrError::BadSeed);
        }
        Ok(())
    }

    #[inline]
    fn step(&mut self) {
        let v = self.last_val;
        self.last_val = ((v >> 1) | self.top_bit) ^ ((v & 1).wrapping_sub(1) & self.xormask);
    }

    /// Next block number, or None once every block of the period was produced.
    #[inline]
    pub(crate) fn next(&mut self) -> Option<u64> {
        let n = self.num_vals;
        self.num_vals += 1;
        if n > self.max_val {
            return None;
        }
        loop {
            if self.first {
                self.first = false;
                self.step();
            }
            self.step();
            if self.last_val <= self.max_val {
                return Some(self.last_val);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_period_visits_each_value_once() {
        for nums in [5u64, 64, 1000, 4097] {
            let mut l = Lfsr::new(nums, 0xb189_9bed).unwrap();
            let mut seen = vec![false; nums as usize];
            for _ in 0..nums {
                let v = l.next().unwrap();
                assert!(!seen[v as usize], "{v} repeated for nums={nums}");
                seen[v as usize] = true;
            }
            assert!(l.next().is_none());
        }
    }

    #[test]
    fn all_ones_seed_is_rejected() {
        assert_eq!(Lfsr::new(5, 7).unwrap_err(), LfsrError::BadSeed);
    }
}
