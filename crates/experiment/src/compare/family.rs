//! What one comparison tests: the metrics chosen (the headline metrics of every job by
//! default, `--metric all` for every one, or those named), which are at once the rows every
//! format shows and the family the p-values are adjusted over, so that a claim is never on a
//! hidden row and the adjustment never pays for rows nobody sees. When nothing is comparable
//! (too few sides, no job in common, no metric matched, results of two tools) it is an error
//! with the reason, not an empty table.

use crate::load::Side;
use std::collections::BTreeSet;

/// The metrics the text shows, tests and adjusts unless asked for others: per job, its
/// throughput, mean latency and tail latency.
pub const DEFAULT_METRICS: [&str; 4] = ["iops", "bw_mib", "lat_mean_us", "lat_p99_us"];

/// Which metrics form the family (and the rows every format shows).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Metrics {
    /// [`DEFAULT_METRICS`] of every job.
    #[default]
    Headline,
    /// Every metric the runs hold, telemetry included.
    All,
    /// Those named (suffix match: "iops" selects "read.iops").
    Named(Vec<String>),
}

impl Metrics {
    /// `--metric`'s list: `all` for every metric, else names.
    pub fn parse(list: &[String]) -> Metrics {
        if list.is_empty() {
            Metrics::Headline
        } else if list.iter().any(|m| m == "all") {
            Metrics::All
        } else {
            Metrics::Named(list.to_vec())
        }
    }

    /// Whether `metric` is in the family. I/O errors are compared whatever the selection
    /// (no verdict without them).
    pub fn selects(&self, metric: &str) -> bool {
        if metric == "errors" {
            return true;
        }
        match self {
            Metrics::All => true,
            Metrics::Headline => DEFAULT_METRICS
                .iter()
                .any(|w| metric == *w || metric.ends_with(&format!(".{w}"))),
            Metrics::Named(w) => super::selected(metric, w),
        }
    }

    fn text(&self) -> String {
        match self {
            Metrics::All => "all".into(),
            Metrics::Headline => DEFAULT_METRICS.join(","),
            Metrics::Named(w) => w.join(","),
        }
    }
}

/// Why nothing can be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("compare needs at least two sides, found {0} (see fiox compare --help)")]
    TooFewSides(usize),
    #[error("the sides share no job: {0}; compare runs of the same job file")]
    NoSharedJob(String),
    #[error("--metric {wanted}: no metric of the runs matches; they have {have}")]
    NoMetric { wanted: String, have: String },
    #[error(
        "the sides ran different tools ({0}): their numbers are not comparable; compare \
         results of one tool (fio's own JSON against fio's, fiox's against fiox's)"
    )]
    MixedTools(String),
}

/// The (job, metric) rows of the family, or why there are none.
pub fn rows_of(
    sides: &[Side],
    metrics: &Metrics,
) -> Result<BTreeSet<(String, String)>, CompareError> {
    if sides.len() < 2 {
        return Err(CompareError::TooFewSides(sides.len()));
    }
    mixed_tools(sides)?;
    shared_jobs(sides)?;
    let mut keys = BTreeSet::new();
    let mut have = BTreeSet::new();
    for r in sides.iter().flat_map(|s| &s.runs) {
        for (job, m) in &r.jobs {
            for k in m.keys() {
                have.insert(k.rsplit('.').next().unwrap_or(k).to_string());
                if metrics.selects(k) {
                    keys.insert((job.clone(), k.clone()));
                }
            }
        }
    }
    if keys.iter().all(|(_, m)| m == "errors") {
        have.remove("errors");
        let have: Vec<String> = have.into_iter().collect();
        return Err(CompareError::NoMetric {
            wanted: metrics.text(),
            have: if have.is_empty() {
                "none".into()
            } else {
                have.join(", ")
            },
        });
    }
    Ok(keys)
}

/// Jobs a side ran (the telemetry pseudo-job aside).
fn jobs_of(s: &Side) -> BTreeSet<&str> {
    s.runs
        .iter()
        .flat_map(|r| r.jobs.keys())
        .map(String::as_str)
        .filter(|j| *j != "(system)")
        .collect()
}

fn shared_jobs(sides: &[Side]) -> Result<(), CompareError> {
    let per: Vec<BTreeSet<&str>> = sides.iter().map(jobs_of).collect();
    let common = per.iter().skip(1).fold(per[0].clone(), |acc, j| &acc & j);
    if !common.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = sides
        .iter()
        .zip(&per)
        .map(|(s, j)| {
            let names: Vec<&str> = j.iter().copied().take(5).collect();
            let more = if j.len() > 5 { ", ..." } else { "" };
            format!("{} has {}{more}", s.name, names.join(", "))
        })
        .collect();
    Err(CompareError::NoSharedJob(list.join("; ")))
}

/// The tool of every side (fio's `fio version`): one tool a side, the same on every side.
fn mixed_tools(sides: &[Side]) -> Result<(), CompareError> {
    let tools: Vec<(String, BTreeSet<String>)> = sides
        .iter()
        .map(|s| {
            let t = s.runs.iter().filter_map(|r| r.tool.as_deref());
            (s.name.clone(), t.map(tool_family).collect())
        })
        .collect();
    let all: BTreeSet<&String> = tools.iter().flat_map(|(_, t)| t).collect();
    if all.len() < 2 {
        return Ok(());
    }
    let list: Vec<String> = tools
        .iter()
        .map(|(s, t)| {
            let t: Vec<&str> = t.iter().map(String::as_str).collect();
            format!("{s}: {}", t.join(" and "))
        })
        .collect();
    Err(CompareError::MixedTools(list.join("; ")))
}

/// "fio-3.33" -> "fio 3.33"; "fiox-0.1.0" and "fio-3.33 (fiox-0.1.0)" (fiox run as fio) ->
/// "fiox": what makes numbers comparable is the program, and fio's release.
fn tool_family(version: &str) -> String {
    if version.contains("fiox") {
        "fiox".into()
    } else {
        version.replacen('-', " ", 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Run;

    fn side(name: &str, job: &str, metric: &str, tool: Option<&str>) -> Side {
        let mut r = Run::default();
        r.jobs
            .entry(job.into())
            .or_default()
            .insert(metric.into(), 1.0);
        r.tool = tool.map(String::from);
        Side {
            name: name.into(),
            runs: vec![r],
            baseline: None,
        }
    }

    #[test]
    fn nothing_comparable_is_an_error_with_the_reason() {
        let a = side("a", "j", "read.iops", None);
        let e = rows_of(std::slice::from_ref(&a), &Metrics::Headline).unwrap_err();
        assert!(e.to_string().contains("at least two sides, found 1"), "{e}");
        let b = side("b", "other", "read.iops", None);
        let e = rows_of(&[a.clone(), b], &Metrics::Headline).unwrap_err();
        assert!(
            e.to_string().contains("share no job: a has j; b has other"),
            "{e}"
        );
        let e = rows_of(&[a.clone(), a.clone()], &Metrics::parse(&["nosuch".into()])).unwrap_err();
        assert!(e.to_string().contains("--metric nosuch: no metric"), "{e}");
        assert!(e.to_string().contains("they have iops"), "{e}");
        let f = side("f", "j", "read.iops", Some("fio-3.33"));
        let x = side("x", "j", "read.iops", Some("fiox-0.1.0"));
        let e = rows_of(&[f.clone(), x], &Metrics::Headline).unwrap_err();
        assert!(
            e.to_string()
                .contains("different tools (f: fio 3.33; x: fiox)"),
            "{e}"
        );
        // fiox run as fio is fiox.
        let xf = side("xf", "j", "read.iops", Some("fio-3.33 (fiox-0.1.0)"));
        let x = side("x", "j", "read.iops", Some("fiox-0.1.0"));
        assert!(rows_of(&[xf, x], &Metrics::Headline).is_ok());
        assert!(rows_of(&[f.clone(), f], &Metrics::Headline).is_ok());
    }

    #[test]
    fn the_headline_family_and_all() {
        let mut a = side("a", "j", "read.iops", None);
        let j = a.runs[0].jobs.get_mut("j").unwrap();
        j.insert("read.lat_p50_us".into(), 1.0);
        j.insert("errors".into(), 0.0);
        let rows = rows_of(&[a.clone(), a.clone()], &Metrics::Headline).unwrap();
        let metrics: Vec<&str> = rows.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(metrics, ["errors", "read.iops"]);
        let rows = rows_of(&[a.clone(), a], &Metrics::parse(&["all".into()])).unwrap();
        assert_eq!(rows.len(), 3);
    }
}
