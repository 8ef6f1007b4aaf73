//! Checksum algorithms behind `verify=`: one [`Algo`] per checksum method, computed over a
//! list of byte segments (so a block whose header was moved by `verify_offset` can be hashed in
//! logical order without copying it), and the fixed-size [`Sum`] value that lands in headers.
//!
//! Every digest is the exact byte string fio 3.33 stores in its `vhdr_*` structure, so blocks
//! written by either tool verify with the other (checked against fio-written files in
//! tests/fio_interop.rs). Several of fio's functions are not the textbook ones:
//! - `crc32c`: Castagnoli, init all ones, *no* final inversion (hardware-accelerated).
//! - `crc32`: poly 0x04C11DB7, not reflected, init 0, no final xor (POSIX `cksum` table
//!   without the length step).
//! - `crc64`: the Jones polynomial, reflected, init 0 (CRC-64/REDIS).
//! - `crc16`: CRC-16/ARC; `crc7`: CRC-7/MMC.
//! - `xxhash`: XXH32 with seed 1.
//! - `md5`, `sha3-224`, `sha3-256`, `sha3-384`, `sha3-512`: the standard digests.
//! - `sha1`: the five state words stored little-endian (the standard digest with each 4-byte
//!   word reversed).
//! - `sha256`: fio's final step stores the low byte of each of the 8 state words over the
//!   first 8 bytes of its 64-byte block buffer and keeps the last padded block (with the bit
//!   count little-endian, which also makes the state differ from standard SHA-256) in the
//!   other 56: a 64-byte value.
//! - `sha512`: fio never finalises; the 128 bytes stored are its input buffer: the tail of the
//!   data after the last whole 128-byte block over the first 128 bytes of the data.

use crc::{Crc, Table, CRC_16_ARC, CRC_64_REDIS, CRC_7_MMC};
use sha2::Digest;
use std::fmt;

static CRC64: Crc<u64, Table<16>> = Crc::<u64, Table<16>>::new(&CRC_64_REDIS);
/// fio's crc32 (crc/crc32.c): non-reflected 0x04C11DB7, init 0, no final xor.
const CRC_32_FIO: crc::Algorithm<u32> = crc::Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0x89a1_897f,
    residue: 0,
};
static CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_FIO);
static CRC16: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&CRC_16_ARC);
static CRC7: Crc<u8, Table<16>> = Crc::<u8, Table<16>>::new(&CRC_7_MMC);

/// Longest digest any algorithm stores (fio's 128-byte sha512 area).
pub const MAX_SUM_LEN: usize = 128;

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
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
}

impl Algo {
    /// Every algorithm, for tests and benchmarks.
    pub const ALL: [Algo; 14] = [
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
        Algo::Sha3_224,
        Algo::Sha3_256,
        Algo::Sha3_384,
        Algo::Sha3_512,
    ];

    /// Size of the digest area in bytes, as fio's `vhdr_*` structure stores it.
    pub const fn digest_len(self) -> usize {
        match self {
            Algo::Md5 => 16,
            Algo::Crc32c | Algo::Crc32 | Algo::Xxhash => 4,
            Algo::Crc64 => 8,
            Algo::Sha1 => 20,
            Algo::Sha3_224 => 28,
            Algo::Sha3_256 => 32,
            Algo::Sha3_384 => 48,
            Algo::Sha256 | Algo::Sha3_512 => 64,
            Algo::Sha512 => 128,
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
            Algo::Sha3_224 => "sha3-224",
            Algo::Sha3_256 => "sha3-256",
            Algo::Sha3_384 => "sha3-384",
            Algo::Sha3_512 => "sha3-512",
        }
    }

    /// Checksum of the concatenation of `segs`, as fio stores it.
    pub fn sum(self, segs: &[&[u8]]) -> Sum {
        match self {
            Algo::Md5 => digest_sum::<md5::Md5>(segs),
            Algo::Sha1 => {
                let d = digest_sum::<sha1::Sha1>(segs);
                let mut b = [0u8; 20];
                for (o, w) in b.chunks_exact_mut(4).zip(d.as_bytes().chunks_exact(4)) {
                    o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
                }
                Sum::from_bytes(&b)
            }
            Algo::Sha256 => fio_sha256(segs),
            Algo::Sha512 => fio_sha512(segs),
            Algo::Sha3_224 => digest_sum::<sha3::Sha3_224>(segs),
            Algo::Sha3_256 => digest_sum::<sha3::Sha3_256>(segs),
            Algo::Sha3_384 => digest_sum::<sha3::Sha3_384>(segs),
            Algo::Sha3_512 => digest_sum::<sha3::Sha3_512>(segs),
            Algo::Crc32c => {
                let crc = segs.iter().fold(0, |c, s| crc32c::crc32c_append(c, s));
                Sum::from_bytes(&(!crc).to_le_bytes())
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
                let mut h = xxhash_rust::xxh32::Xxh32::new(1);
                segs.iter().for_each(|s| h.update(s));
                Sum::from_bytes(&h.digest().to_le_bytes())
            }
        }
    }
}

/// fio's crc32c (no final inversion) of one buffer, as used for its header checksum.
pub fn fio_crc32c(b: &[u8]) -> u32 {
    !crc32c::crc32c(b)
}

/// Feeds the concatenation of `segs` to `block` in whole 64-byte blocks and returns the tail
/// (fewer than 64 bytes) with its length.
fn blocks64(segs: &[&[u8]], mut block: impl FnMut(&[u8; 64])) -> ([u8; 64], usize) {
    let mut buf = [0u8; 64];
    let mut have = 0usize;
    for s in segs {
        let mut s: &[u8] = s;
        if have > 0 {
            let n = (64 - have).min(s.len());
            buf[have..have + n].copy_from_slice(&s[..n]);
            have += n;
            s = &s[n..];
            if have < 64 {
                continue;
            }
            block(&buf);
        }
        let mut chunks = s.chunks_exact(64);
        for c in &mut chunks {
            // chunks_exact yields 64-byte slices, so the conversion cannot fail.
            if let Ok(a) = <&[u8; 64]>::try_from(c) {
                block(a);
            }
        }
        let rest = chunks.remainder();
        buf[..rest.len()].copy_from_slice(rest);
        have = rest.len();
    }
    (buf, have)
}

/// fio 3.33's "sha256" value (see the module notes): 64 bytes.
fn fio_sha256(segs: &[&[u8]]) -> Sum {
    const H0: [u32; 8] = [
        0x6a09_e667,
        0xbb67_ae85,
        0x3c6e_f372,
        0xa54f_f53a,
        0x510e_527f,
        0x9b05_688c,
        0x1f83_d9ab,
        0x5be0_cd19,
    ];
    let mut st = H0;
    let total: u64 = segs.iter().map(|s| s.len() as u64).sum();
    let compress = |st: &mut [u32; 8], b: &[u8; 64]| {
        sha2::block_api::compress256(st, std::slice::from_ref(b));
    };
    let (tail, r) = blocks64(segs, |b| compress(&mut st, b));
    // fio counts bytes in a u32 and appends the bit count in host (little-endian) order.
    let bits = (u64::from(total as u32) << 3).to_le_bytes();
    let mut last = [0u8; 64];
    last[..r].copy_from_slice(&tail[..r]);
    last[r] = 0x80;
    if r >= 56 {
        compress(&mut st, &last);
        last = [0u8; 64];
    }
    last[56..].copy_from_slice(&bits);
    compress(&mut st, &last);
    for (b, w) in last.iter_mut().zip(st) {
        *b = w as u8;
    }
    Sum::from_bytes(&last)
}

/// fio 3.33's "sha512" value: its 128-byte input buffer after `update` without `final`.
fn fio_sha512(segs: &[&[u8]]) -> Sum {
    let total: usize = segs.iter().map(|s| s.len()).sum();
    let mut out = [0u8; 128];
    copy_range(segs, 0, &mut out[..total.min(128)]);
    if total >= 128 {
        let whole = total - total % 128;
        let n = total - whole;
        copy_range(segs, whole, &mut out[..n]);
    }
    Sum::from_bytes(&out)
}

/// Copies `out.len()` bytes of the concatenation of `segs`, starting at `start`.
fn copy_range(segs: &[&[u8]], mut start: usize, out: &mut [u8]) {
    let mut filled = 0;
    for s in segs {
        if filled == out.len() {
            break;
        }
        if start >= s.len() {
            start -= s.len();
            continue;
        }
        let n = (s.len() - start).min(out.len() - filled);
        out[filled..filled + n].copy_from_slice(&s[start..start + n]);
        filled += n;
        start = 0;
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
        // fio's crc32c is the catalogue value without the final inversion.
        assert_eq!(
            Algo::Crc32c.sum(&[m]).as_bytes(),
            (!0xe306_9283u32).to_le_bytes()
        );
        // fio's crc32 is CRC-32/POSIX without the length step and final inversion.
        assert_eq!(
            Algo::Crc32.sum(&[m]).as_bytes(),
            (!0x765e_7680u32).to_le_bytes()
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
        // The standard a9993e36 4706816a ba3e2571 ... with each word stored little-endian.
        assert_eq!(
            hex(Algo::Sha1.sum(&[b"abc"])),
            "363e99a96a81064771253eba6cc250789dd8d09c"
        );
        assert_eq!(
            Algo::Xxhash.sum(&[b""]).as_bytes(),
            xxhash_rust::xxh32::xxh32(b"", 1).to_le_bytes()
        );
        assert!(hex(Algo::Sha3_256.sum(&[b"abc"])).starts_with("3a985da74fe225b2"));
        assert!(hex(Algo::Sha3_512.sum(&[b"abc"])).starts_with("b751850b1a57168a"));
        assert_eq!(
            hex(Algo::Sha3_224.sum(&[b"abc"])),
            "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf"
        );
        assert!(hex(Algo::Sha3_384.sum(&[b"abc"])).starts_with("ec01498288516fc926459f58e2c6ad8d"));
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

    /// fio's sha256 value: state low bytes, then the last padded block (length little-endian).
    #[test]
    fn sha256_is_fios_value() {
        let s = Algo::Sha256.sum(&[b"abc"]);
        let b = s.as_bytes();
        assert_eq!(b.len(), 64);
        // Block bytes 8..56 are padding zeros for a 3-byte input; the bit count is 24 LE.
        assert!(b[8..56].iter().all(|&x| x == 0));
        assert_eq!(&b[56..], &24u64.to_le_bytes());
        // A 60-byte input spills the padding into a second block of zeros.
        let s = Algo::Sha256.sum(&[&[7u8; 60]]);
        assert!(s.as_bytes()[8..56].iter().all(|&x| x == 0));
        assert_eq!(&s.as_bytes()[56..], &480u64.to_le_bytes());
    }

    /// fio's sha512 value: the data tail over the first 128 bytes.
    #[test]
    fn sha512_is_fios_buffer() {
        let data: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let s = Algo::Sha512.sum(&[&data[..100], &data[100..]]);
        let b = s.as_bytes();
        assert_eq!(&b[..44], &data[256..300]);
        assert_eq!(&b[44..128], &data[44..128]);
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
