//! fio 3.33's per-job log files: `write_bw_log`, `write_iops_log` and `write_lat_log` (which
//! writes `_lat`, `_slat` and `_clat` files), with `log_avg_msec`, `per_job_logs` and
//! `log_offset` (iolog.c `flush_samples`, stat.c `add_log_sample`); `write_hist_log` lines come
//! from [`hist`] through the same [`JobLogs`].
//!
//! File names: `PREFIX_KIND.N.log` with N the job's 1-based number in the run, or
//! `PREFIX_KIND.log` when `per_job_logs=0`; an empty prefix means the job's name.
//! A line is `time_ms, value, ddir, bs, prio` — or `time_ms, value, ddir, bs, offset, prio` with
//! `log_offset=1`. `prio` is 1 when the I/O had the real-time priority class, else 0, or with
//! `log_prio` the I/O's ioprio value in hex (`0x2004`), as fio. Latencies are in ns, bw in KiB/s, iops in I/Os per second.
//!
//! Without `log_avg_msec` every I/O is a line (bw/iops logs too: the I/O's own rate, and 1).
//! With it, each direction's values are averaged over windows aligned to multiples of
//! `log_avg_msec` since the epoch; a window is written (mean rounded to nearest, bs and offset 0,
//! at the time of the sample that closed it) when a sample arrives after its end — bw/iops logs
//! with fio's 1 ms slack — and the last, partial window at [`LogFile::finish`].
//!
//! Memory is bounded: lines go through a 64 KiB buffered writer as they are produced and are
//! formatted without allocating. With `log_compression` they are kept in memory instead,
//! compressed in chunks by the job's compression thread ([`crate::logzip`]), as fio does.
//!
//! The folder: [`sink`] (where bytes go, the error type), `file` (one sample log),
//! [`hist`] (the histogram log) and [`jobs`] (a job's set of them); the lower a module in
//! that list, the more it may use of the ones above it, never the other way.

pub mod file;
pub mod hist;
pub mod jobs;
pub mod sink;

pub use file::{log_file_name, IoSample, LogFile, LogKind, LogOptions};
pub use jobs::{rate_windows, JobLogs, RateWindows};
pub use sink::{create_nofollow, is_fio_log, LogError, Opener};

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests;
