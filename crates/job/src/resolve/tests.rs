//! Resolution's tests: inheritance, numjobs and groups, derived defaults, cross-option checks.

use super::*;
use crate::error::Location;

fn sec(name: &str, file: usize, opts: &[(&str, Option<&str>)]) -> Section {
    Section {
        name: name.into(),
        global: name == "global",
        opts: opts
            .iter()
            .enumerate()
            .map(|(i, (n, v))| RawOpt {
                name: n.to_string(),
                value: v.map(str::to_string),
                written: v.map(str::to_string),
                loc: Location::File {
                    path: format!("f{file}"),
                    line: i + 1,
                },
            })
            .collect(),
        loc: Location::Nowhere,
        source: Some(format!("f{file}")),
        file_index: file,
    }
}

#[test]
fn groups_follow_fio() {
    let s = vec![
        sec("a", 1, &[("numjobs", Some("2"))]),
        sec("b", 1, &[("stonewall", None)]),
        sec("c", 1, &[("new_group", None), ("numjobs", Some("2"))]),
        sec("d", 2, &[]),
    ];
    let jobs = resolve(&s).unwrap();
    let groups: Vec<u32> = jobs.iter().map(|j| j.group_id).collect();
    assert_eq!(groups, [0, 0, 1, 2, 2, 3]);
    let clones: Vec<u32> = jobs.iter().map(|j| j.clone_index).collect();
    assert_eq!(clones, [0, 1, 0, 0, 1, 0]);
    let three = resolve(&[sec("t", 1, &[("numjobs", Some("4"))])]).unwrap();
    let clones: Vec<u32> = three.iter().map(|j| j.clone_index).collect();
    assert_eq!(clones, [0, 3, 2, 1], "fio counts clones down after the job");
    assert!(jobs[5].stonewall, "second file starts with a barrier");
}

/// fio's fixup_options for verify_interval, case by case.
#[test]
fn verify_interval_follows_fio() {
    let vi = |opts: &[(&str, Option<&str>)]| {
        let mut o = vec![("verify", Some("crc32c")), ("rw", Some("randwrite"))];
        o.extend_from_slice(opts);
        resolve(&[sec("a", 1, &o)]).unwrap()[0]
            .verify
            .verify_interval
    };
    assert_eq!(vi(&[("bs", Some("8k"))]), None, "one header per block");
    assert_eq!(vi(&[("bsrange", Some("4k-64k"))]), Some(4096));
    assert_eq!(vi(&[("bssplit", Some("8k/50:24k/50"))]), Some(8192));
    let given = ("verify_interval", Some("16k"));
    assert_eq!(
        vi(&[("bs", Some("8k")), given]),
        Some(8192),
        "cut to the write"
    );
    assert_eq!(
        vi(&[("bs", Some("24k")), given]),
        Some(24576),
        "no factor: the gcd"
    );
    assert_eq!(vi(&[("bs", Some("48k")), given]), Some(16384));
    let read = vec![
        ("verify", Some("crc32c")),
        ("rw", Some("randrw")),
        ("bs", Some("4k,16k")),
    ];
    let mut r = read.clone();
    r.push(("verify_interval", Some("8k")));
    assert_eq!(
        resolve(&[sec("a", 1, &r)]).unwrap()[0]
            .verify
            .verify_interval,
        Some(4096)
    );
    assert_eq!(
        resolve(&[sec("a", 1, &read)]).unwrap()[0]
            .verify
            .verify_interval,
        None
    );
    // A bare pattern is fixed up as fio does (init.c applies it to every verify but none).
    let pattern = [("verify", Some("pattern")), ("bsrange", Some("4k-64k"))];
    assert_eq!(
        resolve(&[sec("a", 1, &pattern)]).unwrap()[0]
            .verify
            .verify_interval,
        Some(4096)
    );
    // Issue 39: an interval that does not divide the block is fio's gcd, the block.
    for given in ["2222", "3000"] {
        let o = [
            ("verify", Some("pattern")),
            ("verify_pattern", Some("0xab")),
            ("rw", Some("randwrite")),
            ("bs", Some("4096")),
            ("verify_interval", Some(given)),
        ];
        assert_eq!(
            resolve(&[sec("a", 1, &o)]).unwrap()[0]
                .verify
                .verify_interval,
            Some(4096),
            "verify_interval={given}"
        );
    }
}

/// merge_blktrace_scalars/iters without a merge file do nothing: said, not ignored.
#[test]
fn merge_lists_without_a_merge_file_are_noted() {
    let job = |opts: &[(&str, Option<&str>)]| resolve(&[sec("a", 1, opts)]).unwrap().remove(0);
    let iters = ("merge_blktrace_iters", Some("2"));
    let j = job(&[iters]);
    assert!(
        j.notes[0].contains("without merge_blktrace_file"),
        "{:?}",
        j.notes
    );
    assert!(job(&[iters, ("merge_blktrace_file", Some("m"))])
        .notes
        .is_empty());
}

#[test]
fn offloaded_sync_engines_are_noted_where_fio_differs() {
    let job = |opts: &[(&str, Option<&str>)]| resolve(&[sec("a", 1, opts)]).unwrap().remove(0);
    let off = ("io_submit_mode", Some("offload"));
    let j = job(&[("ioengine", Some("psync")), ("iodepth", Some("8")), off]);
    assert!(
        j.notes[0].contains("fiox runs iodepth=8 submit threads"),
        "{:?}",
        j.notes
    );
    // Depth 1, an async engine, or inline submission: fio and fiox agree, no note.
    assert!(job(&[("ioengine", Some("psync")), off]).notes.is_empty());
    let aio = job(&[("ioengine", Some("libaio")), ("iodepth", Some("8")), off]);
    assert!(aio.notes.is_empty());
    assert!(job(&[("ioengine", Some("psync")), ("iodepth", Some("8"))])
        .notes
        .is_empty());
}

#[test]
fn duplicate_job_names_are_separate_jobs() {
    // fio keeps both; only wait_for on such a name is ambiguous (see bad_inputs).
    let jobs = resolve(&[sec("a", 1, &[("bs", Some("8k"))]), sec("a", 1, &[])]).unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!((jobs[0].bs.read.min, jobs[1].bs.read.min), (8192, 4096));
    assert_eq!((jobs[0].index, jobs[1].index), (0, 1));
}

#[test]
fn global_name_does_not_rename_jobs() {
    let s = vec![
        sec("global", 1, &[("name", Some("g"))]),
        sec("jobsec", 1, &[]),
    ];
    assert_eq!(resolve(&s).unwrap()[0].name, "jobsec");
}

#[test]
fn lat_percentiles_must_agree_within_a_group() {
    let s = vec![
        sec("a", 1, &[]),
        sec(
            "b",
            1,
            &[("lat_percentiles", Some("1")), ("group_reporting", None)],
        ),
    ];
    let no_merge = vec![
        sec("a", 1, &[]),
        sec("b", 1, &[("lat_percentiles", Some("1"))]),
    ];
    assert!(resolve(&no_merge).is_ok());
    assert_eq!(
        resolve(&s).unwrap_err().to_string(),
        "job 'b': lat_percentiles differs from job 'a' in the same reporting group 0 (as fio, all jobs of a group must agree)"
    );
    let split = vec![
        sec("a", 1, &[]),
        sec(
            "b",
            1,
            &[
                ("lat_percentiles", Some("1")),
                ("new_group", None),
                ("group_reporting", None),
            ],
        ),
    ];
    assert!(resolve(&split).is_ok());
}

#[test]
fn disabled_latencies_have_no_percentiles() {
    let jobs = resolve(&[sec("a", 1, &[("disable_clat", None), ("loops", Some("0"))])]).unwrap();
    assert!(!jobs[0].stats.clat_percentiles);
    assert_eq!(jobs[0].timing.loops, 1);
}

#[test]
fn job_count_is_limited() {
    let s = vec![
        sec("a", 1, &[("numjobs", Some("65000"))]),
        sec("b", 1, &[("numjobs", Some("537"))]),
    ];
    assert_eq!(
        resolve(&s).unwrap_err().to_string(),
        "f1:1: job 'b' brings the number of jobs to 65537; at most 65536 are allowed (fio allows 4096)"
    );
}

#[test]
fn first_job_stonewall_does_not_bump_group() {
    let jobs = resolve(&[sec("a", 1, &[("stonewall", None)])]).unwrap();
    assert_eq!(jobs[0].group_id, 0);
}

#[test]
fn globals_apply_below_only() {
    let s = vec![
        sec("a", 1, &[]),
        sec("global", 1, &[("bs", Some("8k"))]),
        sec("b", 1, &[]),
    ];
    let jobs = resolve(&s).unwrap();
    assert_eq!(jobs[0].bs.read.min, 4096);
    assert_eq!(jobs[1].bs.read.min, 8192);
    assert_eq!(
        jobs[1].raw_options,
        vec![("bs".to_string(), "8k".to_string())]
    );
}

#[test]
fn kb_base_applies_to_earlier_sizes() {
    let jobs = resolve(&[sec(
        "a",
        1,
        &[("bs", Some("4k")), ("kb_base", Some("1000"))],
    )])
    .unwrap();
    assert_eq!(jobs[0].bs.read.min, 4000);
}

#[test]
fn engine_option_may_precede_ioengine() {
    let s = vec![
        sec("global", 1, &[("fixedbufs", None)]),
        sec("a", 1, &[("ioengine", Some("io_uring"))]),
    ];
    assert!(resolve(&s).unwrap()[0].engine.fixedbufs);
    let bad = vec![sec("a", 1, &[("fixedbufs", None)])];
    assert_eq!(
        resolve(&bad).unwrap_err().to_string(),
        "f1:1: option 'fixedbufs' belongs to ioengine io_uring/io_uring_cmd; this job uses ioengine psync"
    );
}

#[test]
fn global_options_of_another_engine_are_dropped_with_a_note() {
    let s = vec![
        sec(
            "global",
            1,
            &[("ioengine", Some("io_uring")), ("fixedbufs", None)],
        ),
        sec("a", 1, &[("ioengine", Some("libaio"))]),
        sec("b", 1, &[]),
    ];
    let jobs = resolve(&s).unwrap();
    assert!(!jobs[0].engine.fixedbufs && jobs[1].engine.fixedbufs);
    assert_eq!(
        jobs[0].notes,
        ["`fixedbufs` (set in [global] for ioengine io_uring) does not apply to this job's ioengine libaio; ignored, as in fio"]
    );
    assert!(jobs[1].notes.is_empty());
    assert_eq!(
        jobs[0].raw_options,
        [("ioengine", "io_uring"), ("ioengine", "libaio")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    // Without an owning engine in [global] it is an error, as in fio.
    let bad = vec![
        sec("global", 1, &[("fixedbufs", None)]),
        sec("a", 1, &[("ioengine", Some("libaio"))]),
    ];
    assert!(resolve(&bad).is_err());
}

#[test]
fn fio_only_options_and_engines_are_recorded() {
    let s = vec![
        sec(
            "global",
            1,
            &[("ioengine", Some("http")), ("gpu_dev_id", Some("1"))],
        ),
        sec(
            "a",
            1,
            &[("http_host", Some("h")), ("gpu_dev_id", Some("2"))],
        ),
        sec("b", 1, &[("ioengine", Some("psync"))]),
    ];
    let jobs = resolve(&s).unwrap();
    assert_eq!(jobs[0].ioengine.as_str(), "http");
    assert_eq!(
        jobs[0].refusal(),
        [
            "job a: ioengine `http` is a fio engine that fiox does not support yet; this job will not run",
            "job a: `http_host` is a fio option that fiox does not support yet; this job will not run",
            "job a: `gpu_dev_id` is a fio option that fiox does not support yet (needs a CUDA GPU); this job will not run",
        ]
    );
    assert_eq!(jobs[0].unsupported[2].value, "2");
    // b switches to psync: the engine record goes, gpu_dev_id stays.
    assert_eq!(jobs[1].unsupported.len(), 1);
    assert_eq!(jobs[1].unsupported[0].option, "gpu_dev_id");
    let bad = vec![sec(
        "a",
        1,
        &[
            ("ioengine", Some("libaio")),
            ("cmdprio_percentage", Some("50,101")),
        ],
    )];
    assert_eq!(
        resolve(&bad).unwrap_err().to_string(),
        "f1:2: cmdprio_percentage=50,101: 101 is above the maximum 100"
    );
    // rdma's `proto` (verb) and net's `proto` (protocol) are told apart by the engine.
    let rdma = vec![sec(
        "a",
        1,
        &[("ioengine", Some("rdma")), ("proto", Some("read"))],
    )];
    let verb = &resolve(&rdma).unwrap()[0].unsupported[1];
    assert_eq!(
        (verb.option.as_str(), verb.note.as_str()),
        ("verb", "written as `proto`")
    );
    let net = vec![sec(
        "a",
        1,
        &[("ioengine", Some("net")), ("proto", Some("read"))],
    )];
    assert!(resolve(&net).is_err());
}

#[test]
fn derived_depths() {
    let jobs = resolve(&[sec(
        "a",
        1,
        &[("iodepth", Some("32")), ("iodepth_batch_submit", Some("0"))],
    )])
    .unwrap();
    assert_eq!(jobs[0].iodepth_low, 32);
    assert_eq!(jobs[0].iodepth_batch_submit, 32);
    assert_eq!(jobs[0].iodepth_batch_complete_max, 1);
}

#[test]
fn wait_for_checks() {
    let ok = vec![sec("a", 1, &[]), sec("b", 1, &[("wait_for", Some("a"))])];
    assert!(resolve(&ok).is_ok());
    let missing = vec![sec("b", 1, &[("wait_for", Some("a"))])];
    assert_eq!(
        resolve(&missing).unwrap_err().to_string(),
        "f1:1: wait_for=a: no earlier job is named 'a'"
    );
}

#[test]
fn log_prefix_defaults_to_job_name() {
    let jobs = resolve(&[sec("lj", 1, &[("write_lat_log", None)])]).unwrap();
    assert_eq!(jobs[0].logs.write_lat_log.as_deref(), Some("lj"));
}

#[test]
fn own_options_leave_out_globals_as_fios_job_options() {
    let inv = crate::parse_invocation(&[
        "--ioengine=null".to_string(),
        "--name=a".to_string(),
        "--rw=randread".to_string(),
    ])
    .unwrap();
    let j = &inv.jobs[0];
    let own: Vec<(&str, &str)> = j
        .own_options
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(own, [("name", "a"), ("rw", "randread")]);
    assert!(j.raw_options.iter().any(|(k, _)| k == "ioengine"));
}
