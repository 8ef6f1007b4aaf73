//! fiox-verify owns data verification (`verify=` and the `verify_*` options): what a verified
//! block looks like on the medium, how it is filled before a write, how a block read back is
//! checked and the damage classified, the write log that says which write each block must hold
//! (with `verify_state_save`/`verify_state_load` files), and `verify_dump`. It does no I/O on
//! the data files itself; the runner reads and writes, this crate fills and checks buffers.
//!
//! # Block layout
//!
//! A block (one write) is split into verify intervals of `verify_interval` bytes (the whole
//! block when unset or when it does not divide the block, as in fio). With a header method
//! (every checksum, and `pattern_hdr`) each interval is, before `verify_offset` is applied:
//!
//! ```text
//! [ header: 40 bytes fixed + digest area | data: interval - header bytes ]
//! ```
//!
//! The header is fio 3.33's `struct verify_header` followed by its `vhdr_*` digest structure,
//! so fio verifies blocks fiox wrote and fiox verifies blocks fio wrote. All integers
//! little-endian:
//!
//! | offset | size | field                                                                |
//! |--------|------|----------------------------------------------------------------------|
//! | 0      | 2    | magic 0xacca                                                         |
//! | 2      | 2    | verify type (fio's numbers): 2 md5, 3 crc64, 4 crc32, 5 crc32c (6 crc32c-intel is read as crc32c), 7 crc16, 8 crc7, 9 sha256, 10 sha512, 11 sha3-224, 12 sha3-256, 13 sha3-384, 14 sha3-512, 15 xxhash, 16 sha1, 17 pattern_hdr |
//! | 4      | 4    | interval length (header + data)                                      |
//! | 8      | 8    | data seed of the write (fiox: derived from job seed, job and write number) |
//! | 16     | 8    | absolute file offset of the interval                                 |
//! | 24     | 4+4  | write time, seconds and nanoseconds (informational, never checked)   |
//! | 32     | 2    | thread number of the writing job (1-based)                           |
//! | 34     | 2    | write number within the job (0-based, low 16 bits)                   |
//! | 36     | 4    | fio's crc32c (no final inversion) of bytes 0..36                     |
//! | 40     | D    | digest of the data part as fio stores it (D = 16 md5, 8 crc64, 4 crc32/crc32c/xxhash, 2 crc16, 1 crc7, 64 sha256, 128 sha512, 28 sha3-224, 32 sha3-256, 48 sha3-384, 64 sha3-512, 20 sha1, 0 pattern_hdr; see [`sum`] for fio's quirks) |
//!
//! The data part is `verify_pattern` when one is set (repeated from the start of the write,
//! `%o` replaced by the write's offset as a little-endian u64), otherwise a pseudo-random
//! stream keyed by (header seed, interval offset) — so a reader regenerates the exact expected
//! bytes of a fiox write from its header without storing data (fio's data comes from its own
//! generator and is checked by digest only).
//!
//! `verify_offset=N` (N = 0 or N >= header length, and N + header length <= interval) swaps the
//! header with the N-th..N+header-length bytes of the interval after filling; the checker
//! reads the header at N and hashes the data in logical order without modifying the buffer.
//!
//! `verify=pattern` writes no header: the block is the pattern (fio's strict pattern check).
//! `verify=null` neither fills nor checks.
//!
//! # What a failure says
//!
//! Checks per interval, in this order (see [`FailureKind`]): all zero bytes → `Zeroed`; no
//! magic → `BadMagic` (garbage); header checksum wrong → `HeaderChecksum`; other method →
//! `MethodMismatch`; header for another length → `WrongLength`; for another offset →
//! `WrongOffset` (misplaced write, swapped blocks); data not matching the header: regenerate
//! the data and compare per 512-byte sector — whole sectors of other content → `Torn`,
//! otherwise `DataChecksum` (bit rot) or `PatternMismatch`; intact but an older write number
//! than the write log expects → `Stale` (a lost write); newer → `NewerThanExpected`. Only in
//! strict mode ([`Verifier::set_strict`]): another thread number or write seed →
//! `ForeignWriter`. Without strict mode any intact block in place verifies, whoever wrote it,
//! as in fio.
//!
//! # Integrating in the runner
//!
//! 1. Per job: `Verifier::from_job(&job, job_id, seed)` (`None` for `verify=none`); print
//!    [`Verifier::notes`] as warnings; call [`Verifier::validate_block_len`] for the smallest
//!    and largest block size and turn an error into a job error. The seed must be derived from
//!    the job's `randseed` so a later `verify_only` run with the same job file gets the same one.
//! 2. Per file: a [`WriteLog`] whose granularity divides every write's offset and length (the
//!    smallest of block size, block alignment and verify interval), or the one loaded from
//!    `<dir>/`[`state_file_name`] when `verify_state_load` is set (check that its
//!    [`StateIdent`] matches the job, seed and file number).
//! 3. Before each write of `buf` at `offset`: `seq += 1;
//!    verifier.fill_write(buf, offset, seq, now_ns)` (after buffer contents were generated, so
//!    the verify data replaces them). After the write completes successfully:
//!    `log.record(offset, buf.len(), seq)`. With iodepth > 1, overlapping writes in flight make
//!    the on-disk winner unknowable; the runner should serialize overlaps as fio advises.
//! 4. Verify phase (after the write phase, or `verify_backlog` batches, or the whole job for
//!    `verify_only`): for each [`Run`] in `log.runs()` that is [`Run::whole`] (a write a later
//!    write cut into cannot be verified; fio drops those too) and not [`Run::checked`] (a
//!    `verify_backlog` batch read it back already: `log.mark_checked`), or each block the
//!    workload would write when there is no log, read the same offset and length as the write
//!    and call
//!    `verifier.check(buf, offset, Expect::Log(&log))` (`Expect::Any` without a log). Count the
//!    error into the job's verify errors, print `"{file}: {failure}"`, dump with
//!    [`Verifier::dump`] when `verify_dump` is set, and stop the job when `verify_fatal` is set.
//!    [`Verifier::check_all`] lists every bad interval of a block instead of the first.
//! 5. At the end of every write phase with `verify_state_save` (as fio rewrites its state on
//!    every run), per file: `log.save(&dir.join(state_file_name(name, index, file_no)),
//!    StateIdent { job_id, seed, file_no }, &fio_state)` (fio's state of the whole job first,
//!    so fio can load it); `save` replaces only an earlier state file.
//!
//! ```
//! use fiox_job::spec::{JobSpec, VerifyMethod};
//! use fiox_verify::{Expect, Verifier, WriteLog};
//!
//! let mut job = JobSpec::default();
//! job.verify.method = VerifyMethod::Crc32c;
//! let v = Verifier::from_job(&job, 0, 0x5eed)?.expect("verify is on");
//! v.validate_block_len(4096)?;
//! let mut log = WriteLog::new(4096)?;
//! let mut disk = vec![0u8; 8 * 4096];
//! for (seq, block) in (1..).zip(0..8u64) {
//!     let off = block * 4096;
//!     let buf = &mut disk[off as usize..][..4096];
//!     v.fill_write(buf, off, seq, 0)?; // then submit the write
//!     log.record(off, 4096, seq); // on completion
//! }
//! disk[3 * 4096 + 100] ^= 1; // bit rot in block 3
//! let bad: Vec<_> = log
//!     .runs()
//!     .iter()
//!     .filter(|r| r.whole)
//!     .filter_map(|r| {
//!         let buf = &disk[r.offset as usize..][..r.len as usize];
//!         v.check(buf, r.offset, Expect::Log(&log)).err()
//!     })
//!     .collect();
//! assert_eq!(bad.len(), 1);
//! assert_eq!(bad[0].offset, 3 * 4096);
//! assert_eq!(bad[0].kind.name(), "data-checksum");
//! # Ok::<(), fiox_verify::VerifyError>(())
//! ```
//!
//! Thread safety: [`Verifier`] is immutable after construction (`Send + Sync`), so
//! `verify_async` workers can share it behind an `Arc`; the write log belongs to the submitter.

#![forbid(unsafe_code)]
pub mod dump;
pub mod error;
pub mod failure;
pub mod fill;
pub mod fiostate;
pub mod header;
mod le;
pub mod sum;
pub mod verifier;
pub mod writelog;

pub use dump::{dump_path, DumpFiles};
pub use error::VerifyError;
pub use failure::{FailureKind, VerifyFailure, SECTOR};
pub use fiostate::FioState;
pub use header::{HdrMethod, Header, HeaderError};
pub use sum::{Algo, Sum};
pub use verifier::{Expect, Verifier};
pub use writelog::{state_file_name, Run, SavedState, StateIdent, WriteLog};
