//! fio's `exec` engine: runs a program alongside the other jobs for the job's runtime (a
//! monitoring tool, a load generator), as fio's engines/exec.c. The first I/O starts it
//! (`program` plus `arguments` split at spaces, `%r` the runtime in seconds, `%n` the job
//! name; stdout/stderr into `NAME.stdout`/`NAME.stderr` with `std_redirect`); every later I/O
//! waits 50 ms and, once the runtime is over, sends SIGTERM and waits `grace_time` seconds.
//! The job's thinktime is 50 ms ([`IoEngine::thinktime`]) and its I/Os count 0 bytes, as in
//! fio. When the engine is dropped (the job ended) a program still running gets SIGKILL and
//! is reaped.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fiox_job::JobSpec;

use crate::{EngineError, EngineFlags, IoEngine, IoUnit, Queued};

/// fio's exec thinktime and per-I/O wait (50 ms).
const TICK: Duration = Duration::from_millis(50);

pub(crate) struct ExecEngine {
    /// The command as fio builds it: program then expanded arguments, split at spaces.
    argv: Vec<String>,
    /// Output files (`std_redirect`), by the job's name.
    redirect: Option<(String, String)>,
    grace: Duration,
    /// The job's runtime (None: no runtime, so fio's test "past the runtime" is always true).
    runtime: Duration,
    start: Instant,
    child: Option<Child>,
    /// SIGTERM was sent (fio sends it at every I/O past the runtime; once is enough here).
    terminated: bool,
}

/// fio's `%r` and `%n` substitutions in `arguments`.
pub fn expand(arguments: &str, runtime: Duration, name: &str) -> String {
    arguments
        .replace("%r", &runtime.as_secs().to_string())
        .replace("%n", name)
}

impl ExecEngine {
    pub fn new(job: &JobSpec) -> Result<ExecEngine, EngineError> {
        let e = &job.engine;
        let program = e.program.as_deref().ok_or_else(|| EngineError::Option {
            engine: "exec",
            option: "program",
            reason: "no program is defined, it is mandatory to define one (as in fio)".into(),
        })?;
        let runtime = job.timing.runtime.unwrap_or(Duration::ZERO);
        let args = e
            .arguments
            .as_deref()
            .map(|a| expand(a, runtime, &job.name))
            .unwrap_or_default();
        let line = format!("{program} {args}");
        let argv: Vec<String> = line
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        if argv.is_empty() {
            return Err(EngineError::Option {
                engine: "exec",
                option: "program",
                reason: "the program name is empty".into(),
            });
        }
        Ok(ExecEngine {
            argv,
            redirect: e.std_redirect.then(|| {
                (
                    format!("{}.stdout", job.name),
                    format!("{}.stderr", job.name),
                )
            }),
            grace: Duration::from_secs(e.grace_time),
            runtime,
            start: Instant::now(),
            child: None,
            terminated: false,
        })
    }

    /// Start the program (fio's exec_background).
    fn spawn(&mut self) -> Result<(), EngineError> {
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]).stdin(Stdio::null());
        if let Some((out, err)) = &self.redirect {
            // NAME.stdout and NAME.stderr are names fiox makes: created new, or replacing
            // only fiox's own earlier output, never through a link (the guard's output rule).
            let open = |p: &str| {
                use fiox_guard::output::{self, Named, Open};
                output::open(std::path::Path::new(p), Open::Truncate, Named::ByFiox).map_err(|e| {
                    EngineError::File {
                        path: p.into(),
                        what: "exec: create the program's output file".into(),
                        source: e.into(),
                    }
                })
            };
            cmd.stdout(open(out)?).stderr(open(err)?);
        }
        let child = cmd.spawn().map_err(|source| EngineError::File {
            path: self.argv[0].clone().into(),
            what: "exec: start the program".into(),
            source,
        })?;
        self.child = Some(child);
        Ok(())
    }

    /// Past the runtime: SIGTERM, then the grace time (fio sleeps it in the job thread).
    fn terminate(&mut self) {
        if self.terminated {
            return;
        }
        self.terminated = true;
        if let Some(c) = self.child.as_mut() {
            if matches!(c.try_wait(), Ok(None)) {
                // SAFETY: kill(2) on our own child's pid; it has not been reaped (try_wait
                // returned None), so the pid cannot belong to another process.
                unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            }
        }
        std::thread::sleep(self.grace);
    }
}

impl IoEngine for ExecEngine {
    fn name(&self) -> &'static str {
        "exec"
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags::no_data(fiox_job::Engine::Exec)
    }

    crate::ignores_files!();

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        if self.child.is_none() {
            self.spawn()?;
        } else {
            std::thread::sleep(TICK);
            if self.start.elapsed() > self.runtime {
                self.terminate();
            }
        }
        Ok(Queued::Done(io.len() as i64))
    }

    fn thinktime(&self) -> Option<Duration> {
        Some(TICK)
    }
}

impl Drop for ExecEngine {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // fio's cleanup sends SIGKILL; reaping it leaves no zombie behind.
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IoOp;

    fn job(program: Option<&str>, args: Option<&str>) -> JobSpec {
        let mut j = JobSpec {
            name: "ex".into(),
            ioengine: "exec".into(),
            ..JobSpec::default()
        };
        j.engine.program = program.map(String::from);
        j.engine.arguments = args.map(String::from);
        j.engine.std_redirect = false;
        j.engine.grace_time = 0;
        j.timing.runtime = Some(Duration::from_secs(7));
        j
    }

    #[test]
    fn arguments_expand_and_split_as_fio() {
        let e = ExecEngine::new(&job(Some("/bin/echo"), Some("a  %r %n-%r"))).unwrap();
        assert_eq!(e.argv, ["/bin/echo", "a", "7", "ex-7"]);
        let e = ExecEngine::new(&job(None, None)).err().unwrap().to_string();
        assert!(e.contains("program"), "{e}");
    }

    #[test]
    fn starts_then_terminates_past_the_runtime_and_reaps() {
        let mut j = job(Some("sleep"), Some("30"));
        j.timing.runtime = Some(Duration::ZERO);
        let mut e = ExecEngine::new(&j).unwrap();
        let io = IoUnit::range(IoOp::Read, 0, 0, 4096);
        assert_eq!(e.queue(0, &io).unwrap(), Queued::Done(4096));
        assert!(e.child.is_some());
        e.queue(0, &io).unwrap();
        let status = e.child.as_mut().unwrap().wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        let mut missing = ExecEngine::new(&job(Some("/nonexistent/prog"), None)).unwrap();
        let err = missing.queue(0, &io).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/prog"), "{err}");
    }
}
