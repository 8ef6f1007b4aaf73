//! The on-media verify header, in fio 3.33's layout (`struct verify_header` in fio's verify.h)
//! so that blocks written by fio verify with fiox and the reverse: encoding when a block is
//! written and defensive decoding when it is read back. Decoding takes arbitrary bytes and never
//! panics; it is the target of the `verify_header` fuzz target. The byte layout is documented
//! in the crate root.

use crate::le::{u32_at, u64_at};
use crate::sum::{fio_crc32c, Algo, Sum, MAX_SUM_LEN};

/// fio's `FIO_HDR_MAGIC`, stored little-endian in the first two bytes.
pub const MAGIC: u16 = 0xacca;
/// Size of the fixed part of the header (`sizeof(struct verify_header)`); the digest follows.
pub const FIXED_LEN: usize = 40;
/// Largest possible header (fixed part plus the longest digest area).
pub const MAX_HDR_LEN: usize = FIXED_LEN + MAX_SUM_LEN;

/// Byte offset of the header checksum: it covers the 36 bytes before it (not the digest).
const CRC_AT: usize = 36;

/// What protects the data part of a block that carries a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HdrMethod {
    /// Data checksummed with this algorithm; digest stored after the header.
    Sum(Algo),
    /// Data is the verify pattern; compared byte by byte, no digest (`verify=pattern_hdr`,
    /// or `verify_pattern=` without `verify=`).
    Pattern,
    /// Only the header is checked (`verify=meta`); the data too when a verify_pattern fills it.
    Meta,
}

impl HdrMethod {
    /// fio's `verify_type` value (its VERIFY_* enum).
    pub const fn code(self) -> u16 {
        match self {
            HdrMethod::Sum(a) => match a {
                Algo::Md5 => 2,
                Algo::Crc64 => 3,
                Algo::Crc32 => 4,
                Algo::Crc32c => 5,
                Algo::Crc16 => 7,
                Algo::Crc7 => 8,
                Algo::Sha256 => 9,
                Algo::Sha512 => 10,
                Algo::Sha3_224 => 11,
                Algo::Sha3_256 => 12,
                Algo::Sha3_384 => 13,
                Algo::Sha3_512 => 14,
                Algo::Xxhash => 15,
                Algo::Sha1 => 16,
            },
            HdrMethod::Pattern => 17,
            // fio's verify=meta is VERIFY_HDR_ONLY.
            HdrMethod::Meta => 1,
        }
    }

    /// The method of a `verify_type` value; fio's crc32c-intel (6) is crc32c. Values outside
    /// fio's list give `None`.
    pub fn from_code(code: u16) -> Option<HdrMethod> {
        let algo = match code {
            2 => Algo::Md5,
            3 => Algo::Crc64,
            1 => return Some(HdrMethod::Meta),
            4 => Algo::Crc32,
            5 | 6 => Algo::Crc32c,
            7 => Algo::Crc16,
            8 => Algo::Crc7,
            9 => Algo::Sha256,
            10 => Algo::Sha512,
            11 => Algo::Sha3_224,
            12 => Algo::Sha3_256,
            13 => Algo::Sha3_384,
            14 => Algo::Sha3_512,
            15 => Algo::Xxhash,
            16 => Algo::Sha1,
            17 => return Some(HdrMethod::Pattern),
            _ => return None,
        };
        Some(HdrMethod::Sum(algo))
    }

    /// Digest bytes stored after the fixed part.
    pub const fn sum_len(self) -> usize {
        match self {
            HdrMethod::Sum(a) => a.digest_len(),
            HdrMethod::Pattern | HdrMethod::Meta => 0,
        }
    }

    /// Whole header length: fixed part plus digest area (fio's `hdr_size`, unpadded).
    pub const fn hdr_len(self) -> usize {
        FIXED_LEN + self.sum_len()
    }

    pub fn name(self) -> &'static str {
        match self {
            HdrMethod::Sum(a) => a.name(),
            HdrMethod::Pattern => "pattern_hdr",
            HdrMethod::Meta => "meta",
        }
    }
}

/// A decoded (or to-be-encoded) header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// fio's verify type (see [`HdrMethod::code`]); kept raw so a header of another method
    /// can still be reported.
    pub verify_type: u16,
    /// Length of the interval this header covers (header plus data).
    pub len: u32,
    /// Seed of the write's data. fiox derives it from (job seed, job, write number), so it
    /// also identifies the write; fio draws it from its verify generator.
    pub rand_seed: u64,
    /// Absolute file offset of the interval.
    pub offset: u64,
    /// Writer's clock when the block was filled (informational, never checked).
    pub time_sec: u32,
    pub time_nsec: u32,
    /// Writing job's thread number (1-based, fio's `td->thread_number`).
    pub thread: u16,
    /// Write number within the job (0-based), truncated to 16 bits as fio stores it.
    pub numberio: u16,
    /// Digest area of the interval's data (empty for pattern_hdr or an unknown type).
    pub sum: Sum,
}

/// Why bytes could not be decoded as a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer bytes than a header needs.
    TooShort { len: usize },
    /// The first two bytes are not [`MAGIC`].
    BadMagic { found: [u8; 2] },
    /// The header checksum does not match its contents.
    Checksum { stored: u32, computed: u32 },
}

impl Header {
    /// The method this header was written with, if fiox knows the type.
    pub fn hdr_method(&self) -> Option<HdrMethod> {
        HdrMethod::from_code(self.verify_type)
    }

    /// Header length implied by the verify type (fixed part alone for an unknown type).
    pub fn hdr_len(&self) -> usize {
        self.hdr_method().map_or(FIXED_LEN, |m| m.hdr_len())
    }

    /// Writes the header into `out[..hdr_len]`; `out` must hold [`Header::hdr_len`] bytes and
    /// the digest must fit its area (guaranteed by [`HdrMethod::hdr_len`]).
    pub fn encode(&self, out: &mut [u8]) {
        out[0..2].copy_from_slice(&MAGIC.to_le_bytes());
        out[2..4].copy_from_slice(&self.verify_type.to_le_bytes());
        out[4..8].copy_from_slice(&self.len.to_le_bytes());
        out[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        out[16..24].copy_from_slice(&self.offset.to_le_bytes());
        out[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        out[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        out[32..34].copy_from_slice(&self.thread.to_le_bytes());
        out[34..36].copy_from_slice(&self.numberio.to_le_bytes());
        let crc = fio_crc32c(&out[..CRC_AT]);
        out[CRC_AT..FIXED_LEN].copy_from_slice(&crc.to_le_bytes());
        let sum = self.sum.as_bytes();
        out[FIXED_LEN..FIXED_LEN + sum.len()].copy_from_slice(sum);
    }

    /// Decodes a header from the start of `b`. Checks magic and header checksum; the caller
    /// checks type, length and the other fields against what it expects. Never panics.
    pub fn decode(b: &[u8]) -> Result<Header, HeaderError> {
        if b.len() < FIXED_LEN {
            return Err(HeaderError::TooShort { len: b.len() });
        }
        if u16::from_le_bytes([b[0], b[1]]) != MAGIC {
            return Err(HeaderError::BadMagic {
                found: [b[0], b[1]],
            });
        }
        let stored = u32_at(b, CRC_AT);
        let computed = fio_crc32c(&b[..CRC_AT]);
        if stored != computed {
            return Err(HeaderError::Checksum { stored, computed });
        }
        let verify_type = u16::from_le_bytes([b[2], b[3]]);
        let sum_len = HdrMethod::from_code(verify_type).map_or(0, |m| m.sum_len());
        if b.len() < FIXED_LEN + sum_len {
            return Err(HeaderError::TooShort { len: b.len() });
        }
        Ok(Header {
            verify_type,
            len: u32_at(b, 4),
            rand_seed: u64_at(b, 8),
            offset: u64_at(b, 16),
            time_sec: u32_at(b, 24),
            time_nsec: u32_at(b, 28),
            thread: u16::from_le_bytes([b[32], b[33]]),
            numberio: u16::from_le_bytes([b[34], b[35]]),
            sum: Sum::from_bytes(&b[FIXED_LEN..FIXED_LEN + sum_len]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(method: HdrMethod) -> Header {
        Header {
            verify_type: method.code(),
            len: 4096,
            rand_seed: 0xdead_beef_cafe_f00d,
            offset: 0x1234_5000,
            time_sec: 17,
            time_nsec: 123_456_789,
            thread: 3,
            numberio: 42,
            sum: Sum::from_bytes(&vec![0xab; method.sum_len()]),
        }
    }

    #[test]
    fn round_trip_every_method() {
        let mut methods: Vec<HdrMethod> = Algo::ALL.iter().map(|&a| HdrMethod::Sum(a)).collect();
        methods.push(HdrMethod::Pattern);
        methods.push(HdrMethod::Meta);
        for m in methods {
            assert_eq!(HdrMethod::from_code(m.code()), Some(m));
            let h = sample(m);
            let mut buf = vec![0u8; m.hdr_len()];
            h.encode(&mut buf);
            assert_eq!(Header::decode(&buf), Ok(h), "{}", m.name());
        }
        assert_eq!(HdrMethod::from_code(6), Some(HdrMethod::Sum(Algo::Crc32c)));
    }

    /// The layout of fio's `struct verify_header` and its `vhdr_*` sizes.
    #[test]
    fn field_offsets_are_fios() {
        let h = sample(HdrMethod::Sum(Algo::Crc32c));
        let mut b = vec![0u8; 44];
        h.encode(&mut b);
        assert_eq!(&b[0..2], &[0xca, 0xac]);
        assert_eq!(u16::from_le_bytes([b[2], b[3]]), 5);
        assert_eq!(u32_at(&b, 4), 4096);
        assert_eq!(u64_at(&b, 8), 0xdead_beef_cafe_f00d);
        assert_eq!(u64_at(&b, 16), 0x1234_5000);
        assert_eq!(u32_at(&b, 24), 17);
        assert_eq!(u32_at(&b, 28), 123_456_789);
        assert_eq!(u16::from_le_bytes([b[32], b[33]]), 3);
        assert_eq!(u16::from_le_bytes([b[34], b[35]]), 42);
        assert_eq!(u32_at(&b, 36), !crc32c::crc32c(&b[..36]));
        assert_eq!(&b[40..44], &[0xab; 4]);
        let sizes = [
            (Algo::Md5, 56),
            (Algo::Crc64, 48),
            (Algo::Crc16, 42),
            (Algo::Crc7, 41),
            (Algo::Sha256, 104),
            (Algo::Sha512, 168),
            (Algo::Sha1, 60),
            (Algo::Xxhash, 44),
            (Algo::Sha3_224, 68),
            (Algo::Sha3_256, 72),
            (Algo::Sha3_384, 88),
            (Algo::Sha3_512, 104),
        ];
        for (a, n) in sizes {
            assert_eq!(HdrMethod::Sum(a).hdr_len(), n, "{}", a.name());
        }
        assert_eq!(HdrMethod::Pattern.hdr_len(), 40);
    }

    /// The header checksum covers the first 36 bytes (as fio's); the digest is covered by the
    /// data check instead.
    #[test]
    fn every_single_bit_flip_of_the_fixed_part_is_caught() {
        let h = sample(HdrMethod::Sum(Algo::Sha256));
        let mut buf = vec![0u8; h.hdr_len()];
        h.encode(&mut buf);
        for bit in 0..FIXED_LEN * 8 {
            let mut b = buf.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(Header::decode(&b).is_err(), "bit {bit} flip not caught");
        }
    }

    #[test]
    fn decode_errors() {
        assert_eq!(
            Header::decode(&[0; 10]),
            Err(HeaderError::TooShort { len: 10 })
        );
        assert_eq!(
            Header::decode(&[0; 64]),
            Err(HeaderError::BadMagic { found: [0; 2] })
        );
        let mut b = [0u8; 64];
        b[..2].copy_from_slice(&MAGIC.to_le_bytes());
        assert!(matches!(
            Header::decode(&b),
            Err(HeaderError::Checksum { .. })
        ));
        // A valid sha512 header cut short of its digest area.
        let h = sample(HdrMethod::Sum(Algo::Sha512));
        let mut buf = vec![0u8; 168];
        h.encode(&mut buf);
        assert_eq!(
            Header::decode(&buf[..100]),
            Err(HeaderError::TooShort { len: 100 })
        );
    }
}
