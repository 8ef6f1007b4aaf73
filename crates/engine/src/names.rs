//! Engines by name: the names of those fiox implements (from [`Engine`]'s table, which also
//! says what kind each is: diskless, tied to the job's thread, one syscall per I/O) and the
//! fio engines it knows but does not implement. The factory reads these lists.

use fiox_job::Engine;

/// The names of the engines fiox implements, as the unknown-engine error lists them (the
/// [`Engine`] table's, guasi left out as this list always had it: fio has no such engine).
pub fn engine_names() -> impl Iterator<Item = &'static str> {
    Engine::ALL
        .iter()
        .filter(|e| **e != Engine::Guasi)
        .map(|e| e.name())
}

/// fio 3.33 engines fiox knows by name but does not implement.
pub const UNSUPPORTED_FIO_ENGINES: &[&str] = &[
    "io_uring_cmd",
    "xnvme",
    "sg",
    "rdma",
    "libhdfs",
    "mtd",
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
