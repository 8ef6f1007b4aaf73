//! `--machine-memory=SIZE` / `--machine-cpus=N` on a fio command line: the run goes into a
//! cgroup with that memory limit and a cpuset of that many CPUs (fiox-testbed's machine
//! module: made before the jobs start, left and removed after the run, Ctrl-C included;
//! `fiox testbed cleanup` after a kill -9), and every JSON result says so under
//! `fiox.env.limits`, with what the group saw and warnings when a limit did not take effect
//! or shaped nothing. The normal report ends with the same as a short block.

use anyhow::{Context, Result};
use fiox_job::RunSettings;
use fiox_stats::{Warning, WarningCode};
use fiox_testbed::machine::{LimitWarning, Limits, Machine, Report};
use serde_json::{json, Value};

/// Enter the limits the command line asks for; None when it asks for none.
pub fn enter(s: &RunSettings) -> Result<Option<Machine>> {
    let limits = Limits::parse(s.machine_memory.as_deref(), s.machine_cpus.as_deref())?;
    if limits.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        Machine::enter(&limits).context("--machine-memory/--machine-cpus")?,
    ))
}

/// Leave the limits: the report as `fiox.env.limits`. A group that could not be removed is
/// said on stderr (its record stays for `fiox testbed cleanup`).
pub fn finish(m: Machine) -> Value {
    let (r, removed) = m.finish();
    if let Err(e) = removed {
        fiox_guard::eprintln!("fiox: {e}");
    }
    to_json(&r)
}

/// `fiox.env.limits`.
pub fn to_json(r: &Report) -> Value {
    let warnings: Vec<Value> = r
        .warnings
        .iter()
        .map(|(kind, message)| {
            let code = match kind {
                LimitWarning::Exceeded => WarningCode::MachineLimitExceeded,
                LimitWarning::NotReached => WarningCode::MachineLimitNotReached,
            };
            let w = Warning::new(code, message.as_str());
            json!({"code": w.code.code(), "message": w.message, "fix": w.fix})
        })
        .collect();
    json!({
        "memory_bytes": r.limits.memory_bytes,
        "cpus": r.limits.cpus,
        "cpu_list": r.cpu_list,
        "cgroup": r.cgroup,
        "groups": r.groups.iter().map(|g| g.display().to_string()).collect::<Vec<_>>(),
        "peak_bytes": r.peak_bytes,
        "page_cache_peak_bytes": r.page_cache_peak_bytes,
        "limit_hits": r.limit_hits,
        "warnings": warnings,
    })
}

/// The block after the normal report.
pub fn text_block(limits: &Value) -> String {
    let mib = |k: &str| {
        limits[k].as_u64().map_or("-".to_string(), |b| {
            format!("{:.0} MiB", b as f64 / 1048576.0)
        })
    };
    let mut s = format!(
        "fiox machine limits (cgroup {}): memory {}, cpus {} ({}); peak {}, page cache at \
         most {}, limit hit {} times\n",
        limits["cgroup"].as_str().unwrap_or("?"),
        mib("memory_bytes"),
        limits["cpus"]
            .as_u64()
            .map_or("-".into(), |c| c.to_string()),
        limits["cpu_list"].as_str().unwrap_or("all"),
        mib("peak_bytes"),
        mib("page_cache_peak_bytes"),
        limits["limit_hits"]
            .as_u64()
            .map_or("-".into(), |c| c.to_string()),
    );
    for w in limits["warnings"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "  {}: {} (fix: {})\n",
            w["code"].as_str().unwrap_or(""),
            w["message"].as_str().unwrap_or(""),
            w["fix"].as_str().unwrap_or("")
        ));
    }
    s
}
