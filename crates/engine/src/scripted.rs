//! `scripted`: an engine for tests that answers each unit as a script says, so the runner's loop
//! can be driven through its edge cases (short transfers, a read at end of file, EAGAIN,
//! errors mid-batch, late and reordered completions, partial submits) without a FUSE file or
//! a misbehaving device.
//!
//! A [`Script`] lists [`Step`]s, taken one per unit offered to the engine (each call of `queue`,
//! each unit `queue_rw` takes, whatever the operation: a re-issued remainder or a retry after
//! `Busy` takes the next step), then [`Script::then`]'s step for every unit after the list. The
//! engine runs in one of two [`Mode`]s: synchronous (every unit completes inside `queue`,
//! `flags().sync`) or queued (completions come from `getevents`, after `commit`). Queued, it
//! can also stand for an engine that is full ([`Script::capacity`]), that submits only part of
//! what is pending at each commit ([`Script::commit_limit`]), that takes batches of reads and
//! writes and only a prefix of each ([`Script::batches`]), and that returns its completions
//! newest first ([`Script::reverse`]).
//!
//! It moves no data: a read's buffer is left as it was, a write's is not looked at. Every
//! engine built from one script shares the script's [`ScriptLog`], which records each call
//! (operation, file, offset, length, unit, answer), each completion handed back, each commit
//! and each `queue_rw`, so a test can check what the runner asked for (e.g. that a short read's
//! remainder starts where the short part ended) and that every unit taken was reaped.
//!
//! Built only for tests: with `cfg(test)` here, or with the `scripted` feature, which the
//! runner enables in its dev-dependencies only (a release build has no such engine).

use crate::{queue_each, Completion, EngineError, EngineFlags, IoEngine, IoOp, IoUnit, Queued};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What the engine does with one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Completes with the unit's whole length (a sync: 0).
    Full,
    /// Completes with this many bytes, at most the unit's length: a short transfer. `Short(0)`
    /// is a read at or past the end of the file.
    Short(u32),
    /// `queue` answers [`Queued::Busy`] (fio's FIO_Q_BUSY, an engine's EAGAIN): the unit was
    /// not taken; the runner offers it again later, which takes the next step.
    Busy,
    /// The unit completes with `-errno`: the I/O failed (EIO, ENOSPC, ...).
    Error(i32),
    /// `queue` itself fails with this errno ([`EngineError::Os`]): nothing was taken.
    Refuse(i32),
    /// Completes in full, but not before this long after it was submitted (queued: after the
    /// commit that submitted it; synchronous: `queue` sleeps this long).
    Delay(Duration),
}

/// How the engine completes units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every unit completes inside `queue` ([`Queued::Done`]), as psync's.
    Sync,
    /// `queue` takes units, `commit` submits them, `getevents` returns their completions, as
    /// libaio's.
    Queued,
}

/// What `queue` answered for one unit, as the log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Completed inside `queue` with this result (bytes or `-errno`).
    Done(i64),
    /// Taken; it will complete with this result.
    Queued(i64),
    /// Not taken ([`Queued::Busy`]): a [`Step::Busy`], or the engine was at its capacity.
    Busy,
    /// `queue` failed with this errno ([`Step::Refuse`]).
    Refused(i32),
}

/// One unit offered to the engine, as the log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub op: IoOp,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// The runner's unit id (echoed in the completion).
    pub unit: u32,
    /// Offered in a `queue_rw` batch rather than by `queue`.
    pub batched: bool,
    pub answer: Answer,
}

/// One `commit`: how many units were pending in the engine, and how many it submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commit {
    pub pending: usize,
    pub submitted: usize,
}

/// One `queue_rw`: how many units were offered, and how many were taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    pub offered: usize,
    pub taken: usize,
}

/// At most this many calls are kept in the log (a test that makes the runner retry a million
/// times still runs in bounded memory); [`ScriptLog::calls_total`] counts them all.
pub const LOG_CAP: usize = 100_000;

#[derive(Debug, Default)]
struct Record {
    calls: Vec<Call>,
    calls_total: u64,
    reaped: Vec<Completion>,
    commits: Vec<Commit>,
    batches: Vec<Batch>,
    /// Units taken (queued mode) and not yet handed back by `getevents`.
    outstanding: usize,
}

/// What the engines of one [`Script`] were asked and answered; cloned handles share it, so a
/// test keeps one while the runner owns the engine.
#[derive(Debug, Clone, Default)]
pub struct ScriptLog(Arc<Mutex<Record>>);

impl ScriptLog {
    fn lock(&self) -> MutexGuard<'_, Record> {
        // A test that panicked while holding it left a consistent record: read it anyway.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every unit offered, in order (the first [`LOG_CAP`]).
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// How many units were offered in all (also past [`LOG_CAP`]).
    pub fn calls_total(&self) -> u64 {
        self.lock().calls_total
    }

    /// Every completion `getevents` handed back, in the order it did (queued mode).
    pub fn reaped(&self) -> Vec<Completion> {
        self.lock().reaped.clone()
    }

    /// Every `commit` that found units pending.
    pub fn commits(&self) -> Vec<Commit> {
        self.lock().commits.clone()
    }

    /// Every `queue_rw` call.
    pub fn batches(&self) -> Vec<Batch> {
        self.lock().batches.clone()
    }

    /// Units taken and not handed back yet: 0 once the runner has reaped everything.
    pub fn outstanding(&self) -> usize {
        self.lock().outstanding
    }

    fn call(&self, c: Call) {
        let mut r = self.lock();
        r.calls_total += 1;
        if r.calls.len() < LOG_CAP {
            r.calls.push(c);
        }
        if let Answer::Queued(_) = c.answer {
            r.outstanding += 1;
        }
    }
}

/// The recipe of a scripted engine: its mode, steps and quirks. [`Script::engine`] builds one
/// (each engine plays the steps from the start); all of them record into [`Script::log`].
#[derive(Debug, Clone)]
pub struct Script {
    mode: Mode,
    steps: Vec<Step>,
    then: Step,
    capacity: Option<usize>,
    commit_limit: Option<usize>,
    batches: Option<Option<usize>>,
    reverse: bool,
    diskless: bool,
    log: ScriptLog,
}

impl Script {
    /// A synchronous engine taking `steps` in order, then [`Step::Full`].
    pub fn sync(steps: impl IntoIterator<Item = Step>) -> Script {
        Script::new(Mode::Sync, steps)
    }

    /// A queued engine taking `steps` in order, then [`Step::Full`].
    pub fn queued(steps: impl IntoIterator<Item = Step>) -> Script {
        Script::new(Mode::Queued, steps)
    }

    pub fn new(mode: Mode, steps: impl IntoIterator<Item = Step>) -> Script {
        Script {
            mode,
            steps: steps.into_iter().collect(),
            then: Step::Full,
            capacity: None,
            commit_limit: None,
            batches: None,
            reverse: false,
            diskless: false,
            log: ScriptLog::default(),
        }
    }

    /// The step for every unit after the listed ones (default [`Step::Full`]).
    pub fn then(mut self, step: Step) -> Script {
        self.then = step;
        self
    }

    /// Queued: answer [`Queued::Busy`] while this many units are taken and not reaped, as a
    /// full ring does (such an answer takes no step).
    pub fn capacity(mut self, units: usize) -> Script {
        self.capacity = Some(units);
        self
    }

    /// Queued: each `commit` submits at most this many of the pending units; the rest are
    /// submitted by a later `commit`, or by `getevents` before it waits (the trait's contract,
    /// as libaio after an EAGAIN from io_submit).
    pub fn commit_limit(mut self, units: usize) -> Script {
        self.commit_limit = Some(units.max(1));
        self
    }

    /// Queued: the engine takes reads and writes in batches (`flags().batches_rw`, so the
    /// runner's batch path drives it through `queue_rw`), each call taking at most `limit`
    /// units (None: all it is offered, unless a step stops it).
    pub fn batches(mut self, limit: Option<usize>) -> Script {
        self.batches = Some(limit);
        self
    }

    /// Queued: `getevents` hands back the completions that are due newest first.
    pub fn reverse(mut self) -> Script {
        self.reverse = true;
        self
    }

    /// The engine says it touches no storage (`flags().no_io`, fio's FIO_DISKLESSIO).
    pub fn diskless(mut self) -> Script {
        self.diskless = true;
        self
    }

    /// The record every engine of this script writes to.
    pub fn log(&self) -> ScriptLog {
        self.log.clone()
    }

    /// A new engine playing the script from its first step.
    pub fn engine(&self) -> ScriptedEngine {
        ScriptedEngine {
            script: self.clone(),
            steps: self.steps.iter().copied().collect(),
            in_batch: false,
            pending: Vec::new(),
            submitted: Vec::new(),
        }
    }
}

/// A unit the queued engine took: what it completes with, and when.
#[derive(Debug, Clone, Copy)]
struct Entry {
    unit: u32,
    result: i64,
    delay: Duration,
    /// Set when submitted: not handed back before then.
    due: Option<Instant>,
}

/// The engine a [`Script`] builds (see the module note).
#[derive(Debug)]
pub struct ScriptedEngine {
    script: Script,
    steps: VecDeque<Step>,
    /// Inside `queue_rw`: calls are logged as batched.
    in_batch: bool,
    /// Taken, not yet submitted.
    pending: Vec<Entry>,
    /// Submitted, not yet handed back.
    submitted: Vec<Entry>,
}

/// The result of a unit that completes: its whole length (a read, write or trim), or 0 (a sync).
fn full(io: &IoUnit) -> i64 {
    match io.op {
        IoOp::Read | IoOp::Write | IoOp::Trim => i64::from(io.len()),
        IoOp::Fsync | IoOp::Fdatasync | IoOp::SyncRange(_) => 0,
    }
}

impl ScriptedEngine {
    /// The record this engine writes to.
    pub fn log(&self) -> ScriptLog {
        self.script.log()
    }

    fn next_step(&mut self) -> Step {
        self.steps.pop_front().unwrap_or(self.script.then)
    }

    fn record(&self, id: u32, io: &IoUnit, answer: Answer) {
        self.script.log.call(Call {
            op: io.op,
            file: io.file,
            offset: io.offset,
            len: io.len(),
            unit: id,
            batched: self.in_batch,
            answer,
        });
    }

    fn refusal(id: u32, errno: i32) -> EngineError {
        EngineError::Os {
            engine: "scripted",
            what: format!("queue of unit {id}"),
            source: std::io::Error::from_raw_os_error(errno),
        }
    }

    /// Submit up to `limit` pending units (their delays start now).
    fn submit(&mut self, limit: usize) -> usize {
        let n = limit.min(self.pending.len());
        let now = Instant::now();
        for mut e in self.pending.drain(..n) {
            e.due = Some(now + e.delay);
            self.submitted.push(e);
        }
        n
    }

    /// The index in `submitted` of the next completion to hand back at `now`, if one is due.
    fn next_due(&self, now: Instant) -> Option<usize> {
        let due = |e: &Entry| e.due.is_some_and(|d| d <= now);
        if self.script.reverse {
            self.submitted.iter().rposition(due)
        } else {
            self.submitted.iter().position(due)
        }
    }
}

impl IoEngine for ScriptedEngine {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn flags(&self) -> EngineFlags {
        let queued = self.script.mode == Mode::Queued;
        EngineFlags {
            sync: !queued,
            no_io: self.script.diskless,
            batches_rw: queued && self.script.batches.is_some(),
            ..EngineFlags::default()
        }
    }

    crate::ignores_files!();

    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let queued = self.script.mode == Mode::Queued;
        let taken = self.pending.len() + self.submitted.len();
        if queued && self.script.capacity.is_some_and(|c| taken >= c) {
            self.record(id, io, Answer::Busy);
            return Ok(Queued::Busy);
        }
        let step = self.next_step();
        let (result, delay) = match step {
            Step::Full => (full(io), Duration::ZERO),
            Step::Short(n) => (i64::from(n.min(io.len())), Duration::ZERO),
            Step::Error(errno) => (-i64::from(errno), Duration::ZERO),
            Step::Delay(d) => (full(io), d),
            Step::Busy => {
                self.record(id, io, Answer::Busy);
                return Ok(Queued::Busy);
            }
            Step::Refuse(errno) => {
                self.record(id, io, Answer::Refused(errno));
                return Err(Self::refusal(id, errno));
            }
        };
        if !queued {
            std::thread::sleep(delay);
            self.record(id, io, Answer::Done(result));
            return Ok(Queued::Done(result));
        }
        self.record(id, io, Answer::Queued(result));
        self.pending.push(Entry {
            unit: id,
            result,
            delay,
            due: None,
        });
        Ok(Queued::Queued)
    }

    fn queue_rw(&mut self, ids: &[u32], units: &[IoUnit]) -> (usize, Result<(), EngineError>) {
        let offered = ids.len().min(units.len());
        let limit = self
            .script
            .batches
            .flatten()
            .unwrap_or(offered)
            .min(offered);
        self.in_batch = true;
        let (taken, r) = queue_each(self, &ids[..limit], &units[..limit]);
        self.in_batch = false;
        self.script
            .log
            .lock()
            .batches
            .push(Batch { offered, taken });
        (taken, r)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        let pending = self.pending.len();
        if pending == 0 {
            return Ok(0);
        }
        let n = self.submit(self.script.commit_limit.unwrap_or(pending));
        self.script.log.lock().commits.push(Commit {
            pending,
            submitted: n,
        });
        Ok(n)
    }

    fn getevents(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        // Leftovers of a partial commit go out before any wait (the trait's contract).
        self.submit(usize::MAX);
        let min = min.min(self.submitted.len()).min(max);
        let mut got = 0;
        loop {
            let now = Instant::now();
            while got < max {
                let Some(i) = self.next_due(now) else { break };
                let e = self.submitted.remove(i);
                let c = Completion {
                    unit: e.unit,
                    result: e.result,
                };
                out.push(c);
                let mut log = self.script.log.lock();
                log.reaped.push(c);
                log.outstanding = log.outstanding.saturating_sub(1);
                got += 1;
            }
            if got >= min {
                return Ok(got);
            }
            // Wait for the next one due (there is one: fewer than `min` were handed back).
            let next = self.submitted.iter().filter_map(|e| e.due).min();
            if let Some(at) = next {
                std::thread::sleep(at.saturating_duration_since(now));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(offset: u64) -> IoUnit {
        IoUnit::range(IoOp::Read, 0, offset, 4096)
    }

    #[test]
    fn sync_mode_answers_each_step_inside_queue() {
        let script = Script::sync([
            Step::Full,
            Step::Short(1000),
            Step::Busy,
            Step::Error(libc::EIO),
            Step::Short(0),
            Step::Delay(Duration::from_millis(1)),
        ]);
        let mut e = script.engine();
        assert!(e.flags().sync && !e.flags().batches_rw);
        let answers: Vec<Queued> = (0..7)
            .map(|i| e.queue(i, &read(i as u64)).unwrap())
            .collect();
        assert_eq!(
            answers,
            [
                Queued::Done(4096),
                Queued::Done(1000),
                Queued::Busy,
                Queued::Done(-i64::from(libc::EIO)),
                Queued::Done(0),
                Queued::Done(4096),
                Queued::Done(4096), // past the script: Full
            ]
        );
        let log = script.log();
        assert_eq!(log.calls_total(), 7);
        assert_eq!(log.calls()[1].answer, Answer::Done(1000));
        assert_eq!(log.outstanding(), 0);
        let fsync = IoUnit::range(IoOp::Fsync, 0, 0, 0);
        assert_eq!(e.queue(9, &fsync).unwrap(), Queued::Done(0));
    }

    #[test]
    fn refuse_fails_queue_with_the_errno() {
        let script = Script::queued([Step::Refuse(libc::ENOMEM)]);
        let mut e = script.engine();
        match e.queue(3, &read(0)) {
            Err(EngineError::Os { source, .. }) => {
                assert_eq!(source.raw_os_error(), Some(libc::ENOMEM))
            }
            r => panic!("{r:?}"),
        }
        assert_eq!(
            script.log().calls()[0].answer,
            Answer::Refused(libc::ENOMEM)
        );
        assert_eq!(script.log().outstanding(), 0);
    }

    #[test]
    fn queued_mode_completes_after_commit_in_order_or_reversed() {
        for reverse in [false, true] {
            let mut script = Script::queued([Step::Full, Step::Short(512), Step::Full]);
            if reverse {
                script = script.reverse();
            }
            let mut e = script.engine();
            assert!(!e.flags().sync);
            for i in 0..3 {
                assert_eq!(
                    e.queue(i, &read(u64::from(i) * 4096)).unwrap(),
                    Queued::Queued
                );
            }
            let mut out = Vec::new();
            assert_eq!(
                e.getevents(0, 8, &mut out).unwrap(),
                3,
                "submitted on getevents"
            );
            let ids: Vec<u32> = out.iter().map(|c| c.unit).collect();
            assert_eq!(ids, if reverse { [2, 1, 0] } else { [0, 1, 2] });
            assert!(out.contains(&Completion {
                unit: 1,
                result: 512
            }));
            assert_eq!(script.log().outstanding(), 0);
            assert_eq!(script.log().reaped(), out);
        }
    }

    #[test]
    fn a_delayed_unit_is_not_due_before_its_time() {
        let script = Script::queued([Step::Delay(Duration::from_secs(3600)), Step::Full]);
        let mut e = script.engine();
        e.queue(0, &read(0)).unwrap();
        e.queue(1, &read(4096)).unwrap();
        assert_eq!(e.commit().unwrap(), 2);
        let mut out = Vec::new();
        // min 1: the one that is due; min 0: nothing more until the hour is over.
        assert_eq!(e.getevents(1, 8, &mut out).unwrap(), 1);
        assert_eq!(out[0].unit, 1);
        assert_eq!(e.getevents(0, 8, &mut out).unwrap(), 0);
        assert_eq!(script.log().outstanding(), 1);
    }

    #[test]
    fn getevents_waits_for_a_delayed_unit_when_asked_for_one() {
        let script = Script::queued([Step::Delay(Duration::from_millis(20))]);
        let mut e = script.engine();
        e.queue(5, &read(0)).unwrap();
        e.commit().unwrap();
        let mut out = Vec::new();
        assert_eq!(e.getevents(1, 1, &mut out).unwrap(), 1);
        assert_eq!(
            out,
            [Completion {
                unit: 5,
                result: 4096
            }]
        );
    }

    #[test]
    fn capacity_commit_limit_and_batches() {
        let script = Script::queued([Step::Full, Step::Full, Step::Busy])
            .capacity(3)
            .commit_limit(1)
            .batches(Some(2));
        let mut e = script.engine();
        assert!(e.flags().batches_rw);
        let units: Vec<IoUnit> = (0..4).map(|i| read(i * 4096)).collect();
        // A prefix of two, then the third is a Busy step: one taken, none after it.
        let (k, r) = e.queue_rw(&[0, 1, 2, 3], &units);
        assert_eq!((k, r.is_ok()), (2, true));
        let (k, r) = e.queue_rw(&[2, 3], &units[2..]);
        assert_eq!((k, r.is_ok()), (0, true));
        assert_eq!(e.queue(2, &units[2]).unwrap(), Queued::Queued);
        // At capacity: Busy without taking a step.
        assert_eq!(e.queue(3, &units[3]).unwrap(), Queued::Busy);
        assert_eq!(e.commit().unwrap(), 1);
        assert_eq!(e.commit().unwrap(), 1);
        let mut out = Vec::new();
        assert_eq!(e.getevents(3, 3, &mut out).unwrap(), 3);
        let log = script.log();
        assert_eq!(
            log.batches(),
            [
                Batch {
                    offered: 4,
                    taken: 2
                },
                Batch {
                    offered: 2,
                    taken: 0
                }
            ]
        );
        assert_eq!(
            log.commits(),
            [
                Commit {
                    pending: 3,
                    submitted: 1
                },
                Commit {
                    pending: 2,
                    submitted: 1
                }
            ]
        );
        let answers: Vec<(bool, Answer)> =
            log.calls().iter().map(|c| (c.batched, c.answer)).collect();
        assert_eq!(
            answers,
            [
                (true, Answer::Queued(4096)),
                (true, Answer::Queued(4096)),
                (true, Answer::Busy),
                (false, Answer::Queued(4096)),
                (false, Answer::Busy),
            ]
        );
        assert_eq!(log.outstanding(), 0);
    }
}
