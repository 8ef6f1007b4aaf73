//! Per-I/O accounting the runner does besides latencies: fio's completion-latency buckets
//! (`lat (nsec/usec/msec)` lines) and the queue-depth / submit / complete distributions
//! (`IO depths`, `submit`, `complete`), with the percentages exactly as fio derives them.
//!
//! What the runner calls, mirroring fio 3.33 (io_u.c, ioengines.c):
//! - [`LatBuckets::add`] once per completed read/write/trim with its **clat** (fio marks
//!   `io_u_mark_latency` with the issue-to-completion time, not the total latency).
//! - [`DepthDist::mark_depth`] each time I/Os are handed to the engine (a sync engine: once per
//!   I/O with depth 1; an async engine: at commit time with the number just queued), with the
//!   number of I/Os in flight *including* the ones being submitted.
//! - [`DepthDist::mark_count`] on the `submit` distribution once per submit call with how many
//!   I/Os it submitted, and on the `complete` distribution once per reap call with how many it
//!   reaped — including 0, which lands in the `0` bucket. Engines without a separate commit
//!   step (sync engines) mark 1 on both per I/O.

use crate::model::{DepthDist, LatBuckets};

/// Upper bounds (exclusive) of the ns and us latency buckets, and the labels fio prints.
pub const LAT_LABELS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
/// Labels of the ms buckets; the last one prints as `>=2000`.
pub const LAT_MS_LABELS: [u64; 12] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000, 2000];
/// Labels of the `IO depths` buckets (the last prints as `>=64`).
pub const DEPTH_LABELS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Labels of the `submit` / `complete` buckets (the last prints as `>=64`).
pub const COUNT_LABELS: [u32; 7] = [0, 4, 8, 16, 32, 64, 64];

/// Lower edges of ns/us/ms buckets 1..=9 (bucket 0 starts at 0).
const EDGES: [u64; 9] = [2, 4, 10, 20, 50, 100, 250, 500, 750];

/// Bucket of every value below 1000 (the same split serves ns, us and ms): one L1-resident
/// load per I/O instead of a chain of compares.
static SUB_THOUSAND: [u8; 1000] = {
    let mut t = [0u8; 1000];
    let mut v = 0;
    while v < 1000 {
        let mut b = 0;
        while b < EDGES.len() && v as u64 >= EDGES[b] {
            b += 1;
        }
        t[v] = b as u8;
        v += 1;
    }
    t
};

#[inline]
fn sub_thousand(v: u64) -> usize {
    SUB_THOUSAND[v.min(999) as usize] as usize
}

impl LatBuckets {
    /// Count one completion latency (clat) in nanoseconds.
    #[inline]
    pub fn add(&mut self, clat_ns: u64) {
        if clat_ns < 1000 {
            self.ns[sub_thousand(clat_ns)] += 1;
        } else if clat_ns < 1_000_000 {
            self.us[sub_thousand(clat_ns / 1000)] += 1;
        } else {
            let ms = clat_ns / 1_000_000;
            let i = match ms {
                0..=999 => sub_thousand(ms),
                1000..=1999 => 10,
                _ => 11,
            };
            self.ms[i] += 1;
        }
    }

    pub fn merge(&mut self, o: &LatBuckets) {
        add_arrays(&mut self.ns, &o.ns);
        add_arrays(&mut self.us, &o.us);
        add_arrays(&mut self.ms, &o.ms);
    }

    /// Percent of `total_ios` (fio: the sum of read+write+trim I/Os issued) in each ns bucket;
    /// a non-empty bucket never shows less than 0.01 (fio's `stat_calc_lat`).
    pub fn ns_pct(&self, total_ios: u64) -> [f64; 10] {
        lat_pct(&self.ns, total_ios)
    }
    pub fn us_pct(&self, total_ios: u64) -> [f64; 10] {
        lat_pct(&self.us, total_ios)
    }
    pub fn ms_pct(&self, total_ios: u64) -> [f64; 12] {
        lat_pct(&self.ms, total_ios)
    }

    /// The us percentages of the terse format, which has no ns buckets: fio adds the share of
    /// all sub-microsecond completions to the first us bucket (`stat_calc_lat_nu`).
    pub fn us_pct_terse(&self, total_ios: u64) -> [f64; 10] {
        let mut us = self.us_pct(total_ios);
        if total_ios > 0 {
            let ns: u64 = self.ns.iter().sum();
            us[0] += 100.0 * ns as f64 / total_ios as f64;
        }
        us
    }
}

fn add_arrays<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += *y;
    }
}

fn lat_pct<const N: usize>(buckets: &[u64; N], total: u64) -> [f64; N] {
    pct_with_floor(buckets, total, 0.01)
}

fn pct_with_floor<const N: usize>(buckets: &[u64; N], total: u64, floor: f64) -> [f64; N] {
    let mut out = [0.0; N];
    pct_into(buckets, total, floor, &mut out);
    out
}

/// fio's bucket percentages: each count as a percent of `total` into `out`, a non-empty bucket
/// shown as at least `floor` (0.01 for latency buckets, 0.1 for depth distributions); all zero
/// when `total` is 0.
pub fn pct_into(buckets: &[u64], total: u64, floor: f64, out: &mut [f64]) {
    for (o, &c) in out.iter_mut().zip(buckets) {
        *o = 0.0;
        if total == 0 {
            continue;
        }
        *o = c as f64 / total as f64 * 100.0;
        if c > 0 && *o < floor {
            *o = floor;
        }
    }
}

impl DepthDist {
    /// `IO depths`: add `nr` I/Os submitted while `depth` I/Os were in flight (counting them).
    /// Buckets: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64.
    #[inline]
    pub fn mark_depth(&mut self, depth: u32, nr: u64) {
        let i = match depth {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        self.buckets[i] += nr;
    }

    /// `submit` / `complete`: one submit (or reap) call that handled `nr` I/Os.
    /// Buckets: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64 (labelled 0, 4, 8, 16, 32, 64, >=64).
    #[inline]
    pub fn mark_count(&mut self, nr: u64) {
        self.mark_counts(nr, 1);
    }

    /// `calls` calls of [`DepthDist::mark_count`] with the same `nr`, at once.
    #[inline]
    pub fn mark_counts(&mut self, nr: u64, calls: u64) {
        let i = match nr {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        };
        self.buckets[i] += calls;
    }

    pub fn merge(&mut self, o: &DepthDist) {
        add_arrays(&mut self.buckets, &o.buckets);
    }

    /// Sum of all buckets: for `submit`/`complete` this is the number of calls (fio's
    /// `total_submit` / `total_complete`), the denominator of their percentages.
    pub fn total(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Percentages as fio prints them: of `total` (for `IO depths`, fio divides by the I/Os
    /// issued — read+write+trim `total_ios`; for `submit`/`complete` use [`DepthDist::total`]),
    /// with a non-empty bucket shown as at least 0.1.
    pub fn pct(&self, total: u64) -> [f64; 7] {
        pct_with_floor(&self.buckets, total, 0.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_counts_equals_repeated_mark_count() {
        for nr in [0, 1, 4, 5, 16, 17, 64, 65, 1000] {
            let (mut one, mut many) = (DepthDist::default(), DepthDist::default());
            for _ in 0..37 {
                one.mark_count(nr);
            }
            many.mark_counts(nr, 37);
            assert_eq!(one, many, "nr={nr}");
        }
    }

    #[test]
    fn lat_bucket_boundaries_match_fio() {
        let mut b = LatBuckets::default();
        // (value ns, which array, index) at every boundary of fio's switch statements.
        let cases: &[(u64, char, usize)] = &[
            (0, 'n', 0),
            (1, 'n', 0),
            (2, 'n', 1),
            (3, 'n', 1),
            (4, 'n', 2),
            (9, 'n', 2),
            (10, 'n', 3),
            (49, 'n', 4),
            (50, 'n', 5),
            (249, 'n', 6),
            (250, 'n', 7),
            (749, 'n', 8),
            (750, 'n', 9),
            (999, 'n', 9),
            (1000, 'u', 0),
            (1999, 'u', 0),
            (2000, 'u', 1),
            (999_999, 'u', 9),
            (1_000_000, 'm', 0),
            (3_999_999, 'm', 1),
            (999_999_999, 'm', 9),
            (1_000_000_000, 'm', 10),
            (1_999_999_999, 'm', 10),
            (2_000_000_000, 'm', 11),
            (u64::MAX, 'm', 11),
        ];
        for &(v, arr, idx) in cases {
            let before = b;
            b.add(v);
            let (old, new) = match arr {
                'n' => (before.ns[idx], b.ns[idx]),
                'u' => (before.us[idx], b.us[idx]),
                _ => (before.ms[idx], b.ms[idx]),
            };
            assert_eq!(new, old + 1, "v={v} expected {arr}[{idx}]");
        }
        let total: u64 = b.ns.iter().chain(&b.us).chain(&b.ms).sum();
        assert_eq!(total, cases.len() as u64);
    }

    #[test]
    fn lat_percentages_floor_and_terse_fold() {
        let mut b = LatBuckets::default();
        b.add(500); // ns[8]
        for _ in 0..9999 {
            b.add(150_000); // us[6]
        }
        let ns = b.ns_pct(10_000);
        assert_eq!(ns[8], 0.01, "1/10000 = 0.01 exactly");
        let us = b.us_pct(10_000);
        assert!((us[6] - 99.99).abs() < 1e-9);
        let mut tiny = LatBuckets::default();
        tiny.add(5);
        assert_eq!(tiny.ns_pct(1_000_000)[2], 0.01, "floored to 0.01");
        assert_eq!(tiny.ns_pct(0), [0.0; 10]);
        let terse = b.us_pct_terse(10_000);
        assert!(
            (terse[0] - 0.01).abs() < 1e-12,
            "ns share folded into first us bucket"
        );
    }

    #[test]
    fn depth_buckets_match_fio() {
        let mut d = DepthDist::default();
        for (depth, bucket) in [(1, 0), (2, 1), (3, 1), (4, 2), (7, 2), (8, 3), (15, 3)] {
            let before = d.buckets[bucket];
            d.mark_depth(depth, 2);
            assert_eq!(d.buckets[bucket], before + 2, "depth {depth}");
        }
        d.mark_depth(16, 1);
        d.mark_depth(63, 1);
        d.mark_depth(64, 1);
        d.mark_depth(1024, 1);
        assert_eq!(d.buckets, [2, 4, 4, 4, 1, 1, 2]);
    }

    #[test]
    fn submit_complete_buckets_match_fio() {
        let mut d = DepthDist::default();
        for nr in [0u64, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 1000] {
            d.mark_count(nr);
        }
        assert_eq!(d.buckets, [1, 2, 2, 2, 2, 2, 2]);
        assert_eq!(d.total(), 13);
        let p = d.pct(d.total());
        assert!((p.iter().sum::<f64>() - 100.0).abs() < 1e-9);
        let mut rare = DepthDist::default();
        rare.mark_count(1);
        rare.buckets[0] = 99_999;
        assert_eq!(
            rare.pct(rare.total())[1],
            0.1,
            "non-empty shows at least 0.1"
        );
        assert_eq!(DepthDist::default().pct(0), [0.0; 7]);
    }

    #[test]
    fn merging_adds_up() {
        let mut a = DepthDist::default();
        a.mark_count(3);
        let mut b = DepthDist::default();
        b.mark_count(3);
        b.mark_count(0);
        a.merge(&b);
        assert_eq!(a.buckets[..2], [1, 2]);
        let mut la = LatBuckets::default();
        la.add(10);
        let mut lb = LatBuckets::default();
        lb.add(10);
        lb.add(5_000_000_000);
        la.merge(&lb);
        assert_eq!((la.ns[3], la.ms[11]), (2, 1));
    }
}
