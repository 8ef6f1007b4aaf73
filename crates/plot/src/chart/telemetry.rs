//! Charts of the system telemetry a result carries (`fiox.telemetry.series`, recorded by
//! `fiox experiment` runs and `--telemetry`): CPU time by state, context switches and
//! interrupts, the page cache, and disk throughput per device, one chart each, on the same
//! time axis as the I/O charts (samples count from the start of the run). Counters are
//! cumulative, so a point is the change since the previous sample over the time between them.
//! With one result every state, level and device direction has its own line; with several,
//! one line per result (CPU busy, context switches, cached, disk total) keeps charts readable.

use super::model::{Body, Chart, Section, Series};
use crate::axis::{Axis, Scale, Unit};
use crate::result::ResultDoc;
use std::collections::BTreeMap;

type Samples = [(f64, BTreeMap<String, f64>)];

/// The CPU states summed into each line, by line name.
const CPU_LINES: [(&str, &[&str]); 3] = [
    ("user", &["user", "nice"]),
    ("system", &["system", "irq", "softirq", "steal"]),
    ("iowait", &["iowait"]),
];
const CPU_ALL: [&str; 8] = [
    "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
];

/// One chart per telemetry kind the results hold; `x` is the I/O charts' time axis.
pub fn charts(results: &[ResultDoc], x: Axis) -> Vec<Chart> {
    let with: Vec<&ResultDoc> = results.iter().filter(|r| r.telemetry.len() >= 2).collect();
    if with.is_empty() {
        return Vec::new();
    }
    let detail = with.len() == 1;
    let kinds: [(&str, &str, Axis, LinesOf); 4] = [
        (
            "cpu",
            "CPU time by state",
            Axis::new("CPU time", Unit::Percent, Scale::Linear),
            cpu,
        ),
        (
            "ctx",
            "Context switches and interrupts",
            Axis::new("Per second", Unit::Plain, Scale::Linear),
            ctx,
        ),
        (
            "page-cache",
            "Page cache",
            Axis::new("Memory (MiB)", Unit::Plain, Scale::Linear),
            page_cache,
        ),
        (
            "disk",
            "Disk throughput",
            Axis::new("Throughput", Unit::BytesPerSec, Scale::Linear),
            disk,
        ),
    ];
    let mut out = Vec::new();
    for (id, title, y, lines_of) in kinds {
        let mut series = Vec::new();
        for r in &with {
            for mut s in lines_of(&r.telemetry, detail) {
                if !detail {
                    s.name = format!("{}: {}", r.label, s.name);
                }
                series.push(s);
            }
        }
        series.retain(|s| !s.points.is_empty());
        if !series.is_empty() {
            let id = format!("telemetry-{id}");
            let body = Body::Lines(series);
            out.push(Chart::new(
                id,
                title.into(),
                Section::OverTime,
                x.clone(),
                y,
                body,
            ));
        }
    }
    out
}

/// The lines of one chart from one result's samples; `detail`: every line, else one.
type LinesOf = fn(&Samples, bool) -> Vec<Series>;

/// Sum of `keys` in a sample (None when one is missing).
fn sum(v: &BTreeMap<String, f64>, keys: &[String]) -> Option<f64> {
    keys.iter().map(|k| v.get(k)).sum()
}

/// Per interval between samples: (end time, change of `num` keys, change of `den` keys).
fn deltas(s: &Samples, num: &[String], den: Option<&[String]>) -> Vec<(f64, f64, f64)> {
    s.windows(2)
        .filter_map(|w| {
            let (a, b) = (&w[0], &w[1]);
            let dn = sum(&b.1, num)? - sum(&a.1, num)?;
            let dd = match den {
                Some(d) => sum(&b.1, d)? - sum(&a.1, d)?,
                None => b.0 - a.0,
            };
            (dd > 0.0 && dn >= 0.0).then_some((b.0, dn, dd))
        })
        .collect()
}

fn keys(names: &[&str], fmt: impl Fn(&str) -> String) -> Vec<String> {
    names.iter().map(|n| fmt(n)).collect()
}

/// Change per second of the `num` counters.
fn rate(s: &Samples, name: &str, num: &[String], scale: f64) -> Series {
    Series {
        name: name.into(),
        points: deltas(s, num, None)
            .into_iter()
            .map(|(t, dn, dt)| (t, scale * dn / dt))
            .collect(),
    }
}

/// Share (%) of all CPU ticks spent in `states`.
fn cpu_share(s: &Samples, name: &str, states: &[&str]) -> Series {
    let ticks = |st: &[&str]| keys(st, |n| format!("cpu_{n}_ticks"));
    Series {
        name: name.into(),
        points: deltas(s, &ticks(states), Some(&ticks(&CPU_ALL)))
            .into_iter()
            .map(|(t, dn, dd)| (t, 100.0 * dn / dd))
            .collect(),
    }
}

fn cpu(s: &Samples, detail: bool) -> Vec<Series> {
    if detail {
        return CPU_LINES
            .iter()
            .map(|(name, states)| cpu_share(s, name, states))
            .collect();
    }
    let busy: Vec<&str> = CPU_ALL
        .into_iter()
        .filter(|st| !matches!(*st, "idle" | "iowait"))
        .collect();
    vec![cpu_share(s, "busy", &busy)]
}

fn ctx(s: &Samples, detail: bool) -> Vec<Series> {
    let mut out = vec![rate(s, "context switches", &["ctxt".to_string()], 1.0)];
    if detail {
        out.push(rate(s, "interrupts", &["intr".to_string()], 1.0));
    }
    out
}

fn page_cache(s: &Samples, detail: bool) -> Vec<Series> {
    let names: &[&str] = if detail {
        &["Cached", "Dirty", "Writeback"]
    } else {
        &["Cached"]
    };
    names
        .iter()
        .map(|n| Series {
            name: n.to_lowercase(),
            points: s
                .iter()
                .filter_map(|(t, v)| Some((*t, v.get(&format!("{n}_kb"))? / 1024.0)))
                .collect(),
        })
        .collect()
}

fn disk(s: &Samples, detail: bool) -> Vec<Series> {
    // Device names from `disk.DEV.read_sectors`; sectors are 512 bytes in /proc/diskstats.
    let mut devs: Vec<String> = s
        .iter()
        .flat_map(|(_, v)| v.keys())
        .filter_map(|k| k.strip_prefix("disk.")?.strip_suffix(".read_sectors"))
        .map(String::from)
        .collect();
    devs.sort();
    devs.dedup();
    let key = |d: &str, dir: &str| format!("disk.{d}.{dir}_sectors");
    if !detail {
        let all: Vec<String> = devs
            .iter()
            .flat_map(|d| [key(d, "read"), key(d, "write")])
            .collect();
        return vec![rate(s, "disk read+write", &all, 512.0)];
    }
    devs.iter()
        .flat_map(|d| {
            ["read", "write"].map(|dir| rate(s, &format!("{d} {dir}"), &[key(d, dir)], 512.0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn doc(label: &str) -> ResultDoc {
        let v = json!({"jobs": [], "fiox": {"telemetry": {"series": [
            {"t": 0.0, "cpu_user_ticks": 0, "cpu_nice_ticks": 0, "cpu_system_ticks": 0,
             "cpu_idle_ticks": 0, "cpu_iowait_ticks": 0, "cpu_irq_ticks": 0,
             "cpu_softirq_ticks": 0, "cpu_steal_ticks": 0, "ctxt": 100, "intr": 0,
             "Cached_kb": 1024, "Dirty_kb": 0, "Writeback_kb": 0,
             "disk.loop0.read_sectors": 0, "disk.loop0.write_sectors": 0},
            {"t": 0.5, "cpu_user_ticks": 25, "cpu_nice_ticks": 0, "cpu_system_ticks": 25,
             "cpu_idle_ticks": 40, "cpu_iowait_ticks": 10, "cpu_irq_ticks": 0,
             "cpu_softirq_ticks": 0, "cpu_steal_ticks": 0, "ctxt": 600, "intr": 50,
             "Cached_kb": 3072, "Dirty_kb": 512, "Writeback_kb": 0,
             "disk.loop0.read_sectors": 2048, "disk.loop0.write_sectors": 0}
        ]}}});
        ResultDoc::from_json(&v, label, Path::new("r.json")).unwrap()
    }

    fn x() -> Axis {
        Axis::new("Time", Unit::Seconds, Scale::Linear)
    }

    fn lines(c: &Chart) -> Vec<(String, Vec<(f64, f64)>)> {
        match &c.body {
            Body::Lines(s) => s
                .iter()
                .map(|s| (s.name.clone(), s.points.clone()))
                .collect(),
            _ => panic!("not lines"),
        }
    }

    #[test]
    fn counters_become_rates_and_shares_and_levels_stay_levels() {
        let cs = charts(&[doc("a")], x());
        let ids: Vec<&str> = cs.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "telemetry-cpu",
                "telemetry-ctx",
                "telemetry-page-cache",
                "telemetry-disk"
            ]
        );
        let cpu = lines(&cs[0]);
        assert_eq!(cpu[0], ("user".into(), vec![(0.5, 25.0)]));
        assert_eq!(cpu[2], ("iowait".into(), vec![(0.5, 10.0)]));
        assert_eq!(lines(&cs[1])[0].1, vec![(0.5, 1000.0)]);
        assert_eq!(lines(&cs[2])[0].1, vec![(0.0, 1.0), (0.5, 3.0)]);
        assert_eq!(
            lines(&cs[3])[0],
            ("loop0 read".into(), vec![(0.5, 2048.0 * 1024.0)])
        );
    }

    #[test]
    fn several_results_get_one_line_each() {
        let cs = charts(&[doc("a"), doc("b")], x());
        let cpu = lines(&cs[0]);
        assert_eq!(cpu.len(), 2);
        assert_eq!(cpu[1], ("b: busy".into(), vec![(0.5, 50.0)]));
        assert!(charts(&[], x()).is_empty());
    }
}
