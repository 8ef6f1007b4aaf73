//! Non-uniform random distributions over `nranges` ranges, as fio 3.33 computes them: zipf
//! (θ), pareto (h) and normal/gauss (σ as percent of the range), each with its own 32-bit
//! Tausworthe stream and a random rotation so the hot spot is not always at the file start,
//! plus the `zoned`/`zoned_abs` lookup tables and fio's Jenkins hash used to seed per-file
//! streams from the file name.

use crate::rand::{hash_u64, FRand, Taus88};

/// fio caps the zeta sum at this many terms (precision loss is negligible, setup stays fast).
const ZIPF_MAX_GEN: u64 = 10_000_000;
/// Number of uniform draws averaged for one gauss sample.
const GAUSS_ITERS: u64 = 12;

#[derive(Debug, Clone)]
pub(crate) enum Dist {
    Zipf {
        rand: Taus88,
        nranges: u64,
        theta: f64,
        zeta2: f64,
        zetan: f64,
        rand_off: u64,
        hash: bool,
    },
    Pareto {
        rand: Taus88,
        nranges: u64,
        pow: f64,
        rand_off: u64,
        hash: bool,
    },
    Gauss {
        rand: Taus88,
        nranges: u64,
        stddev: u64,
        rand_off: u64,
        hash: bool,
    },
}

/// Seeds the stream and draws the rotation (fio: `center` unset = random rotation).
fn shared_init(seed: u32) -> (Taus88, u64) {
    let mut rand = Taus88::new(seed);
    let off = rand.next_u32() as u64;
    (rand, off)
}

impl Dist {
    /// `hash`: spread neighbouring ranks over the file (offsets); file selection disables it.
    pub(crate) fn zipf(nranges: u64, theta: f64, seed: u32, hash: bool) -> Dist {
        let (rand, rand_off) = shared_init(seed);
        let zeta2 = 1.0f64.powf(theta) + 0.5f64.powf(theta);
        let zetan = (0..nranges.min(ZIPF_MAX_GEN))
            .map(|i| (1.0 / (i + 1) as f64).powf(theta))
            .sum();
        Dist::Zipf {
            rand,
            nranges,
            theta,
            zeta2,
            zetan,
            rand_off,
            hash,
        }
    }

    pub(crate) fn pareto(nranges: u64, h: f64, seed: u32, hash: bool) -> Dist {
        let (rand, rand_off) = shared_init(seed);
        Dist::Pareto {
            rand,
            nranges,
            pow: h.ln() / (1.0 - h).ln(),
            rand_off,
            hash,
        }
    }

    pub(crate) fn gauss(nranges: u64, dev: f64, seed: u32, hash: bool) -> Dist {
        let rand = Taus88::new(seed);
        let mut stddev = 0;
        if dev != 0.0 {
            stddev = ((nranges as f64 * dev) / 100.0).ceil() as u64;
            stddev = stddev.min(nranges / 2);
        }
        Dist::Gauss {
            rand,
            nranges,
            stddev,
            rand_off: 0,
            hash,
        }
    }

    /// Next range index in `0..nranges`.
    pub(crate) fn next(&mut self) -> u64 {
        match self {
            Dist::Zipf {
                rand,
                nranges,
                theta,
                zeta2,
                zetan,
                rand_off,
                hash,
            } => {
                let n = *nranges;
                let alpha = 1.0 / (1.0 - *theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - *theta)) / (1.0 - *zeta2 / *zetan);
                let uni = rand.next_u32() as f64 / u32::MAX as f64;
                let z = uni * *zetan;
                let val = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(*theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * uni - eta + 1.0).powf(alpha)) as u64
                };
                let mut v = val - 1;
                if *hash {
                    v = hash_u64(v);
                }
                v.wrapping_add(*rand_off) % n
            }
            Dist::Pareto {
                rand,
                nranges,
                pow,
                rand_off,
                hash,
            } => {
                let r = rand.next_u32() as f64 / u32::MAX as f64;
                let mut v = ((*nranges - 1) as f64 * r.powf(*pow)) as u64;
                if *hash {
                    v = hash_u64(v);
                }
                v.wrapping_add(*rand_off) % *nranges
            }
            Dist::Gauss {
                rand,
                nranges,
                stddev,
                rand_off,
                hash,
            } => gauss_next(rand, *nranges, *stddev, *rand_off, *hash),
        }
    }
}

fn gauss_next(rand: &mut Taus88, nranges: u64, stddev: u64, rand_off: u64, hash: bool) -> u64 {
    let mut sum: u64 = 0;
    for _ in 0..GAUSS_ITERS {
        sum += rand.next_u32() as u64 % (nranges + 1);
    }
    sum = sum.div_ceil(GAUSS_ITERS);
    if stddev != 0 {
        // fio computes the deviation in an `int` and halves it until it fits.
        let r = rand.next_u32();
        let vr = (stddev as f64 * (r as f64 / 4294967296.0)) as i64;
        let mut dev = vr - (stddev / 2) as i64;
        // fio halves until the sum fits; it would spin forever at dev == 0 with sum ==
        // nranges (tiny files), so stop there and let the modulo below wrap instead.
        while dev != 0 && (dev + sum as i64) as u64 >= nranges {
            dev /= 2;
        }
        sum = (sum as i64 + dev) as u64;
    }
    if hash {
        sum = hash_u64(sum);
    }
    sum.wrapping_add(rand_off) % nranges
}

/// fio's `jhash` (Bob Jenkins' lookup3 layout with fio's golden-ratio init). Note fio's loop
/// adds only the first byte of each 4-byte lane for all but the last block; reproduced so
/// per-file seeds match.
pub(crate) fn jhash(key: &[u8], initval: u32) -> u32 {
    let mut length = key.len() as u32;
    let init = 0x61C8_8647u32.wrapping_add(length).wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = key;
    while length > 12 {
        a = a.wrapping_add(k[0] as u32);
        b = b.wrapping_add(k[4] as u32);
        c = c.wrapping_add(k[8] as u32);
        jmix(&mut a, &mut b, &mut c);
        length -= 12;
        k = &k[12..];
    }
    if length == 0 {
        return c;
    }
    let byte = |i: usize, shift: u32| (k[i] as u32) << shift;
    let n = length as usize;
    for i in (0..n).rev() {
        let v = byte(i, 8 * (i as u32 % 4));
        match i / 4 {
            0 => a = a.wrapping_add(v),
            1 => b = b.wrapping_add(v),
            _ => c = c.wrapping_add(v),
        }
    }
    jfinal(&mut a, &mut b, &mut c);
    c
}

fn jmix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

fn jfinal(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

/// One entry of fio's 100-slot zone lookup: an access percentile maps to a zone's bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ZoneSlot {
    /// `zoned`: zone start and end in percent of the file.
    pub(crate) perc_prev: u64,
    pub(crate) perc: u64,
    /// `zoned_abs`: zone start and end in bytes.
    pub(crate) size_prev: u64,
    pub(crate) size: u64,
}

/// Builds the 100-entry table from `(access %, size)` pairs (size in % or bytes).
pub(crate) fn zone_table(zones: &[(u64, u64)], absolute: bool) -> Vec<ZoneSlot> {
    let mut t = vec![ZoneSlot::default(); 100];
    let (mut aprev, mut sprev) = (0usize, 0u64);
    for &(access, size) in zones {
        for slot in t.iter_mut().skip(aprev).take(access as usize) {
            if absolute {
                *slot = ZoneSlot {
                    perc_prev: 0,
                    perc: 0,
                    size_prev: sprev,
                    size: sprev + size,
                };
            } else {
                *slot = ZoneSlot {
                    perc_prev: sprev,
                    perc: sprev + size,
                    size_prev: 0,
                    size: 0,
                };
            }
        }
        aprev += access as usize;
        sprev += size;
    }
    t
}

/// Draws a value in 1..=100 for the zone lookup.
#[inline]
pub(crate) fn zone_pick(state: &mut FRand) -> usize {
    state.between(1, 100) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_concentrates_on_few_ranges() {
        let mut d = Dist::zipf(1000, 1.2, 1234, false);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[d.next() as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u32 = counts[..10].iter().sum();
        assert!(
            top10 > 40_000,
            "top 10 of 1000 ranges got {top10} of 100000"
        );
    }

    #[test]
    fn pareto_and_gauss_stay_in_range() {
        let mut p = Dist::pareto(500, 0.2, 7, true);
        let mut g = Dist::gauss(500, 10.0, 7, false);
        for _ in 0..10_000 {
            assert!(p.next() < 500);
            assert!(g.next() < 500);
        }
    }

    #[test]
    fn gauss_clusters_around_centre() {
        let mut g = Dist::gauss(1000, 5.0, 99, false);
        let near = (0..10_000)
            .filter(|_| (300..700).contains(&g.next()))
            .count();
        // The mean of 12 uniform draws has a standard deviation of range/12: ±2.4σ here.
        assert!(near > 9_500, "{near} of 10000 within ±20% of the centre");
    }

    #[test]
    fn gauss_on_tiny_ranges_terminates() {
        for n in 1..5 {
            let mut g = Dist::gauss(n, 50.0, 3, false);
            for _ in 0..1000 {
                assert!(g.next() < n);
            }
        }
    }

    #[test]
    fn jhash_is_stable_and_sensitive() {
        let a = jhash(b"/tmp/file.0.0", 0);
        assert_eq!(a, jhash(b"/tmp/file.0.0", 0));
        assert_ne!(a, jhash(b"/tmp/file.0.1", 0));
        assert_ne!(jhash(b"", 0), jhash(b"a", 0));
    }

    #[test]
    fn zone_table_maps_percentiles() {
        let t = zone_table(&[(60, 10), (30, 20), (10, 70)], false);
        assert_eq!((t[0].perc_prev, t[0].perc), (0, 10));
        assert_eq!((t[59].perc_prev, t[59].perc), (0, 10));
        assert_eq!((t[60].perc_prev, t[60].perc), (10, 30));
        assert_eq!((t[99].perc_prev, t[99].perc), (30, 100));
    }
}
