//! The runner's side of fio's file-operation engines (filecreate, filestat, filedelete and
//! fio 3.42's dircreate, dirstat, dirdelete, whose directories [`setup_dirs`] makes): the
//! engine's operation runs each time the job opens a file in fio's model (its first use in a
//! pass, again after an `openfiles` close), and its duration is recorded as a completion
//! latency of the job's direction, as fio's engines do from their open_file hook. The I/Os
//! themselves are counted without latency (the loop's `Measure` is off for them).

use crate::gen::Generator;
use crate::io::acct::Acct;
use fiox_engine::IoEngine;
use fiox_job::JobSpec;
use std::path::Path;

/// Per-job state: which opens of each file already had their operation.
pub(crate) struct FileOps {
    /// Per file, the generator's open count at its last operation.
    seen: Vec<u64>,
    /// fio's `stat_ddir`: read unless the job writes without reading.
    ddir: usize,
    /// Record latencies (fio: unless `disable_lat`, which gtod_reduce implies).
    timed: bool,
}

impl FileOps {
    pub(crate) fn new(job: &JobSpec, nfiles: usize, timed: bool) -> FileOps {
        let rw = job.rw.mode;
        FileOps {
            seen: vec![0; nfiles],
            ddir: usize::from(rw.has_write() && !rw.has_read()),
            timed,
        }
    }

    /// Run the operation on `file` if the generator opened it since the last one. A file
    /// the operation created is marked as fiox's (so `unlink=1` may remove it). Errors carry
    /// the errno and the message that end the job.
    pub(crate) fn before_io(
        &mut self,
        engine: &mut dyn IoEngine,
        gen: &Generator,
        file: u32,
        path: Option<&str>,
        acct: &mut Acct,
    ) -> Result<(), (i32, String)> {
        let opens = gen.opens(file as usize);
        let Some(seen) = self.seen.get_mut(file as usize) else {
            return Ok(());
        };
        if *seen == opens {
            return Ok(());
        }
        *seen = opens;
        let done = engine
            .file_op(file)
            .map_err(|e| (errno_of(&e), e.to_string()))?;
        if let (Some(f), Some(p)) = (&done.created, path) {
            crate::files::owned::mark(f, Path::new(p), crate::files::owned::Layout::Complete)
                .map_err(|e| (libc::EIO, e.to_string()))?;
        }
        if self.timed {
            acct.dirs[self.ddir].clat.add(done.ns);
        }
        Ok(())
    }
}

/// fio's setup_dirs for dirstat and dirdelete: mkdir(2) each directory of the job with mode
/// 0700, an existing one is fine. Those made here carry fiox's mark, so `unlink=1` and a
/// later dirdelete may remove them.
pub(crate) fn setup_dirs(job: &JobSpec) -> Result<(), crate::RunError> {
    for path in crate::files::file_paths(job) {
        crate::dprint!(crate::debug::FILE, "setup directory {}", path.display());
        // Made and marked by the guard (mkdirat on the parent's descriptor).
        let (parent, name) = fiox_guard::Dir::open_parent(&path)?;
        match parent.create_dir(&name, 0o700) {
            Ok(_) => {}
            Err(e) if e.is_exists() => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The errno an engine error carries (EIO when it has none).
fn errno_of(e: &fiox_engine::EngineError) -> i32 {
    match e {
        fiox_engine::EngineError::File { source, .. }
        | fiox_engine::EngineError::Os { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
        _ => libc::EIO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::{RwMode, RwSpec};

    #[test]
    fn the_direction_is_read_unless_the_job_only_writes() {
        let job = |mode| JobSpec {
            rw: RwSpec { mode, n: 0 },
            ..JobSpec::default()
        };
        for (mode, want) in [
            (RwMode::Read, 0),
            (RwMode::RandRw, 0),
            (RwMode::Write, 1),
            (RwMode::RandWrite, 1),
            (RwMode::Trim, 0),
        ] {
            assert_eq!(FileOps::new(&job(mode), 1, true).ddir, want, "{mode:?}");
        }
    }
}
