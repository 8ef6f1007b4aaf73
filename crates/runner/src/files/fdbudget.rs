//! The descriptor budget of a run. fio opens every file of a job at its start unless
//! `openfiles` says otherwise, so a job with more files than the process may hold open fails
//! (fio 3.33 at 20,000 files: "Too many open files"). fiox raises its soft limit to the hard one
//! and, where the files of the run's jobs still exceed it, opens them as `openfiles` does
//! (lazily, closing files whose I/O is done), sharing the limit between the jobs in proportion
//! to their files. Each job so capped gets a warning naming the limit and the fix.

use fiox_job::JobSpec;
use fiox_stats::{Warning, WarningCode};

/// Descriptors kept for everything else a run opens: logs, engines' rings and event fds,
/// the status thread, verify state, block-device claims.
const RESERVED: u64 = 256;

/// Cap `openfiles` of the jobs whose files would not fit in `limit` descriptors; returns a
/// warning per capped job.
pub fn fit(jobs: &mut [JobSpec], limit: u64) -> Vec<Warning> {
    let held: Vec<u64> = jobs.iter().map(held_open).collect();
    let total: u64 = held.iter().sum();
    let budget = limit.saturating_sub(RESERVED).max(16);
    if total <= budget {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for (job, &n) in jobs.iter_mut().zip(&held) {
        if n == 0 {
            continue;
        }
        let cap = ((budget as u128 * n as u128 / total as u128) as u64).max(1);
        if cap >= n {
            continue;
        }
        job.files.openfiles = cap as u32;
        warnings.push(Warning::with_fix(
            WarningCode::OpenfilesCapped,
            format!(
                "job {}: its {n} files do not fit the {limit} descriptors this process may \
                 open (RLIMIT_NOFILE, shared by the run's jobs): at most {cap} are open at \
                 once, as openfiles={cap} would do (fio would fail with EMFILE)",
                job.name
            ),
            format!(
                "raise the hard limit (ulimit -Hn, LimitNOFILE=) above {}, or set openfiles \
                 yourself",
                total + RESERVED
            ),
        ));
    }
    warnings
}

/// How many descriptors the job holds for its files at once: all of them unless `openfiles`
/// caps it; none for fio's diskless engines (null, cpuio, filecreate, the directory
/// engines...), which open no file of the plan at setup.
fn held_open(job: &JobSpec) -> u64 {
    if job.ioengine.has(fiox_job::Engine::is_diskless) {
        return 0;
    }
    let files = super::file_count(job) as u64;
    match u64::from(job.files.openfiles) {
        0 => files,
        cap => cap.min(files),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, nrfiles: u32) -> JobSpec {
        let mut j = JobSpec {
            name: name.into(),
            ioengine: "psync".into(),
            ..JobSpec::default()
        };
        j.files.nrfiles = nrfiles;
        j
    }

    #[test]
    fn jobs_that_fit_are_left_alone() {
        let mut jobs = vec![job("a", 1000), job("b", 1000)];
        assert!(fit(&mut jobs, 20_000).is_empty());
        assert_eq!(jobs[0].files.openfiles, 0);
    }

    #[test]
    fn the_limit_is_shared_in_proportion_to_the_files() {
        let mut jobs = vec![job("a", 30_000), job("b", 10_000), job("n", 5)];
        jobs[2].ioengine = "null".into();
        let w = fit(&mut jobs, 20_256);
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(jobs[0].files.openfiles, 15_000);
        assert_eq!(jobs[1].files.openfiles, 5_000);
        assert_eq!(
            jobs[2].files.openfiles, 0,
            "a diskless job holds no descriptors"
        );
        assert!(
            w[0].message.contains("at most 15000 are open"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn a_users_openfiles_counts_as_what_the_job_holds() {
        let mut jobs = vec![job("a", 100_000)];
        jobs[0].files.openfiles = 64;
        assert!(fit(&mut jobs, 1024).is_empty());
        assert_eq!(jobs[0].files.openfiles, 64);
    }
}
