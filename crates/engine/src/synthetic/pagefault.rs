//! fio 3.42's `page_fault` engine: the job's I/O goes to a private anonymous mapping of `size`
//! bytes instead of a file, so reads and writes are memory copies that fault pages in (fio's
//! engines/page_fault.c). Diskless (no file is laid out or opened); one file only, starting
//! at offset 0; syncs complete at once; a trim or an I/O past the mapping fails with EINVAL.

use fiox_job::spec::JobSpec;
use fiox_job::SizeSpec;

use crate::{EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

pub(crate) struct PageFaultEngine {
    map: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by the engine and used only by the thread that holds it.
unsafe impl Send for PageFaultEngine {}

fn refuse(reason: String) -> EngineError {
    EngineError::Option {
        engine: "page_fault",
        option: "size",
        reason,
    }
}

impl PageFaultEngine {
    /// Map `size` bytes, refusing what fio's init refuses (several files, an offset).
    pub fn new(job: &JobSpec) -> Result<PageFaultEngine, EngineError> {
        if job.files.nrfiles > 1 || job.files.filenames.len() > 1 {
            return Err(refuse(
                "the page_fault engine does not support multiple files (fio says the same)".into(),
            ));
        }
        if job.offset != SizeSpec::Bytes(0) {
            return Err(refuse(
                "the page_fault engine does not support an offset (fio says the same)".into(),
            ));
        }
        let len = match job.size {
            Some(SizeSpec::Bytes(b)) if b > 0 => usize::try_from(b).map_err(|_| {
                refuse(format!(
                    "size={b} does not fit this machine's address space"
                ))
            })?,
            _ => {
                return Err(refuse(
                    "the page_fault engine maps size= bytes: give size= in bytes".into(),
                ))
            }
        };
        // SAFETY: a new private anonymous mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(EngineError::Os {
                engine: "page_fault",
                what: format!("page_fault: mmap of {len} bytes"),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(PageFaultEngine { map: p.cast(), len })
    }
}

impl Drop for PageFaultEngine {
    fn drop(&mut self) {
        // SAFETY: map/len are the mapping made in new, unmapped once here.
        unsafe { libc::munmap(self.map.cast(), self.len) };
    }
}

impl IoEngine for PageFaultEngine {
    fn name(&self) -> &'static str {
        "page_fault"
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: true,
            no_io: fiox_job::Engine::PageFault.is_diskless(),
            ..EngineFlags::default()
        }
    }

    fn add_file(&mut self, _file: &EngineFile) -> Result<(), EngineError> {
        Ok(())
    }

    fn reopen_file(&mut self, _index: u32, _file: &EngineFile) -> Result<(), EngineError> {
        Ok(())
    }

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let einval = Ok(Queued::Done(-i64::from(libc::EINVAL)));
        let (off, n) = (io.offset as usize, io.buf().len() as usize);
        if off.checked_add(n).is_none_or(|end| end > self.len) {
            return einval;
        }
        match io.op {
            IoOp::Read => {
                // SAFETY: off + n is inside the mapping; the unit's BufSpan holds n bytes.
                unsafe { std::ptr::copy_nonoverlapping(self.map.add(off), io.buf().as_ptr(), n) };
            }
            IoOp::Write => {
                // SAFETY: as above, copying the other way.
                unsafe { std::ptr::copy_nonoverlapping(io.buf().as_ptr(), self.map.add(off), n) };
            }
            IoOp::Fsync | IoOp::Fdatasync | IoOp::SyncRange(_) => return Ok(Queued::Done(0)),
            IoOp::Trim => return einval,
        }
        Ok(Queued::Done(n as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_then_reads_back_through_the_mapping() {
        let job = JobSpec {
            size: Some(SizeSpec::Bytes(64 << 10)),
            ..JobSpec::default()
        };
        let mut e = PageFaultEngine::new(&job).unwrap();
        let mut pool = crate::buf::BufPool::new(2, 4096, 4096).unwrap();
        pool.slice_mut(0).fill(7);
        let unit = |op, slot: usize, offset| {
            IoUnit::transfer(op, 0, offset, pool.span(slot, 0, 4096).unwrap())
        };
        let (w, r) = (unit(IoOp::Write, 0, 8192), unit(IoOp::Read, 1, 8192));
        assert_eq!(e.queue(0, &w).unwrap(), Queued::Done(4096));
        assert_eq!(e.queue(0, &r).unwrap(), Queued::Done(4096));
        let past = unit(IoOp::Read, 1, 62 << 10);
        assert_eq!(e.queue(0, &past).unwrap(), Queued::Done(-22));
        let trim = unit(IoOp::Trim, 1, 0);
        assert_eq!(e.queue(0, &trim).unwrap(), Queued::Done(-22));
        assert!(
            pool.slice_mut(1).iter().all(|&b| b == 7),
            "read back what was written"
        );
        let two = JobSpec {
            offset: SizeSpec::Bytes(4096),
            ..job.clone()
        };
        assert!(PageFaultEngine::new(&two).is_err());
        assert!(PageFaultEngine::new(&JobSpec::default()).is_err());
    }
}
