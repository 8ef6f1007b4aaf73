//! The charts a report holds, built from [`Inputs`]: values over time from logs, latency
//! percentile curves and histograms from json+ (several results overlaid), bars per job and
//! result or per test and variant of a comparison (with 95% CI error bars), and an iodepth x
//! numjobs heatmap when results sweep both. A chart is data only (`model`); `svg` draws it.
//!
//! The folder: `model` (what a chart is), this file (the charts of results and logs),
//! `compare` (the charts of a `fiox compare` document), `telemetry` (a run's telemetry
//! series) and `explain` (`--explain`'s phases stacked); the builders use the model, the model uses none of them.

mod compare;
mod explain;
mod model;
mod telemetry;

pub use model::{slug, Bar, Bars, Body, Chart, Heat, Section, Series, Stack};

use crate::axis::{Axis, Scale, Unit};
use crate::fiolog::LogKind;
use crate::input::Inputs;
use crate::result::{LatRes, ResultDoc};
pub use crate::timeline::Mark;
use crate::timeline::Timeline;
use fiox_experiment::sides;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Every chart the inputs allow, in page order.
pub fn build(inputs: &Inputs) -> Vec<Chart> {
    let mut charts = Vec::new();
    charts.extend(over_time(inputs));
    charts.extend(latency(&inputs.results));
    charts.extend(result_bars(&inputs.results));
    charts.extend(explain::chart(&inputs.results));
    for c in &inputs.comparisons {
        charts.extend(compare::charts(c));
    }
    charts.extend(heatmap(&inputs.results));
    let mut seen = BTreeMap::new();
    for c in &mut charts {
        // Ids become file names: keep them unique.
        let n = seen.entry(c.id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            c.id = format!("{}-{n}", c.id);
        }
    }
    charts
}

/// Values over time from logs and status reports, then the telemetry series. With one result
/// among the inputs, its logs are placed on the run's clock (see [`Timeline`]) with its group
/// starts and ramp ends marked; every over-time chart then shows the same time span.
fn over_time(inputs: &Inputs) -> Vec<Chart> {
    let timeline = match inputs.results.as_slice() {
        [one] => Some(Timeline::of(one)),
        _ => None,
    };
    let sources: std::collections::BTreeSet<&str> =
        inputs.logs.iter().map(|l| l.source.as_str()).collect();
    let mut by_kind: BTreeMap<LogKind, Vec<Series>> = BTreeMap::new();
    for l in &inputs.logs {
        let name = if sources.len() > 1 {
            format!("{}: {} {}", l.source, l.job, l.ddir)
        } else {
            format!("{} {}", l.job, l.ddir)
        };
        let scale = if l.kind == LogKind::Bw { 1024.0 } else { 1.0 };
        // Aggregate logs (--bandwidth-log) already count from the start of the run.
        let shift = timeline
            .as_ref()
            .and_then(|t| t.log_zero(&l.job))
            .unwrap_or(0.0);
        by_kind.entry(l.kind).or_default().push(Series {
            name,
            points: l
                .points
                .iter()
                .map(|(t, v)| (t + shift, v * scale))
                .collect(),
        });
    }
    // Telemetry alone (several runs, no logs) also counts from each run's start.
    let x = || match timeline.is_some() || inputs.logs.is_empty() {
        true => Axis::new("Time since run start", Unit::Seconds, Scale::Linear),
        false => Axis::new("Time since job start", Unit::Seconds, Scale::Linear),
    };
    let mut charts: Vec<Chart> = by_kind
        .into_iter()
        .map(|(kind, series)| {
            let (title, y) = log_chart(kind);
            let id = format!("time-{}", kind.suffix());
            Chart::new(
                id,
                title.into(),
                Section::OverTime,
                x(),
                y,
                Body::Lines(series),
            )
        })
        .collect();
    charts.extend(telemetry::charts(&inputs.results, x()));
    let marks = timeline.map(|t| t.marks).unwrap_or_default();
    align(&mut charts, &marks);
    charts
}

/// Title and y axis of a log kind's chart.
fn log_chart(kind: LogKind) -> (&'static str, Axis) {
    match kind {
        LogKind::Iops => (
            "IOPS over time",
            Axis::new("IOPS", Unit::Iops, Scale::Linear),
        ),
        LogKind::Bw => (
            "Bandwidth over time",
            Axis::new("Bandwidth", Unit::BytesPerSec, Scale::Linear),
        ),
        // Log scale: one slow I/O would flatten every other line on a linear axis.
        LogKind::Lat => ("Total latency over time", lat_axis(Scale::Log)),
        LogKind::Clat => ("Completion latency over time", lat_axis(Scale::Log)),
        LogKind::Slat => ("Submission latency over time", lat_axis(Scale::Log)),
    }
}

/// Give the over-time `charts` the same marks and one x span (their data's and the marks'),
/// so a moment is at the same place in each.
fn align(charts: &mut [Chart], marks: &[Mark]) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for c in charts.iter() {
        if let Body::Lines(series) = &c.body {
            for (x, _) in series.iter().flat_map(|s| &s.points) {
                lo = lo.min(*x);
                hi = hi.max(*x);
            }
        }
    }
    for m in marks {
        lo = lo.min(m.x);
        hi = hi.max(m.x);
    }
    let range = (lo.is_finite() && hi.is_finite()).then_some((lo, hi));
    for c in charts.iter_mut() {
        c.marks = marks.to_vec();
        c.x_range = range;
    }
}

fn lat_axis(scale: Scale) -> Axis {
    Axis::new("Latency", Unit::Nanos, scale)
}

fn lat_name(kind: &str) -> &'static str {
    match kind {
        "clat" => "Completion latency",
        "slat" => "Submission latency",
        _ => "Total latency",
    }
}

/// Percentile curves (and histograms where json+ bins exist) per latency kind and direction.
fn latency(results: &[ResultDoc]) -> Vec<Chart> {
    // (kind, ddir) -> [(series name, latency)].
    let mut groups: BTreeMap<(&str, &str), Vec<(String, &LatRes)>> = BTreeMap::new();
    for r in results {
        for j in &r.jobs {
            for d in &j.dirs {
                for l in &d.lats {
                    let name = if results.len() > 1 {
                        format!("{}: {}", r.label, j.name)
                    } else {
                        j.name.clone()
                    };
                    groups.entry((l.kind, d.ddir)).or_default().push((name, l));
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((kind, ddir), lats) in groups {
        let curves: Vec<Series> = lats
            .iter()
            .map(|(n, l)| Series {
                name: n.clone(),
                points: percentile_curve(l),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if !curves.is_empty() {
            out.push(Chart {
                id: format!("{kind}-{ddir}-percentiles"),
                title: format!("{} percentiles ({ddir})", lat_name(kind)),
                section: Section::Latency,
                x: Axis::new("Percentile", Unit::Percent, Scale::Nines),
                y: lat_axis(Scale::Log),
                body: Body::Lines(curves),
                marks: Vec::new(),
                x_range: None,
            });
        }
        let hists: Vec<Series> = lats
            .iter()
            .filter(|(_, l)| !l.bins.is_empty())
            .map(|(n, l)| Series {
                name: n.clone(),
                points: histogram(&l.bins),
            })
            .collect();
        if !hists.is_empty() {
            out.push(Chart {
                id: format!("{kind}-{ddir}-histogram"),
                title: format!("{} histogram ({ddir})", lat_name(kind)),
                section: Section::Latency,
                x: lat_axis(Scale::Log),
                y: Axis::new("Share of I/Os", Unit::Percent, Scale::Linear),
                body: Body::Lines(hists),
                marks: Vec::new(),
                x_range: None,
            });
        }
    }
    out
}

/// (percentile, ns) points: from json+ bins when present (every bucket), else fio's list.
pub fn percentile_curve(l: &LatRes) -> Vec<(f64, f64)> {
    let total: u64 = l.bins.iter().map(|b| b.1).sum();
    // No histogram (plain json), or one of zero counts (hand-made input): fio's list.
    if total == 0 {
        return l
            .percentiles
            .iter()
            .filter(|(p, v)| *p < 100.0 && *v > 0.0)
            .copied()
            .collect();
    }
    let mut cum = 0u64;
    let mut pts = vec![(0.0, l.bins[0].0.max(1.0))];
    for (ns, c) in &l.bins {
        // The share of I/Os at or below the previous bucket: this bucket's value is reached
        // right after it, which gives the staircase of an HdrHistogram percentile plot.
        let before = 100.0 * cum as f64 / total as f64;
        cum += c;
        let after = 100.0 * cum as f64 / total as f64;
        pts.push((before, ns.max(1.0)));
        if cum < total {
            pts.push((after, ns.max(1.0)));
        }
    }
    pts
}

/// Share of I/Os (%) per bucket of 10 per decade, as a step line over latency.
pub fn histogram(bins: &[(f64, u64)]) -> Vec<(f64, f64)> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut buckets: BTreeMap<i64, u64> = BTreeMap::new();
    for (ns, c) in bins {
        *buckets
            .entry((ns.max(1.0).log10() * 10.0).floor() as i64)
            .or_default() += c;
    }
    let mut pts = Vec::new();
    for (b, c) in buckets {
        let share = 100.0 * c as f64 / total as f64;
        let (lo, hi) = (
            10f64.powf(b as f64 / 10.0),
            10f64.powf((b + 1) as f64 / 10.0),
        );
        pts.extend([(lo, 0.0), (lo, share), (hi, share), (hi, 0.0)]);
    }
    pts
}

/// IOPS and mean latency per job and direction, one bar per result; the runs of one
/// experiment variant make one bar, their mean with a 95% confidence interval.
fn result_bars(results: &[ResultDoc]) -> Vec<Chart> {
    // A bar per variant, in order of appearance. Runs outside an experiment are grouped by
    // their directory as `fiox compare` groups them (`plot before after`: two bars), unless
    // they all share one directory: then each run is its own.
    let loose: Vec<PathBuf> = results
        .iter()
        .filter(|r| r.variant.is_none())
        .map(|r| r.path.clone())
        .collect();
    let mut side_of =
        (!sides::share_one_directory(&loose)).then(|| sides::side_names(&loose, false).into_iter());
    let mut variants: Vec<String> = Vec::new();
    let column: Vec<usize> = results
        .iter()
        .map(|r| {
            let side = match (&r.variant, side_of.as_mut()) {
                (None, Some(names)) => names.next(),
                _ => None,
            };
            let v = r
                .variant
                .clone()
                .or(side)
                .unwrap_or_else(|| r.label.clone());
            variants.iter().position(|x| *x == v).unwrap_or_else(|| {
                variants.push(v);
                variants.len() - 1
            })
        })
        .collect();
    let mut groups: Vec<String> = Vec::new();
    // (group, result) -> total IOPS; -> (latency sum, count).
    let mut iops: BTreeMap<(String, usize), f64> = BTreeMap::new();
    let mut lat: BTreeMap<(String, usize), (f64, u32)> = BTreeMap::new();
    for (ri, r) in results.iter().enumerate() {
        for j in &r.jobs {
            for d in &j.dirs {
                let g = format!("{} {}", j.name, d.ddir);
                if !groups.contains(&g) {
                    groups.push(g.clone());
                }
                // numjobs clones share a name: their IOPS add up, latencies average.
                *iops.entry((g.clone(), ri)).or_default() += d.iops;
                if let Some(l) = d.lats.iter().find(|l| l.kind == "lat").or(d.lats.first()) {
                    let e = lat.entry((g, ri)).or_default();
                    e.0 += l.mean_ns;
                    e.1 += 1;
                }
            }
        }
    }
    if groups.is_empty() {
        return Vec::new();
    }
    let lat: BTreeMap<(String, usize), f64> = lat
        .into_iter()
        .map(|(k, (sum, n))| (k, sum / n as f64))
        .collect();
    let repeated = column
        .iter()
        .any(|c| column.iter().filter(|x| *x == c).count() > 1);
    let title = |t: &str| match repeated {
        true => format!("{t} (mean and 95% CI of each variant's runs)"),
        false => t.to_string(),
    };
    let mut out = vec![Chart::new(
        "iops-per-job".into(),
        title("IOPS per job"),
        Section::Comparison,
        Axis::new("Job", Unit::Plain, Scale::Linear),
        Axis::new("IOPS", Unit::Iops, Scale::Linear),
        Body::Bars(variant_bars(&groups, &variants, &column, &iops)),
    )];
    if !lat.is_empty() {
        out.push(Chart::new(
            "mean-latency-per-job".into(),
            title("Mean latency per job"),
            Section::Comparison,
            Axis::new("Job", Unit::Plain, Scale::Linear),
            lat_axis(Scale::Linear),
            Body::Bars(variant_bars(&groups, &variants, &column, &lat)),
        ));
    }
    out
}

/// Bars of `values[(group, result)]`, one per group and variant (`column[result]`): the
/// value of a single run, or the mean of several with its 95% CI (Student's t, as
/// `fiox compare` computes it).
fn variant_bars(
    groups: &[String],
    variants: &[String],
    column: &[usize],
    values: &BTreeMap<(String, usize), f64>,
) -> Bars {
    let bar = |g: &String, v: usize| {
        let xs: Vec<f64> = (0..column.len())
            .filter(|ri| column[*ri] == v)
            .filter_map(|ri| values.get(&(g.clone(), ri)).copied())
            .collect();
        let s = fiox_experiment::stats::summary(&xs)?;
        Some(Bar {
            value: s.mean,
            ci: s.ci.filter(|(lo, hi)| lo.is_finite() && hi.is_finite()),
            note: if s.n > 1 {
                format!("n={}", s.n)
            } else {
                String::new()
            },
        })
    };
    Bars {
        groups: groups.to_vec(),
        variants: variants.to_vec(),
        values: groups
            .iter()
            .map(|g| (0..variants.len()).map(|v| bar(g, v)).collect())
            .collect(),
    }
}

/// Total IOPS by iodepth (x) and numjobs (y), when the results vary both or one of them over
/// at least three settings.
fn heatmap(results: &[ResultDoc]) -> Option<Chart> {
    // (iodepth, numjobs) -> per (result, job name) total IOPS.
    let mut cells: BTreeMap<(u64, u64), BTreeMap<(usize, String), f64>> = BTreeMap::new();
    for (ri, r) in results.iter().enumerate() {
        for j in &r.jobs {
            let get = |k: &str| {
                r.option(j, k)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(1)
            };
            let iops: f64 = j.dirs.iter().map(|d| d.iops).sum();
            *cells
                .entry((get("iodepth"), get("numjobs")))
                .or_default()
                .entry((ri, j.name.clone()))
                .or_default() += iops;
        }
    }
    let xs: std::collections::BTreeSet<u64> = cells.keys().map(|k| k.0).collect();
    let ys: std::collections::BTreeSet<u64> = cells.keys().map(|k| k.1).collect();
    if cells.len() < 3 || xs.len() < 2 && ys.len() < 2 {
        return None;
    }
    let grid = ys
        .iter()
        .map(|y| {
            xs.iter()
                .map(|x| {
                    let c = cells.get(&(*x, *y))?;
                    Some(c.values().sum::<f64>() / c.len() as f64)
                })
                .collect()
        })
        .collect();
    Some(Chart {
        id: "iodepth-numjobs-iops".into(),
        title: "IOPS by iodepth and numjobs".into(),
        section: Section::Matrix,
        x: Axis::new("iodepth", Unit::Plain, Scale::Linear),
        y: Axis::new("numjobs", Unit::Plain, Scale::Linear),
        body: Body::Heat(Heat {
            xs: xs.iter().map(u64::to_string).collect(),
            ys: ys.iter().map(u64::to_string).collect(),
            cells: grid,
        }),
        marks: Vec::new(),
        x_range: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lat(bins: Vec<(f64, u64)>) -> LatRes {
        LatRes {
            kind: "clat",
            mean_ns: 0.0,
            percentiles: vec![(50.0, 10.0), (100.0, 20.0)],
            bins,
        }
    }

    #[test]
    fn curve_from_bins_reaches_the_last_bucket() {
        let c = percentile_curve(&lat(vec![(1000.0, 90), (5000.0, 9), (20000.0, 1)]));
        assert_eq!(c.first(), Some(&(0.0, 1000.0)));
        assert!(c.contains(&(90.0, 5000.0)), "{c:?}");
        assert!(c.contains(&(99.0, 20000.0)), "{c:?}");
        assert!(c.iter().all(|(p, _)| *p < 100.0), "{c:?}");
        // Without bins, fio's list minus the unplottable 100th percentile.
        assert_eq!(percentile_curve(&lat(vec![])), vec![(50.0, 10.0)]);
        assert_eq!(percentile_curve(&lat(vec![(5.0, 0)])), vec![(50.0, 10.0)]);
    }

    #[test]
    fn histogram_shares_add_to_100() {
        let h = histogram(&[(1000.0, 3), (1010.0, 1), (1e6, 4)]);
        let total: f64 = h.chunks(4).map(|c| c[1].1).sum();
        assert!((total - 100.0).abs() < 1e-9, "{h:?}");
        assert_eq!(h.chunks(4).count(), 2);
    }

    #[test]
    fn logs_of_one_result_sit_on_the_run_clock_with_group_and_ramp_marks() {
        use crate::fiolog::LogSeries;
        let doc = serde_json::json!({"jobs": [
            {"jobname": "a", "groupid": 0, "job_runtime": 2000,
             "job options": {"ramp_time": "1"}},
            {"jobname": "b", "groupid": 1, "job_runtime": 2000}
        ]});
        let mut inputs = Inputs::default();
        inputs
            .add_json_value(&doc, "r", std::path::Path::new("r.json"))
            .unwrap();
        let log = |job: &str| LogSeries {
            source: "d".into(),
            job: job.into(),
            kind: LogKind::Bw,
            ddir: "read",
            points: vec![(0.5, 1.0), (1.5, 1.0)],
        };
        inputs.logs = vec![log("a.1"), log("b.2"), log("agg-read")];
        let charts = build(&inputs);
        let bw = charts.iter().find(|c| c.id == "time-bw").unwrap();
        let Body::Lines(s) = &bw.body else {
            panic!("lines")
        };
        // a: after its 1 s ramp; b: after group 0's 3 s; the aggregate log as it is.
        assert_eq!(s[0].points[0].0, 1.5);
        assert_eq!(s[1].points[0].0, 3.5);
        assert_eq!(s[2].points[0].0, 0.5);
        let labels: Vec<&str> = bw.marks.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(labels, ["group 0: a", "ramp_time ends", "group 1: b"]);
        assert_eq!(bw.x_range, Some((0.0, 4.5)));
        assert_eq!(bw.x.quantity, "Time since run start");
        // Two results: each log keeps its own job's clock, nothing is marked.
        inputs
            .add_json_value(&doc, "r2", std::path::Path::new("r2.json"))
            .unwrap();
        let charts = build(&inputs);
        let bw = charts.iter().find(|c| c.id == "time-bw").unwrap();
        assert!(bw.marks.is_empty());
        assert_eq!(bw.x.quantity, "Time since job start");
    }

    #[test]
    fn runs_of_a_variant_make_one_bar_with_a_confidence_interval() {
        let mut inputs = Inputs::default();
        for (label, variant, iops) in [("a1", "a", 10.0), ("a2", "a", 12.0), ("b1", "b", 20.0)] {
            let doc = serde_json::json!({"jobs": [{"jobname": "rr",
                "read": {"total_ios": 1, "io_bytes": 1, "iops": iops}}]});
            inputs
                .add_json_value(&doc, label, std::path::Path::new("r.json"))
                .unwrap();
            inputs.results.last_mut().unwrap().variant = Some(variant.into());
        }
        let charts = build(&inputs);
        let c = charts.iter().find(|c| c.id == "iops-per-job").unwrap();
        assert!(c.title.contains("95% CI"), "{}", c.title);
        let Body::Bars(b) = &c.body else {
            panic!("bars")
        };
        assert_eq!(b.variants, ["a", "b"]);
        let a = b.values[0][0].as_ref().unwrap();
        assert_eq!((a.value, a.note.as_str()), (11.0, "n=2"));
        // t(0.975, 1) = 12.706, sd = sqrt(2), n = 2: half-width 12.706.
        let (lo, hi) = a.ci.unwrap();
        assert!((hi - 11.0 - 12.706).abs() < 0.01 && (11.0 - lo - 12.706).abs() < 0.01);
        let bb = b.values[0][1].as_ref().unwrap();
        assert_eq!((bb.value, bb.ci), (20.0, None));
    }

    /// `fiox plot A B`: runs are grouped by their directory as `fiox compare` groups them,
    /// not by their file names (A/r0 and B/r0 are different sides).
    #[test]
    fn runs_in_two_directories_make_two_bars() {
        let mut inputs = Inputs::default();
        for (path, iops) in [
            ("A/r0.json", 10.0),
            ("A/r1.json", 12.0),
            ("B/r0.json", 20.0),
        ] {
            let doc = serde_json::json!({"jobs": [{"jobname": "rr",
                "read": {"total_ios": 1, "io_bytes": 1, "iops": iops}}]});
            let label = path.rsplit('/').next().unwrap().trim_end_matches(".json");
            inputs
                .add_json_value(&doc, label, std::path::Path::new(path))
                .unwrap();
        }
        let charts = build(&inputs);
        let c = charts.iter().find(|c| c.id == "iops-per-job").unwrap();
        let Body::Bars(b) = &c.body else {
            panic!("bars")
        };
        assert_eq!(b.variants, ["A", "B"]);
        assert_eq!(b.values[0][0].as_ref().unwrap().value, 11.0);
        assert_eq!(b.values[0][1].as_ref().unwrap().value, 20.0);
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("Read IOPS (base vs dio)"), "read-iops-base-vs-dio");
    }
}
