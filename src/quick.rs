//! `fiox quick [DIR]`: a six-test disk check in the spirit of CrystalDiskMark — SEQ1M Q8T1,
//! RND4K Q32T1 and RND4K Q1T1, each read and write — on a temporary file in DIR, with a compact
//! table (MB/s, IOPS, p50/p99 latency) or JSON. Direct I/O where the filesystem allows it,
//! io_uring where the kernel allows it; each fallback is stated in the output. A test that
//! failed, was interrupted or did not run says so (status and error, no numbers), and the exit
//! status is the number of failed tests (130 when a signal stopped the set). The default size
//! shrinks to the free space of DIR (with a note); a `--size` that does not fit is refused.
//! The file is recorded (fiox-testbed's scratch record) before it exists and removed at the
//! end, on any signal (a second one forces the exit and still removes it), and after a
//! kill -9 by the next `fiox quick` or `fiox testbed cleanup`.

use anyhow::{bail, Context, Result};
use fiox_job::{BsSpec, Engine, EtaMode, JobSpec, PerDir, RwMode, RwSpec, SizeSpec};
use fiox_runner::RunOptions;
use fiox_testbed::managed::scratch::{self, ScratchFile};
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
    /// `--size` was given (the default shrinks to the free space; a given size is refused).
    size_given: bool,
    runtime: Duration,
    json: bool,
    /// Record the results in the history (unless --no-history).
    history: bool,
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
the end, also after Ctrl-C (a kill -9 leaves it to the next `fiox quick` or `fiox testbed \
cleanup`). The default size shrinks to the free space of DIR. Exit status: the number of \
failed tests, 130 after a signal."
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
    /// Do not record the results in the history (fiox history)
    #[arg(long)]
    no_history: bool,
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
            size_given: self.size.is_some(),
            runtime: self.runtime.unwrap_or(Duration::from_secs(5)),
            json: self.output_format == QuickFormat::Json,
            history: !self.no_history,
        }
    }
}

/// Where and how the tests run, after probing the filesystem and the kernel.
struct Setup {
    file: PathBuf,
    direct: bool,
    engine: Engine,
    notes: Vec<String>,
}

/// Remove the test files of earlier runs that were killed (their scratch records remain), then
/// make this run's file: recorded before it exists, and removed by a forced exit too.
fn probe(a: &mut Args) -> Result<(Setup, ScratchFile)> {
    if !a.dir.is_dir() {
        bail!("quick: {} is not a directory", a.dir.display());
    }
    let mut notes = Vec::new();
    match scratch::cleanup_orphans() {
        Ok(r) => {
            for f in &r.removed {
                notes.push(format!(
                    "removed {f}, left by an earlier fiox quick that was killed"
                ));
            }
            for (f, e) in &r.failed {
                fiox_guard::eprintln!("fiox quick: an earlier run's file {f}: {e}");
            }
        }
        Err(e) => fiox_guard::eprintln!("fiox quick: cannot check for earlier runs' files: {e}"),
    }
    // Show where the test really ran (`.` says little in a saved result).
    let dir = a.dir.canonicalize().unwrap_or_else(|_| a.dir.clone());
    if let Some(n) = fit_free_space(a, &dir)? {
        notes.push(n);
    }
    let file = dir.join(format!(".fiox-quick-{}.tmp", std::process::id()));
    if file.exists() {
        bail!("quick: {} already exists; not touching it", file.display());
    }
    let (scratch, f) = ScratchFile::make(&file)
        .with_context(|| format!("quick: cannot create its test file {}", file.display()))?;
    fiox_runner::remove_on_forced_exit(&file);
    let direct = direct_supported(&f, &file)?;
    drop(f);
    if !direct {
        notes.push(format!(
            "the filesystem of {} refuses O_DIRECT: buffered I/O, results include the page cache",
            a.dir.display()
        ));
    }
    let probe_job = JobSpec {
        ioengine: Engine::IoUring.into(),
        iodepth: 32,
        direct,
        ..JobSpec::default()
    };
    let engine = match fiox_engine::create(&probe_job) {
        Ok(_) => Engine::IoUring,
        Err(e) => {
            notes.push(format!(
                "io_uring is unavailable ({e}); queue depths are emulated with psync threads \
                 (QnT1 runs n threads at depth 1)"
            ));
            Engine::Psync
        }
    };
    let setup = Setup {
        file,
        direct,
        engine,
        notes,
    };
    Ok((setup, scratch))
}

/// The smallest file the set can use (a SEQ1M test needs room for its queue).
const MIN_SIZE: u64 = 2 << 20;

/// Check the file fits in the free space of `dir` (with 5% to spare for the filesystem's own
/// blocks): the default size shrinks to fit (a note says so); a `--size` that does not fit is
/// refused, before anything is laid out. A filesystem without a limit (ramfs) is not checked.
fn fit_free_space(a: &mut Args, dir: &Path) -> Result<Option<String>> {
    let Some(free) = fiox_engine::sys::fs_free_bytes(dir)
        .with_context(|| format!("quick: cannot read the free space of {}", dir.display()))?
    else {
        return Ok(None);
    };
    let usable = free / 20 * 19;
    if a.size <= usable {
        return Ok(None);
    }
    let units = fiox_report::units::Units::default();
    let fit = usable & !((1 << 20) - 1);
    if a.size_given || fit < MIN_SIZE {
        bail!(
            "quick: {} has {} free, less than the {} test file (--size){}",
            dir.display(),
            units.bytes(free),
            units.bytes(a.size),
            if fit >= MIN_SIZE {
                format!("; try --size={}m", fit >> 20)
            } else {
                format!("; the tests need at least {}", units.bytes(MIN_SIZE))
            }
        );
    }
    let note = format!(
        "{} has {} free: the test file is {} instead of {}",
        dir.display(),
        units.bytes(free),
        units.bytes(fit),
        units.bytes(a.size)
    );
    a.size = fit;
    Ok(Some(note))
}

/// Whether the filesystem allows O_DIRECT on the test file (open as `f`, just created).
fn direct_supported(f: &std::fs::File, file: &Path) -> Result<bool> {
    match fiox_guard::named::reopen(f, libc::O_RDWR | libc::O_DIRECT) {
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
            let (depth, threads) = if s.engine == Engine::Psync {
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
    let mut a = args.resolve();
    // Before the file exists: a signal from here on stops the run and the file goes with it.
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    let (mut s, scratch) = probe(&mut a)?;
    if !a.json {
        fiox_guard::println!(
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
    if s.engine == Engine::IoUring && !outcome.interrupted && engine_failed {
        // io_uring can be set up yet refused at submission (seccomp, old kernels).
        s.notes.push(format!(
            "io_uring failed during the run ({}); the tests were repeated with psync threads",
            outcome.errors[0]
        ));
        s.engine = Engine::Psync;
        outcome = run_set(&a, &s);
    }
    // The file was fiox's from its creation: removed only while it is that inode.
    let file = s.file.clone();
    if let Err(e) = scratch.remove() {
        fiox_guard::eprintln!("fiox quick: cannot remove {}: {e}", file.display());
    }
    fiox_runner::forget_on_forced_exit(&file);
    fiox_runner::exit_if_forced();
    for e in &outcome.errors {
        fiox_guard::eprintln!("fiox quick: {e}");
    }
    let rows = rows(&outcome.result, outcome.interrupted, a.runtime);
    let mut notes = s.notes.clone();
    let mut codes = Vec::new();
    for w in outcome.result.jobs.iter().flat_map(|j| &j.warnings) {
        if !codes.contains(&w.code) {
            codes.push(w.code);
            notes.push(format!("{} ({})", w.message, w.fix));
        }
    }
    let s = Setup { notes, ..s };
    if a.json {
        fiox_guard::println!("{}", serde_json::to_string_pretty(&to_json(&a, &s, &rows))?);
    } else {
        fiox_guard::print!("{}", table(&rows, &s.notes));
    }
    if a.history
        && !outcome.interrupted
        && !rows.iter().any(|r| matches!(r.status, Status::Failed(_)))
    {
        // Only a set whose every test ran is a result worth keeping.
        let r = crate::history::Recording::new(fiox_history::Source::Quick);
        crate::history::record_result(&outcome.result, &jobs(&a, &s), &r)?;
    }
    Ok(exit_code(&rows, outcome.interrupted))
}

/// 130 after a signal; else the number of failed tests (0 when all passed), as fio's exit
/// status counts failed jobs.
fn exit_code(rows: &[Row], interrupted: bool) -> i32 {
    if interrupted {
        130
    } else {
        rows.iter()
            .filter(|r| matches!(r.status, Status::Failed(_)))
            .count() as i32
    }
}

/// Run the whole set once (the file stays for a second set; the caller removes it).
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
    fiox_runner::run(&jobs(a, s), &opts, &mut |_| {})
}

/// What became of one test.
#[derive(Debug, Clone, PartialEq)]
enum Status {
    /// It ran its whole time: the numbers are a measure.
    Ok,
    /// It failed (the job's error): no numbers.
    Failed(String),
    /// A signal stopped it before its time was up: no numbers.
    Interrupted,
    /// A signal stopped the set before it started.
    NotRun,
}

impl Status {
    fn name(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed(_) => "failed",
            Status::Interrupted => "interrupted",
            Status::NotRun => "not run",
        }
    }
}

/// One line of the table: a test, its status and, when it passed, its measure.
struct Row {
    test: String,
    dir: &'static str,
    status: Status,
    mb_s: f64,
    iops: f64,
    p50_ns: u64,
    p99_ns: u64,
}

/// The rows of a run, in test order (the runner reports only the jobs that started). After a
/// signal (`interrupted`) the tests ran one after the other: those before the last one that
/// started passed, that one was interrupted unless it ran its whole `runtime`, and the ones
/// after it did not run.
fn rows(run: &fiox_stats::RunResult, interrupted: bool, runtime: Duration) -> Vec<Row> {
    let started = |j: &fiox_stats::JobResult| {
        j.runtime_ms > 0 || j.dirs.read.total_ios > 0 || j.dirs.write.total_ios > 0
    };
    let planned = ["read", "write"]
        .into_iter()
        .flat_map(|dir| TESTS.iter().map(move |t| (t.name, dir)));
    let found: Vec<_> = planned
        .map(|(test, dir)| {
            let name = format!("{test} {dir}");
            (test, dir, run.jobs.iter().find(|j| j.name == name))
        })
        .collect();
    let last_started = found.iter().rposition(|(_, _, j)| j.is_some_and(started));
    let mut out = Vec::new();
    for (i, (test, dir, j)) in found.into_iter().enumerate() {
        let Some(j) = j else {
            out.push(Row::without_numbers(test, dir, Status::NotRun));
            continue;
        };
        let d = if dir == "write" {
            &j.dirs.write
        } else {
            &j.dirs.read
        };
        let status = if j.error != 0 {
            Status::Failed(if j.verror.is_empty() {
                std::io::Error::from_raw_os_error(j.error).to_string()
            } else {
                j.verror.clone()
            })
        } else if !interrupted {
            Status::Ok
        } else {
            match last_started {
                Some(l) if i < l => Status::Ok,
                Some(l) if i == l && d.runtime_ms >= runtime.as_millis() as u64 => Status::Ok,
                Some(l) if i == l => Status::Interrupted,
                // Stopped while the first test laid out its file.
                None if i == 0 => Status::Interrupted,
                _ => Status::NotRun,
            }
        };
        if status != Status::Ok {
            out.push(Row::without_numbers(test, dir, status));
            continue;
        }
        let secs = d.runtime_ms.max(1) as f64 / 1000.0;
        let lat = if d.lat.n > 0 { &d.lat } else { &d.clat };
        out.push(Row {
            test: test.to_string(),
            dir,
            status,
            mb_s: d.io_bytes as f64 / 1e6 / secs,
            iops: d.total_ios as f64 / secs,
            p50_ns: lat.hist.percentile(50.0),
            p99_ns: lat.hist.percentile(99.0),
        });
    }
    out
}

impl Row {
    fn without_numbers(test: &str, dir: &'static str, status: Status) -> Row {
        Row {
            test: test.to_string(),
            dir,
            status,
            mb_s: 0.0,
            iops: 0.0,
            p50_ns: 0,
            p99_ns: 0,
        }
    }
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
        let head = format!("{:<12} {:<5}", r.test, r.dir);
        match &r.status {
            Status::Ok => s.push_str(&format!(
                "{head} {:>10.1} {:>10.0} {:>11} {:>11}\n",
                r.mb_s,
                r.iops,
                lat_text(r.p50_ns),
                lat_text(r.p99_ns)
            )),
            Status::Failed(e) => s.push_str(&format!("{head}     FAILED: {e}\n")),
            other => s.push_str(&format!("{head}     {}\n", other.name())),
        }
    }
    for n in notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

fn to_json(a: &Args, s: &Setup, rows: &[Row]) -> serde_json::Value {
    let test = |r: &Row| {
        let ok = r.status == Status::Ok;
        let num = |v: serde_json::Value| if ok { v } else { serde_json::Value::Null };
        json!({
            "test": r.test,
            "rw": r.dir,
            "status": r.status.name().replace(' ', "_"),
            "error": match &r.status {
                Status::Failed(e) => json!(e),
                _ => serde_json::Value::Null,
            },
            "mb_per_s": num(json!(r.mb_s)),
            "iops": num(json!(r.iops)),
            "lat_p50_ns": num(json!(r.p50_ns)),
            "lat_p99_ns": num(json!(r.p99_ns)),
        })
    };
    json!({
        "fiox_quick": {
            "version": env!("CARGO_PKG_VERSION"),
            "directory": s.file.parent().unwrap_or(&a.dir).display().to_string(),
            "size": a.size,
            "runtime_ms": a.runtime.as_millis() as u64,
            "ioengine": s.engine.name(),
            "direct": s.direct,
            "notes": s.notes,
            "failed": rows.iter().filter(|r| matches!(r.status, Status::Failed(_))).count(),
            "tests": rows.iter().map(test).collect::<Vec<_>>(),
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

    /// The six jobs of a set as the runner reports them; `f` adjusts each (index, job).
    fn run_of(f: impl Fn(usize, &mut fiox_stats::JobResult)) -> fiox_stats::RunResult {
        let mut jobs = Vec::new();
        for (i, name) in [
            "SEQ1M Q8T1 read",
            "RND4K Q32T1 read",
            "RND4K Q1T1 read",
            "SEQ1M Q8T1 write",
            "RND4K Q32T1 write",
            "RND4K Q1T1 write",
        ]
        .into_iter()
        .enumerate()
        {
            let mut j = fiox_stats::JobResult {
                name: name.into(),
                runtime_ms: 1000,
                ..Default::default()
            };
            let d = if i < 3 {
                &mut j.dirs.read
            } else {
                &mut j.dirs.write
            };
            (d.runtime_ms, d.total_ios, d.io_bytes) = (1000, 1000, 4_096_000);
            f(i, &mut j);
            jobs.push(j);
        }
        fiox_stats::RunResult {
            jobs,
            ..Default::default()
        }
    }

    fn json_of(rows: &[Row]) -> serde_json::Value {
        let a = parse_args(&args(&[])).unwrap().unwrap();
        let s = Setup {
            file: "/d/f".into(),
            direct: true,
            engine: Engine::IoUring,
            notes: vec![],
        };
        to_json(&a, &s, rows)["fiox_quick"].clone()
    }

    /// A test that failed (ENOSPC while writing, its numbers partial and inconsistent) is shown
    /// as failed with its error and no numbers, in the table and the JSON; the exit status
    /// counts the failed tests. A failed write with no I/O stays a write row.
    #[test]
    fn failed_tests_show_their_error_and_no_numbers() {
        let run = run_of(|i, j| {
            if i >= 4 {
                j.error = libc::ENOSPC;
                j.verror = "No space left on device: write offset=4096".into();
                j.dirs.write.total_ios = if i == 4 { 33 } else { 0 };
            }
        });
        let rows = rows(&run, false, Duration::from_secs(1));
        assert_eq!(rows[5].dir, "write");
        assert_eq!(exit_code(&rows, false), 2);
        let t = table(&rows, &[]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].contains("4.1"), "{t}");
        assert_eq!(
            lines[5],
            "RND4K Q32T1  write     FAILED: No space left on device: write offset=4096"
        );
        assert!(lines[6].starts_with("RND4K Q1T1   write     FAILED"), "{t}");
        let v = json_of(&rows);
        assert_eq!(v["failed"], 2);
        assert_eq!(v["tests"][0]["status"], "ok");
        assert_eq!(v["tests"][0]["iops"], 1000.0);
        assert!(v["tests"][0]["error"].is_null());
        let t4 = &v["tests"][4];
        assert_eq!(t4["status"], "failed");
        assert_eq!(t4["error"], "No space left on device: write offset=4096");
        for k in ["mb_per_s", "iops", "lat_p50_ns", "lat_p99_ns"] {
            assert!(t4[k].is_null(), "{k}: {t4}");
        }
        // An errno without a description still names the error.
        let run = run_of(|i, j| j.error = if i == 0 { libc::EIO } else { 0 });
        let rows = super::rows(&run, false, Duration::from_secs(1));
        assert!(
            matches!(&rows[0].status, Status::Failed(e) if e.contains("Input/output error")),
            "{:?}",
            rows[0].status
        );
    }

    /// After a signal: the tests before the one running passed, it was interrupted, the rest
    /// did not run (they used to print as 0.0 rows).
    #[test]
    fn an_interrupted_set_shows_which_tests_did_not_run() {
        let mut run = run_of(|i, j| {
            if i == 1 {
                j.dirs.read.runtime_ms = 300;
            }
        });
        // The runner reports the jobs that started.
        run.jobs.truncate(2);
        let rows = rows(&run, true, Duration::from_secs(1));
        let st: Vec<&str> = rows.iter().map(|r| r.status.name()).collect();
        assert_eq!(
            st,
            [
                "ok",
                "interrupted",
                "not run",
                "not run",
                "not run",
                "not run"
            ]
        );
        assert_eq!(exit_code(&rows, true), 130);
        let t = table(&rows, &[]);
        assert!(t.contains("RND4K Q32T1  read      interrupted\n"), "{t}");
        assert!(t.contains("RND4K Q1T1   write     not run\n"), "{t}");
        assert!(!t.contains(" 0.0 "), "{t}");
        let v = json_of(&rows);
        assert_eq!(v["tests"][2]["status"], "not_run");
        assert!(v["tests"][2]["mb_per_s"].is_null());
        // Stopped while the first test laid out its file: nothing measured at all.
        let none = run_of(|_, j| {
            *j = fiox_stats::JobResult {
                name: j.name.clone(),
                ..Default::default()
            }
        });
        let rows = super::rows(&none, true, Duration::from_secs(1));
        assert_eq!(rows[0].status, Status::Interrupted);
        assert_eq!(rows[1].status, Status::NotRun);
    }

    /// The free-space check: the default size shrinks to 95% of the free space (whole MiB)
    /// with a note, a given --size that does not fit is refused naming a size that fits, and
    /// a file that fits is left alone.
    #[test]
    fn the_test_file_fits_the_free_space() {
        let dir = std::env::temp_dir();
        let free = fiox_engine::sys::fs_free_bytes(&dir).unwrap();
        let Some(free) = free else {
            return; // no size limit to check against
        };
        let mut a = parse_args(&args(&[])).unwrap().unwrap();
        a.size = free * 2;
        let note = fit_free_space(&mut a, &dir).unwrap().expect("a note");
        assert!(
            a.size <= free / 20 * 19 && a.size.is_multiple_of(1 << 20),
            "{}",
            a.size
        );
        assert!(note.contains("free: the test file is"), "{note}");
        let mut given = parse_args(&args(&["--size=2m"])).unwrap().unwrap();
        given.size = free * 2;
        let e = fit_free_space(&mut given, &dir).unwrap_err().to_string();
        assert!(
            e.contains("free, less than the") && e.contains("try --size="),
            "{e}"
        );
        assert_eq!(given.size, free * 2);
        let mut small = parse_args(&args(&["--size=2m"])).unwrap().unwrap();
        assert!(fit_free_space(&mut small, &dir).unwrap().is_none());
        assert_eq!(small.size, 2 << 20);
    }

    #[test]
    fn psync_fallback_uses_threads() {
        let a = parse_args(&args(&[])).unwrap().unwrap();
        let s = Setup {
            file: "/nonexistent/f".into(),
            direct: false,
            engine: Engine::Psync,
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
