//! Scratch space the user declared once: directories and devices where fiox may write over
//! existing files it did not create, as fio does everywhere (a file fio made yesterday, one
//! `dd` prepared, bench-fio's target). Declared in the environment variable [`ENV`]
//! (`FIOX_SCRATCH=/mnt/scratch:/dev/nvme1n1`, paths separated by `:`) and/or in a config file,
//! one path per line with `#` comments: `$XDG_CONFIG_HOME/fiox/scratch` (by default
//! `~/.config/fiox/scratch`) or `/etc/fiox/scratch`. A config file counts only when root or the
//! running user owns it and nobody else may write to it (another user must not be able to
//! declare someone's data scratch). Entries that do not exist or are not absolute are ignored.
//!
//! Whether a file lies in scratch space is decided on the descriptor the job writes through,
//! not on a path checked earlier: a regular file's location is the kernel's own path of that
//! open file (/proc/thread-self/fd), which must lie below a declared directory; a block device
//! must be a declared device (its device number). The file must also be on the declared
//! directory's own mount (a bind mount or another filesystem mounted inside scratch space
//! reaches data outside it) and have no other hard link (a link made inside scratch space to a
//! file elsewhere is that file): both fail closed, so a mount inside scratch space is declared
//! on its own line. The declaration lifts the "existing data" refusals only; a file backing a
//! loop device or a kernel pseudo-file stays refused.

use crate::ident::Stat;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable that declares scratch space.
pub const ENV: &str = "FIOX_SCRATCH";

/// What refusal messages offer as the fix, beside `allow_mounted_write=1`.
pub const HINT: &str = "or declare the directory or device scratch space once, e.g. \
                        FIOX_SCRATCH=/path/to/dir (README: Scratch space)";

/// The declared scratch directories (canonical, with the mount each is on) and devices
/// (device numbers).
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    dirs: Vec<(PathBuf, Option<u64>)>,
    devices: Vec<(PathBuf, u64)>,
}

impl Scratch {
    /// Scratch space from a list of paths (the environment variable's value and the config
    /// files' lines): directories resolved to their canonical path now, devices to their
    /// number; what does not exist is left out.
    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a str>) -> Scratch {
        let mut s = Scratch::default();
        for p in paths.into_iter().map(str::trim) {
            let p = Path::new(p);
            if !p.is_absolute() {
                continue;
            }
            let Ok(canon) = std::fs::canonicalize(p) else {
                continue;
            };
            match std::fs::metadata(&canon) {
                Ok(m) if m.is_dir() => {
                    let mnt = mount_of(&canon);
                    s.dirs.push((canon, mnt))
                }
                Ok(m) if m.file_type().is_block_device() => s.devices.push((canon, m.rdev())),
                _ => {}
            }
        }
        s
    }

    /// What this process's environment and config files declare (read once).
    pub fn declared() -> &'static Scratch {
        static DECLARED: OnceLock<Scratch> = OnceLock::new();
        DECLARED.get_or_init(|| {
            let env = std::env::var(ENV).unwrap_or_default();
            let mut lines: Vec<String> = env.split(':').map(str::to_string).collect();
            for f in config_files() {
                lines.extend(read_config(&f).unwrap_or_default());
            }
            Scratch::from_paths(lines.iter().map(String::as_str))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty() && self.devices.is_empty()
    }

    /// The declared entry that covers the file open as `file`, None when none does.
    pub fn covers(&self, file: &File) -> Option<&Path> {
        if self.is_empty() {
            return None;
        }
        let m = file.metadata().ok()?;
        if m.file_type().is_block_device() {
            return self.device(m.rdev());
        }
        if !m.is_file() {
            return None;
        }
        // A second hard link may be outside scratch space: the data is that file's too.
        let st = crate::sys::statx(file.as_fd(), std::ffi::OsStr::new("")).ok()?;
        if st.stx_nlink != 1 {
            return None;
        }
        let mnt = Stat::from_statx(&st).mnt_id?;
        // The kernel's path of this open file (where it is now, links resolved).
        let here = std::fs::read_link(crate::sys::fd_path(file.as_raw_fd())).ok()?;
        if here.to_string_lossy().ends_with(" (deleted)") {
            return None;
        }
        self.dirs
            .iter()
            .find(|(d, dm)| here.starts_with(d) && here != *d && *dm == Some(mnt))
            .map(|(d, _)| d.as_path())
    }

    /// The declared device entry with device number `rdev`.
    pub fn device(&self, rdev: u64) -> Option<&Path> {
        self.devices
            .iter()
            .find(|(_, d)| *d == rdev)
            .map(|(p, _)| p.as_path())
    }
}

/// The mount a declared directory is on (None when the kernel does not say: nothing below it
/// is then covered).
fn mount_of(dir: &Path) -> Option<u64> {
    let d = File::open(dir).ok()?;
    let st = crate::sys::statx(d.as_fd(), std::ffi::OsStr::new("")).ok()?;
    Stat::from_statx(&st).mnt_id
}

/// The config files that may declare scratch space, in the order read.
fn config_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    match std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
        Some(x) => v.push(PathBuf::from(x).join("fiox/scratch")),
        None => {
            if let Some(h) = std::env::var_os("HOME").filter(|x| !x.is_empty()) {
                v.push(PathBuf::from(h).join(".config/fiox/scratch"));
            }
        }
    }
    v.push(PathBuf::from("/etc/fiox/scratch"));
    v
}

/// The paths a config file lists, when the file may declare scratch space (a regular file
/// owned by root or this user, writable by nobody else).
fn read_config(path: &Path) -> Option<Vec<String>> {
    let f = crate::named::open(path, libc::O_RDONLY | libc::O_NONBLOCK).ok()?;
    let m = f.metadata().ok()?;
    let owner_ok = m.uid() == 0 || m.uid() == crate::sys::euid();
    if !m.is_file() || !owner_ok || m.mode() & 0o022 != 0 || m.len() > 1 << 16 {
        return None;
    }
    let text = std::io::read_to_string(f).ok()?;
    Some(
        text.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect(),
    )
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the test builds its own scratch files
mod tests {
    use super::*;

    #[test]
    fn a_file_counts_by_where_its_descriptor_is() {
        let base = std::env::temp_dir().join(format!("fiox-scratch-{}", std::process::id()));
        let (inside, outside) = (base.join("in"), base.join("out"));
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let a = inside.join("a");
        std::fs::write(&a, b"x").unwrap();
        std::fs::write(outside.join("b"), b"x").unwrap();
        // A link from scratch space to a file outside it does not make that file scratch.
        std::os::unix::fs::symlink(outside.join("b"), inside.join("l")).unwrap();
        let s = Scratch::from_paths([inside.to_str().unwrap(), "relative/ignored", "/nonexistent"]);
        assert!(s.covers(&File::open(&a).unwrap()).is_some());
        assert!(s.covers(&File::open(inside.join("l")).unwrap()).is_none());
        assert!(s.covers(&File::open(outside.join("b")).unwrap()).is_none());
        // "in2" is not below "in".
        let sib = base.join("in2");
        std::fs::create_dir_all(&sib).unwrap();
        std::fs::write(sib.join("c"), b"x").unwrap();
        assert!(s.covers(&File::open(sib.join("c")).unwrap()).is_none());
        // Renamed out of scratch space after it was opened: no longer covered.
        let f = File::open(&a).unwrap();
        std::fs::rename(&a, outside.join("a")).unwrap();
        assert!(s.covers(&f).is_none());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_config_file_others_may_write_declares_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("fiox-scratch-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let cfg = base.join("scratch");
        std::fs::write(&cfg, "# scratch\n/tmp # comment\n\n").unwrap();
        std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(read_config(&cfg).unwrap(), vec!["/tmp".to_string()]);
        std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(read_config(&cfg).is_none());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
