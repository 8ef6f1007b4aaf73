//! The process-wide cleanup registry: every resource this crate creates (loop binding, mount,
//! temp file or dir) registers an [`Undo`] action here before it is handed out, and holds a
//! [`CleanupGuard`] that runs the action when dropped. A shutdown path that cannot rely on
//! destructors (Ctrl-C: the runner's signal handler sets a flag, its main thread sees it and
//! exits) calls [`cleanup_all`], which runs every still-pending action newest first, so a mount
//! goes before its directory and a loop device before its backing file. Each action runs at
//! most once, whichever of guard and `cleanup_all` gets to it first. Every action is bound to
//! what was made (a directory's or file's identity, a mount id, a loop device's backing inode)
//! and carried out by fiox-guard, which leaves anything else found at the name alone.

use crate::error::{Result, TestbedError};
use crate::sys;
use fiox_guard::{mount, tree, Dir, Identity};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// One undo action, bound to what this crate made (an identity or a mount id), carried out
/// through fiox-guard: something else found at the name is left alone and reported.
#[derive(Debug, Clone)]
pub enum Undo {
    /// Unmount the mount `mnt_id` from the directory `name` in `parent` (retrying while busy,
    /// then lazily with MNT_DETACH). `None`: not mounted (yet), nothing to undo.
    Unmount {
        parent: Arc<Dir>,
        name: OsString,
        mnt_id: Option<u64>,
    },
    /// Detach loop device `device`, but only while it is still bound to the backing file
    /// identified by (`backing_dev`, `backing_ino`): after an autoclear another process may
    /// have reused the device number, and its binding must survive.
    DetachLoop {
        device: PathBuf,
        backing_dev: u64,
        backing_ino: u64,
    },
    /// Remove the file `name` in `parent` this crate created, while it is still `id`.
    RemoveFile {
        parent: Arc<Dir>,
        name: OsString,
        id: Identity,
    },
    /// Remove the empty directory `name` in `parent` this crate created (`id`).
    RemoveDir {
        parent: Arc<Dir>,
        name: OsString,
        id: Identity,
    },
    /// Remove the directory `name` in `parent` this crate created (`id`) and everything
    /// under it, never crossing into another mount (a mount that could not be undone keeps
    /// its contents).
    RemoveTree {
        parent: Arc<Dir>,
        name: OsString,
        id: Identity,
    },
}

/// How often and how long a busy unmount is retried.
const BUSY_RETRIES: u32 = 20;
const BUSY_PAUSE: Duration = Duration::from_millis(25);

impl Undo {
    /// Perform the action now. Already-undone resources (not mounted, no such file, loop
    /// device unbound) count as success.
    pub fn run(&self) -> Result<()> {
        match self {
            Undo::Unmount {
                parent,
                name,
                mnt_id: Some(id),
            } => unmount(parent, name, *id),
            Undo::Unmount { mnt_id: None, .. } => Ok(()),
            Undo::DetachLoop {
                device,
                backing_dev,
                backing_ino,
            } => fiox_guard::loopdev::detach_if(device, *backing_dev, *backing_ino)
                .map(|_| ())
                .map_err(TestbedError::from),
            Undo::RemoveFile { parent, name, id } | Undo::RemoveDir { parent, name, id } => {
                parent.remove_if(name, id).map(|_| ()).map_err(Into::into)
            }
            Undo::RemoveTree { parent, name, id } => tree::remove_tree(parent, name, id)
                .map(|_| ())
                .map_err(Into::into),
        }
    }
}

/// Unmount `mnt_id` from `name` in `parent`: retried while busy, then detached lazily (the
/// kernel frees it when the last user goes, and the directory can be removed).
pub(crate) fn unmount(parent: &Dir, name: &std::ffi::OsStr, mnt_id: u64) -> Result<()> {
    for attempt in 0..BUSY_RETRIES {
        match mount::unmount(parent, name, mnt_id, false) {
            Ok(_) => return Ok(()),
            Err(e) if e.os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(BUSY_PAUSE * (attempt + 1).min(4));
            }
            Err(e) => return Err(e.into()),
        }
    }
    mount::unmount(parent, name, mnt_id, true)
        .map(|_| ())
        .map_err(Into::into)
}

struct Entry {
    id: u64,
    undo: Undo,
}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn registry() -> MutexGuard<'static, Vec<Entry>> {
    // A panic while holding the lock cannot leave the Vec inconsistent (push/remove only),
    // and cleanup must still run after a panicking test.
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

fn take(id: u64) -> Option<Undo> {
    let mut reg = registry();
    let pos = reg.iter().position(|e| e.id == id)?;
    Some(reg.remove(pos).undo)
}

/// Namespace of the process-wide registry (see the module documentation).
pub struct Cleanup;

impl Cleanup {
    /// Register `undo` and return the guard that runs it on drop.
    pub fn register(undo: Undo) -> CleanupGuard {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        registry().push(Entry { id, undo });
        CleanupGuard { id }
    }

    /// Run every pending action, newest first; returns the failures (empty = all undone).
    pub fn run_all() -> Vec<TestbedError> {
        let mut failures = Vec::new();
        loop {
            // Pop under the lock, run outside it: guards dropped meanwhile on other threads
            // must not deadlock, and each action runs exactly once.
            let Some(entry) = registry().pop() else { break };
            if let Err(e) = entry.undo.run() {
                failures.push(e);
            }
        }
        failures
    }

    /// The pending actions, oldest first (for diagnostics and tests).
    pub fn pending() -> Vec<Undo> {
        registry().iter().map(|e| e.undo.clone()).collect()
    }
}

/// Run every pending undo action of the process, newest first. Call it from the normal-thread
/// shutdown path after SIGINT/SIGTERM (not from inside an async signal handler: it takes a
/// lock, allocates and sleeps). Returns the failures.
pub fn cleanup_all() -> Vec<TestbedError> {
    Cleanup::run_all()
}

/// For programs without their own SIGINT/SIGTERM handling (experiment tools, test
/// harnesses): install handlers for SIGINT, SIGTERM and SIGHUP that only record the signal,
/// and a watcher thread that then runs [`cleanup_all`], reports failures on stderr and exits
/// with status 128+signal. Idempotent. fiox's runner has its own handlers and calls
/// [`cleanup_all`] from its shutdown path instead; do not use both in one process.
pub fn cleanup_on_signals() -> Result<()> {
    static INSTALLED: Mutex<bool> = Mutex::new(false);
    let mut installed = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
    if *installed {
        return Ok(());
    }
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        sys::install_recording_handler(sig)
            .map_err(|e| TestbedError::io("sigaction", format!("signal {sig}"), e))?;
    }
    std::thread::Builder::new()
        .name("fiox-testbed-signals".into())
        .spawn(|| loop {
            let sig = sys::last_signal();
            if sig != 0 {
                for e in cleanup_all() {
                    fiox_guard::eprintln!("fiox-testbed: cleanup failed: {e}");
                }
                std::process::exit(128 + sig);
            }
            std::thread::sleep(Duration::from_millis(20));
        })
        .map_err(|e| TestbedError::io("spawn signal watcher", "fiox-testbed-signals", e))?;
    *installed = true;
    Ok(())
}

/// Owner of one registered undo action: runs it when dropped (errors are printed to stderr,
/// as a destructor cannot return them) or explicitly with [`CleanupGuard::run`].
#[derive(Debug)]
pub struct CleanupGuard {
    id: u64,
}

impl CleanupGuard {
    /// Run the action now (no-op if `cleanup_all` already ran it).
    pub fn run(self) -> Result<()> {
        let id = self.id;
        std::mem::forget(self);
        take(id).map_or(Ok(()), |u| u.run())
    }

    /// Unregister without running: the caller takes over the resource.
    pub fn disarm(self) -> Option<Undo> {
        let id = self.id;
        std::mem::forget(self);
        take(id)
    }

    /// Replace the pending action (e.g. with the mount id once the mount is made); no-op if
    /// it already ran.
    pub fn set(&self, undo: Undo) {
        if let Some(e) = registry().iter_mut().find(|e| e.id == self.id) {
            e.undo = undo;
        }
    }

    /// Whether the action is still pending.
    pub fn is_pending(&self) -> bool {
        registry().iter().any(|e| e.id == self.id)
    }
}

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        if let Some(undo) = take(self.id) {
            if let Err(e) = undo.run() {
                fiox_guard::eprintln!("fiox-testbed: cleanup failed: {e}");
            }
        }
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::temp::{unique_name, TempDir};
    use std::ffi::OsStr;

    /// A directory `name` made in `parent` by the guard, and the undo removing it as a tree.
    fn made(parent: &Arc<Dir>, name: &str) -> Undo {
        let d = parent.create_dir(OsStr::new(name), 0o755).unwrap();
        Undo::RemoveTree {
            parent: parent.clone(),
            name: name.into(),
            id: d.stat_self().id,
        }
    }

    #[test]
    fn guard_runs_once_and_disarm_keeps_the_resource() {
        let t = TempDir::new("guard").unwrap();
        let parent = t.dir().clone();
        let file = |name: &str| {
            let f = parent
                .create_file(OsStr::new(name), 0o644, fiox_guard::Layout::Complete)
                .unwrap();
            Undo::RemoveFile {
                parent: parent.clone(),
                name: name.into(),
                id: Identity::of(&f.metadata().unwrap()),
            }
        };
        let g_keep = Cleanup::register(file("keep"));
        let g_gone = Cleanup::register(file("gone"));
        assert!(g_gone.is_pending());
        drop(g_gone);
        assert!(!t.path().join("gone").exists());
        assert!(matches!(g_keep.disarm(), Some(Undo::RemoveFile { .. })));
        assert!(t.path().join("keep").exists());
        let p = t.path().to_path_buf();
        t.remove().unwrap();
        assert!(!p.exists());
    }

    #[test]
    fn remove_tree_removes_nested_content() {
        let t = TempDir::new("tree").unwrap();
        let undo = made(t.dir(), "sub");
        std::fs::create_dir_all(t.path().join("sub/a/b")).unwrap();
        std::fs::write(t.path().join("sub/a/b/f"), b"x").unwrap();
        undo.run().unwrap();
        assert!(!t.path().join("sub").exists());
        // Already gone counts as done.
        undo.run().unwrap();
    }

    #[test]
    fn a_tree_replaced_by_a_link_is_refused_and_its_target_kept() {
        let t = TempDir::new("swap").unwrap();
        let undo = made(t.dir(), "sub");
        std::fs::create_dir(t.path().join("victim")).unwrap();
        std::fs::write(t.path().join("victim/keep"), b"k").unwrap();
        std::fs::remove_dir(t.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(t.path().join("victim"), t.path().join("sub")).unwrap();
        let e = undo.run().unwrap_err().to_string();
        assert!(e.contains("no longer the directory fiox made"), "{e}");
        assert!(t.path().join("victim/keep").exists());
    }

    #[test]
    fn unmount_of_a_plain_directory_is_a_no_op() {
        let t = TempDir::new("nomount").unwrap();
        t.dir().create_dir(OsStr::new("m"), 0o755).unwrap();
        let mnt_id = t.dir().stat_self().mnt_id.unwrap_or(0);
        let undo = Undo::Unmount {
            parent: t.dir().clone(),
            name: "m".into(),
            mnt_id: Some(mnt_id),
        };
        undo.run().unwrap();
        assert!(t.path().join("m").is_dir());
    }

    #[test]
    fn remove_dir_reports_a_non_empty_directory() {
        let t = TempDir::new("nonempty").unwrap();
        let name = unique_name("d");
        let d = t.dir().create_dir(&name, 0o755).unwrap();
        std::fs::write(t.path().join(&name).join("f"), b"x").unwrap();
        let undo = Undo::RemoveDir {
            parent: t.dir().clone(),
            name: name.clone(),
            id: d.stat_self().id,
        };
        let e = undo.run().unwrap_err().to_string();
        assert!(e.contains("remove") && e.contains("not empty"), "{e}");
    }
}
