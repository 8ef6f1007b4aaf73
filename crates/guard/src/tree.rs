//! Removing a directory tree fiox made (a testbed's directory, a temporary directory): the
//! top must be the very directory fiox recorded (its identity), the walk goes by directory
//! descriptors (a link inside is removed as a link, never followed), and it never crosses into
//! another mount: a mount id that differs from the top's (a bind mount of the same filesystem
//! included, which `st_dev` alone misses) stops the removal with a refusal and touches nothing
//! below it.

use crate::dir::Dir;
use crate::error::{GuardError, Result};
use crate::ident::{Identity, Kind};
use std::ffi::OsStr;

/// Remove the directory `name` in `parent` and everything in it, if it is still the directory
/// `expect`. Returns false when nothing was there.
pub fn remove_tree(parent: &Dir, name: &OsStr, expect: &Identity) -> Result<bool> {
    let Some(st) = parent.stat(name)? else {
        return Ok(false);
    };
    if st.id != *expect || st.kind != Kind::Dir {
        return Err(GuardError::refused(
            "remove",
            &parent.join(name),
            "it is no longer the directory fiox made (it was replaced)",
        ));
    }
    let top = parent.subdir(name)?;
    if top.stat_self().id != *expect {
        return Err(GuardError::refused(
            "remove",
            &parent.join(name),
            "it was replaced while fiox opened it",
        ));
    }
    empty(&top, top.stat_self().mnt_id)?;
    parent.remove_if(name, expect)
}

/// Empty `dir`, staying on the mount `mnt`. Without a mount id (statx and name_to_handle_at
/// both gave none) nothing is removed: fiox could not tell a bind mount from a directory.
fn empty(dir: &Dir, mnt: Option<u64>) -> Result<()> {
    if mnt.is_none() || dir.stat_self().mnt_id.is_none() {
        return Err(GuardError::refused(
            "remove the contents of",
            dir.path(),
            "the kernel reports no mount id here (statx and name_to_handle_at), so fiox \
             cannot tell whether something is mounted inside; remove it by hand",
        ));
    }
    if dir.stat_self().mount_root || dir.stat_self().mnt_id != mnt {
        return Err(GuardError::refused(
            "remove the contents of",
            dir.path(),
            "another filesystem is mounted there (fiox never deletes across a mount); \
             unmount it first",
        ));
    }
    for name in dir.names()? {
        let Some(st) = dir.stat(&name)? else {
            continue;
        };
        if st.kind == Kind::Dir {
            let sub = dir.subdir(&name)?;
            if sub.stat_self().id != st.id {
                return Err(GuardError::refused(
                    "remove",
                    &dir.join(&name),
                    "it was replaced during the removal",
                ));
            }
            empty(&sub, mnt)?;
        }
        dir.remove_if(&name, &st.id)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the test makes its own scratch tree and mount
mod tests {
    use super::*;

    /// N3: where statx reports no mount id (before 5.8, or under a seccomp filter), removing
    /// a tree deleted the files of a directory bind-mounted inside it. The mount id now comes
    /// from name_to_handle_at, and the bind mount stops the removal.
    #[test]
    fn without_statx_mount_ids_a_bind_mount_still_stops_the_removal() {
        crate::test_need::require_root("bind-mount a directory");
        let base = std::env::temp_dir().join(format!("fiox-tree-n3-{}", std::process::id()));
        let user = base.join("userdata");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(user.join("d1"), b"data").unwrap();
        let parent = Dir::open(&base).unwrap();
        let top = parent.create_dir(OsStr::new("testbed"), 0o755).unwrap();
        let id = top.stat_self().id;
        std::fs::create_dir(base.join("testbed/sub")).unwrap();
        let target = base.join("testbed/sub");
        let c = |p: &std::path::Path| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        let (src, dst) = (c(&user), c(&target));
        // SAFETY: valid NUL-terminated paths; a bind mount the test undoes.
        let r = unsafe {
            libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        crate::sys::HIDE_MNT_ID.with(|h| h.set(true));
        let r = remove_tree(&parent, OsStr::new("testbed"), &id);
        crate::sys::HIDE_MNT_ID.with(|h| h.set(false));
        // SAFETY: the mount this test made.
        unsafe { libc::umount2(dst.as_ptr(), libc::MNT_DETACH) };
        let e = r.unwrap_err().to_string();
        assert!(e.contains("mounted"), "{e}");
        assert!(
            user.join("d1").exists(),
            "the bind-mounted file was removed"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
