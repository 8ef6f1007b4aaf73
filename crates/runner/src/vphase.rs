//! The verify phase of a job: after the write phase (`do_verify`), or as the whole job
//! (`verify_only`, see [`crate::vstate`] for where the expected writes come from). Verify reads
//! count as the job's reads (fio reports them in the read section) and their time extends the
//! job's runtime. Failures fail the job with EILSEQ (fio's err=84), naming file, offset, length
//! and what was found instead of what was expected; each is printed as it is found (fio logs
//! every bad block), however many there are.

use crate::acct::JobState;
use crate::error::RunError;
use crate::files;
use crate::gen::Generator;
use crate::ioloop::IoLoop;
use crate::verify::JobVerify;
use crate::worker::{JobEnv, Opened};
use fiox_engine::BufPool;
use fiox_stats::JobResult;
use std::fs::File;
use std::sync::atomic::Ordering;

/// (path, handle) of every file of the job, in file order.
fn file_list(opened: &Opened) -> Vec<(String, Option<&File>)> {
    opened
        .plan
        .files
        .iter()
        .zip(&opened.handles)
        .map(|(f, h)| (f.path.display().to_string(), h.as_ref()))
        .collect()
}

/// Read back every block `v`'s logs hold, counting the reads into `result`; returns the
/// elapsed nanoseconds as measured by `now_ns`.
fn verify_reads(
    env: &JobEnv,
    files: &[(String, Option<&File>)],
    v: &mut JobVerify,
    buf: &mut [u8],
    now_ns: &dyn Fn() -> u64,
    result: &mut JobResult,
) -> Result<(), RunError> {
    let stop = || env.stop.load(Ordering::Relaxed);
    env.progress.set_state(JobState::Verifying);
    if env.messages {
        v.echo_failures(&env.job.name);
    }
    let t0 = now_ns();
    let rd = &mut result.dirs.read;
    let buckets = &mut result.lat_buckets;
    let mut on_read = |len: u64, ns: u64| {
        buckets.add(ns);
        rd.io_bytes += len;
        rd.total_ios += 1;
        rd.clat.add(ns);
        rd.lat.add(ns);
    };
    let r = v.verify_files(files, buf, &stop, &mut on_read);
    v.finish_offloaded();
    let ms = now_ns().saturating_sub(t0) / 1_000_000;
    if result.dirs.read.total_ios > 0 {
        result.dirs.read.runtime_ms += ms;
    }
    result.runtime_ms += ms;
    r
}

/// After the write phase, read back and check every block the job wrote (`do_verify`).
pub fn verify_phase(
    env: &JobEnv,
    opened: &Opened,
    lp: &mut IoLoop,
    result: &mut JobResult,
) -> Result<(), RunError> {
    let job = env.job;
    if !job.verify.do_verify || !files::job_writes(job) {
        return Ok(());
    }
    let clock = lp.clock;
    // Files that opened lazily (openfiles, create_on_open) were closed by the write phase:
    // open them again to read back, read-only and never creating one.
    let reopened: Vec<Option<File>> = if lp.gate.is_some() {
        reopen_closed(job, opened)?
    } else {
        Vec::new()
    };
    let files: Vec<(String, Option<&File>)> = file_list(opened)
        .into_iter()
        .enumerate()
        .map(|(i, (p, h))| (p, h.or(reopened.get(i).and_then(Option::as_ref))))
        .collect();
    let Some(v) = lp.verify.as_mut() else {
        return Ok(());
    };
    verify_reads(
        env,
        &files,
        v,
        lp.pool.slice_mut(0),
        &|| clock.now_ns(),
        result,
    )
}

/// Open for reading every file without a setup handle; a file the job never created (a
/// `create_on_open` file it did not reach) stays `None`, as it holds no written block.
fn reopen_closed(job: &fiox_job::JobSpec, opened: &Opened) -> Result<Vec<Option<File>>, RunError> {
    let spec = fiox_engine::OpenSpec {
        write: false,
        create: false,
        ..fiox_engine::OpenSpec::from_job(job)
    };
    let mut out = Vec::with_capacity(opened.handles.len());
    for (f, h) in opened.plan.files.iter().zip(&opened.handles) {
        if h.is_some() || !f.path.exists() {
            out.push(None);
            continue;
        }
        out.push(Some(fiox_engine::open_file(&f.path, &spec)?));
    }
    Ok(out)
}

/// `verify_only=1`: no writes; check every block the writing run left (its saved state or
/// its replayed write sequence).
pub fn verify_only(
    env: &JobEnv,
    opened: &Opened,
    gen: &mut Generator,
    verify: Option<JobVerify>,
    pool: &mut BufPool,
    result: &mut JobResult,
) -> Result<(), RunError> {
    let job = env.job;
    let mut v = verify.ok_or_else(|| RunError::Job {
        job: job.name.clone(),
        msg: "verify_only=1 needs a verify method (verify=crc32c, md5, ...)".into(),
    })?;
    crate::vstate::expected_writes(job, gen, &mut v, opened.plan.files.len())?;
    let t0 = std::time::Instant::now();
    let now = || t0.elapsed().as_nanos() as u64;
    let files = file_list(opened);
    verify_reads(env, &files, &mut v, pool.slice_mut(0), &now, result)?;
    if v.failures > 0 {
        return Err(verify_failed(env, &v, result));
    }
    Ok(())
}

/// Report verification failures: each described on stderr, the job fails with EILSEQ.
pub fn verify_failed(env: &JobEnv, v: &JobVerify, result: &mut JobResult) -> RunError {
    if env.messages && !v.echoing() {
        for f in &v.first {
            eprintln!("fiox: {}: {f}", env.job.name);
        }
    }
    let first = v.first.first().cloned().unwrap_or_default();
    result.error = libc::EILSEQ;
    result.verror = first.clone();
    // fio's JSON has only err=84; the blocks themselves reach JSON readers as a warning.
    result.warnings.push(fiox_stats::Warning {
        code: "verify-failed".into(),
        message: format!(
            "{} block(s) failed verification: {}{}",
            v.failures,
            v.first.join("; "),
            if v.failures > v.first.len() as u64 {
                "; ..."
            } else {
                ""
            }
        ),
        fix: "the data read back is not what was written: check the device, cache settings \
              and other writers of the file"
            .into(),
    });
    RunError::IoFailed(format!(
        "job '{}': {} block(s) failed verification; first: {first}",
        env.job.name, v.failures
    ))
}
