//! Submission: filling the queue up to the depth being used, preparing each unit (buffer, offset,
//! verify header, priority, `--debug=io` lines), pacing and thinktime before it goes, queueing it
//! to the engine and committing batches (`iodepth_batch_submit`).

use super::*;
use crate::control::pacing::{self};
use crate::gen::IoReq;
use fiox_engine::{IoOp, IoUnit, Queued};
use fiox_job::Ddir;
use std::sync::atomic::Ordering;

impl<'a> IoLoop<'a> {
    /// Queue units until the queue is full, the workload is exhausted or the engine is busy.
    pub(super) fn fill_queue(&mut self, depth: u32) {
        if self.plan.batch_rw {
            return self.fill_batch(depth);
        }
        while self.q.inflight < depth && self.end.is_none() {
            if !self.plan.plain_next {
                if self.q.requeue.is_empty() && self.ctl.flow.as_mut().is_some_and(|f| f.ahead()) {
                    self.hold_for_flow();
                    return;
                }
                if self.check.verify.as_ref().is_some_and(|v| v.backlog_due()) {
                    self.queue_backlog();
                }
                if self.job.verify.trim_backlog > 0 && !self.check.verify_phase {
                    self.queue_trim();
                }
            }
            let id = match self.next_slot() {
                Some(id) => id,
                None => return,
            };
            if self.end.is_some() {
                // Its turn came after the end (pace): the unit goes back unsent.
                self.q.free.push(id);
                return;
            }
            if self.check.serialize && self.overlaps_in_flight(id) {
                // Wait for the overlapping write: its data must not race this one.
                self.q.requeue.push(id);
                return;
            }
            if !self.submit(id) {
                return;
            }
            if self.q.pending.len() >= self.job.iodepth_batch_submit.max(1) as usize {
                self.commit();
            }
        }
    }

    /// latency_target after completions: judge the window, act on what was asked.
    pub(super) fn lat_target_step(&mut self) {
        use crate::control::latarget::Step;
        let Some(t) = self.per_io.lat_target.as_mut() else {
            return;
        };
        let mut step = std::mem::replace(&mut self.per_io.lat_step, Step::Nothing);
        if step == Step::Nothing && self.time.ramp_done && !self.check.verify_phase {
            let now = self.time.clock.now_ns();
            let ios = self.acct.dirs[0].total_ios + self.acct.dirs[1].total_ios;
            step = t.check(now, ios);
        }
        match step {
            Step::Nothing | Step::Fatal => {}
            Step::Quiesce => self.drain(),
            Step::FinalWindow => {
                // Only the settled depth's results count, as in fio.
                self.drain();
                self.acct.reset();
                let now = self.now_ns();
                self.time.measured_start_ns = now;
                // The final window counts from the reset I/O counts.
                if let Some(t) = self.per_io.lat_target.as_mut() {
                    t.new_cycle(now, 0);
                }
            }
            Step::Done => {
                self.end.get_or_insert(EndReason::Done);
            }
        }
    }

    /// fio's flow hold: with `flow_sleep`, finish the I/O in flight and sleep; then check the
    /// stop flags and the runtime (no completion may come to check them). Without
    /// `flow_sleep` the held job spins straight back to its check, as fio's do_io loop does
    /// (`continue`): yielding here handed the job's CPU time to any other runnable thread, so
    /// under CPU contention a flow ran at a fraction of fio's rate.
    pub(super) fn hold_for_flow(&mut self) {
        self.ctl.flow_held = true;
        let sleep = self.ctl.flow.as_ref().map_or(0, |f| f.sleep_us);
        if sleep > 0 {
            self.drain();
            pacing::wait_until(
                std::time::Instant::now() + std::time::Duration::from_micros(sleep),
                self.ctl.stop,
            );
        } else {
            std::hint::spin_loop();
        }
        let terminated =
            self.ctl.progress.terminate.load(Ordering::Relaxed) && !self.check.verify_phase;
        let late = self
            .time
            .limits
            .deadline_ns
            .is_some_and(|dl| self.now_ns() >= dl);
        if self.ctl.stop.load(Ordering::Relaxed) {
            self.end.get_or_insert(EndReason::Stopped);
        } else if terminated || late {
            self.end.get_or_insert(EndReason::Time);
        }
    }

    /// Whether slot `id` touches a byte range of a write still in flight (or the other way).
    pub(super) fn overlaps_in_flight(&self, id: u32) -> bool {
        let s = &self.q.slots[id as usize];
        if s.ddir == SYNC {
            return false;
        }
        self.q
            .slots
            .iter()
            .enumerate()
            .any(|(j, o)| j != id as usize && self.q.in_flight[j] && conflicts(s, o))
    }

    #[inline]
    pub(super) fn stamp_start(&mut self, id: u32) {
        if self.time.timed {
            self.q.slots[id as usize].start_ns = self.now_ns();
        }
    }

    /// Set up slot `id` for `req`, pace it, and fill its buffer for writes.
    #[inline(always)]
    pub(super) fn prepare(&mut self, id: u32, req: IoReq) {
        self.q.slots[id as usize] = Slot::of_req(&req, 0, (0, 0));
        if self.time.paced {
            // Paced before the buffer is filled (as fio waits in rate_ddir before setting up
            // the unit): a write whose turn comes only after the end is neither filled nor
            // entered in the verify write log, so it goes back unsent like any other.
            self.pace(req.ddir.index(), req.len as u64);
            if self.end.is_some() {
                return;
            }
        }
        if req.ddir == Ddir::Write {
            self.files.writes_since_sync += 1;
            let now = if self.check.verify.is_some() {
                self.now_ns()
            } else {
                0
            };
            let buf = self.q.pool.slice_mut(id as usize);
            let n = (req.len as usize).min(buf.len());
            self.filler.fill(&mut buf[..n], false);
            if let Some(v) = self.check.verify.as_mut() {
                match v.fill(&mut buf[..n], req.offset, now) {
                    Ok(seq) => self.q.slots[id as usize].seq = seq,
                    Err(e) => self.end = Some(EndReason::Error(libc::EINVAL, e)),
                }
                if crate::debug::on(crate::debug::VERIFY) {
                    self.debug_verify_fill(id, n as u64);
                }
            }
        }
        self.stamp_start(id);
        if self.obs.dbg_io {
            let s = self.q.slots[id as usize];
            self.debug_io("fill", id, &s);
            self.debug_io("prep", id, &s);
        }
    }

    /// fio's `--debug=random` lines for the random offset draws of the last request.
    #[cold]
    pub(super) fn debug_random(&mut self) {
        for n in self.gen.take_rand_notes() {
            match n {
                fiox_workload::RandNote::Drawn(r) => {
                    crate::debug::log(crate::debug::RANDOM, format_args!("off rand {r}"));
                }
                fiox_workload::RandNote::Busy(b) => crate::debug::log(
                    crate::debug::RANDOM,
                    format_args!("get_next_rand_offset: offset {b} busy"),
                ),
            }
        }
    }

    /// fio's `--debug=verify` lines for a write's verify contents (fill_verify_pattern, then
    /// populate_hdr per header).
    #[cold]
    pub(super) fn debug_verify_fill(&self, id: u32, len: u64) {
        let vs = &self.job.verify;
        if vs.verify_pattern.is_empty() {
            crate::dprint!(crate::debug::VERIFY, "fill random bytes len={len}");
        } else if vs.verify_pattern_offsets.is_empty() {
            // fio fills the buffers with a fixed pattern once, up front; a pattern with `%o`
            // is pasted per write, without a line.
            crate::dprint!(
                crate::debug::VERIFY,
                "using already filled verify pattern b={} len={len}",
                vs.verify_pattern.len()
            );
        }
        let interval = vs.verify_interval.unwrap_or(len);
        crate::debug::verify_headers(vs.method, true, id, len, interval);
    }

    /// fio's `--debug=io` line for an I/O unit (the slot number stands for fio's pointer).
    #[cold]
    pub(super) fn debug_io(&self, what: &str, id: u32, s: &Slot) {
        let path = self
            .files
            .paths
            .get(s.file as usize)
            .map_or("", String::as_str);
        crate::debug::log(
            crate::debug::IO,
            format_args!(
                "{what}: io_u {:#x}: off={:#x},len={:#x},ddir={},file={path}",
                id, s.offset, s.len, s.ddir
            ),
        );
    }

    pub(super) fn pace(&mut self, d: usize, len: u64) {
        let now = self.now_ns();
        // Never wait past the end of the run.
        let deadline = self.time.limits.deadline_ns.unwrap_or(u64::MAX);
        let due = self.time.pacer.admit(d, len, now);
        let at = due.min(deadline);
        if at > now {
            // As fio: let in-flight I/O complete first, so waiting does not inflate its clat.
            self.quiesce();
            // exitall/exit_what (the job's terminate flag) ends the wait, as a signal does.
            let terminate = (!self.check.verify_phase).then_some(&self.ctl.progress.terminate);
            let until = self.time.clock.instant_at(at);
            if !pacing::wait_until_or(until, self.ctl.stop, terminate) {
                self.poll_stop();
                return;
            }
        }
        if due >= deadline {
            // This I/O's turn comes only as the run time ends: as in fio, the job ends without
            // it, so the queue does not fill with `iodepth` unpaced I/Os at the end (a verify
            // job's unit too: it is paced before its write is logged, see `prepare`).
            self.end.get_or_insert(EndReason::Time);
            return;
        }
        if self.time.engine_think {
            if let Some(t) = self.engine.thinktime() {
                self.time.pacer.engine_think(t);
            }
        }
        let done = self.acct.dirs.iter().map(|d| d.total_ios).sum();
        if let Some((spin, sleep)) = self.time.pacer.think_due(done, now) {
            self.quiesce();
            let t0 = std::time::Instant::now();
            pacing::spin_for(spin, self.ctl.stop);
            if !sleep.is_zero() {
                // Not past the end of the run, and woken by a stop (both within 20 ms).
                let end = self.now_ns().saturating_add(sleep.as_nanos() as u64);
                let end = end.min(self.time.limits.deadline_ns.unwrap_or(u64::MAX));
                pacing::wait_until(self.time.clock.instant_at(end), self.ctl.stop);
            }
            self.time.pacer.thought(d, t0.elapsed());
        }
    }

    /// Hand slot `id` to the engine; returns false when the engine is busy.
    pub(super) fn submit(&mut self, id: u32) -> bool {
        let mut s = self.q.slots[id as usize];
        if s.ddir != SYNC {
            (s.prio, s.ioprio) = self.per_io.prio.pick(s.ddir, s.len);
            // The two fields, not the whole slot back (a per-I/O copy of 48 bytes).
            let slot = &mut self.q.slots[id as usize];
            (slot.prio, slot.ioprio) = (s.prio, s.ioprio);
        }
        self.check.last_ddir = s.ddir;
        let op = if s.sfr != 0 {
            IoOp::SyncRange(s.sfr)
        } else {
            op_of(s.ddir, s.op_data_only)
        };
        // The remainder of a short I/O starts `done` bytes into the slot.
        let (offset, len) = (s.offset + s.done as u64, s.len - s.done);
        let unit = match op {
            IoOp::Read | IoOp::Write => {
                let Some(buf) = self.span_of(id, s.done, len) else {
                    // The job ends (EFAULT, named), as after an engine's error.
                    self.q.free.push(id);
                    return false;
                };
                IoUnit::transfer(op, s.file, offset, buf)
            }
            _ => IoUnit::range(op, s.file, offset, len),
        }
        .with_ioprio(s.ioprio);
        if let Some(l) = self.obs.iolog.as_mut() {
            l.io(unit.file, iolog_name(unit.op), unit.offset, unit.len());
        }
        if self.obs.dbg_io {
            self.debug_io("queue", id, &s);
        }
        let r = match self.ctl.locks.as_ref() {
            // As fio: the file's lock is held while the engine takes the I/O (all of it for
            // a synchronous engine) and released as soon as queue returns.
            Some(l) => {
                let _held = l.lock(unit.file, matches!(unit.op, IoOp::Read));
                queue_marked(self.engine, self.plan.mark_sync, id, &unit)
            }
            None => queue_marked(self.engine, self.plan.mark_sync, id, &unit),
        };
        self.queued(id, &s, r)
    }

    /// What became of the unit `submit` handed to the engine: completed (accounted now),
    /// queued, refused as busy (re-issued later) or failed (the job ends).
    #[inline(always)]
    pub(super) fn queued(
        &mut self,
        id: u32,
        s: &Slot,
        r: Result<Queued, fiox_engine::EngineError>,
    ) -> bool {
        let ok = match r {
            Ok(Queued::Done(res)) => {
                // Read the clock first: the bookkeeping below is not part of the I/O.
                let now = if self.time.timed { self.now_ns() } else { 0 };
                self.acct.submit.mark_count(1);
                self.acct.depth.mark_depth(self.q.inflight + 1, 1);
                self.acct.complete.mark_count(1);
                self.q.slots[id as usize].issue_ns = s.start_ns;
                self.finish(id, res, now, true);
                true
            }
            Ok(Queued::Queued) => {
                self.q.inflight += 1;
                self.q.in_flight[id as usize] = true;
                self.q.pending.push(id);
                true
            }
            Ok(Queued::Busy) => {
                self.q.requeue.push(id);
                false
            }
            Err(e) => {
                self.q.free.push(id);
                self.end = Some(EndReason::engine(&e));
                false
            }
        };
        if ok && s.ddir != SYNC && self.job.pacing.thinkcycles != 0 {
            self.think_cycles();
        }
        ok
    }

    /// thinkcycles: busy-wait that many pause instructions after an I/O (fio's cycles_spin,
    /// whose nop is x86's pause too).
    #[cold]
    pub(super) fn think_cycles(&mut self) {
        for _ in 0..self.job.pacing.thinkcycles {
            std::hint::spin_loop();
        }
        self.counts.spin();
    }

    /// Submit what was queued; stamps issue times (slat ends here).
    pub(super) fn commit(&mut self) {
        if self.q.pending.is_empty() {
            return;
        }
        let n = self.q.pending.len();
        let r = marks::marked(
            self.plan.mark_aio,
            || {
                Some(marks::Call::Batch(
                    self.q.slots[self.q.pending[0] as usize].ddir.min(2),
                ))
            },
            || self.engine.commit(),
            count_of,
        );
        if let Err(e) = r {
            self.end = Some(EndReason::engine(&e));
        }
        self.acct.submit.mark_count(n as u64);
        self.acct.depth.mark_depth(self.q.inflight, n as u64);
        let now = if self.time.timed { self.now_ns() } else { 0 };
        for &id in &self.q.pending {
            self.q.slots[id as usize].issue_ns = now;
        }
        self.q.pending.clear();
    }
}

/// `engine.queue`, marked for `--explain` when it is a synchronous engine's read or write.
#[inline(always)]
pub(super) fn queue_marked(
    engine: &mut dyn fiox_engine::IoEngine,
    mark: Option<marks::Marker>,
    id: u32,
    unit: &IoUnit,
) -> Result<Queued, fiox_engine::EngineError> {
    let call = || match unit.op {
        IoOp::Read => Some(marks::Call::Sync(0)),
        IoOp::Write => Some(marks::Call::Sync(1)),
        _ => None,
    };
    let ret = |r: &Result<Queued, _>| match r {
        Ok(Queued::Done(res)) => *res,
        _ => -1,
    };
    marks::marked(mark, call, || engine.queue(id, unit), ret)
}

/// What a marked submit or reap returned, as its syscall would: how many, or -1.
pub(super) fn count_of(r: &Result<usize, fiox_engine::EngineError>) -> i64 {
    r.as_ref().map_or(-1, |&k| k as i64)
}
