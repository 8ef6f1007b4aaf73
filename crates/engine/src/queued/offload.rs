//! `io_submit_mode=offload` for any engine: the job thread hands each I/O to a pool of submit
//! threads and returns at once; each thread drives its own instance of the job's engine at
//! depth 1 (queue, commit, wait for the one completion), as fio's offload workers do. The job
//! thread's submit latency becomes the cost of a hand-off, whatever the engine does inside.
//!
//! One engine instance per thread (`iodepth` of them), so engines keep their per-file state
//! (mappings, registered files, AIO contexts) private to one thread. fio refuses io_uring here;
//! fiox runs it like any other engine (each thread gets its own ring).

use std::cell::Cell;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use super::pool::{Pool, PoolConfig, Queue, Work};
use crate::{BufPool, Completion, EngineError, EngineFile, EngineFlags, IoEngine, IoUnit, Queued};

/// One engine instance and its completion buffer, owned by whichever thread holds the lock.
struct Slot {
    engine: Box<dyn IoEngine>,
    out: Vec<Completion>,
    /// Engines that seek (sync, vsync) get their own open file description of each file, so
    /// one thread's lseek cannot move another's position; by file index, None when shared.
    own: Vec<Option<std::fs::File>>,
}

impl Slot {
    /// The file as this slot's engine should see it: with a private fd when `seeks`.
    fn file_for(
        &mut self,
        index: usize,
        file: &EngineFile,
        seeks: bool,
    ) -> Result<EngineFile, EngineError> {
        if self.own.len() <= index {
            self.own.resize_with(index + 1, || None);
        }
        self.own[index] = None;
        let mut f = file.clone();
        if seeks && file.fd >= 0 {
            let copy = crate::sys::reopen_fd(file.fd).map_err(|source| EngineError::File {
                path: file.path.clone(),
                what: "io_submit_mode=offload: cannot reopen for a submit thread".into(),
                source,
            })?;
            f.fd = copy.as_raw_fd();
            self.own[index] = Some(copy);
        }
        Ok(f)
    }
}

/// The engines the submit threads share, and the first error one of them hit.
pub(crate) struct Engines {
    slots: Vec<Mutex<Slot>>,
    /// The engine reads and writes at the file position (sync, vsync).
    seeks: bool,
    next: AtomicUsize,
    failure: Mutex<Option<EngineError>>,
}

thread_local! {
    /// The slot this thread used last: each submit thread settles on one engine.
    static HINT: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Engines {
    /// Run `f` on a free engine: this thread's usual one, else any free one, else wait for the
    /// usual one. There are as many engines as submit threads, so waiting is rare.
    fn with_free<T>(&self, f: impl FnOnce(&mut Slot) -> T) -> T {
        let n = self.slots.len();
        let hint = HINT.with(|h| {
            if h.get() >= n {
                h.set(self.next.fetch_add(1, Ordering::Relaxed) % n);
            }
            h.get()
        });
        for k in 0..n {
            let i = (hint + k) % n;
            let guard = match self.slots[i].try_lock() {
                Ok(g) => g,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => continue,
            };
            HINT.with(|h| h.set(i));
            let mut guard = guard;
            return f(&mut guard);
        }
        f(&mut lock(&self.slots[hint]))
    }

    /// Apply `f` to every engine in turn (files, buffers); stops at the first error.
    fn each(
        &self,
        mut f: impl FnMut(&mut Slot) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        for s in &self.slots {
            f(&mut lock(s))?;
        }
        Ok(())
    }

    fn fail(&self, e: EngineError) {
        lock(&self.failure).get_or_insert(e);
    }
}

/// One I/O on its way to a submit thread.
pub(crate) struct Offloaded {
    id: u32,
    unit: IoUnit,
}

impl Work for Offloaded {
    type Ctx = Engines;

    fn run(self, ctx: &Engines) -> Completion {
        let result = ctx.with_free(|slot| drive(slot, self.id, &self.unit));
        Completion {
            unit: self.id,
            result: result.unwrap_or_else(|e| {
                // The job thread returns the error from its next getevents; the unit still
                // completes (with the error's errno) so nothing waits for it forever.
                let errno = os_errno(&e).unwrap_or(libc::EIO);
                ctx.fail(e);
                -i64::from(errno)
            }),
        }
    }
}

/// Take one unit through a depth-1 engine: queue, commit, wait for its completion.
fn drive(slot: &mut Slot, id: u32, unit: &IoUnit) -> Result<i64, EngineError> {
    let engine = slot.engine.as_mut();
    match engine.queue(id, unit)? {
        Queued::Done(r) => Ok(r),
        Queued::Queued => {
            engine.commit()?;
            slot.out.clear();
            if engine.getevents(1, 1, &mut slot.out)? == 0 {
                return Err(stalled(
                    engine.name(),
                    "returned no completion for a committed I/O",
                ));
            }
            Ok(slot.out[0].result)
        }
        // Nothing else is in flight on this engine, so nothing could make room.
        Queued::Busy => Err(stalled(
            engine.name(),
            "refused an I/O with nothing in flight",
        )),
    }
}

fn os_errno(e: &EngineError) -> Option<i32> {
    match e {
        EngineError::Os { source, .. } | EngineError::File { source, .. } => source.raw_os_error(),
        _ => None,
    }
}

fn stalled(engine: &'static str, what: &str) -> EngineError {
    EngineError::Os {
        engine,
        what: format!("io_submit_mode=offload: the engine {what}"),
        source: std::io::Error::from_raw_os_error(libc::EBUSY),
    }
}

/// The adapter the runner sees: queue/commit/getevents over the submit threads.
pub(crate) struct OffloadEngine {
    name: &'static str,
    flags: EngineFlags,
    queue: Queue<Offloaded>,
}

impl OffloadEngine {
    /// One submit thread per engine in `engines` (the job's engine at depth 1, one instance
    /// each, built by the factory: this module drives engines, it does not choose them).
    pub fn new(engines: Vec<Box<dyn IoEngine>>) -> Result<OffloadEngine, EngineError> {
        if engines.is_empty() {
            return Err(EngineError::Option {
                engine: "offload",
                option: "iodepth",
                reason: "io_submit_mode=offload needs at least one submit thread".into(),
            });
        }
        let depth = engines.len();
        let mut slots = Vec::with_capacity(depth);
        for engine in engines {
            slots.push(Mutex::new(Slot {
                engine,
                out: Vec::with_capacity(1),
                own: Vec::new(),
            }));
        }
        let (first, inner) = {
            let s = lock(&slots[0]);
            (s.engine.name(), s.engine.flags())
        };
        // Completions come from getevents; each thread's engine has its own file descriptions.
        let flags = EngineFlags {
            sync: false,
            no_io: inner.no_io,
            seeks: false,
            file_ops: false,
            zero_bytes: false,
            eof_ends: false,
            batches_rw: false,
        };
        let ctx = Engines {
            seeks: inner.seeks,
            slots,
            next: AtomicUsize::new(0),
            failure: Mutex::new(None),
        };
        let cfg = PoolConfig {
            workers: depth,
            offload: true,
            kick_each: false,
            reap_runs: false,
        };
        let pool =
            Pool::with_context(cfg, "fiox-submit", ctx).map_err(|source| EngineError::Os {
                engine: first,
                what: format!("io_submit_mode=offload: starting {depth} submit threads"),
                source,
            })?;
        Ok(OffloadEngine {
            name: first,
            flags,
            queue: Queue::new(pool, depth),
        })
    }
}

impl IoEngine for OffloadEngine {
    fn name(&self) -> &'static str {
        self.name
    }

    fn flags(&self) -> EngineFlags {
        self.flags
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        let ctx = self.queue.pool().context();
        ctx.each(|s| {
            let index = s.own.len();
            let f = s.file_for(index, file, ctx.seeks)?;
            s.engine.add_file(&f)
        })
    }

    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        if self.queue.full() {
            return Ok(Queued::Busy);
        }
        self.queue.push(Offloaded { id, unit: *io });
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(self.queue.commit())
    }

    fn getevents(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        let n = self.queue.reap(min, max, out);
        match lock(&self.queue.pool().context().failure).take() {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }

    fn close_file(&mut self, index: u32) -> Result<(), EngineError> {
        self.queue.pool().context().each(|s| {
            s.engine.close_file(index)?;
            if let Some(own) = s.own.get_mut(index as usize) {
                *own = None;
            }
            Ok(())
        })
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        let ctx = self.queue.pool().context();
        ctx.each(|s| {
            let f = s.file_for(index as usize, file, ctx.seeks)?;
            s.engine.reopen_file(index, &f)
        })
    }

    fn register_buffers(&mut self, pool: &BufPool) -> Result<(), EngineError> {
        self.queue
            .pool()
            .context()
            .each(|s| s.engine.register_buffers(pool))
    }

    fn helper_threads(&self) -> Vec<libc::pid_t> {
        self.queue.pool().thread_ids().to_vec()
    }
}
