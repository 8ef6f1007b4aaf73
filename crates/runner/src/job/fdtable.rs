//! A job's own file table, as fio's job processes have. fio runs each job as a process unless
//! `thread` is set; fiox runs every job on a thread. When threads share a file table, the
//! kernel takes and drops a reference on the file in every read/pread/write call (`fdget` may
//! skip that only when no other thread can close the number meanwhile): two atomic operations
//! per I/O, about 25 ns of a 650 ns 4 KiB tmpfs read here. So a job that fio would run as a
//! process, and whose engine makes its file syscalls on the job's own thread, unshares the
//! table before it opens anything.
//!
//! Why only those: after the unshare, a number the job opens means nothing to other threads
//! and a number another thread opens means nothing (or another file) to the job. The sync
//! engines use their numbers only on the job's thread (and threads it starts later share its
//! table); engines that hand numbers to helpers shared by the whole process (glibc's posixaio
//! threads) would reach the wrong file, so they keep the shared table. So does a job holding
//! a block-device claim (blockdev.rs): one open file shared by every job writing the device,
//! released by whichever job drops it last, so its number must mean the same in all of them.

use fiox_job::spec::{IoSubmitMode, JobSpec};

/// Whether `job` runs with a private file table (see the module documentation).
pub(crate) fn wanted(job: &JobSpec) -> bool {
    !job.thread
        && job.io_submit_mode == IoSubmitMode::Inline
        && job.ioengine.has(fiox_job::Engine::is_sync)
}

/// Unshare the calling thread's file table when `job` wants it and holds no block-device
/// claim. Call on the job's thread before it opens the files it keeps. A failure (a sandbox
/// that forbids unshare) only costs speed: the job runs on the shared table, as with `thread`.
pub(crate) fn enter(job: &JobSpec, claims: &[crate::files::blockdev::BlockClaim]) {
    if !wanted(job) || !claims.is_empty() {
        return;
    }
    // --explain's open window holds links the copy must not keep (fiox_explain says which).
    match fiox_explain::unshare_files(crate::sys::unshare_file_table) {
        Ok(()) => crate::dprint!(
            crate::debug::PROCESS,
            "file table unshared (as fio's job process)"
        ),
        Err(e) => crate::dprint!(crate::debug::PROCESS, "file table shared: unshare: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(engine: &str, thread: bool, mode: IoSubmitMode) -> JobSpec {
        JobSpec {
            ioengine: engine.into(),
            thread,
            io_submit_mode: mode,
            ..JobSpec::default()
        }
    }

    #[test]
    fn only_process_like_sync_jobs_unshare() {
        let inline = IoSubmitMode::Inline;
        assert!(wanted(&job("psync", false, inline)));
        assert!(wanted(&job("sync", false, inline)));
        assert!(!wanted(&job("psync", true, inline)));
        assert!(!wanted(&job("psync", false, IoSubmitMode::Offload)));
        assert!(!wanted(&job("posixaio", false, inline)));
        assert!(!wanted(&job("libaio", false, inline)));
    }
}
