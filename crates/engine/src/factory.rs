//! Engine selection: maps `ioengine=` to an engine built from the job's options, and tells a
//! fio engine fiox does not implement (NotSupported) from a name nobody knows (Unknown).

use fiox_job::spec::{IoSubmitMode, JobSpec};

use crate::fileops::{FileOp, FileOpEngine};
use crate::null::NullEngine;
use crate::sync::{Rwf, SyncEngine, SyncKind, VsyncEngine};
use crate::target::FdEngine;
use crate::{EngineError, IoEngine};

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
const INLINE_ONLY: &[&str] = &[
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

/// Whether `ioengine=name` is one of fio's diskless engines (case-insensitive, as [`create`]).
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

/// Build the engine `job.ioengine` names, configured from `job.engine`, `job.iodepth` and
/// `job.direct`. Names are matched case-insensitively; fio's `external:path` form is refused as
/// unsupported.
pub fn create(job: &JobSpec) -> Result<Box<dyn IoEngine>, EngineError> {
    if job.io_submit_mode == IoSubmitMode::Offload {
        let name = job.ioengine.trim().to_ascii_lowercase();
        if INLINE_ONLY.contains(&name.as_str()) {
            return Err(EngineError::Option {
                engine: "offload",
                option: "io_submit_mode",
                reason: format!(
                    "ioengine={name} works on the job's own thread, not on submit \
                     threads; use io_submit_mode=inline (the default)"
                ),
            });
        }
        return Ok(Box::new(crate::offload::OffloadEngine::new(job)?));
    }
    build(job, true)
}

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

/// The engine itself. `one_thread`: only the creating thread will use it (otherwise engines
/// that tie themselves to their creator, io_uring's SINGLE_ISSUER ring, must not).
pub(crate) fn build(job: &JobSpec, one_thread: bool) -> Result<Box<dyn IoEngine>, EngineError> {
    let name = job.ioengine.trim().to_ascii_lowercase();
    let depth = job.iodepth.max(1);
    let rwf = || Rwf::from_options(&job.engine, job.direct);
    let engine: Box<dyn IoEngine> = match name.as_str() {
        "sync" => Box::new(SyncEngine::new(SyncKind::Sync, rwf())),
        "psync" => Box::new(SyncEngine::new(SyncKind::Psync, rwf())),
        "pvsync" => Box::new(SyncEngine::new(SyncKind::Pvsync, rwf())),
        "pvsync2" => Box::new(SyncEngine::new(SyncKind::Pvsync2, rwf())),
        "vsync" => Box::new(VsyncEngine::new(depth)),
        "mmap" => Box::new(crate::mmap::MmapEngine::new(
            job.rw.mode.is_random(),
            job.files.fadvise_hint != fiox_job::FadviseHint::None,
        )),
        "null" => Box::new(NullEngine::new(depth)),
        "libaio" => Box::new(crate::libaio::LibaioEngine::new(depth, &job.engine)?),
        "guasi" | "threads" => Box::new(crate::guasi::GuasiEngine::new(job)?),
        "posixaio" => Box::new(crate::posixaio::PosixAioEngine::new(depth)),
        "falloc" => Box::new(FdEngine::new(crate::falloc::FallocEngine)),
        "ftruncate" => Box::new(FdEngine::new(crate::ftruncate::FtruncateEngine)),
        "filecreate" => Box::new(FileOpEngine::new(FileOp::Create)),
        "filestat" => Box::new(FileOpEngine::new(FileOp::Stat(job.engine.stat_type))),
        "filedelete" => Box::new(FileOpEngine::new(FileOp::Delete)),
        "dircreate" => Box::new(FileOpEngine::new(FileOp::DirCreate)),
        "dirstat" => Box::new(FileOpEngine::new(FileOp::DirStat(job.engine.stat_type))),
        "dirdelete" => Box::new(FileOpEngine::new(FileOp::DirDelete)),
        "page_fault" => Box::new(crate::pagefault::PageFaultEngine::new(job)?),
        "cpuio" => Box::new(crate::cpuio::CpuEngine::new(&job.engine)?),
        "exec" => Box::new(crate::exec::ExecEngine::new(job)?),
        "splice" => Box::new(FdEngine::new(crate::splice::SpliceEngine::new()?)),
        "net" => Box::new(crate::net::NetEngine::new(job, false)?),
        "netsplice" => Box::new(crate::net::NetEngine::new(job, true)?),
        "e4defrag" => Box::new(FdEngine::new(crate::e4defrag::E4defragEngine::new(job)?)),
        "io_uring" => Box::new(crate::uring::UringEngine::new(
            depth,
            job.direct,
            &job.engine,
            one_thread,
        )?),
        _ => return Err(unknown(&name)),
    };
    Ok(engine)
}

fn unknown(name: &str) -> EngineError {
    let base = name.split(':').next().unwrap_or(name);
    if UNSUPPORTED_FIO_ENGINES.contains(&base) {
        EngineError::NotSupported(name.to_string())
    } else {
        EngineError::Unknown(name.to_string(), ENGINES.join(", "))
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    fn job(engine: &str) -> JobSpec {
        JobSpec {
            ioengine: engine.to_string(),
            ..JobSpec::default()
        }
    }

    /// Engine `name` built from a job with every option some engine requires; `slot` keeps
    /// the net ports and e4defrag donors of concurrent tests apart (the caller removes the
    /// donor).
    fn built(name: &str, slot: u32) -> Box<dyn IoEngine> {
        let mut j = job(name);
        j.engine.cpuload = 50;
        j.engine.program = Some("true".into());
        // The net engines bind their port when built: a listening reader on a free one.
        j.engine.listen = true;
        j.engine.port = 20_000 + (std::process::id() % 10_000) * 2 + slot;
        j.engine.donorname = Some(donor(slot).display().to_string());
        j.engine.inplace = true;
        // page_fault maps size= bytes.
        j.size = Some(fiox_job::SizeSpec::Bytes(1 << 20));
        create(&j).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn donor(slot: u32) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("fiox-donor-{slot}-{}", std::process::id()))
    }

    #[test]
    fn every_listed_engine_is_built_under_its_name() {
        for &name in ENGINES {
            let e = built(name, 0);
            let expect = if name == "threads" { "guasi" } else { name };
            assert_eq!(e.name(), expect);
        }
        let _ = std::fs::remove_file(donor(0));
        assert_eq!(create(&job("PSync")).unwrap().name(), "psync");
    }

    /// The runner's diskless test and the engines' `no_io` flags are one list: fio 3.33's
    /// FIO_DISKLESSIO engines (null, cpuio, exec, filecreate, net, netsplice).
    #[test]
    fn no_io_flags_are_the_diskless_engines() {
        for &name in ENGINES {
            let no_io = built(name, 1).flags().no_io;
            assert_eq!(no_io, is_diskless(name), "{name}");
        }
        let _ = std::fs::remove_file(donor(1));
        let fio = ["null", "cpuio", "exec", "filecreate", "net", "netsplice"];
        assert!(fio.iter().all(|e| is_diskless(e)));
        assert!(is_diskless(" NET ") && !is_diskless("psync") && !is_diskless("filestat"));
    }

    #[test]
    fn fio_engines_we_lack_are_not_supported_and_others_unknown() {
        let e = create(&job("sg")).err().unwrap();
        assert!(matches!(e, EngineError::NotSupported(_)), "{e}");
        let e = create(&job("external:/x.so")).err().unwrap();
        assert!(matches!(e, EngineError::NotSupported(_)), "{e}");
        let e = create(&job("bogus")).err().unwrap();
        let msg = e.to_string();
        assert!(msg.contains("'bogus'") && msg.contains("psync"), "{msg}");
    }

    #[test]
    fn sync_flags_follow_fio() {
        assert!(create(&job("psync")).unwrap().flags().sync);
        assert!(per_io_syscalls_on_job_thread(" PSync") && per_io_syscalls_on_job_thread("vsync"));
        for other in [
            "posixaio", "libaio", "io_uring", "guasi", "threads", "null", "mmap",
        ] {
            assert!(!per_io_syscalls_on_job_thread(other), "{other}");
        }
        assert!(!create(&job("vsync")).unwrap().flags().sync);
        let null = create(&job("null")).unwrap().flags();
        assert!(null.sync && null.no_io);
        let mut deep = job("null");
        deep.iodepth = 8;
        assert!(!create(&deep).unwrap().flags().sync);
    }
}
