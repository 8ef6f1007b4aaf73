//! [`Verifier`]: turns a job's `VerifySpec` into the two operations the runner needs — fill a
//! block that is about to be written ([`Verifier::fill_write`]) and check a block that was read
//! back ([`Verifier::check`]) — plus regeneration of the expected contents for `verify_dump`.
//!
//! The folder: this file builds the verifier from the job's options and answers its layout
//! questions (header length and place, interval length); `fill` writes a block's expected
//! contents (and regenerates them for `verify_dump`); `check` reads a block back and finds
//! the first failing interval; `damage` compares a bad interval with what was written to
//! say what kind of damage it is. `check` uses `damage` and `fill`; neither uses `check`.

mod check;
mod damage;
mod fill;

use crate::error::VerifyError;
use crate::fill::{data_key, Pattern};
use crate::header::HdrMethod;
use crate::sum::Algo;
use crate::writelog::WriteLog;
use fiox_job::spec::{JobSpec, VerifyMethod, VerifySpec};

/// Which sequence number a block read back should carry. `verify=pattern` blocks carry none
/// (only their contents are checked), so lost writes of identical patterns are invisible there.
#[derive(Debug, Clone, Copy)]
pub enum Expect<'a> {
    /// Accept any write of this job (verify_only without a saved state).
    Any,
    /// Every interval of the block must carry this sequence number.
    Seq(u64),
    /// Look each interval up in the write log; intervals the log has no entry for accept any.
    Log(&'a WriteLog),
}

impl Expect<'_> {
    fn seq_at(&self, offset: u64) -> Option<u64> {
        match self {
            Expect::Any => None,
            Expect::Seq(s) => Some(*s),
            Expect::Log(log) => log.get(offset),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Each interval carries a header (checksum methods, pattern_hdr).
    Header(HdrMethod),
    /// `verify=pattern`: the whole block is the pattern, no header.
    PatternOnly,
    /// `verify=null`: nothing written, nothing checked.
    Null,
}

/// The verification engine of one job. Cheap to share: all methods take `&self`.
#[derive(Debug, Clone)]
pub struct Verifier {
    mode: Mode,
    job_id: u32,
    seed: u64,
    interval: Option<u64>,
    voff: usize,
    pattern: Option<Pattern>,
    /// Check that each block was written by this job (thread number and write seed), not
    /// only that it is intact and in place (see [`Verifier::set_strict`]).
    strict: bool,
    /// `verify_write_sequence`: report a block holding another write than the expected one.
    seq_check: bool,
    /// `verify_header_seed`: None lets `strict` decide whether the seed is checked.
    seed_check: Option<bool>,
    /// Check the write number only of blocks this job's own writes carry (verify_only, see
    /// [`Verifier::set_own_numberio_only`]).
    own_numberio_only: bool,
    notes: Vec<String>,
}

fn mode_of(method: VerifyMethod) -> Result<Mode, VerifyError> {
    let algo = match method {
        VerifyMethod::None => return Err(VerifyError::Disabled),
        VerifyMethod::Null => return Ok(Mode::Null),
        VerifyMethod::Pattern => return Ok(Mode::PatternOnly),
        VerifyMethod::PatternHdr => return Ok(Mode::Header(HdrMethod::Pattern)),
        VerifyMethod::Meta => return Ok(Mode::Header(HdrMethod::Meta)),
        VerifyMethod::Md5 => Algo::Md5,
        VerifyMethod::Crc32c => Algo::Crc32c,
        VerifyMethod::Crc64 => Algo::Crc64,
        VerifyMethod::Sha1 => Algo::Sha1,
        VerifyMethod::Sha256 => Algo::Sha256,
        VerifyMethod::Sha512 => Algo::Sha512,
        VerifyMethod::Xxhash => Algo::Xxhash,
        VerifyMethod::Crc32 => Algo::Crc32,
        VerifyMethod::Crc16 => Algo::Crc16,
        VerifyMethod::Crc7 => Algo::Crc7,
        VerifyMethod::Sha3_256 => Algo::Sha3_256,
        VerifyMethod::Sha3_224 => Algo::Sha3_224,
        VerifyMethod::Sha3_384 => Algo::Sha3_384,
        VerifyMethod::Sha3_512 => Algo::Sha3_512,
    };
    Ok(Mode::Header(HdrMethod::Sum(algo)))
}

impl Verifier {
    /// Builds the verifier of a job. `job_id` and `seed` are stamped into every header and mixed
    /// into the generated data; a later `verify_only` run must pass the same values.
    pub fn new(spec: &VerifySpec, job_id: u32, seed: u64) -> Result<Verifier, VerifyError> {
        let mode = mode_of(spec.method)?;
        let pattern = if spec.verify_pattern.is_empty() {
            if matches!(mode, Mode::PatternOnly | Mode::Header(HdrMethod::Pattern)) {
                return Err(VerifyError::PatternRequired);
            }
            None
        } else {
            Some(Pattern::new(
                &spec.verify_pattern,
                &spec.verify_pattern_offsets,
            )?)
        };
        if spec.verify_interval == Some(0) {
            return Err(VerifyError::IntervalZero);
        }
        let voff = usize::try_from(spec.verify_offset).unwrap_or(usize::MAX);
        let v = Verifier {
            mode,
            job_id,
            seed,
            interval: spec.verify_interval,
            voff,
            pattern,
            strict: false,
            seq_check: spec.verify_write_sequence != Some(false),
            seed_check: spec.verify_header_seed,
            own_numberio_only: false,
            notes: Vec::new(),
        };
        v.validate_layout(spec)?;
        Ok(v.with_notes(spec))
    }

    /// Like [`Verifier::new`] for a whole job; `Ok(None)` when the job has `verify=none`.
    pub fn from_job(
        job: &JobSpec,
        job_id: u32,
        seed: u64,
    ) -> Result<Option<Verifier>, VerifyError> {
        match Verifier::new(&job.verify, job_id, seed) {
            Err(VerifyError::Disabled) => Ok(None),
            other => other.map(Some),
        }
    }

    fn validate_layout(&self, spec: &VerifySpec) -> Result<(), VerifyError> {
        let Mode::Header(m) = self.mode else {
            return Ok(());
        };
        let h = m.hdr_len();
        if self.voff != 0 && self.voff < h {
            return Err(VerifyError::OffsetOverlapsHeader {
                offset: spec.verify_offset,
                hdr_len: h,
            });
        }
        if let Some(iv) = self.interval {
            if iv < self.min_interval() as u64 {
                return Err(VerifyError::IntervalTooSmall {
                    interval: iv,
                    need: self.min_interval(),
                    method: m.name(),
                });
            }
        }
        Ok(())
    }

    /// Options that are accepted but have no effect with this method, worded for the user.
    fn with_notes(mut self, spec: &VerifySpec) -> Verifier {
        let what = match self.mode {
            Mode::Header(_) => return self,
            Mode::PatternOnly => "verify=pattern writes no header",
            Mode::Null => "verify=null writes and checks nothing",
        };
        if spec.verify_offset != 0 {
            self.notes.push(format!(
                "verify_offset={} has no effect: {what}",
                spec.verify_offset
            ));
        }
        if let Some(iv) = spec.verify_interval {
            self.notes
                .push(format!("verify_interval={iv} has no effect: {what}"));
        }
        if self.mode == Mode::Null && !spec.verify_pattern.is_empty() {
            self.notes
                .push(format!("verify_pattern has no effect: {what}"));
        }
        self
    }

    /// Warnings about options that have no effect with this configuration (for the runner to
    /// print once per job).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Strict identity checks: a block whose header carries another thread number, or a write
    /// seed this job would not have used for the expected write, is reported as written by
    /// another job or run. Off by default, as in fio: any intact block in place verifies,
    /// whoever wrote it (fio or fiox, this job or another).
    pub fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }

    pub fn strict(&self) -> bool {
        self.strict
    }

    /// For `verify_only`: check the write number (stale or newer data) only in blocks whose
    /// header is this job's own write (its thread number and the write seed of that number).
    /// fio 3.33 skips its numberio check for verify_only (verify.c, verify_header): another
    /// writer (fio, whose random offsets and seeds differ) numbers its writes otherwise, so
    /// its intact blocks in place verify as in fio. Offset, length, header and data checks
    /// are unchanged. Strict mode still reports any other writer.
    pub fn set_own_numberio_only(&mut self, on: bool) {
        self.own_numberio_only = on;
    }

    /// The thread number stamped in headers (fio's 1-based `thread_number`).
    pub(super) fn thread(&self) -> u16 {
        (self.job_id as u16).wrapping_add(1)
    }

    /// The data seed of write `seq` (stored in each of its headers).
    pub fn write_seed(&self, seq: u64) -> u64 {
        data_key(self.seed, self.job_id, 0, seq)
    }

    pub fn job_id(&self) -> u32 {
        self.job_id
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// fio's name of the method (`md5`, `crc32c`, `pattern`, `pattern_hdr`, `null`, ...).
    pub fn method_name(&self) -> &'static str {
        match self.mode {
            Mode::Header(m) => m.name(),
            Mode::PatternOnly => "pattern",
            Mode::Null => "null",
        }
    }

    /// Header length (0 for pattern / null).
    pub fn header_len(&self) -> usize {
        match self.mode {
            Mode::Header(m) => m.hdr_len(),
            _ => 0,
        }
    }

    /// Where the header sits inside each interval (`verify_offset`; 0 without a header).
    pub fn header_offset(&self) -> usize {
        match self.mode {
            Mode::Header(_) => self.voff,
            _ => 0,
        }
    }

    /// Smallest interval that holds the header at `verify_offset`.
    pub(super) fn min_interval(&self) -> usize {
        match self.mode {
            Mode::Header(m) if self.voff > 0 => self.voff.saturating_add(m.hdr_len()),
            Mode::Header(m) => m.hdr_len(),
            _ => 1,
        }
    }

    /// Length of each verify interval inside a block of `block_len` bytes: `verify_interval`
    /// when it divides the block, else the whole block (as fio does).
    pub fn interval_len(&self, block_len: usize) -> usize {
        match (self.mode, self.interval) {
            (Mode::Header(_), Some(iv)) => {
                let iv = usize::try_from(iv).unwrap_or(usize::MAX);
                if iv <= block_len && block_len.is_multiple_of(iv) {
                    iv
                } else {
                    block_len
                }
            }
            _ => block_len,
        }
    }

    /// Whether blocks of `block_len` bytes can be verified. The runner should call this for the
    /// job's smallest and largest block size before starting.
    pub fn validate_block_len(&self, block_len: usize) -> Result<(), VerifyError> {
        let need = self.min_interval();
        let iv = self.interval_len(block_len);
        if block_len == 0 || iv < need {
            return Err(VerifyError::BlockTooSmall {
                len: block_len,
                need,
                method: self.method_name(),
            });
        }
        if matches!(self.mode, Mode::Header(_)) && u32::try_from(block_len).is_err() {
            return Err(VerifyError::BlockTooLarge { len: block_len });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
