//! `cgroup`, `cgroup_weight` and `cgroup_nodelete`, as fio's cgroup.c: a job joins a blkio
//! cgroup (the first cgroup v1 mount with the blkio controller, else the cgroup2 mount),
//! creating the group if it is missing; the run removes at its end the groups it created
//! (unless `cgroup_nodelete`). The job's thread goes back to the root group when it ends, so
//! the group is empty by then.

use fiox_guard::kernel::KernelFs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::RunError;
use fiox_job::JobSpec;

/// Where the blkio hierarchy is mounted, and whether it is cgroup2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    pub path: PathBuf,
    pub v2: bool,
}

/// fio's find_cgroup_mnt over the text of /proc/mounts: the first `cgroup` mount whose
/// options name blkio, or the first `cgroup2` mount, whichever comes first.
pub(crate) fn find_mount(mounts: &str) -> Option<Mount> {
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (dir, ty, opts) = (f.get(1)?, f.get(2)?, f.get(3)?);
        let v2 = *ty == "cgroup2";
        let v1 = *ty == "cgroup" && opts.split(',').any(|o| o == "blkio");
        (v1 || v2).then(|| Mount {
            path: PathBuf::from(unescape(dir)),
            v2,
        })
    })
}

/// /proc/mounts writes blanks and backslashes in paths as octal escapes.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// The groups this run created, removed at its end unless the job that created one said
/// `cgroup_nodelete` (fio's cgroup_list and cgroup_kill).
#[derive(Debug, Default)]
pub(crate) struct Created(Mutex<Vec<(PathBuf, fiox_guard::Identity, bool)>>);

impl Created {
    /// Remove the groups (each is empty: every job moved back to the root group).
    pub(crate) fn remove_all(&self) {
        let list = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        for (dir, id, nodelete) in list {
            if !nodelete {
                let _ = fiox_guard::kernel::remove_cgroup(&dir, &id);
            }
        }
    }
}

/// A job's place in its group: where to go back to when it ends.
#[derive(Debug)]
pub(crate) struct Joined {
    mount: Mount,
}

impl Drop for Joined {
    /// fio's cgroup_shutdown: the thread goes back to the root group, so the group can be
    /// removed. A failure leaves the thread where it is; it ends anyway.
    fn drop(&mut self) {
        let _ = write_tid(&self.mount);
    }
}

fn write_int(dir: &Path, file: &str, val: u64, what: &'static str) -> Result<(), RunError> {
    let path = dir.join(file);
    // As fio's fopen("w") of a file cgroupfs provides; checked to be on cgroupfs.
    fiox_guard::kernel::write_knob(&path, val.to_string().as_bytes(), KernelFs::Cgroup).map_err(
        |e| match e {
            // A missing knob: fio's fopen("w") asks cgroupfs to create it, which fails with
            // EACCES; fiox never creates it, and reports the errno fio reports.
            fiox_guard::GuardError::Io { err, .. }
                if err.kind() == std::io::ErrorKind::NotFound =>
            {
                RunError::io(what, &path, std::io::Error::from_raw_os_error(libc::EACCES))
            }
            fiox_guard::GuardError::Io { err, .. } => RunError::io(what, &path, err),
            r => r.into(),
        },
    )
}

/// Put the calling thread into `m`'s directory (v1 `tasks`: this thread; cgroup2
/// `cgroup.procs`: the whole process, as fio's write of its pid).
fn write_tid_to(dir: &Path, v2: bool) -> Result<(), RunError> {
    let file = if v2 { "cgroup.procs" } else { "tasks" };
    write_int(dir, file, crate::sys::gettid() as u64, "cgroup write pid")
}

fn write_tid(m: &Mount) -> Result<(), RunError> {
    write_tid_to(&m.path, m.v2)
}

/// fio's cgroup_setup for the job's thread: find the mount, create the group if missing
/// (recorded in `created`), write the weight, join the group. None without `cgroup=`.
pub(crate) fn join(job: &JobSpec, created: &Created) -> Result<Option<Joined>, RunError> {
    let Some(name) = job.cpu.cgroup.as_deref() else {
        return Ok(None);
    };
    let mounts = std::fs::read_to_string("/proc/mounts")
        .map_err(|e| RunError::io("setmntent", Path::new("/proc/mounts"), e))?;
    let mount = find_mount(&mounts).ok_or_else(|| RunError::Target {
        msg: format!(
            "job '{}': cgroup={name}: cgroup blkio does not appear to be mounted",
            job.name
        ),
        errno: libc::ENOENT,
    })?;
    let dir = mount.path.join(name);
    match fiox_guard::kernel::make_cgroup(&dir) {
        Ok(Some(id)) => created.0.lock().unwrap_or_else(|p| p.into_inner()).push((
            dir.clone(),
            id,
            job.cpu.cgroup_nodelete,
        )),
        Ok(None) => {}
        Err(fiox_guard::GuardError::Io { err, .. }) => {
            return Err(RunError::io("cgroup mkdir", &dir, err))
        }
        Err(e) => return Err(e.into()),
    }
    if job.cpu.cgroup_weight != 0 {
        if mount.v2 {
            return Err(RunError::Target {
                msg: format!(
                    "job '{}': cgroup_weight does not work with cgroup2 (fio refuses it too)",
                    job.name
                ),
                errno: libc::EINVAL,
            });
        }
        let w = u64::from(job.cpu.cgroup_weight);
        write_int(&dir, "blkio.weight", w, "cgroup open weight")?;
    }
    write_tid_to(&dir, mount.v2)?;
    Ok(Some(Joined { mount }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_blkio_or_cgroup2_mount_is_used() {
        let v1 = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n\
                  cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                  cgroup /sys/fs/cgroup/blk\\040io cgroup rw,relatime,blkio 0 0\n\
                  cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
        assert_eq!(
            find_mount(v1),
            Some(Mount {
                path: "/sys/fs/cgroup/blk io".into(),
                v2: false
            })
        );
        let v2 = "cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n";
        assert_eq!(find_mount(v2).map(|m| m.v2), Some(true));
        assert_eq!(find_mount("proc /proc proc rw 0 0\n"), None);
        // blkio must be a whole option, not part of one.
        assert_eq!(find_mount("c /x cgroup rw,noblkio 0 0\n"), None);
    }
}
