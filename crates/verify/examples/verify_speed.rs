//! Throughput of each verify method: `fill_write` (generate data + checksum + header) and
//! `check` (checksum + header checks) on blocks held in memory, in MB/s (10^6 bytes/s).
//!
//! Run: `cargo run --release -p fiox-verify --example verify_speed [block_size] [MiB per method]`
//! (defaults 131072 and 256).

use fiox_job::spec::{JobSpec, VerifyMethod};
use fiox_verify::{Expect, Verifier};
use std::time::Instant;

const METHODS: [VerifyMethod; 15] = [
    VerifyMethod::Crc32c,
    VerifyMethod::Xxhash,
    VerifyMethod::Crc64,
    VerifyMethod::Crc32,
    VerifyMethod::Crc16,
    VerifyMethod::Crc7,
    VerifyMethod::Md5,
    VerifyMethod::Sha1,
    VerifyMethod::Sha256,
    VerifyMethod::Sha512,
    VerifyMethod::Sha3_256,
    VerifyMethod::Sha3_512,
    VerifyMethod::PatternHdr,
    VerifyMethod::Pattern,
    VerifyMethod::Null,
];

fn main() {
    let mut args = std::env::args().skip(1);
    let bs: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(128 * 1024);
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(256);
    let blocks = ((mib << 20) / bs).max(1);
    // A 64 MiB pool, larger than CPU caches, so data comes from memory as after a real read.
    let pool_blocks = ((64 << 20) / bs).clamp(1, blocks);
    // Written up front so page faults are not timed.
    let mut pool = vec![0x5au8; pool_blocks * bs];
    println!("block size {bs}, {blocks} blocks ({mib} MiB) per method and direction");
    println!("{:<12} {:>14} {:>14}", "method", "fill MB/s", "check MB/s");
    for m in METHODS {
        let mut spec = JobSpec::default().verify;
        spec.method = m;
        spec.verify_pattern = b"\xde\xad\xbe\xef".to_vec();
        let v = match Verifier::new(&spec, 1, 42) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{m:?}: {e}");
                continue;
            }
        };
        let t = Instant::now();
        for b in 0..blocks {
            let p = b % pool_blocks;
            v.fill_write(
                &mut pool[p * bs..(p + 1) * bs],
                (p * bs) as u64,
                p as u64 + 1,
                0,
            )
            .expect("block size valid for every method");
        }
        let fill = rate(blocks * bs, t);
        let t = Instant::now();
        let mut bad = 0usize;
        for b in 0..blocks {
            let p = b % pool_blocks;
            let blk = &pool[p * bs..(p + 1) * bs];
            bad += usize::from(
                v.check(blk, (p * bs) as u64, Expect::Seq(p as u64 + 1))
                    .is_err(),
            );
        }
        let check = rate(blocks * bs, t);
        assert_eq!(bad, 0, "{m:?}: freshly written block failed verification");
        println!("{:<12} {:>14.0} {:>14.0}", v.method_name(), fill, check);
    }
}

fn rate(bytes: usize, t: Instant) -> f64 {
    bytes as f64 / t.elapsed().as_secs_f64() / 1e6
}
