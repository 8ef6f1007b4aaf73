//! `verify_only` and the verify state files. A `verify_only` job does no writes: it learns
//! which write each block must hold — from the state files an earlier run saved
//! (`verify_state_load`), or by replaying the job's write sequence (same options, same seed,
//! so the same offsets, lengths and sequence numbers) — then reads every block back and checks
//! it. A writing verify job saves its write logs after every write phase, complete or not
//! (`verify_state_save`, on by default as in fio), as `local-<job>-<index>-verify.state` in the
//! current directory, fio's name and place; a file of that name fiox did not write is never
//! replaced (see `WriteLog::save`).

use crate::error::RunError;
use crate::files::FilePlan;
use crate::gen::Generator;
use crate::verify::JobVerify;
use crate::verify::VerifyRead;
use fiox_job::{Ddir, JobSpec};
use fiox_stats::{Warning, WarningCode};
use fiox_verify::{state_file_name, FioState, WriteLog};
use std::path::PathBuf;

fn job_err(job: &JobSpec, msg: String) -> RunError {
    RunError::Job {
        job: job.name.clone(),
        msg,
    }
}

/// Where file `file_no`'s state of this job lives.
pub fn state_path(job: &JobSpec, file_no: u32) -> PathBuf {
    let name = state_file_name(&job.name, job.index, file_no);
    // --aux-path: fio keeps its state files there.
    match &job.aux_path {
        Some(dir) => std::path::Path::new(dir).join(name),
        None => PathBuf::from(name),
    }
}

/// A `verify_only` job checks data that must already be there: every file must exist and
/// cover the job's region (nothing is laid out or created).
pub fn check_targets(job: &JobSpec, plan: &FilePlan) -> Result<(), RunError> {
    if !job.verify.verify_only {
        return Ok(());
    }
    let rw = job.rw.mode;
    if rw.has_trim() && !rw.has_write() {
        // fio would run the trims (discarding the data it is asked to verify) and check nothing.
        return Err(job_err(
            job,
            format!(
                "verify_only=1 with rw={}: a trim workload leaves no data to verify, and \
                 verify_only never modifies the target; use rw=read (check every block) or \
                 the rw= of the job that wrote the data",
                rw.fio_name()
            ),
        ));
    }
    for f in &plan.files {
        if f.real_size < f.offset + f.size {
            return Err(job_err(
                job,
                format!(
                    "verify_only=1 checks data written earlier, but {} {}",
                    f.path.display(),
                    if f.real_size == 0 {
                        "does not exist or is empty".to_string()
                    } else {
                        format!("has only {} of {} bytes", f.real_size, f.offset + f.size)
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// Save every file's write log after the write phase (`verify_state_save`), complete or not:
/// as fio rewrites its state on every run, a state left by an earlier run never outlives the
/// run that overwrote its blocks. A state that cannot be saved (a file of that name that is
/// not a state file, a symlink, an unwritable directory) is a warning, as in fio: the job's
/// I/O and checks are done; only a later `verify_state_load` lacks it.
pub fn save_after_write(job: &JobSpec, jv: Option<&JobVerify>) -> Option<Warning> {
    let jv = jv?;
    if !job.verify.verify_state_save || !crate::files::job_writes(job) {
        return None;
    }
    let fio = jv.fio_state(job);
    for (i, log) in jv.logs().iter().enumerate() {
        let path = state_path(job, i as u32);
        if let Err(e) = log.save(&path, jv.ident(i as u32), &fio) {
            return Some(Warning::new(
                WarningCode::VerifyStateNotSaved,
                format!("verify_state_save: {e}"),
            ));
        }
    }
    None
}

/// Fill the write logs for `verify_only`: from the saved state with `verify_state_load`,
/// else by replaying the write sequence of a size-bound job.
pub fn expected_writes(
    job: &JobSpec,
    gen: &mut Generator,
    jv: &mut JobVerify,
    nfiles: usize,
) -> Result<Replayed, RunError> {
    if job.verify.verify_state_load {
        return load(job, gen, jv, nfiles);
    }
    if job.timing.time_based {
        return Err(job_err(
            job,
            "verify_only=1 on a time_based job cannot know how far the writing run got; \
             set verify_state_load=1 to use the state it saved"
                .into(),
        ));
    }
    Ok(replay(gen, jv))
}

/// The writes a writing workload's `verify_only` replayed instead of issuing: fio 3.33 counts
/// them in the job's write statistics (io_bytes, total_ios; no time), so fiox does too.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Replayed {
    pub ios: u64,
    pub bytes: u64,
}

impl Replayed {
    fn add(&mut self, len: u64) {
        self.ios += 1;
        self.bytes += len;
    }
}

/// Load `local-<job>-<index>[-<file>]-verify.state` for every file, checking it belongs to
/// this job (same job id, seed and file).
fn load(
    job: &JobSpec,
    gen: &mut Generator,
    jv: &mut JobVerify,
    nfiles: usize,
) -> Result<Replayed, RunError> {
    let loaded = WriteLog::load(&state_path(job, 0))
        .map_err(|e| job_err(job, format!("verify_state_load: {e}")))?;
    match (loaded.log, loaded.fio) {
        // fiox's own log lists the blocks, not the writes that made them: nothing replayed.
        (Some(first), _) => load_logs(job, jv, nfiles, first).map(|()| Replayed::default()),
        (None, Some(fio)) => {
            jv.relax_identity(job)?;
            Ok(replay_fio(gen, jv, &fio))
        }
        // decode returns at least one of the two.
        (None, None) => Ok(Replayed::default()),
    }
}

/// fiox's own write logs (after fio's state in each file): every write, with its number.
fn load_logs(
    job: &JobSpec,
    jv: &mut JobVerify,
    nfiles: usize,
    first: (WriteLog, fiox_verify::StateIdent),
) -> Result<(), RunError> {
    let mut next = Some(first);
    for i in 0..nfiles {
        let path = state_path(job, i as u32);
        let (log, ident) = match next.take() {
            Some(l) => l,
            None => WriteLog::load(&path)
                .map_err(|e| job_err(job, format!("verify_state_load: {e}")))?
                .log
                .ok_or_else(|| {
                    job_err(
                        job,
                        format!(
                            "verify_state_load: {} holds fio's state but not fiox's log of \
                             file {i}",
                            path.display()
                        ),
                    )
                })?,
        };
        let want = jv.ident(i as u32);
        if ident != want {
            return Err(job_err(
                job,
                format!(
                    "verify_state_load: {} was saved by another job or seed ({}; this job \
                     is {}); run with the options of the writing job",
                    path.display(),
                    describe(&ident),
                    describe(&want)
                ),
            ));
        }
        jv.set_log(i, log);
    }
    Ok(())
}

/// fio's state (from fio, or a fiox state without its log): replay the job's first
/// `numberio` writes, as fio's verify_only does, and leave out those of the last `depth`
/// that the state does not list as completed (fio stops its verification there).
fn replay_fio(gen: &mut Generator, jv: &mut JobVerify, fio: &FioState) -> Replayed {
    let depth = u64::from(fio.depth);
    let mut tail = Vec::new();
    let mut done = Replayed::default();
    replay_until(gen, jv, Some(fio.numberio), &mut |jv, r| {
        done.add(r.2);
        if jv.issued() + depth > fio.numberio {
            tail.push(r);
        }
    });
    for (file, offset, len) in tail {
        if !fio.comps.contains(&(u64::from(file), offset)) {
            jv.forget(file, offset, len);
        }
    }
    done
}

fn describe(id: &fiox_verify::StateIdent) -> String {
    format!(
        "job {}, seed {:#x}, file {}",
        id.job_id, id.seed, id.file_no
    )
}

/// Every write of the job in order, numbered as the writing run numbered them.
fn replay(gen: &mut Generator, jv: &mut JobVerify) -> Replayed {
    let mut done = Replayed::default();
    replay_until(gen, jv, None, &mut |_, r| done.add(r.2));
    done
}

/// `experimental_verify`: the verify phase's reads, from `gen` (a copy of the job's generator
/// taken before the write phase, so the same sequence): each write becomes a read that must
/// hold that write (numbered as the write phase numbered them), each trim a read that must
/// return zeroes; reads are skipped. As fio, it stops before the bytes checked would pass the
/// `bytes` the write phase wrote and trimmed. fio verifies after each of `loops` passes; fiox
/// verifies once, after the last, so only the last pass's I/O is read back (the earlier
/// passes' data is overwritten by then), numbered as the write phase numbered it.
///
/// A block written again later in the sequence (`norandommap`, a sequential job wrapping
/// inside its pass) holds its last write when read back. `newest`: each of its reads expects
/// that write, as fio 3.33 passes such a job on a queued engine (libaio: its replayed read
/// accepts the block's intact newer write, t/verify.py's test 2004); without it each read
/// expects its own write, as fio 3.33 fails the job on a synchronous engine (psync: "bad
/// header numberio", EILSEQ). Both measured side by side in tests/verify.rs.
pub fn replayed_reads(
    gen: &mut Generator,
    bytes: u64,
    min_bs: u64,
    newest: bool,
) -> Vec<VerifyRead> {
    let mut out = replayed_sequence(gen, bytes, min_bs);
    if !newest {
        return out;
    }
    let written = |r: &VerifyRead| r.seq != crate::verify::TRIMMED;
    let mut last: std::collections::HashMap<(u32, u64, u32), u64> = Default::default();
    for r in out.iter().filter(|r| written(r)) {
        last.insert((r.file, r.offset, r.len), r.seq);
    }
    for r in out.iter_mut().filter(|r| written(r)) {
        r.seq = last[&(r.file, r.offset, r.len)];
    }
    out
}

/// The replayed writes and trims, each with its own number (see [`replayed_reads`]).
fn replayed_sequence(gen: &mut Generator, bytes: u64, min_bs: u64) -> Vec<VerifyRead> {
    let (mut out, mut seq, mut planned) = (Vec::new(), 0u64, 0u64);
    loop {
        let mut any = false;
        while let Some(r) = gen.next() {
            any = true;
            if planned + min_bs.max(1) > bytes {
                return out;
            }
            let seq_of = match r.ddir {
                Ddir::Write => {
                    seq += 1;
                    seq
                }
                Ddir::Trim => crate::verify::TRIMMED,
                _ => continue,
            };
            planned += r.len as u64;
            out.push(VerifyRead {
                file: r.file,
                offset: r.offset,
                len: r.len,
                seq: seq_of,
                trim: false,
            });
        }
        if !any || !gen.another_pass() {
            return out;
        }
        out.clear();
        gen.restart();
    }
}

/// (file, offset, length) of a replayed write.
type ReplayedWrite = (u32, u64, u64);

/// Replays the job's writes (at most `limit`), calling `each` with (file, offset, len) of
/// each one after it was recorded.
fn replay_until(
    gen: &mut Generator,
    jv: &mut JobVerify,
    limit: Option<u64>,
    each: &mut dyn FnMut(&JobVerify, ReplayedWrite),
) {
    loop {
        let mut any = false;
        while let Some(r) = gen.next() {
            any = true;
            if limit.is_some_and(|l| jv.issued() >= l) {
                return;
            }
            if r.ddir == Ddir::Write {
                jv.replay_write(r.file, r.offset, r.len as u64);
                each(jv, (r.file, r.offset, r.len as u64));
            }
        }
        if !any || !gen.another_pass() {
            return;
        }
        gen.restart();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::{RwMode, RwSpec, SizeSpec, VerifyMethod};

    fn job(mode: RwMode) -> JobSpec {
        let mut j = JobSpec {
            name: "vs".into(),
            rw: RwSpec { mode, n: 0 },
            size: Some(SizeSpec::Bytes(4 * 4096)),
            ..JobSpec::default()
        };
        j.verify.method = VerifyMethod::Crc32c;
        j.files.filenames = vec!["/nonexistent-fiox-dir/f".into()];
        j
    }

    #[test]
    fn replay_numbers_writes_as_the_writing_run() {
        let j = job(RwMode::Write);
        let plan = crate::files::plan(&j, true).unwrap();
        let mut gen = crate::gen::generator(&j, &plan).unwrap();
        let mut jv = JobVerify::new(&j, gen.seed(), &[0]).unwrap().unwrap();
        expected_writes(&j, &mut gen, &mut jv, 1).unwrap();
        let log = &jv.logs()[0];
        let seqs: Vec<_> = (0..4).map(|b| log.get(b * 4096)).collect();
        assert_eq!(seqs, vec![Some(1), Some(2), Some(3), Some(4)]);
    }

    /// experimental_verify: writes are read back numbered in order, trims must read zeroes,
    /// reads are left out; of several loops only the last pass is read back, and no more
    /// bytes than the write phase moved.
    #[test]
    fn replayed_reads_follow_the_io_sequence() {
        let mut j = job(RwMode::TrimWrite);
        j.timing.loops = 2;
        let plan = crate::files::plan(&j, true).unwrap();
        let mut gen = crate::gen::generator(&j, &plan).unwrap();
        let reads = replayed_reads(&mut gen.clone(), u64::MAX, 4096, true);
        let seqs: Vec<u64> = reads.iter().map(|r| r.seq).collect();
        let t = crate::verify::TRIMMED;
        assert_eq!(
            seqs,
            vec![t, 5, t, 6, t, 7, t, 8],
            "the second pass, trims and writes"
        );
        let first = replayed_reads(&mut gen, 3 * 4096, 4096, true);
        assert_eq!(first.len(), 3, "{first:?}");
        let mut mixed = job(RwMode::RandRw);
        mixed.size = Some(SizeSpec::Bytes(64 * 4096));
        let plan = crate::files::plan(&mixed, true).unwrap();
        let mut gen = crate::gen::generator(&mixed, &plan).unwrap();
        let reads = replayed_reads(&mut gen, u64::MAX, 4096, true);
        let seqs: Vec<u64> = reads.iter().map(|r| r.seq).collect();
        assert!(!seqs.is_empty() && seqs.len() < 64, "{}", seqs.len());
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    }

    /// A block written twice in the pass (norandommap here: 16 random writes over 8 blocks)
    /// is read back expecting its last write, each time it was written.
    #[test]
    fn replayed_reads_expect_a_blocks_last_write() {
        let mut j = job(RwMode::RandWrite);
        j.size = Some(SizeSpec::Bytes(8 * 4096));
        j.io_size = Some(SizeSpec::Bytes(16 * 4096));
        j.rand.norandommap = true;
        let plan = crate::files::plan(&j, true).unwrap();
        let mut gen = crate::gen::generator(&j, &plan).unwrap();
        let reads = replayed_reads(&mut gen, u64::MAX, 4096, true);
        assert_eq!(reads.len(), 16);
        let mut last = std::collections::HashMap::new();
        for (i, r) in reads.iter().enumerate() {
            last.insert(r.offset, i as u64 + 1);
        }
        assert!(last.len() < 16, "some block is written twice: {reads:?}");
        for r in &reads {
            assert_eq!(r.seq, last[&r.offset], "{r:?}");
        }
    }

    #[test]
    fn time_based_verify_only_needs_the_state() {
        let mut j = job(RwMode::Write);
        j.timing.time_based = true;
        let plan = crate::files::plan(&j, true).unwrap();
        let mut gen = crate::gen::generator(&j, &plan).unwrap();
        let mut jv = JobVerify::new(&j, gen.seed(), &[0]).unwrap().unwrap();
        let e = expected_writes(&j, &mut gen, &mut jv, 1).unwrap_err();
        assert!(e.to_string().contains("verify_state_load=1"), "{e}");
    }

    #[test]
    fn verify_only_needs_existing_data() {
        let mut j = job(RwMode::Write);
        let plan = crate::files::plan(&j, false).unwrap();
        assert!(
            check_targets(&j, &plan).is_ok(),
            "a writing job may create its file"
        );
        j.verify.verify_only = true;
        let e = check_targets(&j, &plan).unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
    }
}
