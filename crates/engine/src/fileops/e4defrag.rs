//! fio's `e4defrag` engine (engines/e4defrag.c): every write moves the unit's blocks of the
//! file into a donor file's freshly allocated blocks with ext4's EXT4_IOC_MOVE_EXT, as the
//! online defragmenter does; data stays the same, its layout changes. The donor
//! (`donorname`, in the job's directory) is preallocated over the job's range up front, or
//! with `inplace=1` allocated per I/O and truncated after it. Reads and trims fail with
//! EINVAL, as in fio. ext4 only (other filesystems answer ENOTTY or EOPNOTSUPP).

use std::os::fd::RawFd;

use fiox_job::JobSpec;

use crate::sys::errno;
use crate::target::{FdOp, Target};
use crate::{EngineError, IoOp, IoUnit};

/// _IOWR('f', 15, struct move_extent): 40-byte argument.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = 0xC028_660F;

/// ext4's struct move_extent.
#[repr(C)]
#[derive(Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

pub(crate) struct E4defragEngine {
    donor: RawFd,
    /// The donor's block size (st_blksize), the ioctl's unit.
    bsz: u64,
    inplace: bool,
    /// What fio preallocates in the donor without `inplace`: from the job's offset to the
    /// upper `filesize` (0 without filesize=, which fallocate refuses, as fio's init does).
    prealloc: (u64, u64),
}

/// The donor's path: `donorname` in the job's directory, as fio builds it.
pub fn donor_path(job: &JobSpec) -> Option<std::path::PathBuf> {
    let name = job.engine.donorname.as_deref().filter(|n| !n.is_empty())?;
    Some(match job.files.directories.first() {
        Some(d) => std::path::Path::new(d).join(name),
        None => name.into(),
    })
}

impl E4defragEngine {
    pub fn new(job: &JobSpec) -> Result<E4defragEngine, EngineError> {
        let path = donor_path(job).ok_or_else(|| EngineError::Option {
            engine: "e4defrag",
            option: "donorname",
            reason: "e4defrag needs donorname= (the donor file's name), as in fio".into(),
        })?;
        // A new donor is made exclusively and marked by the guard; an existing one (checked
        // by the runner: fiox's own, or allowed) is opened without O_CREAT.
        let opened = match fiox_guard::named::create_new(&path, fiox_guard::Layout::Complete) {
            Ok(Some(f)) => Ok(f),
            Ok(None) => fiox_guard::named::open(&path, libc::O_WRONLY),
            Err(e) => Err(e.into()),
        };
        let fd = match opened {
            Ok(f) => std::os::fd::IntoRawFd::into_raw_fd(f),
            Err(source) => {
                return Err(EngineError::File {
                    path,
                    what: "e4defrag: open the donor file".into(),
                    source,
                })
            }
        };
        // SAFETY: zeroed stat is a valid out buffer for fstat on our fd.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: see above.
        if unsafe { libc::fstat(fd, &mut st) } < 0 {
            let source = std::io::Error::last_os_error();
            // SAFETY: our fd, closed once.
            unsafe { libc::close(fd) };
            return Err(EngineError::File {
                path,
                what: "e4defrag: fstat of the donor".into(),
                source,
            });
        }
        let start = match job.offset {
            fiox_job::SizeSpec::Bytes(b) => b,
            fiox_job::SizeSpec::Percent(_) => 0,
        };
        let high = job.files.filesize.map_or(0, |(_, hi)| hi);
        let e = E4defragEngine {
            donor: fd,
            bsz: (st.st_blksize as u64).max(1),
            inplace: job.engine.inplace,
            prealloc: (start, high.saturating_sub(start)),
        };
        if !e.inplace {
            let (off, len) = e.prealloc;
            // SAFETY: plain syscall on the donor fd.
            let r = unsafe { libc::fallocate(fd, 0, off as libc::off_t, len as libc::off_t) };
            if r < 0 {
                return Err(EngineError::Os {
                    engine: "e4defrag",
                    what: format!(
                        "fallocate of {} bytes of the donor (from offset to filesize=; \
                         set filesize= or inplace=1)",
                        len
                    ),
                    source: std::io::Error::last_os_error(),
                });
            }
        }
        Ok(e)
    }

    fn defrag(&self, t: Target, offset: u64, len: u64) -> i64 {
        if self.inplace {
            // SAFETY: plain syscall on the donor fd.
            if unsafe { libc::fallocate(self.donor, 0, offset as libc::off_t, len as libc::off_t) }
                < 0
            {
                return -(errno() as i64);
            }
        }
        let first = offset / self.bsz;
        let mut me = MoveExtent {
            donor_fd: self.donor as u32,
            orig_start: first,
            donor_start: first,
            len: (offset + len).div_ceil(self.bsz) - first,
            ..MoveExtent::default()
        };
        // SAFETY: the ioctl reads and updates one live struct move_extent.
        let r = unsafe { libc::ioctl(t.fd, EXT4_IOC_MOVE_EXT as _, &mut me) };
        let e = errno();
        let moved = (me.moved_len * self.bsz).min(len);
        if self.inplace {
            let _ = fiox_guard::named::set_len(self.donor, 0);
        }
        if r < 0 {
            -(e as i64)
        } else if moved == 0 {
            // fio: nothing moved means an access beyond the file's end.
            -(libc::EINVAL as i64)
        } else {
            moved as i64
        }
    }
}

impl Drop for E4defragEngine {
    fn drop(&mut self) {
        // SAFETY: our donor fd, closed once here.
        unsafe { libc::close(self.donor) };
    }
}

impl FdOp for E4defragEngine {
    const NAME: &'static str = "e4defrag";

    fn run(&mut self, t: Target, io: &IoUnit) -> i64 {
        match io.op {
            IoOp::Write => self.defrag(t, io.offset, io.len() as u64),
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

    #[test]
    fn the_ioctl_number_and_struct_are_ext4s() {
        assert_eq!(std::mem::size_of::<MoveExtent>(), 40);
        // _IOWR: read|write direction bits, the size, type 'f', number 15.
        let want: libc::c_ulong = (3 << 30) | (40 << 16) | ((b'f' as libc::c_ulong) << 8) | 15;
        assert_eq!(EXT4_IOC_MOVE_EXT, want);
    }

    #[test]
    fn donorname_is_required_and_joins_the_directory() {
        let mut j = JobSpec::default();
        assert!(donor_path(&j).is_none());
        j.engine.donorname = Some("d.def".into());
        j.files.directories = vec!["/mnt/x".into()];
        assert_eq!(
            donor_path(&j).unwrap(),
            std::path::Path::new("/mnt/x/d.def")
        );
        let dir = std::env::temp_dir();
        j.files.directories = vec![dir.display().to_string()];
        j.engine.donorname = Some(format!("fiox-donor-t-{}", std::process::id()));
        let e = E4defragEngine::new(&j).err().unwrap().to_string();
        assert!(
            e.contains("set filesize= or inplace=1"),
            "no filesize, as fio: {e}"
        );
        j.engine.inplace = true;
        assert!(E4defragEngine::new(&j).is_ok());
        std::fs::remove_file(donor_path(&j).unwrap()).unwrap();
        j.engine.donorname = None;
        let e = E4defragEngine::new(&j).err().unwrap().to_string();
        assert!(e.contains("donorname"), "{e}");
    }
}
