//! Where the next I/O comes from: a free slot, a due fsync/fdatasync/`sync_file_range`, the
//! replayed log (`read_iolog`) or the generator, held back while it overlaps an in-flight write.

use super::*;
use crate::control::pacing::{self};
use crate::gen::IoReq;
use fiox_job::Ddir;

impl<'a> IoLoop<'a> {
    /// Pick the next unit to queue: a re-issue, an fsync that is due, or a new request.
    pub(super) fn next_slot(&mut self) -> Option<u32> {
        if let Some(id) = self.q.requeue.pop() {
            return Some(id);
        }
        if self.plan.plain_next {
            // The general path below with every feature check false ([`FastPath::PlainNext`]).
            if self.exhausted {
                return None;
            }
            let req = self.next_request()?;
            self.files.last_file = req.file;
            let id = self.q.free.pop()?;
            self.prepare(id, req);
            return Some(id);
        }
        if self.check.verify_phase || !self.check.vq.is_empty() {
            return self.next_verify_read();
        }
        if self.exhausted {
            return None;
        }
        if self.ctl.io_jobs_done.as_ref().is_some_and(|done| done()) {
            // cpuio's exit_on_io_done: the job is done, as fio sets td->done.
            self.exhausted = true;
            return None;
        }
        if self.ctl.replay.is_some() {
            return self.next_replayed();
        }
        let sync_every = if self.job.fsync > 0 {
            self.job.fsync
        } else {
            self.job.fdatasync
        };
        if sync_every > 0 && self.files.writes_since_sync >= sync_every {
            if self.files.held.is_none() {
                // As fio: a sync comes before the next I/O, so none follows the job's last
                // write (fio's loop ends first; end_fsync is the option for that one).
                self.files.held = Some(self.next_request()?);
            }
            let id = self.q.free.pop()?;
            self.files.writes_since_sync = 0;
            self.q.slots[id as usize] = Slot {
                ddir: SYNC,
                op_data_only: self.job.fsync == 0,
                file: if self.files.gate.is_some() {
                    self.files.last_file
                } else {
                    0
                },
                ..Default::default()
            };
            self.stamp_start(id);
            return Some(id);
        }
        if let Some(id) = self.sync_range_due(sync_every) {
            return Some(id);
        }
        let req = match self.files.held.take() {
            Some(r) => r,
            None => self.next_request()?,
        };
        // Most jobs keep every file open: skip the gate's bookkeeping call.
        if self.files.gate.is_some() && !self.follow_opens(req.file) {
            return None;
        }
        if self.files.file_ops.is_some() && !self.file_op(req.file) {
            return None;
        }
        self.files.last_file = req.file;
        let id = self.q.free.pop()?;
        self.prepare(id, req);
        Some(id)
    }

    /// fio's `sync_file_range`: every N writes (when no fsync/fdatasync interval is set), a
    /// sync over the range of the current file written since its last sync.
    pub(super) fn sync_range_due(&mut self, sync_every: u64) -> Option<u32> {
        let (flags, every) = self.job.files.sync_file_range?;
        if sync_every > 0 || self.files.writes_since_sync < every {
            return None;
        }
        if self.files.held.is_none() {
            // The last write of the job is not followed by a sync (fio's loop ends first).
            self.files.held = Some(self.next_request()?);
        }
        let id = self.q.free.pop()?;
        self.files.writes_since_sync = 0;
        let file = if self.files.gate.is_some() {
            self.files.last_file
        } else {
            0
        };
        let (first, end) = self
            .files
            .sfr_ranges
            .get(file as usize)
            .copied()
            .unwrap_or((0, 0));
        // Longer than a unit's 32-bit length: u32::MAX, which the engine syncs to the end.
        let (offset, len) = if end > first {
            (first, (end - first).min(u64::from(u32::MAX)) as u32)
        } else {
            (0, 0)
        };
        self.q.slots[id as usize] = Slot {
            ddir: SYNC,
            sfr: flags,
            file,
            offset,
            len,
            ..Default::default()
        };
        self.stamp_start(id);
        Some(id)
    }

    /// The next unit of a `read_iolog` replay, once its time has come.
    pub(super) fn next_replayed(&mut self) -> Option<u32> {
        use crate::replay::Act;
        loop {
            if self.q.free.is_empty() {
                return None;
            }
            let q = self.ctl.replay.as_mut()?;
            let Some(e) = q.pop() else {
                self.exhausted = true;
                return None;
            };
            if let Some(at) = q.due(&e) {
                if !pacing::wait_until(at, self.ctl.stop) {
                    self.exhausted = true;
                    return None;
                }
            }
            let id = match e.act {
                Act::WaitUntilMs(_) => continue,
                Act::Sync | Act::Datasync => {
                    let id = self.q.free.pop()?;
                    self.q.slots[id as usize] = Slot {
                        ddir: SYNC,
                        op_data_only: e.act == Act::Datasync,
                        file: e.file,
                        ..Default::default()
                    };
                    self.stamp_start(id);
                    id
                }
                Act::Io(ddir) => {
                    if !self.follow_opens(e.file) {
                        if let Some(q) = self.ctl.replay.as_mut() {
                            q.push_front(e);
                        }
                        return None;
                    }
                    self.ios_issued += 1;
                    self.files.last_file = e.file;
                    let id = self.q.free.pop()?;
                    let req = IoReq {
                        ddir,
                        file: e.file,
                        offset: e.offset,
                        len: e.len,
                    };
                    self.prepare(id, req);
                    id
                }
            };
            if let Some(q) = self.ctl.replay.as_mut() {
                q.issued();
            }
            return Some(id);
        }
    }

    /// A file the generator wrapped around inside its pass (a time_based job rewinding it):
    /// its page cache goes as fio's loop_cache_invalidate drops it.
    #[inline(always)]
    pub(super) fn drop_wrapped(&mut self) {
        if let Some(file) = self.gen.take_wrapped() {
            if let Some(c) = &self.files.pass_cache {
                c.wrapped(file);
            }
        }
    }

    /// Next request from the generator, starting further passes as fio would (loops,
    /// time_based wrap-around, io_size larger than the files).
    #[inline(always)]
    pub(super) fn next_request(&mut self) -> Option<IoReq> {
        self.next_request_of(false)
    }

    /// `next_request`; `lean`: called from the lean loop, which runs neither paced nor with
    /// `--debug=random` (its checks fold away).
    #[inline(always)]
    pub(super) fn next_request_of(&mut self, lean: bool) -> Option<IoReq> {
        // What the lean loop drew ahead goes first (counted when drawn).
        if let Some(r) = self.q.take_ahead() {
            return Some(r);
        }
        // A pass that yields nothing would make a time_based job spin: stop after one.
        for _ in 0..2 {
            let next = if !lean
                && self.time.paced
                && self.job.rw.mode.has_read()
                && self.job.rw.mode.has_write()
            {
                let now = self.now_ns();
                let pacer = &self.time.pacer;
                self.gen
                    .next_rated(|d| Ddir::ALL[pacer.pick(d.index(), now)])
            } else {
                self.gen.next()
            };
            if let Some(r) = next {
                self.ios_issued += 1;
                if !lean && self.obs.dbg_random {
                    self.debug_random();
                }
                self.drop_wrapped();
                return Some(r);
            }
            if !self.gen.another_pass() {
                break;
            }
            if self.gen.take_new_loop() && crate::files::unlinks_each_loop(self.job) {
                self.files.unlink_due = true;
            }
            self.gen.restart();
            if let Some(c) = &self.files.pass_cache {
                c.new_pass();
            }
        }
        self.exhausted = true;
        None
    }
}
