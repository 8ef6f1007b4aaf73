//! The seeds users run: seed 000's and 002's job files (examples/seeds/) and seed 004's command
//! lines must parse with `--parse-only` into the jobs their authors meant.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::{parse_invocation, Action, RwMode, SizeSpec};

fn seed_path(name: &str) -> String {
    format!("{}/../../examples/seeds/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

#[test]
fn seed000_job_files_parse() {
    for (file, size, dir) in [
        ("seed000-rand-rw-disk.fio", 200u64 << 20, "/misc/rd"),
        ("seed000-rand-rw-rd.fio", 1700 << 20, "/mnt/rd"),
    ] {
        let inv = parse_invocation(&["--parse-only".into(), seed_path(file)]).unwrap();
        assert_eq!(inv.action, Action::ParseOnly);
        assert_eq!(inv.jobs.len(), 1);
        let j = &inv.jobs[0];
        assert_eq!(j.name, "random_rw");
        assert_eq!(j.rw.mode, RwMode::RandRw);
        assert_eq!(j.size, Some(SizeSpec::Bytes(size)));
        assert_eq!(j.files.directories, [dir]);
        assert_eq!(j.ioengine.as_str(), "libaio");
        assert_eq!(j.iodepth, 32);
        assert!(!j.direct, "the seed runs buffered, which is its point");
    }
}

#[test]
fn seed000_both_files_make_two_groups() {
    let inv = parse_invocation(&[
        "--parse-only".into(),
        "--max-jobs=2".into(),
        seed_path("seed000-rand-rw-disk.fio"),
        seed_path("seed000-rand-rw-rd.fio"),
    ])
    .unwrap();
    let groups: Vec<u32> = inv.jobs.iter().map(|j| j.group_id).collect();
    assert_eq!(groups, [0, 1]);
    assert!(inv.jobs[1].stonewall);
    assert_eq!(inv.settings.max_jobs, Some(2));
}

/// The seed's own command line: `fio rand-rw-disk.fio --max-jobs=2 --latency-log
/// --bandwidth-log` (fio 2.x switches after the job file).
#[test]
fn seed000_command_line_as_written() {
    let inv = parse_invocation(&[
        seed_path("seed000-rand-rw-disk.fio"),
        "--max-jobs=2".into(),
        "--latency-log".into(),
        "--bandwidth-log".into(),
    ])
    .unwrap();
    assert!(inv.settings.bandwidth_log && inv.settings.latency_log);
    let j = &inv.jobs[0];
    assert_eq!(j.logs.write_lat_log.as_deref(), Some(j.name.as_str()));
    assert!(
        inv.notes()[0].contains("--latency-log"),
        "{:?}",
        inv.notes()
    );
    assert!(inv.refusals().is_empty(), "{:?}", inv.refusals());
    // --showcmd shows the option the switch stands for, so its output runs the same jobs.
    let shown = fiox_job::showcmd(&inv.jobs);
    assert!(
        shown.contains(&format!("--write_lat_log={}", j.name)),
        "{shown}"
    );
}

#[test]
fn seed002_aio_stress_settings() {
    let inv =
        parse_invocation(&["--parse-only".into(), seed_path("seed002-aio-stress.fio")]).unwrap();
    assert_eq!(inv.jobs.len(), 4 * 64);
    let modes: Vec<RwMode> = inv.jobs.iter().step_by(64).map(|j| j.rw.mode).collect();
    assert_eq!(
        modes,
        [
            RwMode::Write,
            RwMode::RandWrite,
            RwMode::Read,
            RwMode::RandRead
        ]
    );
    for j in &inv.jobs {
        assert!(j.thread && j.direct);
        assert_eq!(j.ioengine.as_str(), "libaio");
        assert_eq!(j.bs.write.min, 8192);
        assert_eq!(j.bs.read.max, 8192);
        assert_eq!(j.numjobs, 64);
        assert_eq!(j.size, Some(SizeSpec::Bytes(8 << 20)));
        assert_eq!(j.offset_increment, 8 << 20);
        assert_eq!(j.files.filenames, ["aio-stress.dat"]);
    }
    // 64 threads x 8 MiB slices cover the 512 MiB file of the seed.
    assert_eq!(64 * (8u64 << 20), 512 << 20);
    let groups: Vec<u32> = inv.jobs.iter().step_by(64).map(|j| j.group_id).collect();
    assert_eq!(groups, [0, 1, 2, 3]);
}

/// Seed 004: Davide Libenzi's four runs (guasi vs libaio at depth 100 and 1000) plus the two
/// forms of Jens Axboe's advice (`--direct=1` or `--buffered=0`).
const SEED004: [&str; 6] = [
    "--name=global --rw=randrw --size=1g --bs=4k --direct=1 --ioengine=guasi --name=job1 --iodepth=100 --thread --runtime=20",
    "--name=global --rw=randrw --size=1g --bs=4k --direct=1 --ioengine=libaio --name=job1 --iodepth=100 --thread --runtime=20",
    "--name=global --rw=randrw --size=1g --bs=4k --direct=1 --ioengine=guasi --name=job1 --iodepth=1000 --thread --runtime=20",
    "--name=global --rw=randrw --size=1g --bs=4k --direct=1 --ioengine=libaio --name=job1 --iodepth=1000 --thread --runtime=20",
    "--name=global --rw=randrw --size=1g --bs=4k --buffered=0 --ioengine=libaio --name=job1 --iodepth=100 --thread --runtime=20",
    "--name=global --rw=randrw --size=1g --bs=4k --ioengine=libaio --name=job1 --iodepth=100 --thread --runtime=20",
];

#[test]
fn seed004_command_lines() {
    for (i, line) in SEED004.iter().enumerate() {
        let mut a = args(line);
        a.insert(0, "--parse-only".into());
        let inv = parse_invocation(&a).unwrap_or_else(|e| panic!("line {i}: {e}"));
        assert_eq!(inv.jobs.len(), 1, "line {i}");
        let j = &inv.jobs[0];
        assert_eq!(j.name, "job1");
        assert_eq!(j.rw.mode, RwMode::RandRw);
        assert_eq!(j.size, Some(SizeSpec::Bytes(1 << 30)));
        assert_eq!(j.bs.read.min, 4096);
        assert!(j.thread);
        assert_eq!(j.timing.runtime, Some(std::time::Duration::from_secs(20)));
        assert_eq!(j.direct, i < 5, "line {i}");
        assert_eq!(j.iodepth, if i == 2 || i == 3 { 1000 } else { 100 });
        assert_eq!(
            j.ioengine.as_str(),
            if i % 2 == 0 && i < 4 {
                "guasi"
            } else {
                "libaio"
            }
        );
        // --name=global options are the job's inherited options, printed in JSON.
        assert_eq!(
            inv.global_options[0],
            ("rw".to_string(), "randrw".to_string())
        );
        assert_eq!(j.raw_options[0], ("rw".to_string(), "randrw".to_string()));
    }
}
