//! `verify=` and the `verify_*` options: the method and how blocks are checked.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyMethod {
    None,
    Md5,
    Crc32c,
    Crc64,
    Sha1,
    Sha256,
    Sha512,
    Xxhash,
    Pattern,
    PatternHdr,
    Null,
    Crc32,
    Crc16,
    Crc7,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    /// fio's `meta`: the header alone is checked (offset, sequence, header checksum), not the
    /// data (fio keeps it for old job files; its header always carries this information).
    Meta,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VerifySpec {
    pub method: VerifyMethod,
    pub do_verify: bool,
    pub verify_only: bool,
    /// fiox's `verify_strict`: a block must also carry this job's thread number and the write
    /// seed of the expected write (off by default, `verify_only` included, as in fio).
    pub verify_strict: bool,
    /// fio 3.42's `verify_write_sequence`: `Some(false)` skips the write-number check (stale or
    /// newer blocks verify when intact); unset or on, the check is as fiox decides (writing
    /// jobs whose write log says which write is expected).
    pub verify_write_sequence: Option<bool>,
    /// fio 3.42's `verify_header_seed`: `Some(true)` checks the header's seed against the
    /// expected write's (fio's "bad header rand_seed") even without `verify_strict`;
    /// `Some(false)` never checks it, even with `verify_strict`; unset: `verify_strict` decides.
    pub verify_header_seed: Option<bool>,
    pub verify_fatal: bool,
    pub verify_dump: bool,
    pub verify_async: u32,
    /// `verify_async_cpus=`: the CPUs the verify_async threads may run on; None = no restriction.
    pub verify_async_cpus: Option<Vec<usize>>,
    pub verify_backlog: u64,
    pub verify_backlog_batch: u64,
    pub verify_interval: Option<u64>,
    pub verify_offset: u64,
    pub verify_pattern: Vec<u8>,
    /// Where `%o` stood in `verify_pattern=`: byte positions in `verify_pattern`, each the start
    /// of 8 reserved bytes that are replaced by the block's offset (little-endian u64) when the
    /// pattern is written and checked (fio's `paste_blockoff`). Empty when the pattern has no `%o`.
    pub verify_pattern_offsets: Vec<usize>,
    /// `verify=` was written (any value, 0 included): `verify_pattern` then leaves the method
    /// alone, in whichever order the two come (fio's `fio_option_is_set(verify)`).
    pub method_given: bool,
    pub verify_state_save: bool,
    pub verify_state_load: bool,
    pub serialize_overlap: bool,
    /// `experimental_verify`: the verify phase replays the job's I/O sequence (same seeds)
    /// instead of reading the write log, checking each write against exactly that write.
    pub experimental_verify: bool,
    /// `trim_percentage`: share of the logged writes fio's verify-trim discards.
    pub trim_percentage: u32,
    /// `trim_verify_zero`: trimmed blocks must read back as zeroes (else they are not checked).
    pub trim_verify_zero: bool,
    /// `trim_backlog`: the picked writes are trimmed whenever the log holds a multiple of this
    /// many writes (0: never, as in fio).
    pub trim_backlog: u64,
    /// `trim_backlog_batch`: trims per round (0: `trim_backlog`).
    pub trim_backlog_batch: u64,
}
