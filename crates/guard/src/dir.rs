//! [`Dir`]: a directory held open by descriptor, and every create, open, rename and remove
//! fiox makes inside it. A path is turned into a `Dir` once, component by component, never
//! following a symbolic link unless root or the user running fiox owns it (another local user's
//! link in /tmp is refused, not followed); from then on everything is relative to the
//! descriptor, so a parent directory swapped for a link after the check changes nothing. Names
//! inside a `Dir` are single components: a name with a `/`, `.` or `..` is refused.
//!
//! What a `Dir` will do: create a file or directory only where nothing is (O_EXCL, mkdirat),
//! and mark it as fiox's; open an existing name without following a link; remove or rename a
//! name only after statx on this descriptor proves it is the inode the caller expects. What is
//! left: Linux has no "unlink this name if it is still this inode", so a rename inside this very
//! directory between the proof and the unlinkat (microseconds) can still swap the inode; only
//! someone who may write this directory can do it.

use crate::error::{GuardError, Result};
use crate::ident::{Identity, Kind, Stat};
use crate::mark::{self, Layout, Mark};
use crate::sys;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Symbolic links followed in one walk before giving up (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// A directory held open (O_PATH) by descriptor, with the path it was opened by (for messages).
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
    stat: Stat,
}

impl AsFd for Dir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Refuse a name that is not one plain path component.
fn plain(name: &OsStr, within: &Path) -> Result<()> {
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') || b.contains(&0) {
        return Err(GuardError::refused(
            "use",
            &within.join(name),
            "a name inside a directory must be one plain component (no '/', '.' or '..')",
        ));
    }
    Ok(())
}

/// Whether a symbolic link may be followed: only root's or the running user's own.
fn trusted_link(uid: u32) -> bool {
    uid == 0 || uid == sys::euid()
}

impl Dir {
    /// Open the directory at `path`, component by component (see the module's doc).
    pub fn open(path: &Path) -> Result<Dir> {
        let fd = walk(path).map_err(|e| e.into_error("open directory", path))?;
        let stat = stat_fd(&fd, path)?;
        if stat.kind != Kind::Dir {
            return Err(GuardError::io(
                "open directory",
                path,
                io::Error::from_raw_os_error(libc::ENOTDIR),
            ));
        }
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
            stat,
        })
    }

    /// Open the directory at `path`, first making the missing ones (mode `mode`, each marked
    /// as fiox's) one component at a time below the deepest one that exists; existing
    /// components are walked as [`Dir::open`] walks them.
    pub fn open_or_create(path: &Path, mode: u32) -> Result<Dir> {
        match Dir::open(path) {
            Err(e) if e.is_not_found() => {}
            other => return other,
        }
        let Some(Component::Normal(name)) = path.components().next_back() else {
            return Dir::open(path);
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let made = Dir::open_or_create(parent, mode)?.create_dir(name, mode);
        match made {
            Err(e) if e.is_exists() => Dir::open(path),
            other => other,
        }
    }

    /// The directory holding `path`, and `path`'s last component (refused when it has none:
    /// `/`, `..`, a path ending in `.`).
    pub fn open_parent(path: &Path) -> Result<(Dir, OsString)> {
        let name = match path.components().next_back() {
            Some(Component::Normal(n)) => n.to_os_string(),
            _ => {
                return Err(GuardError::refused(
                    "use",
                    path,
                    "it names no file inside a directory",
                ))
            }
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        Ok((Dir::open(parent)?, name))
    }

    /// Open the directory at `path`, making (and marking) each missing component as
    /// [`Dir::create_dir`] does; existing components are opened as [`Dir::open`] opens them.
    pub fn create_all(path: &Path, mode: u32) -> Result<Dir> {
        match Dir::open(path) {
            Err(e) if e.is_not_found() => {}
            other => return other,
        }
        let (parent, name) = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => (Dir::create_all(p, mode)?, path.file_name()),
            _ => (Dir::open(Path::new("."))?, path.file_name()),
        };
        let Some(name) = name else {
            return Dir::open(path);
        };
        match parent.create_dir(name, mode) {
            Err(e) if e.is_exists() => parent.subdir(name),
            other => other,
        }
    }

    /// The path this directory was opened by (for messages; the descriptor is what counts).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in this directory, for messages.
    pub fn join(&self, name: &OsStr) -> PathBuf {
        self.path.join(name)
    }

    /// This directory's own statx.
    pub fn stat_self(&self) -> &Stat {
        &self.stat
    }

    /// statx of `name`, not following a link; None when nothing is there.
    pub fn stat(&self, name: &OsStr) -> Result<Option<Stat>> {
        plain(name, &self.path)?;
        match sys::statx(self.fd.as_fd(), name) {
            Ok(st) => Ok(Some(Stat::from_statx(&st))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(GuardError::io("stat", &self.join(name), e)),
        }
    }

    /// Open the subdirectory `name` (never a link to one).
    pub fn subdir(&self, name: &OsStr) -> Result<Dir> {
        self.subdir_with(name, false)
    }

    /// [`Dir::subdir`] whose statx does not ask the filesystem (a mount's root whose FUSE
    /// server does not answer: just mounted, or dead).
    pub(crate) fn subdir_cached(&self, name: &OsStr) -> Result<Dir> {
        self.subdir_with(name, true)
    }

    fn subdir_with(&self, name: &OsStr, cached: bool) -> Result<Dir> {
        plain(name, &self.path)?;
        let path = self.join(name);
        let fd = sys::openat(
            self.fd.as_fd(),
            name,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        )
        .map_err(|e| GuardError::io("open directory", &path, e))?;
        let stat = if cached {
            sys::statx_cached(fd.as_fd(), OsStr::new(""))
                .map(|st| Stat::from_statx(&st))
                .map_err(|e| GuardError::io("stat", &path, e))?
        } else {
            stat_fd(&fd, &path)?
        };
        Ok(Dir { fd, path, stat })
    }

    /// Create the directory `name` (nothing may be there, not even a link), mark it as
    /// fiox's and return it open.
    pub fn create_dir(&self, name: &OsStr, mode: u32) -> Result<Dir> {
        plain(name, &self.path)?;
        let path = self.join(name);
        sys::mkdirat(self.fd.as_fd(), name, mode)
            .map_err(|e| GuardError::io("create directory", &path, self.exists_error(name, e)))?;
        let rd = sys::openat(
            self.fd.as_fd(),
            name,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        )
        .map_err(|e| GuardError::io("open directory", &path, e))?;
        let stat = stat_fd(&rd, &path)?;
        if stat.uid != sys::euid() {
            // Swapped between mkdirat and openat by someone who may write here.
            return Err(GuardError::refused(
                "use",
                &path,
                format!(
                    "the directory fiox just made was replaced (owner uid {})",
                    stat.uid
                ),
            ));
        }
        mark::mark(&rd, &stat.id, Layout::Complete)
            .map_err(|e| GuardError::io("mark as made by fiox", &path, e))?;
        Ok(Dir { fd: rd, path, stat })
    }

    /// Create the regular file `name` read-write (O_EXCL|O_NOFOLLOW: nothing may be there,
    /// not even a dangling link) and mark it as fiox's with `layout`.
    pub fn create_file(&self, name: &OsStr, mode: u32, layout: Layout) -> Result<File> {
        let f = self.create_unmarked(name, mode)?;
        mark::mark_file(&f, layout)
            .map_err(|e| GuardError::io("mark as made by fiox", &self.join(name), e))?;
        Ok(f)
    }

    /// [`Dir::create_file`] without the mark (for files fiox makes and removes itself within
    /// one call, such as a temporary name).
    pub(crate) fn create_unmarked(&self, name: &OsStr, mode: u32) -> Result<File> {
        plain(name, &self.path)?;
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        sys::openat(self.fd.as_fd(), name, flags, mode)
            .map(File::from)
            .map_err(|e| GuardError::io("create", &self.join(name), self.exists_error(name, e)))
    }

    /// EEXIST at `name`, said with what is there and whose (M5: "File exists" alone named no
    /// owner and no way out). The kind stays AlreadyExists, so callers that pass over a taken
    /// name still do; other errors are returned as they are.
    fn exists_error(&self, name: &OsStr, e: io::Error) -> io::Error {
        if e.kind() != io::ErrorKind::AlreadyExists {
            return e;
        }
        let what = match self.stat(name) {
            Ok(Some(st)) => format!(
                "{} owned by {}",
                st.kind.noun(),
                crate::ident::owner_words(st.uid)
            ),
            _ => "something".to_string(),
        };
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{e}: {what} is there, and fiox leaves what it did not make alone; \
                 remove it or choose another place"
            ),
        )
    }

    /// Open the existing `name` with `flags` (O_NOFOLLOW and O_NONBLOCK are added: a link is
    /// not followed and a FIFO does not block the open). None when nothing is there.
    pub fn open_file(&self, name: &OsStr, flags: i32) -> Result<Option<File>> {
        plain(name, &self.path)?;
        let flags = flags | libc::O_NOFOLLOW | libc::O_NONBLOCK;
        match sys::openat(self.fd.as_fd(), name, flags & !libc::O_CREAT, 0) {
            Ok(fd) => Ok(Some(File::from(fd))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(GuardError::refused(
                "open",
                &self.join(name),
                "it is a symbolic link, which fiox does not follow for a file it writes or \
                 removes itself; remove the link or use another directory",
            )),
            Err(e) => Err(GuardError::io("open", &self.join(name), e)),
        }
    }

    /// Remove `name` if it is still the inode `expect` (a regular file, or an empty
    /// directory). Returns false when nothing was there.
    pub fn remove_if(&self, name: &OsStr, expect: &Identity) -> Result<bool> {
        let Some(st) = self.stat(name)? else {
            return Ok(false);
        };
        if st.id != *expect {
            return Err(GuardError::refused(
                "remove",
                &self.join(name),
                "it is no longer the file fiox made (it was replaced)",
            ));
        }
        self.unlink_checked(name, &st)
    }

    /// Remove `name` if it is a regular file or a directory fiox made (its mark binds it, or
    /// this process made it); a link, a user's file renamed over fiox's, or a copy stays.
    /// Returns whether it was removed.
    pub fn remove_owned(&self, name: &OsStr) -> Result<bool> {
        match self.owned(name)? {
            Some((st, true)) => self.unlink_checked(name, &st),
            _ => Ok(false),
        }
    }

    /// The statx of `name` and whether it is a regular file or directory fiox made; None when
    /// nothing is there.
    fn owned(&self, name: &OsStr) -> Result<Option<(Stat, bool)>> {
        let Some(st) = self.stat(name)? else {
            return Ok(None);
        };
        let ours = matches!(st.kind, Kind::File | Kind::Dir) && self.is_ours(name, &st)?;
        Ok(Some((st, ours)))
    }

    /// Remove `name` if it is an empty directory fiox made (its mark binds it; not a mount's
    /// root): what a maker killed between making a directory and recording it leaves behind.
    /// A full one, an unmarked one (a user's, or one whose maker died before marking it), a
    /// link or a mount stays. Returns whether it was removed.
    pub fn remove_empty_made_dir(&self, name: &OsStr) -> Result<bool> {
        let Some(st) = self.stat(name)? else {
            return Ok(false);
        };
        if st.kind != Kind::Dir || st.mount_root || !self.is_ours(name, &st)? {
            return Ok(false);
        }
        match self.unlink_checked(name, &st) {
            Err(e) if e.os_error() == Some(libc::ENOTEMPTY) => Ok(false),
            other => other,
        }
    }

    /// The proof half of [`Dir::remove_owned`], for callers that time the removal itself
    /// (fio's filedelete and dirdelete engines): the statx of `name` when it is a regular file
    /// or directory fiox made, None when nothing is there, a refusal otherwise.
    pub fn prove_owned(&self, name: &OsStr) -> Result<Option<Stat>> {
        match self.owned(name)? {
            None => Ok(None),
            Some((st, true)) => Ok(Some(st)),
            Some((_, false)) => Err(GuardError::refused(
                "remove",
                &self.join(name),
                "fiox did not make it (or it was replaced since fiox checked it)",
            )),
        }
    }

    /// The removal half: unlinkat(2) of `name`, proven by [`Dir::prove_owned`] on this
    /// descriptor. The plain system call's result, so the caller can time just it.
    pub fn unlink_proven(&self, name: &OsStr, proof: &Stat) -> io::Result<()> {
        sys::unlinkat(self.fd.as_fd(), name, proof.kind == Kind::Dir)?;
        mark::forget_created(&proof.id);
        Ok(())
    }

    /// Open `name` read-write as fio's filecreate does (an existing file is opened, not
    /// refused), never through a link (O_NOFOLLOW) and never truncating; true when this call
    /// created it. Whether it created the file comes from the open itself (O_EXCL, then a plain
    /// open on EEXIST), never from a look before it: a file someone makes between a look and
    /// an O_CREAT open would otherwise be taken for fiox's and removed at `unlink`. The plain
    /// system calls' result, so the caller can time just them.
    pub fn create_or_open(&self, name: &OsStr, mode: u32) -> io::Result<(File, bool)> {
        plain(name, &self.path).map_err(io::Error::from)?;
        let flags = libc::O_RDWR | libc::O_NOFOLLOW;
        loop {
            match sys::openat(
                self.fd.as_fd(),
                name,
                flags | libc::O_CREAT | libc::O_EXCL,
                mode,
            ) {
                Ok(fd) => return Ok((File::from(fd), true)),
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                Err(e) => return Err(e),
            }
            match sys::openat(self.fd.as_fd(), name, flags, 0) {
                Ok(fd) => return Ok((File::from(fd), false)),
                // Removed between the two opens: try to create it again.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// mkdirat(2) of `name`, the plain system call's result (fio's dircreate).
    pub fn mkdir_raw(&self, name: &OsStr, mode: u32) -> io::Result<()> {
        plain(name, &self.path).map_err(io::Error::from)?;
        sys::mkdirat(self.fd.as_fd(), name, mode)
    }

    /// Whether the inode at `name` (whose statx is `st`) carries fiox's mark, read on a
    /// descriptor opened without following links and checked to be that same inode.
    pub fn is_ours(&self, name: &OsStr, st: &Stat) -> Result<bool> {
        Ok(self.mark_at(name, st)?.is_ours())
    }

    /// The mark of `name` (Unmarked when nothing is there or it is not a file or directory).
    pub fn mark_of(&self, name: &OsStr) -> Result<Mark> {
        match self.stat(name)? {
            Some(st) if matches!(st.kind, Kind::File | Kind::Dir) => self.mark_at(name, &st),
            _ => Ok(Mark::Unmarked),
        }
    }

    /// The mark of the inode at `name` whose statx is `st`: what this process made, or the
    /// attribute read on a descriptor that is that very inode (Unmarked when it is gone or was
    /// replaced in between).
    fn mark_at(&self, name: &OsStr, st: &Stat) -> Result<Mark> {
        if let Some(l) = mark::created_here(&st.id) {
            return Ok(Mark::Ours(l));
        }
        match self.open_same(name, &st.id, libc::O_RDONLY)? {
            Some(f) => Ok(mark::mark_of(&f, &st.id)),
            None => Ok(Mark::Unmarked),
        }
    }

    /// Open `name` with `flags` (as [`Dir::open_file`]) only if it is still the inode `id`;
    /// None when it is gone or was replaced.
    pub(crate) fn open_same(
        &self,
        name: &OsStr,
        id: &Identity,
        flags: i32,
    ) -> Result<Option<File>> {
        let Some(f) = self.open_file(name, flags)? else {
            return Ok(None);
        };
        Ok((stat_fd(&f, &self.join(name))?.id == *id).then_some(f))
    }

    fn unlink_checked(&self, name: &OsStr, st: &Stat) -> Result<bool> {
        if st.mnt_id.is_some() && st.mnt_id != self.stat.mnt_id {
            return Err(GuardError::refused(
                "remove",
                &self.join(name),
                "something is mounted there",
            ));
        }
        match sys::unlinkat(self.fd.as_fd(), name, st.kind == Kind::Dir) {
            Ok(()) => {
                mark::forget_created(&st.id);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(GuardError::io("remove", &self.join(name), e)),
        }
    }

    /// Rename `from` to `to` inside this directory, never over anything (RENAME_NOREPLACE).
    pub fn rename_new(&self, from: &OsStr, to: &OsStr) -> Result<()> {
        plain(from, &self.path)?;
        plain(to, &self.path)?;
        // Named by where it goes: `from` is usually fiox's hidden temporary file (M4).
        sys::renameat(self.fd.as_fd(), from, to, true)
            .map_err(|e| GuardError::io("create", &self.join(to), e))
    }

    /// Rename `from` over `to` inside this directory, where `to` is `expect` (checked just
    /// before; see the module's doc for the window).
    pub(crate) fn rename_over(&self, from: &OsStr, to: &OsStr, expect: &Identity) -> Result<()> {
        match self.stat(to)? {
            Some(st) if st.id == *expect && st.kind == Kind::File => {}
            Some(_) => {
                return Err(GuardError::refused(
                    "replace",
                    &self.join(to),
                    "it changed while fiox wrote its replacement",
                ))
            }
            None => return self.rename_new(from, to),
        }
        sys::renameat(self.fd.as_fd(), from, to, false)
            .map_err(|e| GuardError::io("replace", &self.join(to), e))?;
        mark::forget_created(expect);
        Ok(())
    }

    /// The target of the symbolic link `name` in this directory, if root or the running user
    /// owns the link (None for another user's link, for anything that is not a link, and when
    /// nothing is there).
    pub fn trusted_link_target(&self, name: &OsStr) -> Result<Option<PathBuf>> {
        let path = self.join(name);
        let fd = match sys::openat(self.fd.as_fd(), name, libc::O_PATH | libc::O_NOFOLLOW, 0) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(GuardError::io("open", &path, e)),
        };
        let st = stat_fd(&fd, &path)?;
        if st.kind != Kind::Symlink || !trusted_link(st.uid) {
            return Ok(None);
        }
        let target =
            sys::readlink_fd(fd.as_fd()).map_err(|e| GuardError::io("readlink", &path, e))?;
        Ok(Some(PathBuf::from(OsStr::from_bytes(&target))))
    }

    /// The names in this directory.
    pub fn names(&self) -> Result<Vec<OsString>> {
        let rd = sys::openat(
            self.fd.as_fd(),
            OsStr::new("."),
            libc::O_RDONLY | libc::O_DIRECTORY,
            0,
        )
        .map_err(|e| GuardError::io("read directory", &self.path, e))?;
        sys::read_names(rd.as_fd()).map_err(|e| GuardError::io("read directory", &self.path, e))
    }

    /// The path naming this very directory for calls that take only paths (mount, a child
    /// process's working directory): /proc/thread-self/fd/N, valid while `self` lives.
    pub fn fd_path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(sys::fd_path(self.fd.as_raw_fd()))
    }
}

pub(crate) fn stat_fd(fd: &impl AsFd, path: &Path) -> Result<Stat> {
    sys::statx(fd.as_fd(), OsStr::new(""))
        .map(|st| Stat::from_statx(&st))
        .map_err(|e| GuardError::io("stat", path, e))
}

pub(crate) enum Walk {
    Io(io::Error),
    /// A link owned by another user, at this path.
    Untrusted(PathBuf, u32),
}

/// Which symbolic links a walk follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follow {
    /// Only root's or the running user's own (what fiox resolves itself).
    Trusted,
    /// Also another user's link, except in a sticky world-writable directory (/tmp) whose
    /// owner is not the link's owner: the kernel's `fs.protected_symlinks` rule, for paths
    /// the user named, whatever the sysctl says.
    Protected,
}

/// Where a walk may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// At a directory (every other kind is ENOTDIR).
    Dir,
    /// At anything: a file, a device, a directory.
    Any,
}

impl Walk {
    /// The guard's error for a walk to `path` that failed (`op`: what the walk was for).
    pub(crate) fn into_error(self, op: &'static str, path: &Path) -> GuardError {
        match self {
            Walk::Io(err) => GuardError::io(op, path, err),
            Walk::Untrusted(at, uid) => GuardError::refused(
                "follow",
                &at,
                format!(
                    "it is a symbolic link owned by uid {uid} (neither root nor you), which \
                     fiox does not follow on the way to {}; use the real path",
                    path.display()
                ),
            ),
        }
    }
}

/// Whether the link (owner `uid`) found in the directory open as `dir` may be followed.
fn may_follow(follow: Follow, uid: u32, dir: BorrowedFd) -> io::Result<bool> {
    if trusted_link(uid) {
        return Ok(true);
    }
    if follow == Follow::Trusted {
        return Ok(false);
    }
    let d = sys::statx(dir, OsStr::new(""))?;
    let mode = u32::from(d.stx_mode);
    let shared = mode & libc::S_ISVTX != 0 && mode & 0o002 != 0;
    Ok(!shared || d.stx_uid == uid)
}

/// Resolve `path` to an O_PATH descriptor one component at a time (see the module's doc).
fn walk(path: &Path) -> std::result::Result<OwnedFd, Walk> {
    walk_with(path, Follow::Trusted, End::Dir)
}

/// [`walk`] with its rule for links and where it may end.
pub(crate) fn walk_with(
    path: &Path,
    follow: Follow,
    end: End,
) -> std::result::Result<OwnedFd, Walk> {
    let start = if path.is_absolute() { c"/" } else { c"." };
    let mut cur = sys::open_path(start, libc::O_PATH | libc::O_DIRECTORY).map_err(Walk::Io)?;
    let mut todo: std::collections::VecDeque<OsString> =
        path.iter().map(|c| c.to_os_string()).collect();
    if path.is_absolute() {
        todo.pop_front();
    }
    let mut seen = PathBuf::from(if path.is_absolute() { "/" } else { "." });
    let mut links = 0;
    while let Some(c) = todo.pop_front() {
        if c.is_empty() || c == "." {
            continue;
        }
        let fd =
            sys::openat(cur.as_fd(), &c, libc::O_PATH | libc::O_NOFOLLOW, 0).map_err(Walk::Io)?;
        seen.push(&c);
        let st = sys::statx(fd.as_fd(), OsStr::new("")).map_err(Walk::Io)?;
        match u32::from(st.stx_mode) & libc::S_IFMT {
            libc::S_IFDIR => cur = fd,
            libc::S_IFLNK => {
                if !may_follow(follow, st.stx_uid, cur.as_fd()).map_err(Walk::Io)? {
                    return Err(Walk::Untrusted(seen, st.stx_uid));
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(Walk::Io(io::Error::from_raw_os_error(libc::ELOOP)));
                }
                let target = PathBuf::from(OsStr::from_bytes(
                    &sys::readlink_fd(fd.as_fd()).map_err(Walk::Io)?,
                ));
                let mut comps: Vec<OsString> = target.iter().map(|c| c.to_os_string()).collect();
                if target.is_absolute() {
                    comps.remove(0);
                    cur =
                        sys::open_path(c"/", libc::O_PATH | libc::O_DIRECTORY).map_err(Walk::Io)?;
                }
                for c in comps.into_iter().rev() {
                    todo.push_front(c);
                }
            }
            // The last component: what the walk was for.
            _ if end == End::Any && todo.iter().all(|c| c.is_empty() || c == ".") => return Ok(fd),
            _ => return Err(Walk::Io(io::Error::from_raw_os_error(libc::ENOTDIR))),
        }
    }
    Ok(cur)
}
