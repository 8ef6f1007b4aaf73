//! Where offsets fall and what buffers hold: the random generator and distribution, buffer
//! contents (compression, dedupe, patterns) and the memory behind the buffers (`mem=`).

use super::io::PerDir;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RandomGenerator {
    Tausworthe,
    Lfsr,
    Tausworthe64,
}

/// One zone of `random_distribution=zoned:` / `zoned_abs:` (per direction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zone {
    /// Percent of accesses that go to this zone.
    pub access_pct: f64,
    /// For `zoned`: percent of the file; for `zoned_abs`: absolute size in bytes.
    pub size: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RandomDistribution {
    Random,
    /// `zipf:θ` (θ > 0, ≠ 1)
    Zipf(f64),
    /// `pareto:h` (0 < h < 1)
    Pareto(f64),
    /// `normal:σ` / `gauss:σ`, σ as percent of the range
    Normal(f64),
    /// Per-direction zone lists (directions without their own list reuse read's).
    Zoned(PerDir<Vec<Zone>>),
    ZonedAbs(PerDir<Vec<Zone>>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RandSpec {
    pub randrepeat: bool,
    /// `randseed=` (default 0x89 when randrepeat; otherwise time-derived at run time).
    pub randseed: u64,
    pub norandommap: bool,
    pub generator: RandomGenerator,
    pub distribution: RandomDistribution,
    /// `percentage_random=` per direction, 0..=100 (100 = fully random for rand modes).
    pub percentage_random: PerDir<u32>,
    /// `allrandrepeat=`: seed every random generator (not only offsets) repeatably.
    pub allrandrepeat: bool,
    /// Optional second parameter of zipf/pareto/normal (`zipf:1.2:0.25`): where the most likely
    /// value sits, 0.0..=1.0 of the range. None = fio's default (random for zipf/pareto, 0.5 for
    /// normal).
    pub distribution_center: Option<f64>,
    /// `rw_sequencer=identical`: with `rw=randX:N`, the I/Os between new random offsets
    /// repeat the last offset instead of continuing sequentially from it.
    pub rw_seq_identical: bool,
    /// `softrandommap`: when a file's random map cannot be allocated, run that file without
    /// one (as norandommap) instead of failing.
    pub softrandommap: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BufferSpec {
    pub zero_buffers: bool,
    pub refill_buffers: bool,
    pub scramble_buffers: bool,
    pub compress_percentage: Option<u32>,
    pub compress_chunk: u64,
    /// `buffer_pattern=` decoded to bytes (hex `0x..`, quoted strings, decimal ints, concatenated).
    pub pattern: Vec<u8>,
    /// `dedupe_percentage=`
    pub dedupe_percentage: u32,
    /// `dedupe_mode=`: what a deduplicated buffer repeats.
    pub dedupe_mode: DedupeMode,
    /// `dedupe_working_set_percentage=`: the share of `size` whose pages the working set
    /// mode repeats (fio's default 5).
    pub dedupe_working_set_percentage: u32,
    /// `dedupe_global=`: the working set spans the buffer streams of every job.
    pub dedupe_global: bool,
    /// With `dedupe_global`: the `randseed` of every job of the run, in job order (filled by
    /// the resolver, which sees them all), to rebuild their buffer streams.
    pub dedupe_peer_seeds: Vec<u64>,
    /// `mem=`/`iomem=`: what backs the I/O buffers.
    pub mem: MemKind,
    /// The file after `mem=mmap:`, `mmapshared:` or `mmaphuge:`.
    pub mmapfile: Option<String>,
    /// `iomem_align=`: the first buffer starts this far past a page boundary.
    pub mem_align: u64,
    /// `hugepage-size=`: huge backings are rounded up to it.
    pub hugepage_size: u64,
    /// `lockmem=`: bytes pinned with mlock(2) while the job runs (0 = none).
    pub lockmem: u64,
}

/// fio's `dedupe_mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DedupeMode {
    /// A deduplicated buffer repeats the last unique one.
    #[default]
    Repeat,
    /// A deduplicated buffer repeats a page drawn from a working set generated up front.
    WorkingSet,
}

/// fio's `mem=` backings of the I/O buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemKind {
    /// The heap (fio: malloc(3)); the default.
    #[default]
    Malloc,
    /// SysV shared memory (shmget(2)).
    Shm,
    /// SysV shared memory in huge pages (SHM_HUGETLB).
    ShmHuge,
    /// A private mapping: anonymous, or of `mmapfile`.
    Mmap,
    /// A shared mapping: anonymous, or of `mmapfile`.
    MmapShared,
    /// Huge pages: an anonymous MAP_HUGETLB mapping, or a shared map of a hugetlbfs file.
    MmapHuge,
    /// GPU memory (not supported: needs CUDA hardware).
    CudaMalloc,
}
