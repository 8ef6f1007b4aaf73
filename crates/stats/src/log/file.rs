//! One fio-format sample log file ([`LogFile`]): its name, its line format (with or without
//! offset, priority and issue-time columns) and `log_avg_msec`'s averaging windows.

use super::sink::{create_nofollow, LogError, Opener, Out, BUF_BYTES};
use crate::gzlog::SampleEncoder;
use crate::logzip::Compressor;
use fiox_job::Ddir;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// fio's `LOG_MSEC_SLACK` on Linux, applied to bw/iops logs only.
const LOG_MSEC_SLACK: u64 = 1;

/// What a log file records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Iops,
    Lat,
    Clat,
    Slat,
    /// `write_hist_log` (see [`super::hist`]).
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
