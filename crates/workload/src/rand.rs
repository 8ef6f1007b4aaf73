//! fio's pseudo-random generators, reimplemented bit-for-bit so that a seeded job produces the
//! same offsets, block sizes and mix decisions as fio 3.33: the 32-bit combined Tausworthe
//! generator (L'Ecuyer's taus88), the 64-bit five-component variant (taus258), fio's seeding
//! procedure (an LCG with six warm-up draws) and the scaling helpers fio uses to map a draw onto
//! a range. Also the 64-bit multiplicative hash fio uses for buffer contents and zipf hashing.

/// fio's 64-bit golden-ratio multiplier (`__hash_u64`).
pub(crate) const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// Multiplicative hash of one 64-bit value, as fio hashes buffer words and zipf ranks.
#[inline]
pub(crate) fn hash_u64(v: u64) -> u64 {
    v.wrapping_mul(GOLDEN_RATIO_64)
}

/// Forces a Tausworthe component seed above the minimum the generator needs (s > m).
#[inline]
fn seed_floor(x: u64, m: u64) -> u64 {
    if x < m {
        x + m
    } else {
        x
    }
}

/// fio's seeding constant: written `(2^31) + (2^17) + (2^7)` in C, where `^` is XOR, so the
/// value actually used is 29 + 19 + 5 = 53. Reproduced as-is so sequences match fio.
const SEED_START: u64 = 29 + 19 + 5;

/// Largest `lastb` whose 32-bit draws scale exactly in integers: `lastb * r` stays below 2^53
/// for every r < 2^32, so fio's double product is exact and its truncation is the integer
/// quotient.
pub(crate) const EXACT_LASTB: u64 = 1 << 21;

/// 32-bit combined Tausworthe state (taus88).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Taus88 {
    s1: u32,
    s2: u32,
    s3: u32,
}

impl Taus88 {
    pub(crate) fn new(seed: u32) -> Self {
        let lcg = |x: u64| (x.wrapping_mul(69069) ^ seed as u64) as u32 as u64;
        let s1 = seed_floor(lcg(SEED_START), 1) as u32;
        let s2 = seed_floor(lcg(s1 as u64), 7) as u32;
        let s3 = seed_floor(lcg(s2 as u64), 15) as u32;
        let mut t = Taus88 { s1, s2, s3 };
        for _ in 0..6 {
            t.next_u32();
        }
        t
    }

    #[inline(always)]
    pub(crate) fn next_u32(&mut self) -> u32 {
        #[inline(always)]
        fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
            ((s & c) << d) ^ (((s << a) ^ s) >> b)
        }
        self.s1 = step(self.s1, 13, 19, 4294967294, 12);
        self.s2 = step(self.s2, 2, 25, 4294967288, 4);
        self.s3 = step(self.s3, 3, 11, 4294967280, 17);
        self.s1 ^ self.s2 ^ self.s3
    }

    /// fio's uniform block in `0..lastb` for `lastb` up to [`EXACT_LASTB`], where its double
    /// product is exact: the integer `(lastb * r) >> 32` (see [`FRand::next_below`]).
    #[inline(always)]
    pub(crate) fn below_exact(&mut self, lastb: u64) -> u64 {
        debug_assert!(lastb <= EXACT_LASTB);
        (lastb * u64::from(self.next_u32())) >> 32
    }
}

/// 64-bit five-component Tausworthe state (taus258).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Taus258 {
    s: [u64; 5],
}

impl Taus258 {
    pub(crate) fn new(seed: u64) -> Self {
        let lcg = |x: u64| x.wrapping_mul(6906969069) ^ seed;
        let s1 = seed_floor(lcg(SEED_START), 1);
        let s2 = seed_floor(lcg(s1), 7);
        let s3 = seed_floor(lcg(s2), 15);
        let s4 = seed_floor(lcg(s3), 33);
        let s5 = seed_floor(lcg(s4), 49);
        let mut t = Taus258 {
            s: [s1, s2, s3, s4, s5],
        };
        for _ in 0..6 {
            t.next_u64();
        }
        t
    }

    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let x = ((s[0] << 1) ^ s[0]) >> 53;
        s[0] = ((s[0] & 18446744073709551614) << 10) ^ x;
        let x = ((s[1] << 24) ^ s[1]) >> 50;
        s[1] = ((s[1] & 18446744073709551104) << 5) ^ x;
        let x = ((s[2] << 3) ^ s[2]) >> 23;
        s[2] = ((s[2] & 18446744073709547520) << 29) ^ x;
        let x = ((s[3] << 5) ^ s[3]) >> 24;
        s[3] = ((s[3] & 18446744073709420544) << 23) ^ x;
        let x = ((s[4] << 3) ^ s[4]) >> 33;
        s[4] = ((s[4] & 18446744073701163008) << 8) ^ x;
        s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
    }
}

/// fio's `frand_state`: either generator, chosen per job by `random_generator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FRand {
    T32(Taus88),
    T64(Taus258),
}

impl FRand {
    /// `init_rand_seed`: the 32-bit generator only sees the low 32 bits of the seed.
    pub(crate) fn new(seed: u64, use64: bool) -> Self {
        if use64 {
            FRand::T64(Taus258::new(seed))
        } else {
            FRand::T32(Taus88::new(seed as u32))
        }
    }

    #[inline(always)]
    pub(crate) fn next(&mut self) -> u64 {
        match self {
            FRand::T32(t) => t.next_u32() as u64,
            FRand::T64(t) => t.next_u64(),
        }
    }

    /// Largest value `next` can return.
    #[inline]
    pub(crate) fn max(&self) -> u64 {
        match self {
            FRand::T32(_) => u32::MAX as u64,
            FRand::T64(_) => u64::MAX,
        }
    }

    /// `r / (max + 1.0)` computed in doubles exactly like fio, for scaling a draw to a range.
    /// Always inlined: it is on the per-I/O path of every random job, where the call cost as
    /// much as the draw; per generator the divisor is a constant (the same double as
    /// `max() as f64 + 1.0`, both powers of two, so the quotient is bit-identical).
    #[inline(always)]
    pub(crate) fn next_fraction(&mut self) -> f64 {
        match self {
            FRand::T32(t) => t.next_u32() as f64 / 4294967296.0,
            FRand::T64(t) => t.next_u64() as f64 / 18446744073709551616.0,
        }
    }

    /// fio's `(unsigned long long)(lastb * (r / (FRAND_MAX + 1.0)))`: a uniform block in
    /// `0..lastb` (`lastb_f` is `lastb as f64`). With the 32-bit generator and up to
    /// [`EXACT_LASTB`] blocks the doubles are exact, so the integer `(lastb * r) >> 32` is
    /// the same number without the float round trip.
    #[inline(always)]
    pub(crate) fn next_below(&mut self, lastb: u64, lastb_f: f64) -> u64 {
        match self {
            FRand::T32(t) if lastb <= EXACT_LASTB => t.below_exact(lastb),
            _ => (lastb_f * self.next_fraction()) as u64,
        }
    }

    /// `rand_between`: uniform in `start..=end` using fio's double scaling.
    #[inline]
    pub(crate) fn between(&mut self, start: u64, end: u64) -> u64 {
        match self {
            FRand::T32(t) => {
                let r = t.next_u32();
                let span = (end - start) as u32 as u64 + 1;
                let v = (span as f64 * (r as f64 / 4294967296.0)) as i64 as u32;
                start + v as u64
            }
            FRand::T64(t) => {
                let r = t.next_u64();
                let span = (end - start).wrapping_add(1);
                start + (span as f64 * (r as f64 / 18446744073709551616.0)) as u64
            }
        }
    }

    /// `__get_next_seed`: one draw times another, the seed fio uses for each buffer fill.
    #[inline]
    pub(crate) fn next_seed(&mut self) -> u64 {
        let a = self.next();
        a.wrapping_mul(self.next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taus88_is_deterministic_and_seed_dependent() {
        let mut a = Taus88::new(1);
        let mut b = Taus88::new(1);
        let mut c = Taus88::new(2);
        let va: Vec<u32> = (0..8).map(|_| a.next_u32()).collect();
        let vb: Vec<u32> = (0..8).map(|_| b.next_u32()).collect();
        let vc: Vec<u32> = (0..8).map(|_| c.next_u32()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn between_stays_in_range() {
        for use64 in [false, true] {
            let mut r = FRand::new(0x1234, use64);
            let mut seen = [false; 100];
            for _ in 0..20_000 {
                let v = r.between(1, 100);
                assert!((1..=100).contains(&v));
                seen[(v - 1) as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "every value 1..=100 drawn");
        }
    }

    #[test]
    fn next_fraction_is_fios_quotient() {
        // fio: `r / (FRAND_MAX + 1.0)` in doubles; the inlined constant divisors must agree.
        for use64 in [false, true] {
            let mut a = FRand::new(0xfeed, use64);
            let mut b = a;
            for _ in 0..10_000 {
                let want = b.next() as f64 / (b.max() as f64 + 1.0);
                assert_eq!(a.next_fraction().to_bits(), want.to_bits());
            }
        }
    }

    #[test]
    fn next_below_is_fios_double_formula() {
        // Both generators, lastb on both sides of the integer shortcut's bound, extreme draws
        // included (the last r of the sweep is FRAND_MAX for the 32-bit generator).
        let lastbs = [
            1,
            2,
            3,
            1000,
            262_144,
            EXACT_LASTB - 1,
            EXACT_LASTB,
            EXACT_LASTB + 1,
            1 << 40,
            u64::MAX / 4096,
        ];
        for use64 in [false, true] {
            for &lastb in &lastbs {
                let mut a = FRand::new(lastb ^ 0x5eed, use64);
                let mut b = a;
                for _ in 0..20_000 {
                    let want = (lastb as f64 * b.next_fraction()) as u64;
                    assert_eq!(a.next_below(lastb, lastb as f64), want, "lastb {lastb}");
                }
            }
        }
        for r in [0u64, 1, 0x8000_0000, 0xffff_fffe, 0xffff_ffff] {
            for lastb in [EXACT_LASTB, EXACT_LASTB - 1, 3] {
                let want = (lastb as f64 * (r as f64 / 4294967296.0)) as u64;
                assert_eq!((lastb * r) >> 32, want, "lastb {lastb} r {r}");
            }
        }
    }

    #[test]
    fn taus258_differs_from_taus88() {
        let mut a = FRand::new(7, false);
        let mut b = FRand::new(7, true);
        assert!(a.next() <= u32::MAX as u64);
        let big = (0..16).any(|_| b.next() > u32::MAX as u64);
        assert!(big, "64-bit generator yields values above 2^32");
    }
}
