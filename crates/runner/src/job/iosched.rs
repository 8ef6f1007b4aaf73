//! `ioscheduler`: switch the I/O scheduler of the disk under each of a job's files (a block
//! device's own queue, a partition's disk, a regular file's filesystem device) before its I/O,
//! as fio does, and put the previous one back when the job ends (fio leaves it switched).
//! A device without a tunable scheduler is skipped with a note, as fio says it.

use std::path::{Path, PathBuf};

/// The schedulers a job switched, to restore when dropped.
#[derive(Debug, Default)]
pub struct Switched {
    restore: Vec<(PathBuf, String)>,
}

impl Drop for Switched {
    fn drop(&mut self) {
        for (path, old) in self.restore.drain(..).rev() {
            let _ = write(&path, &old);
        }
    }
}

/// Write a scheduler's name to a `queue/scheduler` file (checked to be on sysfs).
fn write(path: &Path, name: &str) -> Result<(), fiox_guard::GuardError> {
    fiox_guard::kernel::write_knob(path, name.as_bytes(), fiox_guard::kernel::KernelFs::Sysfs)
}

/// The `queue/scheduler` file of the disk holding `file` (None: not on a block device).
fn scheduler_file(file: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(file).ok()?;
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    // A partition's scheduler is its disk's.
    let disk = if sys.join("partition").exists() {
        sys.parent()?.to_path_buf()
    } else {
        sys
    };
    let f = disk.join("queue/scheduler");
    f.exists().then_some(f)
}

/// The selected scheduler of a `queue/scheduler` text ("none [mq-deadline] kyber").
fn selected(text: &str) -> Option<&str> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(&text[start..end])
}

/// Switch every file's disk to `name`. Ok(notes) on success (a device without a tunable
/// scheduler is a note); Err names the scheduler and what the device offers.
pub fn switch(files: &[PathBuf], name: &str, done: &mut Switched) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    for f in files {
        let Some(path) = scheduler_file(f) else {
            continue;
        };
        if done.restore.iter().any(|(p, _)| *p == path) {
            continue;
        }
        let before = std::fs::read_to_string(&path)
            .map_err(|e| format!("ioscheduler: reading {}: {e}", path.display()))?;
        let Some(old) = selected(&before).map(str::to_string) else {
            notes.push(format!("ioscheduler: {} is not tunable", path.display()));
            continue;
        };
        write(&path, name).map_err(|e| unavailable(name, &path, &before, &e.to_string()))?;
        done.restore.push((path.clone(), old));
        let now = std::fs::read_to_string(&path).unwrap_or_default();
        if selected(&now) != Some(name) {
            return Err(unavailable(name, &path, &before, "not selected"));
        }
    }
    Ok(notes)
}

fn unavailable(name: &str, path: &Path, offered: &str, why: &str) -> String {
    format!(
        "ioscheduler: unable to set io scheduler to {name} on {} ({why}; it offers: {})",
        path.display(),
        offered.trim().replace(['[', ']'], "")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_scheduler() {
        assert_eq!(
            selected("none [mq-deadline] kyber bfq\n"),
            Some("mq-deadline")
        );
        assert_eq!(selected("[none] mq-deadline\n"), Some("none"));
        assert_eq!(selected("none\n"), None);
        assert!(scheduler_file(Path::new("/proc/self/status")).is_none());
    }
}
