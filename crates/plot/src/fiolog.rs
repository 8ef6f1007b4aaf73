//! fio-format log files (fio 3.33 iolog.c `flush_samples`; fiox writes the same): a line is
//! `time_ms, value, ddir, bs, prio` or, with `log_offset=1`, `time_ms, value, ddir, bs, offset,
//! prio` (prio may be hex with `log_prio`). Latencies are in ns, bandwidth in KiB/s, IOPS in I/Os
//! per second. Names are `PREFIX_KIND.N.log` (N = job number) or `PREFIX_KIND.log`
//! (`per_job_logs=0`, and `--bandwidth-log`'s `agg-read_bw.log`).
//!
//! A log without `log_avg_msec` has one line per I/O, which may be millions of points; series
//! are reduced to at most [`MAX_POINTS`] time buckets (mean value per bucket; for per-I/O IOPS
//! logs, whose every value is 1, the count per bucket over its width) so a page stays small.

use crate::error::InputError;
use std::path::Path;

/// Points kept per series after bucketing.
pub const MAX_POINTS: usize = 600;

/// What a log measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogKind {
    Iops,
    Bw,
    Lat,
    Clat,
    Slat,
}

impl LogKind {
    fn from_suffix(s: &str) -> Option<Self> {
        Some(match s {
            "bw" => LogKind::Bw,
            "iops" => LogKind::Iops,
            "lat" => LogKind::Lat,
            "clat" => LogKind::Clat,
            "slat" => LogKind::Slat,
            _ => return None,
        })
    }

    /// The file-name suffix (`bw`, `clat`...).
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
            LogKind::Slat => "slat",
        }
    }
}

/// One direction of one log file, reduced to plottable points.
#[derive(Debug, Clone)]
pub struct LogSeries {
    /// Label of the input it came from (directory or file name).
    pub source: String,
    /// `PREFIX` or `PREFIX.N` (the job) from the file name.
    pub job: String,
    pub kind: LogKind,
    /// "read", "write", "trim" or "sync".
    pub ddir: &'static str,
    /// (seconds since the job started, value in the log's unit).
    pub points: Vec<(f64, f64)>,
}

/// `(job, kind)` when `path`'s name is a fio log name.
pub fn log_name(path: &Path) -> Option<(String, LogKind)> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".log")?;
    // PREFIX_KIND.N or PREFIX_KIND.
    let (base, num) = match stem.rsplit_once('.') {
        Some((b, n)) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => (b, Some(n)),
        _ => (stem, None),
    };
    let (prefix, kind) = base.rsplit_once('_')?;
    let kind = LogKind::from_suffix(kind)?;
    let job = match num {
        Some(n) => format!("{prefix}.{n}"),
        None => prefix.to_string(),
    };
    Some((job, kind))
}

/// The log files a run with these log prefixes wrote (`P_bw.1.log`, `P_clat.log`...), sorted
/// and without duplicates; prefixes may hold a directory part.
pub fn files_with_prefixes(prefixes: &[String]) -> Vec<std::path::PathBuf> {
    let mut out = std::collections::BTreeSet::new();
    for p in prefixes {
        let p = Path::new(p);
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let Some(base) = p.file_name().and_then(|b| b.to_str()) else {
            continue;
        };
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in rd.flatten() {
            let path = e.path();
            if let Some((job, _)) = log_name(&path) {
                // `base` itself (per_job_logs=0) or `base.N`.
                let ours = job == base
                    || job
                        .strip_prefix(base)
                        .and_then(|r| r.strip_prefix('.'))
                        .is_some_and(|n| n.bytes().all(|c| c.is_ascii_digit()));
                if ours {
                    out.insert(path);
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Read a log file into one series per direction present.
pub fn read(path: &Path, source: &str) -> Result<Vec<LogSeries>, InputError> {
    let (job, kind) = log_name(path)
        .ok_or_else(|| InputError::format(path, "not a fio log name (NAME_bw.N.log...)"))?;
    let text = std::fs::read_to_string(path).map_err(|source| InputError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut raw: [Vec<(f64, f64)>; 4] = Default::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (t, v, d) = parse_line(line)
            .map_err(|why| InputError::format(path, format!("line {}: {why}: '{line}'", i + 1)))?;
        raw[d].push((t, v));
    }
    let per_io_iops = kind == LogKind::Iops && raw.iter().flatten().all(|(_, v)| *v == 1.0);
    Ok(raw
        .into_iter()
        .zip(["read", "write", "trim", "sync"])
        .filter(|(pts, _)| !pts.is_empty())
        .map(|(pts, ddir)| LogSeries {
            source: source.to_string(),
            job: job.clone(),
            kind,
            ddir,
            points: reduce(pts, per_io_iops),
        })
        .collect())
}

/// `(seconds, value, ddir index)` of one line.
fn parse_line(line: &str) -> Result<(f64, f64, usize), String> {
    let cols: Vec<&str> = line.split(',').map(str::trim).collect();
    if cols.len() < 4 {
        return Err(format!(
            "{} columns, expected at least 4 (time, value, direction, block size)",
            cols.len()
        ));
    }
    let t: u64 = cols[0]
        .parse()
        .map_err(|_| format!("time '{}' is not a whole number of ms", cols[0]))?;
    let v: i64 = cols[1]
        .parse()
        .map_err(|_| format!("value '{}' is not an integer", cols[1]))?;
    let d: usize = match cols[2].parse() {
        Ok(d @ 0..=3) => d,
        _ => return Err(format!("direction '{}' is not 0, 1, 2 or 3", cols[2])),
    };
    Ok((t as f64 / 1000.0, v as f64, d))
}

/// At most [`MAX_POINTS`] points: means over equal time buckets (counts per second when
/// `count_rate`, for per-I/O IOPS logs).
fn reduce(mut pts: Vec<(f64, f64)>, count_rate: bool) -> Vec<(f64, f64)> {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    if pts.len() <= MAX_POINTS && !count_rate {
        return pts;
    }
    let (t0, t1) = (pts[0].0, pts[pts.len() - 1].0);
    let span = (t1 - t0).max(1e-3);
    // Per-I/O IOPS need buckets of at least a second to mean "per second" with few samples.
    let n = if count_rate {
        (span.ceil() as usize).clamp(1, MAX_POINTS)
    } else {
        MAX_POINTS
    };
    let width = span / n as f64;
    let mut sums = vec![(0.0f64, 0usize); n];
    for (t, v) in &pts {
        let i = (((t - t0) / width) as usize).min(n - 1);
        sums[i].0 += v;
        sums[i].1 += 1;
    }
    sums.iter()
        .enumerate()
        .filter(|(_, (_, c))| *c > 0)
        .map(|(i, (s, c))| {
            let t = t0 + (i as f64 + 0.5) * width;
            let v = if count_rate {
                *s / width
            } else {
                s / *c as f64
            };
            (t, v)
        })
        .collect()
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_and_without_job_numbers() {
        let n = |s: &str| log_name(Path::new(s));
        assert_eq!(
            n("seq_read_bw.1.log"),
            Some(("seq_read.1".into(), LogKind::Bw))
        );
        assert_eq!(n("x_clat.12.log"), Some(("x.12".into(), LogKind::Clat)));
        assert_eq!(n("agg-read_bw.log"), Some(("agg-read".into(), LogKind::Bw)));
        assert_eq!(n("x_clat_hist.1.log"), None);
        assert_eq!(n("x_bw.1.txt"), None);
    }

    #[test]
    fn files_of_a_prefix_and_not_of_a_longer_one() {
        let dir = std::env::temp_dir().join(format!("fiox-plot-prefix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in [
            "a_bw.1.log",
            "a_clat.2.log",
            "a_lat.log",
            "ab_bw.1.log",
            "a_bw.x.log",
            "a.json",
        ] {
            std::fs::write(dir.join(n), "").unwrap();
        }
        let found = files_with_prefixes(&[dir.join("a").display().to_string()]);
        std::fs::remove_dir_all(&dir).unwrap();
        let names: Vec<String> = found
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a_bw.1.log", "a_clat.2.log", "a_lat.log"]);
    }

    #[test]
    fn lines_with_and_without_offset_and_hex_prio() {
        assert_eq!(
            parse_line("1000, 4096, 1, 4096, 0").unwrap(),
            (1.0, 4096.0, 1)
        );
        assert_eq!(
            parse_line("250, 99, 0, 4096, 81920, 0x0000").unwrap(),
            (0.25, 99.0, 0)
        );
        assert!(parse_line("x, 1, 0, 4096, 0").unwrap_err().contains("'x'"));
        assert!(parse_line("1, 1, 7, 4096, 0")
            .unwrap_err()
            .contains("direction"));
        assert!(parse_line("1, 1").unwrap_err().contains("2 columns"));
    }

    #[test]
    fn per_io_iops_become_a_rate() {
        let pts: Vec<(f64, f64)> = (0..4000).map(|i| (i as f64 / 1000.0, 1.0)).collect();
        let r = reduce(pts, true);
        assert_eq!(r.len(), 4);
        assert!(r.iter().all(|(_, v)| (*v - 1000.0).abs() < 2.0), "{r:?}");
    }

    #[test]
    fn long_series_are_bucketed_to_means() {
        let pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 5.0)).collect();
        let r = reduce(pts, false);
        assert_eq!(r.len(), MAX_POINTS);
        assert!(r.iter().all(|(_, v)| *v == 5.0));
    }
}
