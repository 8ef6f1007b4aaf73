//! `--html=FILE` on a plain run: the run's json+ tree and the fio-format logs its jobs wrote
//! (write_bw_log, write_iops_log, write_lat_log, --bandwidth-log) become the same page
//! `fiox plot` makes, without a second command; with `--telemetry`, its charts too (the
//! samples go into the page's JSON as into the run's JSON output).

use anyhow::Result;
use fiox_job::Invocation;
use std::path::Path;

/// Write the page when `--html` was given; `extra`: the `fiox` sections beside the report
/// (`--telemetry`'s samples, the environment).
pub fn write(
    inv: &Invocation,
    result: &fiox_stats::RunResult,
    extra: Option<&serde_json::Value>,
) -> Result<()> {
    let Some(path) = &inv.settings.html else {
        return Ok(());
    };
    let json = crate::output::json_doc(result, true, &[], extra);
    let mut prefixes = Vec::new();
    for job in &inv.jobs {
        let l = &job.logs;
        for p in [&l.write_bw_log, &l.write_iops_log, &l.write_lat_log]
            .into_iter()
            .flatten()
        {
            // An empty prefix means the job's name, as fio names the files.
            prefixes.push(if p.is_empty() {
                job.name.clone()
            } else {
                p.clone()
            });
        }
    }
    if inv.settings.bandwidth_log {
        prefixes.extend(["agg-read", "agg-write", "agg-trim"].map(String::from));
    }
    let logs = fiox_plot::fiolog::files_with_prefixes(&prefixes);
    let mut facts = Vec::new();
    // The result JSON does not say which kernel ran it; the page can, as it is made here.
    if let Ok(k) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        facts.push(("kernel".to_string(), k.trim().to_string()));
    }
    let page = fiox_plot::run_page(&json, &logs, &facts)?;
    fiox_plot::write_file(Path::new(path), page.as_bytes(), fiox_guard::Named::ByUser)?;
    Ok(())
}
