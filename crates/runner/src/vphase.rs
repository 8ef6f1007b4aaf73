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

/// What the verify phase reads: every block `v`'s logs hold, of files open already, or of
/// files it opens one at a time (`openfiles`, whose cap holds in this phase too).
enum Source<'a> {
    Open(Vec<(String, Option<&'a File>)>),
    OneAtATime(&'a Opened),
}

/// Read back every block `v`'s logs hold, counting the reads into `result` and their time
/// (measured by `now_ns`) into the job's runtime.
fn verify_reads(
    env: &JobEnv,
    src: Source<'_>,
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
    let r = match src {
        Source::Open(files) => v.verify_files(&files, buf, &stop, &mut on_read),
        Source::OneAtATime(opened) => one_at_a_time(env.job, opened, v, buf, &stop, &mut on_read),
    };
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
    // open them again one at a time, so this phase keeps within openfiles as the writes did.
    let src = if lp.gate.is_some() {
        Source::OneAtATime(opened)
    } else {
        Source::Open(file_list(opened))
    };
    let Some(v) = lp.verify.as_mut() else {
        return Ok(());
    };
    verify_reads(
        env,
        src,
        v,
        lp.pool.slice_mut(0),
        &|| clock.now_ns(),
        result,
    )
}

/// Verify every file the job wrote, each through its setup handle when it has one, else
/// opened read-only (never created) for its own checks and closed before the next.
fn one_at_a_time(
    job: &fiox_job::JobSpec,
    opened: &Opened,
    v: &mut JobVerify,
    buf: &mut [u8],
    stop: &dyn Fn() -> bool,
    on_read: &mut dyn FnMut(u64, u64),
) -> Result<(), RunError> {
    let spec = fiox_engine::OpenSpec {
        write: false,
        create: false,
        ..fiox_engine::OpenSpec::from_job(job)
    };
    let (mut opens, mut open_now, mut max_open) = (0u64, 0usize, 0usize);
    for (i, (f, setup)) in opened.plan.files.iter().zip(&opened.handles).enumerate() {
        // A create_on_open file the job never reached does not exist and holds no write.
        if !v.wrote_to(i) || (setup.is_none() && !f.path.exists()) {
            continue;
        }
        let path = f.path.display().to_string();
        let own = match setup {
            Some(_) => None,
            None => Some(fiox_engine::open_file(&f.path, &spec)?),
        };
        if own.is_some() {
            opens += 1;
            open_now += 1;
            max_open = max_open.max(open_now);
        }
        let Some(h) = setup.as_ref().or(own.as_ref()) else {
            continue;
        };
        let go_on = v.verify_file(i, &path, h, buf, stop, on_read)?;
        if own.is_some() {
            drop(own);
            open_now -= 1;
        }
        if !go_on {
            break;
        }
    }
    // Debug builds, on request: this phase's peak, for the openfiles tests (the worker
    // prints the I/O phase's the same way).
    if cfg!(debug_assertions) && std::env::var_os("FIOX_DEBUG_OPENFILES").is_some() {
        eprintln!(
            "fiox-debug: verify phase of job {}: files open at most {max_open}, opens {opens}",
            job.name
        );
    }
    Ok(())
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
    let src = Source::Open(file_list(opened));
    verify_reads(env, src, &mut v, pool.slice_mut(0), &now, result)?;
    if v.failures > 0 {
        return Err(verify_failed(env, &v, result));
    }
    Ok(())
}

/// Report verification failures: each described on stderr, the job fails with EILSEQ.
pub fn verify_failed(env: &JobEnv, v: &JobVerify, result: &mut JobResult) -> RunError {
    if env.messages {
        crate::verify::print_failures(&env.job.name, v.unprinted());
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
