//! fio's `lockfile=` (filesetup.c lock_file/unlock_file, taken in td_io_prep and released
//! after the engine's queue): each file of a job has one lock, shared by the job's `numjobs`
//! clones that use the same file (fio's dup_files hands the clones of a job with `filename=`
//! the parent's lock; clones with files of their own, and separate jobs naming the same file,
//! lock separately, as in fio). fio 3.33 makes a `filename=` file's lock only when `lockfile`
//! was parsed before `filename`, and silently locks nothing otherwise; fiox locks in either
//! order. An I/O holds its file's lock while it is submitted, so
//! with a synchronous engine the I/O itself runs under it: `exclusive` lets one I/O at a time
//! at the file, `readwrite` lets reads share it and gives anything else (write, trim, sync)
//! the file alone. Only jobs with a lock mode take this path; the I/O loop's lean loop is
//! left to the others.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use fiox_job::{JobSpec, LockFile};

/// The locks of one job and its clones, one per file path, made as the clones ask for them.
#[derive(Debug, Default)]
pub struct Shared {
    files: Mutex<HashMap<String, Arc<RwLock<()>>>>,
}

/// Per job: the locks it shares with its clones (None: `lockfile=none`). Clones are the
/// consecutive jobs that numjobs expanded from one section: same name, the first with
/// `clone_index` 0.
pub fn table(jobs: &[JobSpec]) -> Vec<Option<Arc<Shared>>> {
    let mut current: Option<Arc<Shared>> = None;
    jobs.iter()
        .map(|j| {
            if j.files.lockfile == LockFile::None {
                current = None;
                return None;
            }
            if j.clone_index == 0 || current.is_none() {
                current = Some(Arc::new(Shared::default()));
            }
            current.clone()
        })
        .collect()
}

/// A job's file locks, as its I/O loop holds them (one lookup per I/O, no shared mutex).
#[derive(Debug)]
pub struct Locks {
    mode: LockFile,
    files: Vec<Arc<RwLock<()>>>,
}

/// A held lock, released when dropped (after the engine's queue returned): the file shared
/// with other readers, or alone; neither for a file index past the job's files (which a
/// planned I/O never has).
pub struct Held<'a> {
    _shared: Option<RwLockReadGuard<'a, ()>>,
    _alone: Option<RwLockWriteGuard<'a, ()>>,
}

impl Locks {
    /// The locks of a job's files (`paths`, in file-index order), taken from its clone
    /// group's `shared`: a path another clone uses gets that clone's lock.
    pub fn new(shared: &Shared, mode: LockFile, paths: &[String]) -> Locks {
        // A poisoned map only means a clone panicked while adding to it: the locks are valid.
        let mut all = shared.files.lock().unwrap_or_else(|e| e.into_inner());
        let files = paths
            .iter()
            .map(|p| Arc::clone(all.entry(p.clone()).or_default()))
            .collect();
        Locks { mode, files }
    }

    /// Lock file `file` for one I/O; `read` says whether the I/O is a read.
    pub fn lock(&self, file: u32, read: bool) -> Held<'_> {
        let (mut shared, mut alone) = (None, None);
        // The lock guards no data (only the I/O's timing), so a poisoned lock is still good.
        if let Some(l) = self.files.get(file as usize) {
            if read && self.mode == LockFile::ReadWrite {
                shared = Some(l.read().unwrap_or_else(|e| e.into_inner()));
            } else {
                alone = Some(l.write().unwrap_or_else(|e| e.into_inner()));
            }
        }
        Held {
            _shared: shared,
            _alone: alone,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(mode: LockFile, clone_index: u32) -> JobSpec {
        let mut j = JobSpec::default();
        j.files.lockfile = mode;
        j.clone_index = clone_index;
        j
    }

    #[test]
    fn clones_share_and_sections_do_not() {
        let jobs = [
            job(LockFile::Exclusive, 0),
            job(LockFile::Exclusive, 2),
            job(LockFile::Exclusive, 1),
            job(LockFile::Exclusive, 0),
            job(LockFile::None, 0),
        ];
        let t = table(&jobs);
        let (a, b, c, d) = (
            t[0].clone().unwrap(),
            t[1].clone().unwrap(),
            t[2].clone().unwrap(),
            t[3].clone().unwrap(),
        );
        assert!(Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&a, &c));
        assert!(!Arc::ptr_eq(&a, &d));
        assert!(t[4].is_none());
    }

    #[test]
    fn readers_share_writers_do_not() {
        let shared = Shared::default();
        let paths = ["f".to_string(), "g".to_string()];
        let rw1 = Locks::new(&shared, LockFile::ReadWrite, &paths);
        let rw2 = Locks::new(&shared, LockFile::ReadWrite, &paths);
        // A clone with a file of its own locks it alone.
        let own = Locks::new(&shared, LockFile::ReadWrite, &["h".to_string()]);
        let _w = own.lock(0, false);
        let r1 = rw1.lock(0, true);
        // A second reader gets in while the first holds the file.
        assert!(rw2.files[0].try_read().is_ok());
        // A writer does not, and another file is free.
        assert!(rw2.files[0].try_write().is_err());
        assert!(rw2.files[1].try_write().is_ok());
        drop(r1);
        let w = rw1.lock(0, false);
        assert!(rw2.files[0].try_read().is_err());
        drop(w);
        // exclusive: readers too have the file alone.
        let ex = Locks::new(&shared, LockFile::Exclusive, &paths[..1]);
        let r = ex.lock(0, true);
        assert!(rw2.files[0].try_read().is_err());
        drop(r);
        let past = ex.lock(7, true);
        assert!(past._shared.is_none() && past._alone.is_none());
    }
}
