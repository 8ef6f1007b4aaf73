//! `posixaio`: POSIX AIO as glibc implements it (a pool of helper threads doing pread/pwrite),
//! kept as the baseline that fiox's own `guasi` engine is compared with. Like fio's, `queue`
//! hands the request to glibc right away (aio_read/aio_write/aio_fsync), `commit` has nothing to
//! do, and `getevents` polls aio_error over the in-flight control blocks in slot order, sleeping
//! in aio_suspend while fewer than `min` are done. Control blocks live in a boxed slice so their
//! addresses never change while glibc owns them. Trims run synchronously once nothing is in
//! flight.
//!
//! aio_suspend waits on at most [`SUSPEND_ENTRIES`] control blocks, as fio's engine does. Waiting
//! on every in-flight block looks more precise but is the wrong trade with glibc: it serves one
//! file's requests one at a time, so the reaper woke (two context switches) for every single
//! completion, and each aio_suspend registers every listed block under glibc's global AIO lock
//! (a linear search per block), contending with the helper thread that needs the same lock to
//! finish the next request. A short list lets completions pile up between wake-ups.
//!
//! A scan takes every finished block it meets and keeps those beyond the caller's `max` for the
//! next calls: glibc's aio_error takes its global AIO lock, so stopping the scan at `max` (1 by
//! default) meant a scan of up to `iodepth` locked calls per completion, and at depth 1000 a
//! third of fio's IOPS.
//!
//! A scan does not visit every block in flight, as fio's does (10000 locked aio_error calls per
//! scan at depth 10000): it walks the blocks oldest first and stops after [`SCAN_WINDOW`] still
//! in progress. glibc's helper threads take requests in submission order, so what finished is
//! at the old end; a block that finished out of order behind the window is met once the blocks
//! before it complete, which they all do. Nothing is lost or reaped twice, and a scan costs the
//! completions it finds plus at most the window.

use crate::sys::errno;
use crate::target::{replace, run_positional, target, Target};
use crate::{Completion, EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

/// Most control blocks one aio_suspend waits on (fio's engine uses the same bound).
pub(crate) const SUSPEND_ENTRIES: usize = 8;

/// In-progress blocks a scan looks at before it stops (see the module docs); above glibc's
/// default of 20 helper threads, so every request a helper is working on is inside it.
pub(crate) const SCAN_WINDOW: usize = 32;

pub(crate) struct PosixAioEngine {
    files: Vec<Target>,
    cbs: Box<[libc::aiocb]>,
    /// Unit id per control block.
    unit: Vec<u32>,
    free: Vec<usize>,
    /// The control blocks owned by glibc (submitted, not yet returned), oldest first.
    order: std::collections::VecDeque<usize>,
    /// How many control blocks are busy (`order.len()`).
    active: usize,
    /// aio_suspend's argument: the first in-flight blocks (slot order) seen by the last scan.
    wait_list: Vec<*const libc::aiocb>,
    /// Completions a scan found beyond what the caller took, oldest slot first.
    ready: std::collections::VecDeque<Completion>,
    /// Scans of the control blocks so far.
    scans: u64,
    /// aio_error calls so far (each one takes glibc's global AIO lock).
    polls: u64,
}

// SAFETY: the control blocks are owned by this engine and only touched by the thread using it
// (glibc's helpers write to them through the addresses we handed over, which stay valid).
unsafe impl Send for PosixAioEngine {}

impl PosixAioEngine {
    pub fn new(iodepth: u32) -> PosixAioEngine {
        let depth = iodepth.max(1) as usize;
        // SAFETY: an all-zero aiocb is the documented initial state (SIGEV_NONE is 1, set below).
        let mut cbs: Vec<libc::aiocb> = (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect();
        for cb in &mut cbs {
            cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        }
        PosixAioEngine {
            files: Vec::new(),
            cbs: cbs.into_boxed_slice(),
            unit: vec![0; depth],
            free: (0..depth).rev().collect(),
            order: std::collections::VecDeque::with_capacity(depth),
            active: 0,
            wait_list: Vec::with_capacity(SUSPEND_ENTRIES),
            ready: std::collections::VecDeque::with_capacity(depth),
            scans: 0,
            polls: 0,
        }
    }

    /// Submit one unit in control block `i`: 0 or the errno of the refusal.
    fn submit(&mut self, i: usize, t: Target, io: &IoUnit) -> i32 {
        let cb = &mut self.cbs[i];
        cb.aio_fildes = t.fd;
        cb.aio_buf = io.buf.as_ptr().cast();
        cb.aio_nbytes = io.len as usize;
        cb.aio_offset = io.offset as libc::off_t;
        // SAFETY: cb has a stable address inside the boxed slice and, with the buffer slot,
        // stays valid until aio_error reports completion and aio_return is called.
        let r = unsafe {
            match io.op {
                IoOp::Read => libc::aio_read(cb),
                IoOp::Write => libc::aio_write(cb),
                IoOp::Fsync => libc::aio_fsync(libc::O_SYNC, cb),
                _ => libc::aio_fsync(libc::O_DSYNC, cb),
            }
        };
        if r < 0 {
            errno()
        } else {
            0
        }
    }

    /// Move the finished control blocks among the oldest in flight to `ready`, oldest first,
    /// up to the [`SCAN_WINDOW`]th block still in progress; the first [`SUSPEND_ENTRIES`] of
    /// those are left in `wait_list`.
    fn scan(&mut self) {
        self.scans += 1;
        self.wait_list.clear();
        let mut pending = [0usize; SCAN_WINDOW];
        let mut kept = 0;
        while kept < SCAN_WINDOW {
            let Some(i) = self.order.pop_front() else {
                break;
            };
            // SAFETY: cbs[i] was submitted and not yet returned.
            let e = unsafe { libc::aio_error(&self.cbs[i]) };
            self.polls += 1;
            if e == libc::EINPROGRESS {
                if self.wait_list.len() < SUSPEND_ENTRIES {
                    self.wait_list.push(&self.cbs[i] as *const libc::aiocb);
                }
                pending[kept] = i;
                kept += 1;
                continue;
            }
            // SAFETY: the request is complete; aio_return releases it.
            let r = unsafe { libc::aio_return(&mut self.cbs[i]) };
            let result = if e != 0 { -(e as i64) } else { r as i64 };
            self.ready.push_back(Completion {
                unit: self.unit[i],
                result,
            });
            self.active -= 1;
            self.free.push(i);
        }
        // The blocks still in progress go back in front, in their order.
        for &i in pending[..kept].iter().rev() {
            self.order.push_front(i);
        }
    }

    /// Hand at most `max` of the ready completions to `out`.
    fn take_ready(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        let n = max.min(self.ready.len());
        out.extend(self.ready.drain(..n));
        n
    }

    /// Sleep until one of the blocks in `wait_list` (filled by the last full `collect`) is done.
    fn suspend(&mut self) -> Result<(), EngineError> {
        if self.wait_list.is_empty() {
            return Ok(());
        }
        // SAFETY: the list holds pointers to in-flight control blocks; no timeout.
        let r = unsafe {
            libc::aio_suspend(
                self.wait_list.as_ptr(),
                self.wait_list.len() as libc::c_int,
                std::ptr::null(),
            )
        };
        if r < 0 && errno() != libc::EINTR && errno() != libc::EAGAIN {
            return Err(EngineError::Os {
                engine: "posixaio",
                what: "aio_suspend".into(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }
}

impl IoEngine for PosixAioEngine {
    fn name(&self) -> &'static str {
        "posixaio"
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags::default()
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        self.files.push(Target::of("posixaio", file)?);
        Ok(())
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        replace("posixaio", &mut self.files, index, file)
    }

    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = target("posixaio", &self.files, io.file)?;
        if let IoOp::Trim | IoOp::SyncRange(_) = io.op {
            if self.active > 0 {
                return Ok(Queued::Busy);
            }
            let (buf, len, off) = (io.buf.as_ptr(), io.len, io.offset);
            return Ok(Queued::Done(run_positional(t, io.op, buf, len, off, 0)));
        }
        let Some(i) = self.free.pop() else {
            return Ok(Queued::Busy);
        };
        match self.submit(i, t, io) {
            0 => {
                self.unit[i] = id;
                self.order.push_back(i);
                self.active += 1;
                Ok(Queued::Queued)
            }
            e => {
                self.free.push(i);
                if e == libc::EAGAIN && self.active > 0 {
                    Ok(Queued::Busy)
                } else {
                    Ok(Queued::Done(-(e as i64)))
                }
            }
        }
    }

    fn getevents(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        let min = min.min(self.active + self.ready.len()).min(max);
        let mut n = self.take_ready(max, out);
        if n < max && self.active > 0 {
            self.scan();
            n += self.take_ready(max - n, out);
        }
        while n < min {
            // n < min <= max: nothing is ready and the last scan left wait_list current.
            self.suspend()?;
            self.scan();
            n += self.take_ready(max - n, out);
        }
        Ok(n)
    }
}

impl Drop for PosixAioEngine {
    fn drop(&mut self) {
        // glibc's helpers must be done with our control blocks before they are freed.
        for &i in &self.order {
            // SAFETY: cancelling one of our in-flight requests.
            unsafe { libc::aio_cancel(self.cbs[i].aio_fildes, &mut self.cbs[i]) };
        }
        while self.active > 0 {
            let before = self.active;
            self.scan();
            if self.active == before && self.suspend().is_err() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// Reaping one completion at a time (the default iodepth_batch_complete_max=1) must not
    /// rescan every control block per completion: one scan takes all that are done.
    #[test]
    fn one_scan_serves_every_finished_block() {
        let path = std::env::temp_dir().join(format!("fiox-posixaio-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        f.set_len(64 * 4096).unwrap();
        let mut e = PosixAioEngine::new(64);
        e.add_file(&EngineFile {
            fd: f.as_raw_fd(),
            path: path.clone(),
            size: 64 * 4096,
            writable: true,
        })
        .unwrap();
        let bufs = crate::BufPool::new(64, 4096, 4096).unwrap();
        for i in 0..64u32 {
            let u = IoUnit {
                op: IoOp::Read,
                file: 0,
                offset: u64::from(i) * 4096,
                len: 4096,
                buf: bufs.ptr(i as usize),
                ioprio: 0,
            };
            assert_eq!(e.queue(i, &u).unwrap(), Queued::Queued);
        }
        // Wait for every request (no timing: aio_suspend on each block until it is done).
        for i in 0..64 {
            let cb: *const libc::aiocb = &e.cbs[i];
            // SAFETY: cbs[i] is in flight; aio_error and aio_suspend only read it.
            while unsafe { libc::aio_error(cb) } == libc::EINPROGRESS {
                // SAFETY: a one-entry list of an in-flight block, no timeout.
                unsafe { libc::aio_suspend(&cb, 1, std::ptr::null()) };
            }
        }
        let scans = e.scans;
        let mut out = Vec::new();
        while out.len() < 64 {
            assert_eq!(e.getevents(1, 1, &mut out).unwrap(), 1);
        }
        assert_eq!(e.scans - scans, 1, "one scan for 64 completions");
        let mut units: Vec<u32> = out.iter().map(|c| c.unit).collect();
        units.sort();
        assert_eq!(units, (0..64).collect::<Vec<u32>>());
        assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
        let _ = std::fs::remove_file(&path);
    }

    /// Depth 1000 on a pipe: glibc's helper blocks in the first read until data arrives, so
    /// every request is in progress, deterministically. A scan then looks at no more than the
    /// window (it polled all 1000 before); once the data is written every unit is reaped
    /// exactly once, with its own 8 bytes.
    #[test]
    fn deep_queue_scans_a_window_and_reaps_every_unit_once() {
        const DEPTH: usize = 1000;
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors pipe() writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let mut e = PosixAioEngine::new(DEPTH as u32);
        e.add_file(&EngineFile {
            fd: fds[0],
            path: "pipe".into(),
            size: 1 << 30,
            writable: false,
        })
        .unwrap();
        let bufs = crate::BufPool::new(DEPTH, 8, 8).unwrap();
        for i in 0..DEPTH as u32 {
            let u = IoUnit {
                op: IoOp::Read,
                file: 0,
                offset: 0,
                len: 8,
                buf: bufs.ptr(i as usize),
                ioprio: 0,
            };
            assert_eq!(e.queue(i, &u).unwrap(), Queued::Queued);
        }
        let mut out = Vec::new();
        let reaped = e.getevents(0, 1, &mut out);
        let polls = e.polls;
        // The data first: a failed assertion must not leave glibc's helper blocked in a read
        // (the engine's drop waits for every request).
        let data: Vec<u8> = (0..DEPTH as u64).flat_map(|k| k.to_le_bytes()).collect();
        // SAFETY: writing our buffer to the pipe's write end (8000 bytes fit its capacity).
        let w = unsafe { libc::write(fds[1], data.as_ptr().cast(), data.len()) };
        assert_eq!(w, data.len() as isize);
        assert_eq!(reaped.unwrap(), 0, "nothing to read yet");
        assert!(
            polls <= SCAN_WINDOW as u64 && polls < DEPTH as u64 / 4,
            "{polls} aio_error calls for one scan"
        );
        while out.len() < DEPTH {
            e.getevents(1, 1, &mut out).unwrap();
        }
        let mut units: Vec<u32> = out.iter().map(|c| c.unit).collect();
        units.sort();
        assert_eq!(units, (0..DEPTH as u32).collect::<Vec<u32>>());
        assert!(out.iter().all(|c| c.result == 8), "every read got 8 bytes");
        let mut got: Vec<u64> = (0..DEPTH)
            .map(|i| u64::from_le_bytes(bufs.slice(i)[..8].try_into().unwrap()))
            .collect();
        got.sort();
        assert_eq!(
            got,
            (0..DEPTH as u64).collect::<Vec<u64>>(),
            "each chunk read once"
        );
        assert!(e.polls <= (DEPTH + e.scans as usize * SCAN_WINDOW) as u64);
        assert_eq!(e.active, 0);
        // SAFETY: closing the pipe this test opened; nothing is in flight.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
