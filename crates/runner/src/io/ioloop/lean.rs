//! The lean loop: a plain job on a synchronous engine (psync and kin with none of the per-I/O
//! features) runs request, prepare, queue and account inline, with psync's reads and writes
//! issued by the loop itself. Anything out of the ordinary returns to the general loop.

use super::*;
use crate::gen::IoReq;
use fiox_engine::{BufSpan, IoUnit, Queued};
use fiox_job::Ddir;

/// Requests the lean loop draws from the generator at a time: its per-request limit checks
/// and bookkeeping are done once per batch (about 75 instructions per I/O less on the null
/// engine, bench/ipio.sh), and a job that ends mid-batch leaves at most this many drawn and
/// not issued (their offsets taken in the random map of a run that is over).
const LEAN_BATCH: usize = 16;

impl<'a> IoLoop<'a> {
    /// Whether the job can take the lean loop: a synchronous engine (every unit completes in
    /// `queue`) and only the features [`FastPath::Lean`] handles. Decided once per run, so a
    /// plain job pays one branch for all of them instead of one each.
    pub(super) fn plain_sync(&self) -> bool {
        self.eng.copy_lat && FastPath::Lean.allows(self.plan.features)
    }

    /// The loop of a plain job on a synchronous engine ([`IoLoop::plain_sync`]): request,
    /// prepare, queue (which completes and accounts the unit), until the job ends. Anything
    /// out of the ordinary (a short I/O to re-issue, a busy engine, a unit left in flight, an
    /// exhausted pass) returns to the general loop in [`IoLoop::run`], which handles it.
    pub(super) fn run_plain_sync(&mut self) {
        self.plain_loop();
        self.q.direct.clear();
        self.flush_plain();
    }

    pub(super) fn plain_loop(&mut self) {
        if self.q.inflight != 0 || !self.q.requeue.is_empty() {
            return;
        }
        // The unit stays on the free list unless the engine does not complete it in full
        // right away (`plain_io`): a sync engine's unit is free again when queue returns, so
        // the same unit (and buffer) serves every I/O until then.
        let Some(&id) = self.q.free.last() else {
            return;
        };
        // Asked at each entry: the general path may have reopened files since.
        self.q.direct = self.engine.positional_fds().unwrap_or_default();
        if self.q.direct.is_empty() {
            self.plain_ios::<false>(id);
        } else {
            self.plain_ios::<true>(id);
        }
    }

    /// The lean loop's I/Os on unit `id`; `DIRECT`: psync's reads and writes issued here
    /// (`direct`), decided once so that other engines' loops carry no test for it. Requests
    /// come [`LEAN_BATCH`] at a time from the generator's batch (its plain random path, the
    /// requests its `next` would yield, limits checked once per batch), else one by one; a
    /// batch's requests not issued when the unit takes the general path are the general
    /// path's next ones (`Queue::take_ahead`).
    #[inline(always)]
    pub(super) fn plain_ios<const DIRECT: bool>(&mut self, id: u32) {
        let buf = self.q.pool.slot(id as usize);
        while self.end.is_none() {
            let req = match self.q.take_ahead() {
                Some(r) => r,
                None => {
                    if self.draw_ahead() {
                        continue;
                    }
                    let Some(r) = self.next_request_of(true) else {
                        return;
                    };
                    r
                }
            };
            self.files.last_file = req.file;
            if !self.plain_io::<DIRECT>(id, buf, req) {
                // The unit took the general path: so does the rest of the job.
                return;
            }
        }
    }

    /// A batch of the generator drawn ahead into `ahead` (its wrap-around's cache dropped
    /// before its I/O goes, as `draw` does); false when the generator has no batch here.
    fn draw_ahead(&mut self) -> bool {
        let q = &mut self.q;
        q.ahead.clear();
        q.ahead_at = 0;
        let got = self.gen.next_batch(&mut q.ahead, LEAN_BATCH);
        if got == 0 {
            return false;
        }
        self.ios_issued += got as u64;
        self.drop_wrapped();
        true
    }

    /// Add the lean loop's pending submit/complete/depth marks: each of its I/Os was one
    /// submit of 1 and one completion of 1 at depth 1. Called when the lean loop ends and
    /// before a snapshot or the ramp's reset reads or clears those counts.
    pub(super) fn flush_plain(&mut self) {
        let n = std::mem::take(&mut self.plain_unmarked);
        if n > 0 {
            self.acct.submit.mark_counts(1, n);
            self.acct.depth.mark_depth(1, n);
            self.acct.complete.mark_counts(1, n);
        }
    }

    /// `prepare` + `submit` + `finish` of one I/O in the lean loop, without the slot's round
    /// trips through `slots`: the same clock reads, priority draw, buffer fill and accounting.
    /// An I/O the engine does not complete in full in `queue` (short, failed, busy, queued)
    /// takes the general path from its result on, its unit off the free list as there.
    /// True: the unit completed in full and is free again (the lean loop goes on).
    #[inline(always)]
    pub(super) fn plain_io<const DIRECT: bool>(
        &mut self,
        id: u32,
        slot_buf: BufSpan,
        req: IoReq,
    ) -> bool {
        let op = op_of(req.ddir.index() as u8, false);
        let unit = if req.ddir == Ddir::Trim {
            IoUnit::range(op, req.file, req.offset, req.len)
        } else {
            let Some(buf) = slot_buf.prefix(req.len) else {
                // The job ends (EFAULT, named); the unit stays free.
                self.overrun(id, 0, req.len);
                return false;
            };
            IoUnit::transfer(op, req.file, req.offset, buf)
        };
        let d = req.ddir.index() as u8;
        if req.ddir == Ddir::Write {
            self.fill_write(id, &req);
        }
        let start_ns = if self.time.timed { self.now_ns() } else { 0 };
        let (prio, ioprio) = self.per_io.prio.pick(d, req.len);
        self.check.last_ddir = d;
        let unit = unit.with_ioprio(ioprio);
        // Built only where needed (the general path, the per-I/O hooks): not per I/O.
        let slot = || Slot {
            issue_ns: start_ns,
            ..Slot::of_req(&req, start_ns, (prio, ioprio))
        };
        let direct = if DIRECT {
            self.q.direct.get(req.file as usize)
        } else {
            None
        };
        let r = match direct {
            // psync's read or write inline: no dynamic call to return through after the syscall.
            Some(&fd) if d < 2 => {
                let mark = self.plan.mark_sync;
                match self
                    .q
                    .pool
                    .slice_mut(id as usize)
                    .get_mut(..req.len as usize)
                {
                    Some(b) => Ok(Queued::Done(marks::marked(
                        mark,
                        || Some(marks::Call::Sync(d)),
                        || fiox_engine::positional_io(fd, d == 1, b, req.offset),
                        |&res| res,
                    ))),
                    None => {
                        super::submit::queue_marked(self.engine, self.plan.mark_sync, id, &unit)
                    }
                }
            }
            _ => super::submit::queue_marked(self.engine, self.plan.mark_sync, id, &unit),
        };
        match r {
            Ok(Queued::Done(res)) if res == i64::from(req.len) && req.len > 0 => {
                // Read the clock first: the bookkeeping below is not part of the I/O.
                let now = if self.time.timed { self.now_ns() } else { 0 };
                // submit/complete/depth: added in bulk by flush_plain.
                self.plain_unmarked += 1;
                if let Some(b) = self.per_io.blocks.as_mut().filter(|_| d == 2) {
                    b.trimmed(req.offset);
                }
                let done = Done {
                    ddir: d,
                    prio,
                    len: req.len,
                    start_ns,
                    issue_ns: start_ns,
                };
                self.account_done(done, now, true, true, slot);
                true
            }
            r => {
                let s = slot();
                self.q.free.pop();
                self.q.slots[id as usize] = Slot { issue_ns: 0, ..s };
                self.queued(id, &s, r);
                false
            }
        }
    }
}
