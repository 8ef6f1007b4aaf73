//! Statistics: a bounded-memory log-linear latency histogram with no upper cap ([`Histogram`]),
//! exact running min/max/mean/stddev ([`LatStat`]), bw/iops samplers ([`SampleStat`]) and the
//! per-job and per-group result model ([`model`]) that the runner fills and reports print.
#![forbid(unsafe_code)]

pub mod hist;
pub mod model;

pub use hist::Histogram;
pub use model::*;
