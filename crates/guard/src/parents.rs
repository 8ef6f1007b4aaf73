//! Parent directories held open across a run of paths: creating or removing many files of one
//! directory walks from `/` to it once ([`Dir::open`], never following a link fiox did not
//! make) instead of once per file (issue 28: 100,000 files made 400,000 walk steps at
//! `unlink=1`). Before each reuse one stat(2) of the parent's path must still find the held
//! inode: a directory renamed, removed or replaced since is walked to afresh, so a held
//! descriptor acts exactly where a fresh walk would, and every check and removal is still made
//! per file on it.

use crate::{Dir, Identity, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The last parent directory opened, reused while consecutive paths share it.
#[derive(Default)]
pub struct Parents {
    held: Option<(PathBuf, Dir)>,
}

impl Parents {
    pub fn new() -> Parents {
        Parents::default()
    }

    /// The directory holding `path` and the name inside it, as [`Dir::open_parent`] gives them,
    /// from the held descriptor when `path`'s parent is the one held.
    pub fn of(&mut self, path: &Path) -> Result<(&Dir, OsString)> {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        // The held directory serves only while the path still leads to it (one stat(2),
        // against a walk of every component).
        let hit = matches!(&self.held, Some((p, d)) if p == parent
            && std::fs::metadata(parent).is_ok_and(|m| Identity::of(&m) == d.stat_self().id));
        let name = if hit {
            match path.file_name() {
                // `file_name` is the last normal component, as open_parent takes it.
                Some(n)
                    if path
                        .components()
                        .next_back()
                        .is_some_and(|c| c.as_os_str() == n) =>
                {
                    n.to_os_string()
                }
                _ => return self.open(path, parent),
            }
        } else {
            return self.open(path, parent);
        };
        let dir = &self.held.as_ref().expect("held: checked above").1;
        Ok((dir, name))
    }

    fn open(&mut self, path: &Path, parent: &Path) -> Result<(&Dir, OsString)> {
        self.held = None;
        let (dir, name) = Dir::open_parent(path)?;
        let (_, dir) = self.held.insert((parent.to_path_buf(), dir));
        Ok((dir, name))
    }

    /// [`crate::named::create_new`] of `path` through the held directory: the job's file
    /// made where nothing is (not even a link), marked with `layout`; None when something is.
    pub fn create_new(
        &mut self,
        path: &Path,
        layout: crate::Layout,
    ) -> Result<Option<std::fs::File>> {
        let (dir, name) = self.of(path)?;
        match dir.create_file(&name, 0o644, layout) {
            Ok(f) => Ok(Some(f)),
            Err(e) if e.is_exists() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// [`Dir::remove_owned`] of `path`: false when it is not fiox's or its directory is gone.
    pub fn remove_owned(&mut self, path: &Path) -> Result<bool> {
        match self.of(path) {
            Ok((dir, name)) => dir.remove_owned(&name),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }
}

#[allow(clippy::disallowed_methods)] // the test builds its scratch files itself
#[cfg(test)]
mod tests {
    use super::*;

    fn intact_user(p: &Path) -> bool {
        std::fs::read(p).map(|b| b == b"data").unwrap_or(false)
    }

    #[test]
    fn one_descriptor_serves_a_directory_and_a_new_parent_is_opened() {
        let base = std::env::temp_dir().join(format!("fiox-parents-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let a = Dir::create_all(&base.join("a"), 0o700).unwrap();
        let b = Dir::create_all(&base.join("b"), 0o700).unwrap();
        for n in ["1", "2"] {
            a.create_file(n.as_ref(), 0o600, crate::Layout::Complete)
                .unwrap();
        }
        b.create_file("3".as_ref(), 0o600, crate::Layout::Complete)
            .unwrap();
        std::fs::write(base.join("a/user"), b"data").unwrap();
        let mut p = Parents::new();
        assert!(p.remove_owned(&base.join("a/1")).unwrap());
        let first = p.of(&base.join("a/2")).unwrap().0.path().to_path_buf();
        assert!(p.remove_owned(&base.join("a/2")).unwrap());
        assert_eq!(first, base.join("a"));
        // A file fiox did not make stays, through the held descriptor too.
        assert!(!p.remove_owned(&base.join("a/user")).unwrap());
        assert!(base.join("a/user").exists());
        assert!(p.remove_owned(&base.join("b/3")).unwrap());
        let made = p
            .create_new(&base.join("b/7"), crate::Layout::Complete)
            .unwrap();
        assert!(made.is_some() && base.join("b/7").exists());
        assert!(p
            .create_new(&base.join("a/user"), crate::Layout::Complete)
            .unwrap()
            .is_none());
        assert!(intact_user(&base.join("a/user")));
        assert!(!p.remove_owned(&base.join("gone/4")).unwrap());
        // The held directory replaced by a link after it was opened: the next path is walked
        // to afresh, as without a held directory; the user's file where the link leads stays.
        let mut p = Parents::new();
        let c = Dir::create_all(&base.join("c"), 0o700).unwrap();
        c.create_file("5".as_ref(), 0o600, crate::Layout::Complete)
            .unwrap();
        c.create_file("6".as_ref(), 0o600, crate::Layout::Complete)
            .unwrap();
        assert!(p.remove_owned(&base.join("c/5")).unwrap());
        std::fs::rename(base.join("c"), base.join("c-moved")).unwrap();
        std::fs::create_dir(base.join("elsewhere")).unwrap();
        std::fs::write(base.join("elsewhere/6"), b"data").unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("c")).unwrap();
        assert!(!p.remove_owned(&base.join("c/6")).unwrap());
        assert!(intact_user(&base.join("elsewhere/6")));
        assert!(base.join("c-moved/6").exists());
        // A directory removed and made again under the same name: files go to the new one.
        let mut p = Parents::new();
        Dir::create_all(&base.join("d"), 0o700).unwrap();
        assert!(p
            .create_new(&base.join("d/8"), crate::Layout::Complete)
            .unwrap()
            .is_some());
        std::fs::remove_dir_all(base.join("d")).unwrap();
        std::fs::create_dir(base.join("d")).unwrap();
        assert!(p
            .create_new(&base.join("d/9"), crate::Layout::Complete)
            .unwrap()
            .is_some());
        assert!(base.join("d/9").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
