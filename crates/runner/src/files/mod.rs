//! File planning and preparation: which paths a job uses (`filename`, `directory`, `nrfiles`,
//! `filename_format`), the region of each it may touch (`size`, `filesize`, `offset`,
//! `offset_increment`), laying out missing or short files the way fio does, opening them with the
//! job's flags (the block-device safety check is blockdev.rs's).
//!
//! The folder holds the rest of a job's files: which files fiox owns and may remove ([`owned`]),
//! opening for writing without trusting an earlier check ([`safeopen`]), the block-device check
//! and claim ([`blockdev`]), every writing job's files checked before the first group
//! ([`precheck`]), a pmemblk job's pool files ([`pools`]), the page cache of a job's files ([`cache`]) and `openfiles` below
//! `nrfiles` ([`opengate`]).

pub(crate) mod blockdev;
pub(crate) mod cache;
pub(crate) mod fdbudget;
pub(crate) mod opengate;
pub(crate) mod owned;
pub(crate) mod pools;
pub(crate) mod precheck;
pub(crate) mod safeopen;

use crate::error::RunError;
use crate::sys;
use fiox_job::{FadviseHint, FallocateMode, JobSpec, SizeSpec};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// What kind of target a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    Block,
    /// Character devices and other special files: used as they are, never laid out.
    Other,
}

/// One file of a job, planned before any I/O.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    pub path: PathBuf,
    pub kind: FileKind,
    /// Where the job's I/O region starts in the file.
    pub offset: u64,
    /// Length of the job's I/O region.
    pub size: u64,
    /// Size on disk when planned (0 when missing).
    pub real_size: u64,
    /// The file is missing or shorter than `offset + size` and must be extended before I/O.
    pub needs_layout: bool,
    /// fiox created this file (only such files are ever unlinked).
    pub created: bool,
    /// The inode this job's layout created or checked for the job's writes: the job's own
    /// open need not check it again when it finds that same inode.
    pub laid_out: Option<crate::files::owned::Identity>,
}

/// All files of one job plus the number of bytes the job transfers per pass.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub files: Vec<PlannedFile>,
    pub io_bytes: u64,
}

/// Expand fio's `filename_format` keywords for file `filenum` of a job.
pub fn expand_format(fmt: &str, job: &JobSpec, filenum: u32) -> String {
    // `$clientuid` is always 0 without client/server mode.
    fmt.replace("$jobname", &job.name)
        .replace("$jobnum", &job.clone_index.to_string())
        .replace("$filenum", &filenum.to_string())
        .replace("$clientuid", "0")
}

/// How many files a job uses: its `filename` list, or `nrfiles` generated names (at least one).
pub fn file_count(job: &JobSpec) -> usize {
    if job.files.filenames.is_empty() {
        job.files.nrfiles.max(1) as usize
    } else {
        job.files.filenames.len()
    }
}

/// Paths of a job's files in order ([`file_count`] of them). A pmemblk job's names lose their
/// pool sizes (`path,bsize,fsizemib`, see [`pools`]).
pub fn file_paths(job: &JobSpec) -> Vec<PathBuf> {
    let pool = job.ioengine.is(fiox_job::Engine::Pmemblk);
    file_names(job)
        .into_iter()
        .map(|n| {
            if pool {
                place(job, &fiox_engine::pmemblk::name::PoolName::path_of(&n))
            } else {
                place(job, &n)
            }
        })
        .collect()
}

/// The names of a job's files in order, as written (`filename=`) or generated
/// (`filename_format`).
pub fn file_names(job: &JobSpec) -> Vec<String> {
    let fs = &job.files;
    if fs.filenames.is_empty() {
        (0..file_count(job) as u32)
            .map(|i| expand_format(&fs.filename_format, job, i))
            .collect()
    } else {
        fs.filenames.clone()
    }
}

/// Where the file named `name` is: as named if absolute, else in the job's `directory`.
pub fn place(job: &JobSpec, name: &str) -> PathBuf {
    let fs = &job.files;
    // As fio's add_file: a clone's generated files all go into the directory of its subjob
    // number (round-robin over `directory=a:b`); `filename=` files into the first.
    let dir = if fs.filenames.is_empty() {
        job.clone_index as usize
    } else {
        0
    };
    let p = PathBuf::from(name);
    if p.is_absolute() || fs.directories.is_empty() {
        p
    } else {
        Path::new(&fs.directories[dir % fs.directories.len()]).join(p)
    }
}

fn probe(path: &Path) -> Result<(FileKind, u64), RunError> {
    match std::fs::metadata(path) {
        Ok(m) => {
            let ft = m.file_type();
            if ft.is_file() {
                Ok((FileKind::Regular, m.len()))
            } else if ft.is_block_device() {
                let f = File::open(path).map_err(|e| RunError::io("open", path, e))?;
                let size = sys::blkdev_size(std::os::fd::AsRawFd::as_raw_fd(&f))
                    .map_err(|e| RunError::io("get size of block device", path, e))?;
                if size == 0 {
                    // fio 3.33's words and exit status: a loop device with nothing attached
                    // (or detached since) wrote on to fail with ENOSPC alone (M10).
                    return Err(RunError::Target {
                        msg: format!("{}: zero sized block device?", path.display()),
                        errno: libc::EINVAL,
                    });
                }
                Ok((FileKind::Block, size))
            } else if ft.is_fifo() {
                // Opening a FIFO blocks until a writer comes (a read job hung there, deaf to
                // SIGTERM) and it cannot seek (a write job failed with ESPIPE): refused at once.
                Err(RunError::Target {
                    msg: format!(
                        "{} is a FIFO (named pipe): fiox runs I/O on files and devices it can \
                         seek, not on pipes",
                        path.display()
                    ),
                    errno: libc::ESPIPE,
                })
            } else if ft.is_dir() {
                Err(RunError::Target {
                    msg: format!(
                        "{} is a directory; use directory= for where files go and filename= for \
                         files",
                        path.display()
                    ),
                    errno: libc::EISDIR,
                })
            } else {
                Ok((FileKind::Other, 0))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((FileKind::Regular, 0)),
        Err(e) => Err(RunError::io("stat", path, e)),
    }
}

fn resolve_size(spec: SizeSpec, whole: u64) -> u64 {
    match spec {
        SizeSpec::Bytes(b) => b,
        SizeSpec::Percent(p) => (whole as f64 * p / 100.0) as u64,
    }
}

/// Smallest block size over the directions the job uses.
/// The POSIX_FADV_* hint `fadvise_hint` gives the job's files (None: no hint).
pub fn access_advice(job: &JobSpec) -> Option<i32> {
    match job.files.fadvise_hint {
        FadviseHint::None => None,
        FadviseHint::Random => Some(libc::POSIX_FADV_RANDOM),
        FadviseHint::Sequential => Some(libc::POSIX_FADV_SEQUENTIAL),
        FadviseHint::NoReuse => Some(libc::POSIX_FADV_NOREUSE),
        FadviseHint::Pattern if job.rw.mode.is_random() => Some(libc::POSIX_FADV_RANDOM),
        FadviseHint::Pattern => Some(libc::POSIX_FADV_SEQUENTIAL),
    }
}

/// Give a just-opened file of the job its access hint over the job's region, as fio does at
/// every open (so a random buffered job gets no readahead). Only regular files and block
/// devices take it; a failure only loses the hint, and is returned for a warning.
pub fn advise_access(
    job: &JobSpec,
    fd: std::os::fd::RawFd,
    offset: u64,
    len: u64,
) -> std::io::Result<()> {
    match access_advice(job) {
        Some(advice) => fiox_engine::sys::fadvise(fd, offset, len, advice),
        None => Ok(()),
    }
}

/// `write_hint`: set the job's write life hint on a just-opened file, as fio at every open:
/// on the open file for direct jobs, on the inode otherwise. A failure is the job's error
/// (fio's "fcntl write hint").
pub fn apply_write_hint(
    job: &JobSpec,
    fd: std::os::fd::RawFd,
    path: &std::path::Path,
) -> Result<(), crate::RunError> {
    match job.files.write_hint {
        Some(h) => crate::sys::set_write_hint(fd, h, job.direct)
            .map_err(|e| crate::RunError::io("fcntl write hint", path, e)),
        None => Ok(()),
    }
}

pub fn min_bs(job: &JobSpec) -> u64 {
    let mut m = u64::MAX;
    let rw = job.rw.mode;
    for (used, bs) in [
        (rw.has_read(), &job.bs.read),
        (rw.has_write(), &job.bs.write),
        (rw.has_trim(), &job.bs.trim),
    ] {
        if used {
            m = m.min(bs.min);
        }
    }
    if m == u64::MAX {
        job.bs.read.min
    } else {
        m.max(1)
    }
}

/// Decide every file's region and whether it needs laying out. `diskless` engines (null) take
/// the sizes as given and never touch the files.
pub fn plan(job: &JobSpec, diskless: bool) -> Result<FilePlan, RunError> {
    plan_sized(job, diskless, None)
}

/// [`plan`], with each file's size known already where `known` gives it (a pmemblk pool's
/// usable bytes, as fio's engine reports them): such files are never laid out.
pub fn plan_sized(
    job: &JobSpec,
    diskless: bool,
    known: Option<&[u64]>,
) -> Result<FilePlan, RunError> {
    let paths = file_paths(job);
    let n = paths.len() as u64;
    let total = match job.size {
        Some(SizeSpec::Bytes(b)) => Some(b),
        _ => None,
    };
    // fio's per-file split (first files one block larger when size does not divide evenly,
    // filesize ranges drawn from the job's stream).
    let split = fiox_workload::split_size(job, n as u32, total, job.rand.randseed);
    let mut files = Vec::with_capacity(paths.len());
    for (i, path) in paths.into_iter().enumerate() {
        let (kind, real) = if let Some(&size) = known.and_then(|k| k.get(i)) {
            (FileKind::Regular, size)
        } else if diskless {
            (FileKind::Regular, diskless_size(job))
        } else {
            probe(&path)?
        };
        let offset = match job.offset {
            SizeSpec::Percent(p) => {
                let off = ((real as f64 * p / 100.0) as u64).saturating_add(incr(job, real));
                align_pct_increment(job, off)
            }
            SizeSpec::Bytes(_) => resolve_offset(job, real),
        }
        .saturating_add(if job.files.file_append { real } else { 0 });
        let size = match split.get(i).copied().flatten() {
            Some(drawn) => match job.files.filesize {
                Some(range) => filesize_region(job, &path, range, drawn, real, offset, diskless)?,
                None => drawn,
            },
            None if job.files.fill_device && kind == FileKind::Regular => {
                fill_region(job, offset, n)
            }
            None => file_region(job, real, offset, &path, diskless)?,
        };
        check_region_end(job, &path, offset, size)?;
        // file_append writes past the end on purpose: nothing to lay out. A file whose
        // layout by fiox was interrupted is laid out again.
        let needs_layout = kind == FileKind::Regular
            && !diskless
            && !job.files.create_on_open
            && !job.files.file_append
            && (offset + size > real
                || (real > 0 && crate::files::owned::layout_incomplete(&path)));
        files.push(PlannedFile {
            path,
            kind,
            offset,
            size,
            real_size: real,
            needs_layout,
            created: false,
            laid_out: None,
        });
    }
    let total: u64 = files.iter().map(|f| f.size).sum();
    let io_bytes = match (job.io_size, job.files.filesize, job.size) {
        (Some(s), _, _) => resolve_size(s, total),
        // With filesize, size= bounds the job's bytes, not the files (fio's total_io_size):
        // size=16k filesize=64k writes 16 KiB of a 64 KiB file.
        (None, Some(_), Some(SizeSpec::Bytes(s))) => s.min(total),
        (None, _, _) => total,
    };
    if total < min_bs(job) {
        return Err(RunError::Plan(format!(
            "job '{}': block size {} is larger than the data set range ({} bytes)",
            job.name,
            min_bs(job),
            total
        )));
    }
    Ok(FilePlan { files, io_bytes })
}

/// With `filesize`, fio 3.33's region of a file: `filesize` is where the file ends and `offset`
/// where the region starts inside it (`size` then only bounds the job's bytes), so
/// `offset=32k filesize=64k` does I/O at 32-64 KiB and never grows the file past 64 KiB. An
/// existing file whose size is already within `filesize`'s range keeps its size. An offset past
/// the file's end is fio's "you need to specify valid offset=".
fn filesize_region(
    job: &JobSpec,
    path: &Path,
    (lo, hi): (u64, u64),
    drawn: u64,
    real: u64,
    offset: u64,
    diskless: bool,
) -> Result<u64, RunError> {
    let (end, past) = if !diskless && real >= lo && real <= hi {
        (real, offset > real)
    } else {
        (drawn, offset > lo)
    };
    if past || offset > end {
        return Err(RunError::Plan(format!(
            "job '{}': you need to specify valid offset= (offset {offset} is past the end of \
             {}, {end} bytes by filesize=)",
            job.name,
            path.display()
        )));
    }
    Ok(end - offset)
}

/// `fill_device` without `size=`: fio's size of -1, split over the files; here as much as
/// a file offset can reach (2^63-1), in whole blocks. The writes end at ENOSPC long before.
fn fill_region(job: &JobSpec, offset: u64, nfiles: u64) -> u64 {
    const MAX: u64 = i64::MAX as u64;
    let each = (MAX - offset.min(MAX)) / nfiles.max(1);
    each - each % min_bs(job).max(1)
}

/// This clone's share of `offset_increment`: bytes, or (`N%`) N percent of the file's size as
/// setup finds it (`real`: 0 for a file not created yet, as in fio's get_start_offset).
fn incr(job: &JobSpec, real: u64) -> u64 {
    let step = if job.offset_increment_pct > 0 {
        (job.offset_increment_pct as u128 * real as u128 / 100).min(u64::MAX as u128) as u64
    } else {
        job.offset_increment
    };
    step.saturating_mul(job.clone_index as u64)
}

/// fio rounds an offset that a percentage increment moved up to the next `offset_align`
/// boundary, or the smallest block size of all three directions when that is not set.
fn align_pct_increment(job: &JobSpec, off: u64) -> u64 {
    if job.offset_increment_pct == 0 {
        return off;
    }
    let align = match job.offset_align {
        0 => job
            .bs
            .read
            .min
            .min(job.bs.write.min)
            .min(job.bs.trim.min)
            .max(1),
        a => a,
    };
    off.div_ceil(align).saturating_mul(align)
}

/// The region must end at a real file offset: past 2^63-1 the kernel refuses every I/O (fio
/// fails in ftruncate with EINVAL) and the arithmetic of offsets would wrap.
fn check_region_end(job: &JobSpec, path: &Path, offset: u64, size: u64) -> Result<(), RunError> {
    const MAX: u64 = i64::MAX as u64;
    match offset.checked_add(size) {
        Some(end) if end <= MAX => Ok(()),
        _ => Err(RunError::Plan(format!(
            "job '{}': the I/O region of {} (offset {offset} + size {size}) ends beyond the \
             largest file offset, 2^63-1; nothing can be done there (check offset=, \
             offset_increment= and size=)",
            job.name,
            path.display()
        ))),
    }
}

fn resolve_offset(job: &JobSpec, real: u64) -> u64 {
    let base = match job.offset {
        SizeSpec::Bytes(b) => b,
        SizeSpec::Percent(_) => 0,
    };
    let off = base.saturating_add(incr(job, real));
    if job.offset_increment_pct > 0 {
        return align_pct_increment(job, off);
    }
    if job.offset_align > 0 {
        return off - off % job.offset_align;
    }
    off
}

/// Length of the I/O region of a file without an explicit size: a percentage of it, or the
/// existing file from `offset` to its end.
fn file_region(
    job: &JobSpec,
    real: u64,
    offset: u64,
    path: &Path,
    diskless: bool,
) -> Result<u64, RunError> {
    let bs = min_bs(job);
    match job.size {
        Some(SizeSpec::Percent(p)) if real > 0 => {
            let avail = real.saturating_sub(offset);
            let s = (real as f64 * p / 100.0) as u64;
            let s = s.min(avail);
            Ok(s - s % bs)
        }
        _ if real > offset => Ok(real - offset),
        _ if diskless => Err(RunError::Plan(format!(
            "job '{}': ioengine={} needs size= or filesize= (there is no file to take it \
             from)",
            job.name,
            job.ioengine.as_str().trim()
        ))),
        _ if real == 0 && path.exists() && !path.is_file() => Err(RunError::Plan(format!(
            "job '{}': {} is neither a regular file nor a block device, so it has no size; \
             set size=",
            job.name,
            path.display()
        ))),
        _ => Err(RunError::Plan(format!(
            "job '{}': no size given and {} {}; set size= or use an existing file",
            job.name,
            path.display(),
            if real == 0 {
                "does not exist or is empty".to_string()
            } else {
                format!("is only {real} bytes, at or below offset {offset}")
            }
        ))),
    }
}

/// The size a diskless engine gives each file: fio's filecreate and dircreate say one
/// minimum block (their get_file_size), so they run without size=; the others have none.
fn diskless_size(job: &JobSpec) -> u64 {
    if matches!(
        job.ioengine.engine(),
        Some(fiox_job::Engine::Filecreate | fiox_job::Engine::Dircreate)
    ) {
        min_bs(job)
    } else {
        0
    }
}

/// Whether the job's files open lazily, at most `openfiles` at a time (fio's model), and
/// with `create_on_open` are created by that open. verify_only jobs too: their reads go
/// through the same loop (a writing workload's verify phase opens one file at a time).
pub fn lazy_open(job: &JobSpec, nfiles: usize, diskless: bool) -> bool {
    let cap = job.files.openfiles as usize;
    let capped = cap > 0 && cap < nfiles;
    (capped || job.files.create_on_open || unlinks_each_loop(job)) && !diskless
}

/// `unlink_each_loop` with more than one loop: before each loop after the first the job's
/// files are closed and removed (only those fiox created), then opened (so created) again,
/// as fio does. time_based jobs run one fio loop, so they unlink nothing.
pub fn unlinks_each_loop(job: &JobSpec) -> bool {
    job.files.unlink_each_loop && job.timing.loops > 1 && !job.timing.time_based
}

/// Whether the job ever writes (writes, trims, or write phases of mixed modes).
/// `verify_only` jobs never write: they check what an earlier run wrote.
pub fn job_writes(job: &JobSpec) -> bool {
    (job.rw.mode.has_write() || job.rw.mode.has_trim()) && !job.verify.verify_only
}

/// The directory a file is to be created in must exist (fio does not create directories).
pub fn check_parent(path: &Path) -> Result<(), RunError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(RunError::Plan(format!(
                "directory {} of file {} does not exist",
                dir.display(),
                path.display()
            )));
        }
    }
    Ok(())
}

/// Extend a missing or short file as fio does: read workloads get real data written so reads
/// hit allocated blocks; write-only workloads get a fresh (preallocated) file. A missing file
/// is created with O_EXCL, an existing one checked on the open descriptor (see
/// [`crate::files::safeopen::open_for_layout`]; `who`: what the user allowed). A
/// file fiox owns is marked as being laid out until the layout finished (and was fsynced
/// with create_fsync), so a layout stopped by Ctrl-C or a crash is redone by the next run.
pub fn lay_out(
    job: &JobSpec,
    f: &mut PlannedFile,
    who: &crate::files::safeopen::Writer,
    stop: &dyn Fn() -> bool,
) -> Result<(), RunError> {
    use crate::files::owned::{Layout, Mark};
    let path = &f.path;
    let target = f.offset + f.size;
    let needs_data = job.rw.mode.has_read() || job.files.overwrite;
    check_parent(path)?;
    let job_from = job_writes(job).then_some(f.offset);
    let (mut file, mark, origin) =
        crate::files::safeopen::open_for_layout(who, path, job.files.allow_file_create, job_from)?;
    let created = origin == crate::files::safeopen::Origin::Created;
    f.created |= created;
    let meta = file.metadata().map_err(|e| RunError::io("stat", path, e))?;
    let size = meta.len();
    // A file with no data that someone made for fiox (mktemp, KDiskMark's temp file) is
    // fiox's once laid out: every byte in it is fiox's.
    let ours = matches!(mark, Mark::Ours(_)) || origin == crate::files::safeopen::Origin::Empty;
    // An earlier layout that did not finish: its bytes are fiox's but of unknown state.
    let from = if matches!(mark, Mark::Ours(Layout::Partial)) {
        0
    } else {
        size
    };
    if ours && !created {
        // Marked before it grows, so a job sharing the file never sees it unmarked with data
        // (a file this open created is marked so already).
        crate::files::owned::mark(&file, path, Layout::Partial)?;
    }
    // fill_device: fio neither truncates nor preallocates (the size may be unlimited).
    if !job.files.fill_device {
        preallocate(job.files.fallocate, &file, target)
            .map_err(|e| RunError::io("fallocate", path, e))?;
    }
    if needs_data {
        let done = match write_data(&mut file, from, target, stop) {
            Ok(done) => done,
            // fill_device: the layout writes until the file system is full, as fio's.
            Err(e) if job.files.fill_device && is_full(&e) => true,
            Err(e) => return Err(RunError::io("lay out", path, e)),
        };
        if !done {
            // Stopped: the file stays marked incomplete and the job does no I/O on it.
            return Ok(());
        }
    }
    if job.files.create_fsync && needs_data {
        // fio's create_fsync (default on): the laid-out data is on the device before the job.
        // A file only created or extended (a write job's) has no data to sync, and fio does
        // not fsync it.
        file.sync_all()
            .map_err(|e| RunError::io("fsync after laying out", path, e))?;
    }
    if ours {
        crate::files::owned::mark(&file, path, Layout::Complete)?;
    }
    f.real_size = size.max(target);
    f.laid_out = Some(crate::files::owned::Identity::of(&meta));
    if job.files.fill_device && needs_data {
        // fio takes the filled file's size; a job that does not write does no more I/O than
        // it holds, one that also writes keeps its unlimited size and writes past the end
        // until ENOSPC (fio 3.33's setup_files: only `!td_write` caps io_size).
        let real = file
            .metadata()
            .map_err(|e| RunError::io("stat", path, e))?
            .len();
        f.real_size = real;
        if !job.rw.mode.has_write() {
            f.size = f.size.min(real);
        }
    }
    f.needs_layout = false;
    Ok(())
}

/// ENOSPC or EDQUOT: what ends a `fill_device` write.
fn is_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// After a `fill_device` layout changed the files' sizes: the job's bytes of I/O again.
pub fn refresh_io_bytes(job: &JobSpec, plan: &mut FilePlan) {
    let total: u64 = plan.files.iter().map(|f| f.size).sum();
    plan.io_bytes = match job.io_size {
        Some(s) => resolve_size(s, total),
        None => total,
    };
}

fn preallocate(mode: FallocateMode, file: &File, len: u64) -> std::io::Result<()> {
    let fd = std::os::fd::AsRawFd::as_raw_fd(file);
    let r = match mode {
        FallocateMode::None => Ok(()),
        FallocateMode::Native => sys::fallocate(fd, 0, 0, len),
        FallocateMode::Keep => sys::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, len),
        FallocateMode::Posix => sys::posix_fallocate(fd, 0, len),
        FallocateMode::Truncate => file.set_len(len),
    };
    match r {
        // Filesystems without fallocate (tmpfs on old kernels, some FUSE): laying out by
        // writing still works, so this is not an error, as in fio.
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(()),
        // fio's native mode is a hint: when it fails (ENOSPC on a small filesystem) the job
        // runs and its writes report the failure where it happens, with file and offset.
        Err(_) if mode == FallocateMode::Native => Ok(()),
        other => other,
    }
}

/// Write pseudo-random data from `from` to `to` in large chunks; false when `stop` ended it
/// early.
fn write_data(
    file: &mut File,
    from: u64,
    to: u64,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    const CHUNK: usize = 1 << 20;
    let mut left = to.saturating_sub(from);
    // A buffer the size of what is laid out (rounded up to whole words), at most a chunk:
    // filling a whole chunk for each of 100,000 4 KiB files cost 0.8 ms a file.
    let mut buf = vec![0u8; (left.min(CHUNK as u64) as usize).next_multiple_of(8)];
    let mut state = 0x2545_F491_4F6C_DD1Du64 ^ from;
    file.seek(SeekFrom::Start(from))?;
    while left > 0 && !stop() {
        let n = (left as usize).min(buf.len());
        for w in buf[..n.next_multiple_of(8)].chunks_exact_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            w.copy_from_slice(&state.to_le_bytes());
        }
        file.write_all(&buf[..n])?;
        left -= n as u64;
    }
    Ok(left == 0)
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::{RwMode, RwSpec};

    fn writer(job: &str) -> crate::files::safeopen::Writer<'_> {
        crate::files::safeopen::Writer {
            job,
            allow: false,
            allowed: &crate::files::safeopen::NO_TARGETS,
        }
    }

    fn job(name: &str) -> JobSpec {
        JobSpec {
            name: name.into(),
            ..JobSpec::default()
        }
    }

    #[test]
    fn default_names_follow_fio() {
        let mut j = job("x");
        j.clone_index = 2;
        j.files.nrfiles = 2;
        j.files.directories = vec!["/d1".into(), "/d2".into()];
        let p = file_paths(&j);
        assert_eq!(
            p,
            vec![PathBuf::from("/d1/x.2.0"), PathBuf::from("/d1/x.2.1")]
        );
        j.clone_index = 1;
        assert_eq!(file_paths(&j)[1], PathBuf::from("/d2/x.1.1"));
        j.files.filenames = vec!["f1".into(), "f2".into()];
        let p = file_paths(&j);
        assert_eq!(p, vec![PathBuf::from("/d1/f1"), PathBuf::from("/d1/f2")]);
    }

    #[test]
    fn size_is_split_over_files() {
        let mut j = job("x");
        j.files.nrfiles = 3;
        j.size = Some(SizeSpec::Bytes(10 << 20));
        j.files.directories = vec!["/nonexistent-fiox-dir".into()];
        let p = plan(&j, false).unwrap();
        assert_eq!(p.files.len(), 3);
        // fio: the first files take one block more when size does not divide evenly.
        let sizes: Vec<u64> = p.files.iter().map(|f| f.size).collect();
        let sum: u64 = sizes.iter().sum();
        assert!(sum.abs_diff(10 << 20) <= 3 * 4096, "{sizes:?}");
        assert!(
            sizes.iter().all(|&s| s.abs_diff((10 << 20) / 3) <= 4096),
            "{sizes:?}"
        );
        assert!(p.files.iter().all(|f| f.needs_layout));
        assert_eq!(p.io_bytes, sum);
    }

    /// fio's filesize: the file's end, offset inside it, size bounding the bytes only.
    #[test]
    fn filesize_is_where_the_file_ends() {
        let mut j = job("x");
        j.files.directories = vec!["/nonexistent-fiox-dir".into()];
        j.files.filesize = Some((64 << 10, 64 << 10));
        j.size = Some(SizeSpec::Bytes(64 << 10));
        j.offset = SizeSpec::Bytes(32 << 10);
        let p = plan(&j, false).unwrap();
        assert_eq!((p.files[0].offset, p.files[0].size), (32 << 10, 32 << 10));
        assert_eq!(p.io_bytes, 32 << 10, "never past the file's end");
        j.offset = SizeSpec::Bytes(0);
        j.size = Some(SizeSpec::Bytes(16 << 10));
        let p = plan(&j, false).unwrap();
        assert_eq!((p.files[0].size, p.io_bytes), (64 << 10, 16 << 10));
        j.offset = SizeSpec::Bytes(80 << 10);
        let e = plan(&j, false).unwrap_err().to_string();
        assert!(e.contains("you need to specify valid offset="), "{e}");
    }

    #[test]
    fn missing_size_is_a_clear_error() {
        let mut j = job("x");
        j.files.filenames = vec!["/nonexistent-fiox-dir/f".into()];
        let e = plan(&j, false).unwrap_err().to_string();
        assert!(e.contains("no size given"), "{e}");
    }

    #[test]
    fn layout_creates_and_marks_created() {
        let dir = std::env::temp_dir().join(format!("fiox-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut j = job("lay");
        j.rw = RwSpec {
            mode: RwMode::RandRead,
            n: 0,
        };
        j.size = Some(SizeSpec::Bytes(3 << 20));
        j.files.directories = vec![dir.to_string_lossy().into()];
        let mut p = plan(&j, false).unwrap();
        lay_out(&j, &mut p.files[0], &writer(&j.name), &|| false).unwrap();
        assert!(p.files[0].created);
        assert_eq!(std::fs::metadata(&p.files[0].path).unwrap().len(), 3 << 20);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A user's file that appears after the job was planned and checked (while another job
    /// lays out) is found by the layout's O_EXCL create and refused, not overwritten.
    #[test]
    fn layout_refuses_a_file_that_appeared_after_the_plan() {
        let dir = std::env::temp_dir().join(format!("fiox-files-race-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut j = job("race");
        j.rw = RwSpec {
            mode: RwMode::RandRead,
            n: 0,
        };
        j.size = Some(SizeSpec::Bytes(1 << 20));
        j.files.directories = vec![dir.to_string_lossy().into()];
        let mut p = plan(&j, false).unwrap();
        assert!(p.files[0].needs_layout && p.files[0].real_size == 0);
        let data: Vec<u8> = (0..64u32 << 10).map(|i| (i % 229) as u8).collect();
        std::fs::write(&p.files[0].path, &data).unwrap();
        // The layout writes only past the end of someone's file: allowed, and the data stays.
        lay_out(&j, &mut p.files[0], &writer(&j.name), &|| false).unwrap();
        assert!(!p.files[0].created);
        let now = std::fs::read(&p.files[0].path).unwrap();
        assert!(
            now[..data.len()] == data[..],
            "the user's bytes were overwritten"
        );
        // A write job's region covers them: refused before the layout touches the file.
        let mut w = j.clone();
        w.rw.mode = RwMode::Write;
        let path = p.files[0].path.clone();
        std::fs::remove_file(&path).unwrap();
        let mut p = plan(&w, false).unwrap();
        std::fs::write(&path, &data).unwrap();
        let e = lay_out(&w, &mut p.files[0], &writer(&w.name), &|| false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("refusing to write to"), "{e}");
        assert!(
            std::fs::read(&path).unwrap() == data,
            "the user's file changed"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
