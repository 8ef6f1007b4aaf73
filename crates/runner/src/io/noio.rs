//! The runner's side of fio's engines that do no I/O (FIO_NOIO: `cpuio`, `exec`): the lines
//! fio prints when they start ("NAME (noop): ioengine=cpuio, cpuload=N, cpucycle=N"; "NAME :
//! program=P, arguments=A" and "NAME : Running P A" or "NAME : Saving output of ..."), and
//! cpuio's `exit_on_io_done`, which ends a cpuio job once every I/O job of the run has
//! finished (fio's fio_running_or_pending_io_threads: a job of a later group that has not
//! started counts as pending; with no I/O job at all the cpuio job runs to its own end).

use crate::io::acct::{JobState, Progress};
use fiox_job::JobSpec;

/// Whether `job` uses the cpuio engine.
pub(crate) fn is_cpuio(job: &JobSpec) -> bool {
    job.ioengine.is(fiox_job::Engine::Cpuio)
}

/// Whether `job` uses the exec engine.
pub(crate) fn is_exec(job: &JobSpec) -> bool {
    job.ioengine.is(fiox_job::Engine::Exec)
}

/// fio's informational lines for an exec job (its init line, then the start line).
pub(crate) fn exec_lines(job: &JobSpec) -> String {
    let e = &job.engine;
    // fio prints a missing option as glibc prints a NULL string.
    let program = e.program.as_deref().unwrap_or("(null)");
    let raw = e.arguments.as_deref().unwrap_or("(null)");
    let runtime = job.timing.runtime.unwrap_or_default();
    let args = e
        .arguments
        .as_deref()
        .map(|a| fiox_engine::exec_arguments(a, runtime, &job.name))
        .unwrap_or_else(|| "(null)".into());
    let n = &job.name;
    let start = if e.std_redirect {
        format!("{n} : Saving output of {program} {args} : stdout={n}.stdout stderr={n}.stderr\n")
    } else {
        format!("{n} : Running {program} {args}\n")
    };
    format!("{n} : program={program}, arguments={raw}\n{start}")
}

/// A net job that waits for its peer to connect (fio says "fio: waiting for connection").
pub(crate) fn net_waits(job: &JobSpec) -> bool {
    let proto = job.engine.protocol;
    job.ioengine.has(fiox_job::Engine::is_net)
        && ((proto.is_tcp() && job.engine.listen)
            || (proto == fiox_job::NetProto::Unix && job.rw.mode.has_read()))
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
        .filter(|(j, _)| !is_cpuio(j) && !is_exec(j))
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
        let jobs = [job("cpuio"), job("psync"), job("libaio"), job("exec")];
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

    #[test]
    fn exec_lines_are_fios() {
        let mut j = JobSpec {
            name: "e".into(),
            ioengine: "exec".into(),
            ..JobSpec::default()
        };
        j.engine.program = Some("/bin/sleep".into());
        j.engine.arguments = Some("%r".into());
        j.timing.runtime = Some(std::time::Duration::from_secs(2));
        assert_eq!(
            exec_lines(&j),
            "e : program=/bin/sleep, arguments=%r\n\
             e : Saving output of /bin/sleep 2 : stdout=e.stdout stderr=e.stderr\n"
        );
        j.engine.std_redirect = false;
        assert!(exec_lines(&j).ends_with("e : Running /bin/sleep 2\n"));
    }
}
