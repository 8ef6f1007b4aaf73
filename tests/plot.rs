//! `fiox plot` as a person would look at it: reports of a single run, a run with logs, fio's
//! own json+ and logs overlaid with fiox's, and a comparison of experiment variants are opened
//! in headless Chromium, which must show no console error and make no network request; every
//! chart's SVG must have data with geometry and the screenshot must not be blank. SVG and PNG
//! files (`--format`) are checked without a browser. With `FIOX_SCREENSHOTS=DIR` the
//! screenshots are kept there (docs/screenshots holds the ones the README shows).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod chromium;
mod harness;

use harness::{fiox, fiox_in, TempDir};
use std::path::Path;

/// Open the page in Chromium and check what a reader would see.
fn check_page(page: &Path, shot: &str, dark: bool) -> chromium::Look {
    let look = chromium::look_at(page, 860, dark);
    assert!(look.errors.is_empty(), "console errors: {:?}", look.errors);
    assert!(
        look.requests.is_empty(),
        "network requests: {:?}",
        look.requests
    );
    assert!(!look.charts.is_empty(), "no chart on the page");
    for (id, n) in &look.charts {
        assert!(
            *n > 0,
            "chart {id} has no data with geometry: {:?}",
            look.charts
        );
    }
    let (w, h, differ, colours) = chromium::pixel_stats(&look.png);
    assert!(w >= 800 && h > 600, "screenshot {w}x{h}");
    assert!(
        differ > 0.03 && colours > 50,
        "blank screenshot: {differ} differ, {colours} colours"
    );
    if let Some(dir) = std::env::var_os("FIOX_SCREENSHOTS") {
        std::fs::write(Path::new(&dir).join(shot), &look.png).expect("keep screenshot");
    }
    look
}

fn chart_ids(look: &chromium::Look) -> Vec<&str> {
    look.charts.iter().map(|(id, _)| id.as_str()).collect()
}

fn data_count(look: &chromium::Look, id: &str) -> u64 {
    look.charts
        .iter()
        .find(|(c, _)| c == id)
        .unwrap_or_else(|| panic!("no chart {id} in {:?}", look.charts))
        .1
}

/// A one-second fiox job in `dir` writing json+ to `out`; `extra` adds options.
fn fiox_run(dir: &TempDir, name: &str, extra: &[&str]) -> String {
    let out = dir.join(&format!("{name}.json"));
    let mut args = vec![
        format!("--name={name}"),
        format!("--filename={}", dir.join(&format!("{name}.dat"))),
        "--size=8m".into(),
        "--rw=randread".into(),
        "--runtime=1".into(),
        "--time_based".into(),
        "--output-format=json+".into(),
        format!("--output={out}"),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = fiox_in(dir.path(), &a);
    assert_eq!(r.code, 0, "fiox run failed: {}", r.stderr);
    out
}

#[test]
fn plot_of_a_single_run_opens_clean_in_chromium() {
    let dir = TempDir::new("plot-single");
    let json = fiox_run(&dir, "single", &[]);
    let page = dir.join("single.html");
    let r = fiox(&["plot", &json, "-o", &page]);
    // What it wrote, in one line on stderr; nothing on stdout.
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.clone()),
        (0, "", format!("fiox plot: wrote {page}\n"))
    );
    let q = fiox(&["plot", &json, "-o", &page, "--quiet"]);
    assert_eq!((q.code, q.stdout.as_str(), q.stderr.as_str()), (0, "", ""));
    let look = check_page(Path::new(&page), "single-run.png", false);
    let ids = chart_ids(&look);
    assert!(ids.contains(&"chart-clat-read-percentiles"), "{ids:?}");
    assert!(ids.contains(&"chart-clat-read-histogram"), "{ids:?}");
    assert!(ids.contains(&"chart-iops-per-job"), "{ids:?}");
}

#[test]
fn plot_of_a_run_with_logs_shows_values_over_time() {
    let dir = TempDir::new("plot-logs");
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let prefix = logs.join("mixed").display().to_string();
    fiox_run(
        &dir,
        "mixed",
        &[
            "--rw=randrw",
            &format!("--write_bw_log={prefix}"),
            &format!("--write_iops_log={prefix}"),
            &format!("--write_lat_log={prefix}"),
            "--log_avg_msec=100",
        ],
    );
    // Per-I/O lines with offsets (log_offset=1), no averaging.
    let prefix2 = logs.join("perio").display().to_string();
    fiox_run(
        &dir,
        "perio",
        &[
            &format!("--write_lat_log={prefix2}"),
            "--log_offset=1",
            "--runtime=300ms",
        ],
    );
    let page = dir.join("logs.html");
    let r = fiox(&[
        "plot",
        &dir.join("mixed.json"),
        logs.to_str().unwrap(),
        "-o",
        &page,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let look = check_page(Path::new(&page), "run-with-logs.png", false);
    for id in ["chart-time-bw", "chart-time-iops", "chart-time-clat"] {
        assert!(
            data_count(&look, id) >= 2,
            "{id}: read and write lines: {:?}",
            look.charts
        );
    }
    // mixed read, mixed write, perio read.
    assert_eq!(data_count(&look, "chart-time-lat"), 3, "{:?}", look.charts);
}

#[test]
fn fio_json_plus_and_logs_overlay_with_fiox_in_light_and_dark() {
    let dir = TempDir::new("plot-fio");
    let fio_logs = dir.path().join("fio-logs");
    std::fs::create_dir_all(&fio_logs).unwrap();
    let fio_json = dir.join("fio.json");
    let prefix = fio_logs.join("fio").display().to_string();
    let file = dir.join("fio.dat");
    let ok = harness::sh_in(
        &fio_logs,
        "fio",
        &[
            "--name=fio",
            &format!("--filename={file}"),
            "--size=8m",
            "--rw=randread",
            "--runtime=1",
            "--time_based",
            &format!("--write_bw_log={prefix}"),
            &format!("--write_lat_log={prefix}"),
            "--log_offset=1",
            "--log_avg_msec=50",
            "--output-format=json+",
            &format!("--output={fio_json}"),
        ],
    );
    ok.expect("fio 3.33 runs (the reference every test compares against)");
    let fiox_json = fiox_run(&dir, "fiox", &[]);
    let page = dir.join("overlay.html");
    let r = fiox(&[
        "plot",
        &fio_json,
        &fiox_json,
        fio_logs.to_str().unwrap(),
        "-o",
        &page,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let look = check_page(Path::new(&page), "fio-vs-fiox.png", false);
    // fio's curve and fiox's, overlaid.
    assert_eq!(
        data_count(&look, "chart-clat-read-percentiles"),
        2,
        "{:?}",
        look.charts
    );
    assert_eq!(data_count(&look, "chart-clat-read-histogram"), 2);
    assert_eq!(data_count(&look, "chart-time-bw"), 1);
    let dark = check_page(Path::new(&page), "fio-vs-fiox-dark.png", true);
    let (bg, _) = first_pixel_luma(&dark.png);
    assert!(bg < 60.0, "dark theme background luma {bg}");
    let (bg, _) = first_pixel_luma(&look.png);
    assert!(bg > 200.0, "light theme background luma {bg}");
}

fn first_pixel_luma(png_bytes: &[u8]) -> (f64, ()) {
    let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    r.next_frame(&mut buf).unwrap();
    let p = &buf[..3];
    (
        0.299 * p[0] as f64 + 0.587 * p[1] as f64 + 0.114 * p[2] as f64,
        (),
    )
}

/// A comparison document in `fiox compare --format json`'s shape.
const COMPARISON: &str = r#"{"sides": ["baseline", "direct"], "runs": [5, 5], "alpha": 0.05,
  "rows": [
    {"job": "randread", "metric": "read.iops",
     "summaries": [{"n": 5, "mean": 8023.4, "ci": [7950.0, 8096.0]}, {"n": 5, "mean": 8152.2, "ci": [8100.0, 8204.0]}],
     "changes": [{"rel": 0.016, "verdict": "better"}]},
    {"job": "seqread", "metric": "read.iops",
     "summaries": [{"n": 5, "mean": 1510.0, "ci": [1400.0, 1620.0]}, {"n": 5, "mean": 1490.0, "ci": [1390.0, 1590.0]}],
     "changes": [{"rel": -0.013, "verdict": "no difference"}]},
    {"job": "randread", "metric": "read.lat_mean_us",
     "summaries": [{"n": 5, "mean": 124.0, "ci": [120.0, 128.0]}, {"n": 5, "mean": 121.0, "ci": [118.0, 124.0]}],
     "changes": [{"rel": -0.024, "verdict": "better"}]}],
  "warnings": []}"#;

/// One fiox-shaped result of a sweep point.
fn sweep_result(iodepth: u32, numjobs: u32) -> String {
    let iops = 1000.0 * iodepth as f64 * numjobs as f64 / (1.0 + iodepth as f64 / 16.0);
    serde_json::json!({
        "fio version": "fiox-test",
        "global options": {"iodepth": iodepth.to_string(), "numjobs": numjobs.to_string()},
        "jobs": [{"jobname": "sweep", "read": {"io_bytes": 4096, "total_ios": 1, "iops": iops,
                  "bw_bytes": iops * 4096.0}}]
    })
    .to_string()
}

#[test]
fn comparison_bars_and_the_sweep_heatmap_open_clean() {
    let dir = TempDir::new("plot-compare");
    let cmp = dir.join("compare.json");
    std::fs::write(&cmp, COMPARISON).unwrap();
    let sweep = dir.path().join("sweep");
    for (d, j) in [(1, 1), (4, 1), (16, 1), (1, 2), (4, 2), (16, 2)] {
        let v = sweep.join(format!("qd{d}-nj{j}"));
        std::fs::create_dir_all(&v).unwrap();
        std::fs::write(v.join("result.json"), sweep_result(d, j)).unwrap();
    }
    let page = dir.join("compare.html");
    let r = fiox(&["plot", &cmp, sweep.to_str().unwrap(), "-o", &page]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("+1.6%*") && html.contains("-1.3%<"),
        "changes marked"
    );
    assert_eq!(
        html.matches("class=\"errbar\"").count(),
        6,
        "one error bar per bar"
    );
    let look = check_page(Path::new(&page), "comparison.png", false);
    assert_eq!(data_count(&look, "chart-compare-compare-read-iops"), 4);
    assert_eq!(data_count(&look, "chart-iodepth-numjobs-iops"), 6);
}

#[test]
fn svg_and_png_files_one_per_chart() {
    let dir = TempDir::new("plot-files");
    let json = fiox_run(&dir, "files", &[]);
    let svg_dir = dir.join("svg");
    let r = fiox(&["plot", &json, "--format=svg", "-o", &svg_dir, "-q"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let svg =
        std::fs::read_to_string(Path::new(&svg_dir).join("clat-read-percentiles.svg")).unwrap();
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")
            && svg.contains("class=\"data line")
    );
    let png_dir = dir.join("png");
    let r = fiox(&["plot", &json, "--format", "png", "-o", &png_dir]);
    let mut names: Vec<String> = std::fs::read_dir(&png_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // One line naming every file (sorted).
    let line = format!(
        "fiox plot: wrote {} PNG files in {png_dir}: {}\n",
        names.len(),
        names.join(" ")
    );
    assert_eq!((r.code, r.stderr.clone()), (0, line));
    let svgs = std::fs::read_dir(&svg_dir).unwrap().count();
    assert_eq!(names.len(), svgs, "{names:?}");
    for n in &names {
        let bytes = std::fs::read(Path::new(&png_dir).join(n)).unwrap();
        let (w, h, differ, colours) = chromium::pixel_stats(&bytes);
        assert!(w == 1520 && h > 600, "{n}: {w}x{h}");
        assert!(
            differ > 0.01 && colours > 20,
            "{n} is blank: {differ} {colours}"
        );
    }
}

/// `-o x.png` writes PNG files named after it (x-CHART.png), never a directory named x.png
/// (issue 43); with --format=png, a .svg name is refused.
#[test]
fn an_output_named_like_a_png_file_gets_png_files() {
    let dir = TempDir::new("plot-name");
    let json = fiox_run(&dir, "named", &[]);
    let out = dir.join("x.png");
    let r = fiox(&["plot", &json, "-o", &out]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!Path::new(&out).is_dir(), "a directory named x.png");
    let pngs: Vec<String> = dir
        .entries()
        .into_iter()
        .filter(|n| n.starts_with("x-") && n.ends_with(".png"))
        .collect();
    assert!(pngs.len() > 1, "{:?}", dir.entries());
    assert!(
        pngs.iter().any(|n| n == "x-clat-read-percentiles.png"),
        "{pngs:?}"
    );
    let bytes = std::fs::read(dir.path().join(&pngs[0])).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "{}", pngs[0]);
    assert!(r.stderr.starts_with("fiox plot: wrote ") && r.stderr.lines().count() == 1);
    let bad = fiox(&["plot", &json, "--format=png", "-o", &dir.join("y.svg")]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("names an SVG file but --format=png"),
        "{}",
        bad.stderr
    );
    assert!(!dir.path().join("y.svg").exists());
}

#[test]
fn plot_errors_name_the_input() {
    let dir = TempDir::new("plot-errors");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"x\": 1}").unwrap();
    let r = fiox(&["plot", &bad]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("bad.json: no \"jobs\" array"),
        "{}",
        r.stderr
    );
    let log = dir.join("x_clat.1.log");
    std::fs::write(&log, "10, 5, 0, 4096, 0\nten, 5, 0, 4096, 0\n").unwrap();
    let r = fiox(&["plot", &log]);
    assert!(
        r.stderr.contains("x_clat.1.log: line 2: time 'ten'"),
        "{}",
        r.stderr
    );
    let r = fiox(&["plot"]);
    assert!(r.stderr.contains("no RESULT given"), "{}", r.stderr);
}

#[test]
fn html_switch_on_a_plain_run_writes_the_page_with_its_logs() {
    let dir = TempDir::new("plot-html-switch");
    let page = dir.join("run.html");
    let r = fiox_in(
        dir.path(),
        &[
            "--html",
            &page,
            "--name=plain",
            "--filename=plain.dat",
            "--size=8m",
            "--rw=randrw",
            "--runtime=1",
            "--time_based",
            "--write_iops_log=plain",
            "--log_avg_msec=100",
            "--telemetry=200",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // stdout is still the JSON report alone.
    r.json();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<th>kernel</th>"),
        "the header names the kernel"
    );
    // The page leads with the charts; the environment follows, folded (issue 41's D10).
    let (first_chart, sources) = (html.find("<figure>"), html.find("Sources and environment"));
    assert!(
        first_chart.is_some() && first_chart < sources,
        "charts first"
    );
    assert!(
        !html.contains("<details open"),
        "the environment starts folded"
    );
    let look = check_page(Path::new(&page), "html-switch.png", false);
    assert_eq!(data_count(&look, "chart-time-iops"), 2, "{:?}", look.charts);
    // json+ histograms even though stdout was plain json.
    assert!(chart_ids(&look).contains(&"chart-clat-read-histogram"));
    // --telemetry's samples are on the page too.
    assert!(
        chart_ids(&look).contains(&"chart-telemetry-cpu"),
        "{:?}",
        look.charts
    );
}

#[test]
fn help_lists_every_subcommand_and_each_has_its_own_help() {
    let top = fiox(&["--help"]);
    assert_eq!(top.code, 0);
    for s in fiox_job::help::SWITCHES {
        assert!(
            top.stdout.contains(s.spelling),
            "{} missing:\n{}",
            s.spelling,
            top.stdout
        );
    }
    // The column's width follows the longest name and texts wrap at 100 columns: compare
    // the words.
    let words = top.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for sub in fiox_job::help::SUBCOMMANDS {
        let about = sub.about.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(&format!(" {} {about}", sub.name)),
            "{}",
            top.stdout
        );
        let r = fiox(&[sub.name, "--help"]);
        assert_eq!(r.code, 0, "fiox {} --help: {}", sub.name, r.stderr);
        assert!(
            r.stdout.contains("--help"),
            "fiox {} --help:\n{}",
            sub.name,
            r.stdout
        );
    }
    let plot = fiox(&["plot", "--help"]).stdout;
    let cmd = <fiox_plot::cli::PlotArgs as clap::Args>::augment_args(clap::Command::new("plot"));
    for a in cmd.get_arguments().filter_map(|a| a.get_long()) {
        assert!(plot.contains(&format!("--{a}")), "{plot}");
    }
    // A misspelt switch: exit 1, with a suggestion, on stderr only.
    let r = fiox(&["plot", "--formt=svg", "x.json"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(r.stderr.contains("'--format'"), "{}", r.stderr);
}

#[test]
fn status_interval_reports_become_values_over_time() {
    let dir = TempDir::new("plot-status");
    let out = dir.join("status.json");
    let r = fiox_in(
        dir.path(),
        &[
            "--name=st",
            "--filename=st.dat",
            "--size=8m",
            "--rw=randread",
            "--runtime=1",
            "--time_based",
            "--status-interval=200ms",
            "--output-format=json",
            &format!("--output={out}"),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = dir.join("status.html");
    let r = fiox(&["plot", &out, "-o", &page]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let look = check_page(Path::new(&page), "status-interval.png", false);
    for id in ["chart-time-iops", "chart-time-bw", "chart-time-clat"] {
        assert_eq!(data_count(&look, id), 1, "{id}: {:?}", look.charts);
    }
    let html = std::fs::read_to_string(&page).unwrap();
    // At least three intervals in one second at 200 ms.
    let path = html.split("class=\"data line c0\" d=\"").nth(1).unwrap();
    let points = path.split('"').next().unwrap().matches('L').count() + 1;
    assert!(points >= 3, "{points} points");
}

/// The browser check can fail: a page with a script error, a console error and a request
/// to a (loopback) server is caught on each count.
#[test]
fn the_browser_check_sees_console_errors_and_requests() {
    let dir = TempDir::new("plot-bad-page");
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:9/x.png\">\
         <svg class=\"chart\" id=\"chart-empty\"></svg>\
         <script>console.error('boom'); undefined_function();</script></body></html>",
    )
    .unwrap();
    let look = chromium::look_at(&page, 800, false);
    assert!(
        look.errors.iter().any(|e| e.contains("boom")),
        "{:?}",
        look.errors
    );
    assert!(
        look.errors.iter().any(|e| e.contains("undefined_function")),
        "{:?}",
        look.errors
    );
    assert!(
        look.requests
            .iter()
            .any(|u| u.starts_with("http://127.0.0.1:9/")),
        "{:?}",
        look.requests
    );
    assert_eq!(look.charts, [("chart-empty".to_string(), 0)]);
}

/// Two stonewalled groups, the first with a ramp, bandwidth logs and telemetry: the page marks
/// where each group starts and where the ramp ends on every over-time chart, and draws the
/// telemetry (CPU, context switches, page cache) on the same time axis.
#[test]
fn groups_ramps_and_telemetry_share_the_time_axis() {
    let dir = TempDir::new("plot-groups");
    let out = dir.join("groups.json");
    let r = fiox_in(
        dir.path(),
        &[
            "--filename=g.dat",
            "--size=8m",
            "--time_based",
            "--runtime=1",
            "--write_bw_log=g",
            "--log_avg_msec=100",
            "--telemetry=200",
            "--output-format=json+",
            &format!("--output={out}"),
            "--name=warm",
            "--rw=randread",
            "--ramp_time=500ms",
            "--name=after",
            "--rw=read",
            "--stonewall",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Where each job's I/O began, for the page's clock: the second group after the first's
    // ramp and runtime (a lower bound, whatever the machine's speed).
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let io_start = |i: usize| v["jobs"][i]["fiox"]["io_start_unix_ms"].as_u64().unwrap();
    assert!(io_start(0) >= v["timestamp_ms"].as_u64().unwrap());
    assert!(io_start(1) >= io_start(0) + 1500, "{v}");
    let page = dir.join("groups.html");
    let r = fiox(&["plot", &out, dir.path().to_str().unwrap(), "-o", &page]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let look = check_page(Path::new(&page), "groups-telemetry.png", false);
    let ids = chart_ids(&look);
    for id in [
        "chart-time-bw",
        "chart-telemetry-cpu",
        "chart-telemetry-ctx",
        "chart-telemetry-page-cache",
    ] {
        assert!(ids.contains(&id), "{id} missing: {ids:?}");
    }
    assert_eq!(data_count(&look, "chart-time-bw"), 2, "{:?}", look.charts);
    let html = std::fs::read_to_string(&page).unwrap();
    for svg in html.split("<svg").filter(|s| s.contains("id=\"chart-t")) {
        let id = svg.split('"').nth(5).unwrap_or("?");
        assert!(svg.contains("Time since run start"), "{id}");
        assert!(
            svg.contains(">group 1: after</text>"),
            "{id}: no group mark"
        );
        assert!(svg.contains(">ramp_time ends</text>"), "{id}: no ramp mark");
    }
}

/// `fiox plot` of a real experiment results directory: its manifest's measured runs (not the
/// warm-up), one bar per variant with an error bar over the repetitions, and the runs'
/// telemetry drawn over time.
#[test]
fn an_experiment_results_directory_plots_variants_with_error_bars() {
    let dir = TempDir::new("plot-experiment");
    let target = dir.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    let exp = dir.path().join("small.toml");
    let t = target.display();
    std::fs::write(
        &exp,
        format!(
            "name = \"small\"\nrepetitions = 2\nwarmup = 1\ntelemetry_ms = 100\n\
             jobs = \"\"\"\n[rr]\nrw=randread\nsize=4m\nruntime=300ms\ntime_based=1\n\"\"\"\n\
             [[variant]]\nname = \"bs4k\"\ntarget = \"{t}\"\noptions = {{ bs = \"4k\" }}\n\
             [[variant]]\nname = \"bs64k\"\ntarget = \"{t}\"\noptions = {{ bs = \"64k\" }}\n"
        ),
    )
    .unwrap();
    let out = dir.join("results");
    let r = fiox(&["experiment", exp.to_str().unwrap(), &format!("--out={out}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = dir.join("experiment.html");
    let r = fiox(&["plot", &out, "-o", &page]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("bs4k #1") && html.contains("bs64k #2"),
        "run labels"
    );
    assert!(!html.contains("warmup"), "a warm-up run was plotted");
    assert!(
        !html.contains("manifest.json"),
        "the manifest was read as a result"
    );
    let look = check_page(Path::new(&page), "experiment.png", false);
    // Two variants: two bars, each with its error bar over two runs.
    assert_eq!(
        data_count(&look, "chart-iops-per-job"),
        2,
        "{:?}",
        look.charts
    );
    let iops = html
        .split("<svg")
        .find(|s| s.contains("id=\"chart-iops-per-job\""))
        .unwrap();
    assert_eq!(iops.matches("class=\"errbar\"").count(), 2, "{iops}");
    assert!(chart_ids(&look).contains(&"chart-telemetry-cpu"));
}

/// A run with `--explain` (issue 26) gets a stacked chart of where its mean latency went: one
/// layer per phase the kernel measured, drawn as its own file.
#[test]
fn an_explained_run_gets_its_phases_stacked() {
    let dir = TempDir::new("plot-explain");
    let json = fiox_run(&dir, "explained", &["--explain"]);
    let svg_dir = dir.join("svg");
    let r = fiox(&["plot", &json, "--format=svg", "-o", &svg_dir, "--quiet"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let svg = std::fs::read_to_string(Path::new(&svg_dir).join("explain-phases.svg")).unwrap();
    assert!(svg.contains("Where the mean latency went"), "{svg}");
    assert!(
        svg.contains("explained read: submit_on_cpu: "),
        "no submission layer: {svg}"
    );
}
