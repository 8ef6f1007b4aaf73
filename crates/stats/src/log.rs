//! fio 3.33's per-job log files: `write_bw_log`, `write_iops_log` and `write_lat_log` (which
//! writes `_lat`, `_slat` and `_clat` files), with `log_avg_msec`, `per_job_logs` and
//! `log_offset` (iolog.c `flush_samples`, stat.c `add_log_sample`); `write_hist_log` lines come
//! from [`crate::histlog`] through the same [`JobLogs`].
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

use crate::gzlog::SampleEncoder;
use crate::hist::Histogram;
use crate::histlog::HistLog;
use crate::logzip::{ChunkSink, Compressor};
use crate::sampler::{RateKind, RateSink};
use fiox_job::{Ddir, JobSpec, LogSpec, StatsSpec};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// fio's `LOG_MSEC_SLACK` on Linux, applied to bw/iops logs only.
const LOG_MSEC_SLACK: u64 = 1;
const BUF_BYTES: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot create log file {}: {source}", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("cannot write log file {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot start the log compression thread (log_compression_cpus={cpus}): {source}")]
    Compressor { cpus: String, source: io::Error },
}

/// What a log file records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Iops,
    Lat,
    Clat,
    Slat,
    /// `write_hist_log` (see [`crate::histlog`]).
    ClatHist,
}

impl LogKind {
    /// The part of the file name after the prefix (`P_bw.1.log`).
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
            LogKind::Slat => "slat",
            LogKind::ClatHist => "clat_hist",
        }
    }

    /// Latency logs close averaging windows strictly; rate logs get fio's 1 ms slack.
    fn is_latency(self) -> bool {
        matches!(
            self,
            LogKind::Lat | LogKind::Clat | LogKind::Slat | LogKind::ClatHist
        )
    }
}

/// fio's log file name (`gen_log_name`): `job_number` is 1-based over the whole run.
pub fn log_file_name(prefix: &str, kind: LogKind, job_number: u32, per_job_logs: bool) -> String {
    if per_job_logs {
        format!("{prefix}_{}.{job_number}.log", kind.suffix())
    } else {
        format!("{prefix}_{}.log", kind.suffix())
    }
}

/// Formatting options shared by a job's logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// `log_avg_msec`; 0 logs every I/O.
    pub avg_msec: u64,
    /// `log_offset`: add the I/O's offset column.
    pub log_offset: bool,
    /// `log_store_compressed`: fio's binary samples in zlib chunks (see [`crate::gzlog`]).
    pub store_compressed: bool,
    /// `log_prio`: the last column is the raw ioprio value in hex instead of 1 (real-time) / 0.
    pub log_prio: bool,
    /// `log_max_value`: an averaged line holds the window's largest value, not its mean.
    pub max_value: bool,
    /// fio 3.42's `log_window_value=both`: a second value column, the window's largest value
    /// after its mean (0 in per-I/O lines).
    pub both_values: bool,
    /// `log_issue_time` (fio 3.42): a last column with the I/O's issue time in ns since the
    /// job's epoch (clat and slat logs; 0 in the others and in averaged lines).
    pub issue_time: bool,
}

/// Running mean of one direction's values inside the current averaging window.
#[derive(Debug, Clone, Copy, Default)]
struct AvgWindow {
    sum: u128,
    n: u64,
    max: u64,
    /// Start of the current window, ms since the epoch.
    start_ms: u64,
}

/// How log files are created: given the path, an open file to write from its start.
pub type Opener<'a> = &'a dyn Fn(&Path) -> io::Result<File>;

/// Create or truncate `path` for writing, failing (ELOOP) where it is a symbolic link: a log
/// name never leads fiox into a file elsewhere.
pub fn create_nofollow(path: &Path) -> io::Result<File> {
    use fiox_guard::output::{self, Named, Open};
    Ok(output::open(path, Open::Truncate, Named::ByUser)?)
}

/// Where a log's lines (or samples) go while the job runs: the file, or with
/// `log_compression` the job's compression thread ([`crate::logzip`]).
pub(crate) enum Out {
    File(File),
    Chunks(ChunkSink),
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Out::File(_) => "File",
            Out::Chunks(_) => "Chunks",
        })
    }
}

impl Out {
    /// `log_compression`: a log's chunks back from the compression thread into `file`, as
    /// text (inflated) or, with `store`, as they are. Nothing to do for a plain file.
    pub(crate) fn write_chunks(&mut self, file: File, store: bool) -> io::Result<()> {
        let Out::Chunks(sink) = self else {
            return Ok(());
        };
        let mut w = BufWriter::with_capacity(BUF_BYTES, file);
        for chunk in sink.take()? {
            if store {
                w.write_all(&chunk)?;
            } else {
                io::copy(&mut flate2::read::ZlibDecoder::new(&chunk[..]), &mut w)?;
            }
        }
        w.flush()
    }
}

impl Write for Out {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Out::File(f) => f.write(b),
            Out::Chunks(c) => c.write(b),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::File(f) => f.flush(),
            Out::Chunks(c) => c.flush(),
        }
    }
}

/// One open log file.
pub struct LogFile {
    path: PathBuf,
    out: BufWriter<Out>,
    /// `log_store_compressed`: samples go here instead of text lines into `out`.
    gz: Option<crate::gzlog::SampleEncoder<BufWriter<Out>>>,
    /// `log_compression`: the file, written at the end from the compressed chunks.
    at_end: Option<File>,
    kind: LogKind,
    opts: LogOptions,
    win: [AvgWindow; 3],
    /// Added to every time written (`log_unix_epoch`/`log_alternate_epoch`: that clock's
    /// time in ms when the job's epoch began; 0 otherwise).
    epoch_ms: u64,
}

/// The last column of a line: without `log_prio` 1 for the real-time class (bits 13.. of the
/// ioprio value are the class) and 0 otherwise; with it the raw value as fio prints it.
enum PrioCol {
    Flag(u32),
    Hex(u16),
}

impl std::fmt::Display for PrioCol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrioCol::Flag(v) => write!(f, "{v}"),
            PrioCol::Hex(v) => write!(f, "0x{v:04x}"),
        }
    }
}

impl std::fmt::Debug for LogFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogFile")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("compressed", &self.gz.is_some())
            .finish()
    }
}

impl LogFile {
    /// Create (truncate) `path`, not following a symbolic link there (see [`create_nofollow`]).
    pub fn create(path: &Path, kind: LogKind, opts: LogOptions) -> Result<LogFile, LogError> {
        Self::create_with(path, kind, opts, &create_nofollow)
    }

    /// Create `path` with `open` (the caller's rule for what may be replaced).
    pub fn create_with(
        path: &Path,
        kind: LogKind,
        opts: LogOptions,
        open: Opener<'_>,
    ) -> Result<LogFile, LogError> {
        Self::create_zipped(path, kind, opts, open, None)
    }

    /// As [`LogFile::create_with`]; with `zip` (the job's compression thread and
    /// `log_compression`'s chunk size) the log is kept in memory, compressed, and written to
    /// `path` by [`LogFile::finish`].
    pub fn create_zipped(
        path: &Path,
        kind: LogKind,
        opts: LogOptions,
        open: Opener<'_>,
        zip: Option<(&mut Compressor, u64)>,
    ) -> Result<LogFile, LogError> {
        let created = |source| LogError::Create {
            path: path.to_path_buf(),
            source,
        };
        let file = open(path).map_err(created)?;
        let (mut out, mut gz_out, mut at_end) = (None, None, None);
        if let Some((z, bytes)) = zip {
            // Binary samples are cut on sample boundaries: each chunk inflates to whole ones.
            let unit = SampleEncoder::<File>::sample_len(opts.log_offset) as u64;
            let chunk = if opts.store_compressed {
                (bytes / unit).max(1) * unit
            } else {
                bytes
            };
            let sink = Out::Chunks(z.sink(usize::try_from(chunk).unwrap_or(usize::MAX)));
            if opts.store_compressed {
                gz_out = Some(sink);
            } else {
                out = Some(sink);
            }
            at_end = Some(file.try_clone().map_err(created)?);
        } else if opts.store_compressed {
            gz_out = Some(Out::File(file.try_clone().map_err(created)?));
        }
        let gz = gz_out.map(|o| {
            let w = BufWriter::with_capacity(BUF_BYTES, o);
            if at_end.is_some() {
                SampleEncoder::raw(w, opts.log_offset, opts.log_prio)
            } else {
                SampleEncoder::new(w, opts.log_offset, opts.log_prio)
            }
        });
        let out = out.unwrap_or(Out::File(file));
        Ok(LogFile {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(BUF_BYTES, out),
            gz,
            at_end,
            kind,
            opts,
            win: [AvgWindow::default(); 3],
            epoch_ms: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kind(&self) -> LogKind {
        self.kind
    }

    /// Whether each I/O is a line (no `log_avg_msec`).
    pub fn per_io(&self) -> bool {
        self.opts.avg_msec == 0
    }

    /// Record one value at `t_ms` (ms since the job's epoch). `ioprio` is the raw ioprio value
    /// of the I/O (0 when none was set).
    pub fn sample(
        &mut self,
        t_ms: u64,
        value: u64,
        ddir: Ddir,
        bs: u64,
        offset: u64,
        ioprio: u32,
    ) -> Result<(), LogError> {
        self.record(t_ms, value, ddir, bs, offset, (ioprio, 0))
    }

    /// Like [`LogFile::sample`] for an I/O whose issue time the line carries (clat and slat
    /// logs with `log_issue_time`).
    pub fn sample_issued(&mut self, io: &IoSample, value: u64) -> Result<(), LogError> {
        let tag = (io.ioprio, io.issue_ns);
        self.record(io.t_ms, value, io.ddir, io.bytes, io.offset, tag)
    }

    /// One value; `tag` is the I/O's raw ioprio and issue time.
    fn record(
        &mut self,
        t_ms: u64,
        value: u64,
        ddir: Ddir,
        bs: u64,
        offset: u64,
        tag: (u32, u64),
    ) -> Result<(), LogError> {
        let avg = self.opts.avg_msec;
        if avg == 0 {
            return self.line(t_ms, (value, 0), ddir, bs, offset, (tag.0 as u16, tag.1));
        }
        let w = &mut self.win[ddir.index()];
        w.sum += u128::from(value);
        w.n += 1;
        w.max = w.max.max(value);
        if t_ms < w.start_ms {
            return Ok(());
        }
        let this_window = t_ms - w.start_ms;
        if this_window < avg && (self.kind.is_latency() || avg - this_window > LOG_MSEC_SLACK) {
            return Ok(());
        }
        self.flush_window(ddir, t_ms)?;
        self.win[ddir.index()].start_ms = t_ms - t_ms % avg;
        Ok(())
    }

    /// Write the averaged line of `ddir`'s window (if it holds samples) and empty it.
    fn flush_window(&mut self, ddir: Ddir, t_ms: u64) -> Result<(), LogError> {
        let w = &mut self.win[ddir.index()];
        if w.n == 0 {
            return Ok(());
        }
        // fio rounds the window mean to nearest (mean + 0.5, truncated).
        let mean = ((w.sum as f64 / w.n as f64) + 0.5) as u64;
        let v = if self.opts.both_values {
            (mean, w.max)
        } else if self.opts.max_value {
            (w.max, 0)
        } else {
            (mean, 0)
        };
        *w = AvgWindow {
            start_ms: w.start_ms,
            ..AvgWindow::default()
        };
        self.line(t_ms, v, ddir, 0, 0, (0, 0))
    }

    fn line(
        &mut self,
        t_ms: u64,
        (value, value1): (u64, u64),
        ddir: Ddir,
        bs: u64,
        offset: u64,
        (ioprio, issue_ns): (u16, u64),
    ) -> Result<(), LogError> {
        let d = ddir.index();
        let prio = if self.opts.log_prio {
            PrioCol::Hex(ioprio)
        } else {
            PrioCol::Flag(u32::from(ioprio >> 13 == 1))
        };
        let t_ms = t_ms.saturating_add(self.epoch_ms);
        let r = if let Some(gz) = self.gz.as_mut() {
            gz.push(t_ms, value, d as u32, bs, offset, ioprio)
        } else if self.opts.both_values {
            self.text_line_both(t_ms, (value, value1), d, (bs, offset), prio, issue_ns)
        } else if self.opts.issue_time {
            // fio 3.42 requires log_offset with log_issue_time.
            writeln!(
                self.out,
                "{t_ms}, {value}, {d}, {bs}, {offset}, {prio}, {issue_ns}"
            )
        } else if self.opts.log_offset {
            writeln!(self.out, "{t_ms}, {value}, {d}, {bs}, {offset}, {prio}")
        } else {
            writeln!(self.out, "{t_ms}, {value}, {d}, {bs}, {prio}")
        };
        r.map_err(|source| LogError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// A text line with fio 3.42's second value column (`log_window_value=both`).
    fn text_line_both(
        &mut self,
        t_ms: u64,
        (v, v1): (u64, u64),
        d: usize,
        (bs, offset): (u64, u64),
        prio: PrioCol,
        issue_ns: u64,
    ) -> io::Result<()> {
        write!(self.out, "{t_ms}, {v}, {v1}, {d}, {bs}")?;
        if self.opts.log_offset {
            write!(self.out, ", {offset}")?;
        }
        write!(self.out, ", {prio}")?;
        if self.opts.issue_time {
            write!(self.out, ", {issue_ns}")?;
        }
        writeln!(self.out)
    }

    /// Times written from now on are `epoch_ms` plus the time since the job's epoch.
    pub fn set_epoch_ms(&mut self, epoch_ms: u64) {
        self.epoch_ms = epoch_ms;
    }

    /// Write the partial windows (at `t_ms`, the job's end) and flush the file.
    pub fn finish(&mut self, t_ms: u64) -> Result<(), LogError> {
        if self.opts.avg_msec > 0 {
            for d in Ddir::ALL {
                self.flush_window(d, t_ms)?;
            }
        }
        let path = self.path.clone();
        let failed = |source| LogError::Write { path, source };
        if let Some(gz) = self.gz.as_mut() {
            gz.finish().map_err(failed.clone())?;
        }
        self.out.flush().map_err(failed.clone())?;
        self.write_chunks().map_err(failed)
    }

    /// `log_compression`: the chunks back from the compression thread, into the file as text
    /// (inflated) or, with `log_store_compressed`, as they are.
    fn write_chunks(&mut self) -> io::Result<()> {
        let Some(file) = self.at_end.take() else {
            return Ok(());
        };
        let out = match self.gz.as_mut() {
            Some(gz) => gz.get_mut().get_mut(),
            None => self.out.get_mut(),
        };
        out.write_chunks(file, self.opts.store_compressed)
    }
}

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

/// One completed I/O as the latency logs see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoSample {
    /// ms since the job's epoch.
    pub t_ms: u64,
    pub ddir: Ddir,
    pub bytes: u64,
    pub offset: u64,
    /// Raw ioprio value (0: none).
    pub ioprio: u32,
    /// When the I/O was issued, ns since the job's epoch (`log_issue_time`).
    pub issue_ns: u64,
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

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::JobSpec;

    /// A fresh directory under /tmp, removed on drop.
    struct TmpDir(PathBuf);
    impl TmpDir {
        fn new(tag: &str) -> TmpDir {
            let p = std::env::temp_dir().join(format!(
                "fiox-stats-log-{tag}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            TmpDir(p)
        }
    }
    impl Drop for TmpDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn names_follow_fio() {
        assert_eq!(log_file_name("lg", LogKind::Bw, 1, true), "lg_bw.1.log");
        assert_eq!(
            log_file_name("lg", LogKind::Clat, 12, true),
            "lg_clat.12.log"
        );
        assert_eq!(
            log_file_name("x/y", LogKind::Iops, 3, false),
            "x/y_iops.log"
        );
    }

    #[test]
    fn per_io_lines_with_and_without_offset() {
        let t = TmpDir::new("perio");
        let p = t.0.join("a.log");
        let mut f = LogFile::create(&p, LogKind::Clat, LogOptions::default()).unwrap();
        f.sample(3, 66922, Ddir::Read, 4096, 8192, 0).unwrap();
        f.sample(4, 70000, Ddir::Write, 4096, 0, 1 << 13).unwrap(); // RT class
        f.finish(5).unwrap();
        assert_eq!(read(&p), "3, 66922, 0, 4096, 0\n4, 70000, 1, 4096, 1\n");

        let p = t.0.join("b.log");
        let opts = LogOptions {
            avg_msec: 0,
            log_offset: true,
            store_compressed: false,
            ..LogOptions::default()
        };
        let mut f = LogFile::create(&p, LogKind::Lat, opts).unwrap();
        f.sample(7, 5, Ddir::Trim, 512, 123_456, 2 << 13).unwrap(); // BE class
        f.finish(8).unwrap();
        assert_eq!(read(&p), "7, 5, 2, 512, 123456, 0\n");
    }

    /// log_max_value: a window's line holds its largest sample; the epoch shifts every time.
    #[test]
    fn max_value_windows_and_epoch_offset() {
        let t = TmpDir::new("max");
        let p = t.0.join("m.log");
        let opts = LogOptions {
            avg_msec: 500,
            max_value: true,
            ..LogOptions::default()
        };
        let mut f = LogFile::create(&p, LogKind::Clat, opts).unwrap();
        f.set_epoch_ms(1_700_000_000_000);
        f.sample(100, 10, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(200, 90, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(500, 30, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(700, 5, Ddir::Read, 4096, 0, 0).unwrap();
        f.finish(800).unwrap();
        assert_eq!(
            read(&p),
            "1700000000500, 90, 0, 0, 0\n1700000000800, 5, 0, 0, 0\n"
        );
    }

    #[test]
    fn log_prio_prints_the_raw_priority_in_hex() {
        let t = TmpDir::new("prio");
        let p = t.0.join("p.log");
        let opts = LogOptions {
            avg_msec: 0,
            log_offset: true,
            store_compressed: false,
            log_prio: true,
            ..LogOptions::default()
        };
        let mut f = LogFile::create(&p, LogKind::Clat, opts).unwrap();
        f.sample(1, 10, Ddir::Read, 4096, 8192, (1 << 13) | 4)
            .unwrap();
        f.sample(2, 11, Ddir::Write, 4096, 0, 0).unwrap();
        f.finish(3).unwrap();
        assert_eq!(
            read(&p),
            "1, 10, 0, 4096, 8192, 0x2004\n2, 11, 1, 4096, 0, 0x0000\n"
        );
    }

    #[test]
    fn averaged_windows_match_fio_sample_shape() {
        let t = TmpDir::new("avg");
        let p = t.0.join("c.log");
        let opts = LogOptions {
            avg_msec: 500,
            log_offset: false,
            store_compressed: false,
            ..LogOptions::default()
        };
        let mut f = LogFile::create(&p, LogKind::Clat, opts).unwrap();
        // Window [0,500) is closed by the sample at 500, which counts in it (as in fio):
        // mean of 10, 21, 30 = 20.33 -> 20.
        f.sample(100, 10, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(499, 21, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(500, 30, Ddir::Read, 4096, 0, 0).unwrap();
        // Writes keep their own window, still at [0,500): closed at once.
        f.sample(510, 7, Ddir::Write, 4096, 0, 0).unwrap();
        // Next read window starts at 500: 700 is inside; 1003 closes it: mean 45.
        f.sample(700, 40, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(1003, 50, Ddir::Read, 4096, 0, 0).unwrap();
        // 1000-aligned window still open at the end: written by finish. 60 and 61 -> 60.5 -> 61.
        f.sample(1100, 60, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(1101, 61, Ddir::Read, 4096, 0, 0).unwrap();
        f.finish(1200).unwrap();
        assert_eq!(
            read(&p),
            "500, 20, 0, 0, 0\n510, 7, 1, 0, 0\n1003, 45, 0, 0, 0\n1200, 61, 0, 0, 0\n"
        );
    }

    #[test]
    fn log_issue_time_adds_the_issue_column_to_clat_and_slat_only() {
        let t = TmpDir::new("issue");
        let opts = LogOptions {
            log_offset: true,
            issue_time: true,
            ..LogOptions::default()
        };
        let open = |k| LogFile::create(&t.0.join(format!("{k:?}.log")), k, opts).unwrap();
        let (mut clat, mut lat) = (open(LogKind::Clat), open(LogKind::Lat));
        let io = IoSample {
            t_ms: 3,
            ddir: Ddir::Write,
            bytes: 4096,
            offset: 8192,
            ioprio: 0,
            issue_ns: 2_500_123,
        };
        clat.sample_issued(&io, 700).unwrap();
        lat.sample(3, 900, Ddir::Write, 4096, 8192, 0).unwrap();
        clat.finish(4).unwrap();
        lat.finish(4).unwrap();
        assert_eq!(
            read(&t.0.join("Clat.log")),
            "3, 700, 1, 4096, 8192, 0, 2500123\n"
        );
        assert_eq!(read(&t.0.join("Lat.log")), "3, 900, 1, 4096, 8192, 0, 0\n");
    }

    /// log_window_value=both: averaged lines hold the window's rounded mean then its maximum;
    /// per-I/O lines a 0 there (fio 3.42 sets the column for the whole log).
    #[test]
    fn log_window_value_both_writes_mean_and_max() {
        let t = TmpDir::new("both");
        let opts = |avg_msec| LogOptions {
            avg_msec,
            both_values: true,
            ..LogOptions::default()
        };
        let p = t.0.join("avg.log");
        let mut f = LogFile::create(&p, LogKind::Clat, opts(100)).unwrap();
        f.sample(10, 10, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(20, 91, Ddir::Read, 4096, 0, 0).unwrap();
        f.sample(120, 7, Ddir::Read, 4096, 0, 0).unwrap();
        f.finish(150).unwrap();
        // As for avg and max: the sample that closes a window is part of it (fio's order).
        assert_eq!(read(&p), "120, 36, 91, 0, 0, 0\n");
        let p = t.0.join("per-io.log");
        let mut f = LogFile::create(&p, LogKind::Clat, opts(0)).unwrap();
        f.sample(3, 66, Ddir::Write, 4096, 0, 0).unwrap();
        f.finish(4).unwrap();
        assert_eq!(read(&p), "3, 66, 0, 1, 4096, 0\n");
    }

    #[test]
    fn rate_logs_get_slack_latency_logs_do_not() {
        let t = TmpDir::new("slack");
        let opts = LogOptions {
            avg_msec: 500,
            log_offset: false,
            store_compressed: false,
            ..LogOptions::default()
        };
        let pb = t.0.join("bw.log");
        let mut bw = LogFile::create(&pb, LogKind::Bw, opts).unwrap();
        bw.sample(499, 100, Ddir::Read, 0, 0, 0).unwrap(); // within 1 ms: written
        bw.finish(600).unwrap();
        assert_eq!(read(&pb), "499, 100, 0, 0, 0\n");
        let pl = t.0.join("lat.log");
        let mut lat = LogFile::create(&pl, LogKind::Lat, opts).unwrap();
        lat.sample(499, 100, Ddir::Read, 0, 0, 0).unwrap(); // not closed until finish
        lat.finish(600).unwrap();
        assert_eq!(read(&pl), "600, 100, 0, 0, 0\n");
    }

    #[test]
    fn job_logs_open_route_and_finish() {
        let t = TmpDir::new("job");
        let mut spec = JobSpec::default();
        spec.logs.write_bw_log = Some("lg".into());
        spec.logs.write_iops_log = Some(String::new()); // empty: job name
        spec.logs.write_lat_log = Some("lg".into());
        spec.stats.disable_slat = true;
        let mut logs = JobLogs::open(&t.0, &spec.logs, &spec.stats, "myjob", 2).unwrap();
        assert!(logs.any() && logs.wants_io_samples());
        let io = IoSample {
            t_ms: 1,
            ddir: Ddir::Write,
            bytes: 4096,
            offset: 0,
            ioprio: 0,
            issue_ns: 0,
        };
        logs.slat(&io, 5); // disabled: no file
        logs.completion(&io, Some(1_000_000), Some(1_000_100));
        // Unaveraged rate logs ignore windowed samples (fio writes per-I/O lines instead).
        logs.rate_sample(RateKind::Bw, 500, Ddir::Write, 999, 4096);
        logs.finish(2).unwrap();
        assert_eq!(read(&t.0.join("lg_bw.2.log")), "1, 4096, 1, 4096, 0\n");
        assert_eq!(read(&t.0.join("myjob_iops.2.log")), "1, 1, 1, 4096, 0\n");
        assert_eq!(read(&t.0.join("lg_clat.2.log")), "1, 1000000, 1, 4096, 0\n");
        assert_eq!(read(&t.0.join("lg_lat.2.log")), "1, 1000100, 1, 4096, 0\n");
        assert!(!t.0.join("lg_slat.2.log").exists());
    }

    #[test]
    fn job_logs_averaged_rates_come_from_sampler() {
        use crate::sampler::RateSampler;
        let t = TmpDir::new("jobavg");
        let mut spec = JobSpec::default();
        spec.logs.write_bw_log = Some("s".into());
        spec.logs.log_avg_msec = 500;
        spec.logs.per_job_logs = false;
        let mut logs = JobLogs::open(&t.0, &spec.logs, &spec.stats, "j", 1).unwrap();
        assert!(!logs.wants_io_samples());
        let mut s = RateSampler::new(Ddir::Read, 0, 500, 500).with_log_bs(4096);
        s.tick_into(500_000_000, 512_000, 125, &mut logs);
        s.tick_into(1_000_000_000, 1_024_000, 250, &mut logs);
        logs.finish(1001).unwrap();
        // 512000 B over 500 ms = 1000 KiB/s; averaged lines carry bs 0.
        assert_eq!(
            read(&t.0.join("s_bw.log")),
            "500, 1000, 0, 0, 0\n1000, 1000, 0, 0, 0\n"
        );
    }

    #[test]
    fn rate_windows_follow_fio_init() {
        let mut job = JobSpec::default();
        let w = rate_windows(&job);
        assert_eq!((w.bw_ms, w.iops_ms), (500, 500));
        job.logs.write_bw_log = Some("p".into());
        job.logs.log_avg_msec = 1000;
        let w = rate_windows(&job);
        assert_eq!(
            (w.bw_ms, w.bw_log_avg_ms),
            (1000, 1000),
            "bwavgtime not given"
        );
        assert_eq!((w.iops_ms, w.iops_log_avg_ms), (500, 1000), "no iops log");
        job.raw_options.push(("bwavgtime".into(), "250".into()));
        job.stats.bwavgtime = std::time::Duration::from_millis(250);
        let w = rate_windows(&job);
        assert_eq!(
            (w.bw_ms, w.bw_log_avg_ms),
            (250, 250),
            "min(log_avg, bwavgtime)"
        );
        job.logs.log_avg_msec = 0;
        let w = rate_windows(&job);
        assert_eq!((w.bw_ms, w.bw_log_avg_ms), (250, 0), "per-I/O log");
    }

    #[test]
    fn for_job_names_by_run_position() {
        let t = TmpDir::new("forjob");
        let mut job = JobSpec {
            name: "seq".into(),
            index: 4,
            ..Default::default()
        };
        job.logs.write_iops_log = Some(String::new());
        job.logs.log_avg_msec = 100;
        let mut logs = JobLogs::for_job(&t.0, &job).unwrap();
        logs.rate_sample(RateKind::Iops, 100, Ddir::Read, 7, 4096);
        logs.finish(150).unwrap();
        assert_eq!(read(&t.0.join("seq_iops.5.log")), "100, 7, 0, 0, 0\n");
    }

    #[test]
    fn job_logs_histogram_log() {
        let t = TmpDir::new("jobhist");
        let mut spec = JobSpec::default();
        spec.logs.write_hist_log = Some("h".into());
        spec.logs.log_hist_msec = 100;
        let mut logs = JobLogs::open(&t.0, &spec.logs, &spec.stats, "j", 3).unwrap();
        assert!(logs.any() && logs.wants_io_samples());
        let mut clat = Histogram::new();
        for t_ms in [0u64, 50, 100] {
            clat.record(1000);
            let io = IoSample {
                t_ms,
                ddir: Ddir::Read,
                bytes: 4096,
                offset: 0,
                ioprio: 0,
                issue_ns: 0,
            };
            logs.clat_hist(&io, &clat);
        }
        logs.finish(120).unwrap();
        let text = read(&t.0.join("h_clat_hist.3.log"));
        assert_eq!(text.lines().count(), 1);
        assert!(text.starts_with("100, 0, 4096, 0, "), "{}", &text[..40]);
    }

    #[test]
    fn create_error_names_the_file() {
        let err = LogFile::create(
            Path::new("/nonexistent-dir-fiox/x.log"),
            LogKind::Bw,
            LogOptions::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent-dir-fiox/x.log"),
            "{err}"
        );
    }
}
