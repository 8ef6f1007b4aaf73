//! `--bandwidth-log`: fio's aggregate bandwidth logs. Every `bw_avg_time` (the smallest of the
//! jobs', 500 ms by default) the run's helper thread writes the bandwidth summed over all jobs
//! in that interval, KiB/s, one line per direction into `agg-read_bw.log`, `agg-write_bw.log`
//! and `agg-trim_bw.log` in the current directory, with fio's log line format
//! (`msec, KiB/s, ddir, 0, 0`; msec since the run started). No samples while a job ramps up.
//! Unlike fio, which truncates whatever has those names, fiox replaces only its own earlier
//! logs: a user's file or a symbolic link there is reported and left alone.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fiox_job::{Ddir, JobSpec};
use fiox_stats::{LogError, LogFile, LogKind, LogOptions};

/// The three aggregate logs and the byte totals at the last sample.
pub struct AggBwLog {
    files: Vec<LogFile>,
    interval_ms: u64,
    last: Instant,
    prev: [u64; 3],
}

/// fio's names, in ddir order; with a `tag` (one rank's logs under MPI, `rank3`), the tag
/// before `.log`: `agg-read_bw.rank3.log`.
pub fn names(tag: Option<&str>) -> [String; 3] {
    ["read", "write", "trim"].map(|d| match tag {
        Some(t) => format!("agg-{d}_bw.{t}.log"),
        None => format!("agg-{d}_bw.log"),
    })
}

impl AggBwLog {
    /// Create the three files in `dir`, sampling every min bw_avg_time. A file of that name
    /// is replaced only when fiox wrote it, and a symbolic link is never followed (see
    /// [`crate::files::safeopen::create_output`]).
    pub fn create(
        dir: &Path,
        jobs: &[JobSpec],
        start: Instant,
        tag: Option<&str>,
    ) -> Result<AggBwLog, LogError> {
        let interval_ms = jobs
            .iter()
            .map(|j| fiox_stats::rate_windows(j).bw_ms)
            .min()
            .unwrap_or(500)
            .max(1);
        let opts = LogOptions {
            avg_msec: 0,
            log_offset: false,
            store_compressed: false,
            ..LogOptions::default()
        };
        let files = names(tag)
            .iter()
            .map(|n| {
                let create = crate::files::safeopen::create_log_output;
                LogFile::create_with(&dir.join(n), LogKind::Bw, opts, &create)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AggBwLog {
            files,
            interval_ms,
            last: start,
            prev: [0; 3],
        })
    }

    /// Take a sample if an interval has passed since the last one. `bytes`: the jobs' byte
    /// totals per direction now; `ramping`: some job is in its ramp time (the interval is
    /// skipped, as fio does, but its bytes are not counted in the next one).
    pub fn tick(
        &mut self,
        now: Instant,
        run_start: Instant,
        bytes: [u64; 3],
        ramping: bool,
    ) -> Result<(), LogError> {
        let ms = now.duration_since(self.last).as_millis() as u64;
        if ms <= self.interval_ms {
            return Ok(());
        }
        let t_ms = now.duration_since(run_start).as_millis() as u64;
        for (d, f) in self.files.iter_mut().enumerate() {
            let diff = bytes[d].saturating_sub(self.prev[d]);
            // fio's calc_rate: bytes per second, then KiB, in integer steps.
            let kib_s = (1000 * diff / ms) / 1024;
            if !ramping {
                f.sample(t_ms, kib_s, Ddir::ALL[d], 0, 0, 0)?;
            }
        }
        self.prev = bytes;
        self.last = now;
        Ok(())
    }

    /// Flush the files; returns their paths.
    pub fn finish(mut self, now_ms: u64) -> Result<Vec<PathBuf>, LogError> {
        let mut paths = Vec::new();
        for f in &mut self.files {
            f.finish(now_ms)?;
            paths.push(f.path().to_path_buf());
        }
        Ok(paths)
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn samples_sum_of_jobs_in_kib_per_second_every_interval() {
        let dir = std::env::temp_dir().join(format!("fiox-agglog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t0 = Instant::now();
        let jobs = vec![JobSpec::default()];
        let mut log = AggBwLog::create(&dir, &jobs, t0, None).unwrap();
        assert_eq!(log.interval_ms, 500);
        // Too early: nothing.
        log.tick(t0 + Duration::from_millis(200), t0, [1 << 20, 0, 0], false)
            .unwrap();
        // 1000 ms later: 4 MiB read, 2 MiB written over 1 s.
        let t1 = t0 + Duration::from_millis(1000);
        log.tick(t1, t0, [4 << 20, 2 << 20, 0], false).unwrap();
        // A ramping interval is skipped, but its bytes do not leak into the next one.
        let t2 = t1 + Duration::from_millis(600);
        log.tick(t2, t0, [100 << 20, 2 << 20, 0], true).unwrap();
        let t3 = t2 + Duration::from_millis(1000);
        log.tick(t3, t0, [101 << 20, 2 << 20, 0], false).unwrap();
        let paths = log.finish(2600).unwrap();
        let read = |i: usize| std::fs::read_to_string(&paths[i]).unwrap();
        assert_eq!(read(0), "1000, 4096, 0, 0, 0\n2600, 1024, 0, 0, 0\n");
        assert_eq!(read(1), "1000, 2048, 1, 0, 0\n2600, 0, 1, 0, 0\n");
        assert_eq!(read(2), "1000, 0, 2, 0, 0\n2600, 0, 2, 0, 0\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
