//! Reading what `fiox plot` is given: fio/fiox JSON and json+ result files (also with text
//! before the JSON, or several `--status-interval` objects of which the last counts), `fiox
//! compare --format json` documents, and directories holding fio-format logs
//! (`PREFIX_{bw,iops,lat,clat,slat}[.N].log`, `agg-{read,write,trim}_bw.log`), result files, or
//! both. Everything becomes plain numbers in [`Inputs`]; charts are built from those alone.

use crate::compare::Comparison;
pub use crate::error::InputError;
use crate::fiolog::{self, LogSeries};
use crate::result::ResultDoc;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The largest result file read (fio's json+ of a long run is tens of MiB).
const MAX_JSON: u64 = 1 << 30;

/// Everything read from the command line's inputs.
#[derive(Debug, Default, Clone)]
pub struct Inputs {
    pub results: Vec<ResultDoc>,
    pub logs: Vec<LogSeries>,
    pub comparisons: Vec<Comparison>,
    /// Files in given directories that were not plotted, with the reason (shown on the page).
    pub skipped: Vec<String>,
    /// Files already read (a file given and also found in a given directory counts once).
    seen: std::collections::BTreeSet<PathBuf>,
}

impl Inputs {
    /// Whether nothing plottable was found.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty() && self.logs.is_empty() && self.comparisons.is_empty()
    }

    /// Read one path (file or directory) and add what it holds.
    pub fn add_path(&mut self, path: &Path) -> Result<(), InputError> {
        let meta = std::fs::metadata(path).map_err(|source| InputError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if meta.is_dir() {
            return self.add_dir(path);
        }
        if !meta.is_file() {
            // A FIFO named *.json blocked plot for ever; /dev/zero filled the memory.
            return Err(InputError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a regular file (plot reads results and logs from regular files only)",
                ),
            });
        }
        if !self.first_time(path) {
            return Ok(());
        }
        if fiolog::log_name(path).is_some() {
            self.logs.extend(fiolog::read(path, &label_of(path))?);
            return Ok(());
        }
        self.add_json_file(path)
    }

    /// Add an in-memory JSON result (the `--html` page of a run).
    pub fn add_json_value(
        &mut self,
        v: &Value,
        label: &str,
        path: &Path,
    ) -> Result<(), InputError> {
        if Comparison::looks_like(v) {
            self.comparisons
                .push(Comparison::from_json(v, label, path)?);
        } else {
            self.results.push(ResultDoc::from_json(v, label, path)?);
        }
        Ok(())
    }

    fn first_time(&mut self, path: &Path) -> bool {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.seen.insert(key)
    }

    fn add_json_file(&mut self, path: &Path) -> Result<(), InputError> {
        self.add_json_file_as(path, &label_of(path))
    }

    fn add_json_file_as(&mut self, path: &Path, label: &str) -> Result<(), InputError> {
        let text =
            fiox_guard::input::read_text(path, MAX_JSON).map_err(|source| InputError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        let mut all = json_objects(&text);
        // --status-interval reports: values over time from the differences between them.
        self.logs.extend(crate::status::series(&all, label));
        let v = all
            .pop()
            .ok_or_else(|| match fiox_report::json_problem(&text) {
                Some(problem) => InputError::format(path, problem),
                None => InputError::format(
                    path,
                    "no JSON object found (expected fio/fiox --output-format=json or json+, \
                 `fiox compare --format json`, or a fio log file named like NAME_bw.1.log)",
                ),
            })?;
        self.add_json_value(&v, label, path)
    }

    fn add_dir(&mut self, dir: &Path) -> Result<(), InputError> {
        let before = self.results.len() + self.logs.len() + self.comparisons.len();
        self.add_dir_entries(dir, dir)?;
        if self.results.len() + self.logs.len() + self.comparisons.len() == before {
            return Err(InputError::format(
                dir,
                "no fio logs (NAME_bw.N.log, NAME_iops.N.log, NAME_clat.N.log...) or JSON \
                 results in this directory",
            ));
        }
        Ok(())
    }

    /// Add what `dir` and its subdirectories hold; empty subdirectories are fine.
    /// Results are labelled by their path under `top` (`qd4/result`), so variants of an
    /// experiment that name their files alike stay apart.
    fn add_dir_entries(&mut self, top: &Path, dir: &Path) -> Result<(), InputError> {
        if self.add_experiment(dir)? {
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|source| InputError::Io {
                path: dir.to_path_buf(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        let dir_label = label_of(dir);
        for p in entries {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            if !p.is_dir() && !self.first_time(&p) {
                continue;
            }
            if p.is_dir() {
                // Experiment results directories keep one subdirectory per variant.
                self.add_dir_entries(top, &p)?;
            } else if fiolog::log_name(&p).is_some() {
                self.logs.extend(fiolog::read(&p, &dir_label)?);
            } else if name.ends_with(".json") {
                let rel = p.strip_prefix(top).unwrap_or(&p).with_extension("");
                match self.add_json_file_as(&p, &rel.display().to_string()) {
                    Ok(()) => {}
                    Err(e) => self.skipped.push(e.to_string()),
                }
            } else if name.ends_with(".log") {
                self.skipped.push(format!(
                    "{}: not a fio bw/iops/lat/clat/slat log name",
                    p.display()
                ));
            }
        }
        Ok(())
    }
}

impl Inputs {
    /// An experiment results directory (`fiox experiment`): the finished, measured runs its
    /// `manifest.json` lists (warm-ups left out, as `fiox compare` does), in variant order,
    /// each labelled `VARIANT #INDEX` and tagged with its variant. False when `dir` has no
    /// experiment manifest (then it is read as any directory).
    fn add_experiment(&mut self, dir: &Path) -> Result<bool, InputError> {
        let manifest = dir.join("manifest.json");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            return Ok(false);
        };
        let Ok(m) = serde_json::from_str::<Value>(&text) else {
            return Ok(false);
        };
        let (Some(variants), Some(runs)) = (m["variants"].as_array(), m["runs"].as_array()) else {
            return Ok(false);
        };
        self.first_time(&manifest);
        for v in variants.iter().filter_map(Value::as_str) {
            let measured = runs
                .iter()
                .filter(|r| r["variant"] == v && r["status"] == "done" && r["warmup"] != true);
            for r in measured {
                // A run the manifest lists as done and measured must be read: dropping it would
                // change the picture silently (fiox compare refuses such a directory too).
                let Some(file) = r["file"].as_str() else {
                    let why = format!("a finished run of variant {v} names no file");
                    return Err(InputError::format(&manifest, why));
                };
                let path = dir.join(file);
                if !self.first_time(&path) {
                    continue;
                }
                let before = self.results.len();
                let label = format!("{v} #{}", r["index"].as_u64().unwrap_or(0));
                match self.add_json_file_as(&path, &label) {
                    Ok(()) if self.results.len() > before => {
                        if let Some(last) = self.results.last_mut() {
                            last.variant = Some(v.to_string());
                        }
                    }
                    Ok(()) => {}
                    Err(e) => {
                        let why = format!(
                            "run {label}, listed as done, cannot be read ({e}); re-run the \
                             experiment (it resumes) or remove the run from the manifest"
                        );
                        return Err(InputError::format(&manifest, why));
                    }
                }
            }
        }
        Ok(true)
    }
}

/// Order names as a person would: `qd4` before `qd16`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        let (da, db) = (digits(a), digits(b));
        if da > 0 && db > 0 {
            let (na, nb) = (&a[..da], &b[..db]);
            let (ta, tb) = (na.trim_start_matches('0'), nb.trim_start_matches('0'));
            let ord = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
            if ord.is_ne() {
                return ord;
            }
            (a, b) = (&a[da..], &b[db..]);
            continue;
        }
        let mut ca = a.chars();
        let mut cb = b.chars();
        match (ca.next(), cb.next()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (x, y) if x != y => return x.cmp(&y),
            _ => (a, b) = (ca.as_str(), cb.as_str()),
        }
    }
}

fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// A short label for a file or directory: its name without `.json`.
pub fn label_of(path: &Path) -> String {
    // `.` and `..` have no name of their own: use the directory's real one.
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    name.strip_suffix(".json").unwrap_or(&name).to_string()
}

/// The last complete top-level JSON object in `text`: fio prints text before its JSON when
/// output formats are mixed, and `--status-interval` writes one object per report.
pub fn last_json_object(text: &str) -> Option<Value> {
    json_objects(text).pop()
}

pub use fiox_report::json_objects;

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_object_skips_text_and_takes_the_last_status_report() {
        let text = "fio-3.33\nsome text {not json\n{\"a\":1}\n{\"a\":2}\n";
        assert_eq!(last_json_object(text).unwrap()["a"], 2);
        assert!(last_json_object("no json here").is_none());
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["qd16", "qd4", "qd1", "a", "qd04x"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["a", "qd1", "qd4", "qd04x", "qd16"]);
    }

    #[test]
    fn a_missing_file_is_named() {
        let mut i = Inputs::default();
        let e = i.add_path(Path::new("/nonexistent/x.json")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x.json"), "{e}");
    }

    #[test]
    fn a_directory_without_results_is_refused_naming_it() {
        let dir = std::env::temp_dir().join(format!("fiox-plot-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let e = Inputs::default().add_path(&dir).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("no fio logs"), "{e}");
    }

    #[test]
    fn an_experiment_directory_gives_its_measured_runs_by_variant() {
        let dir = std::env::temp_dir().join(format!("fiox-plot-exp-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("runs")).unwrap();
        let result = |iops: f64| {
            format!(
                r#"{{"jobs": [{{"jobname": "rr", "read": {{"total_ios": 1, "io_bytes": 1, "iops": {iops}}}}}]}}"#
            )
        };
        for (f, iops) in [
            ("a-000-warmup", 1.0),
            ("a-001", 10.0),
            ("a-002", 12.0),
            ("b-001", 20.0),
        ] {
            std::fs::write(dir.join(format!("runs/{f}.json")), result(iops)).unwrap();
        }
        let manifest = serde_json::json!({"name": "x", "variants": ["a", "b"], "runs": [
            {"variant": "a", "index": 0, "warmup": true, "file": "runs/a-000-warmup.json", "status": "done"},
            {"variant": "b", "index": 1, "warmup": false, "file": "runs/b-001.json", "status": "done"},
            {"variant": "a", "index": 1, "warmup": false, "file": "runs/a-001.json", "status": "done"},
            {"variant": "a", "index": 2, "warmup": false, "file": "runs/a-002.json", "status": "done"}
        ]});
        std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
        let mut i = Inputs::default();
        let r = i.add_path(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        r.unwrap();
        let got: Vec<(&str, Option<&str>)> = i
            .results
            .iter()
            .map(|r| (r.label.as_str(), r.variant.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("a #1", Some("a")),
                ("a #2", Some("a")),
                ("b #1", Some("b"))
            ]
        );
        assert!(i.skipped.is_empty(), "{:?}", i.skipped);
    }

    /// L1: a run the manifest lists as done but whose file is missing or corrupt is an error
    /// naming it (it used to vanish from the page, exit 0).
    #[test]
    fn an_experiment_run_that_cannot_be_read_is_an_error_not_a_gap() {
        let dir = std::env::temp_dir().join(format!("fiox-plot-l1-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("runs")).unwrap();
        let manifest = serde_json::json!({"name": "x", "variants": ["lp"], "runs": [
            {"variant": "lp", "index": 0, "warmup": false, "file": "runs/lp-000.json", "status": "done"}
        ]});
        std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
        let missing = Inputs::default().add_path(&dir).map_err(|e| e.to_string());
        std::fs::write(dir.join("runs/lp-000.json"), "{\"jobs\": [").unwrap();
        let corrupt = Inputs::default().add_path(&dir).map_err(|e| e.to_string());
        std::fs::remove_dir_all(&dir).unwrap();
        for r in [missing, corrupt] {
            let e = r.unwrap_err();
            assert!(
                e.contains("run lp #0, listed as done, cannot be read"),
                "{e}"
            );
        }
    }
}
