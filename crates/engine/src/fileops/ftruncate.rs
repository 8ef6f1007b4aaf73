//! fio's `ftruncate` engine: every write is an ftruncate(2) of the file to the unit's offset
//! (fio's engines/ftruncate.c), to measure how a filesystem grows and shrinks files. Reads and
//! trims fail with EINVAL, as in fio; no buffer is touched. Synchronous.

use crate::target::{FdOp, Target};
use crate::{IoOp, IoUnit};

/// fio's `ftruncate`: each write is one ftruncate(2) (wrapped in an [`FdEngine`](crate::target::FdEngine)).
pub(crate) struct FtruncateEngine;

impl FdOp for FtruncateEngine {
    const NAME: &'static str = "ftruncate";

    fn run(&mut self, t: Target, io: &IoUnit) -> i64 {
        match io.op {
            IoOp::Write => {
                // The file was checked on its descriptor when the runner opened it.
                match fiox_guard::named::set_len(t.fd, io.offset) {
                    Ok(()) => io.len() as i64,
                    Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                }
            }
            IoOp::Read | IoOp::Trim => -(libc::EINVAL as i64),
            // Syncs as every positional engine runs them.
            _ => crate::target::run_positional(t, io, 0),
        }
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::FdEngine;
    use crate::{EngineFile, IoEngine, Queued};
    use std::os::fd::AsRawFd;

    #[test]
    fn a_write_truncates_to_its_offset_and_reads_fail() {
        let p = std::env::temp_dir().join(format!("fiox-ftruncate-{}", std::process::id()));
        std::fs::write(&p, vec![1u8; 65536]).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        let mut e = FdEngine::new(FtruncateEngine);
        e.add_file(&EngineFile {
            fd: f.as_raw_fd(),
            path: p.clone(),
            size: 65536,
            writable: true,
        })
        .unwrap();
        let unit = |op, offset| IoUnit::range(op, 0, offset, 4096);
        assert_eq!(
            e.queue(0, &unit(IoOp::Write, 8192)).unwrap(),
            Queued::Done(4096)
        );
        assert_eq!(f.metadata().unwrap().len(), 8192);
        assert_eq!(
            e.queue(0, &unit(IoOp::Write, 100_000)).unwrap(),
            Queued::Done(4096)
        );
        assert_eq!(f.metadata().unwrap().len(), 100_000);
        let einval = Queued::Done(-(libc::EINVAL as i64));
        assert_eq!(e.queue(0, &unit(IoOp::Read, 0)).unwrap(), einval);
        assert_eq!(e.queue(0, &unit(IoOp::Trim, 0)).unwrap(), einval);
        drop(f);
        std::fs::remove_file(&p).unwrap();
    }
}
