//! The programs that find the threads working for a job and io_uring's ring: a job thread's
//! wakeups mark the woken thread's next run as the job's (sched_waking), the run's CPU time is
//! counted when it leaves the CPU (worker_slice, inside sched_switch, from the scheduler's own
//! per-task CPU time: no clock read and no per-CPU state on every context switch), io_uring_create tells
//! where the thread's completion queue head is, and task_newtask which thread of this process
//! created which (an engine's helper threads are their job thread's).

use super::{current, done, field, ret0, thread, win_gen, Kernel, Maps};
use crate::asm::{Alu, Asm, Cond, Helper, Insn, Size, FP, R0, R1, R2, R3, R4, R6, R7, R8, R9};
use crate::layout::*;
use crate::ExplainError;

/// clone(2)'s CLONE_UNTRACED (include/uapi/linux/sched.h).
const CLONE_UNTRACED: i32 = 0x0080_0000;

/// io_uring_create (raw: (fd, ctx, sq_entries, cq_entries, flags), in the creating thread):
/// the ring's `io_rings` address and its completion queue head, for cq_reaped.
pub fn uring_create(m: &Maps, k: &Kernel, tgid: u32) -> Result<Vec<Insn>, ExplainError> {
    let (rings, head) = k
        .uring
        .ok_or_else(|| ExplainError::Unavailable("this kernel has no io_uring".into()))?;
    let mut a = Asm::new();
    current(&mut a, m, tgid, true);
    a.ldx(Size::DW, R3, R6, 8);
    a.alu_imm(Alu::Add, R3, rings);
    a.mov(R1, FP);
    a.alu_imm(Alu::Add, R1, -16);
    a.mov_imm(R2, 8);
    a.call(Helper::ProbeReadKernel);
    a.jmp_imm(Cond::Ne, R0, 0, "out");
    a.ldx(Size::DW, R3, FP, -16);
    a.stx(Size::DW, R7, w(G_RINGS), R3);
    a.alu_imm(Alu::Add, R3, head);
    a.mov(R1, FP);
    a.alu_imm(Alu::Add, R1, -24);
    a.mov_imm(R2, 4);
    a.call(Helper::ProbeReadKernel);
    a.jmp_imm(Cond::Ne, R0, 0, "out");
    a.ldx(Size::W, R1, FP, -24);
    a.stx(Size::DW, R7, w(G_CQHEAD), R1);
    ret0(&mut a);
    done(a)
}

/// task_newtask (raw: (task, clone_flags), in the creating thread): a thread this process
/// creates gets its record now, with the creator's tid (G_PARENT). Rare: threads are made
/// at a job's start (its engine's pool) and by glibc's POSIX AIO now and then. The kernel's
/// own threads of this process (io_uring's iou-wrk and SQPOLL, made with CLONE_UNTRACED,
/// which pthread_create never passes) get none: they stay workers woken for the job.
pub fn task_newtask(m: &Maps, k: &Kernel, tgid: u32) -> Result<Vec<Insn>, ExplainError> {
    let mut a = Asm::new();
    a.mov(R6, R1);
    a.call(Helper::GetCurrentPidTgid);
    a.mov(R1, R0);
    a.alu_imm(Alu::Rsh, R1, 32);
    a.jmp_imm(Cond::Ne, R1, tgid as i32, "out");
    a.ldx(Size::DW, R1, R6, 8);
    a.jmp_imm(Cond::Set, R1, CLONE_UNTRACED, "out");
    a.stx(Size::W, FP, -4, R0);
    a.ldx(Size::DW, R3, R6, 0);
    a.alu_imm(Alu::Add, R3, k.task_pid);
    a.mov(R1, FP);
    a.alu_imm(Alu::Add, R1, -8);
    a.mov_imm(R2, 4);
    a.call(Helper::ProbeReadKernel);
    a.jmp_imm(Cond::Ne, R0, 0, "out");
    thread(&mut a, m, -8, true, "out");
    a.ldx(Size::W, R1, FP, -4);
    a.stx(Size::DW, R7, w(G_PARENT), R1);
    ret0(&mut a);
    done(a)
}

/// sched_waking (BTF-typed raw tracepoint: (task), in the waker's context; the woken task's
/// pid and CPU time loaded directly): a job thread waking a thread that is
/// not one (a loop device's kworker, an io_uring worker, another process's thread) marks that
/// thread's next run as done on the job's behalf, with its CPU time so far (see
/// worker_slice). Its kind is read from its name once, when its slot is first its.
pub fn sched_waking(m: &Maps, k: &Kernel, tgid: u32) -> Result<Vec<Insn>, ExplainError> {
    let mut a = Asm::new();
    a.mov(R6, R1);
    a.call(Helper::GetCurrentPidTgid);
    a.mov(R1, R0);
    a.alu_imm(Alu::Rsh, R1, 32);
    a.jmp_imm(Cond::Ne, R1, tgid as i32, "out");
    a.stx(Size::W, FP, -4, R0);
    thread(&mut a, m, -4, false, "out");
    a.ldx(Size::DW, R3, R6, 0);
    field(&mut a, Size::W, R1, R3, k.task_pid, "out");
    a.stx(Size::W, FP, -8, R1);
    // Another thread of this process (a job's, or a helper it made) is no worker.
    thread(&mut a, m, -8, false, "worker");
    a.ja("out");
    a.label("worker");
    a.ldx(Size::W, R1, FP, -8);
    a.alu_imm(Alu::And, R1, (K_SLOTS - 1) as i32);
    a.stx(Size::W, FP, -36, R1);
    a.ld_map(R1, m.workers);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, -36);
    a.call(Helper::MapLookup);
    a.jmp_imm(Cond::Eq, R0, 0, "out");
    a.mov(R8, R0);
    a.ldx(Size::DW, R1, R8, w(K_PID));
    a.ldx(Size::W, R2, FP, -8);
    a.jmp_reg(Cond::Eq, R1, R2, "known");
    a.ldx(Size::DW, R3, R6, 0);
    a.alu_imm(Alu::Add, R3, k.task_comm);
    a.mov(R1, FP);
    a.alu_imm(Alu::Add, R1, -32);
    a.mov_imm(R2, 8);
    a.call(Helper::ProbeReadKernel);
    a.jmp_imm(Cond::Ne, R0, 0, "out");
    // Its kind by name: "iou-" (io_uring's workers), "kworker/", anything else.
    a.ldx(Size::W, R1, FP, -32);
    a.ldx(Size::W, R2, FP, -28);
    a.mov_imm(R9, W_URING);
    a.jmp_imm(Cond::Eq, R1, i32::from_le_bytes(*b"iou-"), "kind");
    a.mov_imm(R9, W_OTHER);
    a.jmp_imm(Cond::Ne, R1, i32::from_le_bytes(*b"kwor"), "kind");
    a.jmp_imm(Cond::Ne, R2, i32::from_le_bytes(*b"ker/"), "kind");
    a.mov_imm(R9, W_KWORKER);
    a.label("kind");
    a.ldx(Size::W, R1, FP, -8);
    a.stx(Size::DW, R8, w(K_PID), R1);
    a.stx(Size::DW, R8, w(K_KIND), R9);
    a.label("known");
    a.ldx(Size::DW, R3, R6, 0);
    field(&mut a, Size::DW, R1, R3, k.task_runtime, "out");
    a.stx(Size::DW, R8, w(K_RUNTIME), R1);
    a.ldx(Size::W, R1, FP, -4);
    a.stx(Size::DW, R8, w(K_WAKER), R1);
    // Pending in this window (its number, never 0): a run that ends in a later one is not
    // the job's alone (the worker's CPU time since the wakeup spans the closed gap).
    win_gen(&mut a, m, R1);
    a.stx(Size::DW, R8, w(K_PENDING), R1);
    ret0(&mut a);
    done(a)
}

/// In sched_switch (r6 = ctx, the previous task's tid at fp-4; no clock read): if the previous
/// task is a worker whose run a job thread's wakeup started, the run's CPU time (its
/// `sum_exec_runtime`, which the scheduler brought up to date before this tracepoint, less
/// its value at the wakeup) and one run are added to that job thread's record.
pub(super) fn worker_slice(a: &mut Asm, m: &Maps, k: &Kernel) {
    a.ldx(Size::W, R1, FP, -4);
    a.alu_imm(Alu::And, R1, (K_SLOTS - 1) as i32);
    a.stx(Size::W, FP, -20, R1);
    a.ld_map(R1, m.workers);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, -20);
    a.call(Helper::MapLookup);
    a.jmp_imm(Cond::Eq, R0, 0, "slice_done");
    a.ldx(Size::DW, R1, R0, w(K_PENDING));
    a.jmp_imm(Cond::Eq, R1, 0, "slice_done");
    a.ldx(Size::DW, R1, R0, w(K_PID));
    a.ldx(Size::W, R2, FP, -4);
    a.jmp_reg(Cond::Ne, R1, R2, "slice_done");
    a.ldx(Size::DW, R1, R0, w(K_PENDING));
    win_gen(a, m, R2);
    a.st_imm(Size::DW, R0, w(K_PENDING), 0);
    a.jmp_reg(Cond::Ne, R1, R2, "slice_done");
    a.ldx(Size::DW, R1, R0, w(K_KIND));
    a.stx(Size::DW, FP, -72, R1);
    a.ldx(Size::DW, R1, R0, w(K_RUNTIME));
    a.stx(Size::DW, FP, -80, R1);
    a.ldx(Size::DW, R1, R0, w(K_WAKER));
    a.stx(Size::W, FP, -24, R1);
    a.ldx(Size::DW, R3, R6, 8);
    field(a, Size::DW, R1, R3, k.task_runtime, "slice_done");
    a.stx(Size::DW, FP, -88, R1);
    thread(a, m, -24, false, "slice_done");
    a.ldx(Size::DW, R1, FP, -72);
    a.jmp_imm(Cond::Gt, R1, (W_KINDS - 1) as i32, "slice_done");
    a.alu_imm(Alu::Lsh, R1, 3);
    a.mov(R3, R7);
    a.alu_reg(Alu::Add, R3, R1);
    a.ldx(Size::DW, R2, FP, -88);
    a.ldx(Size::DW, R4, FP, -80);
    a.alu_reg(Alu::Sub, R2, R4);
    a.jmp_imm(Cond::Sgt, R2, -1, "slice_ok");
    a.mov_imm(R2, 0);
    a.label("slice_ok");
    a.xadd(R3, w(G_WK_NS), R2);
    a.mov_imm(R2, 1);
    a.xadd(R3, w(G_WK_RUNS), R2);
    a.label("slice_done");
}
