//! The on-media verify header (format version 1): encoding when a block is written and
//! defensive decoding when it is read back. Decoding takes arbitrary bytes and never panics;
//! it is the target of the `verify_header` fuzz target. The byte layout is documented in the
//! crate root.

use crate::sum::{Algo, Sum, MAX_SUM_LEN};

/// First four bytes of every header.
pub const MAGIC: [u8; 4] = *b"fxVB";
/// Header format version written by this crate.
pub const VERSION: u8 = 1;
/// Size of the fixed part of the header; the digest follows it.
pub const FIXED_LEN: usize = 64;
/// Largest possible header (fixed part plus the longest digest).
pub const MAX_HDR_LEN: usize = FIXED_LEN + MAX_SUM_LEN;

/// Byte offset of the header checksum inside the fixed part.
const CRC_AT: usize = 60;

/// What protects the data part of a block that carries a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HdrMethod {
    /// Data checksummed with this algorithm; digest stored in the header.
    Sum(Algo),
    /// Data is the verify pattern; compared byte by byte, no digest (`verify=pattern_hdr`,
    /// or `verify_pattern=` without `verify=`).
    Pattern,
    /// Only the header is checked (`verify=meta`); the data too when a verify_pattern fills it.
    Meta,
}

impl HdrMethod {
    /// The code stored at byte 5 of the header.
    pub const fn code(self) -> u8 {
        match self {
            HdrMethod::Sum(a) => match a {
                Algo::Md5 => 1,
                Algo::Crc32c => 2,
                Algo::Crc64 => 3,
                Algo::Sha1 => 4,
                Algo::Sha256 => 5,
                Algo::Sha512 => 6,
                Algo::Xxhash => 7,
                Algo::Crc32 => 8,
                Algo::Crc16 => 9,
                Algo::Crc7 => 10,
                Algo::Sha3_256 => 11,
                Algo::Sha3_512 => 12,
            },
            HdrMethod::Pattern => 13,
            HdrMethod::Meta => 14,
        }
    }

    pub fn from_code(code: u8) -> Option<HdrMethod> {
        let algo = match code {
            1 => Algo::Md5,
            2 => Algo::Crc32c,
            3 => Algo::Crc64,
            4 => Algo::Sha1,
            5 => Algo::Sha256,
            6 => Algo::Sha512,
            7 => Algo::Xxhash,
            8 => Algo::Crc32,
            9 => Algo::Crc16,
            10 => Algo::Crc7,
            11 => Algo::Sha3_256,
            12 => Algo::Sha3_512,
            13 => return Some(HdrMethod::Pattern),
            14 => return Some(HdrMethod::Meta),
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

    /// Whole header length: fixed part plus digest, rounded up to 8 so data starts aligned.
    pub const fn hdr_len(self) -> usize {
        FIXED_LEN + self.sum_len().div_ceil(8) * 8
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
    pub version: u8,
    /// Method code (see [`HdrMethod::code`]); kept raw so a header from another method or a
    /// newer version can still be reported.
    pub method: u8,
    /// Header length including digest and padding.
    pub hdr_len: u16,
    /// Length of the interval this header covers (header plus data).
    pub len: u32,
    pub job_id: u32,
    /// Absolute file offset of the interval.
    pub offset: u64,
    /// The writing job's verify seed.
    pub seed: u64,
    /// Sequence number of the write (1-based, per job).
    pub seq: u64,
    /// Writer's clock when the block was filled, in nanoseconds (informational).
    pub write_time_ns: u64,
    /// Offset and length of the whole write (I/O unit) the interval was part of.
    pub io_offset: u64,
    pub io_len: u32,
    /// Digest of the interval's data (empty for pattern_hdr).
    pub sum: Sum,
}

/// Why bytes could not be decoded as a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer bytes than a header needs.
    TooShort { len: usize },
    /// The first four bytes are not [`MAGIC`].
    BadMagic { found: [u8; 4] },
    /// The header-length field is impossible (magic was right, so the header is damaged).
    BadLength { hdr_len: u16 },
    /// The header checksum does not match its contents.
    Checksum { stored: u32, computed: u32 },
}

impl Header {
    /// The method this header was written with, if this crate knows the code.
    pub fn hdr_method(&self) -> Option<HdrMethod> {
        HdrMethod::from_code(self.method)
    }

    /// Writes the header into `out[..hdr_len]`. `out` must hold `hdr_len` bytes and the
    /// digest must have `hdr_len - 64` bytes or fewer (guaranteed by [`HdrMethod::hdr_len`]).
    pub fn encode(&self, out: &mut [u8]) {
        let n = self.hdr_len as usize;
        let out = &mut out[..n];
        out.fill(0);
        out[0..4].copy_from_slice(&MAGIC);
        out[4] = self.version;
        out[5] = self.method;
        out[6..8].copy_from_slice(&self.hdr_len.to_le_bytes());
        out[8..12].copy_from_slice(&self.len.to_le_bytes());
        out[12..16].copy_from_slice(&self.job_id.to_le_bytes());
        out[16..24].copy_from_slice(&self.offset.to_le_bytes());
        out[24..32].copy_from_slice(&self.seed.to_le_bytes());
        out[32..40].copy_from_slice(&self.seq.to_le_bytes());
        out[40..48].copy_from_slice(&self.write_time_ns.to_le_bytes());
        out[48..56].copy_from_slice(&self.io_offset.to_le_bytes());
        out[56..60].copy_from_slice(&self.io_len.to_le_bytes());
        let sum = self.sum.as_bytes();
        out[FIXED_LEN..FIXED_LEN + sum.len()].copy_from_slice(sum);
        let crc = header_crc(out);
        out[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    }

    /// Decodes a header from the start of `b`. Checks magic, length and header checksum; the
    /// caller checks version, method and the fields against what it expects. Never panics.
    pub fn decode(b: &[u8]) -> Result<Header, HeaderError> {
        if b.len() < FIXED_LEN {
            return Err(HeaderError::TooShort { len: b.len() });
        }
        let magic = [b[0], b[1], b[2], b[3]];
        if magic != MAGIC {
            return Err(HeaderError::BadMagic { found: magic });
        }
        let hdr_len = u16::from_le_bytes([b[6], b[7]]);
        let n = hdr_len as usize;
        if !(FIXED_LEN..=MAX_HDR_LEN).contains(&n) || !n.is_multiple_of(8) {
            return Err(HeaderError::BadLength { hdr_len });
        }
        if b.len() < n {
            return Err(HeaderError::TooShort { len: b.len() });
        }
        let stored = le_u32(&b[CRC_AT..]);
        let computed = header_crc(&b[..n]);
        if stored != computed {
            return Err(HeaderError::Checksum { stored, computed });
        }
        let method = b[5];
        // An unknown method code keeps the whole digest area so it can still be shown.
        let sum_len = HdrMethod::from_code(method).map_or(n - FIXED_LEN, |m| m.sum_len());
        let sum_len = sum_len.min(n - FIXED_LEN);
        Ok(Header {
            version: b[4],
            method,
            hdr_len,
            len: le_u32(&b[8..]),
            job_id: le_u32(&b[12..]),
            offset: le_u64(&b[16..]),
            seed: le_u64(&b[24..]),
            seq: le_u64(&b[32..]),
            write_time_ns: le_u64(&b[40..]),
            io_offset: le_u64(&b[48..]),
            io_len: le_u32(&b[56..]),
            sum: Sum::from_bytes(&b[FIXED_LEN..FIXED_LEN + sum_len]),
        })
    }
}

/// crc32c over the header with its own checksum field left out.
fn header_crc(h: &[u8]) -> u32 {
    let c = crc32c::crc32c(&h[..CRC_AT]);
    crc32c::crc32c_append(c, &h[FIXED_LEN..])
}

// Callers pass slices at least 4 / 8 bytes long (checked lengths above).
fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(method: HdrMethod) -> Header {
        Header {
            version: VERSION,
            method: method.code(),
            hdr_len: method.hdr_len() as u16,
            len: 4096,
            job_id: 7,
            offset: 0x1234_5000,
            seed: 0xdead_beef_cafe_f00d,
            seq: 42,
            write_time_ns: 123_456_789,
            io_offset: 0x1234_4000,
            io_len: 8192,
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
            assert_eq!(m.hdr_len() % 8, 0);
        }
    }

    #[test]
    fn field_offsets_are_as_documented() {
        let h = sample(HdrMethod::Sum(Algo::Crc32c));
        let mut b = vec![0u8; 72];
        h.encode(&mut b);
        assert_eq!(&b[0..4], b"fxVB");
        assert_eq!(b[4], 1);
        assert_eq!(b[5], 2);
        assert_eq!(u16::from_le_bytes([b[6], b[7]]), 72);
        assert_eq!(le_u32(&b[8..]), 4096);
        assert_eq!(le_u32(&b[12..]), 7);
        assert_eq!(le_u64(&b[16..]), 0x1234_5000);
        assert_eq!(le_u64(&b[24..]), 0xdead_beef_cafe_f00d);
        assert_eq!(le_u64(&b[32..]), 42);
        assert_eq!(le_u64(&b[40..]), 123_456_789);
        assert_eq!(le_u64(&b[48..]), 0x1234_4000);
        assert_eq!(le_u32(&b[56..]), 8192);
        assert_eq!(&b[64..68], &[0xab; 4]);
        assert_eq!(&b[68..72], &[0; 4]);
    }

    #[test]
    fn every_single_bit_flip_is_caught() {
        let h = sample(HdrMethod::Sum(Algo::Sha256));
        let mut buf = vec![0u8; h.hdr_len as usize];
        h.encode(&mut buf);
        for bit in 0..buf.len() * 8 {
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
            Err(HeaderError::BadMagic { found: [0; 4] })
        );
        let mut b = [0u8; 64];
        b[..4].copy_from_slice(&MAGIC);
        b[6] = 200;
        assert_eq!(
            Header::decode(&b),
            Err(HeaderError::BadLength { hdr_len: 200 })
        );
        b[6] = 64;
        assert!(matches!(
            Header::decode(&b),
            Err(HeaderError::Checksum { .. })
        ));
    }
}
