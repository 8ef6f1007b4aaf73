//! Trend charts: a metric over the recorded runs, drawn by fiox-plot's SVG code
//! ([`fiox_plot::svg::render`]), one line per series (job, metric, host, targets, experiment,
//! variant), with the change points [`regress`] finds marked as labelled dashed lines at the
//! first run after each change. The x axis is the run's rank among the charted runs (oldest
//! first), so every series shares it and runs far apart in time stay readable.

use crate::query::Point;
use crate::regress::{self, Found, SeriesKey};
use fiox_plot::axis::{Axis, Scale, Unit};
use fiox_plot::chart::{slug, Body, Chart, Mark, Section, Series};

/// A chart of `points` (one metric's points, time order) and the change points marked on it.
pub struct TrendChart {
    pub chart: Chart,
    pub changes: Vec<Found>,
}

/// The y axis of `metric` and the factor from stored values to the axis's unit (MiB/s to
/// bytes/s, microseconds to nanoseconds: the axis picks a readable unit itself).
fn y_axis(metric: &str) -> (Axis, f64) {
    let base = metric.rsplit('.').next().unwrap_or(metric);
    let dir = metric.split_once('.').map_or("", |(d, _)| d);
    let named = |q: &str| {
        if dir.is_empty() {
            q.to_string()
        } else {
            format!("{dir} {q}")
        }
    };
    match base {
        "iops" => (Axis::new(&named("IOPS"), Unit::Iops, Scale::Linear), 1.0),
        "bw_mib" => (
            Axis::new(&named("Bandwidth"), Unit::BytesPerSec, Scale::Linear),
            1024.0 * 1024.0,
        ),
        b if b.starts_with("lat_") && b.ends_with("_us") => {
            let which = b.trim_start_matches("lat_").trim_end_matches("_us");
            let q = named(&format!("Latency {which}"));
            (Axis::new(&q, Unit::Nanos, Scale::Linear), 1000.0)
        }
        _ => (Axis::new(metric, Unit::Plain, Scale::Linear), 1.0),
    }
}

/// A series' name in the legend: its job and metric, then what tells it from the others.
pub fn series_name(k: &SeriesKey) -> String {
    let mut s = format!("{} {}", k.job, k.metric);
    if let Some(h) = &k.host {
        s.push_str(&format!(" on {h}"));
    }
    if !k.targets.is_empty() {
        s.push_str(&format!(" ({})", k.targets.replace('\n', ", ")));
    }
    for v in [&k.experiment, &k.variant].into_iter().flatten() {
        s.push_str(&format!(" [{v}]"));
    }
    s
}

/// A change point's label: the change of the median and the context it came with.
fn mark_label(c: &Found) -> String {
    let first = c.after.first();
    let kernel = first.and_then(|p| p.kernel.as_deref()).unwrap_or("-");
    let commit = first.and_then(|p| p.commit.as_deref()).unwrap_or("-");
    format!(
        "{:+.1}% {} (kernel {kernel}, commit {commit})",
        c.split.change * 100.0,
        c.key.job
    )
}

/// The chart of `points` titled `title`, its change points judged with `o`; `id` becomes the
/// SVG's id (made file-name safe).
pub fn trend(id: &str, title: &str, points: &[Point], o: &regress::Options) -> TrendChart {
    let mut ids: Vec<i64> = points.iter().map(|p| p.id).collect();
    ids.dedup();
    let rank = |id: i64| {
        ids.iter()
            .position(|x| *x == id)
            .map_or(0.0, |i| i as f64 + 1.0)
    };
    let metric = points.first().map_or("", |p| p.metric.as_str());
    let (y, factor) = y_axis(metric);
    let series: Vec<Series> = regress::series(points.to_vec())
        .into_iter()
        .map(|(k, pts)| Series {
            name: series_name(&k),
            points: pts.iter().map(|p| (rank(p.id), p.value * factor)).collect(),
        })
        .collect();
    let changes = regress::detect(points.to_vec(), o);
    let x = Axis::new("Run (oldest first)", Unit::Plain, Scale::Linear);
    let mut chart = Chart::new(
        format!("trend-{}", slug(id)),
        title.to_string(),
        Section::OverTime,
        x,
        y,
        Body::Lines(series),
    );
    chart.marks = changes
        .iter()
        .filter_map(|c| {
            let first = c.after.first()?;
            Some(Mark {
                x: rank(first.id),
                label: mark_label(c),
            })
        })
        .collect();
    let n = ids.len() as f64;
    chart.x_range = Some((1.0f64.min(n), n.max(2.0)));
    TrendChart { chart, changes }
}

/// The chart as a standalone SVG document.
pub fn svg(c: &Chart) -> String {
    fiox_plot::svg::render(c, &fiox_plot::svg::LIGHT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: i64, kernel: &str, value: f64) -> Point {
        Point {
            id,
            run_at: id * 60,
            host: Some("h".into()),
            kernel: Some(kernel.into()),
            commit: None,
            targets: "/dev/x".into(),
            experiment: None,
            variant: None,
            job: "j".into(),
            metric: "read.iops".into(),
            value,
        }
    }

    #[test]
    fn a_step_is_marked_at_the_first_run_after_it() {
        let pts: Vec<Point> = (1..=20)
            .map(|i| {
                let k = if i <= 10 { "6.1" } else { "6.2" };
                let v = if i <= 10 { 1000.0 } else { 800.0 } + (i % 3) as f64;
                point(i, k, v)
            })
            .collect();
        let t = trend("read.iops", "read.iops", &pts, &regress::Options::default());
        assert_eq!(t.changes.len(), 1);
        assert_eq!(t.chart.marks.len(), 1);
        assert_eq!(t.chart.marks[0].x, 11.0);
        assert!(
            t.chart.marks[0].label.starts_with("-20."),
            "{}",
            t.chart.marks[0].label
        );
        let s = svg(&t.chart);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(
            s.contains("class=\"mark\"") && s.contains("kernel 6.2"),
            "{s}"
        );
    }

    #[test]
    fn latency_and_bandwidth_axes_carry_units() {
        assert_eq!(y_axis("read.lat_p99_us").1, 1000.0);
        assert_eq!(y_axis("write.bw_mib").0.unit, Unit::BytesPerSec);
        assert_eq!(y_axis("ctx").0.unit, Unit::Plain);
    }
}
