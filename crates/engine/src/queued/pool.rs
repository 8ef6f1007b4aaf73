//! The worker pool behind fiox's offloading engines: a run list that worker threads drain and
//! a done list the submitting thread reaps. `guasi` runs plain syscalls on it ([`Work`] for
//! `guasi::Request`); `io_submit_mode=offload` runs whole engines on it (`offload.rs`).
//!
//! Its knobs ([`PoolConfig`]):
//! - `offload` (default): the whole batch goes on the run list under ONE lock with ONE wake-up;
//!   a woken worker that sees more work and idle peers wakes the others, so the submitter's
//!   cost does not grow with the batch. While a signalled worker has not woken yet, further
//!   submits add no wake-up at all. Without it (`inline`), the submitter runs the first request
//!   itself, like the old blocking io_submit, for A/B comparisons.
//! - `kick_each`: one lock and one wake-up per request instead of per batch.
//! - `reap_runs`: a reaper that has to wait runs queued requests itself instead of sleeping.
//!
//! Completions go to a done list; workers only signal the reaper's condvar when it sleeps and
//! enough completions for it have arrived, so a busy pipeline costs no futex wake-ups there.
//!
//! Under `--explain` both lists time their requests' waits ([`super::handoff`]): the
//! tracepoints see the workers' syscalls but not these user-space queues.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::handoff::{stamp, Totals};
use crate::Completion;

/// A request a pool thread (or the submitter, or the reaper) can run to completion.
pub trait Work: Send + 'static {
    /// State every thread of the pool shares (e.g. the engines an offload pool drives).
    type Ctx: Send + Sync + 'static;
    fn run(self, ctx: &Self::Ctx) -> Completion;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    pub workers: usize,
    pub offload: bool,
    pub kick_each: bool,
    pub reap_runs: bool,
}

struct RunList<R> {
    /// Requests and when they were queued (0: not timed).
    queue: VecDeque<(R, u64)>,
    /// Workers waiting on `work` (signalled or not).
    idle: usize,
    /// Signals sent to idle workers that have not woken yet. While one is pending, `submit`
    /// does not signal again: the woken worker wakes more if work remains, so a burst of
    /// commits costs the submitter one futex wake instead of one per commit.
    waking: usize,
    shutdown: bool,
}

impl<R> RunList<R> {
    /// Whether a sleeping worker that nobody signalled yet should be woken for queued work.
    fn should_wake(&self) -> bool {
        !self.queue.is_empty() && self.idle > self.waking
    }

    /// Sleepers to signal so that every queued request has a worker coming for it; takes
    /// their credit in `waking`.
    fn take_wakes(&mut self) -> usize {
        let n = self.queue.len().min(self.idle.saturating_sub(self.waking));
        self.waking += n;
        n
    }
}

struct DoneList {
    done: Vec<Completion>,
    /// When each completion was posted (0: not timed), in `done`'s order.
    posted: Vec<u64>,
    /// Completions the sleeping reaper waits for (0: nobody sleeps).
    wanted: usize,
}

struct Shared<R: Work> {
    run: Mutex<RunList<R>>,
    work: Condvar,
    done: Mutex<DoneList>,
    reaped: Condvar,
    ctx: R::Ctx,
    times: Arc<Totals>,
}

/// Poisoning only means a worker panicked while holding the lock; the lists stay consistent
/// (every critical section is a push or pop), so keep going.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<R: Work> Shared<R> {
    fn complete(&self, c: Completion) {
        let now = stamp();
        let mut d = lock(&self.done);
        d.done.push(c);
        d.posted.push(now);
        let wake = d.wanted > 0 && d.done.len() >= d.wanted;
        if wake {
            d.wanted = 0;
        }
        drop(d);
        if wake {
            self.reaped.notify_one();
        }
    }

    /// Next request for a worker, or None at shutdown. Wakes further idle workers when work
    /// remains (which lets `submit` wake only one).
    fn next(&self) -> Option<R> {
        let mut r = lock(&self.run);
        loop {
            if let Some((req, queued)) = r.queue.pop_front() {
                // Wake a worker for each request still queued at once (not one after the
                // other: a chain of single wake-ups serialises on scheduling latency).
                let wakes = r.take_wakes();
                drop(r);
                for _ in 0..wakes {
                    self.work.notify_one();
                }
                self.times.taken(queued);
                return Some(req);
            }
            if r.shutdown {
                return None;
            }
            r.idle += 1;
            r = self.work.wait(r).unwrap_or_else(|p| p.into_inner());
            r.idle -= 1;
            // A spurious wake-up may take a signal's credit too: under-counting only costs an
            // extra wake later, never a missed one.
            r.waking = r.waking.saturating_sub(1);
        }
    }

    fn worker(&self) {
        while let Some(req) = self.next() {
            self.complete(req.run(&self.ctx));
        }
    }
}

/// A pool of worker threads with a run list and a done list.
pub struct Pool<R: Work> {
    shared: Arc<Shared<R>>,
    threads: Vec<JoinHandle<()>>,
    tids: Vec<libc::pid_t>,
    cfg: PoolConfig,
}

impl<R: Work> Pool<R> {
    /// Start `cfg.workers` threads named `<name>-<i>` sharing `ctx`.
    pub fn with_context(cfg: PoolConfig, name: &str, ctx: R::Ctx) -> std::io::Result<Pool<R>> {
        let shared = Arc::new(Shared {
            run: Mutex::new(RunList {
                queue: VecDeque::with_capacity(64),
                idle: 0,
                waking: 0,
                shutdown: false,
            }),
            work: Condvar::new(),
            done: Mutex::new(DoneList {
                done: Vec::with_capacity(64),
                posted: Vec::with_capacity(64),
                wanted: 0,
            }),
            reaped: Condvar::new(),
            ctx,
            times: Totals::for_new_pool(),
        });
        let mut pool = Pool {
            shared,
            threads: Vec::new(),
            tids: Vec::new(),
            cfg,
        };
        let (tx, rx) = std::sync::mpsc::channel();
        for i in 0..cfg.workers.max(1) {
            let s = Arc::clone(&pool.shared);
            let tx = tx.clone();
            let t = std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || {
                    // SAFETY: gettid has no preconditions.
                    let _ = tx.send(unsafe { libc::gettid() });
                    drop(tx);
                    s.worker()
                })?;
            pool.threads.push(t);
        }
        drop(tx);
        pool.tids = rx.iter().collect();
        Ok(pool)
    }

    pub fn config(&self) -> PoolConfig {
        self.cfg
    }

    /// What every thread of the pool shares.
    pub fn context(&self) -> &R::Ctx {
        &self.shared.ctx
    }

    /// Kernel thread ids of the workers (to account their CPU time to the job).
    pub fn thread_ids(&self) -> &[libc::pid_t] {
        &self.tids
    }

    /// Hand a batch to the workers (draining `batch`). In inline mode the first request runs
    /// here; its completion joins the done list behind every earlier one, so a reaper taking
    /// one completion at a time still gets them oldest first (serving the inline one first
    /// starved older completions until the end of the run).
    pub fn submit(&self, batch: &mut Vec<R>) {
        let mut reqs = batch.drain(..);
        if !self.cfg.offload {
            if let Some(first) = reqs.next() {
                self.shared.complete(first.run(&self.shared.ctx));
            }
        }
        let now = stamp();
        if self.cfg.kick_each {
            for req in reqs {
                let mut r = lock(&self.shared.run);
                r.queue.push_back((req, now));
                // Take a signal's credit only when a sleeper can receive it (see `waking`).
                if r.idle > r.waking {
                    r.waking += 1;
                }
                drop(r);
                self.shared.work.notify_one();
            }
        } else if reqs.len() > 0 {
            let mut r = lock(&self.shared.run);
            r.queue.extend(reqs.map(|q| (q, now)));
            let wake = r.waking == 0 && r.should_wake();
            if wake {
                r.waking += 1;
            }
            drop(r);
            if wake {
                self.shared.work.notify_one();
            }
        }
    }

    /// Move up to `max` completions to `out`, waiting until at least `min` arrived. With
    /// `reap_runs` the waiting thread runs queued requests itself.
    pub fn reap(&self, min: usize, max: usize, out: &mut Vec<Completion>) -> usize {
        let mut n = 0;
        loop {
            let mut d = lock(&self.shared.done);
            let take = d.done.len().min(max - n);
            out.extend(d.done.drain(..take));
            self.shared.times.reaped(d.posted.drain(..take));
            n += take;
            if n >= min || n >= max {
                return n;
            }
            if self.cfg.reap_runs {
                drop(d);
                let req = lock(&self.shared.run).queue.pop_front();
                if let Some((req, queued)) = req {
                    self.shared.times.taken(queued);
                    out.push(req.run(&self.shared.ctx));
                    n += 1;
                    continue;
                }
                d = lock(&self.shared.done);
                if !d.done.is_empty() {
                    continue;
                }
            }
            d.wanted = min - n;
            while d.wanted > 0 {
                d = self
                    .shared
                    .reaped
                    .wait(d)
                    .unwrap_or_else(|p| p.into_inner());
            }
        }
    }
}

impl<R: Work> Drop for Pool<R> {
    fn drop(&mut self) {
        // Workers finish what is queued (buffers stay reserved until then) and exit.
        lock(&self.shared.run).shutdown = true;
        self.shared.work.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A pool as an engine drives it: the batch `queue` builds, what is in flight, and the depth
/// limit (`queue` answers Busy when full). Shared by guasi and the offload adapter.
pub struct Queue<R: Work> {
    pool: Pool<R>,
    pending: Vec<R>,
    inflight: usize,
    depth: usize,
}

impl<R: Work> Queue<R> {
    pub fn new(pool: Pool<R>, depth: usize) -> Queue<R> {
        Queue {
            pool,
            pending: Vec::with_capacity(depth),
            inflight: 0,
            depth,
        }
    }

    pub fn pool(&self) -> &Pool<R> {
        &self.pool
    }

    /// Requests handed to the workers and not reaped yet.
    pub fn in_flight(&self) -> usize {
        self.inflight
    }

    /// `depth` requests are queued or in flight: reap before queueing more.
    pub fn full(&self) -> bool {
        self.pending.len() + self.inflight >= self.depth
    }

    /// Add a request to the batch the next `commit` hands over.
    pub fn push(&mut self, req: R) {
        self.pending.push(req);
    }

    /// Hand the batch to the workers; returns how many requests it held.
    pub fn commit(&mut self) -> usize {
        let n = self.pending.len();
        self.inflight += n;
        self.pool.submit(&mut self.pending);
        n
    }

    /// [`Pool::reap`], never waiting for more than is in flight.
    pub fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> usize {
        let n = self.pool.reap(min.min(self.inflight), max, out);
        self.inflight -= n;
        n
    }
}
