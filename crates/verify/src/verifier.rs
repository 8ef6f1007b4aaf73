//! [`Verifier`]: turns a job's `VerifySpec` into the two operations the runner needs — fill a
//! block that is about to be written ([`Verifier::fill_write`]) and check a block that was read
//! back ([`Verifier::check`]) — plus regeneration of the expected contents for `verify_dump`.

use crate::error::VerifyError;
use crate::failure::{FailureKind, VerifyFailure, SECTOR};
use crate::fill::{data_key, fill_random, interval_key, Pattern};
use crate::header::{HdrMethod, Header, HeaderError, MAX_HDR_LEN};
use crate::sum::{Algo, Sum};
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
    fn thread(&self) -> u16 {
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
    fn min_interval(&self) -> usize {
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

    fn pattern_of(&self, block_offset: u64, phase: u64) -> crate::fill::PatBuf {
        // Only called in pattern modes, where `new` made sure a pattern exists; an absent pattern
        // there would be a bug in this module, so fall back to a zero pattern rather than panic.
        match &self.pattern {
            Some(p) => p.resolve(block_offset, phase),
            None => Pattern::zero().resolve(block_offset, phase),
        }
    }

    /// The header fields (all but type, length and digest) of the interval at `offset` of
    /// write `seq`.
    fn template(&self, offset: u64, seq: u64, time_ns: u64) -> Header {
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
    fn fill_interval(&self, m: HdrMethod, chunk: &mut [u8], io_offset: u64, pos: u64, tpl: Header) {
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

    /// Checks `buf`, read from file offset `offset` (the same offset and length it was written
    /// with), and returns the first failing interval.
    pub fn check(
        &self,
        buf: &[u8],
        offset: u64,
        expect: Expect<'_>,
    ) -> Result<(), Box<VerifyFailure>> {
        let mut first = None;
        self.check_each(buf, offset, expect, &mut |f| {
            first = Some(Box::new(f));
            false
        });
        first.map_or(Ok(()), Err)
    }

    /// Checks every interval of `buf` and returns all failures (empty when the block is good).
    pub fn check_all(&self, buf: &[u8], offset: u64, expect: Expect<'_>) -> Vec<VerifyFailure> {
        let mut all = Vec::new();
        self.check_each(buf, offset, expect, &mut |f| {
            all.push(f);
            true
        });
        all
    }

    /// Calls `report` for each failing interval until it returns false.
    fn check_each(
        &self,
        buf: &[u8],
        offset: u64,
        expect: Expect<'_>,
        report: &mut dyn FnMut(VerifyFailure) -> bool,
    ) {
        let failure = |pos: usize, len: usize, kind, header, expected_seq| VerifyFailure {
            offset: offset.wrapping_add(pos as u64),
            len: len as u64,
            block_offset: offset,
            block_len: buf.len() as u64,
            expected_seq,
            header,
            kind,
        };
        match self.mode {
            Mode::Null => {}
            Mode::PatternOnly => {
                if let Some(kind) = self.check_pattern_only(buf, offset) {
                    report(failure(0, buf.len(), kind, None, None));
                }
            }
            Mode::Header(m) => {
                let iv = self.interval_len(buf.len());
                if buf.is_empty() || iv < self.min_interval() {
                    let need = self.min_interval() as u64;
                    report(failure(
                        0,
                        buf.len(),
                        FailureKind::ShortBlock { need },
                        None,
                        None,
                    ));
                    return;
                }
                for (i, chunk) in buf.chunks(iv).enumerate() {
                    let abs = offset.wrapping_add((i * iv) as u64);
                    let exp = expect.seq_at(abs);
                    let at = (offset, (i * iv) as u64);
                    if let Some((kind, hdr)) = self.check_interval(m, chunk, at, exp) {
                        if !report(failure(i * iv, chunk.len(), kind, hdr, exp)) {
                            return;
                        }
                    }
                }
            }
        }
    }

    /// The problem with a `verify=pattern` block, if any.
    fn check_pattern_only(&self, buf: &[u8], offset: u64) -> Option<FailureKind> {
        let pat = self.pattern_of(offset, 0);
        let i = pat.first_mismatch(buf)?;
        if buf.iter().all(|&b| b == 0) {
            return Some(FailureKind::Zeroed);
        }
        let bad = buf
            .iter()
            .enumerate()
            .filter(|&(j, &b)| b != pat.byte_at(j))
            .count();
        Some(FailureKind::PatternMismatch {
            at: offset.wrapping_add(i as u64),
            expected: pat.byte_at(i),
            found: buf[i],
            bad_bytes: bad as u64,
        })
    }

    /// The problem with one interval (physical layout, header possibly at `verify_offset`),
    /// with the header found if it was valid; `None` when the interval is good. `at` is the
    /// block's offset and the interval's position in it.
    fn check_interval(
        &self,
        m: HdrMethod,
        phys: &[u8],
        at: (u64, u64),
        expected_seq: Option<u64>,
    ) -> Option<(FailureKind, Option<Header>)> {
        let abs = at.0.wrapping_add(at.1);
        // Offer the longest header any method has, so a header of another method decodes and
        // is reported as such rather than as damage.
        let end = phys.len().min(self.voff + MAX_HDR_LEN);
        let hdr = match Header::decode(&phys[self.voff..end]) {
            Ok(hdr) => hdr,
            Err(e) => return Some((self.bad_header_kind(e, phys), None)),
        };
        if let Some(kind) = self.header_mismatch(m, &hdr, phys.len(), abs) {
            return Some((kind, Some(hdr)));
        }
        if !self.data_matches(m, phys, &hdr, at) {
            return Some((self.bad_data_kind(m, phys, &hdr, at), Some(hdr)));
        }
        if let Some(kind) = self.weak_digest_damage(m, phys, &hdr, at) {
            return Some((kind, Some(hdr)));
        }
        self.writer_mismatch(&hdr, expected_seq)
            .map(|kind| (kind, Some(hdr)))
    }

    /// An intact block against the write the caller expects there: an older or newer write
    /// number (fio's numberio check, modulo 2^16 as fio stores it), and in strict mode another
    /// writer (thread number or write seed).
    fn writer_mismatch(&self, hdr: &Header, expected_seq: Option<u64>) -> Option<FailureKind> {
        let foreign = |expected_seed: u64| FailureKind::ForeignWriter {
            expected_job: u32::from(self.thread()),
            found_job: u32::from(hdr.thread),
            expected_seed,
            found_seed: hdr.rand_seed,
        };
        let Some(e) = expected_seq else {
            return (self.strict && hdr.thread != self.thread()).then(|| foreign(0));
        };
        let d = hdr.numberio.wrapping_sub(e.wrapping_sub(1) as u16) as i16;
        let found = e.wrapping_add_signed(i64::from(d));
        // verify_header_seed=1 compares with the expected write's seed, as fio does (so an
        // older write fails on its seed first); strict mode alone with the seed of the write
        // the header names, so an older write of this job reads as stale.
        let seed_of = if self.seed_check == Some(true) {
            e
        } else {
            found
        };
        let bad_seed =
            self.seed_check.unwrap_or(self.strict) && hdr.rand_seed != self.write_seed(seed_of);
        if (self.strict && hdr.thread != self.thread()) || bad_seed {
            return Some(foreign(self.write_seed(e)));
        }
        let own = hdr.thread == self.thread() && hdr.rand_seed == self.write_seed(found);
        if self.own_numberio_only && !own {
            return None;
        }
        match d {
            _ if !self.seq_check => None,
            0 => None,
            d if d < 0 => Some(FailureKind::Stale {
                expected_seq: e,
                found_seq: found,
            }),
            _ => Some(FailureKind::NewerThanExpected {
                expected_seq: e,
                found_seq: found,
            }),
        }
    }

    fn bad_header_kind(&self, e: HeaderError, phys: &[u8]) -> FailureKind {
        if phys.iter().all(|&b| b == 0) {
            return FailureKind::Zeroed;
        }
        match e {
            HeaderError::BadMagic { found } => FailureKind::BadMagic { found },
            HeaderError::Checksum { stored, computed } => {
                FailureKind::HeaderChecksum { stored, computed }
            }
            // A valid header whose type needs a longer header than the interval holds.
            HeaderError::TooShort { .. } => {
                let found = phys
                    .get(self.voff + 2..self.voff + 4)
                    .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
                FailureKind::MethodMismatch {
                    found_method: found,
                    expected_method: self.method_name(),
                }
            }
        }
    }

    /// The header's fields against what this interval must carry (fio's checks: type, length,
    /// offset).
    fn header_mismatch(
        &self,
        m: HdrMethod,
        hdr: &Header,
        len: usize,
        abs: u64,
    ) -> Option<FailureKind> {
        if hdr.hdr_method() != Some(m) {
            return Some(FailureKind::MethodMismatch {
                found_method: hdr.verify_type,
                expected_method: m.name(),
            });
        }
        if hdr.len as usize != len {
            return Some(FailureKind::WrongLength { found: hdr.len });
        }
        if hdr.offset != abs {
            return Some(FailureKind::WrongOffset { found: hdr.offset });
        }
        None
    }

    /// The interval's data in logical order: the bytes the header was swapped with sit at the
    /// start of the interval.
    fn data_segments<'a>(&self, phys: &'a [u8], h: usize) -> [&'a [u8]; 3] {
        if self.voff == 0 {
            [&phys[h..], &[], &[]]
        } else {
            let v = self.voff;
            [&phys[h..v], &phys[..h], &phys[v + h..]]
        }
    }

    /// Fast path: does the data match the header (checksum) or the pattern? The pattern
    /// starts at the block's first byte (`at`: block offset, interval position), as fio fills.
    fn data_matches(&self, m: HdrMethod, phys: &[u8], hdr: &Header, at: (u64, u64)) -> bool {
        let h = m.hdr_len();
        let segs = self.data_segments(phys, h);
        match m {
            HdrMethod::Sum(a) => a.sum(&segs) == hdr.sum,
            // meta: the data is not checked unless a verify_pattern gives it (as fio).
            HdrMethod::Meta if self.pattern.is_none() => true,
            HdrMethod::Pattern | HdrMethod::Meta => {
                let mut phase = at.1.wrapping_add(h as u64);
                segs.iter().all(|s| {
                    let ok = self.pattern_of(at.0, phase).first_mismatch(s).is_none();
                    phase = phase.wrapping_add(s.len() as u64);
                    ok
                })
            }
        }
    }

    /// Compares the interval with what the header's write produced (fiox's data is a function
    /// of the header's seed and offset), sector by sector.
    fn regen_diff(&self, m: HdrMethod, phys: &[u8], hdr: &Header, at: (u64, u64)) -> SectorDiff {
        let mut exp = vec![0u8; phys.len()];
        self.fill_interval(m, &mut exp, at.0, at.1, *hdr);
        diff_sectors(phys, &exp, hdr.offset)
    }

    /// fio's "sha512" value covers only 128 bytes of the data (see `sum`), so an intact digest
    /// proves little: the data is also compared with its regeneration. Data that differs in
    /// every sector was not written by fiox's generator (fio's own data) and passes, as in fio.
    fn weak_digest_damage(
        &self,
        m: HdrMethod,
        phys: &[u8],
        hdr: &Header,
        at: (u64, u64),
    ) -> Option<FailureKind> {
        if m != HdrMethod::Sum(Algo::Sha512) {
            return None;
        }
        let d = self.regen_diff(m, phys, hdr, at);
        if d.bad_sectors == 0 || d.bad_sectors == d.sectors && d.all_whole {
            return None;
        }
        Some(self.kind_of_diff(m, phys, hdr, d))
    }

    /// Slow path after a data mismatch: regenerate what the header's write produced and compare
    /// sector by sector to tell a torn write from corruption. Data that differs everywhere was
    /// not regenerable (written by fio, whose generator fiox does not share) and is reported as
    /// a checksum mismatch.
    fn bad_data_kind(
        &self,
        m: HdrMethod,
        phys: &[u8],
        hdr: &Header,
        at: (u64, u64),
    ) -> FailureKind {
        let mut d = self.regen_diff(m, phys, hdr, at);
        if matches!(m, HdrMethod::Sum(_)) && d.bad_sectors == d.sectors && d.all_whole {
            d.first_bad_byte = None;
            d.bad_bytes = 0;
            d.all_whole = false;
        }
        self.kind_of_diff(m, phys, hdr, d)
    }

    /// The failure a sector comparison shows.
    fn kind_of_diff(&self, m: HdrMethod, phys: &[u8], hdr: &Header, d: SectorDiff) -> FailureKind {
        match m {
            HdrMethod::Pattern | HdrMethod::Meta => {
                let i = d.first_bad_byte.unwrap_or(0);
                FailureKind::PatternMismatch {
                    at: hdr.offset.wrapping_add(i as u64),
                    expected: d.first_expected,
                    found: phys.get(i).copied().unwrap_or(0),
                    bad_bytes: d.bad_bytes,
                }
            }
            HdrMethod::Sum(_) if d.bad_sectors > 0 && d.all_whole => FailureKind::Torn {
                found_seq: u64::from(hdr.numberio) + 1,
                first_bad: hdr.offset.wrapping_add(d.first_bad_sector as u64),
                bad_sectors: d.bad_sectors,
                zero_sectors: d.zero_sectors,
                sectors: d.sectors,
            },
            HdrMethod::Sum(a) => FailureKind::DataChecksum {
                algo: a.name(),
                expected: hdr.sum,
                found: a.sum(&self.data_segments(phys, m.hdr_len())),
                first_bad: d.first_bad_byte.map(|i| hdr.offset.wrapping_add(i as u64)),
                bad_bytes: d.bad_bytes,
            },
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

/// Result of comparing an interval with its regenerated contents.
struct SectorDiff {
    bad_bytes: u64,
    first_bad_byte: Option<usize>,
    sectors: u64,
    bad_sectors: u64,
    /// Bad sectors that read back as all zeros.
    zero_sectors: u64,
    first_bad_sector: usize,
    /// The regenerated byte at `first_bad_byte`.
    first_expected: u8,
    /// Every bad sector differs in at least half its bytes (whole-sector replacement).
    all_whole: bool,
}

/// Compares `got` with `want` in sectors aligned to absolute file offsets (`base` is the
/// absolute offset of byte 0).
fn diff_sectors(got: &[u8], want: &[u8], base: u64) -> SectorDiff {
    let mut d = SectorDiff {
        bad_bytes: 0,
        first_bad_byte: None,
        sectors: 0,
        bad_sectors: 0,
        zero_sectors: 0,
        first_bad_sector: 0,
        first_expected: 0,
        all_whole: true,
    };
    let mut start = 0usize;
    while start < got.len() {
        let into = ((base.wrapping_add(start as u64)) % SECTOR) as usize;
        let end = (start + SECTOR as usize - into).min(got.len());
        let bad = got[start..end]
            .iter()
            .zip(&want[start..end])
            .filter(|(a, b)| a != b)
            .count();
        d.sectors += 1;
        if bad > 0 {
            if d.bad_sectors == 0 {
                d.first_bad_sector = start;
                let i = got[start..end]
                    .iter()
                    .zip(&want[start..end])
                    .position(|(a, b)| a != b);
                d.first_bad_byte = i.map(|i| start + i);
                d.first_expected = i.map_or(0, |i| want[start + i]);
            }
            d.bad_sectors += 1;
            d.zero_sectors += u64::from(got[start..end].iter().all(|&b| b == 0));
            d.bad_bytes += bad as u64;
            if bad * 2 < end - start {
                d.all_whole = false;
            }
        }
        start = end;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(method: VerifyMethod) -> VerifySpec {
        JobSpec::default().verify.clone_with(method)
    }

    trait With {
        fn clone_with(&self, m: VerifyMethod) -> VerifySpec;
    }
    impl With for VerifySpec {
        fn clone_with(&self, m: VerifyMethod) -> VerifySpec {
            VerifySpec {
                method: m,
                ..self.clone()
            }
        }
    }

    fn written(v: &Verifier, len: usize, offset: u64, seq: u64) -> Vec<u8> {
        let mut b = vec![0xeeu8; len];
        v.fill_write(&mut b, offset, seq, 1000 + seq).unwrap();
        b
    }

    #[test]
    fn construction_errors_and_notes() {
        assert!(matches!(
            Verifier::new(&spec(VerifyMethod::None), 0, 0),
            Err(VerifyError::Disabled)
        ));
        assert!(Verifier::from_job(&JobSpec::default(), 0, 0)
            .unwrap()
            .is_none());
        assert!(matches!(
            Verifier::new(&spec(VerifyMethod::Pattern), 0, 0),
            Err(VerifyError::PatternRequired)
        ));
        let mut s = spec(VerifyMethod::Md5);
        s.verify_interval = Some(0);
        assert!(matches!(
            Verifier::new(&s, 0, 0),
            Err(VerifyError::IntervalZero)
        ));
        s.verify_interval = Some(48);
        let e = Verifier::new(&s, 0, 0).unwrap_err().to_string();
        assert!(
            e.contains("verify_interval=48") && e.contains("56 bytes"),
            "{e}"
        );
        s.verify_interval = None;
        s.verify_offset = 8;
        let e = Verifier::new(&s, 0, 0).unwrap_err().to_string();
        assert!(e.contains("verify_offset=8"), "{e}");
        let mut s = spec(VerifyMethod::Null);
        s.verify_offset = 512;
        let v = Verifier::new(&s, 0, 0).unwrap();
        assert_eq!(v.notes().len(), 1);
        assert!(v.notes()[0].contains("verify_offset=512 has no effect"));
    }

    #[test]
    fn block_length_validation() {
        let v = Verifier::new(&spec(VerifyMethod::Sha512), 0, 0).unwrap();
        assert_eq!(v.header_len(), 168);
        assert!(v.validate_block_len(168).is_ok());
        let e = v.validate_block_len(100).unwrap_err().to_string();
        assert!(e.contains("block size 100") && e.contains("sha512"), "{e}");
        let mut small = vec![0u8; 100];
        assert!(v.fill_write(&mut small, 0, 1, 0).is_err());
        let f = v.check(&small, 0, Expect::Any).unwrap_err();
        assert_eq!(f.kind, FailureKind::ShortBlock { need: 168 });
    }

    /// verify_only (fio skips numberio there): another writer's intact block in place passes
    /// whatever write number it carries; this job's own older write is still stale, and
    /// strict mode still reports the other writer.
    #[test]
    fn own_numberio_only_skips_other_writers_numbers() {
        let s = spec(VerifyMethod::Crc32c);
        let mut v = Verifier::new(&s, 0, 7).unwrap();
        let other = Verifier::new(&s, 0, 1234).unwrap();
        let theirs = written(&other, 4096, 8192, 2);
        let ours = written(&v, 4096, 8192, 2);
        let stale = |r: Result<(), Box<VerifyFailure>>| {
            matches!(r.map_err(|f| f.kind), Err(FailureKind::Stale { .. }))
        };
        assert!(stale(v.check(&theirs, 8192, Expect::Seq(5))));
        v.set_own_numberio_only(true);
        assert_eq!(v.check(&theirs, 8192, Expect::Seq(5)), Ok(()));
        assert!(stale(v.check(&ours, 8192, Expect::Seq(5))));
        assert!(
            v.check(&theirs, 4096, Expect::Seq(5)).is_err(),
            "wrong offset"
        );
        v.set_strict(true);
        let f = v.check(&theirs, 8192, Expect::Seq(2)).unwrap_err();
        assert_eq!(f.kind.name(), "foreign-writer");
    }

    #[test]
    fn intervals_follow_fio_rule() {
        let mut s = spec(VerifyMethod::Crc32c);
        s.verify_interval = Some(1024);
        let v = Verifier::new(&s, 0, 0).unwrap();
        assert_eq!(v.interval_len(4096), 1024);
        assert_eq!(v.interval_len(1536), 1536); // does not divide: whole block
        assert_eq!(v.interval_len(512), 512); // larger than block: whole block
        let b = written(&v, 4096, 8192, 3);
        for i in 0..4u64 {
            let h = Header::decode(&b[(i * 1024) as usize..]).unwrap();
            assert_eq!(
                (h.offset, h.len, h.numberio, h.rand_seed),
                (8192 + i * 1024, 1024, 2, v.write_seed(3))
            );
        }
        assert_eq!(v.check(&b, 8192, Expect::Seq(3)), Ok(()));
    }

    #[test]
    fn verify_offset_moves_header_and_checks_without_copy() {
        let mut s = spec(VerifyMethod::Sha256);
        s.verify_offset = 512;
        let v = Verifier::new(&s, 5, 6).unwrap();
        let b = written(&v, 4096, 0, 1);
        assert!(Header::decode(&b).is_err());
        let h = Header::decode(&b[512..]).unwrap();
        assert_eq!((h.thread, h.rand_seed, h.offset), (6, v.write_seed(1), 0));
        assert_eq!(v.check(&b, 0, Expect::Seq(1)), Ok(()));
        let mut bad = b.clone();
        bad[3000] ^= 1;
        let f = v.check(&bad, 0, Expect::Seq(1)).unwrap_err();
        match f.kind {
            FailureKind::DataChecksum {
                first_bad,
                bad_bytes,
                ..
            } => {
                assert_eq!((first_bad, bad_bytes), (Some(3000), 1))
            }
            k => panic!("{k:?}"),
        }
        // The bytes swapped to the front of the interval are covered too.
        let mut bad = b.clone();
        bad[10] ^= 0x80;
        assert!(matches!(
            v.check(&bad, 0, Expect::Seq(1)).unwrap_err().kind,
            FailureKind::DataChecksum {
                first_bad: Some(10),
                ..
            }
        ));
    }

    #[test]
    fn pattern_modes() {
        let mut s = spec(VerifyMethod::Pattern);
        s.verify_pattern = vec![0xab, 0xcd, 0xef];
        let v = Verifier::new(&s, 0, 0).unwrap();
        let b = written(&v, 4096, 4096, 1);
        assert_eq!(&b[..6], &[0xab, 0xcd, 0xef, 0xab, 0xcd, 0xef]);
        assert_eq!(v.check(&b, 4096, Expect::Any), Ok(()));
        let mut bad = b.clone();
        bad[100] = 0;
        let f = v.check(&bad, 4096, Expect::Any).unwrap_err();
        assert_eq!(
            f.kind,
            FailureKind::PatternMismatch {
                at: 4196,
                expected: 0xcd,
                found: 0,
                bad_bytes: 1
            }
        );
        assert_eq!(
            v.check(&[0u8; 4096], 4096, Expect::Any).unwrap_err().kind,
            FailureKind::Zeroed
        );

        // pattern_hdr with %o: header + pattern carrying the block offset.
        let mut s = spec(VerifyMethod::PatternHdr);
        s.verify_pattern = vec![0; 8];
        s.verify_pattern_offsets = vec![0];
        let v = Verifier::new(&s, 0, 0).unwrap();
        let b = written(&v, 4096, 0x10000, 2);
        let h = v.header_len();
        assert_eq!(&b[h..h + 8], &0x10000u64.to_le_bytes());
        assert_eq!(v.check(&b, 0x10000, Expect::Seq(2)), Ok(()));
        let mut bad = b.clone();
        bad[h + 9] ^= 4;
        assert!(matches!(
            v.check(&bad, 0x10000, Expect::Any).unwrap_err().kind,
            FailureKind::PatternMismatch { at, .. } if at == 0x10000 + h as u64 + 9
        ));
    }

    #[test]
    fn meta_checks_the_header_not_the_data() {
        let v = Verifier::new(&spec(VerifyMethod::Meta), 3, 9).unwrap();
        let mut b = vec![0u8; 4096];
        v.fill_write(&mut b, 0x2000, 1, 0).unwrap();
        assert_eq!(v.check(&b, 0x2000, Expect::Seq(1)), Ok(()));
        let mut data = b.clone();
        data[4000] ^= 1;
        assert_eq!(
            v.check(&data, 0x2000, Expect::Seq(1)),
            Ok(()),
            "data is not checked"
        );
        assert!(
            v.check(&b, 0x3000, Expect::Seq(1)).is_err(),
            "the offset in the header is"
        );
        let mut hdr = b.clone();
        hdr[20] ^= 1;
        assert!(
            v.check(&hdr, 0x2000, Expect::Seq(1)).is_err(),
            "and its checksum"
        );
    }

    #[test]
    fn null_checks_nothing() {
        let v = Verifier::new(&spec(VerifyMethod::Null), 0, 0).unwrap();
        let mut b = vec![7u8; 512];
        v.fill_write(&mut b, 0, 1, 0).unwrap();
        assert_eq!(b, vec![7u8; 512]);
        assert_eq!(v.check(&[1, 2, 3], 0, Expect::Seq(4)), Ok(()));
    }

    #[test]
    fn expected_bytes_regenerate_the_write() {
        for m in [VerifyMethod::Md5, VerifyMethod::Xxhash] {
            let mut s = spec(m);
            s.verify_interval = Some(1024);
            s.verify_offset = 256;
            let v = Verifier::new(&s, 1, 2).unwrap();
            let b = written(&v, 4096, 40960, 9);
            // Data damaged, header intact: exact regeneration, write time included.
            let mut bad = b.clone();
            bad[2048 + 600..2048 + 700].fill(0x55);
            let f = v.check(&bad, 40960, Expect::Seq(9)).unwrap_err();
            assert_eq!((f.offset, f.len), (40960 + 2048, 1024));
            assert!(v.expected_bytes(&f).unwrap() == b[2048..3072]);
            // Header destroyed: the write time is unknown (0), everything else regenerates.
            bad[2048..3072].fill(0x55);
            let f = v.check(&bad, 40960, Expect::Seq(9)).unwrap_err();
            let exp = v.expected_bytes(&f).unwrap();
            // Write-time field and header crc of the swapped header differ.
            let (hs, he, cs) = (256 + 24, 256 + 32, 256 + 36);
            assert!(exp[..hs] == b[2048..2048 + hs]);
            assert!(exp[he..cs] == b[2048 + he..2048 + cs]);
            assert!(exp[cs + 4..] == b[2048 + cs + 4..3072]);
            assert_eq!(&exp[hs..he], &[0; 8]);
            // Neither a header nor an expectation: unknowable.
            let f = v.check(&bad, 40960, Expect::Any).unwrap_err();
            assert_eq!(v.expected_bytes(&f), None);
        }
    }

    #[test]
    fn verifier_is_shareable() {
        fn is_send_sync<T: Send + Sync>() {}
        is_send_sync::<Verifier>();
    }
}
