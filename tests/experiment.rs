//! Integration tests of the experiment subcommands: `fiox compare` on fio 3.33's own JSON and
//! on fiox's, in every output format.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::process::Command;

/// Runs of a rate-limited null job at `rate` IOPS (run i at rate + i%) written as JSON files
/// into `dir`, made by `tool` ("fio" or the fiox binary). A run that did not reach 90% of its
/// rate was starved by the tests running beside it (2 CPUs: fio's 1 s runs read as low as
/// 186 of 500 IOPS in full-suite runs, and one such run leaves a comparison of five
/// inconclusive): it is run again, up to five times, so the runs are what the tests assume.
fn rate_runs(tool: &str, dir: &TempDir, rate: u32, n: usize) {
    for i in 0..n {
        let out = dir.join(&format!("run{i}.json"));
        let want = rate + i as u32 * rate / 100;
        for attempt in 1..=5 {
            let st = Command::new(tool)
                .current_dir(dir.path())
                .args([
                    "--name=rr",
                    "--ioengine=null",
                    "--rw=randread",
                    "--size=1g",
                    "--time_based",
                    "--runtime=1",
                    // 1% apart per run: rate-limited runs of fio can give the same IOPS to
                    // the last digit, and two constant sides leave no test possible ("no
                    // claim").
                    &format!("--rate_iops={want}"),
                    "--output-format=json",
                    &format!("--output={out}"),
                ])
                .status()
                .expect("run the tool");
            assert!(st.success(), "{tool} failed");
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            let iops = doc["jobs"][0]["read"]["iops"].as_f64().unwrap_or(0.0);
            if iops >= 0.9 * f64::from(want) {
                break;
            }
            assert!(attempt < 5, "{tool}: {iops} IOPS of {want}, five times");
        }
    }
}

/// The row of `metric` in a `fiox compare --format=json` document.
fn row_of<'a>(j: &'a serde_json::Value, metric: &str) -> &'a serde_json::Value {
    j["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} row in {j}"))
}

#[test]
fn compare_reads_real_fio_json_and_says_better() {
    assert!(need_fio(), "fio 3.33 is needed (Debian package fio)");
    let (a, b) = (TempDir::new("cmp-a"), TempDir::new("cmp-b"));
    // Five runs a side: a 1 s rate-limited fio run starved by the tests running beside it
    // (2 CPUs) once read 186 IOPS of 500, and with three runs a side that one run left the
    // comparison inconclusive (fresh Debian run, 2026-12-05).
    rate_runs("fio", &a, 500, 5);
    rate_runs("fio", &b, 1000, 5);
    let r = fiox(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let mut block = r.stdout.lines().skip_while(|l| *l != "read.iops").skip(2);
    let line = block
        .next()
        .unwrap_or_else(|| panic!("no read.iops block:\n{}", r.stdout));
    assert!(
        line.starts_with("rr ") && line.ends_with(" better"),
        "{line}"
    );
    // The reason on the line below the row; every line fits 120 columns.
    let reason = block.next().unwrap_or_default();
    assert!(reason.starts_with("    better: +"), "{}", r.stdout);
    assert!(r.stdout.lines().all(|l| l.len() <= 120), "{}", r.stdout);
    let j = fiox(&[
        "compare",
        "--format=json",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
    ])
    .json();
    assert_eq!(j["runs"], serde_json::json!([5, 5]));
    let row = row_of(&j, "read.iops");
    let rel = row["changes"][0]["rel"].as_f64().unwrap();
    // Doubled (+100%) by the rates asked; fio's 1 s rate-limited runs starved by the tests
    // running beside this one read as low as 186 of 500 IOPS (the fresh Debian reruns saw
    // +52% more than that): the direction and the order of the change, not its digits.
    assert!((0.6..3.0).contains(&rel), "IOPS should about double: {rel}");
    assert!(
        row["summaries"][0]["mean"].as_f64().unwrap() > 250.0,
        "about 500 (see above)"
    );
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
    let lat = fiox(&["compare", "--latency", pa, pb]);
    assert!(
        lat.stdout.contains("completion latency (us), rr/read"),
        "{}",
        lat.stdout
    );
    assert!(lat.stdout.contains("\n99.9 "), "{}", lat.stdout);
    let bad = fiox(&["compare", pa]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("at least two sides"), "{}", bad.stderr);
}

/// The README's `fiox compare before/*.json after/*.json`: the shell's list of files makes
/// two sides named after their directories, and `--side NAME=GLOB` says the same outright.
#[test]
fn compare_groups_files_by_directory() {
    let top = TempDir::new("cmp-dirs");
    let (before, after) = (top.path().join("before"), top.path().join("after"));
    for (dir, iops) in [
        (&before, [100.0, 101.0, 99.0]),
        (&after, [110.0, 111.0, 109.0]),
    ] {
        std::fs::create_dir_all(dir).unwrap();
        for (i, v) in iops.iter().enumerate() {
            let doc = serde_json::json!({"jobs": [{"jobname": "j", "read":
                {"total_ios": 100, "iops": v, "bw": 1.0, "lat_ns": {"mean": 1000.0}}}]});
            std::fs::write(dir.join(format!("r{i}.json")), doc.to_string()).unwrap();
        }
    }
    let files = |d: &std::path::Path| -> Vec<String> {
        (0..3)
            .map(|i| d.join(format!("r{i}.json")).display().to_string())
            .collect()
    };
    let mut args = vec!["compare".to_string(), "--format=json".into()];
    args.extend(files(&before));
    args.extend(files(&after));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let j = fiox(&argv).json();
    assert_eq!(j["sides"], serde_json::json!(["before", "after"]), "{j}");
    assert_eq!(j["runs"], serde_json::json!([3, 3]));
    let row = row_of(&j, "read.iops");
    assert_eq!(row["changes"][0]["verdict"], "better", "{row}");
    assert!(row["changes"][0]["p_adjusted"].as_f64().is_some(), "{row}");
    let b = format!("old={}/before/*.json", top.path().display());
    let a = format!("new={}/after/r?.json", top.path().display());
    let r = fiox(&["compare", "--side", &b, "--side", &a, "--metric=iops"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("sides: old (3 runs), new (3 runs)"),
        "{}",
        r.stdout
    );
    let none = fiox(&["compare", "--side", "x=/nonexistent/*.json", "--side", &a]);
    assert!(none.stderr.contains("matches no file"), "{}", none.stderr);
}

/// fiox with the testbed state directory `state`.
fn fiox_tb(state: &TempDir, args: &[&str]) -> Run {
    let o = with_test_history(&mut Command::new(fiox_bin()))
        .env("FIOX_TESTBED_DIR", state.path())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run fiox");
    Run::from(o)
}

/// The `key=value` of a `testbed up` line.
fn field(line: &str, key: &str) -> String {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .to_string()
}

fn mounts() -> String {
    std::fs::read_to_string("/proc/mounts").unwrap()
}

#[test]
fn testbed_loop_direct_io_on_and_off() {
    let state = TempDir::new("tbstate");
    for (dio, want) in [("on", "1"), ("off", "0")] {
        let r = fiox_tb(
            &state,
            &[
                "testbed",
                "up",
                "loop",
                "--size=32m",
                &format!("--direct_io={dio}"),
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let dev = field(&r.stdout, "device");
        let backing = field(&r.stdout, "backing");
        let name = dev.trim_start_matches("/dev/");
        let sys = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).unwrap();
        assert_eq!(sys.trim(), want, "{}", r.stdout);
        assert_eq!(field(&r.stdout, "direct_io"), dio);
        let tb = r.stdout.split_whitespace().next().unwrap().to_string();
        assert!(fiox_tb(&state, &["testbed", "list"]).stdout.contains(&tb));
        let d = fiox_tb(&state, &["testbed", "down", &tb]);
        assert_eq!(d.code, 0, "{}", d.stderr);
        assert!(!sh("losetup", &["-a"]).unwrap().contains(&backing));
        assert!(!std::path::Path::new(&backing).exists());
    }
    let r = fiox_tb(
        &state,
        &[
            "testbed",
            "up",
            "loop",
            "--size=8m",
            "--block_size=4096",
            "--name=bs",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let name = field(&r.stdout, "device")
        .trim_start_matches("/dev/")
        .to_string();
    let lbs = std::fs::read_to_string(format!("/sys/block/{name}/queue/logical_block_size"));
    assert_eq!(lbs.unwrap().trim(), "4096");
    assert_eq!(field(&r.stdout, "block_size"), "4096");
    assert_eq!(fiox_tb(&state, &["testbed", "down", "bs"]).code, 0);
    let bad = fiox_tb(&state, &["testbed", "up", "loop", "--block_size=1000"]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("loop block size 1000"),
        "{}",
        bad.stderr
    );
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

#[test]
fn testbed_tmpfs_ramfs_and_filesystems_mount_and_go() {
    let state = TempDir::new("tbstate");
    let kinds: &[(&[&str], &str)] = &[
        (&["tmpfs", "--size=16m"], "tmpfs"),
        (&["ramfs"], "ramfs"),
        (&["fs", "--fs=ext4", "--size=64m", "--direct_io=on"], "ext4"),
        (
            &["fs", "--fs=xfs", "--size=320m", "--mount_options=noatime"],
            "xfs",
        ),
        (&["fs", "--fs=btrfs", "--size=128m"], "btrfs"),
    ];
    let mut made = Vec::new();
    for (args, fs) in kinds {
        let mut a = vec!["testbed", "up"];
        a.extend_from_slice(args);
        let r = fiox_tb(&state, &a);
        assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
        let mnt = field(&r.stdout, "mount");
        let line = mounts()
            .lines()
            .find(|l| l.split(' ').nth(1) == Some(&mnt))
            .map(String::from);
        let line = line.unwrap_or_else(|| panic!("{mnt} not mounted"));
        assert_eq!(line.split(' ').nth(2), Some(*fs), "{line}");
        // The target takes a file.
        std::fs::write(format!("{mnt}/probe"), b"x").unwrap();
        made.push(mnt);
    }
    let d = fiox_tb(&state, &["testbed", "down", "--all"]);
    assert_eq!(d.code, 0, "{}", d.stderr);
    let m = mounts();
    for mnt in &made {
        assert!(!m.contains(mnt.as_str()), "{mnt} still mounted");
        assert!(!std::path::Path::new(mnt).exists(), "{mnt} left behind");
    }
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

#[test]
fn testbed_cleanup_after_kill_9_leaves_the_system_as_it_was() {
    use std::io::{BufRead, BufReader};
    let state = TempDir::new("tbstate");
    let kept = fiox_tb(
        &state,
        &["testbed", "up", "tmpfs", "--size=8m", "--name=kept"],
    );
    assert_eq!(kept.code, 0, "{}", kept.stderr);
    let mut child = with_test_history(&mut Command::new(fiox_bin()))
        .env("FIOX_TESTBED_DIR", state.path())
        .args([
            "testbed",
            "up",
            "fs",
            "--size=64m",
            "--hold",
            "--name=victim",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let backing = field(&line, "backing");
    let mnt = field(&line, "mount");
    assert!(sh("losetup", &["-a"]).unwrap().contains(&backing));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let list = fiox_tb(&state, &["testbed", "list"]).stdout;
    assert!(
        list.contains("victim") && list.contains("owner gone"),
        "{list}"
    );
    let c = fiox_tb(&state, &["testbed", "cleanup"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(c.stdout.contains("victim"), "{}", c.stdout);
    // The kept testbed stays; the victim's loop device, mount and files are gone (other tests
    // and processes make their own loops and mounts meanwhile: only ours are compared).
    assert!(fiox_tb(&state, &["testbed", "list"])
        .stdout
        .contains("kept"));
    assert_eq!(fiox_tb(&state, &["testbed", "down", "kept"]).code, 0);
    assert!(!sh("losetup", &["-a"]).unwrap().contains(&backing));
    assert!(!mounts().contains(&mnt), "{mnt} still mounted");
    assert!(!std::path::Path::new(&backing).parent().unwrap().exists());
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

/// Run `fiox experiment` with its own testbed state directory.
fn experiment(state: &TempDir, args: &[&str]) -> Run {
    let mut a = vec!["experiment"];
    a.extend_from_slice(args);
    fiox_tb(state, &a)
}

/// `runs` (the manifest's, in run order) are rounds of one run of each of `variants` (sorted),
/// every run of a round with the round's index.
fn assert_rounds(runs: &[serde_json::Value], variants: &[&str]) {
    for round in runs.chunks(variants.len()) {
        let mut vs: Vec<&str> = round
            .iter()
            .map(|r| r["variant"].as_str().unwrap())
            .collect();
        vs.sort();
        assert_eq!(vs, variants, "{runs:?}");
        assert!(
            round.iter().all(|r| r["index"] == round[0]["index"]),
            "{runs:?}"
        );
    }
}

fn manifest_runs(out: &std::path::Path) -> Vec<serde_json::Value> {
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    m["runs"].as_array().unwrap().clone()
}

/// The CI experiment: 2 variants (loop buffered, loop direct I/O) x 3 repetitions, then a
/// resume that adds a fourth repetition only.
#[test]
fn experiment_two_loop_variants_three_runs_then_resume() {
    let state = TempDir::new("tbstate");
    let out = TempDir::new("exp-out");
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/experiments/loop-dio-quick.toml"
    );
    let o = out.join("r");
    let r = experiment(&state, &[file, &format!("--out={o}"), "--repeat=3"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("read.iops") && r.stdout.contains("dio vs buffered"),
        "{}",
        r.stdout
    );
    let outp = std::path::Path::new(&o);
    let runs = manifest_runs(outp);
    // Three rounds, each one run of both variants (in the round's shuffled order).
    assert_rounds(&runs, &["buffered", "dio"]);
    assert_eq!(runs.len(), 6);
    for run in &runs {
        let doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(outp.join(run["file"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        // randwrite, then randread: the runs may write to the experiment's own loop device.
        assert!(
            doc["jobs"][0]["write"]["iops"].as_f64().unwrap() > 0.0,
            "{doc}"
        );
        assert!(doc["jobs"][1]["read"]["iops"].as_f64().unwrap() > 0.0);
        let f = &doc["fiox"];
        assert!(
            f["telemetry"]["summary"]["ctxt"].as_f64().unwrap() > 0.0,
            "{f}"
        );
        let log = outp.join(
            run["file"]
                .as_str()
                .unwrap()
                .replace(".json", ".telemetry.csv"),
        );
        let log = std::fs::read_to_string(&log).unwrap();
        assert!(log.starts_with("t_s,") && log.lines().count() >= 3, "{log}");
        let dio = if run["variant"] == "dio" { "1" } else { "0" };
        assert_eq!(
            f["env"]["targets"][0]["devices"][0]["loop_direct_io"], dio,
            "{f}"
        );
        assert_eq!(f["experiment"]["variant"], run["variant"]);
    }
    // The testbeds went with the experiment.
    assert!(state.entries().is_empty(), "{:?}", state.entries());
    let r = experiment(&state, &[file, &format!("--out={o}"), "--repeat=4"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("resuming: 6 run(s)"), "{}", r.stderr);
    assert_eq!(manifest_runs(outp).len(), 8);
    // The runs carry json+ histograms: --latency merges them.
    let lat = fiox(&["compare", "--latency", &o]).stdout;
    assert!(
        lat.contains("completion latency (us), randread/read"),
        "{lat}"
    );
    assert!(
        lat.contains("\n100 "),
        "no maximum from merged histograms: {lat}"
    );
    let cmp = fiox(&["compare", "--format=json", &o]).json();
    assert_eq!(cmp["sides"], serde_json::json!(["buffered", "dio"]));
    assert_eq!(cmp["runs"], serde_json::json!([4, 4]));
}

/// Ctrl-C in the middle: the testbeds are removed, the finished runs stay in the manifest, and
/// the same command finishes the rest.
#[test]
fn experiment_interrupted_then_resumed() {
    let state = TempDir::new("tbstate");
    let out = TempDir::new("exp-int");
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/experiments/loop-dio-quick.toml"
    );
    let o = out.join("r");
    let child = with_test_history(&mut Command::new(fiox_bin()))
        .env("FIOX_TESTBED_DIR", state.path())
        .args(["experiment", file, &format!("--out={o}")])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let outp = std::path::Path::new(&o).to_path_buf();
    // Wait for the first finished run, then interrupt.
    let t0 = std::time::Instant::now();
    while !outp.join("manifest.json").exists() || manifest_runs(&outp).is_empty() {
        assert!(t0.elapsed().as_secs() < 60, "no run finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    sh("kill", &["-INT", &child.id().to_string()]).unwrap();
    let r = wait(child);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert!(r.stderr.contains("to resume"), "{}", r.stderr);
    assert!(
        state.entries().is_empty(),
        "testbeds left: {:?}",
        state.entries()
    );
    let before = manifest_runs(&outp).len();
    assert!((1..10).contains(&before), "{before}");
    let r = experiment(&state, &[file, &format!("--out={o}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(manifest_runs(&outp).len(), 10);
}

/// `--telemetry`: a `fiox.telemetry` section in JSON with the run's context switches and the
/// memory levels, a block after the normal report; nothing of it without the switch.
#[test]
fn telemetry_switch_adds_json_section_and_normal_block() {
    let dir = TempDir::new("tele");
    let f = dir.join("f");
    let job = [
        "--name=t",
        "--ioengine=psync",
        "--rw=write",
        "--bs=64k",
        "--size=8m",
    ];
    let mut a: Vec<&str> = job.to_vec();
    let fname = format!("--filename={f}");
    a.extend([fname.as_str(), "--output-format=json", "--telemetry=100"]);
    let r = fiox(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let t = &r.json()["fiox"]["telemetry"];
    assert_eq!(t["interval_ms"], 100);
    assert!(t["samples"].as_u64().unwrap() >= 2, "{t}");
    assert!(t["summary"]["ctxt"].as_f64().unwrap() > 0.0, "{t}");
    assert!(
        t["summary"]["Cached_kb.mean"].as_f64().unwrap() > 0.0,
        "{t}"
    );
    assert!(t["series"].as_array().unwrap().len() >= 2);
    let env = &r.json()["fiox"]["env"];
    assert!(env["kernel"]["release"].is_string(), "{env}");
    assert_eq!(env["targets"][0]["path"], f.as_str(), "{env}");
    a.pop();
    let plain = fiox(&a);
    assert!(plain.json()["fiox"].get("telemetry").is_none());
    let normal = fiox(&[
        job[0],
        job[1],
        job[2],
        job[3],
        job[4],
        &fname,
        "--telemetry",
    ]);
    assert_eq!(normal.code, 0, "{}", normal.stderr);
    assert!(
        normal.stdout.contains("System telemetry ("),
        "{}",
        normal.stdout
    );
    assert!(
        normal.stdout.contains("memory: Buffers="),
        "{}",
        normal.stdout
    );
    let bad = fiox(&[job[0], "--telemetry=0"]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("--telemetry=0"), "{}", bad.stderr);
}

#[test]
fn env_describes_the_kernel_and_a_target() {
    let r = fiox(&["env", "/proc", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let e = r.json();
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(e["kernel"]["release"], release.trim());
    assert_eq!(e["targets"][0]["filesystem"], "proc");
    let head = sh(
        "git",
        &["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"],
    );
    if let Ok(head) = head {
        // Built from this checkout (a test run rebuilds when HEAD moved).
        assert_eq!(e["fiox"]["commit"], head.trim(), "{e}");
    }
    // Issue 45: which accelerator a guest would get, and why.
    let kvm_answers = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok_and(|f| {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
            // SAFETY: KVM_GET_API_VERSION's argument is a plain 0; `f` holds the descriptor.
            let version = unsafe { libc::ioctl(fd, 0xAE00, 0 as libc::c_ulong) };
            version >= 0
        });
    let want: &[&str] = if kvm_answers {
        &["kvm", "tcg"]
    } else {
        &["tcg"]
    };
    assert_eq!(e["guest"]["accelerators"], serde_json::json!(want), "{e}");
    let t = fiox(&["env"]);
    assert!(t.stdout.starts_with("kernel: "), "{}", t.stdout);
    let guest = t
        .stdout
        .lines()
        .find(|l| l.starts_with("guest: "))
        .unwrap_or("");
    assert!(
        guest.starts_with(&format!("guest: {} (", want.join(", then "))),
        "{}",
        t.stdout
    );
    assert_eq!(fiox(&["env", "/no/such/path"]).code, 1);
}

/// Every committed experiment file parses, names its job file, and its jobs parse.
#[test]
fn example_experiment_files_are_valid() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/experiments");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let (exp, jobs) = fiox_experiment::config::Experiment::load(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(exp.variants.len() >= 2, "{}", p.display());
        let tmp = TempDir::new("jobs");
        let f = tmp.join("j.fio");
        std::fs::write(&f, &jobs).unwrap();
        let r = fiox(&["--parse-only", &f]);
        assert_eq!(r.code, 0, "{}: {}", p.display(), r.stderr);
        n += 1;
    }
    assert!(n >= 3);
}

/// The slow testbed: a FUSE file whose requests each wait `delay_us`, served by a fiox process;
/// `down` stops it and unmounts; after a kill -9 of the server, `cleanup` removes the rest.
#[test]
fn testbed_slow_device_delays_requests_and_goes_away() {
    if !kernel_device("/dev/fuse", "FUSE") {
        return;
    }
    let state = TempDir::new("tbstate");
    let r = fiox_tb(
        &state,
        &[
            "testbed",
            "up",
            "slow",
            "--size=4m",
            "--delay_us=2000",
            "--name=s",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let file = field(&r.stdout, "file");
    let mnt = field(&r.stdout, "mount");
    let pid = field(&r.stdout, "server_pid");
    // 50 direct 4 KiB reads at 2 ms each: at least 100 ms (a lower bound; load only adds).
    let t0 = std::time::Instant::now();
    let job = fiox(&[
        "--name=s",
        "--ioengine=psync",
        "--rw=randread",
        "--number_ios=50",
        "--size=4m",
        &format!("--filename={file}"),
        "--output-format=json",
    ]);
    assert_eq!(job.code, 0, "{}", job.stderr);
    assert!(t0.elapsed() >= std::time::Duration::from_millis(100));
    assert_eq!(job.json()["jobs"][0]["read"]["total_ios"], 50);
    assert_eq!(fiox_tb(&state, &["testbed", "down", "s"]).code, 0);
    assert!(!mounts().contains(&mnt), "{mnt} still mounted");
    // Gone, or a zombie waiting for whichever process inherited it to reap it.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "server {pid} still runs: {stat}"
    );
    // kill -9 of the server: the record says so, cleanup unmounts the dead mount.
    let r = fiox_tb(&state, &["testbed", "up", "slow", "--size=1m", "--name=k"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (mnt, pid) = (field(&r.stdout, "mount"), field(&r.stdout, "server_pid"));
    sh("kill", &["-9", &pid]).unwrap();
    let t0 = std::time::Instant::now();
    while !fiox_tb(&state, &["testbed", "list"])
        .stdout
        .contains("owner gone")
    {
        assert!(
            t0.elapsed().as_secs() < 10,
            "the dead server is not noticed"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let c = fiox_tb(&state, &["testbed", "cleanup"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(!mounts().contains(&mnt), "{mnt} still mounted");
    assert!(!std::path::Path::new(&mnt).exists());
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

/// An experiment of two label-only variants on a rate-limited null job (steady IOPS),
/// `reps` repetitions each before the stop rule is consulted.
fn null_experiment(dir: &TempDir, reps: u32, stop: &str, rate: &str) -> String {
    let f = dir.join("e.toml");
    let text = format!(
        "name = \"null\"\nrepetitions = {reps}\ntelemetry_ms = 0\njobs = \"\"\"\n[n]\n\
         ioengine=null\nrw=randread\nsize=1g\ntime_based\nruntime=1\n{rate}\n\"\"\"\n\
         {stop}\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\noptions = {{ rate_iops = \"1000\" }}\n"
    );
    std::fs::write(&f, text).unwrap();
    f
}

/// The adaptive stop: a precise enough metric stops at the repetitions; an unreachable
/// precision (unlimited null-engine IOPS never repeat to 1e-6) runs to max_runs and says so;
/// a resume with a changed job is refused; an unknown stop metric too. The loose
/// case takes three repetitions: with two, t(0.975, 1) = 12.7 makes ci = 0.5 hold only for
/// runs within 8% of each other, which one stall of a loaded machine near a run's end breaks;
/// with three it holds up to a 20% coefficient of variation.
#[test]
fn experiment_adaptive_stop() {
    let dir = TempDir::new("adapt");
    // The stop judges b's change against a, with the interval compare prints (the paired
    // log ratio): the context switches of rate-limited runs vary a little, and at ci = 0.9
    // three rounds suffice up to a 36% standard deviation of the log ratio, which a loaded
    // machine may still exceed for a round or two, but not for all.
    let f = null_experiment(
        &dir,
        3,
        "[stop]\nci = 0.9\nmax_runs = 5\nmetric = \"ctx\"",
        "rate_iops=2000",
    );
    let state = TempDir::new("tbstate");
    let o = dir.join("loose");
    let r = experiment(&state, &[&f, &format!("--out={o}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let n = manifest_runs(std::path::Path::new(&o)).len();
    assert!((6..10).contains(&n), "{n} runs: {}", r.stderr);
    assert!(!r.stderr.contains("without the target"), "{}", r.stderr);
    // b's override halves the rate.
    assert!(r.stdout.contains("b vs a"), "{}", r.stdout);
    let f = null_experiment(&dir, 2, "[stop]\nci = 0.000001\nmax_runs = 3", "");
    let o = dir.join("strict");
    let r = experiment(&state, &[&f, &format!("--out={o}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let runs = manifest_runs(std::path::Path::new(&o));
    // Rounds of one run per variant, each in its own shuffled order, positions recorded.
    assert_rounds(&runs, &["a", "b"]);
    for round in runs.chunks(2) {
        let pos: Vec<u64> = round
            .iter()
            .map(|r| r["position"].as_u64().unwrap())
            .collect();
        assert_eq!(pos, [0, 1], "{runs:?}");
    }
    assert!(
        r.stderr
            .contains("adaptive stop: max_runs = 3 reached without the target"),
        "{}",
        r.stderr
    );
    // Without `metric`, every row compare shows is judged (the headline metrics of the job,
    // b against a), and the rows still too wide are named.
    assert!(
        r.stderr
            .contains("rows of the headline metrics are wider than ±0.00%")
            && r.stderr.contains("n read.iops: b vs a ±"),
        "{}",
        r.stderr
    );
    // Each repetition its own seed, recorded in the manifest and the run's JSON.
    let seeds: std::collections::BTreeSet<u64> =
        runs.iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds.len(), 6, "{runs:?}");
    // A changed definition is refused on resume, naming what changed.
    let changed = std::fs::read_to_string(&f)
        .unwrap()
        .replace("size=1g", "size=2g");
    std::fs::write(&f, &changed).unwrap();
    let bad = experiment(&state, &[&f, &format!("--out={o}"), "--repeat=4"]);
    assert_ne!(bad.code, 0);
    assert!(
        bad.stderr.contains(
            "variant a changed since its runs there (job text line 4: 'size=1g' -> 'size=2g')"
        ),
        "{}",
        bad.stderr
    );
    std::fs::write(&f, changed.replace("size=2g", "size=1g")).unwrap();
    // One variant's runs appended later (a kernel A/B across a reboot): only "a" runs.
    let r = experiment(
        &state,
        &[&f, &format!("--out={o}"), "--variant=a", "--repeat=4"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let runs = manifest_runs(std::path::Path::new(&o));
    assert_eq!(runs.len(), 7);
    assert_eq!(runs[6]["variant"], "a");
    let bad = experiment(&state, &[&f, &format!("--out={o}"), "--variant=zzz"]);
    assert!(
        bad.stderr.contains("no such variant; the file has a, b"),
        "{}",
        bad.stderr
    );
    let f = null_experiment(
        &dir,
        2,
        "[stop]\nci = 0.1\nmax_runs = 3\nmetric = \"latency\"",
        "",
    );
    let bad = experiment(&state, &[&f, &format!("--out={}", dir.join("unknown"))]);
    assert!(
        bad.stderr
            .contains("metric = \"latency\" is none of fiox's metrics"),
        "{}",
        bad.stderr
    );
}

/// Every variant's options are checked before the first run, and compare pairs each variant
/// with the baseline the experiment file declares.
#[test]
fn experiment_checks_every_variant_first_and_pairs_declared_baselines() {
    let dir = TempDir::new("baselines");
    let f = dir.join("e.toml");
    let text = |rw: &str| {
        format!(
            "name = \"bl\"\nrepetitions = 2\ntelemetry_ms = 0\njobs = \"\"\"\n[n]\n\
             ioengine=null\nrw=randread\nsize=1g\ntime_based\nruntime=1\nrate_iops=2000\n\"\"\"\n\
             [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nbaseline = \"a\"\n\
             [[variant]]\nname = \"c\"\nbaseline = \"b\"\noptions = {{ rw = \"{rw}\" }}\n"
        )
    };
    std::fs::write(&f, text("randred")).unwrap();
    let state = TempDir::new("tbstate");
    let o = dir.join("out");
    let bad = experiment(&state, &[&f, &format!("--out={o}")]);
    assert_ne!(bad.code, 0);
    assert!(
        bad.stderr.contains("variant c: its job file")
            && bad.stderr.contains("'randred' is not one of"),
        "{}",
        bad.stderr
    );
    assert!(manifest_runs(std::path::Path::new(&o)).is_empty());
    std::fs::write(&f, text("randread")).unwrap();
    let r = experiment(&state, &[&f, &format!("--out={o}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("b vs a") && r.stdout.contains("c vs b"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("c vs a"), "{}", r.stdout);
}

/// kill -9 of a running experiment: its testbeds are orphaned, and `fiox testbed cleanup`
/// removes its loop devices, mounts and directories.
#[test]
fn experiment_killed_then_testbed_cleanup() {
    let state = TempDir::new("tbstate");
    let out = TempDir::new("exp-kill");
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/experiments/loop-dio-quick.toml"
    );
    let o = out.join("r");
    let mut child = with_test_history(&mut Command::new(fiox_bin()))
        .env("FIOX_TESTBED_DIR", state.path())
        .args(["experiment", file, &format!("--out={o}")])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let outp = std::path::Path::new(&o).to_path_buf();
    let t0 = std::time::Instant::now();
    while !outp.join("manifest.json").exists() || manifest_runs(&outp).is_empty() {
        assert!(t0.elapsed().as_secs() < 60, "no run finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let list = fiox_tb(&state, &["testbed", "list"]).stdout;
    let backings: Vec<String> = list.lines().map(|l| field(l, "backing")).collect();
    assert_eq!(backings.len(), 2, "{list}");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let c = fiox_tb(&state, &["testbed", "cleanup"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    assert!(state.entries().is_empty(), "{:?}", state.entries());
    // A run the experiment had started may still hold its loop device open for a moment;
    // LOOP_CLR_FD then leaves the detach to the kernel at the last close.
    let t0 = std::time::Instant::now();
    loop {
        let loops = sh("losetup", &["-a"]).unwrap();
        if backings.iter().all(|b| !loops.contains(b.as_str())) {
            break;
        }
        assert!(t0.elapsed().as_secs() < 20, "loop devices left: {loops}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for b in &backings {
        assert!(!std::path::Path::new(b).parent().unwrap().exists(), "{b}");
    }
}

/// A run that fails is not recorded and the experiment goes on with the others (a guest that
/// panicked once in early boot used to stop the whole plan): the exit status counts the failed
/// runs, their messages stay beside the results, and the same command again re-runs only
/// them. A variant whose runs fail three times in a row stops the experiment (issue 45).
#[test]
fn a_failed_run_is_not_recorded_and_the_experiment_goes_on() {
    let dir = TempDir::new("failrun");
    let data = dir.join("data");
    let file = |reps: u32| {
        let f = dir.join(&format!("e{reps}.toml"));
        let text = format!(
            "name = \"f\"\nrepetitions = {reps}\ntelemetry_ms = 0\njobs = \"\"\"\n[n]\n\
             rw=read\nsize=64k\nbs=4k\nallow_file_create=0\nfilename={data}\n\"\"\"\n\
             [[variant]]\nname = \"a\"\noptions = {{ ioengine = \"null\" }}\n\
             [[variant]]\nname = \"b\"\n"
        );
        std::fs::write(&f, text).unwrap();
        f
    };
    let state = TempDir::new("tbstate");
    let (f2, o) = (file(2), dir.join("out"));
    let out = std::path::Path::new(&o);
    // b reads a file that is not there yet: both of its runs fail, a's are recorded.
    let r = experiment(&state, &[&f2, &format!("--out={o}")]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("the experiment goes on"), "{}", r.stderr);
    let runs = manifest_runs(out);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|r| r["variant"] == "a"), "{runs:?}");
    let kept: Vec<String> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let stderrs = kept
        .iter()
        .filter(|n| n.starts_with("b-") && n.ends_with(".stderr"));
    assert_eq!(stderrs.count(), 2, "{kept:?}");
    assert!(!kept.iter().any(|n| n.ends_with(".partial")), "{kept:?}");
    // With the file there, the same command runs b's two runs only.
    std::fs::write(&data, vec![7u8; 64 << 10]).unwrap();
    let r = experiment(&state, &[&f2, &format!("--out={o}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let runs = manifest_runs(out);
    assert_eq!(runs.len(), 4, "{runs:?}");
    assert_eq!(runs.iter().filter(|r| r["variant"] == "b").count(), 2);
    // Three failures of one variant in a row: stop.
    std::fs::remove_file(&data).unwrap();
    let o3 = dir.join("out3");
    let r = experiment(&state, &[&file(4), &format!("--out={o3}")]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("3 runs in a row failed"), "{}", r.stderr);
}

/// Issue 42's real-run check of what compare claims, on real runs under scheduling noise (a
/// CPU hog the test starts): 12 null-engine jobs held by rate_iops, three variants in 5
/// shuffled rounds: `a2` is `a` again, `b` throttles 4 of the 12 jobs by 20%. The paired
/// design finds `b`'s -20% on at least 3 of its 4 jobs and claims nothing on the other 8;
/// `a2` against `a` claims nothing on any throughput row; a side against its own runs claims
/// nothing at all.
#[test]
fn compare_finds_a_real_change_under_a_cpu_hog_and_claims_nothing_else() {
    let dir = TempDir::new("hog-exp");
    let jobs: String = (1..=12)
        .map(|i| {
            let rate = if i <= 4 { "${SLOW}" } else { "1000" };
            format!("[j{i}]\nrate_iops={rate}\n")
        })
        .collect();
    let f = dir.join("hog.toml");
    std::fs::write(
        &f,
        format!(
            "name = \"hog\"\nrepetitions = 5\ntelemetry_ms = 0\njobs = \"\"\"\n[global]\n\
             ioengine=null\nrw=randread\nsize=1g\ntime_based\nruntime=1\n{jobs}\"\"\"\n\
             [[variant]]\nname = \"a\"\nenv = {{ SLOW = \"1000\" }}\n\
             [[variant]]\nname = \"a2\"\nenv = {{ SLOW = \"1000\" }}\n\
             [[variant]]\nname = \"b\"\nenv = {{ SLOW = \"800\" }}\n"
        ),
    )
    .unwrap();
    let state = TempDir::new("tbstate");
    let out = dir.join("out");
    let hog = harness::hog::CpuHog::start();
    let r = experiment(&state, &[&f, &format!("--out={out}")]);
    drop(hog);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let c = fiox(&["compare", &out, "--format=json", "--metric=iops,bw_mib"]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    let v: serde_json::Value = serde_json::from_str(&c.stdout).unwrap();
    assert_eq!(v["sides"], serde_json::json!(["a", "a2", "b"]), "{v:#}");
    let verdict = |row: &serde_json::Value, k: usize| {
        row["changes"][k]["verdict"]
            .as_str()
            .unwrap_or("none")
            .to_string()
    };
    let mut found = 0;
    for row in v["rows"].as_array().unwrap() {
        let job: usize = row["job"].as_str().unwrap()[1..].parse().unwrap();
        let (aa, b) = (verdict(row, 0), verdict(row, 1));
        assert!(
            !["better", "worse", "different"].contains(&aa.as_str()),
            "a2 vs a claims on {row:#}"
        );
        if job <= 4 {
            found += usize::from(b == "worse" && row["metric"] == "read.iops");
        } else {
            assert!(
                !["better", "worse", "different"].contains(&b.as_str()),
                "b vs a claims on an unchanged job: {row:#}"
            );
        }
    }
    assert!(found >= 3, "-20% found on {found} of 4 jobs:\n{}", c.stdout);
    // The same runs on both sides: no claim on any metric.
    let runs = format!("{out}/runs");
    let same = fiox(&[
        "compare",
        "--format=json",
        "--metric=all",
        &format!("--side=x={runs}/a-*.json"),
        &format!("--side=y={runs}/a-*.json"),
    ]);
    assert_eq!(same.code, 0, "{}", same.stderr);
    let s: serde_json::Value = serde_json::from_str(&same.stdout).unwrap();
    for row in s["rows"].as_array().unwrap() {
        let v = verdict(row, 0);
        assert!(
            !["better", "worse", "different"].contains(&v.as_str()),
            "identical sides claim: {row:#}"
        );
    }
}
