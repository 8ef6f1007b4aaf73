//! Self-describing results (`fiox env`, and `fiox.env` in every experiment run): what a reader
//! needs to trust or reproduce a result. The kernel (release, command line), the CPU (model,
//! count, governor, mitigations), memory and transparent huge pages; per target its block
//! devices (model, scheduler, nr_requests, max_sectors_kb, rotational, block sizes, write
//! cache, loop backing file and direct I/O), its filesystem and mount options; fiox's version.

use crate::telemetry::devices_for;
use fiox_stats::{Warning, WarningCode};
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

/// The page cache held by the backing file of every loop device under the run's targets
/// (`env`'s `targets[].devices[]`), measured now (after the run, before the next): what a
/// buffered loop device caches a second time, seed 001's "double page cache", per device. The
/// file is the one the loop device is bound to by identity (LOOP_GET_STATUS64's device and
/// inode), not whatever its recorded path names now; a path that no longer leads to it is
/// left out.
pub fn backing_cache(env: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let devices = env["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["devices"].as_array().into_iter().flatten());
    for d in devices {
        let Some(name) = d["name"].as_str() else {
            continue;
        };
        // A partition's (loopNpM) loop device is its disk's (loopN).
        let Some(n) = name.strip_prefix("loop") else {
            continue;
        };
        let disk = format!("loop{}", n.split_once('p').map_or(n, |(n, _)| n));
        if !seen.insert(disk.clone()) {
            continue;
        }
        if let Some(v) = one_backing(&disk) {
            out.push(v);
        }
    }
    out
}

fn one_backing(disk: &str) -> Option<Value> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let want = fiox_testbed::loopdev::backing_dev_ino(disk)?;
    let path = fiox_testbed::probe::sys_backing_file(disk)?;
    let f = std::fs::File::open(&path).ok()?;
    let meta = f.metadata().ok()?;
    if (meta.dev(), meta.ino()) != want || !meta.is_file() {
        return None;
    }
    let (cached, how) = fiox_engine::sys::cached_bytes(f.as_raw_fd(), 0, meta.len()).ok()?;
    Some(json!({
        "device": disk,
        "file": path.display().to_string(),
        "size_bytes": meta.len(),
        "cached_bytes": cached,
        "method": how.name(),
    }))
}

/// Machine limits (`fiox.env.limits`) against the page cache the run caused outside its
/// cgroup: a loop device's buffered I/O caches its backing file a second time, and under
/// cgroup v1 that cache is charged to the loop driver's worker, not to the run (per-cgroup
/// loop workers charge the issuer since Linux 5.12, on cgroup v2 only). When the backing
/// files of this run's loop devices (`backing`, from [`backing_cache`]) hold more than the
/// run's memory limit allows (a quarter over it), the limit did not bound the run's memory and
/// a warning naming the devices is added to the limits. The system's page cache growth
/// (`telemetry`) is quoted beside it, never the reason: another process may fill that cache,
/// and a variant whose own devices hold nothing never gets the warning.
pub fn check_limits(limits: &mut Value, backing: &[Value], telemetry: Option<&Value>) {
    let Some(limit) = limits["memory_bytes"].as_u64() else {
        return;
    };
    // Judged once per result: a run's own verdict is replaced by the experiment's (which has
    // the telemetry to quote).
    if let Some(ws) = limits["warnings"].as_array_mut() {
        ws.retain(|w| {
            w["code"].as_str().and_then(WarningCode::from_code)
                != Some(WarningCode::MachineLimitEscaped)
        });
    }
    let over: Vec<&Value> = backing
        .iter()
        .filter(|b| b["cached_bytes"].as_f64().unwrap_or(0.0) > limit as f64 * 1.25)
        .collect();
    if over.is_empty() {
        return;
    }
    let mib = |b: f64| b / 1_048_576.0;
    let each: Vec<String> = over
        .iter()
        .map(|b| {
            format!(
                "{}'s backing file {} holds {:.0} MiB of page cache",
                b["device"].as_str().unwrap_or("?"),
                b["file"].as_str().unwrap_or("?"),
                mib(b["cached_bytes"].as_f64().unwrap_or(0.0))
            )
        })
        .collect();
    let system = telemetry
        .and_then(cached_growth)
        .map_or(String::new(), |g| {
            format!(
                " (the system's page cache grew by {:.0} MiB during the run)",
                mib(g)
            )
        });
    let why = match limits["cgroup"].as_str() {
        Some("v1") => {
            "under cgroup v1 the loop worker's buffered I/O to its backing file is charged to \
             the worker's group, and the kernel offers no way to charge it to the run"
        }
        _ => "the loop driver's buffered I/O to its backing file was charged outside the run",
    };
    let w = Warning::new(
        WarningCode::MachineLimitEscaped,
        format!(
            "after the run, {}{system}, above the run's {:.0} MiB memory limit: {why}, so the \
             machine was not as small as asked",
            each.join("; "),
            mib(limit as f64)
        ),
    );
    let w = json!({"code": w.code.code(), "message": w.message, "fix": w.fix});
    if let Some(ws) = limits["warnings"].as_array_mut() {
        ws.push(w);
    } else {
        limits["warnings"] = json!([w]);
    }
}

/// How much the system's Cached grew during the run, in bytes (telemetry's samples).
fn cached_growth(telemetry: &Value) -> Option<f64> {
    let max = telemetry["summary"]["Cached_kb.max"].as_f64()?;
    let start = telemetry["series"][0]["Cached_kb"].as_f64()?;
    Some((max - start).max(0.0) * 1024.0)
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
    fn a_backing_file_caching_past_the_limit_is_a_warning_and_system_growth_is_not() {
        let tele = json!({"summary": {"Cached_kb.max": 9e6}, "series": [{"Cached_kb": 1e6}]});
        let backing = |mib: u64| json!({"device": "loop7", "file": "/var/tmp/img", "cached_bytes": mib << 20});
        let mut l = json!({"memory_bytes": 128u64 << 20, "cgroup": "v1", "warnings": []});
        // The system's cache grew by 8 GB (another process): this run's device holds 100 MiB.
        check_limits(&mut l, &[backing(100)], Some(&tele));
        assert_eq!(l["warnings"], json!([]), "{l}");
        check_limits(&mut l, &[backing(100), backing(512)], Some(&tele));
        check_limits(&mut l, &[backing(100), backing(512)], Some(&tele));
        assert_eq!(
            l["warnings"].as_array().unwrap().len(),
            1,
            "judged once: {l}"
        );
        let w = &l["warnings"][0];
        assert_eq!(w["code"], WarningCode::MachineLimitEscaped.code(), "{l}");
        let m = w["message"].as_str().unwrap();
        assert!(
            m.contains("loop7's backing file /var/tmp/img holds 512 MiB of page cache")
                && m.contains("grew by 7812 MiB")
                && m.contains("128 MiB memory limit")
                && m.contains("cgroup v1"),
            "{m}"
        );
        let mut no_limit = json!({"cpus": 2, "memory_bytes": null});
        check_limits(&mut no_limit, &[backing(9999)], Some(&tele));
        assert!(no_limit.get("warnings").is_none());
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // the test builds its own scratch files
    fn a_loop_devices_backing_cache_is_measured_by_identity() {
        if let Err(e) = fiox_testbed::loop_support() {
            fiox_guard::eprintln!("skipped: no loop devices here: {e}");
            return;
        }
        let dir = fiox_testbed::TempDir::new("backing").unwrap();
        let img = dir.path().join("img");
        std::fs::write(&img, vec![7u8; 4 << 20]).unwrap();
        let lo = fiox_testbed::LoopDevice::attach(&img, &Default::default()).unwrap();
        // Read the device through the loop driver (buffered): the backing file gets cached.
        let _ = std::fs::read(lo.path()).unwrap();
        let env = json!({"targets": [{"devices": [{"name": lo.name()}, {"name": "vda"}]}]});
        let b = backing_cache(&env);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(b[0]["size_bytes"], 4u64 << 20);
        assert_eq!(b[0]["file"], img.display().to_string());
        assert!(b[0]["cached_bytes"].as_u64().unwrap() > 0, "{b:?}");
        // Another file put at the recorded path is not the loop device's backing file.
        let other = dir.path().join("other");
        std::fs::write(&other, b"other").unwrap();
        std::fs::rename(&other, &img).unwrap();
        assert!(backing_cache(&env).is_empty());
    }
}
