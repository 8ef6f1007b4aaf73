//! Statistics: a bounded-memory log-linear latency histogram with no upper cap ([`Histogram`]),
//! exact running min/max/mean/stddev ([`LatStat`]), bw/iops samplers ([`sampler`]), fio's per-I/O
//! accounting buckets ([`acct`]), reporting-group arithmetic ([`group`]), fio-format log files
//! ([`log`]), thread cpu usage ([`sys`]), disk statistics ([`disk`]) and the per-job and
//! per-group result model ([`model`]) that the runner fills and reports print.
// Unsafe code is denied everywhere but `sys` (one getrusage call, with SAFETY notes).
#![deny(unsafe_code)]

pub mod acct;
pub mod disk;
pub mod group;
pub mod hist;
pub mod histlog;
pub mod log;
pub mod model;
pub mod sampler;
pub mod sys;

pub use disk::{DiskError, DiskStatsSampler};
pub use group::{bw_agg_pct, group_results, merge_jobs};
pub use hist::Histogram;
pub use histlog::HistLog;
pub use log::{
    rate_windows, IoSample, JobLogs, LogError, LogFile, LogKind, LogOptions, RateWindows,
};
pub use model::*;
pub use sampler::{NoSink, RateKind, RateSampler, RateSink};
pub use sys::ThreadUsage;
