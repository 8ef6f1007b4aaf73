//! IOLOG: a job's bw/iops/latency log that a server sends to its client instead of writing it
//! (`cmd_iolog_pdu`: a 288-byte header, then the samples as fio's `io_sample` structures, raw,
//! zlib-compressed for the transfer, or stored compressed as `log_compression` keeps them).
//! [`IoLog::text`] gives the file fio's client writes: the samples as fio's log lines, or the
//! stored-compressed bytes as they came (for `fio --inflate-log`).
//!
//! Hostile input is bounded: the sample bytes are what arrived (the message limit), and a
//! compressed log inflates to at most [`MAX_INFLATED`] bytes.

use crate::wire::{cstr, Get};
use crate::ProtoError;
use std::io::Read;

/// `cmd_iolog_pdu` without its samples.
const HEADER: usize = 8 + 6 * 4 + 256;
/// fio's `XMIT_COMPRESSED` and `STORE_COMPRESSED`.
const XMIT_COMPRESSED: u32 = 1;
const STORE_COMPRESSED: u32 = 2;
/// fio's `IO_LOG_TYPE_HIST`: samples carry histogram pointers, which only a compressing
/// server sends usably.
const LOG_TYPE_HIST: u32 = 6;
/// `io_sample` and `io_sample_offset` sizes.
const SAMPLE: usize = 32;
const SAMPLE_OFFSET: usize = 40;
const OFFSET_BIT: u32 = 0x8000_0000;
const PRIO_BIT: u32 = 0x4000_0000;
/// The most a compressed log may inflate to.
pub const MAX_INFLATED: u64 = 512 << 20;

/// One log as a server sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoLog {
    pub thread_number: u32,
    pub log_type: u32,
    pub compressed: u32,
    /// The log's file name on the server (fio's client writes `NAME.HOST`).
    pub name: String,
    nr_samples: u64,
    samples: Vec<u8>,
}

impl IoLog {
    pub fn decode(b: &[u8]) -> Result<IoLog, ProtoError> {
        let mut g = Get::new(b, "IOLOG");
        let nr_samples = g.u64()?;
        let thread_number = g.u32()?;
        let log_type = g.u32()?;
        let compressed = g.u32()?;
        g.skip(12)?; // log_offset, log_prio (fio 3.33 leaves them 0), hist coarseness
        let name = cstr(g.bytes(256)?);
        Ok(IoLog {
            thread_number,
            log_type,
            compressed,
            name,
            nr_samples,
            samples: g.rest().to_vec(),
        })
    }

    /// The file's content, as fio's client writes it.
    pub fn text(&self) -> Result<Vec<u8>, ProtoError> {
        let bad = |why: String| ProtoError::Malformed { what: "IOLOG", why };
        if self.compressed == STORE_COMPRESSED {
            return Ok(self.samples.clone());
        }
        if self.log_type == LOG_TYPE_HIST {
            return Err(bad(
                "a histogram log (write_hist_log) sent without compression: fiox's client \
                 cannot read it"
                    .into(),
            ));
        }
        let raw = match self.compressed {
            0 => self.samples.clone(),
            XMIT_COMPRESSED => inflate(&self.samples)?,
            other => return Err(bad(format!("unknown compression {other}"))),
        };
        Ok(lines(&raw, self.nr_samples))
    }
}

fn inflate(b: &[u8]) -> Result<Vec<u8>, ProtoError> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(b)
        .take(MAX_INFLATED + 1)
        .read_to_end(&mut out)
        .map_err(|e| ProtoError::Malformed {
            what: "IOLOG",
            why: format!("cannot inflate the log: {e}"),
        })?;
    if out.len() as u64 > MAX_INFLATED {
        return Err(ProtoError::Malformed {
            what: "IOLOG",
            why: format!("the log inflates past {MAX_INFLATED} bytes"),
        });
    }
    Ok(out)
}

/// fio's log lines (`flush_samples`): time, value, direction, block size, then the offset
/// when the first sample carries one, and the priority (fio's `0x%04x` with `log_prio`, else
/// 1 for a real-time class and 0 otherwise). At most `nr` samples, as many whole ones as
/// arrived.
fn lines(raw: &[u8], nr: u64) -> Vec<u8> {
    use std::fmt::Write;
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4"));
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8"));
    let Some(first) = raw.get(..SAMPLE) else {
        return Vec::new();
    };
    let flags = u32_at(first, 16);
    let with_offset = flags & OFFSET_BIT != 0;
    let with_prio = flags & PRIO_BIT != 0;
    let size = if with_offset { SAMPLE_OFFSET } else { SAMPLE };
    let mut out = String::new();
    for s in raw
        .chunks_exact(size)
        .take(nr.min(usize::MAX as u64) as usize)
    {
        let (time, val, ddir) = (u64_at(s, 0), u64_at(s, 8) as i64, u32_at(s, 16));
        let prio = u16::from_le_bytes([s[20], s[21]]);
        let bs = u64_at(s, 24);
        let _ = write!(
            out,
            "{time}, {val}, {}, {bs}, ",
            ddir & !(OFFSET_BIT | PRIO_BIT)
        );
        if with_offset {
            let _ = write!(out, "{}, ", u64_at(s, 32));
        }
        let _ = if with_prio {
            writeln!(out, "0x{prio:04x}")
        } else {
            // fio's ioprio_value_is_class_rt: class (top 3 bits of 16) 1.
            writeln!(out, "{}", u8::from(prio >> 13 == 1))
        };
    }
    out.into_bytes()
}

/// A log file as fiox's server sends it: its bytes as written, in fio's stored form
/// (`STORE_COMPRESSED`, which a client writes out verbatim), so the client's copy is byte for
/// byte the file fiox writes locally, whatever its options (averaged, per-I/O, offsets,
/// priorities, histograms, compressed `.fz`). `log_type` says what it is (fio's numbers).
pub fn stored(name: &str, thread_number: u32, log_type: u32, bytes: &[u8]) -> Vec<u8> {
    let mut p = crate::wire::Put::with_capacity(HEADER + bytes.len());
    p.u64(0);
    p.u32(thread_number);
    p.u32(log_type);
    p.u32(STORE_COMPRESSED);
    p.zeros(12);
    p.text(name, 256);
    p.bytes(bytes);
    p.buf
}

/// fio's log type of a log file by its name (`_bw`, `_iops`, `_lat`, `_clat`, `_slat`,
/// `_clat_hist`; 0 for another).
pub fn log_type_of(file_name: &str) -> u32 {
    for (tag, t) in [
        ("_clat_hist.", LOG_TYPE_HIST),
        ("_clat.", 2),
        ("_slat.", 3),
        ("_lat.", 1),
        ("_bw.", 4),
        ("_iops.", 5),
    ] {
        if file_name.contains(tag) {
            return t;
        }
    }
    0
}

/// `cmd_iolog_pdu` for tests and the fuzzer's seeds: uncompressed samples of
/// (time, value, direction, block size).
pub fn encode(name: &str, log_type: u32, samples: &[(u64, u64, u32, u64)]) -> Vec<u8> {
    let mut p = crate::wire::Put::with_capacity(HEADER + samples.len() * SAMPLE);
    p.u64(samples.len() as u64);
    p.u32(1);
    p.u32(log_type);
    p.u32(0);
    p.zeros(12);
    p.text(name, 256);
    for &(t, v, d, bs) in samples {
        p.u64(t);
        p.u64(v);
        p.u32(d);
        p.zeros(4);
        p.u64(bs);
    }
    p.buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_become_fios_log_lines() {
        let b = encode(
            "/tmp/x_bw.1.log",
            4,
            &[(149, 51221, 0, 4096), (160, 52000, 1, 4096)],
        );
        assert_eq!(b.len(), HEADER + 64);
        let l = IoLog::decode(&b).unwrap();
        assert_eq!(l.name, "/tmp/x_bw.1.log");
        assert_eq!(
            String::from_utf8(l.text().unwrap()).unwrap(),
            "149, 51221, 0, 4096, 0\n160, 52000, 1, 4096, 0\n"
        );
    }

    #[test]
    fn a_stored_log_comes_back_verbatim() {
        let text = b"10, 5, 0, 4096, 0x2004\n";
        let b = stored("/d/x_lat.1.log", 3, log_type_of("x_lat.1.log"), text);
        let l = IoLog::decode(&b).unwrap();
        assert_eq!((l.name.as_str(), l.log_type), ("/d/x_lat.1.log", 1));
        assert_eq!(l.text().unwrap(), text);
        assert_eq!(log_type_of("r_clat_hist.2.log"), LOG_TYPE_HIST);
    }

    #[test]
    fn compressed_and_hostile_logs() {
        use std::io::Write;
        let b = encode("l", 1, &[(1, 2, 0, 512)]);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&b[HEADER..]).unwrap();
        let mut c = b[..HEADER].to_vec();
        c[16..20].copy_from_slice(&XMIT_COMPRESSED.to_le_bytes());
        c.extend(z.finish().unwrap());
        assert_eq!(
            IoLog::decode(&c).unwrap().text().unwrap(),
            b"1, 2, 0, 512, 0\n"
        );
        // Garbage claimed as compressed is an error, a lying count prints what arrived.
        let mut g = c[..HEADER].to_vec();
        g.extend([1, 2, 3]);
        assert!(IoLog::decode(&g).unwrap().text().is_err());
        let mut lie = b.clone();
        lie[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(
            IoLog::decode(&lie).unwrap().text().unwrap(),
            b"1, 2, 0, 512, 0\n"
        );
        assert!(IoLog::decode(&b[..100]).is_err());
        let hist = encode("h", LOG_TYPE_HIST, &[(1, 2, 0, 512)]);
        assert!(IoLog::decode(&hist).unwrap().text().is_err());
    }
}
