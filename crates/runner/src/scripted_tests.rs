//! The I/O loop's edge cases, each driven through a whole job on the scripted engine
//! (`fiox_engine::scripted`, handed to the runner by [`RunOptions::engine_factory`]): short
//! transfers and their remainders, a read at end of file, EAGAIN (`Busy`) with and without
//! I/O in flight, an error in the middle of a batch, late and reordered completions, the
//! runtime ending while I/O is late, a commit that submits only part, a batch of which the
//! engine takes only a prefix. No FUSE, no root: the job's file is a small one in /dev/shm
//! (the engine ignores its data), and every test checks exact counts, in the job's result and
//! in the engine's log of what it was asked.
//!
//! Short transfers: fiox counts a unit once in `total_ios` and with all its bytes in
//! `io_bytes`, however many pieces it took (as the FaultFs test in tests.rs asserts), and each
//! short piece in `short_ios`. fio 3.33 counts each issue of a piece in `total_ios`
//! (ioengines.c td_io_queue) and only the last piece's bytes in `io_bytes` (io_u.c
//! io_completed); the tests say what fio would report where it differs.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use super::*;
use fiox_engine::scripted::{Answer, Batch, Call, Commit, Script, ScriptLog, Step};
use fiox_engine::IoOp;
use fiox_stats::JobResult;
use std::path::PathBuf;

const EIO: i32 = libc::EIO;
const KIB4: u64 = 4096;

/// The job's file, removed when the test ends (also when it fails).
struct Target(PathBuf);

impl Target {
    fn new(tag: &str) -> Target {
        let base = if std::path::Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        Target(base.join(format!("fiox-scripted-{tag}-{}", std::process::id())))
    }

    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A job in fio's job language on `target` (resolved as a job file is, so the defaults that
/// depend on other options, such as `iodepth_low`, are fio's).
fn job(target: &Target, options: &str) -> JobSpec {
    let text = format!("[t]\nfilename={}\nthread\n{options}\n", target.path());
    let mut jobs = fiox_job::parse_job_text(&text, "scripted.fio").expect("job parses");
    assert_eq!(jobs.len(), 1);
    jobs.remove(0)
}

/// Run `job` with every engine built from `script`.
fn run_on(script: &Script, job: JobSpec) -> RunOutcome {
    let script = script.clone();
    let opts = RunOptions {
        eta: EtaMode::Never,
        engine_factory: Some(EngineFactory::new(move |_| Ok(Box::new(script.engine())))),
        ..Default::default()
    };
    run(&[job], &opts, &mut |_| {})
}

/// The one job's result.
fn result(out: &RunOutcome) -> &JobResult {
    assert_eq!(out.result.jobs.len(), 1);
    &out.result.jobs[0]
}

/// (total_ios, io_bytes, short_ios) of the read or write direction.
fn counts(r: &JobResult, op: IoOp) -> (u64, u64, u64) {
    let d = match op {
        IoOp::Write => &r.dirs.write,
        _ => &r.dirs.read,
    };
    (d.total_ios, d.io_bytes, d.short_ios)
}

/// (op, offset, len, answer) of each call, for comparing with a list.
fn calls(log: &ScriptLog) -> Vec<(IoOp, u64, u32, Answer)> {
    log.calls()
        .iter()
        .map(|c| (c.op, c.offset, c.len, c.answer))
        .collect()
}

/// The units the engine took (`Queued` or `Done`), sorted by offset: (offset, len).
fn taken(log: &ScriptLog) -> Vec<(u64, u32)> {
    let mut v: Vec<(u64, u32)> = log
        .calls()
        .iter()
        .filter(|c| matches!(c.answer, Answer::Queued(_) | Answer::Done(_)))
        .map(|c| (c.offset, c.len))
        .collect();
    v.sort_unstable();
    v
}

/// `n` whole 4 KiB units from offset 0, as `taken` lists them.
fn whole_units(n: u64) -> Vec<(u64, u32)> {
    (0..n).map(|i| (i * KIB4, 4096)).collect()
}

/// Every unit the queued engine took was handed back once: nothing left in flight, nothing
/// reaped twice.
fn assert_all_reaped(log: &ScriptLog) {
    assert_eq!(log.outstanding(), 0, "units left in the engine");
    let queued: Vec<u32> = log
        .calls()
        .iter()
        .filter(|c| matches!(c.answer, Answer::Queued(_)))
        .map(|c| c.unit)
        .collect();
    assert_eq!(
        log.reaped().len(),
        queued.len(),
        "one completion per unit taken"
    );
}

/// The job ended without an error and without the bogus-completion warning.
fn assert_clean(out: &RunOutcome) {
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = result(out);
    assert_eq!((r.error, r.total_err), (0, 0), "{}", r.verror);
    assert!(
        !r.warnings
            .iter()
            .any(|w| w.code == fiox_stats::WarningCode::EngineBogusCompletions),
        "{:?}",
        r.warnings
    );
}

/// fio's description of a failed unit (`io_u error on file ...`).
fn io_error(target: &Target, errno: &str, text: &str, op: &str, offset: u64, len: u32) -> String {
    format!(
        "io_u error on file {}: {text} ({errno}): {op} offset={offset}, length={len}",
        target.path()
    )
}

/// A synchronous engine's short read: the remainder goes out at once, starting where the short
/// part ended, as often as it is short again; the unit counts once (4 I/Os, 16 KiB) and each
/// short transfer once in `short_ios`. (fio 3.33: total_ios 6, io_bytes 12,288 + 3,000.)
#[test]
fn sync_short_read_reissues_the_remainder() {
    let t = Target::new("sync-short-read");
    let script = Script::sync([Step::Full, Step::Short(1000), Step::Short(96)]);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=16k"));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (4, 16384, 2));
    let r = IoOp::Read;
    assert_eq!(
        calls(&script.log()),
        [
            (r, 0, 4096, Answer::Done(4096)),
            (r, 4096, 4096, Answer::Done(1000)),
            (r, 5096, 3096, Answer::Done(96)),
            (r, 5192, 3000, Answer::Done(3000)),
            (r, 8192, 4096, Answer::Done(4096)),
            (r, 12288, 4096, Answer::Done(4096)),
        ]
    );
    // Every piece of the unit went to the same file.
    assert!(script.log().calls().iter().all(|c: &Call| c.file == 0));
}

/// A random job on a synchronous engine draws its requests a batch ahead (the lean loop):
/// when a short read sends the unit the general way, the requests drawn and not issued go
/// next, in the generator's order, none lost or issued twice: the offsets are those of the
/// same job without the short read, with the remainder after the short piece.
#[test]
fn sync_short_read_keeps_the_requests_drawn_ahead_in_order() {
    let t = Target::new("sync-short-ahead");
    let opts = "rw=randread\nbs=4k\nsize=64k";
    let plain = Script::sync([Step::Full]);
    assert_clean(&run_on(&plain, job(&t, opts)));
    let want: Vec<u64> = plain.log().calls().iter().map(|c| c.offset).collect();
    assert_eq!(want.len(), 16, "every block once");
    let script = Script::sync([Step::Full, Step::Full, Step::Short(1000)]);
    let out = run_on(&script, job(&t, opts));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (16, 65536, 1));
    let got: Vec<(u64, u32)> = script
        .log()
        .calls()
        .iter()
        .map(|c| (c.offset, c.len))
        .collect();
    let mut expect: Vec<(u64, u32)> = want.iter().map(|&o| (o, 4096)).collect();
    expect.insert(3, (want[2] + 1000, 3096));
    assert_eq!(got, expect);
    assert_eq!(taken(&script.log()).len(), 17);
}

/// A short write is re-issued the same way: the remainder from byte 512 of the unit. (fio
/// 3.33: total_ios 5, io_bytes 12,288 + 3,584.)
#[test]
fn sync_short_write_reissues_the_remainder() {
    let t = Target::new("sync-short-write");
    let script = Script::sync([Step::Full, Step::Full, Step::Short(512)]);
    let out = run_on(&script, job(&t, "rw=write\nbs=4k\nsize=16k"));
    assert_clean(&out);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Write), (4, 16384, 1));
    assert_eq!(r.dirs.read.total_ios, 0);
    let w = IoOp::Write;
    assert_eq!(
        calls(&script.log()),
        [
            (w, 0, 4096, Answer::Done(4096)),
            (w, 4096, 4096, Answer::Done(4096)),
            (w, 8192, 4096, Answer::Done(512)),
            (w, 8704, 3584, Answer::Done(3584)),
            (w, 12288, 4096, Answer::Done(4096)),
        ]
    );
}

/// A queued engine's short read (iodepth=4): the remainder is queued again while the other
/// units are in flight, and each unit still counts once. (fio 3.33: total_ios 9, io_bytes
/// 28,672 + 3,096.)
#[test]
fn queued_short_read_reissues_the_remainder() {
    let t = Target::new("queued-short");
    let script = Script::queued([Step::Full, Step::Short(1000)]);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=32k\niodepth=4"));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (8, 32768, 1));
    let log = script.log();
    assert_eq!(log.calls_total(), 9, "8 units and one remainder");
    let mut want = whole_units(8);
    want.push((5096, 3096));
    want.sort_unstable();
    assert_eq!(taken(&log), want);
    // The remainder went out after the short completion was reaped.
    let calls = log.calls();
    let short = calls.iter().find(|c| c.offset == 4096).unwrap();
    let rest = calls.iter().position(|c| c.offset == 5096).unwrap();
    let reaped_short = log
        .reaped()
        .iter()
        .position(|c| c.unit == short.unit && c.result == 1000)
        .unwrap();
    assert!(rest > 1 && reaped_short < rest, "{calls:?}");
    assert_all_reaped(&log);
}

/// A reaped read that returns 0 bytes (past the end of a file created on open) is, as in fio's
/// io_completed, an I/O of no bytes and no error: the job goes on (fio's "full resid" EIO
/// is only a synchronous engine's, below).
#[test]
fn zero_byte_read_reaped_counts_without_bytes_as_fio() {
    let t = Target::new("eof-queued");
    let script = Script::queued([Step::Full, Step::Short(0)]);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=16k\niodepth=4"));
    assert_clean(&out);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (4, 3 * 4096, 0));
    assert_eq!((r.error, r.total_err), (0, 0));
    assert_eq!(script.log().calls_total(), 4, "each unit issued once");
}

/// A read that returns 0 bytes (end of file) is not a short read to re-issue forever: the unit
/// fails with EIO, as fio's "full resid" does. It counts as an I/O (fio counts every issued
/// unit, failed ones too), moves no bytes, and ends the job.
#[test]
fn zero_byte_read_fails_the_job_with_eio() {
    let t = Target::new("eof");
    let script = Script::sync([Step::Full, Step::Short(0)]);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=16k"));
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (2, 4096, 0));
    assert_eq!((r.error, r.total_err, r.first_error), (EIO, 1, EIO));
    assert_eq!(
        r.verror,
        io_error(&t, "EIO", "Input/output error", "read", 4096, 4096)
    );
    assert_eq!(
        script.log().calls_total(),
        2,
        "nothing after the failed unit"
    );
}

/// A short read whose remainder then reads 0 bytes fails the same way, at the remainder's
/// offset and length; the unit counts once with no bytes. (fio 3.33 counts both issues:
/// total_ios 2.)
#[test]
fn zero_byte_remainder_fails_at_its_offset() {
    let t = Target::new("eof-rest");
    let script = Script::sync([Step::Short(1000), Step::Short(0)]);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=16k"));
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (1, 0, 1));
    assert_eq!(
        r.verror,
        io_error(&t, "EIO", "Input/output error", "read", 1000, 3096)
    );
}

/// With `continue_on_error=read` the 0-byte read is survived: the job reads on, the failed
/// unit counts as an I/O without bytes, and the job reports EIO as its (first) error with exit
/// status 0, as fio does.
#[test]
fn zero_byte_read_is_survived_with_continue_on_error() {
    let t = Target::new("eof-continue");
    let script = Script::sync([Step::Full, Step::Short(0)]);
    let out = run_on(
        &script,
        job(&t, "rw=read\nbs=4k\nsize=16k\ncontinue_on_error=read"),
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (4, 12288, 0));
    assert_eq!((r.error, r.total_err, r.first_error), (EIO, 1, EIO));
    assert_eq!(script.log().calls_total(), 4);
}

/// `Busy` from `queue` with I/O in flight: the unit is kept, the runner reaps, then offers the
/// same unit (same offset and length) again, and it completes; nothing counts twice.
#[test]
fn busy_unit_is_queued_again_after_a_reap() {
    let t = Target::new("busy");
    let script = Script::queued([Step::Full, Step::Busy]);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=16k\niodepth=4"));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (4, 16384, 0));
    let log = script.log();
    let r = IoOp::Read;
    assert_eq!(
        calls(&log),
        [
            (r, 0, 4096, Answer::Queued(4096)),
            (r, 4096, 4096, Answer::Busy),
            (r, 4096, 4096, Answer::Queued(4096)),
            (r, 8192, 4096, Answer::Queued(4096)),
            (r, 12288, 4096, Answer::Queued(4096)),
        ]
    );
    // The unit offered again is the same unit (slot) the engine turned away.
    let c = log.calls();
    assert_eq!(c[1].unit, c[2].unit);
    // It was offered again only once the unit in flight had been reaped.
    assert_eq!(log.reaped()[0].unit, c[0].unit);
    assert_all_reaped(&log);
}

/// An engine that holds only two units (iodepth=8): every unit after the second is turned away
/// once (the fill stops at the first Busy, a reap frees one place, the turned-away unit goes,
/// the next new one is turned away), so 16 units take 30 calls; each is taken exactly once.
#[test]
fn a_full_engine_turns_units_away_and_none_is_lost() {
    let t = Target::new("capacity");
    let script = Script::queued([]).capacity(2);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=64k\niodepth=8"));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (16, 65536, 0));
    let log = script.log();
    let busy = log
        .calls()
        .iter()
        .filter(|c| c.answer == Answer::Busy)
        .count();
    assert_eq!((log.calls_total(), busy), (30, 14));
    assert_eq!(taken(&log), whole_units(16));
    assert_all_reaped(&log);
}

/// An engine that answers Busy forever with nothing in flight: the loop gives up after a
/// million idle rounds (one offer each, after the first round's) and the job ends with EIO
/// naming the engine; the unit never counted.
#[test]
fn busy_forever_with_nothing_in_flight_ends_the_job() {
    let t = Target::new("busy-forever");
    let script = Script::queued([]).then(Step::Busy);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=4k"));
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (0, 0, 0));
    assert_eq!(r.error, EIO);
    assert_eq!(
        r.verror,
        "the scripted engine accepts no I/O (busy with an empty queue)"
    );
    // Round 1 draws the unit; rounds 2.. are idle; the error is set in idle round 1,000,001.
    assert_eq!(script.log().calls_total(), 1_000_002);
    assert_eq!(script.log().outstanding(), 0);
}

/// The third of 8 units in flight fails with EIO: the job's error is that unit's, and every
/// other unit in flight is still reaped and counted. With iodepth_batch_complete_max=8 one reap
/// takes all 8 (7 reads of 4 KiB and the failed one: 8 I/Os). With =1 each reap takes one and
/// the loop refills the place (a commit of 1), so two more units were queued before the third
/// completion failed; the 7 in flight then are reaped in the final drain (10 I/Os, 9 moved
/// data). The failed unit counts as an I/O, as in fio (whose total_io_u counts a unit when it
/// is queued).
#[test]
fn error_mid_batch_drains_the_units_in_flight() {
    let commit = |n| Commit {
        pending: n,
        submitted: n,
    };
    for (max, ios, commits) in [
        (8, 8, vec![commit(8)]),
        (1, 10, vec![commit(8), commit(1), commit(1)]),
    ] {
        let t = Target::new(&format!("mid-batch-{max}"));
        let script = Script::queued([Step::Full, Step::Full, Step::Error(EIO)]);
        let options = format!(
            "rw=read\nbs=4k\nsize=64k\niodepth=8\niodepth_batch_submit=8\n\
             iodepth_batch_complete_max={max}"
        );
        let out = run_on(&script, job(&t, &options));
        assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
        let r = result(&out);
        assert_eq!(
            counts(r, IoOp::Read),
            (ios, (ios - 1) * 4096, 0),
            "max={max}"
        );
        assert_eq!((r.error, r.total_err, r.first_error), (EIO, 1, EIO));
        assert_eq!(
            r.verror,
            io_error(&t, "EIO", "Input/output error", "read", 8192, 4096)
        );
        let log = script.log();
        assert_eq!(log.calls_total(), ios, "no unit queued after the error");
        assert_eq!(log.commits(), commits, "max={max}");
        assert_eq!(taken(&log), whole_units(ios));
        assert_all_reaped(&log);
    }
}

/// `continue_on_error=all`: the failed unit is counted (16 I/Os, 15 moved data) and the job
/// runs to its end, reporting EIO as its error with exit status 0.
#[test]
fn error_mid_batch_is_survived_with_continue_on_error_all() {
    let t = Target::new("mid-batch-continue");
    let script = Script::queued([Step::Full, Step::Full, Step::Error(EIO)]);
    let options = "rw=read\nbs=4k\nsize=64k\niodepth=8\niodepth_batch_submit=8\n\
                   iodepth_batch_complete_max=8\ncontinue_on_error=all";
    let out = run_on(&script, job(&t, options));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (16, 15 * 4096, 0));
    assert_eq!((r.error, r.total_err, r.first_error), (EIO, 1, EIO));
    assert_eq!(taken(&script.log()), whole_units(16));
    assert_all_reaped(&script.log());
}

/// `continue_on_error=all` survives only fio's default list (EIO, EILSEQ): ENOSPC still ends
/// the job, with the units in flight drained as after any fatal error.
#[test]
fn continue_on_error_all_still_stops_on_enospc() {
    let t = Target::new("enospc");
    let script = Script::queued([Step::Full, Step::Full, Step::Error(libc::ENOSPC)]);
    let options = "rw=write\nbs=4k\nsize=64k\niodepth=8\niodepth_batch_submit=8\n\
                   iodepth_batch_complete_max=8\ncontinue_on_error=all";
    let out = run_on(&script, job(&t, options));
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Write), (8, 7 * 4096, 0));
    assert_eq!((r.error, r.total_err), (libc::ENOSPC, 1));
    assert_eq!(
        r.verror,
        io_error(&t, "ENOSPC", "No space left on device", "write", 8192, 4096)
    );
    assert_all_reaped(&script.log());
}

/// `queue` itself fails on the third unit: the two taken before it are committed and drained
/// (2 I/Os counted), the refused one is not counted, nothing more is queued. The job's error
/// is the engine's errno with its message.
#[test]
fn queue_error_drains_what_was_taken() {
    let t = Target::new("refuse");
    let script = Script::queued([Step::Full, Step::Full, Step::Refuse(libc::ENOMEM)]);
    let options = "rw=read\nbs=4k\nsize=64k\niodepth=8\niodepth_batch_submit=8";
    let out = run_on(&script, job(&t, options));
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (2, 8192, 0));
    assert_eq!(r.error, libc::ENOMEM);
    assert!(r.verror.contains("Cannot allocate memory"), "{}", r.verror);
    let log = script.log();
    assert_eq!(log.calls_total(), 3);
    assert_eq!(
        log.commits(),
        [Commit {
            pending: 2,
            submitted: 2
        }]
    );
    assert_all_reaped(&log);
}

/// fio 3.33 reports an engine's failed queue with the engine's errno (backend.c,
/// io_queue_event: `td_verror(td, -(*ret), "td_io_queue")`): err=12 here, as fiox's (the
/// loop reported every engine error as EIO until this test found it).
#[test]
fn queue_error_reports_the_engines_errno() {
    let t = Target::new("refuse-errno");
    let script = Script::queued([Step::Refuse(libc::ENOMEM)]);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=16k\niodepth=4"));
    assert_eq!(result(&out).error, libc::ENOMEM);
}

/// Late completions (iodepth=4): the first unit completes 300 ms after it was submitted, the
/// third 100 ms after, the others at once, so the others are reaped before them. Every unit is
/// still accounted once (8 I/Os, 8 clat samples, no bogus completion).
#[test]
fn late_completions_out_of_order_count_once() {
    let t = Target::new("late");
    let late = |ms| Step::Delay(std::time::Duration::from_millis(ms));
    let script = Script::queued([late(300), Step::Full, late(100)]);
    let out = run_on(&script, job(&t, "rw=read\nbs=4k\nsize=32k\niodepth=4"));
    assert_clean(&out);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (8, 32768, 0));
    assert_eq!(r.dirs.read.clat.n, 8);
    let log = script.log();
    assert_eq!(taken(&log), whole_units(8));
    assert_all_reaped(&log);
    // Out of order: the unit at offset 0, queued first, was not reaped first.
    let first = log.calls()[0];
    assert_eq!(first.offset, 0);
    assert_ne!(log.reaped()[0].unit, first.unit);
}

/// An engine that hands back each reap's completions newest first (iodepth=8, all 8 reaped at
/// once): the first reap returns the eighth unit first, and all 16 count once.
#[test]
fn reversed_completions_count_once() {
    let t = Target::new("reverse");
    let script = Script::queued([]).reverse();
    let options = "rw=read\nbs=4k\nsize=64k\niodepth=8\niodepth_batch_submit=8\n\
                   iodepth_batch_complete_max=8";
    let out = run_on(&script, job(&t, options));
    assert_clean(&out);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (16, 65536, 0));
    assert_eq!(r.dirs.read.clat.n, 16);
    let log = script.log();
    let first_eight: Vec<u32> = log.calls()[..8].iter().rev().map(|c| c.unit).collect();
    let reaped: Vec<u32> = log.reaped()[..8].iter().map(|c| c.unit).collect();
    assert_eq!(reaped, first_eight);
    assert_eq!(taken(&log), whole_units(16));
    assert_all_reaped(&log);
}

/// `runtime` with `time_based` while every unit is late (300 ms against a 50 ms runtime): the
/// job ends at the first completion after the deadline, queues nothing more, and drains the
/// other three: 4 I/Os, all reaped.
#[test]
fn runtime_ends_the_job_while_units_are_late() {
    let t = Target::new("runtime");
    let script = Script::queued([]).then(Step::Delay(std::time::Duration::from_millis(300)));
    let options = "rw=read\nbs=4k\nsize=64k\niodepth=4\ntime_based\nruntime=50ms";
    let out = run_on(&script, job(&t, options));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (4, 16384, 0));
    let log = script.log();
    assert_eq!(log.calls_total(), 4);
    assert_eq!(taken(&log), whole_units(4));
    assert_all_reaped(&log);
}

/// A commit that submits only one of the pending units (as io_submit after EAGAIN): the rest
/// go out with the next `getevents` (the engine contract), so all 32 units complete and count
/// once. With iodepth_batch_submit=8 each commit finds 8 pending.
#[test]
fn partial_commits_lose_no_unit() {
    let t = Target::new("commit");
    let script = Script::queued([]).commit_limit(1);
    let options = "rw=read\nbs=4k\nsize=128k\niodepth=8\niodepth_batch_submit=8\n\
                   iodepth_batch_complete_max=8";
    let out = run_on(&script, job(&t, options));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (32, 131072, 0));
    let log = script.log();
    let partial = Commit {
        pending: 8,
        submitted: 1,
    };
    assert_eq!(log.commits(), [partial; 4]);
    assert_eq!(taken(&log), whole_units(32));
    assert_all_reaped(&log);
}

/// The batch path (a plain randread on an engine that batches, iodepth_batch_submit=8): the
/// engine takes only the first 3 units of each `queue_rw`; the 5 turned away go out one at a
/// time through `queue`, and every block of the file is read exactly once.
#[test]
fn batch_prefixes_lose_no_unit() {
    let t = Target::new("batch");
    let script = Script::queued([]).batches(Some(3));
    let options = "rw=randread\nbs=4k\nsize=64k\niodepth=8\niodepth_batch_submit=8\n\
                   iodepth_batch_complete_max=8";
    let out = run_on(&script, job(&t, options));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (16, 65536, 0));
    let log = script.log();
    let batches = log.batches();
    assert_eq!(
        batches[0],
        Batch {
            offered: 8,
            taken: 3
        }
    );
    assert!(batches.iter().all(|b| b.taken <= 3), "{batches:?}");
    assert_eq!(
        log.calls_total(),
        16,
        "each unit offered to the engine once"
    );
    let one_by_one = log.calls().iter().filter(|c| !c.batched).count() as u64;
    let in_batches: usize = batches.iter().map(|b| b.taken).sum();
    assert_eq!(one_by_one + in_batches as u64, 16);
    assert!(one_by_one >= 5, "the first batch's five went out alone");
    assert_eq!(taken(&log), whole_units(16));
    assert_all_reaped(&log);
}

/// A short read on the batch path: the unit leaves the batch path's accounting for the
/// general one, its remainder goes out alone through `queue`, and it counts once. (fio 3.33:
/// total_ios 17, io_bytes 61,440 + 3,096.)
#[test]
fn batch_path_short_read_reissues_the_remainder() {
    let t = Target::new("batch-short");
    let script = Script::queued([Step::Full, Step::Short(1000)]).batches(None);
    let options = "rw=randread\nbs=4k\nsize=64k\niodepth=8\niodepth_batch_submit=8\n\
                   iodepth_batch_complete_max=8";
    let out = run_on(&script, job(&t, options));
    assert_clean(&out);
    assert_eq!(counts(result(&out), IoOp::Read), (16, 65536, 1));
    let log = script.log();
    assert_eq!(log.calls_total(), 17);
    let calls = log.calls();
    let short = calls[1];
    assert!(short.batched);
    let rest: Vec<&Call> = calls.iter().filter(|c| !c.batched).collect();
    assert_eq!(rest.len(), 1, "{calls:?}");
    assert_eq!(
        (rest[0].unit, rest[0].offset, rest[0].len),
        (short.unit, short.offset + 1000, 3096)
    );
    assert_all_reaped(&log);
}

/// `queue_rw` fails on the third unit of a batch: the two it took are committed and drained
/// (2 I/Os), the failed one and the five after it are not counted, nothing more is queued.
#[test]
fn batch_queue_error_drains_the_prefix_taken() {
    let t = Target::new("batch-refuse");
    let script = Script::queued([Step::Full, Step::Full, Step::Refuse(libc::EIO)]).batches(None);
    let options = "rw=randread\nbs=4k\nsize=64k\niodepth=8\niodepth_batch_submit=8\n\
                   iodepth_batch_complete_max=8";
    let out = run_on(&script, job(&t, options));
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    let r = result(&out);
    assert_eq!(counts(r, IoOp::Read), (2, 8192, 0));
    assert_eq!(r.error, EIO);
    let log = script.log();
    assert_eq!(
        log.batches(),
        [Batch {
            offered: 8,
            taken: 2
        }]
    );
    assert_eq!(log.calls_total(), 3);
    assert_eq!(
        log.commits(),
        [Commit {
            pending: 2,
            submitted: 2
        }]
    );
    assert_all_reaped(&log);
}
