//! flow under CPU contention, compared with fio 3.33: a test binary of its own because its CPU
//! hog would slow whatever other tests ran beside it in the same binary.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;

/// A CPU hog that is killed when dropped (also when an assertion panics).
struct Hog(std::process::Child);

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Under CPU contention a flow's held job spins, as fio's do_io loop does (`continue` with no
/// flow_sleep): two flow jobs and a hog on one CPU run about as many I/Os as fio's do with
/// its jobs as threads (the same scheduling: one session). A job that yielded instead handed
/// its time slices away and ran 7-9 times fio's count. fio's default jobs are processes,
/// each in its own session (fio calls setsid), so the kernel's autogroups give them more of
/// the CPU than one process's threads get; that comparison keeps a generous factor.
#[test]
fn held_flow_jobs_spin_like_fio_under_contention() {
    let dir = TempDir::new("flow-hog");
    let file = dir.join("flow.fio");
    std::fs::write(
        &file,
        "[global]\nioengine=null\nrw=read\nbs=4k\nsize=1g\ntime_based\nruntime=2\n\
         cpus_allowed=0\n[a]\nflow=1\n[b]\nflow=3\n",
    )
    .unwrap();
    let _hog = Hog(spawn_fiox(&[
        "--name=hog",
        "--ioengine=cpuio",
        "--cpuload=100",
        "--cpus_allowed=0",
        "--time_based",
        "--runtime=120",
    ]));
    // The pair's pace: job a's I/Os, or a third of b's (weights 1:3), whichever is smaller.
    // The job that ends last runs alone once its partner is reaped (in fio too, whose main
    // thread reaps every 10 ms), so its count may hold a burst from the end of the run.
    let pace = |v: &serde_json::Value| {
        let ios = |j: usize| v["jobs"][j]["read"]["total_ios"].as_u64().unwrap();
        ios(0).min(ios(1) / 3)
    };
    let r = fiox(&[file.as_str(), "--output-format=json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ours = pace(&r.json()) as f64;
    assert!(ours > 0.0, "the flow ran no I/O");
    need_fio();
    let threads = pace(&fio_json(&[file.as_str(), "--thread"])) as f64;
    let processes = pace(&fio_json(&[file.as_str()])) as f64;
    let near = |theirs: f64, factor: f64| ours <= theirs * factor && ours * factor >= theirs;
    assert!(near(threads, 4.0), "fiox {ours} vs fio --thread {threads}");
    assert!(near(processes, 10.0), "fiox {ours} vs fio {processes}");
}
