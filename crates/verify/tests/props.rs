//! Property tests: any valid layout round-trips, any single-bit flip anywhere in a block is
//! reported at the interval that holds it, arbitrary bytes never panic the checker or the
//! header / state-file decoders, and the write log agrees with a naive per-granule model.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::spec::{JobSpec, VerifyMethod};
use fiox_verify::{Expect, Header, Verifier, WriteLog};
use proptest::prelude::*;
use std::collections::HashMap;

const METHODS: [VerifyMethod; 17] = [
    VerifyMethod::Md5,
    VerifyMethod::Crc32c,
    VerifyMethod::Crc64,
    VerifyMethod::Sha1,
    VerifyMethod::Sha256,
    VerifyMethod::Sha512,
    VerifyMethod::Xxhash,
    VerifyMethod::Crc32,
    VerifyMethod::Crc16,
    VerifyMethod::Crc7,
    VerifyMethod::Sha3_256,
    VerifyMethod::Sha3_224,
    VerifyMethod::Sha3_384,
    VerifyMethod::Sha3_512,
    VerifyMethod::PatternHdr,
    VerifyMethod::Pattern,
    VerifyMethod::Null,
];

/// A verifier for method index `mi`, interval choice and offset choice; None when that
/// combination is invalid for the method (e.g. interval smaller than its header).
fn verifier(mi: usize, interval: Option<u64>, voff: u64, pat: &[u8]) -> Option<Verifier> {
    let mut s = JobSpec::default().verify;
    s.method = METHODS[mi];
    s.verify_interval = interval;
    s.verify_offset = voff;
    if matches!(s.method, VerifyMethod::Pattern | VerifyMethod::PatternHdr) {
        s.verify_pattern = pat.to_vec();
    }
    Verifier::new(&s, 1, 2).ok()
}

fn layout() -> impl Strategy<Value = (usize, Option<u64>, u64, usize, Vec<u8>)> {
    (
        0..METHODS.len(),
        prop_oneof![Just(None), (0u32..4).prop_map(|s| Some(512u64 << s))],
        prop_oneof![Just(0u64), Just(128), Just(256), Just(300)],
        (1usize..=8).prop_map(|k| k * 1024),
        proptest::collection::vec(any::<u8>(), 1..16),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip_and_single_bit_flip(
        (mi, interval, voff, bs, pat) in layout(),
        block in 0u64..1000,
        seq in 1u64..1_000_000,
        bit in any::<prop::sample::Index>(),
    ) {
        let Some(v) = verifier(mi, interval, voff, &pat) else { return Ok(()) };
        if v.validate_block_len(bs).is_err() {
            return Ok(());
        }
        let off = block * bs as u64;
        let mut buf = vec![0x5au8; bs];
        v.fill_write(&mut buf, off, seq, 77).unwrap();
        prop_assert_eq!(v.check(&buf, off, Expect::Seq(seq)), Ok(()));
        prop_assert!(v.check_all(&buf, off, Expect::Any).is_empty());
        if METHODS[mi] == VerifyMethod::Null {
            return Ok(());
        }
        let bit = bit.index(bs * 8);
        buf[bit / 8] ^= 1 << (bit % 8);
        let all = v.check_all(&buf, off, Expect::Seq(seq));
        let iv = v.interval_len(bs);
        prop_assert_eq!(all.len(), 1, "{:?}", all);
        prop_assert_eq!(all[0].offset, off + ((bit / 8) / iv * iv) as u64);
        // A lost write of this block is seen when a newer sequence number is expected.
        buf[bit / 8] ^= 1 << (bit % 8);
        let stale = v.check_all(&buf, off, Expect::Seq(seq + 1));
        if METHODS[mi] == VerifyMethod::Pattern {
            prop_assert!(stale.is_empty());
        } else {
            prop_assert_eq!(stale.len(), bs / iv);
            prop_assert!(stale.iter().all(|f| f.kind.name() == "stale"));
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        (mi, interval, voff, _bs, pat) in layout(),
        data in proptest::collection::vec(any::<u8>(), 0..3000),
        off in any::<u64>(),
    ) {
        let _ = Header::decode(&data);
        let _ = WriteLog::decode(&data);
        let _ = fiox_verify::SavedState::decode(&data);
        // A valid fio state header in front of arbitrary bytes reaches the body checks.
        let mut framed = 3u64.to_le_bytes().to_vec();
        framed.extend((data.len() as u64).to_le_bytes());
        framed.extend(u64::from(!crc32c_of(&data)).to_le_bytes());
        framed.extend(&data);
        let _ = fiox_verify::SavedState::decode(&framed);
        if let Some(v) = verifier(mi, interval, voff, &pat) {
            let all = v.check_all(&data, off, Expect::Seq(3));
            for f in &all {
                let _ = f.to_string();
                let _ = v.expected_bytes(f);
            }
        }
    }

    #[test]
    fn write_log_matches_model(
        gran in prop_oneof![Just(512u64), Just(4096)],
        ops in proptest::collection::vec((0u64..200_000, 1u64..20_000, 0u64..50), 1..60),
    ) {
        let mut log = WriteLog::new(gran).unwrap();
        let mut model: HashMap<u64, u64> = HashMap::new();
        for (off, len, seq) in &ops {
            log.record(*off, *len, *seq);
            for g in off / gran..=(off + len - 1) / gran {
                if *seq == 0 { model.remove(&g); } else { model.insert(g, *seq); }
            }
        }
        for g in 0..(220_000 / gran) {
            prop_assert_eq!(log.get(g * gran + gran / 2), model.get(&g).copied());
        }
        let covered: u64 = log.runs().iter().map(|r| r.len / gran).sum();
        prop_assert_eq!(covered, model.len() as u64);
        let (back, _) = WriteLog::decode(&log.encode(fiox_verify::StateIdent { job_id: 0, seed: 0, file_no: 0 })).unwrap();
        prop_assert_eq!(back.runs(), log.runs());
    }
}

/// The standard crc32c (fio's is its inverse), for framing fuzzed state bodies.
fn crc32c_of(b: &[u8]) -> u32 {
    // Bitwise Castagnoli: the test crate does not depend on the crc32c crate.
    let mut c = !0u32;
    for &x in b {
        c ^= u32::from(x);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0x82f6_3b78
            } else {
                c >> 1
            };
        }
    }
    !c
}
