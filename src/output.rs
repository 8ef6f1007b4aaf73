//! Where reports go (stdout or `--output=FILE`) and how each format's text is produced from a
//! run result. The sink is shared with the status thread, so writes are serialised.

use anyhow::{Context, Result};
use fiox_job::OutputFormat;
use fiox_stats::RunResult;
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
                std::fs::File::create(p)
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

/// The final report in one format (`terse_version` 2..=5, 0 for fio's default 3).
pub fn report_text(run: &RunResult, f: OutputFormat, terse_version: u32) -> String {
    match f {
        OutputFormat::Normal => fiox_report::normal(run),
        OutputFormat::Json => fiox_report::to_fio_json_text(&fiox_report::json(run, false)),
        OutputFormat::JsonPlus => fiox_report::to_fio_json_text(&fiox_report::json(run, true)),
        OutputFormat::Terse => fiox_report::terse::terse_version(run, terse_version),
    }
}

/// A periodic status report: JSON formats as one object per line (valid JSON Lines, unlike
/// fio's concatenated objects), text formats as a full report.
pub fn status_text(run: &RunResult, formats: &[OutputFormat], terse_version: u32) -> String {
    formats
        .iter()
        .map(|f| match f {
            OutputFormat::Json => fiox_report::json_status_line(run, false),
            OutputFormat::JsonPlus => fiox_report::json_status_line(run, true),
            other => report_text(run, *other, terse_version),
        })
        .collect()
}

/// Whether an error is a closed stdout (`fiox ... | head`), which ends the program quietly.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
