//! Fresh temporary directories and files, made through fiox-guard (O_EXCL, by directory
//! descriptor, never through a link) and each registered with the cleanup registry by its
//! identity, so they disappear on drop or on `cleanup_all` and nothing else found at their
//! names later is touched. Names carry the pid and a counter, so parallel test threads and
//! processes never collide.

use crate::cleanup::{Cleanup, CleanupGuard, Undo};
use crate::error::{Result, TestbedError};
use fiox_guard::{Dir, Identity, Layout};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name nobody uses yet: `fiox-testbed-<pid>-<n>-<tag>`.
pub fn unique_name(tag: &str) -> OsString {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("fiox-testbed-{}-{n}-{tag}", std::process::id()).into()
}

/// A path that nobody uses yet: `$TMPDIR/fiox-testbed-<pid>-<n>-<tag>` (not created).
pub fn unique_path(tag: &str) -> PathBuf {
    unique_path_in(&std::env::temp_dir(), tag)
}

/// Like [`unique_path`] under `parent`.
pub fn unique_path_in(parent: &Path, tag: &str) -> PathBuf {
    parent.join(unique_name(tag))
}

/// A directory created by this crate, removed with its contents (never crossing into a
/// mount) when dropped, if it is still the directory made.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
    dir: Arc<Dir>,
    guard: CleanupGuard,
}

impl TempDir {
    /// Create a fresh directory under the system temp dir.
    pub fn new(tag: &str) -> Result<TempDir> {
        TempDir::new_in(&std::env::temp_dir(), tag)
    }

    /// Create a fresh directory under `parent` (which must exist).
    pub fn new_in(parent: &Path, tag: &str) -> Result<TempDir> {
        let parent = Arc::new(Dir::open(parent)?);
        let (dir, guard) = fresh_dir(&parent, &unique_name(tag))?;
        Ok(TempDir {
            path: dir.path().to_path_buf(),
            dir: Arc::new(dir),
            guard,
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory, held open.
    pub fn dir(&self) -> &Arc<Dir> {
        &self.dir
    }

    /// Remove it now, reporting failure.
    pub fn remove(self) -> Result<()> {
        self.guard.run()
    }
}

/// Make the directory `name` in `parent` (nothing may be there) and register its removal as
/// a tree.
pub(crate) fn fresh_dir(parent: &Arc<Dir>, name: &OsStr) -> Result<(Dir, CleanupGuard)> {
    let dir = parent.create_dir(name, 0o755)?;
    let guard = Cleanup::register(Undo::RemoveTree {
        parent: parent.clone(),
        name: name.to_os_string(),
        id: dir.stat_self().id,
    });
    Ok((dir, guard))
}

/// Create `name` in `parent` as a new sparse file of `size` bytes (nothing may be there) and
/// register its removal; returns it open read-write.
pub fn create_sparse_in(
    parent: &Arc<Dir>,
    name: &OsStr,
    size: u64,
) -> Result<(File, CleanupGuard)> {
    let f = parent.create_file(name, 0o644, Layout::Complete)?;
    let path = parent.join(name);
    let meta = f
        .metadata()
        .map_err(|e| TestbedError::io("stat", &path, e))?;
    let guard = Cleanup::register(Undo::RemoveFile {
        parent: parent.clone(),
        name: name.to_os_string(),
        id: Identity::of(&meta),
    });
    f.set_len(size)
        .map_err(|e| TestbedError::io("size", &path, e))?;
    Ok((f, guard))
}

/// Create `path` as a new sparse file of `size` bytes (fails if anything is there, a link
/// included) and register its removal.
pub fn create_sparse_file(path: &Path, size: u64) -> Result<CleanupGuard> {
    let (dir, name) = Dir::open_parent(path)?;
    create_sparse_in(&Arc::new(dir), &name, size).map(|(_, g)| g)
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
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

    #[test]
    fn a_link_at_a_new_file_name_is_not_followed() {
        let d = TempDir::new("splink").unwrap();
        std::fs::write(d.path().join("victim"), b"v").unwrap();
        std::os::unix::fs::symlink(d.path().join("victim"), d.path().join("img")).unwrap();
        assert!(create_sparse_file(&d.path().join("img"), 1 << 20).is_err());
        assert_eq!(std::fs::read(d.path().join("victim")).unwrap(), b"v");
    }
}
