//! The files a job names for its I/O (`filename`, `directory` with `filename_format`, a
//! device): the user named the path, so the open follows links as open(2) does (a
//! /dev/disk/by-id link, a link to one's own image), and what may be written is decided on the
//! open descriptor afterwards (the mark, a filesystem signature, a loop device's backing file).
//! But nothing is ever created or truncated by such an open: a new file is made first by
//! [`create_new`], exclusively and without following a link at the last component (a dangling
//! link planted there would otherwise create its target), and [`open`] drops O_CREAT and
//! O_TRUNC.

use crate::dir::Dir;
use crate::error::Result;
use crate::mark::Layout;
use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::path::Path;

/// Create the job's file `path` where nothing is (not even a link), read-write, marked as
/// fiox's with `layout`. None when something is already there.
pub fn create_new(path: &Path, layout: Layout) -> Result<Option<File>> {
    let (dir, name) = Dir::open_parent(path)?;
    match dir.create_file(&name, 0o644, layout) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.is_exists() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Open an existing file the job names, with `flags` less O_CREAT and O_TRUNC (O_CLOEXEC is
/// added; O_EXCL alone claims a block device).
pub fn open(path: &Path, flags: libc::c_int) -> io::Result<File> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    open_c(&c, flags)
}

/// [`open`] of a NUL-terminated path.
pub fn open_c(path: &CStr, flags: libc::c_int) -> io::Result<File> {
    // O_EXCL stays: without O_CREAT it claims a block device exclusively.
    let flags = flags & !(libc::O_CREAT | libc::O_TRUNC);
    crate::sys::open_path(path, flags).map(File::from)
}

/// A second open file description of the file open as `file`, with `flags` (O_APPEND for a
/// log that clones share): opened through /proc/thread-self/fd, so it is the same inode
/// whatever happened to its path since.
pub fn reopen(file: &impl std::os::fd::AsRawFd, flags: libc::c_int) -> io::Result<File> {
    open(Path::new(&crate::sys::fd_path(file.as_raw_fd())), flags)
}

/// Remove the file the user named to be removed when it appears (fio's `--trigger-file`):
/// the name itself (a link is removed as a link, never followed), if it is the same inode
/// between the check and the removal. Returns whether something was there. A directory is
/// there (the trigger fires) but stays, as fio's unlink(2) leaves it: EISDIR.
pub fn remove_trigger(path: &Path) -> Result<bool> {
    let (dir, name) = Dir::open_parent(path)?;
    match dir.stat(&name)? {
        Some(st) if st.kind == crate::Kind::Dir => Err(crate::GuardError::io(
            "unlink",
            path,
            io::Error::from_raw_os_error(libc::EISDIR),
        )),
        Some(st) => {
            dir.remove_if(&name, &st.id)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Remove the file fiox made at `path` (for instance a `mem=mmapshared:FILE` file when its
/// mapping goes), if it is still the inode `id`. Returns whether it was removed.
pub fn remove_made(path: &Path, id: &crate::Identity) -> Result<bool> {
    let (dir, name) = Dir::open_parent(path)?;
    dir.remove_if(&name, id)
}

/// Remove a stale unix socket at `path` before binding there (as fio does), but only a
/// stale socket of root's or the running user's: a user's file, a link, another user's
/// socket, or a socket some program still listens on (a connect succeeds) stays, and the
/// bind then fails (EADDRINUSE) instead of cutting that program off.
pub fn remove_stale_socket(path: &Path) -> Result<bool> {
    let (dir, name) = Dir::open_parent(path)?;
    match dir.stat(&name)? {
        Some(st)
            if st.kind == crate::Kind::Socket && (st.uid == 0 || st.uid == crate::sys::euid()) =>
        {
            // Live: someone accepts connections there. ECONNREFUSED: nobody listens.
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Ok(false);
            }
            dir.remove_if(&name, &st.id)
        }
        _ => Ok(false),
    }
}

/// The identity of the unix socket fiox just bound at `path`: a socket of the running user's
/// at that name (a link is not followed), so the engine that bound it removes that socket and
/// no other when it is done; another user cannot make a socket of ours to be taken for it.
pub fn bound_socket(path: &Path) -> Result<Option<crate::Identity>> {
    let (dir, name) = Dir::open_parent(path)?;
    Ok(dir
        .stat(&name)?
        .filter(|st| st.kind == crate::Kind::Socket && st.uid == crate::sys::euid())
        .map(|st| st.id))
}

/// Whether the file open as `file` holds data at or after byte `from`: asked of the
/// descriptor itself (SEEK_DATA), so the answer is about the inode the job writes, not
/// whatever a path names now. A file of holes only (`truncate -s 8M f`, or unwritten
/// extents, which read as zeros) holds none, and writing it destroys nothing. Where the
/// filesystem cannot tell (EINVAL, an old kernel) every byte counts as data (the safe side).
pub fn holds_data(file: &File, from: u64) -> io::Result<bool> {
    use std::os::fd::AsFd;
    match crate::sys::seek_data(file.as_fd(), from) {
        Ok(found) => Ok(found.is_some()),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(true),
        Err(e) => Err(e),
    }
}

/// ftruncate(2) of a file the job holds open, already checked on its descriptor (the
/// ftruncate engine's I/O, preallocation by truncation, an e4defrag donor).
#[inline]
pub fn set_len(fd: std::os::fd::RawFd, len: u64) -> io::Result<()> {
    crate::sys::ftruncate(fd, len)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the test builds its own scratch files
mod tests {
    /// N8: the net engine's reader unlinked another program's live socket before its bind.
    #[test]
    fn a_live_socket_stays_and_a_stale_one_goes() {
        let base = std::env::temp_dir().join(format!("fiox-sock-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let p = base.join("svc.sock");
        let live = std::os::unix::net::UnixListener::bind(&p).unwrap();
        assert!(!super::remove_stale_socket(&p).unwrap());
        assert!(p.exists(), "a live socket was removed");
        drop(live); // the name stays, nobody listens: stale
        assert!(super::remove_stale_socket(&p).unwrap());
        assert!(!p.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// N8: the socket a reader bound is removed by identity: a socket put in its place since
    /// (another program's, bound after a rename of ours) stays.
    #[test]
    fn only_the_socket_fiox_bound_is_removed() {
        let base = std::env::temp_dir().join(format!("fiox-bound-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let p = base.join("s.sock");
        let ours = std::os::unix::net::UnixListener::bind(&p).unwrap();
        let id = super::bound_socket(&p).unwrap().expect("our socket");
        std::fs::rename(&p, base.join("moved.sock")).unwrap();
        let theirs = std::os::unix::net::UnixListener::bind(&p).unwrap();
        assert!(super::remove_made(&p, &id).is_err());
        assert!(p.exists(), "another socket at the name stays");
        std::fs::remove_file(&p).unwrap();
        std::fs::rename(base.join("moved.sock"), &p).unwrap();
        assert!(super::remove_made(&p, &id).unwrap());
        assert!(!p.exists());
        drop((ours, theirs));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// N7: `--trigger-file=DIR` removed an empty directory; fio's unlink(2) fails with EISDIR
    /// and leaves it.
    #[test]
    fn a_trigger_that_is_a_directory_fires_but_stays() {
        let base = std::env::temp_dir().join(format!("fiox-trigger-{}", std::process::id()));
        let d = base.join("tdir");
        std::fs::create_dir_all(&d).unwrap();
        let e = super::remove_trigger(&d).unwrap_err();
        assert_eq!(e.os_error(), Some(libc::EISDIR));
        assert!(d.is_dir(), "the directory was removed");
        let f = base.join("go");
        std::fs::write(&f, b"").unwrap();
        assert!(super::remove_trigger(&f).unwrap());
        assert!(!f.exists());
        assert!(!super::remove_trigger(&f).unwrap());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_file_of_holes_holds_no_data() {
        let base = std::env::temp_dir().join(format!("fiox-holes-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let p = base.join("f");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(8 << 20).unwrap();
        assert!(
            !super::holds_data(&f, 0).unwrap(),
            "truncate -s 8M holds no data"
        );
        use std::os::unix::fs::FileExt;
        f.write_all_at(b"data", 4 << 20).unwrap();
        assert!(super::holds_data(&f, 0).unwrap());
        assert!(super::holds_data(&f, 4 << 20).unwrap());
        // Past the data, in the trailing hole: nothing (a block-sized hole at least).
        assert!(!super::holds_data(&f, 6 << 20).unwrap());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
