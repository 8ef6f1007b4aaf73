//! `mmap`: each file is mapped whole (MAP_SHARED) when added; reads and writes are memcpys
//! between the mapping and the unit's buffer, fsync/fdatasync are msync(MS_SYNC) of the mapping,
//! trims are BLKDISCARD (ENOTTY on a regular file, as fio). As in fio, the mapping gets MADV_RANDOM or
//! MADV_SEQUENTIAL from the job's pattern (none with fadvise_hint=0).
//!
//! The mapping covers the file's size at `add_file` time (the runner lays files out first). A
//! writable regular file shorter than the range the job may touch (a file `create_on_open`
//! just created, which nothing laid out) is first extended to that size with ftruncate:
//! fio 3.33 maps it as it is and dies of SIGBUS at the first write. Touching a page past end
//! of file would raise SIGBUS, so reads crossing the end are short (0 at or past it) and
//! writes crossing it fail with `-EINVAL` instead.

use crate::sys;
use crate::target::{replace, target, trim, Target};
use crate::{EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

struct Mapping {
    base: *mut u8,
    len: u64,
    writable: bool,
}

pub(crate) struct MmapEngine {
    random: bool,
    /// madvise the mapping (fio skips it with fadvise_hint=0).
    advise: bool,
    files: Vec<Target>,
    maps: Vec<Mapping>,
}

// SAFETY: the mappings are owned by the engine, which one thread uses at a time.
unsafe impl Send for MmapEngine {}

impl MmapEngine {
    pub fn new(random: bool, advise: bool) -> MmapEngine {
        MmapEngine {
            random,
            advise,
            files: Vec::new(),
            maps: Vec::new(),
        }
    }

    fn map(&self, file: &EngineFile) -> Result<Mapping, EngineError> {
        let os = |what: &str, source| EngineError::Os {
            engine: "mmap",
            what: format!("{what} {}", file.path.display()),
            source,
        };
        // fd -1: not open yet (create_on_open), mapped when `reopen_file` brings the fd.
        let mut len = if file.fd < 0 {
            0
        } else {
            sys::file_size(file.fd).map_err(|e| os("size of", e))?
        };
        if file.fd >= 0
            && file.writable
            && len < file.size
            && !sys::is_block_device(file.fd).unwrap_or(true)
        {
            sys::ftruncate(file.fd, file.size).map_err(|e| os("extending", e))?;
            len = file.size;
        }
        if len == 0 {
            return Ok(Mapping {
                base: std::ptr::null_mut(),
                len: 0,
                writable: file.writable,
            });
        }
        let prot = libc::PROT_READ | if file.writable { libc::PROT_WRITE } else { 0 };
        // SAFETY: a fresh shared mapping of an open fd; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                prot,
                libc::MAP_SHARED,
                file.fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os("mmap of", std::io::Error::last_os_error()));
        }
        let advice = if self.random {
            libc::MADV_RANDOM
        } else {
            libc::MADV_SEQUENTIAL
        };
        if self.advise {
            // SAFETY: advice on the mapping just created; failure only loses a hint.
            unsafe { libc::madvise(p, len as usize, advice) };
        }
        Ok(Mapping {
            base: p.cast(),
            len,
            writable: file.writable,
        })
    }
}

/// Copy between the mapping and the buffer: bytes copied (short at end of file) or `-errno`.
fn transfer(m: &Mapping, io: &IoUnit) -> i64 {
    if io.offset >= m.len {
        return if io.op == IoOp::Read {
            0
        } else {
            -(libc::EINVAL as i64)
        };
    }
    let want = io.buf().len() as usize;
    let avail = (m.len - io.offset).min(want as u64) as usize;
    if io.op == IoOp::Write && (avail < want || !m.writable) {
        return -(libc::EINVAL as i64);
    }
    // SAFETY: offset + avail <= mapping length, the unit's BufSpan holds want >= avail
    // bytes, and a buffer slot never overlaps a file mapping.
    unsafe {
        let map = m.base.add(io.offset as usize);
        if io.op == IoOp::Read {
            std::ptr::copy_nonoverlapping(map, io.buf().as_ptr(), avail);
        } else {
            std::ptr::copy_nonoverlapping(io.buf().as_ptr(), map, avail);
        }
    }
    avail as i64
}

fn msync(m: &Mapping) -> i64 {
    if m.len == 0 {
        return 0;
    }
    // SAFETY: msync over exactly the mapping we own.
    let r = unsafe { libc::msync(m.base.cast(), m.len as usize, libc::MS_SYNC) };
    sys::ret(r as isize).min(0)
}

impl IoEngine for MmapEngine {
    fn name(&self) -> &'static str {
        "mmap"
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: true,
            no_io: false,
            seeks: false,
            file_ops: false,
            zero_bytes: false,
            eof_ends: false,
            batches_rw: false,
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        let t = Target::of(file);
        let m = self.map(file)?;
        self.files.push(t);
        self.maps.push(m);
        Ok(())
    }

    fn close_file(&mut self, index: u32) -> Result<(), EngineError> {
        target("mmap", &self.files, index)?;
        let m = &mut self.maps[index as usize];
        if m.len > 0 {
            // SAFETY: unmapping exactly what map() created; no I/O to this file is queued.
            unsafe { libc::munmap(m.base.cast(), m.len as usize) };
        }
        m.base = std::ptr::null_mut();
        m.len = 0;
        Ok(())
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        self.close_file(index)?;
        let m = self.map(file)?;
        replace("mmap", &mut self.files, index, file)?;
        self.maps[index as usize] = m;
        Ok(())
    }

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = target("mmap", &self.files, io.file)?;
        let m = &self.maps[io.file as usize];
        let r = match io.op {
            IoOp::Read | IoOp::Write => transfer(m, io),
            IoOp::Trim => trim(t, io.offset, io.len()),
            // fio's mmap engine msyncs the mapping for every kind of sync.
            IoOp::Fsync | IoOp::Fdatasync | IoOp::SyncRange(_) => msync(m),
        };
        Ok(Queued::Done(r))
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for m in &self.maps {
            if m.len > 0 {
                // SAFETY: unmapping exactly what map() created; nothing refers to it anymore.
                unsafe { libc::munmap(m.base.cast(), m.len as usize) };
            }
        }
    }
}
