//! Engine selection: maps `ioengine=` to an engine built from the job's options, and tells a
//! fio engine fiox does not implement (NotSupported) from a name nobody knows (Unknown).

use fiox_job::spec::{IoSubmitMode, JobSpec};
use fiox_job::Engine;

use crate::blocking::sync::{Rwf, SyncEngine, SyncKind, VsyncEngine};
use crate::blocking::{mmap, splice};
use crate::fileops::ops::{FileOp, FileOpEngine};
use crate::fileops::{e4defrag, falloc, ftruncate};
use crate::names::{engine_names, UNSUPPORTED_FIO_ENGINES};
use crate::queued::{guasi, libaio, offload, posixaio, uring};
use crate::synthetic::null::NullEngine;
use crate::synthetic::{cpuio, exec, pagefault};
use crate::target::FdEngine;
use crate::{EngineError, IoEngine};

/// Build the engine `job.ioengine` names, configured from `job.engine`, `job.iodepth` and
/// `job.direct`. Names are matched case-insensitively; fio's `external:path` form is refused as
/// unsupported.
pub fn create(job: &JobSpec) -> Result<Box<dyn IoEngine>, EngineError> {
    if job.io_submit_mode == IoSubmitMode::Offload {
        if job.ioengine.has(Engine::is_inline_only) {
            let name = job.ioengine.as_str().trim().to_ascii_lowercase();
            return Err(EngineError::Option {
                engine: "offload",
                option: "io_submit_mode",
                reason: format!(
                    "ioengine={name} works on the job's own thread, not on submit \
                     threads; use io_submit_mode=inline (the default)"
                ),
            });
        }
        // `iodepth` submit threads, each with its own depth-1 instance of the engine.
        let mut inner = job.clone();
        inner.iodepth = 1;
        inner.io_submit_mode = IoSubmitMode::Inline;
        let engines = (0..job.iodepth.max(1))
            .map(|_| build(&inner, false))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Box::new(offload::OffloadEngine::new(engines)?));
    }
    build(job, true)
}

/// The engine itself. `one_thread`: only the creating thread will use it (otherwise engines
/// that tie themselves to their creator, io_uring's SINGLE_ISSUER ring, must not).
pub(crate) fn build(job: &JobSpec, one_thread: bool) -> Result<Box<dyn IoEngine>, EngineError> {
    let Some(kind) = job.ioengine.engine() else {
        return Err(unknown(&job.ioengine.as_str().trim().to_ascii_lowercase()));
    };
    let depth = job.iodepth.max(1);
    let rwf = || Rwf::from_options(&job.engine, job.direct);
    let engine: Box<dyn IoEngine> = match kind {
        Engine::Sync => Box::new(SyncEngine::new(SyncKind::Sync, rwf())),
        Engine::Psync => Box::new(SyncEngine::new(SyncKind::Psync, rwf())),
        Engine::Pvsync => Box::new(SyncEngine::new(SyncKind::Pvsync, rwf())),
        Engine::Pvsync2 => Box::new(SyncEngine::new(SyncKind::Pvsync2, rwf())),
        Engine::Vsync => Box::new(VsyncEngine::new(depth)),
        Engine::Mmap => Box::new(mmap::MmapEngine::new(
            job.rw.mode.is_random(),
            job.files.fadvise_hint != fiox_job::FadviseHint::None,
        )),
        Engine::Null => Box::new(NullEngine::new(depth)),
        Engine::Libaio => Box::new(libaio::LibaioEngine::new(depth, &job.engine)?),
        Engine::Guasi => Box::new(guasi::GuasiEngine::new(job)?),
        Engine::Posixaio => Box::new(posixaio::PosixAioEngine::new(depth)),
        Engine::Falloc => Box::new(FdEngine::new(falloc::FallocEngine)),
        Engine::Ftruncate => Box::new(FdEngine::new(ftruncate::FtruncateEngine)),
        Engine::Filecreate => Box::new(FileOpEngine::new(FileOp::Create)),
        Engine::Filestat => Box::new(FileOpEngine::new(FileOp::Stat(job.engine.stat_type))),
        Engine::Filedelete => Box::new(FileOpEngine::new(FileOp::Delete)),
        Engine::Dircreate => Box::new(FileOpEngine::new(FileOp::DirCreate)),
        Engine::Dirstat => Box::new(FileOpEngine::new(FileOp::DirStat(job.engine.stat_type))),
        Engine::Dirdelete => Box::new(FileOpEngine::new(FileOp::DirDelete)),
        Engine::PageFault => Box::new(pagefault::PageFaultEngine::new(job)?),
        Engine::Cpuio => Box::new(cpuio::CpuEngine::new(&job.engine)?),
        Engine::Exec => Box::new(exec::ExecEngine::new(job)?),
        Engine::Splice => Box::new(FdEngine::new(splice::SpliceEngine::new()?)),
        Engine::Net => Box::new(crate::net::NetEngine::new(job, false)?),
        Engine::Netsplice => Box::new(crate::net::NetEngine::new(job, true)?),
        // fio's pmemblk needs thread=1 (its threads share the pool, which a process can
        // open once); without it fio fails the job (err=0) in these words.
        Engine::Pmemblk if !job.thread => {
            return Err(EngineError::Fails {
                msg: "pmemblk: must set thread=1 for pmemblk engine".into(),
                errno: 0,
            })
        }
        Engine::Pmemblk => Box::new(crate::blocking::pmemblk::PmemblkEngine::new()),
        Engine::E4defrag => Box::new(FdEngine::new(e4defrag::E4defragEngine::new(job)?)),
        Engine::IoUring => Box::new(uring::UringEngine::new(
            depth,
            job.direct,
            &job.engine,
            one_thread,
        )?),
    };
    Ok(engine)
}

fn unknown(name: &str) -> EngineError {
    let base = name.split(':').next().unwrap_or(name);
    if let Some(f) = fiox_job::defs::unsupported::fails_when_run(name) {
        EngineError::FailsAsInFio(f)
    } else if UNSUPPORTED_FIO_ENGINES.contains(&base) {
        EngineError::NotSupported(name.to_string())
    } else {
        EngineError::Unknown(
            name.to_string(),
            engine_names().collect::<Vec<_>>().join(", "),
        )
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    fn job(engine: &str) -> JobSpec {
        JobSpec {
            ioengine: engine.into(),
            ..JobSpec::default()
        }
    }

    /// Engine `name` built from a job with every option some engine requires; `slot` keeps
    /// the net ports and e4defrag donors of concurrent tests apart (the caller removes the
    /// donor).
    fn built(name: &str, slot: u32) -> Box<dyn IoEngine> {
        let mut j = job(name);
        j.thread = true; // pmemblk
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
        for name in engine_names() {
            assert_eq!(built(name, 0).name(), name);
        }
        let _ = std::fs::remove_file(donor(0));
        assert_eq!(create(&job("PSync")).unwrap().name(), "psync");
    }

    /// The runner's diskless test and the engines' `no_io` flags are one list: fio 3.33's
    /// FIO_DISKLESSIO engines (null, cpuio, exec, filecreate, net, netsplice).
    #[test]
    fn no_io_flags_are_the_diskless_engines() {
        let is_diskless = |name: &str| job(name).ioengine.has(Engine::is_diskless);
        for name in engine_names() {
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
        let e = create(&job("http")).err().unwrap();
        assert!(matches!(e, EngineError::NotSupported(_)), "{e}");
        let e = create(&job("sg")).err().unwrap();
        let msg = e.to_string();
        assert!(
            msg.starts_with("ioengine sg only works on block or character devices; ioengine=sg is a fio engine that fiox does not support yet")
                && msg.ends_with("err=22"),
            "{msg}"
        );
        let e = create(&job("external:/x.so")).err().unwrap();
        assert!(matches!(e, EngineError::NotSupported(_)), "{e}");
        let e = create(&job("bogus")).err().unwrap();
        let msg = e.to_string();
        assert!(msg.contains("'bogus'") && msg.contains("psync"), "{msg}");
    }

    #[test]
    fn sync_flags_follow_fio() {
        assert!(create(&job("psync")).unwrap().flags().sync);
        let per_io_syscalls_on_job_thread = |name: &str| job(name).ioengine.has(Engine::is_sync);
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
