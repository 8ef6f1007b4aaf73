//! Running in step with other processes (fiox under MPI: one process per rank). The runner
//! knows nothing of MPI: [`crate::run_synced`] calls a [`GroupSync`] on its own thread at fixed
//! points, and every process makes the same calls in the same order, so an implementation can
//! turn each call into one collective operation. A phase's jobs wait at a [`StartGate`] once
//! their files are laid out and opened, until every process is ready: all processes start the
//! phase's I/O together, and ramp_time and runtime count from that common start. While the
//! phase runs the processes exchange their state every [`GroupSync::interval`], which passes a
//! stop (Ctrl-C, exitall, a refusal) from any process to all, and ends the phase on every
//! process at the same exchange. Without a `GroupSync` (plain [`crate::run`]) only the gate
//! runs, as fio starts the jobs it created together: it opens when the last job has set up.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Coordination with the other processes of a run.
pub trait GroupSync {
    /// Combine this process's flags with every other process's (a logical OR of each flag);
    /// every process receives the same result.
    fn exchange(&self, local: SyncFlags) -> SyncFlags;

    /// How often the processes exchange their state while a phase runs.
    fn interval(&self) -> Duration {
        Duration::from_millis(10)
    }

    /// `Some((rank, ranks))` when the processes share files: they then set up (lay out) one
    /// after the other, in rank order, so none finds another's file half made. None: all at
    /// once.
    fn turns(&self) -> Option<(u32, u32)> {
        None
    }
}

/// One process's state at an exchange; combined, the state of the whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncFlags {
    /// A job of the phase is still setting up (neither at the start gate nor ended).
    pub setting_up: bool,
    /// A job of the phase is still running.
    pub running: bool,
    /// Stop the run: a signal, exitall, or a refusal before any I/O.
    pub stop: bool,
    /// Every job of the phase ended on its own (its I/O done), the phase asks for
    /// `stonewall_ranks` and nothing stopped it: the first process to get there stops all.
    pub finished: bool,
    /// This process is setting up in its turn (see [`GroupSync::turns`]).
    pub laying_out: bool,
}

impl SyncFlags {
    /// The flags as bits, for an implementation that ORs integers.
    pub fn to_bits(self) -> u32 {
        u32::from(self.setting_up)
            | u32::from(self.running) << 1
            | u32::from(self.stop) << 2
            | u32::from(self.finished) << 3
            | u32::from(self.laying_out) << 4
    }

    pub fn from_bits(b: u32) -> SyncFlags {
        SyncFlags {
            setting_up: b & 1 != 0,
            running: b & 2 != 0,
            stop: b & 4 != 0,
            finished: b & 8 != 0,
            laying_out: b & 16 != 0,
        }
    }
}

/// What one process saw of one phase: the raw figures behind a report of many processes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PhaseSync {
    /// Indices of the phase's jobs.
    pub jobs: Vec<usize>,
    /// The phase's I/O started (every process was ready); false when a stop came first.
    pub started: bool,
    /// The phase asked for stonewall_ranks and was ended by the first process to finish.
    pub stonewalled: bool,
    /// Milliseconds from the common start until this process's jobs had all ended (their
    /// longest measured runtime).
    pub elapsed_ms: u64,
    /// Bytes this process's jobs planned to transfer (0: time based or unknown).
    pub planned_bytes: u64,
    /// Bytes they transferred (as reported: after any ramp).
    pub done_bytes: u64,
}

/// Where a phase's jobs wait, after their setup, for the common start.
#[derive(Debug, Default)]
pub struct StartGate {
    /// Jobs that have neither arrived nor ended.
    pending: AtomicUsize,
    open: AtomicBool,
    /// The jobs may set up (lay out their files): at once, or in this process's turn.
    setup: AtomicBool,
    /// A run of one process: the gate opens when its last job arrives (or ends first), and
    /// the jobs sleep on the futex `opened` meanwhile (thousands of jobs polling would starve
    /// the ones still setting up; a condvar would hand its mutex to one woken job at a time,
    /// starting 500 jobs over seconds).
    auto: bool,
    opened: std::sync::atomic::AtomicU32,
}

impl StartGate {
    /// A gate for `jobs` jobs; `in_turn`: they wait for [`StartGate::allow_setup`] before
    /// their setup.
    pub fn new(jobs: usize, in_turn: bool) -> StartGate {
        StartGate {
            pending: AtomicUsize::new(jobs),
            open: AtomicBool::new(false),
            setup: AtomicBool::new(!in_turn),
            ..StartGate::default()
        }
    }

    /// The gate of a run without other processes: as fio starts the jobs it created together
    /// once all have set up, it opens when the last of `jobs` arrives or ends before.
    pub fn when_all_ready(jobs: usize) -> StartGate {
        StartGate {
            pending: AtomicUsize::new(jobs),
            setup: AtomicBool::new(true),
            auto: true,
            ..StartGate::default()
        }
    }

    pub fn allow_setup(&self) {
        self.setup.store(true, Ordering::SeqCst);
    }

    /// Jobs still setting up.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    pub fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
        self.opened.store(1, Ordering::SeqCst);
        crate::sys::futex_wake_all(&self.opened);
    }
}

/// One job's place at a [`StartGate`]: it counts once, when the job arrives or (if it never
/// arrives, failing or stopping in its setup) when the ticket is dropped with the job.
#[derive(Debug)]
pub struct Ticket<'a> {
    gate: &'a StartGate,
    used: AtomicBool,
}

impl<'a> Ticket<'a> {
    pub fn new(gate: &'a StartGate) -> Ticket<'a> {
        Ticket {
            gate,
            used: AtomicBool::new(false),
        }
    }

    fn settle(&self) {
        if !self.used.swap(true, Ordering::SeqCst)
            && self.gate.pending.fetch_sub(1, Ordering::SeqCst) == 1
            && self.gate.auto
        {
            self.gate.open();
        }
    }

    /// Wait for this process's turn to set up (or `stop`).
    pub fn wait_setup(&self, stop: &AtomicBool) {
        while !self.gate.setup.load(Ordering::SeqCst) && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    /// Arrive and wait until the gate opens or `stop` is set. Polls: the wait is once per
    /// phase, and 200 µs is far below the exchange interval that opens the gate.
    pub fn wait(&self, stop: &AtomicBool) {
        self.settle();
        if self.gate.auto {
            // Woken all at once by the last arrival. A stop opens the gate too, soon: the jobs
            // still setting up abandon their set-up and their tickets count as they end. The
            // timeout only bounds a set-up that does not look at the stop; it is long, since
            // every waiter wakes at each: thousands of jobs waking every 20 ms kept the CPUs
            // from the jobs still setting up (4,000 jobs: 25 s, most of it in futex wakeups).
            while self.gate.opened.load(Ordering::SeqCst) == 0 && !stop.load(Ordering::Relaxed) {
                crate::sys::futex_wait(&self.gate.opened, 0, Duration::from_millis(500));
            }
            return;
        }
        while !self.gate.open.load(Ordering::SeqCst) && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.settle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_round_trip_through_bits() {
        for b in 0..32 {
            assert_eq!(SyncFlags::from_bits(b).to_bits(), b);
        }
    }

    #[test]
    fn a_gate_of_one_process_opens_when_its_last_job_arrives_or_ends() {
        let gate = StartGate::when_all_ready(3);
        let stop = AtomicBool::new(false);
        let (a, b, c) = (Ticket::new(&gate), Ticket::new(&gate), Ticket::new(&gate));
        drop(b); // a job that failed its setup
        std::thread::scope(|s| {
            let first = s.spawn(|| a.wait(&stop));
            std::thread::sleep(Duration::from_millis(30));
            assert!(!first.is_finished(), "opened before the last job arrived");
            c.wait(&stop);
            first.join().unwrap();
        });
        assert_eq!(gate.pending(), 0);
        // A stop releases a job waiting at a gate that never opens.
        let gate = StartGate::when_all_ready(2);
        let stop = AtomicBool::new(true);
        Ticket::new(&gate).wait(&stop);
    }

    #[test]
    fn a_ticket_counts_once_whether_it_arrives_or_is_dropped() {
        let gate = StartGate::new(2, false);
        let stop = AtomicBool::new(true);
        let a = Ticket::new(&gate);
        a.wait(&stop);
        assert_eq!(gate.pending(), 1);
        drop(a);
        assert_eq!(gate.pending(), 1, "arrived, then dropped: counted once");
        drop(Ticket::new(&gate));
        assert_eq!(gate.pending(), 0);
    }
}
