//! The text the `fiox history` subcommands print: aligned tables, times in UTC.

use crate::query::{Point, RunDetail, RunSummary};
use crate::regress::Found;

/// `YYYY-MM-DD HH:MM` (UTC) of Unix seconds.
pub fn time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// The date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Rows of cells as columns padded to their widest cell, two spaces apart.
pub fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = width[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn or_dash(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

/// A number with about four significant digits.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `list`'s table.
pub fn list(runs: &[RunSummary]) -> String {
    let mut rows = vec![[
        "ID",
        "RAN (UTC)",
        "SOURCE",
        "HOST",
        "KERNEL",
        "EXPERIMENT",
        "VARIANT",
        "JOBS",
        "TAGS",
    ]
    .map(String::from)
    .to_vec()];
    for r in runs {
        rows.push(vec![
            r.id.to_string(),
            time(r.run_at),
            r.source.clone(),
            or_dash(&r.host),
            or_dash(&r.kernel),
            or_dash(&r.experiment),
            or_dash(&r.variant),
            r.jobs.join(","),
            r.tags.join(","),
        ]);
    }
    table(&rows)
}

/// `show`'s text: the record's fields, then its metrics.
pub fn show(d: &RunDetail) -> String {
    let s = &d.summary;
    let mut out = String::new();
    let mut field = |k: &str, v: String| out.push_str(&format!("{k:<12} {v}\n"));
    field("id", s.id.to_string());
    field("ran", format!("{} UTC", time(s.run_at)));
    field("recorded", format!("{} UTC", time(d.recorded_at)));
    field("source", s.source.clone());
    if let Some(o) = &d.origin {
        field("imported", o.clone());
    }
    field("host", or_dash(&s.host));
    field("kernel", or_dash(&s.kernel));
    field("cpu", or_dash(&d.cpu));
    field("commit", or_dash(&s.commit));
    field("tool", or_dash(&d.tool));
    field("targets", s.targets.replace('\n', ", "));
    field("experiment", or_dash(&s.experiment));
    field("variant", or_dash(&s.variant));
    field("tags", s.tags.join(", "));
    let command: Vec<String> = d
        .options
        .as_deref()
        .and_then(|o| serde_json::from_str(o).ok())
        .unwrap_or_default();
    if !command.is_empty() {
        field("command", command.join(" "));
    }
    if let Some(j) = &d.job_file {
        out.push_str("job file:\n");
        for l in j.lines() {
            out.push_str(&format!("  {l}\n"));
        }
    }
    let mut rows = vec![["JOB", "METRIC", "VALUE"].map(String::from).to_vec()];
    for (job, metric, v) in &d.metrics {
        rows.push(vec![job.clone(), metric.clone(), num(*v)]);
    }
    out.push_str(&table(&rows));
    out
}

/// `trend`'s table: one line per run and job.
pub fn trend(points: &[Point]) -> String {
    let mut rows = vec![[
        "ID",
        "RAN (UTC)",
        "HOST",
        "KERNEL",
        "COMMIT",
        "VARIANT",
        "JOB",
        "METRIC",
        "VALUE",
    ]
    .map(String::from)
    .to_vec()];
    for p in points {
        rows.push(vec![
            p.id.to_string(),
            time(p.run_at),
            or_dash(&p.host),
            or_dash(&p.kernel),
            or_dash(&p.commit),
            or_dash(&p.variant),
            p.job.clone(),
            p.metric.clone(),
            num(p.value),
        ]);
    }
    table(&rows)
}

/// `regressions`' text: per change, the series, the change, the runs either side and what
/// differs between them.
pub fn regressions(found: &[(Found, Vec<String>)]) -> String {
    let mut out = String::new();
    for (f, diffs) in found {
        let k = &f.key;
        let last = f.before.last();
        let first = f.after.first();
        let ctx = |p: Option<&Point>| {
            p.map_or("-".into(), |p| {
                format!(
                    "kernel {}, commit {}",
                    or_dash(&p.kernel),
                    or_dash(&p.commit)
                )
            })
        };
        let what = match f.worse {
            Some(true) => "worse",
            Some(false) => "better",
            None => "changed",
        };
        out.push_str(&format!(
            "{} {} on {}{}{}: {:+.1}% ({what}; p = {:.2e}, Holm-adjusted {:.2e})\n",
            k.job,
            k.metric,
            or_dash(&k.host),
            if k.targets.is_empty() {
                String::new()
            } else {
                format!(" [{}]", k.targets.replace('\n', ", "))
            },
            k.variant
                .as_ref()
                .map_or(String::new(), |v| format!(" variant {v}")),
            f.split.change * 100.0,
            f.split.p,
            f.split.p_adjusted,
        ));
        let ids = |ps: &[Point]| {
            ps.iter()
                .map(|p| p.id.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let vals = |ps: &[Point]| {
            ps.iter()
                .map(|p| num(p.value))
                .collect::<Vec<_>>()
                .join(" ")
        };
        out.push_str(&format!(
            "  before: runs {} ({}): {}\n",
            ids(&f.before),
            ctx(last),
            vals(&f.before)
        ));
        out.push_str(&format!(
            "  after:  runs {} ({}): {}\n",
            ids(&f.after),
            ctx(first),
            vals(&f.after)
        ));
        for d in diffs {
            out.push_str(&format!("  differs: {d}\n"));
        }
    }
    out
}
