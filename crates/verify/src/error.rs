//! Configuration and I/O errors of the verify library (as opposed to verification failures,
//! which are data findings and live in `failure`). Messages name the option or file involved.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("verify=none: no verification method, nothing to verify")]
    Disabled,
    #[error("verify=pattern/pattern_hdr needs verify_pattern= to be set")]
    PatternRequired,
    #[error("verify_pattern is {len} bytes long, at most {max} are supported")]
    PatternTooLong { len: usize, max: usize },
    #[error("verify_pattern: %o at byte {pos} needs 8 bytes but the pattern is {len} bytes long")]
    PatternOffsetOutOfRange { pos: usize, len: usize },
    #[error("verify_interval=0 is not valid")]
    IntervalZero,
    #[error(
        "verify_interval={interval} is too small for verify={method}: each interval needs at \
         least {need} bytes (the verify header, placed at verify_offset)"
    )]
    IntervalTooSmall {
        interval: u64,
        need: usize,
        method: &'static str,
    },
    #[error(
        "verify_offset={offset} overlaps the {hdr_len}-byte verify header; use 0 or at least {hdr_len}"
    )]
    OffsetOverlapsHeader { offset: u64, hdr_len: usize },
    #[error(
        "block size {len} is too small for verify={method}: each verify interval needs at least \
         {need} bytes (the verify header, placed at verify_offset)"
    )]
    BlockTooSmall {
        len: usize,
        need: usize,
        method: &'static str,
    },
    #[error("block size {len} is too large for a verify header (at most 4 GiB - 1 per interval)")]
    BlockTooLarge { len: usize },
    #[error("verify write log granularity must be at least 1 byte")]
    GranularityZero,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("verify state file {path}: {reason}")]
    StateFile { path: PathBuf, reason: String },
}
