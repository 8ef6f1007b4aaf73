//! What the user allowed fiox to write over, bound to the object and not to its name.
//!
//! `--allow-destructive=PATH` names one file or device. A name can change meaning between the
//! moment it is read and the moment a job opens it (another user plants a link in /tmp at
//! PATH, or swaps one there), so PATH is resolved once, at the start of the run, through the
//! guard's walk (a symbolic link is followed only when root or the running user owns it), and
//! what it names is kept as an identity: a regular file's (device, inode, birth time), a device node's
//! number. A job's open is then allowed when `fstat` of the descriptor it actually holds
//! matches, whatever path led there ([`Allowed::allows`]).
//!
//! The global switch (`--allow-destructive` with no PATH) allows any file the job names, but
//! only as the user named it: [`reached_as_named`] checks that the descriptor is the object
//! the job's path reaches without passing another user's link in a sticky world-writable
//! directory (the rule of the kernel's `fs.protected_symlinks`, applied whatever that sysctl
//! says), so a link planted in /tmp does not turn the switch against a file elsewhere.

use crate::dir::{walk_with, End, Follow};
use crate::error::{GuardError, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The object an allowed path named when the run started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A regular file (or anything that is not a device): its identity (device, inode number
    /// and birth time, so a later file that reuses the inode number is another file).
    Inode(crate::Identity),
    /// A block or character device node: the device number it opens, whichever node names it.
    Device { rdev: u64 },
}

impl Target {
    /// The target an open file's metadata (fstat of its descriptor) is.
    pub fn of(m: &std::fs::Metadata) -> Target {
        let ft = m.file_type();
        if ft.is_block_device() || ft.is_char_device() {
            Target::Device { rdev: m.rdev() }
        } else {
            Target::Inode(crate::Identity::of(m))
        }
    }
}

/// The resolved `--allow-destructive=PATH` targets of a run.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    targets: Vec<(PathBuf, Target)>,
}

impl Allowed {
    /// Resolve each allowed path once (see the module's doc). A path where nothing exists yet
    /// allows nothing (a file fiox creates there is fiox's anyway); a path that passes through
    /// another user's symbolic link is refused, naming the link.
    pub fn resolve(paths: &[PathBuf]) -> Result<Allowed> {
        let mut targets = Vec::with_capacity(paths.len());
        for p in paths {
            let fd = match walk_with(p, Follow::Trusted, End::Any) {
                Ok(fd) => fd,
                Err(e) => match e.into_error("resolve --allow-destructive", p) {
                    e if e.is_not_found() => continue,
                    GuardError::Refused { path, why, .. } => {
                        return Err(GuardError::refused(
                            "allow writing through",
                            &path,
                            format!("{why} (--allow-destructive={})", p.display()),
                        ))
                    }
                    e => return Err(e),
                },
            };
            let m = std::fs::File::from(fd)
                .metadata()
                .map_err(|e| GuardError::io("stat", p, e))?;
            targets.push((p.clone(), Target::of(&m)));
        }
        Ok(Allowed { targets })
    }

    /// No target (no `--allow-destructive=PATH`).
    pub const fn none() -> Allowed {
        Allowed {
            targets: Vec::new(),
        }
    }

    /// The allowed path whose object the open file with metadata `m` (fstat of the
    /// descriptor the job holds) is, if any.
    pub fn allows(&self, m: &std::fs::Metadata) -> Option<&Path> {
        let t = Target::of(m);
        self.targets
            .iter()
            .find(|(_, x)| *x == t)
            .map(|(p, _)| p.as_path())
    }

    /// Whether a device number is one of the targets.
    pub fn allows_device(&self, rdev: u64) -> bool {
        self.targets
            .iter()
            .any(|(_, t)| *t == Target::Device { rdev })
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
}

/// Whether the open file with metadata `m` is what `path` reaches when links are followed
/// under the protected-symlinks rule (see the module's doc): Ok(()) when it is; a refusal
/// naming the link when the path passes through another user's link in a sticky
/// world-writable directory, or the object when the path now reaches something else.
pub fn reached_as_named(path: &Path, m: &std::fs::Metadata) -> Result<()> {
    let fd = walk_with(path, Follow::Protected, End::Any).map_err(|e| {
        match e.into_error("open", path) {
            GuardError::Refused { path: at, .. } => GuardError::refused(
                "write through",
                &at,
                format!(
                "it is another user's symbolic link in a directory everyone may write (sticky, \
                 like /tmp), so it may point anywhere; fiox does not follow it to {} even with \
                 --allow-destructive; name the real file",
                path.display()
            ),
            ),
            e => e,
        }
    })?;
    let found = std::fs::File::from(fd)
        .metadata()
        .map_err(|e| GuardError::io("stat", path, e))?;
    if Target::of(&found) != Target::of(m) {
        return Err(GuardError::refused(
            "write to",
            path,
            "it was replaced while fiox opened it (the path now names another file)",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the tests build their own scratch files
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fiox-allow-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A sticky world-writable directory holding a link owned by `nobody` to `victim`: the
    /// N1/N5 setup of the adversarial report.
    fn planted(d: &Path, victim: &Path) -> PathBuf {
        crate::test_need::require_root("chown a link to another user");
        let tmp = d.join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let link = tmp.join("bench.img");
        std::os::unix::fs::symlink(victim, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
        link
    }

    #[test]
    fn an_allowed_path_through_another_users_link_is_refused() {
        let d = scratch("n1");
        let victim = d.join("important");
        std::fs::write(&victim, b"data").unwrap();
        let link = planted(&d, &victim);
        let e = Allowed::resolve(std::slice::from_ref(&link))
            .unwrap_err()
            .to_string();
        assert!(e.contains("uid 65534"), "{e}");
        // The victim itself, named directly, is allowed by its identity.
        let a = Allowed::resolve(std::slice::from_ref(&victim)).unwrap();
        let f = std::fs::File::open(&victim).unwrap();
        assert_eq!(a.allows(&f.metadata().unwrap()), Some(victim.as_path()));
        // Another file is not, whatever its path.
        std::fs::write(d.join("other"), b"x").unwrap();
        let o = std::fs::File::open(d.join("other")).unwrap();
        assert_eq!(a.allows(&o.metadata().unwrap()), None);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_name_swapped_after_the_resolve_is_not_allowed() {
        let d = scratch("swap");
        let p = d.join("bench.img");
        std::fs::write(&p, b"mine").unwrap();
        let a = Allowed::resolve(std::slice::from_ref(&p)).unwrap();
        std::fs::remove_file(&p).unwrap();
        std::fs::write(d.join("victim"), b"data").unwrap();
        std::os::unix::fs::symlink(d.join("victim"), &p).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        assert_eq!(a.allows(&f.metadata().unwrap()), None);
        // Missing at the start: nothing is allowed.
        let none = Allowed::resolve(&[d.join("missing")]).unwrap();
        assert!(none.is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_global_switch_does_not_follow_a_planted_link() {
        let d = scratch("n5");
        let victim = d.join("important");
        std::fs::write(&victim, b"data").unwrap();
        let f = std::fs::File::open(&victim).unwrap();
        let m = f.metadata().unwrap();
        reached_as_named(&victim, &m).unwrap();
        let link = planted(&d, &victim);
        let e = reached_as_named(&link, &m).unwrap_err().to_string();
        assert!(e.contains("sticky"), "{e}");
        // The same link in a directory that is not shared is the user's to follow.
        let own = d.join("own.img");
        std::os::unix::fs::symlink(&victim, &own).unwrap();
        std::os::unix::fs::lchown(&own, Some(65534), Some(65534)).unwrap();
        reached_as_named(&own, &m).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }
}
