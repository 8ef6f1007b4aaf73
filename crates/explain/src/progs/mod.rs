//! The BPF programs, one per tracepoint, emitted with the assembler (asm.rs). They keep one
//! record per thread of this process (layout.rs): the syscall it is in, time on and off CPU,
//! and per direction the submission time (minus the block time that overlapped it), block
//! request phases (queued Q->D, device D->C), merges, splits and log2 histograms. Requests
//! are keyed by their address from `block_io_start` (the bio becoming a request, in the
//! submitter's context; queued from then) to their completion
//! wherever that runs. The frequent tracepoints are raw ones (no record built: the programs
//! get the kernel's own arguments and read the two fields they need at offsets the kernel's
//! BTF gives; those that read through a pointer argument are BTF-typed, tp_btf, and load the
//! fields directly); filtering is in the kernel and early: this process's thread group for
//! syscalls and bios, the per-thread records for context switches, the request slots for
//! dispatch and completion. This file: the shared helpers, the syscall and context-switch
//! programs; `block`: the block layer's; `workers`: the threads working for a job and
//! io_uring's ring.

use crate::asm::{
    Alu, Asm, Cond, Helper, Insn, Reg, Size, FP, R0, R1, R2, R3, R4, R5, R6, R7, R8, R9,
};
use crate::btf::Btf;
use crate::layout::*;
use crate::ExplainError;

mod block;
mod workers;

pub use block::{io_start, merge_or_split, rq_complete, rq_issue};
use workers::worker_slice;
pub use workers::{sched_waking, task_newtask, uring_create};

/// What the raw-tracepoint programs need of this kernel's layout, from its BTF.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    /// Offset of `pid` in `struct task_struct` (sched_switch's next task).
    task_pid: i32,
    /// Offset of `cmd_flags` in `struct request`: the operation in its low bits, then flags.
    rq_cmd_flags: i32,
    op_mask: i32,
    /// REQ_RAHEAD's bit.
    rahead: i32,
    /// Offset of `se.sum_exec_runtime` in `struct task_struct` (its CPU time so far).
    task_runtime: i32,
    /// Offset of `comm` in `struct task_struct` (a woken worker's name).
    task_comm: i32,
    /// io_uring's `io_ring_ctx.rings` and the completion queue head's offset in `io_rings`,
    /// when the kernel has io_uring.
    pub uring: Option<(i32, i32)>,
    /// The tracepoints whose programs are BTF-typed (tp_btf: they read through their
    /// arguments' pointers directly), with their `btf_trace_*` type ids.
    typed: [(&'static str, u32); 3],
}

impl Kernel {
    /// Read the facts and check the tracepoints' arguments are the ones the programs read.
    pub fn read() -> Result<Kernel, ExplainError> {
        let b = Btf::kernel()?;
        for (tp, n) in [
            ("sched_switch", 4),
            ("block_io_start", 1),
            ("block_rq_issue", 1),
            ("block_rq_complete", 3),
        ] {
            let got = b.tracepoint_args(tp)?;
            if got != n {
                return Err(ExplainError::Unavailable(format!(
                    "tracepoint {tp} passes {got} arguments on this kernel, --explain reads {n}"
                )));
            }
        }
        let op_bits = b.enum_value("__REQ_FAILFAST_DEV")?;
        let rahead = b.enum_value("__REQ_RAHEAD")?;
        let small = |v: i64| (1..31).contains(&v);
        if !small(op_bits) || !small(rahead) || b.enum_value("REQ_OP_WRITE")? != 1 {
            return Err(ExplainError::Unavailable(
                "the block layer's request flags are not laid out as --explain reads them".into(),
            ));
        }
        let off = |s: &str, m: &str| -> Result<i32, ExplainError> {
            let o = b.member_offset(s, m)?;
            i32::try_from(o).map_err(|_| ExplainError::Unavailable(format!("{s}.{m} too far")))
        };
        let uring = match (
            b.tracepoint_args("io_uring_create"),
            off("io_ring_ctx", "rings"),
            off("io_rings", "cq"),
            off("io_uring", "head"),
        ) {
            (Ok(5), Ok(rings), Ok(cq), Ok(head)) => Some((rings, cq + head)),
            _ => None,
        };
        if b.tracepoint_args("task_newtask")? != 2 {
            return Err(ExplainError::Unavailable(
                "tracepoint task_newtask does not pass (task, clone_flags)".into(),
            ));
        }
        if b.tracepoint_args("sched_waking")? != 1 {
            return Err(ExplainError::Unavailable(
                "tracepoint sched_waking does not pass the woken task alone".into(),
            ));
        }
        let mut typed = [
            ("sched_switch", 0),
            ("sched_waking", 0),
            ("block_io_start", 0),
        ];
        for (tp, id) in typed.iter_mut() {
            *id = b.tracepoint_type(tp)?;
        }
        Ok(Kernel {
            typed,
            task_comm: off("task_struct", "comm")?,
            uring,
            task_pid: off("task_struct", "pid")?,
            rq_cmd_flags: off("request", "cmd_flags")?,
            task_runtime: off("task_struct", "se")? + off("sched_entity", "sum_exec_runtime")?,
            op_mask: (1 << op_bits) - 1,
            rahead: rahead as i32,
        })
    }
}

impl Kernel {
    /// The `btf_trace_*` type id tracepoint `tp`'s program is loaded against, if it is one of
    /// the BTF-typed ones (its context's pointers are then typed: see [`field`]).
    pub fn btf_type(&self, tp: &str) -> Option<u32> {
        self.typed.iter().find(|(n, _)| *n == tp).map(|(_, id)| *id)
    }
}

/// dst = the field at `off` of the kernel structure `ptr` points to, loaded directly: in a
/// BTF-typed program (tp_btf) `ptr` is a typed pointer from the context (or a field of one),
/// which the verifier lets the program dereference (a faulting load yields 0, as
/// bpf_probe_read_kernel's failure would, at the cost of a plain load). Clobbers `ptr`; to
/// `none` if it is null.
fn field(a: &mut Asm, size: Size, dst: Reg, ptr: Reg, off: i32, none: &str) {
    a.jmp_imm(Cond::Eq, ptr, 0, none);
    a.alu_imm(Alu::Add, ptr, off);
    a.ldx(size, dst, ptr, 0);
}

/// The maps' descriptors the programs reference.
#[derive(Debug, Clone, Copy)]
pub struct Maps {
    pub state: i32,
    pub reqs: i32,
    /// Worker slots (layout K_*).
    pub workers: i32,
    /// The window words (layout C_*): one value, addressed directly.
    pub ctl: i32,
}

/// dst = the latest window's start (C_START).
fn win_start(a: &mut Asm, m: &Maps, dst: Reg) {
    a.ld_map_value(dst, m.ctl, 0);
    a.ldx(Size::DW, dst, dst, w(C_START));
}

/// To `stale` if the time in `stamp` is older than the latest window's start: it was taken in
/// an earlier window, and what ends now must not pair with it (the end of what it started
/// may have fallen while the programs were detached). Clobbers `tmp`.
fn stale(a: &mut Asm, m: &Maps, stamp: Reg, tmp: Reg, to: &str) {
    win_start(a, m, tmp);
    a.jmp_reg(Cond::Gt, tmp, stamp, to);
}

/// To `to` unless the time in `stamp` is inside the open window (C_OPEN set, not after
/// `stamp`): for fiox's own time between calls, which with marks is only its own while the
/// marks mark (a call made while they do not, as the programs are being attached or
/// detached, would look like time between calls). Clobbers `tmp`.
fn outside_open(a: &mut Asm, m: &Maps, stamp: Reg, tmp: Reg, to: &str) {
    a.ld_map_value(tmp, m.ctl, 0);
    a.ldx(Size::DW, tmp, tmp, w(C_OPEN));
    a.jmp_imm(Cond::Eq, tmp, 0, to);
    a.jmp_reg(Cond::Gt, tmp, stamp, to);
}

/// To `closed` while no window is open (C_OPEN 0): for the programs that stay attached.
fn if_closed(a: &mut Asm, m: &Maps, tmp: Reg, closed: &str) {
    a.ld_map_value(tmp, m.ctl, 0);
    a.ldx(Size::DW, tmp, tmp, w(C_OPEN));
    a.jmp_imm(Cond::Eq, tmp, 0, closed);
}

/// dst = the latest window's number (C_GEN).
fn win_gen(a: &mut Asm, m: &Maps, dst: Reg) {
    a.ld_map_value(dst, m.ctl, 0);
    a.ldx(Size::DW, dst, dst, w(C_GEN));
}

/// Syscall numbers of this architecture.
struct Nr {
    reads: &'static [i32],
    writes: &'static [i32],
    io_submit: i32,
    io_getevents: &'static [i32],
    io_uring_enter: i32,
}

#[cfg(target_arch = "x86_64")]
const NR: Option<Nr> = Some(Nr {
    reads: &[0, 17, 19, 295, 327],
    writes: &[1, 18, 20, 296, 328],
    io_submit: 209,
    io_getevents: &[208, 333],
    io_uring_enter: 426,
});
#[cfg(target_arch = "aarch64")]
const NR: Option<Nr> = Some(Nr {
    reads: &[63, 65, 67, 69, 286],
    writes: &[64, 66, 68, 70, 287],
    io_submit: 2,
    io_getevents: &[4, 292],
    io_uring_enter: 426,
});
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NR: Option<Nr> = None;

/// Where a syscall's arguments are in the `struct pt_regs` the raw sys_enter tracepoint gets
/// (x86_64: di, si, dx, r10, r8, r9; aarch64: regs[0..6]).
#[cfg(target_arch = "x86_64")]
const ARG_OFF: [i32; 6] = [112, 104, 96, 56, 72, 64];
#[cfg(not(target_arch = "x86_64"))]
const ARG_OFF: [i32; 6] = [0, 8, 16, 24, 32, 40];

/// *(fp-16) = syscall argument `i` (raw sys_enter: r6 = ctx, ctx[0] = the pt_regs); to
/// "out" if it cannot be read.
fn syscall_arg(a: &mut Asm, i: usize) {
    a.ldx(Size::DW, R3, R6, 0);
    a.alu_imm(Alu::Add, R3, ARG_OFF[i]);
    a.mov(R1, FP);
    a.alu_imm(Alu::Add, R1, -16);
    a.mov_imm(R2, 8);
    a.call(Helper::ProbeReadKernel);
    a.jmp_imm(Cond::Ne, R0, 0, "out");
}

fn ret0(a: &mut Asm) {
    a.label("out");
    a.mov_imm(R0, 0);
    a.exit();
}

/// *(u64 *)(base + word) += src (not atomic: the thread's own words).
fn add(a: &mut Asm, base: Reg, word: usize, src: Reg, tmp: Reg) {
    a.ldx(Size::DW, tmp, base, w(word));
    a.alu_reg(Alu::Add, tmp, src);
    a.stx(Size::DW, base, w(word), tmp);
}

/// To `to` while the thread (record at R7) has finished no I/O call yet (no D_CALLS in any
/// direction): its time before the first one (waiting at the start gate, `startdelay`,
/// opening files) is not fiox's time per I/O (a 1 s startdelay came out as 5 ms of
/// `fiox_off_cpu` on each of 200 I/Os).
fn before_first_call(a: &mut Asm, tmp: Reg, tmp2: Reg, to: &str) {
    a.ldx(Size::DW, tmp, R7, w(DIR_BASE + D_CALLS));
    for d in 1..DIRS {
        a.ldx(Size::DW, tmp2, R7, w(DIR_BASE + d * DIR_WORDS + D_CALLS));
        a.alu_reg(Alu::Add, tmp, tmp2);
    }
    a.jmp_imm(Cond::Eq, tmp, 0, to);
}

fn inc(a: &mut Asm, base: Reg, word: usize, tmp: Reg) {
    a.ldx(Size::DW, tmp, base, w(word));
    a.alu_imm(Alu::Add, tmp, 1);
    a.stx(Size::DW, base, w(word), tmp);
}

/// r0 = the thread record keyed by the u32 at fp+key (null if none).
fn lookup(a: &mut Asm, map: i32, key: i16) {
    a.ld_map(R1, map);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, key as i32);
    a.call(Helper::MapLookup);
}

/// r7 = the record of the thread whose tid (u32) is at fp+key: its slot, if the slot is the
/// thread's (or, with `create`, free: then claimed); to `miss` otherwise. Array slots: the
/// lookup is inlined (no hashing helper).
fn thread(a: &mut Asm, m: &Maps, key: i16, create: bool, miss: &str) {
    a.ldx(Size::W, R1, FP, key);
    // Tid 0 is a CPU's idle task, half of many context switches: never a record's (an
    // unclaimed slot's owner is 0 too, so without this the idle task would match slot 0 and
    // its switches read the clock for nothing).
    a.jmp_imm(Cond::Eq, R1, 0, miss);
    a.alu_imm(Alu::And, R1, (T_SLOTS - 1) as i32);
    a.stx(Size::W, FP, -100, R1);
    lookup(a, m.state, -100);
    a.jmp_imm(Cond::Eq, R0, 0, miss);
    a.ldx(Size::DW, R1, R0, w(S_OWNER));
    a.ldx(Size::W, R2, FP, key);
    if create {
        a.jmp_reg(Cond::Eq, R1, R2, "have");
        a.jmp_imm(Cond::Ne, R1, 0, miss);
        a.stx(Size::DW, R0, w(S_OWNER), R2);
        a.label("have");
    } else {
        a.jmp_reg(Cond::Ne, R1, R2, miss);
    }
    a.mov(R7, R0);
}

/// r6 = ctx, r7 = the current thread's record (claimed if `create`), its tid at fp-4; to
/// "out" when the current task is not of this process.
fn current(a: &mut Asm, m: &Maps, tgid: u32, create: bool) {
    a.mov(R6, R1);
    a.call(Helper::GetCurrentPidTgid);
    a.mov(R1, R0);
    a.alu_imm(Alu::Rsh, R1, 32);
    a.jmp_imm(Cond::Ne, R1, tgid as i32, "out");
    a.stx(Size::W, FP, -4, R0);
    thread(a, m, -4, create, "out");
}

/// dst = st + the byte offset of direction `d`'s words (d is checked <= 2; to `bad` if not).
fn dir_ptr(a: &mut Asm, dst: Reg, st: Reg, d: Reg, bad: &str) {
    a.jmp_imm(Cond::Gt, d, 2, bad);
    a.alu_imm(Alu::Mul, d, (DIR_WORDS * 8) as i32);
    a.alu_imm(Alu::Add, d, (DIR_BASE * 8) as i32);
    a.mov(dst, st);
    a.alu_reg(Alu::Add, dst, d);
}

/// Atomically add `wgt` to the log2 bucket of `v` in histogram (d, ph) of record `st`;
/// branch-free (v > c is (c - v) >> 63 for the values measured), so the verifier walks it once.
/// Clobbers d, v and the two temporaries; d must be known <= 2.
fn hist(a: &mut Asm, st: Reg, d: Reg, ph: usize, v: Reg, wgt: Reg, (t1, t2): (Reg, Reg)) {
    a.mov_imm(t1, 0);
    for (shift, c) in [(5, -1i32), (4, 0xffff), (3, 0xff), (2, 0xf), (1, 3), (0, 1)] {
        a.mov_imm(t2, c);
        if shift == 5 {
            a.alu_imm(Alu::Rsh, t2, 32);
        }
        a.alu_reg(Alu::Sub, t2, v);
        a.alu_imm(Alu::Rsh, t2, 63);
        if shift > 0 {
            a.alu_imm(Alu::Lsh, t2, shift);
            a.alu_reg(Alu::Rsh, v, t2);
        }
        a.alu_reg(Alu::Add, t1, t2);
    }
    a.alu_imm(Alu::Mul, d, (PHASES * BUCKETS) as i32);
    a.alu_reg(Alu::Add, t1, d);
    a.alu_imm(Alu::Add, t1, (HIST_BASE + ph * BUCKETS) as i32);
    a.alu_imm(Alu::Lsh, t1, 3);
    a.mov(t2, st);
    a.alu_reg(Alu::Add, t2, t1);
    a.xadd(t2, 0, wgt);
}

fn done(a: Asm) -> Result<Vec<Insn>, ExplainError> {
    a.finish().map_err(ExplainError::Program)
}

/// sys_enter (a raw tracepoint: (regs, id), no record built for each syscall): user time up
/// to here, the syscall's kind and direction.
pub fn sys_enter(m: &Maps, k: &Kernel, tgid: u32) -> Result<Vec<Insn>, ExplainError> {
    let nr = NR.ok_or_else(|| {
        ExplainError::Unavailable(format!(
            "syscall numbers of {} are not known to --explain",
            std::env::consts::ARCH
        ))
    })?;
    let mut a = Asm::new();
    current(&mut a, m, tgid, true);
    a.call(Helper::KtimeGetNs);
    a.mov(R8, R0);
    a.ldx(Size::DW, R1, R7, w(S_MARK));
    a.jmp_imm(Cond::Eq, R1, 0, "nomark");
    outside_open(&mut a, m, R1, R2, "nomark");
    before_first_call(&mut a, R2, R3, "nomark");
    a.mov(R2, R8);
    a.alu_reg(Alu::Sub, R2, R1);
    add(&mut a, R7, G_USER, R2, R3);
    a.label("nomark");
    if let Some((_, head)) = k.uring {
        cq_reaped(&mut a, m, head);
    }
    a.st_imm(Size::DW, R7, w(S_INSYS), 1);
    a.stx(Size::DW, R7, w(S_ENTER), R8);
    for s in [
        S_OFF,
        S_OFFSTART,
        S_MARK,
        S_OUTN,
        S_OUTSUMQ,
        S_BLKIN,
        S_QN,
        S_CIN,
        S_AIO,
        S_WAITS,
        S_WAITS + 1,
        S_WAITS + 2,
    ] {
        a.st_imm(Size::DW, R7, w(s), 0);
    }
    inc(&mut a, R7, S_SEQ, R1);
    a.st_imm(Size::DW, R7, w(S_KIND), K_OTHER);
    a.st_imm(Size::DW, R7, w(S_DIR), 2);
    a.ldx(Size::DW, R1, R6, 8);
    for n in nr.reads {
        a.jmp_imm(Cond::Eq, R1, *n, "rd");
    }
    for n in nr.writes {
        a.jmp_imm(Cond::Eq, R1, *n, "wr");
    }
    for n in nr.io_getevents {
        a.jmp_imm(Cond::Eq, R1, *n, "reap");
    }
    a.jmp_imm(Cond::Eq, R1, nr.io_submit, "aio");
    a.jmp_imm(Cond::Eq, R1, nr.io_uring_enter, "uring");
    a.ja("out");
    for (l, d) in [("rd", 0), ("wr", 1)] {
        a.label(l);
        a.st_imm(Size::DW, R7, w(S_KIND), K_SYNC);
        a.st_imm(Size::DW, R7, w(S_DIR), d);
        a.ja("out");
    }
    a.label("reap");
    a.st_imm(Size::DW, R7, w(S_KIND), K_REAP);
    a.ja("out");
    // io_uring_enter(fd, to_submit, ...): without submissions it only waits.
    a.label("uring");
    syscall_arg(&mut a, 1);
    a.ldx(Size::DW, R1, FP, -16);
    a.jmp_imm(Cond::Eq, R1, 0, "reap");
    a.st_imm(Size::DW, R7, w(S_KIND), K_BATCH);
    a.ja("out");
    // io_submit: its direction is its first request's (block_io_start), or its first iocb's
    // when it makes none (read at exit: reading user memory costs a few hundred ns a call).
    a.label("aio");
    a.st_imm(Size::DW, R7, w(S_KIND), K_BATCH);
    a.st_imm(Size::DW, R7, w(S_AIO), 1);
    ret0(&mut a);
    done(a)
}

/// io_uring: completions user space took from the ring since the thread's last syscall (the
/// completion queue head moved by n) are reaped now: the n oldest pending leave the FIFO.
/// r6 = ctx (kept), r7 = record, r8 = now.
fn cq_reaped(a: &mut Asm, m: &Maps, head: i32) {
    a.ldx(Size::DW, R3, R7, w(G_RINGS));
    a.jmp_imm(Cond::Eq, R3, 0, "cq_done");
    a.alu_imm(Alu::Add, R3, head);
    a.mov(R1, FP);
    a.alu_imm(Alu::Add, R1, -24);
    a.mov_imm(R2, 4);
    a.call(Helper::ProbeReadKernel);
    a.jmp_imm(Cond::Ne, R0, 0, "cq_done");
    a.ldx(Size::W, R9, FP, -24);
    a.ldx(Size::DW, R1, R7, w(G_CQHEAD));
    a.stx(Size::DW, R7, w(G_CQHEAD), R9);
    a.alu_reg(Alu::Sub, R9, R1);
    a.alu_imm(Alu::Lsh, R9, 32);
    a.alu_imm(Alu::Rsh, R9, 32);
    a.jmp_imm(Cond::Eq, R9, 0, "cq_done");
    add(a, R7, G_REAPED, R9, R3);
    a.stx(Size::DW, FP, -64, R6);
    reap_pending(a, m, "cq", "cq_end");
    a.label("cq_end");
    a.ldx(Size::DW, R6, FP, -64);
    a.label("cq_done");
}

/// sys_exit (a raw tracepoint: (regs, ret)): a submission's phases (per I/O it submitted), or
/// a reap's totals.
pub fn sys_exit(m: &Maps, tgid: u32) -> Result<Vec<Insn>, ExplainError> {
    let mut a = Asm::new();
    current(&mut a, m, tgid, false);
    a.call(Helper::KtimeGetNs);
    a.mov(R8, R0);
    a.ldx(Size::DW, R1, R7, w(S_INSYS));
    a.jmp_imm(Cond::Eq, R1, 0, "out");
    a.st_imm(Size::DW, R7, w(S_INSYS), 0);
    a.stx(Size::DW, R7, w(S_MARK), R8);
    // A call entered in an earlier window: its scratch is not all of it.
    a.ldx(Size::DW, R1, R7, w(S_ENTER));
    stale(&mut a, m, R1, R2, "out");
    a.ldx(Size::DW, R9, R6, 8);
    a.ldx(Size::DW, R1, R7, w(S_KIND));
    a.jmp_imm(Cond::Eq, R1, K_REAP, "reap");
    a.jmp_imm(Cond::Eq, R1, K_BATCH, "batch");
    a.jmp_imm(Cond::Ne, R1, K_SYNC, "out");
    a.jmp_imm(Cond::Sgt, R9, 0, "one");
    a.ja("out");
    a.label("one");
    a.mov_imm(R9, 1);
    a.ja("submit");
    a.label("batch");
    a.jmp_imm(Cond::Sgt, R9, 0, "submit");
    a.ja("out");
    submit_exit(&mut a);
    a.label("reap");
    a.ldx(Size::DW, R1, R7, w(S_ENTER));
    a.mov(R2, R8);
    a.alu_reg(Alu::Sub, R2, R1);
    add(&mut a, R7, G_REAP_NS, R2, R3);
    inc(&mut a, R7, G_REAP_CALLS, R3);
    a.ldx(Size::DW, R1, R7, w(S_OFF));
    add(&mut a, R7, G_REAP_OFF, R1, R3);
    a.jmp_imm(Cond::Sgt, R9, 0, "reaped");
    a.ja("out");
    a.label("reaped");
    add(&mut a, R7, G_REAPED, R9, R3);
    reap_pending(&mut a, m, "rp", "out");
    ret0(&mut a);
    done(a)
}

/// r1 = the byte offset of ring slot (r1 & (RING - 1)); r5 = its address in record r7.
fn ring_slot(a: &mut Asm) {
    a.alu_imm(Alu::And, R1, (RING - 1) as i32);
    a.alu_imm(Alu::Add, R1, RING_BASE as i32);
    a.alu_imm(Alu::Lsh, R1, 3);
    a.mov(R5, R7);
    a.alu_reg(Alu::Add, R5, R1);
}

/// A reap of r9 events at r8: the k = min(r9, pending) oldest pending completions (the
/// kernel's completion rings are first in, first out) leave the ring; c2r += k x now - their
/// times (then to `done`; labels prefixed `p`). A ring that overflowed (more than RING pending) drops its oldest, counted as lost.
fn reap_pending(a: &mut Asm, m: &Maps, p: &str, done: &str) {
    let l = |n: &str| format!("{p}_{n}");
    // Completions pushed in an earlier window (a prefix of the ring: every push of this
    // window came after its start) leave uncounted: their reaping fell while detached.
    win_start(a, m, R6);
    a.ldx(Size::DW, R2, R7, w(G_HEAD));
    a.mov_imm(R4, 0);
    a.label(&l("skip"));
    a.ldx(Size::DW, R1, R7, w(G_TAIL));
    a.alu_reg(Alu::Sub, R1, R2);
    a.jmp_imm(Cond::Eq, R1, 0, &l("skipped"));
    a.jmp_imm(Cond::Gt, R1, RING as i32, &l("skipped"));
    a.jmp_imm(Cond::Ge, R4, RING as i32, &l("skipped"));
    a.mov(R1, R2);
    ring_slot(a);
    a.ldx(Size::DW, R5, R5, 0);
    a.jmp_reg(Cond::Ge, R5, R6, &l("skipped"));
    a.alu_imm(Alu::Add, R2, 1);
    a.alu_imm(Alu::Add, R4, 1);
    a.ja(&l("skip"));
    a.label(&l("skipped"));
    a.stx(Size::DW, R7, w(G_HEAD), R2);
    a.ldx(Size::DW, R1, R7, w(G_TAIL));
    a.ldx(Size::DW, R2, R7, w(G_HEAD));
    a.alu_reg(Alu::Sub, R1, R2);
    a.jmp_imm(Cond::Eq, R1, 0, done);
    a.jmp_imm(Cond::Gt, R1, RING as i32, &l("lost"));
    a.ja(&l("have"));
    a.label(&l("lost"));
    a.alu_imm(Alu::Sub, R1, RING as i32);
    add(a, R7, G_LOST, R1, R3);
    a.ldx(Size::DW, R2, R7, w(G_TAIL));
    a.alu_imm(Alu::Sub, R2, RING as i32);
    a.stx(Size::DW, R7, w(G_HEAD), R2);
    a.mov_imm(R1, RING as i32);
    a.label(&l("have"));
    a.mov(R6, R9);
    a.jmp_reg(Cond::Gt, R6, R1, &l("k_cap"));
    a.ja(&l("k_ok"));
    a.label(&l("k_cap"));
    a.mov(R6, R1);
    a.label(&l("k_ok"));
    a.jmp_imm(Cond::Gt, R6, RING as i32, done);
    a.mov_imm(R3, 0);
    a.mov_imm(R4, 0);
    a.label(&l("pop"));
    a.jmp_reg(Cond::Ge, R4, R6, &l("popped"));
    a.mov(R1, R2);
    a.alu_reg(Alu::Add, R1, R4);
    ring_slot(a);
    a.ldx(Size::DW, R5, R5, 0);
    a.alu_reg(Alu::Add, R3, R5);
    a.alu_imm(Alu::Add, R4, 1);
    a.ja(&l("pop"));
    a.label(&l("popped"));
    a.mov(R1, R8);
    a.alu_reg(Alu::Mul, R1, R6);
    a.alu_reg(Alu::Sub, R1, R3);
    add(a, R7, G_C2R_NS, R1, R5);
    add(a, R7, G_C2R_N, R6, R5);
    add(a, R7, G_HEAD, R6, R5);
}

/// An io_submit none of whose I/Os became a request inside it (buffered, or merged): its
/// direction is its first iocb's (io_submit(ctx, nr, iocbpp): aio_lio_opcode at 16), read
/// from user memory with the arguments the saved registers still hold. r6 = ctx.
fn aio_direction(a: &mut Asm) {
    a.ldx(Size::DW, R1, R7, w(S_AIO));
    a.jmp_imm(Cond::Eq, R1, 0, "dir_known");
    a.ldx(Size::DW, R1, R7, w(S_DIR));
    a.jmp_imm(Cond::Ne, R1, 2, "dir_known");
    syscall_arg(a, 2);
    for off in [0, 16] {
        a.ldx(Size::DW, R3, FP, -16);
        a.alu_imm(Alu::Add, R3, off);
        a.mov(R1, FP);
        a.alu_imm(Alu::Add, R1, -16);
        a.mov_imm(R2, 8);
        a.call(Helper::ProbeReadUser);
        a.jmp_imm(Cond::Ne, R0, 0, "dir_known");
    }
    a.ldx(Size::DW, R1, FP, -16);
    a.alu_imm(Alu::And, R1, 0xffff);
    for (op, d) in [(0, 0), (7, 0), (1, 1), (8, 1)] {
        a.mov_imm(R2, d);
        a.jmp_imm(Cond::Eq, R1, op, "aio_dir");
    }
    a.ja("dir_known");
    a.label("aio_dir");
    a.stx(Size::DW, R7, w(S_DIR), R2);
    a.label("dir_known");
}

/// The submission part of sys_exit: r9 = I/Os submitted (> 0), r8 = now, r7 = record.
/// Stack: fp-24 duration, fp-32 off-CPU, fp-40 block time inside, fp-48 direction.
fn submit_exit(a: &mut Asm) {
    a.label("submit");
    aio_direction(a);
    a.ldx(Size::DW, R1, R7, w(S_ENTER));
    a.mov(R2, R8);
    a.alu_reg(Alu::Sub, R2, R1);
    a.stx(Size::DW, FP, -24, R2);
    a.ldx(Size::DW, R1, R7, w(S_OFF));
    a.stx(Size::DW, FP, -32, R1);
    // Block time of this call's requests inside it: completed ones, then those still out.
    a.ldx(Size::DW, R1, R7, w(S_OUTN));
    a.alu_reg(Alu::Mul, R1, R8);
    a.ldx(Size::DW, R2, R7, w(S_OUTSUMQ));
    a.alu_reg(Alu::Sub, R1, R2);
    a.ldx(Size::DW, R2, R7, w(S_BLKIN));
    a.alu_reg(Alu::Add, R1, R2);
    a.jmp_imm(Cond::Sgt, R1, -1, "blk_ok");
    a.mov_imm(R1, 0);
    a.label("blk_ok");
    a.stx(Size::DW, FP, -40, R1);
    // A batch call's I/Os not covered by its bios still out completed inside it (buffered
    // I/O, or bios that completed before the call returned): pending from now.
    a.ldx(Size::DW, R1, R7, w(S_KIND));
    a.jmp_imm(Cond::Ne, R1, K_BATCH, "inline_done");
    a.mov(R1, R9);
    a.ldx(Size::DW, R2, R7, w(S_QN));
    a.alu_reg(Alu::Sub, R1, R2);
    a.ldx(Size::DW, R2, R7, w(S_CIN));
    a.alu_reg(Alu::Add, R1, R2);
    a.jmp_imm(Cond::Sgt, R1, 0, "inline");
    a.ja("inline_done");
    a.label("inline");
    a.jmp_imm(Cond::Gt, R1, RING as i32, "inline_done");
    a.mov(R3, R1);
    a.ldx(Size::DW, R2, R7, w(G_TAIL));
    a.mov_imm(R4, 0);
    a.label("push");
    a.jmp_reg(Cond::Ge, R4, R3, "pushed");
    a.mov(R1, R2);
    a.alu_reg(Alu::Add, R1, R4);
    ring_slot(a);
    a.stx(Size::DW, R5, 0, R8);
    a.alu_imm(Alu::Add, R4, 1);
    a.ja("push");
    a.label("pushed");
    a.xadd(R7, w(G_TAIL), R3);
    a.label("inline_done");
    a.ldx(Size::DW, R1, R7, w(S_DIR));
    a.jmp_imm(Cond::Gt, R1, 2, "out");
    a.stx(Size::DW, FP, -48, R1);
    dir_ptr(a, R8, R7, R1, "out");
    inc(a, R8, D_CALLS, R1);
    for k in 0..3 {
        a.ldx(Size::DW, R2, R7, w(S_WAITS + k));
        add(a, R8, D_WAIT_R + k, R2, R1);
    }
    add(a, R8, D_IOS, R9, R1);
    for (src, word) in [(-24, D_RAWSYS), (-32, D_RAWOFF)] {
        a.ldx(Size::DW, R2, FP, src);
        a.alu_reg(Alu::Mul, R2, R9);
        add(a, R8, word, R2, R1);
    }
    a.ldx(Size::DW, R2, FP, -40);
    add(a, R8, D_BLKIN, R2, R1);
    // Submission = w x duration - block time inside; off CPU = w x off - block time (the
    // wait for the device is the device's phase), at most the submission.
    a.ldx(Size::DW, R2, FP, -24);
    a.alu_reg(Alu::Mul, R2, R9);
    a.ldx(Size::DW, R1, FP, -40);
    a.alu_reg(Alu::Sub, R2, R1);
    a.jmp_imm(Cond::Sgt, R2, -1, "tot_ok");
    a.mov_imm(R2, 0);
    a.label("tot_ok");
    a.ldx(Size::DW, R3, FP, -32);
    a.alu_reg(Alu::Mul, R3, R9);
    a.alu_reg(Alu::Sub, R3, R1);
    a.jmp_imm(Cond::Sgt, R3, -1, "off_ok");
    a.mov_imm(R3, 0);
    a.label("off_ok");
    a.jmp_reg(Cond::Gt, R3, R2, "off_cap");
    a.ja("off_done");
    a.label("off_cap");
    a.mov(R3, R2);
    a.label("off_done");
    a.alu_reg(Alu::Sub, R2, R3);
    add(a, R8, D_ON, R2, R1);
    add(a, R8, D_OFF, R3, R1);
    a.stx(Size::DW, FP, -56, R3);
    a.alu_reg(Alu::Div, R2, R9);
    a.ldx(Size::DW, R1, FP, -48);
    hist(a, R7, R1, H_SUBMIT_ON, R2, R9, (R3, R4));
    a.ldx(Size::DW, R2, FP, -56);
    a.alu_reg(Alu::Div, R2, R9);
    a.ldx(Size::DW, R1, FP, -48);
    hist(a, R7, R1, H_SUBMIT_OFF, R2, R9, (R3, R4));
    a.ja("out");
}

/// r8 = the time, if it is not read yet (r8 = 0); labels prefixed `p`.
fn now(a: &mut Asm, p: &str) {
    a.jmp_imm(Cond::Ne, R8, 0, p);
    a.call(Helper::KtimeGetNs);
    a.mov(R8, R0);
    a.label(p);
}

/// sched_switch (BPF-typed raw tracepoint: (preempt, prev, next, prev_state); prev is the
/// current task; the tasks' pids are loaded directly, no helper call for a switch of no
/// thread of interest): off-CPU time inside syscalls (and why: preempted, sleeping,
/// blocked), on-CPU time outside them (fiox's own user time).
pub fn sched_switch(m: &Maps, k: &Kernel) -> Result<Vec<Insn>, ExplainError> {
    let mut a = Asm::new();
    a.mov(R6, R1);
    a.ldx(Size::DW, R3, R6, 8);
    field(&mut a, Size::W, R1, R3, k.task_pid, "out");
    a.stx(Size::W, FP, -4, R1);
    worker_slice(&mut a, m, k);
    // The clock is read only for a switch of a thread with a record (r8: 0 until then).
    a.mov_imm(R8, 0);
    thread(&mut a, m, -4, false, "next");
    now(&mut a, "now_prev");
    a.ldx(Size::DW, R1, R7, w(S_INSYS));
    a.jmp_imm(Cond::Eq, R1, 0, "prev_user");
    a.stx(Size::DW, R7, w(S_OFFSTART), R8);
    a.ldx(Size::DW, R1, R7, w(S_KIND));
    a.jmp_imm(Cond::Eq, R1, K_SYNC, "waits");
    a.jmp_imm(Cond::Eq, R1, K_BATCH, "waits");
    a.ja("next");
    // The call's waits by state (preempted, or still runnable: 0; interruptible: 1;
    // uninterruptible: 2), added to its direction when it returns.
    a.label("waits");
    a.mov_imm(R2, 0);
    a.ldx(Size::DW, R1, R6, 0);
    a.jmp_imm(Cond::Ne, R1, 0, "w_idx");
    a.ldx(Size::DW, R1, R6, 24);
    a.jmp_imm(Cond::Eq, R1, 0, "w_idx");
    a.mov_imm(R2, 2);
    a.jmp_imm(Cond::Set, R1, 2, "w_idx");
    a.mov_imm(R2, 1);
    a.label("w_idx");
    a.alu_imm(Alu::Add, R2, S_WAITS as i32);
    a.alu_imm(Alu::Lsh, R2, 3);
    a.mov(R3, R7);
    a.alu_reg(Alu::Add, R3, R2);
    inc(&mut a, R3, 0, R1);
    a.ja("next");
    a.label("prev_user");
    a.stx(Size::DW, R7, w(S_OFFSTART), R8);
    a.ldx(Size::DW, R1, R7, w(S_MARK));
    a.jmp_imm(Cond::Eq, R1, 0, "next");
    outside_open(&mut a, m, R1, R2, "mark_clear");
    before_first_call(&mut a, R2, R3, "mark_clear");
    a.mov(R2, R8);
    a.alu_reg(Alu::Sub, R2, R1);
    add(&mut a, R7, G_USER, R2, R3);
    a.label("mark_clear");
    a.st_imm(Size::DW, R7, w(S_MARK), 0);
    a.label("next");
    a.ldx(Size::DW, R3, R6, 16);
    field(&mut a, Size::W, R1, R3, k.task_pid, "out");
    a.stx(Size::W, FP, -8, R1);
    thread(&mut a, m, -8, false, "out");
    now(&mut a, "now_next");
    a.ldx(Size::DW, R1, R7, w(S_INSYS));
    a.jmp_imm(Cond::Eq, R1, 0, "next_user");
    a.ldx(Size::DW, R1, R7, w(S_OFFSTART));
    a.jmp_imm(Cond::Eq, R1, 0, "out");
    stale(&mut a, m, R1, R2, "off_clear");
    a.mov(R2, R8);
    a.alu_reg(Alu::Sub, R2, R1);
    add(&mut a, R7, S_OFF, R2, R3);
    a.label("off_clear");
    a.st_imm(Size::DW, R7, w(S_OFFSTART), 0);
    a.ja("out");
    a.label("next_user");
    a.stx(Size::DW, R7, w(S_MARK), R8);
    a.ldx(Size::DW, R1, R7, w(S_OFFSTART));
    a.jmp_imm(Cond::Eq, R1, 0, "out");
    outside_open(&mut a, m, R1, R2, "uoff_clear");
    before_first_call(&mut a, R2, R3, "uoff_clear");
    a.mov(R2, R8);
    a.alu_reg(Alu::Sub, R2, R1);
    add(&mut a, R7, G_USER_OFF, R2, R3);
    a.label("uoff_clear");
    a.st_imm(Size::DW, R7, w(S_OFFSTART), 0);
    ret0(&mut a);
    done(a)
}
