//! Every writing job's existing files, checked before the run's first group starts: a job file
//! that fio (or the user) wrote, and that a later stonewall group would write over, is refused
//! before any group runs its whole runtime, not when that group's turn comes. One refusal per
//! file (by identity), not one per numjobs clone sharing it. The same checks run again on each
//! descriptor a job opens (the files may change in between); this pass only says no early.

use crate::error::RunError;
use crate::files::{self, safeopen, FileKind};
use fiox_job::JobSpec;

/// Before the first group: the objects `--allow-destructive=PATH` names now (resolved once,
/// see [`fiox_guard::allow`]) and every job's files checked against them, or the refusals.
pub(crate) fn before_run(
    jobs: &[JobSpec],
    allow_destructive: bool,
    targets: &[std::path::PathBuf],
) -> Result<fiox_guard::Allowed, Vec<(usize, RunError)>> {
    let allowed = fiox_guard::Allowed::resolve(targets)
        .map_err(|e| vec![(0, RunError::Refused(e.to_string()))])?;
    let refused = refusals(jobs, allow_destructive, &allowed);
    if refused.is_empty() {
        Ok(allowed)
    } else {
        Err(refused)
    }
}

/// The refusals of every job of the run (index, error), at most one per file.
pub(crate) fn refusals(
    jobs: &[JobSpec],
    allow_destructive: bool,
    allowed: &fiox_guard::Allowed,
) -> Vec<(usize, RunError)> {
    // Files (device and inode, or a device number) already refused, or block devices already
    // checked: the clones that share them say nothing more.
    let mut seen: std::collections::HashSet<(u64, u64)> = Default::default();
    let mut out = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        if !files::job_writes(job) || job.ioengine.has(fiox_job::Engine::is_diskless) {
            continue;
        }
        // A plan that fails is the job's own error, reported when it starts.
        let Ok(plan) = files::plan(job, false) else {
            continue;
        };
        let who = safeopen::Writer {
            job: &job.name,
            allow: job.files.allow_mounted_write || allow_destructive,
            allowed,
        };
        for f in &plan.files {
            match check_one(&who, f, &mut seen) {
                Ok(()) => {}
                Err(e) => {
                    out.push((i, e));
                    break;
                }
            }
        }
    }
    out
}

/// One file of a job: a regular file with bytes, or a block device (checked once).
fn check_one(
    who: &safeopen::Writer,
    f: &files::PlannedFile,
    seen: &mut std::collections::HashSet<(u64, u64)>,
) -> Result<(), RunError> {
    use std::os::unix::fs::MetadataExt;
    match f.kind {
        FileKind::Regular if f.real_size > 0 => {
            let Some(h) = safeopen::open_to_check(&f.path)? else {
                return Ok(());
            };
            let m = h.metadata().map_err(|e| RunError::io("stat", &f.path, e))?;
            let key = (m.dev(), m.ino());
            if seen.contains(&key) {
                return Ok(());
            }
            safeopen::check_writable(who, &h, &f.path, f.offset).inspect_err(|_| {
                seen.insert(key);
            })?;
            Ok(())
        }
        FileKind::Block if !who.allow => {
            let m = std::fs::metadata(&f.path).map_err(|e| RunError::io("stat", &f.path, e))?;
            if !seen.insert((0, m.rdev())) {
                return Ok(());
            }
            files::blockdev::precheck(&f.path, who.allowed)
        }
        _ => Ok(()),
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::{RwMode, RwSpec, SizeSpec};
    use std::path::{Path, PathBuf};

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fiox-precheck-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn job(path: &Path, mode: RwMode) -> JobSpec {
        let mut j = JobSpec {
            name: "w".into(),
            rw: RwSpec { mode, n: 0 },
            size: Some(SizeSpec::Bytes(64 << 10)),
            ..JobSpec::default()
        };
        j.files.filenames = vec![path.display().to_string()];
        j
    }

    const NONE: fiox_guard::Allowed = fiox_guard::Allowed::none();

    #[test]
    fn a_users_file_is_refused_once_for_all_its_clones() {
        let d = dir("once");
        let p = d.join("f");
        std::fs::write(&p, vec![7u8; 64 << 10]).unwrap();
        let w = job(&p, RwMode::Write);
        let mut clone = w.clone();
        clone.clone_index = 1;
        let r = refusals(&[w.clone(), clone.clone()], false, &NONE);
        assert_eq!(r.len(), 1, "one refusal per file: {r:?}");
        let e = r[0].1.to_string();
        assert!(e.contains("allow_mounted_write=1"), "{e}");
        assert!(e.contains(&p.display().to_string()), "{e}");
        // Allowed: by the switch, or by naming this very file.
        assert!(refusals(std::slice::from_ref(&w), true, &NONE).is_empty());
        let named = fiox_guard::Allowed::resolve(std::slice::from_ref(&p)).unwrap();
        assert!(refusals(&[w], false, &named).is_empty());
        // Reading it, or appending to it, destroys nothing.
        let r = job(&p, RwMode::Read);
        let mut a = job(&p, RwMode::Write);
        a.files.file_append = true;
        assert!(refusals(&[r, a], false, &NONE).is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A job file that fio ran first, then fiox: the third group's refusal comes before the
    /// first group runs, not after the earlier groups' runtime.
    #[test]
    fn a_later_groups_file_is_refused_before_the_first_group() {
        let d = dir("later");
        let p = d.join("fio-made");
        std::fs::write(&p, vec![7u8; 64 << 10]).unwrap();
        let first = job(&d.join("new"), RwMode::Read);
        let mut third = job(&p, RwMode::RandWrite);
        third.stonewall = true;
        let r = refusals(&[first.clone(), first, third], false, &NONE);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, 2, "{r:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
