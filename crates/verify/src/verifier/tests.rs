//! The verifier's tests: fill then check round trips, damage classification, layouts.

use super::*;
use crate::failure::{FailureKind, VerifyFailure};
use crate::header::Header;

fn spec(method: VerifyMethod) -> VerifySpec {
    JobSpec::default().verify.clone_with(method)
}

trait With {
    fn clone_with(&self, m: VerifyMethod) -> VerifySpec;
}
impl With for VerifySpec {
    fn clone_with(&self, m: VerifyMethod) -> VerifySpec {
        VerifySpec {
            method: m,
            ..self.clone()
        }
    }
}

fn written(v: &Verifier, len: usize, offset: u64, seq: u64) -> Vec<u8> {
    let mut b = vec![0xeeu8; len];
    v.fill_write(&mut b, offset, seq, 1000 + seq).unwrap();
    b
}

#[test]
fn construction_errors_and_notes() {
    assert!(matches!(
        Verifier::new(&spec(VerifyMethod::None), 0, 0),
        Err(VerifyError::Disabled)
    ));
    assert!(Verifier::from_job(&JobSpec::default(), 0, 0)
        .unwrap()
        .is_none());
    assert!(matches!(
        Verifier::new(&spec(VerifyMethod::Pattern), 0, 0),
        Err(VerifyError::PatternRequired)
    ));
    let mut s = spec(VerifyMethod::Md5);
    s.verify_interval = Some(0);
    assert!(matches!(
        Verifier::new(&s, 0, 0),
        Err(VerifyError::IntervalZero)
    ));
    s.verify_interval = Some(48);
    let e = Verifier::new(&s, 0, 0).unwrap_err().to_string();
    assert!(
        e.contains("verify_interval=48") && e.contains("56 bytes"),
        "{e}"
    );
    s.verify_interval = None;
    s.verify_offset = 8;
    let e = Verifier::new(&s, 0, 0).unwrap_err().to_string();
    assert!(e.contains("verify_offset=8"), "{e}");
    let mut s = spec(VerifyMethod::Null);
    s.verify_offset = 512;
    let v = Verifier::new(&s, 0, 0).unwrap();
    assert_eq!(v.notes().len(), 1);
    assert!(v.notes()[0].contains("verify_offset=512 has no effect"));
}

#[test]
fn block_length_validation() {
    let v = Verifier::new(&spec(VerifyMethod::Sha512), 0, 0).unwrap();
    assert_eq!(v.header_len(), 168);
    assert!(v.validate_block_len(168).is_ok());
    let e = v.validate_block_len(100).unwrap_err().to_string();
    assert!(e.contains("block size 100") && e.contains("sha512"), "{e}");
    let mut small = vec![0u8; 100];
    assert!(v.fill_write(&mut small, 0, 1, 0).is_err());
    let f = v.check(&small, 0, Expect::Any).unwrap_err();
    assert_eq!(f.kind, FailureKind::ShortBlock { need: 168 });
}

/// verify_only (fio skips numberio there): another writer's intact block in place passes
/// whatever write number it carries; this job's own older write is still stale, and
/// strict mode still reports the other writer.
#[test]
fn own_numberio_only_skips_other_writers_numbers() {
    let s = spec(VerifyMethod::Crc32c);
    let mut v = Verifier::new(&s, 0, 7).unwrap();
    let other = Verifier::new(&s, 0, 1234).unwrap();
    let theirs = written(&other, 4096, 8192, 2);
    let ours = written(&v, 4096, 8192, 2);
    let stale = |r: Result<(), Box<VerifyFailure>>| {
        matches!(r.map_err(|f| f.kind), Err(FailureKind::Stale { .. }))
    };
    assert!(stale(v.check(&theirs, 8192, Expect::Seq(5))));
    v.set_own_numberio_only(true);
    assert_eq!(v.check(&theirs, 8192, Expect::Seq(5)), Ok(()));
    assert!(stale(v.check(&ours, 8192, Expect::Seq(5))));
    assert!(
        v.check(&theirs, 4096, Expect::Seq(5)).is_err(),
        "wrong offset"
    );
    v.set_strict(true);
    let f = v.check(&theirs, 8192, Expect::Seq(2)).unwrap_err();
    assert_eq!(f.kind.name(), "foreign-writer");
}

#[test]
fn intervals_follow_fio_rule() {
    let mut s = spec(VerifyMethod::Crc32c);
    s.verify_interval = Some(1024);
    let v = Verifier::new(&s, 0, 0).unwrap();
    assert_eq!(v.interval_len(4096), 1024);
    assert_eq!(v.interval_len(1536), 1536); // does not divide: whole block
    assert_eq!(v.interval_len(512), 512); // larger than block: whole block
    let b = written(&v, 4096, 8192, 3);
    for i in 0..4u64 {
        let h = Header::decode(&b[(i * 1024) as usize..]).unwrap();
        assert_eq!(
            (h.offset, h.len, h.numberio, h.rand_seed),
            (8192 + i * 1024, 1024, 2, v.write_seed(3))
        );
    }
    assert_eq!(v.check(&b, 8192, Expect::Seq(3)), Ok(()));
}

#[test]
fn verify_offset_moves_header_and_checks_without_copy() {
    let mut s = spec(VerifyMethod::Sha256);
    s.verify_offset = 512;
    let v = Verifier::new(&s, 5, 6).unwrap();
    let b = written(&v, 4096, 0, 1);
    assert!(Header::decode(&b).is_err());
    let h = Header::decode(&b[512..]).unwrap();
    assert_eq!((h.thread, h.rand_seed, h.offset), (6, v.write_seed(1), 0));
    assert_eq!(v.check(&b, 0, Expect::Seq(1)), Ok(()));
    let mut bad = b.clone();
    bad[3000] ^= 1;
    let f = v.check(&bad, 0, Expect::Seq(1)).unwrap_err();
    match f.kind {
        FailureKind::DataChecksum {
            first_bad,
            bad_bytes,
            ..
        } => {
            assert_eq!((first_bad, bad_bytes), (Some(3000), 1))
        }
        k => panic!("{k:?}"),
    }
    // The bytes swapped to the front of the interval are covered too.
    let mut bad = b.clone();
    bad[10] ^= 0x80;
    assert!(matches!(
        v.check(&bad, 0, Expect::Seq(1)).unwrap_err().kind,
        FailureKind::DataChecksum {
            first_bad: Some(10),
            ..
        }
    ));
}

#[test]
fn pattern_modes() {
    let mut s = spec(VerifyMethod::Pattern);
    s.verify_pattern = vec![0xab, 0xcd, 0xef];
    let v = Verifier::new(&s, 0, 0).unwrap();
    let b = written(&v, 4096, 4096, 1);
    assert_eq!(&b[..6], &[0xab, 0xcd, 0xef, 0xab, 0xcd, 0xef]);
    assert_eq!(v.check(&b, 4096, Expect::Any), Ok(()));
    let mut bad = b.clone();
    bad[100] = 0;
    let f = v.check(&bad, 4096, Expect::Any).unwrap_err();
    assert_eq!(
        f.kind,
        FailureKind::PatternMismatch {
            at: 4196,
            expected: 0xcd,
            found: 0,
            bad_bytes: 1
        }
    );
    assert_eq!(
        v.check(&[0u8; 4096], 4096, Expect::Any).unwrap_err().kind,
        FailureKind::Zeroed
    );

    // pattern_hdr with %o: header + pattern carrying the block offset.
    let mut s = spec(VerifyMethod::PatternHdr);
    s.verify_pattern = vec![0; 8];
    s.verify_pattern_offsets = vec![0];
    let v = Verifier::new(&s, 0, 0).unwrap();
    let b = written(&v, 4096, 0x10000, 2);
    let h = v.header_len();
    assert_eq!(&b[h..h + 8], &0x10000u64.to_le_bytes());
    assert_eq!(v.check(&b, 0x10000, Expect::Seq(2)), Ok(()));
    let mut bad = b.clone();
    bad[h + 9] ^= 4;
    assert!(matches!(
        v.check(&bad, 0x10000, Expect::Any).unwrap_err().kind,
        FailureKind::PatternMismatch { at, .. } if at == 0x10000 + h as u64 + 9
    ));
}

#[test]
fn meta_checks_the_header_not_the_data() {
    let v = Verifier::new(&spec(VerifyMethod::Meta), 3, 9).unwrap();
    let mut b = vec![0u8; 4096];
    v.fill_write(&mut b, 0x2000, 1, 0).unwrap();
    assert_eq!(v.check(&b, 0x2000, Expect::Seq(1)), Ok(()));
    let mut data = b.clone();
    data[4000] ^= 1;
    assert_eq!(
        v.check(&data, 0x2000, Expect::Seq(1)),
        Ok(()),
        "data is not checked"
    );
    assert!(
        v.check(&b, 0x3000, Expect::Seq(1)).is_err(),
        "the offset in the header is"
    );
    let mut hdr = b.clone();
    hdr[20] ^= 1;
    assert!(
        v.check(&hdr, 0x2000, Expect::Seq(1)).is_err(),
        "and its checksum"
    );
}

#[test]
fn null_checks_nothing() {
    let v = Verifier::new(&spec(VerifyMethod::Null), 0, 0).unwrap();
    let mut b = vec![7u8; 512];
    v.fill_write(&mut b, 0, 1, 0).unwrap();
    assert_eq!(b, vec![7u8; 512]);
    assert_eq!(v.check(&[1, 2, 3], 0, Expect::Seq(4)), Ok(()));
}

#[test]
fn expected_bytes_regenerate_the_write() {
    for m in [VerifyMethod::Md5, VerifyMethod::Xxhash] {
        let mut s = spec(m);
        s.verify_interval = Some(1024);
        s.verify_offset = 256;
        let v = Verifier::new(&s, 1, 2).unwrap();
        let b = written(&v, 4096, 40960, 9);
        // Data damaged, header intact: exact regeneration, write time included.
        let mut bad = b.clone();
        bad[2048 + 600..2048 + 700].fill(0x55);
        let f = v.check(&bad, 40960, Expect::Seq(9)).unwrap_err();
        assert_eq!((f.offset, f.len), (40960 + 2048, 1024));
        assert!(v.expected_bytes(&f).unwrap() == b[2048..3072]);
        // Header destroyed: the write time is unknown (0), everything else regenerates.
        bad[2048..3072].fill(0x55);
        let f = v.check(&bad, 40960, Expect::Seq(9)).unwrap_err();
        let exp = v.expected_bytes(&f).unwrap();
        // Write-time field and header crc of the swapped header differ.
        let (hs, he, cs) = (256 + 24, 256 + 32, 256 + 36);
        assert!(exp[..hs] == b[2048..2048 + hs]);
        assert!(exp[he..cs] == b[2048 + he..2048 + cs]);
        assert!(exp[cs + 4..] == b[2048 + cs + 4..3072]);
        assert_eq!(&exp[hs..he], &[0; 8]);
        // Neither a header nor an expectation: unknowable.
        let f = v.check(&bad, 40960, Expect::Any).unwrap_err();
        assert_eq!(v.expected_bytes(&f), None);
    }
}

#[test]
fn verifier_is_shareable() {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Verifier>();
}
