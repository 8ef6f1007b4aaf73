//! A job's result from its I/O loop: what the loop measured (per-direction statistics, latency
//! buckets, depths, CPU use, errors) copied into fio's [`JobResult`] shape, at the end of a job and
//! for status snapshots while it runs.

use crate::io::acct::Measure;
use crate::io::ioloop::IoLoop;
use crate::sys::ThreadUsage;
use fiox_stats::{JobResult, Warning, WarningCode};

/// Store what the loop measured in `r` (also used for status snapshots mid-run).
pub fn fill_result(r: &mut JobResult, lp: &IoLoop, end_ns: u64, cpu: ThreadUsage, m: Measure) {
    let runtime_ns = end_ns.saturating_sub(lp.measured_start_ns());
    r.runtime_ms = runtime_ns / 1_000_000;
    r.job_start_ms = lp.job_start_ms();
    let did_io = lp.acct().dirs.iter().any(|d| d.total_ios > 0);
    if did_io && r.runtime_ms == 0 {
        // A job shorter than a millisecond still ran: fio reports it as 1 msec, and a zero
        // runtime would hide its direction lines and rates.
        r.runtime_ms = 1;
    }
    let acct = lp.acct();
    let mut dirs = acct.dirs.clone();
    for d in dirs.iter_mut() {
        // fio gives a direction its runtime only when it moved bytes (a job whose only I/O
        // failed has no group line).
        if d.io_bytes > 0 {
            d.runtime_ms = r.runtime_ms;
        }
        if lp.copies_lat() && m.lat && m.clat {
            d.lat = d.clat.clone();
        }
    }
    let [rd, wr, tr] = dirs;
    r.dirs = fiox_job::PerDir {
        read: rd,
        write: wr,
        trim: tr,
    };
    r.sync_lat = acct.sync_lat.clone();
    r.act_slices = acct.act.as_ref().map(|a| a.slices.clone());
    r.lat_buckets = acct.lat_buckets;
    r.io_depth = acct.depth;
    r.submit = acct.submit;
    r.complete = acct.complete;
    let run_us = (runtime_ns / 1000).max(1) as f64;
    // A thread cannot use more than 100% of the wall time (the job's thread plus any engine
    // helper threads); the kernel charges CPU in scheduler ticks, so a run shorter than a
    // tick can read above that.
    let cap = 100.0 * lp.cpu_threads() as f64;
    r.usr_cpu_pct = (cpu.usr_us as f64 * 100.0 / run_us).min(cap);
    r.sys_cpu_pct = (cpu.sys_us as f64 * 100.0 / run_us).min(cap - r.usr_cpu_pct);
    r.continue_on_error = crate::io::ioerr::continue_bits(&lp.job().errors) != 0;
    r.total_err = acct.total_errors();
    r.first_error = acct.first_errno();
    if r.error == 0 && r.continue_on_error && acct.tolerated_errors > 0 {
        // fio: a job that survived errors still reports the first one as its error (the exit
        // status stays 0).
        r.error = acct.first_tolerated_errno;
        r.verror = acct.first_tolerated.clone().unwrap_or_default();
    }
    r.ctx = cpu.ctx;
    r.majf = cpu.majf;
    r.minf = cpu.minf;
    if acct.bogus_completions > 0 {
        r.warnings.push(Warning::new(
            WarningCode::EngineBogusCompletions,
            format!(
                "the {} engine reported {} completion(s) for I/O units that were not in flight; \
                 they were ignored",
                lp.engine_name(),
                acct.bogus_completions
            ),
        ));
    }
    if acct.first_direct_einval {
        r.warnings.push(Warning::new(
            WarningCode::DirectIoEinval,
            "the first direct I/O failed with EINVAL: the file system may not support \
                      direct I/O, or the block size, offset or buffer alignment does not suit \
                      the device's logical block size",
        ));
    }
    if acct.tolerated_errors > 0 {
        r.warnings.push(Warning::new(
            WarningCode::IoErrorsTolerated,
            format!(
                "{} I/O error(s) were tolerated by continue_on_error/ignore_error ({}); first: \
                 {}",
                acct.tolerated_errors,
                acct.tolerated_summary(),
                acct.first_tolerated.as_deref().unwrap_or("?")
            ),
        ));
    }
}
