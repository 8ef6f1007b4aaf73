//! fio engines (3.33's, libblkio of 3.42, libhipfile and page_fault of fio master) that fiox does not implement yet. `ioengine=` with one of them parses (its
//! options are known, see `fio_only`) and is recorded in `JobSpec::unsupported`, so the job is
//! refused when run, never silently run with another engine.

/// fio engines fiox parses but cannot run yet (names as fio spells them).
pub const ENGINES: &[&str] = &[
    "cpp_null",
    "dev-dax",
    "dfs",
    "gfapi",
    "gfapi_async",
    "http",
    "ime_aio",
    "ime_psync",
    "ime_psyncv",
    "io_uring_cmd",
    "libcufile",
    "libhdfs",
    "libhipfile", // fio master (after 3.42): AMD GPU direct storage
    "libblkio",   // fio 3.42
    "libiscsi",
    "libpmem",
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
    "libzbc",
    "mtd",
    "nbd",
    "nfs",
    "pmemblk",
    "rados",
    "rbd",
    "rdma",
    "sg",
    "skeleton_external",
    "solarisaio",
    "windowsaio",
    "xnvme",
];
