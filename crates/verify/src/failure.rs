//! Verification findings: what was wrong with one verify interval of a block read back, told
//! apart precisely enough to say *how* data was lost (never written / zeroed, garbage, misplaced,
//! stale after a lost write, torn, bit rot), with messages that state what was expected and what
//! was found. The caller prefixes the file name.

use crate::header::Header;
use crate::sum::Sum;
use std::fmt;

/// Sector size used to tell a torn write (whole sectors of other content) from corruption.
pub const SECTOR: u64 = 512;

/// One verify interval that failed verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyFailure {
    /// Absolute file offset and length of the failing interval.
    pub offset: u64,
    pub len: u64,
    /// The block (I/O unit) that was being verified.
    pub block_offset: u64,
    pub block_len: u64,
    /// Sequence number the caller expected for this interval, if it tracked one.
    pub expected_seq: Option<u64>,
    /// The interval's header if one was found and its checksum was valid.
    pub header: Option<Header>,
    pub kind: FailureKind,
}

/// What was wrong.
// The checksum variant carries two digests of up to 128 bytes (fio's sha512 area); failures
// are rare and travel boxed (`VerifyFailure` in a `Box`), so the size costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// The interval reads back as zeros: never written, trimmed, or a lost write to fresh space.
    Zeroed,
    /// No header where one must be: garbage, or data not written by this verifier.
    BadMagic { found: [u8; 2] },
    /// The header magic is present but the header checksum does not match (header damaged).
    HeaderChecksum { stored: u32, computed: u32 },
    /// A valid header written with another verify method (fio's verify type number).
    MethodMismatch {
        found_method: u16,
        expected_method: &'static str,
    },
    /// A valid header for an interval of another length (block size or verify_interval differ).
    WrongLength { found: u32 },
    /// A valid header belonging to another offset: misplaced write or wrong block read.
    WrongOffset { found: u64 },
    /// A valid header from another job or run (strict mode: thread number or write seed
    /// differ).
    ForeignWriter {
        expected_job: u32,
        found_job: u32,
        expected_seed: u64,
        found_seed: u64,
    },
    /// Intact data of an older write: the expected write was lost.
    Stale { expected_seq: u64, found_seq: u64 },
    /// Intact data of a newer write than the caller expected (its write log is out of date).
    NewerThanExpected { expected_seq: u64, found_seq: u64 },
    /// Valid header but whole sectors hold other content than the header's write produced.
    Torn {
        found_seq: u64,
        /// Absolute offset of the first bad sector.
        first_bad: u64,
        bad_sectors: u64,
        /// How many of the bad sectors read back as zeros (unwritten or trimmed space).
        zero_sectors: u64,
        sectors: u64,
    },
    /// Valid header but the data does not match its checksum (not sector-shaped: bit rot,
    /// scattered corruption).
    DataChecksum {
        algo: &'static str,
        expected: Sum,
        found: Sum,
        /// Absolute offset of the first byte that differs from the regenerated data, and the
        /// number of differing bytes (None / 0 when the data could not be regenerated).
        first_bad: Option<u64>,
        bad_bytes: u64,
    },
    /// Pattern data differs from `verify_pattern`.
    PatternMismatch {
        /// Absolute offset of the first wrong byte.
        at: u64,
        expected: u8,
        found: u8,
        bad_bytes: u64,
    },
    /// The block handed to `check` is smaller than a verify header.
    ShortBlock { need: u64 },
}

impl FailureKind {
    /// A short stable name for counting failures by kind (e.g. in reports and tests).
    pub fn name(&self) -> &'static str {
        match self {
            FailureKind::Zeroed => "zeroed",
            FailureKind::BadMagic { .. } => "bad-magic",
            FailureKind::HeaderChecksum { .. } => "header-checksum",
            FailureKind::MethodMismatch { .. } => "method-mismatch",
            FailureKind::WrongLength { .. } => "wrong-length",
            FailureKind::WrongOffset { .. } => "wrong-offset",
            FailureKind::ForeignWriter { .. } => "foreign-writer",
            FailureKind::Stale { .. } => "stale",
            FailureKind::NewerThanExpected { .. } => "newer-than-expected",
            FailureKind::Torn { .. } => "torn",
            FailureKind::DataChecksum { .. } => "data-checksum",
            FailureKind::PatternMismatch { .. } => "pattern-mismatch",
            FailureKind::ShortBlock { .. } => "short-block",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FailureKind::*;
        match self {
            Zeroed
            | BadMagic { .. }
            | HeaderChecksum { .. }
            | MethodMismatch { .. }
            | ShortBlock { .. } => self.fmt_unreadable(f),
            WrongLength { .. }
            | WrongOffset { .. }
            | ForeignWriter { .. }
            | Stale { .. }
            | NewerThanExpected { .. } => self.fmt_identity(f),
            Torn { .. } | DataChecksum { .. } | PatternMismatch { .. } => self.fmt_content(f),
        }
    }
}

impl FailureKind {
    /// Messages for intervals without a usable header.
    fn fmt_unreadable(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FailureKind::*;
        match self {
            Zeroed => write!(f, "block reads back as all zeros (never written, trimmed or lost)"),
            BadMagic { found } => write!(
                f,
                "no verify header: expected magic {}, found {} (garbage or not written by this job)",
                hex(&crate::header::MAGIC.to_le_bytes()),
                hex(found)
            ),
            HeaderChecksum { stored, computed } => write!(
                f,
                "verify header corrupt: header crc32c stored {stored:#010x}, computed {computed:#010x}"
            ),
            MethodMismatch {
                found_method,
                expected_method,
            } => {
                let name = crate::header::HdrMethod::from_code(*found_method)
                    .map_or("unknown", |m| m.name());
                write!(
                    f,
                    "header written with verify type {found_method} ({name}); expected \
                     verify={expected_method}"
                )
            }
            ShortBlock { need } => write!(f, "block too short for a verify header ({need} bytes needed)"),
            _ => Ok(()), // other kinds are dispatched elsewhere by `fmt`
        }
    }

    /// Messages for a valid header that belongs to another block, write, job or run.
    fn fmt_identity(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FailureKind::*;
        match self {
            WrongLength { found } => write!(f, "header is for a {found}-byte interval"),
            WrongOffset { found } => write!(
                f,
                "header says this data belongs at offset {found} (misplaced write or wrong block read)"
            ),
            ForeignWriter {
                expected_job,
                found_job,
                expected_seed,
                found_seed,
            } => write!(
                f,
                "written by another job or run: expected thread {expected_job} seed \
                 {expected_seed:#x}, found thread {found_job} seed {found_seed:#x}"
            ),
            Stale {
                expected_seq,
                found_seq,
            } => write!(
                f,
                "stale data (lost write): expected write #{expected_seq}, found older write #{found_seq}"
            ),
            NewerThanExpected {
                expected_seq,
                found_seq,
            } => write!(
                f,
                "expected write #{expected_seq}, found newer write #{found_seq} (write log out of date)"
            ),
            _ => Ok(()), // other kinds are dispatched elsewhere by `fmt`
        }
    }

    /// Messages for a valid header whose data does not match.
    fn fmt_content(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FailureKind::*;
        match self {
            Torn {
                found_seq,
                first_bad,
                bad_sectors,
                zero_sectors,
                sectors,
            } => write!(
                f,
                "torn write: {bad_sectors} of {sectors} {SECTOR}-byte sectors do not hold write \
                 #{found_seq}'s data ({zero_sectors} of them zeros), first at offset {first_bad}"
            ),
            DataChecksum {
                algo,
                expected,
                found,
                first_bad,
                bad_bytes,
            } => {
                write!(f, "{algo} mismatch: expected {expected}, found {found}")?;
                match first_bad {
                    Some(at) => write!(f, "; {bad_bytes} bytes differ, first at offset {at}"),
                    None => Ok(()),
                }
            }
            PatternMismatch {
                at,
                expected,
                found,
                bad_bytes,
            } => write!(
                f,
                "pattern mismatch at offset {at}: expected {expected:#04x}, found {found:#04x} \
                 ({bad_bytes} bytes differ)"
            ),
            _ => Ok(()), // other kinds are dispatched elsewhere by `fmt`
        }
    }
}

impl fmt::Display for VerifyFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "verify failed at offset {}, length {} (block offset {}, length {}): {}",
            self.offset, self.len, self.block_offset, self.block_len, self.kind
        )?;
        if let FailureKind::WrongLength { .. } = self.kind {
            write!(f, ", expected {}", self.len)?;
        }
        Ok(())
    }
}

fn hex(b: &[u8]) -> String {
    let mut s = String::from("0x");
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_message() {
        let sum = Sum::from_bytes(&[1, 2]);
        let kinds = [
            (FailureKind::Zeroed, "all zeros"),
            (FailureKind::BadMagic { found: [0; 2] }, "no verify header"),
            (
                FailureKind::HeaderChecksum {
                    stored: 1,
                    computed: 2,
                },
                "header crc32c",
            ),
            (
                FailureKind::MethodMismatch {
                    found_method: 4,
                    expected_method: "md5",
                },
                "verify type 4 (crc32)",
            ),
            (FailureKind::WrongLength { found: 9 }, "9-byte"),
            (FailureKind::WrongOffset { found: 77 }, "offset 77"),
            (
                FailureKind::ForeignWriter {
                    expected_job: 1,
                    found_job: 2,
                    expected_seed: 3,
                    found_seed: 4,
                },
                "found thread 2",
            ),
            (
                FailureKind::Stale {
                    expected_seq: 5,
                    found_seq: 4,
                },
                "lost write",
            ),
            (
                FailureKind::NewerThanExpected {
                    expected_seq: 5,
                    found_seq: 6,
                },
                "newer write #6",
            ),
            (
                FailureKind::Torn {
                    found_seq: 5,
                    first_bad: 512,
                    bad_sectors: 1,
                    zero_sectors: 0,
                    sectors: 8,
                },
                "torn write",
            ),
            (
                FailureKind::DataChecksum {
                    algo: "crc32c",
                    expected: sum,
                    found: sum,
                    first_bad: Some(3),
                    bad_bytes: 1,
                },
                "crc32c mismatch: expected 0102",
            ),
            (
                FailureKind::PatternMismatch {
                    at: 1,
                    expected: 2,
                    found: 3,
                    bad_bytes: 1,
                },
                "expected 0x02, found 0x03",
            ),
            (FailureKind::ShortBlock { need: 80 }, "80 bytes needed"),
        ];
        for (k, text) in kinds {
            let s = k.to_string();
            assert!(s.contains(text), "{}: {s}", k.name());
        }
    }

    #[test]
    fn messages_name_expected_and_found() {
        let f = VerifyFailure {
            offset: 8192,
            len: 4096,
            block_offset: 4096,
            block_len: 8192,
            expected_seq: Some(9),
            header: None,
            kind: FailureKind::Stale {
                expected_seq: 9,
                found_seq: 3,
            },
        };
        let s = f.to_string();
        assert!(s.contains("offset 8192, length 4096"), "{s}");
        assert!(s.contains("expected write #9"), "{s}");
        assert!(s.contains("older write #3"), "{s}");
        let k = FailureKind::BadMagic {
            found: [0xde, 0xad],
        };
        assert!(k.to_string().contains("found 0xdead"));
        assert!(k.to_string().contains("expected magic 0xcaac"));
        let w = VerifyFailure {
            kind: FailureKind::WrongLength { found: 512 },
            ..f
        };
        assert!(w.to_string().ends_with("512-byte interval, expected 4096"));
    }
}
