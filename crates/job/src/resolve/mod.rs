//! Resolution: raw sections -> typed, fully derived [`JobSpec`]s. Applies `[global]`
//! inheritance (globals accumulate from the top of each job file, command-line globals first),
//! looks every option up in the table (unknown -> did-you-mean; fio options fiox cannot run
//! yet are checked and recorded in `JobSpec::unsupported`), applies values in order (`kb_base` first, since it changes how sizes read), checks
//! engine-owned options against the final engine, derives fio's dependent defaults, expands
//! `numjobs` and assigns reporting groups as fio does.
//!
//! The folder: this file walks the sections and expands `numjobs`; `options` resolves one
//! job's options, [`derive`] derives fio's dependent defaults and `checks` holds the checks
//! that span options or jobs. `options` uses `derive` and `checks`, never the reverse.

mod checks;
mod derive;
mod options;

pub use options::{find_def, resolve_one};

use crate::error::JobError;
use crate::jobfile::{RawOpt, Section};
use crate::JobSpec;
use checks::{check_groups, check_wait_for, share_dedupe_seeds};

pub use crate::defs::MAX_JOBS;

/// Resolve sections (command line first, then job files in order) into jobs.
pub fn resolve(sections: &[Section]) -> Result<Vec<JobSpec>, JobError> {
    let cmdline_globals: Vec<RawOpt> = sections
        .iter()
        .filter(|s| s.global && s.file_index == 0)
        .flat_map(|s| s.opts.iter().cloned())
        .collect();
    let mut globals: Vec<RawOpt> = Vec::new();
    let mut current_file = 0;
    let mut first_job_of_file = true;
    let mut jobs: Vec<JobSpec> = Vec::new();
    let mut group = GroupCounter::default();
    for sec in sections {
        if sec.file_index != current_file {
            // fio reads the whole command line before any job file, so every file sees all
            // command-line globals, and a file's [global] sections do not leak into the next.
            current_file = sec.file_index;
            first_job_of_file = true;
            globals = cmdline_globals.clone();
        }
        if sec.global {
            // Names are checked when the options are applied to the jobs below (with their
            // own locations), after the job's engine, so an unsupported engine is named first.
            // As in fio, `name=` in [global] does not rename jobs (each is named by its
            // section); it still shows in the global options of the JSON report.
            globals.extend(
                sec.opts
                    .iter()
                    .filter(|o| !o.name.eq_ignore_ascii_case("name"))
                    .cloned(),
            );
            continue;
        }
        let mut opts = globals.clone();
        opts.extend(sec.opts.iter().cloned());
        let mut job = resolve_one(sec, &opts)?;
        // Each job file after the first starts with a barrier, as fio separates files.
        if first_job_of_file && sec.file_index > 1 {
            job.stonewall = true;
        }
        first_job_of_file = false;
        check_wait_for(&job, &jobs, &opts)?;
        let total = jobs.len() + job.numjobs as usize;
        if total > MAX_JOBS {
            let loc = opts
                .iter()
                .rev()
                .find(|o| o.name.eq_ignore_ascii_case("numjobs"))
                .map(|o| o.loc.clone())
                .unwrap_or_else(|| sec.loc.clone());
            return Err(JobError::new(
                loc,
                format!(
                    "job '{}' brings the number of jobs to {total}; at most {MAX_JOBS} are allowed (fio allows 4096)",
                    job.name
                ),
            ));
        }
        expand(job, &mut jobs, &mut group);
    }
    check_groups(&jobs)?;
    share_dedupe_seeds(&mut jobs);
    Ok(jobs)
}

#[derive(Default)]
struct GroupCounter {
    id: u32,
    jobs_in_group: u32,
}

/// numjobs clones and fio's group numbering (a barrier starts a group only if the current
/// group already has jobs).
fn expand(job: JobSpec, out: &mut Vec<JobSpec>, group: &mut GroupCounter) {
    for clone in 0..job.numjobs {
        let mut j = job.clone();
        j.clone_index = crate::spec::subjob_number(clone, job.numjobs);
        j.index = out.len() as u32;
        if clone > 0 {
            j.stonewall = false;
            j.new_group = false;
        }
        if (j.stonewall || j.new_group) && group.jobs_in_group > 0 {
            group.id += 1;
            group.jobs_in_group = 0;
        }
        j.group_id = group.id;
        group.jobs_in_group += 1;
        out.push(j);
    }
}

#[cfg(test)]
mod tests;
