//! fiox under MPI: `mpirun --oversubscribe -np 4 fiox ...` on this machine (Open MPI; as root
//! with --allow-run-as-root), for per-rank files, one shared file with per-rank offsets,
//! stonewall_ranks, a rank that fails, a rank that is killed and Ctrl-C on mpirun. The merged
//! totals are checked against the per-rank rows of `fiox.mpi`. Built with `--features mpi`
//! (.ci/run does); the default build only checks that it refuses an MPI start. Files live in
//! /dev/shm and every run is a fraction of a second of I/O.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

#[cfg(feature = "mpi")]
mod with_mpi {
    use serde_json::Value;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Output, Stdio};
    use std::time::{Duration, Instant};

    /// A directory in /dev/shm, removed with everything in it when dropped (also on panic).
    struct ShmDir(PathBuf);

    impl ShmDir {
        fn new(tag: &str) -> ShmDir {
            let p = PathBuf::from(format!("/dev/shm/fiox-mpi-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            ShmDir(p)
        }
        fn path(&self, name: &str) -> String {
            self.0.join(name).display().to_string()
        }
    }

    impl Drop for ShmDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mpirun(np: u32, args: &[&str]) -> Command {
        let mut c = Command::new("mpirun");
        c.args(["--allow-run-as-root", "--oversubscribe", "-np"])
            .arg(np.to_string())
            .arg(env!("CARGO_BIN_EXE_fiox"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Where a run leaves files of its own (verify state files): not the source tree.
            .current_dir("/dev/shm");
        c
    }

    /// Wait for the run; a run still going after `limit` is a hang: killed, and the test fails.
    fn finish(mut child: Child, limit: Duration) -> Output {
        let end = Instant::now() + limit;
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > end {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "mpirun still running after {limit:?} (a hang)\nstdout: {}\nstderr: {}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    }

    fn run(np: u32, args: &[&str]) -> Output {
        finish(mpirun(np, args).spawn().unwrap(), Duration::from_secs(60))
    }

    fn json_of(out: &Output) -> Value {
        let text = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "not one JSON document ({e}):\n{text}\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    fn ok(out: &Output) {
        assert!(
            out.status.success(),
            "status {:?}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn u(v: &Value) -> u64 {
        v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
    }

    /// Group 0's bytes (read + write) equal the sum of the jobs' and of the ranks' rows.
    fn totals_add_up(doc: &Value) {
        let group: u64 = ["read", "write"]
            .iter()
            .map(|d| {
                doc["jobs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|j| u(&j[d]["io_bytes"]))
                    .sum::<u64>()
            })
            .sum();
        let ranks: u64 = doc["fiox"]["mpi"]["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| u(&r["read_bytes"]) + u(&r["write_bytes"]))
            .sum();
        assert_eq!(group, ranks, "jobs and per-rank rows disagree");
        let hosts: u64 = doc["fiox"]["mpi"]["per_host"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| u(&h["io_bytes"]))
            .sum();
        assert_eq!(hosts, ranks, "per-host rows disagree");
    }

    #[test]
    fn every_rank_writes_its_own_file_and_the_report_adds_them_up() {
        let dir = ShmDir::new("own");
        let d = dir.0.display().to_string();
        let out = run(
            4,
            &[
                "--name=w",
                "--rw=write",
                &format!("--directory={d}"),
                "--size=1m",
                "--bs=64k",
                "--output-format=json",
            ],
        );
        ok(&out);
        let doc = json_of(&out);
        assert_eq!(
            doc["jobs"].as_array().unwrap().len(),
            4,
            "numjobs = ranks x jobs"
        );
        for rank in 0..4 {
            let f = dir.path(&format!("w.{rank}.0"));
            assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20, "{f}");
        }
        totals_add_up(&doc);
        let m = &doc["fiox"]["mpi"];
        assert_eq!(m["ranks"], 4);
        assert_eq!(u(&doc["jobs"][0]["write"]["io_bytes"]), 1 << 20);
        assert!(m["slowest_rank"]["rank"].is_u64() && m["fastest_rank"]["host"].is_string());
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The (msec, value) pairs of a fio-format log.
    fn samples(path: &str) -> Vec<(u64, u64)> {
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .lines()
            .map(|l| {
                let f: Vec<u64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
                (f[0], f[1])
            })
            .collect()
    }

    #[test]
    fn logs_are_per_rank_and_the_aggregate_log_sums_the_ranks() {
        let dir = ShmDir::new("logs");
        let d = dir.0.display().to_string();
        let mut cmd = mpirun(
            4,
            &[
                "--name=w",
                "--rw=write",
                &format!("--directory={d}"),
                "--size=1m",
                "--bs=64k",
                "--rate=1m",
                "--write_bw_log=bw",
                "--bandwidth-log",
                "--output-format=json",
            ],
        );
        let out = finish(
            cmd.current_dir(&dir.0).spawn().unwrap(),
            Duration::from_secs(60),
        );
        ok(&out);
        let per_rank: Vec<Vec<(u64, u64)>> = (0..4)
            .map(|r| {
                assert!(!samples(&dir.path(&format!("bw.rank{r}_bw.1.log"))).is_empty());
                samples(&dir.path(&format!("agg-write_bw.rank{r}.log")))
            })
            .collect();
        let agg = samples(&dir.path("agg-write_bw.log"));
        assert!(!agg.is_empty(), "a 1 s run has samples every 500 ms");
        assert_eq!(agg.len(), per_rank.iter().map(Vec::len).max().unwrap());
        for (k, (_, v)) in agg.iter().enumerate() {
            let sum: u64 = per_rank.iter().filter_map(|s| s.get(k)).map(|s| s.1).sum();
            assert_eq!(*v, sum, "sample {k}");
        }
    }

    #[test]
    fn ranks_share_one_file_at_their_own_offsets() {
        let dir = ShmDir::new("shared");
        let f = dir.path("shared");
        // Each rank writes and verifies its MiB: ranks overlapping would fail the verify.
        let mut cmd = mpirun(
            4,
            &[
                "--name=s",
                "--rw=write",
                &format!("--filename={f}"),
                "--size=1m",
                "--offset_increment=1m",
                "--bs=16k",
                "--verify=crc32c",
                "--group_reporting",
                "--output-format=json+",
            ],
        );
        let out = finish(
            cmd.current_dir(&dir.0).spawn().unwrap(),
            Duration::from_secs(60),
        );
        ok(&out);
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 4 << 20);
        let doc = json_of(&out);
        let jobs = doc["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 1, "group_reporting: one entry for every rank");
        assert_eq!(u(&jobs[0]["write"]["io_bytes"]), 4 << 20);
        totals_add_up(&doc);
        // The merged histogram holds every rank's samples.
        let ios: u64 = doc["fiox"]["mpi"]["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| u(&r["total_ios"]))
            .sum();
        let bins: u64 = jobs[0]["write"]["clat_ns"]["bins"]
            .as_object()
            .unwrap()
            .values()
            .map(u)
            .sum();
        let reads = u(&jobs[0]["read"]["total_ios"]);
        assert_eq!(
            bins + reads,
            ios,
            "write bins + verify reads = every rank's I/Os"
        );
    }

    #[test]
    fn the_first_rank_to_finish_stops_all_with_stonewall_ranks() {
        let dir = ShmDir::new("stonewall");
        // Rank 0 has 1 MiB to read, the others 64 MiB each, all at 16 MiB/s.
        for (rank, mib) in [(0, 1), (1, 64), (2, 64), (3, 64)] {
            std::fs::write(dir.path(&format!("g.{rank}")), vec![7u8; mib << 20]).unwrap();
        }
        let name = dir.path("g.%r");
        let out = run(
            4,
            &[
                "--name=sw",
                "--rw=read",
                &format!("--filename={name}"),
                "--bs=64k",
                "--rate=16m",
                "--stonewall_ranks=1",
                "--output-format=json,normal",
            ],
        );
        ok(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        // The header, the JSON document, then the normal report.
        let json_start = text.find("\n{\n").unwrap() + 1;
        let json_end = text.find("\n}\n").unwrap() + 3;
        let doc: Value = serde_json::from_str(&text[json_start..json_end]).unwrap();
        let sw = &doc["fiox"]["mpi"]["stonewall"][0];
        assert_eq!(sw["first_rank"]["rank"], 0, "{sw}");
        for r in sw["ranks"].as_array().unwrap().iter().skip(1) {
            assert!(u(&r["done_bytes"]) < 64 << 20, "rank stopped early: {r}");
            assert!(u(&r["needed_ms"]) > u(&r["elapsed_ms"]), "{r}");
        }
        assert!(u(&sw["stonewalled_bw_bytes"]) > 0);
        assert!(u(&sw["slowest_needed_ms"]) >= u(&sw["first_rank"]["elapsed_ms"]));
        totals_add_up(&doc);
        assert!(text.contains("stonewall_ranks (sw): rank 0 on"), "{text}");
    }

    #[test]
    fn a_rank_that_cannot_open_its_file_fails_the_run_naming_it() {
        let dir = ShmDir::new("fail");
        std::fs::create_dir(dir.path("f.2")).unwrap();
        let name = dir.path("f.%r");
        let out = run(
            4,
            &[
                "--name=w",
                "--rw=write",
                &format!("--filename={name}"),
                "--size=1m",
            ],
        );
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("fiox: rank 2 (") && err.contains("f.2 is a directory"),
            "{err}"
        );
        // The others ran, and the report still came.
        assert!(String::from_utf8_lossy(&out.stdout).contains("MPI: 4 ranks"));
    }

    #[test]
    fn a_job_file_missing_on_one_rank_is_said_without_a_hang() {
        let out = run(2, &["/nonexistent/fiox-mpi.fio"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("ranks 0 ("), "one line for both ranks: {err}");
        assert_eq!(err.matches("fiox-mpi.fio").count(), 1, "{err}");
    }

    /// The ranks (children of mpirun) of a run, once all have started.
    fn ranks_of(mpirun: u32, n: usize) -> Vec<u32> {
        for _ in 0..500 {
            let kids: Vec<u32> =
                std::fs::read_to_string(format!("/proc/{mpirun}/task/{mpirun}/children"))
                    .unwrap_or_default()
                    .split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .filter(|p| {
                        std::fs::read_link(format!("/proc/{p}/exe"))
                            .is_ok_and(|e| e == Path::new(env!("CARGO_BIN_EXE_fiox")))
                    })
                    .collect();
            if kids.len() == n {
                return kids;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the ranks of mpirun {mpirun} did not start");
    }

    /// Waits until process `pid` has a thread named `name` (a job's thread is "fiox-" and
    /// the job's name).
    fn job_thread_of(pid: u32, name: &str) {
        for _ in 0..1500 {
            let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
                .map(|d| d.flatten().map(|t| t.path()).collect::<Vec<_>>())
                .unwrap_or_default();
            if tasks
                .iter()
                .any(|t| std::fs::read_to_string(t.join("comm")).is_ok_and(|c| c.trim() == name))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("rank {pid} never ran its job thread {name}");
    }

    fn signal(pid: u32, sig: &str) {
        let st = Command::new("kill")
            .args(["-s", sig, &pid.to_string()])
            .status()
            .unwrap();
        assert!(st.success(), "kill -s {sig} {pid}");
    }

    const LONG: [&str; 7] = [
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--bs=4k",
        "--rate=8m",
        "--time_based",
        "--runtime=60",
    ];

    #[test]
    fn ctrl_c_on_mpirun_stops_every_rank_and_still_reports() {
        let child = mpirun(4, &LONG).spawn().unwrap();
        let pid = child.id();
        let ranks = ranks_of(pid, 4);
        // Every rank past MPI's start and running its job (its handlers long installed): a
        // rank signalled while still starting would die of it with no report.
        for r in ranks {
            job_thread_of(r, "fiox-t");
        }
        signal(pid, "INT");
        let out = finish(child, Duration::from_secs(30));
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("interrupted"), "{err}");
        assert!(text.contains("MPI: 4 ranks"), "{text}\n{err}");
        assert!(text.contains("Run status group 0"), "{text}");
    }

    #[test]
    fn a_killed_rank_ends_the_run_naming_it() {
        let child = mpirun(4, &LONG).spawn().unwrap();
        let ranks = ranks_of(child.id(), 4);
        std::thread::sleep(Duration::from_millis(500));
        signal(ranks[1], "KILL");
        let out = finish(child, Duration::from_secs(30));
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("signal 9"),
            "mpirun names the rank, its host and signal: {err}"
        );
    }
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_a_start_by_mpirun() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fiox"))
        .args(["--name=x", "--ioengine=null", "--size=1m"])
        .env("OMPI_COMM_WORLD_RANK", "1")
        .env("OMPI_COMM_WORLD_SIZE", "4")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("built without MPI") && err.contains("--features mpi"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
}
