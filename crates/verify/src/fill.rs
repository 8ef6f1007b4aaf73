//! Deterministic block contents: the pseudo-random data part of a verified interval, generated
//! from (seed, job, offset, sequence number) so a reader can regenerate what should be there
//! without storing it, and `verify_pattern=` patterns with `%o` (block offset) pasted in.

use crate::error::VerifyError;

/// Longest accepted `verify_pattern` (fio's MAX_PATTERN_SIZE).
pub const MAX_PATTERN_LEN: usize = 512;

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64 finaliser: a bijective mixer with good avalanche, so neighbouring counters give
/// unrelated words.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The key from which an interval's data is generated. Every input changes every byte, so data
/// written for another offset, another write or another job never matches by accident.
pub fn data_key(seed: u64, job_id: u32, offset: u64, seq: u64) -> u64 {
    let k = mix(seed ^ GOLDEN);
    let k = mix(k ^ offset);
    let k = mix(k ^ seq.rotate_left(17));
    mix(k ^ u64::from(job_id))
}

/// The key of an interval's data: the write's seed (stored in every header of the write)
/// mixed with the interval's absolute offset (also in the header), so the data can be
/// regenerated from the header alone.
pub fn interval_key(write_seed: u64, offset: u64) -> u64 {
    mix(mix(write_seed ^ GOLDEN) ^ offset)
}

/// Fills `out` with the data stream of `key`: word `i` (8 bytes, little-endian) is
/// `mix(key + (i + 1) * GOLDEN)`; a tail shorter than 8 bytes takes the first bytes of its word.
pub fn fill_random(key: u64, out: &mut [u8]) {
    let mut ctr = key;
    let mut chunks = out.chunks_exact_mut(8);
    for c in &mut chunks {
        ctr = ctr.wrapping_add(GOLDEN);
        c.copy_from_slice(&mix(ctr).to_le_bytes());
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        ctr = ctr.wrapping_add(GOLDEN);
        let w = mix(ctr).to_le_bytes();
        let n = tail.len();
        tail.copy_from_slice(&w[..n]);
    }
}

/// A `verify_pattern`: bytes plus the positions where `%o` pastes the block offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    bytes: Vec<u8>,
    offsets: Vec<usize>,
}

impl Pattern {
    /// Validates a pattern as it comes from `VerifySpec` (`verify_pattern`,
    /// `verify_pattern_offsets`).
    pub fn new(bytes: &[u8], offsets: &[usize]) -> Result<Pattern, VerifyError> {
        if bytes.is_empty() {
            return Err(VerifyError::PatternRequired);
        }
        if bytes.len() > MAX_PATTERN_LEN {
            return Err(VerifyError::PatternTooLong {
                len: bytes.len(),
                max: MAX_PATTERN_LEN,
            });
        }
        if let Some(&pos) = offsets.iter().find(|&&p| p.saturating_add(8) > bytes.len()) {
            return Err(VerifyError::PatternOffsetOutOfRange {
                pos,
                len: bytes.len(),
            });
        }
        Ok(Pattern {
            bytes: bytes.to_vec(),
            offsets: offsets.to_vec(),
        })
    }

    /// A one-byte zero pattern (fallback that keeps pattern code total).
    pub fn zero() -> Pattern {
        Pattern {
            bytes: vec![0],
            offsets: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The pattern for the block at `block_offset`, rotated so that its first byte is the one
    /// at position `phase` of the repeating pattern.
    pub fn resolve(&self, block_offset: u64, phase: u64) -> PatBuf {
        let mut plain = [0u8; MAX_PATTERN_LEN];
        let len = self.bytes.len();
        plain[..len].copy_from_slice(&self.bytes);
        for &p in &self.offsets {
            plain[p..p + 8].copy_from_slice(&block_offset.to_le_bytes());
        }
        let phase = (phase % len as u64) as usize;
        // Rotate, then repeat to a few KiB so fills and compares work on large memcpy/memcmp
        // chunks instead of one pattern length at a time.
        let span = (EXPANDED / len) * len;
        let mut buf = [0u8; EXPANDED];
        buf[..len - phase].copy_from_slice(&plain[phase..len]);
        buf[len - phase..len].copy_from_slice(&plain[..phase]);
        let mut filled = len;
        while filled < span {
            let n = filled.min(span - filled);
            buf.copy_within(0..n, filled);
            filled += n;
        }
        PatBuf { buf, len, span }
    }
}

/// Size of the expanded pattern buffer.
const EXPANDED: usize = 4096;

/// A resolved, rotated pattern ready to fill or compare a buffer starting at its first byte.
pub struct PatBuf {
    /// The pattern repeated `span / len` times.
    buf: [u8; EXPANDED],
    len: usize,
    span: usize,
}

impl PatBuf {
    fn expanded(&self) -> &[u8] {
        &self.buf[..self.span]
    }

    /// Repeats the pattern over `out`.
    pub fn fill(&self, out: &mut [u8]) {
        let first = self.span.min(out.len());
        out[..first].copy_from_slice(&self.expanded()[..first]);
        // Double the filled prefix (always whole spans) until the buffer is full.
        let mut filled = first;
        while filled < out.len() {
            let n = filled.min(out.len() - filled);
            out.copy_within(0..n, filled);
            filled += n;
        }
    }

    /// Index of the first byte of `data` that differs from the repeated pattern.
    pub fn first_mismatch(&self, data: &[u8]) -> Option<usize> {
        let exp = self.expanded();
        for (ci, chunk) in data.chunks(self.span).enumerate() {
            if chunk != &exp[..chunk.len()] {
                let i = chunk.iter().zip(exp).position(|(a, b)| a != b)?;
                return Some(ci * self.span + i);
            }
        }
        None
    }

    /// Expected byte at index `i` of a buffer this pattern fills.
    pub fn byte_at(&self, i: usize) -> u8 {
        self.buf[i % self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_stream_is_deterministic_and_position_consistent() {
        let k = data_key(1, 2, 4096, 9);
        let mut a = vec![0u8; 1003];
        let mut b = vec![0u8; 1003];
        fill_random(k, &mut a);
        fill_random(k, &mut b);
        assert_eq!(a, b);
        // A shorter fill is a prefix of the longer one (tail handling).
        let mut c = vec![0u8; 13];
        fill_random(k, &mut c);
        assert_eq!(&c[..], &a[..13]);
        // Different inputs give different data.
        for other in [
            data_key(2, 2, 4096, 9),
            data_key(1, 3, 4096, 9),
            data_key(1, 2, 8192, 9),
            data_key(1, 2, 4096, 10),
        ] {
            let mut d = vec![0u8; 1003];
            fill_random(other, &mut d);
            let same = a.iter().zip(&d).filter(|(x, y)| x == y).count();
            assert!(same < 30, "{same} equal bytes");
        }
    }

    #[test]
    fn pattern_fill_rotation_and_offset_paste() {
        let p = Pattern::new(b"ABCD", &[]).unwrap();
        let mut out = [0u8; 10];
        p.resolve(0, 1).fill(&mut out);
        assert_eq!(&out, b"BCDABCDABC");
        assert_eq!(p.resolve(0, 1).first_mismatch(b"BCDABCDABC"), None);
        assert_eq!(p.resolve(0, 1).first_mismatch(b"BCDABCDXBC"), Some(7));
        assert_eq!(p.resolve(0, 1).byte_at(7), b'A');

        let mut bytes = vec![0xff];
        bytes.extend([0; 8]);
        bytes.push(b'z');
        let p = Pattern::new(&bytes, &[1]).unwrap();
        let mut out = [0u8; 20];
        p.resolve(0x0102_0304_0506_0708, 0).fill(&mut out);
        assert_eq!(out[0], 0xff);
        assert_eq!(&out[1..9], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(out[9], b'z');
        assert_eq!(&out[10..20], &out[0..10]);
    }

    #[test]
    fn pattern_across_many_spans() {
        let p = Pattern::new(b"1234567", &[]).unwrap();
        let pb = p.resolve(0, 3);
        let mut out = vec![0u8; 10_001];
        pb.fill(&mut out);
        for (i, &b) in out.iter().enumerate() {
            assert_eq!(b, b"1234567"[(i + 3) % 7], "byte {i}");
            assert_eq!(pb.byte_at(i), b);
        }
        assert_eq!(pb.first_mismatch(&out), None);
        out[9000] ^= 1;
        assert_eq!(pb.first_mismatch(&out), Some(9000));
    }

    #[test]
    fn pattern_validation() {
        assert!(matches!(
            Pattern::new(b"", &[]),
            Err(VerifyError::PatternRequired)
        ));
        assert!(matches!(
            Pattern::new(&[0; 513], &[]),
            Err(VerifyError::PatternTooLong { .. })
        ));
        assert!(matches!(
            Pattern::new(&[0; 10], &[3]),
            Err(VerifyError::PatternOffsetOutOfRange { pos: 3, len: 10 })
        ));
    }
}
