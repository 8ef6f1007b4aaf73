//! The engine-side view of a registered file ([`Target`]) and the blocking execution of one
//! unit with pread/pwrite/fsync/trim, shared by the psync engine, the guasi workers and the
//! engines that complete trims synchronously (libaio, posixaio, io_uring). [`FileSlots`] and
//! [`FdEngine`] carry the file bookkeeping of the synchronous one-syscall engines (falloc,
//! ftruncate, e4defrag, splice), so each of them only says what one unit does.

use std::os::fd::RawFd;

use crate::sys::{self, ret};
use crate::{EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

/// A file as an engine needs it on the hot path: no path string, no allocation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub fd: RawFd,
    pub is_block: bool,
}

impl Target {
    pub fn of(engine: &'static str, f: &EngineFile) -> Result<Target, EngineError> {
        if f.fd < 0 {
            // Not open yet (create_on_open): `reopen_file` brings the real fd.
            return Ok(Target {
                fd: f.fd,
                is_block: false,
            });
        }
        let is_block = sys::is_block_device(f.fd).map_err(|source| EngineError::Os {
            engine,
            what: format!("fstat of {}", f.path.display()),
            source,
        })?;
        Ok(Target { fd: f.fd, is_block })
    }
}

/// Look up a unit's file; an unknown index is a runner bug reported as an error, not a panic.
#[inline]
pub(crate) fn target(
    engine: &'static str,
    files: &[Target],
    idx: u32,
) -> Result<Target, EngineError> {
    files
        .get(idx as usize)
        .copied()
        .ok_or_else(|| EngineError::Option {
            engine,
            option: "file",
            reason: format!(
                "unit refers to file {idx} but only {} were added",
                files.len()
            ),
        })
}

/// `reopen_file` for engines that keep only a `Target` per file: replace entry `idx`.
pub(crate) fn replace(
    engine: &'static str,
    files: &mut [Target],
    idx: u32,
    f: &EngineFile,
) -> Result<(), EngineError> {
    target(engine, files, idx)?;
    files[idx as usize] = Target::of(engine, f)?;
    Ok(())
}

/// An engine's registered files by index, when it keeps nothing per file but the fd: the
/// `add_file`/`reopen_file`/lookup every such engine needs, with errors naming the engine.
#[derive(Debug)]
pub(crate) struct FileSlots {
    engine: &'static str,
    files: Vec<Target>,
}

impl FileSlots {
    pub fn new(engine: &'static str) -> FileSlots {
        FileSlots {
            engine,
            files: Vec::new(),
        }
    }

    /// `add_file`: the next index is this file's.
    pub fn add(&mut self, f: &EngineFile) -> Result<(), EngineError> {
        self.files.push(Target::of(self.engine, f)?);
        Ok(())
    }

    /// `reopen_file`: file `idx` has a new fd.
    pub fn reopen(&mut self, idx: u32, f: &EngineFile) -> Result<(), EngineError> {
        replace(self.engine, &mut self.files, idx, f)
    }

    /// The unit's file; an unknown index is an error, not a panic.
    #[inline]
    pub fn get(&self, idx: u32) -> Result<Target, EngineError> {
        target(self.engine, &self.files, idx)
    }
}

/// A synchronous engine whose unit is syscalls on the unit's file's fd and that keeps only
/// the fd per file (falloc, ftruncate, e4defrag, splice). The [`IoEngine`] impl below gives
/// it the name, flags and file bookkeeping, so these engines differ only in [`FdEngine::run`].
pub(crate) trait FdEngine: Send {
    /// The engine's `ioengine=` name.
    const NAME: &'static str;
    fn slots(&self) -> &FileSlots;
    fn slots_mut(&mut self) -> &mut FileSlots;
    /// Do unit `io` on its file `t`: the byte count or `-errno`.
    fn run(&mut self, t: Target, io: &IoUnit) -> i64;
}

impl<E: FdEngine> IoEngine for E {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: true,
            ..EngineFlags::default()
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        self.slots_mut().add(file)
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        self.slots_mut().reopen(index, file)
    }

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = self.slots().get(io.file)?;
        Ok(Queued::Done(self.run(t, io)))
    }
}

/// Trim a range synchronously: `len` on success, `-errno` otherwise.
pub(crate) fn trim(t: Target, offset: u64, len: u32) -> i64 {
    match sys::trim(t.fd, t.is_block, offset, len as u64) {
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
/// writes to preadv2/pwritev2 with those flags.
#[inline]
pub(crate) fn run_positional(
    t: Target,
    op: IoOp,
    buf: *mut u8,
    len: u32,
    offset: u64,
    rwf: i32,
) -> i64 {
    let off = offset as libc::off_t;
    let n = len as usize;
    match op {
        // The raw syscalls, not glibc's pread/pwrite: those are thread cancellation points and
        // toggle the cancellation state around every call (about 2% of a tmpfs 4k read);
        // fiox never cancels its threads.
        IoOp::Read if rwf == 0 => {
            // SAFETY: buf points at a live buffer slot of at least len bytes (IoUnit contract).
            ret(unsafe { libc::syscall(libc::SYS_pread64, t.fd, buf, n, off) } as isize)
        }
        IoOp::Write if rwf == 0 => {
            // SAFETY: as above; the kernel only reads the buffer.
            ret(unsafe { libc::syscall(libc::SYS_pwrite64, t.fd, buf, n, off) } as isize)
        }
        IoOp::Read | IoOp::Write => {
            let iov = libc::iovec {
                iov_base: buf.cast(),
                iov_len: n,
            };
            // SAFETY: one iovec describing a live buffer slot of len bytes.
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
