//! [`WriteLog`]: which sequence number was last written to each block of a file, so a verify
//! pass knows what every block must hold (and so a lost write, which leaves an older but
//! self-consistent block behind, is caught). Memory is one `u64` per granule (the smallest block
//! or verify interval) of the parts of the file that were touched, kept in 32 KiB pages.
//!
//! `save`/`load` implement `verify_state_save` / `verify_state_load` with a versioned binary
//! file (all integers little-endian):
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
//! | 48     | 24 × N | runs: offset, length, sequence number (u64 each) |
//! | 48+24N | 4      | crc32c of all preceding bytes                    |
//!
//! A run is a maximal range of consecutive granules holding the same write.

use crate::error::VerifyError;
use std::collections::BTreeMap;
use std::path::Path;

const PAGE: u64 = 4096;
const STATE_MAGIC: &[u8; 8] = b"fxvstate";
const STATE_VERSION: u32 = 1;
const STATE_FIXED: usize = 48;
const RUN_LEN: usize = 24;
/// Refuse state files describing more granules than this (2^31 granules = 16 GiB of log).
const MAX_STATE_GRANULES: u64 = 1 << 31;

/// A range of the file last written by one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub offset: u64,
    pub len: u64,
    pub seq: u64,
}

/// Identity of the job a state file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateIdent {
    pub job_id: u32,
    pub seed: u64,
}

/// Sequence number last written per granule of one file (0 = never written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteLog {
    gran: u64,
    pages: BTreeMap<u64, Box<[u64]>>,
    last_seq: u64,
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
            pages: BTreeMap::new(),
            last_seq: 0,
        })
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
    /// write). Granules partly covered are attributed to this write too. `seq` 0 forgets the
    /// range (e.g. after a trim).
    pub fn record(&mut self, offset: u64, len: u64, seq: u64) {
        if len == 0 {
            return;
        }
        self.last_seq = self.last_seq.max(seq);
        let first = offset / self.gran;
        let last = offset.saturating_add(len - 1) / self.gran;
        let mut idx = first;
        loop {
            let page_no = idx / PAGE;
            let lo = (idx % PAGE) as usize;
            let hi = (last - page_no * PAGE).min(PAGE - 1) as usize;
            if seq != 0 || self.pages.contains_key(&page_no) {
                let page = self
                    .pages
                    .entry(page_no)
                    .or_insert_with(|| vec![0u64; PAGE as usize].into_boxed_slice());
                page[lo..=hi].fill(seq);
            }
            if page_no * PAGE + hi as u64 >= last {
                break;
            }
            idx = page_no * PAGE + hi as u64 + 1;
        }
    }

    /// Sequence number of the write that last covered `offset`, if any.
    pub fn get(&self, offset: u64) -> Option<u64> {
        let idx = offset / self.gran;
        let seq = self.pages.get(&(idx / PAGE))?[(idx % PAGE) as usize];
        (seq != 0).then_some(seq)
    }

    /// Every written range in offset order, consecutive granules of one write merged. This is
    /// the list a verify pass (or a `verify_state_load` run) reads back.
    pub fn runs(&self) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        for (&page_no, page) in &self.pages {
            for (i, &seq) in page.iter().enumerate() {
                if seq == 0 {
                    continue;
                }
                let offset = (page_no * PAGE + i as u64) * self.gran;
                match runs.last_mut() {
                    Some(r) if r.seq == seq && r.offset.checked_add(r.len) == Some(offset) => {
                        r.len += self.gran
                    }
                    _ => runs.push(Run {
                        offset,
                        len: self.gran,
                        seq,
                    }),
                }
            }
        }
        runs
    }

    /// Serialises the log in the state-file format.
    pub fn encode(&self, ident: StateIdent) -> Vec<u8> {
        let runs = self.runs();
        let mut out = Vec::with_capacity(STATE_FIXED + runs.len() * RUN_LEN + 4);
        out.extend_from_slice(STATE_MAGIC);
        out.extend_from_slice(&STATE_VERSION.to_le_bytes());
        out.extend_from_slice(&ident.job_id.to_le_bytes());
        out.extend_from_slice(&ident.seed.to_le_bytes());
        out.extend_from_slice(&self.gran.to_le_bytes());
        out.extend_from_slice(&self.last_seq.to_le_bytes());
        out.extend_from_slice(&(runs.len() as u64).to_le_bytes());
        for r in &runs {
            out.extend_from_slice(&r.offset.to_le_bytes());
            out.extend_from_slice(&r.len.to_le_bytes());
            out.extend_from_slice(&r.seq.to_le_bytes());
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
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
        let runs: Vec<Run> = b[STATE_FIXED..body]
            .chunks_exact(RUN_LEN)
            .map(|c| Run {
                offset: u64_at(c, 0),
                len: u64_at(c, 8),
                seq: u64_at(c, 16),
            })
            .collect();
        log.check_runs(&runs)?;
        for r in &runs {
            log.record(r.offset, r.len, r.seq);
        }
        log.last_seq = log.last_seq.max(u64_at(b, 32));
        Ok((log, ident))
    }

    /// Rejects runs that `encode` cannot have produced, before any memory is committed.
    fn check_runs(&self, runs: &[Run]) -> Result<(), String> {
        let mut granules = 0u64;
        for r in runs {
            if r.seq == 0 || r.len == 0 || r.offset % self.gran != 0 || r.len % self.gran != 0 {
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

    /// Writes the state file atomically (temporary file, then rename).
    pub fn save(&self, path: &Path, ident: StateIdent) -> Result<(), VerifyError> {
        let io = |source| VerifyError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(&tmp, self.encode(ident)).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Reads a state file written by [`WriteLog::save`].
    pub fn load(path: &Path) -> Result<(WriteLog, StateIdent), VerifyError> {
        let bytes = std::fs::read(path).map_err(|source| VerifyError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        WriteLog::decode(&bytes).map_err(|reason| VerifyError::StateFile {
            path: path.to_path_buf(),
            reason,
        })
    }
}

/// fio's state file name for job `name` (slashes become dots), instance `index`:
/// `local-<name>-<index>-verify.state`.
pub fn state_file_name(job_name: &str, index: u32) -> String {
    format!("local-{}-{index}-verify.state", job_name.replace('/', "."))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                Run {
                    offset: 0,
                    len: 8192,
                    seq: 1
                },
                Run {
                    offset: 8192,
                    len: 4096,
                    seq: 2
                },
                Run {
                    offset: 12288,
                    len: 4096,
                    seq: 1
                },
                Run {
                    offset: 4095 * 4096,
                    len: 3 * 4096,
                    seq: 3
                },
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
        let path = dir.join(state_file_name("a/b", 2));
        assert!(path.ends_with("local-a.b-2-verify.state"));
        let mut log = WriteLog::new(512).unwrap();
        log.record(1024, 4096, 7);
        let ident = StateIdent { job_id: 1, seed: 2 };
        log.save(&path, ident).unwrap();
        let (back, id) = WriteLog::load(&path).unwrap();
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
}
