//! Verification inside the loop: queueing verify reads (`verify_backlog` batches, the verify
//! phase, verify-trims), opening files for them and checking each completed read.

use super::*;
use crate::io::acct::JobState;

impl<'a> IoLoop<'a> {
    /// verify_backlog: queue a batch of the writes completed since the last batch; they are
    /// read back next, through the engine like any read (fio's backlog verify).
    pub(super) fn queue_backlog(&mut self) {
        if let Some(v) = self.check.verify.as_mut() {
            self.check.vq.extend(v.take_backlog());
        }
    }

    /// trim_backlog: the next verify-trim of a picked write, when a round is due (fio's
    /// `check_get_trim`, asked before every I/O of the write phase).
    pub(super) fn queue_trim(&mut self) {
        let after_read = self.check.last_ddir == 0;
        if let Some(t) = self
            .check
            .verify
            .as_mut()
            .and_then(|v| v.next_trim(after_read))
        {
            self.check.vq.push_back(t);
        }
    }

    /// The next verify read as slot (None: none left, no free slot, or an open failed).
    pub(super) fn next_verify_read(&mut self) -> Option<u32> {
        loop {
            let Some(r) = self.check.vq.front().copied() else {
                if self.check.verify_phase {
                    if !self.exhausted {
                        crate::dprint!(crate::debug::VERIFY, "get_next_verify: empty");
                    }
                    self.exhausted = true;
                }
                return None;
            };
            // A backlog entry a later write replaced is not read: that write is checked later.
            let current = self
                .check
                .verify
                .as_ref()
                .is_some_and(|v| v.holds(r.file, r.offset, r.len as u64, r.seq));
            // A backlog entry of a file `openfiles` closed since: the verify phase checks it.
            let closed = !self.check.verify_phase
                && self
                    .files
                    .gate
                    .as_ref()
                    .is_some_and(|g| !g.is_open(r.file as usize));
            if !current || closed {
                self.check.vq.pop_front();
                continue;
            }
            if !self.open_for_verify(r.file) {
                return None;
            }
            let id = self.q.free.pop()?;
            self.check.vq.pop_front();
            self.q.slots[id as usize] = Slot {
                ddir: if r.trim { 2 } else { 0 },
                file: r.file,
                offset: r.offset,
                len: r.len,
                seq: r.seq,
                check: true,
                ..Slot::default()
            };
            self.stamp_start(id);
            crate::dprint!(crate::debug::VERIFY, "get_next_verify: ret io_u {id:#x}");
            return Some(id);
        }
    }

    /// `openfiles` in the verify phase: the files are read back one at a time, so before the
    /// first read of `file` the previous file's I/O completes and it is closed. False when an
    /// open or close failed (the phase ends).
    pub(super) fn open_for_verify(&mut self, file: u32) -> bool {
        if !self.check.verify_phase {
            return true;
        }
        let Some(mut gate) = self.files.gate.take() else {
            return true;
        };
        let mut res = Ok(());
        if !gate.is_open(file as usize) {
            self.quiesce();
            res = gate
                .close_all(self.engine)
                .and_then(|()| gate.open(self.engine, file as usize));
        }
        self.files.gate = Some(gate);
        if let Err(e) = res {
            self.end
                .get_or_insert(EndReason::Error(libc::EIO, e.to_string()));
            return false;
        }
        self.end.is_none()
    }

    /// Start the verify phase after the write phase (or as the whole job, `verify_only`): every
    /// block the write logs hold and no backlog batch checked yet is read back through the
    /// engine at the job's depth by the next [`IoLoop::run`], counted as the job's reads. The
    /// phase is not bound by `runtime`.
    pub fn begin_verify_phase(&mut self) {
        let Some(v) = self.check.verify.as_ref() else {
            return;
        };
        self.check.vq = v.phase_reads().into();
        if let Some(c) = &self.files.pass_cache {
            c.before_verify();
        }
        self.check.verify_phase = true;
        self.exhausted = false;
        self.end = None;
        self.time.limits.deadline_ns = None;
        // Every verify read counts, also after a write phase that ended within ramp_time.
        self.time.ramp_done = true;
        if let Some(g) = self.files.gate.as_mut() {
            g.max_open = 0;
            g.opens = 0;
        }
        self.ctl.progress.set_state(JobState::Verifying);
    }

    /// Record a completed write in the verify log, or check a read-only job's block.
    pub(super) fn verify_io(&mut self, id: u32, s: &Slot) {
        if s.ddir == 0 && s.check {
            self.gen.count_verified(u64::from(s.len));
        }
        let Some(v) = self.check.verify.as_mut() else {
            return;
        };
        match s.ddir {
            1 => v.written(s.file, s.offset, s.len as u64, s.seq),
            2 if s.check => v.trim_done(s.file, s.offset, s.len as u64),
            0 if self.eng.fake_io => {}
            0 if s.check => {
                let path = self
                    .files
                    .paths
                    .get(s.file as usize)
                    .map(String::as_str)
                    .unwrap_or("?");
                let buf = &self.q.pool.slice(id as usize)[..s.len as usize];
                if crate::debug::on(crate::debug::VERIFY) {
                    let vs = &self.job.verify;
                    let interval = vs.verify_interval.unwrap_or(s.len as u64);
                    crate::debug::verify_headers(vs.method, false, id, s.len as u64, interval);
                }
                let ok = if v.replays() {
                    v.check_replayed(path, buf, s.offset, s.seq)
                } else {
                    v.check_logged(s.file, path, buf, s.offset)
                };
                if !ok {
                    let first = v.first.last().cloned().unwrap_or_default();
                    self.end = Some(EndReason::Error(libc::EILSEQ, first));
                }
            }
            0 if self.check.read_checks => {
                let path = self.files.paths.get(s.file as usize).map(String::as_str);
                let buf = &self.q.pool.slice(id as usize)[..s.len as usize];
                if !v.check_read(path.unwrap_or("?"), buf, s.offset) {
                    let first = v.first.last().cloned().unwrap_or_default();
                    self.end = Some(EndReason::Error(libc::EILSEQ, first));
                }
            }
            _ => {}
        }
    }
}
