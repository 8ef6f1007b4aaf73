//! `fiox history ...` (the history of results, fiox-history) and the recording of runs into
//! it: `fiox experiment` and `fiox quick` record unless `--no-history`; a plain run records
//! with `--history[=DB]` or FIOX_HISTORY=1. This file parses switches, opens the store and
//! prints; the work is in fiox-history.

use anyhow::{bail, Context, Result};
use fiox_experiment::compare::{self, DEFAULT_METRICS};
use fiox_history::query::{self, Gc};
use fiox_history::{
    chart, export, import, regress, render, sides, site, Filter, Record, Source, Store,
};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `fiox history`'s command line.
#[derive(Debug, clap::Args)]
#[command(after_help = "The database: --history-db, else FIOX_HISTORY_DB, else \
$XDG_DATA_HOME/fiox/history.db (~/.local/share/fiox/history.db); an SQLite file, or a \
PostgreSQL database given as postgresql://USER@HOST:PORT/DB (no TLS). Times: YYYY-MM-DD, \
YYYY-MM-DDTHH:MM (UTC), @UNIXSECONDS or an age (30d, 12h, 2w).")]
pub struct HistoryArgs {
    /// The history database: a file (default $XDG_DATA_HOME/fiox/history.db) or
    /// postgresql://USER@HOST:PORT/DB
    #[arg(long, value_name = "FILE|URL", global = true)]
    history_db: Option<PathBuf>,
    #[command(subcommand)]
    cmd: Cmd,
}

/// Which runs (every switch given must match).
#[derive(Debug, Clone, Default, clap::Args)]
struct Select {
    /// Runs with this job name
    #[arg(long, value_name = "NAME")]
    job: Option<String>,
    /// Runs of this experiment
    #[arg(long, value_name = "NAME")]
    experiment: Option<String>,
    /// Runs of this experiment variant
    #[arg(long, value_name = "NAME")]
    variant: Option<String>,
    /// Runs on this host
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Runs on this kernel release
    #[arg(long, value_name = "RELEASE")]
    kernel: Option<String>,
    /// Runs of this fiox commit
    #[arg(long, value_name = "COMMIT")]
    commit: Option<String>,
    /// Runs on this target (file, directory or device)
    #[arg(long, value_name = "PATH")]
    target: Option<String>,
    /// Runs with this tag
    #[arg(long, value_name = "TAG")]
    tag: Option<String>,
    /// Runs from this time on
    #[arg(long, value_name = "TIME", value_parser = query::parse_time)]
    since: Option<i64>,
    /// Runs before this time
    #[arg(long, value_name = "TIME", value_parser = query::parse_time)]
    until: Option<i64>,
}

impl Select {
    fn filter(self) -> Filter {
        Filter {
            ids: None,
            job: self.job,
            experiment: self.experiment,
            variant: self.variant,
            host: self.host,
            kernel: self.kernel,
            commit: self.commit,
            target: self.target,
            tag: self.tag,
            since: self.since,
            until: self.until,
        }
    }
}

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ExportFormat {
    /// One JSON object per run and line, with its result
    Jsonl,
    /// One line per run, job and metric
    Csv,
}

#[derive(Debug, clap::Subcommand)]
enum Cmd {
    /// The recorded runs, newest first
    List {
        #[command(flatten)]
        sel: Select,
        /// At most N runs (0: all)
        #[arg(long, value_name = "N", default_value_t = 50)]
        limit: usize,
    },
    /// One run in full (--json: its JSON result as recorded)
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Tag a run (--remove: untag it)
    Tag {
        id: i64,
        tag: String,
        #[arg(long)]
        remove: bool,
    },
    /// A metric over the runs (iops, bw_mib, lat_mean_us, lat_p50_us, lat_p99_us; read.iops...)
    Trend {
        metric: String,
        #[command(flatten)]
        sel: Select,
        /// Also chart it, change points marked: FILE.svg, FILE.png or FILE.html (the format
        /// follows the extension)
        #[arg(long, value_name = "FILE")]
        chart: Option<PathBuf>,
    },
    /// The history as a static HTML site in DIR: series, runs, a trend page per metric with
    /// change points marked, each run's JSON and report
    Page {
        /// The directory to write (made when missing; an existing one must be empty or fiox's)
        #[arg(short, long, value_name = "DIR", required = true)]
        output: PathBuf,
        #[command(flatten)]
        sel: Select,
        /// Metrics charted (default: iops, bw_mib, lat_mean_us, lat_p99_us)
        #[arg(long, value_name = "NAME", value_delimiter = ',')]
        metric: Vec<String>,
        /// Page title
        #[arg(long, value_name = "TEXT", default_value = "fiox history")]
        title: String,
    },
    /// Record fio or fiox JSON results, directories of them, experiment results directories
    Import {
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// The host the results came from (when they do not say)
        #[arg(long, value_name = "NAME")]
        from_host: Option<String>,
        /// Their kernel release (when they do not say)
        #[arg(long, value_name = "RELEASE")]
        from_kernel: Option<String>,
        /// Tag every imported run
        #[arg(long = "add-tag", value_name = "TAG")]
        add_tag: Vec<String>,
    },
    /// Every selected run, as JSON lines or CSV, on stdout
    Export {
        #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
        format: ExportFormat,
        #[command(flatten)]
        sel: Select,
    },
    /// Remove old runs (tagged runs are kept unless --tagged)
    Gc {
        /// Keep the newest N runs
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
        /// Remove runs that ran before TIME
        #[arg(long, value_name = "TIME", value_parser = query::parse_time)]
        older_than: Option<i64>,
        /// Remove tagged runs too
        #[arg(long)]
        tagged: bool,
        /// Say how many would go, remove nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Change points across kernels and commits (Mann-Whitney, Holm per series)
    Regressions {
        #[command(flatten)]
        sel: Select,
        /// Metrics searched (default: iops, bw_mib, lat_mean_us, lat_p99_us)
        #[arg(long, value_name = "NAME", value_delimiter = ',')]
        metric: Vec<String>,
        /// Chance of any false alarm per series (default 0.05)
        #[arg(long, value_name = "P", default_value_t = 0.05, hide_default_value = true,
              value_parser = crate::compare::parse_alpha)]
        alpha: f64,
        /// Smallest change of the median reported, in percent (default 2)
        #[arg(
            long,
            value_name = "PERCENT",
            default_value_t = 2.0,
            hide_default_value = true
        )]
        threshold: f64,
        /// Runs compared on each side of a kernel or commit change (default 10)
        #[arg(long, value_name = "N", default_value_t = 10, hide_default_value = true,
              value_parser = clap::value_parser!(u32).range(2..))]
        window: u32,
        /// Improvements too, not only regressions
        #[arg(long)]
        all: bool,
    },
    /// Compare two selections as fiox compare does (ID, A..B or KEY=VALUE,...: job, experiment,
    /// variant, host, kernel, commit, target, tag, since, until)
    Compare {
        a: String,
        b: String,
        /// Only these metrics
        #[arg(long, value_name = "NAME", value_delimiter = ',')]
        metric: Vec<String>,
    },
}

fn open(db: Option<&Path>) -> Result<Store> {
    let path = fiox_history::store::default_path(db)?;
    Ok(Store::open(&path)?)
}

/// `fiox history ...`; returns the exit code.
pub fn main(args: HistoryArgs) -> Result<i32> {
    let mut store = open(args.history_db.as_deref())?;
    let mut out = std::io::stdout().lock();
    match args.cmd {
        Cmd::List { sel, limit } => {
            let runs = store.list(&sel.filter(), limit)?;
            out.write_all(render::list(&runs).as_bytes())?;
        }
        Cmd::Show { id, json } => {
            let Some(d) = store.show(id)? else {
                bail!("fiox history show: no run {id} (see fiox history list)");
            };
            let text = if json {
                d.result.clone()
            } else {
                render::show(&d)
            };
            out.write_all(text.as_bytes())?;
            if !text.ends_with('\n') {
                writeln!(out)?;
            }
        }
        Cmd::Tag { id, tag, remove } => {
            store.tag(id, &tag, remove)?;
        }
        Cmd::Trend { metric, sel, chart } => {
            let points = store.points(&metric, &sel.filter())?;
            if points.is_empty() {
                bail!("fiox history trend: no recorded run has {metric} (names: iops, bw_mib, lat_mean_us, lat_p50_us, lat_p99_us, or read.iops...)");
            }
            if let Some(path) = chart {
                write_trend_chart(&path, &metric, &points)?;
            }
            out.write_all(render::trend(&points).as_bytes())?;
        }
        Cmd::Page {
            output,
            sel,
            metric,
            title,
        } => {
            let o = site::Options {
                metrics: default_metrics(metric),
                regress: regress::Options::default(),
                title,
            };
            let w = site::write(&store, &output, &sel.filter(), &o)?;
            writeln!(
                out,
                "fiox history: wrote {}: {} run(s), {} metric page(s), {} series, {} change \
                 point(s)",
                output.join("index.html").display(),
                w.runs,
                w.metrics,
                w.series,
                w.changes
            )?;
        }
        Cmd::Import {
            paths,
            from_host,
            from_kernel,
            add_tag,
        } => {
            let o = import::Options {
                source: Source::Import,
                host: from_host,
                kernel: from_kernel,
                tags: add_tag,
                ..Default::default()
            };
            let r = import::import(&mut store, &paths, &o)?;
            writeln!(
                out,
                "fiox history: {} run(s) added, {} already recorded{}",
                r.added.len(),
                r.known.len(),
                if r.skipped.is_empty() {
                    String::new()
                } else {
                    format!(", {} file(s) without a result skipped", r.skipped.len())
                }
            )?;
        }
        Cmd::Export { format, sel } => {
            let format = match format {
                ExportFormat::Jsonl => export::Format::Jsonl,
                ExportFormat::Csv => export::Format::Csv,
            };
            export::export(&store, format, &sel.filter(), &mut out)?;
        }
        Cmd::Gc {
            keep,
            older_than,
            tagged,
            dry_run,
        } => {
            if keep.is_none() && older_than.is_none() {
                bail!("fiox history gc: say what to remove: --keep N and/or --older-than TIME");
            }
            let n = store.gc(&Gc {
                keep,
                before: older_than,
                tagged,
                dry_run,
            })?;
            let verb = if dry_run { "would remove" } else { "removed" };
            writeln!(out, "fiox history: {verb} {n} run(s)")?;
        }
        Cmd::Regressions {
            sel,
            metric,
            alpha,
            threshold,
            window,
            all,
        } => {
            let o = regress::Options {
                alpha,
                threshold: threshold / 100.0,
                window: window as usize,
                min_side: (window as usize / 2).max(2),
            };
            let metrics = default_metrics(metric);
            let found = sides::regressions(&store, &sel.filter(), &metrics, &o, all)?;
            if found.is_empty() {
                let what = if all { "change" } else { "regression" };
                writeln!(
                    out,
                    "fiox history: no {what} across kernels or commits (alpha {} per series, \
                     threshold {}%)",
                    o.alpha, threshold
                )?;
            } else {
                out.write_all(render::regressions(&found).as_bytes())?;
            }
        }
        Cmd::Compare { a, b, metric } => {
            // Both selections are checked before either is read.
            let filters = [
                (Filter::parse_selector(&a)?, a),
                (Filter::parse_selector(&b)?, b),
            ];
            let sides = filters
                .iter()
                .map(|(f, name)| Ok(sides::side(&store, f, name)?))
                .collect::<Result<Vec<_>>>()?;
            let c = compare::compare(
                &sides,
                &compare::Options {
                    metrics: compare::Metrics::parse(&metric),
                    ..compare::Options::default()
                },
            )?;
            out.write_all(compare::to_text(&c).as_bytes())?;
        }
    }
    out.flush()?;
    Ok(0)
}

/// The metrics asked for, else compare's defaults.
fn default_metrics(asked: Vec<String>) -> Vec<String> {
    if asked.is_empty() {
        DEFAULT_METRICS.iter().map(|m| m.to_string()).collect()
    } else {
        asked
    }
}

/// `trend --chart FILE`: the chart as SVG, PNG or an HTML page, by FILE's extension.
fn write_trend_chart(path: &Path, metric: &str, points: &[query::Point]) -> Result<()> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let title = format!("fiox history trend {metric}");
    let t = chart::trend(metric, &title, points, &regress::Options::default());
    let svg = chart::svg(&t.chart);
    let bytes = match ext.as_str() {
        "svg" => svg.into_bytes(),
        "png" => fiox_plot::png::svg_to_png(&svg, 2.0)?,
        "html" | "htm" => site::shell(&title, &format!("<figure>{svg}</figure>")).into_bytes(),
        _ => bail!(
            "fiox history trend --chart {}: name a .svg, .png or .html file",
            path.display()
        ),
    };
    fiox_plot::write_file(path, &bytes, fiox_guard::Named::ByUser)?;
    Ok(())
}

/// Whether a plain run records: `--history` or FIOX_HISTORY=1.
pub fn plain_run_records(switch: bool) -> bool {
    switch || std::env::var_os("FIOX_HISTORY").is_some_and(|v| v == "1")
}

/// What a recording adds to the result.
pub struct Recording<'a> {
    pub source: Source,
    /// `--history=DB` of a plain run.
    pub db: Option<&'a Path>,
    pub job_file: Option<String>,
}

impl Recording<'_> {
    /// A recording into the default database.
    pub fn new(source: Source) -> Recording<'static> {
        Recording {
            source,
            db: None,
            job_file: None,
        }
    }
}

/// Record a run of `jobs` on this machine from its result (as its JSON report, with
/// `fiox.env`).
pub fn record_result(
    run: &fiox_stats::RunResult,
    jobs: &[fiox_job::JobSpec],
    r: &Recording,
) -> Result<i64> {
    let env = serde_json::json!({ "env": crate::telemetry::env(jobs) });
    let text = crate::output::report_text(run, fiox_job::OutputFormat::Json, &[], Some(&env), 1);
    record_text(text, r)
}

/// A plain run's recording, when `--history` or FIOX_HISTORY=1 asks for it: its JSON report
/// (with `fiox.env`, made here when the run's own JSON did not carry it).
pub fn record_plain_run(
    inv: &fiox_job::Invocation,
    run: &fiox_stats::RunResult,
    notes: &[String],
    fiox: Option<&serde_json::Value>,
) -> Result<()> {
    let s = &inv.settings;
    if !plain_run_records(s.history) {
        return Ok(());
    }
    let mut extra = fiox.cloned().unwrap_or_else(|| serde_json::json!({}));
    if extra.get("env").is_none() {
        extra["env"] = crate::telemetry::env(&inv.jobs);
    }
    let json = fiox_job::OutputFormat::Json;
    let text = crate::output::report_text(run, json, notes, Some(&extra), s.terse_version);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = Recording {
        source: Source::Run,
        db: s.history_db.as_deref().map(Path::new),
        job_file: job_files_text(&args),
    };
    record_text(text, &r)?;
    Ok(())
}

/// Record one result (`text`: its fio-shaped JSON) of a run on this machine.
pub fn record_text(text: String, r: &Recording) -> Result<i64> {
    let mut rec = Record::from_json(r.source, text, "the run's result")?.on_this_machine();
    rec.job_file = r.job_file.clone();
    rec.options = std::env::args().collect();
    let mut store = open(r.db)?;
    Ok(store.insert(&rec)?.0)
}

/// Record an experiment's results directory (each finished run; runs recorded by an earlier,
/// interrupted invocation are recognised and kept once).
pub fn record_experiment(out: &Path, experiment_file: &Path) -> Result<()> {
    let job_file = fiox_guard::input::read_text(experiment_file, 1 << 20).ok();
    let o = import::Options {
        source: Source::Experiment,
        job_file,
        options: std::env::args().collect(),
        ..Default::default()
    };
    let mut store = open(None)?;
    import::import(&mut store, &[out.to_path_buf()], &o)
        .with_context(|| format!("recording {} in the history", out.display()))?;
    Ok(())
}

/// The text of the job files named on a plain run's command line (for the record).
pub fn job_files_text(args: &[String]) -> Option<String> {
    let mut text = String::new();
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let p = Path::new(a);
        if let Ok(t) = fiox_guard::input::read_text(p, 1 << 20) {
            text.push_str(&format!("# {a}\n{t}"));
        }
    }
    (!text.is_empty()).then_some(text)
}
