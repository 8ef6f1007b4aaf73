//! The runner's side of fio's `cpuio` engine: its start line ("NAME (noop): ioengine=cpuio,
//! cpuload=N, cpucycle=N", as fio prints at the engine's init) and `exit_on_io_done`, which
//! ends a cpuio job once every I/O job of the run has finished (fio's
//! fio_running_or_pending_io_threads: a job of a later group that has not started counts as
//! pending; with no I/O job at all the cpuio job runs to its own end).

use crate::acct::{JobState, Progress};
use fiox_job::JobSpec;

/// Whether `job` uses the cpuio engine.
pub(crate) fn is_cpuio(job: &JobSpec) -> bool {
    job.ioengine.trim().eq_ignore_ascii_case("cpuio")
}

/// fio's informational line for a cpuio job.
pub(crate) fn start_line(job: &JobSpec) -> String {
    let e = &job.engine;
    format!(
        "{} ({}): ioengine=cpuio, cpuload={}, cpucycle={}\n",
        job.name,
        if e.cpumode_qsort { "qsort" } else { "noop" },
        e.cpuload.min(100),
        e.cpuchunks
    )
}

/// True when the run has I/O jobs (not cpuio) and all of them are done.
pub(crate) fn io_jobs_done(jobs: &[JobSpec], progress: &[Progress]) -> bool {
    let mut io_jobs = jobs
        .iter()
        .zip(progress)
        .filter(|(j, _)| !is_cpuio(j))
        .peekable();
    io_jobs.peek().is_some() && io_jobs.all(|(_, p)| p.state() == JobState::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_only_when_every_io_job_is() {
        let job = |e: &str| JobSpec {
            ioengine: e.into(),
            ..JobSpec::default()
        };
        let jobs = [job("cpuio"), job("psync"), job("libaio")];
        let progress: Vec<Progress> = jobs.iter().map(|_| Progress::default()).collect();
        assert!(!io_jobs_done(&jobs, &progress), "waiting jobs are pending");
        progress[1].set_state(JobState::Done);
        assert!(!io_jobs_done(&jobs, &progress));
        progress[2].set_state(JobState::Done);
        assert!(io_jobs_done(&jobs, &progress));
        assert!(
            !io_jobs_done(&jobs[..1], &progress[..1]),
            "no I/O job: run on"
        );
        let mut j = job("cpuio");
        j.name = "c".into();
        j.engine.cpuload = 150;
        assert_eq!(
            start_line(&j),
            "c (noop): ioengine=cpuio, cpuload=100, cpucycle=50000\n"
        );
    }
}
