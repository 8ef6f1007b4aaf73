//! Prints the cost of `Generator::next` (ns per generated I/O) for common job shapes, as
//! wall-clock and as CPU time of this process (from /proc/self/schedstat, so the figure holds
//! on a busy machine). Run with `cargo run --release -p fiox-workload --example gen_speed`.
//! Timings are informational only.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use std::time::Instant;

use fiox_job::{BsSpec, JobSpec, PerDir, RandomGenerator, RwMode, RwSpec, SizeSpec};
use fiox_workload::{BufferFiller, FileExtent, Generator};

const GIB: u64 = 1 << 30;

/// CPU time consumed by this process so far, in ns (0 when /proc is unavailable).
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// Runs `f` (which reports how many operations it did) and prints wall and CPU ns per op.
fn timed(name: &str, unit: &str, f: impl FnOnce() -> u64) {
    let (c0, t0) = (cpu_ns(), Instant::now());
    let n = f();
    let wall = t0.elapsed().as_nanos() as f64 / n as f64;
    let cpu = (cpu_ns() - c0) as f64 / n as f64;
    println!("{name:<28} {n:>9} {unit}  wall {wall:6.1} ns/op  cpu {cpu:6.1} ns/op");
}

fn job(mode: RwMode) -> JobSpec {
    JobSpec {
        rw: RwSpec { mode, n: 0 },
        size: Some(SizeSpec::Bytes(4 * GIB)),
        ..JobSpec::default()
    }
}

/// Generates one full pass and returns (I/Os, ns per I/O).
fn measure(name: &str, j: &JobSpec) {
    let files = [FileExtent {
        offset: 0,
        size: 4 * GIB,
    }];
    let mut g = Generator::new(j, &files, 4 * GIB).expect("valid job");
    timed(name, "I/Os ", || {
        let mut n = 0u64;
        let mut sum = 0u64;
        while let Some(io) = g.next() {
            n += 1;
            sum = sum.wrapping_add(io.offset);
        }
        std::hint::black_box(sum);
        n
    });
}

fn main() {
    measure("read 4k", &job(RwMode::Read));
    measure("randread 4k (map)", &job(RwMode::RandRead));
    let mut j = job(RwMode::RandRead);
    j.rand.norandommap = true;
    measure("randread 4k norandommap", &j);
    j.rand.norandommap = false;
    j.rand.generator = RandomGenerator::Lfsr;
    measure("randread 4k lfsr", &j);
    let mut j = job(RwMode::RandRw);
    j.rwmixread = 70;
    measure("randrw 70/30 4k (map)", &j);
    let mut j = job(RwMode::RandWrite);
    j.bs = PerDir::all(BsSpec {
        min: 4096,
        max: 65536,
        split: vec![(4096, 50), (16384, 30), (65536, 20)],
    });
    measure("randwrite bssplit (map)", &j);

    let spec = JobSpec::default().buffers;
    let mut f = BufferFiller::new(&spec, 1);
    let mut buf = vec![0u8; 4096];
    f.fill(&mut buf, true);
    let n = 1_000_000;
    timed("scramble 4k buffer", "fills", || {
        for _ in 0..n {
            f.fill(&mut buf, false);
        }
        n
    });
    let mut r = spec.clone();
    r.refill_buffers = true;
    let mut f = BufferFiller::new(&r, 1);
    timed("refill 4k buffer", "fills", || {
        for _ in 0..n {
            f.fill(&mut buf, false);
        }
        n
    });
}
