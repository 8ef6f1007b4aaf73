//! The verify phase of a job: after the write phase (`do_verify`), or as the whole job
//! (`verify_only` of a writing workload, see [`crate::verify::vstate`] for where the expected writes
//! come from). The phase runs in the job's I/O loop: every block is read back through the
//! job's engine at the job's iodepth, as fio's verify does, so the reads count in the read
//! statistics, the IO depth histograms and the job's runtime exactly like fio's. Failures fail
//! the job with EILSEQ (fio's err=84), naming file, offset, length and what was found instead
//! of what was expected; each is printed as it is found (fio logs every bad block), however
//! many there are. With `continue_on_error=verify` (or `all`) they are also counted in
//! `total_err`/`first_error`, as fio counts them.

use crate::error::RunError;
use crate::gen::Generator;
use crate::io::ioloop::{EndReason, IoLoop};
use crate::job::env::JobEnv;
use crate::verify::JobVerify;
use fiox_job::{ContinueOnError, JobSpec};
use fiox_stats::{JobResult, WarningCode};

/// `verify_only=1` of a workload that writes: nothing is written; learn which write each block
/// must hold (the writing run's saved state, or its replayed write sequence). The verify phase
/// then checks them.
pub fn prepare_verify_only(
    job: &JobSpec,
    gen: &mut Generator,
    verify: Option<&mut JobVerify>,
    nfiles: usize,
) -> Result<crate::verify::vstate::Replayed, RunError> {
    let v = verify.ok_or_else(|| no_method(job))?;
    crate::verify::vstate::expected_writes(job, gen, v, nfiles)
}

/// `verify_only=1` without `verify=`: there is nothing to check with.
pub fn no_method(job: &JobSpec) -> RunError {
    RunError::Job {
        job: job.name.clone(),
        msg: "verify_only=1 needs a verify method (verify=crc32c, md5, ...)".into(),
    }
}

/// What the verify phase did: how it ended and when it began (ns of the loop's clock).
pub struct PhaseEnd {
    pub end: EndReason,
    pub start_ns: u64,
}

/// Read back and check every block the job wrote (`do_verify` after a write phase that ran to
/// its end, not one its runtime cut, or `verify_only`), through the loop. None when there is no verify phase.
pub fn verify_phase(
    env: &JobEnv,
    lp: &mut IoLoop,
    write_end: &EndReason,
    verify_only: bool,
) -> Option<PhaseEnd> {
    let job = env.job;
    let wanted = verify_only
        || (job.verify.do_verify
            && crate::files::job_writes(job)
            // Only after a write phase that ran to its end: a job its runtime ended (every
            // time_based job, or a runtime shorter than the writes) is over, as fio 3.33
            // marks it terminated before its verify phase (backend.c). Verifying it anyway
            // read back a time_based job's replayed first pass where later passes had
            // written ("expected write #1, found newer write #N"), a failure fio never sees.
            && matches!(write_end, EndReason::Done)
            // fill_device: the fill terminated the job (fio 3.33 marks it so), no verify.
            && !lp.filled());
    if !wanted {
        return None;
    }
    let v = lp.verify_mut()?;
    if env.messages {
        v.echo_failures(&job.name);
    }
    let start_ns = lp.now();
    lp.begin_verify_phase();
    crate::dprint!(crate::debug::VERIFY, "starting loop");
    let end = lp.run();
    crate::dprint!(crate::debug::VERIFY, "exiting loop");
    if let Some(v) = lp.verify_mut() {
        v.finish_offloaded();
    }
    // Debug builds, on request: the phase's open-file peak, for the openfiles tests (the
    // worker prints the I/O phase's the same way).
    if let Some(g) = lp.open_gate() {
        if cfg!(debug_assertions) && std::env::var_os("FIOX_DEBUG_OPENFILES").is_some() {
            fiox_guard::eprintln!(
                "fiox-debug: verify phase of job {}: files open at most {}, opens {}",
                job.name,
                g.max_open,
                g.opens
            );
        }
    }
    Some(PhaseEnd { end, start_ns })
}

/// fio's per-direction runtimes with a verify phase: the write phase's time goes to the
/// directions the workload has (`rw`), the verify phase's to reads (`phase_ms`). Reads of the
/// write phase that the workload does not have (verify_backlog's) add no time of their own, as
/// in fio, which times a direction's phase only when the job does that direction.
pub fn split_runtime(result: &mut JobResult, phase_ms: u64, rw: fiox_job::RwMode) {
    let write_ms = result.runtime_ms.saturating_sub(phase_ms);
    let dirs = &mut result.dirs;
    for d in [&mut dirs.write, &mut dirs.trim] {
        if d.total_ios > 0 {
            d.runtime_ms = write_ms;
        }
    }
    let rd = &mut dirs.read;
    if rd.total_ios > 0 {
        let before = if rw.has_read() { write_ms } else { 0 };
        // A direction with I/O never shows 0 ms (its rates would divide by zero).
        rd.runtime_ms = (before + phase_ms).max(1);
    }
}

/// Report verification failures: each described on stderr, the job fails with EILSEQ.
pub fn verify_failed(env: &JobEnv, v: &JobVerify, result: &mut JobResult) -> RunError {
    if env.messages {
        crate::verify::print_failures(&env.job.name, v.unprinted());
    }
    let first = v.first.first().cloned().unwrap_or_default();
    result.error = libc::EILSEQ;
    result.verror = first.clone();
    if matches!(
        env.job.errors.continue_on_error,
        ContinueOnError::Verify | ContinueOnError::All
    ) {
        // fio counts each bad block as a tolerated error (total_err=3, first_error=84).
        if result.total_err == 0 {
            result.first_error = libc::EILSEQ;
        }
        result.total_err += v.failures;
    }
    // fio's JSON has only err=84; the blocks themselves reach JSON readers as a warning.
    result.warnings.push(fiox_stats::Warning::new(
        WarningCode::VerifyFailed,
        format!(
            "{} block(s) failed verification: {}{}",
            v.failures,
            v.first.join("; "),
            if v.failures > v.first.len() as u64 {
                "; ..."
            } else {
                ""
            }
        ),
    ));
    RunError::IoFailed(format!(
        "job '{}': {} block(s) failed verification; first: {first}",
        env.job.name, v.failures
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::RwMode;

    fn result(reads: u64, writes: u64, runtime_ms: u64) -> JobResult {
        let mut r = JobResult {
            runtime_ms,
            ..Default::default()
        };
        r.dirs.read.total_ios = reads;
        r.dirs.write.total_ios = writes;
        r
    }

    #[test]
    fn the_verify_phase_time_goes_to_reads_the_write_phase_to_the_workload() {
        // 300 ms in all, 100 of them verifying; backlog reads in a write job add nothing.
        let mut r = result(256, 256, 300);
        split_runtime(&mut r, 100, RwMode::Write);
        assert_eq!(
            (r.dirs.read.runtime_ms, r.dirs.write.runtime_ms),
            (100, 200)
        );
        // A mixed workload reads in both phases.
        let mut r = result(512, 256, 300);
        split_runtime(&mut r, 100, RwMode::RandRw);
        assert_eq!(
            (r.dirs.read.runtime_ms, r.dirs.write.runtime_ms),
            (300, 200)
        );
        // A verify phase under a millisecond still shows 1 ms for its reads.
        let mut r = result(4, 0, 5);
        split_runtime(&mut r, 0, RwMode::Write);
        assert_eq!((r.dirs.read.runtime_ms, r.dirs.write.runtime_ms), (1, 0));
    }
}
