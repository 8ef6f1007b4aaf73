//! Pacing: `rate`/`rate_iops` (linear or poisson arrivals) per direction, `rate_min`/
//! `rate_iops_min` checks every `rate_cycle`, and `thinktime`/`thinktime_spin`/
//! `thinktime_blocks`. The pacer only computes when the next I/O may go; the I/O loop waits.

use fiox_job::{JobSpec, RateProcess};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Pacer {
    rate: [u64; 3],
    iops: [u64; 3],
    poisson: bool,
    /// Per direction: when the next I/O may be issued (ns since the pacing epoch).
    next_ns: [u64; 3],
    rng: u64,
    think: Duration,
    think_spin: Duration,
    think_blocks: u32,
    /// `thinktime_blocks_type=issue`: count issued I/Os (else completed ones).
    think_on_issue: bool,
    /// `thinktime_iotime` in ns (0: off), and whether `thinktime_blocks` was given with it.
    iotime_ns: u64,
    blocks_set: bool,
    /// I/Os counted and the time at the last think time (fio's last_thinktime_blocks and
    /// last_thinktime).
    last_think_blocks: u64,
    last_think_ns: u64,
    /// I/Os issued since the pacing epoch (counted by `think_due`).
    issued: u64,
    /// `rate_ignore_thinktime`: the schedule moves on by the time spent thinking.
    ignore_think: bool,
    min_rate: [u64; 3],
    min_iops: [u64; 3],
    cycle_ns: u64,
    cycle_start_ns: u64,
    cycle_bytes: [u64; 3],
    cycle_ios: [u64; 3],
    /// The epoch (job start, end of ramp): fio's 2 s settle time runs from it.
    start_ns: u64,
    /// Bytes done per direction since the epoch: fio checks only directions with some.
    done: [u64; 3],
    /// A cycle after the settle time has set the baseline: the next ones are checked.
    measuring: bool,
}

/// fio's settle time before the minimum rates are checked.
const SETTLE_NS: u64 = 2_000_000_000;

impl Pacer {
    pub fn new(job: &JobSpec) -> Pacer {
        let p = &job.pacing;
        let arr = |v: &fiox_job::PerDir<u64>| [v.read, v.write, v.trim];
        Pacer {
            rate: arr(&p.rate),
            iops: arr(&p.rate_iops),
            poisson: p.rate_process == RateProcess::Poisson,
            next_ns: [0; 3],
            rng: job.rand.randseed | 1,
            think: p.thinktime,
            think_spin: p.thinktime_spin.min(p.thinktime),
            think_blocks: p.thinktime_blocks.max(1),
            think_on_issue: p.thinktime_blocks_issue,
            iotime_ns: p.thinktime_iotime.as_nanos().min(u64::MAX as u128) as u64,
            blocks_set: p.thinktime_blocks_set,
            last_think_blocks: 0,
            last_think_ns: 0,
            issued: 0,
            ignore_think: p.rate_ignore_thinktime,
            min_rate: arr(&p.rate_min),
            min_iops: arr(&p.rate_iops_min),
            cycle_ns: p.rate_cycle.as_nanos().max(1) as u64,
            cycle_start_ns: 0,
            cycle_bytes: [0; 3],
            cycle_ios: [0; 3],
            start_ns: 0,
            done: [0; 3],
            measuring: false,
        }
    }

    /// Whether this pacer ever delays or checks anything (so the loop can skip it).
    pub fn active(&self) -> bool {
        self.rate.iter().chain(&self.iops).any(|&r| r > 0)
            || !self.think.is_zero()
            || self.min_rate.iter().chain(&self.min_iops).any(|&r| r > 0)
    }

    /// Restart the epoch at `now_ns` (job start, end of ramp).
    pub fn restart(&mut self, now_ns: u64) {
        self.next_ns = [now_ns; 3];
        // The I/O counts restart too (the end of ramp resets them).
        self.last_think_blocks = 0;
        self.last_think_ns = now_ns;
        self.issued = 0;
        self.cycle_start_ns = now_ns;
        self.cycle_bytes = [0; 3];
        self.cycle_ios = [0; 3];
        self.start_ns = now_ns;
        self.done = [0; 3];
        self.measuring = false;
    }

    fn uniform(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        ((self.rng >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// fio's `rate_ddir` for mixed jobs: when the direction the mix chose is ahead of its rate
    /// and the other one is not, issue the other one.
    pub fn pick(&self, chosen: usize, now_ns: u64) -> usize {
        let other = match chosen {
            0 => 1,
            1 => 0,
            _ => return chosen,
        };
        let limited = |d: usize| self.rate[d] > 0 || self.iops[d] > 0;
        if limited(chosen) && self.next_ns[chosen] > now_ns && self.next_ns[other] <= now_ns {
            other
        } else {
            chosen
        }
    }

    /// The time (ns since epoch) at which an I/O of `len` bytes in direction `d` may start;
    /// books the I/O against the rate.
    pub fn admit(&mut self, d: usize, len: u64, now_ns: u64) -> u64 {
        let mut gap = 0f64;
        if self.rate[d] > 0 {
            gap = gap.max(len as f64 * 1e9 / self.rate[d] as f64);
        }
        if self.iops[d] > 0 {
            gap = gap.max(1e9 / self.iops[d] as f64);
        }
        if gap == 0.0 {
            return now_ns;
        }
        if self.poisson {
            // Exponential inter-arrival times with the same mean.
            gap *= -self.uniform().ln();
            // fio's usec_for_io line: the rate this gap stands for, in whole µs.
            if let Some(iops) = 1_000_000u64.checked_div((gap / 1000.0) as u64) {
                crate::dprint!(crate::debug::RATE, "poisson rate iops={iops}, ddir={d}");
            }
        }
        let at = self.next_ns[d].max(now_ns.saturating_sub(self.cycle_ns));
        self.next_ns[d] = at + gap as u64;
        at
    }

    /// An engine's own thinktime (cpuio): `think` after every I/O, all of it asleep, as fio's
    /// cpuio sets thinktime, thinktime_blocks=1 and thinktime_spin=0.
    pub fn engine_think(&mut self, think: Duration) {
        self.think = think;
        self.think_spin = Duration::ZERO;
        self.think_blocks = 1;
    }

    /// fio's `handle_thinktime` test, before an I/O is issued with `completed` I/Os done so
    /// far: is a think time due now? Returns how long to spin and then sleep.
    pub fn think_due(&mut self, completed: u64, now_ns: u64) -> Option<(Duration, Duration)> {
        if self.think.is_zero() {
            return None;
        }
        // Checked before each issue: the I/Os issued before this one (fio checks after).
        let issued = self.issued;
        self.issued += 1;
        let mut stall = false;
        if self.iotime_ns > 0 {
            let cycle = self.iotime_ns.saturating_add(self.think.as_nanos() as u64);
            if now_ns.saturating_sub(self.last_think_ns) >= cycle {
                stall = true;
            } else if !self.blocks_set {
                // fio: the default thinktime_blocks=1 does not apply with thinktime_iotime.
                return None;
            }
        }
        let b = if self.think_on_issue {
            issued
        } else {
            completed
        };
        if b >= self.last_think_blocks + self.think_blocks as u64 {
            stall = true;
        }
        if !stall {
            return None;
        }
        self.last_think_blocks = b;
        if self.iotime_ns > 0 {
            self.last_think_ns = now_ns;
        }
        Some((self.think_spin, self.think - self.think_spin))
    }

    /// After a think time of `spent` before an I/O in direction `d`: with
    /// `rate_ignore_thinktime`, the rate schedule moves on by it, so the job does not issue
    /// faster afterwards to make it up (fio counts the bytes it would have done meanwhile).
    pub fn thought(&mut self, d: usize, spent: Duration) {
        if self.ignore_think && d < 3 && (self.rate[d] > 0 || self.iops[d] > 0) {
            self.next_ns[d] = self.next_ns[d].saturating_add(spent.as_nanos() as u64);
        }
    }

    /// Account completed bytes; at the end of each `rate_cycle` check `rate_min`/`rate_iops_min`
    /// and describe the shortfall. As fio: nothing is checked in the first 2 s (settle time),
    /// the first cycle after it sets the baseline, and only directions the job has done I/O
    /// in are checked (a single-value `ratemin` on a read job says nothing of writes).
    pub fn check_min(&mut self, d: usize, bytes: u64, now_ns: u64) -> Option<String> {
        self.cycle_bytes[d] += bytes;
        self.cycle_ios[d] += 1;
        self.done[d] += bytes;
        let spent = now_ns.saturating_sub(self.cycle_start_ns);
        if spent < self.cycle_ns {
            return None;
        }
        let settled = now_ns.saturating_sub(self.start_ns) >= SETTLE_NS;
        let check = settled && self.measuring;
        self.measuring = settled;
        let mut msg = None;
        for i in (0..3).filter(|&i| check && self.done[i] > 0) {
            let bw = self.cycle_bytes[i] as u128 * 1_000_000_000 / spent as u128;
            let iops = self.cycle_ios[i] as u128 * 1_000_000_000 / spent as u128;
            if self.min_rate[i] > 0 && bw < self.min_rate[i] as u128 {
                msg = Some(format!(
                    "min rate {} B/s not met: only {bw} B/s over the last {} ms",
                    self.min_rate[i],
                    spent / 1_000_000
                ));
            } else if self.min_iops[i] > 0 && iops < self.min_iops[i] as u128 {
                msg = Some(format!(
                    "min rate {} IOPS not met: only {iops} IOPS over the last {} ms",
                    self.min_iops[i],
                    spent / 1_000_000
                ));
            }
        }
        self.cycle_start_ns = now_ns;
        self.cycle_bytes = [0; 3];
        self.cycle_ios = [0; 3];
        msg
    }
}

/// Longest single sleep: a stop (Ctrl-C, SIGTERM, exitall) is seen within this long, however
/// long the thinktime or rate wait.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Wait until `until` (spinning for the last stretch, which sleep cannot hit precisely), or
/// until `stop` is set. Returns false when stopped early.
pub fn wait_until(until: Instant, stop: &AtomicBool) -> bool {
    wait_until_or(until, stop, None)
}

/// [`wait_until`] that also ends (false) when `also` is set: a job's terminate flag
/// (exitall, exit_what, steady state), which ends a rate wait as it ends fio's.
pub fn wait_until_or(until: Instant, stop: &AtomicBool, also: Option<&AtomicBool>) -> bool {
    const SPIN: Duration = Duration::from_micros(60);
    loop {
        if stop.load(Ordering::Relaxed) || also.is_some_and(|a| a.load(Ordering::Relaxed)) {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        let left = until - now;
        if left > SPIN {
            std::thread::sleep((left - SPIN).min(STOP_POLL));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Busy-wait `d` (thinktime_spin: burn CPU as the application would), or until `stop`.
pub fn spin_for(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    let mut n = 0u32;
    while Instant::now() < end {
        n = n.wrapping_add(1);
        if n.is_multiple_of(1024) && stop.load(Ordering::Relaxed) {
            return;
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_rate_spaces_ios() {
        let mut j = JobSpec::default();
        j.pacing.rate_iops.read = 1000;
        let mut p = Pacer::new(&j);
        assert!(p.active());
        p.restart(0);
        assert_eq!(p.admit(0, 4096, 0), 0);
        assert_eq!(p.admit(0, 4096, 0), 1_000_000);
        assert_eq!(p.admit(0, 4096, 0), 2_000_000);
    }

    #[test]
    fn mixed_job_switches_to_the_direction_behind_its_rate() {
        let mut j = JobSpec::default();
        j.pacing.rate_iops.read = 1000;
        j.pacing.rate_iops.write = 1000;
        let mut p = Pacer::new(&j);
        p.restart(0);
        p.admit(0, 4096, 0);
        // Reads are booked until 1 ms; writes may go now.
        assert_eq!(p.pick(0, 10), 1);
        assert_eq!(p.pick(1, 10), 1);
        assert_eq!(p.pick(0, 2_000_000), 0);
    }

    #[test]
    fn poisson_keeps_the_mean() {
        let mut j = JobSpec::default();
        j.pacing.rate_iops.read = 1000;
        j.pacing.rate_process = RateProcess::Poisson;
        let mut p = Pacer::new(&j);
        p.restart(0);
        let mut last = 0;
        for _ in 0..20_000 {
            last = p.admit(0, 4096, 0);
        }
        let mean = last as f64 / 20_000.0;
        assert!((mean - 1e6).abs() < 5e4, "{mean}");
    }

    #[test]
    fn thinktime_every_n_completed_blocks() {
        let mut j = JobSpec::default();
        j.pacing.thinktime = Duration::from_micros(100);
        j.pacing.thinktime_blocks = 2;
        let mut p = Pacer::new(&j);
        p.restart(0);
        assert!(p.think_due(0, 0).is_none());
        // Issued I/Os do not count by default, completed ones do.
        assert!(p.think_due(1, 0).is_none());
        assert_eq!(
            p.think_due(2, 0),
            Some((Duration::ZERO, Duration::from_micros(100)))
        );
        assert!(p.think_due(3, 0).is_none());
        assert!(p.think_due(4, 0).is_some());
    }

    #[test]
    fn thinktime_blocks_type_issue_counts_issued_ios() {
        let mut j = JobSpec::default();
        j.pacing.thinktime = Duration::from_micros(100);
        j.pacing.thinktime_blocks = 2;
        j.pacing.thinktime_blocks_issue = true;
        let mut p = Pacer::new(&j);
        p.restart(0);
        // Nothing completes (a deep queue): issues alone trigger it, after every 2nd.
        let due: Vec<bool> = (0..5).map(|_| p.think_due(0, 0).is_some()).collect();
        assert_eq!(due, [false, false, true, false, true]);
    }

    #[test]
    fn thinktime_iotime_thinks_after_that_much_io() {
        let mut j = JobSpec::default();
        j.pacing.thinktime = Duration::from_millis(1);
        j.pacing.thinktime_iotime = Duration::from_millis(9);
        let mut p = Pacer::new(&j);
        p.restart(0);
        // The default thinktime_blocks=1 is ignored: no think for 10 ms, whatever completes.
        assert!(p.think_due(100, 5_000_000).is_none());
        assert!(p.think_due(200, 9_999_999).is_none());
        assert!(p.think_due(300, 10_000_000).is_some());
        assert!(p.think_due(400, 15_000_000).is_none());
        assert!(p.think_due(500, 20_000_000).is_some());
        // With thinktime_blocks given as well, whichever comes first.
        j.pacing.thinktime_blocks = 10;
        j.pacing.thinktime_blocks_set = true;
        let mut p = Pacer::new(&j);
        p.restart(0);
        assert!(p.think_due(9, 1_000).is_none());
        assert!(p.think_due(10, 2_000).is_some());
        assert!(p.think_due(11, 10_002_000).is_some());
    }

    #[test]
    fn rate_ignore_thinktime_moves_the_schedule_on() {
        let mut j = JobSpec::default();
        j.pacing.rate_iops.read = 1000;
        j.pacing.thinktime = Duration::from_millis(100);
        let mut p = Pacer::new(&j);
        p.restart(0);
        assert_eq!(p.admit(0, 4096, 0), 0);
        // Default: after 100 ms of thinking the next I/Os catch up (due in the past).
        p.thought(0, Duration::from_millis(100));
        assert_eq!(p.admit(0, 4096, 100_000_000), 1_000_000);
        j.pacing.rate_ignore_thinktime = true;
        let mut p = Pacer::new(&j);
        p.restart(0);
        assert_eq!(p.admit(0, 4096, 0), 0);
        p.thought(0, Duration::from_millis(100));
        // The schedule moved by the think time: the next I/O is due 1 ms after it.
        assert_eq!(p.admit(0, 4096, 100_000_000), 101_000_000);
    }

    #[test]
    fn rate_min_shortfall_is_reported() {
        let mut j = JobSpec::default();
        j.pacing.rate_min.read = 1 << 20;
        let mut p = Pacer::new(&j);
        p.restart(0);
        // Settle time, then a baseline cycle: nothing checked yet.
        assert!(p.check_min(0, 4096, 1_000_000_000).is_none());
        assert!(p.check_min(0, 4096, 2_500_000_000).is_none());
        let m = p.check_min(0, 4096, 3_500_000_000).unwrap();
        assert!(m.contains("not met"), "{m}");
    }

    #[test]
    fn rate_min_is_checked_only_in_directions_the_job_does() {
        let mut j = JobSpec::default();
        j.pacing.rate_min = fiox_job::PerDir {
            read: 4096,
            write: 4096,
            trim: 4096,
        };
        let mut p = Pacer::new(&j);
        p.restart(0);
        for s in 1..10u64 {
            // 8 KiB/s of reads, no writes or trims.
            assert_eq!(p.check_min(0, 8192, s * 1_000_000_000), None, "{s} s");
        }
    }
}
