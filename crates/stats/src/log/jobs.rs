//! A job's set of logs ([`JobLogs`]): which files `write_*_log` opens under which names,
//! routing each completion and rate sample to them, the compression thread they share, and
//! the bw/iops windows ([`rate_windows`]) the job's sampler and its logs agree on.

use super::file::{log_file_name, IoSample, LogFile, LogKind, LogOptions};
use super::hist::HistLog;
use super::sink::{create_nofollow, LogError, Opener};
use crate::hist::Histogram;
use crate::logzip::Compressor;
use crate::sampler::{RateKind, RateSink};
use fiox_job::{Ddir, JobSpec, LogSpec, StatsSpec};
use std::path::Path;

/// How a job's log files are named.
#[derive(Debug, Clone, Copy)]
struct LogNames<'a> {
    job_name: &'a str,
    job_number: u32,
}

fn duration_ms(d: std::time::Duration) -> u64 {
    d.as_millis().min(u128::from(u64::MAX)) as u64
}

/// The bw/iops sampling windows of a job and the averaging windows of its bw/iops logs, with
/// fio's interplay (init.c): when a bw log is written with `log_avg_msec` and `bwavgtime` was
/// not given, samples are taken every `log_avg_msec`; when `bwavgtime` was given, sampling
/// keeps it and the log averages over `min(log_avg_msec, bwavgtime)`. Same for iops.
///
/// One deviation: fio takes bw/iops *statistics* per I/O when a bw/iops log is written without
/// `log_avg_msec`; here the statistics always come from windows (`bwavgtime`), so the report
/// stays meaningful, while the log itself still gets one line per I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateWindows {
    /// `RateSampler` bw window, ms.
    pub bw_ms: u64,
    /// `RateSampler` iops window, ms.
    pub iops_ms: u64,
    /// Averaging window of the bw log (0: one line per I/O).
    pub bw_log_avg_ms: u64,
    pub iops_log_avg_ms: u64,
}

/// See [`RateWindows`]. Whether `bwavgtime`/`iopsavgtime` were given is read from the job's
/// options as written (`raw_options`).
pub fn rate_windows(job: &JobSpec) -> RateWindows {
    let given = |opt: &str| job.raw_options.iter().any(|(k, _)| k == opt);
    let log_avg = job.logs.log_avg_msec;
    let pick = |logged: bool, avg_ms: u64, explicit: bool| -> (u64, u64) {
        match (logged, explicit) {
            (false, _) => (avg_ms, log_avg),
            (true, true) => (avg_ms, log_avg.min(avg_ms)),
            // fio samples every log_avg_msec; with 0 it logs per I/O and keeps no windowed
            // samples at all, where the statistics here keep the configured window.
            (true, false) if log_avg > 0 => (log_avg, log_avg),
            (true, false) => (avg_ms, 0),
        }
    };
    let (bw_ms, bw_log_avg_ms) = pick(
        job.logs.write_bw_log.is_some(),
        duration_ms(job.stats.bwavgtime),
        given("bwavgtime"),
    );
    let (iops_ms, iops_log_avg_ms) = pick(
        job.logs.write_iops_log.is_some(),
        duration_ms(job.stats.iopsavgtime),
        given("iopsavgtime"),
    );
    RateWindows {
        bw_ms,
        iops_ms,
        bw_log_avg_ms,
        iops_log_avg_ms,
    }
}

/// All logs of one job, opened from its `LogSpec`. Feed it per-I/O latencies with
/// [`JobLogs::slat`] / [`JobLogs::completion`], and rate samples by passing it as the
/// [`RateSink`] of the job's `RateSampler`s; call [`JobLogs::finish`] at the job's end.
///
/// Write errors on the per-I/O path are kept (the first one) instead of failing the I/O loop;
/// [`JobLogs::finish`] reports it. As in fio, nothing is logged during `ramp_time`, and times
/// count from the end of the ramp (the job's epoch is reset there).
#[derive(Debug, Default)]
pub struct JobLogs {
    bw: Option<LogFile>,
    iops: Option<LogFile>,
    lat: Option<LogFile>,
    clat: Option<LogFile>,
    slat: Option<LogFile>,
    hist: Option<HistLog>,
    /// `log_compression`: the job's compression thread. Declared after the logs so that it is
    /// dropped after them: their sinks must be gone before its thread can be joined.
    zip: Option<Compressor>,
    error: Option<LogError>,
}

impl JobLogs {
    /// Open the logs `job` asked for, in `dir` (fio writes them in the current directory: pass
    /// `"."`), named after the job's 1-based number in the run (`job.index + 1`), with the
    /// bw/iops averaging windows of [`rate_windows`].
    pub fn for_job(dir: &Path, job: &JobSpec) -> Result<JobLogs, LogError> {
        Self::for_job_with(dir, job, &create_nofollow)
    }

    /// As [`JobLogs::for_job`], creating each file with `open`.
    pub fn for_job_with(dir: &Path, job: &JobSpec, open: Opener<'_>) -> Result<JobLogs, LogError> {
        let w = rate_windows(job);
        let names = LogNames {
            job_name: &job.name,
            job_number: job.index + 1,
        };
        Self::open_with(dir, &job.logs, &job.stats, names, w, open)
    }

    /// As [`JobLogs::for_job`] from the parts of a job: `job_name` is the prefix when an option
    /// was given empty, `job_number` the job's 1-based number in the run; every log averages
    /// over `log_avg_msec`. `write_lat_log` opens `_lat`, `_slat` and `_clat` unless
    /// `disable_lat/slat/clat` or `gtod_reduce` (fio creates the slat file even for sync
    /// engines; it stays empty).
    pub fn open(
        dir: &Path,
        logs: &LogSpec,
        stats: &StatsSpec,
        job_name: &str,
        job_number: u32,
    ) -> Result<JobLogs, LogError> {
        let w = RateWindows {
            bw_ms: duration_ms(stats.bwavgtime),
            iops_ms: duration_ms(stats.iopsavgtime),
            bw_log_avg_ms: logs.log_avg_msec,
            iops_log_avg_ms: logs.log_avg_msec,
        };
        let names = LogNames {
            job_name,
            job_number,
        };
        Self::open_with(dir, logs, stats, names, w, &create_nofollow)
    }

    fn open_with(
        dir: &Path,
        logs: &LogSpec,
        stats: &StatsSpec,
        names: LogNames<'_>,
        w: RateWindows,
        opener: Opener<'_>,
    ) -> Result<JobLogs, LogError> {
        let mut zip = start_compressor(logs)?;
        let mut open = |prefix: &Option<String>, kind: LogKind, enabled: bool, avg_msec: u64| {
            let Some(p) = prefix.as_deref().filter(|_| enabled) else {
                return Ok(None);
            };
            let p = if p.is_empty() { names.job_name } else { p };
            let mut name = log_file_name(p, kind, names.job_number, logs.per_job_logs);
            if logs.log_store_compressed {
                name.push_str(".fz"); // fio's `log.fz` suffix
            }
            let opts = LogOptions {
                avg_msec,
                log_offset: logs.log_offset,
                store_compressed: logs.log_store_compressed,
                log_prio: logs.log_prio,
                max_value: logs.log_max_value,
                both_values: logs.log_window_both,
                issue_time: logs.log_issue_time,
            };
            let z = zip.as_mut().map(|z| (z, logs.log_compression));
            LogFile::create_zipped(&dir.join(name), kind, opts, opener, z).map(Some)
        };
        let lat_on = |disabled: bool| !disabled && !stats.gtod_reduce;
        let (lat_log, avg) = (&logs.write_lat_log, logs.log_avg_msec);
        let bw = open(&logs.write_bw_log, LogKind::Bw, true, w.bw_log_avg_ms)?;
        let iops = open(&logs.write_iops_log, LogKind::Iops, true, w.iops_log_avg_ms)?;
        let lat = open(lat_log, LogKind::Lat, lat_on(stats.disable_lat), avg)?;
        let clat = open(lat_log, LogKind::Clat, lat_on(stats.disable_clat), avg)?;
        let slat = open(lat_log, LogKind::Slat, lat_on(stats.disable_slat), avg)?;
        let hist = match logs.write_hist_log.as_deref() {
            Some(p) => {
                let p = if p.is_empty() { names.job_name } else { p };
                let name = log_file_name(p, LogKind::ClatHist, names.job_number, logs.per_job_logs);
                let path = dir.join(name);
                let coarse = logs.log_hist_coarseness;
                let z = zip.as_mut().map(|z| (z, logs.log_compression));
                Some(HistLog::create_zipped(
                    &path,
                    logs.log_hist_msec,
                    coarse,
                    opener,
                    z,
                )?)
            }
            None => None,
        };
        Ok(JobLogs {
            bw,
            iops,
            lat,
            clat,
            slat,
            zip,
            hist,
            error: None,
        })
    }

    /// `log_unix_epoch`/`log_alternate_epoch`: every log's times from now on start at
    /// `epoch_ms` (that clock's time when the job's epoch began), as fio adds its
    /// alternate_epoch to each sample.
    pub fn set_epoch_ms(&mut self, epoch_ms: u64) {
        for f in [
            &mut self.bw,
            &mut self.iops,
            &mut self.lat,
            &mut self.clat,
            &mut self.slat,
        ]
        .into_iter()
        .flatten()
        {
            f.set_epoch_ms(epoch_ms);
        }
        if let Some(h) = self.hist.as_mut() {
            h.set_epoch_ms(epoch_ms);
        }
    }

    /// Whether any log is open (the runner can skip all calls otherwise).
    pub fn any(&self) -> bool {
        self.hist.is_some()
            || self.bw.is_some()
            || self.iops.is_some()
            || self.lat.is_some()
            || self.clat.is_some()
            || self.slat.is_some()
    }

    /// Whether the per-I/O path has anything to write (latency logs, or unaveraged rate logs).
    pub fn wants_io_samples(&self) -> bool {
        self.hist.is_some()
            || self.lat.is_some()
            || self.clat.is_some()
            || self.slat.is_some()
            || self.bw.as_ref().is_some_and(LogFile::per_io)
            || self.iops.as_ref().is_some_and(LogFile::per_io)
    }

    fn keep(&mut self, r: Result<(), LogError>) {
        if let (Err(e), None) = (r, &self.error) {
            self.error = Some(e);
        }
    }

    /// Submission latency of one I/O (logged when it was measured).
    pub fn slat(&mut self, io: &IoSample, slat_ns: u64) {
        if let Some(f) = self.slat.as_mut() {
            let r = f.sample_issued(io, slat_ns);
            self.keep(r);
        }
    }

    /// A completed I/O: its clat and total latency (None when not measured). Unaveraged bw/iops
    /// logs also get their per-I/O line here: the I/O's own rate (`bytes * 10^6 / clat_ns`,
    /// 0 without clat) and 1, as fio writes them.
    pub fn completion(&mut self, io: &IoSample, clat_ns: Option<u64>, lat_ns: Option<u64>) {
        let (t, d, bs, off, prio) = (io.t_ms, io.ddir, io.bytes, io.offset, io.ioprio);
        let mut results = [Ok(()), Ok(()), Ok(()), Ok(())];
        if let (Some(f), Some(v)) = (self.lat.as_mut(), lat_ns) {
            results[0] = f.sample(t, v, d, bs, off, prio);
        }
        if let (Some(f), Some(v)) = (self.clat.as_mut(), clat_ns) {
            results[1] = f.sample_issued(io, v);
        }
        if let Some(f) = self.bw.as_mut().filter(|f| f.per_io()) {
            let spent = clat_ns.unwrap_or(0);
            let rate = (bs as u128 * 1_000_000)
                .checked_div(spent as u128)
                .unwrap_or(0) as u64;
            results[2] = f.sample(t, rate, d, bs, off, prio);
        }
        if let Some(f) = self.iops.as_mut().filter(|f| f.per_io()) {
            results[3] = f.sample(t, 1, d, bs, off, prio);
        }
        for r in results {
            self.keep(r);
        }
    }

    /// After a completion's clat was added to its direction's clat histogram `clat`: feed the
    /// histogram log (`write_hist_log`), which writes a line every `log_hist_msec`.
    pub fn clat_hist(&mut self, io: &IoSample, clat: &Histogram) {
        if let Some(h) = self.hist.as_mut() {
            let r = h.on_clat(io.t_ms, io.ddir, io.bytes, clat);
            self.keep(r);
        }
    }

    /// Close every window and flush every file; the first error of the whole job, if any.
    pub fn finish(&mut self, t_ms: u64) -> Result<(), LogError> {
        if let Some(h) = self.hist.as_mut() {
            let r = h.finish();
            self.keep(r);
        }
        for f in [
            &mut self.bw,
            &mut self.iops,
            &mut self.lat,
            &mut self.clat,
            &mut self.slat,
        ]
        .into_iter()
        .flatten()
        {
            let r = f.finish(t_ms);
            if let (Err(e), None) = (r, &self.error) {
                self.error = Some(e);
            }
        }
        if let Some(z) = self.zip.as_mut() {
            z.close();
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// `log_compression`'s thread for a job that writes a bw, iops, lat or hist log (pinned to
/// `log_compression_cpus`), or None.
fn start_compressor(logs: &LogSpec) -> Result<Option<Compressor>, LogError> {
    let any = logs.write_bw_log.is_some()
        || logs.write_iops_log.is_some()
        || logs.write_lat_log.is_some()
        || logs.write_hist_log.is_some();
    if logs.log_compression == 0 || !any {
        return Ok(None);
    }
    let cpus = logs.log_compression_cpus.as_deref();
    Compressor::start(cpus)
        .map(Some)
        .map_err(|source| LogError::Compressor {
            cpus: cpus.map_or_else(
                || "all".into(),
                |c| c.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
            ),
            source,
        })
}

impl RateSink for JobLogs {
    /// Windowed rate samples from a `RateSampler` go to averaged bw/iops logs (unaveraged ones
    /// get per-I/O lines from [`JobLogs::completion`] instead, as in fio).
    fn rate_sample(&mut self, kind: RateKind, t_ms: u64, ddir: Ddir, value: u64, bs: u64) {
        let f = match kind {
            RateKind::Bw => self.bw.as_mut(),
            RateKind::Iops => self.iops.as_mut(),
        };
        if let Some(f) = f.filter(|f| !f.per_io()) {
            let r = f.sample(t_ms, value, ddir, bs, 0, 0);
            self.keep(r);
        }
    }
}
