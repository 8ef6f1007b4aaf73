//! `guasi` (alias `threads`): fiox's userspace asynchronous syscall engine, after Davide
//! Libenzi's GUASI idea. A pool of worker threads runs the blocking syscalls (pread/pwrite,
//! preadv2/pwritev2 with RWF flags, fsync/fdatasync, trims) for a submitting thread that never
//! blocks on I/O, which makes buffered I/O truly asynchronous where kernel AIO is not (libaio
//! does buffered I/O inside io_submit).
//!
//! The worker pool itself lives in `pool.rs` ([`Pool`], shared with `io_submit_mode=offload`);
//! this module runs plain syscalls on it. Its knobs are `guasi_workers`, `guasi_submit`
//! (offload|inline), `guasi_kick` (batch|each) and `guasi_reap_runs` ([`PoolConfig`]).

pub use super::pool::{Pool, PoolConfig};
use super::pool::{Queue, Work};
use crate::blocking::sync::{probe_rwf, Rwf};
use crate::target::{replace, run_positional, target, Target};
use crate::{Completion, EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

/// One syscall for a worker to run.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// Echoed back as [`Completion::unit`].
    pub tag: u32,
    /// The operation, its offset and its memory (a [`crate::BufSpan`] carries its bounds).
    pub unit: IoUnit,
    pub fd: std::os::fd::RawFd,
    /// RWF_* flags for preadv2/pwritev2; 0 uses pread/pwrite.
    pub rwf: i32,
}

impl Request {
    /// Run the syscall in the calling thread: bytes, `0` for syncs, or `-errno`.
    pub fn execute(&self) -> Completion {
        let t = Target { fd: self.fd };
        Completion {
            unit: self.tag,
            result: run_positional(t, &self.unit, self.rwf),
        }
    }
}

impl Work for Request {
    type Ctx = ();
    fn run(self, _: &()) -> Completion {
        self.execute()
    }
}

impl Pool<Request> {
    /// A pool of `cfg.workers` syscall threads (`fiox-guasi-<i>`).
    pub fn new(cfg: PoolConfig) -> std::io::Result<Pool<Request>> {
        Pool::with_context(cfg, "fiox-guasi", ())
    }
}

/// The `guasi` engine: [`Pool`] behind the queue/commit/getevents trait.
pub(crate) struct GuasiEngine {
    queue: Queue<Request>,
    files: Vec<Target>,
    rwf: Rwf,
}

impl GuasiEngine {
    pub fn new(job: &fiox_job::spec::JobSpec) -> Result<GuasiEngine, EngineError> {
        let o = &job.engine;
        let depth = job.iodepth.max(1) as usize;
        let workers = match o.guasi_workers {
            Some(0) => {
                return Err(EngineError::Option {
                    engine: "guasi",
                    option: "guasi_workers",
                    reason: "must be at least 1".into(),
                })
            }
            Some(w) => w as usize,
            // One worker per outstanding I/O keeps the device queue as deep as asked; past 64
            // threads the context switching costs more than the extra depth brings.
            None => depth.min(64),
        };
        let cfg = PoolConfig {
            workers,
            offload: o.guasi_submit_offload,
            kick_each: o.guasi_kick_each,
            reap_runs: o.guasi_reap_runs,
        };
        let pool = Pool::new(cfg).map_err(|source| EngineError::Os {
            engine: "guasi",
            what: format!("starting {workers} worker threads"),
            source,
        })?;
        Ok(GuasiEngine {
            queue: Queue::new(pool, depth),
            files: Vec::new(),
            rwf: Rwf::from_options(o, job.direct),
        })
    }
}

impl IoEngine for GuasiEngine {
    fn name(&self) -> &'static str {
        "guasi"
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags::default()
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        probe_rwf("guasi", file, &self.rwf.options())?;
        self.files.push(Target::of(file));
        Ok(())
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        probe_rwf("guasi", file, &self.rwf.options())?;
        replace("guasi", &mut self.files, index, file)
    }

    fn queue(&mut self, id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let t = target("guasi", &self.files, io.file)?;
        if self.queue.full() {
            return Ok(Queued::Busy);
        }
        let rwf = match io.op {
            IoOp::Read | IoOp::Write => self.rwf.next(),
            _ => 0,
        };
        self.queue.push(Request {
            tag: id,
            unit: *io,
            fd: t.fd,
            rwf,
        });
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
        Ok(self.queue.reap(min, max, out))
    }

    fn helper_threads(&self) -> Vec<libc::pid_t> {
        self.queue.pool().thread_ids().to_vec()
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::span_of;
    use std::os::fd::AsRawFd;

    fn cfg(workers: usize, offload: bool, kick_each: bool, reap_runs: bool) -> PoolConfig {
        PoolConfig {
            workers,
            offload,
            kick_each,
            reap_runs,
        }
    }

    fn all_modes() -> Vec<PoolConfig> {
        let mut v = Vec::new();
        for offload in [true, false] {
            for kick in [false, true] {
                for runs in [false, true] {
                    v.push(cfg(3, offload, kick, runs));
                }
            }
        }
        v
    }

    /// Write then read back 64 blocks through the pool in every mode.
    #[test]
    fn pool_moves_data_in_every_mode() {
        let dir = std::env::temp_dir().join(format!("fiox-guasi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (k, c) in all_modes().into_iter().enumerate() {
            let path = dir.join(format!("f{k}"));
            let f = std::fs::OpenOptions::new()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            let pool = Pool::new(c).unwrap();
            let mut bufs = crate::BufPool::new(128, 512, 512).unwrap();
            for i in 0..64 {
                bufs.slice_mut(i).fill(i as u8 + 1);
            }
            let req = |i: usize, op, slot: usize| Request {
                tag: i as u32,
                unit: IoUnit::transfer(op, 0, i as u64 * 512, bufs.span(slot, 0, 512).unwrap()),
                fd: f.as_raw_fd(),
                rwf: 0,
            };
            for op in [IoOp::Write, IoOp::Read] {
                let slot = |i| if op == IoOp::Write { i } else { 64 + i };
                let mut batch: Vec<Request> = (0..64).map(|i| req(i, op, slot(i))).collect();
                pool.submit(&mut batch);
                assert!(batch.is_empty());
                let mut out = Vec::new();
                assert_eq!(pool.reap(64, 64, &mut out), 64);
                let mut tags: Vec<u32> = out.iter().map(|c| c.unit).collect();
                tags.sort();
                assert_eq!(tags, (0..64).collect::<Vec<u32>>(), "{c:?}");
                assert!(out.iter().all(|c| c.result == 512), "{c:?}");
            }
            for i in 0..64 {
                assert!(
                    bufs.slice(64 + i).iter().all(|&b| b == i as u8 + 1),
                    "{c:?}"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reap_with_min_zero_never_blocks_and_errors_come_back() {
        let pool = Pool::new(cfg(2, true, false, false)).unwrap();
        let mut out = Vec::new();
        assert_eq!(pool.reap(0, 8, &mut out), 0);
        let mut b = [0u8; 16];
        let mut batch = vec![Request {
            tag: 7,
            // SAFETY: `b` outlives the request, reaped before the test ends.
            unit: IoUnit::transfer(IoOp::Read, 0, 0, unsafe { span_of(&mut b) }),
            fd: -1,
            rwf: 0,
        }];
        pool.submit(&mut batch);
        assert_eq!(pool.reap(1, 8, &mut out), 1);
        assert_eq!(out[0].unit, 7);
        assert_eq!(out[0].result, -(libc::EBADF as i64));
    }

    fn threads_of_process() -> usize {
        std::fs::read_dir("/proc/self/task").unwrap().count()
    }

    /// Seed 004 ran depths up to 10000: guasi's default pool must not become one thread per
    /// outstanding I/O (10000 threads), only an explicit guasi_workers may ask for more.
    #[test]
    fn depth_10000_starts_a_bounded_pool() {
        let job = fiox_job::spec::JobSpec {
            iodepth: 10_000,
            ..Default::default()
        };
        let before = threads_of_process();
        let e = GuasiEngine::new(&job).unwrap();
        let during = threads_of_process();
        assert_eq!(e.helper_threads().len(), 64);
        // Other tests of this binary start and stop threads meanwhile: allow for them, far
        // below the 10000 an unbounded pool would add.
        assert!(
            during < before + 64 + 200,
            "{before} threads before, {during} with the engine"
        );
        drop(e);
        let mut explicit = job.clone();
        explicit.engine.guasi_workers = Some(100);
        let e = GuasiEngine::new(&explicit).unwrap();
        assert_eq!(e.helper_threads().len(), 100, "guasi_workers is obeyed");
    }

    /// A guasi engine on a fresh 64 KiB file at `path`.
    fn engine_on(
        path: &std::path::Path,
        depth: u32,
        offload: bool,
        workers: u32,
    ) -> (GuasiEngine, std::fs::File) {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        f.set_len(64 * 1024).unwrap();
        let mut job = fiox_job::spec::JobSpec {
            iodepth: depth,
            ..Default::default()
        };
        job.engine.guasi_workers = Some(workers);
        job.engine.guasi_submit_offload = offload;
        let mut e = GuasiEngine::new(&job).unwrap();
        let ef = EngineFile {
            fd: f.as_raw_fd(),
            path: path.to_path_buf(),
            size: 64 * 1024,
            writable: true,
        };
        e.add_file(&ef).unwrap();
        (e, f)
    }

    /// Drive the engine like the runner at its defaults (iodepth_batch_submit=1,
    /// iodepth_batch_complete_max=1): fill the queue one commit per unit, then reap one and
    /// re-issue it, `rounds` times. Returns the order in which units completed.
    fn runner_like(
        e: &mut GuasiEngine,
        bufs: &crate::BufPool,
        depth: u32,
        rounds: usize,
    ) -> Vec<u32> {
        let unit = |id: u32| {
            IoUnit::transfer(
                IoOp::Read,
                0,
                u64::from(id) * 512,
                bufs.span(id as usize, 0, 512).unwrap(),
            )
        };
        for id in 0..depth {
            assert_eq!(e.queue(id, &unit(id)).unwrap(), Queued::Queued);
            assert_eq!(e.commit().unwrap(), 1);
        }
        let mut order = Vec::new();
        let mut out = Vec::new();
        for _ in 0..rounds {
            out.clear();
            assert_eq!(e.getevents(1, 1, &mut out).unwrap(), 1);
            let id = out[0].unit;
            assert_eq!(out[0].result, 512);
            order.push(id);
            assert_eq!(e.queue(id, &unit(id)).unwrap(), Queued::Queued);
            e.commit().unwrap();
        }
        out.clear();
        while e.queue.in_flight() > 0 {
            e.getevents(1, depth as usize, &mut out).unwrap();
        }
        order
    }

    /// Regression: inline mode used to hand out the request it ran at commit before older
    /// completions, so with one completion reaped per call the first `depth - 1` I/Os stayed
    /// queued until the end of the run. Completions must come back oldest first.
    #[test]
    fn inline_completions_are_not_starved_by_newer_ones() {
        let dir = std::env::temp_dir().join(format!("fiox-guasi-starve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bufs = crate::BufPool::new(8, 512, 512).unwrap();
        let (mut e, _f) = engine_on(&dir.join("f"), 8, false, 2);
        let order = runner_like(&mut e, &bufs, 8, 24);
        // With a single submitted unit per commit, inline mode runs every request at commit,
        // so the completion order is exactly the submission order.
        let want: Vec<u32> = (0..24).map(|i| i % 8).collect();
        assert_eq!(order, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Offload mode under the same driving: every queued unit completes without new
    /// submissions having to push it out (each one is reaped within the rounds). One worker
    /// makes the order deterministic: with several, a re-queued unit may legitimately finish
    /// before an older one whose worker was preempted, which says nothing about starvation.
    #[test]
    fn offload_completes_every_unit_under_one_at_a_time_reaping() {
        let dir = std::env::temp_dir().join(format!("fiox-guasi-offl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bufs = crate::BufPool::new(8, 512, 512).unwrap();
        let (mut e, _f) = engine_on(&dir.join("f"), 8, true, 1);
        let order = runner_like(&mut e, &bufs, 8, 8);
        let mut seen = order.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(
            seen.len(),
            8,
            "every unit comes back once in 8 reaps: {order:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Single-request commits while signalled workers have not woken yet (the submitter then
    /// skips its wake-up and relies on the woken workers): nothing may be left sleeping in the
    /// run list. A lost wake-up would hang `reap`.
    #[test]
    fn one_at_a_time_submits_never_strand_requests() {
        for workers in [1, 2, 16] {
            let pool = Pool::new(cfg(workers, true, false, false)).unwrap();
            let mut b = [0u8; 8];
            let mut out = Vec::new();
            let mut inflight = 0;
            for i in 0..3000u32 {
                let mut batch = vec![Request {
                    tag: i,
                    // SAFETY: `b` outlives the request, reaped before the test ends.
                    unit: IoUnit::transfer(IoOp::Read, 0, 0, unsafe { span_of(&mut b) }),
                    fd: -1,
                    rwf: 0,
                }];
                pool.submit(&mut batch);
                inflight += 1;
                if inflight == 24 {
                    inflight -= pool.reap(1, 1, &mut out);
                }
            }
            while inflight > 0 {
                inflight -= pool.reap(1, 64, &mut out);
            }
            let mut tags: Vec<u32> = out.iter().map(|c| c.unit).collect();
            tags.sort();
            assert_eq!(tags, (0..3000).collect::<Vec<u32>>(), "workers={workers}");
        }
    }

    #[test]
    fn default_submission_is_offload() {
        assert!(
            fiox_job::spec::JobSpec::default()
                .engine
                .guasi_submit_offload
        );
    }

    #[test]
    fn zero_workers_is_an_option_error() {
        let mut job = fiox_job::spec::JobSpec::default();
        job.engine.guasi_workers = Some(0);
        let e = GuasiEngine::new(&job).err().unwrap();
        assert!(e.to_string().contains("guasi_workers"), "{e}");
    }
}
