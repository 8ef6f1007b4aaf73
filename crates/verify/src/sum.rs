//! Checksum algorithms behind `verify=`: one [`Algo`] per checksum method, computed over a
//! list of byte segments (so a block whose header was moved by `verify_offset` can be hashed in
//! logical order without copying it), and the fixed-size [`Sum`] value that lands in headers.
//!
//! Choices (fiox writes its own header layout, so bit-compatibility with fio is not required,
//! but where it costs nothing the algorithm is the same one fio uses):
//! - `crc32c`: Castagnoli, hardware-accelerated (SSE4.2 / ARMv8 CRC) with software fallback.
//! - `crc64`: the Jones polynomial, reflected, init 0 — the same function as fio's crc64
//!   (catalogued as CRC-64/REDIS).
//! - `crc32`: the common zlib/IEEE CRC-32 (CRC-32/ISO-HDLC).
//! - `crc16`: CRC-16/ARC (poly 0x8005 reflected, init 0), the same function as fio's crc16.
//! - `crc7`: CRC-7/MMC (poly 0x09).
//! - `xxhash`: XXH3-64 (fio uses XXH32; XXH3 is faster on 64-bit machines).
//! - `md5`, `sha1`, `sha256`, `sha512`, `sha3-256`, `sha3-512`: the RustCrypto implementations
//!   (SHA-NI used where the CPU has it).

use crc::{Crc, Table, CRC_16_ARC, CRC_32_ISO_HDLC, CRC_64_REDIS, CRC_7_MMC};
use sha2::Digest;
use std::fmt;

static CRC64: Crc<u64, Table<16>> = Crc::<u64, Table<16>>::new(&CRC_64_REDIS);
static CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISO_HDLC);
static CRC16: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&CRC_16_ARC);
static CRC7: Crc<u8, Table<16>> = Crc::<u8, Table<16>>::new(&CRC_7_MMC);

/// Longest digest any algorithm produces (sha512 / sha3-512).
pub const MAX_SUM_LEN: usize = 64;

/// A checksum algorithm that can protect the data part of a verified block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algo {
    Md5,
    Crc32c,
    Crc64,
    Sha1,
    Sha256,
    Sha512,
    Xxhash,
    Crc32,
    Crc16,
    Crc7,
    Sha3_256,
    Sha3_512,
}

impl Algo {
    /// Every algorithm, for tests and benchmarks.
    pub const ALL: [Algo; 12] = [
        Algo::Md5,
        Algo::Crc32c,
        Algo::Crc64,
        Algo::Sha1,
        Algo::Sha256,
        Algo::Sha512,
        Algo::Xxhash,
        Algo::Crc32,
        Algo::Crc16,
        Algo::Crc7,
        Algo::Sha3_256,
        Algo::Sha3_512,
    ];

    /// Size of the digest in bytes, as stored in the header.
    pub const fn digest_len(self) -> usize {
        match self {
            Algo::Md5 => 16,
            Algo::Crc32c | Algo::Crc32 => 4,
            Algo::Crc64 | Algo::Xxhash => 8,
            Algo::Sha1 => 20,
            Algo::Sha256 | Algo::Sha3_256 => 32,
            Algo::Sha512 | Algo::Sha3_512 => 64,
            Algo::Crc16 => 2,
            Algo::Crc7 => 1,
        }
    }

    /// The name fio's `verify=` option uses for this algorithm.
    pub const fn name(self) -> &'static str {
        match self {
            Algo::Md5 => "md5",
            Algo::Crc32c => "crc32c",
            Algo::Crc64 => "crc64",
            Algo::Sha1 => "sha1",
            Algo::Sha256 => "sha256",
            Algo::Sha512 => "sha512",
            Algo::Xxhash => "xxhash",
            Algo::Crc32 => "crc32",
            Algo::Crc16 => "crc16",
            Algo::Crc7 => "crc7",
            Algo::Sha3_256 => "sha3-256",
            Algo::Sha3_512 => "sha3-512",
        }
    }

    /// Checksum of the concatenation of `segs`.
    pub fn sum(self, segs: &[&[u8]]) -> Sum {
        match self {
            Algo::Md5 => digest_sum::<md5::Md5>(segs),
            Algo::Sha1 => digest_sum::<sha1::Sha1>(segs),
            Algo::Sha256 => digest_sum::<sha2::Sha256>(segs),
            Algo::Sha512 => digest_sum::<sha2::Sha512>(segs),
            Algo::Sha3_256 => digest_sum::<sha3::Sha3_256>(segs),
            Algo::Sha3_512 => digest_sum::<sha3::Sha3_512>(segs),
            Algo::Crc32c => {
                let crc = segs.iter().fold(0, |c, s| crc32c::crc32c_append(c, s));
                Sum::from_bytes(&crc.to_le_bytes())
            }
            Algo::Crc64 => {
                let mut d = CRC64.digest();
                segs.iter().for_each(|s| d.update(s));
                Sum::from_bytes(&d.finalize().to_le_bytes())
            }
            Algo::Crc32 => {
                let mut d = CRC32.digest();
                segs.iter().for_each(|s| d.update(s));
                Sum::from_bytes(&d.finalize().to_le_bytes())
            }
            Algo::Crc16 => {
                let mut d = CRC16.digest();
                segs.iter().for_each(|s| d.update(s));
                Sum::from_bytes(&d.finalize().to_le_bytes())
            }
            Algo::Crc7 => {
                let mut d = CRC7.digest();
                segs.iter().for_each(|s| d.update(s));
                Sum::from_bytes(&[d.finalize()])
            }
            Algo::Xxhash => {
                let mut h = xxhash_rust::xxh3::Xxh3::new();
                segs.iter().for_each(|s| h.update(s));
                Sum::from_bytes(&h.digest().to_le_bytes())
            }
        }
    }
}

fn digest_sum<D: Digest>(segs: &[&[u8]]) -> Sum {
    let mut d = D::new();
    for s in segs {
        d.update(s);
    }
    Sum::from_bytes(&d.finalize())
}

/// A digest value of up to [`MAX_SUM_LEN`] bytes (integers little-endian), printed as hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sum {
    len: u8,
    bytes: [u8; MAX_SUM_LEN],
}

impl Sum {
    /// Copies at most [`MAX_SUM_LEN`] bytes of `b`.
    pub fn from_bytes(b: &[u8]) -> Sum {
        let n = b.len().min(MAX_SUM_LEN);
        let mut bytes = [0u8; MAX_SUM_LEN];
        bytes[..n].copy_from_slice(&b[..n]);
        Sum {
            len: n as u8,
            bytes,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl fmt::Display for Sum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Sum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sum({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: Sum) -> String {
        s.to_string()
    }

    #[test]
    fn known_answers() {
        let m = b"123456789";
        // Check values from the CRC catalogue / hash standards.
        assert_eq!(
            Algo::Crc32c.sum(&[m]).as_bytes(),
            0xe306_9283u32.to_le_bytes()
        );
        assert_eq!(
            Algo::Crc32.sum(&[m]).as_bytes(),
            0xcbf4_3926u32.to_le_bytes()
        );
        assert_eq!(Algo::Crc16.sum(&[m]).as_bytes(), 0xbb3du16.to_le_bytes());
        assert_eq!(Algo::Crc7.sum(&[m]).as_bytes(), [0x75]);
        assert_eq!(
            Algo::Crc64.sum(&[m]).as_bytes(),
            0xe9c6_d914_c4b8_d9cau64.to_le_bytes()
        );
        assert_eq!(
            hex(Algo::Md5.sum(&[b"abc"])),
            "900150983cd24fb0d6963f7d28e17f72"
        );
        assert_eq!(
            hex(Algo::Sha1.sum(&[b"abc"])),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert!(hex(Algo::Sha256.sum(&[b"abc"])).starts_with("ba7816bf8f01cfea"));
        assert!(hex(Algo::Sha512.sum(&[b"abc"])).starts_with("ddaf35a193617aba"));
        assert!(hex(Algo::Sha3_256.sum(&[b"abc"])).starts_with("3a985da74fe225b2"));
        assert!(hex(Algo::Sha3_512.sum(&[b"abc"])).starts_with("b751850b1a57168a"));
    }

    /// fio's crc64: reflected Jones polynomial 0x95AC9329AC4BC9B5, init 0, no final xor,
    /// written here bit by bit to confirm the table-driven crate computes the same function.
    #[test]
    fn crc64_is_fios_function() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut crc = 0u64;
        for &b in &data {
            crc ^= b as u64;
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0x95AC_9329_AC4B_C9B5
                } else {
                    crc >> 1
                };
            }
        }
        assert_eq!(Algo::Crc64.sum(&[&data]).as_bytes(), crc.to_le_bytes());
    }

    #[test]
    fn segments_equal_concatenation() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 31 + 1) as u8).collect();
        for algo in Algo::ALL {
            let whole = algo.sum(&[&data]);
            let parts = algo.sum(&[&data[..7], &data[7..4000], &data[4000..]]);
            assert_eq!(whole, parts, "{}", algo.name());
            assert_eq!(whole.as_bytes().len(), algo.digest_len(), "{}", algo.name());
        }
    }
}
