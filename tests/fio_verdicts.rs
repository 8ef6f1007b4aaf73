//! fio 3.33's verdicts on jobs fiox judged otherwise (issue 23): a verifying job that its
//! runtime ends has no verify phase (fio marks it terminated first), so the second of two
//! stonewalled experimental_verify jobs on one file passes, as in fio; and fio's
//! netio_multicast example ends instead of hanging, and a Ctrl-C during a network wait ends
//! the run at once. Each tool runs in its own directory.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;

/// The job file: the first job writes the 1 MiB file 8 times, the second mixes reads
/// and writes on it for `secs` seconds; both verify with md5, experimentally.
fn two_verifying_jobs(secs: u32) -> String {
    format!(
        "[global]\nfilename=vf\nsize=1M\nverify=md5\nexperimental_verify=1\ndo_verify=1\n\
         [a]\nrw=randwrite\nloops=8\nstonewall\n\
         [b]\nrw=randrw\ntime_based\nruntime={secs}\nstonewall\n"
    )
}

fn job_errors(v: &serde_json::Value) -> Vec<(String, i64)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobname"].as_str().unwrap().to_string(),
                j["error"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_time_based_verifying_job_after_a_writing_one_passes_as_in_fio() {
    need_fio();
    let mut seen = Vec::new();
    for tool in ["fio", "fiox"] {
        let d = TempDir::new("verdict");
        std::fs::write(d.path().join("v.fio"), two_verifying_jobs(2)).unwrap();
        let (code, v, stderr) = tool_json(tool, d.path(), &["v.fio"], Some(120));
        let errors = job_errors(&v);
        // The second job's reads are its own mix only: no verify phase after its runtime.
        let b = &v["jobs"][1];
        let (b_reads, b_writes) = (
            b["read"]["io_bytes"].as_u64().unwrap(),
            b["write"]["io_bytes"].as_u64().unwrap(),
        );
        assert!(b_writes > 0, "{tool}: {b}");
        let ratio = b_reads as f64 / b_writes as f64;
        assert!(
            (0.7..1.4).contains(&ratio),
            "{tool}: job b read {b_reads} and wrote {b_writes}: a verify phase ran? {stderr}"
        );
        seen.push((tool, code, errors));
    }
    let want = vec![("a".to_string(), 0), ("b".to_string(), 0)];
    for (tool, code, errors) in &seen {
        assert_eq!((*code, errors), (0, &want), "{tool}: {seen:?}");
    }
}

#[test]
fn a_write_phase_its_runtime_cuts_is_not_verified_as_in_fio() {
    need_fio();
    for tool in ["fio", "fiox"] {
        let d = TempDir::new("verdict-cut");
        let args = [
            "--name=w",
            "--filename=f",
            "--size=64M",
            "--rw=write",
            "--rate=8m",
            "--runtime=1",
            "--verify=crc32c",
        ];
        let (code, v, stderr) = tool_json(tool, d.path(), &args, Some(60));
        assert_eq!(code, 0, "{tool}: {stderr}");
        let j = &v["jobs"][0];
        assert!(j["write"]["io_bytes"].as_u64().unwrap() > 0, "{tool}");
        assert_eq!(j["read"]["io_bytes"].as_u64(), Some(0), "{tool}: no verify phase");
    }
}
