//! Setting the ring up: its sizes for a queue depth, the setup flags fio sets (and which
//! option the kernel refuses when it refuses one), and which read/write commands to use.

use std::os::fd::AsRawFd;

use io_uring::{opcode, IoUring};

use super::opt_err;
use crate::EngineError;

/// The kernel's IORING_MAX_ENTRIES: the largest SQ ring io_uring_setup accepts.
pub(super) const MAX_SQ_ENTRIES: u32 = 32768;
/// The kernel's IORING_MAX_CQ_ENTRIES: the largest completion ring, so the deepest queue.
pub(super) const MAX_CQ_ENTRIES: u32 = 2 * MAX_SQ_ENTRIES;

/// The submission ring for a queue `depth` deep: the queue itself up to the kernel's largest
/// SQ ring; a deeper queue is submitted in batches of that size while its completions (as
/// many as the depth) fit the completion ring sized by [`cq_entries`].
pub(super) fn sq_entries(depth: u32) -> u32 {
    depth.min(MAX_SQ_ENTRIES)
}

/// The completion ring: one entry per I/O in flight (the kernel rounds it up to a power of 2).
pub(super) fn cq_entries(depth: u32) -> u32 {
    depth.max(sq_entries(depth)).min(MAX_CQ_ENTRIES)
}

/// How many of the completion-delivery setup flags [`taskrun_flags`] can add.
const TASKRUN_LEVELS: u8 = 3;

/// Completion-delivery setup flags, as fio 3.33 sets them (level 3: all of them). Without
/// them, every completion an io-wq worker posts (all buffered tmpfs reads, for one) interrupts
/// the submitting thread with task work; COOP_TASKRUN drops that interrupt and DEFER_TASKRUN
/// (with SINGLE_ISSUER: the ring is created and used by the job's own thread) runs the task
/// work in batches when the thread waits for completions. CQSIZE sizes the completion ring
/// to the queue depth.
fn taskrun_flags(b: &mut io_uring::Builder, depth: u32, level: u8) {
    if level >= 1 || depth > MAX_SQ_ENTRIES {
        b.setup_cqsize(cq_entries(depth));
    }
    if level >= 2 {
        b.setup_coop_taskrun();
    }
    if level >= 3 {
        b.setup_single_issuer();
        b.setup_defer_taskrun();
    }
}

/// Build the ring with the options' setup flags; if the kernel refuses, find which option it
/// refuses by retrying with one flag at a time.
pub(super) fn build_ring(
    depth: u32,
    o: &fiox_job::spec::EngineOptions,
    one_thread: bool,
) -> Result<IoUring, EngineError> {
    if !o.sqthread_poll {
        // Task-run flags as fio sets them, dropped one step at a time where the kernel is too
        // old (the same fallback order as fio's). A ring that several threads may use
        // (io_submit_mode=offload) cannot be SINGLE_ISSUER: the kernel fails io_uring_enter
        // from any other thread with EEXIST.
        let top = if one_thread { TASKRUN_LEVELS } else { 2 };
        for level in (1..=top).rev() {
            let mut b = IoUring::builder();
            taskrun_flags(&mut b, depth, level);
            if o.hipri {
                b.setup_iopoll();
            }
            if let Ok(r) = b.build(sq_entries(depth)) {
                return Ok(r);
            }
        }
    }
    let build = |sqpoll: bool, cpu: Option<u32>, iopoll: bool| {
        let mut b = IoUring::builder();
        if sqpoll {
            b.setup_sqpoll(1000);
            if let Some(c) = cpu {
                b.setup_sqpoll_cpu(c);
            }
        }
        if iopoll {
            b.setup_iopoll();
        }
        if depth > MAX_SQ_ENTRIES {
            b.setup_cqsize(cq_entries(depth));
        }
        b.build(sq_entries(depth))
    };
    let err = match build(o.sqthread_poll, o.sqthread_poll_cpu, o.hipri) {
        Ok(r) => return Ok(r),
        Err(e) => e,
    };
    if let Err(e) = build(false, None, false) {
        let disabled = if depth > MAX_CQ_ENTRIES && e.raw_os_error() == Some(libc::EINVAL) {
            format!(
                " (an io_uring completes at most {MAX_CQ_ENTRIES} I/Os at once, the kernel's \
                 IORING_MAX_CQ_ENTRIES: use iodepth={MAX_CQ_ENTRIES} or less)"
            )
        } else {
            std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .map(|s| format!(" (kernel.io_uring_disabled = {})", s.trim()))
                .unwrap_or_default()
        };
        return Err(EngineError::Os {
            engine: "io_uring",
            what: format!("io_uring_setup({depth}){disabled}"),
            source: e,
        });
    }
    let culprit = if o.sqthread_poll && build(true, None, false).is_err() {
        "sqthread_poll"
    } else if o.sqthread_poll_cpu.is_some() && build(true, o.sqthread_poll_cpu, false).is_err() {
        "sqthread_poll_cpu"
    } else if o.hipri {
        "hipri"
    } else {
        "sqthread_poll"
    };
    Err(opt_err(culprit, format!("the kernel refuses it: {err}")))
}

/// Whether reads and writes go as READV/WRITEV: `nonvectored=0`. fio's default (-1) probes
/// the ring and takes READ/WRITE where the kernel has them (5.6 on), as any positive value
/// asks; a kernel that cannot say keeps the vectored commands, which are always there.
pub(super) fn vectored(ring: &IoUring, nonvectored: i32) -> bool {
    match nonvectored {
        0 => true,
        n if n > 0 => false,
        _ => {
            let mut p = io_uring::Probe::new();
            ring.submitter().register_probe(&mut p).is_err()
                || !(p.is_supported(opcode::Read::CODE) && p.is_supported(opcode::Write::CODE))
        }
    }
}

/// IORING_REGISTER_RING_FDS / IORING_UNREGISTER_RING_FDS from <linux/io_uring.h>.
const REGISTER_RING_FDS: libc::c_long = 20;
const UNREGISTER_RING_FDS: libc::c_long = 21;
/// IORING_ENTER_REGISTERED_RING: the fd argument of io_uring_enter is a registered index.
const ENTER_REGISTERED_RING: u32 = 1 << 4;

/// `struct io_uring_rsrc_update`, the argument of IORING_(UN)REGISTER_RING_FDS.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// IORING_(UN)REGISTER_RING_FDS of one entry (`offset`: the slot, u32::MAX for the kernel's
/// choice; `data`: the ring's fd) on ring `fd`: the syscall's result and the slot the kernel
/// wrote back.
fn ring_fds(fd: libc::c_int, opcode: libc::c_long, offset: u32, data: u64) -> (libc::c_long, u32) {
    let mut up = RsrcUpdate {
        offset,
        resv: 0,
        data,
    };
    // SAFETY: one io_uring_rsrc_update the kernel reads and writes back (the slot it chose
    // in `offset`), alive for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd,
            opcode,
            &mut up as *mut RsrcUpdate,
            1,
        )
    };
    (r, up.offset)
}

/// The ring's fd registered in the creating thread's io_uring context (t/io_uring does the
/// same; fio 3.33 does not): each io_uring_enter then names the ring by that index and the
/// kernel skips looking the fd up and taking a reference on its file, about 50 ns a call
/// on these machines (t/io_uring `-N1 -X0` against `-X1`). The index only means this ring in
/// the registering thread, so it is for rings one thread submits to (SINGLE_ISSUER), and
/// is given back only from that thread (elsewhere the kernel drops it when the thread exits).
pub(super) struct RegisteredRing {
    index: u32,
    tid: libc::pid_t,
    /// The ring's own fd, for the unregistration (the engine drops this before the ring).
    ring_fd: libc::c_int,
}

impl RegisteredRing {
    /// Register `ring` in this thread's context; None where the kernel cannot (before 5.18,
    /// or its 16 slots taken): the ring is then entered by its fd.
    pub(super) fn new(ring: &IoUring) -> Option<RegisteredRing> {
        let fd = ring.as_raw_fd();
        let (r, index) = ring_fds(fd, REGISTER_RING_FDS, u32::MAX, fd as u64);
        (r == 1).then(|| RegisteredRing {
            index,
            // SAFETY: gettid has no arguments and cannot fail.
            tid: unsafe { libc::gettid() },
            ring_fd: fd,
        })
    }

    /// io_uring_enter on the registered ring.
    pub(super) fn enter(&self, to_submit: u32, min: u32, flags: u32) -> std::io::Result<usize> {
        // SAFETY: no argument pointer (NULL, size 0); the SQEs the kernel reads were written
        // under the IoUnit contract by whoever pushed them.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                self.index,
                to_submit,
                min,
                flags | ENTER_REGISTERED_RING,
                std::ptr::null::<libc::c_void>(),
                0usize,
            )
        };
        if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }
}

impl Drop for RegisteredRing {
    fn drop(&mut self) {
        // SAFETY: gettid has no arguments and cannot fail.
        if unsafe { libc::gettid() } != self.tid {
            return;
        }
        // The ring is still open (the engine's field order).
        ring_fds(self.ring_fd, UNREGISTER_RING_FDS, self.index, 0);
    }
}
