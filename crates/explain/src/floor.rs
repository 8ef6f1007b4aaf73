//! The floor of `--explain`'s design, for bench/explain-floor.sh: programs that do nothing (or
//! only read the clock, as nearly every real one does once) attached to the same tracepoints
//! as the real ones. A job run beside them pays what any per-event tracer on these hooks
//! pays before doing any work: the tracepoints' dispatch (for raw_syscalls, every syscall of
//! the machine taking the kernel's slow syscall path) and the clock reads.

use crate::asm::{Asm, Helper, R0};
use crate::{sys, ExplainError};
use std::os::fd::OwnedFd;

/// The raw tracepoints `--explain` attaches a program to on every I/O's path.
pub const HOOKS: [&str; 7] = [
    "sys_enter",
    "sys_exit",
    "sched_switch",
    "sched_waking",
    "block_io_start",
    "block_rq_issue",
    "block_rq_complete",
];

/// Attached programs (detached when dropped).
#[derive(Debug)]
pub struct Floor {
    _fds: Vec<OwnedFd>,
}

/// Attach to each raw tracepoint of `hooks` a program that returns at once, or (`clock`)
/// that reads the clock (bpf_ktime_get_ns) first.
pub fn attach(hooks: &[&str], clock: bool) -> Result<Floor, ExplainError> {
    let mut a = Asm::new();
    if clock {
        a.call(Helper::KtimeGetNs);
    }
    a.mov_imm(R0, 0);
    a.exit();
    let insns = a.finish().map_err(ExplainError::Program)?;
    let mut fds = Vec::new();
    for hook in hooks {
        let prog = sys::prog_load(&insns, "floor", sys::BPF_PROG_TYPE_RAW_TRACEPOINT, None)
            .map_err(|e| ExplainError::Program(format!("floor refused: {e}")))?;
        let link = sys::raw_tracepoint_open(Some(hook), &prog).map_err(|e| {
            ExplainError::Unavailable(format!("attaching to raw tracepoint {hook} failed: {e}"))
        })?;
        fds.extend([prog, link]);
    }
    Ok(Floor { _fds: fds })
}
