//! Thin, safe wrappers over the Linux calls the runner and the engines need around I/O: opening a
//! job's file with fio's flags, cache invalidation, preallocation, sizing block devices, trimming,
//! syncing, and naming errnos. Each wrapper returns `io::Result` (or a typed [`EngineError`] for
//! `open_file`, whose message must explain the failure in fio's terms).

use std::fs::File;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use fiox_job::spec::{FallocateMode, JobSpec, SyncMode};

use crate::EngineError;

// ioctl numbers from <linux/fs.h>; libc does not export all of them on every target.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272; // _IOR(0x12, 114, size_t)
const BLKSSZGET: libc::c_ulong = 0x1268; // _IO(0x12, 104)
const BLKDISCARD: libc::c_ulong = 0x1277; // _IO(0x12, 119)
const BLKFLSBUF: libc::c_ulong = 0x1261; // _IO(0x12, 97)

/// How to open a job's file, derived from the job as fio would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenSpec {
    /// O_RDWR instead of O_RDONLY (the job writes or trims).
    pub write: bool,
    /// O_CREAT (mode 0644) when the file does not exist.
    pub create: bool,
    pub direct: bool,
    /// `atomic=1`: fio's OS_O_ATOMIC bit on top of O_DIRECT (fio 3.33 on Linux, where no
    /// O_ATOMIC exists, passes 040000000; the kernel ignores the bit).
    pub atomic: bool,
    pub sync: SyncMode,
}

/// fio 3.33's OS_O_ATOMIC on Linux (os/os-linux.h), for `atomic=1`.
pub const FIO_O_ATOMIC: libc::c_int = 0o40000000;

impl OpenSpec {
    /// fio opens read-only for pure read jobs, O_RDWR as soon as the job writes or trims (not
    /// with verify_only, which only reads back); files
    /// are created only when writing and `allow_file_create` is set.
    pub fn from_job(job: &JobSpec) -> Self {
        let mode = job.rw.mode;
        // verify_only never writes: read-only, so data another tool wrote can be checked.
        // fio's falloc opens O_RDWR whatever the direction: a read is fallocate(2) too.
        let falloc = job.ioengine.is(fiox_job::Engine::Falloc);
        let write = (mode.has_write() || mode.has_trim() || falloc) && !job.verify.verify_only;
        OpenSpec {
            write,
            create: write && job.files.allow_file_create,
            direct: job.direct || job.atomic,
            atomic: job.atomic,
            sync: job.sync,
        }
    }

    /// The open(2) flags this spec stands for.
    pub fn flags(&self) -> libc::c_int {
        let mut f = if self.write {
            libc::O_RDWR
        } else {
            libc::O_RDONLY
        };
        f |= libc::O_CLOEXEC;
        if self.create {
            f |= libc::O_CREAT;
        }
        if self.direct {
            f |= libc::O_DIRECT;
        }
        if self.atomic {
            f |= FIO_O_ATOMIC;
        }
        match self.sync {
            SyncMode::None => {}
            SyncMode::Sync => f |= libc::O_SYNC,
            SyncMode::Dsync => f |= libc::O_DSYNC,
        }
        f
    }

    fn describe(&self) -> String {
        let mut s = String::from(if self.write { "O_RDWR" } else { "O_RDONLY" });
        for (on, name) in [
            (self.create, "|O_CREAT"),
            (self.direct, "|O_DIRECT"),
            (self.atomic, "|O_ATOMIC"),
            (self.sync == SyncMode::Sync, "|O_SYNC"),
            (self.sync == SyncMode::Dsync, "|O_DSYNC"),
        ] {
            if on {
                s.push_str(name);
            }
        }
        s
    }
}

/// Open `path` with the flags of `spec`. An EINVAL caused by O_DIRECT becomes
/// [`EngineError::DirectUnsupported`] (checked by retrying without O_DIRECT), so the user learns
/// that the filesystem, not fiox, refuses direct I/O.
pub fn open_file(path: &Path, spec: &OpenSpec) -> Result<File, EngineError> {
    let cpath =
        std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| EngineError::File {
            path: path.to_path_buf(),
            what: "file name contains a NUL byte".into(),
            source: io::Error::from_raw_os_error(libc::EINVAL),
        })?;
    match raw_open(&cpath, spec.flags()) {
        Ok(f) => Ok(f),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) && spec.direct => {
            let without = OpenSpec {
                direct: false,
                atomic: false,
                ..*spec
            };
            if raw_open(&cpath, without.flags()).is_ok() {
                Err(EngineError::DirectUnsupported(path.to_path_buf()))
            } else {
                Err(open_error(path, spec, e))
            }
        }
        Err(e) => Err(open_error(path, spec, e)),
    }
}

fn open_error(path: &Path, spec: &OpenSpec, source: io::Error) -> EngineError {
    EngineError::File {
        path: path.to_path_buf(),
        what: format!("cannot open ({})", spec.describe()),
        source,
    }
}

/// The guard's open of a file the job names: never O_CREAT or O_TRUNC (the runner creates a
/// job's new files first, exclusively, through the guard).
fn raw_open(path: &std::ffi::CStr, flags: libc::c_int) -> io::Result<File> {
    fiox_guard::named::open_c(path, flags)
}

/// A second open file description of the file open at `fd`, with the same access and status
/// flags (O_DIRECT, O_SYNC ...) but its own file position: what threads that seek need.
pub fn reopen_fd(fd: RawFd) -> io::Result<File> {
    // SAFETY: F_GETFL takes no pointer; an invalid fd fails with EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let keep = flags & !(libc::O_CREAT | libc::O_TRUNC | libc::O_EXCL);
    let path = std::ffi::CString::new(format!("/proc/thread-self/fd/{fd}"))
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    raw_open(&path, keep | libc::O_CLOEXEC)
}

fn cvt(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// posix_fadvise(2) over `len` bytes from `offset` (`advice`: a POSIX_FADV_* value).
pub fn fadvise(fd: RawFd, offset: u64, len: u64, advice: i32) -> io::Result<()> {
    // SAFETY: plain syscall on an fd; no memory is passed.
    let r = unsafe { libc::posix_fadvise(fd, offset as libc::off_t, len as libc::off_t, advice) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// How [`cached_bytes`] found out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheProbe {
    /// cachestat(2), Linux 6.5+: the kernel's own count, no mapping needed.
    Cachestat,
    /// mincore(2) over a read-only shared mapping of the range (older kernels).
    Mincore,
}

impl CacheProbe {
    pub fn name(self) -> &'static str {
        match self {
            CacheProbe::Cachestat => "cachestat",
            CacheProbe::Mincore => "mincore",
        }
    }
}

/// `struct cachestat_range` and `struct cachestat` of <linux/mman.h>.
#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// The cachestat syscall number: the same on every architecture (added after the tables were
/// unified), and not yet in the libc crate.
const SYS_CACHESTAT: libc::c_long = 451;

/// Bytes of `[offset, offset + len)` of the open file `fd` that are in the page cache now.
pub fn cached_bytes(fd: RawFd, offset: u64, len: u64) -> io::Result<(u64, CacheProbe)> {
    if len == 0 {
        return Ok((0, CacheProbe::Cachestat));
    }
    let range = CachestatRange { off: offset, len };
    let mut cs = Cachestat::default();
    // SAFETY: both pointers are to live, correctly laid out repr(C) structs for the call's
    // duration; the kernel writes only `cs`.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            fd as libc::c_uint,
            &range as *const CachestatRange,
            &mut cs as *mut Cachestat,
            0 as libc::c_uint,
        )
    };
    if r == 0 {
        return Ok((cs.nr_cache * page_size(), CacheProbe::Cachestat));
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOSYS) {
        return Err(e);
    }
    mincore_bytes(fd, offset, len).map(|b| (b, CacheProbe::Mincore))
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no memory arguments.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// [`cached_bytes`] without cachestat: map the range read-only in 1 GiB windows (so a large
/// device needs no huge residency vector) and count resident pages with mincore.
fn mincore_bytes(fd: RawFd, offset: u64, len: u64) -> io::Result<u64> {
    const WINDOW: u64 = 1 << 30;
    let page = page_size();
    let mut start = offset - offset % page;
    let end = offset + len;
    let mut pages = 0u64;
    let mut vec = Vec::new();
    while start < end {
        let n = (end - start).min(WINDOW);
        // SAFETY: a fresh read-only shared mapping of the file; nothing else refers to it and
        // it is unmapped below before the loop goes on. Touching no page keeps residency as is.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                n as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                start as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        vec.resize(n.div_ceil(page) as usize, 0u8);
        // SAFETY: `addr` maps `n` bytes; `vec` has one byte per page of it.
        let r = unsafe { libc::mincore(addr, n as usize, vec.as_mut_ptr()) };
        let err = io::Error::last_os_error();
        // SAFETY: unmapping exactly the mapping made above.
        unsafe { libc::munmap(addr, n as usize) };
        if r != 0 {
            return Err(err);
        }
        pages += vec.iter().filter(|&&b| b & 1 != 0).count() as u64;
        start += n;
    }
    Ok(pages * page)
}

/// Flush the page cache of a block device (fio uses BLKFLSBUF for `invalidate` on devices).
pub fn flush_block_device(fd: RawFd) -> io::Result<()> {
    // SAFETY: BLKFLSBUF takes no argument memory.
    cvt(unsafe { libc::ioctl(fd, BLKFLSBUF as _, 0) })
}

/// Preallocate `len` bytes at `offset` as `fallocate=` asks. `None` does nothing; `Truncate`
/// sets the file size with ftruncate (fio's `truncate` mode).
pub fn fallocate(fd: RawFd, mode: FallocateMode, offset: u64, len: u64) -> io::Result<()> {
    let (off, ln) = (offset as libc::off_t, len as libc::off_t);
    match mode {
        FallocateMode::None => Ok(()),
        // SAFETY: plain syscalls on an fd; no memory is passed.
        FallocateMode::Native => cvt(unsafe { libc::fallocate(fd, 0, off, ln) }),
        FallocateMode::Keep => {
            // SAFETY: as above.
            cvt(unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, off, ln) })
        }
        // SAFETY: as above.
        FallocateMode::Posix => match unsafe { libc::posix_fallocate(fd, off, ln) } {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        },
        FallocateMode::Truncate => ftruncate(fd, offset + len),
    }
}

pub fn ftruncate(fd: RawFd, size: u64) -> io::Result<()> {
    fiox_guard::named::set_len(fd, size)
}

pub fn fsync(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain syscall on an fd.
    cvt(unsafe { libc::fsync(fd) })
}

pub fn fdatasync(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain syscall on an fd.
    cvt(unsafe { libc::fdatasync(fd) })
}

pub(crate) fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid value; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid, writable stat buffer.
    cvt(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

pub fn is_block_device(fd: RawFd) -> io::Result<bool> {
    Ok(fstat(fd)?.st_mode & libc::S_IFMT == libc::S_IFBLK)
}

/// Size in bytes of a block device (BLKGETSIZE64).
pub fn block_device_size(fd: RawFd) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 to the pointer, which is valid.
    cvt(unsafe { libc::ioctl(fd, BLKGETSIZE64 as _, &mut size as *mut u64) })?;
    Ok(size)
}

/// Logical block size of a block device (BLKSSZGET): the O_DIRECT alignment it demands.
pub fn logical_block_size(fd: RawFd) -> io::Result<u32> {
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int to the pointer, which is valid.
    cvt(unsafe { libc::ioctl(fd, BLKSSZGET as _, &mut size as *mut libc::c_int) })?;
    Ok(size as u32)
}

/// Size of a regular file (st_size) or a block device (BLKGETSIZE64).
pub fn file_size(fd: RawFd) -> io::Result<u64> {
    let st = fstat(fd)?;
    if st.st_mode & libc::S_IFMT == libc::S_IFBLK {
        block_device_size(fd)
    } else {
        Ok(st.st_size as u64)
    }
}

/// Discard a range with BLKDISCARD, whatever the file is. fio 3.33 does the same for every engine
/// but falloc (`os_trim`), so a trim of a regular file fails with ENOTTY as in fio instead of
/// punching a hole: a job file's outcome (examples/enospc-pressure.fio) is fio's. The falloc
/// engine's trims punch holes (fileops/falloc.rs), as fio's do.
pub fn trim(fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
    let range: [u64; 2] = [offset, len];
    // SAFETY: BLKDISCARD reads two u64 from the pointer, which points at `range`; on a file
    // that is not a block device the kernel refuses the ioctl (ENOTTY) without reading it.
    cvt(unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) })
}

/// Filesystem type magic of the filesystem holding `path` (statfs `f_type`), e.g. to tell tmpfs
/// (0x01021994) from ext4 (0xEF53).
pub fn fs_magic(path: &Path) -> io::Result<i64> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: zeroed statfs is valid; statfs fills it from a NUL-terminated path.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: see above.
    cvt(unsafe { libc::statfs(c.as_ptr(), &mut st) })?;
    Ok(st.f_type as i64)
}

/// Bytes an unprivileged writer may still use on the filesystem holding `path` (statfs's
/// available blocks); None for a filesystem that reports no size (ramfs: no limit).
pub fn fs_free_bytes(path: &Path) -> io::Result<Option<u64>> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: zeroed statfs is valid; statfs fills it from a NUL-terminated path.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: see above.
    cvt(unsafe { libc::statfs(c.as_ptr(), &mut st) })?;
    if st.f_blocks == 0 {
        return Ok(None);
    }
    // f_frsize is the unit of the block counts (f_bsize where a kernel leaves it 0).
    let unit = if st.f_frsize > 0 {
        st.f_frsize
    } else {
        st.f_bsize
    };
    Ok(Some((st.f_bavail as u64).saturating_mul(unit as u64)))
}

/// The calling thread's errno, for the hot paths that must not build an `io::Error`.
#[inline]
pub(crate) fn errno() -> i32 {
    // SAFETY: __errno_location returns the valid thread-local errno address.
    unsafe { *libc::__errno_location() }
}

/// pread64 (`write` false) or pwrite64 of `len` bytes at `buf`, as fiox's result convention
/// (byte count or `-errno`). On x86_64 the `syscall` instruction is inline, not a call into
/// glibc's `syscall()`: the kernel's own calls leave the return-stack predictor holding
/// kernel addresses, so every `ret` on the way back up from a syscall mispredicts. Inline,
/// a psync I/O returns through one frame (the engine's `queue`) as a bare pread loop does.
///
/// # Safety
/// `buf` must point at `len` bytes that stay valid (and, for a read, writable and not
/// otherwise borrowed) for the call.
#[inline(always)]
pub(crate) unsafe fn positional_rw(
    write: bool,
    fd: RawFd,
    buf: *mut u8,
    len: usize,
    off: i64,
) -> i64 {
    let nr = if write {
        libc::SYS_pwrite64
    } else {
        libc::SYS_pread64
    };
    #[cfg(target_arch = "x86_64")]
    {
        let r: i64;
        // SAFETY: the Linux x86_64 syscall convention: number in rax, arguments in rdi, rsi,
        // rdx, r10; the kernel clobbers rcx and r11 and restores the flags. pread64/pwrite64
        // only touch `buf`'s `len` bytes, valid per this function's contract.
        unsafe {
            std::arch::asm!(
                "syscall",
                inlateout("rax") nr => r,
                in("rdi") fd as i64,
                in("rsi") buf,
                in("rdx") len,
                in("r10") off,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack, preserves_flags),
            );
        }
        r
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // SAFETY: as above, through glibc's generic syscall().
        ret(unsafe { libc::syscall(nr, fd, buf, len, off) } as isize)
    }
}

/// psync's read (`write` false) or write of `buf` at `offset` of the file open as `fd`, as
/// `IoEngine::queue` would do it (see [`crate::IoEngine::positional_fds`]): the byte count
/// or `-errno`.
#[inline(always)]
pub fn positional_io(fd: RawFd, write: bool, buf: &mut [u8], offset: u64) -> i64 {
    // SAFETY: buf is a live, exclusively borrowed slice of buf.len() bytes for the call.
    unsafe { positional_rw(write, fd, buf.as_mut_ptr(), buf.len(), offset as i64) }
}

/// A syscall's ssize_t return as fiox's result convention: byte count, or `-errno`.
#[inline]
pub(crate) fn ret(r: isize) -> i64 {
    if r < 0 {
        -(errno() as i64)
    } else {
        r as i64
    }
}

macro_rules! errno_table {
    ($($name:ident),* $(,)?) => {
        /// Symbolic name of an errno value (`22` -> `"EINVAL"`); `"E?"` if unknown.
        pub fn errno_name(e: i32) -> &'static str {
            $(if e == libc::$name { return stringify!($name); })*
            "E?"
        }
        /// The errno value of a symbolic name (`"EINVAL"` -> 22), case-insensitive.
        pub fn errno_from_name(name: &str) -> Option<i32> {
            $(if name.eq_ignore_ascii_case(stringify!($name)) { return Some(libc::$name); })*
            None
        }
    };
}

errno_table!(
    EPERM,
    ENOENT,
    ESRCH,
    EINTR,
    EIO,
    ENXIO,
    E2BIG,
    ENOEXEC,
    EBADF,
    ECHILD,
    EAGAIN,
    ENOMEM,
    EACCES,
    EFAULT,
    ENOTBLK,
    EBUSY,
    EEXIST,
    EXDEV,
    ENODEV,
    ENOTDIR,
    EISDIR,
    EINVAL,
    ENFILE,
    EMFILE,
    ENOTTY,
    ETXTBSY,
    EFBIG,
    ENOSPC,
    ESPIPE,
    EROFS,
    EMLINK,
    EPIPE,
    EDOM,
    ERANGE,
    EDEADLK,
    ENAMETOOLONG,
    ENOLCK,
    ENOSYS,
    ENOTEMPTY,
    ELOOP,
    ENOMSG,
    EIDRM,
    ENOSTR,
    ENODATA,
    ETIME,
    ENOSR,
    ENOLINK,
    EPROTO,
    EBADMSG,
    EOVERFLOW,
    EILSEQ,
    EUSERS,
    ENOTSOCK,
    EMSGSIZE,
    EOPNOTSUPP,
    ENOBUFS,
    ETIMEDOUT,
    ECONNREFUSED,
    EALREADY,
    EINPROGRESS,
    ESTALE,
    EDQUOT,
    ECANCELED,
    EOWNERDEAD,
    ENOTRECOVERABLE,
    ENOMEDIUM,
    EMEDIUMTYPE,
    EREMOTEIO,
    EKEYEXPIRED,
    EBADFD,
);

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A file just written and synced is cached; after DONTNEED it is not. cachestat and the
    /// mincore fallback agree. Uses /var/tmp: tmpfs pages cannot be dropped.
    #[test]
    fn cached_bytes_sees_the_page_cache() {
        let p = std::path::Path::new("/var/tmp").join(format!("fiox-cache-{}", std::process::id()));
        std::fs::write(&p, vec![5u8; 1 << 20]).unwrap();
        let f = File::open(&p).unwrap();
        let fd = f.as_raw_fd();
        fdatasync(File::options().write(true).open(&p).unwrap().as_raw_fd()).unwrap();
        let (cached, _) = cached_bytes(fd, 0, 1 << 20).unwrap();
        assert_eq!(cached, 1 << 20);
        assert_eq!(mincore_bytes(fd, 0, 1 << 20).unwrap(), 1 << 20);
        assert_eq!(cached_bytes(fd, 4096, 8192).unwrap().0, 8192);
        fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED).unwrap();
        assert_eq!(cached_bytes(fd, 0, 1 << 20).unwrap().0, 0);
        assert_eq!(mincore_bytes(fd, 0, 1 << 20).unwrap(), 0);
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn errno_names_round_trip() {
        assert_eq!(errno_name(libc::EINVAL), "EINVAL");
        assert_eq!(errno_name(libc::EAGAIN), "EAGAIN");
        assert_eq!(errno_name(libc::EOPNOTSUPP), "EOPNOTSUPP");
        assert_eq!(errno_name(100_000), "E?");
        assert_eq!(errno_from_name("eio"), Some(libc::EIO));
        assert_eq!(errno_from_name("ENOPE"), None);
    }

    #[test]
    fn open_spec_from_job() {
        let mut job = JobSpec::default();
        let s = OpenSpec::from_job(&job);
        assert!(!s.write && !s.create);
        assert_eq!(s.flags() & libc::O_ACCMODE, libc::O_RDONLY);
        job.rw.mode = fiox_job::spec::RwMode::RandWrite;
        job.direct = true;
        job.sync = SyncMode::Dsync;
        let s = OpenSpec::from_job(&job);
        let f = s.flags();
        assert_eq!(f & libc::O_ACCMODE, libc::O_RDWR);
        assert_ne!(f & libc::O_DIRECT, 0);
        assert_ne!(f & libc::O_CREAT, 0);
        assert_eq!(f & libc::O_SYNC, libc::O_DSYNC);
        assert_eq!(s.describe(), "O_RDWR|O_CREAT|O_DIRECT|O_DSYNC");
    }

    #[test]
    fn open_missing_file_names_it() {
        let spec = OpenSpec {
            write: false,
            create: false,
            direct: false,
            atomic: false,
            sync: SyncMode::None,
        };
        let e = open_file(Path::new("/nonexistent-fiox/x"), &spec).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("/nonexistent-fiox/x"), "{msg}");
        assert!(msg.contains("O_RDONLY"), "{msg}");
    }

    #[test]
    fn o_direct_refused_by_the_filesystem_is_explained() {
        // procfs has no direct I/O on any kernel (tmpfs accepts O_DIRECT since Linux 6.6).
        let spec = OpenSpec {
            write: false,
            create: false,
            direct: true,
            atomic: false,
            sync: SyncMode::None,
        };
        let e = open_file(Path::new("/proc/self/status"), &spec).unwrap_err();
        assert!(matches!(e, EngineError::DirectUnsupported(_)), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("direct=1 is not supported by the filesystem of /proc/self/status"),
            "{msg}"
        );
    }

    /// Read-only ioctls on a block device the test makes (a loop device over an 8 MiB file, with
    /// a 4 KiB logical block size): BLKGETSIZE64, fstat's size and sysfs's agree, and BLKSSZGET
    /// reports the block size it was bound with. The machine's own disks are not looked at.
    #[test]
    fn block_device_size_and_sector_size() {
        use fiox_guard::loopdev;
        if !crate::test_need::loop_devices() {
            return;
        }
        let img = Path::new("/var/tmp").join(format!("fiox-blksize-{}", std::process::id()));
        let backing = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&img)
            .unwrap();
        backing.set_len(8 << 20).unwrap();
        let how = loopdev::Bind {
            autoclear: true,
            block_size: Some(4096),
            ..Default::default()
        };
        let bound = loopdev::attach(&backing, &img, &how);
        // The device holds the file: its name can go now (nothing is left if an assert fails;
        // autoclear detaches the device when its last descriptor closes).
        std::fs::remove_file(&img).unwrap();
        let (n, bound) = bound.unwrap();
        let spec = OpenSpec {
            write: false,
            create: false,
            direct: false,
            atomic: false,
            sync: SyncMode::None,
        };
        let dev = loopdev::node(n);
        let f = open_file(&dev, &spec).unwrap();
        let fd = f.as_raw_fd();
        assert!(is_block_device(fd).unwrap());
        assert!(!is_block_device(backing.as_raw_fd()).unwrap());
        let size = block_device_size(fd).unwrap();
        assert_eq!(size, 8 << 20, "{}", dev.display());
        assert_eq!(file_size(fd).unwrap(), size);
        let sysfs = format!("/sys/block/loop{n}/size");
        let sectors: u64 = std::fs::read_to_string(&sysfs)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(size, sectors * 512, "{sysfs}");
        assert_eq!(logical_block_size(fd).unwrap(), 4096);
        drop((f, bound));
    }

    #[test]
    fn size_fallocate_truncate_trim_on_a_file() {
        let dir = std::env::temp_dir().join(format!("fiox-sys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let spec = OpenSpec {
            write: true,
            create: true,
            direct: false,
            atomic: false,
            sync: SyncMode::None,
        };
        // The runner creates a job's new file through the guard first; the open never does.
        assert!(
            open_file(&path, &spec).is_err(),
            "no O_CREAT through open_file"
        );
        fiox_guard::named::create_new(&path, fiox_guard::Layout::Complete).unwrap();
        let f = open_file(&path, &spec).unwrap();
        let fd = f.as_raw_fd();
        assert!(!is_block_device(fd).unwrap());
        fallocate(fd, FallocateMode::Posix, 0, 65536).unwrap();
        assert_eq!(file_size(fd).unwrap(), 65536);
        ftruncate(fd, 8192).unwrap();
        assert_eq!(file_size(fd).unwrap(), 8192);
        fallocate(fd, FallocateMode::Truncate, 0, 16384).unwrap();
        assert_eq!(file_size(fd).unwrap(), 16384);
        fsync(fd).unwrap();
        fdatasync(fd).unwrap();
        fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED).unwrap();
        assert_eq!(
            trim(fd, 4096, 4096).unwrap_err().raw_os_error(),
            Some(libc::ENOTTY),
            "a regular file is not discarded (fio 3.33's os_trim)"
        );
        assert!(
            logical_block_size(fd).is_err(),
            "BLKSSZGET on a regular file"
        );
        drop(f);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
