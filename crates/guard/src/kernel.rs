//! Writes to the kernel's own files (sysfs tunables such as a disk's `queue/scheduler`,
//! cgroupfs `tasks` and `blkio.weight`, tracefs instances' `events/*/enable`) and the cgroup
//! and tracefs instance directories fiox makes and removes.
//! The guard checks, on the open descriptor, that the file is on the filesystem the caller
//! expects (statfs's magic number), so a path that resolves somewhere else (a link, a bind
//! mount over /sys) is never written as if it were a tunable; no link is followed into it.

use crate::dir::{stat_fd, Dir};
use crate::error::{GuardError, Result};
use crate::ident::{Identity, Kind};
use crate::sys;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::Path;

/// The kernel filesystems fiox writes tunables on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelFs {
    Sysfs,
    /// cgroup v1 or cgroup2.
    Cgroup,
    /// /proc/sys (e.g. vm/drop_caches).
    Proc,
    /// The tracing filesystem (an instance's knobs: `trace_clock`, `events/.../filter`).
    Tracefs,
}

const SYSFS_MAGIC: i64 = 0x6265_6572;
const CGROUP_SUPER_MAGIC: i64 = 0x0027_e0eb;
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;
const PROC_SUPER_MAGIC: i64 = 0x9fa0;
const TRACEFS_MAGIC: i64 = 0x7472_6163;

fn is(fs: KernelFs, magic: i64) -> bool {
    match fs {
        KernelFs::Sysfs => magic == SYSFS_MAGIC,
        KernelFs::Cgroup => magic == CGROUP_SUPER_MAGIC || magic == CGROUP2_SUPER_MAGIC,
        KernelFs::Proc => magic == PROC_SUPER_MAGIC,
        KernelFs::Tracefs => magic == TRACEFS_MAGIC,
    }
}

fn check_fs(fd: &impl AsFd, fs: KernelFs, path: &Path) -> Result<()> {
    let magic = sys::fs_magic(fd.as_fd()).map_err(|e| GuardError::io("statfs", path, e))?;
    if !is(fs, magic) {
        return Err(GuardError::refused(
            "write",
            path,
            format!(
                "it is not on {fs:?} (filesystem magic {magic:#x}), so it is no kernel tunable"
            ),
        ));
    }
    Ok(())
}

/// Write `value` to the existing kernel file `path` on `fs`, as one write (the kernel takes
/// a tunable's value per write).
pub fn write_knob(path: &Path, value: &[u8], fs: KernelFs) -> Result<()> {
    let (dir, name) = Dir::open_parent(path)?;
    check_fs(&dir, fs, path)?;
    let mut f = dir.open_file(&name, libc::O_WRONLY)?.ok_or_else(|| {
        GuardError::io(
            "open",
            path,
            std::io::Error::from_raw_os_error(libc::ENOENT),
        )
    })?;
    check_fs(&f, fs, path)?;
    f.write_all(value)
        .map_err(|e| GuardError::io("write", path, e))
}

/// Make the cgroup directory `path`. Some(identity) when this call made it, None when it was
/// already there (the caller then must not remove it).
pub fn make_cgroup(path: &Path) -> Result<Option<Identity>> {
    make_kernel_dir(path, KernelFs::Cgroup)
}

/// Remove the cgroup directory `path` made by [`make_cgroup`] (the kernel refuses while
/// tasks are in it).
pub fn remove_cgroup(path: &Path, id: &Identity) -> Result<bool> {
    remove_kernel_dir(path, id, KernelFs::Cgroup)
}

/// Make the tracefs instance `path` (a directory under tracefs's `instances/`: the kernel
/// gives it its own ring buffer and event switches). Some(identity) when this call made it,
/// None when it was already there (someone else's: the caller must not use or remove it).
pub fn make_trace_instance(path: &Path) -> Result<Option<Identity>> {
    make_kernel_dir(path, KernelFs::Tracefs)
}

/// Remove the tracefs instance `path` made by [`make_trace_instance`] (its buffer goes).
pub fn remove_trace_instance(path: &Path, id: &Identity) -> Result<bool> {
    remove_kernel_dir(path, id, KernelFs::Tracefs)
}

fn make_kernel_dir(path: &Path, fs: KernelFs) -> Result<Option<Identity>> {
    let (dir, name) = Dir::open_parent(path)?;
    check_fs(&dir, fs, path)?;
    match sys::mkdirat(dir.as_fd(), &name, 0o755) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(None),
        Err(e) => return Err(GuardError::io("kernel mkdir", path, e)),
    }
    let sub = dir.subdir(&name)?;
    Ok(Some(stat_fd(&sub, path)?.id))
}

fn remove_kernel_dir(path: &Path, id: &Identity, fs: KernelFs) -> Result<bool> {
    let (dir, name) = Dir::open_parent(path)?;
    check_fs(&dir, fs, path)?;
    match dir.stat(&name)? {
        Some(st) if st.kind == Kind::Dir => dir.remove_if(&name, id),
        _ => Ok(false),
    }
}

/// The kernel's own filesystem the open file is on (procfs, sysfs, debugfs...), by statfs's
/// magic number: its files are tunables and views, not data, and report size 0, so a write
/// "over no existing bytes" there would still change the system (a job writing
/// /proc/sys/kernel/hostname). None for a filesystem that holds data.
pub fn pseudo_fs(f: &impl AsFd) -> Option<&'static str> {
    let magic = sys::fs_magic(f.as_fd()).ok()?;
    Some(match magic {
        0x9fa0 => "procfs",
        SYSFS_MAGIC => "sysfs",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x6265_6570 => "configfs",
        0x7363_6673 => "securityfs",
        CGROUP_SUPER_MAGIC | CGROUP2_SUPER_MAGIC => "cgroupfs",
        0xcafe_4a11 => "bpffs",
        0xde5e_81e4 => "efivarfs",
        0x6165_676c => "pstore",
        _ => return None,
    })
}
