//! Completion: reaping events (`iodepth_batch_complete_min/max`), re-issuing short I/Os, error
//! policy (`continue_on_error`, `ignore_error`), accounting slat/clat/lat per direction and priority,
//! the per-I/O hooks (logs, `max_latency`, `latency_target`, act) and the final drain.

use super::*;
use fiox_job::Ddir;
use fiox_stats::IoSample;
use std::sync::atomic::Ordering;

impl<'a> IoLoop<'a> {
    /// Reap completions: wait for at least `min` (0 = poll).
    pub(super) fn reap(&mut self, min: usize) {
        let (min, max) = self.reap_bounds(min);
        self.q.events.clear();
        let mut events = std::mem::take(&mut self.q.events);
        let r = marks::marked(
            self.plan.mark_aio,
            || Some(marks::Call::Reap(self.q.inflight as u64)),
            || self.engine.getevents(min, max, &mut events),
            super::submit::count_of,
        );
        match r {
            Ok(_) => {
                let now = self.reaped(events.len());
                for c in &events {
                    self.complete_unit(c.unit, c.result, now);
                }
            }
            Err(e) => self.end = Some(EndReason::engine(&e)),
        }
        self.q.events = events;
    }

    /// What a reap asked to wait for at least `min` waits for and takes at most: within what
    /// is in flight, up to `iodepth_batch_complete_max`.
    pub(super) fn reap_bounds(&self, min: usize) -> (usize, usize) {
        let min = min.min(self.q.inflight as usize);
        let max = (self.job.iodepth_batch_complete_max as usize)
            .max(min)
            .max(1)
            .min(self.q.inflight as usize);
        (min, max)
    }

    /// A reap took `n` completions: mark the complete distribution and read the clock their
    /// latencies end at (not for an empty poll without per-I/O clocks).
    #[inline(always)]
    pub(super) fn reaped(&mut self, n: usize) -> u64 {
        self.acct.complete.mark_count(n as u64);
        if self.time.timed || n > 0 {
            self.now_ns()
        } else {
            0
        }
    }

    /// One completion: checked to be a unit in flight, then finished.
    #[inline(always)]
    pub(super) fn complete_unit(&mut self, id: u32, res: i64, now: u64) {
        if !self.q.in_flight.get(id as usize).copied().unwrap_or(false) {
            // An engine bug: a completion for a unit that is not in flight. Using it would
            // corrupt another I/O's slot; count it and drop it.
            self.acct.bogus_completions += 1;
            return;
        }
        self.q.inflight = self.q.inflight.saturating_sub(1);
        if self.plan.batch_rw {
            self.finish_batch(id, res, now);
        } else {
            self.finish(id, res, now, false);
        }
    }

    /// Submit what is queued and wait until nothing is in flight.
    pub(super) fn quiesce(&mut self) {
        self.commit();
        while self.q.inflight > 0 && self.end.is_none() {
            self.reap(1);
        }
    }

    /// Wait for everything in flight (also after errors: buffers must outlive the I/O).
    pub(super) fn drain(&mut self) {
        self.commit();
        let mut idle = 0;
        while self.q.inflight > 0 && idle < 1000 {
            let before = self.q.inflight;
            self.reap(1);
            idle = if self.q.inflight == before {
                idle + 1
            } else {
                0
            };
        }
    }

    /// Account a completed unit (or re-issue its short remainder).
    #[inline(always)]
    pub(super) fn finish(&mut self, id: u32, res: i64, now: u64, sync_done: bool) {
        let s = self.q.slots[id as usize];
        self.q.in_flight[id as usize] = false;
        if s.ddir == SYNC {
            self.q.free.push(id);
            // Any sync starts the file's written range afresh (fio's first/last_write).
            if let Some(r) = self.files.sfr_ranges.get_mut(s.file as usize) {
                *r = (u64::MAX, 0);
            }
            if res < 0 {
                self.fail(&s, (-res) as i32);
            } else if self.time.measure.clat {
                self.acct.sync_lat.add(now.saturating_sub(s.start_ns));
            }
            return;
        }
        let want = (s.len - s.done) as i64;
        if res == 0 && want > 0 && self.eng.eof_ends {
            // The peer finished (net): no more I/O, and this unit moved nothing.
            self.q.free.push(id);
            self.exhausted = true;
            self.end.get_or_insert(EndReason::Done);
            return;
        }
        if res == 0 && want > 0 && !sync_done && s.ddir == 0 && !s.check {
            // A reaped read that moved nothing (past the end of a file created on open): fio's
            // io_completed counts it as an I/O of no more bytes and no error; only a
            // synchronous engine's is fio's "full resid" EIO. A verify read still fails.
            self.q.free.push(id);
            let mut moved = s;
            moved.len = s.done;
            self.account(&moved, now, sync_done);
            return;
        }
        if res < 0 || (res == 0 && want > 0) {
            self.q.free.push(id);
            let errno = if res < 0 { (-res) as i32 } else { libc::EIO };
            self.fail(&s, errno);
            return;
        }
        if res < want {
            let d = &mut self.acct.dirs[s.ddir as usize];
            d.short_ios += 1;
            self.q.slots[id as usize].done += res as u32;
            self.q.requeue.push(id);
            return;
        }
        self.q.free.push(id);
        if s.ddir == 1 && !self.files.sfr_ranges.is_empty() {
            // sync_file_range: the file's written range grows (fio's file_log_write_comp).
            if let Some(r) = self.files.sfr_ranges.get_mut(s.file as usize) {
                let end = s.offset + u64::from(s.len);
                *r = (r.0.min(s.offset), r.1.max(end));
            }
        }
        if self.check.verify.is_some() {
            self.verify_io(id, &s);
        }
        if let Some(b) = self.per_io.blocks.as_mut().filter(|_| s.ddir == 2) {
            b.trimmed(s.offset);
        }
        if self.obs.dbg_io {
            self.debug_io("complete", id, &s);
        }
        self.account(&s, now, sync_done);
    }

    #[inline(always)]
    pub(super) fn account(&mut self, s: &Slot, now: u64, sync_done: bool) {
        self.account_done(Done::of(s), now, sync_done, false, || *s);
    }

    /// `account` of a unit given by its [`Done`] part; `slot` builds the whole unit for the
    /// per-I/O hooks, which few jobs use. `lean`: from the lean loop, whose engine completes
    /// in `queue` (`copy_lat`) and which never runs paced (their checks fold away).
    #[inline(always)]
    pub(super) fn account_done(
        &mut self,
        s: Done,
        now: u64,
        sync_done: bool,
        lean: bool,
        slot: impl FnOnce() -> Slot,
    ) {
        if self.plan.acct_plain && !lean && !sync_done {
            return self.account_plain(s, now);
        }
        let di = s.ddir as usize;
        let d = &mut self.acct.dirs[di];
        let bytes = if self.eng.zero_bytes { 0 } else { s.len as u64 };
        d.io_bytes += bytes;
        d.total_ios += 1;
        let m = self.time.measure;
        if self.time.timed {
            let clat = now.saturating_sub(s.issue_ns);
            if m.clat {
                d.clat.add(clat);
                self.acct.lat_buckets.add(clat);
            }
            if !sync_done && m.slat {
                let slat = s.issue_ns.saturating_sub(s.start_ns);
                if m.slat_hist {
                    d.slat.add(slat);
                } else {
                    d.slat.add_summary(slat);
                }
            }
            if m.lat && !lean && !self.eng.copy_lat {
                let lat = now.saturating_sub(s.start_ns);
                if m.lat_hist {
                    d.lat.add(lat);
                } else {
                    d.lat.add_summary(lat);
                }
            }
            // Jobs without cmdprio have no per-priority statistics: one length check.
            if let Some(p) = d.prios.get_mut(s.prio as usize) {
                if self.per_io.prio_on_lat {
                    if m.lat {
                        p.stat.add(now.saturating_sub(s.start_ns));
                    }
                } else if m.clat {
                    p.stat.add(clat);
                }
            }
        } else {
            // With per-I/O clocks the live counters are published at each poll of after_io.
            self.ctl.progress.bytes[di].store(d.io_bytes, Ordering::Relaxed);
            self.ctl.progress.ios[di].store(d.total_ios, Ordering::Relaxed);
        }
        // One branch for the per-I/O hooks most jobs do not use.
        if self.plan.hooks {
            self.account_hooks(&slot(), now, sync_done);
        }
        self.after_io(di, bytes, now, lean);
    }

    /// `account_done` of a queued unit under [`FastPath::PlainAccounting`]: the same counts and
    /// statistics with every feature test of the general version known false once per run
    /// (about 27 instructions per I/O, bench/ipio.sh), then `after_io`'s one comparison.
    #[inline(always)]
    pub(super) fn account_plain(&mut self, s: Done, now: u64) {
        add_plain(&mut self.acct, s, now, true);
        if now >= self.time.next_event_ns {
            self.timed_checks(now);
        }
    }

    /// The per-I/O hooks of `account`: latency_target's judgement, the per-I/O log lines and
    /// --explain's latency of the I/Os inside its windows.
    #[inline(never)]
    pub(super) fn account_hooks(&mut self, s: &Slot, now: u64, sync_done: bool) {
        if let Some(w) = self.per_io.win_lat.as_mut().filter(|_| self.time.timed) {
            w.add(s.ddir as usize, s.start_ns, now);
        }
        // act counts what fio's lat statistic measures (nothing with disable_lat).
        if let Some(a) = self
            .acct
            .act
            .as_mut()
            .filter(|_| self.time.measure.lat && s.ddir < 3)
        {
            if let Err(msg) = a.add(s.start_ns, now) {
                self.end.get_or_insert(EndReason::Error(libc::EPERM, msg));
            }
        }
        if s.ddir < 2 && self.time.timed {
            self.lat_target_io(s, now);
            let di = s.ddir as usize;
            if self.time.measure.lat && self.per_io.max_lat_ns[di] != 0 {
                self.max_latency_io(s, di, now);
            }
        }
        if self.obs.log_io && self.time.ramp_done {
            self.log_io_sample(s, now, sync_done);
        }
    }

    /// Per-I/O lines of the latency (and unaveraged bw/iops) logs; nothing during ramp.
    pub(super) fn log_io_sample(&mut self, s: &Slot, now: u64, sync_done: bool) {
        let ddir = Ddir::ALL[s.ddir as usize];
        let io = IoSample {
            t_ms: now.saturating_sub(self.time.measured_start_ns) / 1_000_000,
            ddir,
            bytes: s.len as u64,
            offset: s.offset,
            ioprio: u32::from(s.ioprio),
            issue_ns: s.issue_ns.saturating_sub(self.time.measured_start_ns),
        };
        let m = self.time.measure;
        let clat = now.saturating_sub(s.issue_ns);
        let lat = if self.eng.copy_lat || sync_done {
            clat
        } else {
            now.saturating_sub(s.start_ns)
        };
        if m.slat && !sync_done {
            self.obs
                .logs
                .slat(&io, s.issue_ns.saturating_sub(s.start_ns));
        }
        self.obs
            .logs
            .completion(&io, m.clat.then_some(clat), m.lat.then_some(lat));
        self.obs
            .logs
            .clat_hist(&io, &self.acct.dirs[s.ddir as usize].clat.hist);
    }

    /// max_latency: an I/O slower than its direction's limit ends the job (fio's lat_fatal).
    pub(super) fn max_latency_io(&mut self, s: &Slot, di: usize, now: u64) {
        let lat = now.saturating_sub(s.start_ns);
        let max = self.per_io.max_lat_ns[di];
        if lat > max {
            let msg = self.lat_fatal_msg(s, lat, max);
            self.end
                .get_or_insert(EndReason::Error(libc::ETIMEDOUT, msg));
        }
    }

    /// fio's message for an I/O over a latency limit.
    pub(super) fn lat_fatal_msg(&self, s: &Slot, lat: u64, max: u64) -> String {
        let path = self
            .files
            .paths
            .get(s.file as usize)
            .map_or("", String::as_str);
        format!(
            "latency of {lat} nsec exceeds specified max ({max} nsec): {path} {} {} {}",
            ["read", "write"][(s.ddir as usize).min(1)],
            s.offset,
            s.len
        )
    }

    /// latency_target: an I/O over the target is a miss (at depth 1 with 100%, the error).
    pub(super) fn lat_target_io(&mut self, s: &Slot, now: u64) {
        let Some(t) = self.per_io.lat_target.as_mut() else {
            return;
        };
        let lat = now.saturating_sub(s.start_ns);
        let ios = self.acct.dirs[0].total_ios + self.acct.dirs[1].total_ios;
        match t.completed(lat, now, ios) {
            crate::control::latarget::Step::Fatal => {
                let target = t.target_ns();
                let msg = self.lat_fatal_msg(s, lat, target);
                self.end
                    .get_or_insert(EndReason::Error(libc::ETIMEDOUT, msg));
            }
            crate::control::latarget::Step::Nothing => {}
            step => self.per_io.lat_step = step,
        }
    }

    /// Per-completion checks: stop flag, time limits, ramp end, samples, rate_min. Inline in
    /// the per-I/O path: as a call its frame cost as much as the checks. With per-I/O clocks
    /// everything but rate_min is due at one time, `next_event_ns` (one comparison per I/O).
    #[inline(always)]
    pub(super) fn after_io(&mut self, di: usize, bytes: u64, now: u64, lean: bool) {
        if self.time.timed {
            if now >= self.time.next_event_ns && !self.timed_checks(now) {
                return;
            }
        } else if !self.untimed_checks() {
            return;
        }
        if !lean && self.time.paced && self.time.ramp_done && !self.check.verify_phase {
            if let Some(msg) = self.time.pacer.check_min(di, bytes, now) {
                self.end = Some(EndReason::Error(libc::EIO, msg));
            }
        }
    }

    /// Apply continue_on_error / ignore_error to a failed unit.
    pub(super) fn fail(&mut self, s: &Slot, errno: i32) {
        let ddir = Ddir::ALL.get(s.ddir as usize).copied();
        if let Some(b) = self
            .per_io
            .blocks
            .as_mut()
            .filter(|_| s.ddir == 1 || s.ddir == 2)
        {
            b.failed(s.offset, s.ddir == 2);
        }
        let op = crate::io::ioerr::op_name(s.ddir, s.op_data_only);
        let path = self.files.paths.get(s.file as usize).map(String::as_str);
        let what =
            crate::io::ioerr::describe(op, errno, path, s.offset + s.done as u64, s.len - s.done);
        // fio counts every queued I/O as issued, failed ones included.
        if let Some(d) = ddir {
            let n = &mut self.acct.dirs[d.index()].total_ios;
            *n += 1;
            if *n == 1 && errno == libc::EINVAL && self.job.direct {
                self.acct.first_direct_einval = true;
            }
        }
        if self.job.files.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT) {
            // fill_device: the device or file system is full, which is the job's goal; it
            // ends without error (fio clears the error and terminates the job).
            self.filled = true;
            self.end.get_or_insert(EndReason::Done);
            return;
        }
        if crate::io::ioerr::tolerated(&self.job.errors, ddir, errno) {
            // fio's error_dump: a survived error is printed as it happens (a fatal one is
            // printed by the caller of the run, once).
            if self.job.errors.error_dump {
                fiox_guard::eprintln!("fiox: {}: {what}", self.job.name);
            }
            self.acct.tolerate(errno, what);
        } else {
            self.acct.count_fatal(errno);
            self.end = Some(EndReason::Error(errno, what));
        }
    }
}

/// What plain accounting adds for a unit done in full at `now`: its bytes and I/O, and with
/// per-I/O clocks (`timed`) fio's default statistics (clat with its histogram and latency
/// table, slat and lat summaries). Parts only, so the ring loop can call it while the engine
/// hands it completions.
#[inline(always)]
pub(super) fn add_plain(acct: &mut Acct, s: Done, now: u64, timed: bool) {
    let d = &mut acct.dirs[s.ddir as usize];
    d.io_bytes += s.len as u64;
    d.total_ios += 1;
    if timed {
        let clat = now.saturating_sub(s.issue_ns);
        d.clat.add(clat);
        acct.lat_buckets.add(clat);
        d.slat.add_summary(s.issue_ns.saturating_sub(s.start_ns));
        d.lat.add_summary(now.saturating_sub(s.start_ns));
    }
}
