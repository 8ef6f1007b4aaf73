//! io_uring's side of the ring loop's calls ([`Direct`](crate::Direct)). Used only while
//! [`UringEngine::direct_ok`] says the ring needs none of the general calls' generality: no
//! SQPOLL (its waits for ring room), no IOPOLL (polled reaps), no `force_async` (a flag by SQE
//! count), no iovec per unit (vectored commands without fixed buffers), nothing completed
//! outside the ring. The SQEs are the batch path's ([`super::sqe::SqeCfg::rw`] through
//! `push_sqes`), so both paths send the same bytes.

use super::UringEngine;
use crate::queued::direct::{RingCqe, RingIo};
use crate::target::target;
use crate::EngineError;

impl UringEngine {
    /// Whether the ring loop may drive this ring now (see the module's note); registers the
    /// files first where that is still to do, as the first `queue` would.
    pub(crate) fn direct_ok(&mut self) -> Result<bool, EngineError> {
        if self.sqpoll
            || self.iopoll
            || self.force_async > 0
            || (self.vectored && !self.fixedbufs)
            || !self.ready.is_empty()
        {
            return Ok(false);
        }
        self.ready_to_push()?;
        Ok(true)
    }

    /// SQEs for `ios` as far as the ring has room (the depth, and the ring's entries for
    /// queues deeper than the kernel's largest ring); the tail is published once. How many
    /// were queued (the rest were not touched); a unit that cannot be queued (a file that is
    /// not the engine's, a buffer outside the registered pool) stops the batch, its error
    /// kept.
    #[inline]
    fn push_rw(&mut self, ios: &[RingIo]) -> usize {
        let room = (self.depth.saturating_sub(self.inflight + self.queued))
            .min(self.sq_len.saturating_sub(self.queued));
        let n = ios.len().min(room);
        let (k, err) = self.push_sqes(n, |cfg, files, i| {
            let io = &ios[i];
            let t = target("io_uring", files, io.file)?;
            cfg.rw(
                io.id,
                !io.write,
                (io.file, t.fd),
                io.offset,
                io.buf,
                io.ioprio,
            )
        });
        if let Some(e) = err {
            self.direct_error = Some(e);
        }
        k
    }

    /// `push_rw`, then enter the kernel with what it queued (`commit`), waiting in the same
    /// call for `wait` completions when all of `ios` were queued ([`Direct::submit_rw`]):
    /// how many were queued, and whether the batch or its submission failed (the error
    /// kept).
    #[inline]
    pub(crate) fn submit_rw(&mut self, ios: &[RingIo], wait: usize) -> (usize, bool) {
        let k = self.push_rw(ios);
        let wait = if k == ios.len() { wait } else { 0 };
        if k > 0 {
            if let Err(e) = self.commit_waiting(wait) {
                self.direct_error.get_or_insert(e);
            }
        }
        (k, self.direct_error.is_some())
    }

    /// Up to `out.len()` completions into `out`, waiting for at least `min` of them (0: take
    /// what is there): how many, or None when the ring failed (the error kept).
    #[inline]
    pub(crate) fn reap_into(&mut self, min: usize, out: &mut [RingCqe]) -> Option<usize> {
        let mut i = 0;
        self.reap_with(min, out.len(), |id, res| {
            out[i] = RingCqe { id, res };
            i += 1;
        })
    }

    /// Up to `max` completions, each (unit, result) handed to `sink` straight from the
    /// completion ring, once at least `min` of them (0: what is there) are in it: how many,
    /// or None when the ring failed (the error kept). The wait comes first and the ring is
    /// read after it, so `sink` is only called once the waiting is over (a clock `sink` reads
    /// at its first call is the reap's). SQEs the kernel pushed back at the last submit go
    /// out first.
    #[inline(always)]
    pub(crate) fn reap_with(
        &mut self,
        min: usize,
        max: usize,
        mut sink: impl FnMut(u32, i64),
    ) -> Option<usize> {
        if self.queued > 0 {
            if let Err(e) = self.commit_waiting(0) {
                self.direct_error = Some(e);
                return None;
            }
        }
        let min = min.min(self.inflight).min(max);
        // The kernel's wait ends when the ring holds `min` completions in all.
        while self.ring.completion().len() < min {
            if let Err(e) = self.wait(min as u32) {
                if !matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) {
                    self.direct_error = Some(EngineError::Os {
                        engine: "io_uring",
                        what: "io_uring_enter (wait)".into(),
                        source: e,
                    });
                    return None;
                }
            }
        }
        let mut n = 0;
        let mut cq = self.ring.completion();
        for cqe in cq.by_ref().take(max) {
            sink(cqe.user_data() as u32, i64::from(cqe.result()));
            n += 1;
        }
        cq.sync();
        drop(cq);
        self.inflight = self.inflight.saturating_sub(n);
        Some(n)
    }
}
