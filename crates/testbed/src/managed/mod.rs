//! Named testbeds that outlive the process that made them (`fiox testbed up|list|down|
//! cleanup`, and experiments): a loop device over a backing file (direct I/O on or off,
//! logical block size), a size-limited tmpfs, a ramfs, or a filesystem (mkfs ext4, xfs or
//! btrfs, with options) on a loop device fiox made, mounted with options, or a slow device
//! (`slow`: a FaultFs file served by a fiox process of its own, with a per-request delay and
//! an error rate).
//!
//! Each testbed is a record file in the state directory (`$FIOX_TESTBED_DIR`, else
//! /run/fiox/testbeds as root, else `$XDG_RUNTIME_DIR/fiox/testbeds`; made through fiox-guard,
//! never through another user's link), written whole under a free name, so two makers cannot
//! share a name and a failed write leaves no record ([`record`]). Every step is recorded with
//! the identity it must still have when it is undone (`build`), so a maker killed at any
//! point (kill -9 included) leaves a record that `cleanup` can undo, and nothing else: teardown
//! (`teardown`) undoes the steps newest first, each only after the live system proves it is
//! what fiox made. A record carries its owner's pid and start time; `cleanup` removes the
//! testbeds whose owner is gone, `down` any named one. Kept testbeds (`testbed up`) have no
//! owner and stay until `down`. A run's scratch file ([`scratch`], `fiox quick`'s) is a record
//! of its own kind, so that a killed run's file goes with the next `cleanup`. A record that is malformed, not fiox's (owner, mode) or
//! tampered with is reported and skipped, and never stops the others.

pub(crate) mod build;
pub mod record;
pub mod scratch;
pub mod spec;
pub mod teardown;

pub use record::{Listing, Record, Skipped, Step};
pub use spec::{parse_size, Kind, Spec, SPEC_KEYS};
pub use teardown::teardown;

use crate::error::{Result, TestbedError};
use fiox_guard::Dir;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A state directory: where the records are.
#[derive(Debug, Clone)]
pub struct State {
    path: PathBuf,
}

impl Default for State {
    /// The state directory of this user (see the module documentation).
    fn default() -> State {
        State::at(&state_dir())
    }
}

impl State {
    /// The records in `path`.
    pub fn at(path: &Path) -> State {
        State {
            path: path.to_path_buf(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory; None when it does not exist yet.
    fn open(&self) -> Result<Option<Dir>> {
        match Dir::open(&self.path) {
            Ok(d) => Ok(Some(d)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The directory, made (mode 0700) where missing.
    fn open_or_create(&self) -> Result<Dir> {
        Ok(Dir::open_or_create(&self.path, 0o700)?)
    }
}

/// The state directory (see the module documentation).
pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FIOX_TESTBED_DIR") {
        return PathBuf::from(d);
    }
    if crate::loopdev::require_root("").is_ok() {
        return PathBuf::from("/run/fiox/testbeds");
    }
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(|d| PathBuf::from(d).join("fiox/testbeds"))
        .unwrap_or_else(|| std::env::temp_dir().join("fiox-testbeds"))
}

pub(crate) fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(TestbedError::Invalid(format!(
            "testbed name {name:?}: use 1-64 letters, digits, '-', '_' or '.'"
        )))
    }
}

fn record_file(name: &str) -> OsString {
    OsString::from(format!("{name}{}", record::SUFFIX))
}

/// A free name "KIND-N".
fn free_name(state: &State, kind: &Kind) -> Result<String> {
    let dir = state.open()?;
    let taken = |n: &str| {
        dir.as_ref()
            .is_some_and(|d| d.stat(&record_file(n)).ok().flatten().is_some())
    };
    Ok((1..=10_000)
        .map(|n| format!("{}{n}", kind.name()))
        .find(|n| !taken(n))
        .unwrap_or_else(|| kind.name().into()))
}

/// Make a testbed. `keep`: it stays after this process exits (until `down`); otherwise this
/// process owns it and `cleanup` removes it once the process is gone.
pub fn up(spec: &Spec, name: Option<&str>, keep: bool) -> Result<Record> {
    up_in(&State::default(), spec, name, keep)
}

/// [`up`] with the records in `state`.
pub fn up_in(state: &State, spec: &Spec, name: Option<&str>, keep: bool) -> Result<Record> {
    let name = match name {
        Some(n) => n.to_string(),
        None => free_name(state, &spec.kind)?,
    };
    let mut m = build::claim(state, &name, &spec.kind)?;
    match build::build(&mut m, spec) {
        Ok(()) => {
            m.rec.ready = true;
            if keep {
                m.rec.owner = None;
            }
            m.save()?;
            Ok(m.rec)
        }
        Err(e) => {
            // Undo what was made; the first error is the one to report.
            m.abandon();
            Err(e)
        }
    }
}

/// Whether the loop testbed `rec` still is what was made (N2: an experiment kept writing
/// /dev/loopN after it was detached and another image attached there): the record still on
/// file unchanged, and each recorded loop device, by its number, still bound to the backing
/// inode fiox made (LOOP_GET_STATUS64). Err says what changed. Other kinds have nothing to
/// re-prove here (their mounts and trees are proven when they are taken down).
pub fn prove(rec: &Record) -> std::result::Result<(), String> {
    prove_in(&State::default(), rec)
}

/// [`prove`] with the records in `state`.
pub fn prove_in(state: &State, rec: &Record) -> std::result::Result<(), String> {
    let listed = list_in(state).map_err(|e| format!("cannot read the testbed records: {e}"))?;
    if !listed.records.iter().any(|r| r == rec) {
        return Err(format!(
            "the record of testbed {} changed or is gone (taken down or cleaned up)",
            rec.name
        ));
    }
    let Some(n) = rec
        .target
        .file_name()
        .and_then(|f| f.to_str())
        .and_then(|f| f.strip_prefix("loop"))
        .and_then(|n| n.parse::<u32>().ok())
    else {
        return Ok(());
    };
    for step in &rec.steps {
        if let record::Step::LoopsOver { dev, ino, path } = step {
            if fiox_guard::loopdev::backing_of(n) != Some((*dev, *ino)) {
                return Err(format!(
                    "{} is no longer bound to the testbed's backing file {} (it was detached, \
                     or another image attached at that number)",
                    rec.target.display(),
                    path.display()
                ));
            }
        }
    }
    Ok(())
}

/// Every recorded testbed, by name, and the records skipped (with why).
pub fn list() -> Result<Listing> {
    list_in(&State::default())
}

/// [`list`] in `state`.
pub fn list_in(state: &State) -> Result<Listing> {
    Ok(record::list(state.open()?.as_ref())?)
}

/// Remove the testbed `name` (whoever owns it).
pub fn down(name: &str) -> Result<()> {
    down_in(&State::default(), name)
}

/// [`down`] in `state`.
pub fn down_in(state: &State, name: &str) -> Result<()> {
    check_name(name)?;
    let file = record_file(name);
    let missing = || {
        TestbedError::Invalid(format!(
            "no testbed named {name} (in {}); see `fiox testbed list`",
            state.path().display()
        ))
    };
    let dir = state.open()?.ok_or_else(missing)?;
    if dir.stat(&file)?.is_none() {
        return Err(missing());
    }
    let (rec, id) = record::read(&dir, &file).map_err(|why| {
        TestbedError::Invalid(
            Skipped {
                file: dir.join(&file),
                why,
            }
            .to_string(),
        )
    })?;
    let (rec, id) = mark_removing(&dir, &file, rec, id)?;
    teardown(&rec)?;
    dir.remove_if(&file, &id)?;
    Ok(())
}

/// The record of a testbed whose steps are about to be undone, saved as not ready (`state
/// removing`): a removal that fails halfway (a loop device detached, its mount still busy)
/// listed the testbed as ready, with a device that was no longer there (M7). Returns the
/// record and the identity of the file now holding it.
fn mark_removing(
    dir: &Dir,
    file: &std::ffi::OsStr,
    mut rec: Record,
    id: fiox_guard::Identity,
) -> Result<(Record, fiox_guard::Identity)> {
    if !rec.ready {
        return Ok((rec, id));
    }
    rec.ready = false;
    rec.info.insert("state".into(), "removing".into());
    fiox_guard::output::write_in_mode(
        dir,
        file,
        rec.to_text().as_bytes(),
        fiox_guard::output::Named::ByFiox,
        0o600,
    )?;
    let now = dir.stat(file)?.map(|st| st.id).ok_or_else(|| {
        TestbedError::Invalid(format!("record {} vanished", dir.join(file).display()))
    })?;
    Ok((rec, now))
}

/// What [`cleanup`] did: the testbeds removed, those whose removal failed (kept with their
/// record, for another try), and the records skipped.
#[derive(Debug, Default)]
pub struct CleanupReport {
    pub removed: Vec<String>,
    pub failed: Vec<(String, TestbedError)>,
    pub skipped: Vec<Skipped>,
}

/// Remove every testbed whose owner process (or server) is gone; one failure does not stop
/// the others.
pub fn cleanup() -> Result<CleanupReport> {
    cleanup_in(&State::default())
}

/// [`cleanup`] in `state`.
pub fn cleanup_in(state: &State) -> Result<CleanupReport> {
    let listing = list_in(state)?;
    let mut report = CleanupReport {
        skipped: listing.skipped,
        ..CleanupReport::default()
    };
    for rec in listing.records.into_iter().filter(Record::orphaned) {
        match down_in(state, &rec.name) {
            Ok(()) => report.removed.push(rec.name),
            Err(e) => report.failed.push((rec.name, e)),
        }
    }
    Ok(report)
}
