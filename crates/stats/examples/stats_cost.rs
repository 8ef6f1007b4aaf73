//! Per-I/O cost of the statistics the runner updates on every completion: `Histogram::record`,
//! `LatStat::add` (Welford + histogram), `LatBuckets::add` and a due-check of `RateSampler`.
//! Run with `cargo run -p fiox-stats --release --example stats_cost`; prints the best of 5 runs
//! in ns per call (includes the loop itself, shown first).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::Ddir;
use fiox_stats::{Histogram, LatBuckets, LatStat, RateSampler};
use std::hint::black_box;
use std::time::Instant;

const LEN: usize = 1 << 20;
const ROUNDS: usize = 40;

/// Pseudo-random latencies spread over 1 us .. 1 ms, so the bucket indexes vary.
fn values() -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..LEN)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1000 + (x % 1_000_000)
        })
        .collect()
}

/// Best of 5 runs of ROUNDS passes over the values, in ns per call.
fn time(name: &str, vals: &[u64], mut f: impl FnMut(u64)) {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..ROUNDS {
            for &v in vals {
                f(black_box(v));
            }
        }
        best = best.min(t.elapsed().as_nanos() as f64 / (ROUNDS * vals.len()) as f64);
    }
    println!("{name:<28} {best:6.2} ns/call");
}

fn main() {
    let vals = values();
    let mut sum = 0u64;
    time("(loop alone)", &vals, |v| sum = sum.wrapping_add(v));
    black_box(sum);
    let mut h = Histogram::new();
    time("Histogram::record", &vals, |v| h.record(v));
    black_box(&h);
    let mut l = LatStat::default();
    time("LatStat::add", &vals, |v| l.add(v));
    black_box(&l);
    let mut b = LatBuckets::default();
    time("LatBuckets::add", &vals, |v| b.add(v));
    black_box(&b);
    let mut s = RateSampler::new(Ddir::Read, 0, 500, 500);
    let mut bytes = 0u64;
    time("RateSampler::tick (not due)", &vals, |v| {
        bytes += 4096;
        s.tick(v, bytes, bytes / 4096)
    });
    black_box(&s);
}
