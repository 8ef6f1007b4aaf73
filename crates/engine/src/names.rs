//! Engines by name: which `ioengine=` values fiox implements, which fio engines it knows but
//! does not, and what kind each is (diskless, tied to the job's thread, one syscall per I/O).
//! The engines' own flags and the factory both read these tables, so they sit below both.

/// The engines fiox implements (`threads` is an alias of `guasi`).
pub const ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "mmap",
    "null",
    "libaio",
    "io_uring",
    "posixaio",
    "falloc",
    "ftruncate",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "page_fault",
    "cpuio",
    "exec",
    "splice",
    "net",
    "netsplice",
    "e4defrag",
];

/// Engines that need the job's own thread (their work is tied to opens, or they set the
/// job's thinktime), so io_submit_mode=offload cannot wrap them.
pub(crate) const INLINE_ONLY: &[&str] = &[
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "cpuio",
    "exec",
    "net",
    "netsplice",
];

/// fio's FIO_DISKLESSIO engines among fiox's: they touch no disk, so the runner neither lays
/// out their files nor watches disks for them. The one list: the engines' `no_io` flags and
/// the runner both ask [`is_diskless`].
const DISKLESS: &[&str] = &[
    "null",
    "cpuio",
    "exec",
    "filecreate",
    "net",
    "netsplice",
    // fio 3.42's directory engines and page_fault (FIO_DISKLESSIO there too).
    "dircreate",
    "dirstat",
    "dirdelete",
    "page_fault",
];

/// Whether `ioengine=name` is one of fio's diskless engines (case-insensitive, as `create`).
pub fn is_diskless(name: &str) -> bool {
    let name = name.trim();
    DISKLESS.iter().any(|e| name.eq_ignore_ascii_case(e))
}

/// fio 3.33 engines fiox knows by name but does not implement.
pub const UNSUPPORTED_FIO_ENGINES: &[&str] = &[
    "io_uring_cmd",
    "xnvme",
    "sg",
    "rdma",
    "libhdfs",
    "mtd",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "http",
    "nbd",
    "rados",
    "rbd",
    "gfapi",
    "gfapi_async",
    "libblkio",
    "libiscsi",
    "nfs",
    "windowsaio",
    "solarisaio",
    "libcufile",
    "dfs",
    "libzbc",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "cpp_null",
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
    "external",
];

/// Whether `ioengine` makes one file syscall per I/O, each on the job's own thread (the
/// sync family). For those a private file table saves the kernel's reference count on every
/// call (see the runner's `fdtable`); engines that hand file numbers to threads shared by the
/// whole process (glibc's posixaio pool) must never get one.
pub fn per_io_syscalls_on_job_thread(ioengine: &str) -> bool {
    let name = ioengine.trim().to_ascii_lowercase();
    matches!(
        name.as_str(),
        "sync" | "psync" | "vsync" | "pvsync" | "pvsync2"
    )
}
