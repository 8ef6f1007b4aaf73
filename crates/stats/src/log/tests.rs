//! The log files' tests: names, line formats, averaging windows, a job's set of logs.

use super::*;
use crate::hist::Histogram;
use crate::sampler::{RateKind, RateSink};
use fiox_job::Ddir;
use fiox_job::JobSpec;
use std::path::{Path, PathBuf};

/// A fresh directory under /tmp, removed on drop.
struct TmpDir(PathBuf);
impl TmpDir {
    fn new(tag: &str) -> TmpDir {
        let p = std::env::temp_dir().join(format!(
            "fiox-stats-log-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TmpDir(p)
    }
}
impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn names_follow_fio() {
    assert_eq!(log_file_name("lg", LogKind::Bw, 1, true), "lg_bw.1.log");
    assert_eq!(
        log_file_name("lg", LogKind::Clat, 12, true),
        "lg_clat.12.log"
    );
    assert_eq!(
        log_file_name("x/y", LogKind::Iops, 3, false),
        "x/y_iops.log"
    );
}

#[test]
fn per_io_lines_with_and_without_offset() {
    let t = TmpDir::new("perio");
    let p = t.0.join("a.log");
    let mut f = LogFile::create(&p, LogKind::Clat, LogOptions::default()).unwrap();
    f.sample(3, 66922, Ddir::Read, 4096, 8192, 0).unwrap();
    f.sample(4, 70000, Ddir::Write, 4096, 0, 1 << 13).unwrap(); // RT class
    f.finish(5).unwrap();
    assert_eq!(read(&p), "3, 66922, 0, 4096, 0\n4, 70000, 1, 4096, 1\n");

    let p = t.0.join("b.log");
    let opts = LogOptions {
        avg_msec: 0,
        log_offset: true,
        store_compressed: false,
        ..LogOptions::default()
    };
    let mut f = LogFile::create(&p, LogKind::Lat, opts).unwrap();
    f.sample(7, 5, Ddir::Trim, 512, 123_456, 2 << 13).unwrap(); // BE class
    f.finish(8).unwrap();
    assert_eq!(read(&p), "7, 5, 2, 512, 123456, 0\n");
}

/// log_max_value: a window's line holds its largest sample; the epoch shifts every time.
#[test]
fn max_value_windows_and_epoch_offset() {
    let t = TmpDir::new("max");
    let p = t.0.join("m.log");
    let opts = LogOptions {
        avg_msec: 500,
        max_value: true,
        ..LogOptions::default()
    };
    let mut f = LogFile::create(&p, LogKind::Clat, opts).unwrap();
    f.set_epoch_ms(1_700_000_000_000);
    f.sample(100, 10, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(200, 90, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(500, 30, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(700, 5, Ddir::Read, 4096, 0, 0).unwrap();
    f.finish(800).unwrap();
    assert_eq!(
        read(&p),
        "1700000000500, 90, 0, 0, 0\n1700000000800, 5, 0, 0, 0\n"
    );
}

#[test]
fn log_prio_prints_the_raw_priority_in_hex() {
    let t = TmpDir::new("prio");
    let p = t.0.join("p.log");
    let opts = LogOptions {
        avg_msec: 0,
        log_offset: true,
        store_compressed: false,
        log_prio: true,
        ..LogOptions::default()
    };
    let mut f = LogFile::create(&p, LogKind::Clat, opts).unwrap();
    f.sample(1, 10, Ddir::Read, 4096, 8192, (1 << 13) | 4)
        .unwrap();
    f.sample(2, 11, Ddir::Write, 4096, 0, 0).unwrap();
    f.finish(3).unwrap();
    assert_eq!(
        read(&p),
        "1, 10, 0, 4096, 8192, 0x2004\n2, 11, 1, 4096, 0, 0x0000\n"
    );
}

#[test]
fn averaged_windows_match_fio_sample_shape() {
    let t = TmpDir::new("avg");
    let p = t.0.join("c.log");
    let opts = LogOptions {
        avg_msec: 500,
        log_offset: false,
        store_compressed: false,
        ..LogOptions::default()
    };
    let mut f = LogFile::create(&p, LogKind::Clat, opts).unwrap();
    // Window [0,500) is closed by the sample at 500, which counts in it (as in fio):
    // mean of 10, 21, 30 = 20.33 -> 20.
    f.sample(100, 10, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(499, 21, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(500, 30, Ddir::Read, 4096, 0, 0).unwrap();
    // Writes keep their own window, still at [0,500): closed at once.
    f.sample(510, 7, Ddir::Write, 4096, 0, 0).unwrap();
    // Next read window starts at 500: 700 is inside; 1003 closes it: mean 45.
    f.sample(700, 40, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(1003, 50, Ddir::Read, 4096, 0, 0).unwrap();
    // 1000-aligned window still open at the end: written by finish. 60 and 61 -> 60.5 -> 61.
    f.sample(1100, 60, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(1101, 61, Ddir::Read, 4096, 0, 0).unwrap();
    f.finish(1200).unwrap();
    assert_eq!(
        read(&p),
        "500, 20, 0, 0, 0\n510, 7, 1, 0, 0\n1003, 45, 0, 0, 0\n1200, 61, 0, 0, 0\n"
    );
}

#[test]
fn log_issue_time_adds_the_issue_column_to_clat_and_slat_only() {
    let t = TmpDir::new("issue");
    let opts = LogOptions {
        log_offset: true,
        issue_time: true,
        ..LogOptions::default()
    };
    let open = |k| LogFile::create(&t.0.join(format!("{k:?}.log")), k, opts).unwrap();
    let (mut clat, mut lat) = (open(LogKind::Clat), open(LogKind::Lat));
    let io = IoSample {
        t_ms: 3,
        ddir: Ddir::Write,
        bytes: 4096,
        offset: 8192,
        ioprio: 0,
        issue_ns: 2_500_123,
    };
    clat.sample_issued(&io, 700).unwrap();
    lat.sample(3, 900, Ddir::Write, 4096, 8192, 0).unwrap();
    clat.finish(4).unwrap();
    lat.finish(4).unwrap();
    assert_eq!(
        read(&t.0.join("Clat.log")),
        "3, 700, 1, 4096, 8192, 0, 2500123\n"
    );
    assert_eq!(read(&t.0.join("Lat.log")), "3, 900, 1, 4096, 8192, 0, 0\n");
}

/// log_window_value=both: averaged lines hold the window's rounded mean then its maximum;
/// per-I/O lines a 0 there (fio 3.42 sets the column for the whole log).
#[test]
fn log_window_value_both_writes_mean_and_max() {
    let t = TmpDir::new("both");
    let opts = |avg_msec| LogOptions {
        avg_msec,
        both_values: true,
        ..LogOptions::default()
    };
    let p = t.0.join("avg.log");
    let mut f = LogFile::create(&p, LogKind::Clat, opts(100)).unwrap();
    f.sample(10, 10, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(20, 91, Ddir::Read, 4096, 0, 0).unwrap();
    f.sample(120, 7, Ddir::Read, 4096, 0, 0).unwrap();
    f.finish(150).unwrap();
    // As for avg and max: the sample that closes a window is part of it (fio's order).
    assert_eq!(read(&p), "120, 36, 91, 0, 0, 0\n");
    let p = t.0.join("per-io.log");
    let mut f = LogFile::create(&p, LogKind::Clat, opts(0)).unwrap();
    f.sample(3, 66, Ddir::Write, 4096, 0, 0).unwrap();
    f.finish(4).unwrap();
    assert_eq!(read(&p), "3, 66, 0, 1, 4096, 0\n");
}

#[test]
fn rate_logs_get_slack_latency_logs_do_not() {
    let t = TmpDir::new("slack");
    let opts = LogOptions {
        avg_msec: 500,
        log_offset: false,
        store_compressed: false,
        ..LogOptions::default()
    };
    let pb = t.0.join("bw.log");
    let mut bw = LogFile::create(&pb, LogKind::Bw, opts).unwrap();
    bw.sample(499, 100, Ddir::Read, 0, 0, 0).unwrap(); // within 1 ms: written
    bw.finish(600).unwrap();
    assert_eq!(read(&pb), "499, 100, 0, 0, 0\n");
    let pl = t.0.join("lat.log");
    let mut lat = LogFile::create(&pl, LogKind::Lat, opts).unwrap();
    lat.sample(499, 100, Ddir::Read, 0, 0, 0).unwrap(); // not closed until finish
    lat.finish(600).unwrap();
    assert_eq!(read(&pl), "600, 100, 0, 0, 0\n");
}

#[test]
fn job_logs_open_route_and_finish() {
    let t = TmpDir::new("job");
    let mut spec = JobSpec::default();
    spec.logs.write_bw_log = Some("lg".into());
    spec.logs.write_iops_log = Some(String::new()); // empty: job name
    spec.logs.write_lat_log = Some("lg".into());
    spec.stats.disable_slat = true;
    let mut logs = JobLogs::open(&t.0, &spec.logs, &spec.stats, "myjob", 2).unwrap();
    assert!(logs.any() && logs.wants_io_samples());
    let io = IoSample {
        t_ms: 1,
        ddir: Ddir::Write,
        bytes: 4096,
        offset: 0,
        ioprio: 0,
        issue_ns: 0,
    };
    logs.slat(&io, 5); // disabled: no file
    logs.completion(&io, Some(1_000_000), Some(1_000_100));
    // Unaveraged rate logs ignore windowed samples (fio writes per-I/O lines instead).
    logs.rate_sample(RateKind::Bw, 500, Ddir::Write, 999, 4096);
    logs.finish(2).unwrap();
    assert_eq!(read(&t.0.join("lg_bw.2.log")), "1, 4096, 1, 4096, 0\n");
    assert_eq!(read(&t.0.join("myjob_iops.2.log")), "1, 1, 1, 4096, 0\n");
    assert_eq!(read(&t.0.join("lg_clat.2.log")), "1, 1000000, 1, 4096, 0\n");
    assert_eq!(read(&t.0.join("lg_lat.2.log")), "1, 1000100, 1, 4096, 0\n");
    assert!(!t.0.join("lg_slat.2.log").exists());
}

#[test]
fn job_logs_averaged_rates_come_from_sampler() {
    use crate::sampler::RateSampler;
    let t = TmpDir::new("jobavg");
    let mut spec = JobSpec::default();
    spec.logs.write_bw_log = Some("s".into());
    spec.logs.log_avg_msec = 500;
    spec.logs.per_job_logs = false;
    let mut logs = JobLogs::open(&t.0, &spec.logs, &spec.stats, "j", 1).unwrap();
    assert!(!logs.wants_io_samples());
    let mut s = RateSampler::new(Ddir::Read, 0, 500, 500).with_log_bs(4096);
    s.tick_into(500_000_000, 512_000, 125, &mut logs);
    s.tick_into(1_000_000_000, 1_024_000, 250, &mut logs);
    logs.finish(1001).unwrap();
    // 512000 B over 500 ms = 1000 KiB/s; averaged lines carry bs 0.
    assert_eq!(
        read(&t.0.join("s_bw.log")),
        "500, 1000, 0, 0, 0\n1000, 1000, 0, 0, 0\n"
    );
}

#[test]
fn rate_windows_follow_fio_init() {
    let mut job = JobSpec::default();
    let w = rate_windows(&job);
    assert_eq!((w.bw_ms, w.iops_ms), (500, 500));
    job.logs.write_bw_log = Some("p".into());
    job.logs.log_avg_msec = 1000;
    let w = rate_windows(&job);
    assert_eq!(
        (w.bw_ms, w.bw_log_avg_ms),
        (1000, 1000),
        "bwavgtime not given"
    );
    assert_eq!((w.iops_ms, w.iops_log_avg_ms), (500, 1000), "no iops log");
    job.raw_options.push(("bwavgtime".into(), "250".into()));
    job.stats.bwavgtime = std::time::Duration::from_millis(250);
    let w = rate_windows(&job);
    assert_eq!(
        (w.bw_ms, w.bw_log_avg_ms),
        (250, 250),
        "min(log_avg, bwavgtime)"
    );
    job.logs.log_avg_msec = 0;
    let w = rate_windows(&job);
    assert_eq!((w.bw_ms, w.bw_log_avg_ms), (250, 0), "per-I/O log");
}

#[test]
fn for_job_names_by_run_position() {
    let t = TmpDir::new("forjob");
    let mut job = JobSpec {
        name: "seq".into(),
        index: 4,
        ..Default::default()
    };
    job.logs.write_iops_log = Some(String::new());
    job.logs.log_avg_msec = 100;
    let mut logs = JobLogs::for_job(&t.0, &job).unwrap();
    logs.rate_sample(RateKind::Iops, 100, Ddir::Read, 7, 4096);
    logs.finish(150).unwrap();
    assert_eq!(read(&t.0.join("seq_iops.5.log")), "100, 7, 0, 0, 0\n");
}

#[test]
fn job_logs_histogram_log() {
    let t = TmpDir::new("jobhist");
    let mut spec = JobSpec::default();
    spec.logs.write_hist_log = Some("h".into());
    spec.logs.log_hist_msec = 100;
    let mut logs = JobLogs::open(&t.0, &spec.logs, &spec.stats, "j", 3).unwrap();
    assert!(logs.any() && logs.wants_io_samples());
    let mut clat = Histogram::new();
    for t_ms in [0u64, 50, 100] {
        clat.record(1000);
        let io = IoSample {
            t_ms,
            ddir: Ddir::Read,
            bytes: 4096,
            offset: 0,
            ioprio: 0,
            issue_ns: 0,
        };
        logs.clat_hist(&io, &clat);
    }
    logs.finish(120).unwrap();
    let text = read(&t.0.join("h_clat_hist.3.log"));
    assert_eq!(text.lines().count(), 1);
    assert!(text.starts_with("100, 0, 4096, 0, "), "{}", &text[..40]);
}

#[test]
fn create_error_names_the_file() {
    let err = LogFile::create(
        Path::new("/nonexistent-dir-fiox/x.log"),
        LogKind::Bw,
        LogOptions::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent-dir-fiox/x.log"),
        "{err}"
    );
}

#[test]
fn fio_logs_are_recognised_by_their_lines_and_nothing_else_is() {
    let t = TmpDir::new("recognise");
    let judge = |text: &str| {
        let p = t.0.join("f");
        std::fs::write(&p, text).unwrap();
        is_fio_log(&mut std::fs::File::open(&p).unwrap())
    };
    assert!(judge(""));
    assert!(judge("10, 2048, 0, 4096, 0\n20, 4096, 1, 4096, 0\n"));
    assert!(judge("10, 2048, 0, 4096, 1234, 0x2004\n"));
    assert!(judge("100, 0, 4096, 0, 0, 3, 1, 0, 0\n")); // a histogram log line
    assert!(!judge("my notes\n"));
    assert!(!judge("1, 2, 3\n"));
    assert!(!judge("10, 2048, 0, 4096, 0\nrm -rf /\n"));
    assert!(!judge("\u{0}\u{1}binary"));
}
