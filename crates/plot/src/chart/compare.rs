//! Bars of a comparison: one chart per metric (IOPS, bandwidth, mean and p99 latency when the
//! document has them, else every metric), a group per job (test), a bar per side (variant)
//! with its 95% confidence interval as an error bar, and the relative change against the
//! first side above each other bar, starred when the comparison found it significant.

use super::model::{slug, Bar, Bars, Body, Chart, Section};
use crate::axis::{Axis, Scale, Unit};
use crate::compare::Comparison;
use std::collections::BTreeMap;

/// Metric-name endings shown when present (the ones `fiox compare` tables show).
const PREFERRED: [&str; 4] = ["iops", "bw_mib", "lat_mean_us", "lat_p99_us"];

/// The charts of one comparison.
pub fn charts(c: &Comparison) -> Vec<Chart> {
    let mut by_metric: BTreeMap<&str, Vec<&crate::compare::CompareRow>> = BTreeMap::new();
    for r in &c.rows {
        by_metric.entry(r.metric.as_str()).or_default().push(r);
    }
    let preferred = |m: &str| PREFERRED.iter().any(|p| m.ends_with(p));
    let any_preferred = by_metric.keys().any(|m| preferred(m));
    by_metric
        .into_iter()
        .filter(|(m, _)| !any_preferred || preferred(m))
        .map(|(metric, rows)| {
            let (unit, scale) = unit_of(metric);
            let values = rows
                .iter()
                .map(|r| {
                    (0..c.sides.len())
                        .map(|s| {
                            let (mean, ci) = r.values.get(s).copied().flatten()?;
                            let note = match s.checked_sub(1).and_then(|i| r.changes.get(i)) {
                                Some(Some((rel, sig))) => {
                                    format!("{:+.1}%{}", rel * 100.0, if *sig { "*" } else { "" })
                                }
                                _ => String::new(),
                            };
                            Some(Bar {
                                value: mean * scale,
                                ci: ci.map(|(lo, hi)| (lo * scale, hi * scale)),
                                note,
                            })
                        })
                        .collect()
                })
                .collect();
            Chart {
                id: slug(&format!("compare-{}-{metric}", c.label)),
                title: format!("{metric}: {}", c.sides.join(" vs ")),
                section: Section::Comparison,
                x: Axis::new("Test", Unit::Plain, Scale::Linear),
                y: Axis::new(&quantity(metric), unit, Scale::Linear),
                body: Body::Bars(Bars {
                    groups: rows.iter().map(|r| r.job.clone()).collect(),
                    variants: c.sides.clone(),
                    values,
                }),
                marks: Vec::new(),
                x_range: None,
            }
        })
        .collect()
}

/// The unit a metric's name implies and the factor to the unit the axis stores.
fn unit_of(metric: &str) -> (Unit, f64) {
    if metric.ends_with("iops") {
        (Unit::Iops, 1.0)
    } else if metric.ends_with("bw_mib") {
        (Unit::BytesPerSec, 1024.0 * 1024.0)
    } else if metric.ends_with("_us") {
        (Unit::Nanos, 1000.0)
    } else if metric.ends_with("_ns") {
        (Unit::Nanos, 1.0)
    } else {
        (Unit::Plain, 1.0)
    }
}

fn quantity(metric: &str) -> String {
    let m = metric.rsplit('.').next().unwrap_or(metric);
    match m {
        "iops" => "IOPS".into(),
        "bw_mib" => "Bandwidth".into(),
        "lat_mean_us" => "Mean latency".into(),
        "lat_p99_us" => "p99 latency".into(),
        _ => metric.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn bars_carry_intervals_and_starred_changes() {
        let v = json!({"sides": ["base", "dio"], "rows": [
            {"job": "rr", "metric": "read.iops",
             "summaries": [{"mean": 100.0, "ci": [90.0, 110.0]}, {"mean": 120.0, "ci": [115.0, 125.0]}],
             "changes": [{"rel": 0.2, "verdict": "better"}]},
            {"job": "rr", "metric": "ctx",
             "summaries": [{"mean": 1.0}, {"mean": 1.0}], "changes": [null]},
            {"job": "rr", "metric": "read.lat_mean_us",
             "summaries": [{"mean": 10.0}, null], "changes": [null]}]});
        let c = Comparison::from_json(&v, "cmp", Path::new("cmp.json")).unwrap();
        let charts = charts(&c);
        // ctx is left out when the usual metrics are there.
        assert_eq!(charts.len(), 2);
        let iops = charts
            .iter()
            .find(|c| c.id == "compare-cmp-read-iops")
            .unwrap();
        let Body::Bars(b) = &iops.body else {
            panic!("bars")
        };
        assert_eq!(b.values[0][1].as_ref().unwrap().note, "+20.0%*");
        assert_eq!(b.values[0][0].as_ref().unwrap().ci, Some((90.0, 110.0)));
        let lat = charts
            .iter()
            .find(|c| c.id.ends_with("lat-mean-us"))
            .unwrap();
        let Body::Bars(b) = &lat.body else {
            panic!("bars")
        };
        assert_eq!(b.values[0][0].as_ref().unwrap().value, 10_000.0);
        assert!(b.values[0][1].is_none());
    }
}
