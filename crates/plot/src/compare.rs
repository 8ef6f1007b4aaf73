//! A comparison document, the shape `fiox compare --format json` writes:
//!
//! ```text
//! { "sides": ["base", "variant", ...],
//!   "rows": [ { "job": "randread", "metric": "read.iops",
//!               "summaries": [ {"mean": 8023.4, "ci": [7950.1, 8096.7], ...} | null, ... ],
//!               "changes":   [ {"rel": 0.016, "verdict": "better", ...} | null, ... ] } ] }
//! ```
//!
//! `summaries` has one entry per side; `changes` one per side after the first (its change
//! against the first). `ci` is the 95% confidence interval of the mean (null below two runs);
//! a verdict of "better", "worse" or "different" marks a significant change. Other keys are
//! ignored, so the same reader takes any document of this shape.

use crate::error::InputError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub label: String,
    pub path: PathBuf,
    pub sides: Vec<String>,
    pub rows: Vec<CompareRow>,
}

/// A side's mean and the 95% confidence interval of it.
pub type MeanCi = (f64, Option<(f64, f64)>);

/// One job x metric line.
#[derive(Debug, Clone)]
pub struct CompareRow {
    pub job: String,
    pub metric: String,
    /// Per side: (mean, 95% CI) where the side has a value.
    pub values: Vec<Option<MeanCi>>,
    /// Per side after the first: (relative change, significant).
    pub changes: Vec<Option<(f64, bool)>>,
}

impl Comparison {
    /// Whether `v` has the comparison shape rather than fio's result shape.
    pub fn looks_like(v: &Value) -> bool {
        v.get("sides").is_some_and(Value::is_array) && v.get("rows").is_some_and(Value::is_array)
    }

    /// Read the document.
    pub fn from_json(v: &Value, label: &str, path: &Path) -> Result<Self, InputError> {
        let bad = |why: &str| InputError::format(path, format!("comparison JSON: {why}"));
        let sides: Vec<String> = v["sides"]
            .as_array()
            .ok_or_else(|| bad("\"sides\" is not an array"))?
            .iter()
            .map(|s| {
                s.as_str()
                    .map(String::from)
                    .ok_or_else(|| bad("a side is not a string"))
            })
            .collect::<Result<_, _>>()?;
        let rows = v["rows"]
            .as_array()
            .ok_or_else(|| bad("\"rows\" is not an array"))?
            .iter()
            .map(row)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("a row lacks \"job\", \"metric\" or \"summaries\""))?;
        Ok(Comparison {
            label: label.to_string(),
            path: path.to_path_buf(),
            sides,
            rows,
        })
    }
}

fn row(v: &Value) -> Option<CompareRow> {
    let values = v["summaries"]
        .as_array()?
        .iter()
        .map(|s| {
            let mean = s.get("mean")?.as_f64()?;
            let ci = s
                .get("ci")
                .and_then(|c| Some((c.get(0)?.as_f64()?, c.get(1)?.as_f64()?)));
            Some((mean, ci))
        })
        .collect();
    let changes = v
        .get("changes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| {
                    let rel = c.get("rel")?.as_f64()?;
                    let verdict = c.get("verdict").and_then(Value::as_str).unwrap_or("");
                    Some((rel, matches!(verdict, "better" | "worse" | "different")))
                })
                .collect()
        })
        .unwrap_or_default();
    Some(CompareRow {
        job: v.get("job")?.as_str()?.to_string(),
        metric: v.get("metric")?.as_str()?.to_string(),
        values,
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_means_intervals_and_significance() {
        let v = json!({"sides": ["a", "b"], "runs": [3, 3], "rows": [{
            "job": "j", "metric": "read.iops",
            "summaries": [{"mean": 10.0, "ci": [9.0, 11.0]}, {"mean": 12.0, "ci": null}],
            "changes": [{"rel": 0.2, "verdict": "better"}]}]});
        assert!(Comparison::looks_like(&v));
        let c = Comparison::from_json(&v, "c", Path::new("c.json")).unwrap();
        assert_eq!(
            c.rows[0].values,
            vec![Some((10.0, Some((9.0, 11.0)))), Some((12.0, None))]
        );
        assert_eq!(c.rows[0].changes, vec![Some((0.2, true))]);
        let e = Comparison::from_json(&json!({"sides": [1], "rows": []}), "c", Path::new("c.json"));
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("a side is not a string"));
    }
}
