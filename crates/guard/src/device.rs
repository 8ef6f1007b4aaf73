//! Opening device nodes fiox drives with ioctls (/dev/loop-control, /dev/loopN, /dev/fuse):
//! the node is opened read-write in its directory without following a symbolic link, and the
//! open descriptor must be the kind of device asked for (character or block, with the expected
//! major number), so a link or a regular file planted at the name is never written. Opening a
//! device creates nothing; it is here so that every read-write open outside the runner's own
//! target checks goes through the guard. Also the path a child process (mkfs) is given for a
//! file fiox holds open: /proc/PID/fd/N names that very inode, not whatever a path names later.

use crate::dir::{stat_fd, Dir};
use crate::error::{GuardError, Result};
use crate::ident::Kind;
use crate::sys;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

/// The kind of device node expected at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    /// A character device with this major number.
    Char(u32),
    /// A block device with this major number.
    Block(u32),
}

/// Open the device node `path` read-write (not following a link; no O_NONBLOCK, so a server
/// reading /dev/fuse blocks as it should), and check that it is the node `want`.
pub fn open_rw(path: &Path, want: Node) -> Result<File> {
    let (dir, name) = Dir::open_parent(path)?;
    let fd = sys::openat(
        dir.as_fd(),
        &name,
        libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NOCTTY,
        0,
    )
    .map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => GuardError::refused("open", path, "it is a symbolic link"),
        _ => GuardError::io("open", path, e),
    })?;
    let f = File::from(fd);
    let st = stat_fd(&f, path)?;
    let rdev = sys::statx(f.as_fd(), std::ffi::OsStr::new(""))
        .map(|st| crate::ident::Stat::rdev(&st))
        .map_err(|e| GuardError::io("stat", path, e))?;
    let (kind, major) = match want {
        Node::Char(m) => (Kind::Char, m),
        Node::Block(m) => (Kind::Block, m),
    };
    if st.kind != kind || libc::major(rdev) != major {
        return Err(GuardError::refused(
            "open",
            path,
            format!(
                "it is not the device expected ({want:?}) but a {:?}",
                st.kind
            ),
        ));
    }
    Ok(f)
}

/// The path a child process started by this one (mkfs) opens to reach the very inode open
/// as `file`: /proc/PID/fd/N, valid while `file` stays open.
pub fn child_path(file: &File) -> PathBuf {
    PathBuf::from(sys::proc_fd_path(file.as_raw_fd()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_device_asked_for_is_opened() {
        // /dev/null is character device 1:3.
        assert!(open_rw(Path::new("/dev/null"), Node::Char(1)).is_ok());
        let e = open_rw(Path::new("/dev/null"), Node::Block(1)).unwrap_err();
        assert!(e.to_string().contains("not the device expected"), "{e}");
        let e = open_rw(Path::new("/dev/null"), Node::Char(7)).unwrap_err();
        assert!(e.to_string().contains("not the device expected"), "{e}");
        // A link (/proc/self/exe is a symbolic link owned by root... of the kind the walk
        // follows only in the parents) is never opened as the node.
        let e = open_rw(Path::new("/proc/self/exe"), Node::Char(1)).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }

    #[test]
    fn a_child_path_names_the_open_inode() {
        let f = File::open("/proc/self/exe").unwrap();
        let p = child_path(&f);
        let a = std::fs::metadata(&p).unwrap();
        let b = f.metadata().unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()));
    }
}
