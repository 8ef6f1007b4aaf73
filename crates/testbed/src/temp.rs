//! Fresh temporary directories and files, each registered with the cleanup registry so they
//! disappear on drop or on `cleanup_all`. Names carry the pid and a counter, so parallel test
//! threads and processes never collide.

use crate::cleanup::{Cleanup, CleanupGuard, Undo};
use crate::error::{Result, TestbedError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A path that nobody uses yet: `$TMPDIR/fiox-testbed-<pid>-<n>-<tag>` (not created).
pub fn unique_path(tag: &str) -> PathBuf {
    unique_path_in(&std::env::temp_dir(), tag)
}

/// Like [`unique_path`] under `parent`.
pub fn unique_path_in(parent: &Path, tag: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    parent.join(format!("fiox-testbed-{}-{n}-{tag}", std::process::id()))
}

/// A directory created by this crate, removed with its contents (never crossing into a
/// mount) when dropped.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
    guard: CleanupGuard,
}

impl TempDir {
    /// Create a fresh directory under the system temp dir.
    pub fn new(tag: &str) -> Result<TempDir> {
        TempDir::new_in(&std::env::temp_dir(), tag)
    }

    /// Create a fresh directory under `parent` (which must exist).
    pub fn new_in(parent: &Path, tag: &str) -> Result<TempDir> {
        let path = unique_path_in(parent, tag);
        std::fs::create_dir(&path).map_err(|e| TestbedError::io("create directory", &path, e))?;
        let guard = Cleanup::register(Undo::RemoveTree(path.clone()));
        Ok(TempDir { path, guard })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove it now, reporting failure.
    pub fn remove(self) -> Result<()> {
        self.guard.run()
    }
}

/// Create `path` as a new sparse file of `size` bytes (fails if it exists) and register its
/// removal.
pub fn create_sparse_file(path: &Path, size: u64) -> Result<CleanupGuard> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| TestbedError::io("create", path, e))?;
    let guard = Cleanup::register(Undo::RemoveFile(path.to_path_buf()));
    f.set_len(size)
        .map_err(|e| TestbedError::io("truncate", path, e))?;
    Ok(guard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_dir_is_removed_with_contents_on_drop() {
        let d = TempDir::new("td").unwrap();
        let p = d.path().to_path_buf();
        std::fs::create_dir(p.join("sub")).unwrap();
        std::fs::write(p.join("sub/f"), b"x").unwrap();
        drop(d);
        assert!(!p.exists());
    }

    #[test]
    fn sparse_file_has_size_and_goes_away() {
        let d = TempDir::new("sp").unwrap();
        let f = d.path().join("img");
        let g = create_sparse_file(&f, 10 << 20).unwrap();
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 10 << 20);
        assert!(
            create_sparse_file(&f, 1).is_err(),
            "must not clobber an existing file"
        );
        drop(g);
        assert!(!f.exists());
    }
}
