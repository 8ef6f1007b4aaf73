//! The "done" bar at library level: write many blocks, damage chosen ones in every way
//! storage loses data (bit flips in data and header, zeroed blocks and sectors, swapped blocks,
//! lost writes, torn writes, garbage), and check that every damaged interval — and nothing
//! else — is reported, at the right offset and with the right kind, for every method and for
//! verify_interval / verify_offset layouts.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::spec::{JobSpec, VerifyMethod, VerifySpec};
use fiox_verify::{Expect, StateIdent, Verifier, WriteLog};
use std::collections::BTreeMap;

const BS: usize = 4096;
const BLOCKS: usize = 64;
const JOB: u32 = 3;
const SEED: u64 = 0x5eed_1234;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Sum,
    PatternHdr,
    PatternOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Damage {
    FlipDataBit,
    FlipHeaderBit,
    FlipMagic,
    ZeroBlock,
    ZeroSector,
    Swap,
    LostWrite,
    TornWrite,
    Garbage,
}

const SUM_METHODS: [VerifyMethod; 14] = [
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
];

fn spec(method: VerifyMethod, interval: Option<u64>, voff: u64) -> VerifySpec {
    let mut s = JobSpec::default().verify;
    s.method = method;
    s.verify_interval = interval;
    s.verify_offset = voff;
    if matches!(method, VerifyMethod::Pattern | VerifyMethod::PatternHdr) {
        // "%o" then "fxo!": the block offset makes swapped pattern blocks detectable.
        s.verify_pattern = [0u8; 8].iter().chain(b"fxo!").copied().collect();
        s.verify_pattern_offsets = vec![0];
    }
    s
}

fn class_of(m: VerifyMethod) -> Class {
    match m {
        VerifyMethod::PatternHdr => Class::PatternHdr,
        VerifyMethod::Pattern => Class::PatternOnly,
        _ => Class::Sum,
    }
}

/// A simulated file: current contents, the first version of every block that was rewritten,
/// and the write log.
struct Disk {
    data: Vec<u8>,
    old: BTreeMap<usize, Vec<u8>>,
    log: WriteLog,
}

/// Writes every block once, then rewrites every third block, as a random-write job would.
fn write_all(v: &Verifier) -> Disk {
    let mut d = Disk {
        data: vec![0u8; BS * BLOCKS],
        old: BTreeMap::new(),
        log: WriteLog::new(512).unwrap(),
    };
    let mut seq = 0;
    let order: Vec<usize> = (0..BLOCKS)
        .map(|i| (i * 29) % BLOCKS)
        .chain((0..BLOCKS).filter(|i| i % 3 == 0))
        .collect();
    for b in order {
        seq += 1;
        let range = b * BS..(b + 1) * BS;
        if d.log.get((b * BS) as u64).is_some() {
            d.old
                .entry(b)
                .or_insert_with(|| d.data[range.clone()].to_vec());
        }
        let off = (b * BS) as u64;
        v.fill_write(&mut d.data[range], off, seq, seq * 1000)
            .unwrap();
        d.log.record(off, BS as u64, seq);
    }
    d
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Applies `dmg` to block `b` (and `b2` for swaps); returns false when the damage cannot apply
/// (no older version of the block exists).
fn apply(d: &mut Disk, v: &Verifier, dmg: Damage, b: usize, b2: usize, rng: &mut u64) -> bool {
    let iv = v.interval_len(BS);
    let h = v.header_len();
    let hdr_at = v.header_offset();
    let start = b * BS;
    let blk = &mut d.data[start..start + BS];
    match dmg {
        Damage::FlipDataBit => {
            let interval = (xorshift(rng) as usize) % (BS / iv);
            // A data byte: after the header when it sits at 0, before it when it was moved.
            let in_iv = if h == 0 {
                xorshift(rng) as usize % iv
            } else if hdr_at == 0 {
                h + xorshift(rng) as usize % (iv - h)
            } else {
                h + xorshift(rng) as usize % (hdr_at - h)
            };
            blk[interval * iv + in_iv] ^= 1 << (xorshift(rng) % 8);
        }
        Damage::FlipHeaderBit => blk[hdr_at + 20] ^= 0x08,
        Damage::FlipMagic => blk[hdr_at] ^= 0x01,
        Damage::ZeroBlock => blk.fill(0),
        Damage::ZeroSector => blk[1536..2048].fill(0),
        Damage::Garbage => blk.iter_mut().for_each(|x| *x = xorshift(rng) as u8),
        Damage::Swap => {
            let a = d.data[start..start + BS].to_vec();
            let s2 = b2 * BS;
            let c = d.data[s2..s2 + BS].to_vec();
            d.data[start..start + BS].copy_from_slice(&c);
            d.data[s2..s2 + BS].copy_from_slice(&a);
        }
        Damage::LostWrite | Damage::TornWrite => {
            let Some(old) = d.old.get(&b) else {
                return false;
            };
            // A torn write: only the first sector of the new write reached the medium.
            let from = if dmg == Damage::TornWrite { 512 } else { 0 };
            blk[from..].copy_from_slice(&old[from..]);
        }
    }
    true
}

const VOFF: usize = 256;

/// The kind a damaged interval must be reported as. `was_old` says the interval now holds
/// exactly an older write of itself.
fn expected_kind(dmg: Damage, class: Class, was_old: bool) -> &'static str {
    if was_old {
        return "stale";
    }
    match (dmg, class) {
        (Damage::ZeroBlock, _) => "zeroed",
        (_, Class::PatternOnly) => "pattern-mismatch",
        (Damage::FlipDataBit, Class::Sum) => "data-checksum",
        (Damage::FlipDataBit | Damage::ZeroSector, Class::PatternHdr) => "pattern-mismatch",
        (Damage::FlipHeaderBit, _) => "header-checksum",
        (Damage::FlipMagic | Damage::Garbage, _) => "bad-magic",
        (Damage::ZeroSector | Damage::TornWrite, _) => "torn",
        (Damage::Swap, _) => "wrong-offset",
        (Damage::LostWrite, _) => "stale",
    }
}

/// Runs the whole scenario for one layout and returns the kinds reported (each at least once).
fn scenario(method: VerifyMethod, interval: Option<u64>, voff: u64) -> Vec<&'static str> {
    let class = class_of(method);
    let v = Verifier::new(&spec(method, interval, voff), JOB, SEED).unwrap();
    let pristine = write_all(&v);
    let mut d = Disk {
        data: pristine.data.clone(),
        old: pristine.old.clone(),
        log: pristine.log.clone(),
    };
    let mut damages = vec![
        Damage::FlipDataBit,
        Damage::ZeroBlock,
        Damage::ZeroSector,
        Damage::Swap,
        Damage::Garbage,
    ];
    if class != Class::PatternOnly {
        damages.extend([
            Damage::FlipHeaderBit,
            Damage::FlipMagic,
            Damage::LostWrite,
            Damage::TornWrite,
        ]);
    }
    // Damage blocks 3, 9, 15, ... (multiples of 3 have older versions); a swap pairs with the
    // next block. Remember which damage hit which block.
    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ method as u64;
    let mut hit: BTreeMap<usize, Damage> = BTreeMap::new();
    for (i, &dmg) in damages.iter().enumerate() {
        let b = 3 + i * 6;
        assert!(apply(&mut d, &v, dmg, b, b + 1, &mut rng), "{dmg:?}");
        hit.insert(b, dmg);
        if dmg == Damage::Swap {
            hit.insert(b + 1, dmg);
        }
    }

    let iv = v.interval_len(BS);
    let mut want: BTreeMap<u64, &'static str> = BTreeMap::new();
    for (&b, &dmg) in &hit {
        for k in 0..BS / iv {
            let r = b * BS + k * iv..b * BS + (k + 1) * iv;
            if d.data[r.clone()] == pristine.data[r.clone()] {
                continue;
            }
            let was_old = pristine
                .old
                .get(&b)
                .is_some_and(|o| o[k * iv..(k + 1) * iv] == d.data[r.clone()]);
            want.insert(r.start as u64, expected_kind(dmg, class, was_old));
        }
    }
    assert!(!want.is_empty());

    let mut got: BTreeMap<u64, &'static str> = BTreeMap::new();
    for b in 0..BLOCKS {
        let off = (b * BS) as u64;
        let blk = &d.data[b * BS..(b + 1) * BS];
        let all = v.check_all(blk, off, Expect::Log(&d.log));
        for f in &all {
            assert_eq!((f.block_offset, f.block_len), (off, BS as u64));
            assert_eq!(f.len, iv as u64, "{f}");
            assert!(!f.to_string().is_empty());
            got.insert(f.offset, f.kind.name());
        }
        // `check` reports the first of them.
        match v.check(blk, off, Expect::Log(&d.log)) {
            Ok(()) => assert!(all.is_empty()),
            Err(f) => assert_eq!(*f, all[0]),
        }
    }
    let label = format!("{method:?} interval={interval:?} voff={voff}");
    assert_eq!(got, want, "{label}");

    // Without a write log (verify_only, no state), lost writes look valid; all else is found.
    let no_stale: BTreeMap<u64, &str> = want
        .iter()
        .filter(|(_, &k)| k != "stale")
        .map(|(&o, &k)| (o, k))
        .collect();
    let mut got_any = BTreeMap::new();
    for b in 0..BLOCKS {
        let blk = &d.data[b * BS..(b + 1) * BS];
        for f in v.check_all(blk, (b * BS) as u64, Expect::Any) {
            got_any.insert(f.offset, f.kind.name());
        }
    }
    assert_eq!(got_any, no_stale, "{label} Expect::Any");
    let mut kinds: Vec<&str> = want.values().copied().collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

const ALL_HDR_KINDS: [&str; 7] = [
    "bad-magic",
    "data-checksum",
    "header-checksum",
    "stale",
    "torn",
    "wrong-offset",
    "zeroed",
];

#[test]
fn every_damage_found_for_every_checksum_method() {
    for m in SUM_METHODS {
        assert_eq!(scenario(m, None, 0), ALL_HDR_KINDS);
    }
}

#[test]
fn every_damage_found_with_interval_and_offset() {
    for m in SUM_METHODS {
        // 4 intervals of 1024 per block, header moved to byte 256 of each interval.
        assert_eq!(scenario(m, Some(1024), VOFF as u64), ALL_HDR_KINDS);
        assert_eq!(scenario(m, Some(1024), 0), ALL_HDR_KINDS);
    }
}

#[test]
fn every_damage_found_for_pattern_methods() {
    let hdr_kinds = [
        "bad-magic",
        "header-checksum",
        "pattern-mismatch",
        "stale",
        "wrong-offset",
        "zeroed",
    ];
    assert_eq!(scenario(VerifyMethod::PatternHdr, None, 0), hdr_kinds);
    assert_eq!(
        scenario(VerifyMethod::PatternHdr, Some(2048), VOFF as u64),
        hdr_kinds
    );
    assert_eq!(
        scenario(VerifyMethod::Pattern, None, 0),
        ["pattern-mismatch", "zeroed"]
    );
}

#[test]
fn verify_only_rerun_and_state_file_find_the_same() {
    let s = spec(VerifyMethod::Crc32c, None, 0);
    let v = Verifier::new(&s, JOB, SEED).unwrap();
    let mut d = write_all(&v);
    let mut rng = 7;
    assert!(apply(&mut d, &v, Damage::LostWrite, 6, 0, &mut rng));
    assert!(apply(&mut d, &v, Damage::FlipDataBit, 10, 0, &mut rng));

    let dir = std::env::temp_dir().join(format!("fiox-verify-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join(fiox_verify::state_file_name("job", 0, 0));
    d.log
        .save(
            &state,
            StateIdent {
                job_id: JOB,
                seed: SEED,
                file_no: 0,
            },
            &fiox_verify::FioState::default(),
        )
        .unwrap();

    // A later run: a new verifier from the same job values, the log from the state file.
    let v2 = Verifier::new(&s, JOB, SEED).unwrap();
    let (log, ident) = WriteLog::load(&state).unwrap().log.unwrap();
    assert_eq!(
        ident,
        StateIdent {
            job_id: JOB,
            seed: SEED,
            file_no: 0,
        }
    );
    let mut found = Vec::new();
    for run in log.runs() {
        for b in (run.offset..run.offset + run.len).step_by(BS) {
            let blk = &d.data[b as usize..b as usize + BS];
            if let Err(f) = v2.check(blk, b, Expect::Log(&log)) {
                found.push((f.offset, f.kind.name()));
                // verify_dump: received is what was read, expected is the regenerated write.
                let files = v2.dump(&dir, "/dev/shm/datafile", blk, &f).unwrap();
                assert_eq!(std::fs::read(&files.received).unwrap(), blk);
                let exp = std::fs::read(files.expected.unwrap()).unwrap();
                assert_eq!(v2.check(&exp, b, Expect::Log(&log)), Ok(()));
            }
        }
    }
    assert_eq!(
        found,
        vec![(6 * BS as u64, "stale"), (10 * BS as u64, "data-checksum")]
    );
    assert!(dir.join(format!("datafile.{}.received", 6 * BS)).exists());
    std::fs::remove_dir_all(&dir).unwrap();

    // Another job reading the file accepts the intact blocks (as fio does); in strict mode it
    // sees foreign blocks, by thread number alone or by the write seed of the expected write.
    let mut other = Verifier::new(&s, JOB + 1, SEED).unwrap();
    assert_eq!(other.check(&d.data[..BS], 0, Expect::Any), Ok(()));
    other.set_strict(true);
    let f = other.check(&d.data[..BS], 0, Expect::Any).unwrap_err();
    assert_eq!(f.kind.name(), "foreign-writer");
    let mut reseeded = Verifier::new(&s, JOB, SEED + 1).unwrap();
    assert_eq!(reseeded.check(&d.data[..BS], 0, Expect::Log(&log)), Ok(()));
    reseeded.set_strict(true);
    let f = reseeded
        .check(&d.data[..BS], 0, Expect::Log(&log))
        .unwrap_err();
    assert_eq!(f.kind.name(), "foreign-writer");
}

#[test]
fn round_trip_through_a_temp_file() {
    use std::io::{Read, Seek, SeekFrom, Write};
    let v = Verifier::new(&spec(VerifyMethod::Sha256, Some(512), 0), JOB, SEED).unwrap();
    let path = std::env::temp_dir().join(format!("fiox-verify-file-{}", std::process::id()));
    let mut f = std::fs::File::create(&path).unwrap();
    let mut log = WriteLog::new(512).unwrap();
    for b in 0..16u64 {
        let mut buf = vec![0u8; 8192];
        v.fill_write(&mut buf, b * 8192, b + 1, 0).unwrap();
        f.write_all(&buf).unwrap();
        log.record(b * 8192, 8192, b + 1);
    }
    // Overwrite one 512-byte interval in place with zeros, as a failing device might.
    f.seek(SeekFrom::Start(5 * 8192 + 1024)).unwrap();
    f.write_all(&[0u8; 512]).unwrap();
    drop(f);
    let mut f = std::fs::File::open(&path).unwrap();
    let mut bad = Vec::new();
    for b in 0..16u64 {
        let mut buf = vec![0u8; 8192];
        f.read_exact(&mut buf).unwrap();
        bad.extend(v.check_all(&buf, b * 8192, Expect::Log(&log)));
    }
    std::fs::remove_file(&path).unwrap();
    assert_eq!(bad.len(), 1);
    assert_eq!(
        (bad[0].offset, bad[0].len, bad[0].kind.name()),
        (5 * 8192 + 1024, 512, "zeroed")
    );
}

#[test]
fn other_header_findings() {
    let v = Verifier::new(&spec(VerifyMethod::Md5, None, 0), JOB, SEED).unwrap();
    let mut b = vec![0u8; BS];
    v.fill_write(&mut b, 0, 5, 0).unwrap();
    let f = v.check(&b, 0, Expect::Seq(3)).unwrap_err();
    assert_eq!(f.kind.name(), "newer-than-expected");
    assert!(
        f.to_string()
            .contains("expected write #3, found newer write #5"),
        "{f}"
    );
    // Same bytes read as a differently sized block.
    let f = v.check(&b[..2048], 0, Expect::Any).unwrap_err();
    assert_eq!(f.kind.name(), "wrong-length");
    // Written with sha1, checked with md5.
    let v1 = Verifier::new(&spec(VerifyMethod::Sha1, None, 0), JOB, SEED).unwrap();
    v1.fill_write(&mut b, 0, 1, 0).unwrap();
    let f = v.check(&b, 0, Expect::Any).unwrap_err();
    assert_eq!(f.kind.name(), "method-mismatch");
    assert!(f.to_string().contains("verify=md5"), "{f}");
}

#[test]
fn overlapping_writes_of_mixed_sizes_verify_clean_then_find_damage() {
    for method in [
        VerifyMethod::Crc32c,
        VerifyMethod::Sha256,
        VerifyMethod::PatternHdr,
    ] {
        let v = Verifier::new(&spec(method, Some(512), 0), JOB, SEED).unwrap();
        let size = 1 << 20;
        let mut data = vec![0u8; size];
        let mut log = WriteLog::new(512).unwrap();
        let mut rng = 0x1234_5678u64;
        for seq in 1..=600u64 {
            let len = [512usize, 1024, 4096, 8192, 16384][xorshift(&mut rng) as usize % 5];
            let off = (xorshift(&mut rng) as usize % ((size - len) / 512)) * 512;
            v.fill_write(&mut data[off..off + len], off as u64, seq, seq)
                .unwrap();
            log.record(off as u64, len as u64, seq);
        }
        let runs = log.runs();
        let whole: Vec<_> = runs.iter().filter(|r| r.whole).collect();
        assert!(whole.len() > 20 && whole.len() < runs.len(), "{method:?}");
        // Every whole write verifies; partial remnants are skipped as fio skips them.
        for r in &whole {
            let (o, l) = (r.offset as usize, r.len as usize);
            assert_eq!(
                v.check(&data[o..o + l], r.offset, Expect::Log(&log)),
                Ok(())
            );
        }
        // Damage every 4th whole write in its last interval: exactly those are found.
        let mut want = Vec::new();
        for r in whole.iter().step_by(4) {
            let at = (r.offset + r.len) as usize - 7;
            data[at] ^= 0x40;
            want.push(r.offset + r.len - 512);
        }
        let mut got = Vec::new();
        for r in &whole {
            let (o, l) = (r.offset as usize, r.len as usize);
            got.extend(
                v.check_all(&data[o..o + l], r.offset, Expect::Log(&log))
                    .iter()
                    .map(|f| f.offset),
            );
        }
        assert_eq!(got, want, "{method:?}");
    }
}

#[test]
fn torn_write_details() {
    use fiox_verify::FailureKind;
    let v = Verifier::new(&spec(VerifyMethod::Xxhash, None, 0), JOB, SEED).unwrap();
    let off = 16 * BS as u64;
    let mut old = vec![0u8; BS];
    v.fill_write(&mut old, off, 4, 0).unwrap();
    let mut new = vec![0u8; BS];
    v.fill_write(&mut new, off, 9, 0).unwrap();
    // Sectors 0-2 of the new write landed, 3-5 kept the old write, 6-7 are zeros.
    let mut got = new.clone();
    got[1536..3072].copy_from_slice(&old[1536..3072]);
    got[3072..].fill(0);
    let f = v.check(&got, off, Expect::Seq(9)).unwrap_err();
    assert_eq!(
        f.kind,
        FailureKind::Torn {
            found_seq: 9,
            first_bad: off + 1536,
            bad_sectors: 5,
            zero_sectors: 2,
            sectors: 8,
        }
    );
    assert!(f.to_string().contains("5 of 8 512-byte sectors"), "{f}");
    // Only the first sector (the header) is old: the header is consistent with nothing else.
    let mut got = new.clone();
    got[..512].copy_from_slice(&old[..512]);
    let f = v.check(&got, off, Expect::Seq(9)).unwrap_err();
    match f.kind {
        FailureKind::Torn {
            found_seq,
            bad_sectors,
            ..
        } => assert_eq!((found_seq, bad_sectors), (4, 7)),
        k => panic!("{k:?}"),
    }
}
