//! `libaio`: Linux native AIO through the raw syscalls (io_setup, io_submit, io_getevents,
//! io_destroy) with the kernel's own `iocb`/`io_event` layouts, no C library.
//!
//! `queue` fills an iocb in a preallocated array, `commit` submits the pending ones in one
//! io_submit (the kernel may take fewer: the rest stay pending; EAGAIN with nothing in flight is
//! retried briefly, with I/O in flight it leaves them for the next commit), `getevents` reaps.
//! With `userspace_reap` and `min == 0` completions are read straight from the kernel's AIO
//! completion ring mapped in our address space (as fio does), saving the syscall.
//! Trims run synchronously. Fsync/fdatasync are ordered like fio's: they return `Busy` while
//! I/O is in flight and then run synchronously. The kernel only queues asynchronously with
//! O_DIRECT; buffered submissions do the I/O inside io_submit (fio does the same, see
//! fio-facts).

use std::sync::atomic::{fence, Ordering};

use crate::sys::errno;
use crate::target::{replace, sync_file, sync_range, target, trim, Target};
use crate::{Completion, EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

/// `aio_flags` bit: `aio_reqprio` holds an ioprio value for this request (<linux/aio_abi.h>).
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// `struct iocb` from <linux/aio_abi.h> (little-endian field order for key/rw_flags).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// Header of the completion ring the kernel maps at the context address (`struct aio_ring`).
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;
const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_PREADV: u16 = 7;
const IOCB_CMD_PWRITEV: u16 = 8;

/// `struct iovec` on 64-bit Linux, kept as integers so the engine stays `Send`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iov {
    base: u64,
    len: u64,
}
const RWF_NOWAIT: i32 = 0x08;

type AioContext = libc::c_ulong;

/// The libaio engine. Besides the [`IoEngine`] calls, the runner's ring loop drives its
/// plain reads and writes through [`crate::Direct`].
pub struct LibaioEngine {
    ctx: AioContext,
    depth: usize,
    files: Vec<Target>,
    /// Filled by `queue`, waiting for `commit`, in order.
    pending: Vec<Iocb>,
    /// Pointers into `pending` for io_submit (rebuilt at each commit, never reallocated).
    ptrs: Vec<*mut Iocb>,
    inflight: usize,
    events: Vec<IoEvent>,
    /// Completions produced without the kernel (submit errors).
    ready: Vec<Completion>,
    rw_flags: i32,
    userspace_reap: bool,
    /// `libaio_vectored`: per unit id, the one iovec its vectored iocb points at (read by
    /// the kernel during io_submit; sized at creation, never reallocated).
    iovecs: Option<Vec<Iov>>,
    /// The error a direct call (`Direct`) reported as failed, until the runner takes it.
    pub(in crate::queued) direct_error: Option<EngineError>,
}

// SAFETY: the context and iocbs are owned by the engine, used by one thread at a time.
unsafe impl Send for LibaioEngine {}

fn os(what: &str, source: std::io::Error) -> EngineError {
    EngineError::Os {
        engine: "libaio",
        what: what.to_string(),
        source,
    }
}

/// Why io_setup refused `depth` events: the kernel reserves twice the depth (at least 4 per
/// CPU, doubled) against the system-wide /proc/sys/fs/aio-max-nr, minus what other AIO
/// contexts hold (aio-nr).
fn aio_limit_hint(depth: usize) -> String {
    let read = |p: &str| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok();
    let (Some(max), Some(used)) = (read("/proc/sys/fs/aio-max-nr"), read("/proc/sys/fs/aio-nr"))
    else {
        return " (iodepth exceeds what /proc/sys/fs/aio-max-nr allows)".to_string();
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let reserved = (depth as u64).max(cpus * 4) * 2;
    format!(
        " (the kernel reserves {reserved} AIO events for iodepth={depth}, twice the depth, \
         against fs.aio-max-nr={max} with {used} already in use: use iodepth={} or less, or \
         raise /proc/sys/fs/aio-max-nr)",
        max.saturating_sub(used) / 2
    )
}

impl LibaioEngine {
    pub fn new(iodepth: u32, opts: &fiox_job::spec::EngineOptions) -> Result<Self, EngineError> {
        let depth = iodepth.max(1) as usize;
        let mut ctx: AioContext = 0;
        // SAFETY: io_setup writes the new context id into ctx, a valid location.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            let hint = if e.raw_os_error() == Some(libc::EAGAIN) {
                aio_limit_hint(depth)
            } else {
                String::new()
            };
            return Err(os(&format!("io_setup({depth}){hint}"), e));
        }
        Ok(LibaioEngine {
            ctx,
            depth,
            files: Vec::new(),
            pending: Vec::with_capacity(depth),
            ptrs: Vec::with_capacity(depth),
            inflight: 0,
            events: vec![IoEvent::default(); depth],
            ready: Vec::with_capacity(depth),
            rw_flags: if opts.nowait { RWF_NOWAIT } else { 0 },
            userspace_reap: opts.userspace_reap,
            iovecs: opts.libaio_vectored.then(|| vec![Iov::default(); depth]),
            direct_error: None,
        })
    }

    /// One io_submit of everything pending; returns how many the kernel took (`Err(errno)` when
    /// it took none).
    fn submit_once(&mut self) -> Result<usize, i32> {
        self.ptrs.clear();
        let base = self.pending.as_mut_ptr();
        // SAFETY: i < pending.len(), so each pointer stays inside the vector.
        self.ptrs
            .extend((0..self.pending.len()).map(|i| unsafe { base.add(i) }));
        // SAFETY: ptrs holds pending.len() valid iocbs whose buffers are live buffer slots; the
        // kernel copies each iocb during the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.ctx,
                self.ptrs.len() as libc::c_long,
                self.ptrs.as_mut_ptr(),
            )
        };
        if r < 0 {
            Err(errno())
        } else {
            Ok(r as usize)
        }
    }

    /// Copy completions from the user-mapped ring into `events[at..]`, at most `max`; how
    /// many, or None if the ring is not usable.
    #[inline(always)]
    fn reap_ring(&mut self, at: usize, max: usize) -> Option<usize> {
        let ring = self.ctx as *mut AioRing;
        let out = &mut self.events[at..];
        let max = max.min(out.len());
        // SAFETY: the context id is the address of the kernel's ring mapping for our process,
        // which stays mapped until io_destroy. Header fields are read with volatile loads since
        // the kernel updates them concurrently.
        unsafe {
            if std::ptr::addr_of!((*ring).magic).read_volatile() != AIO_RING_MAGIC {
                return None;
            }
            let nr = std::ptr::addr_of!((*ring).nr).read_volatile();
            let mut head = std::ptr::addr_of!((*ring).head).read_volatile();
            let tail = std::ptr::addr_of!((*ring).tail).read_volatile();
            fence(Ordering::Acquire);
            let evs = (ring as *mut u8).add(std::mem::size_of::<AioRing>()) as *const IoEvent;
            let mut n = 0;
            while head != tail && n < max {
                out[n] = evs.add(head as usize).read_volatile();
                head = (head + 1) % nr;
                n += 1;
            }
            fence(Ordering::Release);
            std::ptr::addr_of_mut!((*ring).head).write_volatile(head);
            Some(n)
        }
    }

    /// io_getevents for at least `min` and at most `max` completions into `events[at..]`:
    /// how many.
    #[inline(always)]
    fn reap_syscall(&mut self, at: usize, min: usize, max: usize) -> Result<usize, EngineError> {
        let out = &mut self.events[at..];
        let max = max.min(out.len());
        loop {
            // SAFETY: `out` has room for max io_events; a null timeout waits for min.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    out.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if r < 0 {
                if errno() == libc::EINTR {
                    continue;
                }
                return Err(os("io_getevents", std::io::Error::last_os_error()));
            }
            return Ok(r as usize);
        }
    }

    fn iocb(&self, id: u32, t: Target, io: &IoUnit) -> Iocb {
        let read = io.op == IoOp::Read;
        self.rw_iocb(id, t.fd, read, io.buf(), io.offset, io.ioprio)
    }

    /// The iocb of a read or write of `buf` (its address and length, proven together) at
    /// `offset` on `fd`.
    #[inline(always)]
    fn rw_iocb(
        &self,
        id: u32,
        fd: i32,
        read: bool,
        buf: crate::BufSpan,
        offset: u64,
        ioprio: u16,
    ) -> Iocb {
        // A priority of its own only when the unit has one (fio sets it for cmdprio I/Os; the
        // job's default priority is the submitting thread's ioprio, which aio uses anyway).
        let (aio_flags, aio_reqprio) = if ioprio != 0 {
            (IOCB_FLAG_IOPRIO, ioprio as i16)
        } else {
            (0, 0)
        };
        Iocb {
            aio_flags,
            aio_reqprio,
            aio_data: id as u64,
            aio_rw_flags: self.rw_flags,
            aio_lio_opcode: if read {
                IOCB_CMD_PREAD
            } else {
                IOCB_CMD_PWRITE
            },
            aio_fildes: fd as u32,
            aio_buf: buf.as_ptr() as u64,
            aio_nbytes: buf.len() as u64,
            aio_offset: offset as i64,
            ..Iocb::default()
        }
    }

    /// Whether the ring loop may drive this context: not with vectored iocbs (an iovec per
    /// unit), nor while anything waits outside the kernel.
    pub(crate) fn direct_ok(&self) -> bool {
        self.iovecs.is_none() && self.ready.is_empty() && self.pending.is_empty()
    }

    /// The ring loop's submit: iocbs for `ios` as far as the depth allows, one io_submit
    /// (`commit`): how many were queued, and whether the batch or its submission failed (the
    /// error kept in `direct_error`).
    #[inline]
    pub(crate) fn submit_rw(&mut self, ios: &[crate::RingIo]) -> (usize, bool) {
        let room = self
            .depth
            .saturating_sub(self.inflight + self.pending.len());
        let mut k = 0;
        for io in &ios[..ios.len().min(room)] {
            match target("libaio", &self.files, io.file) {
                Ok(t) => {
                    let cb = self.rw_iocb(io.id, t.fd, !io.write, io.buf, io.offset, io.ioprio);
                    self.pending.push(cb);
                    k += 1;
                }
                Err(e) => {
                    self.direct_error = Some(e);
                    break;
                }
            }
        }
        if k > 0 {
            if let Err(e) = self.commit() {
                self.direct_error.get_or_insert(e);
            }
        }
        (k, self.direct_error.is_some())
    }

    /// The ring loop's reap (`getevents` into `out`, at most its length): how many, or None
    /// when the context failed (the error kept in `direct_error`).
    #[inline]
    pub(crate) fn reap_into(&mut self, min: usize, out: &mut [crate::RingCqe]) -> Option<usize> {
        let mut i = 0;
        self.reap_direct(min, out.len(), |id, res| {
            out[i] = crate::RingCqe { id, res };
            i += 1;
        })
    }

    /// The ring loop's reap into `sink` ([`LibaioEngine::reap_with`]): how many, or None when
    /// the context failed (the error kept in `direct_error`).
    #[inline(always)]
    pub(crate) fn reap_direct(
        &mut self,
        min: usize,
        max: usize,
        sink: impl FnMut(u32, i64),
    ) -> Option<usize> {
        match self.reap_with(min, max, sink) {
            Ok(n) => Some(n),
            Err(e) => {
                self.direct_error = Some(e);
                None
            }
        }
    }

    /// `getevents` into `sink` (unit, result): iocbs the kernel pushed back at the last
    /// commit go out first; then completions made without the kernel and those of the
    /// user-space ring (a reap that need not wait) or io_getevents, at most `max` in all, are
    /// gathered in `events` and handed to `sink` in one pass (one call site: `sink` is
    /// inlined), once any wait is over.
    #[inline(always)]
    fn reap_with(
        &mut self,
        min: usize,
        max: usize,
        mut sink: impl FnMut(u32, i64),
    ) -> Result<usize, EngineError> {
        if !self.pending.is_empty() {
            self.commit()?;
        }
        let ready = max.min(self.ready.len()).min(self.events.len());
        for (ev, c) in self.events.iter_mut().zip(self.ready.drain(..ready)) {
            ev.data = u64::from(c.unit);
            ev.res = c.result;
        }
        let (mut got, mut r) = (0, Ok(()));
        if ready < max && self.inflight > 0 {
            let want = min.saturating_sub(ready).min(self.inflight);
            let room = (max - ready).min(self.inflight);
            match (self.userspace_reap && want == 0)
                .then(|| self.reap_ring(ready, room))
                .flatten()
                .map_or_else(|| self.reap_syscall(ready, want, room), Ok)
            {
                Ok(k) => got = k,
                Err(e) => r = Err(e),
            }
            self.inflight -= got;
        }
        // A failed wait still hands over the completions taken from `ready`.
        for ev in &self.events[..ready + got] {
            sink(ev.data as u32, ev.res);
        }
        r.map(|()| ready + got)
    }
}

impl IoEngine for LibaioEngine {
    fn name(&self) -> &'static str {
        "libaio"
    }

    fn direct(&mut self) -> Option<crate::Direct<'_>> {
        Some(crate::Direct::Libaio(self))
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            batches_rw: true,
            ..EngineFlags::default()
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        self.files.push(Target::of(file));
        Ok(())
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        replace("libaio", &mut self.files, index, file)
    }

    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = target("libaio", &self.files, io.file)?;
        match io.op {
            IoOp::Read | IoOp::Write => {}
            _ if self.inflight + self.pending.len() > 0 => return Ok(Queued::Busy),
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
        if self.inflight + self.pending.len() >= self.depth {
            return Ok(Queued::Busy);
        }
        let mut cb = self.iocb(id, t, io);
        if let Some(iovecs) = self.iovecs.as_mut() {
            // fio's io_prep_preadv/pwritev with one iovec: the iocb points at the iovec.
            let iov = iovecs
                .get_mut(id as usize)
                .ok_or_else(|| EngineError::Option {
                    engine: "libaio",
                    option: "libaio_vectored",
                    reason: format!("unit {id} beyond the queue depth {}", self.depth),
                })?;
            *iov = Iov {
                base: cb.aio_buf,
                len: cb.aio_nbytes,
            };
            cb.aio_lio_opcode = if io.op == IoOp::Read {
                IOCB_CMD_PREADV
            } else {
                IOCB_CMD_PWRITEV
            };
            cb.aio_buf = iov as *const Iov as u64;
            cb.aio_nbytes = 1;
        }
        self.pending.push(cb);
        Ok(Queued::Queued)
    }

    fn queue_rw(&mut self, ids: &[u32], units: &[IoUnit]) -> (usize, Result<(), EngineError>) {
        // Vectored iocbs point at a per-unit iovec: those go one by one.
        if self.iovecs.is_some() {
            return crate::queue_each(self, ids, units);
        }
        let room = self
            .depth
            .saturating_sub(self.inflight + self.pending.len());
        let n = ids.len().min(units.len()).min(room);
        for (i, (&id, io)) in ids[..n].iter().zip(units).enumerate() {
            if !matches!(io.op, IoOp::Read | IoOp::Write) {
                return (i, Err(crate::not_a_read_or_write("libaio", io.op)));
            }
            match target("libaio", &self.files, io.file) {
                Ok(t) => {
                    let cb = self.iocb(id, t, io);
                    self.pending.push(cb);
                }
                Err(e) => return (i, Err(e)),
            }
        }
        (n, Ok(()))
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        let mut done = 0;
        let mut eagain = 0;
        while !self.pending.is_empty() {
            match self.submit_once() {
                Ok(n) => {
                    self.pending.drain(..n);
                    self.inflight += n;
                    done += n;
                }
                Err(libc::EINTR) => {}
                Err(libc::EAGAIN) if self.inflight > 0 => break,
                Err(libc::EAGAIN) if eagain < 1000 => {
                    eagain += 1;
                    std::thread::yield_now();
                }
                Err(e) => {
                    // The first iocb was refused: it completes with the error, the rest go on.
                    let cb = self.pending.remove(0);
                    self.ready.push(Completion {
                        unit: cb.aio_data as u32,
                        result: -(e as i64),
                    });
                }
            }
        }
        Ok(done)
    }

    fn getevents(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        self.reap_with(min, max, |unit, result| {
            out.push(Completion { unit, result })
        })
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        // SAFETY: destroying our own context; io_destroy waits for in-flight I/O.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aio_limit_hint_names_the_sysctl_and_the_usable_depth() {
        let h = aio_limit_hint(65536);
        assert!(
            h.contains("131072 AIO events") && h.contains("fs.aio-max-nr="),
            "{h}"
        );
    }

    #[test]
    fn abi_sizes_match_the_kernel() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
        assert_eq!(std::mem::size_of::<AioRing>(), 32);
    }

    #[test]
    fn completion_ring_is_readable_from_userspace() {
        let mut e = LibaioEngine::new(4, &Default::default()).unwrap();
        assert_eq!(e.reap_ring(0, 4), Some(0), "ring magic not found");
    }
}
