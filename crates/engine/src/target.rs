//! The engine-side view of a registered file ([`Target`]) and the blocking execution of one
//! unit with pread/pwrite/fsync/trim, shared by the psync engine, the guasi workers and the
//! engines that complete trims synchronously (libaio, posixaio, io_uring). [`FdEngine`] carries
//! the file bookkeeping of the synchronous one-syscall engines (falloc, ftruncate, e4defrag,
//! splice), so each of them only says what one unit does ([`FdOp`]).

use std::os::fd::RawFd;

use crate::sys::{self, ret};
use crate::{EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

/// A file as an engine needs it on the hot path: no path string, no allocation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub fd: RawFd,
}

impl Target {
    /// The engine's view of `f` (an fd below 0 is not open yet, create_on_open:
    /// `reopen_file` brings the real one). Nothing depends on the file's type: a trim is
    /// BLKDISCARD on any file, as fio's (see `sys::trim`).
    pub fn of(f: &EngineFile) -> Target {
        Target { fd: f.fd }
    }
}

/// Look up a unit's file; an unknown index is a runner bug reported as an error, not a panic.
#[inline]
pub(crate) fn target(
    engine: &'static str,
    files: &[Target],
    idx: u32,
) -> Result<Target, EngineError> {
    match files.get(idx as usize) {
        Some(t) => Ok(*t),
        None => Err(no_target(engine, idx, files.len())),
    }
}

/// The error of a unit naming a file the engine was not given (out of line: sync engines
/// look their target up per I/O).
#[cold]
#[inline(never)]
fn no_target(engine: &'static str, idx: u32, added: usize) -> EngineError {
    EngineError::Option {
        engine,
        option: "file",
        reason: format!("unit refers to file {idx} but only {added} were added"),
    }
}

/// `reopen_file` for engines that keep only a `Target` per file: replace entry `idx`.
pub(crate) fn replace(
    engine: &'static str,
    files: &mut [Target],
    idx: u32,
    f: &EngineFile,
) -> Result<(), EngineError> {
    target(engine, files, idx)?;
    files[idx as usize] = Target::of(f);
    Ok(())
}

/// What one unit does in a synchronous engine whose work is syscalls on the unit's file's fd
/// and that keeps nothing per file but the fd (falloc, ftruncate, e4defrag, splice).
pub(crate) trait FdOp: Send {
    /// The engine's `ioengine=` name.
    const NAME: &'static str;
    /// Do unit `io` on its file `t`: the byte count or `-errno`.
    fn run(&mut self, t: Target, io: &IoUnit) -> i64;
}

/// The [`IoEngine`] of an [`FdOp`]: the name, the flags and the file bookkeeping these
/// engines share, so each of them only says what one unit does.
pub(crate) struct FdEngine<O> {
    files: Vec<Target>,
    op: O,
}

impl<O: FdOp> FdEngine<O> {
    pub fn new(op: O) -> FdEngine<O> {
        FdEngine {
            files: Vec::new(),
            op,
        }
    }
}

impl<O: FdOp> IoEngine for FdEngine<O> {
    fn name(&self) -> &'static str {
        O::NAME
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: true,
            ..EngineFlags::default()
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        self.files.push(Target::of(file));
        Ok(())
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        replace(O::NAME, &mut self.files, index, file)
    }

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = target(O::NAME, &self.files, io.file)?;
        Ok(Queued::Done(self.op.run(t, io)))
    }
}

/// Trim a range synchronously: `len` on success, `-errno` otherwise.
pub(crate) fn trim(t: Target, offset: u64, len: u32) -> i64 {
    match sys::trim(t.fd, offset, len as u64) {
        Ok(()) => len as i64,
        Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
    }
}

/// fsync or fdatasync: `0` or `-errno`.
pub(crate) fn sync_file(fd: RawFd, data_only: bool) -> i64 {
    // SAFETY: plain syscalls on an fd.
    let r = unsafe {
        if data_only {
            libc::fdatasync(fd)
        } else {
            libc::fsync(fd)
        }
    };
    ret(r as isize)
}

/// sync_file_range(2): `0` or `-errno`; nothing to do (0) for an empty range, as fio's
/// do_sync_file_range (the kernel would take length 0 as "to the end of the file"). A unit's
/// length is 32 bits: `u32::MAX` stands for a longer range and syncs to the end of the file.
pub(crate) fn sync_range(fd: RawFd, offset: u64, len: u64, flags: u32) -> i64 {
    if len == 0 {
        return 0;
    }
    let len = if len == u64::from(u32::MAX) { 0 } else { len };
    // SAFETY: a plain syscall on an fd with integer arguments.
    let r = unsafe {
        libc::sync_file_range(
            fd,
            offset as libc::off64_t,
            len as libc::off64_t,
            flags as libc::c_uint,
        )
    };
    ret(r as isize)
}

/// Run one unit with positional syscalls (psync semantics); `rwf` != 0 switches reads and
/// writes to preadv2/pwritev2 with those flags. Inlined into the engines' `queue`: see
/// [`sys::positional_rw`]. A read or write moves the unit's [`IoUnit::buf`] (address and
/// length proven together), other operations cover its [`IoUnit::len`].
#[inline(always)]
pub(crate) fn run_positional(t: Target, io: &IoUnit, rwf: i32) -> i64 {
    let (op, offset, len) = (io.op, io.offset, io.len());
    let off = offset as libc::off_t;
    let (buf, n) = (io.buf().as_ptr(), io.buf().len() as usize);
    match op {
        // The raw syscalls, not glibc's pread/pwrite: those are thread cancellation points and
        // toggle the cancellation state around every call (about 2% of a tmpfs 4k read);
        // fiox never cancels its threads.
        IoOp::Read | IoOp::Write if rwf == 0 => {
            // SAFETY: buf is a BufSpan: n bytes proven inside a live buffer (IoUnit contract);
            // for a write the kernel only reads it.
            unsafe { sys::positional_rw(op == IoOp::Write, t.fd, buf, n, off) }
        }
        IoOp::Read | IoOp::Write => {
            let iov = libc::iovec {
                iov_base: buf.cast(),
                iov_len: n,
            };
            // SAFETY: one iovec describing the unit's BufSpan, n live bytes.
            ret(unsafe {
                if op == IoOp::Read {
                    libc::preadv2(t.fd, &iov, 1, off, rwf)
                } else {
                    libc::pwritev2(t.fd, &iov, 1, off, rwf)
                }
            })
        }
        IoOp::Trim => trim(t, offset, len),
        IoOp::Fsync => sync_file(t.fd, false),
        IoOp::Fdatasync => sync_file(t.fd, true),
        IoOp::SyncRange(f) => sync_range(t.fd, offset, len.into(), f),
    }
}

/// `op`'s engine with one file added: a fresh empty scratch file `fiox-<tag>-<pid>` in the
/// temp directory, handed over as 1 MiB and writable. The caller removes the file.
#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
pub(crate) fn on_scratch_file<O: FdOp>(
    op: O,
    tag: &str,
) -> (FdEngine<O>, std::fs::File, std::path::PathBuf) {
    use std::os::fd::AsRawFd;
    let p = std::env::temp_dir().join(format!("fiox-{tag}-{}", std::process::id()));
    let f = std::fs::File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&p)
        .unwrap();
    let mut e = FdEngine::new(op);
    e.add_file(&EngineFile {
        fd: f.as_raw_fd(),
        path: p.clone(),
        size: 1 << 20,
        writable: true,
    })
    .unwrap();
    (e, f, p)
}
