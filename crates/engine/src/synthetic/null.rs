//! `null`: completes every I/O without touching storage, to measure fiox's own per-I/O cost.
//! Like fio's null engine it is synchronous at iodepth=1 and queued above that (queue stores the
//! unit, commit makes the batch ready, getevents hands it back), so both runner paths can be
//! benchmarked. No syscalls, no locks, no allocation after construction.

use crate::{Completion, EngineError, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

pub(crate) struct NullEngine {
    sync: bool,
    /// Queued but not yet committed.
    queued: Vec<Completion>,
    /// Committed, waiting to be reaped.
    ready: Vec<Completion>,
}

impl NullEngine {
    pub fn new(iodepth: u32) -> NullEngine {
        let depth = iodepth.max(1) as usize;
        NullEngine {
            sync: depth == 1,
            queued: Vec::with_capacity(depth),
            ready: Vec::with_capacity(depth),
        }
    }
}

#[inline]
fn result_of(io: &IoUnit) -> i64 {
    match io.op {
        IoOp::Read | IoOp::Write | IoOp::Trim => io.len() as i64,
        IoOp::Fsync | IoOp::Fdatasync | IoOp::SyncRange(_) => 0,
    }
}

impl NullEngine {
    /// `queue` of the asynchronous null engine (iodepth > 1).
    #[inline(never)]
    fn queue_async(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        // As fio: a committed batch must be reaped before more is accepted.
        if !self.ready.is_empty() {
            return Ok(Queued::Busy);
        }
        self.queued.push(Completion {
            unit: id,
            result: result_of(io),
        });
        Ok(Queued::Queued)
    }
}

impl IoEngine for NullEngine {
    fn name(&self) -> &'static str {
        fiox_job::Engine::Null.name()
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: self.sync,
            no_io: fiox_job::Engine::Null.is_diskless(),
            seeks: false,
            file_ops: false,
            zero_bytes: false,
            eof_ends: false,
            batches_rw: false,
        }
    }

    crate::ignores_files!();

    #[inline]
    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        if self.sync {
            return Ok(Queued::Done(result_of(io)));
        }
        // Apart: the synchronous case above then needs no stack frame (the lean loop calls
        // it once per I/O).
        self.queue_async(id, io)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        if !self.ready.is_empty() {
            return Ok(0);
        }
        std::mem::swap(&mut self.ready, &mut self.queued);
        Ok(self.ready.len())
    }

    fn getevents(
        &mut self,
        _min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        let n = max.min(self.ready.len());
        out.extend(self.ready.drain(..n));
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(op: IoOp) -> IoUnit {
        IoUnit::range(op, 0, 0, 4096)
    }

    #[test]
    fn depth_one_completes_in_queue() {
        let mut e = NullEngine::new(1);
        assert!(e.flags().sync);
        assert_eq!(e.queue(0, &unit(IoOp::Write)).unwrap(), Queued::Done(4096));
        assert_eq!(e.queue(0, &unit(IoOp::Fdatasync)).unwrap(), Queued::Done(0));
    }

    #[test]
    fn deeper_queues_a_batch_and_is_busy_until_reaped() {
        let mut e = NullEngine::new(4);
        assert!(!e.flags().sync);
        for id in 0..3 {
            assert_eq!(e.queue(id, &unit(IoOp::Read)).unwrap(), Queued::Queued);
        }
        let mut out = Vec::new();
        assert_eq!(
            e.getevents(0, 8, &mut out).unwrap(),
            0,
            "nothing committed yet"
        );
        assert_eq!(e.commit().unwrap(), 3);
        assert_eq!(e.queue(3, &unit(IoOp::Read)).unwrap(), Queued::Busy);
        assert_eq!(e.getevents(1, 2, &mut out).unwrap(), 2);
        assert_eq!(e.getevents(1, 2, &mut out).unwrap(), 1);
        let ids: Vec<u32> = out.iter().map(|c| c.unit).collect();
        assert_eq!(ids, vec![0, 1, 2]);
        assert_eq!(e.queue(3, &unit(IoOp::Trim)).unwrap(), Queued::Queued);
    }
}
