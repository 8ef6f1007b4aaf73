//! Where the mean latency went (`--explain`): one stacked bar per job, direction and result
//! (or experiment variant), its layers the phases the kernel measured (submission on and off
//! CPU, block queue, device, completion to reaped, fiox's own time, the rest), so an A/B shows
//! which phase moved. Results without `fiox.explain` give no chart.

use super::model::{Body, Chart, Section, Stack};
use crate::axis::{Axis, Scale, Unit};
use crate::result::ResultDoc;

/// The chart, when any result has phases.
pub fn chart(results: &[ResultDoc]) -> Option<Chart> {
    let mut layers: Vec<String> = Vec::new();
    let mut cols: Vec<(String, Vec<(String, f64)>)> = Vec::new();
    let several = results.len() > 1;
    for r in results {
        for j in &r.jobs {
            for d in j.dirs.iter().filter(|d| !d.phases.is_empty()) {
                for (name, _) in &d.phases {
                    if !layers.contains(name) {
                        layers.push(name.clone());
                    }
                }
                let side = r.variant.as_deref().unwrap_or(&r.label);
                let col = match several {
                    true => format!("{} {} ({side})", j.name, d.ddir),
                    false => format!("{} {}", j.name, d.ddir),
                };
                cols.push((col, d.phases.clone()));
            }
        }
    }
    if cols.is_empty() {
        return None;
    }
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for (_, phases) in &cols {
        let v: Vec<f64> = layers
            .iter()
            .map(|l| phases.iter().find(|(n, _)| n == l).map_or(0.0, |p| p.1))
            .collect();
        // A negative rest (the phases over-explain the mean) cannot be a layer: said instead.
        let neg: Vec<String> = layers
            .iter()
            .zip(&v)
            .filter(|(_, x)| **x < 0.0)
            .map(|(l, x)| format!("{l} {:.1} us", x / 1000.0))
            .collect();
        notes.push(neg.join(", "));
        values.push(v.into_iter().map(|x| x.max(0.0)).collect());
    }
    Some(Chart::new(
        "explain-phases".into(),
        "Where the mean latency went (--explain)".into(),
        Section::Latency,
        Axis::new("Job", Unit::Plain, Scale::Linear),
        Axis::new("Mean latency", Unit::Nanos, Scale::Linear),
        Body::Stack(Stack {
            columns: cols.into_iter().map(|c| c.0).collect(),
            layers,
            values,
            notes,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn doc(label: &str, device: f64, other: f64) -> ResultDoc {
        let v = json!({"jobs": [{"jobname": "j", "read": {"total_ios": 10, "iops": 1.0,
            "lat_ns": {"N": 10, "mean": 100.0}},
            "fiox": {"explain": {"read": {"phases": [
                {"name": "submit_on_cpu", "mean_ns": 10},
                {"name": "device", "mean_ns": device},
                {"name": "other", "mean_ns": other}]}}}}]});
        ResultDoc::from_json(&v, label, Path::new("r.json")).unwrap()
    }

    #[test]
    fn one_column_per_job_direction_and_result_layers_in_phase_order() {
        let c = chart(&[doc("a", 80.0, 10.0), doc("b", 95.0, -5.0)]).unwrap();
        let Body::Stack(s) = &c.body else {
            panic!("stack")
        };
        assert_eq!(s.columns, ["j read (a)", "j read (b)"]);
        assert_eq!(s.layers, ["submit_on_cpu", "device", "other"]);
        assert_eq!(s.values[0], [10.0, 80.0, 10.0]);
        // The negative rest is not drawn, it is told.
        assert_eq!(s.values[1], [10.0, 95.0, 0.0]);
        assert_eq!(s.notes[1], "other -0.0 us");
        let svg = crate::svg::render(&c, &crate::svg::LIGHT);
        assert!(svg.contains("j read (a): device: 80"), "{svg}");
        assert!(svg.matches("<rect class=\"data fill").count() >= 5, "{svg}");
    }

    #[test]
    fn results_without_explain_give_no_chart() {
        let v = json!({"jobs": [{"jobname": "j", "read": {"total_ios": 1, "iops": 1.0}}]});
        let r = ResultDoc::from_json(&v, "x", Path::new("r.json")).unwrap();
        assert!(chart(&[r]).is_none());
    }
}
