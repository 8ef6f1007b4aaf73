//! fio's compressed logs (`log_store_compressed`): the samples of a bw/iops/lat log stored
//! as fio keeps them in memory (`struct io_sample`: time, value, ddir with the offset and
//! priority flag bits, priority, block size, and the offset with `log_offset`), in
//! consecutive zlib streams, in a `.log.fz` file. [`inflate`] turns such a file back into the
//! text log (fio's `--inflate-log`), whichever of fio or fiox wrote it.

use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::io::{self, Read, Write};

/// fio's flag bits in a sample's ddir word.
const OFFSET_BIT: u32 = 0x8000_0000;
const PRIO_BIT: u32 = 0x4000_0000;
/// `struct io_sample` and `struct io_sample_offset` on 64-bit Linux.
const SAMPLE: usize = 32;
const SAMPLE_OFFSET: usize = 40;
/// Samples per zlib stream (fio compresses its in-memory log arrays, 1024 entries at first).
const CHUNK_SAMPLES: usize = 1024;

/// Samples gathered into chunks, each chunk written as one zlib stream.
pub struct SampleEncoder<W: Write> {
    out: W,
    /// The samples go out uncompressed (log_compression's thread compresses them).
    raw: bool,
    log_offset: bool,
    log_prio: bool,
    buf: Vec<u8>,
    n: usize,
}

impl<W: Write> SampleEncoder<W> {
    /// `log_prio` sets fio's priority flag bit, so the log shows raw priorities.
    pub fn new(out: W, log_offset: bool, log_prio: bool) -> Self {
        let size = if log_offset { SAMPLE_OFFSET } else { SAMPLE };
        SampleEncoder {
            out,
            raw: false,
            log_offset,
            log_prio,
            buf: Vec::with_capacity(size * CHUNK_SAMPLES),
            n: 0,
        }
    }

    /// As [`SampleEncoder::new`], writing the samples uncompressed (for `log_compression`,
    /// whose thread compresses them in chunks).
    pub fn raw(out: W, log_offset: bool, log_prio: bool) -> Self {
        SampleEncoder {
            raw: true,
            ..Self::new(out, log_offset, log_prio)
        }
    }

    /// The writer the chunks go to.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Bytes of one sample.
    pub fn sample_len(log_offset: bool) -> usize {
        if log_offset {
            SAMPLE_OFFSET
        } else {
            SAMPLE
        }
    }

    /// One sample; `ioprio` is the I/O's raw priority value, stored as fio stores it.
    pub fn push(
        &mut self,
        t_ms: u64,
        value: u64,
        ddir: u32,
        bs: u64,
        offset: u64,
        ioprio: u16,
    ) -> io::Result<()> {
        let mut flags = if self.log_offset { OFFSET_BIT } else { 0 };
        if self.log_prio {
            flags |= PRIO_BIT;
        }
        self.buf.extend_from_slice(&t_ms.to_le_bytes());
        self.buf.extend_from_slice(&value.to_le_bytes());
        self.buf.extend_from_slice(&(ddir | flags).to_le_bytes());
        self.buf.extend_from_slice(&ioprio.to_le_bytes());
        self.buf.extend_from_slice(&[0, 0]);
        self.buf.extend_from_slice(&bs.to_le_bytes());
        if self.log_offset {
            self.buf.extend_from_slice(&offset.to_le_bytes());
        }
        self.n += 1;
        if self.n == CHUNK_SAMPLES {
            self.flush_chunk()?;
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> io::Result<()> {
        if self.n == 0 {
            return Ok(());
        }
        if self.raw {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
            self.n = 0;
            return Ok(());
        }
        let mut z = ZlibEncoder::new(&mut self.out, Compression::default());
        z.write_all(&self.buf)?;
        z.finish()?;
        self.buf.clear();
        self.n = 0;
        Ok(())
    }

    /// Compress what is left and flush the output.
    pub fn finish(&mut self) -> io::Result<()> {
        self.flush_chunk()?;
        self.out.flush()
    }
}

/// Decompress every zlib stream of `data` (a `.log.fz` file) and write the text log lines.
pub fn inflate(data: &[u8], out: &mut impl Write) -> Result<(), String> {
    let mut rest = data;
    let mut chunk = 0;
    while !rest.is_empty() {
        chunk += 1;
        let mut d = flate2::bufread::ZlibDecoder::new(rest);
        let mut samples = Vec::new();
        d.read_to_end(&mut samples)
            .map_err(|e| format!("compressed chunk {chunk}: {e}"))?;
        let used = d.total_in() as usize;
        if used == 0 {
            return Err(format!("compressed chunk {chunk}: no zlib data"));
        }
        rest = &rest[used.min(rest.len())..];
        write_samples(&samples, out).map_err(|e| format!("writing the log: {e}"))?;
    }
    Ok(())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// fio's `flush_samples`: the first sample says whether the chunk has offsets and priorities.
fn write_samples(b: &[u8], out: &mut impl Write) -> io::Result<()> {
    if b.len() < SAMPLE {
        return Ok(());
    }
    let ddir0 = u32::from_le_bytes([b[16], b[17], b[18], b[19]]);
    let (offset, prio) = (ddir0 & OFFSET_BIT != 0, ddir0 & PRIO_BIT != 0);
    let size = if offset { SAMPLE_OFFSET } else { SAMPLE };
    for s in b.chunks_exact(size) {
        let (t, v, bs) = (u64_at(s, 0), u64_at(s, 8), u64_at(s, 24));
        let ddir = u32::from_le_bytes([s[16], s[17], s[18], s[19]]) & !(OFFSET_BIT | PRIO_BIT);
        let p = u16::from_le_bytes([s[20], s[21]]);
        let pcol = if prio {
            format!("0x{p:04x}")
        } else {
            u32::from(p >> 13 == 1).to_string()
        };
        if offset {
            writeln!(out, "{t}, {v}, {ddir}, {bs}, {}, {pcol}", u64_at(s, 32))?;
        } else {
            writeln!(out, "{t}, {v}, {ddir}, {bs}, {pcol}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip_through_chunks() {
        for log_offset in [false, true] {
            let mut file = Vec::new();
            let mut e = SampleEncoder::new(&mut file, log_offset, false);
            let mut want = String::new();
            for i in 0..2500u64 {
                e.push(
                    i,
                    i * 7,
                    (i % 2) as u32,
                    4096,
                    i * 4096,
                    if i % 3 == 0 { 1 << 13 } else { 2 << 13 },
                )
                .unwrap();
                if log_offset {
                    want += &format!(
                        "{i}, {}, {}, 4096, {}, {}\n",
                        i * 7,
                        i % 2,
                        i * 4096,
                        (i % 3 == 0) as u32
                    );
                } else {
                    want += &format!("{i}, {}, {}, 4096, {}\n", i * 7, i % 2, (i % 3 == 0) as u32);
                }
            }
            e.finish().unwrap();
            let mut text = Vec::new();
            inflate(&file, &mut text).unwrap();
            assert_eq!(String::from_utf8(text).unwrap(), want);
        }
        // log_prio: the raw priority, in hex.
        let mut file = Vec::new();
        let mut e = SampleEncoder::new(&mut file, false, true);
        e.push(5, 6, 1, 4096, 0, (1 << 13) | 4).unwrap();
        e.finish().unwrap();
        let mut text = Vec::new();
        inflate(&file, &mut text).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), "5, 6, 1, 4096, 0x2004\n");
        let mut out = Vec::new();
        assert!(inflate(b"not zlib", &mut out).is_err());
    }
}
