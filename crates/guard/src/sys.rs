//! The guard's system calls, each a thin safe wrapper over one `*at` call on a directory
//! descriptor (or on a descriptor itself): every `unsafe` block of the crate is here, with its
//! SAFETY note. Names are single path components or empty (the descriptor itself); the
//! wrappers return `io::Error`, and callers add what was being done to which path.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

/// statx's mask bits that libc may not name on every target.
pub const STATX_BTIME: u32 = 0x800;
pub const STATX_MNT_ID: u32 = 0x1000;
/// stx_attributes: the path is the root of a mount.
pub const STATX_ATTR_MOUNT_ROOT: u64 = 0x2000;

fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// openat(2) relative to `dir`; O_CLOEXEC is always added.
pub fn openat(dir: BorrowedFd, name: &OsStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let c = cstr(name)?;
    // SAFETY: `c` is NUL-terminated and outlives the call; the kernel returns a new descriptor
    // or -1, and a new descriptor is owned by nobody else.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            flags | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    // SAFETY: fd >= 0 is a descriptor this call just opened.
    check(fd).map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// open(2) of a path (the walk's starting points, and the files a job names).
pub fn open_path(path: &CStr, flags: i32) -> io::Result<OwnedFd> {
    // SAFETY: `path` is NUL-terminated; a new descriptor is returned or -1.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
    // SAFETY: fd >= 0 is a descriptor this call just opened.
    check(fd).map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// statx(2) of `name` in `dir` (empty name: `dir` itself), never following a symbolic link.
pub fn statx(dir: BorrowedFd, name: &OsStr) -> io::Result<libc::statx> {
    statx_with(dir, name, libc::AT_STATX_SYNC_AS_STAT)
}

/// [`statx`] from what the kernel holds, without asking the filesystem (AT_STATX_DONT_SYNC):
/// for a FUSE mount's root, whose server may not serve yet (just mounted) or any more (dead);
/// identity, type and mount id never change anyway.
pub fn statx_cached(dir: BorrowedFd, name: &OsStr) -> io::Result<libc::statx> {
    statx_with(dir, name, libc::AT_STATX_DONT_SYNC)
}

fn statx_with(dir: BorrowedFd, name: &OsStr, sync: i32) -> io::Result<libc::statx> {
    let c = cstr(name)?;
    let mut flags = libc::AT_SYMLINK_NOFOLLOW | sync;
    if name.is_empty() {
        flags |= libc::AT_EMPTY_PATH;
    }
    // SAFETY: an all-zero statx is a valid value of this plain C struct.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let mask = libc::STATX_BASIC_STATS | STATX_BTIME | STATX_MNT_ID;
    // SAFETY: `c` is NUL-terminated; `st` is valid for writes of one statx.
    check(unsafe { libc::statx(dir.as_raw_fd(), c.as_ptr(), flags, mask, &mut st) })?;
    #[cfg(test)]
    if HIDE_MNT_ID.with(|h| h.get()) {
        st.stx_mask &= !STATX_MNT_ID;
    }
    // Kernels before 5.8 (or statx emulated under a seccomp filter) report no mount id: ask
    // name_to_handle_at(2), which has given the same id since 2.6.39. Where that fails too the
    // id stays unknown, and the removals refuse (they never guess).
    if st.stx_mask & STATX_MNT_ID == 0 {
        if let Ok(id) = handle_mount_id(dir, &c, flags & !sync) {
            st.stx_mnt_id = id;
            st.stx_mask |= STATX_MNT_ID;
        }
    }
    Ok(st)
}

#[cfg(test)]
thread_local! {
    /// Fault injection for tests: statx on this thread reports no mount id, as before 5.8.
    pub(crate) static HIDE_MNT_ID: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The mount id of `name` in `dir` per name_to_handle_at(2) (`flags`: AT_EMPTY_PATH,
/// AT_SYMLINK_NOFOLLOW as statx got them).
fn handle_mount_id(dir: BorrowedFd, name: &std::ffi::CStr, flags: i32) -> io::Result<u64> {
    // struct file_handle: handle_bytes, handle_type, then MAX_HANDLE_SZ (128) bytes.
    #[repr(C)]
    struct Handle {
        bytes: u32,
        kind: i32,
        data: [u8; 128],
    }
    let mut h = Handle {
        bytes: 128,
        kind: 0,
        data: [0; 128],
    };
    let mut mount_id: libc::c_int = 0;
    let flags = flags & (libc::AT_EMPTY_PATH | libc::AT_SYMLINK_FOLLOW);
    // SAFETY: `name` is NUL-terminated, `h` is a file_handle with room for 128 bytes and
    // `mount_id` is valid for one int; the kernel writes only within them.
    let r = unsafe {
        libc::syscall(
            libc::SYS_name_to_handle_at,
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut h as *mut Handle,
            &mut mount_id as *mut libc::c_int,
            flags,
        )
    };
    check(r as i32)?;
    Ok(mount_id as u64)
}

/// mkdirat(2).
pub fn mkdirat(dir: BorrowedFd, name: &OsStr, mode: u32) -> io::Result<()> {
    let c = cstr(name)?;
    // SAFETY: `c` is NUL-terminated and outlives the call.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), mode as libc::mode_t) }).map(|_| ())
}

/// unlinkat(2); `dir_entry` removes an (empty) directory.
pub fn unlinkat(dir: BorrowedFd, name: &OsStr, dir_entry: bool) -> io::Result<()> {
    let c = cstr(name)?;
    let flags = if dir_entry { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: `c` is NUL-terminated and outlives the call.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), flags) }).map(|_| ())
}

/// renameat2(2) within one directory; `noreplace` fails with EEXIST instead of replacing.
pub fn renameat(dir: BorrowedFd, from: &OsStr, to: &OsStr, noreplace: bool) -> io::Result<()> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    let flags = if noreplace { libc::RENAME_NOREPLACE } else { 0 };
    let d = dir.as_raw_fd();
    // SAFETY: both names are NUL-terminated and outlive the call.
    check(unsafe { libc::renameat2(d, f.as_ptr(), d, t.as_ptr(), flags) }).map(|_| ())
}

/// readlinkat(2) of the symbolic link open as `link` (an O_PATH|O_NOFOLLOW descriptor).
pub fn readlink_fd(link: BorrowedFd) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: the empty name is NUL-terminated; buf is valid for buf.len() bytes of writes.
    let n = unsafe {
        libc::readlinkat(
            link.as_raw_fd(),
            c"".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
}

const XATTR_MAX: usize = 256;

/// fsetxattr(2) on an open (not O_PATH) descriptor.
pub fn fset_xattr(fd: BorrowedFd, name: &CStr, value: &[u8]) -> io::Result<()> {
    // SAFETY: NUL-terminated name; value is valid for value.len() bytes the kernel only reads.
    let r = unsafe {
        libc::fsetxattr(
            fd.as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    check(r).map(|_| ())
}

/// fgetxattr(2) on an open (not O_PATH) descriptor.
pub fn fget_xattr(fd: BorrowedFd, name: &CStr) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; XATTR_MAX];
    // SAFETY: NUL-terminated name; buf is valid for buf.len() bytes of writes.
    let r = unsafe {
        libc::fgetxattr(
            fd.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(r as usize);
    Ok(buf)
}

/// fstatfs(2): the filesystem's magic number.
pub fn fs_magic(fd: BorrowedFd) -> io::Result<i64> {
    // SAFETY: an all-zero statfs is a valid value of this plain C struct.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is valid for writes of one statfs.
    check(unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) })?;
    Ok(st.f_type as i64)
}

/// The names in the directory open as `dir` (a readable, not O_PATH, descriptor), without
/// "." and "..". The descriptor is duplicated for the walk, so `dir` stays usable.
pub fn read_names(dir: BorrowedFd) -> io::Result<Vec<std::ffi::OsString>> {
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor or -1.
    let dup = check(unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) })?;
    // SAFETY: `dup` is a descriptor we own; fdopendir takes it over (closed by closedir).
    let d = unsafe { libc::fdopendir(dup) };
    if d.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `dup` is still ours to close.
        unsafe { libc::close(dup) };
        return Err(e);
    }
    // SAFETY: rewinding a DIR* we just opened.
    unsafe { libc::rewinddir(d) };
    let mut names = Vec::new();
    let result = loop {
        // SAFETY: errno is thread-local; clearing it tells end-of-directory from an error.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: `d` is a valid DIR* until closedir below.
        let ent = unsafe { libc::readdir64(d) };
        if ent.is_null() {
            let e = io::Error::last_os_error();
            break if e.raw_os_error().unwrap_or(0) == 0 {
                Ok(())
            } else {
                Err(e)
            };
        }
        // SAFETY: d_name of a returned entry is a NUL-terminated string valid until the next
        // readdir on `d`; it is copied before that.
        let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) };
        let b = name.to_bytes();
        if b != b"." && b != b".." {
            names.push(OsStr::from_bytes(b).to_os_string());
        }
    };
    // SAFETY: `d` is valid and closed once.
    unsafe { libc::closedir(d) };
    result.map(|()| names)
}

/// The path naming exactly the inode open as `fd` for calls that take only paths (mount,
/// umount, mkfs): the calling thread's /proc entry for the descriptor.
pub fn fd_path(fd: RawFd) -> String {
    format!("/proc/thread-self/fd/{fd}")
}

/// mount(2) on `target` (usually an [`fd_path`]).
pub fn mount(
    src: &OsStr,
    target: &OsStr,
    fstype: &OsStr,
    flags: libc::c_ulong,
    data: &OsStr,
) -> io::Result<()> {
    let (s, t, ty, d) = (cstr(src)?, cstr(target)?, cstr(fstype)?, cstr(data)?);
    let data_ptr = if data.is_empty() {
        std::ptr::null()
    } else {
        d.as_ptr().cast()
    };
    // SAFETY: every string is NUL-terminated and outlives the call; data is NULL or a string.
    check(unsafe { libc::mount(s.as_ptr(), t.as_ptr(), ty.as_ptr(), flags, data_ptr) }).map(|_| ())
}

/// umount2(2) of `target`.
pub fn umount(target: &OsStr, flags: i32) -> io::Result<()> {
    let t = cstr(target)?;
    // SAFETY: `t` is NUL-terminated and outlives the call.
    check(unsafe { libc::umount2(t.as_ptr(), flags) }).map(|_| ())
}

/// The effective user id (whose symbolic links the guard follows, beside root's).
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// ftruncate(2).
#[inline]
pub fn ftruncate(fd: RawFd, len: u64) -> io::Result<()> {
    let len = libc::off_t::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    // SAFETY: a plain system call on a descriptor; an invalid one fails with EBADF.
    check(unsafe { libc::ftruncate(fd, len) }).map(|_| ())
}

/// flock(LOCK_EX|LOCK_NB): Ok(false) when another open file description holds the lock.
pub fn flock_exclusive(f: &impl AsRawFd) -> io::Result<bool> {
    // SAFETY: a plain system call on a descriptor.
    match check(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => Ok(false),
        Err(e) => Err(e),
    }
}

/// flock(LOCK_UN): release this open file description's lock.
pub fn flock_unlock(f: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: a plain system call on a descriptor.
    check(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_UN) }).map(|_| ())
}

/// Clear O_NONBLOCK on an open descriptor.
pub fn set_blocking(f: &impl AsRawFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL take no pointers; an invalid descriptor fails with EBADF.
    let flags = check(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) })?;
    // SAFETY: as above.
    check(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) })
        .map(|_| ())
}

/// This process's id.
pub fn getpid() -> u32 {
    // SAFETY: getpid has no preconditions and cannot fail.
    unsafe { libc::getpid() as u32 }
}

/// The path naming the inode open as `fd` for a child process this process starts (mkfs): the
/// process's (not the thread's) /proc entry for the descriptor, valid while `fd` stays open.
pub fn proc_fd_path(fd: RawFd) -> String {
    format!("/proc/{}/fd/{fd}", getpid())
}

/// An ioctl whose argument is a plain integer (or unused). Returns the ioctl's result.
pub fn ioctl_arg(fd: BorrowedFd, request: libc::c_ulong, arg: libc::c_ulong) -> io::Result<i32> {
    // SAFETY: `fd` is live for the borrow; the requests used with this wrapper (the loop
    // driver's LOOP_CTL_GET_FREE, LOOP_SET_FD, LOOP_CLR_FD, LOOP_SET_DIRECT_IO,
    // LOOP_SET_BLOCK_SIZE) take an integer argument, never a pointer.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) })
}

/// An ioctl whose argument points at a `T` the kernel reads (`write == false`) or fills.
///
/// # Safety
/// `request` must be an ioctl whose argument is a pointer to exactly one `T` (a plain C
/// struct with the kernel's layout).
pub unsafe fn ioctl_ptr<T>(fd: BorrowedFd, request: libc::c_ulong, arg: &mut T) -> io::Result<()> {
    // SAFETY: the caller promises `request` takes a pointer to one `T`; `arg` is valid for
    // reads and writes of one `T` during the call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg as *mut T) }).map(|_| ())
}

/// pidfd_open(2): a descriptor that names process `pid` for as long as it is open (a later
/// process reusing the pid is not it).
pub fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: fd >= 0 is a descriptor this call just opened.
    check(fd as libc::c_int).map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// pidfd_send_signal(2): `sig` to the process `pidfd` names.
pub fn pidfd_send_signal(pidfd: BorrowedFd, sig: i32) -> io::Result<()> {
    // SAFETY: a live pidfd, a signal number, no siginfo (NULL) and no flags.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    check(r as libc::c_int).map(|_| ())
}

/// lseek(fd, from, SEEK_DATA): the offset of the first data at or after `from`, None when
/// there is none (ENXIO: only holes, or `from` at or past the end).
pub fn seek_data(fd: BorrowedFd, from: u64) -> io::Result<Option<u64>> {
    let off = libc::off_t::try_from(from).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    // SAFETY: a plain system call on a descriptor live for the borrow; it moves only this
    // descriptor's file offset (fiox's I/O uses positioned reads and writes).
    let r = unsafe { libc::lseek(fd.as_raw_fd(), off, libc::SEEK_DATA) };
    if r >= 0 {
        return Ok(Some(r as u64));
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENXIO) => Ok(None),
        _ => Err(e),
    }
}

/// Have `cmd`'s child get `sig` when the thread that spawns it ends (prctl PR_SET_PDEATHSIG,
/// set in the child between fork and exec), and fail the spawn with ESRCH when the parent
/// died before that took effect (the child was then already adopted: no signal would come).
pub fn die_with_parent(cmd: &mut std::process::Command, sig: i32) {
    use std::os::unix::process::CommandExt;
    let parent = getpid();
    let hook = move || -> io::Result<()> {
        // SAFETY: prctl(PR_SET_PDEATHSIG) takes a signal number by value and borrows nothing.
        check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong) })?;
        // SAFETY: getppid has no preconditions and cannot fail.
        if unsafe { libc::getppid() } as u32 != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    };
    // SAFETY: the hook runs in the child between fork and exec, where only async-signal-safe
    // work is allowed: it makes two system calls (prctl, getppid), allocates nothing (the
    // errors are raw errno values, `parent` a copied integer) and takes no lock.
    unsafe {
        cmd.pre_exec(hook);
    }
}
