//! Statistics: a bounded-memory log-linear latency histogram with no upper cap ([`Histogram`]),
//! exact running min/max/mean/stddev ([`LatStat`]), bw/iops samplers ([`SampleStat`]), fio's
//! per-I/O accounting buckets ([`acct`]), reporting-group arithmetic ([`group`]) and the per-job
//! and per-group result model ([`model`]) that the runner fills and reports print.
#![forbid(unsafe_code)]

pub mod acct;
pub mod group;
pub mod hist;
pub mod log;
pub mod model;
pub mod sampler;

pub use group::{bw_agg_pct, group_results, merge_jobs};
pub use hist::Histogram;
pub use log::{IoSample, JobLogs, LogError, LogFile, LogKind, LogOptions};
pub use model::*;
pub use sampler::{NoSink, RateKind, RateSampler, RateSink};
