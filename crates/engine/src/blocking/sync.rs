//! The blocking syscall engines: `sync` (lseek + read/write), `psync` (pread/pwrite), `pvsync`
//! (preadv/pwritev, one iovec), `pvsync2` (preadv2/pwritev2 with RWF_* flags) complete inside
//! `queue`; `vsync` (readv/writev) queues units and, like fio's, merges units that are contiguous
//! in the same file and direction into one readv/writev at `commit`, then splits the byte count
//! back over the units in order (so a short transfer shortens the trailing units).
//!
//! Hot path: no allocation, no locks, one syscall per I/O (`sync` adds an lseek only when the
//! file position is not already at the offset, as fio does).

use crate::sys::{errno, ret};
use crate::target::{replace, run_positional, sync_file, sync_range, target, trim, Target};
use crate::{Completion, EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

/// RWF_* values from <linux/fs.h>.
pub(crate) const RWF_HIPRI: i32 = 0x01;
pub(crate) const RWF_NOWAIT: i32 = 0x08;
/// The kernel's uncached buffered I/O flag (RWF_DONTCACHE, Linux 6.14). fio 3.33 names it
/// RWF_UNCACHED with the value 0x40 from an unmerged patch; mainline later gave 0x40 to
/// RWF_ATOMIC, so fiox sends the merged value to get the behaviour `uncached` asks for.
pub(crate) const RWF_DONTCACHE: i32 = 0x80;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncKind {
    Sync,
    Psync,
    Pvsync,
    Pvsync2,
}

/// pvsync2's per-I/O flags: the fixed ones plus RWF_HIPRI for `hipri_percentage`% of I/Os.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rwf {
    pub fixed: i32,
    pub hipri_pct: u32,
    rng: u32,
}

impl Rwf {
    /// Flags from the job's options, as fio's pvsync2 (uncached only for buffered I/O).
    pub fn from_options(o: &fiox_job::spec::EngineOptions, direct: bool) -> Rwf {
        let mut fixed = 0;
        if o.nowait {
            fixed |= RWF_NOWAIT;
        }
        if o.uncached != 0 && !direct {
            fixed |= RWF_DONTCACHE;
        }
        Rwf {
            fixed,
            hipri_pct: if o.hipri {
                o.hipri_percentage.min(100)
            } else {
                0
            },
            rng: 0x9e37_79b9,
        }
    }

    /// Flags for the next I/O (xorshift32 draw only when hipri is partial).
    #[inline]
    pub fn next(&mut self) -> i32 {
        match self.hipri_pct {
            0 => self.fixed,
            100 => self.fixed | RWF_HIPRI,
            p => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 17;
                self.rng ^= self.rng << 5;
                if self.rng % 100 < p {
                    self.fixed | RWF_HIPRI
                } else {
                    self.fixed
                }
            }
        }
    }

    /// Every flag that may be sent, with the option that asks for it.
    pub fn options(&self) -> Vec<(i32, &'static str)> {
        let mut v = Vec::new();
        if self.hipri_pct > 0 {
            v.push((RWF_HIPRI, "hipri"));
        }
        if self.fixed & RWF_NOWAIT != 0 {
            v.push((RWF_NOWAIT, "nowait"));
        }
        if self.fixed & RWF_DONTCACHE != 0 {
            v.push((RWF_DONTCACHE, "uncached"));
        }
        v
    }
}

/// Check once per file that the kernel and filesystem accept each RWF flag, so a refusal is
/// reported up front naming the option instead of as an errno on every I/O.
pub(crate) fn probe_rwf(
    engine: &'static str,
    f: &EngineFile,
    flags: &[(i32, &'static str)],
) -> Result<(), EngineError> {
    if flags.is_empty() || f.fd < 0 {
        // No fd yet (create_on_open): probed when the file is opened.
        return Ok(());
    }
    let pool = crate::BufPool::new(1, 4096, 4096).map_err(|e| EngineError::Option {
        engine,
        option: "hipri/nowait/uncached",
        reason: e,
    })?;
    for &(flag, option) in flags {
        let iov = libc::iovec {
            iov_base: pool.slot(0).as_ptr().cast(),
            iov_len: 4096,
        };
        // SAFETY: one iovec over the pool's 4096-byte aligned slot, alive for the call.
        let r = unsafe { libc::preadv2(f.fd, &iov, 1, 0, flag) };
        if r < 0 {
            let e = errno();
            if e == libc::EOPNOTSUPP || e == libc::EINVAL {
                return Err(EngineError::Option {
                    engine,
                    option,
                    reason: format!(
                        "the kernel or the filesystem of {} refuses the RWF flag {flag:#x} ({})",
                        f.path.display(),
                        crate::sys::errno_name(e)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// `sync`, `psync`, `pvsync` and `pvsync2`.
pub(crate) struct SyncEngine {
    kind: SyncKind,
    files: Vec<Target>,
    /// File position after the last read/write per file (`sync` skips redundant lseeks).
    pos: Vec<u64>,
    rwf: Rwf,
}

impl SyncEngine {
    pub fn new(kind: SyncKind, rwf: Rwf) -> SyncEngine {
        SyncEngine {
            kind,
            files: Vec::new(),
            pos: Vec::new(),
            rwf,
        }
    }

    fn name_of(kind: SyncKind) -> &'static str {
        match kind {
            SyncKind::Sync => "sync",
            SyncKind::Psync => "psync",
            SyncKind::Pvsync => "pvsync",
            SyncKind::Pvsync2 => "pvsync2",
        }
    }

    /// read/write at the current position, seeking first when needed.
    #[inline]
    fn seq(&mut self, t: Target, idx: u32, io: &IoUnit) -> i64 {
        let pos = &mut self.pos[idx as usize];
        if *pos != io.offset {
            // SAFETY: plain syscall on an fd.
            let r = unsafe { libc::lseek(t.fd, io.offset as libc::off_t, libc::SEEK_SET) };
            if r < 0 {
                *pos = u64::MAX;
                return -(errno() as i64);
            }
        }
        let p = io.buf().as_ptr().cast();
        let n = io.buf().len() as usize;
        // SAFETY: the unit's buffer is a live slot of at least len bytes.
        let r = ret(unsafe {
            if io.op == IoOp::Read {
                libc::read(t.fd, p, n)
            } else {
                libc::write(t.fd, p, n)
            }
        });
        *pos = if r >= 0 {
            io.offset + r as u64
        } else {
            u64::MAX
        };
        r
    }

    #[inline]
    fn vectored(t: Target, io: &IoUnit) -> i64 {
        let iov = libc::iovec {
            iov_base: io.buf().as_ptr().cast(),
            iov_len: io.buf().len() as usize,
        };
        let off = io.offset as libc::off_t;
        // SAFETY: one iovec over the unit's live buffer slot.
        ret(unsafe {
            if io.op == IoOp::Read {
                libc::preadv(t.fd, &iov, 1, off)
            } else {
                libc::pwritev(t.fd, &iov, 1, off)
            }
        })
    }
}

impl IoEngine for SyncEngine {
    fn name(&self) -> &'static str {
        Self::name_of(self.kind)
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: true,
            no_io: false,
            seeks: self.kind == SyncKind::Sync,
            file_ops: false,
            zero_bytes: false,
            eof_ends: false,
            batches_rw: false,
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        let name = self.name();
        if self.kind == SyncKind::Pvsync2 {
            probe_rwf(name, file, &self.rwf.options())?;
        }
        self.files.push(Target::of(file));
        self.pos.push(u64::MAX);
        Ok(())
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        if self.kind == SyncKind::Pvsync2 {
            probe_rwf(self.name(), file, &self.rwf.options())?;
        }
        replace(self.name(), &mut self.files, index, file)?;
        // A new open file description starts at offset 0: forget the cached position.
        self.pos[index as usize] = u64::MAX;
        Ok(())
    }

    fn positional_fds(&self) -> Option<Vec<std::os::fd::RawFd>> {
        let fds = self.files.iter().map(|t| t.fd);
        (self.kind == SyncKind::Psync && self.files.iter().all(|t| t.fd >= 0))
            .then(|| fds.collect())
    }

    #[inline]
    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = target(self.name(), &self.files, io.file)?;
        let rw = matches!(io.op, IoOp::Read | IoOp::Write);
        let r = match self.kind {
            SyncKind::Psync => run_positional(t, io, 0),
            SyncKind::Sync if rw => self.seq(t, io.file, io),
            SyncKind::Pvsync if rw => Self::vectored(t, io),
            SyncKind::Pvsync2 if rw => {
                let flags = self.rwf.next();
                run_positional(t, io, flags)
            }
            _ => run_positional(t, io, 0),
        };
        Ok(Queued::Done(r))
    }
}

/// Most iovecs one readv accepts (IOV_MAX on Linux).
const IOV_MAX: usize = 1024;

/// `vsync`: readv/writev over runs of contiguous units.
pub(crate) struct VsyncEngine {
    files: Vec<Target>,
    depth: usize,
    iov: Vec<libc::iovec>,
    /// (unit id, requested length) per iovec.
    units: Vec<(u32, u32)>,
    run_file: u32,
    run_op: IoOp,
    run_start: u64,
    run_next: u64,
    /// File position after the last transfer per file.
    pos: Vec<u64>,
    ready: Vec<Completion>,
}

// SAFETY: the iovecs only hold addresses of buffer slots owned by the runner; the engine is used
// by one thread at a time.
unsafe impl Send for VsyncEngine {}

impl VsyncEngine {
    pub fn new(iodepth: u32) -> VsyncEngine {
        let depth = (iodepth.max(1) as usize).min(IOV_MAX);
        VsyncEngine {
            files: Vec::new(),
            depth,
            iov: Vec::with_capacity(depth),
            units: Vec::with_capacity(depth),
            run_file: 0,
            run_op: IoOp::Read,
            run_start: 0,
            run_next: 0,
            pos: Vec::new(),
            ready: Vec::with_capacity(depth),
        }
    }

    fn appendable(&self, io: &IoUnit) -> bool {
        self.units.is_empty()
            || (io.file == self.run_file
                && io.op == self.run_op
                && io.offset == self.run_next
                && self.units.len() < self.depth)
    }

    /// Hand the transferred byte count (or error) back to the units in order.
    fn distribute(&mut self, r: i64) {
        let mut left = r;
        for &(unit, len) in &self.units {
            let result = if r < 0 {
                r
            } else {
                let got = left.min(len as i64);
                left -= got;
                got
            };
            self.ready.push(Completion { unit, result });
        }
        self.units.clear();
        self.iov.clear();
    }
}

impl IoEngine for VsyncEngine {
    fn name(&self) -> &'static str {
        "vsync"
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            seeks: true,
            ..EngineFlags::default()
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        self.files.push(Target::of(file));
        self.pos.push(u64::MAX);
        Ok(())
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        replace("vsync", &mut self.files, index, file)?;
        self.pos[index as usize] = u64::MAX;
        Ok(())
    }

    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = target("vsync", &self.files, io.file)?;
        match io.op {
            IoOp::Read | IoOp::Write => {}
            // Ordering: flushes and trims wait until the queued run is out.
            _ if !self.units.is_empty() => return Ok(Queued::Busy),
            IoOp::Trim => return Ok(Queued::Done(trim(t, io.offset, io.len()))),
            IoOp::Fsync => return Ok(Queued::Done(sync_file(t.fd, false))),
            IoOp::Fdatasync => return Ok(Queued::Done(sync_file(t.fd, true))),
            IoOp::SyncRange(f) => {
                return Ok(Queued::Done(sync_range(
                    t.fd,
                    io.offset,
                    io.len() as u64,
                    f,
                )))
            }
        }
        if !self.appendable(io) {
            return Ok(Queued::Busy);
        }
        if self.units.is_empty() {
            self.run_file = io.file;
            self.run_op = io.op;
            self.run_start = io.offset;
        }
        self.run_next = io.offset + io.len() as u64;
        self.iov.push(libc::iovec {
            iov_base: io.buf().as_ptr().cast(),
            iov_len: io.buf().len() as usize,
        });
        self.units.push((id, io.buf().len()));
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        let n = self.units.len();
        if n == 0 {
            return Ok(0);
        }
        let t = target("vsync", &self.files, self.run_file)?;
        let pos = &mut self.pos[self.run_file as usize];
        let mut r = 0;
        if *pos != self.run_start {
            // SAFETY: plain syscall on an fd.
            let s = unsafe { libc::lseek(t.fd, self.run_start as libc::off_t, libc::SEEK_SET) };
            if s < 0 {
                r = -(errno() as i64);
            }
        }
        if r == 0 {
            // SAFETY: the iovecs describe live buffer slots of the queued units.
            r = ret(unsafe {
                if self.run_op == IoOp::Read {
                    libc::readv(t.fd, self.iov.as_ptr(), n as libc::c_int)
                } else {
                    libc::writev(t.fd, self.iov.as_ptr(), n as libc::c_int)
                }
            });
        }
        *pos = if r >= 0 {
            self.run_start + r as u64
        } else {
            u64::MAX
        };
        self.distribute(r);
        Ok(n)
    }

    fn getevents(
        &mut self,
        _min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        let n = max.min(self.ready.len());
        out.extend(self.ready.drain(..n));
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// Only psync hands its descriptors to the runner's lean loop, and only once every file
    /// is open: pvsync2 adds flags, sync seeks, pvsync goes through an iovec.
    #[test]
    fn only_psync_with_every_file_open_offers_positional_fds() {
        let f = std::fs::File::open("/dev/null").unwrap();
        let file = |fd| EngineFile {
            fd,
            path: "/dev/null".into(),
            size: 0,
            writable: false,
        };
        let none = Rwf::from_options(&Default::default(), false);
        let mut p = SyncEngine::new(SyncKind::Psync, none);
        p.add_file(&file(f.as_raw_fd())).unwrap();
        assert_eq!(p.positional_fds(), Some(vec![f.as_raw_fd()]));
        p.add_file(&file(-1)).unwrap();
        assert_eq!(p.positional_fds(), None, "a file not open yet");
        for kind in [SyncKind::Sync, SyncKind::Pvsync, SyncKind::Pvsync2] {
            let mut e = SyncEngine::new(kind, none);
            e.add_file(&file(f.as_raw_fd())).unwrap();
            assert_eq!(e.positional_fds(), None, "{kind:?}");
        }
    }

    #[test]
    fn hipri_percentage_is_roughly_honoured() {
        let o = fiox_job::spec::EngineOptions {
            hipri: true,
            hipri_percentage: 30,
            ..Default::default()
        };
        let mut r = Rwf::from_options(&o, true);
        let hits = (0..10_000).filter(|_| r.next() & RWF_HIPRI != 0).count();
        assert!((2_000..4_000).contains(&hits), "{hits}");
        let all = fiox_job::spec::EngineOptions {
            hipri: true,
            hipri_percentage: 100,
            nowait: true,
            uncached: 1,
            ..Default::default()
        };
        let mut r = Rwf::from_options(&all, false);
        assert_eq!(r.next(), RWF_HIPRI | RWF_NOWAIT | RWF_DONTCACHE);
        // uncached only applies to buffered I/O, as in fio.
        assert_eq!(Rwf::from_options(&all, true).fixed, RWF_NOWAIT);
    }
}
