//! End-to-end runner tests on real (tmpfs) files and the null engine.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use super::*;
use fiox_job::{RwMode, RwSpec, SizeSpec};
use std::path::PathBuf;

fn tmpdir(tag: &str) -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let d = base.join(format!("fiox-runner-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn job(name: &str, mode: RwMode, size: u64) -> JobSpec {
    JobSpec {
        name: name.into(),
        rw: RwSpec { mode, n: 0 },
        size: Some(SizeSpec::Bytes(size)),
        thread: true,
        ..JobSpec::default()
    }
}

fn quiet() -> RunOptions {
    RunOptions {
        eta: EtaMode::Never,
        ..Default::default()
    }
}

#[test]
fn null_engine_job_counts_ios() {
    let mut j = job("n", RwMode::RandRead, 4 << 20);
    j.ioengine = "null".into();
    let out = run(&[j], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = &out.result.jobs[0];
    assert_eq!(r.dirs.read.total_ios, 1024);
    assert_eq!(r.dirs.read.io_bytes, 4 << 20);
    assert_eq!(r.dirs.read.clat.n, 1024);
    assert_eq!(out.result.groups.len(), 1);
}

#[test]
fn psync_randwrite_on_a_file_then_unlink() {
    let d = tmpdir("psync");
    let mut j = job("w", RwMode::RandWrite, 1 << 20);
    j.files.directories = vec![d.display().to_string()];
    j.files.unlink = true;
    j.bs = fiox_job::PerDir::all(fiox_job::BsSpec::fixed(8192));
    let out = run(&[j], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = &out.result.jobs[0];
    assert_eq!(r.dirs.write.total_ios, 128);
    assert_eq!(r.dirs.write.io_bytes, 1 << 20);
    assert_eq!(r.dirs.read.total_ios, 0);
    assert!(
        !d.join("w.0.0").exists(),
        "unlink=1 removes the created file"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn stonewalled_phases_and_group_reporting() {
    let mut a = job("a", RwMode::Read, 1 << 20);
    a.ioengine = "null".into();
    let mut b = a.clone();
    b.name = "b".into();
    b.index = 1;
    b.stonewall = true;
    b.group_id = 1;
    b.stats.group_reporting = true;
    let mut c = b.clone();
    c.stonewall = false;
    c.index = 2;
    c.clone_index = 1;
    let out = run(&[a, b, c], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.result.jobs.len(), 2, "group 1 merged into one result");
    assert_eq!(out.result.jobs[1].jobs, 2);
    assert_eq!(out.result.jobs[1].dirs.read.io_bytes, 2 << 20);
}

#[test]
fn readonly_refuses_writes() {
    let mut j = job("ro", RwMode::Write, 1 << 20);
    j.ioengine = "null".into();
    let opts = RunOptions {
        readonly: true,
        ..quiet()
    };
    let out = run(&[j], &opts, &mut |_| {});
    assert_eq!(out.errors.len(), 1);
    assert!(out.errors[0].to_string().contains("--readonly"));
    assert_ne!(out.result.jobs[0].error, 0);
}

#[test]
fn number_ios_and_loops_bound_the_job() {
    let mut j = job("n", RwMode::Read, 1 << 20);
    j.ioengine = "null".into();
    j.number_ios = Some(10);
    let out = run(&[j.clone()], &quiet(), &mut |_| {});
    assert_eq!(out.result.jobs[0].dirs.read.total_ios, 10);
    j.number_ios = None;
    j.timing.loops = 3;
    let out = run(&[j], &quiet(), &mut |_| {});
    assert_eq!(out.result.jobs[0].dirs.read.total_ios, 3 * 256);
}

#[test]
fn fsync_every_n_writes_is_counted() {
    let d = tmpdir("fsync");
    let mut j = job("s", RwMode::Write, 1 << 20);
    j.files.directories = vec![d.display().to_string()];
    j.files.unlink = true;
    j.fsync = 32;
    j.end_fsync = true;
    let out = run(&[j], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = &out.result.jobs[0];
    assert_eq!(r.dirs.write.total_ios, 256);
    // As fio (7 for this job): none after the last write; end_fsync is not in sync_lat.
    assert_eq!(r.sync_lat.n, 256 / 32 - 1);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn queued_engine_reports_slat_and_depth() {
    let mut j = job("q", RwMode::RandRead, 4 << 20);
    j.ioengine = "null".into();
    j.iodepth = 8;
    j.iodepth_batch_submit = 8;
    j.iodepth_batch_complete_max = 8;
    j.iodepth_low = 8;
    let out = run(&[j], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = &out.result.jobs[0];
    assert_eq!(r.dirs.read.total_ios, 1024);
    assert!(r.has_slat);
    assert_eq!(r.dirs.read.slat.n, 1024);
    assert_eq!(r.dirs.read.lat.n, 1024);
    // Every batch of 8 was queued at depth 8.
    assert_eq!(r.io_depth.buckets[3], 1024, "{:?}", r.io_depth);
}

#[test]
fn status_snapshots_are_published() {
    let mut j = job("st", RwMode::Read, 1 << 30);
    j.ioengine = "null".into();
    j.timing.runtime = Some(std::time::Duration::from_millis(600));
    j.timing.time_based = true;
    let opts = RunOptions {
        status_interval: Some(std::time::Duration::from_millis(200)),
        ..quiet()
    };
    let mut seen = Vec::new();
    let out = run(&[j], &opts, &mut |r| {
        seen.push(r.jobs[0].dirs.read.total_ios)
    });
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(!seen.is_empty());
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert!(*seen.last().unwrap() <= out.result.jobs[0].dirs.read.total_ios);
}

/// Total of a depth/submit/complete distribution: at QD1 on a synchronous engine, one per I/O.
fn dist_total(d: &fiox_stats::DepthDist) -> u64 {
    d.buckets.iter().sum()
}

#[test]
fn status_snapshots_count_every_io_of_the_lean_loop_once() {
    // The lean loop (null engine, QD1) may batch its per-I/O counters: a snapshot taken mid-run
    // and the final result must still hold each I/O exactly once in every counter.
    let mut j = job("snapqd1", RwMode::RandRead, 1 << 30);
    j.ioengine = "null".into();
    j.timing.runtime = Some(std::time::Duration::from_millis(700));
    j.timing.time_based = true;
    let opts = RunOptions {
        status_interval: Some(std::time::Duration::from_millis(150)),
        ..quiet()
    };
    let mut seen = Vec::new();
    let out = run(&[j], &opts, &mut |r| {
        let j = &r.jobs[0];
        seen.push((
            j.dirs.read.total_ios,
            j.dirs.read.clat.n,
            dist_total(&j.submit),
            dist_total(&j.complete),
            dist_total(&j.io_depth),
        ));
    });
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let mid: Vec<_> = seen.iter().filter(|s| s.0 > 0).collect();
    assert!(!mid.is_empty(), "no snapshot with I/O: {seen:?}");
    for s in mid {
        assert_eq!((s.1, s.2, s.3, s.4), (s.0, s.0, s.0, s.0), "snapshot {s:?}");
    }
    let r = &out.result.jobs[0];
    let n = r.dirs.read.total_ios;
    assert!(n > 0);
    assert_eq!(r.dirs.read.clat.n, n);
    assert_eq!(dist_total(&r.submit), n, "{:?}", r.submit);
    assert_eq!(dist_total(&r.complete), n, "{:?}", r.complete);
    assert_eq!(dist_total(&r.io_depth), n, "{:?}", r.io_depth);
}

#[test]
fn exitall_stops_the_other_jobs_of_the_run_only() {
    let mut quick = job("quick", RwMode::Read, 1 << 20);
    quick.ioengine = "null".into();
    quick.errors.exitall = true;
    let mut long = job("long", RwMode::Read, 1 << 30);
    long.ioengine = "null".into();
    long.index = 1;
    long.timing.runtime = Some(std::time::Duration::from_secs(600));
    long.timing.time_based = true;
    let out = run(&[quick, long], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(!out.interrupted);
    // The long job ended early because the first one finished.
    assert!(out.result.jobs[1].runtime_ms < 600_000);
    // The stop was local to that run.
    assert!(!stop_requested());
}

#[test]
fn jobs_sharing_a_file_lay_it_out_once() {
    let d = tmpdir("shared");
    let f = d.join("shared");
    let mut jobs = Vec::new();
    for i in 0..4 {
        let mut j = job("s", RwMode::RandRead, 2 << 20);
        j.files.filenames = vec![f.display().to_string()];
        j.index = i;
        j.clone_index = i;
        jobs.push(j);
    }
    let out = run(&jobs, &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(out.result.jobs.iter().all(|r| r.dirs.read.total_ios == 512));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 2 << 20);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn file_append_writes_after_the_existing_data() {
    let d = tmpdir("append");
    let f = d.join("a");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let mut j = job("a", RwMode::Write, 1 << 20);
    j.files.filenames = vec![f.display().to_string()];
    j.files.file_append = true;
    let out = run(&[j], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.result.jobs[0].dirs.write.io_bytes, 1 << 20);
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 2 << 20);
    assert!(
        data[..1 << 20].iter().all(|&b| b == 7),
        "existing data kept"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn max_jobs_still_runs_every_job() {
    let jobs: Vec<JobSpec> = (0..4)
        .map(|i| {
            let mut j = job("m", RwMode::Read, 1 << 20);
            j.ioengine = "null".into();
            j.index = i;
            j.clone_index = i;
            j
        })
        .collect();
    let opts = RunOptions {
        max_jobs: Some(1),
        ..quiet()
    };
    let out = run(&jobs, &opts, &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(out.result.jobs.iter().all(|r| r.dirs.read.total_ios == 256));
}

/// A FUSE file that answers every read with at most 1000 bytes; fails without root, None (the
/// skip recorded) when the kernel has no FUSE.
fn fault_file(action: fiox_testbed::FaultAction, end: u64) -> Option<fiox_testbed::FaultFs> {
    use fiox_testbed::{FaultFs, FaultFsOptions, FaultOps, FaultRule};
    let opts = FaultFsOptions {
        size: 1 << 20,
        rules: vec![FaultRule {
            start: 0,
            end,
            ops: FaultOps::Read,
            action,
        }],
        ..FaultFsOptions::default()
    };
    crate::test_need::require_root("FUSE mounts");
    if !crate::test_need::kernel_device("/dev/fuse", "FUSE") {
        return None;
    }
    Some(FaultFs::mount(opts).expect("mount the FUSE fault file"))
}

#[test]
fn short_reads_are_counted_and_reissued() {
    let Some(fs) = fault_file(fiox_testbed::FaultAction::Short { max: 1000 }, 1 << 20) else {
        return;
    };
    let mut j = job("short", RwMode::RandRead, 64 << 10);
    j.files.filenames = vec![fs.file_path().display().to_string()];
    let out = run(&[j], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = &out.result.jobs[0].dirs.read;
    assert_eq!((r.total_ios, r.io_bytes), (16, 64 << 10));
    // 4096 bytes in pieces of at most 1000: four short transfers per I/O.
    assert_eq!(r.short_ios, 16 * 4);
}

#[test]
fn read_error_names_the_offset_and_stops_the_job() {
    let Some(fs) = fault_file(fiox_testbed::FaultAction::Error(libc::EIO), 8192) else {
        return;
    };
    let mut j = job("eio", RwMode::Read, 64 << 10);
    j.files.filenames = vec![fs.file_path().display().to_string()];
    let out = run(&[j.clone()], &quiet(), &mut |_| {});
    assert_eq!(out.errors.len(), 1);
    let msg = out.errors[0].to_string();
    assert!(msg.contains("(EIO): read offset=0, length=4096"), "{msg}");
    assert_eq!(out.result.jobs[0].error, libc::EIO);
    j.errors.continue_on_error = fiox_job::ContinueOnError::Read;
    let out = run(&[j], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = &out.result.jobs[0];
    assert_eq!((r.total_err, r.first_error), (2, libc::EIO));
    // fio counts every issued I/O, the 2 that failed included; their bytes are not counted.
    assert_eq!(r.dirs.read.total_ios, 16);
    assert_eq!(r.dirs.read.io_bytes, 14 * 4096);
    assert_eq!(
        r.error,
        libc::EIO,
        "fio reports a survived error as the job's error"
    );
}

#[test]
fn jobs_with_unsupported_fio_features_never_start() {
    let d = tmpdir("unsupported");
    let mut w = job("w", RwMode::Write, 1 << 20);
    w.files.directories = vec![d.display().to_string()];
    let mut flow = w.clone();
    flow.name = "f".into();
    flow.unsupported.push(fiox_job::Unsupported {
        option: "cgroup".into(),
        value: "2".into(),
        what: "option",
        note: String::new(),
    });
    let out = run(&[w, flow], &quiet(), &mut |_| {});
    let msgs: Vec<String> = out.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        msgs,
        ["job f: `cgroup` is a fio option that fiox does not support yet; this job will not run"]
    );
    // No job ran, not even the supported one: nothing was written.
    assert_eq!(out.result.jobs[0].dirs.write.total_ios, 0);
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
    std::fs::remove_dir_all(&d).unwrap();
}

/// (accumulated bits, last result, arrived, generation) of a [`FakeGroup`], and its signal.
type FakeState = (std::sync::Mutex<(u32, u32, usize, u64)>, std::sync::Condvar);

/// An in-process [`GroupSync`] for `n` "processes" (threads each calling [`run_synced`]): each
/// exchange waits for all of them and returns the OR of their flags, as MPI_Allreduce does.
struct FakeGroup {
    state: std::sync::Arc<FakeState>,
    n: usize,
}

impl GroupSync for FakeGroup {
    fn exchange(&self, local: SyncFlags) -> SyncFlags {
        let (m, cv) = &*self.state;
        let mut g = m.lock().unwrap();
        let gen = g.3;
        g.0 |= local.to_bits();
        g.2 += 1;
        if g.2 == self.n {
            *g = (0, g.0, 0, gen + 1);
            cv.notify_all();
        } else {
            while g.3 == gen {
                g = cv.wait(g).unwrap();
            }
        }
        SyncFlags::from_bits(g.1)
    }
}

/// Run `sets[k]` as process k of a fake group; the outcomes in process order.
fn run_group(sets: Vec<(Vec<JobSpec>, RunOptions)>) -> Vec<RunOutcome> {
    let state = std::sync::Arc::new(FakeState::default());
    let n = sets.len();
    let handles: Vec<_> = sets
        .into_iter()
        .map(|(jobs, opts)| {
            let sync = FakeGroup {
                state: state.clone(),
                n,
            };
            std::thread::spawn(move || run_synced(&jobs, &opts, &mut |_| {}, Some(&sync)))
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn stonewall_ranks_stops_every_process_when_the_first_finishes() {
    let mut small = job("sw", RwMode::Read, 4 << 20);
    small.ioengine = "null".into();
    small.timing.stonewall_ranks = true;
    // 1 TiB of null I/O would take minutes: only the stonewall ends it.
    let mut big = small.clone();
    big.size = Some(SizeSpec::Bytes(1 << 40));
    // Bounded, so that without the stonewall this fails instead of hanging.
    big.timing.runtime = Some(Duration::from_secs(5));
    let out = run_group(vec![(vec![small], quiet()), (vec![big], quiet())]);
    for o in &out {
        assert!(o.errors.is_empty(), "{:?}", o.errors);
        assert_eq!(o.phases.len(), 1);
        assert!(
            o.phases[0].started && o.phases[0].stonewalled,
            "{:?}",
            o.phases
        );
    }
    assert_eq!(
        out[0].phases[0].done_bytes,
        4 << 20,
        "the first did all its I/O"
    );
    let b = &out[1].phases[0];
    // Not against b.planned_bytes: on a loaded machine the stonewall may reach the other
    // process before its job has planned (then 0 planned, 0 done).
    assert!(b.done_bytes < 1 << 40, "the other was stopped: {b:?}");
    assert_eq!(out[1].result.jobs[0].dirs.read.io_bytes, b.done_bytes);
}

#[test]
fn a_process_that_refuses_its_jobs_stops_every_process_before_any_io() {
    let mut w = job("w", RwMode::Write, 1 << 40);
    w.ioengine = "null".into();
    let ro = RunOptions {
        readonly: true,
        ..quiet()
    };
    let out = run_group(vec![(vec![w.clone()], ro), (vec![w], quiet())]);
    assert!(out[0].errors[0].to_string().contains("--readonly"));
    assert!(
        out[1].errors.is_empty(),
        "the other says nothing of its own"
    );
    assert_eq!(
        out[1].result.jobs[0].dirs.write.io_bytes, 0,
        "and ran nothing"
    );
}

#[test]
fn phases_start_together_and_a_stop_on_one_process_ends_the_run_on_all() {
    let mut a = job("a", RwMode::Read, 1 << 20);
    a.ioengine = "null".into();
    let mut b = a.clone();
    b.name = "b".into();
    b.stonewall = true;
    b.index = 1;
    // Process 0's first phase ends at once with exitall and exit_what=all, which stops its whole run; process 1
    // would read 1 TiB without that stop.
    let mut stopper = a.clone();
    stopper.errors.exitall = true;
    stopper.errors.exit_what = fiox_job::ExitWhat::All;
    let mut long = a.clone();
    long.size = Some(SizeSpec::Bytes(1 << 40));
    long.timing.runtime = Some(Duration::from_secs(5));
    let out = run_group(vec![
        (vec![stopper, b.clone()], quiet()),
        (vec![long, b], quiet()),
    ]);
    for o in &out {
        assert_eq!(
            o.phases.len(),
            1,
            "the second phase ran nowhere: {:?}",
            o.phases
        );
        assert!(o.phases[0].started);
    }
    assert!(out[1].phases[0].done_bytes < 1 << 40);
}

#[test]
fn only_writing_jobs_fill_their_buffers_up_front() {
    let mut j = job("b", RwMode::RandRead, 1 << 20);
    j.iodepth = 4;
    let spec = fiox_workload::GenOptions::default();
    let plan_files = [fiox_workload::FileExtent {
        offset: 0,
        size: 1 << 20,
    }];
    for (mode, filled) in [(RwMode::RandRead, false), (RwMode::RandWrite, true)] {
        j.rw.mode = mode;
        let gen = fiox_workload::Generator::with_options(&j, &plan_files, 1 << 20, &spec).unwrap();
        let mut filler = crate::gen::filler(&j, &gen);
        let pool = crate::job::memory::buffer_pool(&j, &mut filler).unwrap();
        let touched = (0..pool.len()).any(|i| pool.slice(i).iter().any(|&b| b != 0));
        assert_eq!(touched, filled, "{mode:?}");
    }
}

/// cpus_allowed_policy=split gives each job one CPU by its number in the whole run, as fio's
/// `fio_cpus_split(mask, thread_number - 1)`, not by its clone number: with 3 CPUs, the 6th
/// job of the run (a clone with subjob number 1) gets the third CPU.
#[test]
fn split_cpus_follow_the_job_number_like_fio() {
    let mut j = job("s", RwMode::Read, 4096);
    j.cpu.cpus_allowed = Some(vec![4, 5, 6]);
    j.cpu.policy = fiox_job::CpusAllowedPolicy::Split;
    j.index = 5;
    j.clone_index = 1;
    assert_eq!(cpus_for(&j), Some(vec![6]));
    j.cpu.policy = fiox_job::CpusAllowedPolicy::Shared;
    assert_eq!(cpus_for(&j), Some(vec![4, 5, 6]));
}

/// `--profile=act` with group_reporting: every I/O of both jobs lands in the merged act slice,
/// and the group's JSON `job options` are its last job's, as fio's stat.c leaves them.
#[test]
fn act_slices_count_every_io_and_groups_keep_the_last_jobs_options() {
    let mk = |name: &str| {
        let mut j = job(name, RwMode::RandRead, 1 << 20);
        j.ioengine = "null".into();
        j.stats.group_reporting = true;
        j.act = Some(fiox_job::profile::ActSpec {
            slices: 1,
            prep: false,
        });
        j.own_options = vec![("name".into(), name.into())];
        j
    };
    let mut b = mk("b");
    b.index = 1;
    let out = run(&[mk("a"), b], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = &out.result.jobs;
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].name, "a");
    assert_eq!(r[0].job_options, [("name".to_string(), "b".to_string())]);
    let slices = r[0].act_slices.as_ref().expect("act slices");
    assert_eq!(slices.len(), 1);
    assert_eq!(slices[0].total_ios, 2 * 256);
}

/// The lean loop issues psync's reads and writes itself (the engine's positional_fds): the
/// bytes land at the offsets the job drew, and read back as the engine would read them.
#[test]
fn lean_psync_writes_and_reads_its_blocks_in_place() {
    let d = tmpdir("lean-psync");
    let mut w = job("lw", RwMode::RandWrite, 1 << 20);
    w.thread = false;
    w.files.filenames = vec![d.join("f").display().to_string()];
    w.buffers.pattern = b"fiox-lean".to_vec();
    let out = run(&[w.clone()], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.result.jobs[0].dirs.write.io_bytes, 1 << 20);
    let data = std::fs::read(d.join("f")).unwrap();
    assert_eq!(data.len(), 1 << 20);
    for (i, block) in data.chunks(4096).enumerate() {
        let want: Vec<u8> = b"fiox-lean".iter().copied().cycle().take(4096).collect();
        assert_eq!(block, &want[..], "block {i}");
    }
    let mut r = w;
    r.name = "lr".into();
    r.rw = RwSpec {
        mode: RwMode::RandRead,
        n: 0,
    };
    let out = run(&[r], &quiet(), &mut |_| {});
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.result.jobs[0].dirs.read.total_ios, 256);
    std::fs::remove_dir_all(&d).unwrap();
}

/// The queued loop's shortcut for plain jobs (`plain_next`) issues exactly what the general
/// path issues: the same job with serialize_overlap (which takes the general path and, for
/// reads that never conflict, changes nothing else) writes the same I/O log, offset for offset.
#[test]
fn plain_queued_path_issues_what_the_general_path_issues() {
    let d = tmpdir("plain-next");
    let file = d.join("f").display().to_string();
    let log_of = |serialize: bool| {
        let mut j = job("pn", RwMode::RandRead, 1 << 20);
        j.ioengine = "io_uring".into();
        j.files.filenames = vec![file.clone()];
        j.iodepth = 8;
        j.iodepth_batch_submit = 4;
        j.iodepth_batch_complete_max = 4;
        j.verify.serialize_overlap = serialize;
        let log = d.join(format!("iolog-{serialize}"));
        j.logs.write_iolog = Some(log.display().to_string());
        let out = run(&[j], &quiet(), &mut |_| {});
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.result.jobs[0].dirs.read.total_ios, 256);
        // Version 3 lines start with a timestamp: compare what was issued, not when.
        let text = std::fs::read_to_string(&log).unwrap();
        text.lines()
            .map(|l| match l.split_once(' ') {
                Some((t, rest)) if t.bytes().all(|b| b.is_ascii_digit()) => rest.to_string(),
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
    };
    let plain = log_of(false);
    let general = log_of(true);
    let reads = plain.iter().filter(|l| l.contains(" read ")).count();
    assert_eq!(reads, 256, "{plain:?}");
    assert_eq!(plain, general);
    std::fs::remove_dir_all(&d).unwrap();
}
