//! Data verification in the runner, built on fiox-verify: write buffers get verifiable contents
//! (header + generated data or pattern) and every completed write is recorded in a per-file
//! write log; after the write phase each block still intact is read back and checked. Read-only
//! jobs with `verify=` check every block they read (data written by an earlier job). Failures
//! name the file, offset, length and what is wrong (zeroed, torn, stale, bit rot ...).
//! With `verify_async` the checks of blocks read back run on other threads ([`crate::verify::vasync`]).
//!
//! The folder also holds `verify_async`'s checker threads ([`vasync`]) and `verify_only`'s
//! expected writes and verify state files ([`vstate`]).

pub(crate) mod vasync;
pub(crate) mod vstate;

use crate::error::RunError;
use crate::verify::vasync::{AsyncChecks, Want};
use fiox_job::{Ddir, JobSpec};
use fiox_stats::{Warning, WarningCode};
use fiox_verify::{Expect, FioState, Verifier, WriteLog};
use std::collections::VecDeque;
use std::sync::Arc;

/// A verify read waiting to be issued: a range of a file and the write it must hold; or
/// (`trim`) a verify-trim of that write's range (`trim_percentage`).
#[derive(Debug, Clone, Copy)]
pub struct VerifyRead {
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    pub seq: u64,
    pub trim: bool,
}

/// Verification state of one job.
pub struct JobVerify {
    v: Arc<Verifier>,
    logs: Vec<WriteLog>,
    seq: u64,
    fatal: bool,
    /// `verify_dump`: write received/expected copies of each failing interval.
    dump: crate::verify::vasync::Dump,
    /// `verify_backlog`: writes (file, offset, len, seq) completed since the last backlog check.
    backlog: Backlog,
    /// `verify_async`: the checking threads.
    offload: Option<AsyncChecks>,
    /// Offsets of each file's most recent completed writes, newest last, at most `depth`
    /// (fio's state file lists them: writes still in flight when a run stopped are not).
    recent: Vec<VecDeque<u64>>,
    depth: u32,
    /// Verification failures found (reads in the loop and the verify phase).
    pub failures: u64,
    /// Descriptions of the first failures (printed and reported).
    pub first: Vec<String>,
    /// Job name once [`JobVerify::echo_failures`] was called: every failure is printed as found.
    echo: Option<String>,
    /// Descriptions not printed yet (found before echo was on, e.g. by a read job's checks),
    /// at most [`UNPRINTED_KEPT`]; `unprinted_dropped` counts the ones beyond.
    unprinted: Vec<String>,
    unprinted_dropped: u64,
    /// `experimental_verify`: the verify phase's reads, from replaying the job's I/O sequence
    /// (set after the write phase); each is checked against its own write, not the log.
    replayed: Option<Vec<VerifyRead>>,
    /// `trim_percentage` with `trim_backlog`: fio's verify-trim.
    trim: Option<TrimVerify>,
}

/// fio's verify-trim: writes picked as they are logged, trimmed in rounds during the write
/// phase; a trimmed block must read back as zeroes (`trim_verify_zero`) or is not checked.
struct TrimVerify {
    picker: fiox_workload::TrimPicker,
    every: u64,
    batch: u64,
    zero: bool,
    /// Picked writes not trimmed yet, oldest first.
    pending: VecDeque<VerifyRead>,
    /// fio's `io_hist_len`: writes the log holds (a trim without the zero check drops one).
    hist_len: u64,
    /// Trims left in the current round.
    left: u64,
    /// Trimmed writes, (file, offset) -> length, until checked or written again.
    trimmed: std::collections::HashMap<(u32, u64), u64>,
}

/// The `seq` of a verify read whose range was trimmed: it must read back as zeroes.
pub const TRIMMED: u64 = u64::MAX;

/// How many unprinted failure descriptions are kept for [`JobVerify::unprinted`]
/// (a few MB at most, however much of a device is bad).
const UNPRINTED_KEPT: usize = 10_000;

/// How many failures are described individually.
const DESCRIBED: usize = 10;

fn job_err(job: &JobSpec, msg: String) -> RunError {
    RunError::Job {
        job: job.name.clone(),
        msg,
    }
}

/// The smallest write-log granule (see [`log_granularity`]).
const MIN_GRANULE: u64 = 512;

/// The write log's granule: the greatest common divisor of every length and step that places
/// a write from the region's start (block sizes, `blockalign`, `verify_interval`, `rw=...:N`
/// holes, strided zones), so every write starts and ends on a granule
/// and a run of the log is never longer than the write it names (issue 39: an interval of
/// 2222 with bs=4096 made 6,666-byte verify reads). A write that still falls off the grid is
/// logged as partial and not read back ([`WriteLog::unaligned_writes`], warned about).
fn log_granularity(job: &JobSpec) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let mut g = 0u64;
    for d in Ddir::ALL {
        let bs = job.bs.get(d);
        g = gcd(g, bs.min);
        if job.bs_unaligned || !bs.min.is_power_of_two() {
            // Lengths are not rounded down to a multiple of the smallest block.
            g = gcd(g, bs.max);
            for &(len, _) in &bs.split {
                g = gcd(g, len);
            }
            if job.bs_unaligned && bs.split.is_empty() && bs.min != bs.max {
                g = 1;
            }
        }
        if let Some(a) = job.blockalign.get(d) {
            g = gcd(g, *a);
        }
    }
    if let Some(i) = job.verify.verify_interval {
        g = gcd(g, i);
    }
    // The region's start (offset=, offset_increment, offset_align) is the grid's origin
    // (WriteLog::with_phase), not a step.
    g = gcd(g, job.rw.n);
    if job.zone.size > 0 {
        g = gcd(gcd(g, job.zone.range), job.zone.skip);
    }
    // The log holds 8 bytes per granule of what was written: below a sector (or the smallest
    // write, if smaller) it would cost more than the data (8 GiB for 1 GiB of bs_unaligned
    // writes), so such writes are the partial, warned case instead.
    g.max(MIN_GRANULE.min(job.bs.write.min)).max(1)
}

impl JobVerify {
    /// None for `verify=none`. `seed` must be the generator's seed, so a later read-back job
    /// with the same options regenerates the same data.
    /// `origins`: where each file's region starts (the write log's grid starts there).
    pub fn new(job: &JobSpec, seed: u64, origins: &[u64]) -> Result<Option<JobVerify>, RunError> {
        let nfiles = origins.len();
        let Some(mut v) = Verifier::from_job(job, job.index, seed)
            .map_err(|e| job_err(job, format!("verify: {e}")))?
        else {
            return Ok(None);
        };
        // Identity checks only when asked (verify_strict=1): otherwise what another job, run
        // or fio wrote verifies as in fio, verify_only included. verify_only checks write
        // numbers only in the job's own blocks, as fio 3.33 skips them there.
        v.set_strict(job.verify.verify_strict);
        v.set_own_numberio_only(job.verify.verify_only);
        for d in Ddir::ALL {
            let bs = job.bs.get(d);
            for len in [bs.min, bs.max] {
                v.validate_block_len(len as usize)
                    .map_err(|e| job_err(job, format!("verify with bs={len}: {e}")))?;
            }
        }
        let gran = log_granularity(job);
        let logs = origins
            .iter()
            .map(|&o| WriteLog::with_phase(gran, o))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| job_err(job, format!("verify: {e}")))?;
        let v = Arc::new(v);
        let offload = match job.verify.verify_async {
            0 => None,
            n => Some(
                AsyncChecks::start(
                    n,
                    Arc::clone(&v),
                    crate::verify::vasync::dump_of(job),
                    job.verify.verify_async_cpus.as_deref(),
                )
                .map_err(|e| job_err(job, format!("verify_async: cannot start threads: {e}")))?,
            ),
        };
        Ok(Some(JobVerify {
            v,
            logs,
            offload,
            recent: vec![VecDeque::new(); nfiles],
            depth: job.iodepth.max(1),
            seq: 0,
            fatal: job.verify.verify_fatal,
            dump: crate::verify::vasync::dump_of(job),
            backlog: Backlog::new(job),
            failures: 0,
            first: Vec::new(),
            echo: None,
            unprinted: Vec::new(),
            unprinted_dropped: 0,
            replayed: None,
            trim: None,
        }))
    }

    /// Notes of the verifier and options fiox does not act on, as warnings.
    /// After the write phase: writes that fell off the log's grid were not read back (see
    /// [`log_granularity`]); say how many, so a verify that checked less than it wrote is
    /// never silent.
    pub fn unaligned_warning(&self) -> Option<Warning> {
        let n: u64 = self.logs.iter().map(WriteLog::unaligned_writes).sum();
        let gran = self.logs.first()?.granularity();
        (n > 0).then(|| {
            Warning::new(
                WarningCode::VerifyUnalignedWrites,
                format!(
                    "{n} write(s) did not start and end on the verify log's {gran}-byte grid and \
                 were not read back"
                ),
            )
        })
    }

    pub fn warnings(&self, job: &JobSpec) -> Vec<Warning> {
        let mut out: Vec<Warning> = self
            .v
            .notes()
            .iter()
            .map(|n| Warning::new(WarningCode::VerifyNote, n.clone()))
            .collect();
        let vs = &job.verify;
        if vs.verify_state_load && !vs.verify_only {
            out.push(Warning::new(
                WarningCode::VerifyOptionIgnored,
                "verify_state_load has an effect only with verify_only=1 (it tells a \
                          verify-only run which writes an earlier run made)",
            ));
        }
        out
    }

    /// Give a write buffer verifiable contents; returns the write's sequence number.
    pub fn fill(&mut self, buf: &mut [u8], offset: u64, now_ns: u64) -> Result<u64, String> {
        self.seq += 1;
        self.v
            .fill_write(buf, offset, self.seq, now_ns)
            .map_err(|e| format!("verify fill at offset {offset}: {e}"))?;
        Ok(self.seq)
    }

    /// `trim_percentage` with `trim_backlog` (and verification that logs writes): pick writes
    /// from the job's trim stream (`seeds`) to trim during the write phase.
    pub fn enable_trim(&mut self, job: &JobSpec, seeds: &fiox_workload::Seeds) {
        let v = &job.verify;
        let logs = v.do_verify && !v.experimental_verify;
        if v.trim_percentage == 0 || v.trim_backlog == 0 || !logs {
            return;
        }
        let use64 = job.rand.generator == fiox_job::RandomGenerator::Tausworthe64;
        self.trim = Some(TrimVerify {
            picker: fiox_workload::TrimPicker::new(seeds, v.trim_percentage, use64),
            every: v.trim_backlog,
            batch: v.trim_backlog_batch,
            zero: v.trim_verify_zero,
            pending: VecDeque::new(),
            hist_len: 0,
            left: 0,
            trimmed: std::collections::HashMap::new(),
        });
    }

    /// The next verify-trim, asked before each I/O of the write phase (fio's
    /// `check_get_trim`): a round starts when the log holds a multiple of `trim_backlog`
    /// writes and the last I/O was no read, and trims `trim_backlog_batch` (or
    /// `trim_backlog`) picked writes after the first; rounds repeat while that holds.
    pub fn next_trim(&mut self, after_read: bool) -> Option<VerifyRead> {
        let logs = &self.logs;
        let t = self.trim.as_mut()?;
        // A picked write a later write replaced is no longer in fio's list.
        while let Some(r) = t.pending.front() {
            let current = logs
                .get(r.file as usize)
                .is_some_and(|l| l.holds(r.offset, r.len as u64, r.seq));
            if current {
                break;
            }
            t.pending.pop_front();
        }
        if t.pending.is_empty() {
            return None;
        }
        if t.left > 0 {
            t.left -= 1;
        } else if t.hist_len % t.every == 0 && !after_read {
            t.left = if t.batch == 0 { t.every } else { t.batch };
        } else {
            return None;
        }
        let r = t.pending.pop_front()?;
        if !t.zero {
            t.hist_len = t.hist_len.saturating_sub(1);
        }
        Some(r)
    }

    /// A verify-trim completed: the range must now read back as zeroes, or (without
    /// `trim_verify_zero`) is no longer verified.
    pub fn trim_done(&mut self, file: u32, offset: u64, len: u64) {
        let Some(t) = self.trim.as_mut() else {
            return;
        };
        if t.zero {
            t.trimmed.insert((file, offset), len);
        } else if let Some(l) = self.logs.get_mut(file as usize) {
            l.record(offset, len, 0);
        }
    }

    /// A write completed: its blocks now hold write `seq`.
    pub fn written(&mut self, file: u32, offset: u64, len: u64, seq: u64) {
        if let Some(t) = self.trim.as_mut() {
            t.hist_len += 1;
            t.trimmed.remove(&(file, offset));
            if t.picker.pick() {
                t.pending.push_back(VerifyRead {
                    file,
                    offset,
                    len: len as u32,
                    seq,
                    trim: true,
                });
            }
        }
        if let Some(r) = self.recent.get_mut(file as usize) {
            if r.len() == self.depth as usize {
                r.pop_front();
            }
            r.push_back(offset);
        }
        if let Some(l) = self.logs.get_mut(file as usize) {
            l.record(offset, len, seq);
            if self.backlog.every > 0 {
                self.backlog.pending.push(VerifyRead {
                    file,
                    offset,
                    len: len as u32,
                    seq,
                    trim: false,
                });
            }
        }
    }

    /// Check a block a read-only job just read. Returns false when verify_fatal should stop.
    pub fn check_read(&mut self, path: &str, buf: &[u8], offset: u64) -> bool {
        if let Some(o) = &mut self.offload {
            o.submit(path, offset, buf, Want::Any);
            return self.take_offloaded();
        }
        match self.v.check(buf, offset, Expect::Any) {
            Ok(()) => true,
            Err(f) => {
                let what = self.describe(path, buf, &f);
                self.failed(what)
            }
        }
    }

    fn describe(&self, path: &str, block: &[u8], f: &fiox_verify::VerifyFailure) -> String {
        crate::verify::vasync::describe(&self.v, &self.dump, path, block, f)
    }

    /// Count the failures the verify_async threads found so far. False when verify_fatal
    /// should stop the job.
    fn take_offloaded(&mut self) -> bool {
        let found = self.offload.as_mut().map(|o| o.found()).unwrap_or_default();
        let mut go_on = true;
        for f in found {
            // Every failure is counted, even after one that stops the job.
            go_on &= self.failed(f);
        }
        go_on
    }

    /// Wait for the verify_async threads to check every block queued and count what they found.
    pub fn finish_offloaded(&mut self) {
        let found = self
            .offload
            .as_mut()
            .map(|o| o.finish())
            .unwrap_or_default();
        for f in found {
            self.failed(f);
        }
    }

    /// The write log of each file (for verify_state_save).
    pub fn logs(&self) -> &[WriteLog] {
        &self.logs
    }

    /// Replace file `file`'s write log (verify_state_load).
    pub fn set_log(&mut self, file: usize, log: WriteLog) {
        if let Some(l) = self.logs.get_mut(file) {
            self.seq = self.seq.max(log.last_seq());
            *l = log;
        }
    }

    /// Record a write of the job's sequence replayed without doing it (verify_only): it gets
    /// the sequence number the writing run gave it.
    pub fn replay_write(&mut self, file: u32, offset: u64, len: u64) {
        self.seq += 1;
        self.written(file, offset, len, self.seq);
    }

    /// fio's state of this job for its state file: writes issued, iodepth, files, and each
    /// file's most recent completed writes, newest first.
    pub fn fio_state(&self, job: &JobSpec) -> FioState {
        let comps = (0u64..)
            .zip(&self.recent)
            .flat_map(|(f, r)| r.iter().rev().map(move |&o| (f, o)))
            .collect();
        FioState {
            numberio: self.seq,
            depth: self.depth,
            nofiles: self.recent.len() as u32,
            index: u64::from(job.index),
            name: job.name.clone(),
            comps,
        }
    }

    /// Turns the identity checks off (the writes to check are fio's, known from its state
    /// file, not this job's own). Called before any block is checked.
    pub fn relax_identity(&mut self, job: &JobSpec) -> Result<(), RunError> {
        let mut v = (*self.v).clone();
        v.set_strict(job.verify.verify_strict);
        self.v = Arc::new(v);
        if self.offload.is_some() {
            self.offload = None;
            let n = job.verify.verify_async;
            self.offload = Some(
                AsyncChecks::start(
                    n,
                    Arc::clone(&self.v),
                    self.dump.clone(),
                    job.verify.verify_async_cpus.as_deref(),
                )
                .map_err(|e| job_err(job, format!("verify_async: cannot start threads: {e}")))?,
            );
        }
        Ok(())
    }

    /// Forget the write at `offset` of file `file` (it was in flight when the writing run
    /// stopped, so its data may not be there).
    pub fn forget(&mut self, file: u32, offset: u64, len: u64) {
        if let Some(l) = self.logs.get_mut(file as usize) {
            l.record(offset, len, 0);
        }
    }

    /// Writes issued so far (replayed ones included).
    pub fn issued(&self) -> u64 {
        self.seq
    }

    /// The verifier's identity for state files.
    pub fn ident(&self, file_no: u32) -> fiox_verify::StateIdent {
        fiox_verify::StateIdent {
            job_id: self.v.job_id(),
            seed: self.v.seed(),
            file_no,
        }
    }

    /// `verify_backlog` writes completed since the last check: time to verify them.
    pub fn backlog_due(&self) -> bool {
        self.backlog.every > 0 && self.backlog.pending.len() as u64 >= self.backlog.every
    }

    /// The next `verify_backlog` batch: up to `verify_backlog_batch` of the writes completed
    /// since the last batch, oldest first; the backlog is then forgotten (writes left out are
    /// checked by the verify phase, as in fio, so every block is read back once).
    pub fn take_backlog(&mut self) -> Vec<VerifyRead> {
        let pending = std::mem::take(&mut self.backlog.pending);
        pending
            .into_iter()
            .take(self.backlog.batch as usize)
            .collect()
    }

    /// Whether `[offset, offset + len)` of file `file` still holds write `seq`.
    /// (A replayed read always is: experimental_verify checks every write, overwritten or not.)
    pub fn holds(&self, file: u32, offset: u64, len: u64, seq: u64) -> bool {
        if self.replayed.is_some() {
            return true;
        }
        self.logs
            .get(file as usize)
            .is_some_and(|l| l.holds(offset, len, seq))
    }

    /// `experimental_verify`: the verify phase reads these (the replayed I/O sequence)
    /// instead of the write log.
    pub fn set_replayed(&mut self, reads: Vec<VerifyRead>) {
        self.replayed = Some(reads);
    }

    /// Whether the verify phase checks replayed writes (`experimental_verify`).
    pub fn replays(&self) -> bool {
        self.replayed.is_some()
    }

    /// The reads of the verify phase: every whole run of every file's log that no backlog
    /// batch checked already, in file and offset order; with `experimental_verify` the
    /// replayed sequence.
    pub fn phase_reads(&self) -> Vec<VerifyRead> {
        if let Some(r) = &self.replayed {
            return r.clone();
        }
        let mut out = Vec::new();
        for (i, log) in self.logs.iter().enumerate() {
            log.visit_runs(|r| {
                if r.whole && !r.checked {
                    out.push(VerifyRead {
                        file: i as u32,
                        offset: r.offset,
                        len: r.len as u32,
                        seq: r.seq,
                        trim: false,
                    });
                }
            });
        }
        out
    }

    /// Check a verify read of file `file` (verify phase, verify_backlog) against the write
    /// its log says the range holds, and mark it checked. False when verify_fatal should stop.
    pub fn check_logged(&mut self, file: u32, path: &str, buf: &[u8], offset: u64) -> bool {
        let trimmed = self
            .trim
            .as_mut()
            .and_then(|t| t.trimmed.remove(&(file, offset)));
        let Some(log) = self.logs.get_mut(file as usize) else {
            return true;
        };
        if trimmed.is_some() {
            let seq = log.get(offset).unwrap_or(0);
            log.mark_checked(offset, buf.len() as u64, seq);
            return self.check_zero(path, buf, offset);
        }
        let seq = log.get(offset).unwrap_or(0);
        log.mark_checked(offset, buf.len() as u64, seq);
        if let Some(o) = &mut self.offload {
            // A whole run: every interval carries the run's sequence number.
            o.submit(path, offset, buf, Want::Seq(seq));
            return self.take_offloaded();
        }
        let log = &self.logs[file as usize];
        match self.v.check(buf, offset, Expect::Log(log)) {
            Ok(()) => true,
            Err(f) => {
                let what = self.describe(path, buf, &f);
                self.failed(what)
            }
        }
    }

    /// Check a replayed read (`experimental_verify`): the block must hold write `seq` exactly,
    /// or zeroes where the replay trimmed ([`TRIMMED`]). False when verify_fatal should stop.
    pub fn check_replayed(&mut self, path: &str, buf: &[u8], offset: u64, seq: u64) -> bool {
        if seq == TRIMMED {
            return self.check_zero(path, buf, offset);
        }
        if let Some(o) = &mut self.offload {
            o.submit(path, offset, buf, Want::Seq(seq));
            return self.take_offloaded();
        }
        match self.v.check(buf, offset, Expect::Seq(seq)) {
            Ok(()) => true,
            Err(f) => {
                let what = self.describe(path, buf, &f);
                self.failed(what)
            }
        }
    }

    /// A trimmed block must read back as zeroes (fio's `verify_trimmed_io_u`).
    fn check_zero(&mut self, path: &str, buf: &[u8], offset: u64) -> bool {
        match buf.iter().position(|&b| b != 0) {
            None => true,
            Some(at) => self.failed(format!(
                "trim: verify failed at file {path} offset {offset}, length {}, block offset \
                 {at}: a trimmed block does not read back as zeroes",
                buf.len()
            )),
        }
    }

    fn failed(&mut self, what: String) -> bool {
        self.failures += 1;
        if let Some(job) = &self.echo {
            fiox_guard::eprintln!("fiox: {job}: {what}");
        } else if self.unprinted.len() < UNPRINTED_KEPT {
            self.unprinted.push(what.clone());
        } else {
            self.unprinted_dropped += 1;
        }
        if self.first.len() < DESCRIBED {
            self.first.push(what);
        }
        !self.fatal
    }

    /// The failures not printed yet, and how many more were found but not kept.
    pub fn unprinted(&self) -> (&[String], u64) {
        (&self.unprinted, self.unprinted_dropped)
    }

    /// From now on print every failure on stderr as it is found, as fio logs every bad block
    /// (only the first few are kept for the report); the failures found so far are printed
    /// first. Called by the verify phase, which may find any number of bad blocks.
    pub fn echo_failures(&mut self, job: &str) {
        print_failures(job, self.unprinted());
        self.unprinted = Vec::new();
        self.unprinted_dropped = 0;
        self.echo = Some(job.to_string());
    }
}

/// Print failure descriptions of job `job` on stderr, then how many more were not kept.
pub fn print_failures(job: &str, (found, dropped): (&[String], u64)) {
    for f in found {
        fiox_guard::eprintln!("fiox: {job}: {f}");
    }
    if dropped > 0 {
        fiox_guard::eprintln!("fiox: {job}: {dropped} more verify failure(s) not listed");
    }
}

/// `verify_backlog`/`verify_backlog_batch` state: the writes completed since the last batch.
struct Backlog {
    every: u64,
    batch: u64,
    pending: Vec<VerifyRead>,
}

impl Backlog {
    fn new(job: &JobSpec) -> Backlog {
        // fio keeps the write history its backlog reads only with do_verify: without it,
        // verify_backlog verifies nothing.
        // Nor with experimental_verify, which keeps none.
        let every = if job.verify.do_verify && !job.verify.experimental_verify {
            job.verify.verify_backlog
        } else {
            0
        };
        // fio: the batch defaults to the backlog (every block written is verified).
        let batch = match job.verify.verify_backlog_batch {
            0 => every,
            b => b,
        };
        Backlog {
            every,
            batch,
            pending: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::VerifyMethod;

    #[test]
    fn write_log_and_check_find_corruption() {
        let mut job = JobSpec::default();
        job.verify.method = VerifyMethod::Crc32c;
        let mut jv = JobVerify::new(&job, 7, &[0]).unwrap().unwrap();
        let mut disk = vec![0u8; 4 * 4096];
        for blk in 0..4u64 {
            let off = blk * 4096;
            let b = &mut disk[off as usize..][..4096];
            let seq = jv.fill(b, off, 0).unwrap();
            jv.written(0, off, 4096, seq);
        }
        disk[2 * 4096 + 300] ^= 0x40;
        let reads = jv.phase_reads();
        assert_eq!(reads.len(), 4);
        for r in &reads {
            let b = &disk[r.offset as usize..][..r.len as usize];
            assert!(jv.check_logged(r.file, "f", b, r.offset));
        }
        assert_eq!(jv.failures, 1);
        assert!(jv.first[0].contains("offset 8192"), "{}", jv.first[0]);
        assert!(jv.phase_reads().is_empty(), "every block was checked");
    }

    #[test]
    fn backlog_batches_recent_writes_and_the_phase_reads_the_rest() {
        let mut job = JobSpec::default();
        job.verify.method = VerifyMethod::Crc32c;
        job.verify.verify_backlog = 4;
        job.verify.verify_backlog_batch = 2;
        let mut jv = JobVerify::new(&job, 9, &[0]).unwrap().unwrap();
        let mut disk = vec![0u8; 4 * 4096];
        for blk in 0..4u64 {
            let off = blk * 4096;
            let b = &mut disk[off as usize..][..4096];
            let seq = jv.fill(b, off, 0).unwrap();
            assert!(!jv.backlog_due());
            jv.written(0, off, 4096, seq);
        }
        assert!(jv.backlog_due());
        let batch = jv.take_backlog();
        let offsets: Vec<u64> = batch.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, [0, 4096], "the two oldest");
        assert!(!jv.backlog_due(), "the backlog is forgotten after a batch");
        for r in &batch {
            assert!(jv.holds(r.file, r.offset, r.len as u64, r.seq));
            let b = &disk[r.offset as usize..][..4096];
            assert!(jv.check_logged(r.file, "f", b, r.offset));
        }
        let rest: Vec<u64> = jv.phase_reads().iter().map(|r| r.offset).collect();
        assert_eq!(rest, [8192, 12288], "checked blocks are not read again");
        // Without do_verify there is no backlog (fio keeps no write history then).
        job.verify.do_verify = false;
        let mut jv = JobVerify::new(&job, 9, &[0]).unwrap().unwrap();
        for blk in 0..8u64 {
            jv.written(0, blk * 4096, 4096, blk + 1);
        }
        assert!(!jv.backlog_due());
    }

    #[test]
    fn options_without_effect_are_warned_about() {
        let mut job = JobSpec::default();
        job.verify.method = VerifyMethod::Crc32c;
        job.verify.verify_backlog = 8;
        let jv = JobVerify::new(&job, 1, &[0]).unwrap().unwrap();
        assert!(
            jv.warnings(&job).is_empty(),
            "verify_backlog is implemented"
        );
        job.verify.verify_async = 2; // implemented too
        job.verify.verify_state_load = true;
        let w: Vec<String> = jv.warnings(&job).into_iter().map(|w| w.message).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("only with verify_only=1"), "{w:?}");
    }

    #[test]
    fn verify_async_finds_what_inline_checks_find() {
        let mut job = JobSpec::default();
        job.verify.method = VerifyMethod::Crc32c;
        job.verify.verify_async = 2;
        let mut jv = JobVerify::new(&job, 3, &[0]).unwrap().unwrap();
        let mut blocks = Vec::new();
        for blk in 0..8u64 {
            let mut b = vec![0u8; 4096];
            jv.fill(&mut b, blk * 4096, 0).unwrap();
            blocks.push(b);
        }
        blocks[5][700] ^= 2;
        for (i, b) in blocks.iter().enumerate() {
            jv.check_read("f", b, i as u64 * 4096);
        }
        jv.finish_offloaded();
        assert_eq!(jv.failures, 1);
        assert!(
            jv.first[0].starts_with("f: verify failed at offset 20480"),
            "{}",
            jv.first[0]
        );
    }

    #[test]
    fn every_failure_is_kept_for_printing_until_echoed() {
        let mut job = JobSpec::default();
        job.verify.method = VerifyMethod::Crc32c;
        let mut jv = JobVerify::new(&job, 5, &[0]).unwrap().unwrap();
        let mut good = vec![0u8; 4096];
        jv.fill(&mut good, 0, 0).unwrap();
        // More failures than the report describes: all are kept to be printed.
        for blk in 1..=(DESCRIBED as u64 + 5) {
            assert!(jv.check_read("f", &good, blk * 4096));
        }
        assert_eq!(jv.failures, DESCRIBED as u64 + 5);
        assert_eq!(jv.first.len(), DESCRIBED);
        let (kept, dropped) = jv.unprinted();
        assert_eq!((kept.len(), dropped), (DESCRIBED + 5, 0));
        assert!(kept[14].contains("offset 61440"), "{}", kept[14]);
        // Once echoing, failures are printed as found and nothing waits.
        jv.echo_failures("j");
        assert!(jv.check_read("f", &good, 4096));
        assert_eq!(jv.unprinted(), (&[][..], 0));
        assert_eq!(jv.failures, DESCRIBED as u64 + 6);
    }

    /// verify-trim: picked writes are trimmed in rounds of trim_backlog_batch once the log
    /// holds a multiple of trim_backlog writes (not right after a read); a trimmed block must
    /// then read back as zeroes.
    #[test]
    fn verify_trim_rounds_and_zero_check() {
        let mut j = JobSpec::default();
        j.verify.method = VerifyMethod::Crc32c;
        j.verify.trim_percentage = 100;
        j.verify.trim_backlog = 2;
        j.verify.trim_backlog_batch = 1;
        let mut jv = JobVerify::new(&j, 1, &[0]).unwrap().unwrap();
        jv.enable_trim(&j, &fiox_workload::Seeds::derive(0x89, 1, true, false));
        jv.written(0, 0, 4096, 1);
        assert!(jv.next_trim(false).is_none(), "1 write logged: no round");
        jv.written(0, 4096, 4096, 2);
        assert!(jv.next_trim(true).is_none(), "no round right after a read");
        let first = jv.next_trim(false).unwrap();
        let second = jv.next_trim(false).unwrap();
        assert_eq!((first.offset, second.offset), (0, 4096));
        assert!(first.trim && jv.next_trim(false).is_none());
        jv.trim_done(0, 0, 4096);
        let zero = vec![0u8; 4096];
        assert!(jv.check_logged(0, "f", &zero, 0));
        jv.trim_done(0, 4096, 4096);
        let mut stale = vec![0u8; 4096];
        stale[100] = 1;
        jv.check_logged(0, "f", &stale, 4096);
        assert_eq!(jv.failures, 1);
        assert!(jv.first[0].contains("block offset 100"), "{}", jv.first[0]);
    }

    #[test]
    fn no_verifier_without_verify() {
        assert!(JobVerify::new(&JobSpec::default(), 1, &[0])
            .unwrap()
            .is_none());
    }
}
