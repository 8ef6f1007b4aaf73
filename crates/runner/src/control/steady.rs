//! fio's steady state detection (steadystate.c): once a second the status thread takes each
//! job's IOPS and bandwidth since the last look (summed over a `group_reporting` group), keeps
//! the last `ss_dur` samples in a ring, and judges the criterion on a full ring: the largest
//! deviation from the mean (`iops`, `bw`) or the least-squares slope (`iops_slope`,
//! `bw_slope`), absolute or as a percentage of the mean. When it holds, the job (or the whole
//! group) stops, as fio's `fio_mark_td_terminate` stops it. The same integer sums and rates as
//! fio's, so the JSON `steadystate` section reads the same.

use fiox_job::{JobSpec, SsCriterion, SteadySpec};
use fiox_stats::model::SteadyResult;

/// The ring and sums of one job that holds steady state data.
#[derive(Debug, Clone)]
pub struct Tracker {
    spec: SteadySpec,
    dur: usize,
    head: usize,
    tail: usize,
    full: bool,
    pub attained: bool,
    bw: Vec<u64>,
    iops: Vec<u64>,
    sum_y: u64,
    sum_xy: u64,
    sum_x: u64,
    sum_x_sq: u64,
    oldest_y: u64,
    slope: f64,
    deviation: f64,
    criterion: f64,
}

impl Tracker {
    pub fn new(spec: SteadySpec) -> Tracker {
        // One sample per interval (fio: ss_dur / (ss_check_interval in whole seconds)).
        let dur = (spec.dur_s / interval_s(&spec)).max(1) as usize;
        let d = dur as u64;
        Tracker {
            spec,
            dur,
            head: 0,
            tail: 0,
            full: false,
            attained: false,
            bw: vec![0; dur],
            iops: vec![0; dur],
            sum_y: 0,
            sum_xy: 0,
            sum_x: d * (d - 1) / 2,
            sum_x_sq: (d - 1) * d * (2 * d - 1) / 6,
            oldest_y: 0,
            slope: 0.0,
            deviation: 0.0,
            criterion: 0.0,
        }
    }

    fn by_iops(&self) -> bool {
        self.spec.criterion == SsCriterion::Iops
    }

    fn data(&self, i: usize) -> u64 {
        if self.by_iops() {
            self.iops[i]
        } else {
            self.bw[i]
        }
    }

    /// One second's sample; true when steady state is attained.
    pub fn add(&mut self, iops: u64, bw: u64) -> bool {
        self.bw[self.tail] = bw;
        self.iops[self.tail] = iops;
        let hit = if self.full || self.tail.wrapping_sub(self.head) == self.dur - 1 {
            self.update_sums(if self.by_iops() { iops } else { bw });
            self.oldest_y = self.data(self.head);
            self.judge()
        } else {
            false
        };
        if hit {
            self.attained = true;
            return true;
        }
        self.tail = (self.tail + 1) % self.dur;
        if self.tail <= self.head {
            self.head = (self.head + 1) % self.dur;
        }
        false
    }

    /// fio's running sums (wrapping u64 arithmetic, as fio's unsigned sums).
    fn update_sums(&mut self, new_val: u64) {
        if !self.full {
            self.sum_y = 0;
            for i in 0..self.dur {
                self.sum_y += self.data(i);
                let j = (self.head + i) % self.dur;
                if self.spec.slope {
                    self.sum_xy = self.sum_xy.wrapping_add(i as u64 * self.data(j));
                }
            }
            self.full = true;
        } else {
            self.sum_y = self.sum_y.wrapping_sub(self.oldest_y).wrapping_add(new_val);
            if self.spec.slope {
                self.sum_xy = self
                    .sum_xy
                    .wrapping_sub(self.sum_y)
                    .wrapping_add(self.dur as u64 * new_val);
            }
        }
    }

    fn judge(&mut self) -> bool {
        let n = self.dur as f64;
        let mean_int = self.sum_y / self.dur as u64;
        if self.spec.slope {
            let (sx, sy) = (self.sum_x as f64, self.sum_y as f64);
            self.slope = (self.sum_xy as f64 - sx * sy / n) / (self.sum_x_sq as f64 - sx * sx / n);
            self.criterion = if self.spec.pct {
                // fio divides by the integer mean.
                100.0 * self.slope / mean_int as f64
            } else {
                self.slope
            };
            crate::dprint!(
                crate::debug::STEADYSTATE,
                "sum_y: {}, sum_xy: {}, slope: {:.6}, criterion: {:.6}, limit: {:.6}",
                self.sum_y,
                self.sum_xy,
                self.slope,
                self.criterion,
                self.spec.limit
            );
            return self.criterion.abs() < self.spec.limit;
        }
        let mean = self.sum_y as f64 / n;
        self.deviation = (0..self.dur)
            .map(|i| (self.data(i) as f64 - mean).abs())
            .fold(0.0, f64::max);
        self.criterion = if self.spec.pct {
            100.0 * self.deviation / mean
        } else {
            self.deviation
        };
        crate::dprint!(
            crate::debug::STEADYSTATE,
            "sum_y: {}, mean: {mean:.6}, max diff: {:.6}, objective: {:.6}, limit: {:.6}",
            self.sum_y,
            self.deviation,
            self.criterion,
            self.spec.limit
        );
        self.criterion < self.spec.limit
    }

    /// The report's `steadystate` section.
    pub fn result(&self) -> SteadyResult {
        let s = &self.spec;
        let start = if self.attained || !self.full {
            self.head
        } else if self.head == 0 {
            self.dur - 1
        } else {
            self.head - 1
        };
        let order: Vec<usize> = (0..self.dur).map(|l| (start + l) % self.dur).collect();
        let n = self.dur as u64;
        SteadyResult {
            // fio prints ss_dur in seconds, the arrays hold one sample per interval.
            iops: s.criterion == SsCriterion::Iops,
            slope: s.slope,
            pct: s.pct,
            limit: s.limit,
            duration: s.dur_s.max(1),
            attained: self.attained,
            criterion: self.criterion,
            max_deviation: self.deviation,
            slope_value: self.slope,
            bw: order.iter().map(|&k| self.bw[k]).collect(),
            iops_data: order.iter().map(|&k| self.iops[k]).collect(),
            bw_mean: self.bw.iter().sum::<u64>() / n,
            iops_mean: self.iops.iter().sum::<u64>() / n,
        }
    }
}

/// The sampling interval in whole seconds (fio's `ss_check_interval / 1000`), at least 1.
fn interval_s(spec: &SteadySpec) -> u64 {
    spec.interval_us.map_or(1, |us| us / 1_000_000).max(1)
}

/// The sampling interval in ms: what the status thread waits between looks.
pub fn interval_ms(jobs: &[JobSpec]) -> u64 {
    jobs.iter()
        .find_map(|j| j.steadystate.interval_us)
        .map_or(1000, |us| (us / 1000).max(1000))
}

/// fio 3.42's checks of ss_interval (init.c): the same in every job, at least 1s with ss_dur,
/// and ss_dur a multiple of it and longer (only where a job sets it: fio 3.33 has none of
/// these checks). The message of the first problem.
pub fn interval_problem(jobs: &[JobSpec]) -> Option<String> {
    let us = |j: &JobSpec| j.steadystate.interval_us.unwrap_or(1_000_000);
    if let Some(j) = jobs.iter().find(|j| us(j) != us(&jobs[0])) {
        return Some(format!(
            "conflicting ss_check_interval: {} and {}, must be globally equal (fio says the \
             same); give every job the same steadystate_check_interval",
            us(&jobs[0]),
            us(j)
        ));
    }
    // fio 3.33 has no ss_interval and checks nothing: a job that does not set it (written for
    // 3.33) runs as there, `ss_dur=1s` included.
    let explicit = |j: &&JobSpec| j.steadystate.dur_s > 0 && j.steadystate.interval_us.is_some();
    for j in jobs.iter().filter(explicit) {
        let (dur_us, i) = (j.steadystate.dur_s * 1_000_000, us(j));
        if i < 1_000_000 {
            return Some("ss_check_interval must be at least 1s (fio says the same)".into());
        }
        if dur_us % i != 0 || dur_us <= i {
            return Some(format!(
                "ss_duration {dur_us}us must be multiple of ss_check_interval {i}us (fio says \
                 the same)"
            ));
        }
    }
    None
}

/// Per job: its tracker (on the jobs that hold data), the last totals and look, ramp state.
#[derive(Debug, Clone)]
pub struct JobSs {
    pub tracker: Option<Tracker>,
    prev_ios: u64,
    prev_bytes: u64,
    prev_ms: Option<u64>,
    ramp_over: bool,
}

/// Trackers for every job with `ss_dur`: each job's own, or with group_reporting only the
/// group's last job's (fio's `steadystate_setup`).
pub fn setup(jobs: &[JobSpec]) -> Vec<Option<JobSs>> {
    jobs.iter()
        .enumerate()
        .map(|(i, j)| {
            (j.steadystate.dur_s > 0).then(|| {
                let last_of_group = !jobs
                    .get(i + 1)
                    .is_some_and(|n| n.group_id == j.group_id && n.stats.group_reporting);
                let holds = !j.stats.group_reporting || last_of_group;
                JobSs {
                    tracker: holds.then(|| Tracker::new(j.steadystate)),
                    prev_ios: 0,
                    prev_bytes: 0,
                    prev_ms: None,
                    ramp_over: j.steadystate.ramp_us == 0,
                }
            })
        })
        .collect()
}

/// What the status thread knows about a running job at a look.
pub struct Look {
    pub running: bool,
    /// Microseconds since the job started.
    pub since_start_us: u64,
    /// When the job started, on the `now_ms` clock (its first rate is measured from there).
    pub start_ms: u64,
    pub ios: u64,
    pub bytes: u64,
}

/// fio's `steadystate_check` over all jobs at monotonic time `now_ms`; returns the jobs to
/// stop.
pub fn check(
    jobs: &[JobSpec],
    ss: &mut [Option<JobSs>],
    looks: &[Look],
    now_ms: u64,
) -> Vec<usize> {
    let mut stop = Vec::new();
    let (mut group_bw, mut group_iops, mut group_ramp_over) = (0u64, 0u64, 0u32);
    let mut prev_group: Option<u32> = None;
    for (i, job) in jobs.iter().enumerate() {
        let Some(s) = ss[i].as_mut() else { continue };
        if !looks[i].running || s.tracker.as_ref().is_some_and(|t| t.attained) {
            continue;
        }
        if !job.stats.group_reporting || prev_group != Some(job.group_id) {
            (group_bw, group_iops, group_ramp_over) = (0, 0, 0);
        }
        prev_group = Some(job.group_id);
        let iv_us = job.steadystate.interval_us.unwrap_or(1_000_000);
        if !s.ramp_over && looks[i].since_start_us >= job.steadystate.ramp_us + iv_us {
            s.ramp_over = true;
        }
        // The first look measures from the job's start.
        let rate_ms = now_ms
            .saturating_sub(s.prev_ms.unwrap_or(looks[i].start_ms))
            .max(1);
        s.prev_ms = Some(now_ms);
        if s.ramp_over {
            let (db, di) = (
                looks[i].bytes.saturating_sub(s.prev_bytes),
                looks[i].ios.saturating_sub(s.prev_ios),
            );
            match job.steadystate.interval_us {
                // fio 3.42: rate_time * delta / (interval * interval / 1000), interval in ms.
                Some(us) => {
                    let iv = (us / 1000).max(1);
                    let div = (iv * iv / 1000).max(1);
                    group_bw += rate_ms.saturating_mul(db) / div;
                    group_iops += rate_ms.saturating_mul(di) / div;
                }
                None => {
                    group_bw += 1000 * db / rate_ms;
                    group_iops += 1000 * di / rate_ms;
                }
            }
            group_ramp_over += 1;
        }
        s.prev_ios = looks[i].ios;
        s.prev_bytes = looks[i].bytes;
        let Some(t) = s.tracker.as_mut() else {
            continue;
        };
        if group_ramp_over > 0 {
            crate::dprint!(
                crate::debug::STEADYSTATE,
                "steadystate_check() thread: {i}, groupid: {}, rate_msec: {rate_ms}, iops: \
                 {group_iops}, bw: {group_bw}, head: {}, tail: {}",
                job.group_id,
                t.head,
                t.tail
            );
        }
        if group_ramp_over == 0 || !t.add(group_iops, group_bw) {
            continue;
        }
        if job.stats.group_reporting {
            stop.extend((0..jobs.len()).filter(|&k| jobs[k].group_id == job.group_id));
        } else {
            stop.push(i);
        }
    }
    stop
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(slope: bool, pct: bool, limit: f64, dur: u64) -> SteadySpec {
        SteadySpec {
            criterion: SsCriterion::Iops,
            slope,
            pct,
            limit,
            dur_s: dur,
            ramp_us: 0,
            interval_us: None,
        }
    }

    #[test]
    fn deviation_needs_a_full_window_within_the_limit() {
        let mut t = Tracker::new(spec(false, true, 10.0, 3));
        assert!(!t.add(0, 0)); // a slow first second
        assert!(!t.add(1000, 0));
        assert!(
            !t.add(1000, 0),
            "the first window still holds the slow second"
        );
        assert!(t.add(1050, 0));
        let r = t.result();
        assert!(r.attained);
        assert_eq!(r.iops_data, [1000, 1000, 1050]);
        assert_eq!(r.iops_mean, 1016);
        assert!((r.criterion - 100.0 * (1050.0 - 3050.0 / 3.0) / (3050.0 / 3.0)).abs() < 1e-9);
    }

    #[test]
    fn slope_of_a_rising_series_is_not_steady() {
        let mut t = Tracker::new(spec(true, false, 5.0, 4));
        for (k, v) in [100u64, 200, 300, 400, 500].into_iter().enumerate() {
            assert!(!t.add(v, 0), "sample {k}");
        }
        assert!((t.result().slope_value - 100.0).abs() < 1e-9);
        for _ in 0..4 {
            t.add(500, 0);
        }
        assert!(t.attained);
        assert_eq!(t.result().slope_value, 0.0);
    }
}
