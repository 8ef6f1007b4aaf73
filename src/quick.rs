//! `fiox quick [DIR]`: a six-test disk check in the spirit of CrystalDiskMark — SEQ1M Q8T1,
//! RND4K Q32T1 and RND4K Q1T1, each read and write — on a temporary file in DIR, with a compact
//! table (MB/s, IOPS, p50/p99 latency) or JSON. Direct I/O where the filesystem allows it,
//! io_uring where the kernel allows it; each fallback is stated in the output. The file is
//! always removed at the end, also after Ctrl-C.

use anyhow::{bail, Context, Result};
use fiox_job::{BsSpec, EtaMode, JobSpec, PerDir, RwMode, RwSpec, SizeSpec};
use fiox_runner::RunOptions;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One test of the set.
struct Test {
    name: &'static str,
    bs: u64,
    depth: u32,
    random: bool,
}

const TESTS: [Test; 3] = [
    Test {
        name: "SEQ1M Q8T1",
        bs: 1 << 20,
        depth: 8,
        random: false,
    },
    Test {
        name: "RND4K Q32T1",
        bs: 4096,
        depth: 32,
        random: true,
    },
    Test {
        name: "RND4K Q1T1",
        bs: 4096,
        depth: 1,
        random: true,
    },
];

struct Args {
    dir: PathBuf,
    size: u64,
    runtime: Duration,
    json: bool,
}

/// What `--output-format` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QuickFormat {
    Normal,
    Json,
}

/// `fiox quick`'s command line.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "DIR defaults to the current directory. The test file is removed at \
the end, also after Ctrl-C."
)]
pub struct QuickArgs {
    /// Directory for the temporary test file (default .)
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Size of the test file (default 1g, at least 2m)
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    size: Option<u64>,
    /// Run time of each test (default 5)
    #[arg(long, value_name = "SECONDS", value_parser = parse_runtime)]
    runtime: Option<Duration>,
    /// normal (a table, the default) or json
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = QuickFormat::Normal,
          hide_default_value = true)]
    output_format: QuickFormat,
}

/// `--size`: fio's size syntax, at least 2 MiB (a SEQ1M test needs room for its queue).
fn parse_size(v: &str) -> Result<u64, String> {
    let n = fiox_job::value::parse_size(v, 1024).map_err(|e| e.to_string())?;
    if n < (2 << 20) {
        return Err("at least 2 MiB (a SEQ1M test needs room for its queue)".into());
    }
    Ok(n)
}

/// `--runtime`: fio's time syntax, seconds by default, above 0.
fn parse_runtime(v: &str) -> Result<Duration, String> {
    let us = fiox_job::value::parse_time_us(v, 1_000_000).map_err(|e| e.to_string())?;
    if us == 0 {
        return Err("must be above 0".into());
    }
    Ok(Duration::from_micros(us))
}

impl QuickArgs {
    fn resolve(self) -> Args {
        Args {
            dir: self.dir.unwrap_or_else(|| PathBuf::from(".")),
            size: self.size.unwrap_or(1 << 30),
            runtime: self.runtime.unwrap_or(Duration::from_secs(5)),
            json: self.output_format == QuickFormat::Json,
        }
    }
}

/// Where and how the tests run, after probing the filesystem and the kernel.
struct Setup {
    file: PathBuf,
    direct: bool,
    engine: &'static str,
    notes: Vec<String>,
}

fn probe(a: &Args) -> Result<Setup> {
    if !a.dir.is_dir() {
        bail!("quick: {} is not a directory", a.dir.display());
    }
    // Show where the test really ran (`.` says little in a saved result).
    let dir = a.dir.canonicalize().unwrap_or_else(|_| a.dir.clone());
    let file = dir.join(format!(".fiox-quick-{}.tmp", std::process::id()));
    if file.exists() {
        bail!("quick: {} already exists; not touching it", file.display());
    }
    let mut notes = Vec::new();
    let direct = direct_supported(&file)?;
    if !direct {
        notes.push(format!(
            "the filesystem of {} refuses O_DIRECT: buffered I/O, results include the page cache",
            a.dir.display()
        ));
    }
    let probe_job = JobSpec {
        ioengine: "io_uring".into(),
        iodepth: 32,
        direct,
        ..JobSpec::default()
    };
    let engine = match fiox_engine::create(&probe_job) {
        Ok(_) => "io_uring",
        Err(e) => {
            notes.push(format!(
                "io_uring is unavailable ({e}); queue depths are emulated with psync threads \
                 (QnT1 runs n threads at depth 1)"
            ));
            "psync"
        }
    };
    Ok(Setup {
        file,
        direct,
        engine,
        notes,
    })
}

/// Create `file` (exclusively, through the guard) and open it again with O_DIRECT to learn
/// whether the filesystem allows it; removes it again (that very inode).
fn direct_supported(file: &Path) -> Result<bool> {
    let (dir, name) = fiox_guard::Dir::open_parent(file)?;
    let f = dir
        .create_file(&name, 0o644, fiox_guard::Layout::Complete)
        .with_context(|| "quick: cannot create its test file".to_string())?;
    let id = fiox_guard::Identity::of(&f.metadata()?);
    let direct = fiox_guard::named::reopen(&f, libc::O_RDWR | libc::O_DIRECT);
    drop(f);
    dir.remove_if(&name, &id)
        .with_context(|| format!("removing {}", file.display()))?;
    match direct {
        Ok(_) => Ok(true),
        // tmpfs and some FUSE filesystems refuse O_DIRECT.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(false),
        Err(e) => Err(e).with_context(|| format!("quick: cannot open {}", file.display())),
    }
}

/// The jobs of the whole set, one stonewalled group per test and direction.
fn jobs(a: &Args, s: &Setup) -> Vec<JobSpec> {
    let mut out = Vec::new();
    let mut group = 0;
    for write in [false, true] {
        for t in &TESTS {
            let (depth, threads) = if s.engine == "psync" {
                (1, t.depth)
            } else {
                (t.depth, 1)
            };
            for clone in 0..threads {
                out.push(job(a, s, t, write, group, depth, clone, threads, out.len()));
            }
            group += 1;
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn job(
    a: &Args,
    s: &Setup,
    t: &Test,
    write: bool,
    group: u32,
    depth: u32,
    clone: u32,
    threads: u32,
    index: usize,
) -> JobSpec {
    let mode = match (t.random, write) {
        (false, false) => RwMode::Read,
        (false, true) => RwMode::Write,
        (true, false) => RwMode::RandRead,
        (true, true) => RwMode::RandWrite,
    };
    let mut j = JobSpec {
        name: format!("{} {}", t.name, if write { "write" } else { "read" }),
        index: index as u32,
        clone_index: clone,
        numjobs: threads,
        group_id: group,
        stonewall: clone == 0,
        rw: RwSpec { mode, n: 0 },
        bs: PerDir::all(BsSpec::fixed(t.bs)),
        size: Some(SizeSpec::Bytes(a.size)),
        thread: true,
        ioengine: s.engine.into(),
        iodepth: depth,
        iodepth_batch_complete_max: depth,
        iodepth_low: depth,
        direct: s.direct,
        ..JobSpec::default()
    };
    j.files.filenames = vec![s.file.display().to_string()];
    j.timing.runtime = Some(a.runtime);
    j.timing.time_based = true;
    j.stats.group_reporting = true;
    // Its table prints lat's median and p99: the runner keeps lat's histogram only when asked.
    j.stats.lat_percentiles = true;
    // Random tests may revisit blocks within the time limit: no random map needed.
    j.rand.norandommap = true;
    j
}

/// Entry point of `fiox quick`; returns the exit code.
pub fn main(args: QuickArgs) -> Result<i32> {
    let a = args.resolve();
    let mut s = probe(&a)?;
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    if !a.json {
        println!(
            "fiox quick: {} ({} file, {:?} per test, {}, {} I/O)",
            s.file.parent().unwrap_or(&a.dir).display(),
            fiox_report::units::Units::default().bytes(a.size),
            a.runtime,
            s.engine,
            if s.direct { "direct" } else { "buffered" }
        );
    }
    let mut outcome = run_set(&a, &s);
    let engine_failed = outcome.errors.iter().any(|e| {
        matches!(e, fiox_runner::RunError::Engine(_)) || e.to_string().contains("io_uring")
    });
    if s.engine == "io_uring" && !outcome.interrupted && engine_failed {
        // io_uring can be set up yet refused at submission (seccomp, old kernels).
        s.notes.push(format!(
            "io_uring failed during the run ({}); the tests were repeated with psync threads",
            outcome.errors[0]
        ));
        s.engine = "psync";
        outcome = run_set(&a, &s);
    }
    for e in &outcome.errors {
        eprintln!("fiox quick: {e}");
    }
    let rows = rows(&outcome.result);
    let mut notes = s.notes.clone();
    let mut codes = Vec::new();
    for w in outcome.result.jobs.iter().flat_map(|j| &j.warnings) {
        if !codes.contains(&w.code) {
            codes.push(w.code.clone());
            notes.push(format!("{} ({})", w.message, w.fix));
        }
    }
    let s = Setup { notes, ..s };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&a, &s, &rows))?);
    } else {
        print!("{}", table(&rows, &s.notes));
    }
    Ok(if outcome.interrupted {
        130
    } else if outcome.errors.is_empty() {
        0
    } else {
        1
    })
}

/// Run the whole set once and remove the file, whatever happened (fiox created it under a
/// fresh name).
fn run_set(a: &Args, s: &Setup) -> fiox_runner::RunOutcome {
    let opts = RunOptions {
        messages: !a.json,
        eta: if a.json {
            EtaMode::Never
        } else {
            EtaMode::Auto
        },
        ..Default::default()
    };
    let outcome = fiox_runner::run(&jobs(a, s), &opts, &mut |_| {});
    // The runner made the file (marked as fiox's): removed only while it is that file.
    if let Err(e) = fiox_guard::output::remove(&s.file) {
        eprintln!("fiox quick: cannot remove {}: {e}", s.file.display());
    }
    outcome
}

/// One measured line of the table.
struct Row {
    test: String,
    dir: &'static str,
    mb_s: f64,
    iops: f64,
    p50_ns: u64,
    p99_ns: u64,
}

fn rows(run: &fiox_stats::RunResult) -> Vec<Row> {
    let mut out = Vec::new();
    for j in &run.jobs {
        let (dir, d) = if j.dirs.write.total_ios > 0 {
            ("write", &j.dirs.write)
        } else {
            ("read", &j.dirs.read)
        };
        let secs = d.runtime_ms.max(1) as f64 / 1000.0;
        let lat = if d.lat.n > 0 { &d.lat } else { &d.clat };
        out.push(Row {
            test: j
                .name
                .rsplit_once(' ')
                .map(|x| x.0)
                .unwrap_or(&j.name)
                .to_string(),
            dir,
            mb_s: d.io_bytes as f64 / 1e6 / secs,
            iops: d.total_ios as f64 / secs,
            p50_ns: lat.hist.percentile(50.0),
            p99_ns: lat.hist.percentile(99.0),
        });
    }
    out
}

fn lat_text(ns: u64) -> String {
    match ns {
        0..=9_999 => format!("{:.2} us", ns as f64 / 1e3),
        10_000..=9_999_999 => format!("{:.0} us", ns as f64 / 1e3),
        _ => format!("{:.1} ms", ns as f64 / 1e6),
    }
}

fn table(rows: &[Row], notes: &[String]) -> String {
    let mut s = format!(
        "{:<12} {:<5} {:>10} {:>10} {:>11} {:>11}\n",
        "test", "", "MB/s", "IOPS", "p50 lat", "p99 lat"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<12} {:<5} {:>10.1} {:>10.0} {:>11} {:>11}\n",
            r.test,
            r.dir,
            r.mb_s,
            r.iops,
            lat_text(r.p50_ns),
            lat_text(r.p99_ns)
        ));
    }
    for n in notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

fn to_json(a: &Args, s: &Setup, rows: &[Row]) -> serde_json::Value {
    json!({
        "fiox_quick": {
            "version": env!("CARGO_PKG_VERSION"),
            "directory": s.file.parent().unwrap_or(&a.dir).display().to_string(),
            "size": a.size,
            "runtime_ms": a.runtime.as_millis() as u64,
            "ioengine": s.engine,
            "direct": s.direct,
            "notes": s.notes,
            "tests": rows.iter().map(|r| json!({
                "test": r.test,
                "rw": r.dir,
                "mb_per_s": r.mb_s,
                "iops": r.iops,
                "lat_p50_ns": r.p50_ns,
                "lat_p99_ns": r.p99_ns,
            })).collect::<Vec<_>>(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Cmd {
        #[command(flatten)]
        a: QuickArgs,
    }

    /// `fiox quick ARGS`' parsed switches, or clap's error.
    fn parse_args(v: &[&str]) -> Result<Option<Args>, clap::Error> {
        use clap::Parser;
        let c = Cmd::try_parse_from(std::iter::once("fiox quick").chain(v.iter().copied()))?;
        Ok(Some(c.a.resolve()))
    }

    fn args<'a>(v: &[&'a str]) -> Vec<&'a str> {
        v.to_vec()
    }

    #[test]
    fn parses_options() {
        let a = parse_args(&args(&[
            "/tmp",
            "--size=64m",
            "--runtime=2",
            "--output-format=json",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(a.dir, PathBuf::from("/tmp"));
        assert_eq!(a.size, 64 << 20);
        assert_eq!(a.runtime, Duration::from_secs(2));
        assert!(a.json);
        assert!(parse_args(&args(&["--bogus"])).is_err());
        assert!(parse_args(&args(&["--size=1k"])).is_err());
        assert_eq!(
            parse_args(&args(&["--help"])).err().map(|e| e.kind()),
            Some(clap::error::ErrorKind::DisplayHelp)
        );
        assert!(parse_args(&args(&["--runtime=0"])).is_err());
        assert!(parse_args(&args(&["/tmp", "/var"])).is_err());
        let e = parse_args(&args(&["--sise=1g"])).err().unwrap().to_string();
        assert!(e.contains("'--size'"), "a suggestion: {e}");
        // `--opt value` (the issue's `fiox quick DIR --size 64m --runtime 1` failed).
        let b = parse_args(&args(&[
            "/tmp",
            "--size",
            "64m",
            "--runtime",
            "2",
            "--output-format",
            "json",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (b.dir, b.size, b.runtime, b.json),
            (a.dir, a.size, a.runtime, a.json)
        );
        assert!(parse_args(&args(&["--size"])).is_err());
    }

    #[test]
    fn psync_fallback_uses_threads() {
        let a = parse_args(&args(&[])).unwrap().unwrap();
        let s = Setup {
            file: "/nonexistent/f".into(),
            direct: false,
            engine: "psync",
            notes: vec![],
        };
        let js = jobs(&a, &s);
        // (8 + 32 + 1) threads, read and write.
        assert_eq!(js.len(), 2 * 41);
        assert!(js.iter().all(|j| j.iodepth == 1));
        let groups: std::collections::BTreeSet<u32> = js.iter().map(|j| j.group_id).collect();
        assert_eq!(groups.len(), 6);
    }
}
