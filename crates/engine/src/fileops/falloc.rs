//! fio's `falloc` engine: every I/O is a fallocate(2) over the unit's range instead of a data
//! transfer, to measure (and fragment) a filesystem's block allocation. As in fio
//! (engines/falloc.c): a read allocates keeping the size (FALLOC_FL_KEEP_SIZE), a write
//! allocates and extends the file (mode 0), a trim punches a hole (PUNCH_HOLE | KEEP_SIZE).
//! No buffer is touched. Synchronous; a unit completes with its length or `-errno`.

use crate::sys::ret;
use crate::target::{FdOp, Target};
use crate::{IoOp, IoUnit};

/// fio's `falloc`: each unit is one fallocate(2) (wrapped in an [`FdEngine`](crate::target::FdEngine)).
pub(crate) struct FallocEngine;

/// fallocate(2)'s mode for a unit's direction (fio's mapping).
pub(crate) fn mode_of(op: IoOp) -> libc::c_int {
    match op {
        IoOp::Read => libc::FALLOC_FL_KEEP_SIZE,
        IoOp::Trim => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
        IoOp::Write | IoOp::Fsync | IoOp::Fdatasync | IoOp::SyncRange(_) => 0,
    }
}

impl FdOp for FallocEngine {
    const NAME: &'static str = "falloc";

    fn run(&mut self, t: Target, io: &IoUnit) -> i64 {
        match io.op {
            op @ (IoOp::Read | IoOp::Write | IoOp::Trim) => {
                let (off, len) = (io.offset as libc::off_t, io.len() as libc::off_t);
                // SAFETY: plain syscall on the registered fd; no memory is passed.
                let r = ret(unsafe { libc::fallocate(t.fd, mode_of(op), off, len) } as isize);
                if r < 0 {
                    r
                } else {
                    io.len() as i64
                }
            }
            // Syncs as every positional engine runs them.
            _ => crate::target::run_positional(t, io, 0),
        }
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::on_scratch_file;
    use crate::{IoEngine, Queued};

    fn unit(op: IoOp, offset: u64, len: u32) -> IoUnit {
        IoUnit::range(op, 0, offset, len)
    }

    #[test]
    fn each_direction_is_its_fallocate_mode() {
        let (mut e, f, p) = on_scratch_file(FallocEngine, "falloc");
        let len = |f: &std::fs::File| f.metadata().unwrap().len();
        // A read allocates without growing the file.
        assert_eq!(
            e.queue(0, &unit(IoOp::Read, 0, 65536)).unwrap(),
            Queued::Done(65536)
        );
        assert_eq!(len(&f), 0);
        // A write allocates and extends it.
        assert_eq!(
            e.queue(0, &unit(IoOp::Write, 4096, 8192)).unwrap(),
            Queued::Done(8192)
        );
        assert_eq!(len(&f), 12288);
        // A trim punches a hole and keeps the size.
        assert_eq!(
            e.queue(0, &unit(IoOp::Trim, 0, 4096)).unwrap(),
            Queued::Done(4096)
        );
        assert_eq!(len(&f), 12288);
        assert!(e.queue(0, &unit(IoOp::Read, 0, 0)).unwrap() == Queued::Done(-libc::EINVAL as i64));
        drop(f);
        std::fs::remove_file(&p).unwrap();
    }
}
