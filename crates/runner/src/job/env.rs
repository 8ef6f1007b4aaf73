//! What a job thread is given by the run's coordinator ([`JobEnv`]): its spec and progress, the
//! whole run (for cpuio and group ramps), the stop flag, shared tables (flows, locks, cgroups)
//! and the run's options, read by every step of the job's life.

use crate::io::acct::Progress;
use fiox_job::JobSpec;
use std::sync::atomic::AtomicBool;

/// What a job thread gets from the coordinator.
pub struct JobEnv<'a> {
    pub job: &'a JobSpec,
    pub progress: &'a Progress,
    /// Every job of the run and its progress (cpuio's exit_on_io_done watches them).
    pub run: (&'a [JobSpec], &'a [Progress]),
    pub stop: &'a AtomicBool,
    /// Print fio's informational lines ("Laying out IO file ...") through `info`.
    pub messages: bool,
    pub info: &'a crate::InfoSink,
    pub readonly: bool,
    /// Skip the block-device safety checks (`--allow-destructive`).
    pub allow_destructive: bool,
    /// `--allow-destructive=PATH`: writing allowed to exactly these devices or files, as
    /// they were when the run started (resolved once, matched on each open descriptor).
    pub allowed: &'a fiox_guard::Allowed,
    /// CPUs this job may use after `cpus_allowed_policy` was applied.
    pub cpus: Option<Vec<usize>>,
    /// `--status-interval` is set: publish snapshots when asked.
    pub status: bool,
    /// The job's part in its flow (`flow` > 0), lent to the I/O loop and given back when the
    /// loop ends: the job leaves its flow when the coordinator reaps it (`flow::Parts`), as
    /// fio's reap_threads does, not the moment its own loop stops.
    pub flow: &'a std::sync::Mutex<Option<crate::control::flow::Member>>,
    /// `lockfile=`: the file locks this job shares with its clones (None: no locking).
    pub locks: Option<&'a crate::control::filelock::Shared>,
    /// In a run with other processes: the job's place at its phase's start gate, where it waits
    /// after its setup for the common start (None: start at once).
    pub start: Option<crate::sync::Ticket<'a>>,
    /// The cgroups this run created (`cgroup=`), removed when the run ends.
    pub(crate) cgroups: &'a crate::job::cgroup::Created,
    /// Makes the job's engine instead of `ioengine=` ([`crate::RunOptions::engine_factory`]).
    pub engine_factory: Option<&'a crate::EngineFactory>,
}
