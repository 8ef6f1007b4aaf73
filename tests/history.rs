//! `fiox history` as a user runs it: recording (a plain run only with --history or
//! FIOX_HISTORY=1, quick unless --no-history), import, trend, export, regressions, compare,
//! and the errors a user meets.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod chromium;
mod harness;
#[path = "../crates/history/tests/support/pg.rs"]
mod pg;

use harness::*;
use std::path::Path;
use std::process::Command;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/history/tests/fixtures/fio-3.33-randrw-libaio.json"
);

/// fiox with its history in `db` and `extra` environment.
fn fiox_db(db: &str, extra: &[(&str, &str)], args: &[&str]) -> Run {
    let mut c = Command::new(fiox_bin());
    c.env("FIOX_HISTORY_DB", db).env_remove("FIOX_HISTORY");
    for (k, v) in extra {
        c.env(k, v);
    }
    Run::from(
        c.args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap(),
    )
}

/// A private directory for the database (the store refuses one others may write to).
fn private(d: &TempDir) -> String {
    let p = d.join("h");
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(&p).unwrap();
    format!("{p}/history.db")
}

const NULL_JOB: [&str; 5] = [
    "--name=nj",
    "--ioengine=null",
    "--rw=read",
    "--size=1m",
    "--output-format=json",
];

#[test]
fn a_plain_run_records_only_when_asked() {
    let d = TempDir::new("hist-run");
    let db = private(&d);
    let r = fiox_db(&db, &[], &NULL_JOB);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!Path::new(&db).exists(), "recorded without --history");
    let mut args = NULL_JOB.to_vec();
    args.push("--history");
    let r = fiox_db(&db, &[], &args);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let r = fiox_db(&db, &[("FIOX_HISTORY", "1")], &NULL_JOB);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    // A job file's text is recorded with the run.
    let job = d.join("j.fio");
    std::fs::write(&job, "[fj]\nioengine=null\nrw=randread\nsize=1m\n").unwrap();
    let r = fiox_db(&db, &[], &["--history", "--output-format=json", &job]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let list = fiox_db(&db, &[], &["history", "list"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let rows: Vec<&str> = list.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{}", list.stdout);
    assert!(rows.iter().all(|l| l.contains(" run ")), "{}", list.stdout);
    let show = fiox_db(&db, &[], &["history", "show", "3"]);
    assert!(show.stdout.contains("rw=randread"), "{}", show.stdout);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert!(show.stdout.contains(kernel.trim()), "{}", show.stdout);
    // --history=DB: another database.
    let other = format!("{}/other.db", Path::new(&db).parent().unwrap().display());
    let mut args = NULL_JOB.to_vec();
    let flag = format!("--history={other}");
    args.push(&flag);
    assert_eq!(fiox_db(&db, &[], &args).code, 0);
    let r = fiox_db(&other, &[], &["history", "list"]);
    assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
}

#[test]
fn quick_records_unless_told_not_to() {
    let d = TempDir::new("hist-quick");
    let db = private(&d);
    let dir = TempDir::new("hist-quick-dir");
    let quick = |extra: &[&str]| {
        let mut a = vec![
            "quick",
            dir.path().to_str().unwrap(),
            "--size=4m",
            "--runtime=100ms",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        fiox_db(&db, &[], &a)
    };
    let r = quick(&["--no-history"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!Path::new(&db).exists());
    let r = quick(&[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let list = fiox_db(&db, &[], &["history", "list"]);
    assert!(list.stdout.contains(" quick "), "{}", list.stdout);
    let t = fiox_db(&db, &[], &["history", "trend", "iops"]);
    // Six tests, each one direction.
    assert_eq!(t.stdout.lines().count(), 7, "{}", t.stdout);
}

/// A fiox-shaped result of job `rr` at `iops` on `kernel`.
fn result(iops: f64, kernel: &str, ts: i64) -> String {
    serde_json::json!({
        "fio version": "fiox-test", "timestamp": ts,
        "jobs": [{"jobname": "rr", "job options": {"filename": "/dev/fiox-t"},
                  "read": {"total_ios": 100, "iops": iops, "bw": iops * 4.0,
                           "lat_ns": {"mean": 1e9 / iops}}}],
        "fiox": {"env": {"hostname": "h1", "kernel": {"release": kernel}}}
    })
    .to_string()
}

/// A directory of 24 results: 4 kernels x 6 runs, IOPS 10% lower from 6.3 on, +-1% of noise.
fn step_results(d: &TempDir) -> String {
    let files = d.join("results");
    std::fs::create_dir(&files).unwrap();
    for i in 0..24 {
        let k = i / 6;
        let level = if k >= 2 { 900.0 } else { 1000.0 };
        let noise = ((i * 7919) % 21) as f64 / 1000.0 - 0.01;
        let text = result(
            level * (1.0 + noise),
            &format!("6.{}", k + 1),
            1_700_000_000 + i * 3600,
        );
        std::fs::write(format!("{files}/r{i:02}.json"), text).unwrap();
    }
    files
}

#[test]
fn import_trend_regressions_compare_and_export() {
    let d = TempDir::new("hist-import");
    let db = private(&d);
    let files = step_results(&d);
    std::fs::write(format!("{files}/notes.json"), "{\"not\": \"a result\"}").unwrap();
    let r = fiox_db(
        &db,
        &[],
        &["history", "import", &files, FIXTURE, "--from-host=old"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("25 run(s) added, 0 already recorded, 1 file(s) without a result skipped"),
        "{}",
        r.stdout
    );
    let t = fiox_db(
        &db,
        &[],
        &[
            "history",
            "trend",
            "read.iops",
            "--job",
            "rr",
            "--kernel",
            "6.3",
        ],
    );
    assert_eq!(t.stdout.lines().count(), 7, "{}", t.stdout);
    let reg = fiox_db(&db, &[], &["history", "regressions"]);
    assert_eq!(reg.code, 0, "{}", reg.stderr);
    let head = reg
        .stdout
        .lines()
        .find(|l| l.starts_with("rr read.iops on h1"))
        .unwrap_or_else(|| panic!("{}", reg.stdout));
    assert!(head.contains("-10.") || head.contains("-9."), "{head}");
    assert!(reg.stdout.contains("after:  runs 13,"), "{}", reg.stdout);
    assert!(
        reg.stdout.contains("(kernel 6.3, commit -)"),
        "{}",
        reg.stdout
    );
    let cmp = fiox_db(
        &db,
        &[],
        &["history", "compare", "kernel=6.2", "kernel=6.3"],
    );
    assert_eq!(cmp.code, 0, "{}", cmp.stderr);
    let iops = cmp
        .stdout
        .split("read.iops\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{}", cmp.stdout));
    let (row, reason) = (iops.lines().nth(1).unwrap(), iops.lines().nth(2).unwrap());
    assert!(
        row.starts_with("rr ") && row.ends_with(" worse") && reason.contains("worse: -10."),
        "{}",
        cmp.stdout
    );
    // Export: CSV a line per metric; JSON lines carry the result as recorded.
    let csv = fiox_db(&db, &[], &["history", "export", "--format=csv", "--job=rr"]);
    assert!(csv
        .stdout
        .starts_with("id,run_at,host,kernel,commit,experiment,variant,job,metric,value\n"));
    assert!(
        csv.stdout
            .lines()
            .any(|l| l.starts_with("1,1700000000,h1,6.1,,,,rr,read.iops,")),
        "{}",
        csv.stdout
    );
    let jl = fiox_db(&db, &[], &["history", "export", "--host=old"]);
    let v: serde_json::Value = serde_json::from_str(jl.stdout.trim()).unwrap();
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    assert_eq!(v["result"], want);
    assert_eq!(
        v["metrics"]["sample"]["read.iops"],
        want["jobs"][0]["read"]["iops"]
    );
    // Tag, then gc keeps tagged runs.
    assert_eq!(fiox_db(&db, &[], &["history", "tag", "1", "fio"]).code, 0);
    let gc = fiox_db(&db, &[], &["history", "gc", "--keep=2"]);
    assert!(gc.stdout.contains("removed 22 run(s)"), "{}", gc.stdout);
    let list = fiox_db(&db, &[], &["history", "list", "--tag=fio"]);
    assert_eq!(list.stdout.lines().count(), 2, "{}", list.stdout);
}

#[test]
fn bad_input_is_a_clear_error() {
    let d = TempDir::new("hist-bad");
    let db = private(&d);
    let r = fiox_db(&db, &[], &["history", "show", "99"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no run 99"), "{}", r.stderr);
    let r = fiox_db(&db, &[], &["history", "gc"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("--keep N and/or --older-than"),
        "{}",
        r.stderr
    );
    let r = fiox_db(&db, &[], &["history", "list", "--since=yesterday"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("is not a time"), "{}", r.stderr);
    let r = fiox_db(&db, &[], &["history", "compare", "1", "flavour=x"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("unknown key 'flavour'"), "{}", r.stderr);
    let r = fiox_db(&db, &[], &["history", "import", &d.join("missing.json")]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("missing.json"), "{}", r.stderr);
    // A corrupt database: refused, named, left as it was; a plain run with --history says so.
    std::fs::write(&db, vec![0x5au8; 4096]).unwrap();
    let r = fiox_db(&db, &[], &["history", "list"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(&db) && r.stderr.contains("not an SQLite database"),
        "{}",
        r.stderr
    );
    let mut args = NULL_JOB.to_vec();
    args.push("--history");
    let r = fiox_db(&db, &[], &args);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("fiox: history:"), "{}", r.stderr);
    assert!(
        r.stdout.contains("\"jobs\""),
        "the report stands: {}",
        r.stdout
    );
    assert_eq!(std::fs::read(&db).unwrap(), vec![0x5au8; 4096]);
}

#[test]
fn an_experiment_records_its_runs_with_experiment_and_variant() {
    let d = TempDir::new("hist-exp");
    let db = private(&d);
    let state = TempDir::new("hist-exp-state");
    let f = d.join("e.toml");
    std::fs::write(
        &f,
        "name = \"nulls\"\nrepetitions = 2\ntelemetry_ms = 0\njobs = \"\"\"\n[n]\n\
         ioengine=null\nrw=randread\nsize=1g\ntime_based\nruntime=200ms\n\"\"\"\n\
         [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\noptions = { bs = \"8k\" }\n",
    )
    .unwrap();
    let tb = state.path().to_str().unwrap();
    let exp = |out: &str, extra: &[&str]| {
        let mut a = vec!["experiment", f.as_str(), out];
        a.extend_from_slice(extra);
        fiox_db(&db, &[("FIOX_TESTBED_DIR", tb), ("FIOX_HISTORY", "1")], &a)
    };
    let r = exp(&format!("--out={}", d.join("r0")), &["--no-history"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!Path::new(&db).exists(), "recorded with --no-history");
    let out = format!("--out={}", d.join("r1"));
    let r = exp(&out, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list = fiox_db(&db, &[], &["history", "list", "--experiment=nulls"]);
    let rows: Vec<&str> = list.stdout.lines().skip(1).collect();
    // Each run once (FIOX_HISTORY=1 does not make the runs record themselves as well).
    assert_eq!(rows.len(), 4, "{}", list.stdout);
    assert!(
        rows.iter().all(|l| l.contains(" experiment ")),
        "{}",
        list.stdout
    );
    let b = fiox_db(&db, &[], &["history", "list", "--variant=b"]);
    assert_eq!(b.stdout.lines().count(), 3, "{}", b.stdout);
    let show = fiox_db(&db, &[], &["history", "show", "1"]);
    assert!(
        show.stdout.contains("name = \"nulls\""),
        "the experiment file: {}",
        show.stdout
    );
    // Running again resumes: nothing new to run, nothing recorded twice.
    assert_eq!(exp(&out, &[]).code, 0);
    let again = fiox_db(&db, &[], &["history", "list", "--limit=0"]);
    assert_eq!(again.stdout.lines().count(), 5, "{}", again.stdout);
}

/// `trend --chart`: an SVG with a line through every run and the change point marked at the
/// first run of kernel 6.3; PNG and HTML by extension; another extension is refused.
#[test]
fn a_trend_chart_marks_the_change_point() {
    let d = TempDir::new("hist-chart");
    let db = private(&d);
    let files = step_results(&d);
    assert_eq!(fiox_db(&db, &[], &["history", "import", &files]).code, 0);
    let svg = d.join("t.svg");
    let r = fiox_db(
        &db,
        &[],
        &["history", "trend", "read.iops", "--chart", &svg],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 25, "the table is still printed");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"") && text.ends_with("</svg>"),
        "{text}"
    );
    // One line, its 24 points: a move then 23 segments.
    let d_attr = text
        .split("class=\"data line")
        .nth(1)
        .and_then(|s| s.split(" d=\"").nth(1))
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no data line: {text}"));
    assert_eq!(
        (d_attr.matches('M').count(), d_attr.matches('L').count()),
        (1, 23),
        "{d_attr}"
    );
    // One change point, at run 13 (the first of 6.3), labelled with its change and kernel.
    assert_eq!(text.matches("<g class=\"mark\">").count(), 1, "{text}");
    let mark = text.split("<g class=\"mark\">").nth(1).unwrap();
    assert!(
        mark.contains("(kernel 6.3, commit -)")
            && (mark.contains(">-10.") || mark.contains(">-9.")),
        "{mark}"
    );
    let png = d.join("t.png");
    let r = fiox_db(&db, &[], &["history", "trend", "iops", "--chart", &png]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::read(&png)
        .unwrap()
        .starts_with(b"\x89PNG\r\n\x1a\n"));
    let html = d.join("t.html");
    let r = fiox_db(&db, &[], &["history", "trend", "iops", "--chart", &html]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("class=\"mark\""));
    let r = fiox_db(
        &db,
        &[],
        &["history", "trend", "iops", "--chart", &d.join("t.pdf")],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("name a .svg, .png or .html file"),
        "{}",
        r.stderr
    );
}

/// `history page -o DIR`: opened in headless Chromium, the index and the trend page load with
/// no error and no request, their charts have data, every link resolves to a file in DIR; the
/// change point is marked; a second page into the same DIR refreshes it; a user's non-empty
/// directory is refused and left as it is.
#[test]
fn the_history_page_loads_and_its_links_resolve() {
    let d = TempDir::new("hist-page");
    let db = private(&d);
    let files = step_results(&d);
    assert_eq!(
        fiox_db(&db, &[], &["history", "import", &files, FIXTURE]).code,
        0
    );
    let site = d.join("site");
    let r = fiox_db(&db, &[], &["history", "page", "-o", &site]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("25 run(s)"), "{}", r.stdout);
    let index = Path::new(&site).join("index.html");
    let trend = Path::new(&site).join("trend-read-iops.html");
    for p in [&index, &trend] {
        let look = chromium::look_at(p, 900, false);
        assert!(look.errors.is_empty(), "{}: {:?}", p.display(), look.errors);
        assert!(
            look.requests.is_empty(),
            "{}: {:?}",
            p.display(),
            look.requests
        );
        assert!(look.charts.iter().all(|(_, n)| *n > 0), "{:?}", look.charts);
        assert!(!look.links.is_empty(), "{}: no link", p.display());
        for l in &look.links {
            let file = l.strip_prefix("file://").unwrap_or_else(|| panic!("{l}"));
            let file = file.split('#').next().unwrap();
            assert!(
                Path::new(file).is_file() && file.starts_with(site.as_str()),
                "{} links to {l}, which is not a file of the site",
                p.display()
            );
        }
        if p == &trend {
            assert!(!look.charts.is_empty(), "no chart on the trend page");
            let run13 = look.links.iter().any(|l| l.ends_with("/runs/13.html"));
            assert!(run13, "the change's first run is linked: {:?}", look.links);
        } else {
            assert!(look.links.iter().any(|l| l.ends_with("/runs/25.json")));
        }
    }
    let page = std::fs::read_to_string(&trend).unwrap();
    assert_eq!(page.matches("<g class=\"mark\">").count(), 1);
    assert!(page.contains("<tr class=\"change\"><td>-"), "{page}");
    let json = std::fs::read_to_string(Path::new(&site).join("runs/25.json")).unwrap();
    assert_eq!(json, std::fs::read_to_string(FIXTURE).unwrap());
    // Again into the same directory: fiox made it, so it is refreshed.
    let r = fiox_db(&db, &[], &["history", "page", "-o", &site]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A directory of the user's with a file in it: refused, untouched.
    let mine = d.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(format!("{mine}/notes.txt"), "mine").unwrap();
    let r = fiox_db(&db, &[], &["history", "page", "-o", &mine]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(&mine) && r.stderr.contains("not made by fiox"),
        "{}",
        r.stderr
    );
    let left: Vec<_> = std::fs::read_dir(&mine).unwrap().collect();
    assert_eq!(left.len(), 1);
}

/// The same commands on a PostgreSQL history (a real server of the test's own): a plain run
/// records with --history=URL, import, list, show, tag, trend (and its chart), regressions,
/// compare, export, gc and page all work on it as on SQLite.
#[test]
fn a_postgresql_history_takes_the_same_commands() {
    let Some(server) = pg::Server::start("cli") else {
        return;
    };
    let url = server.url().display().to_string();
    let d = TempDir::new("hist-pg");
    let files = step_results(&d);
    let r = fiox_db(&url, &[], &["history", "import", &files]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("24 run(s) added"), "{}", r.stdout);
    let mut args = NULL_JOB.to_vec();
    let flag = format!("--history={url}");
    args.push(&flag);
    let r = fiox_db("/nonexistent/unused.db", &[], &args);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let list = fiox_db(&url, &[], &["history", "list", "--limit=0"]);
    assert_eq!(list.stdout.lines().count(), 26, "{}", list.stdout);
    assert!(list.stdout.contains(" run "), "{}", list.stdout);
    let show = fiox_db(&url, &[], &["history", "show", "25"]);
    assert!(show.stdout.contains("nj"), "{}", show.stdout);
    assert_eq!(fiox_db(&url, &[], &["history", "tag", "1", "keep"]).code, 0);
    let svg = d.join("t.svg");
    let t = fiox_db(
        &url,
        &[],
        &["history", "trend", "read.iops", "--job=rr", "--chart", &svg],
    );
    assert_eq!(t.stdout.lines().count(), 25, "{}", t.stdout);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(text.matches("<g class=\"mark\">").count(), 1, "{text}");
    let reg = fiox_db(&url, &[], &["history", "regressions"]);
    assert!(reg.stdout.contains("after:  runs 13,"), "{}", reg.stdout);
    let cmp = fiox_db(
        &url,
        &[],
        &["history", "compare", "kernel=6.2", "kernel=6.3"],
    );
    assert_eq!(cmp.code, 0, "{}", cmp.stderr);
    assert!(cmp.stdout.contains("worse"), "{}", cmp.stdout);
    let csv = fiox_db(
        &url,
        &[],
        &["history", "export", "--format=csv", "--job=rr"],
    );
    assert!(csv
        .stdout
        .lines()
        .any(|l| l.starts_with("1,1700000000,h1,6.1,,,,rr,read.iops,")));
    let site = d.join("site");
    let r = fiox_db(&url, &[], &["history", "page", "-o", &site]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(Path::new(&site).join("runs/25.json").is_file());
    let gc = fiox_db(&url, &[], &["history", "gc", "--keep=2"]);
    assert!(gc.stdout.contains("removed 22 run(s)"), "{}", gc.stdout);
    let list = fiox_db(&url, &[], &["history", "list", "--limit=0"]);
    assert_eq!(list.stdout.lines().count(), 4, "{}", list.stdout);
}
