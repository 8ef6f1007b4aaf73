//! Integration tests of the experiment subcommands: `fiox compare` on fio 3.33's own JSON and
//! on fiox's, in every output format.

mod harness;

use harness::*;
use std::process::Command;

/// Runs of a rate-limited null job at `rate` IOPS written as JSON files into `dir`, made by
/// `tool` ("fio" or the fiox binary).
fn rate_runs(tool: &str, dir: &TempDir, rate: u32, n: usize) {
    for i in 0..n {
        let out = dir.join(&format!("run{i}.json"));
        let st = Command::new(tool)
            .current_dir(dir.path())
            .args([
                "--name=rr",
                "--ioengine=null",
                "--rw=randread",
                "--size=1g",
                "--time_based",
                "--runtime=1",
                &format!("--rate_iops={rate}"),
                "--output-format=json",
                &format!("--output={out}"),
            ])
            .status()
            .expect("run the tool");
        assert!(st.success(), "{tool} failed");
    }
}

#[test]
fn compare_reads_real_fio_json_and_says_better() {
    assert!(fio_available(), "fio 3.33 is needed (Debian package fio)");
    let (a, b) = (TempDir::new("cmp-a"), TempDir::new("cmp-b"));
    rate_runs("fio", &a, 500, 3);
    rate_runs("fio", &b, 1000, 3);
    let r = fiox(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let line = r
        .stdout
        .lines()
        .skip_while(|l| *l != "read.iops")
        .nth(2)
        .unwrap_or_else(|| panic!("no read.iops block:\n{}", r.stdout));
    assert!(line.starts_with("rr "), "{line}");
    assert!(line.ends_with("better"), "{}", r.stdout);
    let j = fiox(&[
        "compare",
        "--format=json",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
    ])
    .json();
    assert_eq!(j["runs"], serde_json::json!([3, 3]));
    let row = j["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "read.iops")
        .unwrap();
    let rel = row["changes"][0]["rel"].as_f64().unwrap();
    assert!((0.8..1.2).contains(&rel), "IOPS should double: {rel}");
    assert!(row["summaries"][0]["mean"].as_f64().unwrap() > 400.0);
}

#[test]
fn compare_fiox_json_in_csv_and_markdown() {
    let (a, b) = (TempDir::new("cmpx-a"), TempDir::new("cmpx-b"));
    rate_runs(fiox_bin(), &a, 500, 2);
    rate_runs(fiox_bin(), &b, 500, 2);
    let (pa, pb) = (a.path().to_str().unwrap(), b.path().to_str().unwrap());
    let csv = fiox(&["compare", "--format=csv", "--metric=iops", pa, pb]);
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let lines: Vec<&str> = csv.stdout.lines().collect();
    assert!(
        lines[0].starts_with("job,metric,side,n,mean"),
        "{}",
        csv.stdout
    );
    assert_eq!(lines.len(), 3, "{}", csv.stdout);
    assert!(lines[2].starts_with(&format!(
        "rr,read.iops,{},2,",
        b.path().file_name().unwrap().to_str().unwrap()
    )));
    let md = fiox(&["compare", "--format=markdown", pa, pb]);
    assert!(md.stdout.starts_with("| test | metric |"), "{}", md.stdout);
    assert!(
        md.stdout.contains("at least 3"),
        "too few runs not warned:\n{}",
        md.stdout
    );
    let bad = fiox(&["compare", pa]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("at least two sides"), "{}", bad.stderr);
}
