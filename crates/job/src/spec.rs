//! The resolved, typed job: what every crate below the parser consumes.
//!
//! `JobSpec` is the contract between the `job` crate (which fills it from job files and command
//! lines) and the runner, workload generators, engines and reports (which only read it). Nothing
//! downstream ever sees option strings, except `raw_options`, kept verbatim for fio's JSON
//! `job options` object and `--showcmd`.
//!
//! Units: sizes and offsets in bytes, times as `Duration` (or nanoseconds where noted), rates in
//! bytes/s or I/Os per second, percentages as integers 0..=100 unless noted.

use std::time::Duration;

/// A data direction as fio counts them (`rwts` order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl Ddir {
    pub const ALL: [Ddir; 3] = [Ddir::Read, Ddir::Write, Ddir::Trim];
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One value per direction (fio's `read,write,trim` triplets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PerDir<T> {
    pub read: T,
    pub write: T,
    pub trim: T,
}

impl<T> PerDir<T> {
    pub fn get(&self, d: Ddir) -> &T {
        match d {
            Ddir::Read => &self.read,
            Ddir::Write => &self.write,
            Ddir::Trim => &self.trim,
        }
    }
    pub fn get_mut(&mut self, d: Ddir) -> &mut T {
        match d {
            Ddir::Read => &mut self.read,
            Ddir::Write => &mut self.write,
            Ddir::Trim => &mut self.trim,
        }
    }
}

impl<T: Clone> PerDir<T> {
    pub fn all(v: T) -> Self {
        PerDir {
            read: v.clone(),
            write: v.clone(),
            trim: v,
        }
    }
}

/// `rw=` pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwMode {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    /// `rw`/`readwrite`: sequential mixed.
    ReadWrite,
    RandRw,
    TrimWrite,
    /// Random trims, each followed by a write of the block just trimmed.
    RandTrimWrite,
}

impl RwMode {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandTrim
                | RwMode::RandRw
                | RwMode::RandTrimWrite
        )
    }
    pub fn has_read(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandRw
        )
    }
    pub fn has_write(self) -> bool {
        matches!(
            self,
            RwMode::Write
                | RwMode::RandWrite
                | RwMode::ReadWrite
                | RwMode::RandRw
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite
        )
    }
    pub fn has_trim(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }
    /// fio's name as printed in the job header line (`rw=randrw`).
    pub fn fio_name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Trim => "trim",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandTrim => "randtrim",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
}

/// `rw=mode:N`. For sequential modes `n` is a byte skip after each I/O; for random modes it is
/// the number of I/Os issued per newly generated random offset (fio's `rw_seq`/`:N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RwSpec {
    pub mode: RwMode,
    pub n: u64,
}

/// Block sizes for one direction: `bs`, `bsrange` or `bssplit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BsSpec {
    pub min: u64,
    pub max: u64,
    /// `bssplit` entries `(block size, percent)`; blank shares already resolved so the percents sum
    /// to 100. Empty when not given.
    pub split: Vec<(u64, u32)>,
}

impl BsSpec {
    pub fn fixed(bs: u64) -> Self {
        BsSpec {
            min: bs,
            max: bs,
            split: Vec::new(),
        }
    }
}

/// A size that may be given in bytes or as a percentage of the file/device (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    Bytes(u64),
    /// Percent, 0.0..=100.0.
    Percent(f64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FileServiceType {
    /// `random[:N]`
    Random(u32),
    /// `roundrobin[:N]`
    RoundRobin(u32),
    /// `sequential[:N]`
    Sequential(u32),
    /// `zipf:θ`, `pareto:h`, `normal/gauss:σ` over files; value scaled as in `RandomDistribution`.
    Zipf(f64),
    Pareto(f64),
    Gauss(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallocateMode {
    None,
    Native,
    Posix,
    Keep,
    Truncate,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileSpec {
    /// `filename=` split on unescaped `:`. Empty: fio derives names (`filename_format`).
    pub filenames: Vec<String>,
    /// `directory=` split on unescaped `:` (files are distributed round-robin over them).
    pub directories: Vec<String>,
    /// The raw `filename_format`, expanded per file by the runner with `$jobname`, `$jobnum`,
    /// `$filenum`, `$clientuid` (fio default `$jobname.$jobnum.$filenum`).
    pub filename_format: String,
    pub nrfiles: u32,
    /// 0 means "all files".
    pub openfiles: u32,
    pub file_service_type: FileServiceType,
    /// Per-file size (`filesize=a-b` range: each file picks in the range).
    pub filesize: Option<(u64, u64)>,
    pub create_on_open: bool,
    pub unlink: bool,
    pub allow_file_create: bool,
    pub fallocate: FallocateMode,
    pub pre_read: bool,
    pub invalidate: bool,
    /// `fadvise_hint=`: the posix_fadvise access hint given for every file when it is opened.
    pub fadvise_hint: FadviseHint,
    pub overwrite: bool,
    pub allow_mounted_write: bool,
    /// `lockfile=`: the lock each I/O takes on its file (shared by the job's clones).
    pub lockfile: LockFile,
    /// `create_serialize=` (default true): lay out files one job at a time.
    pub create_serialize: bool,
    /// `create_fsync=` (default true): fsync a file after laying it out.
    pub create_fsync: bool,
    /// `unlink_each_loop=`: unlink files after every loop.
    pub unlink_each_loop: bool,
    /// `create_only`: lay the files out (and open them), then end the job without I/O.
    pub create_only: bool,
    /// `fill_device=`/`fill_fs=`: write until ENOSPC.
    pub fill_device: bool,
    /// `file_append=`: I/O starts at the end of each file.
    pub file_append: bool,
    /// `write_hint=`: the RWH_WRITE_LIFE_* value (1 none .. 5 extreme) set with fcntl(2) on
    /// every open of a regular file or block device, as fio does.
    pub write_hint: Option<u64>,
    /// `sync_file_range=flags:N`: the SYNC_FILE_RANGE_* flags and every how many writes.
    pub sync_file_range: Option<(u32, u64)>,
}

/// fio's `lockfile=`: how a job's I/O locks its file around each submission, against the
/// other clones (`numjobs`) of the same job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockFile {
    /// No locking (fio's default).
    #[default]
    None,
    /// One I/O at a time on the file, whatever its direction.
    Exclusive,
    /// Reads share the file; any other I/O (write, trim, sync) has it alone.
    ReadWrite,
}

/// `fadvise_hint=` (fio default `1`: the job's own pattern).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FadviseHint {
    /// `0`: no hint (and no madvise for mmap).
    None,
    /// `1`: POSIX_FADV_RANDOM for random jobs, POSIX_FADV_SEQUENTIAL otherwise.
    Pattern,
    Random,
    Sequential,
    /// `noreuse` (fio 3.35+): POSIX_FADV_NOREUSE, the data is read or written once.
    NoReuse,
}

/// `zonemode=`: how `zonesize`/`zonerange`/`zoneskip` divide the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneMode {
    /// No zones (zonesize etc. still describe strided zones if zonesize > 0, as in fio).
    None,
    /// `zonemode=strided`: do `zonesize` bytes in each zone of `zonerange`, then skip `zoneskip`.
    Strided,
}

/// Zone options (`zonemode=strided`; `zbd` is rejected as not supported yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneSpec {
    pub mode: ZoneMode,
    /// Bytes of I/O per zone (0 = zones off).
    pub size: u64,
    /// Size of a zone; 0 means same as `size`.
    pub range: u64,
    /// Bytes skipped after each zone.
    pub skip: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoSubmitMode {
    Inline,
    Offload,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    None,
    /// `sync=1` / `sync=sync`: O_SYNC
    Sync,
    /// `sync=dsync`: O_DSYNC
    Dsync,
}

/// Engine-specific options. Only the fields of the chosen engine matter; the parser rejects an
/// engine option used with a different engine (as fio does). `Default` is fio's defaults
/// (and guasi's offload submission), the same as in `JobSpec::default()`.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    // pvsync2 / io_uring
    pub hipri: bool,
    pub hipri_percentage: u32,
    pub nowait: bool,
    pub uncached: u32,
    // io_uring
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    pub nonvectored: i32,
    pub force_async: u32,
    // libaio
    pub userspace_reap: bool,
    /// fio 3.42's `libaio_vectored`: reads and writes as IOCB_CMD_PREADV/PWRITEV of one iovec.
    pub libaio_vectored: bool,
    // filestat
    pub stat_type: StatType,
    // cpuio
    /// Percent of one CPU to burn (0: not set, which cpuio refuses as fio does).
    pub cpuload: u32,
    /// Length of one burn cycle in microseconds.
    pub cpuchunks: u32,
    /// `cpumode=qsort` (else noop: spin).
    pub cpumode_qsort: bool,
    pub exit_on_io_done: bool,
    // exec
    pub program: Option<String>,
    /// `arguments=`, with fio's `%r` (runtime in seconds) and `%n` (job name) unexpanded.
    pub arguments: Option<String>,
    /// Seconds between SIGTERM and SIGKILL.
    pub grace_time: u64,
    /// Send the program's stdout/stderr to `NAME.stdout`/`NAME.stderr`.
    pub std_redirect: bool,
    // net, netsplice
    pub hostname: Option<String>,
    /// 0: not set.
    pub port: u32,
    pub protocol: NetProto,
    pub listen: bool,
    pub pingpong: bool,
    pub nodelay: bool,
    /// SO_RCVBUF/SO_SNDBUF (0: the system's).
    pub window_size: u32,
    /// TCP_MAXSEG (0: the system's).
    pub mss: u32,
    /// Multicast TTL.
    pub ttl: u32,
    /// Multicast interface address.
    pub interface: Option<String>,
    // e4defrag
    pub donorname: Option<String>,
    pub inplace: bool,
    // guasi (fiox's thread-pool engine)
    pub guasi_workers: Option<u32>,
    pub guasi_submit_offload: bool,
    pub guasi_kick_each: bool,
    pub guasi_reap_runs: bool,
    // io_uring and libaio: per-command priorities as written (resolved into JobSpec::cmdprio)
    pub cmdprio: crate::cmdprio::CmdPrioOptions,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            hipri: false,
            hipri_percentage: 100,
            nowait: false,
            uncached: 0,
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            nonvectored: 0,
            force_async: 0,
            userspace_reap: false,
            libaio_vectored: false,
            stat_type: StatType::Stat,
            cpuload: 0,
            cpuchunks: 50_000,
            cpumode_qsort: false,
            exit_on_io_done: false,
            program: None,
            arguments: None,
            grace_time: 1,
            std_redirect: true,
            hostname: None,
            port: 0,
            protocol: NetProto::Tcp,
            listen: false,
            pingpong: false,
            nodelay: false,
            window_size: 0,
            mss: 0,
            ttl: 1,
            interface: None,
            donorname: None,
            inplace: false,
            guasi_workers: None,
            // guasi's point: submission never blocks (inline is for A/B runs).
            guasi_submit_offload: true,
            guasi_kick_each: false,
            cmdprio: Default::default(),
            guasi_reap_runs: false,
        }
    }
}

/// `protocol=` of the net engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetProto {
    Tcp,
    Tcpv6,
    Udp,
    Udpv6,
    Unix,
}

impl NetProto {
    pub fn is_udp(self) -> bool {
        matches!(self, NetProto::Udp | NetProto::Udpv6)
    }
    pub fn is_tcp(self) -> bool {
        matches!(self, NetProto::Tcp | NetProto::Tcpv6)
    }
    pub fn is_ipv6(self) -> bool {
        matches!(self, NetProto::Tcpv6 | NetProto::Udpv6)
    }
}

/// `stat_type=` of the filestat engine: which system call it measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatType {
    Stat,
    Lstat,
    Statx,
}

impl StatType {
    /// The system call's name (fio's option value).
    pub fn syscall(self) -> &'static str {
        match self {
            StatType::Stat => "stat",
            StatType::Lstat => "lstat",
            StatType::Statx => "statx",
        }
    }
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateProcess {
    Linear,
    Poisson,
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

/// fio's `clocksource` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The wall clock at microsecond resolution.
    Gettimeofday,
    /// CLOCK_MONOTONIC.
    ClockGettime,
    /// The CPU's time-stamp counter.
    Cpu,
}

/// fio's queue-depth probing for a latency target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatTargetSpec {
    /// `latency_target` in ns (0: off).
    pub target_ns: u64,
    /// `latency_window` in µs.
    pub window_us: u64,
    /// `latency_percentile`: share of I/Os that must meet the target (default 100).
    pub percentile: f64,
    /// `latency_run`: keep probing instead of settling on a depth.
    pub run: bool,
    /// `max_latency` in ns per direction (read, write, trim; 0: off): a completion whose
    /// total latency exceeds it ends the job with ETIMEDOUT, as in fio.
    pub max_ns: PerDir<u64>,
}

impl Default for LatTargetSpec {
    fn default() -> Self {
        LatTargetSpec {
            target_ns: 0,
            window_us: 0,
            percentile: 100.0,
            run: false,
            max_ns: PerDir::all(0),
        }
    }
}

/// fio's token-based proportions between jobs of one `flow_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowSpec {
    /// `flow`: this job's weight (0: not in a flow).
    pub weight: u32,
    /// `flow_id`.
    pub id: i64,
    /// `flow_sleep`: microseconds to wait when held back.
    pub sleep_us: u64,
}

/// What steady state is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SsCriterion {
    #[default]
    Iops,
    Bw,
}

/// fio's steady state detection (`ss`, `ss_dur`, `ss_ramp`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadySpec {
    pub criterion: SsCriterion,
    /// Judge the slope of the window (else its largest deviation from the mean).
    pub slope: bool,
    /// `limit` is a percentage of the window's mean.
    pub pct: bool,
    /// IOPS, bytes/s, or percent.
    pub limit: f64,
    /// `ss_dur` in whole seconds (0: off).
    pub dur_s: u64,
    /// `ss_ramp` in microseconds.
    pub ramp_us: u64,
    /// fio 3.42's `steadystate_check_interval`/`ss_interval` in microseconds: one sample per
    /// interval (None: fio 3.33's one per second, with its rate arithmetic).
    pub interval_us: Option<u64>,
}

impl Default for SteadySpec {
    fn default() -> Self {
        SteadySpec {
            criterion: SsCriterion::Iops,
            slope: true,
            pct: true,
            limit: 0.01,
            dur_s: 0,
            ramp_us: 0,
            interval_us: None,
        }
    }
}

/// `read_iolog=` and how the log is replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySpec {
    /// The log to replay (None: the job generates its I/O).
    pub read_iolog: Option<String>,
    /// `replay_no_stall`: ignore the log's timing.
    pub no_stall: bool,
    /// `replay_redirect`: every I/O goes to this file instead of the log's.
    pub redirect: Option<String>,
    /// `replay_scale`: offsets are divided by it (0 and 1: unchanged).
    pub scale: u64,
    /// `replay_align`: offsets are aligned down to it (0: unchanged).
    pub align: u64,
    /// `replay_time_scale`: percent of the log's speed (100: as logged).
    pub time_scale: u32,
    /// `read_iolog_chunked`: fio reads the log bit by bit; fiox reads it whole before the
    /// run either way (the replay is the same).
    pub chunked: bool,
    /// `replay_skip`: blktrace events not replayed, one bit per kind ([`ReplaySpec::SKIP_READ`]...).
    pub skip: u8,
    /// `merge_blktrace_file`: the blktrace files `read_iolog` lists (colon-separated) are
    /// merged into this file first, which is then replayed.
    pub merge_file: Option<String>,
    /// `merge_blktrace_scalars`: per listed trace, the percentage of its time stamps kept
    /// (50: twice as fast); empty: 100 each.
    pub merge_scalars: Vec<u32>,
    /// `merge_blktrace_iters`: per listed trace, how many times it repeats; empty: once each.
    pub merge_iters: Vec<u32>,
}

impl ReplaySpec {
    pub const SKIP_READ: u8 = 1;
    pub const SKIP_WRITE: u8 = 2;
    pub const SKIP_TRIM: u8 = 4;
    pub const SKIP_SYNC: u8 = 8;
}

impl Default for ReplaySpec {
    fn default() -> Self {
        ReplaySpec {
            read_iolog: None,
            no_stall: false,
            redirect: None,
            scale: 1,
            align: 0,
            time_scale: 100,
            chunked: false,
            skip: 0,
            merge_file: None,
            merge_scalars: Vec::new(),
            merge_iters: Vec::new(),
        }
    }
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

#[derive(Debug, Clone, PartialEq)]
pub struct PacingSpec {
    /// `rate=` bytes/s per direction, 0 = unlimited.
    pub rate: PerDir<u64>,
    pub rate_min: PerDir<u64>,
    pub rate_iops: PerDir<u64>,
    pub rate_iops_min: PerDir<u64>,
    pub rate_process: RateProcess,
    pub rate_cycle: Duration,
    pub thinktime: Duration,
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
    /// `thinktime_blocks` was given (fio: with `thinktime_iotime`, the default 1 is ignored).
    pub thinktime_blocks_set: bool,
    /// `thinktime_blocks_type=issue`: count issued I/Os instead of completed ones.
    pub thinktime_blocks_issue: bool,
    /// `thinktime_iotime`: think after this long of I/O (zero: off).
    pub thinktime_iotime: Duration,
    /// `rate_ignore_thinktime`: the rate does not catch up on the time spent thinking.
    pub rate_ignore_thinktime: bool,
    /// fio 3.42's `thinkcycles`: spin this many CPU pause cycles after each read, write or
    /// trim is issued (0: off).
    pub thinkcycles: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TimingSpec {
    /// `runtime=`; None = no cap.
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Option<Duration>,
    /// fio 3.42's `ramp_size`: statistics start once the job (with group_reporting, its
    /// reporting group) has transferred this many bytes.
    pub ramp_size: Option<u64>,
    /// `startdelay=a-b` picks uniformly in the range.
    pub startdelay: (Duration, Duration),
    pub loops: u32,
    /// `stonewall_ranks` (fiox, under MPI): the first rank whose jobs of the phase finish
    /// their I/O stops every rank (IOR's stonewalling).
    pub stonewall_ranks: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LogSpec {
    pub write_bw_log: Option<String>,
    pub write_lat_log: Option<String>,
    pub write_iops_log: Option<String>,
    pub write_hist_log: Option<String>,
    /// 0 = log every I/O.
    pub log_avg_msec: u64,
    pub log_hist_msec: u64,
    pub per_job_logs: bool,
    pub log_offset: bool,
    /// `write_iolog=`: fio's version 3 I/O log of every I/O queued.
    pub write_iolog: Option<String>,
    /// `log_compression=`: the bw/iops/lat logs are kept in memory, compressed in chunks of
    /// this many bytes by a background thread, and written out when the job ends (0: off,
    /// lines go to the file as they come).
    pub log_compression: u64,
    /// `log_compression_cpus=`: the CPUs the log compression thread may run on.
    pub log_compression_cpus: Option<Vec<usize>>,
    /// `log_store_compressed`: bw/iops/lat logs are stored as fio's `.log.fz` files.
    pub log_store_compressed: bool,
    /// fio 3.42's `log_issue_time`: clat/slat log lines end with the I/O's issue time (ns).
    pub log_issue_time: bool,
    /// `log_prio`: the last column of bw/iops/lat logs is the I/O's ioprio value in hex
    /// (`0x2004`) instead of 1 for the real-time class and 0 otherwise.
    pub log_prio: bool,
    /// `log_max_value`: averaged lines hold the window's maximum instead of its mean.
    pub log_max_value: bool,
    /// fio 3.42's `log_window_value=both`: averaged lines hold the mean and the maximum.
    pub log_window_both: bool,
    /// `log_hist_coarseness` (0..=6): histogram log buckets summed in groups of 2^k.
    pub log_hist_coarseness: u32,
    /// `log_unix_epoch` or `log_alternate_epoch` (fio ORs them): log times count from the
    /// epoch of clock `log_alternate_epoch_clock_id` (CLOCK_REALTIME by default) instead of
    /// the job's start.
    pub log_unix_epoch: bool,
    pub log_alternate_epoch: bool,
    pub log_epoch_clock_id: i32,
    /// fio 3.42's `job_start_clock_id`: the JSON report gets each job's `job_start`, that
    /// clock's time in ms when the job's epoch began (None: not asked, fio 3.33's JSON).
    pub job_start_clock_id: Option<i32>,
    /// `log_entries`: fio's initial in-memory log size. fiox writes its logs as it goes, so it
    /// changes no output; kept for `--showcmd` and the JSON job options.
    pub log_entries: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StatsSpec {
    /// Percentiles to report, each 0.0..=100.0 (default fio list).
    pub percentile_list: Vec<f64>,
    /// `block_error_percentiles`: count trims per trim-sized block and report their
    /// percentiles and the blocks' states.
    pub block_error_percentiles: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    pub gtod_reduce: bool,
    pub bwavgtime: Duration,
    pub iopsavgtime: Duration,
    pub group_reporting: bool,
    pub stats: bool,
    /// `unified_rw_reporting=mixed` (or 1): reads, writes and trims reported as one `mixed`
    /// direction.
    pub unified_mixed: bool,
    /// `unified_rw_reporting=both` (or 2): each direction and then the `mixed` sum of them.
    pub unified_both: bool,
    /// `significant_figures=` 1..=10 (fio's default 4): digits of sizes, rates and IOPS in
    /// the normal report.
    pub sig_figs: u32,
    /// `disk_util`: report the disks' utilization (the `Disk stats` block).
    pub disk_util: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpusAllowedPolicy {
    Shared,
    Split,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSpec {
    /// `cpus_allowed=0-3,5`; None = no restriction.
    pub cpus_allowed: Option<Vec<usize>>,
    pub policy: CpusAllowedPolicy,
    pub nice: i32,
    /// `prio=` 0..=7 and `prioclass=` 0..=3 (ioprio_set).
    pub prio: Option<u32>,
    pub prioclass: Option<u32>,
    /// fio 3.42's `priohint` 0..=1023: the hint bits of the job's ioprio value (bit 3 up).
    pub priohint: Option<u32>,
    /// `uid=`/`gid=`: the job's thread takes these credentials before any work (fio's
    /// setgid/setuid in the job's process).
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// `cgroup=`: the job's thread joins this blkio (or cgroup2) group, created if missing.
    pub cgroup: Option<String>,
    /// `cgroup_weight=` 100..=1000 (0: not set): written to the group's blkio.weight.
    pub cgroup_weight: u32,
    /// `cgroup_nodelete`: a group the run created is left in place.
    pub cgroup_nodelete: bool,
    /// `gtod_cpu=`: a thread on this CPU keeps the time for every job (and this job leaves
    /// the CPU out of `cpus_allowed`).
    pub gtod_cpu: Option<u32>,
    /// `numa_cpu_nodes=`: the job runs on the CPUs of these NUMA nodes.
    pub numa_cpu_nodes: Option<NumaNodes>,
    /// `numa_mem_policy=`: the job thread's memory policy (set_mempolicy(2)).
    pub numa_mem_policy: Option<NumaMemPolicy>,
}

/// A NUMA node list as libnuma's numa_parse_nodestring reads it (`all`, `0-1,3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumaNodes {
    /// Every online node.
    All,
    /// These nodes (sorted, no repeats).
    List(Vec<usize>),
}

/// fio's `numa_mem_policy` modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumaMemPolicy {
    Default,
    /// `prefer:N`: allocate on node N when it can.
    Prefer(usize),
    /// `bind:list`: allocate only on these nodes.
    Bind(NumaNodes),
    /// `interleave[:list]`: spread pages over these nodes (all by default).
    Interleave(NumaNodes),
    /// `local`: allocate on the node of the CPU that asks.
    Local,
}

/// `continue_on_error=` kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContinueOnError {
    None,
    Read,
    Write,
    Io,
    Verify,
    All,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorSpec {
    pub continue_on_error: ContinueOnError,
    /// `ignore_error=` per direction: errno values (names resolved by the parser).
    pub ignore_error: PerDir<Vec<i32>>,
    pub exitall: bool,
    pub exitall_on_error: bool,
    /// `error_dump`: print each I/O error a job survives (fio's `__io_u_log_error`; fatal
    /// errors are always printed).
    pub error_dump: bool,
    /// `exit_what`: which jobs a finishing job stops when `exitall` is set.
    pub exit_what: ExitWhat,
}

/// fio's `exit_what`: the jobs `exitall` terminates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitWhat {
    /// The jobs of the finishing job's group (fio's default).
    #[default]
    Group,
    /// Every job running now, in any group; later stonewalled groups still run.
    Stonewall,
    /// Every job, including those not started yet.
    All,
}

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

/// One job after `[global]` inheritance, numjobs expansion and derivation of defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub description: Option<String>,
    /// fio 3.42's `comm`: the name the job's thread takes (prctl PR_SET_NAME).
    pub comm: Option<String>,
    /// Position of this (expanded) job in the run, from 0.
    pub index: u32,
    /// Which of `numjobs` clones this is: fio's `subjob_number`, the `$jobnum` of its file
    /// names and the multiplier of `offset_increment`. 0 is the job itself; the clones after
    /// it count down (see [`subjob_number`]), so it is not the position among the clones.
    pub clone_index: u32,
    pub numjobs: u32,
    /// Reporting group: increments at each `stonewall`/`new_group` and at each new job file.
    pub group_id: u32,
    /// This job waits for all earlier jobs to finish before starting.
    pub stonewall: bool,
    pub new_group: bool,
    /// `wait_for=NAME`
    pub wait_for: Option<String>,
    /// Job file this job came from (None for command line), for messages.
    pub source: Option<String>,

    pub rw: RwSpec,
    /// `rw=<sequential mode>:-N`: the `:N` of `rw` is subtracted instead of added, so
    /// sequential I/O walks backwards (fio's negative `ddir_seq_add`).
    pub seq_backwards: bool,
    pub rwmixread: u32,
    pub bs: PerDir<BsSpec>,
    pub blockalign: PerDir<Option<u64>>,
    pub bs_unaligned: bool,
    /// `bs_is_seq_rand`: the read,write sizes of `bs`/`bsrange`/`bssplit` are the sizes of
    /// sequential,random I/O instead.
    pub bs_is_seq_rand: bool,
    pub size: Option<SizeSpec>,
    pub io_size: Option<SizeSpec>,
    pub offset: SizeSpec,
    pub offset_increment: u64,
    /// `offset_increment=N%`: N percent (whole, as fio reads it) of each file's size at setup,
    /// rounded up to `offset_align` or the smallest block size (0: `offset_increment` bytes).
    pub offset_increment_pct: u32,
    pub offset_align: u64,
    pub number_ios: Option<u64>,
    pub zero_fill: bool,

    pub files: FileSpec,
    pub thread: bool,
    pub ioengine: String,
    pub engine: EngineOptions,
    pub iodepth: u32,
    /// `iodepth` was given (a blktrace replay otherwise takes the depth the trace shows).
    pub iodepth_given: bool,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub iodepth_low: u32,
    pub io_submit_mode: IoSubmitMode,

    pub direct: bool,
    /// `atomic=1`: open with O_DIRECT and fio's OS_O_ATOMIC bit (`direct` is set too).
    pub atomic: bool,
    /// `write_barrier=N`: fio marks every Nth write as a barrier, which only its libpmem
    /// engine acts on; kept for `--showcmd` and the report, it changes no I/O here either.
    pub write_barrier: u32,
    pub sync: SyncMode,
    pub fsync: u64,
    pub fdatasync: u64,
    pub end_fsync: bool,
    /// fio 3.42's `end_syncfs`: at the end of the writes, one syncfs(2) per filesystem holding
    /// the job's files instead of end_fsync's fsync(2) per file.
    pub end_syncfs: bool,
    pub fsync_on_close: bool,

    pub timing: TimingSpec,
    pub rand: RandSpec,
    pub buffers: BufferSpec,
    pub pacing: PacingSpec,
    pub stats: StatsSpec,
    pub logs: LogSpec,
    pub cpu: CpuSpec,
    pub errors: ErrorSpec,
    pub verify: VerifySpec,
    pub kb_base: u32,
    pub unit_base: u32,
    /// `zonemode`, `zonesize`, `zonerange`, `zoneskip`.
    pub zone: ZoneSpec,
    /// `read_iolog` and the `replay_*` options.
    pub replay: ReplaySpec,
    /// `steadystate`, `ss_dur`, `ss_ramp`.
    pub steadystate: SteadySpec,
    /// `flow`, `flow_id`, `flow_sleep`.
    pub flow: FlowSpec,
    /// `latency_target`, `latency_window`, `latency_percentile`, `latency_run`.
    pub lat_target: LatTargetSpec,
    /// `cmdprio_percentage` / `cmdprio_bssplit` (io_uring, libaio): which I/Os get which
    /// priority; None when the job uses neither (every I/O has the job's default priority).
    pub cmdprio: Option<crate::cmdprio::CmdPrio>,
    /// `exec_prerun=` / `exec_postrun=`: shell commands run before the job's I/O and after it.
    pub exec_prerun: Option<String>,
    pub exec_postrun: Option<String>,
    /// `ioscheduler=`: the I/O scheduler to switch the job's disks to.
    pub ioscheduler: Option<String>,
    /// `clocksource=`: how I/O times are read (None: fio's default choice, the TSC where the
    /// kernel trusts it, else clock_gettime).
    pub clocksource: Option<ClockSource>,

    /// Options exactly as written for this job (after `[global]` inheritance, before
    /// defaults), in order, for `--showcmd`.
    pub raw_options: Vec<(String, String)>,
    /// Only the options written in the job's own section (with `name` when it was given as an
    /// option, as on the command line), in order, under fio's names (`rw` for `readwrite`):
    /// fio's JSON `job options`, which leaves out what `[global]` set.
    pub own_options: Vec<(String, String)>,
    /// fio options, option values and engines this job uses that fiox parses and checks but
    /// cannot execute yet, in the order written (one entry per option name, the last value
    /// wins). Non-empty means the job must not run: see [`JobSpec::refusal`].
    pub unsupported: Vec<Unsupported>,
    /// `--aux-path`: where verify state files and verify dumps go (None: as without it).
    pub aux_path: Option<String>,
    /// `--profile=act`: count this job's latencies into act's hourly slices (fio hooks every
    /// job of the run once act is loaded).
    pub act: Option<crate::profile::ActSpec>,
    /// `--profile=NAME`: the profile that made this job (None: a job of its own).
    pub profile: Option<crate::profile::ProfileCall>,
    /// Notes about how options were read that the user should see (printed by `--parse-only`
    /// and before a run), e.g. a `[global]` option of another engine that fio drops.
    pub notes: Vec<String>,
    /// The notes that fio 3.33 prints as parser warnings too (`--warnings-fatal` stops on
    /// them, as in fio); also among `notes`.
    pub fio_warnings: Vec<String>,
}

/// One fio feature a job uses that fiox does not support yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The option as fio names it (`ioengine` for an engine).
    pub option: String,
    /// The value as written (empty for a bare option).
    pub value: String,
    /// `"option"` (the option itself), `"value"` (this value of an option fiox implements)
    /// or `"engine"` (`ioengine=value`).
    pub what: &'static str,
    /// Extra hint appended in parentheses (may be empty).
    pub note: String,
}

impl Unsupported {
    /// The sentence that names it, e.g. "`flow` is a fio option that fiox does not support yet".
    pub fn describe(&self) -> String {
        let head = match self.what {
            "engine" => format!(
                "ioengine `{}` is a fio engine that fiox does not support yet",
                self.value
            ),
            "value" => format!(
                "`{}={}` is a fio option value that fiox does not support yet",
                self.option, self.value
            ),
            _ => format!(
                "`{}` is a fio option that fiox does not support yet",
                self.option
            ),
        };
        if self.note.is_empty() {
            head
        } else {
            format!("{head} ({})", self.note)
        }
    }
}

impl JobSpec {
    /// The job's own ioprio value (fio's `td->ioprio`): `prioclass`/`prio` as fio combines them
    /// (class 0 or unset is best-effort, level unset is 0), or 0 when neither is set.
    pub fn default_ioprio(&self) -> u16 {
        let c = &self.cpu;
        if c.prioclass.is_none() && c.prio.is_none() && c.priohint.is_none() {
            return 0;
        }
        // fio's ioprio_value(class, level, hint): the hint above the level's 3 bits.
        let v = crate::cmdprio::ioprio_value(c.prioclass.unwrap_or(0), c.prio.unwrap_or(0));
        v | ((c.priohint.unwrap_or(0) as u16 & 0x3ff) << 3)
    }

    /// Why this job must not run, one line per unsupported feature ("job X: ...; this job
    /// will not run"); empty when fiox can run it.
    pub fn refusal(&self) -> Vec<String> {
        self.unsupported
            .iter()
            .map(|u| format!("job {}: {}; this job will not run", self.name, u.describe()))
            .collect()
    }
}

/// Global switches and settings that are not per job.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunSettings {
    /// `--profile=NAME`: the index of the first job the profile made (fio adds them after
    /// parsing, so its version line comes before them; 0: the profile made every job).
    pub profile_jobs_from: Option<usize>,
    pub parse_only: bool,
    /// `--merge-blktrace-only`: write the jobs' `merge_blktrace_file`s, run nothing.
    pub merge_blktrace_only: bool,
    pub showcmd: bool,
    pub sections: Vec<String>,
    pub output: Option<String>,
    pub output_formats: Vec<OutputFormat>,
    pub eta: EtaMode,
    pub status_interval: Option<Duration>,
    pub readonly: bool,
    pub allow_destructive: bool,
    /// `--allow-destructive=PATH` (repeatable): writing is allowed to exactly these devices or
    /// files (an experiment's own testbed device), not to anything else.
    pub allow_targets: Vec<std::path::PathBuf>,
    /// `--max-jobs=N`: at most N jobs run at once (None = no limit).
    pub max_jobs: Option<u32>,
    /// `--bandwidth-log`: fio's aggregate bandwidth logs (agg-read_bw.log, agg-write_bw.log,
    /// agg-trim_bw.log: the sum over all jobs every bw_avg_time).
    pub bandwidth_log: bool,
    /// `--latency-log` (fio 2.x; 3.33 rejects it as deprecated): per-job latency logs, as
    /// `write_lat_log=<job name>` on every job that sets no lat log of its own.
    pub latency_log: bool,
    /// `--telemetry[=MS]` (fiox's): sample the system every MS around the run.
    pub telemetry: Option<std::time::Duration>,
    /// `--explain` (fiox's): trace the jobs' threads with BPF and report latency phases.
    pub explain: bool,
    /// `--html=FILE`: also write the run's report page (charts) to FILE.
    pub html: Option<String>,
    /// `--warnings=stderr` (or `fatal`): fiox's advice also on stderr (it is always in the
    /// report).
    pub warnings_stderr: bool,
    /// `--warnings=fatal` (fiox's): fiox's advice makes the exit status 1 as well.
    pub advice_fatal: bool,
    /// `--warnings-fatal` (fio's `-w`): fio's parser warnings (the notes fio 3.33 itself warns
    /// with, [`JobSpec::fio_warnings`]) stop the run before any I/O, as in fio.
    pub warnings_fatal: bool,
    /// `--aux-path`: the directory of fio's state files (verify state, verify dumps).
    pub aux_path: Option<String>,
    /// `--trigger-file`: when this file appears, it is removed and the run stops (then
    /// `--trigger` runs).
    pub trigger_file: Option<String>,
    /// `--trigger-timeout`: the same, this long after the start.
    pub trigger_timeout: Option<Duration>,
    /// `--trigger`: the shell command run when triggered.
    pub trigger_cmd: Option<String>,
    /// `--terse-version` 2..=5 (0: fio's default 3).
    pub terse_version: u32,
    /// `--eta-newline`: start a new ETA line this often (a terminal's line is redrawn).
    pub eta_newline: Option<Duration>,
    /// `--eta-interval`: the ETA line's update period (default 1 s).
    pub eta_interval: Option<Duration>,
    /// fio switches given that fiox parses but cannot act on yet: nothing runs.
    pub unsupported_switches: Vec<crate::cli::UnsupportedSwitch>,
    /// `--idle-prof=system|percpu`: measure CPU idleness while the jobs run.
    pub idle_prof: Option<IdleProfMode>,
    /// `--debug=LIST`: fio's debug categories to print (checked names, comma-separated).
    pub debug: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    JsonPlus,
    Terse,
}

/// fio's `--idle-prof` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleProfMode {
    /// Calibrate only and exit.
    Calibrate,
    /// The mean idleness of all CPUs.
    System,
    /// And each CPU's.
    Percpu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EtaMode {
    #[default]
    Auto,
    Always,
    Never,
}

/// fio's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

impl Default for FileSpec {
    fn default() -> Self {
        FileSpec {
            filenames: Vec::new(),
            directories: Vec::new(),
            filename_format: "$jobname.$jobnum.$filenum".to_string(),
            nrfiles: 1,
            openfiles: 0,
            file_service_type: FileServiceType::RoundRobin(1),
            filesize: None,
            create_on_open: false,
            unlink: false,
            allow_file_create: true,
            fallocate: FallocateMode::Native,
            pre_read: false,
            invalidate: true,
            fadvise_hint: FadviseHint::Pattern,
            overwrite: false,
            allow_mounted_write: false,
            lockfile: LockFile::None,
            create_serialize: true,
            create_fsync: true,
            unlink_each_loop: false,
            create_only: false,
            fill_device: false,
            file_append: false,
            write_hint: None,
            sync_file_range: None,
        }
    }
}

impl Default for JobSpec {
    /// A job with every option at fio 3.33's default (name "job", psync, 4k read).
    fn default() -> Self {
        JobSpec {
            name: "job".to_string(),
            description: None,
            comm: None,
            index: 0,
            clone_index: 0,
            numjobs: 1,
            group_id: 0,
            stonewall: false,
            new_group: false,
            wait_for: None,
            source: None,
            rw: RwSpec {
                mode: RwMode::Read,
                n: 0,
            },
            seq_backwards: false,
            rwmixread: 50,
            bs: PerDir::all(BsSpec::fixed(4096)),
            blockalign: PerDir::all(None),
            bs_unaligned: false,
            bs_is_seq_rand: false,
            size: None,
            io_size: None,
            offset: SizeSpec::Bytes(0),
            offset_increment: 0,
            offset_increment_pct: 0,
            offset_align: 0,
            number_ios: None,
            zero_fill: false,
            files: FileSpec::default(),
            thread: false,
            ioengine: "psync".to_string(),
            engine: EngineOptions::default(),
            iodepth: 1,
            iodepth_given: false,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 1,
            iodepth_low: 1,
            io_submit_mode: IoSubmitMode::Inline,
            direct: false,
            atomic: false,
            write_barrier: 0,
            sync: SyncMode::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            end_syncfs: false,
            fsync_on_close: false,
            timing: TimingSpec {
                runtime: None,
                time_based: false,
                ramp_time: None,
                ramp_size: None,
                startdelay: (Duration::ZERO, Duration::ZERO),
                loops: 1,
                stonewall_ranks: false,
            },
            rand: RandSpec {
                randrepeat: true,
                randseed: 0x89,
                norandommap: false,
                generator: RandomGenerator::Tausworthe,
                distribution: RandomDistribution::Random,
                percentage_random: PerDir::all(100),
                allrandrepeat: false,
                distribution_center: None,
                rw_seq_identical: false,
                softrandommap: false,
            },
            buffers: BufferSpec {
                zero_buffers: false,
                refill_buffers: false,
                scramble_buffers: true,
                compress_percentage: None,
                compress_chunk: 512,
                pattern: Vec::new(),
                dedupe_percentage: 0,
                dedupe_mode: DedupeMode::Repeat,
                dedupe_working_set_percentage: 5,
                dedupe_global: false,
                dedupe_peer_seeds: Vec::new(),
                mem: MemKind::Malloc,
                mmapfile: None,
                mem_align: 0,
                hugepage_size: 2 << 20,
                lockmem: 0,
            },
            pacing: PacingSpec {
                rate: PerDir::all(0),
                rate_min: PerDir::all(0),
                rate_iops: PerDir::all(0),
                rate_iops_min: PerDir::all(0),
                rate_process: RateProcess::Linear,
                rate_cycle: Duration::from_millis(1000),
                thinktime: Duration::ZERO,
                thinktime_spin: Duration::ZERO,
                thinktime_blocks: 1,
                thinktime_blocks_set: false,
                thinktime_blocks_issue: false,
                thinktime_iotime: Duration::ZERO,
                thinkcycles: 0,
                rate_ignore_thinktime: false,
            },
            stats: StatsSpec {
                percentile_list: DEFAULT_PERCENTILES.to_vec(),
                block_error_percentiles: false,
                clat_percentiles: true,
                lat_percentiles: false,
                slat_percentiles: false,
                disable_lat: false,
                disable_clat: false,
                disable_slat: false,
                disable_bw: false,
                gtod_reduce: false,
                bwavgtime: Duration::from_millis(500),
                iopsavgtime: Duration::from_millis(500),
                group_reporting: false,
                stats: true,
                unified_mixed: false,
                unified_both: false,
                sig_figs: 4,
                disk_util: true,
            },
            logs: LogSpec {
                write_bw_log: None,
                write_iolog: None,
                log_compression: 0,
                log_compression_cpus: None,
                log_store_compressed: false,
                log_issue_time: false,
                log_prio: false,
                log_max_value: false,
                log_window_both: false,
                log_hist_coarseness: 0,
                log_unix_epoch: false,
                log_alternate_epoch: false,
                log_epoch_clock_id: 0,
                job_start_clock_id: None,
                log_entries: 1024,
                write_lat_log: None,
                write_iops_log: None,
                write_hist_log: None,
                log_avg_msec: 0,
                log_hist_msec: 0,
                per_job_logs: true,
                log_offset: false,
            },
            cpu: CpuSpec {
                cpus_allowed: None,
                policy: CpusAllowedPolicy::Shared,
                nice: 0,
                prio: None,
                prioclass: None,
                priohint: None,
                uid: None,
                gid: None,
                cgroup: None,
                cgroup_weight: 0,
                cgroup_nodelete: false,
                gtod_cpu: None,
                numa_cpu_nodes: None,
                numa_mem_policy: None,
            },
            errors: ErrorSpec {
                continue_on_error: ContinueOnError::None,
                ignore_error: PerDir::default(),
                exitall: false,
                exitall_on_error: false,
                error_dump: false,
                exit_what: ExitWhat::Group,
            },
            verify: VerifySpec {
                method: VerifyMethod::None,
                do_verify: true,
                verify_only: false,
                verify_strict: false,
                verify_write_sequence: None,
                verify_header_seed: None,
                verify_fatal: false,
                verify_dump: false,
                verify_async: 0,
                verify_async_cpus: None,
                verify_backlog: 0,
                verify_backlog_batch: 0,
                verify_interval: None,
                verify_offset: 0,
                verify_pattern: Vec::new(),
                verify_pattern_offsets: Vec::new(),
                method_given: false,
                verify_state_save: true,
                verify_state_load: false,
                serialize_overlap: false,
                experimental_verify: false,
                trim_percentage: 0,
                trim_verify_zero: true,
                trim_backlog: 0,
                trim_backlog_batch: 0,
            },
            kb_base: 1024,
            unit_base: 0,
            zone: ZoneSpec {
                mode: ZoneMode::None,
                size: 0,
                range: 0,
                skip: 0,
            },
            replay: ReplaySpec::default(),
            steadystate: SteadySpec::default(),
            flow: FlowSpec::default(),
            lat_target: LatTargetSpec::default(),
            clocksource: None,
            ioscheduler: None,
            exec_prerun: None,
            exec_postrun: None,
            raw_options: Vec::new(),
            own_options: Vec::new(),
            unsupported: Vec::new(),
            aux_path: None,
            act: None,
            profile: None,
            notes: Vec::new(),
            fio_warnings: Vec::new(),
            cmdprio: None,
        }
    }
}

/// fio's `subjob_number` of the clone at `position` (0-based, in run order) of a job with
/// `numjobs` clones. fio's add_job adds the job itself (subjob 0) and then its clones in a loop
/// counting numjobs down, so the second thread of the job is subjob `numjobs - 1` and the last
/// is subjob 1: with numjobs=3 the threads write `j.0.0`, `j.2.0`, `j.1.0` in that order.
/// Seeds, log names and the JSON order follow the position; file names and offsets this.
pub fn subjob_number(position: u32, numjobs: u32) -> u32 {
    if position == 0 {
        0
    } else {
        numjobs.saturating_sub(position)
    }
}
