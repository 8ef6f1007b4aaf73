//! Where a result's jobs sit on the run's clock, from what its JSON tells: the jobs of a group
//! start together (each after its `startdelay`), a later group starts when the one before it
//! is done (stonewall: the longest `startdelay + ramp_time + job_runtime` of its jobs), and a
//! job measures only after its `ramp_time`. fio-format logs and `--status-interval` reports
//! count time from the end of their own job's ramp (fio resets the job's epoch then), so a
//! log is shifted by its job's start and ramp to share one axis with the other jobs' logs and
//! with telemetry, which is sampled from the start of the run. [`Mark`]s are the vertical lines
//! the over-time charts draw there: where each group starts and where a ramp ends. The setup
//! between groups (file layout) is not in fio's JSON, so there a later group may sit that
//! much early; fiox's JSON says when each job's I/O began (`fiox.io_start_unix_ms`, with the
//! run's start in `timestamp_ms`), which is then used instead.

use crate::result::ResultDoc;
use std::collections::BTreeMap;

/// A labelled vertical line on a time axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Seconds since the run started.
    pub x: f64,
    pub label: String,
}

/// The run's clock for one result.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Per job of the JSON (same order): its name and the run time (s) of its log time zero.
    jobs: Vec<(String, f64)>,
    /// Whether a log's job number is its place among the JSON's jobs: not with
    /// group_reporting, where one entry stands for a whole group.
    by_number: bool,
    pub marks: Vec<Mark>,
}

impl Timeline {
    /// The timeline of `doc`'s jobs.
    pub fn of(doc: &ResultDoc) -> Timeline {
        // groupid -> (the jobs' indices, the group's length in seconds).
        let mut groups: BTreeMap<u64, (Vec<usize>, f64)> = BTreeMap::new();
        let secs = |i: usize, key: &str| {
            doc.option(&doc.jobs[i], key)
                .and_then(|v| parse_secs(&v))
                .unwrap_or(0.0)
        };
        for (i, j) in doc.jobs.iter().enumerate() {
            let len = secs(i, "startdelay") + secs(i, "ramp_time") + j.runtime_ms / 1000.0;
            let g = groups.entry(j.group).or_default();
            g.0.push(i);
            g.1 = g.1.max(len);
        }
        let grouped = doc
            .jobs
            .iter()
            .any(|j| doc.option(j, "group_reporting").is_some());
        let mut t = Timeline {
            jobs: doc.jobs.iter().map(|j| (j.name.clone(), 0.0)).collect(),
            by_number: !grouped,
            marks: Vec::new(),
        };
        let many = groups.len() > 1;
        // Where the next group starts: estimated, or after the measured end of this one.
        let mut start = 0.0;
        for (gid, (members, len)) in &groups {
            // Each job's first I/O: measured by fiox, else estimated from the group's start.
            let io: Vec<f64> = members
                .iter()
                .map(|&i| {
                    doc.jobs[i]
                        .io_start_s
                        .unwrap_or(start + secs(i, "startdelay"))
                })
                .collect();
            let g_start = io.iter().copied().fold(f64::INFINITY, f64::min);
            if many {
                let first = &doc.jobs[members[0]].name;
                t.marks.push(Mark {
                    x: g_start,
                    label: format!("group {gid}: {}", shorten(first, 18)),
                });
            }
            let mut ramp_ends: Vec<f64> = Vec::new();
            let mut end: f64 = start + len;
            for (&i, &io_s) in members.iter().zip(&io) {
                let ramp = secs(i, "ramp_time");
                t.jobs[i].1 = io_s + ramp;
                end = end.max(io_s + ramp + doc.jobs[i].runtime_ms / 1000.0);
                if ramp > 0.0 && !ramp_ends.iter().any(|x| (x - (io_s + ramp)).abs() < 0.05) {
                    ramp_ends.push(io_s + ramp);
                }
            }
            for x in ramp_ends {
                t.marks.push(Mark {
                    x,
                    label: "ramp_time ends".into(),
                });
            }
            start = end;
        }
        t
    }

    /// The run time (s) of the log time zero of the job a log names (`NAME.N`: job number N,
    /// 1-based over the run; `NAME`: the first job of that name, as with group_reporting,
    /// where fio names a group's entry after its first job); None when no job matches.
    pub fn log_zero(&self, job: &str) -> Option<f64> {
        let numbered = job
            .rsplit_once('.')
            .and_then(|(name, n)| Some((name, n.parse::<usize>().ok()?)));
        let job = match numbered {
            // The number decides: a log prefix need not be the job's name.
            Some((_, n)) if self.by_number => return self.jobs.get(n.checked_sub(1)?).map(|j| j.1),
            Some((name, _)) => name,
            None => job,
        };
        self.jobs.iter().find(|(n, _)| n == job).map(|(_, z)| *z)
    }
}

/// fio's time values as job options hold them: a number with an optional unit (us, ms, s, m,
/// h, d; seconds without one). None for anything else.
pub fn parse_secs(v: &str) -> Option<f64> {
    let v = v.trim().to_ascii_lowercase();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return None,
    };
    Some(n * mult).filter(|s| s.is_finite())
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn doc(v: serde_json::Value) -> ResultDoc {
        ResultDoc::from_json(&v, "r", Path::new("r.json")).unwrap()
    }

    #[test]
    fn fio_times() {
        assert_eq!(parse_secs("2"), Some(2.0));
        assert_eq!(parse_secs("500ms"), Some(0.5));
        assert_eq!(parse_secs("1m"), Some(60.0));
        assert_eq!(parse_secs("x"), None);
        assert_eq!(parse_secs("2q"), None);
    }

    #[test]
    fn stonewalled_groups_follow_each_other_and_ramps_are_marked() {
        let d = doc(json!({"jobs": [
            {"jobname": "warm", "groupid": 0, "job_runtime": 3000,
             "job options": {"ramp_time": "1"}},
            {"jobname": "seq", "groupid": 1, "job_runtime": 2000},
            {"jobname": "rand", "groupid": 1, "job_runtime": 2500,
             "job options": {"startdelay": "500ms"}},
        ]}));
        let t = Timeline::of(&d);
        assert_eq!(t.log_zero("warm.1"), Some(1.0));
        assert_eq!(t.log_zero("seq.2"), Some(4.0));
        assert_eq!(t.log_zero("rand.3"), Some(4.5));
        // By name when the log has no job number (per_job_logs=0).
        assert_eq!(t.log_zero("seq"), Some(4.0));
        assert_eq!(t.log_zero("other.9"), None);
        let marks: Vec<(f64, &str)> = t.marks.iter().map(|m| (m.x, m.label.as_str())).collect();
        assert_eq!(
            marks,
            [
                (0.0, "group 0: warm"),
                (1.0, "ramp_time ends"),
                (4.0, "group 1: seq")
            ]
        );
    }

    #[test]
    fn with_group_reporting_logs_find_their_group_by_name() {
        let d = doc(json!({"global options": {"group_reporting": "1"}, "jobs": [
            {"jobname": "a", "groupid": 0, "job_runtime": 2000},
            {"jobname": "b", "groupid": 1, "job_runtime": 2000,
             "job options": {"ramp_time": "1"}},
        ]}));
        let t = Timeline::of(&d);
        // numjobs=4 each: b's clones are jobs 5..8 of the run.
        assert_eq!(t.log_zero("b.7"), Some(3.0));
        assert_eq!(t.log_zero("a.2"), Some(0.0));
    }

    #[test]
    fn fiox_measured_starts_win_over_the_estimate() {
        let d = doc(json!({"timestamp_ms": 10_000, "jobs": [
            {"jobname": "a", "groupid": 0, "job_runtime": 1000,
             "fiox": {"io_start_unix_ms": 10_200}},
            {"jobname": "b", "groupid": 1, "job_runtime": 1000,
             "job options": {"ramp_time": "1"},
             "fiox": {"io_start_unix_ms": 11_500}},
        ]}));
        let t = Timeline::of(&d);
        assert_eq!(t.log_zero("a.1"), Some(0.2));
        assert_eq!(t.log_zero("b.2"), Some(2.5));
        let marks: Vec<(f64, &str)> = t.marks.iter().map(|m| (m.x, m.label.as_str())).collect();
        assert_eq!(
            marks,
            [
                (0.2, "group 0: a"),
                (1.5, "group 1: b"),
                (2.5, "ramp_time ends")
            ]
        );
    }

    #[test]
    fn one_group_without_ramp_has_no_marks() {
        let d = doc(json!({"jobs": [{"jobname": "a", "job_runtime": 1000}]}));
        assert!(Timeline::of(&d).marks.is_empty());
    }
}
