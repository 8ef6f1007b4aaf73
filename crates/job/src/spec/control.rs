//! When and how fast a job's I/O goes: rates and pacing, thinktime, the clock, runtime and
//! ramp, `latency_target` probing, `flow`, steady state and `read_iolog` replay.

use super::io::PerDir;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateProcess {
    Linear,
    Poisson,
}

/// fio's `clocksource` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The wall clock at microsecond resolution.
    Gettimeofday,
    /// CLOCK_MONOTONIC.
    ClockGettime,
    /// The CPU's time-stamp counter.
    Cpu,
}

/// fio's queue-depth probing for a latency target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatTargetSpec {
    /// `latency_target` in ns (0: off).
    pub target_ns: u64,
    /// `latency_window` in µs.
    pub window_us: u64,
    /// `latency_percentile`: share of I/Os that must meet the target (default 100).
    pub percentile: f64,
    /// `latency_run`: keep probing instead of settling on a depth.
    pub run: bool,
    /// `max_latency` in ns per direction (read, write, trim; 0: off): a completion whose
    /// total latency exceeds it ends the job with ETIMEDOUT, as in fio.
    pub max_ns: PerDir<u64>,
}

impl Default for LatTargetSpec {
    fn default() -> Self {
        LatTargetSpec {
            target_ns: 0,
            window_us: 0,
            percentile: 100.0,
            run: false,
            max_ns: PerDir::all(0),
        }
    }
}

/// fio's token-based proportions between jobs of one `flow_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowSpec {
    /// `flow`: this job's weight (0: not in a flow).
    pub weight: u32,
    /// `flow_id`.
    pub id: i64,
    /// `flow_sleep`: microseconds to wait when held back.
    pub sleep_us: u64,
}

/// What steady state is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SsCriterion {
    #[default]
    Iops,
    Bw,
}

/// fio's steady state detection (`ss`, `ss_dur`, `ss_ramp`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadySpec {
    pub criterion: SsCriterion,
    /// Judge the slope of the window (else its largest deviation from the mean).
    pub slope: bool,
    /// `limit` is a percentage of the window's mean.
    pub pct: bool,
    /// IOPS, bytes/s, or percent.
    pub limit: f64,
    /// `ss_dur` in whole seconds (0: off).
    pub dur_s: u64,
    /// `ss_ramp` in microseconds.
    pub ramp_us: u64,
    /// fio 3.42's `steadystate_check_interval`/`ss_interval` in microseconds: one sample per
    /// interval (None: fio 3.33's one per second, with its rate arithmetic).
    pub interval_us: Option<u64>,
}

impl Default for SteadySpec {
    fn default() -> Self {
        SteadySpec {
            criterion: SsCriterion::Iops,
            slope: true,
            pct: true,
            limit: 0.01,
            dur_s: 0,
            ramp_us: 0,
            interval_us: None,
        }
    }
}

/// `read_iolog=` and how the log is replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySpec {
    /// The log to replay (None: the job generates its I/O).
    pub read_iolog: Option<String>,
    /// `replay_no_stall`: ignore the log's timing.
    pub no_stall: bool,
    /// `replay_redirect`: every I/O goes to this file instead of the log's.
    pub redirect: Option<String>,
    /// `replay_scale`: offsets are divided by it (0 and 1: unchanged).
    pub scale: u64,
    /// `replay_align`: offsets are aligned down to it (0: unchanged).
    pub align: u64,
    /// `replay_time_scale`: percent of the log's speed (100: as logged).
    pub time_scale: u32,
    /// `read_iolog_chunked`: fio reads the log bit by bit; fiox reads it whole before the
    /// run either way (the replay is the same).
    pub chunked: bool,
    /// `replay_skip`: blktrace events not replayed, one bit per kind ([`ReplaySpec::SKIP_READ`]...).
    pub skip: u8,
    /// `merge_blktrace_file`: the blktrace files `read_iolog` lists (colon-separated) are
    /// merged into this file first, which is then replayed.
    pub merge_file: Option<String>,
    /// `merge_blktrace_scalars`: per listed trace, the percentage of its time stamps kept
    /// (50: twice as fast); empty: 100 each.
    pub merge_scalars: Vec<u32>,
    /// `merge_blktrace_iters`: per listed trace, how many times it repeats; empty: once each.
    pub merge_iters: Vec<u32>,
}

impl ReplaySpec {
    pub const SKIP_READ: u8 = 1;
    pub const SKIP_WRITE: u8 = 2;
    pub const SKIP_TRIM: u8 = 4;
    pub const SKIP_SYNC: u8 = 8;
}

impl Default for ReplaySpec {
    fn default() -> Self {
        ReplaySpec {
            read_iolog: None,
            no_stall: false,
            redirect: None,
            scale: 1,
            align: 0,
            time_scale: 100,
            chunked: false,
            skip: 0,
            merge_file: None,
            merge_scalars: Vec::new(),
            merge_iters: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PacingSpec {
    /// `rate=` bytes/s per direction, 0 = unlimited.
    pub rate: PerDir<u64>,
    pub rate_min: PerDir<u64>,
    pub rate_iops: PerDir<u64>,
    pub rate_iops_min: PerDir<u64>,
    pub rate_process: RateProcess,
    pub rate_cycle: Duration,
    pub thinktime: Duration,
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
    /// `thinktime_blocks` was given (fio: with `thinktime_iotime`, the default 1 is ignored).
    pub thinktime_blocks_set: bool,
    /// `thinktime_blocks_type=issue`: count issued I/Os instead of completed ones.
    pub thinktime_blocks_issue: bool,
    /// `thinktime_iotime`: think after this long of I/O (zero: off).
    pub thinktime_iotime: Duration,
    /// `rate_ignore_thinktime`: the rate does not catch up on the time spent thinking.
    pub rate_ignore_thinktime: bool,
    /// fio 3.42's `thinkcycles`: spin this many CPU pause cycles after each read, write or
    /// trim is issued (0: off).
    pub thinkcycles: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TimingSpec {
    /// `runtime=`; None = no cap.
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Option<Duration>,
    /// fio 3.42's `ramp_size`: statistics start once the job (with group_reporting, its
    /// reporting group) has transferred this many bytes.
    pub ramp_size: Option<u64>,
    /// `startdelay=a-b` picks uniformly in the range.
    pub startdelay: (Duration, Duration),
    pub loops: u32,
    /// `stonewall_ranks` (fiox, under MPI): the first rank whose jobs of the phase finish
    /// their I/O stops every rank (IOR's stonewalling).
    pub stonewall_ranks: bool,
}
