//! The page cache of a job's files, handled as fio handles it so buffered numbers mean the same
//! thing in both tools. fio drops a file's cached pages (`invalidate=1`) at every open (even for
//! direct jobs) and gives the `fadvise_hint`; it reopens the files at the start of every new pass
//! (`loops`, and each pass of a time_based job over several files), and a buffered time_based job
//! drops the cache again each time it wraps around a file inside a pass (fio's
//! loop_cache_invalidate). Without this a wrapped buffered read is served from memory and reports
//! 4-8x fio's bandwidth. Also measures how much of the job's region is cached when its I/O
//! begins and ends (cachestat(2)), the evidence behind the `page-cache` warning.

use crate::files::{self, FileKind, PlannedFile};
use fiox_engine::sys::CacheProbe;
use fiox_job::JobSpec;
use fiox_stats::PageCache;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// Drop the cached pages of the job's region of one open file: POSIX_FADV_DONTNEED over
/// `(offset, len)` for regular files (fio's range), BLKFLSBUF for block devices.
pub(crate) fn drop_cached(kind: FileKind, fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
    match kind {
        FileKind::Regular => fiox_engine::sys::fadvise(fd, offset, len, libc::POSIX_FADV_DONTNEED),
        FileKind::Block => fiox_engine::sys::flush_block_device(fd),
        FileKind::Other => Ok(()),
    }
}

/// One open file of the job, as the pass hooks see it.
struct PassFile {
    fd: RawFd,
    kind: FileKind,
    offset: u64,
    size: u64,
}

/// What new passes and wrap-arounds do to the job's files (all open for the whole run).
pub(crate) struct PassCache {
    files: Vec<PassFile>,
    invalidate: bool,
    /// Wrap-arounds drop the cache only for buffered jobs (fio skips it for O_DIRECT).
    on_wrap: bool,
    advice: Option<i32>,
}

impl PassCache {
    /// The hooks for a job whose files stay open (`fds[i]` is file `i`'s descriptor, -1 when
    /// it has none).
    pub(crate) fn new(job: &JobSpec, plan: &[PlannedFile], fds: &[RawFd]) -> PassCache {
        let files = plan
            .iter()
            .zip(fds)
            .map(|(f, &fd)| PassFile {
                fd,
                kind: f.kind,
                offset: f.offset,
                size: f.size,
            })
            .collect();
        PassCache {
            files,
            invalidate: job.files.invalidate,
            on_wrap: job.files.invalidate && !job.direct,
            advice: files::access_advice(job),
        }
    }

    /// A new pass starts, where fio closes and reopens every file: drop the cache, then the
    /// access hint again. Failures only lose the drop or the hint (fio goes on too).
    pub(crate) fn new_pass(&self) {
        for f in self.files.iter().filter(|f| f.fd >= 0) {
            if self.invalidate {
                let _ = drop_cached(f.kind, f.fd, f.offset, f.size);
            }
            if let (Some(advice), FileKind::Regular | FileKind::Block) = (self.advice, f.kind) {
                let _ = fiox_engine::sys::fadvise(f.fd, f.offset, f.size, advice);
            }
        }
    }

    /// The verify phase begins, where fio closes and reopens the files (clear_io_state): the
    /// same drop and hint as a new pass, so verify reads do not come from pages the writes
    /// left clean in the cache.
    pub(crate) fn before_verify(&self) {
        self.new_pass();
    }

    /// File `file` wrapped around inside a pass (a time_based job rewinding it).
    pub(crate) fn wrapped(&self, file: u32) {
        if !self.on_wrap {
            return;
        }
        if let Some(f) = self.files.get(file as usize).filter(|f| f.fd >= 0) {
            let _ = drop_cached(f.kind, f.fd, f.offset, f.size);
        }
    }
}

/// Bytes of the job's regions in the page cache now, summed over its regular files and block
/// devices, and how it was measured. None when nothing could be measured.
pub(crate) fn residency(files: &[PlannedFile]) -> Option<(u64, u64, CacheProbe)> {
    let mut found = None;
    let (mut region, mut cached) = (0, 0);
    for f in files.iter().filter(|f| f.kind != FileKind::Other) {
        // A read-only open by path works whether or not the job holds the file open now
        // (openfiles, create_on_open) and does not change what is cached.
        let Ok(h) = std::fs::File::open(&f.path) else {
            continue;
        };
        if let Ok((bytes, how)) = fiox_engine::sys::cached_bytes(h.as_raw_fd(), f.offset, f.size) {
            region += f.size;
            cached += bytes;
            found = Some(how);
        }
    }
    found.map(|how| (region, cached, how))
}

/// Measures the job's region before and after its I/O.
pub(crate) struct Residency {
    before: Option<(u64, u64, CacheProbe)>,
}

impl Residency {
    /// Measure now, as the I/O begins (after `invalidate` and `pre_read`). Only reading jobs
    /// on storage are measured: their numbers are the ones the cache can inflate.
    pub(crate) fn begin(job: &JobSpec, files: &[PlannedFile], diskless: bool) -> Residency {
        let reads = job.rw.mode.has_read() || job.verify.verify_only;
        Residency {
            before: (reads && !diskless).then(|| residency(files)).flatten(),
        }
    }

    /// Measure again as the I/O ends: the evidence for the report.
    pub(crate) fn end(&self, files: &[PlannedFile]) -> Option<PageCache> {
        let (region, before, how) = self.before?;
        let after = residency(files).map_or(0, |r| r.1);
        Some(PageCache {
            method: how.name().to_string(),
            region_bytes: region,
            cached_before: before,
            cached_after: after,
        })
    }
}
