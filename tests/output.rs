//! Where fiox prints what, compared with fio 3.33 where fio runs the same job: stderr is for
//! errors only (a run that goes well prints nothing there: scripts written for fio take
//! stderr output as a failure); the header, "Laying out IO file" and notes go to stdout or
//! `--output`, and into the JSON under `fiox` when stdout is one JSON document; fiox's advice
//! is part of the report and reaches stderr only when asked. Also the details a fio reader
//! notices: Disk stats of loop devices and new files, and bw/iops samples on fio's instants.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// Run `bin` (fio or fiox) in `cwd`.
fn tool_in(bin: &str, cwd: &Path, args: &[&str]) -> Run {
    let o = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {bin}: {e}"));
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// fiox, and fio when it is installed.
fn tools() -> Vec<&'static str> {
    let mut t = vec![fiox_bin()];
    if need_fio() {
        t.push("fio");
    }
    t
}

fn pos(hay: &str, needle: &str) -> usize {
    hay.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} missing from:\n{hay}"))
}

/// A run's stderr, less the one line fio 3.33 prints when a block device leaves while it
/// looks for the job's disk (diskutil.c's find_block_dir: `perror("stat")` on a
/// /sys/block entry gone between readdir and stat): tests running beside this one remove
/// their loop devices, which is not this run's doing. fiox's stderr is taken whole.
fn quiet_stderr<'r>(tool: &str, r: &'r Run) -> &'r str {
    if tool == "fio" && r.stderr == "stat: No such file or directory\n" {
        return "";
    }
    r.stderr.as_str()
}

/// A job that lays its file out: stderr stays empty for fio and fiox, whatever the format;
/// the layout line goes to stdout after the header (or to --output) with the normal report,
/// and with JSON alone into fiox's `fiox.notes` (fio prints none then).
#[test]
fn a_good_run_prints_nothing_on_stderr_as_fio() {
    for tool in tools() {
        let dir = TempDir::new("quiet");
        let f = dir.join("f");
        let file = format!("--filename={f}");
        let job = [
            "--name=q",
            file.as_str(),
            "--size=4m",
            "--rw=read",
            "--bs=64k",
        ];
        let fresh = || {
            let _ = std::fs::remove_file(&f);
        };
        let r = tool_in(tool, dir.path(), &job);
        assert_eq!((r.code, quiet_stderr(tool, &r)), (0, ""), "{tool}");
        let o = &r.stdout;
        assert!(
            pos(o, "Starting 1 ") < pos(o, "q: Laying out IO file (1 file / 4MiB)\n")
                && pos(o, "Laying out") < pos(o, "q: (groupid=0"),
            "{tool}: {o}"
        );
        fresh();
        let r = tool_in(
            tool,
            dir.path(),
            &[&job[..], &["--output-format=json"]].concat(),
        );
        assert_eq!((r.code, quiet_stderr(tool, &r)), (0, ""), "{tool}");
        let v = r.json();
        if tool == fiox_bin() {
            assert_eq!(
                v["fiox"]["notes"],
                serde_json::json!(["q: Laying out IO file (1 file / 4MiB)"])
            );
        }
        fresh();
        let out = dir.join("report.txt");
        let to = format!("--output={out}");
        let r = tool_in(tool, dir.path(), &[&job[..], &[to.as_str()]].concat());
        assert_eq!(
            (r.code, r.stdout.as_str(), quiet_stderr(tool, &r)),
            (0, "", ""),
            "{tool}"
        );
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            pos(&text, "Laying out") < pos(&text, "q: (groupid=0"),
            "{tool}: {text}"
        );
        fresh();
        // normal and JSON together: the header and layout line on stdout first, as fio.
        let both = [&job[..], &["--output-format=json,normal"]].concat();
        let r = tool_in(tool, dir.path(), &both);
        assert_eq!((r.code, quiet_stderr(tool, &r)), (0, ""), "{tool}");
        assert!(
            pos(&r.stdout, "Laying out") < pos(&r.stdout, "\n{\n"),
            "{tool}: {}",
            r.stdout
        );
    }
}

/// fiox's notes on how the options were read go where fio prints its "note:" lines (stdout,
/// before the header) and into the JSON under `fiox.notes`; `--warnings-fatal` (fio's switch:
/// parser warnings are fatal) makes those fio warns about too stop the run before any I/O, on
/// stderr, exit 1, and leaves fiox's own notes alone.
#[test]
fn notes_go_to_stdout_or_json_and_warnings_fatal_stops_on_fios_warnings() {
    let dir = TempDir::new("notes");
    let file = format!("--filename={}", dir.join("f"));
    let job = [
        "--name=o",
        file.as_str(),
        "--size=1m",
        "--rw=write",
        "--ioengine=psync",
        "--iodepth=2",
        "--io_submit_mode=offload",
    ];
    let note = "fiox: job o: io_submit_mode=offload with ioengine=psync";
    let r = fiox(&job);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(
        r.stdout.starts_with(note) && pos(&r.stdout, note) < pos(&r.stdout, "o: (g=0)"),
        "{}",
        r.stdout
    );
    let r = fiox(&[&job[..], &["--output-format=json"]].concat());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let notes = r.json()["fiox"]["notes"].to_string();
    assert!(
        notes.contains("io_submit_mode=offload with ioengine=psync"),
        "{notes}"
    );
    std::fs::remove_file(dir.join("f")).unwrap();
    // fio does not warn about this one: -w leaves it a note.
    let r = fiox(&[&job[..], &["--warnings-fatal"]].concat());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(r.stdout.starts_with(note), "{}", r.stdout);
    std::fs::remove_file(dir.join("f")).unwrap();
    // fio warns "read iolog overrides write_iolog": -w stops on it.
    let [read_log, write_log] = iolog_pair(&dir);
    let job = ["--name=r", &file, "--size=64k", &read_log, &write_log];
    let note = "fiox: job r: read_iolog overrides write_iolog";
    let r = fiox(&[&job[..], &["--warnings-fatal"]].concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.starts_with(note), "{}", r.stderr);
    assert!(r.stderr.contains("--warnings-fatal"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert_eq!(dir.entries(), ["r.log"], "nothing runs");
    // --parse-only: the note where fio prints its parser notes; with -w it fails.
    let r = fiox(&[&["--parse-only"], &job[..]].concat());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(r.stdout.starts_with(note), "{}", r.stdout);
    let r = fiox(&[&["--parse-only", "-w"], &job[..]].concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(note) && r.stdout.is_empty(),
        "{}",
        r.stderr
    );
}

/// fiox's advice is a block of the normal report (after fio's lines) and JSON's
/// `fiox.warnings`; on stderr only with `--warnings=stderr` (exit 0) or `--warnings=fatal`
/// (exit 1, the report still printed); fio's `--warnings-fatal` is about fio's parser
/// warnings, not fiox's advice.
#[test]
fn advice_is_in_the_report_and_on_stderr_only_when_asked() {
    let dir = TempDir::new("advice");
    let file = format!("--filename={}", dir.join("f"));
    // verify_state_load without verify_only has no effect: fiox says so (always).
    let job = [
        "--name=a",
        file.as_str(),
        "--size=256k",
        "--rw=write",
        "--verify=crc32c",
        "--verify_state_load=1",
    ];
    let r = fiox_in(dir.path(), &job);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let block = &r.stdout[pos(&r.stdout, "\nfiox advice:\n")..];
    assert!(
        block.contains("\n  [verify-option-ignored] (job a): verify_state_load has an effect")
            && block.contains("\n    fix: "),
        "{block}"
    );
    assert!(pos(&r.stdout, "Run status group 0") < pos(&r.stdout, "fiox advice:"));
    let r = fiox_in(dir.path(), &[&job[..], &["--output-format=json"]].concat());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(
        r.json()["jobs"][0]["fiox"]["warnings"][0]["code"],
        "verify-option-ignored"
    );
    let line = "fiox: warning [verify-option-ignored] (job a): ";
    let r = fiox_in(dir.path(), &[&job[..], &["--warnings=stderr"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.starts_with(line), "{}", r.stderr);
    assert!(r.stdout.contains("fiox advice:"), "{}", r.stdout);
    let r = fiox_in(dir.path(), &[&job[..], &["--warnings=fatal"]].concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.starts_with(line), "{}", r.stderr);
    assert!(r.stdout.contains("Run status group 0"), "{}", r.stdout);
    let r = fiox_in(dir.path(), &[&job[..], &["-w"]].concat());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(r.stdout.contains("fiox advice:"), "{}", r.stdout);
}

/// Names of the devices in `disk_util`, and whether any has fio's `aggr_*` keys.
fn disk_names(v: &serde_json::Value) -> (Vec<String>, bool) {
    let du = v["disk_util"].as_array().cloned().unwrap_or_default();
    let names = du
        .iter()
        .map(|d| d["name"].as_str().unwrap_or("").to_string())
        .collect();
    (names, du.iter().any(|d| d.get("aggr_read_ios").is_some()))
}

/// A loop device is one plain device in fio's Disk stats (no `aggr*` figures, no backing
/// disk); fiox shows the disk holding its backing file only in its own part of the report.
#[test]
fn loop_device_disk_stats_as_fio() {
    require_root("loop devices");
    let dir = TempDir::under(Path::new("/var/tmp"), "disk-loop");
    let img = dir.path().join("img");
    std::fs::write(&img, vec![0u8; 16 << 20]).unwrap();
    let dev = fiox_testbed::LoopDevice::attach(&img, &fiox_testbed::LoopOptions::default())
        .expect("attach a loop device");
    let file = format!("--filename={}", dev.path().display());
    let job = [
        "--name=l",
        file.as_str(),
        "--rw=read",
        "--size=4m",
        "--direct=1",
    ];
    let json = [&job[..], &["--output-format=json"]].concat();
    let r = fiox(&json);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let v = r.json();
    assert_eq!(
        disk_names(&v),
        (vec![dev.name()], false),
        "{}",
        v["disk_util"]
    );
    let backing = &v["fiox"]["backing_disks"][0];
    assert_eq!(backing["backs"], dev.name().as_str(), "{}", v["fiox"]);
    if need_fio() {
        assert_eq!(disk_names(&fio_json(&job)), disk_names(&v), "vs fio");
    }
    let r = fiox(&job);
    let stats = &r.stdout[pos(&r.stdout, "\nDisk stats (read/write):\n")..];
    let lines: Vec<&str> = stats
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 1, "{stats}");
    assert!(
        lines[0].starts_with(&format!("  {}: ios=", dev.name())),
        "{stats}"
    );
    assert!(!lines[0].contains("aggr"), "{stats}");
    assert!(
        stats.contains(&format!("(backs {}): ios=", dev.name())),
        "fiox's own block names the backing disk: {stats}"
    );
}

/// A new file named relative to the working directory (`--filename=f`) is on that
/// directory's disk: the Disk stats block is there, as fio prints it (fiox left it out).
#[test]
fn new_relative_file_has_disk_stats_as_fio() {
    for tool in tools() {
        let dir = TempDir::under(Path::new("/var/tmp"), "disk-rel");
        let job = [
            "--name=r",
            "--filename=f",
            "--size=1m",
            "--rw=read",
            "--output-format=json",
        ];
        let r = tool_in(tool, dir.path(), &job);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{tool}");
        let (names, _) = disk_names(&r.json());
        assert_eq!(names.len(), 1, "{tool}: one disk for /var/tmp: {names:?}");
    }
}

/// bw/iops samples on fio's instants: a 2 s run after a 1 s ramp with 500 ms windows has 4
/// samples (fiox had 3: each sample came a little late and the next window started then) and
/// the log lines fall on fio's grid (500, 1000, 1500, 2000 ms; fiox drifted to 501, 1002, 1505).
#[test]
fn rate_samples_at_fio_instants() {
    let mut grids = Vec::new();
    for tool in tools() {
        let dir = TempDir::new("instants");
        let file = format!("--filename={}", dir.join("f"));
        let job = [
            "--name=s",
            file.as_str(),
            "--size=16m",
            "--rw=read",
            "--bs=4k",
            "--rate=8m",
            "--time_based",
            "--runtime=2",
            "--ramp_time=1",
            "--write_bw_log=s",
            "--log_avg_msec=500",
            "--output-format=json",
        ];
        let r = tool_in(tool, dir.path(), &job);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{tool}");
        let v = r.json();
        let log = std::fs::read_to_string(dir.path().join("s_bw.1.log")).unwrap();
        let times: Vec<u64> = log
            .lines()
            .map(|l| l.split(',').next().unwrap().trim().parse().unwrap())
            .collect();
        // Nearest grid point: fio's own lines are a millisecond or so off it.
        let grid: Vec<u64> = times.iter().map(|t| (t + 250) / 500 * 500).collect();
        if tool == fiox_bin() {
            let read = &v["jobs"][0]["read"];
            assert_eq!(
                (read["bw_samples"].as_u64(), read["iops_samples"].as_u64()),
                (Some(4), Some(4))
            );
            assert_eq!(grid, [500, 1000, 1500, 2000], "{log}");
        }
        grids.push(grid);
    }
    if let [ours, fio] = &grids[..] {
        // fio's helper thread may miss an instant on a loaded machine; what it logged is on
        // the same grid.
        assert!(
            fio.iter().all(|t| ours.contains(t)),
            "fiox {ours:?} vs fio {fio:?}"
        );
    }
}
