//! The batch path: a plain job ([`FastPath::Batch`]) on an engine that takes reads and writes in
//! batches (io_uring, libaio: `batches_rw`) draws up to a submit batch of requests, prepares
//! them as the general path does (slot, buffer, start time, priority) and hands them to the
//! engine in one [`IoEngine::queue_rw`](fiox_engine::IoEngine::queue_rw) call: one dynamic
//! call, one room check and one publication of the submission ring per batch instead of per
//! I/O. When only one unit is wanted (the default batch of one, or a slot freed by a reap of
//! one) it goes the general path's way, which costs less than a batch of one. Units the
//! engine turns away wait in `requeue`, in order, and go out one at a time through the
//! general `submit`, as do short I/Os' remainders. A unit that completes in full is accounted
//! without the general `finish`'s checks for features a plain job does not have (syncs,
//! verify, trims, `sync_file_range`, net's end of stream); anything else (short, failed)
//! takes `finish`.

use super::*;
use fiox_engine::IoUnit;

impl<'a> IoLoop<'a> {
    /// `fill_queue` on the batch path: queue until `depth` units are in flight, committing
    /// every `iodepth_batch_submit` units as the general path does.
    pub(super) fn fill_batch(&mut self, depth: u32) {
        let batch = self.job.iodepth_batch_submit.max(1) as usize;
        while self.q.inflight < depth && self.end.is_none() {
            if let Some(id) = self.q.requeue.pop() {
                // Turned away before, or a short I/O's remainder: one at a time.
                if !self.submit(id) {
                    return;
                }
            } else {
                if self.exhausted {
                    return;
                }
                let want = ((depth - self.q.inflight) as usize)
                    .min(batch.saturating_sub(self.q.pending.len()).max(1));
                if want == 1 {
                    // One unit (the default batch of one, or one slot free after a reap of
                    // one): the general path's steps cost less than a batch of one, about
                    // 120 instructions per I/O (bench/ipio.sh, io_uring and libaio on tmpfs).
                    if !self.queue_one() {
                        return;
                    }
                } else if !self.queue_batch(want) {
                    return;
                }
            }
            if self.q.pending.len() >= batch {
                self.commit();
            }
        }
    }

    /// One new unit through the general path's `next_slot` and `submit`. False: the loop
    /// stops filling.
    fn queue_one(&mut self) -> bool {
        let Some(id) = self.next_slot() else {
            return false;
        };
        self.counts.drawn(1);
        self.submit(id)
    }

    /// Up to `n` requests into `batch_reqs` (emptied first): the generator's batch (its
    /// plain random path), then one by one through `next_request` (passes, wrap-arounds,
    /// every other job).
    pub(super) fn draw(&mut self, n: usize) {
        self.q.batch_reqs.clear();
        let got = self.gen.next_batch(&mut self.q.batch_reqs, n);
        if got > 0 {
            self.ios_issued += got as u64;
            // A batch ends at a file's wrap-around: its cache is dropped before the I/O
            // goes, as `next_request` does.
            self.drop_wrapped();
        }
        while self.q.batch_reqs.len() < n {
            match self.next_request() {
                Some(r) => self.q.batch_reqs.push(r),
                None => break,
            }
        }
    }

    /// `write_iolog` lines of units handed to the engine.
    #[cold]
    fn log_batch(&mut self, units: &[IoUnit]) {
        if let Some(l) = self.obs.iolog.as_mut() {
            for u in units {
                l.io(u.file, iolog_name(u.op), u.offset, u.len());
            }
        }
    }

    /// `finish` of a unit on the batch path: a read or write done in full is freed and
    /// accounted here; anything else goes through the general `finish`.
    #[inline(always)]
    pub(super) fn finish_batch(&mut self, id: u32, res: i64, now: u64) {
        let Some(done) = self.done_in_full(id, res) else {
            return self.finish(id, res, now, false);
        };
        // The whole slot only for the per-I/O hooks (logs, max_latency, act), which most
        // jobs do not have: not a 48-byte copy per I/O.
        if self.plan.hooks {
            let s = self.q.slots[id as usize];
            self.account_done(done, now, false, false, || s);
        } else {
            self.account_done(done, now, false, false, Slot::default);
        }
    }

    /// A new write's share of preparing slot `id`: counted toward the next sync and its
    /// buffer filled (the plain paths': no verify header).
    #[inline(always)]
    pub(super) fn fill_write(&mut self, id: u32, req: &IoReq) {
        self.files.writes_since_sync += 1;
        let buf = self.q.pool.slice_mut(id as usize);
        let n = (req.len as usize).min(buf.len());
        self.filler.fill(&mut buf[..n], false);
    }

    /// `prepare` and `submit`'s priority draw for a new read or write of a plain job on slot
    /// `id` (the batch path's and the ring loop's: no verify, pacing or `--debug=io`, which
    /// [`FastPath::Batch`] excludes): the slot as the general path leaves it, its buffer filled for a
    /// write, its start time stamped. Returns the unit's ioprio.
    #[inline(always)]
    pub(super) fn prepare_plain(&mut self, id: u32, req: IoReq) -> u16 {
        let (fixed, timed) = (self.per_io.prio.fixed(), self.time.timed);
        self.prepare_plain_with(id, req, fixed, timed)
    }

    /// `prepare_plain` with what a round of units shares read once: the priority every I/O
    /// gets without a cmdprio plan ([`PrioPicker::fixed`](crate::io::prio::PrioPicker::fixed))
    /// and whether I/Os are timed.
    #[inline(always)]
    pub(super) fn prepare_plain_with(
        &mut self,
        id: u32,
        req: IoReq,
        fixed: Option<(u8, u16)>,
        timed: bool,
    ) -> u16 {
        debug_assert!(self.check.verify.is_none() && !self.time.paced && !self.obs.dbg_io);
        debug_assert_eq!(timed, self.time.timed);
        self.files.last_file = req.file;
        let d = req.ddir.index() as u8;
        if req.ddir == Ddir::Write {
            self.fill_write(id, &req);
        }
        let (prio, ioprio) = match fixed {
            Some(p) => p,
            None => self.per_io.prio.pick(d, req.len),
        };
        let start_ns = if timed { self.now_ns() } else { 0 };
        self.q.slots[id as usize] = Slot::of_req(&req, start_ns, (prio, ioprio));
        ioprio
    }

    /// A read or write in flight on slot `id` that completed with `res`: when that is the
    /// whole unit, the slot is freed and its [`Done`] returned; None (nothing changed) for
    /// anything the general `finish` handles (a short or failed I/O, a remainder).
    #[inline(always)]
    pub(super) fn done_in_full(&mut self, id: u32, res: i64) -> Option<Done> {
        let s = &self.q.slots[id as usize];
        if s.done != 0 || res != i64::from(s.len) || s.len == 0 {
            return None;
        }
        let done = Done::of(s);
        self.q.in_flight[id as usize] = false;
        self.q.free.push(id);
        Some(done)
    }

    /// Draw, prepare and queue up to `want` new units in one engine call. False: the loop
    /// stops filling (nothing drawn, the engine full or failed).
    fn queue_batch(&mut self, want: usize) -> bool {
        self.draw(want.min(self.q.free.len()));
        let mut ids = std::mem::take(&mut self.q.batch_ids);
        let mut units = std::mem::take(&mut self.q.batch_units);
        let reqs = std::mem::take(&mut self.q.batch_reqs);
        ids.clear();
        units.clear();
        for &req in &reqs {
            let Some(id) = self.q.free.pop() else {
                break;
            };
            // `submit`'s unit for a fresh data unit (no remainder, no sync): not shared with
            // it, whose general unit costs ~30 instructions more per I/O here (bench/ipio.sh,
            // libaio).
            let Some(buf) = self.span_of(id, 0, req.len) else {
                self.q.free.push(id);
                break;
            };
            let ioprio = self.prepare_plain(id, req);
            let op = op_of(req.ddir.index() as u8, false);
            units.push(IoUnit::transfer(op, req.file, req.offset, buf).with_ioprio(ioprio));
            ids.push(id);
        }
        self.q.batch_reqs = reqs;
        let n = ids.len();
        self.counts.drawn(n as u64);
        let (k, r) = if n == 0 {
            (0, Ok(()))
        } else {
            self.check.last_ddir = self.q.slots[ids[n - 1] as usize].ddir;
            self.counts.batch(false);
            self.engine.queue_rw(&ids, &units)
        };
        if self.obs.iolog.is_some() {
            // What `submit` logs one by one: each unit handed to the engine, the one it
            // turned away included (logged again when it goes out).
            self.log_batch(&units[..(k + 1).min(n)]);
        }
        for &id in &ids[..k] {
            self.q.inflight += 1;
            self.q.in_flight[id as usize] = true;
            self.q.pending.push(id);
        }
        let go_on = match r {
            Err(e) => {
                self.q.free.extend_from_slice(&ids[k..]);
                self.end = Some(EndReason::engine(&e));
                false
            }
            // The engine is full: the rest wait their turn, the first of them popped first.
            Ok(()) if k < n => {
                self.q.requeue.extend(ids[k..].iter().rev());
                false
            }
            Ok(()) => n > 0,
        };
        self.q.batch_ids = ids;
        self.q.batch_units = units;
        go_on
    }
}
