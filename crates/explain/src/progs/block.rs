//! The block layer's programs: a request's record from block_io_start (the submitter's
//! context) through dispatch to completion, in slots picked by a hash of its address, queued
//! from that moment (btt's G: block_getrq fires just before, in the same function; no
//! program on block_bio_queue, one run per I/O less); merges and splits counted.

use super::{
    current, dir_ptr, done, field, hist, if_closed, inc, ret0, ring_slot, stale, thread, win_gen,
    Kernel, Maps,
};
use crate::asm::{Alu, Asm, Cond, Helper, Insn, Size, FP, R0, R1, R2, R3, R4, R5, R6, R7, R8, R9};
use crate::layout::*;
use crate::tracefs::Event;
use crate::ExplainError;

/// r9 = the direction in the event's rwbs at `off` (0 read, 1 write; a leading F, a flush,
/// is skipped); to "out" for anything else (discards, flushes alone).
fn rwbs_dir(a: &mut Asm, off: i16) {
    a.ldx(Size::B, R1, R6, off);
    a.jmp_imm(Cond::Ne, R1, b'F' as i32, "rwbs_chk");
    a.ldx(Size::B, R1, R6, off + 1);
    a.label("rwbs_chk");
    a.mov_imm(R9, 0);
    a.jmp_imm(Cond::Eq, R1, b'R' as i32, "rwbs_done");
    a.mov_imm(R9, 1);
    a.jmp_imm(Cond::Eq, R1, b'W' as i32, "rwbs_done");
    a.ja("out");
    a.label("rwbs_done");
}

/// r0 = the slot of the request whose address is at fp-16 (the slot index at fp-28); to
/// "out" if none. Array slots: the lookup is inlined, no hashing helper, no locks, nothing
/// to allocate or free. Requests are a few hundred bytes apart: the hash drops the low bits.
fn req_slot(a: &mut Asm, m: &Maps) {
    a.ldx(Size::DW, R3, FP, -16);
    a.mov(R2, R3);
    a.alu_imm(Alu::Rsh, R3, 6);
    a.alu_imm(Alu::Rsh, R2, 22);
    a.alu_reg(Alu::Xor, R3, R2);
    a.alu_imm(Alu::And, R3, (R_SLOTS - 1) as i32);
    a.stx(Size::W, FP, -28, R3);
    a.ld_map(R1, m.reqs);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, -28);
    a.call(Helper::MapLookup);
    a.jmp_imm(Cond::Eq, R0, 0, "out");
}

/// To "out" unless slot r0 holds the request at fp-16.
fn req_is_this(a: &mut Asm) {
    a.ldx(Size::DW, R1, R0, w(R_TQ));
    a.jmp_imm(Cond::Eq, R1, 0, "out");
    a.ldx(Size::DW, R1, R0, w(R_PTR));
    a.ldx(Size::DW, R2, FP, -16);
    a.jmp_reg(Cond::Ne, R1, R2, "out");
}

/// block_io_start (BTF-typed raw tracepoint: (rq), its flags loaded directly): a request of this process's thread, inside a submitting
/// syscall, starts a record: its direction and readahead flag from its cmd_flags, queued now
/// (the request's `start_time_ns` is not set yet here: the kernel sets it after this
/// tracepoint, and until then it holds the request's previous use). An io_submit's
/// direction is its first request's.
pub fn io_start(m: &Maps, k: &Kernel, tgid: u32) -> Result<Vec<Insn>, ExplainError> {
    let mut a = Asm::new();
    a.mov(R6, R1);
    a.call(Helper::GetCurrentPidTgid);
    a.stx(Size::W, FP, -4, R0);
    a.alu_imm(Alu::Rsh, R0, 32);
    a.jmp_imm(Cond::Ne, R0, tgid as i32, "lower");
    thread(&mut a, m, -4, false, "out");
    a.ldx(Size::DW, R1, R7, w(S_INSYS));
    a.jmp_imm(Cond::Eq, R1, 0, "out");
    a.ldx(Size::DW, R1, R7, w(S_KIND));
    a.jmp_imm(Cond::Eq, R1, K_SYNC, "ours");
    a.jmp_imm(Cond::Eq, R1, K_BATCH, "ours");
    a.ja("out");
    a.label("ours");
    a.ldx(Size::DW, R3, R6, 0);
    a.stx(Size::DW, R7, w(S_RQ), R3);
    a.ldx(Size::DW, R1, R7, w(S_RQ));
    a.stx(Size::DW, FP, -16, R1);
    field(&mut a, Size::W, R1, R3, k.rq_cmd_flags, "out");
    a.mov(R9, R1);
    a.alu_imm(Alu::And, R9, k.op_mask);
    a.jmp_imm(Cond::Gt, R9, 1, "out");
    // Readahead is not counted as an I/O's own request.
    a.st_imm(Size::DW, FP, -40, 1);
    a.jmp_imm(Cond::Set, R1, 1 << k.rahead, "ra");
    a.st_imm(Size::DW, FP, -40, 0);
    inc(&mut a, R7, S_QN, R1);
    a.ldx(Size::DW, R1, R7, w(S_AIO));
    a.jmp_imm(Cond::Eq, R1, 0, "ra");
    a.ldx(Size::DW, R1, R7, w(S_DIR));
    a.jmp_imm(Cond::Ne, R1, 2, "ra");
    a.stx(Size::DW, R7, w(S_DIR), R9);
    a.label("ra");
    a.call(Helper::KtimeGetNs);
    a.stx(Size::DW, FP, -48, R0);
    req_slot(&mut a, m);
    a.ldx(Size::W, R1, FP, -4);
    a.stx(Size::DW, R0, w(R_TID), R1);
    a.stx(Size::DW, R0, w(R_DIR), R9);
    a.ldx(Size::DW, R1, FP, -48);
    a.stx(Size::DW, R0, w(R_TQ), R1);
    a.st_imm(Size::DW, R0, w(R_TD), 0);
    a.ldx(Size::DW, R1, R7, w(S_SEQ));
    a.stx(Size::DW, R0, w(R_SEQ), R1);
    a.st_imm(Size::DW, R0, w(R_FLAG), 0);
    a.ldx(Size::DW, R1, FP, -40);
    a.stx(Size::DW, R0, w(R_RA), R1);
    a.ldx(Size::DW, R1, FP, -16);
    a.stx(Size::DW, R0, w(R_PTR), R1);
    a.st_imm(Size::DW, R0, w(R_LOWER), 0);
    a.ja("out");
    lower_start(&mut a, m, k);
    ret0(&mut a);
    done(a)
}

/// In io_start, for a task of another process: if it is a worker running for a job thread
/// (a loop device's kworker woken by the job's submission, reading the backing file), its
/// request is the job's on the lower device: recorded for that thread with R_LOWER set.
fn lower_start(a: &mut Asm, m: &Maps, k: &Kernel) {
    a.label("lower");
    a.ldx(Size::W, R1, FP, -4);
    a.alu_imm(Alu::And, R1, (K_SLOTS - 1) as i32);
    a.stx(Size::W, FP, -36, R1);
    a.ld_map(R1, m.workers);
    a.mov(R2, FP);
    a.alu_imm(Alu::Add, R2, -36);
    a.call(Helper::MapLookup);
    a.jmp_imm(Cond::Eq, R0, 0, "out");
    // Pending for this window's wakeup (K_PENDING holds the window's number).
    a.ldx(Size::DW, R1, R0, w(K_PENDING));
    win_gen(a, m, R2);
    a.jmp_reg(Cond::Ne, R1, R2, "out");
    a.ldx(Size::DW, R1, R0, w(K_PID));
    a.ldx(Size::W, R2, FP, -4);
    a.jmp_reg(Cond::Ne, R1, R2, "out");
    a.ldx(Size::DW, R1, R0, w(K_WAKER));
    a.stx(Size::DW, FP, -56, R1);
    a.ldx(Size::DW, R3, R6, 0);
    a.stx(Size::DW, R0, w(K_RQ), R3);
    a.ldx(Size::DW, R1, R0, w(K_RQ));
    a.stx(Size::DW, FP, -16, R1);
    field(a, Size::W, R9, R3, k.rq_cmd_flags, "out");
    a.alu_imm(Alu::And, R9, k.op_mask);
    a.jmp_imm(Cond::Gt, R9, 1, "out");
    a.call(Helper::KtimeGetNs);
    a.mov(R8, R0);
    req_slot(a, m);
    a.ldx(Size::DW, R1, FP, -56);
    a.stx(Size::DW, R0, w(R_TID), R1);
    a.stx(Size::DW, R0, w(R_DIR), R9);
    a.stx(Size::DW, R0, w(R_TQ), R8);
    a.st_imm(Size::DW, R0, w(R_TD), 0);
    a.st_imm(Size::DW, R0, w(R_SEQ), 0);
    a.st_imm(Size::DW, R0, w(R_FLAG), 0);
    a.st_imm(Size::DW, R0, w(R_RA), 1);
    a.ldx(Size::DW, R1, FP, -16);
    a.stx(Size::DW, R0, w(R_PTR), R1);
    a.st_imm(Size::DW, R0, w(R_LOWER), 1);
    a.ja("out");
}

/// r9 = the record of the request ctx[0] (raw tracepoint), r6 = ctx; to "out" if none.
fn request(a: &mut Asm, m: &Maps) {
    a.mov(R6, R1);
    a.ldx(Size::DW, R1, R6, 0);
    a.stx(Size::DW, FP, -16, R1);
    req_slot(a, m);
    req_is_this(a);
    // Queued in an earlier window: its dispatch or completion there may have been missed.
    a.ldx(Size::DW, R1, R0, w(R_TQ));
    stale(a, m, R1, R2, "out");
    a.mov(R9, R0);
}

/// r7 = the record of the request's thread (key at fp-4); to `none` if none.
fn request_thread(a: &mut Asm, m: &Maps, none: &str) {
    a.ldx(Size::DW, R1, R9, w(R_TID));
    a.stx(Size::W, FP, -4, R1);
    thread(a, m, -4, false, none);
}

/// To `no` unless the request's thread is still in the syscall that queued it.
fn same_syscall(a: &mut Asm, no: &str) {
    a.ldx(Size::DW, R1, R7, w(S_INSYS));
    a.jmp_imm(Cond::Eq, R1, 0, no);
    a.ldx(Size::DW, R1, R7, w(S_SEQ));
    a.ldx(Size::DW, R2, R9, w(R_SEQ));
    a.jmp_reg(Cond::Ne, R1, R2, no);
}

/// block_rq_issue (raw: (rq)): dispatch time; a request dispatched while its submitter is
/// still in the syscall counts as outstanding inside it.
pub fn rq_issue(m: &Maps) -> Result<Vec<Insn>, ExplainError> {
    let mut a = Asm::new();
    request(&mut a, m);
    a.call(Helper::KtimeGetNs);
    a.stx(Size::DW, R9, w(R_TD), R0);
    a.ldx(Size::DW, R1, R9, w(R_FLAG));
    a.jmp_imm(Cond::Ne, R1, 0, "out");
    a.ldx(Size::DW, R1, R9, w(R_LOWER));
    a.jmp_imm(Cond::Ne, R1, 0, "out");
    request_thread(&mut a, m, "out");
    same_syscall(&mut a, "out");
    a.st_imm(Size::DW, R9, w(R_FLAG), 1);
    a.mov_imm(R1, 1);
    a.xadd(R7, w(S_OUTN), R1);
    a.ldx(Size::DW, R1, R9, w(R_TQ));
    a.xadd(R7, w(S_OUTSUMQ), R1);
    ret0(&mut a);
    done(a)
}

/// block_rq_complete (raw: (rq, error, bytes)): the request's queued and device times, into
/// its thread's record.
pub fn rq_complete(m: &Maps) -> Result<Vec<Insn>, ExplainError> {
    let mut a = Asm::new();
    request(&mut a, m);
    a.call(Helper::KtimeGetNs);
    a.mov(R8, R0);
    request_thread(&mut a, m, "del");
    a.ldx(Size::DW, R1, R9, w(R_TQ));
    a.ldx(Size::DW, R2, R9, w(R_TD));
    a.jmp_imm(Cond::Ne, R2, 0, "td_ok");
    a.mov(R2, R1);
    a.label("td_ok");
    a.mov(R3, R2);
    a.alu_reg(Alu::Sub, R3, R1);
    a.stx(Size::DW, FP, -32, R3);
    a.mov(R4, R8);
    a.alu_reg(Alu::Sub, R4, R2);
    a.stx(Size::DW, FP, -40, R4);
    a.ldx(Size::DW, R1, R9, w(R_DIR));
    a.jmp_imm(Cond::Gt, R1, 2, "del");
    a.stx(Size::DW, FP, -48, R1);
    dir_ptr(&mut a, R6, R7, R1, "del");
    // A lower device's request: counted apart (its time is inside the upper one's).
    a.ldx(Size::DW, R1, R9, w(R_LOWER));
    a.jmp_imm(Cond::Eq, R1, 0, "upper");
    for (src, word) in [(0, D_LREQS), (-32, D_LQ2D), (-40, D_LD2C)] {
        if src == 0 {
            a.mov_imm(R1, 1);
        } else {
            a.ldx(Size::DW, R1, FP, src);
        }
        a.xadd(R6, w(word), R1);
    }
    a.ja("del");
    a.label("upper");
    a.mov_imm(R1, 1);
    a.xadd(R6, w(D_REQS), R1);
    a.ldx(Size::DW, R1, FP, -32);
    a.xadd(R6, w(D_Q2D), R1);
    a.ldx(Size::DW, R1, FP, -40);
    a.xadd(R6, w(D_D2C), R1);
    a.ldx(Size::DW, R1, R9, w(R_FLAG));
    a.jmp_imm(Cond::Eq, R1, 0, "later");
    same_syscall(&mut a, "later");
    a.ldx(Size::DW, R1, R9, w(R_RA));
    a.jmp_imm(Cond::Ne, R1, 0, "ra_in");
    a.mov_imm(R1, 1);
    a.xadd(R7, w(S_CIN), R1);
    a.label("ra_in");
    a.ldx(Size::DW, R1, R9, w(R_TQ));
    a.mov(R2, R8);
    a.alu_reg(Alu::Sub, R2, R1);
    a.xadd(R7, w(S_BLKIN), R2);
    a.mov_imm(R2, -1);
    a.xadd(R7, w(S_OUTN), R2);
    a.mov_imm(R2, 0);
    a.alu_reg(Alu::Sub, R2, R1);
    a.xadd(R7, w(S_OUTSUMQ), R2);
    a.ja("hists");
    // Completed after its syscall returned: pending until reaped.
    a.label("later");
    a.ldx(Size::DW, R1, R9, w(R_RA));
    a.jmp_imm(Cond::Ne, R1, 0, "hists");
    a.mov_imm(R1, 1);
    a.fetch_add(R7, w(G_TAIL), R1);
    ring_slot(&mut a);
    a.stx(Size::DW, R5, 0, R8);
    a.label("hists");
    for (src, ph) in [(-32, H_QUEUED), (-40, H_DEVICE)] {
        a.ldx(Size::DW, R1, FP, -48);
        a.ldx(Size::DW, R2, FP, src);
        a.mov_imm(R3, 1);
        hist(&mut a, R7, R1, ph, R2, R3, (R4, R5));
    }
    a.label("del");
    a.st_imm(Size::DW, R9, w(R_TQ), 0);
    ret0(&mut a);
    done(a)
}

/// block:block_bio_backmerge / frontmerge / block_split (rare: classic tracepoints): counted
/// per direction. A merged bio joins a request already keyed by its address.
pub fn merge_or_split(
    e: &Event,
    m: &Maps,
    tgid: u32,
    word: usize,
) -> Result<Vec<Insn>, ExplainError> {
    let mut a = Asm::new();
    current(&mut a, m, tgid, false);
    // Attached all the time (rare): counted inside the windows only, as the I/Os are.
    if_closed(&mut a, m, R1, "out");
    rwbs_dir(&mut a, e.off("rwbs")?);
    dir_ptr(&mut a, R8, R7, R9, "out");
    a.mov_imm(R1, 1);
    a.xadd(R8, w(word), R1);
    ret0(&mut a);
    done(a)
}
