//! The ring loop (issue 28): a job the batch path takes ([`batch`](super::batch)) on io_uring
//! or libaio, driven through the engine's typed calls ([`fiox_engine::Direct`]'s `submit_rw`
//! and `reap_with`) instead of the dynamic `queue_rw`/`commit`/`getevents` and the lists
//! between them. Each round draws a submit batch from the generator (one unit: its `next`;
//! a fill of several rounds draws them all in one batch, taken round by round in order),
//! prepares the slots as `prepare` does and submits them; each reap accounts the completions
//! as the engine takes them from its ring (plain accounting, with or without clocks), or
//! takes them into the loop's list for `complete_unit`.
//! The marks (submit, complete, depth distributions) and the clock reads are the general
//! loop's, call for call, so the report is the same; what is left out is per-I/O work the
//! general loop spends on being general (a unit list per batch, a completion list per reap, a
//! dynamic call for each). Without per-I/O clocks, the round that fills the queue lets
//! io_uring wait for the reap's completions in its submitting call ([`IoLoop::fill_wait`]:
//! one system call a round instead of two, as t/io_uring does; with clocks the issue time,
//! fio's stamp after the submit, must not take in the wait, and under `--explain` the call
//! would read as a slow submission). Anything else (a unit to re-issue, a short or failed I/O's
//! remainder, an idle engine) returns to the general loop in [`IoLoop::run`], which handles it.

use super::complete::add_plain;
use super::*;
use fiox_engine::{RingCqe, RingIo};

impl<'a> IoLoop<'a> {
    /// Whether this run can take the ring loop: the batch path's job on an engine that can be
    /// driven directly and whose setup needs none of the general calls (`Direct::direct_ok`:
    /// io_uring without SQPOLL, IOPOLL, force_async or iovecs; libaio without vectored
    /// iocbs), without --explain's syscall marks (libaio's io_submit/io_getevents).
    pub(super) fn ring_ok(&mut self) -> bool {
        if !self.plan.batch_rw || !FastPath::Ring.allows(self.plan.features) {
            return false;
        }
        match self.engine.direct().map(|r| r.direct_ok()) {
            Some(Ok(ok)) => ok,
            Some(Err(e)) => {
                self.end = Some(EndReason::engine(&e));
                false
            }
            None => false,
        }
    }

    /// The ring loop: fill to `depth`, reap as the general loop does (at least
    /// `iodepth_batch_complete_min` when full, down to `low`), until the job ends or something
    /// needs the general loop (module note).
    pub(super) fn run_ring(&mut self, depth: u32, low: u32) {
        let depth_units = self.q.slots.len();
        let unused = RingIo {
            id: 0,
            file: 0,
            offset: 0,
            buf: BufSpan::empty(),
            write: false,
            ioprio: 0,
        };
        self.q.ring_ios.resize(depth_units, unused);
        self.q.ring_cqes.resize(depth_units, RingCqe::default());
        while self.end.is_none() && self.q.requeue.is_empty() && self.q.pending.is_empty() {
            self.ring_fill(depth);
            if self.q.inflight == 0 {
                if self.exhausted && self.q.requeue.is_empty() {
                    self.end.get_or_insert(EndReason::Done);
                }
                // Nothing went out: the general loop tells an idle engine from the end.
                return;
            }
            self.reap_round(depth, low, Self::ring_reap);
        }
    }

    /// `fill_batch` on the ring: rounds of up to `iodepth_batch_submit` new units, each
    /// submitted as it is queued (the general path commits at the batch size or when the queue
    /// is full, which is the same place for units that are all new). A fill of several rounds
    /// draws its requests first in one batch of the generator ([`IoLoop::ring_fill_ahead`]).
    fn ring_fill(&mut self, depth: u32) {
        let batch = self.job.iodepth_batch_submit.max(1) as usize;
        if batch > 1 && self.q.inflight < depth && self.end.is_none() && !self.exhausted {
            let total = ((depth - self.q.inflight) as usize).min(self.q.free.len());
            if total > batch && !self.ring_fill_ahead(total, batch) {
                return;
            }
        }
        while self.q.inflight < depth && self.end.is_none() && !self.exhausted {
            let want = ((depth - self.q.inflight) as usize).min(batch);
            if !self.ring_queue(want) {
                return;
            }
        }
    }

    /// The rounds of a fill of `total` units (more than one round of `batch`) from one batch
    /// of the generator: each round's `draw` takes the next requests of that batch, in
    /// order, so the rounds, their requests and their clock reads are `ring_queue`'s one by
    /// one, less the generator's per-batch checks (about 200 instructions a call, 25 per I/O
    /// at batches of 8). The generator's batch yields each request its `next` would and stops
    /// early where `draw` would (a wrap-around, a limit, anything but its plain random path);
    /// the round holding its last request tops up as `draw` does (`next_request` after
    /// `drop_wrapped`), and the rounds after it are `ring_fill`'s own. False: a round stopped
    /// the fill; requests drawn for later rounds are then prepared and wait in `requeue`
    /// behind that round's rest when the ring was full, as the general loop would have drawn
    /// them next (dropped when the job ended: an engine or buffer error).
    fn ring_fill_ahead(&mut self, total: usize, batch: usize) -> bool {
        self.q.batch_reqs.clear();
        let got = self.gen.next_batch(&mut self.q.batch_reqs, total);
        self.ios_issued += got as u64;
        let mut pos = 0;
        while pos < got {
            let want = batch.min(total - pos);
            let start = pos;
            pos += want.min(got - pos);
            if pos == got {
                // `draw`'s steps after the generator's batch, in the round that ends it.
                self.drop_wrapped();
                while self.q.batch_reqs.len() - start < want {
                    match self.next_request() {
                        Some(r) => self.q.batch_reqs.push(r),
                        None => break,
                    }
                }
                return self.ring_send(start, self.q.batch_reqs.len());
            }
            if !self.ring_send(start, pos) {
                if self.end.is_none() {
                    let rest = self.q.batch_reqs.split_off(pos);
                    self.ring_requeue_ahead(&rest[..got - pos]);
                }
                return false;
            }
        }
        true
    }

    /// Requests drawn ahead for rounds that did not go (the ring full): prepared, in order,
    /// behind the units already waiting in `requeue` (popped from its end).
    #[cold]
    fn ring_requeue_ahead(&mut self, reqs: &[IoReq]) {
        let mut ids = Vec::with_capacity(reqs.len());
        for &req in reqs {
            let Some(id) = self.q.free.pop() else {
                break;
            };
            if self.span_of(id, 0, req.len).is_none() {
                self.q.free.push(id);
                break;
            }
            self.prepare_plain(id, req);
            ids.push(id);
        }
        self.counts.drawn(ids.len() as u64);
        let waiting = std::mem::take(&mut self.q.requeue);
        self.q.requeue.extend(ids.iter().rev());
        self.q.requeue.extend(waiting);
    }

    /// Draw, prepare, queue and submit up to `want` new units. False: the round stopped
    /// (nothing drawn, the ring full, an error). The lists are the loop's own, used in place
    /// (taking them out and back cost 25 instructions a round, per I/O at a batch of one).
    fn ring_queue(&mut self, want: usize) -> bool {
        let want = want.min(self.q.free.len());
        if want == 1 {
            // One unit (the default batch of one, or one slot freed by a reap of one): the
            // generator's `next`, not a batch of one (whose limits checks cost ~40
            // instructions more per I/O, bench/ipio.sh).
            self.q.batch_reqs.clear();
            if !self.exhausted {
                if let Some(r) = self.next_request() {
                    self.q.batch_reqs.push(r);
                }
            }
        } else {
            self.draw(want);
        }
        self.ring_send(0, self.q.batch_reqs.len())
    }

    /// Prepare, queue and submit the units of the requests `batch_reqs[start..end]`
    /// (`ring_queue`'s round once its requests are drawn). False as `ring_queue`.
    fn ring_send(&mut self, start: usize, end: usize) -> bool {
        let n = self.ring_stage(start, end);
        self.counts.drawn(n as u64);
        if n == 0 {
            return false;
        }
        self.counts.batch(true);
        let wait = self.fill_wait(n);
        let ios = &self.q.ring_ios[..n];
        let (k, failed) = match self.engine.direct() {
            Some(ring) => ring.submit_rw(ios, wait),
            None => (0, true),
        };
        self.check.last_ddir = self.q.slots[self.q.ring_ios[n - 1].id as usize].ddir;
        if self.obs.iolog.is_some() {
            // As the batch path: each unit handed to the ring, the one it turned away included.
            self.log_ring((k + 1).min(n));
        }
        self.q.inflight += k as u32;
        if k > 0 {
            self.ring_submitted(k);
        }
        if failed {
            self.q
                .free
                .extend(self.q.ring_ios[k..n].iter().map(|io| io.id));
            self.ring_failed();
            false
        } else if k < n {
            // The ring is full: the rest wait their turn in the general loop, first one first.
            self.q
                .requeue
                .extend(self.q.ring_ios[k..n].iter().rev().map(|io| io.id));
            false
        } else {
            true
        }
    }

    /// The completions the reap after a round of `n` units will wait for, when the engine may
    /// wait for them in the submitting call (0: it may not). Only without per-I/O clocks
    /// (the issue time, slat's end, is fio's stamp after the submit and would take in the
    /// wait) and without `--explain` watching (whose programs would read the wait as
    /// submission time): `Plan::submit_waits`. After a round that leaves the queue short of
    /// its depth the ring loop reaps without waiting; with a full queue `reap_round`'s first
    /// reap waits for `iodepth_batch_complete_min` (at least 1, at most what is in flight)
    /// at once.
    fn fill_wait(&self, n: usize) -> usize {
        let after = self.q.inflight as usize + n;
        if !self.plan.submit_waits || after < self.q.slots.len() || self.end.is_some() {
            return 0;
        }
        (self.job.iodepth_batch_complete_min.max(1) as usize).min(after)
    }

    /// [`IoLoop::prepare_plain`] of a free slot for each request of `batch_reqs[start..end]`
    /// in order, with its SQE's fields in `ring_ios`: how many (`ring_ios[..n]`). Stops at a
    /// request that does not fit its slot (the job ends, see [`IoLoop::span_of`]).
    fn ring_stage(&mut self, start: usize, end: usize) -> usize {
        let fixed = self.per_io.prio.fixed();
        let (timed, clock) = (self.time.timed, self.time.clock);
        let q = &mut self.q;
        let reqs = &q.batch_reqs[start..end];
        let parts = Stage {
            slots: &mut q.slots,
            free: &mut q.free,
            ios: &mut q.ring_ios,
            pool: q.pool,
            prio: &mut self.per_io.prio,
        };
        // One copy of the loop for each clock, so the per-unit code has no clock choice in it.
        let (n, writes, unfit) = match (timed, clock.tsc()) {
            (false, _) => parts.stage(reqs, fixed, || 0),
            (true, Some(tsc)) => parts.stage(reqs, fixed, || tsc.now_ns()),
            (true, None) => parts.stage(reqs, fixed, || clock.now_ns()),
        };
        if let Some((id, len)) = unfit {
            self.overrun(id, 0, len);
        }
        if n > 0 {
            self.files.last_file = self.q.batch_reqs[start + n - 1].file;
            if writes {
                for k in 0..n {
                    let req = self.q.batch_reqs[start + k];
                    if req.ddir == Ddir::Write {
                        self.fill_write(self.q.ring_ios[k].id, &req);
                    }
                }
            }
        }
        n
    }

    /// `write_iolog` lines of the first `n` units handed to the ring.
    #[cold]
    fn log_ring(&mut self, n: usize) {
        if let Some(l) = self.obs.iolog.as_mut() {
            for io in &self.q.ring_ios[..n] {
                let op = if io.write { "write" } else { "read" };
                l.io(io.file, op, io.offset, io.buf.len());
            }
        }
    }

    /// What `commit` does after the kernel took the first `k` units of the round: mark the
    /// submit and depth distributions, stamp the issue time (slat ends here) and mark each
    /// unit in flight (one pass over the units for both).
    fn ring_submitted(&mut self, k: usize) {
        let n = k as u64;
        self.acct.submit.mark_count(n);
        self.acct.depth.mark_depth(self.q.inflight, n);
        let q = &mut self.q;
        let (slots, flags) = (&mut q.slots, &mut q.in_flight);
        if self.time.timed {
            let now = self.time.clock.now_ns();
            for io in &q.ring_ios[..k] {
                slots[io.id as usize].issue_ns = now;
                flags[io.id as usize] = true;
            }
        } else {
            // Untimed: the staged slots' issue times are 0 already.
            for io in &q.ring_ios[..k] {
                flags[io.id as usize] = true;
            }
        }
    }

    /// `reap` on the ring: wait for at least `min` completions (0: poll), take at most
    /// `iodepth_batch_complete_max`, finish each as `reap` does. Under plain accounting
    /// (with or without per-I/O clocks) each completion is accounted as the engine hands it
    /// over, straight from its ring ([`IoLoop::ring_reap_plain`]).
    fn ring_reap(&mut self, min: usize) {
        let (min, max) = self.reap_bounds(min);
        if self.plan.acct_plain {
            return self.ring_reap_plain(min, max, true);
        }
        if self.plan.acct_untimed {
            return self.ring_reap_plain(min, max, false);
        }
        let r = match self.engine.direct() {
            Some(ring) => ring.reap_into(min, &mut self.q.ring_cqes[..max]),
            None => None,
        };
        let Some(n) = r else {
            return self.ring_failed();
        };
        let now = self.reaped(n);
        for i in 0..n {
            let c = self.q.ring_cqes[i];
            self.complete_unit(c.id, c.res, now);
        }
    }

    /// The ring reap under plain accounting: a read or write done in full is freed and
    /// accounted ([`add_plain`](super::complete::add_plain), with fio's default statistics when `timed`) in the engine's
    /// own pass over its completions, at the clock read when the first arrives (after any
    /// wait); anything else (short, failed, not in flight) is set aside and goes through
    /// `complete_unit` after the pass. The time checks follow once per reap (as after the
    /// last of its I/Os, with the same clock).
    #[inline(always)]
    fn ring_reap_plain(&mut self, min: usize, max: usize, timed: bool) {
        let Some(ring) = self.engine.direct() else {
            return self.ring_failed();
        };
        let (q, acct, clock) = (&mut self.q, &mut self.acct, &self.time.clock);
        let (mut now, mut odd) = (None, 0);
        // Inlined into the engine's pass over its ring: a call per completion would cost more
        // than the list it replaces (bench/uring-floor.sh).
        let r = ring.reap_with(
            min,
            max,
            #[inline(always)]
            |id, res| {
                let at = *now.get_or_insert_with(|| clock.now_ns());
                match q.take_done(id, res) {
                    Some(done) => add_plain(acct, done, at, timed),
                    None => {
                        q.ring_cqes[odd] = RingCqe { id, res };
                        odd += 1;
                    }
                }
            },
        );
        let Some(n) = r else {
            return self.ring_failed();
        };
        self.acct.complete.mark_count(n as u64);
        let Some(now) = now else {
            return;
        };
        for i in 0..odd {
            let c = self.q.ring_cqes[i];
            self.complete_unit(c.id, c.res, now);
        }
        if now >= self.time.next_event_ns {
            self.timed_checks(now);
        }
    }

    /// The engine failed a direct call: the job ends with its error.
    #[cold]
    fn ring_failed(&mut self) {
        let e = self.engine.direct().and_then(|r| r.take_error());
        let what = e.map_or_else(
            || format!("{}: the engine failed", self.engine.name()),
            |e| e.to_string(),
        );
        self.end = Some(EndReason::Error(libc::EIO, what));
    }
}

/// The parts of the loop a submit round writes, borrowed apart: as fields of `&mut self` the
/// compiler reloaded the lists, the pool and the clock at every unit, not knowing the slots'
/// stores leave them alone (16 instructions per I/O more, bench/uring-functions.sh).
struct Stage<'s> {
    slots: &'s mut [Slot],
    free: &'s mut Vec<u32>,
    ios: &'s mut [RingIo],
    pool: &'s BufPool,
    prio: &'s mut crate::io::prio::PrioPicker,
}

impl Stage<'_> {
    /// A unit for each of `reqs` in order on the next free slot (taken from the end of
    /// `free`, as `pop` takes them): the slot as [`IoLoop::prepare_plain_with`] leaves it
    /// (the caller fills the writes' data) and its SQE's fields in `ios[k]`. How many, and
    /// the slot and length of a request that does not fit its slot (nothing staged from it
    /// on; the slot stays free); and whether any is a write.
    #[inline(always)]
    fn stage(
        self,
        reqs: &[IoReq],
        fixed: Option<(u8, u16)>,
        now_ns: impl Fn() -> u64,
    ) -> (usize, bool, Option<(u32, u32)>) {
        let avail = self.free.len();
        let want = reqs.len().min(avail).min(self.ios.len());
        let (reqs, ids, ios) = (
            &reqs[..want],
            &self.free[avail - want..],
            &mut self.ios[..want],
        );
        let (mut n, mut writes, mut unfit) = (0, false, None);
        while n < want {
            let (req, id) = (reqs[n], ids[want - 1 - n]);
            let Some(buf) = self.pool.span(id as usize, 0, req.len) else {
                unfit = Some((id, req.len));
                break;
            };
            let d = req.ddir.index() as u8;
            let (prio, ioprio) = match fixed {
                Some(p) => p,
                None => self.prio.pick(d, req.len),
            };
            self.slots[id as usize] = Slot::of_req(&req, now_ns(), (prio, ioprio));
            let write = req.ddir == Ddir::Write;
            writes |= write;
            ios[n] = RingIo {
                id,
                file: req.file,
                offset: req.offset,
                buf,
                write,
                ioprio,
            };
            n += 1;
        }
        self.free.truncate(avail - n);
        (n, writes, unfit)
    }
}
