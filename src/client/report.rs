//! What `fiox --client` prints once every server is done, in fio's client's order: each
//! server's results (normal: job blocks, group lines, disk lines; terse: a line per result),
//! then `All clients` (the results summed, when more than one came back), then the JSON
//! document (`client_stats`, `disk_util`, each entry with its server's `hostname` and `port`).

use super::{Collected, Plan};
use crate::output::Out;
use anyhow::Result;
use fiox_job::OutputFormat;
use fiox_report::{json, normal, terse};
use fiox_stats::{GroupResult, JobResult};
use serde_json::{Map, Value};
use std::time::SystemTime;

/// Print everything; Ok(true) when a server failed (the exit status is then 1).
pub(super) fn report(plan: &Plan, all: &[Collected], out: &Out, start: SystemTime) -> Result<bool> {
    let mut failed = false;
    for (t, c) in plan.targets.iter().zip(all) {
        if let Some(e) = &c.error {
            fiox_guard::eprintln!("{e}");
            failed = true;
        }
        failed |= c.log_failed;
        if c.stop_error != 0 {
            out.write(&format!(
                "client <{}>: exited with error {}\n",
                t.remote.host, c.stop_error
            ))?;
            failed = true;
        }
    }
    let has = |f: OutputFormat| plan.formats.contains(&f);
    let json_plus = has(OutputFormat::JsonPlus);
    let sum = all_clients(all);
    if has(OutputFormat::Normal) {
        out.write(&normal_text(all, sum.as_ref()))?;
    }
    if has(OutputFormat::Terse) {
        out.write(&terse_text(all, sum.as_ref(), plan.terse_version))?;
    }
    if has(OutputFormat::Json) || json_plus {
        let doc = json_doc(plan, all, sum.as_ref(), start, json_plus);
        out.write(&json::to_fio_json_text(&doc))?;
    }
    out.flush()?;
    Ok(failed)
}

fn normal_text(all: &[Collected], sum: Option<&(JobResult, GroupResult)>) -> String {
    let mut s = String::new();
    for c in all {
        for (_, j, g) in &c.results {
            s.push_str(&normal::job_block(j, g));
        }
        for g in &c.groups {
            s.push_str(&normal::group_status(g));
        }
        for d in &c.disks {
            s.push_str(&normal::disk_stats(std::slice::from_ref(d)));
        }
    }
    if let Some((j, g)) = sum {
        s.push_str(&normal::job_block(j, g));
    }
    s
}

fn terse_text(all: &[Collected], sum: Option<&(JobResult, GroupResult)>, ver: u32) -> String {
    let mut s = String::new();
    for c in all {
        for (_, j, g) in &c.results {
            s.push_str(&terse::job_line_v(j, g, &[], ver));
        }
    }
    if let Some((j, g)) = sum {
        s.push_str(&terse::job_line_v(j, g, &[], ver));
    }
    s
}

/// fio's `All clients` result: every server's results summed (fio's `sum_thread_stats`, its
/// group's `sum_group_stats`), when more than one result came back. Like fio's, it shows no
/// percentiles and no latency target.
fn all_clients(all: &[Collected]) -> Option<(JobResult, GroupResult)> {
    let results: Vec<&(u32, JobResult, GroupResult)> =
        all.iter().flat_map(|c| c.results.iter()).collect();
    let outputs: u32 = all
        .iter()
        .filter(|c| !c.results.is_empty())
        .map(|c| c.stat_outputs)
        .sum();
    if outputs <= 1 || results.len() <= 1 {
        return None;
    }
    let jobs: Vec<JobResult> = results.iter().map(|(_, j, _)| j.clone()).collect();
    let mut m = fiox_stats::group::merge_jobs(&jobs);
    let last = &results[results.len() - 1].1;
    m.name = "All clients".into();
    m.pid = 0;
    m.groupid = last.groupid;
    m.sig_figs = last.sig_figs;
    m.description.clear();
    m.job_options.clear();
    m.clat_percentiles = false;
    m.lat_percentiles = false;
    m.slat_percentiles = false;
    m.lat_target = None;
    m.iodepth = 0;
    let mut g = GroupResult::default();
    for (_, _, rg) in &results {
        sum_group(&mut g, rg);
    }
    Some((m, g))
}

/// fio's `sum_group_stats`: runtimes and rates at their extremes, bytes and aggregates added.
fn sum_group(dst: &mut GroupResult, src: &GroupResult) {
    for (d, s) in [
        (&mut dst.dirs.read, &src.dirs.read),
        (&mut dst.dirs.write, &src.dirs.write),
        (&mut dst.dirs.trim, &src.dirs.trim),
    ] {
        d.max_runtime_ms = d.max_runtime_ms.max(s.max_runtime_ms);
        if d.min_runtime_ms == 0 || (s.min_runtime_ms > 0 && s.min_runtime_ms < d.min_runtime_ms) {
            d.min_runtime_ms = s.min_runtime_ms;
        }
        d.max_bw = d.max_bw.max(s.max_bw);
        if d.min_bw == 0 || (s.min_bw > 0 && s.min_bw < d.min_bw) {
            d.min_bw = s.min_bw;
        }
        d.io_bytes = d.io_bytes.saturating_add(s.io_bytes);
        d.agg_bw = d.agg_bw.saturating_add(s.agg_bw);
    }
    if dst.kb_base == 0 {
        dst.kb_base = src.kb_base;
    }
    if dst.unit_base == 0 {
        dst.unit_base = src.unit_base;
    }
    if dst.sig_figs == 0 {
        dst.sig_figs = src.sig_figs;
    }
    dst.groupid = src.groupid;
    dst.mixed |= src.mixed;
    dst.both |= src.both;
}

/// A result's JSON object as fio's client writes it: without the run-time keys fio's client
/// leaves out (`eta`, `elapsed`) and fiox's own section (a server sends none), with the
/// server's `hostname` and `port`.
fn with_client(mut v: Value, host: &str, port: u16) -> Value {
    if let Value::Object(m) = &mut v {
        for k in ["eta", "elapsed", "fiox"] {
            m.remove(k);
        }
        m.insert("hostname".into(), host.into());
        m.insert("port".into(), port.into());
    }
    v
}

/// fio's client JSON: version, time, the first server's global options, `client_stats`
/// (each result with its job options, then `All clients`), `disk_util`.
fn json_doc(
    plan: &Plan,
    all: &[Collected],
    sum: Option<&(JobResult, GroupResult)>,
    start: SystemTime,
    plus: bool,
) -> Value {
    let t = start
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let mut root = Map::new();
    root.insert("fio version".into(), normal::version_line().into());
    root.insert("timestamp".into(), t.into());
    root.insert("time".into(), fiox_report::units::ctime(t).into());
    let mut globals = Map::new();
    for (k, v) in all.iter().flat_map(|c| c.global_options.iter()) {
        globals.entry(k.clone()).or_insert_with(|| v.clone().into());
    }
    root.insert("global options".into(), Value::Object(globals));
    let mut stats = Vec::new();
    let mut disks = Vec::new();
    let mut last = None;
    for (t, c) in plan.targets.iter().zip(all) {
        let (host, port) = (t.remote.host.as_str(), t.remote.port);
        for (n, j, g) in &c.results {
            let mut j = j.clone();
            j.job_options = c
                .job_options
                .iter()
                .filter(|(i, _, _)| i + 1 == *n)
                .map(|(_, k, v)| (k.clone(), v.clone()))
                .collect();
            stats.push(with_client(json::job_json(&j, g, plus), host, port));
            last = Some((host, port));
        }
        for d in &c.disks {
            disks.push(with_client(json::disk_json(d), host, port));
        }
    }
    if let (Some((j, g)), Some((host, port))) = (sum, last) {
        stats.push(with_client(json::job_json(j, g, plus), host, port));
    }
    root.insert("client_stats".into(), Value::Array(stats));
    root.insert("disk_util".into(), Value::Array(disks));
    Value::Object(root)
}
