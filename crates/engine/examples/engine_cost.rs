//! Per-I/O cost of an engine's hot path, without the runner: 4k random reads (or writes) through
//! queue/commit/getevents on a file, reported as ns per I/O and I/Os per second.
//!
//! ENGINE `bare-pread` is a plain pread loop with the same offsets: the floor the psync engine
//! is compared with.
//!
//! Usage: engine_cost [ENGINE] [FILE_DIR] [SECONDS] [IODEPTH] [read|write] [OPTS]
//! OPTS: comma-separated engine options, e.g. `fixedbufs,registerfiles,nonvectored=1`,
//! `guasi_submit=inline,guasi_kick=each,guasi_reap_runs,guasi_workers=4`, `direct`.
//! defaults: null /dev/shm 2 1 read. Example: `cargo run --release -p fiox-engine --example
//! engine_cost -- psync /dev/shm 3`.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fiox_engine::{create, open_file, BufPool, Completion, EngineFile, IoOp, IoUnit, OpenSpec};
use fiox_job::spec::{JobSpec, SyncMode};

const FILE_SIZE: u64 = 256 << 20;
const BS: u32 = 4096;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let engine = args.get(1).map_or("null", String::as_str).to_string();
    let dir = PathBuf::from(args.get(2).map_or("/dev/shm", String::as_str));
    let secs: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let depth: u32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
    let op = if args.get(5).map(String::as_str) == Some("write") {
        IoOp::Write
    } else {
        IoOp::Read
    };
    let opts = args.get(6).map_or("", String::as_str);
    let mut job = JobSpec {
        iodepth: depth,
        ..JobSpec::default()
    };
    if let Err(e) = apply_opts(&mut job, opts).and_then(|()| run(&engine, &dir, secs, job, op)) {
        eprintln!("engine_cost: {e}");
        std::process::exit(1);
    }
}

/// Engine options for A/B runs (a tiny subset of the job parser, for this tool only).
fn apply_opts(job: &mut JobSpec, opts: &str) -> Result<(), String> {
    let o = &mut job.engine;
    for kv in opts.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, "1"));
        let n = || v.parse::<u32>().map_err(|_| format!("{k}: bad number {v}"));
        match k {
            "direct" => job.direct = v == "1",
            "fixedbufs" => o.fixedbufs = v == "1",
            "registerfiles" => o.registerfiles = v == "1",
            "sqthread_poll" => o.sqthread_poll = v == "1",
            "nonvectored" => o.nonvectored = v.parse().map_err(|_| format!("bad {kv}"))?,
            "force_async" => o.force_async = n()?,
            "userspace_reap" => o.userspace_reap = v == "1",
            "nowait" => o.nowait = v == "1",
            "guasi_workers" => o.guasi_workers = Some(n()?),
            "guasi_submit" => o.guasi_submit_offload = v == "offload",
            "guasi_kick" => o.guasi_kick_each = v == "each",
            "guasi_reap_runs" => o.guasi_reap_runs = v == "1",
            _ => return Err(format!("unknown option {k}")),
        }
    }
    Ok(())
}

fn run(
    engine: &str,
    dir: &std::path::Path,
    secs: f64,
    job: JobSpec,
    op: IoOp,
) -> Result<(), String> {
    let bare = engine == "bare-pread";
    let depth = job.iodepth;
    let job = JobSpec {
        ioengine: if bare { "psync" } else { engine }.into(),
        ..job
    };
    let mut e = create(&job).map_err(|e| e.to_string())?;
    let path = dir.join(format!("fiox-engine-cost-{}", std::process::id()));
    let spec = OpenSpec {
        write: true,
        create: true,
        direct: job.direct,
        atomic: false,
        sync: SyncMode::None,
    };
    let f = open_file(&path, &spec).map_err(|e| e.to_string())?;
    let result = (|| {
        fiox_engine::sys::ftruncate(f.as_raw_fd(), FILE_SIZE).map_err(|e| e.to_string())?;
        // Fill the file so reads measure the engine, not holes (written through a buffered
        // descriptor: the measured one may be O_DIRECT).
        let chunk = vec![0x5au8; 1 << 20];
        let plain = std::fs::OpenOptions::new().write(true).open(&path);
        let plain = plain.map_err(|e| e.to_string())?;
        for i in 0..FILE_SIZE / (1 << 20) {
            std::os::unix::fs::FileExt::write_at(&plain, &chunk, i << 20)
                .map_err(|e| e.to_string())?;
        }
        e.add_file(&EngineFile {
            fd: f.as_raw_fd(),
            path: path.clone(),
            size: FILE_SIZE,
            writable: true,
        })
        .map_err(|e| e.to_string())?;
        let pool = BufPool::new(depth as usize, BS as usize, 4096)?;
        e.register_buffers(&pool).map_err(|e| e.to_string())?;
        let (ios, elapsed) = if bare {
            bare_pread(f.as_raw_fd(), &pool, secs)
        } else {
            drive(e.as_mut(), &pool, depth as usize, op, secs)?
        };
        let ns = elapsed.as_nanos() as f64 / ios as f64;
        println!(
            "{engine} {op:?} bs=4k iodepth={depth} dir={} {}: {ios} I/Os in {:.2}s = {:.0} ns/IO, {:.0} IOPS",
            dir.display(),
            if job.direct { "direct" } else { "buffered" },
            elapsed.as_secs_f64(),
            ns,
            1e9 / ns
        );
        Ok(())
    })();
    let _ = std::fs::remove_file(&path);
    result
}

/// Keep `depth` units in flight for `secs`, random 4k-aligned offsets (xorshift).
fn drive(
    e: &mut dyn fiox_engine::IoEngine,
    pool: &BufPool,
    depth: usize,
    op: IoOp,
    secs: f64,
) -> Result<(u64, Duration), String> {
    let blocks = FILE_SIZE / BS as u64;
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut free: Vec<u32> = (0..depth as u32).collect();
    let mut events: Vec<Completion> = Vec::with_capacity(depth);
    let mut ios = 0u64;
    let mut inflight = 0usize;
    let start = Instant::now();
    let limit = Duration::from_secs_f64(secs);
    let mut rounds = 0u32;
    loop {
        // Check the clock only every 1024 rounds: the point is the engine's cost.
        rounds = rounds.wrapping_add(1);
        if rounds & 1023 == 0 && start.elapsed() >= limit {
            break;
        }
        while let Some(slot) = free.pop() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let io = IoUnit::transfer(
                op,
                0,
                (rng % blocks) * BS as u64,
                pool.span(slot as usize, 0, BS).unwrap(),
            );
            match e.queue(slot, &io).map_err(|e| e.to_string())? {
                fiox_engine::Queued::Done(r) => {
                    check(r)?;
                    ios += 1;
                    free.push(slot);
                    break;
                }
                fiox_engine::Queued::Queued => inflight += 1,
                fiox_engine::Queued::Busy => {
                    free.push(slot);
                    break;
                }
            }
        }
        if inflight > 0 {
            e.commit().map_err(|e| e.to_string())?;
            events.clear();
            e.getevents(1, depth, &mut events)
                .map_err(|e| e.to_string())?;
            for c in &events {
                check(c.result)?;
                free.push(c.unit);
                inflight -= 1;
                ios += 1;
            }
        }
    }
    // Drain what is still in flight before the buffers go away.
    while inflight > 0 {
        events.clear();
        inflight -= e
            .getevents(1, depth, &mut events)
            .map_err(|e| e.to_string())?;
    }
    Ok((ios, start.elapsed()))
}

/// The same offsets as `drive`, straight pread calls.
fn bare_pread(fd: i32, pool: &BufPool, secs: f64) -> (u64, Duration) {
    let blocks = FILE_SIZE / BS as u64;
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let buf = pool.slot(0).as_ptr();
    let mut ios = 0u64;
    let start = Instant::now();
    let limit = Duration::from_secs_f64(secs);
    while ios & 1023 != 0 || start.elapsed() < limit {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let off = ((rng % blocks) * BS as u64) as libc::off_t;
        // SAFETY: buf is a live 4096-byte slot of the pool.
        unsafe { libc::pread(fd, buf.cast(), BS as usize, off) };
        ios += 1;
    }
    (ios, start.elapsed())
}

fn check(r: i64) -> Result<(), String> {
    if r < 0 {
        return Err(format!(
            "I/O failed: {}",
            fiox_engine::errno_name(-r as i32)
        ));
    }
    Ok(())
}
