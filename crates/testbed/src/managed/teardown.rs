//! Undoing a record's steps, newest first, each only after the live system proves it is still
//! what fiox made: a file is removed only while it is the recorded inode (or, recorded before
//! it existed, while fiox's mark binds it); a tree is removed (fiox-guard's `tree::remove_tree`, never across a mount)
//! only while the directory has the recorded identity and fiox's mark; a mount is unmounted
//! only while the mount there has the recorded id, and only in a directory of the same record;
//! loop devices are detached only while LOOP_GET_STATUS64 shows the recorded backing inode,
//! which must lie in a directory of the same record that still has its identity; a server is
//! signalled only while it runs (a zombie is gone) with the recorded start time and this fiox
//! executable (a vm's QEMU: while it runs the recorded qemu-system-* executable; one recorded
//! before its start, pid 0, is found by that executable and the record's tag); a directory
//! recorded before it was made is removed only while it is empty and carries fiox's mark; a
//! cgroup directory is removed only while it has the recorded identity (the
//! kernel refuses while tasks are in it). A directory is removed only when every newer step was undone, so a loop device
//! still bound or a mount still there keeps the files under it.

use super::record::{Record, Step};
use crate::cleanup::unmount;
use crate::error::{Result, TestbedError};
use fiox_guard::process::{running, signal_own};
use fiox_guard::{tree, Dir, Identity, Mark};
use std::path::Path;
use std::time::{Duration, Instant};

/// Undo a record's steps newest first; returns the first failure after trying them all
/// (trees are not removed once a newer step failed).
pub fn teardown(rec: &Record) -> Result<()> {
    let mut first: Option<TestbedError> = None;
    for s in rec.steps.iter().rev() {
        if first.is_some() && matches!(s, Step::Tree { .. } | Step::DirToMake { .. }) {
            continue;
        }
        if let Err(e) = undo(rec, s) {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

fn refused(step: &str, path: &Path, why: &str) -> TestbedError {
    TestbedError::Invalid(format!(
        "testbed record step {step} {} refused: {why}",
        path.display()
    ))
}

fn undo(rec: &Record, s: &Step) -> Result<()> {
    match s {
        Step::Tree { path, id } => remove_tree(path, id),
        Step::File { path, id } => remove_file(path, id.as_ref()),
        Step::DirToMake { path } => {
            let (parent, name) = Dir::open_parent(path)?;
            parent.remove_empty_made_dir(&name)?;
            Ok(())
        }
        Step::Mount { path, mnt_id } => {
            let in_tree = rec.tree_at(path).is_some()
                || path.parent().is_some_and(|p| rec.tree_at(p).is_some());
            if !in_tree {
                return Err(refused(
                    "mount",
                    path,
                    "it is in no directory this testbed made",
                ));
            }
            let (parent, name) = Dir::open_parent(path)?;
            unmount(&parent, &name, *mnt_id)
        }
        Step::LoopsOver { path, dev, ino } => detach_loops(rec, path, *dev, *ino),
        Step::Process { pid, start } => stop_process(*pid, *start),
        Step::Cgroup { path, id } => remove_cgroup(path, id),
        Step::Program {
            pid: 0,
            exe,
            dev,
            ino,
            ..
        } => {
            // Recorded before it was started: whatever runs the executable with this
            // record's tag (fiox was killed before it recorded the pid).
            let tag = super::record::program_tag(&rec.name);
            let mut first = Ok(());
            for (pid, start) in fiox_guard::process::find_program((*dev, *ino), &tag) {
                if let Err(e) = stop_program(pid, start, exe, (*dev, *ino)) {
                    first = first.and(Err(e));
                }
            }
            first
        }
        Step::Program {
            pid,
            start,
            exe,
            dev,
            ino,
        } => stop_program(*pid, *start, exe, (*dev, *ino)),
    }
}

/// Stop the program `pid` started at `start` while it runs the executable `exe` (`id`).
fn stop_program(pid: u32, start: u64, exe: &Path, id: (u64, u64)) -> Result<()> {
    let sig = |s| fiox_guard::process::signal_program(pid, start, exe, id, QEMU, s);
    stop_with(pid, start, &sig)
}

/// Remove the cgroup directory `path` while it is still `id` (on a cgroup filesystem: the
/// guard checks); one that is already gone counts as removed.
fn remove_cgroup(path: &Path, id: &Identity) -> Result<()> {
    match fiox_guard::kernel::remove_cgroup(path, id) {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Remove the tree at `path` if it is still the directory `id` that fiox marked.
fn remove_tree(path: &Path, id: &Identity) -> Result<()> {
    let (parent, name) = Dir::open_parent(path)?;
    let Some(st) = parent.stat(&name)? else {
        return Ok(());
    };
    let mark = parent.mark_of(&name)?;
    if st.id != *id && st.kind == fiox_guard::Kind::Dir && !mark.is_ours() {
        // M7: "fiox did not create it" was untrue of the testbed, whose own directory is
        // hidden here (a mount over its parent), or was made in another mount namespace.
        return Err(refused(
            "tree",
            path,
            "the directory at this path is not the one this testbed made (something is \
             mounted over it, or the testbed was made in another mount namespace); the record \
             is kept: run `fiox testbed down` where the directory can be seen, or remove the \
             record file once that namespace is gone",
        ));
    }
    match mark {
        Mark::Ours(_) | Mark::Unsupported(_) => {}
        m => {
            let why = m.why_not_ours().unwrap_or_default();
            return Err(refused("tree", path, &why));
        }
    }
    tree::remove_tree(&parent, &name, id)?;
    Ok(())
}

/// Remove the file at `path` while it is still the inode `id` fiox made; with no identity
/// (recorded before it existed), only while fiox's mark binds it. One already gone, or whose
/// directory is gone, counts as removed.
fn remove_file(path: &Path, id: Option<&Identity>) -> Result<()> {
    let (parent, name) = match Dir::open_parent(path) {
        Ok(x) => x,
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    match id {
        Some(id) => {
            parent.remove_if(&name, id)?;
        }
        None => match parent.mark_of(&name)? {
            Mark::Ours(_) => {
                parent.remove_owned(&name)?;
            }
            _ if parent.stat(&name)?.is_none() => {}
            m => {
                let why = m.why_not_ours().unwrap_or_default();
                return Err(refused("file", path, &why));
            }
        },
    }
    Ok(())
}

/// Detach the loop devices bound to (`dev`, `ino`), the backing file `path` in a directory of
/// this record that still has its recorded identity.
fn detach_loops(rec: &Record, path: &Path, dev: u64, ino: u64) -> Result<()> {
    let Some(tree_id) = path.parent().and_then(|p| rec.tree_at(p)) else {
        return Err(refused(
            "loops-over",
            path,
            "it is in no directory this testbed made",
        ));
    };
    let (parent, name) = match Dir::open_parent(path) {
        Ok(x) => x,
        // The directory is gone, and with it any way to tell the inode was fiox's.
        Err(e) if e.is_not_found() => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if parent.stat_self().id != *tree_id {
        return Err(refused(
            "loops-over",
            path,
            "its directory is no longer the one fiox made",
        ));
    }
    if let Some(st) = parent.stat(&name)? {
        if st.id.dev_ino() != (dev, ino) {
            return Err(refused(
                "loops-over",
                path,
                "the file there is not the backing file fiox made",
            ));
        }
    }
    for n in loop_numbers() {
        if fiox_guard::loopdev::backing_of(n) == Some((dev, ino)) {
            fiox_guard::loopdev::detach_if(&fiox_guard::loopdev::node(n), dev, ino)?;
        }
    }
    Ok(())
}

/// The numbers N of the loop devices in /sys/block (loopN).
fn loop_numbers() -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("loop")?.parse().ok())
        .collect()
}

/// The programs a Program step may name: QEMU's system emulators.
pub(crate) const QEMU: &str = "qemu-system-";

/// Stop server `pid` if it is still the process fiox started: SIGTERM, up to 3 s, SIGKILL.
fn stop_process(pid: u32, start: u64) -> Result<()> {
    stop_with(pid, start, &|s| signal_own(pid, start, s))
}

/// SIGTERM through `signal`, up to 3 s, then SIGKILL; Err when it still runs.
fn stop_with(pid: u32, start: u64, signal: &dyn Fn(i32) -> fiox_guard::Result<bool>) -> Result<()> {
    for (sig, wait) in [(libc::SIGTERM, 3000u64), (libc::SIGKILL, 1000)] {
        if !signal(sig)? {
            return Ok(());
        }
        let t0 = Instant::now();
        while running(pid, start) && t0.elapsed() < Duration::from_millis(wait) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    if running(pid, start) {
        Err(TestbedError::Invalid(format!(
            "server process {pid} does not stop"
        )))
    } else {
        Ok(())
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    /// R3: `testbed up` killed between making its directory and recording it left an empty
    /// directory that cleanup said it removed. A directory recorded before it was made goes
    /// while it is empty and fiox's; a full one, and an empty one fiox did not mark, stay.
    #[test]
    fn a_directory_recorded_before_it_was_made_goes_only_while_empty_and_fiox_s() {
        let t = crate::temp::TempDir::new("intent").unwrap();
        let made = |n: &str| {
            t.dir().create_dir(std::ffi::OsStr::new(n), 0o755).unwrap();
            t.path().join(n)
        };
        let (empty, full) = (made("fiox-testbed-k9-1"), made("full"));
        std::fs::write(full.join("data"), b"kept").unwrap();
        let users = t.path().join("users");
        std::fs::create_dir(&users).unwrap();
        let mut rec = Record::new("k9", &crate::managed::Kind::Tmpfs, None);
        rec.steps = [&full, &users, &empty]
            .into_iter()
            .map(|p| Step::DirToMake { path: p.clone() })
            .collect();
        teardown(&rec).unwrap();
        assert!(!empty.exists(), "the empty directory fiox made was left");
        assert_eq!(std::fs::read(full.join("data")).unwrap(), b"kept");
        assert!(users.is_dir(), "a directory fiox did not make was removed");
        t.remove().unwrap();
    }

    /// M7: a testbed made in another mount namespace (or hidden under a mount) records a path
    /// where this namespace has another directory: refused, and said so, not "fiox did not
    /// create it"; that directory and its files stay.
    #[test]
    fn a_directory_that_is_not_the_recorded_one_is_named_as_such() {
        let t = crate::temp::TempDir::new("otherns").unwrap();
        let there = t.path().join("fiox-testbed-ns-1");
        std::fs::create_dir(&there).unwrap();
        std::fs::write(there.join("data"), b"kept").unwrap();
        let mut rec = Record::new("ns", &crate::managed::Kind::Tmpfs, None);
        rec.steps = vec![Step::Tree {
            path: there.clone(),
            id: Identity::from_parts(1, 2, None),
        }];
        let e = teardown(&rec).unwrap_err().to_string();
        assert!(
            e.contains("not the one this testbed made") && e.contains("mount namespace"),
            "{e}"
        );
        assert_eq!(std::fs::read(there.join("data")).unwrap(), b"kept");
        t.remove().unwrap();
    }
}
