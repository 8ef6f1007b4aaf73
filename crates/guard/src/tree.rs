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

/// Empty `dir`, staying on the mount `mnt`.
fn empty(dir: &Dir, mnt: Option<u64>) -> Result<()> {
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
