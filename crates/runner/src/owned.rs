//! Which regular files fiox owns, so that it never destroys a user's data: every file fiox
//! creates carries the extended attribute [`MARK`]; a job that would write over existing bytes
//! of a file without it is refused unless the user allowed it (`allow_mounted_write=1`, fio's
//! name, or `--allow-destructive`), and `unlink=1` removes only files fiox created (in this run
//! or marked by an earlier one). Filesystems without user extended attributes cannot carry
//! the mark: existing files there are treated as the user's, and the refusal says so.
//! Also the end of a job's file handling (end_fsync, fsync_on_close, close, unlink).

use crate::error::RunError;
use crate::files::{self, FileKind, FilePlan, PlannedFile};
use fiox_job::JobSpec;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The extended attribute that marks a file fiox created.
pub const MARK: &str = "user.fiox.created";

/// What a file's mark says.
#[derive(Debug)]
pub enum Mark {
    /// fiox created it.
    Marked,
    /// No mark: a file fiox did not create (or created before marking existed).
    Unmarked,
    /// The filesystem cannot tell (no user extended attributes).
    Unsupported(io::Error),
}

fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTSUP) | Some(libc::EPERM))
}

/// A file's identity: device, inode and birth time (when the filesystem records one, so an
/// inode number reused by a later file does not match).
type Identity = (u64, u64, Option<std::time::SystemTime>);

/// Files this process created: known to be fiox's even where the filesystem cannot carry
/// the mark, so a later job of the same run may write them.
static CREATED: std::sync::Mutex<Vec<Identity>> = std::sync::Mutex::new(Vec::new());

fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.created().ok()))
}

fn created_by_this_run(path: &Path) -> bool {
    let Some(id) = identity(path) else {
        return false;
    };
    let list = CREATED.lock().unwrap_or_else(|p| p.into_inner());
    list.contains(&id)
}

/// Files fiox created for jobs that asked for `unlink`: what a forced exit (second Ctrl-C)
/// still removes, since the jobs never reach their own cleanup.
static UNLINK_ON_EXIT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Remember a file this job created and must remove: in the job's `leftovers` (removed if
/// the job is aborted) and for a forced exit.
pub fn leave(leftovers: &mut Vec<PathBuf>, path: &Path) {
    leftovers.push(path.to_path_buf());
    UNLINK_ON_EXIT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(path.to_path_buf());
}

/// The file is gone (or left to its job's cleanup): a forced exit need not remove it.
pub fn forget(path: &Path) {
    UNLINK_ON_EXIT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|p| p != path);
}

/// On a forced exit: remove every file still registered by [`leave`] that carries fiox's
/// mark (someone may have replaced it since). Best effort; returns how many were removed.
pub fn remove_left_files() -> usize {
    let list = std::mem::take(&mut *UNLINK_ON_EXIT.lock().unwrap_or_else(|p| p.into_inner()));
    list.iter()
        .filter(|p| matches!(mark_of(p), Mark::Marked) && std::fs::remove_file(p).is_ok())
        .count()
}

/// Mark a file fiox just created. Where the filesystem has no user extended attributes the
/// file stays unmarked (a later run asks for the explicit allow; this run remembers it);
/// other failures are errors.
pub fn mark(path: &Path) -> Result<(), RunError> {
    if let Some(id) = identity(path) {
        CREATED.lock().unwrap_or_else(|p| p.into_inner()).push(id);
    }
    match crate::sys::set_xattr(path, MARK, b"1") {
        Ok(()) => Ok(()),
        Err(e) if unsupported(&e) => Ok(()),
        Err(e) => Err(RunError::io("mark as created by fiox", path, e)),
    }
}

/// Read a file's mark (files this run created count as marked).
pub fn mark_of(path: &Path) -> Mark {
    if created_by_this_run(path) {
        return Mark::Marked;
    }
    match crate::sys::xattr_len(path, MARK) {
        Ok(_) => Mark::Marked,
        Err(e) if e.raw_os_error() == Some(libc::ENODATA) => Mark::Unmarked,
        Err(e) if unsupported(&e) => Mark::Unsupported(e),
        // Unreadable attributes: treat as the user's file (the safe side).
        Err(_) => Mark::Unmarked,
    }
}

/// Refuse a writing job whose region covers existing bytes of a regular file fiox did not
/// create, unless `allow_mounted_write=1` or `--allow-destructive` allows it. Files that are
/// only read, missing, empty, or written only past their end (file_append) are fine.
pub fn check_user_files(job: &JobSpec, plan: &FilePlan, allow: bool) -> Result<(), RunError> {
    if !files::job_writes(job) || job.files.allow_mounted_write || allow {
        return Ok(());
    }
    for f in plan.files.iter().filter(|f| at_risk(f)) {
        let why = match mark_of(&f.path) {
            Mark::Marked => continue,
            Mark::Unmarked => "fiox did not create it".to_string(),
            Mark::Unsupported(e) => format!(
                "fiox cannot tell whether it created it: the filesystem does not support the \
                 extended attribute {MARK} ({e})"
            ),
        };
        return Err(RunError::Refused(format!(
            "job '{}': refusing to write to {}: it holds {} bytes of existing data and {why}; \
             writing would destroy that data (set allow_mounted_write=1 in the job or pass \
             --allow-destructive to write to it anyway)",
            job.name,
            f.path.display(),
            f.real_size
        )));
    }
    Ok(())
}

/// `--readonly`: every job that would write, trim, or unlink its files, refused before any
/// job starts (laying out is refused per file when a job finds its file missing or short).
pub fn readonly_refusals(jobs: &[JobSpec]) -> Vec<(usize, RunError)> {
    let mut out = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let what = if files::job_writes(j) {
            format!("rw={} writes", j.rw.mode.fio_name())
        } else if j.files.unlink {
            "unlink=1 removes its files".to_string()
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

/// A regular file with data where the job's region starts.
fn at_risk(f: &PlannedFile) -> bool {
    f.kind == FileKind::Regular && f.real_size > 0 && f.offset < f.real_size
}

/// Whether `unlink=1` may remove this file: fiox created it now or in an earlier run.
pub fn may_unlink(f: &PlannedFile) -> bool {
    f.created || matches!(mark_of(&f.path), Mark::Marked)
}

/// end_fsync, fsync_on_close, close, then unlink (only files fiox created, see
/// [`may_unlink`]). Files removed are dropped from `leftovers`.
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
            Some(f) if writes && (job.end_fsync || job.fsync_on_close) => {
                f.sync_all().map_err(|e| RunError::io("fsync", path, e))?;
            }
            // Closed by the openfiles gate (which fsyncs on close itself): end_fsync still
            // covers every file of the job, as in fio.
            None if writes && job.end_fsync && path.is_file() => {
                let f = File::options()
                    .write(true)
                    .open(path)
                    .map_err(|e| RunError::io("open for end_fsync", path, e))?;
                f.sync_all()
                    .map_err(|e| RunError::io("end_fsync", path, e))?;
            }
            _ => {}
        }
    }
    if !job.files.unlink {
        return Ok(());
    }
    for f in plan
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Regular && may_unlink(f))
    {
        if let Some(id) = identity(&f.path) {
            // The inode may be reused by someone else's file once this one is gone.
            CREATED
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|c| *c != id);
        }
        if let Err(e) = std::fs::remove_file(&f.path) {
            if e.kind() != io::ErrorKind::NotFound {
                return Err(RunError::io("unlink", &f.path, e));
            }
        }
        leftovers.retain(|p| p != &f.path);
        forget(&f.path);
    }
    Ok(())
}

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
        std::fs::write(&p, b"x").unwrap();
        let ok = crate::sys::set_xattr(&p, MARK, b"1").is_ok();
        std::fs::remove_file(&p).unwrap();
        ok
    }

    #[test]
    fn user_file_is_refused_marked_file_is_not() {
        let d = dir("check");
        let p = d.join("f");
        std::fs::write(&p, vec![7u8; 64 << 10]).unwrap();
        let job = write_job(&p);
        let plan = files::plan(&job, false).unwrap();
        let e = check_user_files(&job, &plan, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("allow_mounted_write=1"), "{e}");
        assert!(e.contains(&p.display().to_string()), "{e}");
        assert!(check_user_files(&job, &plan, true).is_ok());
        if xattrs_work(&d) {
            mark(&p).unwrap();
            assert!(check_user_files(&job, &plan, false).is_ok());
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn reading_or_appending_is_fine() {
        let d = dir("read");
        let p = d.join("f");
        std::fs::write(&p, vec![7u8; 64 << 10]).unwrap();
        let mut job = write_job(&p);
        job.rw.mode = RwMode::Read;
        let plan = files::plan(&job, false).unwrap();
        assert!(check_user_files(&job, &plan, false).is_ok());
        let mut job = write_job(&p);
        job.files.file_append = true;
        let plan = files::plan(&job, false).unwrap();
        assert!(check_user_files(&job, &plan, false).is_ok());
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
