//! Self-describing results (`fiox env`, and `fiox.env` in every experiment run): what a reader
//! needs to trust or reproduce a result. The kernel (release, command line), the CPU (model,
//! count, governor, mitigations), memory and transparent huge pages; per target its block
//! devices (model, scheduler, nr_requests, max_sectors_kb, rotational, block sizes, write
//! cache, loop backing file and direct I/O), its filesystem and mount options; fiox's version.

use crate::telemetry::devices_for;
use serde_json::{json, Map, Value};
use std::path::Path;

fn read(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The environment as JSON; `targets` are the paths the jobs use.
/// `fiox` is (version, commit).
pub fn collect(targets: &[&Path], fiox: (&str, &str), command_line: &[String]) -> Value {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|x| x.1.trim())
        })
        .unwrap_or("unknown");
    let mem_kb = read("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")?
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        });
    let mut mitigations = Map::new();
    if let Ok(rd) = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities") {
        let mut v: Vec<_> = rd.flatten().collect();
        v.sort_by_key(|e| e.file_name());
        for e in v {
            if let Some(s) = read(e.path()) {
                mitigations.insert(e.file_name().to_string_lossy().into(), json!(s));
            }
        }
    }
    json!({
        // Which machine: the history keys its series by it.
        "hostname": read("/proc/sys/kernel/hostname"),
        "kernel": {
            "release": read("/proc/sys/kernel/osrelease"),
            "version": read("/proc/sys/kernel/version"),
            "cmdline": read("/proc/cmdline"),
        },
        "cpu": {
            "model": model,
            "count": std::thread::available_parallelism().map_or(0, |n| n.get()),
            "governor": read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            "mitigations": mitigations,
        },
        "memory": { "total_kb": mem_kb },
        "thp": read("/sys/kernel/mm/transparent_hugepage/enabled"),
        "guest": guest(),
        "targets": targets.iter().map(|t| target(t)).collect::<Vec<_>>(),
        "fiox": { "version": fiox.0, "commit": fiox.1 },
        "command_line": command_line,
    })
}

/// The accelerator a vm testbed of the default description would be given here, and why.
fn guest() -> Value {
    let spec = fiox_testbed::vm::VmSpec::default();
    let r = fiox_testbed::vm::would_use(spec.accel, spec.probe_s);
    json!({
        "accelerators": r.tries,
        "why": r.why,
        "qemu": r.qemu.map(|p| p.display().to_string()),
    })
}

fn target(path: &Path) -> Value {
    let devices: Vec<Value> = devices_for(path).iter().map(|d| device(d)).collect();
    let (fs, opts) = mount_of(path).unwrap_or_default();
    json!({
        "path": path.display().to_string(),
        "filesystem": fs,
        "mount_options": opts,
        "devices": devices,
    })
}

fn device(name: &str) -> Value {
    let sys = format!("/sys/class/block/{name}");
    // A partition's queue settings are its disk's.
    let q = if Path::new(&format!("{sys}/partition")).exists() {
        format!("{sys}/../queue")
    } else {
        format!("{sys}/queue")
    };
    let scheduler = read(format!("{q}/scheduler")).map(|s| {
        s.split_whitespace()
            .find(|w| w.starts_with('['))
            .map_or(s.clone(), |w| w.trim_matches(['[', ']']).to_string())
    });
    json!({
        "name": name,
        "model": read(format!("{sys}/device/model")),
        "scheduler": scheduler,
        "nr_requests": read(format!("{q}/nr_requests")),
        "max_sectors_kb": read(format!("{q}/max_sectors_kb")),
        "rotational": read(format!("{q}/rotational")),
        "logical_block_size": read(format!("{q}/logical_block_size")),
        "physical_block_size": read(format!("{q}/physical_block_size")),
        "write_cache": read(format!("{q}/write_cache")),
        "loop_backing_file": read(format!("{sys}/loop/backing_file")),
        "loop_direct_io": read(format!("{sys}/loop/dio")),
    })
}

/// Filesystem type and mount options of the mount holding `path` (longest mount point prefix
/// in /proc/self/mounts).
fn mount_of(path: &Path) -> Option<(String, String)> {
    let p = path.canonicalize().ok()?;
    let mounts = read("/proc/self/mounts")?;
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() >= 4).then(|| (f[1].replace("\\040", " "), f[2], f[3]))
        })
        .filter(|(mp, _, _)| p.starts_with(mp))
        .max_by_key(|(mp, _, _)| mp.len())
        .map(|(_, fs, o)| (fs.to_string(), o.to_string()))
}

/// A human-readable summary of [`collect`]'s JSON.
pub fn text(env: &Value) -> String {
    // Absent facts (no cpufreq in a VM, no device model) print as "-".
    let s = |v: &Value| match v {
        Value::Null => "-".to_string(),
        Value::String(x) => x.clone(),
        other => other.to_string(),
    };
    let mut out = format!(
        "kernel: {}\ncmdline: {}\ncpu: {} x {} (governor {})\nmemory: {} MiB\nthp: {}\nfiox: {} (commit {})\n",
        s(&env["kernel"]["release"]),
        s(&env["kernel"]["cmdline"]),
        env["cpu"]["count"],
        s(&env["cpu"]["model"]),
        s(&env["cpu"]["governor"]),
        env["memory"]["total_kb"].as_u64().unwrap_or(0) / 1024,
        s(&env["thp"]),
        s(&env["fiox"]["version"]),
        s(&env["fiox"]["commit"]),
    );
    let g = &env["guest"];
    if let Some(tries) = g["accelerators"].as_array() {
        let tries: Vec<String> = tries.iter().map(s).collect();
        out += &format!(
            "guest: {} ({}; {})\n",
            tries.join(", then "),
            s(&g["why"]),
            match &g["qemu"] {
                Value::String(q) => q.clone(),
                _ => format!("no {} on PATH", fiox_testbed::vm::QEMU),
            }
        );
    }
    for t in env["targets"].as_array().into_iter().flatten() {
        out += &format!(
            "target {}: {} ({})\n",
            s(&t["path"]),
            s(&t["filesystem"]),
            s(&t["mount_options"])
        );
        for d in t["devices"].as_array().into_iter().flatten() {
            out += &format!(
                "  {}: model={} scheduler={} nr_requests={} rotational={} lbs={} pbs={} \
                 write_cache={}",
                s(&d["name"]),
                s(&d["model"]),
                s(&d["scheduler"]),
                s(&d["nr_requests"]),
                s(&d["rotational"]),
                s(&d["logical_block_size"]),
                s(&d["physical_block_size"]),
                s(&d["write_cache"]),
            );
            if !d["loop_backing_file"].is_null() {
                out += &format!(
                    " backing={} dio={}",
                    s(&d["loop_backing_file"]),
                    s(&d["loop_direct_io"])
                );
            }
            out.push('\n');
        }
    }
    out
}

/// Machine limits (`fiox.env.limits`) against the system's page cache in `telemetry`: when
/// the system's Cached grew during the run by more than the run's memory limit allows (a
/// quarter over it), page cache the run caused was charged outside its group (under cgroup
/// v1 a loop device's backing-file cache goes to the loop worker's group, not the issuer's),
/// so the limit did not bound the run's memory: a warning value is added to the limits.
pub fn check_limits(limits: &mut Value, telemetry: &Value) {
    let (Some(limit), Some(max)) = (
        limits["memory_bytes"].as_u64(),
        telemetry["summary"]["Cached_kb.max"].as_f64(),
    ) else {
        return;
    };
    let Some(start) = telemetry["series"][0]["Cached_kb"].as_f64() else {
        return;
    };
    let grew = (max - start).max(0.0) * 1024.0;
    if grew <= limit as f64 * 1.25 {
        return;
    }
    let mib = |b: f64| b / 1_048_576.0;
    let w = json!({
        "code": "machine-limit-escaped",
        "message": format!(
            "the system's page cache grew by {:.0} MiB during the run, above the run's {:.0} \
             MiB memory limit: page cache the run caused was charged outside its cgroup (under \
             cgroup v1 a loop device's backing-file cache is charged to the loop worker, not to \
             the run), so the machine was not as small as asked (or another process filled \
             the cache meanwhile)",
            mib(grew),
            mib(limit as f64)
        ),
        "fix": "use cgroup v2 (the loop driver charges the issuing cgroup since Linux 5.12) or \
                a guest with that memory; or a quieter machine",
    });
    if let Some(ws) = limits["warnings"].as_array_mut() {
        ws.push(w);
    } else {
        limits["warnings"] = json!([w]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_the_kernel_cpu_and_the_target_mount() {
        let env = collect(
            &[Path::new("/proc")],
            ("0.1.0", "abc"),
            &["fiox".into(), "env".into()],
        );
        assert_eq!(
            env["kernel"]["release"].as_str(),
            read("/proc/sys/kernel/osrelease").as_deref()
        );
        assert!(env["cpu"]["count"].as_u64().unwrap() >= 1);
        assert_eq!(env["targets"][0]["filesystem"], "proc");
        assert!(text(&env).contains("target /proc: proc"));
        assert!(text(&env).contains("fiox: 0.1.0 (commit abc)"));
    }

    #[test]
    fn page_cache_growing_past_the_limit_is_a_warning() {
        let tele = |start: f64, max: f64| json!({"summary": {"Cached_kb.max": max}, "series": [{"Cached_kb": start}]});
        let mut l = json!({"memory_bytes": 1u64 << 30, "warnings": []});
        check_limits(&mut l, &tele(1e6, 2e6));
        assert_eq!(l["warnings"], json!([]), "1 GiB grown under 1 GiB: fine");
        check_limits(&mut l, &tele(1e6, 4e6));
        assert_eq!(l["warnings"][0]["code"], "machine-limit-escaped", "{l}");
        let mut no_limit = json!({"cpus": 2, "memory_bytes": null});
        check_limits(&mut no_limit, &tele(0.0, 9e9));
        assert!(no_limit.get("warnings").is_none());
    }
}
