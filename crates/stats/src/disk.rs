//! Disk statistics over a run (`Disk stats (read/write)` and JSON `disk_util`): which block
//! device holds a job's file, and what `/sys/block/DEV/stat` says it did meanwhile.
//!
//! Resolution follows fio's diskutil.c, plus loop devices: `stat` the path (a block device
//! special file stands for itself) → `major:minor` → `/sys/dev/block/M:m` → if that is a
//! partition, its parent disk. Stacked devices get their underlying disks as `slaves`:
//! dm/md through `/sys/block/DEV/slaves/*` (recursively, partitions mapped to their disks), as
//! fio. A loop device is a plain device for fio (no slaves, no `aggr*` figures); the disk
//! holding its `loop/backing_file` is tracked as its `backing`, which only fiox's own part of
//! the reports shows. Files on filesystems without a block device (tmpfs, major 0) have no
//! disk; a file not created yet is on its directory's device.
//!
//! [`DiskStatsSampler::add_path`] snapshots a device's counters when it is first seen;
//! [`DiskStatsSampler::finish`] reads them again and returns the deltas, with
//! `util = 100 * io_ticks / elapsed_ms` capped at 100 (fio's `print_disk_util`).

use crate::model::DiskResult;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    #[error("cannot read disk statistics {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("unexpected contents in {}: {line:?}", path.display())]
    Parse { path: PathBuf, line: String },
}

/// The counters fio reads from a `stat` file (fields 1-8, 10, 11).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub sectors: [u64; 2],
    pub ticks: [u64; 2],
    pub io_ticks: u64,
    pub in_queue: u64,
}

impl DiskCounters {
    /// Parse the first line of a `/sys/block/DEV/stat` file (at least 11 numbers).
    pub fn parse(line: &str) -> Option<DiskCounters> {
        let f: Vec<u64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        if f.len() < 11 {
            return None;
        }
        Some(DiskCounters {
            ios: [f[0], f[4]],
            merges: [f[1], f[5]],
            sectors: [f[2], f[6]],
            ticks: [f[3], f[7]],
            io_ticks: f[9],
            in_queue: f[10],
        })
    }

    fn read(path: &Path) -> Result<DiskCounters, DiskError> {
        let text = std::fs::read_to_string(path).map_err(|source| DiskError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let line = text.lines().next().unwrap_or("");
        DiskCounters::parse(line).ok_or_else(|| DiskError::Parse {
            path: path.to_path_buf(),
            line: line.to_string(),
        })
    }

    /// Counter deltas (wrapping, as the kernel's counters may).
    fn since(&self, e: &DiskCounters) -> DiskCounters {
        let d2 = |a: [u64; 2], b: [u64; 2]| [a[0].wrapping_sub(b[0]), a[1].wrapping_sub(b[1])];
        DiskCounters {
            ios: d2(self.ios, e.ios),
            merges: d2(self.merges, e.merges),
            sectors: d2(self.sectors, e.sectors),
            ticks: d2(self.ticks, e.ticks),
            io_ticks: self.io_ticks.wrapping_sub(e.io_ticks),
            in_queue: self.in_queue.wrapping_sub(e.in_queue),
        }
    }
}

/// Split a Linux `dev_t` into (major, minor) (glibc's encoding).
pub fn dev_major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// A device being watched.
#[derive(Debug, Clone)]
struct Tracked {
    name: String,
    /// The device's sysfs directory (a whole disk, never a partition).
    dir: PathBuf,
    before: DiskCounters,
    since: Instant,
    slaves: Vec<Tracked>,
    /// A loop device's backing disk (not one of fio's slaves).
    backing: Vec<Tracked>,
}

/// Watches the disks under a run's files.
#[derive(Debug)]
pub struct DiskStatsSampler {
    sysfs: PathBuf,
    disks: Vec<Tracked>,
}

impl Default for DiskStatsSampler {
    fn default() -> Self {
        Self::new()
    }
}

/// Device numbers of the block device holding `path` (or `path` itself if it is one); the
/// parent directory's when `path` does not exist yet. None for major 0 (no block device).
fn device_of(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = match std::fs::metadata(path) {
        Ok(md) => md,
        // A bare relative name (`--filename=f`) lives in the current directory.
        Err(_) => match path.parent()? {
            p if p.as_os_str().is_empty() => std::fs::metadata(".").ok()?,
            p => std::fs::metadata(p).ok()?,
        },
    };
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    let (major, minor) = dev_major_minor(dev);
    (major != 0).then_some((major, minor))
}

impl DiskStatsSampler {
    pub fn new() -> DiskStatsSampler {
        Self::with_sysfs_root("/sys")
    }

    /// Resolve devices under another sysfs tree (tests).
    pub fn with_sysfs_root(root: impl Into<PathBuf>) -> DiskStatsSampler {
        DiskStatsSampler {
            sysfs: root.into(),
            disks: Vec::new(),
        }
    }

    /// Start watching the disk holding `path`. Ok(false) when the path is on no block device
    /// (tmpfs) or its device is already watched (directly or as a slave of another).
    pub fn add_path(&mut self, path: &Path) -> Result<bool, DiskError> {
        match device_of(path) {
            Some((major, minor)) => self.add_device(major, minor),
            None => Ok(false),
        }
    }

    /// Start watching device `major:minor` (see [`DiskStatsSampler::add_path`]).
    pub fn add_device(&mut self, major: u64, minor: u64) -> Result<bool, DiskError> {
        let Some(dir) = self.disk_dir(major, minor) else {
            return Ok(false);
        };
        let mut seen: HashSet<PathBuf> = HashSet::new();
        self.disks.iter().for_each(|d| collect_dirs(d, &mut seen));
        if seen.contains(&dir) {
            return Ok(false);
        }
        let t = self.track(dir, &mut seen)?;
        self.disks.push(t);
        Ok(true)
    }

    /// The sysfs directory of the whole disk behind `major:minor`.
    fn disk_dir(&self, major: u64, minor: u64) -> Option<PathBuf> {
        let link = self.sysfs.join(format!("dev/block/{major}:{minor}"));
        whole_disk(std::fs::canonicalize(link).ok()?)
    }

    fn track(&self, dir: PathBuf, seen: &mut HashSet<PathBuf>) -> Result<Tracked, DiskError> {
        seen.insert(dir.clone());
        let before = DiskCounters::read(&dir.join("stat"))?;
        let mut slaves = Vec::new();
        for s in self.slave_devices(&dir) {
            if seen.contains(&s) {
                continue;
            }
            slaves.push(self.track(s, seen)?);
        }
        // Its own `seen`: the backing disk does not keep a job's file on that disk from being
        // one of fio's devices.
        let mut backing = Vec::new();
        for b in self.loop_backing(&dir) {
            let mut own = seen.clone();
            if !own.contains(&b) {
                backing.push(self.track(b, &mut own)?);
            }
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Tracked {
            name,
            dir,
            before,
            since: Instant::now(),
            slaves,
            backing,
        })
    }

    /// Whole-disk directories under a stacked device (dm/md slaves), as fio reads them.
    fn slave_devices(&self, dir: &Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir.join("slaves")) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        paths.sort();
        paths
            .into_iter()
            .filter_map(|p| whole_disk(std::fs::canonicalize(p).ok()?))
            .collect()
    }

    /// The whole-disk directory holding a loop device's backing file (none for tmpfs).
    fn loop_backing(&self, dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Ok(backing) = std::fs::read_to_string(dir.join("loop/backing_file")) {
            let backing = backing.trim_end_matches('\n');
            let backing = backing.strip_suffix(" (deleted)").unwrap_or(backing);
            if let Some(d) =
                device_of(Path::new(backing)).and_then(|(major, minor)| self.disk_dir(major, minor))
            {
                out.push(d);
            }
        }
        out
    }

    /// Restart every device's counters and clock now (e.g. at the start of measurement).
    pub fn restart(&mut self) -> Result<(), DiskError> {
        fn again(t: &mut Tracked) -> Result<(), DiskError> {
            t.before = DiskCounters::read(&t.dir.join("stat"))?;
            t.since = Instant::now();
            t.slaves.iter_mut().try_for_each(again)?;
            t.backing.iter_mut().try_for_each(again)
        }
        self.disks.iter_mut().try_for_each(again)
    }

    /// Names of the watched top-level devices, in the order they were added.
    pub fn names(&self) -> Vec<String> {
        self.disks.iter().map(|d| d.name.clone()).collect()
    }

    /// Read every watched device again and return the deltas since it was added.
    pub fn finish(&self) -> Result<Vec<DiskResult>, DiskError> {
        self.disks.iter().map(result_of).collect()
    }
}

fn collect_dirs(t: &Tracked, seen: &mut HashSet<PathBuf>) {
    seen.insert(t.dir.clone());
    t.slaves.iter().for_each(|s| collect_dirs(s, seen));
}

/// A partition's directory maps to its disk's (the parent, which has the `queue` directory).
fn whole_disk(dir: PathBuf) -> Option<PathBuf> {
    if dir.join("partition").exists() {
        return dir.parent().map(Path::to_path_buf);
    }
    Some(dir)
}

fn result_of(t: &Tracked) -> Result<DiskResult, DiskError> {
    let now = DiskCounters::read(&t.dir.join("stat"))?;
    let elapsed_ms = t.since.elapsed().as_millis() as u64;
    let d = now.since(&t.before);
    Ok(DiskResult {
        name: t.name.clone(),
        ios: d.ios,
        merges: d.merges,
        sectors: d.sectors,
        ticks: d.ticks,
        io_ticks: d.io_ticks,
        in_queue: d.in_queue,
        util: util_pct(d.io_ticks, elapsed_ms),
        slaves: t.slaves.iter().map(result_of).collect::<Result<_, _>>()?,
        backing: t.backing.iter().map(result_of).collect::<Result<_, _>>()?,
    })
}

/// fio's utilisation: busy ms over elapsed ms, in percent, at most 100; 0 without time.
pub fn util_pct(io_ticks_ms: u64, elapsed_ms: u64) -> f64 {
    if elapsed_ms == 0 {
        return 0.0;
    }
    (100.0 * io_ticks_ms as f64 / elapsed_ms as f64).min(100.0)
}

/// fio's `aggr*` figures of a stacked device: its slaves' counters averaged over the number
/// of slaves (integer division) and the highest slave utilisation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SlaveAggregate {
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    pub ticks: [u64; 2],
    pub in_queue: u64,
    pub util: f64,
}

/// None when `d` has no slaves (fio prints no `aggr*` fields then).
pub fn slave_aggregate(d: &DiskResult) -> Option<SlaveAggregate> {
    let n = d.slaves.len() as u64;
    if n == 0 {
        return None;
    }
    let sum2 = |f: fn(&DiskResult) -> [u64; 2]| {
        let s = d.slaves.iter().map(f).fold([0u64, 0], |a, b| {
            [a[0].saturating_add(b[0]), a[1].saturating_add(b[1])]
        });
        [s[0] / n, s[1] / n]
    };
    Some(SlaveAggregate {
        ios: sum2(|s| s.ios),
        merges: sum2(|s| s.merges),
        ticks: sum2(|s| s.ticks),
        in_queue: d
            .slaves
            .iter()
            .map(|s| s.in_queue)
            .fold(0, u64::saturating_add)
            / n,
        util: d
            .slaves
            .iter()
            .map(|s| s.util)
            .fold(0.0, f64::max)
            .min(100.0),
    })
}

#[cfg(test)]
mod tests;
