//! Which regular files fiox owns, so that it never destroys a user's data: every file fiox
//! creates carries the extended attribute [`MARK`], whose value binds it to that one inode
//! (device, inode number, birth time) and says whether its layout finished. A copy (`cp -a`,
//! `rsync -X`: a new inode), a forged value or the plain "1" of older fiox versions does not
//! count. A job that would write over existing bytes of a file that is not fiox's is refused
//! unless the user allowed it (`allow_mounted_write=1`, fio's name, or `--allow-destructive`;
//! see [`crate::files::safeopen`] for the checks made on the open descriptor), and `unlink=1` removes
//! only a path that is still the inode fiox created or marked. Filesystems without user
//! extended attributes cannot carry the mark: existing files there are treated as the user's,
//! and the refusal says so. Also the end of a job's file handling (end_fsync, fsync_on_close,
//! close, unlink).

use crate::error::RunError;
use crate::files::{self, FileKind, FilePlan};
use fiox_job::{Engine, JobSpec};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

pub use fiox_guard::mark::created_here;
#[cfg(test)]
use fiox_guard::MARK;
pub use fiox_guard::{Identity, Layout, Mark};

/// Files fiox created for jobs that asked for `unlink`: what a forced exit (second Ctrl-C)
/// still removes, since the jobs never reach their own cleanup. A set: a job of 100,000 files
/// forgets each one as it is removed, which a list made quadratic.
static UNLINK_ON_EXIT: std::sync::Mutex<Option<std::collections::HashSet<PathBuf>>> =
    std::sync::Mutex::new(None);

/// Remember a file this job created and must remove: in the job's `leftovers` (removed if
/// the job is aborted) and for a forced exit.
pub fn leave(leftovers: &mut Vec<PathBuf>, path: &Path) {
    leftovers.push(path.to_path_buf());
    remove_on_exit(path);
}

/// Remove `path` on a forced exit (while it is still fiox's).
pub fn remove_on_exit(path: &Path) {
    UNLINK_ON_EXIT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(Default::default)
        .insert(path.to_path_buf());
}

/// The file is gone (or left to its job's cleanup): a forced exit need not remove it.
pub fn forget(path: &Path) {
    if let Some(set) = UNLINK_ON_EXIT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
    {
        set.remove(path);
    }
}

/// On a forced exit: remove every file still registered by [`leave`] that is still fiox's
/// (see [`unlink_owned_in`]; someone may have replaced it since). Best effort; returns how
/// many were removed.
pub fn remove_left_files() -> usize {
    let list = std::mem::take(&mut *UNLINK_ON_EXIT.lock().unwrap_or_else(|p| p.into_inner()));
    // Sorted, a directory's files come together and share one descriptor of it.
    let mut list: Vec<PathBuf> = list.unwrap_or_default().into_iter().collect();
    list.sort_unstable();
    let mut parents = fiox_guard::Parents::new();
    list.iter()
        .filter(|p| parents.remove_owned(p).unwrap_or(false))
        .count()
}

/// Mark the file open as `file`, which fiox created, with its layout state (see
/// [`fiox_guard::mark`]: where the filesystem has no user extended attributes the file stays
/// unmarked and this run remembers it).
pub fn mark(file: &File, path: &Path, layout: Layout) -> Result<(), RunError> {
    fiox_guard::mark::mark_file(file, layout)
        .map(|_| ())
        .map_err(|e| RunError::io("mark as created by fiox", path, e))
}

/// The mark of the file open as `file` (files this run created count as marked).
pub fn mark_of_file(file: &File) -> Mark {
    fiox_guard::mark::mark_of_file(file)
}

/// The mark of `path` itself (a symbolic link is not followed, and is never fiox's).
pub fn mark_of(path: &Path) -> Mark {
    fiox_guard::Dir::open_parent(path)
        .and_then(|(dir, name)| dir.mark_of(&name))
        .unwrap_or(Mark::Unmarked)
}

/// Whether fiox owns the file at `path` but did not finish laying it out (an earlier run was
/// interrupted): such a file is laid out again.
pub fn layout_incomplete(path: &Path) -> bool {
    // The file the job's I/O would use: a symbolic link is followed, as the job's open does.
    match crate::files::safeopen::open_to_check(path) {
        Ok(Some(f)) => matches!(mark_of_file(&f), Mark::Ours(Layout::Partial)),
        _ => false,
    }
}

/// `unlink=1`: remove `path` only if it is still a regular file (or a directory of the dir*
/// engines) fiox created (this run's inode, or one whose mark binds it); a symbolic link, a
/// user's file renamed over fiox's, or a copy stays. The check and the removal are made on
/// one descriptor of the parent directory (see [`fiox_guard::Dir`]), so a parent swapped for
/// a link in between changes nothing. Returns whether it was removed. `parents` keeps the
/// last parent directory open for the next path in it (a job's files: one walk to their
/// directory, not one per file).
pub fn unlink_owned_in(parents: &mut fiox_guard::Parents, path: &Path) -> io::Result<bool> {
    Ok(parents.remove_owned(path)?)
}

/// `ioengine=filedelete` unlinks every file of the job (`dirdelete` removes every
/// directory): checked before setup, a file or directory that exists must be fiox's (made by
/// an earlier run) unless the user allowed it (`allow_mounted_write=1`,
/// `--allow-destructive`); missing ones are made by fiox.
pub fn check_deletable(job: &JobSpec, allow: bool) -> Result<(), RunError> {
    if allow || job.files.allow_mounted_write {
        // The user allowed deleting what is there now: exactly these inodes (the engine
        // removes only a name that still is one of them, or one fiox made).
        for path in files::file_paths(job) {
            if let Ok(Some(st)) =
                fiox_guard::Dir::open_parent(&path).and_then(|(dir, name)| dir.stat(&name))
            {
                fiox_guard::mark::adopt(&st.id);
            }
        }
        return Ok(());
    }
    for path in files::file_paths(job) {
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        if let Some(why) = mark_of(&path).why_not_ours() {
            return Err(RunError::Refused(format!(
                "job '{}': ioengine={} would delete {}, but {why}; set \
                 allow_mounted_write=1 or pass --allow-destructive to allow it",
                job.name,
                job.ioengine.as_str().trim(),
                path.display()
            )));
        }
    }
    Ok(())
}

/// `ioengine=e4defrag` exchanges blocks with its donor file (`donorname`), whose old data is
/// lost: an existing donor must be fiox's unless the user allowed it. Returns whether the
/// donor is missing (the engine creates it; [`mark_created_donor`] marks it then).
pub fn check_donor(job: &JobSpec, allow: bool) -> Result<bool, RunError> {
    let Some(path) = fiox_engine::e4defrag_donor(job) else {
        return Ok(false); // the engine refuses a job without donorname
    };
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(true);
    }
    if allow || job.files.allow_mounted_write {
        return Ok(false);
    }
    match mark_of(&path).why_not_ours() {
        None => Ok(false),
        Some(why) => Err(RunError::Refused(format!(
            "job '{}': e4defrag would exchange blocks with donor {}, but {why}; set \
             allow_mounted_write=1 or pass --allow-destructive to allow it",
            job.name,
            path.display()
        ))),
    }
}

/// Mark the donor the e4defrag engine just created as fiox's.
pub fn mark_created_donor(job: &JobSpec) -> Result<(), RunError> {
    let Some(path) = fiox_engine::e4defrag_donor(job) else {
        return Ok(());
    };
    let f = File::open(&path).map_err(|e| RunError::io("open the donor", &path, e))?;
    mark(&f, &path, Layout::Complete)
}

/// `--readonly`: every job that would write, trim, or unlink its files, refused before any
/// job starts (laying out is refused per file when a job finds its file missing or short).
pub fn readonly_refusals(jobs: &[JobSpec]) -> Vec<(usize, RunError)> {
    let mut out = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let engine = j.ioengine.engine();
        let what = if files::job_writes(j) {
            format!("rw={} writes", j.rw.mode.fio_name())
        } else if engine == Some(Engine::Filedelete) {
            "ioengine=filedelete removes its files".to_string()
        } else if engine == Some(Engine::Filecreate) {
            "ioengine=filecreate creates its files".to_string()
        } else if let Some(e @ (Engine::Dircreate | Engine::Dirstat | Engine::Dirdelete)) = engine {
            format!("ioengine={e} creates and removes directories")
        } else if j.files.unlink {
            "unlink=1 removes its files".to_string()
        } else if crate::files::unlinks_each_loop(j) {
            "unlink_each_loop=1 removes its files".to_string()
        } else {
            continue;
        };
        out.push((
            i,
            RunError::Refused(format!(
                "job '{}': {what}, but --readonly was given; nothing was run",
                j.name
            )),
        ));
    }
    out
}

/// end_fsync, fsync_on_close, close, then unlink (only files fiox created, see
/// [`unlink_owned_in`]). Files removed are dropped from `leftovers`.
pub fn finish_files(
    job: &JobSpec,
    handles: &mut [Option<File>],
    plan: &FilePlan,
    leftovers: &mut Vec<PathBuf>,
) -> Result<(), RunError> {
    let writes = files::job_writes(job);
    for (i, h) in handles.iter_mut().enumerate() {
        let path = &plan.files[i].path;
        match h.take() {
            // end_syncfs replaces end_fsync's per-file fsync (fio's end of do_io).
            Some(f) if writes && ((job.end_fsync && !job.end_syncfs) || job.fsync_on_close) => {
                f.sync_all().map_err(|e| RunError::io("fsync", path, e))?;
            }
            // Closed by the openfiles gate (which fsyncs on close itself): end_fsync still
            // covers every file of the job, as in fio.
            None if writes && job.end_fsync && !job.end_syncfs && path.is_file() => {
                let f = fiox_guard::named::open(path, libc::O_WRONLY)
                    .map_err(|e| RunError::io("open for end_fsync", path, e))?;
                f.sync_all()
                    .map_err(|e| RunError::io("end_fsync", path, e))?;
            }
            _ => {}
        }
    }
    if writes && job.end_syncfs {
        syncfs_all(plan)?;
    }
    if !job.files.unlink {
        return Ok(());
    }
    // Diskless plans say Regular for every path; a dir* engine's directories are removed
    // here too (unlink_owned_in takes a directory fiox made).
    // The removed paths leave `leftovers` in one pass at the end: a retain per file made
    // unlinking n files quadratic (issue 28: 16,000 files took 12 s).
    let mut removed = std::collections::HashSet::new();
    let mut result = Ok(());
    let mut parents = fiox_guard::Parents::new();
    for f in plan.files.iter().filter(|f| f.kind == FileKind::Regular) {
        match unlink_owned_in(&mut parents, &f.path) {
            Ok(true) => {
                forget(&f.path);
                removed.insert(f.path.as_path());
            }
            Ok(false) => {}
            Err(e) => {
                result = Err(RunError::io("unlink", &f.path, e));
                break;
            }
        }
    }
    if !removed.is_empty() {
        leftovers.retain(|p| !removed.contains(p.as_path()));
    }
    result
}

/// end_syncfs: one syncfs(2) per filesystem holding a regular file of the job, through its
/// directory (fio's add_file_fs/fio_syncfs: filesystems told apart by the directory's device).
fn syncfs_all(plan: &FilePlan) -> Result<(), RunError> {
    use std::os::unix::fs::MetadataExt;
    let mut seen = Vec::new();
    for f in plan.files.iter().filter(|f| f.kind == FileKind::Regular) {
        let dir = match f.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let m = std::fs::metadata(dir).map_err(|e| RunError::io("stat for end_syncfs", dir, e))?;
        if seen.contains(&m.dev()) {
            continue;
        }
        seen.push(m.dev());
        let d = File::open(dir).map_err(|e| RunError::io("open for end_syncfs", dir, e))?;
        crate::sys::syncfs(d.as_raw_fd()).map_err(|e| RunError::io("syncfs", dir, e))?;
    }
    Ok(())
}

/// Engines that can run end_syncfs's syncfs(2): fio's FIO_SYNCFS and FIO_ASYNCIO_SYNC_SYNCFS.
const SYNCFS_ENGINES: &[Engine] = &[
    Engine::Sync,
    Engine::Psync,
    Engine::Vsync,
    Engine::Pvsync,
    Engine::Pvsync2,
    Engine::Falloc,
    Engine::Ftruncate,
    Engine::Filecreate,
    Engine::Filedelete,
    Engine::Dirdelete,
    Engine::IoUring,
    Engine::Libaio,
    Engine::Posixaio,
];

/// end_syncfs with an engine that cannot sync is refused at setup, as fio does (EINVAL).
pub fn check_end_syncfs(job: &JobSpec) -> Result<(), RunError> {
    let syncs = |e: Engine| SYNCFS_ENGINES.contains(&e);
    if !job.end_syncfs || job.ioengine.has(syncs) {
        return Ok(());
    }
    let e = job.ioengine.as_str().trim().to_ascii_lowercase();
    let names: Vec<&str> = SYNCFS_ENGINES.iter().map(|e| e.name()).collect();
    Err(RunError::Job {
        job: job.name.clone(),
        msg: format!(
            "end_syncfs: ioengine={e} does not support syncfs (fio says the same); use \
             end_fsync=1 or one of: {}",
            names.join(", ")
        ),
    })
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::{RwMode, RwSpec, SizeSpec};

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fiox-owned-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn write_job(path: &Path) -> JobSpec {
        let mut j = JobSpec {
            name: "w".into(),
            rw: RwSpec {
                mode: RwMode::Write,
                n: 0,
            },
            size: Some(SizeSpec::Bytes(64 << 10)),
            ..JobSpec::default()
        };
        j.files.filenames = vec![path.display().to_string()];
        j
    }

    fn xattrs_work(d: &Path) -> bool {
        let p = d.join("probe");
        let f = File::create(&p).unwrap();
        let set = crate::sys::fset_xattr(f.as_raw_fd(), MARK, b"1");
        std::fs::remove_file(&p).unwrap();
        if let Err(e) = &set {
            let fs = format!("user extended attributes on {}", d.display());
            crate::test_need::skip_for_kernel(&fs, &e.to_string());
        }
        set.is_ok()
    }

    /// A new file at `p` with `data`, marked by fiox.
    fn fiox_file(p: &Path, data: &[u8]) -> File {
        let f = crate::files::safeopen::create_new(p, Layout::Complete)
            .unwrap()
            .unwrap();
        std::fs::write(p, data).unwrap();
        f
    }

    /// The mark's value binds it to one inode: the same value on a copy, a forged value and
    /// the old "1" are foreign; a partial layout is told apart from a complete one.
    #[test]
    fn mark_binds_to_the_inode_and_records_the_layout() {
        let d = dir("bind");
        if !xattrs_work(&d) {
            return;
        }
        let p = d.join("f");
        let f = fiox_file(&p, b"data");
        let value = crate::sys::fget_xattr(f.as_raw_fd(), MARK).unwrap();
        assert!(matches!(mark_of(&p), Mark::Ours(Layout::Complete)));
        let copy = d.join("copy");
        std::fs::copy(&p, &copy).unwrap();
        let c = File::options().write(true).open(&copy).unwrap();
        for v in [&value[..], b"0", b"1", b"v2:0:0:-:done"] {
            crate::sys::fset_xattr(c.as_raw_fd(), MARK, v).unwrap();
            assert!(matches!(mark_of(&copy), Mark::Foreign), "{v:?}");
            let why = mark_of_file(&c).why_not_ours().unwrap();
            assert!(why.contains("marked by an older fiox or copied"), "{why}");
        }
        // Judged from the attribute alone (a later run has no memory of this one): see
        // fiox_guard::mark's a_mark_binds_its_inode_and_its_state.
        mark(&f, &p, Layout::Partial).unwrap();
        assert!(layout_incomplete(&p));
        mark(&f, &p, Layout::Complete).unwrap();
        assert!(!layout_incomplete(&p));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// unlink removes fiox's inode only: not a symbolic link to it, not a file renamed over it.
    fn unlink_owned(p: &Path) -> io::Result<bool> {
        unlink_owned_in(&mut fiox_guard::Parents::new(), p)
    }

    #[test]
    fn unlink_owned_checks_the_path_is_still_fioxs_inode() {
        let d = dir("unlink-owned");
        let p = d.join("f");
        fiox_file(&p, b"fiox");
        let link = d.join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert!(!unlink_owned(&link).unwrap());
        assert!(std::fs::symlink_metadata(&link).is_ok());
        let mine = d.join("mine");
        std::fs::write(&mine, b"user").unwrap();
        std::fs::rename(&mine, &p).unwrap();
        assert!(!unlink_owned(&p).unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"user");
        std::fs::remove_file(&p).unwrap();
        fiox_file(&p, b"fiox");
        assert!(unlink_owned(&p).unwrap());
        assert!(!p.exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unlink_spares_unmarked_files() {
        let d = dir("unlink");
        let p = d.join("f");
        std::fs::write(&p, b"user data").unwrap();
        let mut job = write_job(&p);
        job.files.unlink = true;
        let plan = files::plan(&job, false).unwrap();
        finish_files(&job, &mut [None], &plan, &mut Vec::new()).unwrap();
        assert!(p.exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
