//! Machine limits (`--machine-memory`, `--machine-cpus`, an experiment's `machine = {...}`):
//! the run really goes into a cgroup with that memory limit and cpuset, its page cache stays
//! bounded by it (checked from outside with fincore, against a run without limits), the group
//! and its record go away after the run, on Ctrl-C, and through `fiox testbed cleanup` after
//! a kill -9; asking for more CPUs than the machine has is a clear error.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// Bytes of `file` in the page cache, by fincore (util-linux).
fn cached_bytes(file: &str) -> u64 {
    require_tool("fincore");
    let out = sh(
        "fincore",
        &["--bytes", "--noheadings", "--output=RES", file],
    )
    .unwrap();
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("fincore: {out:?}"))
}

fn drop_file_cache() {
    let _ = Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "1\n").expect("drop caches (root)");
}

/// The groups a run's `fiox.env.limits` names, none of which may remain.
fn assert_groups_gone(limits: &Value) {
    let groups = limits["groups"].as_array().expect("groups");
    assert!(!groups.is_empty(), "{limits}");
    for g in groups {
        let g = g.as_str().unwrap();
        assert!(!Path::new(g).exists(), "{g} was left behind");
    }
}

fn read_job(file: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "--name=big",
        "--rw=read",
        "--bs=1m",
        "--size=640m",
        "--ioengine=psync",
        "--output-format=json",
    ];
    let f = format!("--filename={file}");
    args.push(&f);
    args.extend_from_slice(extra);
    fiox(&args)
}

#[test]
fn a_run_under_256m_keeps_its_peak_and_page_cache_under_it() {
    assert!(is_root(), "cgroups need root");
    let dir = TempDir::under(Path::new("/var/tmp"), "machine");
    let file = dir.join("big.dat");
    // The control: without limits, a buffered read of 640 MiB leaves all of it cached.
    let r = read_job(&file, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.json()["fiox"]["env"].get("limits").is_none());
    drop_file_cache();
    let r = read_job(&file, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let free_run = cached_bytes(&file);
    assert!(free_run > 512 * MIB, "control: {free_run} bytes cached");
    drop_file_cache();
    let r = read_job(&file, &["--machine-memory=256m", "--machine-cpus=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "", "a run that goes well says nothing on stderr");
    let j = r.json();
    let l = &j["fiox"]["env"]["limits"];
    assert_eq!(l["memory_bytes"], 256 * MIB, "{l}");
    assert_eq!(l["cpus"], 1, "{l}");
    assert_eq!(l["cpu_list"].as_str().map(str::len), Some(1), "{l}");
    let peak = l["peak_bytes"].as_u64().expect("peak");
    let cache = l["page_cache_peak_bytes"].as_u64().expect("page cache");
    assert!(peak <= 256 * MIB, "{l}");
    assert!(peak > 128 * MIB, "the run must have used its memory: {l}");
    assert!(cache <= 256 * MIB && cache > 64 * MIB, "{l}");
    assert!(l["limit_hits"].as_u64().unwrap() > 0, "{l}");
    assert_eq!(l["warnings"], serde_json::json!([]), "{l}");
    // Seen from outside: the file's pages in memory are those the group could hold.
    let limited = cached_bytes(&file);
    assert!(
        limited <= 256 * MIB,
        "{limited} bytes cached under a 256 MiB limit"
    );
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 640 * MIB);
    assert_groups_gone(l);
}

#[test]
fn a_limit_the_run_never_reaches_is_a_warning_value() {
    assert!(is_root(), "cgroups need root");
    let r = fiox(&[
        "--name=n",
        "--ioengine=null",
        "--rw=read",
        "--size=64m",
        "--machine-memory=1g",
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = &r.json()["fiox"]["env"]["limits"];
    assert_eq!(l["warnings"][0]["code"], "machine-limit-not-reached", "{l}");
    assert!(l["warnings"][0]["fix"].as_str().unwrap().contains("lower"));
    assert!(l["cpus"].is_null(), "{l}");
    // The normal report says the same after fiox's advice.
    let r = fiox(&[
        "--name=n",
        "--ioengine=null",
        "--rw=read",
        "--size=64m",
        "--machine-memory=1g",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("fiox machine limits (cgroup v")
            && r.stdout.contains("machine-limit-not-reached"),
        "{}",
        r.stdout
    );
}

#[test]
fn more_cpus_than_the_machine_has_and_bad_sizes_are_clear_errors() {
    let r = fiox(&[
        "--name=n",
        "--ioengine=null",
        "--size=1m",
        "--machine-cpus=4096",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("machine cpus = 4096") && r.stderr.contains("ask for at most"),
        "{}",
        r.stderr
    );
    let r = fiox(&[
        "--name=n",
        "--ioengine=null",
        "--size=1m",
        "--machine-memory=lots",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("expected a size"), "{}", r.stderr);
    let r = fiox(&[
        "--name=n",
        "--ioengine=null",
        "--size=1m",
        "--machine-cpu=1",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("machine-cpus"), "{}", r.stderr);
}

/// A null job that runs for a while under a 64 MiB limit, recorded in `state`.
fn spawn_limited(state: &TempDir) -> std::process::Child {
    Command::new(fiox_bin())
        .args([
            "--name=n",
            "--ioengine=null",
            "--rw=read",
            "--size=1g",
            "--time_based",
            "--runtime=30",
            "--machine-memory=64m",
            "--output-format=json",
        ])
        .env("FIOX_TESTBED_DIR", state.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fiox")
}

/// The group of the run's record in `state`, once the run is in it.
fn group_of_record(state: &TempDir) -> String {
    let t0 = Instant::now();
    loop {
        for e in state.entries() {
            let text = std::fs::read_to_string(state.path().join(&e)).unwrap_or_default();
            if let Some(l) = text.lines().find(|l| l.starts_with("cgroup ")) {
                let path = l.splitn(5, ' ').nth(4).unwrap().to_string();
                let procs = std::fs::read_to_string(Path::new(&path).join("cgroup.procs"));
                if procs.is_ok_and(|p| !p.trim().is_empty()) {
                    return path;
                }
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "no machine record");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_removes_the_group_and_kill_9_leaves_it_to_cleanup() {
    assert!(is_root(), "cgroups need root");
    let state = TempDir::new("machine-state");
    // Ctrl-C: the run reports what it did, then leaves and removes its group and record.
    let child = spawn_limited(&state);
    let group = group_of_record(&state);
    sh("kill", &["-INT", &child.id().to_string()]).unwrap();
    let r = wait(child);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert_eq!(r.json()["fiox"]["env"]["limits"]["memory_bytes"], 64 * MIB);
    assert!(!Path::new(&group).exists(), "{group} left after Ctrl-C");
    assert!(state.entries().is_empty(), "{:?}", state.entries());
    // kill -9: the group and the record stay until `fiox testbed cleanup`.
    let mut child = spawn_limited(&state);
    let group = group_of_record(&state);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(Path::new(&group).exists());
    let o = Command::new(fiox_bin())
        .args(["testbed", "cleanup"])
        .env("FIOX_TESTBED_DIR", state.path())
        .output()
        .unwrap();
    let r = Run::from(o);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!Path::new(&group).exists(), "{group} left after cleanup");
    assert!(state.entries().is_empty(), "{:?}", state.entries());
}

#[test]
fn an_experiment_runs_each_variant_under_its_machine() {
    assert!(is_root(), "cgroups need root");
    let dir = TempDir::new("machine-exp");
    let toml = dir.join("m.toml");
    std::fs::write(
        &toml,
        "name = \"m\"\njobs = \"\"\"\n[n]\nioengine=null\nrw=read\nsize=32m\n\"\"\"\n\
         machine = { memory = \"128m\" }\n\
         [[variant]]\nname = \"a\"\n\
         [[variant]]\nname = \"b\"\nmachine = { memory = \"96m\", cpus = 1 }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let r = fiox(&["experiment", &toml, &format!("--out={out}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let run = |v: &str| -> Value {
        let text = std::fs::read_to_string(format!("{out}/runs/{v}-000.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let (a, b) = (run("a"), run("b"));
    let (la, lb) = (&a["fiox"]["env"]["limits"], &b["fiox"]["env"]["limits"]);
    assert_eq!(la["memory_bytes"], 128 * MIB, "{la}");
    assert!(la["cpus"].is_null(), "{la}");
    assert_eq!(lb["memory_bytes"], 96 * MIB, "{lb}");
    assert_eq!(lb["cpus"], 1, "{lb}");
    assert_groups_gone(la);
    assert_groups_gone(lb);
    let manifest = std::fs::read_to_string(format!("{out}/manifest.json")).unwrap();
    assert!(manifest.contains("memory=96m cpus=1"), "{manifest}");
    // More CPUs than there are: refused before any run.
    std::fs::write(
        &toml,
        "name = \"m2\"\njobs = \"[n]\\nioengine=null\\nsize=1m\\n\"\n\
         [[variant]]\nname = \"a\"\nmachine = { cpus = 4096 }\n",
    )
    .unwrap();
    let r = fiox(&["experiment", &toml, &format!("--out={}", dir.join("out2"))]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("variant a: machine:")
            && r.stderr
                .contains("machine cpus = 4096: this machine lets fiox use"),
        "{}",
        r.stderr
    );
}

/// The warning is judged per run, by what its own loop device cached (its backing file's
/// page cache after the run, by identity), not by the system's page cache: the direct-I/O
/// variant of the same experiment never gets it, whatever the buffered one did to the cache.
#[test]
fn a_buffered_loop_devices_cache_escapes_a_v1_limit_and_says_so() {
    assert!(is_root(), "cgroups need root");
    let dir = TempDir::new("machine-loop");
    let toml = dir.join("l.toml");
    // The job reads the loop device with O_DIRECT: its own reads are not cached, the loop
    // driver's buffered reads of the backing file are.
    std::fs::write(
        &toml,
        "name = \"l\"\njobs = \"\"\"\n[r]\nrw=read\nbs=1m\ndirect=1\nsize=512m\n\"\"\"\n\
         drop_caches = true\ntelemetry_ms = 200\nmachine = { memory = \"128m\" }\n\
         order = \"sequential\"\n\
         [[variant]]\nname = \"buffered\"\n\
         testbed = { kind = \"loop\", size = \"512m\", direct_io = \"off\", dir = \"/var/tmp\" }\n\
         [[variant]]\nname = \"direct\"\n\
         testbed = { kind = \"loop\", size = \"512m\", direct_io = \"on\", dir = \"/var/tmp\" }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let r = fiox(&["experiment", &toml, &format!("--out={out}")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let run = |v: &str| -> Value {
        let text = std::fs::read_to_string(format!("{out}/runs/{v}-000.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let escaped = |run: &Value| {
        run["fiox"]["env"]["limits"]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "machine-limit-escaped")
    };
    let (buffered, direct) = (run("buffered"), run("direct"));
    let l = &buffered["fiox"]["env"]["limits"];
    let cached = |run: &Value| {
        run["fiox"]["backing_cache"][0]["cached_bytes"]
            .as_u64()
            .unwrap()
    };
    // cgroup v1: the backing file's cache is the loop worker's, outside the run's group;
    // cgroup2 charges it to the run (Linux 5.12+), so the limit holds.
    assert_eq!(escaped(&buffered), l["cgroup"] == "v1", "{l}");
    if l["cgroup"] == "v1" {
        assert!(cached(&buffered) > 160 << 20, "{}", buffered["fiox"]);
    }
    assert!(cached(&direct) < 16 << 20, "{}", direct["fiox"]);
    assert!(!escaped(&direct), "{}", direct["fiox"]["env"]);
    // compare can show it: the telemetry row of the backing file's cache.
    assert!(
        buffered["fiox"]["telemetry"]["summary"]["loop_backing_cached_kb"].is_u64(),
        "{}",
        buffered["fiox"]["telemetry"]
    );
}
