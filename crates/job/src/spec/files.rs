//! A job's files: how many and which, their sizes and layout, how they are chosen per I/O
//! (`file_service_type`), preallocated, locked (`lockfile`), advised and divided into zones.

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
