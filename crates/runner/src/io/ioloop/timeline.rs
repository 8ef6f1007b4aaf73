//! The job's timeline: stop flags and status requests, runtime and ramp (`ramp_time`,
//! `ramp_size`), bandwidth/IOPS sampling and log epochs, live progress and status snapshots, the
//! job's CPU use.

use super::*;
use crate::io::acct::JobState;
use fiox_job::Ddir;
use fiox_stats::RateSampler;
use std::sync::atomic::Ordering;

impl<'a> IoLoop<'a> {
    /// The stop flags: a signal or exitall (false: the job ends), steady state's terminate.
    #[inline(always)]
    pub(super) fn poll_stop(&mut self) -> bool {
        if self.ctl.stop.load(Ordering::Relaxed) {
            self.end.get_or_insert(EndReason::Stopped);
            return false;
        }
        if self.ctl.progress.terminate.load(Ordering::Relaxed) && !self.check.verify_phase {
            // Steady state attained: the job ends as fio's terminated job does.
            self.end.get_or_insert(EndReason::Time);
            return false;
        }
        true
    }

    /// `after_io` once `next_event_ns` is reached: the stop flags, then the time checks; then
    /// the next time any of them is due. False: the job was stopped.
    #[inline(never)]
    pub(super) fn timed_checks(&mut self, now: u64) -> bool {
        if !self.poll_stop() {
            return false;
        }
        self.publish_progress();
        self.time_checks(now);
        self.time.next_event_ns = self.next_event(now);
        true
    }

    /// The earliest time a check of `after_io` is due after one at `now`: the stop flags and
    /// status requests are polled every [`POLL_NS`] (every I/O on a wall clock, which may step
    /// back), the deadline, the ramp's end (every I/O for ramp_size) and the next bw/iops
    /// sample exactly when they are due, as when each was compared per I/O.
    pub(super) fn next_event(&self, now: u64) -> u64 {
        let poll = self.time.next_poll(now);
        let ramp = match (
            self.time.ramp_done,
            self.time.limits.ramp_ns,
            self.time.limits.ramp_bytes,
        ) {
            (true, _, _) => u64::MAX,
            (false, Some(r), _) => r,
            (false, None, Some(_)) => 0,
            (false, None, None) => u64::MAX,
        };
        let sample = if self.time.measure.bw {
            self.obs.next_sample_ns
        } else {
            u64::MAX
        };
        poll.min(ramp)
            .min(sample)
            .min(self.time.limits.deadline_ns.unwrap_or(u64::MAX))
    }

    /// `after_io` without per-I/O clocks (gtod_reduce): the stop flags every I/O, the clock
    /// and the time checks every `clock_stride` completions: up to 64 fast ones,
    /// fewer when they are slow (see [`next_stride`]). False: nothing more to check (or
    /// stopped).
    #[inline(always)]
    pub(super) fn untimed_checks(&mut self) -> bool {
        if !self.poll_stop() {
            return false;
        }
        self.time.ios_since_clock += 1;
        if self.time.ios_since_clock < self.time.clock_stride {
            return false;
        }
        let n = self.time.ios_since_clock;
        self.time.ios_since_clock = 0;
        let now = self.now_ns();
        self.time.clock_stride = next_stride(now.saturating_sub(self.time.last_clock_ns), n);
        self.time.last_clock_ns = now;
        self.time_checks(now);
        true
    }

    /// The live counters of the ETA line, steady state and group ramps (`Progress`).
    pub(super) fn publish_progress(&mut self) {
        for (i, d) in self.acct.dirs.iter().enumerate() {
            self.ctl.progress.bytes[i].store(d.io_bytes, Ordering::Relaxed);
            self.ctl.progress.ios[i].store(d.total_ios, Ordering::Relaxed);
        }
    }

    /// The deadline, the ramp's end, a requested status snapshot and the bw/iops samples.
    pub(super) fn time_checks(&mut self, now: u64) {
        // The ramp's reset and a snapshot read the lean loop's marks.
        self.flush_plain();
        if let Some(dl) = self.time.limits.deadline_ns {
            if now >= dl {
                self.end.get_or_insert(EndReason::Time);
            }
        }
        if !self.time.ramp_done {
            self.check_ramp(now);
        }
        if self.obs.status_template.is_some() && self.ctl.progress.snap_req.load(Ordering::Relaxed)
        {
            self.publish_snapshot(now);
        }
        // Without a ramp, a sample due as the run time ends is not taken, as in fio 3.33 (a
        // 2 s job has 3 samples, at 500, 1000 and 1500 ms: fio's job is over when its helper
        // thread looks); after a ramp both clocks restart together and fio takes it (4).
        let at_end = self.end == Some(EndReason::Time) && self.time.limits.ramp_ns.is_none();
        if self.time.measure.bw && now >= self.obs.next_sample_ns && !at_end {
            self.sample(now);
        }
    }

    /// `log_unix_epoch`/`log_alternate_epoch`: the logs' times count from the clock's time at
    /// the job's epoch (its start, then the end of ramp), as fio's set_epoch_time. A clock the
    /// kernel does not know ends the job (fio would log garbage times).
    pub(super) fn set_log_epoch(&mut self) {
        if let Some(id) = self.job.logs.job_start_clock_id {
            // fio's set_epoch_time records job_start at the same moments.
            match crate::sys::clock_ms(id) {
                Ok(ms) => self.time.job_start_ms = Some(ms),
                Err(e) => {
                    let msg = format!("job_start_clock_id={id}: clock_gettime: {e}");
                    self.end.get_or_insert(EndReason::Error(libc::EINVAL, msg));
                }
            }
        }
        let l = &self.job.logs;
        if !(l.log_unix_epoch || l.log_alternate_epoch) {
            return;
        }
        let id = l.log_epoch_clock_id;
        match crate::sys::clock_ms(id) {
            Ok(ms) => {
                let since = self.now_ns().saturating_sub(self.time.measured_start_ns) / 1_000_000;
                self.obs.logs.set_epoch_ms(ms.saturating_sub(since));
            }
            Err(e) => {
                let msg = format!("log_alternate_epoch_clock_id={id}: clock_gettime: {e}");
                self.end.get_or_insert(EndReason::Error(libc::EINVAL, msg));
            }
        }
    }

    /// Whether `ramp_size` bytes were transferred: by this job, or with group_reporting by
    /// the jobs of its group still ramping (fio's ramp_period_check).
    pub(super) fn ramp_bytes_over(&self, want: u64) -> bool {
        if let Some(group) = self.time.ramp_group.as_ref() {
            let (bytes, ended) = group();
            return ended || bytes >= want;
        }
        let own: u64 = self.acct.dirs.iter().map(|d| d.io_bytes).sum();
        own >= want
    }

    pub(super) fn check_ramp(&mut self, now: u64) {
        let over = match (self.time.limits.ramp_ns, self.time.limits.ramp_bytes) {
            (Some(r), _) => now >= r,
            (None, Some(b)) => self.ramp_bytes_over(b),
            (None, None) => false,
        };
        if !over {
            return;
        }
        self.time.ramp_done = true;
        self.acct.reset();
        if let Some(w) = self.per_io.win_lat.as_mut() {
            w.reset();
        }
        // New samplers: their epoch (log time zero) is the end of the ramp.
        let w = self.obs.windows;
        for (i, s) in self.obs.samplers.iter_mut().enumerate() {
            if s.is_some() {
                *s = Some(RateSampler::new(Ddir::ALL[i], now, w.bw_ms, w.iops_ms));
            }
        }
        self.obs.next_sample_ns = 0;
        self.time.pacer.restart(now);
        self.time.measured_start_ns = now;
        self.set_log_epoch();
        self.gen.ramp_over();
        // Requests drawn ahead before the ramp's end are issued after it: they count there.
        self.gen.recount(self.q.ahead());
        if let Some(rt) = self.time.limits.runtime_ns {
            self.time.limits.deadline_ns = Some(now + rt);
        }
        self.time.cpu_start = self.cpu_usage();
        self.ctl.progress.set_state(JobState::Running);
    }

    /// CPU counters of the job: its thread plus the engine's helper threads.
    pub fn cpu_usage(&self) -> fiox_stats::sys::ThreadUsage {
        crate::sys::job_usage(&self.time.helpers)
    }

    /// Threads whose CPU the job's counters add up: its own and the engine's helpers.
    pub fn cpu_threads(&self) -> usize {
        1 + self.time.helpers.len()
    }

    /// Publish what was measured so far for a status report.
    pub(super) fn publish_snapshot(&mut self, now: u64) {
        let Some(t) = self.obs.status_template.as_ref() else {
            return;
        };
        let mut r = (**t).clone();
        let cpu = self.cpu_usage().since(&self.time.cpu_start);
        crate::io::result::fill_result(&mut r, self, now, cpu, self.time.measure);
        for (i, s) in self.obs.samplers.iter().enumerate() {
            if let Some(s) = s {
                let d = r.dirs.get_mut(Ddir::ALL[i]);
                d.bw = s.bw().clone();
                d.iops = s.iops().clone();
            }
        }
        if let Ok(mut g) = self.ctl.progress.snapshot.lock() {
            *g = Some(r);
        }
        self.ctl.progress.snap_req.store(false, Ordering::Relaxed);
    }

    /// Feed the bw/iops samplers. They keep fio's sampling grid themselves; the loop asks
    /// them when the earliest is due, so the per-I/O cost is a single comparison and a sample
    /// is late only by the I/O that was in flight.
    pub(super) fn sample(&mut self, now: u64) {
        let mut next = u64::MAX;
        for (i, s) in self.obs.samplers.iter_mut().enumerate() {
            if let Some(s) = s {
                let d = &self.acct.dirs[i];
                s.tick_into(now, d.io_bytes, d.total_ios, &mut self.obs.logs);
                next = next.min(s.next_due_ns());
            }
        }
        self.obs.next_sample_ns = next;
    }

    /// The bw/iops statistics per direction (consumes the samplers).
    pub fn take_rates(&mut self) -> [Option<(fiox_stats::SampleStat, fiox_stats::SampleStat)>; 3] {
        std::mem::take(&mut self.obs.samplers).map(|s| s.map(RateSampler::into_stats))
    }
}

/// The I/O time one stride of completions should span without per-I/O clocks: a run time
/// or a sample is then late by about this much at most, not by 64 slow I/Os (a pmemblk
/// job's 1 MiB writes, 256 library calls each, take 0.1-0.2 s apiece on a file: 64 of them
/// ran a 1 s job for 14 s).
const STRIDE_SPAN_NS: u64 = 1_000_000;

/// How many completions to the next clock read, given that the last `n` took `span_ns`: as
/// many as fit in [`STRIDE_SPAN_NS`], between 1 and 64.
pub(super) fn next_stride(span_ns: u64, n: u32) -> u32 {
    let per_io = span_ns / u64::from(n.max(1));
    (STRIDE_SPAN_NS / per_io.max(1)).clamp(1, 64) as u32
}

#[cfg(test)]
mod tests {
    use super::next_stride;

    #[test]
    fn the_clock_is_read_as_often_as_slow_io_needs() {
        // Fast I/O (1 us each): every 64 completions, as before.
        assert_eq!(next_stride(64_000, 64), 64);
        // 0.2 s per I/O (pmemblk's 1 MiB writes on a file): every completion.
        assert_eq!(next_stride(12_800_000_000, 64), 1);
        // 100 us per I/O: 10 of them in a millisecond.
        assert_eq!(next_stride(100_000, 1), 10);
        // The first read (no earlier one) and a clock that did not move stay in range.
        assert_eq!(next_stride(u64::MAX, 1), 1);
        assert_eq!(next_stride(0, 0), 64);
    }
}
