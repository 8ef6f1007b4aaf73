//! [`WriteLog`]: which sequence number was last written to each block of a file, so a verify
//! pass knows what every block must hold (and so a lost write, which leaves an older but
//! self-consistent block behind, is caught). Memory is one `u64` per granule (the smallest block
//! or verify interval) of the parts of the file that were touched, kept in 32 KiB pages.
//!
//! `save`/`load` implement `verify_state_save` / `verify_state_load`. A state file is fio's
//! (see [`crate::fiostate`]), which fio loads, followed by fiox's write log in this versioned
//! binary form, which fio ignores (all integers little-endian; offsets from its start):
//!
//! | offset | size   | field                                            |
//! |--------|--------|--------------------------------------------------|
//! | 0      | 8      | magic `fxvstate`                                 |
//! | 8      | 4      | version (1)                                      |
//! | 12     | 4      | job id                                           |
//! | 16     | 8      | verify seed                                      |
//! | 24     | 8      | granularity in bytes                             |
//! | 32     | 8      | highest sequence number recorded                 |
//! | 40     | 8      | number of runs N                                 |
//! | 48     | 4      | file number within the job                       |
//! | 52     | 4      | phase: where the granule grid starts, mod granularity (0 before) |
//! | 56     | 24 × N | runs: offset, length, sequence number (u64 each; bit 63 set = partial write) |
//! | 56+24N | 4      | crc32c of all preceding bytes                    |
//!
//! A run is a maximal range of consecutive granules holding the same write.

use crate::error::VerifyError;
use crate::fiostate::FioState;
use crate::le::{u32_at, u64_at};
use std::collections::BTreeMap;
use std::path::Path;

const PAGE: u64 = 4096;
/// Flag in a granule's value: its write was partly overwritten.
const PARTIAL: u64 = 1 << 63;
/// Flag in a granule's value: its write was read back and found intact (`verify_backlog`), so
/// the final verify pass need not read it again. Never saved in state files.
const CHECKED: u64 = 1 << 62;
/// Both flags: what is not the sequence number.
const FLAGS: u64 = PARTIAL | CHECKED;
const STATE_MAGIC: &[u8; 8] = b"fxvstate";
const STATE_VERSION: u32 = 1;
const STATE_FIXED: usize = 56;
const RUN_LEN: usize = 24;
/// Refuse state files describing more granules than this (2^31 granules = 16 GiB of log).
const MAX_STATE_GRANULES: u64 = 1 << 31;

/// A range of the file last written by one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub offset: u64,
    pub len: u64,
    pub seq: u64,
    /// The whole write is still there. False when a later write (or a forget) cut into it:
    /// what is left is part of a block whose header may be gone, so it cannot be verified.
    pub whole: bool,
    /// Read back intact already (`verify_backlog`, see [`WriteLog::mark_checked`]).
    pub checked: bool,
}

/// Identity of the job and file a state file belongs to (checked by the loader's caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateIdent {
    pub job_id: u32,
    pub seed: u64,
    /// Which of the job's files (0-based) the log describes.
    pub file_no: u32,
}

/// Sequence number last written per granule of one file (0 = never written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteLog {
    gran: u64,
    /// The grid's origin modulo `gran`: granule `i` covers `phase + i * gran ..`, so a region
    /// that starts at `offset=1000` has its blocks on the grid (see [`WriteLog::with_phase`]).
    phase: u64,
    pages: BTreeMap<u64, Box<[u64]>>,
    last_seq: u64,
    /// Writes whose offset or length is not a multiple of the granularity (see
    /// [`WriteLog::record`]); never saved in state files.
    unaligned: u64,
}

impl WriteLog {
    /// A log tracking blocks of `granularity` bytes: use the smallest block size, or the verify
    /// interval when it is smaller.
    pub fn new(granularity: u64) -> Result<WriteLog, VerifyError> {
        if granularity == 0 {
            return Err(VerifyError::GranularityZero);
        }
        Ok(WriteLog {
            gran: granularity,
            phase: 0,
            pages: BTreeMap::new(),
            last_seq: 0,
            unaligned: 0,
        })
    }

    /// A log whose granule grid starts at `origin` (the region's first byte): writes laid out
    /// from there (`offset=`, numjobs' `offset_increment`) sit on the grid.
    pub fn with_phase(granularity: u64, origin: u64) -> Result<WriteLog, VerifyError> {
        let mut log = WriteLog::new(granularity)?;
        log.phase = origin % granularity;
        Ok(log)
    }

    /// The granule holding byte `offset` (bytes before the grid's origin fall in granule 0:
    /// only an off-grid write, partial anyway, can have them).
    #[inline]
    fn idx(&self, offset: u64) -> u64 {
        offset.saturating_sub(self.phase) / self.gran
    }

    /// Granules `first..=last` covered by `[offset, offset + len)`, `len` > 0.
    #[inline]
    fn span(&self, offset: u64, len: u64) -> (u64, u64) {
        (self.idx(offset), self.idx(offset.saturating_add(len - 1)))
    }

    /// Whether `[offset, offset + len)` starts and ends on the granule grid.
    fn on_grid(&self, offset: u64, len: u64) -> bool {
        offset >= self.phase
            && (offset - self.phase).is_multiple_of(self.gran)
            && len.is_multiple_of(self.gran)
    }

    /// How many recorded writes did not start and end on a granule boundary: they are
    /// logged as partial (never read back), since a run of their granules would reach past
    /// the write (and past the buffer a verify read of it gets).
    pub fn unaligned_writes(&self) -> u64 {
        self.unaligned
    }

    pub fn granularity(&self) -> u64 {
        self.gran
    }

    /// Highest sequence number recorded (0 when nothing was).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Bytes of memory held by the log's pages.
    pub fn memory_bytes(&self) -> usize {
        self.pages.len() * PAGE as usize * 8
    }

    /// Records that `[offset, offset + len)` now holds write `seq` (call at completion of the
    /// write; sequence numbers must be unique per write and below 2^62). Granules partly covered
    /// are attributed to this write too, as partial: a write that does not start and end on
    /// granule boundaries is never reported [`Run::whole`], so no verify read is ever longer
    /// than the write it checks. `seq` 0 forgets the range (e.g. after a trim). An older
    /// write that this range cuts into is marked as no longer whole (see [`Run::whole`]).
    pub fn record(&mut self, offset: u64, len: u64, seq: u64) {
        if len == 0 {
            return;
        }
        let mut seq = seq & !FLAGS;
        if seq != 0 && !self.on_grid(offset, len) {
            self.unaligned += 1;
            seq |= PARTIAL;
        }
        self.last_seq = self.last_seq.max(seq & !FLAGS);
        let (first, last) = self.span(offset, len);
        if let Some(before) = first.checked_sub(1) {
            self.mark_partial(first, before, false);
        }
        if let Some(after) = last.checked_add(1) {
            self.mark_partial(last, after, true);
        }
        self.fill_range(first, last, seq);
    }

    /// If the write at granule `outside` also covers granule `inside` (so the new write cuts
    /// it), flags its granules from `outside` outwards as belonging to a partial write.
    fn mark_partial(&mut self, inside: u64, outside: u64, up: bool) {
        let s = self.slot(outside) & !FLAGS;
        if s == 0 || self.slot(inside) & !FLAGS != s {
            return;
        }
        let mut idx = Some(outside);
        while let Some(i) = idx {
            if self.slot(i) & !FLAGS != s {
                break;
            }
            self.set_slot(i, s | PARTIAL);
            idx = if up {
                i.checked_add(1)
            } else {
                i.checked_sub(1)
            };
        }
    }

    fn slot(&self, idx: u64) -> u64 {
        self.pages
            .get(&(idx / PAGE))
            .map_or(0, |p| p[(idx % PAGE) as usize])
    }

    /// Sets one granule; only called for granules that hold a write, so the page exists.
    fn set_slot(&mut self, idx: u64, v: u64) {
        if let Some(p) = self.pages.get_mut(&(idx / PAGE)) {
            p[(idx % PAGE) as usize] = v;
        }
    }

    /// Stores `raw` (sequence number, possibly flagged partial) in granules `first..=last`.
    fn fill_range(&mut self, first: u64, last: u64, raw: u64) {
        let mut idx = first;
        loop {
            let page_no = idx / PAGE;
            let lo = (idx % PAGE) as usize;
            let hi = (last - page_no * PAGE).min(PAGE - 1) as usize;
            if raw != 0 || self.pages.contains_key(&page_no) {
                let page = self
                    .pages
                    .entry(page_no)
                    .or_insert_with(|| vec![0u64; PAGE as usize].into_boxed_slice());
                page[lo..=hi].fill(raw);
            }
            if page_no * PAGE + hi as u64 >= last {
                break;
            }
            idx = page_no * PAGE + hi as u64 + 1;
        }
    }

    /// Sequence number of the write that last covered `offset`, if any.
    pub fn get(&self, offset: u64) -> Option<u64> {
        let seq = self.slot(self.idx(offset)) & !FLAGS;
        (seq != 0).then_some(seq)
    }

    /// Whether every granule of `[offset, offset + len)` still holds write `seq`, whole: a
    /// write cut by another, or off the granule grid (see [`WriteLog::record`]), cannot be
    /// told from its neighbours in a shared granule and is not read back.
    pub fn holds(&self, offset: u64, len: u64, seq: u64) -> bool {
        if len == 0 || seq == 0 {
            return false;
        }
        let (first, last) = self.span(offset, len);
        (first..=last).all(|i| self.slot(i) & !CHECKED == seq)
    }

    /// `[offset, offset + len)` was read back intact while it held write `seq`: flag it so
    /// [`WriteLog::runs`] reports it as [`Run::checked`]. Granules holding another write are
    /// left alone.
    pub fn mark_checked(&mut self, offset: u64, len: u64, seq: u64) {
        if len == 0 || seq == 0 {
            return;
        }
        let (first, last) = self.span(offset, len);
        for i in first..=last {
            let raw = self.slot(i);
            if raw & !FLAGS == seq {
                self.set_slot(i, raw | CHECKED);
            }
        }
    }

    /// Every written range in offset order, consecutive granules of one write merged. This is
    /// the list a verify pass (or a `verify_state_load` run) reads back; runs that are not
    /// [`Run::whole`] must be skipped (their write's header may be gone), as fio drops writes
    /// that a later write overlapped.
    pub fn runs(&self) -> Vec<Run> {
        let mut runs = Vec::new();
        self.for_each_run(true, |r| runs.push(r));
        runs
    }

    /// [`WriteLog::runs`] one at a time, without collecting them.
    pub fn visit_runs(&self, f: impl FnMut(Run)) {
        self.for_each_run(true, f);
    }

    /// Calls `f` with every run in offset order without collecting them (a log of a large
    /// device holds millions). `split_checked`: a run ends where [`Run::checked`] changes
    /// (else every run reports `checked: false`, as in state files).
    fn for_each_run(&self, split_checked: bool, mut f: impl FnMut(Run)) {
        let mut cur: Option<Run> = None;
        for (&page_no, page) in &self.pages {
            for (i, &raw) in page.iter().enumerate() {
                if raw == 0 {
                    continue;
                }
                let offset = (page_no * PAGE + i as u64) * self.gran + self.phase;
                let (seq, whole) = (raw & !FLAGS, raw & PARTIAL == 0);
                let checked = split_checked && raw & CHECKED != 0;
                match cur.as_mut() {
                    Some(r)
                        if r.seq == seq
                            && r.whole == whole
                            && r.checked == checked
                            && r.offset.checked_add(r.len) == Some(offset) =>
                    {
                        r.len += self.gran
                    }
                    _ => {
                        if let Some(done) = cur.take() {
                            f(done);
                        }
                        cur = Some(Run {
                            offset,
                            len: self.gran,
                            seq,
                            whole,
                            checked,
                        });
                    }
                }
            }
        }
        if let Some(done) = cur {
            f(done);
        }
    }

    /// Serialises the log in the state-file format.
    pub fn encode(&self, ident: StateIdent) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = self.encode_to(ident, &mut out);
        out
    }

    /// Writes the state-file format to `w`, run by run (nothing the size of the log is held).
    fn encode_to(&self, ident: StateIdent, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut n = 0u64;
        self.for_each_run(false, |_| n += 1);
        let mut head = Vec::with_capacity(STATE_FIXED);
        head.extend_from_slice(STATE_MAGIC);
        head.extend_from_slice(&STATE_VERSION.to_le_bytes());
        head.extend_from_slice(&ident.job_id.to_le_bytes());
        head.extend_from_slice(&ident.seed.to_le_bytes());
        head.extend_from_slice(&self.gran.to_le_bytes());
        head.extend_from_slice(&self.last_seq.to_le_bytes());
        head.extend_from_slice(&n.to_le_bytes());
        head.extend_from_slice(&ident.file_no.to_le_bytes());
        // phase < gran, and a granule is at most a block (below 4 GiB).
        head.extend_from_slice(&(self.phase as u32).to_le_bytes());
        w.write_all(&head)?;
        let mut crc = crc32c::crc32c(&head);
        let mut res = Ok(());
        self.for_each_run(false, |r| {
            let raw = if r.whole { r.seq } else { r.seq | PARTIAL };
            let mut rec = [0u8; RUN_LEN];
            rec[..8].copy_from_slice(&r.offset.to_le_bytes());
            rec[8..16].copy_from_slice(&r.len.to_le_bytes());
            rec[16..].copy_from_slice(&raw.to_le_bytes());
            crc = crc32c::crc32c_append(crc, &rec);
            if res.is_ok() {
                res = w.write_all(&rec);
            }
        });
        res?;
        w.write_all(&crc.to_le_bytes())
    }

    /// Parses a state file's bytes. Never panics; the error says what is wrong.
    pub fn decode(b: &[u8]) -> Result<(WriteLog, StateIdent), String> {
        if b.len() < STATE_FIXED + 4 {
            return Err(format!("too short ({} bytes)", b.len()));
        }
        if &b[..8] != STATE_MAGIC {
            return Err("not a fiox verify state file (bad magic)".into());
        }
        let version = u32_at(b, 8);
        if version != STATE_VERSION {
            return Err(format!(
                "unsupported version {version} (this fiox reads {STATE_VERSION})"
            ));
        }
        let body = b.len() - 4;
        let (stored, computed) = (u32_at(b, body), crc32c::crc32c(&b[..body]));
        if stored != computed {
            return Err(format!(
                "corrupt: crc32c stored {stored:#010x}, computed {computed:#010x}"
            ));
        }
        let ident = StateIdent {
            job_id: u32_at(b, 12),
            seed: u64_at(b, 16),
            file_no: u32_at(b, 48),
        };
        let n = u64_at(b, 40);
        let want = n
            .checked_mul(RUN_LEN as u64)
            .and_then(|x| x.checked_add(STATE_FIXED as u64));
        if want != Some(body as u64) {
            return Err(format!(
                "{n} runs announced but {} bytes of runs present",
                body - STATE_FIXED
            ));
        }
        let mut log = WriteLog::new(u64_at(b, 24)).map_err(|e| e.to_string())?;
        let phase = u64::from(u32_at(b, 52));
        if phase >= log.gran {
            return Err(format!(
                "grid origin {phase} not below the granularity {}",
                log.gran
            ));
        }
        log.phase = phase;
        let runs: Vec<Run> = b[STATE_FIXED..body]
            .chunks_exact(RUN_LEN)
            .map(|c| Run {
                offset: u64_at(c, 0),
                len: u64_at(c, 8),
                seq: u64_at(c, 16) & !PARTIAL,
                whole: u64_at(c, 16) & PARTIAL == 0,
                checked: false,
            })
            .collect();
        log.check_runs(&runs)?;
        for r in &runs {
            let raw = if r.whole { r.seq } else { r.seq | PARTIAL };
            let first = log.idx(r.offset);
            log.fill_range(first, first + (r.len / log.gran - 1), raw);
            log.last_seq = log.last_seq.max(r.seq);
        }
        log.last_seq = log.last_seq.max(u64_at(b, 32));
        Ok((log, ident))
    }

    /// Rejects runs that `encode` cannot have produced, before any memory is committed.
    fn check_runs(&self, runs: &[Run]) -> Result<(), String> {
        let mut granules = 0u64;
        for r in runs {
            if r.seq == 0 || r.seq & CHECKED != 0 || r.len == 0 || !self.on_grid(r.offset, r.len) {
                return Err(format!(
                    "invalid run: offset {} length {} write #{} (granularity {})",
                    r.offset, r.len, r.seq, self.gran
                ));
            }
            granules = granules.saturating_add(r.len / self.gran);
        }
        if granules > MAX_STATE_GRANULES {
            return Err(format!(
                "describes {granules} blocks, more than the {MAX_STATE_GRANULES} supported"
            ));
        }
        Ok(())
    }

    /// Writes the state file (`fio`'s state, then this log) atomically: into a new temporary file created exclusively
    /// (`O_EXCL`, so never through a symlink or over another file) in the same directory, then
    /// renamed over `path`, only when `path` is absent or is a state file fiox wrote. Anything
    /// else at `path` (a user's file, a symlink, a directory) is left alone and refused: the
    /// name is implicit (`local-<job>-<index>-verify.state`), the user never asked to replace it.
    pub fn save(&self, path: &Path, ident: StateIdent, fio: &FioState) -> Result<(), VerifyError> {
        let refuse = |reason: String| VerifyError::StateFile {
            path: path.to_path_buf(),
            reason,
        };
        check_replaceable(path).map_err(refuse)?;
        let io = |source| VerifyError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut bytes = fio.encode();
        self.encode_to(ident, &mut bytes).map_err(io)?;
        // Replaced atomically by the guard (a new temporary name, then renameat), only over
        // fiox's own output or a file recognised again, on its descriptor, as a state file.
        fiox_guard::output::write(path, &bytes, fiox_guard::Named::Recognized(is_state_file))
            .map_err(|e| io(e.into()))?;
        Ok(())
    }

    /// Reads a state file: fio's (written by fio, or by [`WriteLog::save`] with fiox's log
    /// after it), or an older fiox's log alone.
    pub fn load(path: &Path) -> Result<SavedState, VerifyError> {
        let bytes = std::fs::read(path).map_err(|source| VerifyError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        SavedState::decode(&bytes).map_err(|reason| VerifyError::StateFile {
            path: path.to_path_buf(),
            reason,
        })
    }
}

/// What a state file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedState {
    /// fio's part (absent in an older fiox's file).
    pub fio: Option<FioState>,
    /// fiox's write log and whose it is (absent in a file fio wrote).
    pub log: Option<(WriteLog, StateIdent)>,
}

impl SavedState {
    /// Parses a state file's bytes. Never panics; the error says what is wrong.
    pub fn decode(b: &[u8]) -> Result<SavedState, String> {
        if b.starts_with(STATE_MAGIC) {
            return Ok(SavedState {
                fio: None,
                log: Some(WriteLog::decode(b)?),
            });
        }
        let (fio, rest) = FioState::decode(b)?;
        let log = if rest.is_empty() {
            None
        } else {
            Some(WriteLog::decode(rest).map_err(|e| format!("fiox's log after fio's state: {e}"))?)
        };
        Ok(SavedState {
            fio: Some(fio),
            log,
        })
    }
}

/// Whether a state file may be written at `path`: nothing is there, or a regular file that
/// is a verify state file — a previous fiox run's (its magic) or fio's (same name; fio rewrites
/// it on every run). Err says what is there instead.
fn check_replaceable(path: &Path) -> Result<(), String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot inspect it: {e}")),
    };
    const HOW: &str = "move it away or set verify_state_save=0";
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(format!(
            "it is a symbolic link, which fiox never writes through; {HOW}"
        ));
    }
    if !kind.is_file() {
        return Err(format!("it is not a regular file; {HOW}"));
    }
    if std::fs::File::open(path).is_ok_and(|mut f| is_state_file(&mut f)) {
        return Ok(());
    }
    Err(format!(
        "it exists and is not a fiox verify state file ({} bytes, no '{}' magic) nor fio's, \
         so it is not replaced; {HOW}",
        meta.len(),
        String::from_utf8_lossy(STATE_MAGIC)
    ))
}

/// Largest fio state file recognised (fio's holds a few records per file and queue entry).
const FIO_STATE_MAX: u64 = 1 << 20;

/// Whether the open file holds a verify state file (fiox's or fio's), by its first bytes.
fn is_state_file(f: &mut std::fs::File) -> bool {
    let mut head = Vec::new();
    let read = std::io::Read::read_to_end(&mut std::io::Read::take(f, FIO_STATE_MAX), &mut head);
    read.is_ok() && (head.starts_with(STATE_MAGIC) || FioState::is_fio_state(&head))
}

/// State file name for job `name` (slashes become dots), instance `index`, file `file_no`:
/// fio's `local-<name>-<index>-verify.state` for a job's first file, and
/// `local-<name>-<index>-<file_no>-verify.state` for its other files (fio keeps one state per
/// job; fiox keeps one log per file).
pub fn state_file_name(job_name: &str, index: u32, file_no: u32) -> String {
    let name = job_name.replace('/', ".");
    if file_no == 0 {
        format!("local-{name}-{index}-verify.state")
    } else {
        format!("local-{name}-{index}-{file_no}-verify.state")
    }
}

/// Little-endian integers at a byte offset of a state file (fio's and fiox's both).
#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    fn run(offset: u64, len: u64, seq: u64, whole: bool) -> Run {
        Run {
            offset,
            len,
            seq,
            whole,
            checked: false,
        }
    }

    /// Issue 39: a granularity that does not divide the write (verify_interval=2222 with
    /// bs=4096) made a whole run of 6,666 bytes, read back into a 4,096-byte buffer. Such a
    /// write is now partial: no run of it is ever read back, and none reaches past it.
    #[test]
    fn a_write_off_the_granule_grid_is_never_read_back() {
        let mut log = WriteLog::new(2222).unwrap();
        log.record(4096, 4096, 1);
        log.record(8192, 4096, 2);
        let runs = log.runs();
        assert!(runs.iter().all(|r| !r.whole), "{runs:?}");
        assert_eq!(log.unaligned_writes(), 2);
        assert_eq!(log.last_seq(), 2);
        // Aligned writes beside them stay verifiable.
        log.record(2222 * 10, 2222, 3);
        assert!(log.runs().contains(&run(22220, 2222, 3, true)));
        assert_eq!(log.get(4096), Some(1));
        // A grid starting where the region does (offset=1000) holds those blocks whole.
        let mut log = WriteLog::with_phase(16384, 1000).unwrap();
        log.record(1000 + 16384, 16384, 7);
        log.record(1000, 16384, 8);
        assert_eq!(log.unaligned_writes(), 0);
        assert_eq!(
            log.runs(),
            vec![run(1000, 16384, 8, true), run(17384, 16384, 7, true)]
        );
        assert!(log.holds(17384, 16384, 7));
        let (back, _) = WriteLog::decode(&log.encode(StateIdent {
            job_id: 1,
            seed: 2,
            file_no: 0,
        }))
        .unwrap();
        assert_eq!(back.runs(), log.runs(), "the phase survives a state file");
        let mut log = WriteLog::new(2222).unwrap();
        log.record(4096, 4096, 1);
        log.record(8192, 4096, 2);
        log.record(2222 * 10, 2222, 3);
        // verify_backlog asks `holds` before reading a write back: never for these.
        assert!(!log.holds(8192, 4096, 2));
        assert!(log.holds(22220, 2222, 3));
    }

    #[test]
    fn overwrites_mark_the_older_write_partial() {
        let mut log = WriteLog::new(512).unwrap();
        log.record(0, 4096, 1); // granules 0..8
        log.record(4096, 4096, 2); // adjacent, not overlapping: both stay whole
        assert_eq!(
            log.runs(),
            vec![run(0, 4096, 1, true), run(4096, 4096, 2, true)]
        );
        log.record(1024, 1024, 3); // inside write 1: both remnants partial
        log.record(7168, 2048, 4); // cuts the tail of write 2
        log.record(16384, 1024, 5);
        log.record(16384, 1024, 6); // exact overwrite: nothing left of write 5
        assert_eq!(
            log.runs(),
            vec![
                run(0, 1024, 1, false),
                run(1024, 1024, 3, true),
                run(2048, 2048, 1, false),
                run(4096, 3072, 2, false),
                run(7168, 2048, 4, true),
                run(16384, 1024, 6, true),
            ]
        );
        assert_eq!(log.get(3000), Some(1));
        // Partial flags survive a state file.
        let (back, _) = WriteLog::decode(&log.encode(StateIdent {
            job_id: 0,
            seed: 0,
            file_no: 0,
        }))
        .unwrap();
        assert_eq!(back.runs(), log.runs());
        assert_eq!(back.last_seq(), 6);
    }

    #[test]
    fn record_get_and_runs() {
        let mut log = WriteLog::new(4096).unwrap();
        assert_eq!(log.get(0), None);
        log.record(0, 16384, 1);
        log.record(8192, 4096, 2);
        // Crosses a page boundary (page = 4096 granules).
        log.record(4095 * 4096, 3 * 4096, 3);
        assert_eq!(log.get(0), Some(1));
        assert_eq!(log.get(4095), Some(1));
        assert_eq!(log.get(8192 + 100), Some(2));
        assert_eq!(log.get(12288), Some(1));
        assert_eq!(log.get(16384), None);
        assert_eq!(log.get(4096 * 4097), Some(3));
        assert_eq!(log.last_seq(), 3);
        let runs = log.runs();
        assert_eq!(
            runs,
            vec![
                run(0, 8192, 1, false),
                run(8192, 4096, 2, true),
                run(12288, 4096, 1, false),
                run(4095 * 4096, 3 * 4096, 3, true),
            ]
        );
        log.record(8192, 4096, 0);
        assert_eq!(log.get(8192), None);
        // A far offset costs one page, not a huge dense array.
        log.record(u64::MAX - 10, 5, 9);
        assert_eq!(log.get(u64::MAX - 8), Some(9));
        assert_eq!(log.memory_bytes(), 3 * 4096 * 8);
        assert!(WriteLog::new(0).is_err());
    }

    #[test]
    fn unaligned_records_cover_touched_granules() {
        let mut log = WriteLog::new(512).unwrap();
        log.record(700, 400, 5); // touches granules 1 and 2
        assert_eq!(log.get(511), None);
        assert_eq!(log.get(512), Some(5));
        assert_eq!(log.get(1535), Some(5));
        assert_eq!(log.get(1536), None);
    }

    #[test]
    fn state_round_trip_and_corruption() {
        let mut log = WriteLog::new(4096).unwrap();
        for i in 0..100u64 {
            log.record((i * 7919 % 257) * 4096, 8192, i + 1);
        }
        let ident = StateIdent {
            job_id: 3,
            seed: 99,
            file_no: 2,
        };
        let bytes = log.encode(ident);
        let (back, id) = WriteLog::decode(&bytes).unwrap();
        assert_eq!(id, ident);
        assert_eq!(back.runs(), log.runs());
        assert_eq!(back.last_seq(), log.last_seq());
        for i in [0, 9, 20, 40, 50, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(WriteLog::decode(&bad).is_err(), "byte {i}");
        }
        assert!(WriteLog::decode(&bytes[..bytes.len() - 24]).is_err());
        assert!(WriteLog::decode(b"short")
            .unwrap_err()
            .contains("too short"));
    }

    #[test]
    fn save_and_load_file() {
        let dir = std::env::temp_dir().join(format!("fiox-verify-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(state_file_name("x", 0, 3), "local-x-0-3-verify.state");
        let path = dir.join(state_file_name("a/b", 2, 0));
        assert!(path.ends_with("local-a.b-2-verify.state"));
        let mut log = WriteLog::new(512).unwrap();
        log.record(1024, 4096, 7);
        let ident = StateIdent {
            job_id: 1,
            seed: 2,
            file_no: 1,
        };
        log.save(&path, ident, &FioState::default()).unwrap();
        let (back, id) = WriteLog::load(&path).unwrap().log.unwrap();
        assert_eq!((back, id), (log, ident));
        std::fs::write(
            &path,
            b"fxvstate garbage that is long enough to parse the header....",
        )
        .unwrap();
        let err = WriteLog::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("verify state file") && err.contains("local-a.b-2"),
            "{err}"
        );
        let missing = WriteLog::load(&dir.join("nope")).unwrap_err().to_string();
        assert!(missing.contains("nope"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn save_replaces_only_state_files_and_never_follows_a_symlink() {
        let dir = std::env::temp_dir().join(format!("fiox-verify-replace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("local-j-0-verify.state");
        let ident = StateIdent {
            job_id: 0,
            seed: 1,
            file_no: 0,
        };
        let mut log = WriteLog::new(4096).unwrap();
        log.record(0, 4096, 1);
        log.save(&path, ident, &FioState::default()).unwrap();
        log.record(4096, 4096, 2);
        log.save(&path, ident, &FioState::default())
            .expect("a previous fiox state is replaced");
        assert_eq!(WriteLog::load(&path).unwrap().log.unwrap().0, log);
        // fio's state file of the same name (header: version 3, size, fio's crc32c).
        let mut body = vec![0u8; 168];
        body[8] = 1; // depth 1
        body[12] = 1; // one file
        let mut fio = 3u64.to_le_bytes().to_vec();
        fio.extend(168u64.to_le_bytes());
        fio.extend(u64::from(!crc32c::crc32c(&body)).to_le_bytes());
        fio.extend(&body);
        std::fs::write(&path, &fio).unwrap();
        log.save(&path, ident, &FioState::default())
            .expect("fio's state is replaced");
        // A user's file is not.
        std::fs::write(&path, b"notes").unwrap();
        let e = log
            .save(&path, ident, &FioState::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a fiox verify state file"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"notes");
        // Nor is anything behind a symlink, even a state file.
        let target = dir.join("target.state");
        log.save(&target, ident, &FioState::default()).unwrap();
        let before = std::fs::read(&target).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let e = log
            .save(&path, ident, &FioState::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), before);
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["local-j-0-verify.state", "target.state"],
            "no temp files"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn checked_runs_are_flagged_and_not_saved() {
        let mut log = WriteLog::new(4096).unwrap();
        log.record(0, 8192, 1);
        log.record(8192, 4096, 2);
        assert!(log.holds(0, 8192, 1) && !log.holds(0, 12288, 1));
        log.mark_checked(0, 8192, 1);
        log.mark_checked(8192, 4096, 9); // another write: untouched
        let runs = log.runs();
        assert_eq!(
            runs.iter().map(|r| (r.seq, r.checked)).collect::<Vec<_>>(),
            [(1, true), (2, false)]
        );
        assert_eq!(log.get(0), Some(1));
        let ident = StateIdent {
            job_id: 0,
            seed: 0,
            file_no: 0,
        };
        let (back, _) = WriteLog::decode(&log.encode(ident)).unwrap();
        assert!(back.runs().iter().all(|r| !r.checked));
        // A newer write over a checked block is not checked.
        log.record(0, 4096, 3);
        assert!(!log.runs()[0].checked);
    }
}
