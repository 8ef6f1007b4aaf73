//! `fiox history page -o DIR`: the history as a static site, readable offline and with no
//! script: `index.html` lists the series (job, metric, host, targets, experiment, variant) with
//! their change points, and the runs; `trend-METRIC.html` holds one chart per series of that
//! metric (fiox-plot's inline SVG, change points marked) and the change points found; each
//! run's JSON result as recorded is `runs/ID.json` and its `fiox plot` report `runs/ID.html`,
//! both linked from the index and the trend pages.
//!
//! DIR is made through the guard (each new component marked as fiox's). An existing DIR is
//! used only when it is empty or fiox made it (a second `page` into the same DIR refreshes it);
//! a directory of the user's with files in it is refused and left as it is. Files are written
//! by the guard's output door, which replaces only fiox's own earlier files.

use crate::chart::{self, series_name};
use crate::query::{metric_names, Filter, Point, RunSummary};
use crate::record::result_doc;
use crate::regress::{self, Found, SeriesKey};
use crate::render::{num, time};
use crate::store::Store;
use crate::{HistoryError, Result};
use fiox_guard::{Dir, Named};
use fiox_plot::chart::slug;
use fiox_plot::svg::esc;
use std::ffi::OsStr;
use std::fmt::Write;
use std::path::Path;

/// What `page` writes and how change points are judged.
#[derive(Debug, Clone)]
pub struct Options {
    /// Metric names (`iops`, `read.iops`, `p99`...), each expanded by [`metric_names`].
    pub metrics: Vec<String>,
    pub regress: regress::Options,
    pub title: String,
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written {
    pub runs: usize,
    /// Metric pages.
    pub metrics: usize,
    pub series: usize,
    pub changes: usize,
}

/// One series row of the index.
struct SeriesRow {
    key: SeriesKey,
    page: String,
    anchor: String,
    runs: usize,
    changes: usize,
}

/// Open (making it when missing) the output directory; refuse a non-empty one fiox did not
/// make.
pub fn output_dir(path: &Path) -> Result<Dir> {
    let dir = Dir::create_all(path, 0o755)?;
    if dir.names()?.is_empty() {
        return Ok(dir);
    }
    let ours = match Dir::open_parent(path) {
        Ok((parent, name)) => parent.mark_of(&name)?.is_ours(),
        Err(_) => false,
    };
    if ours {
        return Ok(dir);
    }
    Err(HistoryError::Input {
        what: format!("output directory {}", path.display()),
        why: "exists, is not empty and was not made by fiox; fiox writes nothing there: name \
              a new or empty directory"
            .into(),
    })
}

/// Write the site of the runs `f` selects into `path`.
pub fn write(store: &Store, path: &Path, f: &Filter, o: &Options) -> Result<Written> {
    let dir = output_dir(path)?;
    let runs = store.list(f, 0)?;
    let runs_dir = match dir.stat(OsStr::new("runs"))? {
        Some(_) => dir.subdir(OsStr::new("runs"))?,
        None => dir.create_dir(OsStr::new("runs"), 0o755)?,
    };
    for r in &runs {
        write_run(store, &runs_dir, r.id)?;
    }
    let mut rows = Vec::new();
    let mut done = Written {
        runs: runs.len(),
        ..Written::default()
    };
    let mut names: Vec<String> = o.metrics.iter().flat_map(|m| metric_names(m)).collect();
    names.dedup();
    for m in names {
        let points = store.points(&m, f)?;
        if points.is_empty() {
            continue;
        }
        let page = format!("trend-{}.html", slug(&m));
        let (html, mut series) = metric_page(&m, &page, points, o);
        put(&dir, &page, html.as_bytes())?;
        done.metrics += 1;
        done.series += series.len();
        done.changes += series.iter().map(|s| s.changes).sum::<usize>();
        rows.append(&mut series);
    }
    put(&dir, "index.html", index(o, &rows, &runs).as_bytes())?;
    Ok(done)
}

fn put(dir: &Dir, name: &str, bytes: &[u8]) -> Result<()> {
    Ok(fiox_guard::output::write_in(
        dir,
        OsStr::new(name),
        bytes,
        Named::ByFiox,
    )?)
}

/// `runs/ID.json` (the result as recorded) and `runs/ID.html` (its `fiox plot` report; a
/// result the plot cannot read gets a page saying so, so the index's link still resolves).
fn write_run(store: &Store, dir: &Dir, id: i64) -> Result<()> {
    let Some(d) = store.show(id)? else {
        return Ok(());
    };
    put(dir, &format!("{id}.json"), d.result.as_bytes())?;
    let title = format!("run {id}");
    let report = result_doc(&d.result).and_then(|doc| {
        let mut inputs = fiox_plot::Inputs::default();
        let label = format!("run {id}");
        inputs
            .add_json_value(&doc, &label, Path::new(&format!("{id}.json")))
            .ok()?;
        Some(fiox_plot::html_page(&title, &inputs))
    });
    let html = report.unwrap_or_else(|| {
        shell(
            &title,
            &format!(
                "<p>fiox plot cannot chart this result; <a href=\"{id}.json\">its JSON</a>.</p>"
            ),
        )
    });
    put(dir, &format!("{id}.html"), html.as_bytes())
}

/// A page around `body`, styled as `fiox plot`'s reports.
pub fn shell(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\"><title>{t}</title>\
         <style>{css}td,th{{padding:2px 8px 2px 0}}</style></head><body><main>\n<h1>{t}</h1>\n\
         {body}\n<footer>Made by fiox {v} history page.</footer></main></body></html>\n",
        t = esc(title),
        css = fiox_plot::html::css(),
        v = env!("CARGO_PKG_VERSION")
    )
}

/// A metric's page: a chart per series with its change points; and its index rows.
fn metric_page(
    metric: &str,
    page: &str,
    points: Vec<Point>,
    o: &Options,
) -> (String, Vec<SeriesRow>) {
    let mut body = String::from("<p><a href=\"index.html\">All series and runs</a></p>\n");
    let mut rows = Vec::new();
    for (i, (key, pts)) in regress::series(points).into_iter().enumerate() {
        let anchor = format!("s{i}");
        let name = series_name(&key);
        let t = chart::trend(&format!("{metric}-{i}"), &name, &pts, &o.regress);
        let _ = write!(
            body,
            "<section id=\"{anchor}\"><h2>{}</h2><figure>{}</figure>",
            esc(&name),
            chart::svg(&t.chart)
        );
        changes_table(&mut body, &t.changes);
        body.push_str("</section>\n");
        rows.push(SeriesRow {
            key,
            page: page.to_string(),
            anchor,
            runs: pts.len(),
            changes: t.changes.len(),
        });
    }
    (shell(&format!("{} — {metric}", o.title), &body), rows)
}

/// A link to run `id`'s report.
fn run_link(id: i64) -> String {
    format!("<a href=\"runs/{id}.html\">{id}</a>")
}

/// The change points of a series, each with the runs compared either side.
fn changes_table(s: &mut String, changes: &[Found]) {
    if changes.is_empty() {
        s.push_str("<p>No change point across kernels or commits.</p>");
        return;
    }
    s.push_str(
        "<table class=\"changes\"><tr><th>change</th><th>p (Holm)</th><th>first run after</th>\
         <th>kernel</th><th>commit</th><th>runs before</th><th>runs after</th></tr>",
    );
    for c in changes {
        let ids = |p: &[Point]| {
            p.iter()
                .map(|p| run_link(p.id))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let first = c.after.first();
        let field =
            |f: fn(&Point) -> Option<&String>| esc(first.and_then(f).map_or("-", |s| s.as_str()));
        let _ = write!(
            s,
            "<tr class=\"change\"><td>{:+.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            c.split.change * 100.0,
            num(c.split.p_adjusted),
            first.map_or(String::new(), |p| run_link(p.id)),
            field(|p| p.kernel.as_ref()),
            field(|p| p.commit.as_ref()),
            ids(&c.before),
            ids(&c.after),
        );
    }
    s.push_str("</table>");
}

/// The index: series, then runs.
fn index(o: &Options, series: &[SeriesRow], runs: &[RunSummary]) -> String {
    let mut b = String::from("<h2>Series</h2>");
    if series.is_empty() {
        b.push_str("<p>No recorded run has these metrics.</p>");
    } else {
        b.push_str(
            "<table class=\"series\"><tr><th>job</th><th>metric</th><th>host</th>\
             <th>targets</th><th>experiment</th><th>variant</th><th>runs</th>\
             <th>change points</th></tr>",
        );
    }
    let opt = |v: &Option<String>| esc(v.as_deref().unwrap_or("-"));
    for r in series {
        let k = &r.key;
        let _ = write!(
            b,
            "<tr><td>{}</td><td><a href=\"{}#{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&k.job),
            r.page,
            r.anchor,
            esc(&k.metric),
            opt(&k.host),
            esc(&k.targets.replace('\n', ", ")),
            opt(&k.experiment),
            opt(&k.variant),
            r.runs,
            r.changes
        );
    }
    if !series.is_empty() {
        b.push_str("</table>");
    }
    let _ = write!(
        b,
        "<h2>Runs</h2><table class=\"runs\"><tr><th>id</th><th>ran (UTC)</th><th>source</th>\
         <th>host</th><th>kernel</th><th>commit</th><th>experiment</th><th>variant</th>\
         <th>jobs</th><th>tags</th><th>result</th></tr>"
    );
    for r in runs {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td><a href=\"runs/{id}.json\">JSON</a></td></tr>",
            run_link(r.id),
            time(r.run_at),
            esc(&r.source),
            opt(&r.host),
            opt(&r.kernel),
            opt(&r.commit),
            opt(&r.experiment),
            opt(&r.variant),
            esc(&r.jobs.join(", ")),
            esc(&r.tags.join(", ")),
            id = r.id
        );
    }
    b.push_str("</table>");
    shell(&o.title, &b)
}
