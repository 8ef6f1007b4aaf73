//! Engine selection: maps `ioengine=` to an engine built from the job's options, and tells a
//! fio engine fiox does not implement (NotSupported) from a name nobody knows (Unknown).

use fiox_job::spec::{IoSubmitMode, JobSpec};

use crate::blocking::sync::{Rwf, SyncEngine, SyncKind, VsyncEngine};
use crate::blocking::{mmap, splice};
use crate::fileops::ops::{FileOp, FileOpEngine};
use crate::fileops::{e4defrag, falloc, ftruncate};
use crate::names::{ENGINES, INLINE_ONLY, UNSUPPORTED_FIO_ENGINES};
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
    let name = job.ioengine.trim().to_ascii_lowercase();
    let depth = job.iodepth.max(1);
    let rwf = || Rwf::from_options(&job.engine, job.direct);
    let engine: Box<dyn IoEngine> = match name.as_str() {
        "sync" => Box::new(SyncEngine::new(SyncKind::Sync, rwf())),
        "psync" => Box::new(SyncEngine::new(SyncKind::Psync, rwf())),
        "pvsync" => Box::new(SyncEngine::new(SyncKind::Pvsync, rwf())),
        "pvsync2" => Box::new(SyncEngine::new(SyncKind::Pvsync2, rwf())),
        "vsync" => Box::new(VsyncEngine::new(depth)),
        "mmap" => Box::new(mmap::MmapEngine::new(
            job.rw.mode.is_random(),
            job.files.fadvise_hint != fiox_job::FadviseHint::None,
        )),
        "null" => Box::new(NullEngine::new(depth)),
        "libaio" => Box::new(libaio::LibaioEngine::new(depth, &job.engine)?),
        "guasi" | "threads" => Box::new(guasi::GuasiEngine::new(job)?),
        "posixaio" => Box::new(posixaio::PosixAioEngine::new(depth)),
        "falloc" => Box::new(FdEngine::new(falloc::FallocEngine)),
        "ftruncate" => Box::new(FdEngine::new(ftruncate::FtruncateEngine)),
        "filecreate" => Box::new(FileOpEngine::new(FileOp::Create)),
        "filestat" => Box::new(FileOpEngine::new(FileOp::Stat(job.engine.stat_type))),
        "filedelete" => Box::new(FileOpEngine::new(FileOp::Delete)),
        "dircreate" => Box::new(FileOpEngine::new(FileOp::DirCreate)),
        "dirstat" => Box::new(FileOpEngine::new(FileOp::DirStat(job.engine.stat_type))),
        "dirdelete" => Box::new(FileOpEngine::new(FileOp::DirDelete)),
        "page_fault" => Box::new(pagefault::PageFaultEngine::new(job)?),
        "cpuio" => Box::new(cpuio::CpuEngine::new(&job.engine)?),
        "exec" => Box::new(exec::ExecEngine::new(job)?),
        "splice" => Box::new(FdEngine::new(splice::SpliceEngine::new()?)),
        "net" => Box::new(crate::net::NetEngine::new(job, false)?),
        "netsplice" => Box::new(crate::net::NetEngine::new(job, true)?),
        "e4defrag" => Box::new(FdEngine::new(e4defrag::E4defragEngine::new(job)?)),
        "io_uring" => Box::new(uring::UringEngine::new(
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
    if let Some(f) = fiox_job::defs::unsupported::fails_when_run(name) {
        EngineError::FailsAsInFio(f)
    } else if UNSUPPORTED_FIO_ENGINES.contains(&base) {
        EngineError::NotSupported(name.to_string())
    } else {
        EngineError::Unknown(name.to_string(), ENGINES.join(", "))
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{is_diskless, per_io_syscalls_on_job_thread};

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
