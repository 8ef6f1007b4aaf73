//! Log-linear histogram of nanosecond values, bucket-compatible with fio's `io_u_plat` but
//! without its upper cap.
//!
//! The layout is fio's (stat.h, `FIO_IO_U_PLAT_BITS = 6`): values below 128 are counted exactly;
//! a value whose most significant bit is `m >= 7` falls in group `m - 5`, which splits
//! `[2^m, 2^(m+1))` into 64 equal buckets. A bucket is reported by the value fio reports for it
//! (lower bound plus half the bucket width), so the relative error is at most 1/128 — fio's bound.
//! fio stops after 29 groups (everything above about 17.2 s lands in its last bucket); here the
//! groups continue up to bit 63, so every u64 is represented with the same error bound. For values
//! below 2^34 ns the bucket index and the reported value are exactly fio's, which makes json+
//! `bins` keys and percentiles directly comparable with fio's output for the same samples.
//!
//! The 3776 counters (30 KiB) are allocated in pages of one group as values arrive, so a
//! histogram costs what its values span (a few KiB for a job's latencies) and at most 59
//! allocations over a run, none once its groups are seen.

/// Bits of sub-bucket resolution per power of two (fio's `FIO_IO_U_PLAT_BITS`).
const BITS: u32 = 6;
/// Buckets per group (fio's `FIO_IO_U_PLAT_VAL`).
const VAL: u64 = 1 << BITS;
/// Values below this are counted exactly, one bucket each.
const EXACT: u64 = VAL << 1;
/// Total buckets: two exact groups plus one group per msb from 7 to 63.
pub const NBUCKETS: usize = ((64 - BITS + 1) as usize) * VAL as usize;
/// fio's bucket count (`FIO_IO_U_PLAT_NR`): indexes below this are fio-identical.
pub const FIO_NBUCKETS: usize = 29 * VAL as usize;

/// Bucket index of a value (fio's `plat_val_to_idx`, without the clamp).
#[inline(always)]
fn index(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= BITS + 1
    let error_bits = msb - BITS;
    let base = ((error_bits + 1) as u64) << BITS;
    (base + ((v >> error_bits) & (VAL - 1))) as usize
}

/// Lowest value that falls in bucket `i`.
pub fn bucket_lower(i: usize) -> u64 {
    let i = i as u64;
    if i < EXACT {
        return i;
    }
    let error_bits = (i >> BITS) - 1;
    let k = i & (VAL - 1);
    (1u64 << (error_bits + BITS as u64)) + (k << error_bits)
}

/// The value reported for bucket `i` (fio's `plat_idx_to_val`): exact below 128, otherwise the
/// lower bound plus half the bucket width.
pub fn bucket_value(i: usize) -> u64 {
    let lo = bucket_lower(i);
    if (i as u64) < EXACT {
        return lo;
    }
    let error_bits = ((i as u64) >> BITS) - 1;
    lo + (1u64 << (error_bits - 1))
}

/// Whether a cumulative count `cum` (> 0) reaches percentile `p` of `n` samples, i.e.
/// `cum >= p / 100 * n`, decided exactly for the binary value of `p`: `p` is `m * 2^e` with
/// integer `m`, so the test is `100 * cum * 2^-e >= m * n` in 128-bit integers. fio evaluates
/// it in long double, which agrees with exact arithmetic where plain f64 does not: checked
/// against fio 3.33, p=99.95 of N=2000 is rank 2000 (the double 99.95 is slightly above
/// 99.95; f64 arithmetic rounds the threshold down to 1999.0). `p <= 0` is always reached;
/// `p > 100` or NaN never.
fn reaches(cum: u64, p: f64, n: u64) -> bool {
    if p.is_nan() || p > 100.0 {
        return false;
    }
    if p <= 0.0 {
        return true;
    }
    let bits = p.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    // p <= 100 < 2^53 makes e negative.
    let k = (-e) as u32;
    let lhs = u128::from(cum) * 100;
    let rhs = u128::from(m) * u128::from(n); // < 2^117
    if lhs.leading_zeros() <= k {
        return true; // lhs << k >= 2^127 > rhs
    }
    (lhs << k) >= rhs
}

/// Buckets per page: one group (a power of two split in 64).
const PAGE: usize = VAL as usize;
/// Pages: one per group.
const NPAGES: usize = NBUCKETS / PAGE;

/// Counts of nanosecond values in fio-compatible log-linear buckets.
///
/// The buckets are kept in pages of one group (64 counters, 512 bytes), each allocated when the
/// first value lands in its group: a job's latencies fall in a few groups, so a used histogram
/// costs a few KiB instead of the 30 KiB of all 3776 counters, an unused one (slat of a
/// synchronous engine, the write side of a read job) only its page table, and copies of results
/// copy only what was filled. At most 59 allocations per histogram over a whole run.
#[derive(Clone)]
pub struct Histogram {
    pages: [Option<Box<[u64; PAGE]>>; NPAGES],
    total: u64,
}

impl PartialEq for Histogram {
    /// Equal counts, whichever pages happen to be allocated (a reset keeps zeroed pages).
    fn eq(&self, other: &Self) -> bool {
        self.total == other.total
            && self.pages.iter().zip(&other.pages).all(|(a, b)| {
                let zero = [0u64; PAGE];
                a.as_deref().unwrap_or(&zero) == b.as_deref().unwrap_or(&zero)
            })
    }
}

impl Eq for Histogram {}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // 3776 counters would drown any Debug output; the non-empty bins say everything.
        f.debug_struct("Histogram")
            .field("total", &self.total)
            .field("bins", &self.bins().collect::<Vec<_>>())
            .finish()
    }
}

impl Histogram {
    /// An empty histogram; no bucket page is allocated yet.
    pub fn new() -> Self {
        Histogram {
            pages: [const { None }; NPAGES],
            total: 0,
        }
    }

    /// Count one value. Per-I/O hot path: one leading-zeros, a shift, a page pointer and two
    /// increments; only the first value of a group allocates (see [`Histogram`]).
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = index(v);
        match self.pages.get_mut(i / PAGE) {
            Some(Some(p)) => p[i % PAGE] += 1,
            _ => self.first_in_group(i),
        }
        self.total += 1;
    }

    /// The first value of bucket `i`'s group: allocate its page.
    #[cold]
    #[inline(never)]
    fn first_in_group(&mut self, i: usize) {
        if let Some(slot) = self.pages.get_mut(i / PAGE) {
            slot.get_or_insert_with(|| Box::new([0; PAGE]))[i % PAGE] += 1;
        }
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Bytes of bucket pages allocated (the page table itself is part of the struct).
    pub fn page_bytes(&self) -> usize {
        self.pages.iter().flatten().count() * std::mem::size_of::<[u64; PAGE]>()
    }

    /// (bucket index, count) of every bucket in an allocated page, ascending; buckets of
    /// unallocated pages are zero.
    fn counts(&self) -> impl DoubleEndedIterator<Item = (usize, u64)> + '_ {
        self.pages.iter().enumerate().flat_map(|(g, p)| {
            p.iter()
                .flat_map(|p| p.iter().enumerate())
                .map(move |(k, &c)| (g * PAGE + k, c))
        })
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.total == 0 {
            return;
        }
        for (mine, theirs) in self.pages.iter_mut().zip(&other.pages) {
            if let Some(t) = theirs {
                let m = mine.get_or_insert_with(|| Box::new([0; PAGE]));
                for (a, b) in m.iter_mut().zip(t.iter()) {
                    *a += *b;
                }
            }
        }
        self.total += other.total;
    }

    /// Value at percentile `p` (0..=100), by fio's rule: the reported value of the first bucket
    /// whose cumulative count reaches `p / 100 * N` (compared as floating point, so a fractional
    /// rank rounds up). `p <= 0` gives the first non-empty bucket. 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        self.percentiles(&[p])[0]
    }

    /// Several percentiles in one pass over the buckets; results in the order of `ps`.
    pub fn percentiles(&self, ps: &[f64]) -> Vec<u64> {
        let mut out = vec![0u64; ps.len()];
        if self.total == 0 || ps.is_empty() {
            return out;
        }
        let mut order: Vec<usize> = (0..ps.len()).collect();
        order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
        let n = self.total;
        let mut next = 0;
        let mut cum = 0u64;
        // Unallocated pages hold zeros: skipping them leaves `cum` and every decision as is.
        for (i, c) in self.counts() {
            cum += c;
            // `cum > 0` only matters for p <= 0, which fio cannot express (0 ends its list).
            while next < order.len() && cum > 0 && reaches(cum, ps[order[next]], n) {
                out[order[next]] = bucket_value(i);
                next += 1;
            }
            if next == order.len() {
                break;
            }
        }
        // Percentiles above 100 never reach their threshold: report the highest bucket seen.
        let last = self.highest_bucket().map(bucket_value).unwrap_or(0);
        for &k in &order[next..] {
            out[k] = last;
        }
        out
    }

    fn highest_bucket(&self) -> Option<usize> {
        self.counts().rev().find(|&(_, c)| c > 0).map(|(i, _)| i)
    }

    /// Non-empty buckets as (reported value, count), ascending: json+ `bins`. For values below
    /// about 17.2 s the keys are exactly fio's; above, fio would lump everything into one bucket.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts()
            .filter(|&(_, c)| c > 0)
            .map(|(i, c)| (bucket_value(i), c))
    }

    /// The counts as fio's 1856 buckets (`io_u_plat`): identical below fio's cap, everything
    /// above it summed into the last bucket as fio's index clamp does. For histogram logs.
    pub fn fio_counts(&self, out: &mut [u64; FIO_NBUCKETS]) {
        out.fill(0);
        for (i, c) in self.counts() {
            out[i.min(FIO_NBUCKETS - 1)] += c;
        }
    }

    /// The inverse of [`Histogram::fio_counts`]: a histogram from fio's `io_u_plat` counts (a
    /// result another fio or fiox sent over the network). Counts past fio's buckets are
    /// ignored; a total that would overflow saturates.
    pub fn from_fio_counts(counts: &[u64]) -> Histogram {
        let mut h = Histogram::new();
        for (i, &c) in counts.iter().enumerate().take(FIO_NBUCKETS) {
            if c == 0 {
                continue;
            }
            if let Some(slot) = h.pages.get_mut(i / PAGE) {
                let p = slot.get_or_insert_with(|| Box::new([0; PAGE]));
                p[i % PAGE] = p[i % PAGE].saturating_add(c);
                h.total = h.total.saturating_add(c);
            }
        }
        h
    }

    /// Forget all samples (ramp_time end), keeping the allocated pages (no allocation for
    /// the groups already seen).
    pub fn reset(&mut self) {
        for p in self.pages.iter_mut().flatten() {
            p.fill(0);
        }
        self.total = 0;
    }
}

/// With the `serde` feature a histogram travels as its non-empty buckets, `[index, count]`
/// pairs (a few dozen instead of 3776 counters), and comes back bucket for bucket: merging
/// histograms received from other processes is then as exact as merging local ones.
#[cfg(feature = "serde")]
impl serde::Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        for (i, c) in self.counts().filter(|&(_, c)| c > 0) {
            seq.serialize_element(&(i as u32, c))?;
        }
        seq.end()
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Histogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pairs: Vec<(u32, u64)> = serde::Deserialize::deserialize(d)?;
        let mut h = Histogram::new();
        for (i, c) in pairs {
            let i = i as usize;
            let page = h
                .pages
                .get_mut(i / PAGE)
                .filter(|_| i < NBUCKETS)
                .ok_or_else(|| {
                    serde::de::Error::custom(format!("histogram bucket {i} is beyond {NBUCKETS}"))
                })?;
            page.get_or_insert_with(|| Box::new([0; PAGE]))[i % PAGE] += c;
            h.total += c;
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's plat_val_to_idx, transcribed as arithmetic (reference for the first 29 groups).
    fn fio_index(v: u64) -> usize {
        let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
        if msb <= 6 {
            return v as usize;
        }
        let eb = msb - 6;
        let idx = (((eb + 1) << 6) as u64 + ((v >> eb) & 63)) as usize;
        idx.min(FIO_NBUCKETS - 1)
    }

    /// fio's plat_idx_to_val: base + (k + 0.5) * 2^error_bits, truncated.
    fn fio_value(idx: usize) -> u64 {
        if idx < 128 {
            return idx as u64;
        }
        let eb = (idx >> 6) as u32 - 1;
        let base = 1u64 << (eb + 6);
        let k = (idx % 64) as f64;
        base + ((k + 0.5) * (1u64 << eb) as f64) as u64
    }

    #[test]
    fn index_and_lower_agree_over_whole_range() {
        let mut samples = vec![0u64, 1, 63, 64, 127, 128, 129, 255, 256, 1000, u64::MAX];
        for s in 7..64 {
            let p = 1u64 << s;
            samples.extend([p - 1, p, p + 1, p + p / 3]);
        }
        for v in samples {
            let i = index(v);
            assert!(i < NBUCKETS, "v={v}");
            assert!(bucket_lower(i) <= v, "v={v}");
            if i + 1 < NBUCKETS {
                assert!(bucket_lower(i + 1) > v, "v={v} i={i}");
            }
        }
        assert_eq!(index(u64::MAX), NBUCKETS - 1);
    }

    #[test]
    fn identical_to_fio_below_its_cap() {
        // Every bucket boundary fio has, plus points inside buckets.
        for i in 0..FIO_NBUCKETS {
            let lo = bucket_lower(i);
            for v in [
                lo,
                lo + (bucket_lower(i + 1) - lo) / 2,
                bucket_lower(i + 1) - 1,
            ] {
                assert_eq!(index(v), fio_index(v), "v={v}");
            }
            assert_eq!(bucket_value(i), fio_value(i), "idx={i}");
        }
        // fio's cap: 2^34 ns and above all land in its last bucket; ours keep resolving.
        assert_eq!(fio_index(1 << 34), FIO_NBUCKETS - 1);
        assert!(index(1 << 34) >= FIO_NBUCKETS);
    }

    #[test]
    fn relative_error_at_most_fio_bound() {
        let mut worst = 0.0f64;
        let mut check = |v: u64| {
            let m = bucket_value(index(v));
            let err = (m as f64 - v as f64).abs() / v as f64;
            assert!(err <= 1.0 / 128.0, "v={v} m={m} err={err}");
            worst = worst.max(err);
        };
        for v in 1..5000u64 {
            check(v);
        }
        for s in 7..64 {
            let p = 1u64 << s;
            // Group start (worst case), group end, and points far above fio's 17 s cap.
            check(p);
            check(p + 1);
            check(p.wrapping_mul(2).wrapping_sub(1).max(p));
        }
        check(u64::MAX);
        check(3_600_000_000_000); // an hour
        assert!(
            worst > 1.0 / 129.0,
            "the bound is attained at group starts: {worst}"
        );
    }

    #[test]
    fn exact_values_below_128() {
        let mut h = Histogram::new();
        for v in 0..128u64 {
            h.record(v);
        }
        let bins: Vec<_> = h.bins().collect();
        assert_eq!(bins.len(), 128);
        assert!(bins
            .iter()
            .enumerate()
            .all(|(i, &(v, c))| v == i as u64 && c == 1));
    }

    #[test]
    fn percentile_rule_matches_fio() {
        // 10 samples 1..=10 (exact buckets). fio: first bucket with cum >= p/100*10.
        let mut h = Histogram::new();
        for v in 1..=10u64 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), 5); // cum 5 >= 5.0
        assert_eq!(h.percentile(50.1), 6); // 5.01 needs cum 6
        assert_eq!(h.percentile(1.0), 1); // 0.1 -> first sample
        assert_eq!(h.percentile(99.99), 10);
        assert_eq!(h.percentile(100.0), 10);
        assert_eq!(h.percentile(0.0), 1, "p=0: first non-empty bucket");
        assert_eq!(
            h.percentiles(&[99.0, 10.0, 50.0]),
            vec![10, 1, 5],
            "order of the request is kept"
        );
        assert_eq!(Histogram::new().percentile(50.0), 0);
    }

    #[test]
    fn percentile_threshold_is_exact() {
        // Ranks observed in fio 3.33's json+ output (bins and percentiles of the same run).
        assert!(!reaches(1999, 99.95, 2000) && reaches(2000, 99.95, 2000));
        assert!(!reaches(14, 60.0, 25) && reaches(15, 60.0, 25));
        assert!(reaches(5, 50.0, 10) && !reaches(4, 50.0, 10));
        // The double nearest 99.9 is above it, so 999 of 1000 is not enough.
        assert!(!reaches(999, 99.9, 1000) && reaches(1000, 99.9, 1000));
        // Fractional ranks round up: 1% of 150 = 1.5 -> 2.
        assert!(!reaches(1, 1.0, 150) && reaches(2, 1.0, 150));
        assert!(reaches(u64::MAX, 100.0, u64::MAX) && !reaches(u64::MAX - 1, 100.0, u64::MAX));
        assert!(reaches(1, 1e-300, u64::MAX), "tiny p: first sample");
        assert!(reaches(1, 0.0, 10) && !reaches(10, 100.5, 10) && !reaches(10, f64::NAN, 10));
        let mut h = Histogram::new();
        for v in 1..=2000u64 {
            h.record(if v == 2000 { 127 } else { v % 100 });
        }
        assert_eq!(
            h.percentile(99.95),
            127,
            "rank 1999.0000000000000568 -> 2000"
        );
    }

    #[test]
    fn percentiles_of_uniform_within_bucket_error() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        for p in [1.0, 50.0, 90.0, 99.0, 99.9] {
            let exact = (p * 10.0f64).ceil() * 1000.0;
            let got = h.percentile(p) as f64;
            assert!(
                (got - exact).abs() / exact <= 1.0 / 128.0,
                "p={p} {got} vs {exact}"
            );
        }
        assert_eq!(h.count(), 1000);
    }

    #[test]
    fn huge_values_keep_resolution() {
        let mut h = Histogram::new();
        h.record(20_000_000_000); // 20 s: above fio's cap
        h.record(100_000_000_000); // 100 s
        let p = h.percentiles(&[50.0, 100.0]);
        assert!((p[0] as f64 / 2e10 - 1.0).abs() <= 1.0 / 128.0, "{p:?}");
        assert!((p[1] as f64 / 1e11 - 1.0).abs() <= 1.0 / 128.0, "{p:?}");
    }

    #[test]
    fn merge_equals_recording_everything() {
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for v in 0..3000u64 {
            let x = v * v * 37 + 11;
            if v % 3 == 0 {
                a.record(x);
            } else {
                b.record(x);
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a, all);
        assert_eq!(a.count(), 3000);
        a.reset();
        assert!(a.is_empty());
        assert_eq!(a.bins().count(), 0);
    }

    /// fio 3.33's own json+ output: re-recording its bins must give back its bins and, by the
    /// same percentile rule, exactly the percentiles it printed.
    #[test]
    fn reproduces_fio_jsonplus_output() {
        let text = include_str!("../testdata/fio-3.33-randread-psync-clat.txt");
        let (mut n, mut bins, mut pcts) = (0u64, Vec::new(), Vec::new());
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f[0] {
                "N" => n = f[1].parse().unwrap(),
                "bin" => bins.push((f[1].parse::<u64>().unwrap(), f[2].parse::<u64>().unwrap())),
                "pct" => pcts.push((f[1].parse::<f64>().unwrap(), f[2].parse::<u64>().unwrap())),
                other => panic!("bad fixture line {other}"),
            }
        }
        let mut h = Histogram::new();
        for &(v, c) in &bins {
            for _ in 0..c {
                h.record(v);
            }
        }
        assert_eq!(h.count(), n);
        assert_eq!(
            h.bins().collect::<Vec<_>>(),
            bins,
            "bucket values are fio's keys"
        );
        let ps: Vec<f64> = pcts.iter().map(|p| p.0).collect();
        let want: Vec<u64> = pcts.iter().map(|p| p.1).collect();
        assert_eq!(h.percentiles(&ps), want);
    }

    #[test]
    fn pages_are_allocated_only_for_the_groups_values_land_in() {
        let mut h = Histogram::new();
        assert_eq!(h.page_bytes(), 0, "an unused histogram holds no buckets");
        // 20-40 us: the groups of 2^14 and 2^15 ns.
        for v in (20_000..40_000u64).step_by(7) {
            h.record(v);
        }
        assert_eq!(h.page_bytes(), 2 * 512);
        assert_eq!(h.clone().page_bytes(), 2 * 512, "a copy copies only those");
        let mut big = Histogram::new();
        big.merge(&h);
        assert_eq!((big.page_bytes(), big.count()), (1024, h.count()));
        assert_eq!(big, h);
        // A reset keeps the pages (no allocation at the end of a ramp) and equals a new one.
        big.reset();
        assert_eq!(big.page_bytes(), 1024);
        assert_eq!(big, Histogram::new());
        assert_eq!(big.percentile(50.0), 0);
        assert_eq!(big.bins().count(), 0);
    }

    #[test]
    fn fio_counts_clamp_like_fio() {
        let mut h = Histogram::new();
        for v in [3u64, 1 << 20, 1 << 34, 1 << 40, u64::MAX] {
            h.record(v);
        }
        let mut fio = [0u64; FIO_NBUCKETS];
        h.fio_counts(&mut fio);
        assert_eq!(fio.iter().sum::<u64>(), 5);
        assert_eq!(fio[3], 1);
        assert_eq!(fio[fio_index(1 << 20)], 1);
        assert_eq!(
            fio[FIO_NBUCKETS - 1],
            3,
            "2^34 and above land in fio's last bucket"
        );
    }

    #[test]
    fn bins_sum_to_count_and_ascend() {
        let mut h = Histogram::new();
        for v in [5u64, 5, 700, 701, 1_000_000, 1_000_001, 7_000_000_000] {
            h.record(v);
        }
        let bins: Vec<_> = h.bins().collect();
        assert_eq!(bins.iter().map(|b| b.1).sum::<u64>(), 7);
        assert!(bins.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(bins[0], (5, 2));
    }
}
