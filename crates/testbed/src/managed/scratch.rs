//! A run's scratch file that must not outlive the run (`fiox quick`'s test file, up to the whole
//! `--size`): a record of kind `scratch`, owned by this process, names the file before it is
//! created, then with its identity once it exists. Removed by [`ScratchFile::remove`] (or on
//! drop); after a kill -9 (or a third signal, which exits at once) the record remains, and
//! `fiox testbed cleanup` or the next run's [`cleanup_orphans`] removes the file while it is
//! still the inode recorded (recorded before it existed: while fiox's mark binds it).

use super::build::{claim, Maker};
use super::record::{check_path, Step};
use super::{list_in, CleanupReport, Kind, State};
use crate::error::{Result, TestbedError};
use fiox_guard::{Dir, Identity, Layout};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A scratch file and its record (see the module documentation).
pub struct ScratchFile {
    maker: Option<Maker>,
    path: PathBuf,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

impl ScratchFile {
    /// Create `path` (absolute; nothing may be there), recorded in the default state directory.
    /// The file is marked as fiox's with an incomplete layout, so a job using it lays it out.
    pub fn make(path: &Path) -> Result<(ScratchFile, File)> {
        ScratchFile::make_in(&State::default(), path)
    }

    /// [`ScratchFile::make`] with the record in `state`.
    pub fn make_in(state: &State, path: &Path) -> Result<(ScratchFile, File)> {
        check_path(path).map_err(|w| TestbedError::Invalid(format!("scratch file: {w}")))?;
        let pid = std::process::id();
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let mut maker = claim(state, &format!("scratch-{pid}-{seq}"), &Kind::Scratch)?;
        maker.rec.target = path.to_path_buf();
        match record_and_create(&mut maker, path) {
            Ok(f) => Ok((
                ScratchFile {
                    maker: Some(maker),
                    path: path.to_path_buf(),
                },
                f,
            )),
            Err(e) => {
                maker.abandon();
                Err(e)
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove the file (while it is still the one made) and then its record.
    pub fn remove(mut self) -> Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        self.maker.take().map_or(Ok(()), Maker::finish)
    }
}

/// Record the file as an intent, create it, then record its identity.
fn record_and_create(maker: &mut Maker, path: &Path) -> Result<File> {
    maker.step(Step::File {
        path: path.to_path_buf(),
        id: None,
    })?;
    let (dir, name) = Dir::open_parent(path)?;
    let f = dir.create_file(&name, 0o644, Layout::Partial)?;
    let meta = f
        .metadata()
        .map_err(|e| TestbedError::io("stat", path, e))?;
    maker.rec.steps.pop();
    maker.rec.ready = true;
    maker.step(Step::File {
        path: path.to_path_buf(),
        id: Some(Identity::of(&meta)),
    })?;
    Ok(f)
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            fiox_guard::eprintln!("fiox: cannot remove {}: {e}", self.path.display());
        }
    }
}

/// Remove the scratch files (and records) of runs that are gone (killed); other testbeds are
/// left to `fiox testbed cleanup`.
pub fn cleanup_orphans() -> Result<CleanupReport> {
    cleanup_orphans_in(&State::default())
}

/// [`cleanup_orphans`] in `state`.
pub fn cleanup_orphans_in(state: &State) -> Result<CleanupReport> {
    let listing = list_in(state)?;
    let mut report = CleanupReport::default();
    for rec in listing.records {
        if rec.kind != Kind::Scratch.name() || !rec.orphaned() {
            continue;
        }
        // The file it names (a maker killed before saving the target still named the file).
        let file = rec
            .steps
            .iter()
            .find_map(|s| match s {
                Step::File { path, .. } => Some(path.display().to_string()),
                _ => None,
            })
            .unwrap_or_else(|| rec.name.clone());
        match super::down_in(state, &rec.name) {
            Ok(()) => report.removed.push(file),
            Err(e) => report.failed.push((file, e)),
        }
    }
    Ok(report)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their own scratch files
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fiox-scratch-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Both forms of a file step (an intent, and the file with its identity) are read back
    /// as written, a path with a space included.
    #[test]
    fn file_steps_survive_the_record_text() {
        use super::super::Record;
        let mut r = Record::new("scratch-1-0", &Kind::Scratch, Some((1, 2)));
        r.steps.push(Step::File {
            path: "/a/b".into(),
            id: None,
        });
        r.steps.push(Step::File {
            path: "/a/c d".into(),
            id: Some(Identity::from_parts(1, 2, Some(3))),
        });
        r.steps.push(Step::File {
            path: "/a/e".into(),
            id: Some(Identity::from_parts(4, 5, None)),
        });
        assert_eq!(Record::parse(&r.to_text(), "scratch-1-0").unwrap(), r);
    }

    /// The record names the file with its identity while it exists; remove takes both.
    #[test]
    fn a_scratch_file_is_recorded_and_removed_with_its_record() {
        let base = tmp("rec");
        let state = State::at(&base.join("state"));
        let path = base.join("f.tmp");
        let (s, f) = ScratchFile::make_in(&state, &path).unwrap();
        drop(f);
        let l = list_in(&state).unwrap();
        assert_eq!(l.records.len(), 1);
        assert_eq!(l.records[0].kind, "scratch");
        assert!(matches!(
            &l.records[0].steps[..],
            [Step::File { id: Some(_), .. }]
        ));
        s.remove().unwrap();
        assert!(!path.exists());
        assert!(list_in(&state).unwrap().records.is_empty());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A record whose owner is gone (kill -9): cleanup removes its file, by identity, and
    /// also a file recorded only as an intent if fiox's mark binds it; a user's file put at
    /// the name instead stays.
    #[test]
    fn orphans_are_cleaned_up_only_while_the_file_is_fioxs() {
        let base = tmp("orphan");
        let state = State::at(&base.join("state"));
        let dead = (u32::MAX - 1, 1);
        // 1: made and recorded with its identity.
        let p1 = base.join("one.tmp");
        let (s1, _) = ScratchFile::make_in(&state, &p1).unwrap();
        let mut m1 = s1;
        let maker = m1.maker.as_mut().unwrap();
        maker.rec.owner = Some(dead);
        maker.save().unwrap();
        // 2: recorded as an intent; the user's file at the name is unmarked.
        let p2 = base.join("two.tmp");
        let mut m2 = claim(&state, "scratch-x-2", &Kind::Scratch).unwrap();
        m2.rec.owner = Some(dead);
        m2.step(Step::File {
            path: p2.clone(),
            id: None,
        })
        .unwrap();
        std::fs::write(&p2, b"user data").unwrap();
        let r = cleanup_orphans_in(&state).unwrap();
        assert!(!p1.exists(), "{r:?}");
        assert_eq!(r.removed, vec![p1.display().to_string()]);
        assert!(p2.exists(), "the user's file stays");
        assert_eq!(r.failed.len(), 1, "{r:?}");
        std::fs::remove_file(&p2).unwrap();
        // Gone now: its record goes too.
        let r = cleanup_orphans_in(&state).unwrap();
        assert_eq!(r.removed, vec![p2.display().to_string()]);
        assert!(list_in(&state).unwrap().records.is_empty());
        drop(m1);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
