//! Periodic bandwidth and IOPS samples of one direction of one job: fio's `bw (KiB/s)` and
//! `iops` rows (stat.c `__add_samples`), optionally forwarded to a log through [`RateSink`].
//!
//! fio's rule, reproduced here: samples are taken at fio's instants, the multiples of
//! `bwavgtime` (resp. `iopsavgtime`) since the start (or the end of the ramp): fio's helper
//! thread wakes on that grid, shortening its next sleep by however late it woke, so its
//! samples do not drift (fio: 500, 1000, 1501 ms; 4 samples on a 2 s run after a ramp, 3
//! without one: the runner does not take the sample due as the run time ends then). A sample's value is
//! the bytes (I/Os) moved since the previous sample times 1000 over the whole milliseconds
//! since it (integer arithmetic; bw further divided by 1024 for KiB/s), like fio's
//! `parent_tv = t`. A window in which nothing completed gives *no* sample, but still restarts
//! the window. No partial sample is taken when the job ends.
//!
//! The runner calls [`RateSampler::tick`] from its own loop right after I/O, as soon as
//! [`RateSampler::next_due_ns`] has passed, so a sample is late only by the I/O that was in
//! flight; the check is one comparison when no window is due.

use crate::model::SampleStat;
use fiox_job::Ddir;

/// Which rate a sample measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKind {
    /// KiB/s.
    Bw,
    /// I/Os per second.
    Iops,
}

/// Receives every rate sample as it is taken (log files implement this).
pub trait RateSink {
    /// `t_ms`: milliseconds since the job's epoch; `bs`: the job's block size for this
    /// direction when fixed, else 0 (fio's bw/iops log column).
    fn rate_sample(&mut self, kind: RateKind, t_ms: u64, ddir: Ddir, value: u64, bs: u64);
}

/// A sink that drops samples (no log requested).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSink;

impl RateSink for NoSink {
    fn rate_sample(&mut self, _: RateKind, _: u64, _: Ddir, _: u64, _: u64) {}
}

#[derive(Debug, Clone)]
struct Window {
    avg_ns: u64,
    /// Origin of the sampling grid (start, or end of the ramp).
    start_ns: u64,
    /// When the previous sample was taken (the rate's time base, fio's `parent_tv`).
    last_ns: u64,
    /// The next grid instant.
    next_ns: u64,
    last_total: u64,
    stat: SampleStat,
}

impl Window {
    fn new(avg_ms: u64, now_ns: u64, total: u64) -> Window {
        let avg_ns = avg_ms.max(1) * 1_000_000;
        Window {
            avg_ns,
            start_ns: now_ns,
            last_ns: now_ns,
            next_ns: now_ns.saturating_add(avg_ns),
            last_total: total,
            stat: SampleStat::default(),
        }
    }

    fn due_ns(&self) -> u64 {
        self.next_ns
    }

    /// Take the sample if the window has elapsed; returns the value if one was recorded.
    fn sample(&mut self, now_ns: u64, total: u64, scale: u64) -> Option<u64> {
        if now_ns < self.next_ns {
            return None;
        }
        let spent_ms = (now_ns - self.last_ns) / 1_000_000;
        let delta = total.saturating_sub(self.last_total);
        self.last_ns = now_ns;
        self.last_total = total;
        // The next grid instant after now: a late sample does not push the later ones back.
        let k = (now_ns - self.start_ns) / self.avg_ns + 1;
        self.next_ns = self.start_ns.saturating_add(k.saturating_mul(self.avg_ns));
        if delta == 0 || spent_ms == 0 {
            return None;
        }
        let rate = (delta as u128 * 1000 / spent_ms as u128 / scale as u128) as u64;
        self.stat.add(rate);
        Some(rate)
    }
}

/// bw and iops sampling of one direction of one job.
#[derive(Debug, Clone)]
pub struct RateSampler {
    ddir: Ddir,
    epoch_ns: u64,
    log_bs: u64,
    bw: Window,
    iops: Window,
    next_due_ns: u64,
}

impl RateSampler {
    /// Start sampling at `now_ns` (the job's start, or ramp end) with windows of `bw_avg_ms`
    /// (`bwavgtime`) and `iops_avg_ms` (`iopsavgtime`); 0 is treated as 1 ms. Times passed to
    /// the sink are relative to `now_ns`. Counters start at zero.
    pub fn new(ddir: Ddir, now_ns: u64, bw_avg_ms: u64, iops_avg_ms: u64) -> RateSampler {
        let bw = Window::new(bw_avg_ms, now_ns, 0);
        let iops = Window::new(iops_avg_ms, now_ns, 0);
        let next_due_ns = bw.due_ns().min(iops.due_ns());
        RateSampler {
            ddir,
            epoch_ns: now_ns,
            log_bs: 0,
            bw,
            iops,
            next_due_ns,
        }
    }

    /// Block size written in the log's bs column (fio: the job's bs when min == max, else 0).
    pub fn with_log_bs(mut self, bs: u64) -> RateSampler {
        self.log_bs = bs;
        self
    }

    /// Time origin of the `t_ms` given to sinks (fio's job epoch).
    pub fn with_epoch(mut self, epoch_ns: u64) -> RateSampler {
        self.epoch_ns = epoch_ns;
        self
    }

    /// Forget all samples and restart both windows at `now_ns` with the given running totals
    /// (end of ramp_time: pass the totals as they are now, or 0 if the runner reset them).
    /// Like fio's `reset_all_stats`, this also moves the epoch: sink times restart from 0.
    pub fn restart(&mut self, now_ns: u64, bytes_total: u64, ios_total: u64) {
        self.epoch_ns = now_ns;
        self.bw = Window::new(self.bw.avg_ns / 1_000_000, now_ns, bytes_total);
        self.iops = Window::new(self.iops.avg_ns / 1_000_000, now_ns, ios_total);
        self.next_due_ns = self.bw.due_ns().min(self.iops.due_ns());
    }

    /// Whether a window has elapsed at `now_ns` (cheap; `tick` checks it itself).
    #[inline]
    pub fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.next_due_ns
    }

    /// When the next sample is due (the earlier of the bw and iops grid instants).
    #[inline]
    pub fn next_due_ns(&self) -> u64 {
        self.next_due_ns
    }

    /// Sample with the direction's running totals (bytes and I/Os completed since the start).
    #[inline]
    pub fn tick(&mut self, now_ns: u64, bytes_total: u64, ios_total: u64) {
        self.tick_into(now_ns, bytes_total, ios_total, &mut NoSink);
    }

    /// As [`RateSampler::tick`], also handing each sample taken to `sink`.
    #[inline]
    pub fn tick_into(
        &mut self,
        now_ns: u64,
        bytes_total: u64,
        ios_total: u64,
        sink: &mut dyn RateSink,
    ) {
        if now_ns < self.next_due_ns {
            return;
        }
        self.sample(now_ns, bytes_total, ios_total, sink);
    }

    fn sample(&mut self, now_ns: u64, bytes: u64, ios: u64, sink: &mut dyn RateSink) {
        let t_ms = now_ns.saturating_sub(self.epoch_ns) / 1_000_000;
        if let Some(v) = self.bw.sample(now_ns, bytes, 1024) {
            sink.rate_sample(RateKind::Bw, t_ms, self.ddir, v, self.log_bs);
        }
        if let Some(v) = self.iops.sample(now_ns, ios, 1) {
            sink.rate_sample(RateKind::Iops, t_ms, self.ddir, v, self.log_bs);
        }
        self.next_due_ns = self.bw.due_ns().min(self.iops.due_ns());
    }

    /// Bandwidth samples so far (KiB/s).
    pub fn bw(&self) -> &SampleStat {
        &self.bw.stat
    }

    /// IOPS samples so far.
    pub fn iops(&self) -> &SampleStat {
        &self.iops.stat
    }

    /// The finished (bw, iops) statistics, for `DirResult::bw` and `DirResult::iops`.
    pub fn into_stats(self) -> (SampleStat, SampleStat) {
        (self.bw.stat, self.iops.stat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[derive(Default)]
    struct Rec(Vec<(RateKind, u64, Ddir, u64, u64)>);
    impl RateSink for Rec {
        fn rate_sample(&mut self, k: RateKind, t: u64, d: Ddir, v: u64, bs: u64) {
            self.0.push((k, t, d, v, bs));
        }
    }

    #[test]
    fn samples_only_after_window_with_fio_arithmetic() {
        let mut s = RateSampler::new(Ddir::Read, 1000 * MS, 500, 500).with_log_bs(4096);
        let mut rec = Rec::default();
        // 499.9 ms: not yet.
        s.tick_into(1000 * MS + 499 * MS + 900_000, 1 << 20, 256, &mut rec);
        assert!(rec.0.is_empty());
        assert!(!s.due(1000 * MS + 499 * MS));
        // 500.7 ms: spent truncates to 500 ms. 1 MiB + 1000 B over 500 ms.
        let bytes = (1 << 20) + 1000;
        s.tick_into(1000 * MS + 500 * MS + 700_000, bytes, 257, &mut rec);
        let bw = bytes * 1000 / 500 / 1024; // fio: delta*1000/spent/1024
        assert_eq!(
            rec.0,
            vec![
                (RateKind::Bw, 500, Ddir::Read, bw, 4096),
                (RateKind::Iops, 500, Ddir::Read, 257 * 1000 / 500, 4096)
            ]
        );
        assert_eq!((s.bw().n, s.bw().min), (1, bw));
        assert_eq!(s.iops().max, 514);
    }

    #[test]
    fn idle_window_gives_no_sample_but_restarts() {
        let mut s = RateSampler::new(Ddir::Write, 0, 100, 100);
        s.tick(100 * MS, 0, 0);
        assert_eq!(s.bw().n, 0, "nothing moved: no sample");
        // Next window starts at 100 ms, so 150 ms is not due even with data.
        s.tick(150 * MS, 4096, 1);
        assert_eq!(s.bw().n, 0);
        s.tick(200 * MS, 4096, 1);
        assert_eq!(s.iops().n, 1);
        assert_eq!(s.iops().min, 10, "1 I/O over 100 ms");
    }

    /// A late sample measures the time since the previous one, but the next stays on the
    /// grid (fio's helper thread shortens its next sleep by its lateness).
    #[test]
    fn late_sample_keeps_the_grid_and_intervals_differ() {
        let mut s = RateSampler::new(Ddir::Read, 0, 100, 300);
        s.tick(130 * MS, 1024 * 130, 13); // late tick: bw window is 130 ms long
        assert_eq!(s.bw().min, 1000 * 1024 * 130 / 130 / 1024);
        assert_eq!(s.iops().n, 0, "iops window is 300 ms");
        assert_eq!(s.next_due_ns(), 200 * MS, "next on the grid, not at 230 ms");
        s.tick(199 * MS, 1024 * 199, 19);
        assert_eq!(s.bw().n, 1, "not due before 200 ms");
        s.tick(200 * MS, 1024 * 200, 20); // 70 ms since 130
        assert_eq!((s.bw().n, s.bw().max), (2, 1000 * 1024 * 70 / 70 / 1024));
        s.tick(300 * MS, 1024 * 300, 30);
        assert_eq!((s.bw().n, s.iops().n), (3, 1));
        assert_eq!(s.iops().min, 100);
        let (bw, iops) = s.into_stats();
        assert_eq!((bw.n, iops.n), (3, 1));
    }

    /// fio's instants on a 2 s run with 500 ms windows, each sample a little late (the I/O in
    /// flight): 4 samples, logged at 500, 1000, 1500, 2000 ms (they drifted to 501, 1002,
    /// 1505 and only 3 fitted in the run).
    #[test]
    fn samples_stay_on_fio_grid() {
        let mut s = RateSampler::new(Ddir::Read, 0, 500, 500);
        let mut rec = Rec::default();
        // An I/O every 0.7 ms, up to the first one ending at or after the 2 s deadline.
        let mut now = 0;
        loop {
            now += 700_000;
            s.tick_into(now, now / 1000, now / 1_000_000, &mut rec);
            if now >= 2000 * MS {
                break;
            }
        }
        let times: Vec<u64> = rec
            .0
            .iter()
            .filter(|r| r.0 == RateKind::Bw)
            .map(|r| r.1)
            .collect();
        assert_eq!(times, [500, 1000, 1500, 2000]);
        assert_eq!(s.bw().n, 4);
    }

    #[test]
    fn restart_forgets_ramp() {
        let mut s = RateSampler::new(Ddir::Read, 0, 100, 100);
        s.tick(100 * MS, 1 << 30, 1000);
        assert_eq!(s.bw().n, 1);
        s.restart(150 * MS, 1 << 30, 1000);
        assert_eq!(s.bw().n, 0);
        let mut rec = Rec::default();
        s.tick_into(250 * MS, (1 << 30) + 102_400, 1025, &mut rec);
        assert_eq!(rec.0[0].1, 100, "log time counts from the ramp's end");
        assert_eq!(
            s.bw().min,
            1000,
            "only post-ramp bytes: 100 KiB over 100 ms"
        );
        assert_eq!(s.iops().min, 250);
    }
}
