//! Files fiox writes as outputs (logs, reports, charts, manifests, records): created where
//! nothing is, or replaced only when what is there is fiox's own earlier output (its mark binds
//! it), never through a symbolic link, never over a user's file, a FIFO or a device. A whole
//! output is replaced atomically (a new temporary name in the same directory descriptor, then
//! renameat over the old one), so a reader sees the old file or the new one, and a crash leaves
//! at most a marked temporary file. Outputs the user named explicitly (`--output=FILE`,
//! `plot -o FILE`) may replace a regular file the user owns, as a shell redirection would,
//! but are never followed through another user's link nor written into a device.

use crate::dir::{stat_fd, Dir};
use crate::error::{GuardError, Result};
use crate::ident::{Identity, Kind};
use crate::mark::{self, Layout};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Who chose an output's name, which decides what it may replace.
#[derive(Debug, Clone, Copy)]
pub enum Named {
    /// fiox chose the name (a default or derived name): only fiox's own output is replaced.
    ByFiox,
    /// The user typed this path: a regular file there is replaced, as `>` would.
    ByUser,
    /// fiox chose the name and the format is shared with fio (a verify state file): fiox's own
    /// output, or a regular file whose content the function recognises (read on a descriptor
    /// of that very file), is replaced.
    Recognized(fn(&mut File) -> bool),
}

/// How an existing output is opened for streaming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Emptied first.
    Truncate,
    /// Kept; writes go to its end (logs fio appends to, such as write_iolog).
    Append,
}

/// The identity of what is at `name` when [`Named`] lets it be replaced, None when nothing is
/// there, a refusal saying why otherwise.
fn may_replace(dir: &Dir, name: &OsStr, named: Named) -> Result<Option<Identity>> {
    let Some(st) = dir.stat(name)? else {
        return Ok(None);
    };
    let why = match st.kind {
        Kind::Symlink => {
            "it is a symbolic link, which fiox does not follow for a file it writes".to_string()
        }
        // The user's own FIFO or device (or root's: /dev/null, /dev/stdout's terminal): what
        // fiox writes there goes where the user sent it. Another user's FIFO in /tmp would
        // hand root's report to that user.
        Kind::Char | Kind::Fifo
            if matches!(named, Named::ByUser) && (st.uid == 0 || st.uid == crate::sys::euid()) =>
        {
            return Ok(Some(st.id))
        }
        Kind::Char | Kind::Fifo if matches!(named, Named::ByUser) => {
            return Err(GuardError::refused(
                "write to",
                &dir.join(name),
                format!(
                    "it is a {} owned by uid {}, neither you nor root, so what fiox writes \
                     there goes to that user; name a file of your own",
                    if st.kind == Kind::Fifo {
                        "FIFO"
                    } else {
                        "device"
                    },
                    st.uid
                ),
            ))
        }
        Kind::File => match named {
            Named::ByUser => return Ok(Some(st.id)),
            Named::ByFiox | Named::Recognized(_) => match dir.mark_of(name)?.why_not_ours() {
                None => return Ok(Some(st.id)),
                Some(_) if recognized(dir, name, &st.id, named)? => return Ok(Some(st.id)),
                Some(why) if matches!(named, Named::Recognized(_)) => format!(
                    "it exists, {why} and it is not a file fio writes under this name (fiox \
                     replaces those)"
                ),
                Some(why) => format!("it exists and {why}"),
            },
        },
        _ => "it exists and is not a regular file".to_string(),
    };
    Err(GuardError::refused(
        "replace",
        &dir.join(name),
        format!(
            "{why}; fiox replaces only files it wrote: move it away or choose another \
             output name"
        ),
    ))
}

/// Whether `named` recognises the content of the regular file `name` (the inode `id`).
fn recognized(dir: &Dir, name: &OsStr, id: &Identity, named: Named) -> Result<bool> {
    let Named::Recognized(test) = named else {
        return Ok(false);
    };
    let Some(mut f) = dir.open_same(name, id, libc::O_RDONLY)? else {
        return Ok(false);
    };
    Ok(test(&mut f))
}

static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Bits of the clock for a retried name another user cannot guess in advance (a planted
/// temporary or testbed name: adversarial round 3's M8).
pub fn name_salt() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
}

/// A temporary name beside `name`: the process, a sequence number and, from the second try
/// on, bits of the clock, so that a name another user planted in a shared directory (they can
/// guess the first) costs a retry, not the output (adversarial round 3's M8).
fn temp_name(name: &OsStr, attempt: u32) -> OsString {
    let mut t = OsString::from(".");
    t.push(name);
    let seq = TMP_SEQ.fetch_add(1, Ordering::Relaxed);
    if attempt == 0 {
        t.push(format!(".fiox-{}-{seq}.tmp", std::process::id()));
    } else {
        let salt = name_salt();
        t.push(format!(".fiox-{}-{seq}-{salt:x}.tmp", std::process::id()));
    }
    t
}

/// Tries of [`with_temp`] before an occupied temporary name is the caller's error.
const TEMP_TRIES: u32 = 8;

/// `make` a new file at a fresh temporary name beside `name`, trying another name when one is
/// taken (EEXIST: a name planted by someone else is never opened, only passed over).
fn with_temp<T>(name: &OsStr, mut make: impl FnMut(&OsStr) -> Result<T>) -> Result<(OsString, T)> {
    let mut attempt = 0;
    loop {
        let tmp = temp_name(name, attempt);
        match make(&tmp) {
            Err(e) if e.is_exists() && attempt + 1 < TEMP_TRIES => attempt += 1,
            other => return other.map(|t| (tmp, t)),
        }
    }
}

/// Write `bytes` as the output `name` in `dir`: a new file, or an atomic replacement of the
/// one there when it may be replaced (see [`Named`]).
pub fn write_in(dir: &Dir, name: &OsStr, bytes: &[u8], named: Named) -> Result<()> {
    write_in_mode(dir, name, bytes, named, 0o644)
}

/// [`write_in`] with the file mode of a new file (e.g. 0o600 for state only its owner reads).
pub fn write_in_mode(dir: &Dir, name: &OsStr, bytes: &[u8], named: Named, mode: u32) -> Result<()> {
    let old = may_replace(dir, name, named)?;
    place(dir, name, bytes, mode, old)
}

/// Write `bytes` as the new file `name` in `dir`, whole or not at all: nothing may be at the
/// name (EEXIST otherwise, so two writers cannot both take it), and a failure while writing
/// (ENOSPC) leaves no file there, not even an empty one.
pub fn create_in(dir: &Dir, name: &OsStr, bytes: &[u8], mode: u32) -> Result<()> {
    place(dir, name, bytes, mode, None)
}

/// A new temporary file beside `name`, locked (flock) for as long as it lives and marked as
/// fiox's only then: a sweep ([`sweep_temps`]) takes a marked temporary file whose lock it can
/// get for one whose writer is gone, so the mark must never be seen unlocked.
fn locked_temp(dir: &Dir, name: &OsStr, mode: u32, layout: Layout) -> Result<(OsString, File)> {
    sweep_temps(dir, name);
    let (tmp, f) = with_temp(name, |tmp| dir.create_unmarked(tmp, mode))?;
    let marked = crate::sys::flock_exclusive(&f)
        .and_then(|_| mark::mark_file(&f, layout).map(|_| ()))
        .map_err(|e| GuardError::io("mark as made by fiox", &dir.join(name), e));
    if let Err(e) = marked {
        if let Ok(st) = stat_fd(&f, &dir.join(&tmp)) {
            let _ = dir.remove_if(&tmp, &st.id);
        }
        return Err(e);
    }
    Ok((tmp, f))
}

/// Remove the temporary files of `name` that writers killed before their rename left behind
/// (SIGKILL, a crash: adversarial round 3's R3): at a temporary name of `name`, marked as
/// fiox's, and unlocked. Every writer holds its temporary file's lock until the rename, and
/// the kernel drops it when the writer dies, in whatever pid namespace it ran: a lock this
/// process can take is one nobody holds. Best effort: the output is written either way.
fn sweep_temps(dir: &Dir, name: &OsStr) {
    use std::os::unix::ffi::OsStrExt;
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".fiox-");
    let Ok(names) = dir.names() else {
        return;
    };
    for n in names {
        let b = n.as_bytes();
        if !b.starts_with(prefix.as_bytes()) || !b.ends_with(b".tmp") {
            continue;
        }
        let Ok(Some(st)) = dir.stat(&n) else {
            continue;
        };
        if st.kind != Kind::File || !dir.is_ours(&n, &st).unwrap_or(false) {
            continue;
        }
        let Ok(Some(f)) = dir.open_same(&n, &st.id, libc::O_RDONLY) else {
            continue;
        };
        if crate::sys::flock_exclusive(&f).unwrap_or(false) {
            let _ = dir.remove_if(&n, &st.id);
        }
    }
}

/// Write a marked temporary file, then rename it over `old` (or to a free name when None).
fn place(dir: &Dir, name: &OsStr, bytes: &[u8], mode: u32, old: Option<Identity>) -> Result<()> {
    let (tmp, mut f) = locked_temp(dir, name, mode, Layout::Partial)?;
    let written = f
        .write_all(bytes)
        .and_then(|()| mark::mark_file(&f, Layout::Complete).map(|_| ()))
        // On disk before the rename: a crash leaves the old output or the new one whole.
        .and_then(|()| f.sync_all())
        .map_err(|e| GuardError::io("write", &dir.join(name), e));
    let tmp_id = stat_fd(&f, &dir.join(&tmp))?.id;
    let placed = written.and_then(|()| match &old {
        Some(id) => dir.rename_over(&tmp, name, id),
        None => dir.rename_new(&tmp, name),
    });
    if placed.is_err() {
        let _ = dir.remove_if(&tmp, &tmp_id);
    }
    placed
}

/// [`write_in`] at a path.
pub fn write(path: &Path, bytes: &[u8], named: Named) -> Result<()> {
    let (dir, name) = match locate(path, Open::Truncate, named)? {
        Place::In(dir, name) => (dir, name),
        Place::Followed(mut f) => {
            return f
                .write_all(bytes)
                .map_err(|e| GuardError::io("write", path, e))
        }
    };
    if matches!(named, Named::ByUser) && is_stream(&dir, &name)? {
        // /dev/null, a FIFO the user named: written as `>` would.
        return open_in(&dir, &name, Open::Append, named)?
            .write_all(bytes)
            .map_err(|e| GuardError::io("write", &dir.join(&name), e));
    }
    write_in(&dir, &name, bytes, named)
}

/// Whether `name` is a character device or a FIFO (which a user-named output may be).
fn is_stream(dir: &Dir, name: &OsStr) -> Result<bool> {
    Ok(dir
        .stat(name)?
        .is_some_and(|st| matches!(st.kind, Kind::Char | Kind::Fifo)))
}

/// Where an output at `path` goes: a name in a directory, or for a path the user typed that
/// ends in a link root or the user owns (/dev/stdout, a link to one's own file), the link's
/// target, opened as open(2) follows it (never created through it). A name fiox chose is
/// never followed.
enum Place {
    In(Dir, OsString),
    Followed(File),
}

fn locate(path: &Path, how: Open, named: Named) -> Result<Place> {
    let (dir, name) = Dir::open_parent(path)?;
    let trusted_link = matches!(named, Named::ByUser) && dir.trusted_link_target(&name)?.is_some();
    if !trusted_link {
        return Ok(Place::In(dir, name));
    }
    let f =
        crate::named::open(path, libc::O_WRONLY).map_err(|e| GuardError::io("open", path, e))?;
    match stat_fd(&f, path)?.kind {
        Kind::File if how == Open::Truncate => f
            .set_len(0)
            .map_err(|e| GuardError::io("truncate", path, e))?,
        Kind::File | Kind::Char | Kind::Fifo | Kind::Socket => {}
        _ => {
            return Err(GuardError::refused(
                "write",
                path,
                "it leads to something that is not a regular file, a character device or a pipe",
            ))
        }
    }
    Ok(Place::Followed(f))
}

/// Open the output `name` in `dir` for streaming writes: created (marked) where nothing is,
/// or the existing file reopened when it may be replaced (see [`Named`]).
pub fn open_in(dir: &Dir, name: &OsStr, how: Open, named: Named) -> Result<File> {
    match dir.create_file(name, 0o644, Layout::Complete) {
        Ok(f) => return Ok(f),
        Err(e) if e.is_exists() => {}
        Err(e) => return Err(e),
    }
    let Some(id) = may_replace(dir, name, named)? else {
        // Removed since the create failed: try once more, as new.
        return dir.create_file(name, 0o644, Layout::Complete);
    };
    if how == Open::Truncate && !matches!(named, Named::ByUser) && !is_stream(dir, name)? {
        return replace_new(dir, name, &id);
    }
    let path = dir.join(name);
    let f = match dir.open_file(name, libc::O_WRONLY) {
        // A FIFO opened without blocking has no reader yet (M6: a bare "No such device or
        // address" said nothing of that).
        Err(e) if e.os_error() == Some(libc::ENXIO) => {
            return Err(GuardError::refused(
                "write to",
                &path,
                "it is a FIFO with no reader; start the program that reads it first (fiox \
                 does not wait for one)",
            ))
        }
        other => other?,
    }
    .ok_or_else(|| GuardError::refused("open", &path, "it vanished while fiox opened it"))?;
    let now = stat_fd(&f, &path)?;
    let stream = matches!(named, Named::ByUser) && matches!(now.kind, Kind::Char | Kind::Fifo);
    if now.id != id || !(now.kind == Kind::File || stream) {
        return Err(GuardError::refused(
            "open",
            &path,
            "it was replaced while fiox opened it",
        ));
    }
    if stream {
        // Opened O_NONBLOCK so a FIFO without a reader does not hang the open; writes block.
        crate::sys::set_blocking(&f).map_err(|e| GuardError::io("open", &path, e))?;
    }
    if how == Open::Truncate && !stream {
        f.set_len(0)
            .map_err(|e| GuardError::io("truncate", &path, e))?;
    }
    if !matches!(named, Named::ByUser) {
        // Kept as fiox's across runs (a user-named file stays unmarked: it is the user's).
        mark::mark(&f, &id, Layout::Complete).map_err(|e| GuardError::io("mark", &path, e))?;
    }
    // O_NONBLOCK was only for the open; writes to a regular file never block on it anyway.
    Ok(f)
}

/// A streamed output fiox names (a log) that replaces its earlier one: a new marked file
/// renamed over it before the first byte, so the old inode is never cut. A hard link the user
/// made to keep the earlier log keeps its bytes (R1); the old one stays whole until the new
/// one takes its name.
fn replace_new(dir: &Dir, name: &OsStr, old: &Identity) -> Result<File> {
    let (tmp, f) = locked_temp(dir, name, 0o644, Layout::Complete)?;
    let tmp_id = stat_fd(&f, &dir.join(&tmp))?.id;
    if let Err(e) = dir.rename_over(&tmp, name, old) {
        let _ = dir.remove_if(&tmp, &tmp_id);
        return Err(e);
    }
    // Renamed into place: no longer a temporary file, so no longer locked.
    let _ = crate::sys::flock_unlock(&f);
    Ok(f)
}

/// [`open_in`] at a path.
pub fn open(path: &Path, how: Open, named: Named) -> Result<File> {
    match locate(path, how, named)? {
        Place::In(dir, name) => open_in(&dir, &name, how, named),
        Place::Followed(f) => Ok(f),
    }
}

/// Remove the output at `path` if it is fiox's (its mark binds it); a user's file, a link or
/// a copy stays. Returns whether it was removed.
pub fn remove(path: &Path) -> Result<bool> {
    let (dir, name) = match Dir::open_parent(path) {
        Err(e) if e.is_not_found() => return Ok(false),
        other => other?,
    };
    dir.remove_owned(&name)
}

/// An exclusive lock on the output `path` (made as an output if missing), held while the
/// returned file lives: two fiox processes writing one results directory would mix their
/// runs. None when another process holds it.
pub fn try_lock(path: &Path) -> Result<Option<File>> {
    let f = open(path, Open::Append, Named::ByFiox)?;
    match crate::sys::flock_exclusive(&f) {
        Ok(true) => Ok(Some(f)),
        Ok(false) => Ok(None),
        Err(e) => Err(GuardError::io("lock", path, e)),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the test makes its own scratch directory
mod tests {
    use super::*;

    /// M8: a temporary name another user planted is passed over, not an error; after
    /// TEMP_TRIES taken names the error is the caller's, and every name tried differs.
    #[test]
    fn a_taken_temporary_name_is_passed_over() {
        let taken = || {
            GuardError::io(
                "create",
                Path::new("/x"),
                std::io::Error::from_raw_os_error(libc::EEXIST),
            )
        };
        let mut tried = Vec::new();
        let (tmp, n) = with_temp(OsStr::new("report.html"), |t| {
            tried.push(t.to_os_string());
            if tried.len() < 3 {
                Err(taken())
            } else {
                Ok(7)
            }
        })
        .unwrap();
        assert_eq!((n, tried.len()), (7, 3));
        assert_eq!(&tmp, tried.last().unwrap());
        tried.sort();
        tried.dedup();
        assert_eq!(tried.len(), 3, "each try a new name");
        let mut count = 0;
        let e = with_temp(OsStr::new("r"), |_| -> Result<()> {
            count += 1;
            Err(taken())
        })
        .unwrap_err();
        assert!(e.is_exists() && count == TEMP_TRIES);
    }

    /// R3: a temporary file whose writer died (its lock gone with it) is removed by the next
    /// write of that output; one a live writer holds, a user's file at a temporary-looking
    /// name and a link there stay.
    #[test]
    fn a_dead_writers_temporary_file_is_swept_and_nothing_else() {
        let base = std::env::temp_dir().join(format!("fiox-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let dir = Dir::open(&base).unwrap();
        let name = OsStr::new("report.html");
        let (live, live_f) = locked_temp(&dir, name, 0o644, Layout::Partial).unwrap();
        let (dead, dead_f) = locked_temp(&dir, name, 0o644, Layout::Partial).unwrap();
        drop(dead_f);
        std::fs::write(base.join(".report.html.fiox-1-0.tmp"), b"user's").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", base.join(".report.html.fiox-2-0.tmp")).unwrap();
        write_in(&dir, name, b"<html>", Named::ByFiox).unwrap();
        let left = |n: &OsStr| base.join(n).symlink_metadata().is_ok();
        assert!(!left(&dead), "the dead writer's temporary file is left");
        assert!(left(&live), "a live writer's temporary file was removed");
        assert!(left(OsStr::new(".report.html.fiox-1-0.tmp")));
        assert!(left(OsStr::new(".report.html.fiox-2-0.tmp")));
        assert_eq!(std::fs::read(base.join(name)).unwrap(), b"<html>");
        drop(live_f);
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// R2: `--output` into another user's FIFO planted at that name handed root's report to
    /// that user; the user's own FIFO (or root's) is still written, as fio writes it.
    #[test]
    fn another_users_fifo_is_no_output() {
        crate::test_need::require_root("chown a FIFO to another user");
        let base = std::env::temp_dir().join(format!("fiox-out-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let p = base.join("report.json");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
        let dir = Dir::open(&base).unwrap();
        let name = OsStr::new("report.json");
        assert!(may_replace(&dir, name, Named::ByUser).unwrap().is_some());
        // M6: the user's own FIFO with no reader: said so, not ENXIO alone.
        let e = open_in(&dir, name, Open::Truncate, Named::ByUser)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no reader"), "{e}");
        std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
        let e = may_replace(&dir, name, Named::ByUser)
            .unwrap_err()
            .to_string();
        assert!(e.contains("uid 65534"), "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// R1: a streamed log replaced its earlier one by truncating it in place, so a hard link
    /// the user made to keep the earlier log lost it.
    #[test]
    fn a_replaced_log_leaves_a_hard_link_its_bytes() {
        let base = std::env::temp_dir().join(format!("fiox-out-r1-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let dir = Dir::open(&base).unwrap();
        let name = OsStr::new("lg_bw.1.log");
        let mut f = open_in(&dir, name, Open::Truncate, Named::ByFiox).unwrap();
        f.write_all(b"first run\n").unwrap();
        drop(f);
        std::fs::hard_link(base.join("lg_bw.1.log"), base.join("saved.log")).unwrap();
        let mut f = open_in(&dir, name, Open::Truncate, Named::ByFiox).unwrap();
        f.write_all(b"second\n").unwrap();
        drop(f);
        assert_eq!(
            std::fs::read(base.join("saved.log")).unwrap(),
            b"first run\n"
        );
        assert_eq!(
            std::fs::read(base.join("lg_bw.1.log")).unwrap(),
            b"second\n"
        );
        assert_eq!(
            std::fs::read_dir(&base).unwrap().count(),
            2,
            "no temp file left"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
