//! `fiox history export`: the selected runs, oldest first, as JSON lines (each run's fields,
//! tags, metrics per job, and its result as recorded) or CSV (a line per run, job and metric).

use crate::query::{Filter, RunDetail};
use crate::record::result_doc;
use crate::store::Store;
use crate::Result;
use serde_json::{json, Map, Value};
use std::io::Write;

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Csv,
}

/// The CSV header line.
pub const CSV_HEADER: &str = "id,run_at,host,kernel,commit,experiment,variant,job,metric,value";

/// Write the runs `f` selects to `out`.
pub fn export(store: &Store, format: Format, f: &Filter, out: &mut dyn Write) -> Result<()> {
    if format == Format::Csv {
        writeln!(out, "{CSV_HEADER}").map_err(crate::HistoryError::Write)?;
    }
    store.each_detail(f, &mut |d| match format {
        Format::Jsonl => writeln!(out, "{}", jsonl(&d)),
        Format::Csv => csv(&d, out),
    })
}

/// One run as a JSON object.
pub fn jsonl(d: &RunDetail) -> Value {
    let s = &d.summary;
    let mut metrics = Map::new();
    for (job, m, v) in &d.metrics {
        let e = metrics.entry(job.clone()).or_insert_with(|| json!({}));
        e[m] = json!(v);
    }
    let options = d
        .options
        .as_deref()
        .and_then(|o| serde_json::from_str::<Value>(o).ok());
    let targets: Vec<&str> = s.targets.split('\n').filter(|t| !t.is_empty()).collect();
    json!({
        "id": s.id, "run_at": s.run_at, "recorded_at": d.recorded_at,
        "source": s.source, "origin": d.origin, "host": s.host, "kernel": s.kernel,
        "cpu": d.cpu, "commit": s.commit, "tool": d.tool, "targets": targets,
        "experiment": s.experiment, "variant": s.variant, "tags": s.tags,
        "job_file": d.job_file, "options": options, "metrics": metrics,
        "result": result_doc(&d.result),
    })
}

/// One run's CSV lines.
fn csv(d: &RunDetail, out: &mut dyn Write) -> std::io::Result<()> {
    let s = &d.summary;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    for (job, m, v) in &d.metrics {
        let cells = [
            s.id.to_string(),
            s.run_at.to_string(),
            text(&s.host),
            text(&s.kernel),
            text(&s.commit),
            text(&s.experiment),
            text(&s.variant),
            job.clone(),
            m.clone(),
            v.to_string(),
        ];
        let line: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        writeln!(out, "{}", line.join(","))?;
    }
    Ok(())
}

/// A CSV cell, quoted when it must be.
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_with_commas_quotes_or_newlines_are_quoted() {
        assert_eq!(super::cell("a"), "a");
        assert_eq!(super::cell("a,b"), "\"a,b\"");
        assert_eq!(super::cell("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
