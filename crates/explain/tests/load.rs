//! The programs as the running kernel's verifier sees them: loaded, attached, and their
//! records filled by this test thread's own syscalls (root needed, as for the whole suite).

use std::os::unix::fs::FileExt;

fn tid() -> u32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() as u32 }
}

/// `n` 4 KiB reads of this test's own executable, each marked by `mark` when given.
fn read_blocks(n: u64, mark: Option<fiox_explain::marks::Marker>) {
    let f = std::fs::File::open("/proc/self/exe").unwrap();
    let mut buf = [0u8; 4096];
    for i in 0..n {
        if let Some(m) = mark {
            m.enter(fiox_explain::marks::Call::Sync(0));
        }
        let r = f.read_at(&mut buf, i * 4096).unwrap();
        if let Some(m) = mark {
            m.exit(r as i64);
        }
    }
}

/// Thread `tid`'s record explained as a job of 100 reads of 10 us.
fn explained(
    tid: u32,
    recs: &std::collections::HashMap<u32, fiox_explain::Record>,
) -> serde_json::Value {
    let job = fiox_explain::JobInput {
        engine: "psync".into(),
        name: "t".into(),
        tid,
        dirs: [(100, 10_000.0), (0, 0.0)],
        handoff: None,
        coverage: fiox_explain::Coverage::full(),
    };
    fiox_explain::explain_job(&job, recs)
}

/// One tracer at a time: the marks are the process's, and a tracer loading and attaching its
/// programs while another's window thread attaches and detaches slowed that one's windows to
/// a few of 50 ms (marked_reads_count_inside_the_windows_only failed when run beside them).
static ONE_TRACER: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn programs_load_and_count_this_threads_reads() {
    let _turn = ONE_TRACER.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: geteuid has no arguments and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "this test needs root (BPF): the suite runs as root, e.g. `sudo ci/test.sh`"
    );
    let tracer = match fiox_explain::Tracer::start() {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    read_blocks(100, None);
    let me = tid();
    let recs = tracer.finish();
    let v = explained(me, &recs);
    eprintln!("{v:#}");
    assert!(v["read"]["submit"]["calls"].as_u64().unwrap() >= 100, "{v}");
    assert!(
        v["read"]["phases"][0]["mean_ns"].as_i64().unwrap() > 0,
        "{v}"
    );
}

/// A thread this one creates is its helper (task_newtask): its reads are the "job's",
/// counted under `helpers` and the pool phases (as a thread pool engine's would be).
#[test]
fn a_created_threads_reads_are_its_creators() {
    let _turn = ONE_TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let tracer = fiox_explain::Tracer::start().unwrap_or_else(|e| panic!("{e}"));
    let helper = std::thread::spawn(|| {
        read_blocks(100, None);
        tid()
    })
    .join()
    .unwrap();
    let me = tid();
    let recs = tracer.finish();
    assert_eq!(recs.get(&helper).map(|r| r.parent()), Some(me));
    let v = explained(me, &recs);
    assert!(
        v["read"]["helpers"]["calls"].as_u64().unwrap() >= 100,
        "{v:#}"
    );
    let on = v["read"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "helper_syscall_on_cpu")
        .unwrap_or_else(|| panic!("{v:#}"))["mean_ns"]
        .as_i64()
        .unwrap();
    assert!(on > 0, "{v:#}");
}

#[test]
fn marked_reads_count_without_the_syscall_hooks() {
    let _turn = ONE_TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let tracer = fiox_explain::Tracer::start_with(false).unwrap_or_else(|e| panic!("{e}"));
    let m = fiox_explain::marks::this_thread().expect("a marker while marks are on");
    read_blocks(100, Some(m));
    read_blocks(50, None);
    let me = tid();
    let recs = tracer.finish();
    assert!(fiox_explain::marks::this_thread().is_none());
    let v = explained(me, &recs);
    assert_eq!(v["read"]["submit"]["calls"].as_u64(), Some(100), "{v:#}");
    assert!(
        v["read"]["phases"][0]["mean_ns"].as_i64().unwrap() > 0,
        "{v:#}"
    );
}

/// In windows (1 ms in every 20 ms) a thread's marked reads count only inside them: over
/// 200 ms of reads, a part is seen (the first window opens at start), and the phases are
/// per read seen; the coverage says so.
#[test]
fn marked_reads_count_inside_the_windows_only() {
    use std::time::{Duration, Instant};
    let _turn = ONE_TRACER.lock().unwrap_or_else(|e| e.into_inner());
    let sampling =
        fiox_explain::Sampling::windows(Duration::from_millis(1), Duration::from_millis(20))
            .unwrap();
    let tracer =
        fiox_explain::Tracer::start_sampled(false, sampling).unwrap_or_else(|e| panic!("{e}"));
    let m = fiox_explain::marks::this_thread().expect("a marker while marks are on");
    let until = Instant::now() + Duration::from_millis(200);
    let mut n = 0;
    while Instant::now() < until {
        read_blocks(10, Some(m));
        n += 10;
    }
    let me = tid();
    let (recs, coverage) = tracer.finish_covered();
    assert!(coverage.windows >= 5, "{coverage:?}");
    assert!((0.02..0.5).contains(&coverage.fraction()), "{coverage:?}");
    let job = fiox_explain::JobInput {
        engine: "psync".into(),
        name: "t".into(),
        tid: me,
        dirs: [(n, 10_000.0), (0, 0.0)],
        handoff: None,
        coverage,
    };
    let v = fiox_explain::explain_job(&job, &recs);
    let calls = v["read"]["submit"]["calls"].as_u64().unwrap();
    assert!(
        calls > 0 && calls * 2 < n,
        "{calls} of {n} reads seen: {v:#}"
    );
    assert_eq!(v["sampling"]["ios_seen"].as_u64(), Some(calls), "{v:#}");
    let on = v["read"]["phases"][0]["mean_ns"].as_i64().unwrap();
    assert!(on > 0 && on < 1_000_000, "{v:#}");
}
