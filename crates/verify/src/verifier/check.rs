//! The reading side of a [`Verifier`]: a block read back is checked interval by interval
//! (header, place, writer, data digest or pattern), returning the failures found.

use super::{Expect, Mode, Verifier};
use crate::failure::{FailureKind, VerifyFailure};
use crate::header::{HdrMethod, Header, HeaderError, MAX_HDR_LEN};

impl Verifier {
    /// Checks `buf`, read from file offset `offset` (the same offset and length it was written
    /// with), and returns the first failing interval.
    pub fn check(
        &self,
        buf: &[u8],
        offset: u64,
        expect: Expect<'_>,
    ) -> Result<(), Box<VerifyFailure>> {
        let mut first = None;
        self.check_each(buf, offset, expect, &mut |f| {
            first = Some(Box::new(f));
            false
        });
        first.map_or(Ok(()), Err)
    }

    /// Checks every interval of `buf` and returns all failures (empty when the block is good).
    pub fn check_all(&self, buf: &[u8], offset: u64, expect: Expect<'_>) -> Vec<VerifyFailure> {
        let mut all = Vec::new();
        self.check_each(buf, offset, expect, &mut |f| {
            all.push(f);
            true
        });
        all
    }

    /// Calls `report` for each failing interval until it returns false.
    pub(super) fn check_each(
        &self,
        buf: &[u8],
        offset: u64,
        expect: Expect<'_>,
        report: &mut dyn FnMut(VerifyFailure) -> bool,
    ) {
        let failure = |pos: usize, len: usize, kind, header, expected_seq| VerifyFailure {
            offset: offset.wrapping_add(pos as u64),
            len: len as u64,
            block_offset: offset,
            block_len: buf.len() as u64,
            expected_seq,
            header,
            kind,
        };
        match self.mode {
            Mode::Null => {}
            Mode::PatternOnly => {
                if let Some(kind) = self.check_pattern_only(buf, offset) {
                    report(failure(0, buf.len(), kind, None, None));
                }
            }
            Mode::Header(m) => {
                let iv = self.interval_len(buf.len());
                if buf.is_empty() || iv < self.min_interval() {
                    let need = self.min_interval() as u64;
                    report(failure(
                        0,
                        buf.len(),
                        FailureKind::ShortBlock { need },
                        None,
                        None,
                    ));
                    return;
                }
                for (i, chunk) in buf.chunks(iv).enumerate() {
                    let abs = offset.wrapping_add((i * iv) as u64);
                    let exp = expect.seq_at(abs);
                    let at = (offset, (i * iv) as u64);
                    if let Some((kind, hdr)) = self.check_interval(m, chunk, at, exp) {
                        if !report(failure(i * iv, chunk.len(), kind, hdr, exp)) {
                            return;
                        }
                    }
                }
            }
        }
    }

    /// The problem with a `verify=pattern` block, if any.
    pub(super) fn check_pattern_only(&self, buf: &[u8], offset: u64) -> Option<FailureKind> {
        let pat = self.pattern_of(offset, 0);
        let i = pat.first_mismatch(buf)?;
        if buf.iter().all(|&b| b == 0) {
            return Some(FailureKind::Zeroed);
        }
        let bad = buf
            .iter()
            .enumerate()
            .filter(|&(j, &b)| b != pat.byte_at(j))
            .count();
        Some(FailureKind::PatternMismatch {
            at: offset.wrapping_add(i as u64),
            expected: pat.byte_at(i),
            found: buf[i],
            bad_bytes: bad as u64,
        })
    }

    /// The problem with one interval (physical layout, header possibly at `verify_offset`),
    /// with the header found if it was valid; `None` when the interval is good. `at` is the
    /// block's offset and the interval's position in it.
    pub(super) fn check_interval(
        &self,
        m: HdrMethod,
        phys: &[u8],
        at: (u64, u64),
        expected_seq: Option<u64>,
    ) -> Option<(FailureKind, Option<Header>)> {
        let abs = at.0.wrapping_add(at.1);
        // Offer the longest header any method has, so a header of another method decodes and
        // is reported as such rather than as damage.
        let end = phys.len().min(self.voff + MAX_HDR_LEN);
        let hdr = match Header::decode(&phys[self.voff..end]) {
            Ok(hdr) => hdr,
            Err(e) => return Some((self.bad_header_kind(e, phys), None)),
        };
        if let Some(kind) = self.header_mismatch(m, &hdr, phys.len(), abs) {
            return Some((kind, Some(hdr)));
        }
        if !self.data_matches(m, phys, &hdr, at) {
            return Some((self.bad_data_kind(m, phys, &hdr, at), Some(hdr)));
        }
        if let Some(kind) = self.weak_digest_damage(m, phys, &hdr, at) {
            return Some((kind, Some(hdr)));
        }
        self.writer_mismatch(&hdr, expected_seq)
            .map(|kind| (kind, Some(hdr)))
    }

    /// An intact block against the write the caller expects there: an older or newer write
    /// number (fio's numberio check, modulo 2^16 as fio stores it), and in strict mode another
    /// writer (thread number or write seed).
    pub(super) fn writer_mismatch(
        &self,
        hdr: &Header,
        expected_seq: Option<u64>,
    ) -> Option<FailureKind> {
        let foreign = |expected_seed: u64| FailureKind::ForeignWriter {
            expected_job: u32::from(self.thread()),
            found_job: u32::from(hdr.thread),
            expected_seed,
            found_seed: hdr.rand_seed,
        };
        let Some(e) = expected_seq else {
            return (self.strict && hdr.thread != self.thread()).then(|| foreign(0));
        };
        let d = hdr.numberio.wrapping_sub(e.wrapping_sub(1) as u16) as i16;
        let found = e.wrapping_add_signed(i64::from(d));
        // verify_header_seed=1 compares with the expected write's seed, as fio does (so an
        // older write fails on its seed first); strict mode alone with the seed of the write
        // the header names, so an older write of this job reads as stale.
        let seed_of = if self.seed_check == Some(true) {
            e
        } else {
            found
        };
        let bad_seed =
            self.seed_check.unwrap_or(self.strict) && hdr.rand_seed != self.write_seed(seed_of);
        if (self.strict && hdr.thread != self.thread()) || bad_seed {
            return Some(foreign(self.write_seed(e)));
        }
        let own = hdr.thread == self.thread() && hdr.rand_seed == self.write_seed(found);
        if self.own_numberio_only && !own {
            return None;
        }
        match d {
            _ if !self.seq_check => None,
            0 => None,
            d if d < 0 => Some(FailureKind::Stale {
                expected_seq: e,
                found_seq: found,
            }),
            _ => Some(FailureKind::NewerThanExpected {
                expected_seq: e,
                found_seq: found,
            }),
        }
    }

    pub(super) fn bad_header_kind(&self, e: HeaderError, phys: &[u8]) -> FailureKind {
        if phys.iter().all(|&b| b == 0) {
            return FailureKind::Zeroed;
        }
        match e {
            HeaderError::BadMagic { found } => FailureKind::BadMagic { found },
            HeaderError::Checksum { stored, computed } => {
                FailureKind::HeaderChecksum { stored, computed }
            }
            // A valid header whose type needs a longer header than the interval holds.
            HeaderError::TooShort { .. } => {
                let found = phys
                    .get(self.voff + 2..self.voff + 4)
                    .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
                FailureKind::MethodMismatch {
                    found_method: found,
                    expected_method: self.method_name(),
                }
            }
        }
    }

    /// The header's fields against what this interval must carry (fio's checks: type, length,
    /// offset).
    pub(super) fn header_mismatch(
        &self,
        m: HdrMethod,
        hdr: &Header,
        len: usize,
        abs: u64,
    ) -> Option<FailureKind> {
        if hdr.hdr_method() != Some(m) {
            return Some(FailureKind::MethodMismatch {
                found_method: hdr.verify_type,
                expected_method: m.name(),
            });
        }
        if hdr.len as usize != len {
            return Some(FailureKind::WrongLength { found: hdr.len });
        }
        if hdr.offset != abs {
            return Some(FailureKind::WrongOffset { found: hdr.offset });
        }
        None
    }

    /// The interval's data in logical order: the bytes the header was swapped with sit at the
    /// start of the interval.
    pub(super) fn data_segments<'a>(&self, phys: &'a [u8], h: usize) -> [&'a [u8]; 3] {
        if self.voff == 0 {
            [&phys[h..], &[], &[]]
        } else {
            let v = self.voff;
            [&phys[h..v], &phys[..h], &phys[v + h..]]
        }
    }

    /// Fast path: does the data match the header (checksum) or the pattern? The pattern
    /// starts at the block's first byte (`at`: block offset, interval position), as fio fills.
    pub(super) fn data_matches(
        &self,
        m: HdrMethod,
        phys: &[u8],
        hdr: &Header,
        at: (u64, u64),
    ) -> bool {
        let h = m.hdr_len();
        let segs = self.data_segments(phys, h);
        match m {
            HdrMethod::Sum(a) => a.sum(&segs) == hdr.sum,
            // meta: the data is not checked unless a verify_pattern gives it (as fio).
            HdrMethod::Meta if self.pattern.is_none() => true,
            HdrMethod::Pattern | HdrMethod::Meta => {
                let mut phase = at.1.wrapping_add(h as u64);
                segs.iter().all(|s| {
                    let ok = self.pattern_of(at.0, phase).first_mismatch(s).is_none();
                    phase = phase.wrapping_add(s.len() as u64);
                    ok
                })
            }
        }
    }
}
