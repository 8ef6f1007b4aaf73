//! What else differs between the sides besides the numbers: the recorded environments (kernel,
//! CPU governor and mitigations, memory, filesystem, scheduler...) and the jobs' options, both
//! between sides and between the runs of one side (a resumed experiment whose job changed).
//! Each difference becomes a warning naming the field and each side's values.

use crate::load::Side;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Environment fields compared (JSON pointer into `fiox.env`, what to call it).
const FIELDS: [(&str, &str); 21] = [
    ("/kernel/release", "kernel"),
    ("/kernel/cmdline", "kernel command line"),
    ("/cpu/model", "CPU model"),
    ("/cpu/count", "CPU count"),
    ("/cpu/governor", "CPU governor"),
    ("/memory/total_kb", "memory (KiB)"),
    ("/fiox/version", "fiox version"),
    ("/thp", "transparent huge pages"),
    ("/targets/0/filesystem", "filesystem"),
    ("/targets/0/mount_options", "mount options"),
    ("/targets/0/devices/0/scheduler", "scheduler"),
    ("/targets/0/devices/0/loop_direct_io", "loop direct I/O"),
    // A run in a QEMU guest (`--vm`, `vm =`): what the guest was and how QEMU ran its disk.
    ("/vm/accel", "QEMU accelerator"),
    ("/vm/kernel", "guest kernel"),
    ("/vm/aio", "QEMU aio"),
    ("/vm/cache", "QEMU cache"),
    ("/vm/memory_bytes", "guest memory (bytes)"),
    ("/vm/cpus", "guest CPUs"),
    ("/vm/queues", "virtio queues"),
    ("/vm/iothread", "QEMU iothread"),
    ("/vm/sched", "guest I/O scheduler"),
];

/// Options expected to differ between runs or sides without changing the workload's kind:
/// targets are compared through the environment, seeds are per repetition.
const IGNORED_OPTIONS: [&str; 4] = ["filename", "directory", "randseed", "output"];

/// Per side, every value each named field takes over its runs.
type Values = Vec<BTreeMap<String, BTreeSet<String>>>;

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// A field's value as compared: memory in GiB to one decimal, since the kernel's MemTotal
/// moves by a few KiB between boots and that is no change of set-up.
fn shown(ptr: &str, v: &Value) -> String {
    match (ptr, v.as_f64()) {
        ("/memory/total_kb", Some(kb)) => format!("{:.1} GiB", kb / 1024.0 / 1024.0),
        _ => show(v),
    }
}

fn env_values(sides: &[Side]) -> Values {
    sides
        .iter()
        .map(|s| {
            let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for env in s.runs.iter().filter_map(|r| r.env.as_ref()) {
                for (ptr, what) in FIELDS {
                    if let Some(v) = env.pointer(ptr).filter(|v| !v.is_null()) {
                        m.entry(what.into()).or_default().insert(shown(ptr, v));
                    }
                }
                let mitigations = env.pointer("/cpu/mitigations").and_then(Value::as_object);
                for (k, v) in mitigations.into_iter().flatten() {
                    let key = format!("CPU mitigation {k}");
                    m.entry(key).or_default().insert(show(v));
                }
            }
            m
        })
        .collect()
}

fn option_values(sides: &[Side]) -> Values {
    sides
        .iter()
        .map(|s| {
            let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for r in &s.runs {
                for (job, opts) in &r.options {
                    for (k, v) in opts
                        .iter()
                        .filter(|(k, _)| !IGNORED_OPTIONS.contains(&k.as_str()))
                    {
                        m.entry(format!("job {job} option {k}"))
                            .or_default()
                            .insert(v.clone());
                    }
                }
            }
            m
        })
        .collect()
}

fn join(v: Option<&BTreeSet<String>>) -> String {
    v.map_or("(not set)".into(), |s| {
        s.iter().cloned().collect::<Vec<_>>().join(" / ")
    })
}

/// Warnings for fields that vary within a side or differ from the base side.
fn differences(sides: &[Side], values: &Values, env: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (s, m) in sides.iter().zip(values) {
        for (what, vals) in m.iter().filter(|(_, v)| v.len() > 1) {
            out.push(format!(
                "{}: {what} varies between its runs ({}): its numbers mix set-ups",
                s.name,
                join(Some(vals))
            ));
        }
    }
    let Some(base) = values.first() else {
        return out;
    };
    for (s, m) in sides.iter().zip(values).skip(1) {
        let keys: BTreeSet<&String> = base.keys().chain(m.keys()).collect();
        for k in keys {
            let (a, b) = (base.get(k), m.get(k));
            // A field recorded on one side only (an older fiox, telemetry off) says nothing.
            if env && (a.is_none() || b.is_none()) {
                continue;
            }
            if a != b {
                out.push(format!(
                    "{k} differs: {} has {}, {} has {}",
                    sides[0].name,
                    join(a),
                    s.name,
                    join(b)
                ));
            }
        }
    }
    out
}

/// A side whose runs ran in a guest under QEMU's TCG emulation measured the emulator.
fn emulated(sides: &[Side]) -> Vec<String> {
    sides
        .iter()
        .filter_map(|s| {
            let tcg = s
                .runs
                .iter()
                .filter(|r| {
                    let accel = r.env.as_ref().and_then(|e| e.pointer("/vm/accel"));
                    accel.and_then(Value::as_str) == Some("tcg")
                })
                .count();
            (tcg > 0).then(|| {
                format!(
                    "{}: {tcg} of {} run(s) ran in a guest under QEMU's TCG emulation (no KVM): \
                     their numbers measure the emulator, not the virtio-blk path",
                    s.name,
                    s.runs.len()
                )
            })
        })
        .collect()
}

/// Warnings where the sides' recorded environments or job options differ, and sides that
/// ran emulated.
pub fn context_differences(sides: &[Side]) -> Vec<String> {
    let mut out = emulated(sides);
    out.extend(differences(sides, &env_values(sides), true));
    out.extend(differences(sides, &option_values(sides), false));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Run;

    fn run(env: Value, bs: &str) -> Run {
        let mut r = Run {
            env: Some(env),
            ..Run::default()
        };
        let opts = [("bs".to_string(), bs.to_string())].into();
        r.options.insert("rr".into(), opts);
        r
    }

    #[test]
    fn environments_and_options_that_differ_are_named() {
        let env = |rel: &str, sched: &str, spectre: &str| {
            serde_json::json!({"kernel": {"release": rel}, "cpu": {"model": "x",
                "mitigations": {"spectre_v2": spectre}},
                "targets": [{"devices": [{"scheduler": sched}]}]})
        };
        let a = Side {
            name: "a".into(),
            runs: vec![run(env("6.1", "none", "on"), "4k")],
            baseline: None,
        };
        let b = Side {
            name: "b".into(),
            runs: vec![
                run(env("6.18", "mq-deadline", "off"), "4k"),
                run(env("6.18", "mq-deadline", "off"), "1m"),
            ],
            baseline: None,
        };
        let w = context_differences(&[a, b]).join("\n");
        assert!(w.contains("kernel differs: a has 6.1, b has 6.18"), "{w}");
        assert!(
            w.contains("scheduler differs: a has none, b has mq-deadline"),
            "{w}"
        );
        assert!(
            w.contains("CPU mitigation spectre_v2 differs: a has on, b has off"),
            "{w}"
        );
        assert!(
            w.contains("b: job rr option bs varies between its runs (1m / 4k)"),
            "{w}"
        );
        assert!(
            w.contains("job rr option bs differs: a has 4k, b has 1m / 4k"),
            "{w}"
        );
        assert!(!w.contains("CPU model"), "{w}");
    }

    #[test]
    fn guests_and_emulation_are_named_and_tiny_memory_changes_are_not() {
        let env = |accel: &str, aio: &str, kb: u64| {
            serde_json::json!({"memory": {"total_kb": kb},
                "vm": {"accel": accel, "aio": aio, "kernel": "6.1.0", "cpus": 2}})
        };
        let side = |name: &str, e: Value| Side {
            name: name.into(),
            runs: vec![run(e, "4k")],
            baseline: None,
        };
        let a = side("a", env("kvm", "native", 24_000_000));
        let b = side("b", env("tcg", "io_uring", 24_000_012));
        let w = context_differences(&[a, b]).join("\n");
        assert!(
            w.contains("b: 1 of 1 run(s) ran in a guest under QEMU's TCG"),
            "{w}"
        );
        assert!(
            w.contains("QEMU aio differs: a has native, b has io_uring"),
            "{w}"
        );
        assert!(
            w.contains("QEMU accelerator differs: a has kvm, b has tcg"),
            "{w}"
        );
        assert!(!w.contains("memory"), "{w}");
        assert!(!w.contains("guest kernel"), "{w}");
    }
}
