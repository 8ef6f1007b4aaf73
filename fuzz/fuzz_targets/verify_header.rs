//! Fuzz target for reading verified blocks: header decoding, state-file decoding and the full
//! check path must never panic, whatever the bytes. Half of the inputs are used raw; the other
//! half first build a valid block (so the fuzzer gets past the header checksum) and then apply
//! the input as byte edits, which drives the torn / checksum / pattern classification code.
#![no_main]
#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::spec::{JobSpec, VerifyMethod};
use fiox_verify::{Expect, Header, Verifier, WriteLog};
use libfuzzer_sys::fuzz_target;

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

fn verifier(method: u8, layout: u8) -> Option<Verifier> {
    let mut s = JobSpec::default().verify;
    s.method = METHODS[method as usize % METHODS.len()];
    s.verify_interval = match layout & 3 {
        0 => None,
        n => Some(256u64 << n),
    };
    s.verify_offset = [0, 128, 256, 384][(layout >> 2) as usize & 3];
    if layout & 0x10 != 0 || matches!(s.method, VerifyMethod::Pattern | VerifyMethod::PatternHdr) {
        s.verify_pattern = vec![0, 0, 0, 0, 0, 0, 0, 0, 0xa5, 0x5a, layout];
        s.verify_pattern_offsets = if layout & 0x20 != 0 { vec![0] } else { Vec::new() };
    }
    Verifier::new(&s, 1, 0x5eed).ok()
}

fn check(v: &Verifier, block: &[u8], offset: u64, expect: Expect<'_>) {
    for f in v.check_all(block, offset, expect) {
        let _ = f.to_string();
        let _ = v.expected_bytes(&f);
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = Header::decode(data);
    let _ = WriteLog::decode(data);
    let _ = fiox_verify::SavedState::decode(data);
    if data.len() < 4 {
        return;
    }
    let Some(v) = verifier(data[0], data[1]) else {
        return;
    };
    let rest = &data[4..];
    if data[2] & 1 == 0 {
        check(&v, rest, u64::from(data[3]) * 512, Expect::Any);
        check(&v, rest, 0, Expect::Seq(u64::from(data[2])));
        return;
    }
    // A valid block of 1..=16 sectors, then edits: (position lo, position hi, value) triples.
    let len = (usize::from(data[3] & 15) + 1) * 512;
    if v.validate_block_len(len).is_err() {
        return;
    }
    let offset = u64::from(data[3] >> 4) * 4096;
    let mut block = vec![0u8; len];
    if v.fill_write(&mut block, offset, 7, 99).is_err() {
        return;
    }
    for e in rest.chunks_exact(3) {
        let pos = usize::from(u16::from_le_bytes([e[0], e[1]])) % len;
        block[pos] = e[2];
    }
    let mut log = WriteLog::new(512).expect("non-zero granularity");
    log.record(offset, len as u64, 7 + u64::from(data[2] >> 6));
    check(&v, &block, offset, Expect::Log(&log));
});
