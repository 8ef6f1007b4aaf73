//! I/O engines behind one trait shaped like fio's queue/commit/getevents.
//!
//! The runner owns the I/O units and their buffers ([`BufPool`]); an engine only sees a unit for
//! the duration of [`IoEngine::queue`] and reports completions by unit id. Synchronous engines
//! complete inside `queue` ([`Queued::Done`]); queued engines (io_uring, libaio, guasi) return
//! [`Queued::Queued`] and deliver the result from `getevents`. All of fiox's `unsafe` code lives in
//! this crate, each block with a `// SAFETY:` note.
//!
//! Result contract (what the runner can rely on for every engine):
//! - A read or write completes with the number of bytes transferred, or `-errno`. A count smaller
//!   than `len` is a *short* I/O (e.g. a read that reaches end of file returns the bytes up to
//!   EOF, and `0` at or past EOF). Engines never retry short I/Os themselves: the runner counts
//!   them (`short_ios`) and re-issues the remainder, as fio does.
//! - A trim completes with `len` on success; fsync/fdatasync complete with `0`.
//! - Any engine may return [`Queued::Done`] from `queue` (e.g. libaio for trims); queued engines
//!   may return [`Queued::Busy`] when full or when an op must wait for in-flight I/O (libaio
//!   fsync): the runner then commits, reaps at least one completion and queues the unit again.
//! - `commit` may submit fewer units than were queued when the kernel pushes back (EAGAIN/EBUSY);
//!   the rest stay queued and go out at the next `commit` or `getevents` (which submits
//!   leftovers before waiting, so a runner that ignores the count cannot strand them).
//! - `getevents(min, ..)` never waits for more completions than are committed and in flight;
//!   `min = 0` never blocks. Reap everything before dropping an engine or its buffers.
//!
//! Engines ([`create`] picks one from `ioengine=`), one folder a family:
//! - `blocking/`: the syscall completes inside `queue`: `sync`, `psync`, `pvsync`, `pvsync2`,
//!   `vsync` (merges contiguous units into one readv), `mmap`, `splice` (data through a pipe),
//!   `pmemblk` (blocks of a PMDK pool, libpmemblk loaded at run time: [`pmemblk`]).
//! - `queued/`: completions come from `getevents`: `libaio` (raw syscalls), `io_uring`,
//!   `posixaio` (glibc), `guasi`/`threads` (fiox's worker-thread engine, [`guasi`]) and
//!   `io_submit_mode=offload` (any engine on submit threads), with the worker [`pool`] the
//!   last two share.
//! - `fileops/`: each I/O is a file operation, not a transfer: `filecreate`, `filestat`,
//!   `filedelete`, `dircreate`, `dirstat`, `dirdelete`, `falloc`, `ftruncate`, `e4defrag`.
//! - `net/`: `net`/`netsplice` (sockets to a peer job).
//! - `synthetic/`: no file data: `null` (sync at iodepth=1, queued above, as fio's), `cpuio`
//!   (burns CPU), `exec` (runs a program for the runtime), `page_fault` (anonymous memory).
//! - `scripted` (tests only: `cfg(test)` or the `scripted` feature): answers each unit as a
//!   script says (short, EAGAIN, errors, delays, partial submits), for the runner's tests.
//!
//! Below them: `names` (the engines by name and kind), `target` (a registered file as an
//! engine sees it), [`buf`] and [`mem`] (I/O buffers), [`sys`] (the file helpers the runner
//! needs around I/O); above them `factory`, which builds one.

use std::os::fd::RawFd;
use std::path::PathBuf;

mod blocking;
pub mod buf;
mod factory;
mod fileops;
pub mod mem;
mod names;
mod net;
mod queued;
#[cfg(any(test, feature = "scripted"))]
pub mod scripted;
mod synthetic;
pub mod sys;
mod target;
/// The workspace's test harness for what a test needs from the machine (tests/harness/need.rs).
#[cfg(test)]
#[path = "../../../tests/harness/need.rs"]
mod test_need;

pub use blocking::pmemblk;
pub use buf::{BufPool, BufSpan};
pub use factory::create;
pub use fileops::e4defrag::donor_path as e4defrag_donor;
pub use mem::{MemSpec, Pinned};
pub use names::{engine_names, UNSUPPORTED_FIO_ENGINES};
pub use net::stop_waits;
pub use queued::direct::{Direct, RingCqe, RingIo};
pub use queued::libaio::LibaioEngine;
pub use queued::uring::UringEngine;
pub use queued::{guasi, handoff, pool};
pub use synthetic::exec::expand as exec_arguments;
pub use sys::{errno_from_name, errno_name, open_file, positional_io, OpenSpec};

/// What an I/O unit asks the engine to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    Read,
    Write,
    Trim,
    Fsync,
    Fdatasync,
    /// sync_file_range(2) over `offset`/`len` with these SYNC_FILE_RANGE_* flags (fio's
    /// `sync_file_range`); a zero length syncs nothing, as in fio.
    SyncRange(u32),
}

/// One I/O request, valid for the duration of the `queue` call. Queued engines must copy what
/// they need (the buffer stays valid until the unit's completion is reaped).
///
/// Data moves only through [`IoUnit::buf`], whose address and length were proven against the
/// buffer when it was made ([`BufSpan`]); [`IoUnit::len`] is the length the operation covers
/// (equal to the buffer's for a read or write made by [`IoUnit::transfer`]). An engine never
/// hands the kernel `len()` bytes of `buf()`'s address: it hands `buf()`.
#[derive(Debug, Clone, Copy)]
pub struct IoUnit {
    pub op: IoOp,
    /// Index of the file in the order given to [`IoEngine::add_file`].
    pub file: u32,
    pub offset: u64,
    /// ioprio value (`class << 13 | level`) for engines that set one per request (io_uring
    /// `sqe->ioprio`, libaio `aio_reqprio`); 0: none, the submitting thread's priority applies.
    pub ioprio: u16,
    len: u32,
    buf: BufSpan,
}

impl IoUnit {
    /// A read or write of `buf`'s bytes at `offset` of file `file`.
    #[inline(always)]
    pub fn transfer(op: IoOp, file: u32, offset: u64, buf: BufSpan) -> IoUnit {
        IoUnit {
            op,
            file,
            offset,
            ioprio: 0,
            len: buf.len(),
            buf,
        }
    }

    /// An operation over `len` bytes at `offset` that moves no data through memory: a trim, a
    /// sync, a sync_file_range, or the unit of an engine that touches no memory (null, cpuio,
    /// a file operation). Its buffer is empty, so an engine that moves data moves none.
    #[inline(always)]
    pub fn range(op: IoOp, file: u32, offset: u64, len: u32) -> IoUnit {
        IoUnit {
            op,
            file,
            offset,
            ioprio: 0,
            len,
            buf: BufSpan::empty(),
        }
    }

    /// The same unit with this ioprio value.
    #[inline(always)]
    pub fn with_ioprio(mut self, ioprio: u16) -> IoUnit {
        self.ioprio = ioprio;
        self
    }

    /// Bytes the operation covers (accounting, trims, syncs; see the type's note).
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the operation covers no bytes (fsync).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The memory a read fills or a write sends: empty for units made by [`IoUnit::range`].
    #[inline(always)]
    pub fn buf(&self) -> BufSpan {
        self.buf
    }
}

/// A finished I/O: `result` is the byte count transferred, or `-errno`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub unit: u32,
    pub result: i64,
}

/// What `queue` did with a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Completed synchronously: byte count or `-errno`.
    Done(i64),
    /// Accepted; its completion will come from `getevents`.
    Queued,
    /// The engine cannot take more now: reap completions, then retry this unit.
    Busy,
}

/// A file opened by the runner (with the job's O_DIRECT/O_SYNC flags) and handed to the engine.
#[derive(Debug, Clone)]
pub struct EngineFile {
    /// -1: not open yet (`create_on_open`); the engine gets the fd from `reopen_file`.
    pub fd: RawFd,
    pub path: PathBuf,
    /// Bytes of the file or device the job may touch (for mmap).
    pub size: u64,
    pub writable: bool,
}

/// Properties the runner needs to drive an engine correctly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EngineFlags {
    /// `queue` always completes the I/O (`Queued::Done`); slat is not reported.
    pub sync: bool,
    /// The engine does not touch real storage (fio's FIO_DISKLESSIO,
    /// [`fiox_job::Engine::is_diskless`]): files
    /// are not laid out, page cache warnings and disk stats do not apply.
    pub no_io: bool,
    /// The engine reads and writes at the fd's file position (lseek + read/write: sync,
    /// vsync), so two threads must not share an open file description.
    pub seeks: bool,
    /// fio's file-operation engines (filecreate, filestat, filedelete; fio's FIO_NOSTATS):
    /// the measured work is one [`IoEngine::file_op`] per file, done when the job opens the
    /// file; the I/Os themselves complete at once and are counted without any latency.
    pub file_ops: bool,
    /// fio's FIO_NOIO (cpuio): a unit moves no data, so it counts as an I/O of 0 bytes.
    pub zero_bytes: bool,
    /// A read that completes with 0 bytes means the peer is done (net: the sender closed the
    /// connection or sent fio's UDP close message): the job ends normally, not with EIO.
    pub eof_ends: bool,
    /// `queue` never completes a read or write inline (only `Queued` or `Busy`), and
    /// [`IoEngine::queue_rw`] takes a batch of them in one call (io_uring, libaio): the
    /// runner's plain loop then hands the engine a batch at a time.
    pub batches_rw: bool,
}

impl EngineFlags {
    /// fio's FIO_SYNCIO | FIO_NOIO engines (cpuio, exec): every unit completes in `queue`
    /// and moves no data.
    pub(crate) fn no_data(engine: fiox_job::Engine) -> EngineFlags {
        EngineFlags {
            sync: true,
            no_io: engine.is_diskless(),
            zero_bytes: true,
            ..EngineFlags::default()
        }
    }
}

/// `add_file` and `reopen_file` of an engine that never uses the job's files (null, cpuio,
/// exec): every file is accepted and nothing is kept.
macro_rules! ignores_files {
    () => {
        fn add_file(&mut self, _file: &$crate::EngineFile) -> Result<(), $crate::EngineError> {
            Ok(())
        }

        fn reopen_file(
            &mut self,
            _index: u32,
            _file: &$crate::EngineFile,
        ) -> Result<(), $crate::EngineError> {
            Ok(())
        }
    };
}
pub(crate) use ignores_files;

/// What [`IoEngine::file_op`] did.
#[derive(Debug)]
pub struct FileOpDone {
    /// How long the operation's syscall took (the latency fio records for it).
    pub ns: u64,
    /// The file or directory the operation created (filecreate, dircreate), open, so the runner can mark it as
    /// fiox's before closing it; None when the file was already there.
    pub created: Option<std::fs::File>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("ioengine '{0}' is not known; fiox supports: {1}")]
    Unknown(String, String),
    #[error("ioengine '{0}' is a fio engine that fiox does not support yet")]
    NotSupported(String),
    /// A fio engine fiox lacks that fio 3.33 loads but cannot use here: the job fails as fio's
    /// does, with fio's error number (see `fiox_job::defs::unsupported::FAILS_WHEN_RUN`).
    #[error(
        "{}; ioengine={} is a fio engine that fiox does not support yet (it needs {}): the job \
         fails as fio 3.33's does here, err={}",
        .0.fio, .0.engine, .0.needs, .0.errno
    )]
    FailsAsInFio(&'static fiox_job::defs::unsupported::FailsWhenRun),
    /// The job fails as fio's does with this engine here, in fio's words and with its error
    /// number (0: fio records none, yet counts the job as failed): pmemblk without thread=1.
    #[error("{msg}")]
    Fails { msg: String, errno: i32 },
    #[error("{engine}: option {option}: {reason}")]
    Option {
        engine: &'static str,
        option: &'static str,
        reason: String,
    },
    #[error("{engine}: {what}: {source}")]
    Os {
        engine: &'static str,
        what: String,
        source: std::io::Error,
    },
    #[error("{}: {what}: {source}", path.display())]
    File {
        path: PathBuf,
        what: String,
        source: std::io::Error,
    },
    #[error(
        "direct=1 is not supported by the filesystem of {} (open with O_DIRECT fails with \
         EINVAL); use direct=0 or put the file on a filesystem that supports O_DIRECT",
        .0.display()
    )]
    DirectUnsupported(PathBuf),
}

impl EngineError {
    /// The error number the failure carries, if it has one: an OS error's, the errno fio
    /// fails a job with (`FailsAsInFio`), EINVAL for a filesystem without O_DIRECT. fio
    /// reports an engine's queue or reap error with the engine's errno, not a generic one.
    pub fn os_errno(&self) -> Option<i32> {
        match self {
            EngineError::Os { source, .. } | EngineError::File { source, .. } => {
                source.raw_os_error()
            }
            EngineError::FailsAsInFio(f) => Some(f.errno),
            EngineError::Fails { errno, .. } => Some(*errno),
            EngineError::DirectUnsupported(_) => Some(libc::EINVAL),
            _ => None,
        }
    }
}

/// A unit other than a read or write handed to [`IoEngine::queue_rw`] (the runner's batch
/// path sends neither trims nor syncs).
pub(crate) fn not_a_read_or_write(engine: &str, op: IoOp) -> EngineError {
    EngineError::NotSupported(format!("{engine}: {op:?} in a batch of reads and writes"))
}

/// [`IoEngine::queue_rw`] one unit at a time through `queue` (its default, and the way an
/// engine takes a batch it cannot take whole).
pub fn queue_each<E: IoEngine + ?Sized>(
    e: &mut E,
    ids: &[u32],
    units: &[IoUnit],
) -> (usize, Result<(), EngineError>) {
    for (i, (&id, u)) in ids.iter().zip(units).enumerate() {
        match e.queue(id, u) {
            Ok(Queued::Queued) => {}
            Ok(Queued::Busy) => return (i, Ok(())),
            Ok(Queued::Done(_)) => {
                let what = "a read or write completed inline in a batch";
                return (
                    i,
                    Err(EngineError::NotSupported(format!("{}: {what}", e.name()))),
                );
            }
            Err(err) => return (i, Err(err)),
        }
    }
    (ids.len().min(units.len()), Ok(()))
}

/// fio's ioengine contract, minimal: queue units, commit them, reap completions.
pub trait IoEngine: Send {
    fn name(&self) -> &'static str;
    fn flags(&self) -> EngineFlags;
    /// Register a file; files are referred to by the order they were added.
    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError>;
    /// Hand one unit to the engine. `id` is echoed back in its [`Completion`].
    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError>;
    /// Queue reads and writes (`units[i]` as unit `ids[i]`), in order, as `queue` would one
    /// by one, until the engine is full or a unit fails: returns how many it took (each now
    /// queued, as `Queued`) and the error that stopped it, if any; the units after those were
    /// not taken (as `Busy`, or not tried after the error). One call per batch instead of one
    /// per unit, so an engine can check its room once and publish its submission ring once.
    /// Called only for engines whose flags say `batches_rw`.
    fn queue_rw(&mut self, ids: &[u32], units: &[IoUnit]) -> (usize, Result<(), EngineError>) {
        queue_each(self, ids, units)
    }
    /// Submit what `queue` accepted; returns how many were submitted.
    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(0)
    }
    /// Wait for at least `min` completions (0: do not block) and append at most `max` to `out`.
    fn getevents(
        &mut self,
        _min: usize,
        _max: usize,
        _out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        Ok(0)
    }
    /// `openfiles`: the runner is about to close file `index` (no I/O to it is queued or in
    /// flight). Engines that hold more than the fd (a mapping, a registered slot) drop it here.
    fn close_file(&mut self, _index: u32) -> Result<(), EngineError> {
        Ok(())
    }
    /// `openfiles`: file `index` was opened again (its fd may differ from the one `add_file`
    /// saw). Engines keep per-file state by index, so each engine updates its own entry.
    fn reopen_file(&mut self, _index: u32, _file: &EngineFile) -> Result<(), EngineError> {
        Err(EngineError::NotSupported(format!(
            "{} with openfiles below nrfiles",
            self.name()
        )))
    }
    /// Make the job's buffer pool known before the first `queue` (io_uring `fixedbufs`
    /// registers it with the kernel). The pool must outlive the engine's use of it.
    fn register_buffers(&mut self, _pool: &BufPool) -> Result<(), EngineError> {
        Ok(())
    }
    /// `file_ops` engines: do the engine's operation on file `index` (create, stat or
    /// delete it), as fio does when it opens the file; the runner records `ns` as the
    /// operation's completion latency.
    fn file_op(&mut self, _index: u32) -> Result<FileOpDone, EngineError> {
        Err(EngineError::NotSupported(format!(
            "file operations on {}",
            self.name()
        )))
    }
    /// An engine that sets the job's thinktime itself (cpuio: the sleep after each burn that
    /// makes the load `cpuload` percent); asked again before every I/O, as it may change.
    fn thinktime(&self) -> Option<std::time::Duration> {
        None
    }
    /// I/Os the peer sent that never arrived (net over UDP: gaps in the sequence), reported
    /// as the read direction's dropped I/Os.
    fn dropped(&self) -> u64 {
        0
    }
    /// When every read and write of this engine is one pread64/pwrite64 on its file's
    /// descriptor and nothing else (psync), those descriptors by file index: the runner's lean
    /// loop then issues them itself through [`positional_io`], without a dynamic call whose
    /// return after a syscall mispredicts. None for any other engine, or while a file is not
    /// open yet.
    fn positional_fds(&self) -> Option<Vec<RawFd>> {
        None
    }
    /// io_uring or libaio itself, for the runner's ring loop (typed calls a plain job's
    /// reads and writes take instead of `queue_rw`/`commit`/`getevents`); None for every
    /// other engine (and for io_uring behind another engine, as offload).
    fn direct(&mut self) -> Option<Direct<'_>> {
        None
    }
    /// Kernel thread ids of threads the engine runs I/O on (guasi's workers, offload's submit
    /// threads), so the runner can count their CPU time and context switches as the job's.
    fn helper_threads(&self) -> Vec<libc::pid_t> {
        Vec::new()
    }
}
