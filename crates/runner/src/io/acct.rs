//! Per-job accounting on the hot path: per-direction latency statistics plus fio's latency buckets
//! and depth/submit/complete distributions (bucketing rules live in fiox-stats) and the
//! lock-free counters the ETA thread reads. Everything here is owned by the job's thread; the only
//! shared state is [`Progress`], written with relaxed stores (and a mutex-guarded snapshot that
//! is only touched when a status report asks for it).

use fiox_stats::JobResult;
use fiox_stats::{DepthDist, DirResult, LatBuckets, LatStat};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

/// Which latencies a job measures (fio's disable_* and gtod_reduce).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
    pub bw: bool,
    /// Keep slat's / lat's histogram: only where a report prints their percentiles
    /// (`slat_percentiles`, `lat_percentiles`); their min/max/mean/stddev are kept either way.
    pub slat_hist: bool,
    pub lat_hist: bool,
}

impl Measure {
    pub fn of(job: &fiox_job::JobSpec, sync_engine: bool) -> Measure {
        let s = &job.stats;
        // stats=0: measure nothing per I/O (counts are still kept).
        let reduce = s.gtod_reduce || !s.stats;
        Measure {
            slat: !reduce && !s.disable_slat && !sync_engine,
            clat: !reduce && !s.disable_clat,
            lat: !reduce && !s.disable_lat,
            bw: !reduce && !s.disable_bw,
            slat_hist: s.slat_percentiles,
            lat_hist: s.lat_percentiles,
        }
    }
    /// Whether any per-I/O clock read is needed.
    pub fn timed(&self) -> bool {
        self.slat || self.clat || self.lat
    }
}

/// Job states shown in the ETA line (fio's run-state letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum JobState {
    Waiting = 0,
    Setup = 1,
    Running = 2,
    Ramp = 3,
    Finishing = 4,
    Done = 5,
    /// Reading back what was written (verify phase).
    Verifying = 6,
}

impl JobState {
    /// fio's name of the run state (its `--debug=process` lines).
    pub fn fio_name(self) -> &'static str {
        match self {
            JobState::Waiting => "NOT_CREATED",
            JobState::Setup => "SETTING_UP",
            JobState::Running => "RUNNING",
            JobState::Ramp => "RAMP",
            JobState::Finishing => "FINISHING",
            JobState::Done => "EXITED",
            JobState::Verifying => "VERIFYING",
        }
    }
}

/// Counters one job publishes for the ETA thread and status reports. Aligned to 128 bytes (a
/// cache line and its prefetch pair): the jobs' records lie side by side in one Vec, and each
/// job writes its counters on every I/O, so two jobs must never share a line.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Progress {
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub state: AtomicU8,
    /// Open files (the `f=` of the ETA line).
    pub files: AtomicU64,
    /// Bytes the job plans to transfer (0: unknown or time based), for the ETA percentage.
    pub planned_bytes: AtomicU64,
    /// The status thread asks for a snapshot (`--status-interval`); the job clears it when the
    /// snapshot is published.
    pub snap_req: AtomicBool,
    /// The latest published result of the job (its final result once done).
    pub snapshot: Mutex<Option<JobResult>>,
    /// Steady state was attained (ss_dur): the job stops as at the end of its runtime.
    pub terminate: AtomicBool,
    /// The job's steady state section, kept by the status thread.
    pub steady: Mutex<Option<fiox_stats::model::SteadyResult>>,
}

impl Progress {
    pub fn set_state(&self, s: JobState) {
        let old = self.state.swap(s as u8, Ordering::Relaxed);
        if crate::debug::on(crate::debug::PROCESS) && old != s as u8 {
            let old = JobState::from_u8(old);
            crate::dprint!(
                crate::debug::PROCESS,
                "pid={}: runstate {} -> {}",
                crate::sys::gettid(),
                old.fio_name(),
                s.fio_name()
            );
        }
    }
    pub fn state(&self) -> JobState {
        JobState::from_u8(self.state.load(Ordering::Relaxed))
    }
}

impl JobState {
    pub(crate) fn from_u8(v: u8) -> JobState {
        match v {
            0 => JobState::Waiting,
            1 => JobState::Setup,
            2 => JobState::Running,
            3 => JobState::Ramp,
            4 => JobState::Finishing,
            6 => JobState::Verifying,
            _ => JobState::Done,
        }
    }
}

/// Everything a job accumulates while it runs; turned into a `JobResult` at the end.
#[derive(Debug, Default)]
pub struct Acct {
    pub dirs: [DirResult; 3],
    pub lat_buckets: LatBuckets,
    pub depth: DepthDist,
    pub submit: DepthDist,
    pub complete: DepthDist,
    pub sync_lat: LatStat,
    /// I/O errors tolerated by continue_on_error / ignore_error, and the first one described.
    pub tolerated_errors: u64,
    pub first_tolerated: Option<String>,
    /// errno of the first tolerated error (0: none).
    pub first_tolerated_errno: i32,
    /// Tolerated errors per errno, in the order first seen.
    pub tolerated_by_errno: Vec<(i32, u64)>,
    /// Completions the engine reported for units that were not in flight (dropped).
    pub bogus_completions: u64,
    /// errno of the error that ended the job (0: none); fio counts it in `total_err` too.
    pub fatal_errno: i32,
    /// The first I/O of a direct job failed with EINVAL (fio's "first direct IO errored").
    pub first_direct_einval: bool,
    /// `--profile=act`: the job's latency slices.
    pub act: Option<crate::io::act::ActCounter>,
}

impl Acct {
    /// The error that ends the job: fio's update_error_count counts it as well.
    pub fn count_fatal(&mut self, errno: i32) {
        if self.fatal_errno == 0 {
            self.fatal_errno = errno;
        }
    }

    /// fio's `total_err`: every error, the tolerated ones and the one that ended the job.
    pub fn total_errors(&self) -> u64 {
        self.tolerated_errors + u64::from(self.fatal_errno != 0)
    }

    /// fio's `first_error`.
    pub fn first_errno(&self) -> i32 {
        if self.tolerated_errors > 0 {
            self.first_tolerated_errno
        } else {
            self.fatal_errno
        }
    }

    /// Count an I/O error that continue_on_error/ignore_error lets the job survive.
    pub fn tolerate(&mut self, errno: i32, what: String) {
        if self.tolerated_errors == 0 {
            self.first_tolerated_errno = errno;
        }
        self.tolerated_errors += 1;
        self.first_tolerated.get_or_insert(what);
        match self
            .tolerated_by_errno
            .iter_mut()
            .find(|(e, _)| *e == errno)
        {
            Some((_, n)) => *n += 1,
            None => self.tolerated_by_errno.push((errno, 1)),
        }
    }

    /// `ENOSPC: 3, EIO: 1`: the tolerated errors per errno name.
    pub fn tolerated_summary(&self) -> String {
        let parts: Vec<String> = self
            .tolerated_by_errno
            .iter()
            .map(|(e, n)| format!("{}: {n}", fiox_engine::errno_name(*e)))
            .collect();
        parts.join(", ")
    }

    /// Forget what was measured (end of ramp_time), keeping allocations.
    pub fn reset(&mut self) {
        for d in &mut self.dirs {
            let (mut s, mut c, mut l) = (
                std::mem::take(&mut d.slat),
                std::mem::take(&mut d.clat),
                std::mem::take(&mut d.lat),
            );
            s.reset();
            c.reset();
            l.reset();
            let mut prios = std::mem::take(&mut d.prios);
            for p in &mut prios {
                p.stat.reset();
            }
            *d = DirResult {
                slat: s,
                clat: c,
                lat: l,
                prios,
                ..Default::default()
            };
        }
        self.lat_buckets = LatBuckets::default();
        self.depth = DepthDist::default();
        self.submit = DepthDist::default();
        self.complete = DepthDist::default();
        self.sync_lat.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The jobs' `Progress` records sit side by side in one Vec; each job stores its byte and
    /// I/O counts per I/O and loads its terminate flag per I/O. No cache line (64 bytes; 128
    /// with the adjacent-line prefetcher) may hold fields of two jobs, or two job threads
    /// would bounce it between their cores on every I/O.
    #[test]
    fn progress_records_of_two_jobs_share_no_cache_line() {
        let p: Vec<Progress> = (0..3).map(|_| Progress::default()).collect();
        let size = std::mem::size_of::<Progress>();
        for w in p.windows(2) {
            let first = &w[0] as *const Progress as usize;
            let next = &w[1] as *const Progress as usize;
            assert_eq!(
                first % 128,
                0,
                "a record starts on its own 128-byte line pair"
            );
            assert_eq!(next - first, size);
            assert_eq!(
                (first + size - 1) / 128,
                next / 128 - 1,
                "the last line of one job's record is not the next job's first"
            );
        }
    }

    #[test]
    fn tolerated_errors_are_counted_per_errno() {
        let mut a = Acct::default();
        a.tolerate(libc::ENOSPC, "first".into());
        a.tolerate(libc::EIO, "second".into());
        a.tolerate(libc::ENOSPC, "third".into());
        assert_eq!(a.tolerated_errors, 3);
        assert_eq!(a.first_tolerated_errno, libc::ENOSPC);
        assert_eq!(a.first_tolerated.as_deref(), Some("first"));
        assert_eq!(a.tolerated_summary(), "ENOSPC: 2, EIO: 1");
    }
}
