//! The loop's use of whole files: opening files as the generator's `openfiles` model asks, the
//! file-operation engines' per-file operation, `unlink_each_loop`, quiescing a file before it closes.

use super::*;

impl<'a> IoLoop<'a> {
    /// `openfiles`: close the files the generator closed (once their I/O is out), then open
    /// `file` if it is not open yet. False when an open or close failed (the job ends).
    pub(super) fn follow_opens(&mut self, file: u32) -> bool {
        let Some(mut gate) = self.files.gate.take() else {
            return true;
        };
        let mut res = Ok(());
        if std::mem::take(&mut self.files.unlink_due) {
            res = self.unlink_files(&mut gate);
        }
        // Only the files the model closed since the last I/O are looked at (all of them after
        // a new pass): a scan of every file before each I/O made 100,000 files quadratic.
        let mut closed = std::mem::take(&mut self.files.closed_files);
        let all = self.gen.take_closed(&mut closed);
        let scan: &mut dyn Iterator<Item = usize> = if all {
            &mut (0..gate.len())
        } else {
            &mut closed.iter().map(|&i| i as usize)
        };
        for i in scan {
            if res.is_ok() && gate.is_open(i) && !self.gen.is_open(i) {
                self.quiesce_file(i as u32);
                res = gate.close(self.engine, i);
            }
        }
        closed.clear();
        self.files.closed_files = closed;
        if res.is_ok() && !gate.is_open(file as usize) {
            res = gate.open(self.engine, file as usize);
        }
        self.files.gate = Some(gate);
        if let Err(e) = res {
            self.end
                .get_or_insert(EndReason::Error(libc::EIO, e.to_string()));
            return false;
        }
        self.end.is_none()
    }

    /// `unlink_each_loop` at a new loop: every file closed (its I/O done first), then those
    /// fiox created removed, as fio's unlink_all_files before the loop's first open.
    pub(super) fn unlink_files(
        &mut self,
        gate: &mut crate::files::opengate::OpenGate,
    ) -> Result<(), crate::error::RunError> {
        for i in 0..gate.len() {
            if gate.is_open(i) {
                self.quiesce_file(i as u32);
                gate.close(self.engine, i)?;
            }
        }
        gate.unlink_owned()
    }

    /// fio's file-operation engines: the engine's operation when the generator opened `file`
    /// since the last one. False when it failed (the job ends with its errno, as in fio).
    pub(super) fn file_op(&mut self, file: u32) -> bool {
        let Some(ops) = self.files.file_ops.as_mut() else {
            return true;
        };
        let path = self.files.paths.get(file as usize).map(String::as_str);
        match ops.before_io(self.engine, &self.gen, file, path, &mut self.acct) {
            Ok(()) => true,
            Err((errno, msg)) => {
                self.end.get_or_insert(EndReason::Error(errno, msg));
                false
            }
        }
    }

    /// Wait until no unit for `file` is queued, in flight or waiting to be re-issued (fio
    /// closes a file only after its last I/O completed).
    pub(super) fn quiesce_file(&mut self, file: u32) {
        while self.end.is_none() {
            if let Some(pos) = self
                .q
                .requeue
                .iter()
                .position(|&id| self.q.slots[id as usize].file == file)
            {
                let id = self.q.requeue.remove(pos);
                self.submit(id);
                self.commit();
                if self.q.inflight > 0 {
                    self.reap(1);
                }
                continue;
            }
            let busy = self
                .q
                .slots
                .iter()
                .zip(&self.q.in_flight)
                .any(|(s, &f)| f && s.file == file);
            if !busy {
                return;
            }
            self.commit();
            self.reap(1);
        }
    }
}
