//! Selections of recorded runs ([`Filter`]) and what is asked of them: the list, one run in
//! full, a metric's trend, export, tags, gc, and the results of a selection for `compare`.

use crate::db::{Row, Value as Sql};
use crate::record::Record;
use crate::store::Store;
use crate::{HistoryError, Result};
use std::time::{SystemTime, UNIX_EPOCH};

/// Which runs: every field given must match (text fields exactly; `job` and `tag`: the run has
/// such a job or tag; `target`: among the run's targets).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Run ids from..=to.
    pub ids: Option<(i64, i64)>,
    pub job: Option<String>,
    pub experiment: Option<String>,
    pub variant: Option<String>,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub commit: Option<String>,
    pub target: Option<String>,
    pub tag: Option<String>,
    /// run_at >= since, run_at < until (Unix seconds).
    pub since: Option<i64>,
    pub until: Option<i64>,
}

impl Filter {
    /// The SQL condition on `runs` (aliased `r`) and its parameters.
    fn sql(&self) -> (String, Vec<Sql>) {
        let mut w = vec!["TRUE".to_string()];
        let mut p: Vec<Sql> = Vec::new();
        let text = |v: &Option<String>| v.clone().map(Sql::Text);
        if let Some((a, b)) = self.ids {
            w.push("r.id BETWEEN ? AND ?".into());
            p.extend([Sql::Int(a), Sql::Int(b)]);
        }
        for (col, v) in [
            ("r.experiment", &self.experiment),
            ("r.variant", &self.variant),
            ("r.host", &self.host),
            ("r.kernel", &self.kernel),
            ("r.fiox_commit", &self.commit),
        ] {
            if let Some(v) = text(v) {
                w.push(format!("{col} = ?"));
                p.push(v);
            }
        }
        if let Some(v) = text(&self.target) {
            w.push("instr('\n' || r.targets || '\n', '\n' || CAST(? AS TEXT) || '\n') > 0".into());
            p.push(v);
        }
        if let Some(v) = text(&self.job) {
            w.push("EXISTS (SELECT 1 FROM metrics m WHERE m.run_id = r.id AND m.job = ?)".into());
            p.push(v);
        }
        if let Some(v) = text(&self.tag) {
            w.push("EXISTS (SELECT 1 FROM tags t WHERE t.run_id = r.id AND t.tag = ?)".into());
            p.push(v);
        }
        if let Some(s) = self.since {
            w.push("r.run_at >= ?".into());
            p.push(Sql::Int(s));
        }
        if let Some(u) = self.until {
            w.push("r.run_at < ?".into());
            p.push(Sql::Int(u));
        }
        (w.join(" AND "), p)
    }

    /// A selection written as `KEY=VALUE[,KEY=VALUE...]` (keys: id, ids, job, experiment,
    /// variant, host, kernel, commit, target, tag, since, until), or a bare run id or id range
    /// `A..B`: `fiox history compare`'s sides.
    pub fn parse_selector(text: &str) -> Result<Filter> {
        let bad = |why: String| HistoryError::Input {
            what: format!("selection '{text}'"),
            why,
        };
        let mut f = Filter::default();
        for part in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((k, v)) = part.split_once('=') else {
                f.ids = Some(parse_ids(part).map_err(bad)?);
                continue;
            };
            let v = v.trim().to_string();
            match k.trim() {
                "id" | "ids" => f.ids = Some(parse_ids(&v).map_err(bad)?),
                "job" => f.job = Some(v),
                "experiment" => f.experiment = Some(v),
                "variant" => f.variant = Some(v),
                "host" => f.host = Some(v),
                "kernel" => f.kernel = Some(v),
                "commit" => f.commit = Some(v),
                "target" => f.target = Some(v),
                "tag" => f.tag = Some(v),
                "since" => f.since = Some(parse_time(&v).map_err(bad)?),
                "until" => f.until = Some(parse_time(&v).map_err(bad)?),
                other => {
                    return Err(bad(format!(
                        "unknown key '{other}' (id, job, experiment, variant, host, kernel, \
                         commit, target, tag, since, until)"
                    )))
                }
            }
        }
        Ok(f)
    }
}

/// `N` or `A..B`.
fn parse_ids(s: &str) -> std::result::Result<(i64, i64), String> {
    let num = |x: &str| {
        x.trim()
            .parse::<i64>()
            .map_err(|_| format!("'{x}' is not a run id"))
    };
    match s.split_once("..") {
        Some((a, b)) => Ok((num(a)?, num(b)?)),
        None => num(s).map(|n| (n, n)),
    }
}

/// A time for --since/--until: `YYYY-MM-DD`, `YYYY-MM-DD[T ]HH:MM[:SS]` (UTC), a Unix time
/// `@SECONDS`, or an age `N[smhdw]` (that long before now).
pub fn parse_time(s: &str) -> std::result::Result<i64, String> {
    let bad = || {
        format!(
            "'{s}' is not a time: use YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (UTC), @UNIXSECONDS or \
             an age such as 30d, 12h, 2w"
        )
    };
    let s = s.trim();
    if let Some(n) = s.strip_prefix('@') {
        return n.parse().map_err(|_| bad());
    }
    if let Some(unit) = s.chars().last().filter(|c| "smhdw".contains(*c)) {
        if let Ok(n) = s[..s.len() - 1].parse::<i64>() {
            let mult = match unit {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                'd' => 86_400,
                _ => 7 * 86_400,
            };
            return Ok(now() - n * mult);
        }
    }
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let d: Vec<i64> = date
        .split('-')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<std::result::Result<_, _>>()?;
    let [y, mo, da] = d[..] else {
        return Err(bad());
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) {
        return Err(bad());
    }
    let mut secs = days_from_civil(y, mo, da) * 86_400;
    if let Some(t) = time {
        let parts: Vec<i64> = t
            .trim_end_matches('Z')
            .split(':')
            .map(|x| x.parse().map_err(|_| bad()))
            .collect::<std::result::Result<_, _>>()?;
        let (h, m, sec) = match parts[..] {
            [h, m] => (h, m, 0),
            [h, m, sec] => (h, m, sec),
            _ => return Err(bad()),
        };
        if h > 23 || m > 59 || sec > 60 {
            return Err(bad());
        }
        secs += h * 3600 + m * 60 + sec;
    }
    Ok(secs)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix seconds now.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_expand_directions_and_short_names() {
        assert_eq!(metric_names("read.iops"), ["read.iops"]);
        assert_eq!(
            metric_names("iops"),
            ["read.iops", "write.iops", "trim.iops"]
        );
        assert_eq!(
            metric_names("p99"),
            ["read.lat_p99_us", "write.lat_p99_us", "trim.lat_p99_us"]
        );
        assert_eq!(metric_names("write.bw"), ["write.bw_mib"]);
        assert_eq!(metric_names("ctx"), ["ctx"]);
        assert_eq!(metric_names("telemetry.cpu_busy"), ["telemetry.cpu_busy"]);
    }

    #[test]
    fn times_parse_as_dates_unix_seconds_and_ages() {
        assert_eq!(parse_time("1970-01-02"), Ok(86_400));
        assert_eq!(parse_time("2026-11-22T05:04:56"), Ok(1795323896));
        assert_eq!(parse_time("2026-11-22 05:04"), Ok(1795323840));
        assert_eq!(parse_time("@42"), Ok(42));
        let d = now() - parse_time("2d").unwrap();
        assert!((172_799..=172_801).contains(&d), "{d}");
        for bad in ["yesterday", "2026-13-01", "2026-11-22T25:00", "12x", ""] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn selectors_name_ids_and_fields() {
        let f = Filter::parse_selector("kernel=6.1, tag=before").unwrap();
        assert_eq!(
            (f.kernel.as_deref(), f.tag.as_deref()),
            (Some("6.1"), Some("before"))
        );
        assert_eq!(Filter::parse_selector("3..9").unwrap().ids, Some((3, 9)));
        assert_eq!(Filter::parse_selector("id=4").unwrap().ids, Some((4, 4)));
        assert!(Filter::parse_selector("x").is_err());
        assert!(Filter::parse_selector("colour=red").is_err());
    }
}

/// One line of `list`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub run_at: i64,
    pub source: String,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub commit: Option<String>,
    pub experiment: Option<String>,
    pub variant: Option<String>,
    pub targets: String,
    pub jobs: Vec<String>,
    pub tags: Vec<String>,
}

/// One run in full (`show`).
#[derive(Debug, Clone)]
pub struct RunDetail {
    pub summary: RunSummary,
    pub recorded_at: i64,
    pub cpu: Option<String>,
    pub tool: Option<String>,
    pub origin: Option<String>,
    pub job_file: Option<String>,
    pub options: Option<String>,
    pub env: Option<String>,
    pub result: String,
    /// (job, metric, value)
    pub metrics: Vec<(String, String, f64)>,
}

/// One point of a trend or a series: a run's value of one job's metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub id: i64,
    pub run_at: i64,
    pub host: Option<String>,
    pub kernel: Option<String>,
    pub commit: Option<String>,
    pub targets: String,
    pub experiment: Option<String>,
    pub variant: Option<String>,
    pub job: String,
    pub metric: String,
    pub value: f64,
}

/// Short names for the metrics a user asks for most.
const ALIASES: [(&str, &str); 6] = [
    ("bw", "bw_mib"),
    ("lat", "lat_mean_us"),
    ("mean", "lat_mean_us"),
    ("p50", "lat_p50_us"),
    ("p99", "lat_p99_us"),
    ("p999", "lat_p999_us"),
];

/// The metric names `name` stands for: itself when it has a direction (`read.iops`) or is
/// not per direction (`ctx`), else the name in each direction (`iops`: read.iops, ...); the
/// short names `bw`, `lat`/`mean`, `p50`, `p99`, `p999` stand for bw_mib, lat_mean_us and
/// lat_pNN_us (`read.p99` too).
pub fn metric_names(name: &str) -> Vec<String> {
    let (dir, base) = match name.split_once('.') {
        Some((d, b)) if ["read", "write", "trim"].contains(&d) => (Some(d), b),
        _ => (None, name),
    };
    let base = ALIASES
        .iter()
        .find(|(a, _)| *a == base)
        .map_or(base, |(_, full)| *full);
    if let Some(d) = dir {
        return vec![format!("{d}.{base}")];
    }
    let name = base;
    if name.contains('.') || ["ctx", "errors", "cpu_us_per_io"].contains(&name) {
        vec![name.to_string()]
    } else {
        ["read", "write", "trim"]
            .iter()
            .map(|d| format!("{d}.{name}"))
            .collect()
    }
}

const SUMMARY_COLS: &str = "r.id, r.run_at, r.source, r.host, r.kernel, r.fiox_commit, \
    r.experiment, r.variant, r.targets, \
    (SELECT string_agg(job, '\n' ORDER BY job) FROM (SELECT DISTINCT job FROM metrics m \
        WHERE m.run_id = r.id) d), \
    (SELECT string_agg(tag, '\n' ORDER BY tag) FROM tags t WHERE t.run_id = r.id)";

fn lines(v: &Sql) -> Vec<String> {
    v.opt()
        .map(|s| s.split('\n').map(String::from).collect())
        .unwrap_or_default()
}

fn summary_of(r: &Row) -> RunSummary {
    RunSummary {
        id: r[0].int(),
        run_at: r[1].int(),
        source: r[2].text(),
        host: r[3].opt(),
        kernel: r[4].opt(),
        commit: r[5].opt(),
        experiment: r[6].opt(),
        variant: r[7].opt(),
        targets: r[8].text(),
        jobs: lines(&r[9]),
        tags: lines(&r[10]),
    }
}

fn point_of(r: &Row) -> Point {
    Point {
        id: r[0].int(),
        run_at: r[1].int(),
        host: r[2].opt(),
        kernel: r[3].opt(),
        commit: r[4].opt(),
        targets: r[5].text(),
        experiment: r[6].opt(),
        variant: r[7].opt(),
        job: r[8].text(),
        metric: r[9].text(),
        value: r[10].real(),
    }
}

/// What `gc` removes.
#[derive(Debug, Clone, Default)]
pub struct Gc {
    /// Keep the newest N runs.
    pub keep: Option<usize>,
    /// Remove runs that ran before this time.
    pub before: Option<i64>,
    /// Remove tagged runs too (they are kept otherwise).
    pub tagged: bool,
    /// Count only.
    pub dry_run: bool,
}

impl Store {
    /// Record `rec`; returns its id and whether it is new (the same result recorded before
    /// keeps its first id; tags given now are added to it). One transaction: a concurrent
    /// writer of the same result waits on the UNIQUE digest and finds this one's id.
    pub fn insert(&mut self, rec: &Record) -> Result<(i64, bool)> {
        self.db.tx(|db| {
            let digest = rec.digest();
            let recorded = now();
            let options = serde_json::to_string(&rec.options).unwrap_or_default();
            let p: Vec<Sql> = vec![
                recorded.into(),
                rec.run_at.unwrap_or(recorded).into(),
                rec.source.as_str().into(),
                (&rec.origin).into(),
                (&rec.host).into(),
                (&rec.kernel).into(),
                (&rec.cpu).into(),
                (&rec.commit).into(),
                (&rec.tool).into(),
                rec.targets.join("\n").into(),
                (&rec.experiment).into(),
                (&rec.variant).into(),
                (&rec.job_file).into(),
                options.into(),
                rec.env.as_ref().map(|v| v.to_string()).into(),
                rec.result.as_str().into(),
                digest.as_str().into(),
            ];
            let added = db.row(
                "INSERT INTO runs (recorded_at, run_at, source, origin, host, kernel, cpu, \
                 fiox_commit, tool, targets, experiment, variant, job_file, options, env, \
                 result, digest) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) \
                 ON CONFLICT (digest) DO NOTHING RETURNING id",
                &p,
            )?;
            let (id, new) = match added {
                Some(r) => (r[0].int(), true),
                None => {
                    let q = "SELECT id FROM runs WHERE digest = ?";
                    (db.one(q, &[digest.into()])?.int(), false)
                }
            };
            if new {
                for (job, metric, value) in &rec.metrics {
                    db.exec(
                        "INSERT INTO metrics (run_id, job, metric, value) VALUES (?,?,?,?) \
                         ON CONFLICT (run_id, job, metric) DO UPDATE SET value = excluded.value",
                        &[
                            id.into(),
                            job.as_str().into(),
                            metric.as_str().into(),
                            (*value).into(),
                        ],
                    )?;
                }
            }
            for t in &rec.tags {
                db.exec(
                    "INSERT INTO tags (run_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    &[id.into(), t.as_str().into()],
                )?;
            }
            Ok((id, new))
        })
    }

    /// The runs selected, newest first; at most `limit` (0: all).
    pub fn list(&self, f: &Filter, limit: usize) -> Result<Vec<RunSummary>> {
        let (w, mut p) = f.sql();
        let mut q = format!(
            "SELECT {SUMMARY_COLS} FROM runs r WHERE {w} ORDER BY r.run_at DESC, r.id DESC"
        );
        if limit > 0 {
            q.push_str(" LIMIT ?");
            p.push(Sql::Int(limit as i64));
        }
        Ok(self.db.rows(&q, &p)?.iter().map(summary_of).collect())
    }

    /// Run `id` in full; None when there is none.
    pub fn show(&self, id: i64) -> Result<Option<RunDetail>> {
        let q = format!(
            "SELECT {SUMMARY_COLS}, r.recorded_at, r.cpu, r.tool, r.origin, r.job_file, \
             r.options, r.env, r.result FROM runs r WHERE r.id = ?"
        );
        let Some(r) = self.db.row(&q, &[id.into()])? else {
            return Ok(None);
        };
        let metrics = self
            .db
            .rows(
                "SELECT job, metric, value FROM metrics WHERE run_id = ? ORDER BY job, metric",
                &[id.into()],
            )?
            .iter()
            .map(|m| (m[0].text(), m[1].text(), m[2].real()))
            .collect();
        Ok(Some(RunDetail {
            summary: summary_of(&r),
            recorded_at: r[11].int(),
            cpu: r[12].opt(),
            tool: r[13].opt(),
            origin: r[14].opt(),
            job_file: r[15].opt(),
            options: r[16].opt(),
            env: r[17].opt(),
            result: r[18].text(),
            metrics,
        }))
    }

    /// Tag run `id` (`remove`: untag it); an error when there is no such run. Returns whether
    /// anything changed.
    pub fn tag(&mut self, id: i64, tag: &str, remove: bool) -> Result<bool> {
        let exists = self
            .db
            .row("SELECT id FROM runs WHERE id = ?", &[id.into()])?;
        if exists.is_none() {
            return Err(HistoryError::Input {
                what: format!("run {id}"),
                why: "no such run in the history (see fiox history list)".into(),
            });
        }
        let q = if remove {
            "DELETE FROM tags WHERE run_id = ? AND tag = ?"
        } else {
            "INSERT INTO tags (run_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING"
        };
        Ok(self.db.exec(q, &[id.into(), tag.into()])? > 0)
    }

    /// The points of `metric` (see [`metric_names`]) of the selected runs, oldest first, then
    /// by job.
    pub fn points(&self, metric: &str, f: &Filter) -> Result<Vec<Point>> {
        let names = metric_names(metric);
        let (w, mut p) = f.sql();
        let marks = vec!["?"; names.len()].join(",");
        let mut extra = String::new();
        if let Some(j) = &f.job {
            extra = " AND m.job = ?".into();
            p.push(Sql::Text(j.clone()));
        }
        p.extend(names.into_iter().map(Sql::Text));
        let q = format!(
            "SELECT r.id, r.run_at, r.host, r.kernel, r.fiox_commit, r.targets, r.experiment, \
             r.variant, m.job, m.metric, m.value FROM runs r JOIN metrics m ON m.run_id = r.id \
             WHERE {w}{extra} AND m.metric IN ({marks}) \
             ORDER BY r.run_at, r.id, m.job, m.metric"
        );
        Ok(self.db.rows(&q, &p)?.iter().map(point_of).collect())
    }

    /// The selected runs' ids and JSON results, oldest first (for compare and export).
    pub fn results(&self, f: &Filter) -> Result<Vec<(i64, String)>> {
        let (w, p) = f.sql();
        let q = format!("SELECT r.id, r.result FROM runs r WHERE {w} ORDER BY r.run_at, r.id");
        let rows = self.db.rows(&q, &p)?;
        Ok(rows.iter().map(|r| (r[0].int(), r[1].text())).collect())
    }

    /// Every selected run in full, oldest first, handed to `each` one at a time (export).
    pub fn each_detail(
        &self,
        f: &Filter,
        each: &mut dyn FnMut(RunDetail) -> std::io::Result<()>,
    ) -> Result<()> {
        let (w, p) = f.sql();
        let q = format!("SELECT r.id FROM runs r WHERE {w} ORDER BY r.run_at, r.id");
        let ids: Vec<i64> = self.db.rows(&q, &p)?.iter().map(|r| r[0].int()).collect();
        for id in ids {
            if let Some(d) = self.show(id)? {
                each(d).map_err(HistoryError::Write)?;
            }
        }
        Ok(())
    }

    /// Remove old runs as `g` says; returns how many (would be) removed.
    pub fn gc(&mut self, g: &Gc) -> Result<usize> {
        let mut w = vec!["FALSE".to_string()];
        let mut p: Vec<Sql> = Vec::new();
        if let Some(k) = g.keep {
            w.push("id NOT IN (SELECT id FROM runs ORDER BY run_at DESC, id DESC LIMIT ?)".into());
            p.push(Sql::Int(k as i64));
        }
        if let Some(b) = g.before {
            w.push("run_at < ?".into());
            p.push(Sql::Int(b));
        }
        let mut cond = format!("({})", w.join(" OR "));
        if !g.tagged {
            cond.push_str(" AND NOT EXISTS (SELECT 1 FROM tags t WHERE t.run_id = runs.id)");
        }
        if g.dry_run {
            let q = format!("SELECT count(*) FROM runs WHERE {cond}");
            return Ok(self.db.one(&q, &p)?.int() as usize);
        }
        let n = self
            .db
            .exec(&format!("DELETE FROM runs WHERE {cond}"), &p)?;
        if !self.db.is_postgres() {
            // Give the WAL's pages back to the file (the file itself keeps its size until
            // VACUUM).
            self.db.rows("PRAGMA wal_checkpoint(TRUNCATE)", &[])?;
        }
        Ok(n as usize)
    }

    /// How many runs the history holds.
    pub fn count(&self) -> Result<i64> {
        Ok(self.db.one("SELECT count(*) FROM runs", &[])?.int())
    }
}
