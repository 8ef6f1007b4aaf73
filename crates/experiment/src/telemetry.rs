//! System telemetry around a run: a thread samples /proc/meminfo (Buffers, Cached, Dirty,
//! Writeback, MemAvailable), /proc/vmstat (page-ins/outs, faults), /proc/stat (context
//! switches, interrupts, CPU time by state), /proc/diskstats for the target's devices and the
//! devices below them (a loop's backing disk, a partition's disk) and /proc/pressure where
//! present, every interval (default 1 s) plus once at the start and the end. The result is a
//! summary (counter deltas over the run, means and maxima of the memory levels) and the time
//! series, as JSON for the `fiox` key and as a short text block.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const MEMINFO: [&str; 5] = ["Buffers", "Cached", "Dirty", "Writeback", "MemAvailable"];
const VMSTAT: [&str; 6] = [
    "pgpgin",
    "pgpgout",
    "pgfault",
    "pgmajfault",
    "nr_written",
    "pswpout",
];
const CPU_STATES: [&str; 8] = [
    "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
];

/// One sample: levels (memory) and counters (everything else), by name.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// Seconds since the sampler started.
    pub t: f64,
    pub levels: BTreeMap<String, f64>,
    pub counters: BTreeMap<String, f64>,
}

/// Take one sample of the system and of `devices` (names as in /proc/diskstats).
pub fn sample(devices: &[String], t: f64) -> Sample {
    let mut s = Sample {
        t,
        ..Sample::default()
    };
    if let Ok(text) = std::fs::read_to_string("/proc/meminfo") {
        for l in text.lines() {
            let mut f = l.split_whitespace();
            let (Some(k), Some(v)) = (f.next(), f.next()) else {
                continue;
            };
            let k = k.trim_end_matches(':');
            if let (true, Ok(v)) = (MEMINFO.contains(&k), v.parse::<f64>()) {
                s.levels.insert(format!("{k}_kb"), v);
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string("/proc/vmstat") {
        for l in text.lines() {
            if let Some((k, v)) = l.split_once(' ') {
                if let (true, Ok(v)) = (VMSTAT.contains(&k), v.parse::<f64>()) {
                    s.counters.insert(k.to_string(), v);
                }
            }
        }
    }
    read_stat(&mut s);
    read_diskstats(&mut s, devices);
    for res in ["io", "cpu", "memory"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/pressure/{res}")) else {
            continue;
        };
        for l in text.lines() {
            let kind = l.split_whitespace().next().unwrap_or("");
            if let Some(total) = l.split_whitespace().find_map(|w| w.strip_prefix("total=")) {
                if let Ok(v) = total.parse::<f64>() {
                    s.counters.insert(format!("psi_{res}_{kind}_us"), v);
                }
            }
        }
    }
    s
}

fn read_stat(s: &mut Sample) {
    let Ok(text) = std::fs::read_to_string("/proc/stat") else {
        return;
    };
    for l in text.lines() {
        let mut f = l.split_whitespace();
        match f.next() {
            Some("cpu") => {
                for (state, v) in CPU_STATES.iter().zip(f) {
                    if let Ok(v) = v.parse::<f64>() {
                        s.counters.insert(format!("cpu_{state}_ticks"), v);
                    }
                }
            }
            Some(k @ ("ctxt" | "intr")) => {
                if let Some(Ok(v)) = f.next().map(str::parse::<f64>) {
                    s.counters.insert(k.to_string(), v);
                }
            }
            _ => {}
        }
    }
}

fn read_diskstats(s: &mut Sample, devices: &[String]) {
    if devices.is_empty() {
        return;
    }
    let Ok(text) = std::fs::read_to_string("/proc/diskstats") else {
        return;
    };
    // Fields after the name: reads, reads merged, sectors read, ms reading, writes, writes
    // merged, sectors written, ms writing, in flight, ms doing I/O, weighted ms.
    const FIELDS: [(usize, &str); 6] = [
        (0, "read_ios"),
        (2, "read_sectors"),
        (4, "write_ios"),
        (6, "write_sectors"),
        (9, "io_ticks_ms"),
        (10, "queue_ms"),
    ];
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 14 || !devices.iter().any(|d| d == f[2]) {
            continue;
        }
        for (i, name) in FIELDS {
            if let Ok(v) = f[3 + i].parse::<f64>() {
                s.counters.insert(format!("disk.{}.{name}", f[2]), v);
            }
        }
    }
}

/// The block devices behind `path`: the device holding it (or the device node itself), a
/// partition's whole disk, and for a loop device its backing file's devices, recursively.
pub fn devices_for(path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(meta) = std::fs::metadata(path) else {
        return out;
    };
    let rdev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    add_device(rdev, &mut out, 0);
    out
}

fn add_device(dev: u64, out: &mut Vec<String>, depth: u32) {
    let (maj, min) = (libc_major(dev), libc_minor(dev));
    let link = format!("/sys/dev/block/{maj}:{min}");
    let Ok(real) = std::fs::canonicalize(&link) else {
        return;
    };
    let Some(name) = real.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    if out.contains(&name) || depth > 4 {
        return;
    }
    out.push(name.clone());
    // A partition's parent directory is its disk.
    if real.join("partition").exists() {
        if let Some(disk) = real.parent().and_then(|p| p.file_name()) {
            let disk = disk.to_string_lossy().into_owned();
            if !out.contains(&disk) {
                out.push(disk);
            }
        }
    }
    let backing = real.join("loop/backing_file");
    if let Ok(b) = std::fs::read_to_string(backing) {
        if let Ok(m) = std::fs::metadata(b.trim_end()) {
            add_device(m.dev(), out, depth + 1);
        }
    }
}

// Linux's dev_t encoding (glibc's gnu_dev_major/minor), without a libc dependency here.
fn libc_major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff)
}

fn libc_minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff)
}

/// A running sampler thread.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Vec<Sample>>>,
    interval: Duration,
}

impl Sampler {
    /// Start sampling `devices` every `interval`.
    pub fn start(devices: Vec<String>, interval: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("fiox-telemetry".into())
            .spawn(move || {
                let t0 = Instant::now();
                let mut out = vec![sample(&devices, 0.0)];
                let mut next = interval;
                while !flag.load(Ordering::Relaxed) {
                    // Short sleeps so stop() returns promptly.
                    std::thread::sleep(Duration::from_millis(20).min(interval));
                    if t0.elapsed() >= next {
                        out.push(sample(&devices, t0.elapsed().as_secs_f64()));
                        next += interval;
                    }
                }
                out.push(sample(&devices, t0.elapsed().as_secs_f64()));
                out
            })
            .ok();
        Sampler {
            stop,
            handle,
            interval,
        }
    }

    /// Stop and summarise as the JSON of the `fiox.telemetry` key.
    pub fn finish(mut self) -> Value {
        self.stop.store(true, Ordering::Relaxed);
        let samples = self
            .handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        summarise(&samples, self.interval)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The summary and series of `samples`.
pub fn summarise(samples: &[Sample], interval: Duration) -> Value {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return json!({});
    };
    let mut summary = Map::new();
    for (k, v) in &last.counters {
        if let Some(v0) = first.counters.get(k) {
            summary.insert(k.clone(), json!(v - v0));
        }
    }
    let ticks: f64 = CPU_STATES
        .iter()
        .filter_map(|s| summary.get(&format!("cpu_{s}_ticks"))?.as_f64())
        .sum();
    if ticks > 0.0 {
        for s in CPU_STATES {
            if let Some(v) = summary
                .get(&format!("cpu_{s}_ticks"))
                .and_then(Value::as_f64)
            {
                summary.insert(format!("cpu_{s}_pct"), json!(100.0 * v / ticks));
            }
        }
    }
    for k in first.levels.keys() {
        let vals: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.levels.get(k).copied())
            .collect();
        let mean = vals.iter().sum::<f64>() / vals.len().max(1) as f64;
        let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        summary.insert(format!("{k}.mean"), json!(mean));
        summary.insert(format!("{k}.max"), json!(max));
        if let (Some(a), Some(b)) = (first.levels.get(k), last.levels.get(k)) {
            summary.insert(format!("{k}.delta"), json!(b - a));
        }
    }
    let series: Vec<Value> = samples
        .iter()
        .map(|s| {
            let mut m = Map::new();
            m.insert("t".into(), json!(s.t));
            for (k, v) in s.levels.iter().chain(&s.counters) {
                m.insert(k.clone(), json!(v));
            }
            Value::Object(m)
        })
        .collect();
    json!({
        "interval_ms": interval.as_millis() as u64,
        "samples": samples.len(),
        "duration_s": last.t - first.t,
        "summary": summary,
        "series": series,
    })
}

/// The series as CSV (a header line of names, then one line per sample: seconds since the
/// start, then each value; counters are cumulative as the kernel reports them), the telemetry
/// counterpart of fio's log files.
pub fn series_csv(t: &Value) -> String {
    let rows = t["series"].as_array().cloned().unwrap_or_default();
    let Some(first) = rows.first().and_then(Value::as_object) else {
        return String::new();
    };
    let keys: Vec<&String> = first.keys().filter(|k| *k != "t").collect();
    let mut out = String::from("t_s");
    for k in &keys {
        out.push(',');
        out.push_str(k);
    }
    out.push('\n');
    for r in &rows {
        out += &format!("{:.3}", r["t"].as_f64().unwrap_or(0.0));
        for k in &keys {
            out += &format!(
                ",{}",
                r[k.as_str()]
                    .as_f64()
                    .map_or(String::new(), |v| v.to_string())
            );
        }
        out.push('\n');
    }
    out
}

/// The short text block of normal output.
pub fn text_block(t: &Value) -> String {
    let s = &t["summary"];
    let g = |k: &str| s[k].as_f64().unwrap_or(0.0);
    let mut out = format!(
        "System telemetry ({} samples over {:.1}s):\n",
        t["samples"],
        t["duration_s"].as_f64().unwrap_or(0.0)
    );
    out += &format!(
        "  memory: Buffers={:.0}MiB (delta {:+.0}MiB) Cached={:.0}MiB (delta {:+.0}MiB) \
         Dirty max={:.0}MiB MemAvailable={:.0}MiB\n",
        g("Buffers_kb.mean") / 1024.0,
        g("Buffers_kb.delta") / 1024.0,
        g("Cached_kb.mean") / 1024.0,
        g("Cached_kb.delta") / 1024.0,
        g("Dirty_kb.max") / 1024.0,
        g("MemAvailable_kb.mean") / 1024.0
    );
    out += &format!(
        "  system: ctx={:.0} intr={:.0} cpu user={:.1}% sys={:.1}% iowait={:.1}% idle={:.1}%\n",
        g("ctxt"),
        g("intr"),
        g("cpu_user_pct"),
        g("cpu_system_pct"),
        g("cpu_iowait_pct"),
        g("cpu_idle_pct")
    );
    out += &format!(
        "  vm: pgpgin={:.0} pgpgout={:.0} pgfault={:.0} pgmajfault={:.0}\n",
        g("pgpgin"),
        g("pgpgout"),
        g("pgfault"),
        g("pgmajfault")
    );
    let mut disks: Vec<String> = s
        .as_object()
        .map(|m| {
            m.keys()
                .filter_map(|k| k.strip_prefix("disk.")?.split('.').next().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    disks.dedup();
    for d in disks {
        let f = |n: &str| g(&format!("disk.{d}.{n}"));
        out += &format!(
            "  disk {d}: reads={:.0} ({:.0}MiB) writes={:.0} ({:.0}MiB) busy={:.0}ms\n",
            f("read_ios"),
            f("read_sectors") / 2048.0,
            f("write_ios"),
            f("write_sectors") / 2048.0,
            f("io_ticks_ms")
        );
    }
    if s.get("psi_io_some_us").is_some() {
        out += &format!(
            "  pressure: io some={:.0}ms full={:.0}ms, memory some={:.0}ms, cpu some={:.0}ms\n",
            g("psi_io_some_us") / 1e3,
            g("psi_io_full_us") / 1e3,
            g("psi_memory_some_us") / 1e3,
            g("psi_cpu_some_us") / 1e3
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_has_deltas_means_and_cpu_shares() {
        let mk = |t: f64, buf: f64, ctxt: f64, user: f64, idle: f64| {
            let mut s = Sample {
                t,
                ..Sample::default()
            };
            s.levels.insert("Buffers_kb".into(), buf);
            s.counters.insert("ctxt".into(), ctxt);
            s.counters.insert("cpu_user_ticks".into(), user);
            s.counters.insert("cpu_idle_ticks".into(), idle);
            s
        };
        let v = summarise(
            &[
                mk(0.0, 100.0, 1000.0, 0.0, 0.0),
                mk(1.0, 300.0, 1500.0, 25.0, 75.0),
                mk(2.0, 200.0, 3000.0, 50.0, 150.0),
            ],
            Duration::from_secs(1),
        );
        let s = &v["summary"];
        assert_eq!(s["ctxt"], 2000.0);
        assert_eq!(s["Buffers_kb.mean"], 200.0);
        assert_eq!(s["Buffers_kb.max"], 300.0);
        assert_eq!(s["Buffers_kb.delta"], 100.0);
        assert_eq!(s["cpu_user_pct"], 25.0);
        assert_eq!(v["series"].as_array().unwrap().len(), 3);
        let csv = series_csv(&v);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "t_s,Buffers_kb,cpu_idle_ticks,cpu_user_ticks,ctxt"
        );
        assert_eq!(lines[2], "1.000,300,75,25,1500");
    }

    #[test]
    fn a_live_sample_reads_the_kernel_counters() {
        let s = sample(&[], 0.0);
        assert!(s.counters["ctxt"] > 0.0);
        assert!(s.levels["MemAvailable_kb"] > 0.0);
        assert!(s.counters.contains_key("pgfault"));
    }
}
