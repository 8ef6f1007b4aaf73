//! Which files and directories fiox made: every one carries the extended attribute [`MARK`],
//! whose value binds it to that one inode (device, inode number, birth time) and says whether
//! fiox finished laying it out. A copy (`cp -a`, `rsync -X`: a new inode), a forged value or
//! the plain "1" of older fiox versions does not count. Filesystems without user extended
//! attributes cannot carry the mark: this process remembers what it made there (so a later
//! job of the same run may use it), and a later run treats such files as the user's.

use crate::ident::Identity;
use std::collections::HashMap;
use std::io;
use std::os::fd::AsFd;
use std::sync::{Mutex, MutexGuard};

/// The extended attribute that marks what fiox made.
pub const MARK: &str = "user.fiox.created";
const MARK_C: &std::ffi::CStr = c"user.fiox.created";

/// Whether fiox finished laying out a file it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Being laid out, or the layout was interrupted (Ctrl-C, crash): lay it out again.
    Partial,
    /// Ready for I/O (or an output fiox wrote whole).
    Complete,
}

/// What a file's mark says.
#[derive(Debug)]
pub enum Mark {
    /// fiox made this very inode.
    Ours(Layout),
    /// No mark: something fiox did not make.
    Unmarked,
    /// A mark that does not belong to this inode: written by an older fiox (value "1"),
    /// copied with the file, or forged.
    Foreign,
    /// The filesystem cannot tell (no user extended attributes).
    Unsupported(io::Error),
}

impl Mark {
    /// Why a file with this mark is not fiox's (for refusals); None when it is.
    pub fn why_not_ours(&self) -> Option<String> {
        match self {
            Mark::Ours(_) => None,
            Mark::Unmarked => Some("fiox did not create it".into()),
            Mark::Foreign => Some(format!(
                "its {MARK} mark does not belong to this file (marked by an older fiox or \
                 copied, e.g. with cp -a or rsync -X), so fiox cannot tell it created it"
            )),
            Mark::Unsupported(e) => Some(format!(
                "fiox cannot tell whether it created it: the filesystem does not support the \
                 extended attribute {MARK} ({e})"
            )),
        }
    }

    pub fn is_ours(&self) -> bool {
        matches!(self, Mark::Ours(_))
    }
}

fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTSUP) | Some(libc::EPERM))
}

fn mark_prefix(id: &Identity) -> String {
    let (dev, ino) = id.dev_ino();
    let btime = id.btime().map_or("-".to_string(), |b| b.to_string());
    format!("v2:{dev}:{ino}:{btime}:")
}

/// The mark's value for this inode in state `layout`: "v2:dev:ino:btime:state".
fn mark_value(id: &Identity, layout: Layout) -> String {
    let state = match layout {
        Layout::Partial => "partial",
        Layout::Complete => "done",
    };
    format!("{}{state}", mark_prefix(id))
}

/// What a mark read from this inode (or the error reading it) says.
fn judge(id: &Identity, value: io::Result<Vec<u8>>) -> Mark {
    match value {
        Ok(v) => match String::from_utf8_lossy(&v).strip_prefix(&mark_prefix(id)) {
            Some("done") => Mark::Ours(Layout::Complete),
            Some("partial") => Mark::Ours(Layout::Partial),
            _ => Mark::Foreign,
        },
        Err(e) if e.raw_os_error() == Some(libc::ENODATA) => Mark::Unmarked,
        Err(e) if unsupported(&e) => Mark::Unsupported(e),
        // Unreadable attributes: treat as the user's file (the safe side).
        Err(_) => Mark::Unmarked,
    }
}

/// Inodes this process made, with their layout state: known to be fiox's even where the
/// filesystem cannot carry the mark.
/// A map, so that a job of 100,000 files stays linear.
static CREATED: Mutex<Option<HashMap<Identity, Layout>>> = Mutex::new(None);

fn created() -> MutexGuard<'static, Option<HashMap<Identity, Layout>>> {
    CREATED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether this process made the inode, and its layout state.
pub fn created_here(id: &Identity) -> Option<Layout> {
    created().as_ref().and_then(|m| m.get(id).copied())
}

/// Treat the inode `id` as fiox's for this process, without touching it: the user allowed
/// fiox to delete what is at a name now (`--allow-destructive` with filedelete), and this is
/// that very inode; one put there later is not.
pub fn adopt(id: &Identity) {
    created()
        .get_or_insert_with(HashMap::new)
        .entry(*id)
        .or_insert(Layout::Complete);
}

/// The inode is gone: its number may be reused by someone else's file.
pub(crate) fn forget_created(id: &Identity) {
    if let Some(m) = created().as_mut() {
        m.remove(id);
    }
}

/// Mark the inode open as `file` (a regular file or a directory fiox made) with its layout
/// state. Where the filesystem has no user extended attributes it stays unmarked (this process
/// remembers it); other failures are errors.
pub fn mark(file: &impl AsFd, id: &Identity, layout: Layout) -> io::Result<()> {
    created()
        .get_or_insert_with(HashMap::new)
        .insert(*id, layout);
    let value = mark_value(id, layout);
    match crate::sys::fset_xattr(file.as_fd(), MARK_C, value.as_bytes()) {
        Ok(()) => Ok(()),
        Err(e) if unsupported(&e) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The mark of the inode open as `file` (not an O_PATH descriptor), whose identity is `id`.
pub fn mark_of(file: &impl AsFd, id: &Identity) -> Mark {
    if let Some(l) = created_here(id) {
        return Mark::Ours(l);
    }
    judge(id, crate::sys::fget_xattr(file.as_fd(), MARK_C))
}

/// The mark of an open file, its identity read from the descriptor.
pub fn mark_of_file(file: &std::fs::File) -> Mark {
    match file.metadata() {
        Ok(m) => mark_of(file, &Identity::of(&m)),
        Err(_) => Mark::Unmarked,
    }
}

/// Mark an open file fiox created, its identity read from the descriptor.
pub fn mark_file(file: &std::fs::File, layout: Layout) -> io::Result<Identity> {
    let id = Identity::of(&file.metadata()?);
    mark(file, &id, layout)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_binds_its_inode_and_its_state() {
        let id = Identity::from_parts(1, 2, Some(3));
        let other = Identity::from_parts(1, 5, Some(3));
        let v = mark_value(&id, Layout::Partial).into_bytes();
        assert!(matches!(
            judge(&id, Ok(v.clone())),
            Mark::Ours(Layout::Partial)
        ));
        assert!(matches!(judge(&other, Ok(v)), Mark::Foreign));
        assert!(matches!(judge(&id, Ok(b"1".to_vec())), Mark::Foreign));
        let none = Err(io::Error::from_raw_os_error(libc::ENODATA));
        assert!(matches!(judge(&id, none), Mark::Unmarked));
    }
}
