//! fio's `latency_target` (io_u.c `lat_target_*`): find the deepest queue whose latency meets
//! the target. The depth starts at 1; after each `latency_window` in which at least
//! `latency_percentile` of the I/Os met the target it doubles (bisects once a depth failed),
//! after a window (or with 100%, a single I/O) that missed it the depth is bisected down.
//! At depth 1 a miss is the job's error (ETIMEDOUT). When the depth stops moving, the stats
//! are reset and one more window runs at it (unless `latency_run` keeps probing).

use fiox_job::LatTargetSpec;

/// What the loop must do after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Nothing,
    /// Let the I/O in flight finish (the depth went down).
    Quiesce,
    /// The depth settled: finish the I/O in flight and reset the stats for the final window.
    FinalWindow,
    /// The final window is over: the job is done.
    Done,
    /// An I/O over the target at depth 1.
    Fatal,
}

/// The probing state (fio's `latency_qd`, `_low`, `_high`, stable count, cycle start).
#[derive(Debug, Clone)]
pub struct LatTarget {
    spec: LatTargetSpec,
    max_depth: u32,
    pub qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    end_run: bool,
    start_ns: u64,
    ios_at: u64,
    failed: u64,
}

impl LatTarget {
    pub fn new(spec: LatTargetSpec, max_depth: u32, now_ns: u64, ios: u64) -> LatTarget {
        // fio's lat_target_init line (the target in ns).
        crate::dprint!(crate::debug::RATE, "Latency target={}", spec.target_ns);
        LatTarget {
            spec,
            max_depth: max_depth.max(1),
            qd: 1,
            low: 1,
            high: max_depth.max(1),
            stable: 0,
            end_run: false,
            start_ns: now_ns,
            ios_at: ios,
            failed: 0,
        }
    }

    pub fn target_ns(&self) -> u64 {
        self.spec.target_ns
    }

    /// Start a window at `now_ns` with `ios` I/Os done.
    pub fn new_cycle(&mut self, now_ns: u64, ios: u64) {
        self.start_ns = now_ns;
        self.ios_at = ios;
        self.failed = 0;
    }

    /// An I/O took `lat_ns` (over the target is a miss).
    pub fn completed(&mut self, lat_ns: u64, now_ns: u64, ios: u64) -> Step {
        if lat_ns <= self.spec.target_ns {
            return Step::Nothing;
        }
        if self.spec.percentile == 100.0 {
            return self.failed_window(now_ns, ios);
        }
        self.failed += 1;
        Step::Nothing
    }

    /// fio's `__lat_target_failed`.
    fn failed_window(&mut self, now_ns: u64, ios: u64) -> Step {
        if self.qd == 1 {
            return Step::Fatal;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        crate::dprint!(
            crate::debug::RATE,
            "Ramped down: {} {} {}",
            self.low,
            self.qd,
            self.high
        );
        self.new_cycle(now_ns, ios);
        Step::Quiesce
    }

    /// fio's `lat_target_check`, after completions: judge the window once it is over.
    pub fn check(&mut self, now_ns: u64, ios: u64) -> Step {
        if now_ns.saturating_sub(self.start_ns) < self.spec.window_us.saturating_mul(1000) {
            return Step::Nothing;
        }
        let n = ios.saturating_sub(self.ios_at);
        let ok = 100.0 * (n as f64 - self.failed as f64) / n as f64;
        crate::dprint!(
            crate::debug::RATE,
            "Success rate: {ok:.2}% (target {:.2}%)",
            self.spec.percentile
        );
        // fio compares a NaN (no I/O in the window) as a failure too.
        if ok >= self.spec.percentile {
            self.success(now_ns, ios)
        } else {
            self.failed_window(now_ns, ios)
        }
    }

    /// fio's `lat_target_success`.
    fn success(&mut self, now_ns: u64, ios: u64) -> Step {
        let before = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        if self.high != self.max_depth {
            self.qd = (self.qd + self.high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.min(self.max_depth);
        crate::dprint!(
            crate::debug::RATE,
            "Ramped up: {} {} {}",
            self.low,
            self.qd,
            self.high
        );
        let mut step = Step::Nothing;
        if !self.spec.run && self.qd == before {
            step = if self.end_run {
                crate::dprint!(crate::debug::RATE, "We are done");
                Step::Done
            } else {
                crate::dprint!(crate::debug::RATE, "Quiesce and final run");
                self.end_run = true;
                Step::FinalWindow
            };
        }
        self.new_cycle(now_ns, ios);
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pct: f64) -> LatTargetSpec {
        LatTargetSpec {
            target_ns: 1000,
            window_us: 1,
            percentile: pct,
            run: false,
            ..LatTargetSpec::default()
        }
    }

    #[test]
    fn depth_doubles_then_bisects_and_settles() {
        let mut t = LatTarget::new(spec(100.0), 16, 0, 0);
        let ms = 1_000_000;
        // Every window meets the target: 1, 2, 4, 8, 16, then settled.
        for (k, want) in [2, 4, 8, 16].into_iter().enumerate() {
            assert_eq!(
                t.check((k as u64 + 1) * ms, 10 * (k as u64 + 1)),
                Step::Nothing
            );
            assert_eq!(t.qd, want);
        }
        assert_eq!(t.check(5 * ms, 50), Step::FinalWindow);
        assert_eq!(t.check(6 * ms, 60), Step::Done);
        // A miss at 16 bisects toward the last good depth.
        let mut t = LatTarget::new(spec(100.0), 16, 0, 0);
        for k in 1..=4 {
            t.check(k * ms, 10 * k);
        }
        assert_eq!(t.completed(5000, 5 * ms, 45), Step::Quiesce);
        assert_eq!(t.qd, 12);
        let mut one = LatTarget::new(spec(100.0), 16, 0, 0);
        assert_eq!(one.completed(5000, 1, 1), Step::Fatal);
    }

    #[test]
    fn a_percentile_counts_misses_per_window() {
        let mut t = LatTarget::new(spec(90.0), 8, 0, 0);
        for _ in 0..5 {
            assert_eq!(t.completed(5000, 10, 1), Step::Nothing);
        }
        // 5 misses of 100: 95% >= 90%.
        assert_eq!(t.check(2_000_000, 100), Step::Nothing);
        assert_eq!(t.qd, 2);
        for _ in 0..20 {
            t.completed(5000, 10, 1);
        }
        assert_eq!(t.check(4_000_000, 200), Step::Quiesce);
        assert_eq!(t.qd, 1);
    }
}
