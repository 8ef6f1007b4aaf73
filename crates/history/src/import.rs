//! `fiox history import`: fio 3.33 and fiox JSON result files, directories of them (walked
//! recursively), and experiment results directories (their `manifest.json` names the
//! experiment and each run's variant; warm-up and unfinished runs are left out, as `fiox
//! compare` leaves them out). A result already in the history (same JSON) is not added twice.

use crate::record::{Record, Source};
use crate::store::Store;
use crate::{HistoryError, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How the runs came (an import, or fiox recording its own experiment) and what is added to
/// each record where the result does not say it.
#[derive(Debug, Clone)]
pub struct Options {
    pub source: Source,
    /// The experiment file or job file text, and the command line, recorded with each run.
    pub job_file: Option<String>,
    pub options: Vec<String>,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub tags: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            source: Source::Import,
            job_file: None,
            options: Vec::new(),
            host: None,
            kernel: None,
            tags: Vec::new(),
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Ids of the runs added.
    pub added: Vec<i64>,
    /// Ids of results that were in the history already.
    pub known: Vec<i64>,
    /// Files in directories that hold no result (named files that hold none are an error).
    pub skipped: Vec<PathBuf>,
}

/// Largest file read (fio's JSON with json+ histograms of many jobs stays far below).
const MAX_FILE: u64 = 1 << 30;

fn read(path: &Path) -> Result<String> {
    fiox_guard::input::read_text(path, MAX_FILE).map_err(|e| HistoryError::Input {
        what: path.display().to_string(),
        why: e.to_string(),
    })
}

/// Import every path in `paths` into `store`.
pub fn import(store: &mut Store, paths: &[PathBuf], o: &Options) -> Result<Outcome> {
    let mut out = Outcome::default();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| HistoryError::Input {
            what: p.display().to_string(),
            why: e.to_string(),
        })?;
        if meta.is_dir() {
            import_dir(store, p, o, &mut out)?;
        } else {
            let rec = Record::from_json(o.source, read(p)?, &p.display().to_string())?;
            add(store, rec, p, None, o, &mut out)?;
        }
    }
    Ok(out)
}

/// Record `rec` (from `path`, of `experiment`) with the import's additions.
fn add(
    store: &mut Store,
    mut rec: Record,
    path: &Path,
    experiment: Option<&str>,
    o: &Options,
    out: &mut Outcome,
) -> Result<()> {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    rec.origin = Some(abs.display().to_string());
    rec.job_file = rec.job_file.or_else(|| o.job_file.clone());
    if rec.options.is_empty() {
        rec.options = o.options.clone();
    }
    rec.experiment = experiment.map(String::from).or(rec.experiment);
    rec.host = rec.host.or_else(|| o.host.clone());
    rec.kernel = rec.kernel.or_else(|| o.kernel.clone());
    rec.tags.extend(o.tags.iter().cloned());
    if o.source != Source::Import {
        // fiox recording its own runs: this machine's host and kernel where they are missing.
        rec = rec.on_this_machine();
    }
    let (id, new) = store.insert(&rec)?;
    if new {
        out.added.push(id);
    } else {
        out.known.push(id);
    }
    Ok(())
}

fn import_dir(store: &mut Store, dir: &Path, o: &Options, out: &mut Outcome) -> Result<()> {
    let manifest = dir.join("manifest.json");
    if manifest.is_file() {
        return import_experiment(store, dir, &manifest, o, out);
    }
    let rd = std::fs::read_dir(dir).map_err(|e| HistoryError::Input {
        what: dir.display().to_string(),
        why: e.to_string(),
    })?;
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        // Only what is really there: a link is not followed inside a walked directory.
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            import_dir(store, &p, o, out)?;
        } else if meta.is_file() && p.extension().is_some_and(|e| e == "json") {
            match Record::from_json(o.source, read(&p)?, &p.display().to_string()) {
                Ok(rec) => add(store, rec, &p, None, o, out)?,
                Err(HistoryError::Input { .. }) => out.skipped.push(p),
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// An experiment results directory: each finished, measured run of its manifest.
fn import_experiment(
    store: &mut Store,
    dir: &Path,
    manifest: &Path,
    o: &Options,
    out: &mut Outcome,
) -> Result<()> {
    let bad = |why: String| HistoryError::Input {
        what: manifest.display().to_string(),
        why,
    };
    let m: Value = serde_json::from_str(&read(manifest)?).map_err(|e| bad(e.to_string()))?;
    let name = m["name"].as_str().map(String::from);
    for r in m["runs"].as_array().into_iter().flatten() {
        if r["status"] != "done" || r["warmup"] == true {
            continue;
        }
        let file = r["file"]
            .as_str()
            .ok_or_else(|| bad("a run without \"file\"".into()))?;
        let path = dir.join(file);
        let mut rec = Record::from_json(o.source, read(&path)?, &path.display().to_string())?;
        if rec.variant.is_none() {
            rec.variant = r["variant"].as_str().map(String::from);
        }
        add(store, rec, &path, name.as_deref(), o, out)?;
    }
    Ok(())
}
