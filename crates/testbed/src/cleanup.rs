//! The process-wide cleanup registry: every resource this crate creates (loop binding, mount,
//! temp file or dir) registers an [`Undo`] action here before it is handed out, and holds a
//! [`CleanupGuard`] that runs the action when dropped. A shutdown path that cannot rely on
//! destructors (Ctrl-C: the runner's signal handler sets a flag, its main thread sees it and
//! exits) calls [`cleanup_all`], which runs every still-pending action newest first, so a mount
//! goes before its directory and a loop device before its backing file. Each action runs at
//! most once, whichever of guard and `cleanup_all` gets to it first.

use crate::error::{Result, TestbedError};
use crate::sys;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// One undo action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// Unmount this mount point (retrying while busy, then lazily with MNT_DETACH).
    Unmount(PathBuf),
    /// Detach loop device `device`, but only while it is still bound to the backing file
    /// identified by (`backing_dev`, `backing_ino`): after an autoclear another process may
    /// have reused the device number, and its binding must survive.
    DetachLoop {
        device: PathBuf,
        backing_dev: u64,
        backing_ino: u64,
    },
    /// Remove a file this crate created.
    RemoveFile(PathBuf),
    /// Remove an empty directory this crate created.
    RemoveDir(PathBuf),
    /// Remove a directory this crate created and everything under it, never crossing into
    /// another filesystem (a mount that could not be undone keeps its contents).
    RemoveTree(PathBuf),
}

/// How often and how long a busy unmount or loop detach is retried.
const BUSY_RETRIES: u32 = 20;
const BUSY_PAUSE: Duration = Duration::from_millis(25);

impl Undo {
    /// Perform the action now. Already-undone resources (not mounted, no such file, loop
    /// device unbound) count as success.
    pub fn run(&self) -> Result<()> {
        match self {
            Undo::Unmount(p) => unmount(p),
            Undo::DetachLoop {
                device,
                backing_dev,
                backing_ino,
            } => detach_loop(device, *backing_dev, *backing_ino),
            Undo::RemoveFile(p) => ignore_missing(std::fs::remove_file(p))
                .map_err(|e| TestbedError::io("remove file", p, e)),
            Undo::RemoveDir(p) => ignore_missing(std::fs::remove_dir(p))
                .map_err(|e| TestbedError::io("remove directory", p, e)),
            Undo::RemoveTree(p) => remove_tree(p),
        }
    }
}

fn ignore_missing(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn unmount(path: &Path) -> Result<()> {
    for attempt in 0..BUSY_RETRIES {
        match sys::umount2(path, 0) {
            Ok(()) => return Ok(()),
            // EINVAL: not a mount point (any more); ENOENT: the directory is gone.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOENT)) => {
                return Ok(())
            }
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(BUSY_PAUSE * (attempt + 1).min(4));
            }
            Err(e) => return Err(TestbedError::io("umount", path, e)),
        }
    }
    // Still busy (an open file somewhere): detach it from the tree now; the kernel frees it
    // when the last user goes, and the directory can be removed.
    sys::umount2(path, libc::MNT_DETACH).map_err(|e| TestbedError::io("umount -l", path, e))
}

fn detach_loop(device: &Path, backing_dev: u64, backing_ino: u64) -> Result<()> {
    let f = match OpenOptions::new().read(true).open(device) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(TestbedError::io("open", device, e)),
    };
    match sys::loop_get_status(f.as_fd()) {
        Ok(info) if info.lo_device == backing_dev && info.lo_inode == backing_ino => {}
        // Unbound (ENXIO) or bound to someone else's file: nothing of ours to undo.
        Ok(_) => return Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Ok(()),
        Err(e) => return Err(TestbedError::io("LOOP_GET_STATUS64", device, e)),
    }
    for attempt in 0..BUSY_RETRIES {
        match sys::ioctl_arg(f.as_fd(), sys::LOOP_CLR_FD, 0) {
            Ok(_) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(BUSY_PAUSE * (attempt + 1).min(4));
            }
            Err(e) => return Err(TestbedError::io("LOOP_CLR_FD", device, e)),
        }
    }
    Err(TestbedError::io(
        "LOOP_CLR_FD",
        device,
        io::Error::from_raw_os_error(libc::EBUSY),
    ))
}

fn remove_tree(root: &Path) -> Result<()> {
    let meta = match std::fs::symlink_metadata(root) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(TestbedError::io("stat", root, e)),
    };
    remove_tree_on(root, meta.dev())
}

fn remove_tree_on(dir: &Path, dev: u64) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| TestbedError::io("read dir", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| TestbedError::io("read dir", dir, e))?;
        let path = entry.path();
        let meta =
            std::fs::symlink_metadata(&path).map_err(|e| TestbedError::io("stat", &path, e))?;
        if meta.is_dir() {
            if meta.dev() != dev {
                return Err(TestbedError::io(
                    "remove tree (refusing to cross into a mount)",
                    &path,
                    io::Error::from_raw_os_error(libc::EBUSY),
                ));
            }
            remove_tree_on(&path, dev)?;
        } else {
            ignore_missing(std::fs::remove_file(&path))
                .map_err(|e| TestbedError::io("remove file", &path, e))?;
        }
    }
    ignore_missing(std::fs::remove_dir(dir))
        .map_err(|e| TestbedError::io("remove directory", dir, e))
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
                    eprintln!("fiox-testbed: cleanup failed: {e}");
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

    /// Whether the action is still pending.
    pub fn is_pending(&self) -> bool {
        registry().iter().any(|e| e.id == self.id)
    }
}

impl Drop for CleanupGuard {
    fn drop(&mut self) {
        if let Some(undo) = take(self.id) {
            if let Err(e) = undo.run() {
                eprintln!("fiox-testbed: cleanup failed: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temp::unique_path;

    #[test]
    fn guard_runs_once_and_disarm_keeps_the_resource() {
        let dir = unique_path("guard");
        std::fs::create_dir(&dir).unwrap();
        let keep = dir.join("keep");
        let gone = dir.join("gone");
        std::fs::write(&keep, b"k").unwrap();
        std::fs::write(&gone, b"g").unwrap();
        let g_dir = Cleanup::register(Undo::RemoveDir(dir.clone()));
        let g_keep = Cleanup::register(Undo::RemoveFile(keep.clone()));
        let g_gone = Cleanup::register(Undo::RemoveFile(gone.clone()));
        assert!(g_gone.is_pending());
        drop(g_gone);
        assert!(!gone.exists());
        assert_eq!(g_keep.disarm(), Some(Undo::RemoveFile(keep.clone())));
        assert!(keep.exists());
        std::fs::remove_file(&keep).unwrap();
        g_dir.run().unwrap();
        assert!(!dir.exists());
    }

    #[test]
    fn remove_tree_removes_nested_content() {
        let dir = unique_path("tree");
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/b/f"), b"x").unwrap();
        std::fs::write(dir.join("top"), b"y").unwrap();
        Undo::RemoveTree(dir.clone()).run().unwrap();
        assert!(!dir.exists());
        // Already gone counts as done.
        Undo::RemoveTree(dir.clone()).run().unwrap();
        Undo::RemoveFile(dir.join("top")).run().unwrap();
    }

    #[test]
    fn unmount_of_a_plain_directory_is_a_no_op() {
        let dir = unique_path("nomount");
        std::fs::create_dir(&dir).unwrap();
        Undo::Unmount(dir.clone()).run().unwrap();
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn remove_dir_reports_a_non_empty_directory() {
        let dir = unique_path("nonempty");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("f"), b"x").unwrap();
        let e = Undo::RemoveDir(dir.clone()).run().unwrap_err().to_string();
        assert!(e.contains("remove directory"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
