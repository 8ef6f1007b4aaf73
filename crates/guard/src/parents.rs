//! Parent directories held open across a run of paths: removing or creating many files of one
//! directory walks from `/` to it once ([`Dir::open`], never following a link) instead of once
//! per file (issue 28: 100,000 files made 400,000 walk steps at `unlink=1`). A held descriptor
//! is as safe as a fresh one: every check and removal is still made per file on it, and a
//! directory renamed or replaced by a link after it was opened changes nothing of where fiox
//! acts (the inode fiox opened, where it created its files).

use crate::{Dir, Result};
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
        let hit = matches!(&self.held, Some((p, _)) if p == parent);
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
        assert!(!p.remove_owned(&base.join("gone/4")).unwrap());
        // The held directory replaced by a link after it was opened: removals still act in
        // the directory fiox opened (where its files are), never through the link.
        let mut p = Parents::new();
        let c = Dir::create_all(&base.join("c"), 0o700).unwrap();
        c.create_file("5".as_ref(), 0o600, crate::Layout::Complete)
            .unwrap();
        c.create_file("6".as_ref(), 0o600, crate::Layout::Complete)
            .unwrap();
        assert!(p.remove_owned(&base.join("c/5")).unwrap());
        std::fs::rename(base.join("c"), base.join("c-moved")).unwrap();
        std::fs::create_dir(base.join("elsewhere")).unwrap();
        std::fs::write(base.join("elsewhere/6"), b"user data").unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("c")).unwrap();
        assert!(p.remove_owned(&base.join("c/6")).unwrap());
        assert!(!base.join("c-moved/6").exists());
        assert_eq!(
            std::fs::read(base.join("elsewhere/6")).unwrap(),
            b"user data"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
