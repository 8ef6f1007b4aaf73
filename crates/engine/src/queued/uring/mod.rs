//! `io_uring` through the `io-uring` crate. `queue` writes an SQE straight into the shared
//! submission ring, `commit` enters the kernel once for the batch (a partial submit leaves the
//! rest in the ring; EBUSY/EAGAIN with I/O in flight hands control back so the runner reaps
//! first), `getevents` drains the completion ring and only enters the kernel when it must wait.
//!
//! Options as fio's: `fixedbufs` (the job's [`BufPool`] is registered; READ/WRITE_FIXED),
//! `registerfiles` (fixed file table), `sqthread_poll`/`sqthread_poll_cpu` (SQPOLL),
//! `hipri` (IOPOLL), `nonvectored` (READ/WRITE instead of READV/WRITEV: fio's default -1 where the kernel has them),
//! `force_async=N` (IOSQE_ASYNC on every Nth SQE), `nowait` (RWF_NOWAIT), `uncached`
//! (RWF_DONTCACHE on buffered I/O). A setup flag the kernel refuses is reported naming the
//! option. Trims run synchronously once nothing is in flight (as fio does).

use io_uring::{opcode, squeue, types, IoUring};

use crate::blocking::sync::{RWF_DONTCACHE, RWF_NOWAIT};
use crate::target::{replace, sync_range, target, trim, Target};
use crate::{
    BufPool, Completion, EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued,
};

mod direct;
mod setup;
mod sqe;

use setup::{build_ring, vectored, RegisteredRing};
use sqe::{not_registered, FixedBufs, SqeCfg};

/// The kernel's limit for one registered buffer.
const MAX_REG_BUF: usize = 1 << 30;
/// IORING_ENTER_GETEVENTS from <linux/io_uring.h>.
const ENTER_GETEVENTS: u32 = 1;
/// user_data bit saying the high word carries an iovec slot to free at completion.
const HAS_SLOT: u64 = 1 << 63;

/// The io_uring engine. Besides the [`IoEngine`] calls, the runner's ring loop drives its
/// plain reads and writes through the typed calls of `direct` ([`IoEngine::direct`]).
pub struct UringEngine {
    /// The ring registered in the job thread (rings one thread submits to): dropped first,
    /// while `ring` is open.
    reg: Option<RegisteredRing>,
    ring: IoUring,
    depth: usize,
    /// Entries of the submission ring (below `depth` only for queues deeper than the kernel's
    /// largest ring).
    sq_len: usize,
    files: Vec<Target>,
    registerfiles: bool,
    /// The kernel holds a file table for this ring...
    files_registered: bool,
    /// ...and it lists every added file.
    files_current: bool,
    fixedbufs: bool,
    bufs: Option<FixedBufs>,
    vectored: bool,
    iopoll: bool,
    sqpoll: bool,
    /// One iovec per in-flight slot (READV/WRITEV need it alive until completion).
    iovs: Box<[libc::iovec]>,
    free_slots: Vec<u32>,
    rw_flags: i32,
    force_async: u32,
    sqe_count: u32,
    /// SQEs pushed but not yet taken by the kernel.
    queued: usize,
    inflight: usize,
    /// Completions made without the kernel (refused SQEs).
    ready: Vec<Completion>,
    /// Buffer of an IOPOLL probe that never completed (must outlive the ring).
    probe_buf: Option<BufPool>,
    /// The error a direct call (`direct`) reported as failed, until the runner takes it.
    pub(in crate::queued) direct_error: Option<EngineError>,
}

// SAFETY: the iovecs only hold addresses of the runner's buffer slots; the engine (ring
// included) is used by one thread at a time.
unsafe impl Send for UringEngine {}

fn opt_err(option: &'static str, reason: String) -> EngineError {
    EngineError::Option {
        engine: "io_uring",
        option,
        reason,
    }
}

impl UringEngine {
    /// `one_thread`: only the creating thread will submit (the job thread), which allows
    /// fio's SINGLE_ISSUER|DEFER_TASKRUN setup.
    pub fn new(
        iodepth: u32,
        direct: bool,
        o: &fiox_job::spec::EngineOptions,
        one_thread: bool,
    ) -> Result<Self, EngineError> {
        let depth = iodepth.max(1);
        let ring = build_ring(depth, o, one_thread)?;
        let vectored = vectored(&ring, o.nonvectored);
        // SQPOLL rings keep the crate's enter (its wake-up logic).
        let reg = (one_thread && !o.sqthread_poll)
            .then(|| RegisteredRing::new(&ring))
            .flatten();
        let mut rw_flags = 0;
        if o.nowait {
            rw_flags |= RWF_NOWAIT;
        }
        if o.uncached != 0 && !direct {
            rw_flags |= RWF_DONTCACHE;
        }
        let n = depth as usize;
        let empty = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        Ok(UringEngine {
            sq_len: ring.params().sq_entries() as usize,
            reg,
            ring,
            depth: n,
            files: Vec::new(),
            registerfiles: o.registerfiles,
            files_registered: false,
            files_current: false,
            fixedbufs: o.fixedbufs,
            bufs: None,
            vectored,
            iopoll: o.hipri,
            sqpoll: o.sqthread_poll,
            iovs: vec![empty; n].into_boxed_slice(),
            free_slots: (0..depth).rev().collect(),
            rw_flags,
            force_async: o.force_async,
            sqe_count: 0,
            queued: 0,
            inflight: 0,
            ready: Vec::with_capacity(n),
            probe_buf: None,
            direct_error: None,
        })
    }

    fn register_files(&mut self) -> Result<(), EngineError> {
        let fds: Vec<i32> = self.files.iter().map(|t| t.fd).collect();
        let sub = self.ring.submitter();
        if self.files_registered {
            let _ = sub.unregister_files();
        }
        sub.register_files(&fds).map_err(|e| {
            opt_err(
                "registerfiles",
                format!("IORING_REGISTER_FILES failed: {e}"),
            )
        })?;
        self.files_registered = true;
        self.files_current = true;
        Ok(())
    }

    /// Point registered file slot `index` at `fd` (-1: empty) so the table holds no reference
    /// to a closed file; the table is registered lazily, so before that nothing is needed.
    fn update_slot(&mut self, index: u32, fd: i32) -> Result<(), EngineError> {
        if !(self.registerfiles && self.files_registered && self.files_current) {
            return Ok(());
        }
        self.ring
            .submitter()
            .register_files_update(index, &[fd])
            .map_err(|e| {
                opt_err(
                    "registerfiles",
                    format!("IORING_REGISTER_FILES_UPDATE failed: {e}"),
                )
            })?;
        Ok(())
    }

    /// Index of the registered buffer holding `[p, p+len)`.
    fn buf_index(&self, p: *mut u8, len: u32) -> Result<u16, EngineError> {
        self.bufs.ok_or_else(not_registered)?.index(p as usize, len)
    }

    fn rw_entry(
        &mut self,
        id: u32,
        idx: u32,
        t: Target,
        io: &IoUnit,
    ) -> Result<squeue::Entry, EngineError> {
        let read = io.op == IoOp::Read;
        let b = io.buf();
        let (p, len, off, fl) = (b.as_ptr(), b.len(), io.offset, self.rw_flags);
        // As fio: every read/write carries its priority (the job's default, or its cmdprio).
        let prio = io.ioprio;
        let mut slot = None;
        macro_rules! build {
            ($fd:expr) => {{
                if self.fixedbufs {
                    let bi = self.buf_index(p, len)?;
                    if read {
                        opcode::ReadFixed::new($fd, p, len, bi)
                            .offset(off)
                            .rw_flags(fl)
                            .ioprio(prio)
                            .build()
                    } else {
                        opcode::WriteFixed::new($fd, p, len, bi)
                            .offset(off)
                            .rw_flags(fl)
                            .ioprio(prio)
                            .build()
                    }
                } else if !self.vectored {
                    if read {
                        opcode::Read::new($fd, p, len)
                            .offset(off)
                            .rw_flags(fl)
                            .ioprio(prio)
                            .build()
                    } else {
                        opcode::Write::new($fd, p, len)
                            .offset(off)
                            .rw_flags(fl)
                            .ioprio(prio)
                            .build()
                    }
                } else {
                    // Slots are never exhausted: queue() caps in-flight units at depth.
                    let s = self.free_slots.pop().unwrap_or(0);
                    slot = Some(s);
                    let iov = &mut self.iovs[s as usize];
                    iov.iov_base = p.cast();
                    iov.iov_len = len as usize;
                    let iov: *const libc::iovec = iov;
                    if read {
                        opcode::Readv::new($fd, iov, 1)
                            .offset(off)
                            .rw_flags(fl)
                            .ioprio(prio)
                            .build()
                    } else {
                        opcode::Writev::new($fd, iov, 1)
                            .offset(off)
                            .rw_flags(fl)
                            .ioprio(prio)
                            .build()
                    }
                }
            }};
        }
        let e = if self.registerfiles {
            build!(types::Fixed(idx))
        } else {
            build!(types::Fd(t.fd))
        };
        let tag = slot.map_or(0, |s| HAS_SLOT | (s as u64) << 32);
        Ok(e.user_data(tag | id as u64))
    }

    /// The SQEs `sqe(cfg, files, i)` for `i` in `0..n`, written into the submission ring in
    /// order (the batch path's and the ring loop's): how many went in, and the error that
    /// stopped them (the unit's own, or a ring full although below `iodepth`). The ring's
    /// tail is published once, as `sq` goes.
    #[inline(always)]
    fn push_sqes(
        &mut self,
        n: usize,
        mut sqe: impl FnMut(&SqeCfg, &[Target], usize) -> Result<sqe::Sqe, EngineError>,
    ) -> (usize, Option<EngineError>) {
        let cfg = self.sqe_cfg();
        let files = &self.files;
        let mut sq = self.ring.submission();
        let (mut k, mut err) = (0, None);
        while k < n {
            let e = match sqe(&cfg, files, k) {
                Ok(e) => e.entry(),
                Err(e) => {
                    err = Some(e);
                    break;
                }
            };
            // SAFETY: the SQE refers to a buffer slot that stays valid until its completion
            // is reaped, per the IoUnit contract (which the ring loop keeps for its units too).
            if unsafe { sq.push(&e) }.is_err() {
                err = Some(opt_err(
                    "iodepth",
                    "submission ring full although below iodepth".into(),
                ));
                break;
            }
            k += 1;
        }
        drop(sq);
        self.queued += k;
        self.sqe_count = self.sqe_count.wrapping_add(k as u32);
        (k, err)
    }

    /// `commit`, asking the kernel to wait in the same call until the completion ring holds
    /// `wait` completions (at most what is in flight once all is submitted; the wait is
    /// skipped, by the kernel, when it took fewer than all): one system call where a reap
    /// that waits follows at once.
    pub(super) fn commit_waiting(&mut self, wait: usize) -> Result<usize, EngineError> {
        let wait = wait.min(self.inflight + self.queued) as u32;
        let mut tries = 0;
        while self.queued > 0 {
            match self.submit(wait) {
                Ok(n) => {
                    // With SQPOLL the kernel thread may already have consumed SQEs that
                    // submit() no longer counts: everything pushed is in flight once woken.
                    let n = if self.sqpoll {
                        self.queued
                    } else {
                        n.min(self.queued)
                    };
                    self.queued -= n;
                    self.inflight += n;
                    return Ok(n);
                }
                Err(e) => match e.raw_os_error() {
                    Some(libc::EINTR) => {}
                    Some(libc::EAGAIN | libc::EBUSY) if self.inflight > 0 => return Ok(0),
                    Some(libc::EAGAIN | libc::EBUSY) if tries < 1000 => {
                        tries += 1;
                        std::thread::yield_now();
                    }
                    _ => {
                        return Err(EngineError::Os {
                            engine: "io_uring",
                            what: "io_uring_enter (submit)".into(),
                            source: e,
                        })
                    }
                },
            }
        }
        Ok(0)
    }

    /// Before SQEs go straight into the ring (`push_sqes`): the file table registered as the
    /// first `queue` would, and fixed buffers registered at all.
    fn ready_to_push(&mut self) -> Result<(), EngineError> {
        if self.registerfiles && !self.files_current {
            self.register_files()?;
        }
        if self.fixedbufs && self.bufs.is_none() {
            return Err(not_registered());
        }
        Ok(())
    }

    /// What the batch path's SQEs share, read once per batch.
    fn sqe_cfg(&self) -> SqeCfg {
        SqeCfg {
            fixed: self.bufs.filter(|_| self.fixedbufs),
            registerfiles: self.registerfiles,
            rw_flags: self.rw_flags,
        }
    }

    fn sync_entry(&self, idx: u32, t: Target, op: IoOp) -> squeue::Entry {
        let flags = if op == IoOp::Fdatasync {
            types::FsyncFlags::DATASYNC
        } else {
            types::FsyncFlags::empty()
        };
        if self.registerfiles {
            opcode::Fsync::new(types::Fixed(idx)).flags(flags).build()
        } else {
            opcode::Fsync::new(types::Fd(t.fd)).flags(flags).build()
        }
    }

    fn push(&mut self, mut e: squeue::Entry) -> Result<(), EngineError> {
        self.sqe_count = self.sqe_count.wrapping_add(1);
        if self.force_async > 0 && self.sqe_count.is_multiple_of(self.force_async) {
            e = e.flags(squeue::Flags::ASYNC);
        }
        // SAFETY: the SQE refers to a buffer slot (or iovec slot) that stays valid until its
        // completion is reaped, per the IoUnit contract.
        let mut pushed = unsafe { self.ring.submission().push(&e) }.is_ok();
        // With sqthread_poll the kernel thread frees SQ slots only after a whole batch, so
        // completions can be reaped before their slots are: wait for free slots (SQ_WAIT).
        let mut waits = 0;
        while !pushed && self.sqpoll && waits < 8 {
            self.ring
                .submitter()
                .squeue_wait()
                .map_err(|source| EngineError::Os {
                    engine: "io_uring",
                    what: "io_uring_enter (SQ_WAIT)".into(),
                    source,
                })?;
            waits += 1;
            // SAFETY: as above.
            pushed = unsafe { self.ring.submission().push(&e) }.is_ok();
        }
        if !pushed {
            return Err(opt_err(
                "iodepth",
                "submission ring full although below iodepth".into(),
            ));
        }
        self.queued += 1;
        Ok(())
    }

    /// Submit what the SQ ring holds, as the crate's `submit_and_wait` (GETEVENTS where the
    /// kernel asks for it, the ring polls or `wait` completions are wanted: the kernel then
    /// waits for the completion ring to hold that many once everything was submitted),
    /// through the registered ring where there is one.
    #[inline]
    fn submit(&mut self, wait: u32) -> std::io::Result<usize> {
        let Some(reg) = &self.reg else {
            return self.ring.submit_and_wait(wait as usize);
        };
        let mut sq = self.ring.submission();
        sq.sync();
        let len = sq.len() as u32;
        let flags = if wait > 0 || self.iopoll || sq.cq_overflow() || sq.taskrun() {
            ENTER_GETEVENTS
        } else {
            0
        };
        drop(sq);
        reg.enter(len, wait, flags)
    }

    /// Wait for `want` completions (0: run the kernel's pending completion work and poll).
    #[inline]
    fn wait(&self, want: u32) -> std::io::Result<usize> {
        if let Some(reg) = &self.reg {
            return reg.enter(0, want, ENTER_GETEVENTS);
        }
        // SAFETY: a plain wait for completions on our ring; submits nothing (SQEs wait for
        // commit) and passes no argument.
        unsafe {
            self.ring
                .submitter()
                .enter::<libc::sigset_t>(0, want, ENTER_GETEVENTS, None)
        }
    }

    /// With `hipri` every I/O fails with EOPNOTSUPP unless the file is O_DIRECT on a device
    /// with poll queues: read one block now so that shows up as an error naming the option.
    fn probe_iopoll(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        let pool = BufPool::new(1, 4096, 4096).map_err(|e| opt_err("hipri", e))?;
        let e = opcode::Read::new(types::Fd(file.fd), pool.slot(0).as_ptr(), 4096)
            .build()
            .user_data(u64::MAX);
        // SAFETY: the buffer lives in `pool`, which outlives the wait for this SQE below.
        unsafe { self.ring.submission().push(&e) }
            .map_err(|_| opt_err("hipri", "cannot queue the probe read".into()))?;
        let mut waited = self.ring.submit_and_wait(1);
        let mut res = self.ring.completion().next().map(|c| c.result());
        // IOPOLL completions are found by polling; a probe punted to a kernel worker is not
        // on the poll list yet, so keep polling (with short sleeps) for up to 5 s.
        let start = std::time::Instant::now();
        while res.is_none() && waited.is_ok() && start.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_micros(100));
            // SAFETY: a plain wait/poll for completions on our ring.
            waited = unsafe {
                self.ring
                    .submitter()
                    .enter::<libc::sigset_t>(0, 1, ENTER_GETEVENTS, None)
            };
            res = self.ring.completion().next().map(|c| c.result());
        }
        if res.is_none() {
            // The read may still land in the buffer: keep it alive as long as the ring.
            self.probe_buf = Some(pool);
        }
        let refused = |why: String| {
            opt_err(
                "hipri",
                format!(
                    "polled I/O (IOPOLL) does not work on {}: {why}; it needs direct=1 and a \
                     block device with poll queues (e.g. nvme with poll_queues > 0)",
                    file.path.display()
                ),
            )
        };
        match (waited, res) {
            (Err(e), _) => Err(refused(e.to_string())),
            (Ok(_), Some(r)) if r == -libc::EOPNOTSUPP || r == -libc::EINVAL => Err(refused(
                format!("the probe read failed with {}", crate::sys::errno_name(-r)),
            )),
            (Ok(_), Some(_)) => Ok(()),
            (Ok(_), None) => Err(refused("the probe read never completed".into())),
        }
    }

    /// Move completions from the CQ ring to `out`, at most `max`.
    fn drain(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        let mut n = 0;
        let mut cq = self.ring.completion();
        for cqe in cq.by_ref().take(max) {
            let ud = cqe.user_data();
            if ud & HAS_SLOT != 0 {
                self.free_slots.push(((ud & !HAS_SLOT) >> 32) as u32);
            }
            out.push(Completion {
                unit: ud as u32,
                result: cqe.result() as i64,
            });
            n += 1;
        }
        cq.sync();
        n
    }
}

impl IoEngine for UringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn direct(&mut self) -> Option<crate::Direct<'_>> {
        Some(crate::Direct::Uring(self))
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            batches_rw: true,
            ..EngineFlags::default()
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        if self.iopoll && self.inflight + self.queued == 0 && file.fd >= 0 {
            self.probe_iopoll(file)?;
        }
        self.files.push(Target::of(file));
        self.files_current = false;
        Ok(())
    }

    fn close_file(&mut self, index: u32) -> Result<(), EngineError> {
        target("io_uring", &self.files, index)?;
        // A later first registration must not see the closed fd (-1 is an empty slot).
        self.files[index as usize].fd = -1;
        self.update_slot(index, -1)
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        replace("io_uring", &mut self.files, index, file)?;
        self.update_slot(index, file.fd)
    }

    fn register_buffers(&mut self, pool: &BufPool) -> Result<(), EngineError> {
        if !self.fixedbufs {
            return Ok(());
        }
        if self.bufs.take().is_some() {
            // Registering again replaces the old pool (the kernel refuses a second table).
            let _ = self.ring.submitter().unregister_buffers();
        }
        let slot = pool.slot_size();
        let total = slot * pool.len();
        let chunk = (MAX_REG_BUF / slot).max(1) * slot;
        let base = pool.slot(0).as_ptr();
        let iovs: Vec<libc::iovec> = (0..total.div_ceil(chunk))
            .map(|i| libc::iovec {
                // SAFETY: i * chunk < total: every iovec starts inside the pool's allocation.
                iov_base: unsafe { base.add(i * chunk) }.cast(),
                iov_len: chunk.min(total - i * chunk),
            })
            .collect();
        // SAFETY: the pool outlives the engine's use of it (trait contract); the kernel pins
        // the pages until the ring is closed.
        unsafe { self.ring.submitter().register_buffers(&iovs) }
            .map_err(|e| opt_err("fixedbufs", format!("IORING_REGISTER_BUFFERS failed: {e}")))?;
        self.bufs = Some(FixedBufs {
            base: base as usize,
            end: base as usize + total,
            chunk,
            single: chunk >= total,
        });
        Ok(())
    }

    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = target("io_uring", &self.files, io.file)?;
        // A queue deeper than the submission ring goes out in batches: a full ring is busy
        // until the loop commits.
        if self.inflight + self.queued >= self.depth || self.queued >= self.sq_len {
            return Ok(Queued::Busy);
        }
        if self.registerfiles && !self.files_current {
            self.register_files()?;
        }
        let e = match io.op {
            IoOp::Read | IoOp::Write => self.rw_entry(id, io.file, t, io)?,
            IoOp::Fsync | IoOp::Fdatasync => {
                self.sync_entry(io.file, t, io.op).user_data(id as u64)
            }
            IoOp::Trim | IoOp::SyncRange(_) if self.inflight + self.queued > 0 => {
                return Ok(Queued::Busy)
            }
            IoOp::Trim => return Ok(Queued::Done(trim(t, io.offset, io.len()))),
            // After the writes before it, as the ring's own op would be ordered by fio.
            IoOp::SyncRange(f) => {
                return Ok(Queued::Done(sync_range(
                    t.fd,
                    io.offset,
                    io.len() as u64,
                    f,
                )))
            }
        };
        self.push(e)?;
        Ok(Queued::Queued)
    }

    fn queue_rw(&mut self, ids: &[u32], units: &[IoUnit]) -> (usize, Result<(), EngineError>) {
        // SQPOLL may wait for ring room, force_async marks SQEs by their count and vectored
        // I/O takes an iovec slot per unit: those go one by one.
        if self.sqpoll || self.force_async > 0 || (self.vectored && !self.fixedbufs) {
            return crate::queue_each(self, ids, units);
        }
        let room = (self.depth.saturating_sub(self.inflight + self.queued))
            .min(self.sq_len.saturating_sub(self.queued));
        let n = ids.len().min(units.len()).min(room);
        if n == 0 {
            return (0, Ok(()));
        }
        if let Err(e) = self.ready_to_push() {
            return (0, Err(e));
        }
        let (k, err) = self.push_sqes(n, |cfg, files, i| cfg.sqe(ids[i], files, &units[i]));
        (k, err.map_or(Ok(()), Err))
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        self.commit_waiting(0)
    }

    fn getevents(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        // SQEs the kernel pushed back at the last commit go out now, so they can complete.
        if self.queued > 0 {
            self.commit()?;
        }
        let mut n = max.min(self.ready.len());
        out.extend(self.ready.drain(..n));
        let min = min.min(self.inflight + n);
        // IOPOLL completions only appear when someone polls: a non-blocking reap polls once.
        let mut poll_once = self.iopoll && min == 0;
        loop {
            let got = self.drain(max - n, out);
            self.inflight -= got;
            n += got;
            if (n >= min && !poll_once) || n >= max || self.inflight == 0 {
                return Ok(n);
            }
            let want = if poll_once { 0 } else { 1 };
            poll_once = false;
            let r = self.wait(want);
            if let Err(e) = r {
                if !matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) {
                    return Err(EngineError::Os {
                        engine: "io_uring",
                        what: "io_uring_enter (wait)".into(),
                        source: e,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(e: squeue::Entry) -> [u8; 64] {
        // SAFETY: Entry is the 64-byte repr(C) io_uring_sqe (asserted at compile time).
        unsafe { std::mem::transmute::<squeue::Entry, [u8; 64]>(e) }
    }

    /// The batch path's SQEs are the crate builders' byte for byte: reads and writes, fixed
    /// and plain buffers, registered and plain files, with a priority and rw flags.
    #[test]
    fn direct_sqes_match_the_crates_builders() {
        let pool = BufPool::new(2, 4096, 4096).unwrap();
        for fixedbufs in [false, true] {
            for registerfiles in [false, true] {
                let o = fiox_job::spec::EngineOptions {
                    fixedbufs,
                    registerfiles,
                    nonvectored: 1,
                    ..Default::default()
                };
                let mut e = match UringEngine::new(4, false, &o, true) {
                    Ok(e) => e,
                    Err(_) if !crate::test_need::kernel_io_uring() => return,
                    Err(err) => panic!("{err}"),
                };
                e.register_buffers(&pool).unwrap();
                e.rw_flags = 0x10;
                let t = Target { fd: 7 };
                for op in [IoOp::Read, IoOp::Write] {
                    let io = IoUnit::transfer(op, 3, 8192, pool.span(1, 0, 4096).unwrap())
                        .with_ioprio(2 << 13 | 4);
                    let files = [t; 4];
                    let direct = e.sqe_cfg().sqe(42, &files, &io).unwrap().entry();
                    let built = e.rw_entry(42, 3, t, &io).unwrap();
                    assert_eq!(bytes(direct), bytes(built), "{op:?} {o:?}");
                }
            }
        }
    }

    /// fio's default (-1) takes READ/WRITE on a kernel that has them (fio probes the ring
    /// the same way); 0 keeps READV/WRITEV, 1 asks for READ/WRITE.
    #[test]
    fn nonvectored_default_probes_the_ring() {
        let with = |nonvectored| {
            let o = fiox_job::spec::EngineOptions {
                nonvectored,
                ..Default::default()
            };
            UringEngine::new(4, false, &o, true).map(|e| e.vectored)
        };
        let Ok(default) = with(fiox_job::spec::EngineOptions::default().nonvectored) else {
            assert!(!crate::test_need::kernel_io_uring(), "io_uring works here");
            return;
        };
        let mut p = io_uring::Probe::new();
        let ring = IoUring::new(4).unwrap();
        ring.submitter().register_probe(&mut p).unwrap();
        let has = p.is_supported(opcode::Read::CODE) && p.is_supported(opcode::Write::CODE);
        assert_eq!(default, !has, "the default follows the probe");
        assert!(with(0).unwrap(), "nonvectored=0 is vectored");
        assert!(!with(1).unwrap(), "nonvectored=1 is not");
    }

    /// A ring one thread submits to is entered by its registered index, and gives the slot
    /// back when dropped: the kernel has 16 per thread, so 40 engines in turn would run out.
    /// A read through the registered ring completes.
    #[test]
    fn registered_ring_is_used_and_given_back() {
        let o = fiox_job::spec::EngineOptions::default();
        for i in 0..40 {
            let mut e = match UringEngine::new(4, false, &o, true) {
                Ok(e) => e,
                Err(_) if !crate::test_need::kernel_io_uring() => return,
                Err(err) => panic!("{err}"),
            };
            assert!(e.reg.is_some(), "engine {i}: the ring was not registered");
            if i == 0 {
                read_one(&mut e);
            }
        }
        let shared = UringEngine::new(4, false, &o, false).unwrap();
        assert!(
            shared.reg.is_none(),
            "a ring several threads use is entered by its fd"
        );
    }

    fn read_one(e: &mut UringEngine) {
        let f = std::fs::File::open("/proc/self/exe").unwrap();
        let file = crate::EngineFile {
            fd: std::os::fd::AsRawFd::as_raw_fd(&f),
            path: "/proc/self/exe".into(),
            size: 4096,
            writable: false,
        };
        e.add_file(&file).unwrap();
        let pool = BufPool::new(1, 4096, 4096).unwrap();
        let io = IoUnit::transfer(IoOp::Read, 0, 0, pool.span(0, 0, 4096).unwrap());
        assert_eq!(e.queue_rw(&[0], &[io]).0, 1);
        assert_eq!(e.commit().unwrap(), 1);
        let mut out = Vec::new();
        assert_eq!(e.getevents(1, 1, &mut out).unwrap(), 1);
        assert_eq!(out[0].result, 4096, "{out:?}");
    }

    #[test]
    fn registered_pool_maps_buffers_to_indexes() {
        let o = fiox_job::spec::EngineOptions {
            fixedbufs: true,
            ..Default::default()
        };
        let mut e = match UringEngine::new(4, false, &o, true) {
            Ok(e) => e,
            // Only a kernel without io_uring (probed, the skip recorded) excuses a failure.
            Err(_) if !crate::test_need::kernel_io_uring() => return,
            Err(err) => panic!("{err}"),
        };
        let pool = BufPool::new(4, 4096, 4096).unwrap();
        assert!(
            e.buf_index(pool.slot(0).as_ptr(), 4096).is_err(),
            "before registration"
        );
        e.register_buffers(&pool).unwrap();
        for i in 0..4 {
            assert_eq!(e.buf_index(pool.slot(i).as_ptr(), 4096).unwrap(), 0);
        }
        let outside = [0u8; 16];
        let err = e.buf_index(outside.as_ptr() as *mut u8, 16).unwrap_err();
        assert!(err.to_string().contains("fixedbufs"), "{err}");
    }
}
