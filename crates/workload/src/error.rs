//! Typed errors for workloads that cannot be generated (bad sizes, zones, distributions).

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum WorkloadError {
    #[error("job has no files to do I/O to")]
    NoFiles,
    #[error("job has nothing to do: its I/O size is 0 (set size= or io_size=)")]
    NothingToDo,
    #[error("{ddir} block size is 0")]
    ZeroBlockSize { ddir: &'static str },
    #[error("{ddir} block size range {min}-{max} is inverted (min > max)")]
    BadBlockRange {
        ddir: &'static str,
        min: u64,
        max: u64,
    },
    #[error("blocksize {bs} is larger than data set range {size} (size/filesize too small)")]
    BlockSizeTooLarge { bs: u64, size: u64 },
    #[error("random_distribution=zoned{abs}: {what}")]
    BadZones { abs: &'static str, what: String },
    #[error("{0}")]
    BadZoneMode(&'static str),
    #[error("random_distribution: {0}")]
    BadDistribution(String),
    #[error("random_generator=lfsr: {0}")]
    Lfsr(&'static str),
    #[error(
        "file {file}: failed allocating the random map ({blocks} blocks); set norandommap, \
         or softrandommap to run without the map when it cannot be had"
    )]
    RandomMap { file: usize, blocks: u64 },
    #[error("{0} file extents given but {1} file names/sizes")]
    FileListMismatch(usize, usize),
    #[error("file {file}: extent offset {offset} + size {size} exceeds real size {real}")]
    ExtentBeyondFile {
        file: usize,
        offset: u64,
        size: u64,
        real: u64,
    },
}
