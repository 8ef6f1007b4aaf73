//! Statistics: a bounded-memory log-linear latency histogram with no upper cap ([`Histogram`]),
//! exact running min/max/mean/stddev ([`LatStat`]), bw/iops samplers ([`sampler`]), fio's per-I/O
//! accounting buckets ([`acct`]), reporting-group arithmetic ([`group`]), fio-format log files
//! ([`log`]), thread cpu usage ([`sys`]), disk statistics ([`disk`]) and the per-job and
//! per-group result model ([`model`]) that the runner fills and reports print, with the one
//! table of fiox's warnings ([`warning`]).
//!
//! How a job's thread uses it (a compiled example; the runner does the same per I/O):
//!
//! ```
//! use fiox_job::{Ddir, JobSpec};
//! use fiox_stats::*;
//!
//! let mut job = JobSpec::default();
//! let dir = std::env::temp_dir().join(format!("fiox-stats-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! job.logs.write_lat_log = Some("doc".into());
//!
//! // Job start (and again at the end of ramp_time: RateSampler::restart, LatStat::reset).
//! let cpu0 = ThreadUsage::now().unwrap();
//! let w = rate_windows(&job);
//! let mut sampler = RateSampler::new(Ddir::Read, 0, w.bw_ms, w.iops_ms).with_log_bs(4096);
//! let mut logs = JobLogs::for_job(&dir, &job).unwrap();
//! let mut res = JobResult { name: job.name.clone(), jobs: 1, ..Default::default() };
//!
//! // Per submission (async engine: per commit) and per reap.
//! res.submit.mark_count(1);
//! res.io_depth.mark_depth(1, 1);
//! // Per completion: clat/lat, fio's latency buckets (on clat), logs, then the rate sampler.
//! let (now_ns, clat, lat) = (600_000_000u64, 80_000u64, 81_000u64);
//! res.complete.mark_count(1);
//! let d = &mut res.dirs.read;
//! d.clat.add(clat);
//! d.lat.add(lat);
//! d.io_bytes += 4096;
//! d.total_ios += 1;
//! res.lat_buckets.add(clat);
//! let io = IoSample { t_ms: now_ns / 1_000_000, ddir: Ddir::Read, bytes: 4096, offset: 0, ioprio: 0, issue_ns: 0 };
//! logs.completion(&io, Some(clat), Some(lat));
//! logs.clat_hist(&io, &d.clat.hist);
//! sampler.tick_into(now_ns, d.io_bytes, d.total_ios, &mut logs);
//!
//! // Job end.
//! logs.finish(600).unwrap();
//! (res.dirs.read.bw, res.dirs.read.iops) = sampler.into_stats();
//! res.dirs.read.runtime_ms = 600;
//! res.runtime_ms = 600;
//! ThreadUsage::now().unwrap().since(&cpu0).apply(&mut res);
//!
//! // Reporting: merge for group_reporting, then the group lines.
//! let reported = vec![merge_jobs(&[res.clone(), res])];
//! let groups = group_results(&reported, 1024, 0);
//! assert_eq!(groups[0].dirs.read.io_bytes, 8192);
//! assert_eq!(reported[0].dirs.read.bw.n, 2, "one 500 ms sample per job, summed");
//! let clat_log = std::fs::read_to_string(dir.join("doc_clat.1.log")).unwrap();
//! assert_eq!(clat_log, "600, 80000, 0, 4096, 0\n");
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

// Unsafe code is denied everywhere but `sys` (one getrusage call, with SAFETY notes).
#![deny(unsafe_code)]

pub mod acct;
pub mod advice;
pub mod blocks;
pub mod disk;
pub mod group;
pub mod gzlog;
pub mod hist;
pub mod log;
pub mod logzip;
pub mod model;
pub mod sampler;
pub mod sys;
pub mod warning;

pub use disk::{DiskError, DiskStatsSampler};
pub use group::{bw_agg_pct, fold_mixed, group_results, merge_jobs, mixed_view};
pub use hist::Histogram;
pub use log::hist as histlog;
pub use log::hist::HistLog;
pub use log::{
    create_nofollow, rate_windows, IoSample, JobLogs, LogError, LogFile, LogKind, LogOptions,
    Opener, RateWindows,
};
pub use model::*;
pub use sampler::{NoSink, RateKind, RateSampler, RateSink};
pub use sys::ThreadUsage;
