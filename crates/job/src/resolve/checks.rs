//! Checks across jobs and options that no single option can make: dedupe seeds shared by a
//! job's clones, `log_compression_cpus`, trim verification, dedupe settings, reporting groups
//! and `wait_for` references.

use crate::error::{JobError, Location};
use crate::jobfile::RawOpt;
use crate::JobSpec;
use std::collections::HashSet;

/// `dedupe_global`: each such job rebuilds the buffer streams of every job of the run, so it
/// gets their `randseed`s (fio reads them from the other jobs' thread data).
pub(super) fn share_dedupe_seeds(jobs: &mut [JobSpec]) {
    if !jobs.iter().any(|j| j.buffers.dedupe_global) {
        return;
    }
    let seeds: Vec<u64> = jobs.iter().map(|j| j.rand.randseed).collect();
    for j in jobs.iter_mut().filter(|j| j.buffers.dedupe_global) {
        j.buffers.dedupe_peer_seeds.clone_from(&seeds);
    }
}

/// `log_compression_cpus` pins the log compression thread, which only `log_compression`
/// starts (and only for a job that writes a bw, iops, lat or histogram log).
pub(super) fn check_log_compression_cpus(job: &mut JobSpec) {
    let l = &job.logs;
    let logs = l.write_bw_log.is_some()
        || l.write_iops_log.is_some()
        || l.write_lat_log.is_some()
        || l.write_hist_log.is_some();
    if l.log_compression_cpus.is_some() && (l.log_compression == 0 || !logs) {
        job.notes.push(
            "log_compression_cpus has no effect without log_compression and a bw, iops, lat or \
             histogram log (there is no log compression thread to pin), as in fio"
                .into(),
        );
    }
}

/// fio's verify-trim acts only where it logs writes for verification, and trims only with
/// `trim_backlog`; fio 3.33 aborts (an assertion) when the trims would come from a workload
/// that does not trim, so fiox refuses that job.
pub(super) fn check_trim_verify(job: &mut JobSpec) -> Result<(), String> {
    let v = &job.verify;
    if v.trim_percentage == 0 {
        return Ok(());
    }
    let active = v.method != crate::VerifyMethod::None && v.do_verify && !v.experimental_verify;
    if !active {
        job.notes.push(
            "trim_percentage has no effect without verify= and do_verify=1 (and with \
             experimental_verify), as in fio"
                .into(),
        );
    } else if v.trim_backlog == 0 {
        job.notes.push(
            "trim_percentage without trim_backlog trims nothing (fio 3.33 picks the blocks but \
             never trims them); set trim_backlog=N"
                .into(),
        );
    } else if !job.rw.mode.has_trim() {
        return Err(format!(
            "trim_percentage with trim_backlog needs a workload that trims (rw=trimwrite or \
             randtrimwrite): fio 3.33 aborts on rw={} with these options",
            job.rw.mode.fio_name()
        ));
    }
    Ok(())
}

/// fio's checks of the dedupe working set (its `fixup_options`): it is sized from `size`, for
/// one file, and its unique pages must leave room for the duplicates asked for.
pub(super) fn check_dedupe(job: &JobSpec, given: &HashSet<&str>) -> Result<(), String> {
    let b = &job.buffers;
    if b.dedupe_percentage == 0 || b.dedupe_mode != crate::DedupeMode::WorkingSet {
        return Ok(());
    }
    if !given.contains("size") {
        return Err(
            "dedupe_mode=working_set needs size= (the working set is a share of it), as in fio"
                .into(),
        );
    }
    if job.files.nrfiles != 1 {
        return Err(format!(
            "dedupe_mode=working_set works with one file per job, but nrfiles={} (as in fio)",
            job.files.nrfiles
        ));
    }
    if b.dedupe_working_set_percentage + b.dedupe_percentage > 100 {
        return Err(format!(
            "dedupe_percentage={} cannot be reached: dedupe_working_set_percentage={} of size \
             is unique pages; lower one so they add up to 100 at most (as fio requires)",
            b.dedupe_percentage, b.dedupe_working_set_percentage
        ));
    }
    Ok(())
}

/// fio requires a job with group_reporting to agree on lat_percentiles with the jobs (with
/// stats) of its reporting group, since their latencies are merged.
pub(super) fn check_groups(jobs: &[JobSpec]) -> Result<(), JobError> {
    for j in jobs.iter().filter(|j| j.stats.group_reporting) {
        if let Some(first) = jobs
            .iter()
            .find(|o| o.group_id == j.group_id && o.stats.stats)
            .filter(|o| o.stats.lat_percentiles != j.stats.lat_percentiles)
        {
            return Err(JobError::bare(format!(
                "job '{}': lat_percentiles differs from job '{}' in the same reporting group {} (as fio, all jobs of a group must agree)",
                j.name, first.name, j.group_id
            )));
        }
    }
    Ok(())
}

pub(super) fn check_wait_for(
    job: &JobSpec,
    earlier: &[JobSpec],
    opts: &[RawOpt],
) -> Result<(), JobError> {
    let Some(target) = &job.wait_for else {
        return Ok(());
    };
    let loc = opts
        .iter()
        .rev()
        .find(|o| o.name.eq_ignore_ascii_case("wait_for"))
        .map(|o| o.loc.clone())
        .unwrap_or(Location::Nowhere);
    let names: HashSet<&str> = earlier
        .iter()
        .filter(|j| &j.name == target)
        .map(|j| j.source.as_deref().unwrap_or(""))
        .collect();
    let count = earlier
        .iter()
        .filter(|j| &j.name == target && j.clone_index == 0)
        .count();
    match count {
        0 => Err(JobError::new(
            loc,
            format!("wait_for={target}: no earlier job is named '{target}'"),
        )),
        1 => Ok(()),
        n => Err(JobError::new(
            loc,
            format!(
                "wait_for={target} is ambiguous: {n} earlier jobs are named '{target}' (in {} file(s)); rename one",
                names.len().max(1)
            ),
        )),
    }
}
