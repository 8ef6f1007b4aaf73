//! fio's `group_reporting`: the jobs of a group that set it are reported as one result (its
//! first job's name, the last job's options, the group's steady state); a job without it is
//! reported apart, as fio's stat.c decides per job.

use fiox_job::JobSpec;
use fiox_stats::JobResult;

/// With `group_reporting`, the jobs of a group that set it are reported as one merged result;
/// a job of the group without it is reported apart, as fio's stat.c decides per job (a job
/// file's job that failed at setup stays apart from the command line's group-reporting job,
/// and readers that drop jobs with an error keep the good one).
pub(crate) fn apply(results: Vec<JobResult>, jobs: &[JobSpec]) -> Vec<JobResult> {
    let grouped = group_reporting_of(&results, jobs);
    let mut out: Vec<JobResult> = Vec::new();
    let mut merged_groups: Vec<u32> = Vec::new();
    for (r, &gr) in results.iter().zip(&grouped) {
        let gid = r.groupid;
        if !gr {
            out.push(r.clone());
            continue;
        }
        if merged_groups.contains(&gid) {
            continue;
        }
        merged_groups.push(gid);
        let members: Vec<JobResult> = results
            .iter()
            .zip(&grouped)
            .filter(|(m, g)| m.groupid == gid && **g)
            .map(|(m, _)| m.clone())
            .collect();
        let mut merged = fiox_stats::merge_jobs(&members);
        // fio keeps a group's steady state on its last job.
        merged.steadystate = members.iter().rev().find_map(|m| m.steadystate.clone());
        // fio's JSON `job options` of a group are its last job's (stat.c keeps overwriting
        // opt_lists[j] while it walks the group), while the name is the first job's.
        if let Some(last) = members.last() {
            merged.job_options.clone_from(&last.job_options);
        }
        out.push(merged);
    }
    for r in &mut out {
        let spec = jobs
            .iter()
            .filter(|j| j.group_id == r.groupid)
            .find(|j| j.name == r.name || j.stats.group_reporting);
        if spec.is_some_and(|j| j.stats.unified_mixed) {
            fiox_stats::fold_mixed(r);
        }
    }
    out
}

/// Whether each result's job set `group_reporting`: results come in job order (numjobs clones
/// share a name), so each is matched with the next job of its name and group.
fn group_reporting_of(results: &[JobResult], jobs: &[JobSpec]) -> Vec<bool> {
    let mut at = 0;
    results
        .iter()
        .map(|r| {
            let same = |j: &JobSpec| j.name == r.name && j.group_id == r.groupid;
            match jobs[at..].iter().position(same) {
                Some(k) => {
                    at += k + 1;
                    jobs[at - 1].stats.group_reporting
                }
                // A result named otherwise (already merged): its group's first job decides.
                None => jobs
                    .iter()
                    .find(|j| j.group_id == r.groupid)
                    .is_some_and(|j| j.stats.group_reporting),
            }
        })
        .collect()
}
