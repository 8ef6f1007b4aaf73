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
    w: Arc<Mutex<Box<dyn Write + Send>>>,
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
            w: Arc::new(Mutex::new(w)),
        })
    }

    pub fn write(&self, text: &str) -> std::io::Result<()> {
        let mut w = self.w.lock().unwrap_or_else(|p| p.into_inner());
        w.write_all(text.as_bytes())?;
        w.flush()
    }

    pub fn flush(&self) -> std::io::Result<()> {
        self.w.lock().unwrap_or_else(|p| p.into_inner()).flush()
    }
}

/// The final report in one format.
pub fn report_text(run: &RunResult, f: OutputFormat) -> String {
    match f {
        OutputFormat::Normal => fiox_report::normal(run),
        OutputFormat::Json => fiox_report::to_fio_json_text(&fiox_report::json(run, false)),
        OutputFormat::JsonPlus => fiox_report::to_fio_json_text(&fiox_report::json(run, true)),
        OutputFormat::Terse => fiox_report::terse(run),
    }
}

/// A periodic status report: JSON formats as one object per line (valid JSON Lines, unlike
/// fio's concatenated objects), text formats as a full report.
pub fn status_text(run: &RunResult, formats: &[OutputFormat]) -> String {
    formats
        .iter()
        .map(|f| match f {
            OutputFormat::Json => fiox_report::json_status_line(run, false),
            OutputFormat::JsonPlus => fiox_report::json_status_line(run, true),
            other => report_text(run, *other),
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
