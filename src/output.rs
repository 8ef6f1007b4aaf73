//! Where reports go (stdout or `--output=FILE`) and how each format's text is produced from a
//! run result. The sink is shared with the status thread, so writes are serialised.

use anyhow::{Context, Result};
use fiox_job::OutputFormat;
use fiox_stats::RunResult;
use serde_json::Value;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// A shared report sink.
#[derive(Clone)]
pub struct Out {
    w: Arc<Mutex<Sink>>,
}

struct Sink {
    w: Box<dyn Write + Send>,
    /// `--output` path (None: stdout).
    path: Option<String>,
    /// Writing to `path` failed during the run: reports went to stdout instead.
    failed: Option<std::io::Error>,
}

impl Out {
    /// stdout, or a file created (truncated) at `path`.
    pub fn open(path: Option<&str>) -> Result<Out> {
        let w: Box<dyn Write + Send> = match path {
            Some(p) => Box::new(std::io::BufWriter::new(
                fiox_guard::output::open(
                    std::path::Path::new(p),
                    fiox_guard::Open::Truncate,
                    fiox_guard::Named::ByUser,
                )
                .with_context(|| format!("cannot create --output file {p}"))?,
            )),
            None => Box::new(std::io::stdout()),
        };
        Ok(Out {
            w: Arc::new(Mutex::new(Sink {
                w,
                path: path.map(str::to_string),
                failed: None,
            })),
        })
    }

    /// A sink that drops everything: the ranks of an MPI run other than rank 0 print nothing.
    pub fn discard() -> Out {
        Out {
            w: Arc::new(Mutex::new(Sink {
                w: Box::new(std::io::sink()),
                path: None,
                failed: None,
            })),
        }
    }

    /// Write before any I/O (the header): a sink that cannot take it is an error naming the
    /// file, and nothing runs.
    pub fn write_early(&self, text: &str) -> Result<()> {
        let mut s = self.w.lock().unwrap_or_else(|p| p.into_inner());
        let r = s.w.write_all(text.as_bytes()).and_then(|()| s.w.flush());
        match (&s.path, r) {
            (_, Ok(())) => Ok(()),
            (Some(p), Err(e)) => Err(anyhow::anyhow!(
                "cannot write to --output file {p} ({e}); nothing was run"
            )),
            (None, Err(e)) => Err(e.into()),
        }
    }

    /// Write a report. When the `--output` file fails mid-run (a full disk, /dev/full), the
    /// results are not lost: they go to stdout from then on, and [`Out::failure`] says why.
    pub fn write(&self, text: &str) -> std::io::Result<()> {
        let mut s = self.w.lock().unwrap_or_else(|p| p.into_inner());
        if s.failed.is_none() {
            match s.w.write_all(text.as_bytes()).and_then(|()| s.w.flush()) {
                Ok(()) => return Ok(()),
                Err(e) if s.path.is_none() => return Err(e),
                Err(e) => {
                    s.failed = Some(e);
                    s.w = Box::new(std::io::stdout());
                }
            }
        }
        s.w.write_all(text.as_bytes())?;
        s.w.flush()
    }

    pub fn flush(&self) -> std::io::Result<()> {
        let mut s = self.w.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = s.w.flush() {
            if s.path.is_none() || s.failed.is_some() {
                return Err(e);
            }
            s.failed = Some(e);
        }
        Ok(())
    }

    /// The `--output` file could not take the reports: its path and the error.
    pub fn failure(&self) -> Option<String> {
        let s = self.w.lock().unwrap_or_else(|p| p.into_inner());
        let e = s.failed.as_ref()?;
        Some(format!(
            "writing the report to --output file {} failed ({e}); it was printed on stdout \
             instead",
            s.path.as_deref().unwrap_or("?")
        ))
    }
}

/// The final report in one format. `notes` are the informational lines fio prints on stdout
/// before its report ("Laying out IO file", notes on the options): JSON carries them under
/// `fiox.notes` so stdout stays one JSON document. The normal report ends with fiox's advice.
/// `extra`: `--telemetry`'s sections (`{"telemetry": .., "env": ..}`), both under `fiox` in
/// JSON, the telemetry as a block after the normal report (terse has no place for them).
/// `terse_version`: 2..=5, 0 for fio's default 3.
pub fn report_text(
    run: &RunResult,
    f: OutputFormat,
    notes: &[String],
    extra: Option<&Value>,
    terse_version: u32,
) -> String {
    let json = |plus| fiox_report::to_fio_json_text(&json_doc(run, plus, notes, extra));
    match f {
        OutputFormat::Normal => {
            let mut s = fiox_report::normal(run) + &fiox_report::fiox_block(run);
            if let Some(t) = extra.and_then(|e| e.get("telemetry")) {
                s.push_str(&fiox_experiment::telemetry::text_block(t));
            }
            if let Some(l) = extra.and_then(|e| e["env"].get("limits")) {
                s.push_str(&crate::machine::text_block(l));
            }
            if let Some(e) = extra.and_then(|e| e.get("explain")) {
                s.push_str(&crate::explain::text(run, e));
            }
            s
        }
        OutputFormat::Json => json(false),
        OutputFormat::JsonPlus => json(true),
        OutputFormat::Terse => fiox_report::terse::terse_version(run, terse_version),
    }
}

/// fio's JSON document with fiox's notes under `fiox.notes` (always there, maybe empty) and
/// the `extra` sections beside them.
pub fn json_doc(run: &RunResult, plus: bool, notes: &[String], extra: Option<&Value>) -> Value {
    let mut v = fiox_report::json(run, plus);
    if let Some(fiox) = v.get_mut("fiox").and_then(Value::as_object_mut) {
        fiox.insert("notes".into(), notes.into());
        if let Some(Value::Object(m)) = extra {
            for (k, x) in m.iter().filter(|(k, _)| *k != "explain") {
                fiox.insert(k.clone(), x.clone());
            }
        }
    }
    if let Some(e) = extra.and_then(|e| e.get("explain")) {
        crate::explain::place(&mut v, e);
    }
    v
}

/// A periodic status report: JSON formats as one object per line (valid JSON Lines, unlike
/// fio's concatenated objects), text formats as a full report.
pub fn status_text(
    run: &RunResult,
    formats: &[OutputFormat],
    notes: &[String],
    terse_version: u32,
) -> String {
    formats
        .iter()
        .map(|f| match f {
            OutputFormat::Json | OutputFormat::JsonPlus => {
                let plus = *f == OutputFormat::JsonPlus;
                let mut line = json_doc(run, plus, notes, None).to_string();
                line.push('\n');
                line
            }
            other => report_text(run, *other, notes, None, terse_version),
        })
        .collect()
}

/// Whether an error is a closed stdout (`fiox ... | head`), which ends the program quietly.
/// An error and its causes on one line, each cause once: the libraries' errors name their
/// cause in their own text and also return it as their source, so anyhow's `{:#}` printed it
/// twice ("No such file or directory (os error 2): No such file or directory (os error 2)").
pub fn error_text(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let t = cause.to_string();
        if t.is_empty() || out.contains(&t) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&t);
    }
    out
}

pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod error_tests {
    use super::error_text;

    /// Adversarial round 3's M1: a cause named in its error's own text is not repeated.
    #[test]
    fn a_cause_is_said_once() {
        /// As the libraries' errors are: the cause in the text and as the source.
        #[derive(Debug)]
        struct Reading {
            source: std::io::Error,
        }
        impl std::fmt::Display for Reading {
            fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "reading x.json: {}", self.source)
            }
        }
        impl std::error::Error for Reading {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.source)
            }
        }
        let io = std::io::Error::from_raw_os_error(libc::ENOENT);
        let e = anyhow::Error::new(Reading { source: io }).context("compare");
        assert_eq!(
            error_text(&e),
            "compare: reading x.json: No such file or directory (os error 2)"
        );
        let plain = anyhow::anyhow!("one").context("two");
        assert_eq!(error_text(&plain), "two: one");
    }
}
