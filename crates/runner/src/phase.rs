//! The run's phases: jobs split at each `stonewall`, each phase's jobs started together on
//! their threads (CPUs after `cpus_allowed_policy`, `wait_for` and `startdelay` honoured,
//! flows between them), driven to their end (a terminated job, exitall, a stop on another
//! process of a synced run) and their results collected. [`crate::run`] calls [`run_phase`]
//! once per phase.

use super::*;

/// Split job indices into phases: a `stonewall` job starts a new phase.
pub(crate) fn phases(jobs: &[JobSpec]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        if j.stonewall || out.is_empty() {
            out.push(Vec::new());
        }
        if let Some(last) = out.last_mut() {
            last.push(i);
        }
    }
    out
}

/// CPUs for a job after `cpus_allowed_policy` (split: one CPU per job, round-robin by the
/// job's number in the whole run, as fio's `fio_cpus_split(mask, thread_number - 1)`).
pub(crate) fn cpus_for(job: &JobSpec) -> Option<Vec<usize>> {
    let set = job.cpu.cpus_allowed.as_ref()?;
    if set.is_empty() {
        return None;
    }
    let set = io::gtod::exclude(set.clone(), job.cpu.gtod_cpu);
    if set.is_empty() {
        return None;
    }
    Some(match job.cpu.policy {
        fiox_job::CpusAllowedPolicy::Shared => set,
        fiox_job::CpusAllowedPolicy::Split => vec![set[job.index as usize % set.len()]],
    })
}

// The run's shared state, passed as it is (a struct for it would only rename the fields).
/// Run one phase's jobs in parallel threads and collect their results. With `sync`, the jobs
/// wait for the common start and this thread exchanges state with the other processes until
/// the phase has ended everywhere; returns what it saw and whether the processes agreed to
/// stop the run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_phase(
    jobs: &[JobSpec],
    phase: &[usize],
    progress: &[Progress],
    opts: &RunOptions,
    run_stop: &AtomicBool,
    results: &mut [Option<JobResult>],
    errors: &mut Vec<RunError>,
    flows: &[Option<std::sync::Arc<control::flow::Flow>>],
    locks: &[Option<std::sync::Arc<control::filelock::Shared>>],
    sync: Option<&dyn GroupSync>,
    (cgroups, allowed): (&job::cgroup::Created, &fiox_guard::Allowed),
) -> Option<(PhaseSync, bool)> {
    let slots = opts.max_jobs.map(Slots::new);
    let slots = &slots;
    // fio: `exitall` on any job makes every job's end terminate others (a global setting).
    let exitall = jobs.iter().any(|j| j.errors.exitall);
    let synced_run = sync.is_some();
    let turns = sync.and_then(|s| s.turns());
    let gate = sync::StartGate::new(phase.len(), turns.is_some());
    // Alone, the jobs that start at once set up, then start their I/O together (as fio).
    let together: Vec<bool> = (0..jobs.len())
        .map(|i| sync.is_none() && starts_with_others(&jobs[i], opts))
        .collect();
    let together = &together;
    let n_together = phase.iter().filter(|&&i| together[i]).count();
    let plain_gate = sync::StartGate::when_all_ready(n_together);
    let plain_gate = (n_together > 1).then_some(&plain_gate);
    // With other processes the jobs obey the phase's own stop flag, set from the exchanges
    // (a stonewall_ranks stop ends this phase only); alone, the run's flag as always.
    let phase_stop = AtomicBool::new(run_stop.load(Ordering::Relaxed));
    let (job_stop, gate_ref) = match sync {
        Some(_) => (&phase_stop, Some(&gate)),
        None => (run_stop, None),
    };
    let mut synced = None;
    let parts = control::flow::Parts::new(phase.iter().map(|&i| {
        flows[i]
            .clone()
            .map(|f| control::flow::Member::new(f, &jobs[i]))
    }));
    let parts = &parts;
    let outcomes: Vec<(usize, job::worker::JobOutcome)> = std::thread::scope(|s| {
        let handles: Vec<_> = phase
            .iter()
            .enumerate()
            .map(|(pos, &i)| {
                let job = &jobs[i];
                let flow = parts.slot(pos);
                let h = std::thread::Builder::new()
                    .name(format!("fiox-{}", job.name))
                    .spawn_scoped(s, move || {
                        debug::enter_job(job.index);
                        dprint!(debug::PROCESS, "jobs pid={} started", sys::gettid());
                        wait_for(job, jobs, progress, job_stop);
                        let env = job::env::JobEnv {
                            job,
                            progress: &progress[i],
                            run: (jobs, progress),
                            stop: job_stop,
                            messages: opts.messages,
                            info: &opts.info,
                            readonly: opts.readonly,
                            allow_destructive: opts.allow_destructive,
                            allowed,
                            cpus: cpus_for(job),
                            status: opts.status_interval.is_some(),
                            flow,
                            locks: locks[i].as_deref(),
                            start: gate_ref
                                .or(plain_gate.filter(|_| together[i]))
                                .map(sync::Ticket::new),
                            cgroups,
                            engine_factory: opts.engine_factory.as_ref(),
                        };
                        if let Some(sl) = &slots {
                            sl.acquire();
                        }
                        let out = job::worker::run_job(&env);
                        if let Some(sl) = &slots {
                            sl.release();
                        }
                        if exitall || (job.errors.exitall_on_error && out.error.is_some()) {
                            terminate(jobs, i, progress);
                            // exit_what=all ends every job, started or not: with other
                            // processes that is the run's stop, which the exchanges carry.
                            if synced_run && job.errors.exit_what == fiox_job::ExitWhat::All {
                                run_stop.store(true, Ordering::Relaxed);
                            }
                        }
                        out
                    });
                (i, h)
            })
            .collect();
        let live = || reap_flows(&handles, parts);
        if let Some(sync) = sync {
            let driver = PhaseDriver {
                sync,
                gate: &gate,
                phase_stop: &phase_stop,
                run_stop,
                stonewall: phase.iter().any(|&i| jobs[i].timing.stonewall_ranks),
            };
            let (mut rec, stop) = driver.drive(&live);
            rec.jobs = phase.to_vec();
            rec.planned_bytes = phase
                .iter()
                .map(|&i| progress[i].planned_bytes.load(Ordering::Relaxed))
                .sum();
            synced = Some((rec, stop));
        }
        while parts.any() && live() {
            std::thread::sleep(control::flow::REAP_INTERVAL);
        }
        handles
            .into_iter()
            .filter_map(|(i, h)| match h {
                Ok(h) => h.join().ok().map(|o| (i, o)),
                Err(e) => {
                    errors.push(RunError::Job {
                        job: jobs[i].name.clone(),
                        msg: format!("cannot start thread: {e}"),
                    });
                    None
                }
            })
            .collect()
    });
    if let Some((rec, _)) = &mut synced {
        // The jobs' own measure (from the common start, without ramp) is finer than the
        // exchanges' interval.
        for (_, out) in &outcomes {
            let d = &out.result.dirs;
            rec.done_bytes += d.read.io_bytes + d.write.io_bytes + d.trim.io_bytes;
            rec.elapsed_ms = rec.elapsed_ms.max(out.result.runtime_ms);
        }
    }
    let mut parents = fiox_guard::Parents::new();
    for (i, out) in outcomes {
        results[i] = Some(out.result);
        if let Some(e) = out.error {
            errors.push(e);
        }
        for p in out.leftovers {
            // Only what fiox created: a file created later at its first open may never have
            // been created at all, or a path may have been replaced by someone else since.
            let _ = files::owned::unlink_owned_in(&mut parents, &p);
            files::owned::forget(&p);
        }
    }
    synced
}

/// The thread that called [`run_synced`] during a phase: exchanges state with the other
/// processes until the phase has ended on all of them.
pub(crate) struct PhaseDriver<'a> {
    sync: &'a dyn GroupSync,
    gate: &'a sync::StartGate,
    phase_stop: &'a AtomicBool,
    run_stop: &'a AtomicBool,
    /// A job of the phase asks for stonewall_ranks.
    stonewall: bool,
}

impl PhaseDriver<'_> {
    /// Exchange until no process has a job of the phase left; `live`: a job of this process
    /// is still running. Returns what this process saw and whether the run is to stop.
    fn drive(&self, live: &dyn Fn() -> bool) -> (PhaseSync, bool) {
        let mut rec = PhaseSync::default();
        let mut agreed_stop = self.take_turns(live);
        loop {
            if self.run_stop.load(Ordering::Relaxed) || stop_requested() {
                self.run_stop.store(true, Ordering::Relaxed);
                self.phase_stop.store(true, Ordering::Relaxed);
            }
            let running = live();
            let stopped = self.phase_stop.load(Ordering::Relaxed);
            let all = self.sync.exchange(SyncFlags {
                setting_up: self.gate.pending() > 0,
                running,
                stop: self.run_stop.load(Ordering::Relaxed),
                finished: self.stonewall && rec.started && !running && !stopped,
                laying_out: false,
            });
            if all.stop {
                agreed_stop = true;
                self.run_stop.store(true, Ordering::Relaxed);
                self.phase_stop.store(true, Ordering::Relaxed);
            }
            if self.stonewall && all.finished && !self.phase_stop.load(Ordering::Relaxed) {
                rec.stonewalled = true;
                self.phase_stop.store(true, Ordering::Relaxed);
            }
            if !rec.started && !all.setting_up && !all.stop {
                // Every job of every process is at the gate (or ended): the common start.
                rec.started = true;
                self.gate.open();
            }
            if !all.running && !all.setting_up {
                return (rec, agreed_stop);
            }
            std::thread::sleep(self.sync.interval());
        }
    }

    /// With shared files ([`GroupSync::turns`]): let this process's jobs set up in its turn,
    /// rank after rank. Returns whether the processes agreed to stop meanwhile.
    fn take_turns(&self, live: &dyn Fn() -> bool) -> bool {
        let Some((me, ranks)) = self.sync.turns() else {
            return false;
        };
        for turn in 0..ranks {
            if turn == me {
                self.gate.allow_setup();
            }
            loop {
                if self.run_stop.load(Ordering::Relaxed) || stop_requested() {
                    self.run_stop.store(true, Ordering::Relaxed);
                }
                let all = self.sync.exchange(SyncFlags {
                    laying_out: turn == me && self.gate.pending() > 0 && live(),
                    stop: self.run_stop.load(Ordering::Relaxed),
                    ..SyncFlags::default()
                });
                if all.stop {
                    self.run_stop.store(true, Ordering::Relaxed);
                    self.phase_stop.store(true, Ordering::Relaxed);
                    return true;
                }
                if !all.laying_out {
                    break;
                }
                std::thread::sleep(self.sync.interval());
            }
        }
        false
    }
}

/// fio's `fio_terminate_threads` when job `i` ends with `exitall` (or fails with
/// `exitall_on_error`): its `exit_what` picks the jobs to stop. Marked jobs end as at the end
/// of their runtime; those not started yet never start.
pub(crate) fn terminate(jobs: &[JobSpec], i: usize, progress: &[Progress]) {
    let me = &jobs[i];
    dprint!(debug::PROCESS, "terminate group_id={}", me.group_id);
    for (k, (j, p)) in jobs.iter().zip(progress).enumerate() {
        let hit = match me.errors.exit_what {
            fiox_job::ExitWhat::Group => j.group_id == me.group_id,
            // fio: the jobs in or past TD_RUNNING (not those still ramping or set up).
            fiox_job::ExitWhat::Stonewall => matches!(
                p.state(),
                JobState::Running | JobState::Verifying | JobState::Finishing
            ),
            fiox_job::ExitWhat::All => true,
        };
        if hit && k != i {
            p.terminate.store(true, Ordering::Relaxed);
        }
    }
}

/// fio's reap_threads for flows: the flow part of each finished job is released (a job
/// still running keeps being held by a partner until then). True while some job runs.
pub(crate) fn reap_flows<T>(
    handles: &[(usize, std::io::Result<std::thread::ScopedJoinHandle<'_, T>>)],
    parts: &control::flow::Parts,
) -> bool {
    let mut running = false;
    for (pos, (_, h)) in handles.iter().enumerate() {
        if h.as_ref().is_ok_and(|h| !h.is_finished()) {
            running = true;
        } else {
            parts.release(pos);
        }
    }
    running
}

/// `wait_for=NAME`: block until the named job (any earlier job with that name) is done.
/// Whether `job` starts its I/O together with the other such jobs of its phase in a run of
/// one process: not one that starts later anyway (`startdelay`, `wait_for`), nor one whose
/// setup may wait for another job's I/O (a network engine's connect or accept), nor under
/// `--max-jobs` (a job waiting at the gate would hold a place the others need).
pub(crate) fn starts_with_others(job: &JobSpec, opts: &RunOptions) -> bool {
    opts.max_jobs.is_none()
        && job.timing.startdelay.1.is_zero()
        && job.wait_for.is_none()
        && !job.ioengine.has(fiox_job::Engine::is_net)
}

pub(crate) fn wait_for(job: &JobSpec, jobs: &[JobSpec], progress: &[Progress], stop: &AtomicBool) {
    let Some(name) = &job.wait_for else { return };
    let targets: Vec<usize> = (0..job.index as usize)
        .filter(|&k| k < jobs.len() && &jobs[k].name == name)
        .collect();
    while !stop.load(Ordering::Relaxed)
        && !progress
            .get(job.index as usize)
            .is_some_and(|p| p.terminate.load(Ordering::Relaxed))
        && targets
            .iter()
            .any(|&k| progress[k].state() != JobState::Done)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
}
