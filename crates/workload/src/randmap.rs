//! The random map: one bit per minimum-size block of a file, recording which blocks a pass has
//! already touched, so a random pass visits every block exactly once (fio's `axmap`). Bounded
//! memory (1 bit per block plus 1/64 for the summary levels) and O(1) amortised search for the
//! next free block: each summary level has one bit per word of the level below, set when that
//! word is full, so a search skips 64, 4096, 262144 ... full blocks at a time.

#[derive(Debug, Clone)]
pub(crate) struct RandomMap {
    nr_bits: u64,
    /// `levels[0]` holds the block bits; `levels[k + 1]` bit `j` = word `j` of `levels[k]` full.
    levels: Vec<Vec<u64>>,
}

impl RandomMap {
    /// A map of `nr_bits` blocks, or None when the memory for it cannot be had (fio's
    /// failed axmap_new: the job fails, or runs without a map with `softrandommap`).
    pub(crate) fn try_new(nr_bits: u64) -> Option<Self> {
        let mut levels = Vec::new();
        let mut words = nr_bits.div_ceil(64).max(1);
        loop {
            let n = usize::try_from(words).ok()?;
            let mut level: Vec<u64> = Vec::new();
            level.try_reserve_exact(n).ok()?;
            level.resize(n, 0);
            levels.push(level);
            if words == 1 {
                break;
            }
            words = words.div_ceil(64);
        }
        Some(RandomMap { nr_bits, levels })
    }

    #[cfg(test)]
    pub(crate) fn new(nr_bits: u64) -> Self {
        let mut levels = Vec::new();
        let mut words = nr_bits.div_ceil(64).max(1);
        loop {
            levels.push(vec![0u64; words as usize]);
            if words == 1 {
                break;
            }
            words = words.div_ceil(64);
        }
        RandomMap { nr_bits, levels }
    }

    pub(crate) fn reset(&mut self) {
        for l in &mut self.levels {
            l.fill(0);
        }
    }

    /// Capacity in bits of the bottom level (bits past `nr_bits` in the last word can be set by
    /// an I/O that overhangs the end, as in fio, but are never returned as free).
    #[inline]
    fn cap(&self) -> u64 {
        self.levels[0].len() as u64 * 64
    }

    #[inline]
    pub(crate) fn is_set(&self, bit: u64) -> bool {
        if bit >= self.cap() {
            return false;
        }
        self.levels[0][(bit / 64) as usize] & (1u64 << (bit % 64)) != 0
    }

    /// Word `w` of the bottom level just became full: record it in the summary levels.
    fn word_full(&mut self, w: u64) {
        let mut idx = w;
        for level in 1..self.levels.len() {
            let w = (idx / 64) as usize;
            let word = &mut self.levels[level][w];
            *word |= 1u64 << (idx % 64);
            if *word != u64::MAX {
                return;
            }
            idx = w as u64;
        }
    }

    /// Set up to `nr` bits from `bit`, stopping at the first bit already set; returns how many
    /// were set (an I/O overlapping an earlier one is shortened to the untouched part).
    /// Works a 64-bit word at a time.
    #[inline]
    pub(crate) fn set_nr(&mut self, bit: u64, nr: u64) -> u64 {
        if nr == 1 {
            return self.set_one(bit);
        }
        self.set_run(bit, nr)
    }

    /// The general `set_nr`: bits `bit..bit + nr` up to the first one already set.
    fn set_run(&mut self, bit: u64, nr: u64) -> u64 {
        let cap = self.cap();
        let mut done = 0;
        while done < nr {
            let b = bit + done;
            if b >= cap {
                break;
            }
            let w = (b / 64) as usize;
            let shift = b % 64;
            let n = (nr - done).min(64 - shift);
            let mask = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << shift
            };
            let word = self.levels[0][w];
            let taken = word & mask;
            // Only the run up to the first bit already set is ours.
            let n = if taken != 0 {
                taken.trailing_zeros() as u64 - shift
            } else {
                n
            };
            if n == 0 {
                break;
            }
            let mask = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << shift
            };
            self.levels[0][w] = word | mask;
            if word | mask == u64::MAX && self.levels.len() > 1 {
                self.word_full(w as u64);
            }
            done += n;
            if taken != 0 {
                break;
            }
        }
        done
    }

    /// `set_nr(bit, 1)`, the per-I/O case of fixed-size blocks, without the run arithmetic.
    #[inline]
    pub(crate) fn set_one(&mut self, bit: u64) -> u64 {
        let w = (bit / 64) as usize;
        let Some(word) = self.levels[0].get_mut(w) else {
            return 0;
        };
        let mask = 1u64 << (bit % 64);
        if *word & mask != 0 {
            return 0;
        }
        self.mark(w, mask);
        1
    }

    /// Set the bits `mask` of bottom word `w` (in the map) and record the word when full.
    #[inline(always)]
    fn mark(&mut self, w: usize, mask: u64) {
        let word = &mut self.levels[0][w];
        *word |= mask;
        if *word == u64::MAX && self.levels.len() > 1 {
            self.word_full(w as u64);
        }
    }

    /// The block a uniform draw `bit` lands on, taken: `bit` itself when it is free, else
    /// [`RandomMap::next_free`]'s (`is_set`, `next_free`, then `set_nr(b, 1)`, as one call
    /// that reads the word once). None, with nothing set, when the map is full or the block
    /// is `limit` or beyond.
    ///
    /// A pass draws a taken block half the time on average (at a fill of f, with probability
    /// f), so the next free block is looked for here first in the drawn block's own word,
    /// where `next_free` (searching upward from `bit + 1`) finds it unless the rest of the
    /// word is full: a full pass of bench/ipio.sh spent ~90 instructions per taken draw in
    /// the general search.
    #[inline(always)]
    pub(crate) fn take(&mut self, bit: u64, limit: u64) -> Option<u64> {
        let w = (bit / 64) as usize;
        if bit < limit {
            if let Some(word) = self.levels[0].get_mut(w) {
                let mask = 1u64 << (bit % 64);
                // The drawn block when free, else the word's lowest free block above it.
                let b = if *word & mask == 0 {
                    bit
                } else {
                    match !(*word | mask | (mask - 1)) {
                        0 => u64::MAX, // none: the general search
                        above => w as u64 * 64 + u64::from(above.trailing_zeros()),
                    }
                };
                if b < limit && b < self.nr_bits {
                    self.mark(w, 1u64 << (b % 64));
                    return Some(b);
                }
            }
        }
        self.take_taken(bit, limit)
    }

    /// [`RandomMap::take`] of a block whose word holds no free block at or above it (or past
    /// the map, or past `limit`).
    #[cold]
    fn take_taken(&mut self, bit: u64, limit: u64) -> Option<u64> {
        let b = if self.is_set(bit) {
            self.next_free(bit)?
        } else {
            bit
        };
        if b >= limit {
            return None;
        }
        self.set_one(b);
        Some(b)
    }

    /// Smallest index `>= idx` whose bit is clear at `level`.
    fn find_zero(&self, level: usize, idx: u64) -> Option<u64> {
        let words = &self.levels[level];
        let w = (idx / 64) as usize;
        if w >= words.len() {
            return None;
        }
        let masked = !words[w] & (u64::MAX << (idx % 64));
        if masked != 0 {
            return Some(w as u64 * 64 + masked.trailing_zeros() as u64);
        }
        let w2 = if level + 1 == self.levels.len() {
            (w + 1..words.len()).find(|&i| words[i] != u64::MAX)? as u64
        } else {
            self.find_zero(level + 1, w as u64 + 1)?
        };
        let word = *words.get(w2 as usize)?;
        Some(w2 * 64 + (!word).trailing_zeros() as u64)
    }

    fn first_free_from(&self, bit: u64) -> Option<u64> {
        self.find_zero(0, bit).filter(|&b| b < self.nr_bits)
    }

    /// `bit` is taken: the next free block after it, wrapping to the start (fio's
    /// `axmap_next_free`). None when the map is full.
    pub(crate) fn next_free(&self, bit: u64) -> Option<u64> {
        if bit >= self.nr_bits {
            return None;
        }
        let mut next = bit + 1;
        if next == self.nr_bits {
            next = 0;
        }
        match self.first_free_from(next) {
            Some(b) => Some(b),
            None if next != 0 => self.first_free_from(0),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_too_large_for_memory_is_none() {
        assert!(RandomMap::try_new(u64::MAX).is_none());
        assert!(RandomMap::try_new(1 << 62).is_none());
        assert_eq!(RandomMap::try_new(130).unwrap().cap(), 192);
    }

    #[test]
    fn next_free_wraps_and_reports_full() {
        let mut m = RandomMap::new(130);
        for b in 0..130 {
            if b != 5 && b != 129 {
                assert_eq!(m.set_nr(b, 1), 1);
            }
        }
        assert_eq!(m.next_free(5), Some(129));
        assert_eq!(m.next_free(128), Some(129));
        assert_eq!(m.next_free(129), Some(5));
        m.set_nr(5, 1);
        m.set_nr(129, 1);
        assert_eq!(m.next_free(7), None);
        m.reset();
        assert_eq!(m.next_free(7), Some(8));
    }

    /// Blocks in `0..below` drawn by a xorshift, the same stream every time.
    fn draws(below: u64) -> impl Iterator<Item = u64> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        std::iter::repeat_with(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % below
        })
    }

    #[test]
    fn set_one_agrees_with_the_general_run() {
        // 3 levels (300k bits), bits drawn by an xorshift until most of the map is set.
        let (mut fast, mut slow) = (RandomMap::new(300_000), RandomMap::new(300_000));
        for b in draws(300_100).take(600_000) {
            // a few past the end
            assert_eq!(fast.set_one(b), slow.set_run(b, 1), "bit {b}");
        }
        assert_eq!(fast.levels, slow.levels);
    }

    /// `take` is `is_set`, `next_free` and `set_one` in one: both ways agree on every draw
    /// (a few past the map) until the map is full, with the limit at the map's end and
    /// inside it, and leave the same levels.
    #[test]
    fn take_agrees_with_is_set_and_next_free() {
        let n = 300_000;
        for limit in [n, n - 1000, 64 * 64 * 5 + 3] {
            let (mut fast, mut slow) = (RandomMap::new(n), RandomMap::new(n));
            for (i, bit) in draws(n + 40).take(2_000_000).enumerate() {
                let want = if bit < limit && slow.set_one(bit) == 1 {
                    Some(bit)
                } else {
                    let b = if slow.is_set(bit) {
                        slow.next_free(bit)
                    } else {
                        Some(bit)
                    };
                    b.filter(|&b| b < limit).inspect(|&b| {
                        slow.set_one(b);
                    })
                };
                assert_eq!(
                    fast.take(bit, limit),
                    want,
                    "draw {i}: bit {bit} limit {limit}"
                );
                if want.is_none() && slow.next_free(0).is_none_or(|b| b >= limit) {
                    break;
                }
            }
            // The draws ran until every block below the limit was taken.
            assert!(
                slow.next_free(0).is_none_or(|b| b >= limit),
                "limit {limit}"
            );
            assert_eq!(fast.levels, slow.levels, "limit {limit}");
        }
    }

    #[test]
    fn set_nr_stops_at_set_bit() {
        let mut m = RandomMap::new(64);
        m.set_nr(10, 1);
        assert_eq!(m.set_nr(8, 4), 2);
        assert!(m.is_set(8) && m.is_set(9) && !m.is_set(11));
        assert_eq!(m.set_nr(10, 4), 0);
    }

    #[test]
    fn set_nr_crosses_words_and_marks_full_words() {
        let mut m = RandomMap::new(64 * 64 * 2);
        assert_eq!(m.set_nr(60, 10), 10);
        assert!((60..70).all(|b| m.is_set(b)) && !m.is_set(59) && !m.is_set(70));
        assert_eq!(m.set_nr(55, 10), 5);
        assert_eq!(m.set_nr(0, 200), 55);
        assert_eq!(m.set_nr(70, 186), 186);
        // words 0..4 are full now: the next free block after 0 is 256
        assert_eq!(m.next_free(0), Some(256));
        assert_eq!(m.levels[1][0] & 0xf, 0xf);
    }

    #[test]
    fn multi_level_search_skips_full_regions() {
        let n = 64 * 64 * 3 + 17;
        let mut m = RandomMap::new(n);
        assert_eq!(m.levels.len(), 3);
        for b in 0..n - 1 {
            m.set_nr(b, 1);
        }
        assert_eq!(m.next_free(0), Some(n - 1));
        assert_eq!(m.next_free(n - 1), Some(n - 1));
        m.set_nr(n - 1, 1);
        assert_eq!(m.next_free(3), None);
    }
}
