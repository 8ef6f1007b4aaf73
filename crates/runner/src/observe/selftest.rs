//! fio's speed self-tests, `--crctest[=names]` and `--memcpytest[=names]` (fio 3.33's
//! crc/test.c and lib/memcpy.c): the same work timed the same way, printed in fio's lines.
//!
//! `--crctest` runs each checksum over a 128 KiB buffer of random bytes 2048 times (256 MiB)
//! and prints `name:<tabs>  NNNN.NN MiB/sec`; the checksums are fiox's verify ones (fio's own
//! sha256 variant included; sha512 is the SHA-512 compression fio's test runs) plus the three
//! hashes fio uses elsewhere (murmur3, jhash, fnv). `--memcpytest` copies a 32 MiB buffer 64 times in pieces of 8 bytes to
//! 512 KiB with four methods (libc memcpy, memmove, a byte loop, and the byte loop from 64
//! bytes up) and prints one line per piece size. The rates are ours; names, order and format
//! are fio's, so scripts reading fio's output read these. `list` (or `help`) prints the names
//! and exits 1, as fio does; an unknown name is an error naming it (fio would skip it
//! silently when another name in the list is known).

use fiox_verify::Algo;
use std::hint::black_box;
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// fio's crctest buffer and repetitions: 128 KiB x 2048 = 256 MiB per checksum.
const CHUNK: usize = 128 << 10;
const NR_CHUNKS: usize = 2048;

/// fio's memcpy test: a 32 MiB buffer copied 64 times per piece size.
const BUF_SIZE: usize = 32 << 20;
const NR_ITERS: usize = 64;
const PIECES: [usize; 11] = [8, 16, 96, 128, 256, 512, 2048, 8192, 131072, 262144, 524288];

/// One checksum of fio's crctest, in fio's order.
#[derive(Clone, Copy)]
enum Hash {
    Verify(Algo),
    /// fio's sha512 test updates a SHA-512 state over all the data and never finalises;
    /// fiox's verify "sha512" stores what fio stores without that work, so it is timed here
    /// with the real compression function.
    Sha512,
    Murmur3,
    Jhash,
    Fnv,
}

/// fio's crctest table: names and order of crc/test.c.
const HASHES: [(&str, Hash); 17] = [
    ("md5", Hash::Verify(Algo::Md5)),
    ("crc64", Hash::Verify(Algo::Crc64)),
    ("crc32", Hash::Verify(Algo::Crc32)),
    ("crc32c", Hash::Verify(Algo::Crc32c)),
    ("crc16", Hash::Verify(Algo::Crc16)),
    ("crc7", Hash::Verify(Algo::Crc7)),
    ("sha1", Hash::Verify(Algo::Sha1)),
    ("sha256", Hash::Verify(Algo::Sha256)),
    ("sha512", Hash::Sha512),
    ("xxhash", Hash::Verify(Algo::Xxhash)),
    ("murmur3", Hash::Murmur3),
    ("jhash", Hash::Jhash),
    ("fnv", Hash::Fnv),
    ("sha3-224", Hash::Verify(Algo::Sha3_224)),
    ("sha3-256", Hash::Verify(Algo::Sha3_256)),
    ("sha3-384", Hash::Verify(Algo::Sha3_384)),
    ("sha3-512", Hash::Verify(Algo::Sha3_512)),
];

/// fio's memcpy methods, in its order.
const COPIES: [&str; 4] = ["memcpy", "memmove", "simple", "hybrid"];

/// Which of `names` the comma-separated `spec` selects (None: all). `Err` carries the exit
/// code after printing the names: 1 for `list`/`help` and for an unknown name, as fio.
fn select(
    spec: Option<&str>,
    names: &[&str],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<Result<Vec<bool>, i32>> {
    let Some(spec) = spec else {
        return Ok(Ok(vec![true; names.len()]));
    };
    let mut list = || -> io::Result<()> { names.iter().try_for_each(|n| writeln!(out, "{n}")) };
    if spec == "list" || spec == "help" {
        list()?;
        return Ok(Err(1));
    }
    let mut chosen = vec![false; names.len()];
    for want in spec.split(',') {
        match names.iter().position(|n| *n == want) {
            Some(i) => chosen[i] = true,
            None => {
                writeln!(err, "fiox: unknown hash `{want}`. Available:")?;
                list()?;
                return Ok(Err(1));
            }
        }
    }
    Ok(Ok(chosen))
}

/// `--crctest[=names]`: prints one rate line per chosen checksum; the exit code.
pub fn crctest(spec: Option<&str>, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<i32> {
    let names: Vec<&str> = HASHES.iter().map(|(n, _)| *n).collect();
    let chosen = match select(spec, &names, out, err)? {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    let buf = random_bytes(CHUNK);
    let mut first = true;
    for (&(name, hash), _) in HASHES.iter().zip(&chosen).filter(|(_, &c)| c) {
        // As fio: spin the CPU up and touch the data before the first measurement.
        if first {
            spin(Duration::from_millis(100));
            run_hash(hash, &buf);
            first = false;
        }
        let t = Instant::now();
        run_hash(hash, &buf);
        let pre = if name.len() >= 7 { "\t" } else { "\t\t" };
        match rate(CHUNK * NR_CHUNKS, t.elapsed()) {
            Some(r) => writeln!(out, "{name}:{pre}{r:8.2} MiB/sec")?,
            None => writeln!(out, "{name}:inf MiB/sec")?,
        }
    }
    Ok(0)
}

/// `--memcpytest[=names]`: for each chosen method its name, then one rate line per piece
/// size; the exit code.
pub fn memcpytest(spec: Option<&str>, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<i32> {
    let chosen = match select(spec, &COPIES, out, err)? {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    // Source and destination in one allocation, so memmove can be copy_within.
    let mut mem = random_bytes(BUF_SIZE);
    mem.resize(2 * BUF_SIZE, 0);
    for (i, _) in chosen.iter().enumerate().filter(|(_, &c)| c) {
        spin(Duration::from_millis(100));
        copy_all(i, PIECES[0], &mut mem);
        writeln!(out, "{}", COPIES[i])?;
        for piece in PIECES {
            let t = Instant::now();
            copy_all(i, piece, &mut mem);
            match rate(NR_ITERS * BUF_SIZE, t.elapsed()) {
                Some(r) => writeln!(out, "\t{piece} bytes:\t{r:8.2} MiB/sec")?,
                None => writeln!(out, "\t{piece} bytes:inf MiB/sec")?,
            }
        }
    }
    Ok(0)
}

/// fio's rate: bytes per microsecond scaled to MiB/s; None when under a microsecond passed.
fn rate(bytes: usize, took: Duration) -> Option<f64> {
    let usec = took.as_micros();
    (usec > 0).then(|| bytes as f64 / usec as f64 / (1.024 * 1.024))
}

/// Busy-wait (fio's usec_spin) so that the CPU runs at speed when timing starts.
fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// `n` bytes from a xorshift generator (fio fills with its own; only speed matters here).
fn random_bytes(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x8989;
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(n);
    v
}

/// One timed unit of crctest: the checksum of `buf`, NR_CHUNKS times.
fn run_hash(hash: Hash, buf: &[u8]) {
    let mut acc = 0u64;
    for _ in 0..NR_CHUNKS {
        acc = acc.wrapping_add(match hash {
            Hash::Verify(a) => u64::from(a.sum(&[buf]).as_bytes()[0]),
            Hash::Sha512 => {
                use sha2::Digest;
                u64::from(sha2::Sha512::digest(buf)[0])
            }
            Hash::Murmur3 => u64::from(murmur3(buf, 0x8989)),
            Hash::Jhash => u64::from(jhash(buf, 0x8989)),
            Hash::Fnv => fnv(buf, 0x8989),
        });
    }
    black_box(acc);
}

/// One timed unit of memcpytest: BUF_SIZE bytes copied NR_ITERS times in `piece`s with
/// method `method` (an index into COPIES). `mem` holds the source then the destination.
fn copy_all(method: usize, piece: usize, mem: &mut [u8]) {
    for _ in 0..NR_ITERS {
        let mut at = 0;
        while at < BUF_SIZE {
            let len = piece.min(BUF_SIZE - at);
            let (src, dst) = mem.split_at_mut(BUF_SIZE);
            let (s, d) = (&src[at..at + len], &mut dst[at..at + len]);
            match method {
                0 => d.copy_from_slice(s),
                1 => mem.copy_within(at..at + len, BUF_SIZE + at),
                3 if len < 64 => d.copy_from_slice(s),
                _ => byte_copy(d, s),
            }
            at += len;
        }
        black_box(&mut *mem);
    }
}

/// fio's simple_memcpy: one byte at a time. black_box keeps the compiler from turning the
/// loop back into a memcpy call, which would make "simple" measure memcpy.
fn byte_copy(d: &mut [u8], s: &[u8]) {
    for (d, s) in d.iter_mut().zip(s) {
        *d = black_box(*s);
    }
}

/// MurmurHash3 x86_32 (fio's crc/murmur3.c).
fn murmur3(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h = seed;
    let blocks = data.chunks_exact(4);
    let tail = blocks.remainder();
    for b in blocks {
        h ^= mix(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    if !tail.is_empty() {
        let k = tail
            .iter()
            .rev()
            .fold(0u32, |k, &b| (k << 8) | u32::from(b));
        h ^= mix(k);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// fio's jhash (hash.h): Bob Jenkins' lookup3 shape, with fio's quirk of adding one byte,
/// not one word, per state variable for each 12-byte block.
fn jhash(key: &[u8], initval: u32) -> u32 {
    let init = 0x9e37_79b9u32
        .wrapping_add(key.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = key;
    while k.len() > 12 {
        a = a.wrapping_add(u32::from(k[0]));
        b = b.wrapping_add(u32::from(k[4]));
        c = c.wrapping_add(u32::from(k[8]));
        jhash_mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let word = |w: &[u8]| {
        w.iter()
            .enumerate()
            .fold(0u32, |v, (i, &x)| v.wrapping_add(u32::from(x) << (8 * i)))
    };
    a = a.wrapping_add(word(&k[..k.len().min(4)]));
    b = b.wrapping_add(word(k.get(4..k.len().min(8)).unwrap_or(&[])));
    c = c.wrapping_add(word(k.get(8..).unwrap_or(&[])));
    jhash_final(a, b, c)
}

/// lookup3's mix: each line subtracts, xors a rotation and adds, as `__jhash_mix`.
fn jhash_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

/// lookup3's final mix into `c` (`__jhash_final`).
fn jhash_final(mut a: u32, mut b: u32, mut c: u32) -> u32 {
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// fio's 64-bit fnv (crc/fnv.c): whole 8-byte words (native order), then the tail bytes
/// big-endian into one word.
fn fnv(buf: &[u8], mut h: u64) -> u64 {
    const PRIME: u64 = 0x100_0000_01b3;
    let words = buf.chunks_exact(8);
    let tail = words.remainder();
    for w in words {
        h = h.wrapping_mul(PRIME);
        h ^= u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]));
    }
    if !tail.is_empty() {
        h = h.wrapping_mul(PRIME);
        h ^= tail.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Published MurmurHash3_x86_32 values.
    #[test]
    fn murmur3_is_the_reference_function() {
        assert_eq!(murmur3(b"", 0), 0);
        assert_eq!(murmur3(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3(b"hello", 0), 0x248b_fa47);
        assert_eq!(murmur3(b"Hello, world!", 1234), 0xfaf6_cdb3);
    }

    /// FNV's prime and fio's word order: one word is h * prime ^ word.
    #[test]
    fn fnv_folds_words_then_the_tail() {
        let w = u64::from_ne_bytes(*b"abcdefgh");
        assert_eq!(fnv(b"abcdefgh", 7), 7u64.wrapping_mul(0x100_0000_01b3) ^ w);
        assert_eq!(fnv(b"ab", 0), u64::from(b'a') << 8 | u64::from(b'b'));
    }

    #[test]
    fn names_select_and_unknown_names_fail() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let names = ["a", "b", "c"];
        let r = select(Some("c,a"), &names, &mut out, &mut err).unwrap();
        assert_eq!(r, Ok(vec![true, false, true]));
        let r = select(Some("a,zz"), &names, &mut out, &mut err).unwrap();
        assert_eq!(r, Err(1));
        assert_eq!(
            String::from_utf8_lossy(&err),
            "fiox: unknown hash `zz`. Available:\n"
        );
        assert_eq!(String::from_utf8_lossy(&out), "a\nb\nc\n");
    }

    #[test]
    fn a_rate_line_is_fios() {
        let mut out = Vec::new();
        let mut err = Vec::new();
        assert_eq!(crctest(Some("crc32c"), &mut out, &mut err).unwrap(), 0);
        let text = String::from_utf8(out).unwrap();
        let rate = text
            .strip_prefix("crc32c:\t\t")
            .and_then(|r| r.strip_suffix(" MiB/sec\n"))
            .unwrap_or_else(|| panic!("{text:?}"));
        assert!(rate.trim().parse::<f64>().unwrap() > 0.0, "{text:?}");
    }
}
