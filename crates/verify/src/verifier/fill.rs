//! The writing side of a [`Verifier`]: a block's contents before it is written (header and
//! generated data or pattern per interval, header swapped to `verify_offset`), and the same
//! contents regenerated for `verify_dump`'s `.expected` file.

use super::{Mode, Verifier};
use crate::error::VerifyError;
use crate::failure::VerifyFailure;
use crate::fill::{fill_random, interval_key, Pattern};
use crate::header::{HdrMethod, Header};
use crate::sum::Sum;

impl Verifier {
    /// Fills `buf`, about to be written at file offset `offset` as write number `seq` (1-based,
    /// increasing per job), with verifiable contents: per interval a header and data generated
    /// from (seed, job, offset, seq) or the verify pattern. `write_time_ns` is stored for the
    /// reader's information only. `verify=null` leaves `buf` untouched.
    pub fn fill_write(
        &self,
        buf: &mut [u8],
        offset: u64,
        seq: u64,
        write_time_ns: u64,
    ) -> Result<(), VerifyError> {
        match self.mode {
            Mode::Null => Ok(()),
            Mode::PatternOnly => {
                self.validate_block_len(buf.len())?;
                self.pattern_of(offset, 0).fill(buf);
                Ok(())
            }
            Mode::Header(m) => {
                self.validate_block_len(buf.len())?;
                let iv = self.interval_len(buf.len());
                for (i, chunk) in buf.chunks_mut(iv).enumerate() {
                    let pos = (i * iv) as u64;
                    let tpl = self.template(offset.wrapping_add(pos), seq, write_time_ns);
                    self.fill_interval(m, chunk, offset, pos, tpl);
                }
                Ok(())
            }
        }
    }

    pub(super) fn pattern_of(&self, block_offset: u64, phase: u64) -> crate::fill::PatBuf {
        // Only called in pattern modes, where `new` made sure a pattern exists; an absent pattern
        // there would be a bug in this module, so fall back to a zero pattern rather than panic.
        match &self.pattern {
            Some(p) => p.resolve(block_offset, phase),
            None => Pattern::zero().resolve(block_offset, phase),
        }
    }

    /// The header fields (all but type, length and digest) of the interval at `offset` of
    /// write `seq`.
    pub(super) fn template(&self, offset: u64, seq: u64, time_ns: u64) -> Header {
        Header {
            verify_type: 0,
            len: 0,
            rand_seed: self.write_seed(seq),
            offset,
            time_sec: (time_ns / 1_000_000_000) as u32,
            time_nsec: (time_ns % 1_000_000_000) as u32,
            thread: self.thread(),
            numberio: seq.wrapping_sub(1) as u16,
            sum: Sum::from_bytes(&[]),
        }
    }

    /// Writes one interval in logical layout (header, data), then swaps the header to
    /// `verify_offset`. `pos` is the interval's position inside the write at `io_offset`;
    /// `tpl` gives the header fields, and its seed and offset the data.
    pub(super) fn fill_interval(
        &self,
        m: HdrMethod,
        chunk: &mut [u8],
        io_offset: u64,
        pos: u64,
        tpl: Header,
    ) {
        let h = m.hdr_len();
        let (hdr, data) = chunk.split_at_mut(h);
        match &self.pattern {
            Some(p) => p.resolve(io_offset, pos + h as u64).fill(data),
            None => fill_random(interval_key(tpl.rand_seed, tpl.offset), data),
        }
        let sum = match m {
            HdrMethod::Sum(a) => a.sum(&[data]),
            HdrMethod::Pattern | HdrMethod::Meta => Sum::from_bytes(&[]),
        };
        let header = Header {
            verify_type: m.code(),
            len: chunk_len_u32(hdr.len() + data.len()),
            sum,
            ..tpl
        };
        header.encode(hdr);
        if self.voff > 0 {
            let (a, b) = chunk.split_at_mut(self.voff);
            a[..h].swap_with_slice(&mut b[..h]);
        }
    }

    /// The bytes the failing interval should hold, for `verify_dump`'s `.expected` file. `None`
    /// when they cannot be known: `verify=null`, or a header method where neither the caller's
    /// expectation nor a valid header for this offset gives the sequence number. The write time
    /// is taken from the header found when it is for the expected write, else 0.
    pub fn expected_bytes(&self, f: &VerifyFailure) -> Option<Vec<u8>> {
        let len = usize::try_from(f.len).ok()?;
        let pos = f.offset.wrapping_sub(f.block_offset);
        match self.mode {
            Mode::Null => None,
            Mode::PatternOnly => {
                let mut v = vec![0u8; len];
                self.pattern_of(f.block_offset, pos).fill(&mut v);
                Some(v)
            }
            Mode::Header(m) => {
                if len < self.min_interval() {
                    return None;
                }
                let own = f.header.filter(|h| h.offset == f.offset);
                let tpl = match f.expected_seq {
                    Some(seq) => {
                        let mut t = self.template(f.offset, seq, 0);
                        // The write time is known when the header found is the expected one.
                        if let Some(h) =
                            own.filter(|h| h.rand_seed == t.rand_seed && h.numberio == t.numberio)
                        {
                            (t.time_sec, t.time_nsec, t.thread) =
                                (h.time_sec, h.time_nsec, h.thread);
                        }
                        t
                    }
                    None => own?,
                };
                let mut v = vec![0u8; len];
                self.fill_interval(m, &mut v, f.block_offset, pos, tpl);
                Some(v)
            }
        }
    }
}

fn chunk_len_u32(n: usize) -> u32 {
    // validate_block_len keeps blocks below 4 GiB before any interval is filled.
    u32::try_from(n).unwrap_or(u32::MAX)
}
