//! fio 3.33's completion-latency histogram log (`write_hist_log=P` → `P_clat_hist.N.log`,
//! every `log_hist_msec`), readable by fio's `fiologparser_hist.py`.
//!
//! A line is `time_ms, ddir, bs, c0, c1, ..., c1855`: the counts of fio's 1856 clat buckets
//! (see [`crate::hist`]; values above fio's 17 s cap are counted in its last bucket) that were
//! added since the previous line of the same direction. With `log_hist_coarseness=k`, each
//! column sums 2^k adjacent buckets. A direction's line is written by the completion that finds
//! `log_hist_msec` elapsed since its previous line; the next window starts that much later
//! (fio's drift correction). Nothing is written for a partial window at the end, as in fio.

use super::sink::{create_nofollow, LogError, Opener, Out};
use crate::hist::{Histogram, FIO_NBUCKETS};
use crate::logzip::Compressor;
use fiox_job::Ddir;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Histogram log of one job.
#[derive(Debug)]
pub struct HistLog {
    path: PathBuf,
    out: BufWriter<Out>,
    /// `log_compression`: the file, written at the end from the compressed chunks.
    at_end: Option<File>,
    hist_msec: u64,
    stride: usize,
    /// Per direction: start of the current window (None before its first sample).
    window_start: [Option<u64>; 3],
    /// Per direction: fio-bucket counts at the previous line.
    last: [Box<[u64; FIO_NBUCKETS]>; 3],
    scratch: Box<[u64; FIO_NBUCKETS]>,
    /// Added to every time written (see [`HistLog::set_epoch_ms`]).
    epoch_ms: u64,
}

fn zeroed() -> Box<[u64; FIO_NBUCKETS]> {
    vec![0u64; FIO_NBUCKETS]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("vec has exactly FIO_NBUCKETS elements"))
}

impl HistLog {
    /// Create (truncate) `path`. `hist_msec` 0 writes no lines (fio creates the file anyway);
    /// `coarseness` is capped at 6 (fio's maximum).
    pub fn create(path: &Path, hist_msec: u64, coarseness: u32) -> Result<HistLog, LogError> {
        Self::create_with(path, hist_msec, coarseness, &create_nofollow)
    }

    /// As [`HistLog::create`], creating the file with `open`.
    pub fn create_with(
        path: &Path,
        hist_msec: u64,
        coarseness: u32,
        open: Opener<'_>,
    ) -> Result<HistLog, LogError> {
        Self::create_zipped(path, hist_msec, coarseness, open, None)
    }

    /// As [`HistLog::create_with`]; with `zip` (the job's compression thread and
    /// `log_compression`'s chunk size) the lines are kept in memory, compressed, and written
    /// to `path` by [`HistLog::finish`] (fio's log_compression covers this log too).
    pub fn create_zipped(
        path: &Path,
        hist_msec: u64,
        coarseness: u32,
        open: Opener<'_>,
        zip: Option<(&mut Compressor, u64)>,
    ) -> Result<HistLog, LogError> {
        let created = |source| LogError::Create {
            path: path.to_path_buf(),
            source,
        };
        let file = open(path).map_err(created)?;
        let (out, at_end) = match zip {
            Some((z, bytes)) => {
                let keep = file.try_clone().map_err(created)?;
                let chunk = usize::try_from(bytes).unwrap_or(usize::MAX);
                (Out::Chunks(z.sink(chunk)), Some(keep))
            }
            None => (Out::File(file), None),
        };
        Ok(HistLog {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(64 * 1024, out),
            at_end,
            hist_msec,
            stride: 1 << coarseness.min(6),
            window_start: [None; 3],
            last: [zeroed(), zeroed(), zeroed()],
            scratch: zeroed(),
            epoch_ms: 0,
        })
    }

    /// After a clat sample of `ddir` at `t_ms` was added to `clat` (that direction's clat
    /// histogram): write a line if the direction's window has elapsed. Cheap otherwise.
    #[inline]
    pub fn on_clat(
        &mut self,
        t_ms: u64,
        ddir: Ddir,
        bs: u64,
        clat: &Histogram,
    ) -> Result<(), LogError> {
        if self.hist_msec == 0 {
            return Ok(());
        }
        let d = ddir.index();
        let start = *self.window_start[d].get_or_insert(t_ms);
        let this_window = t_ms.saturating_sub(start);
        if this_window < self.hist_msec {
            return Ok(());
        }
        // Keep the window grid despite late samples: the next starts hist_msec after this one.
        self.window_start[d] = Some(t_ms - (this_window - self.hist_msec));
        self.write_line(t_ms, ddir, bs, clat)
    }

    fn write_line(
        &mut self,
        t_ms: u64,
        ddir: Ddir,
        bs: u64,
        clat: &Histogram,
    ) -> Result<(), LogError> {
        let d = ddir.index();
        let t_ms = t_ms.saturating_add(self.epoch_ms);
        clat.fio_counts(&mut self.scratch);
        let r = (|| {
            write!(self.out, "{t_ms}, {d}, {bs}")?;
            let (now, last) = (&self.scratch, &self.last[d]);
            for j in (0..FIO_NBUCKETS).step_by(self.stride) {
                let end = (j + self.stride).min(FIO_NBUCKETS);
                let sum: u64 = (j..end).map(|k| now[k].saturating_sub(last[k])).sum();
                write!(self.out, ", {sum}")?;
            }
            writeln!(self.out)
        })();
        self.last[d].copy_from_slice(&self.scratch[..]);
        r.map_err(|source| LogError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// Times written from now on are `epoch_ms` plus the time since the job's epoch
    /// (`log_unix_epoch`, `log_alternate_epoch`).
    pub fn set_epoch_ms(&mut self, epoch_ms: u64) {
        self.epoch_ms = epoch_ms;
    }

    /// Flush the file (no partial window is written, as in fio).
    pub fn finish(&mut self) -> Result<(), LogError> {
        let failed = |source| LogError::Write {
            path: self.path.clone(),
            source,
        };
        self.out.flush().map_err(failed)?;
        match self.at_end.take() {
            Some(file) => self.out.get_mut().write_chunks(file, false).map_err(failed),
            None => Ok(()),
        }
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "fiox-stats-histlog-{tag}-{}.log",
            std::process::id()
        ))
    }

    fn lines(p: &Path) -> Vec<Vec<u64>> {
        let text = std::fs::read_to_string(p).unwrap();
        let _ = std::fs::remove_file(p);
        text.lines()
            .map(|l| l.split(", ").map(|x| x.parse().unwrap()).collect())
            .collect()
    }

    #[test]
    fn deltas_per_window_and_direction() {
        let p = tmp("deltas");
        let mut log = HistLog::create(&p, 1000, 0).unwrap();
        let mut h = Histogram::new();
        h.record(100);
        log.on_clat(5, Ddir::Read, 4096, &h).unwrap(); // window starts at 5
        h.record(100);
        h.record(1 << 40); // above fio's cap
        log.on_clat(1004, Ddir::Read, 4096, &h).unwrap(); // 999 ms: not yet
        log.on_clat(1006, Ddir::Read, 4096, &h).unwrap(); // 1001 ms: line; next from 1005
        h.record(100);
        log.on_clat(2005, Ddir::Read, 4096, &h).unwrap(); // 1000 ms after 1005: line
        log.finish().unwrap();
        let l = lines(&p);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].len(), 3 + FIO_NBUCKETS);
        assert_eq!(&l[0][..3], &[1006, 0, 4096]);
        assert_eq!(l[0][3 + 100], 2, "both 100 ns samples so far");
        assert_eq!(
            l[0][3 + FIO_NBUCKETS - 1],
            1,
            "clamped into fio's last bucket"
        );
        assert_eq!(l[1][0], 2005);
        assert_eq!(l[1][3 + 100], 1, "only the delta since the previous line");
        assert_eq!(l[1][3..].iter().sum::<u64>(), 1);
    }

    #[test]
    fn coarseness_sums_adjacent_buckets_and_zero_interval_logs_nothing() {
        let p = tmp("coarse");
        let mut log = HistLog::create(&p, 10, 2).unwrap();
        let mut h = Histogram::new();
        for v in [4u64, 5, 6, 7, 8] {
            h.record(v);
        }
        log.on_clat(0, Ddir::Write, 512, &h).unwrap();
        log.on_clat(10, Ddir::Write, 512, &h).unwrap();
        log.finish().unwrap();
        let l = lines(&p);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].len(), 3 + FIO_NBUCKETS / 4);
        assert_eq!(
            (l[0][1], l[0][3 + 1], l[0][3 + 2]),
            (1, 4, 1),
            "4..7 and 8..11"
        );

        let p = tmp("zero");
        let mut log = HistLog::create(&p, 0, 0).unwrap();
        log.on_clat(5000, Ddir::Read, 512, &h).unwrap();
        log.finish().unwrap();
        assert!(lines(&p).is_empty());
    }
}
