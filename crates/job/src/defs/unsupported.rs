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
    "rados",
    "rbd",
    "rdma",
    "sg",
    "skeleton_external",
    "solarisaio",
    "windowsaio",
    "xnvme",
];

/// The note of the options of zoned block devices (`zonemode=zbd` and the options only it uses).
pub const ZONED: &str = "zoned block devices";

/// Those of [`ENGINES`] whose reads and writes fio queues (they return "queued", not
/// "completed"): what a job's `iodepth` means for the workload's model of it.
pub const QUEUED_IN_FIO: &[&str] = &[
    "io_uring_cmd",
    "windowsaio",
    "solarisaio",
    "rdma",
    "rbd",
    "nfs",
    "libiscsi",
    "nbd",
    "xnvme",
];

/// How fio 3.33 fails a job of an engine it loads but cannot use here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailsWhenRun {
    /// The engine as fio spells it.
    pub engine: &'static str,
    /// The job's `error` in fio's report (0: fio records none, yet counts the job as failed
    /// in its exit status; gfapi's is negative).
    pub errno: i32,
    /// What fio prints for it (fio's own words, or the gist where they depend on options).
    pub fio: &'static str,
    /// What the engine needs, for fiox's own sentence.
    pub needs: &'static str,
}

/// The engines of [`ENGINES`] that fio 3.33 as distributions build it (Debian's and Ubuntu's
/// package, the fio the tests run beside) loads: a job using one starts, fails at its engine's
/// init or file setup for want of the device, library or service it needs, and the other jobs
/// run; fio's exit status counts it. fiox fails such a job alike (same error number, the job in
/// the report, the others run) instead of refusing the file. fio cannot load the other engines
/// of [`ENGINES`] ("fio: engine X not loadable") and refuses the whole file; so does fiox.
pub const FAILS_WHEN_RUN: &[FailsWhenRun] = &[
    FailsWhenRun {
        engine: "sg",
        errno: 22,
        fio: "ioengine sg only works on block or character devices",
        needs: "a SCSI generic device and SG_IO",
    },
    FailsWhenRun {
        engine: "mtd",
        errno: 22,
        fio: "file:engines/mtd.c:199, func=mtd_get_dev_info, error=Invalid argument",
        needs: "an MTD flash device (libmtd)",
    },
    FailsWhenRun {
        engine: "io_uring_cmd",
        errno: 0,
        fio: "ioengine io_uring_cmd only works with nvme ns generic char devices (/dev/ngXnY)",
        needs: "an NVMe generic character device and io_uring passthrough",
    },
    FailsWhenRun {
        engine: "nbd",
        errno: 0,
        fio: "fio: nbd_connect_uri failed",
        needs: "an NBD server (libnbd)",
    },
    FailsWhenRun {
        engine: "rdma",
        errno: 1,
        fio: "fio: io engine rdma init failed.",
        needs: "RDMA hardware (librdmacm)",
    },
    FailsWhenRun {
        engine: "rados",
        errno: 0,
        fio: "fio_rados_connect failed.",
        needs: "a Ceph cluster (librados)",
    },
    FailsWhenRun {
        engine: "rbd",
        errno: 0,
        fio: "fio_rbd_connect failed.",
        needs: "a Ceph cluster (librbd)",
    },
    FailsWhenRun {
        engine: "gfapi",
        errno: -5,
        fio: "fio: io engine gfapi init failed.",
        needs: "a GlusterFS volume (libgfapi)",
    },
    FailsWhenRun {
        engine: "gfapi_async",
        errno: -5,
        fio: "fio: io engine gfapi_async init failed.",
        needs: "a GlusterFS volume (libgfapi)",
    },
    FailsWhenRun {
        engine: "dev-dax",
        errno: 0,
        fio: "dev-dax: the file is not a DAX character device",
        needs: "a DAX device (/dev/daxX.Y, libpmem)",
    },
    FailsWhenRun {
        engine: "libpmem",
        errno: 95,
        fio: "file:engines/libpmem.c:114, func=file_name does not point to persistent memory, \
              error=Operation not supported",
        needs: "persistent memory (libpmem)",
    },
];

/// How fio 3.33 fails a job of `engine` here, if it loads the engine (see [`FAILS_WHEN_RUN`]).
pub fn fails_when_run(engine: &str) -> Option<&'static FailsWhenRun> {
    let n = engine.trim();
    FAILS_WHEN_RUN
        .iter()
        .find(|f| f.engine.eq_ignore_ascii_case(n))
}

/// Whether fio 3.33 as built here rejects the job file for this feature when it parses it
/// ("Bad option", "failed parsing"): the CUDA options (no CUDA in the distributions' build),
/// and the options and values fio added after 3.33 (except `cmd_type=nvme`, which 3.33 had).
/// fio parses every other feature fiox records, so a job failing as fio's
/// ([`FAILS_WHEN_RUN`]) is refused for these alone.
pub fn fio_rejects_here(u: &crate::Unsupported) -> bool {
    let later = |defs: &[super::OptDef]| defs.iter().any(|d| d.matches(&u.option));
    match u.what {
        "engine" => false,
        "value" => {
            u.value.eq_ignore_ascii_case("cudamalloc")
                || u.note.contains("fio 3.42")
                || u.note.contains("fio master")
        }
        _ => {
            u.option == "gpu_dev_id"
                || ((later(super::fio342::OPTS) || later(super::fio_master::OPTS))
                    && !later(super::fio_only::OPTS)
                    && !(u.option == "cmd_type" && u.value.eq_ignore_ascii_case("nvme")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_fio_loads_here_is_one_fiox_lacks() {
        for f in FAILS_WHEN_RUN {
            assert!(ENGINES.contains(&f.engine), "{}", f.engine);
        }
        assert_eq!(fails_when_run(" SG").map(|f| f.errno), Some(22));
        assert!(fails_when_run("http").is_none() && fails_when_run("psync").is_none());
        let u = |option: &str, value: &str, what, note: &str| crate::Unsupported {
            option: option.into(),
            value: value.into(),
            what,
            note: note.into(),
        };
        // fio 3.33 parses these (the job then fails at its engine's init)...
        assert!(!fio_rejects_here(&u("clientname", "admin", "option", "")));
        assert!(!fio_rejects_here(&u("cmd_type", "nvme", "option", "")));
        assert!(!fio_rejects_here(&u(
            "zonemode",
            "zbd",
            "value",
            "zoned block devices"
        )));
        assert!(!fio_rejects_here(&u("ioengine", "sg", "engine", "")));
        // ... but not the CUDA options of its build, nor what later fios added.
        assert!(fio_rejects_here(&u("gpu_dev_id", "1", "option", "")));
        assert!(fio_rejects_here(&u("mem", "cudamalloc", "value", "")));
        assert!(fio_rejects_here(&u("cdb_len", "16", "option", "")));
        assert!(fio_rejects_here(&u("cmd_type", "bsg", "option", "")));
        assert!(fio_rejects_here(&u(
            "protocol",
            "vsock",
            "value",
            "fio 3.42's vsock sockets"
        )));
    }

    #[test]
    fn queued_engines_are_engines_fiox_lacks() {
        for e in QUEUED_IN_FIO {
            assert!(ENGINES.contains(e), "{e}");
        }
    }
}
