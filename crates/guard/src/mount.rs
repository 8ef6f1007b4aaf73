//! Mounting onto, and unmounting from, directories fiox made and holds by descriptor. A mount
//! is made on the very directory held (through /proc/thread-self/fd, not its path), and
//! recorded by the mount id the kernel gives it; an unmount opens the name in its parent
//! without following a link, checks that it is the root of that very mount, and only then
//! unmounts (the window: a rename inside the parent between the check and umount2).

use crate::dir::Dir;
use crate::error::{GuardError, Result};
use crate::sys;
use std::ffi::OsStr;
use std::os::fd::{AsFd, AsRawFd};

/// What to mount: a filesystem type, a source (a device path or a name for tmpfs), flags and
/// the filesystem's options.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    pub fstype: &'a str,
    pub source: &'a OsStr,
    pub flags: libc::c_ulong,
    pub data: &'a str,
}

/// Mount `what` on the directory `name` in `parent`; returns the new mount's id.
pub fn mount_on(parent: &Dir, name: &OsStr, what: &Source) -> Result<u64> {
    let target = parent.subdir(name)?;
    let path = parent.join(name);
    sys::mount(
        what.source,
        target.fd_path().as_os_str(),
        OsStr::new(what.fstype),
        what.flags,
        OsStr::new(what.data),
    )
    .map_err(|e| GuardError::io("mount", &path, e))?;
    // Not asking the filesystem: a FUSE server may not serve before this returns.
    let now = parent.subdir_cached(name)?;
    match (now.stat_self().mount_root, now.stat_self().mnt_id) {
        (true, Some(id)) if Some(id) != target.stat_self().mnt_id => Ok(id),
        _ => Err(GuardError::refused(
            "use",
            &path,
            "the mount fiox just made is not where fiox made it",
        )),
    }
}

/// Unmount the mount `mnt_id` from the directory `name` in `parent`, if that is still where
/// it is mounted; `lazy` detaches it (MNT_DETACH). Returns false when nothing is mounted
/// there any more.
pub fn unmount(parent: &Dir, name: &OsStr, mnt_id: u64, lazy: bool) -> Result<bool> {
    let path = parent.join(name);
    {
        // Not asking the filesystem: a dead FUSE server's mount must still come off.
        let at = match parent.subdir_cached(name) {
            Ok(d) => d,
            Err(e) if e.is_not_found() => return Ok(false),
            Err(e) => return Err(e),
        };
        let st = at.stat_self();
        if !st.mount_root || st.mnt_id.is_none() {
            return Ok(false);
        }
        if st.mnt_id != Some(mnt_id) {
            return Err(GuardError::refused(
                "unmount",
                &path,
                "the mount there is not the one fiox made",
            ));
        }
        // `at` closes here: an open descriptor would keep the mount busy.
    }
    let mut target = std::ffi::OsString::from(sys::fd_path(parent.as_fd().as_raw_fd()));
    target.push("/");
    target.push(name);
    let flags = libc::UMOUNT_NOFOLLOW | if lazy { libc::MNT_DETACH } else { 0 };
    sys::umount(&target, flags).map_err(|e| GuardError::io("unmount", &path, e))?;
    Ok(true)
}
