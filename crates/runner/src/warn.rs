//! Warnings attached to a job's result: configurations whose numbers do not mean what the user
//! probably thinks (queue depth ignored by a synchronous engine, reads served from memory, ramp
//! longer than the run, files smaller than a block, options fiox handles differently).

use crate::files::{FileKind, FilePlan};
use fiox_engine::EngineFlags;
use fiox_job::JobSpec;
use fiox_stats::Warning;

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

fn w(code: &str, message: String, fix: &str) -> Warning {
    Warning {
        code: code.into(),
        message,
        fix: fix.into(),
    }
}

/// Warnings known before the job runs.
pub fn job_warnings(job: &JobSpec, plan: &FilePlan, flags: EngineFlags) -> Vec<Warning> {
    let mut out = Vec::new();
    if flags.sync && job.iodepth > 1 && !flags.no_io {
        out.push(w(
            "iodepth-sync-engine",
            format!(
                "iodepth={} has no effect with the synchronous {} engine: one I/O is in flight \
                 at a time",
                job.iodepth, job.ioengine
            ),
            "use ioengine=io_uring or libaio (with direct=1), or numjobs for parallelism",
        ));
    }
    if let (Some(rt), Some(ramp)) = (job.timing.runtime, job.timing.ramp_time) {
        if rt < ramp {
            out.push(w(
                "runtime-below-ramp",
                format!(
                    "runtime ({:?}) is shorter than ramp_time ({:?}): most of the job's time is \
                     warm-up that is not measured",
                    rt, ramp
                ),
                "make runtime longer than ramp_time",
            ));
        }
    }
    out.extend(file_warnings(job, plan, flags));
    if !flags.no_io && job.rw.mode.has_read() {
        if let Some(m) = memory_served(job, plan) {
            out.push(m);
        }
    }
    out
}

/// Warnings read from the measurements: buffered libaio and queued engines whose submissions
/// completed the I/O instead of queueing it, judged on the run's own slat/lat/depth evidence
/// (`fiox_stats::advice`, one rule set shared with the experiments' tables).
pub fn result_warnings(job: &JobSpec, r: &fiox_stats::JobResult) -> Vec<Warning> {
    fiox_stats::advice::analyze(job, r)
}

/// Files too small for a block.
fn file_warnings(job: &JobSpec, plan: &FilePlan, flags: EngineFlags) -> Vec<Warning> {
    let mut out = Vec::new();
    for f in &plan.files {
        let bs = crate::files::min_bs(job);
        if f.size < bs && !flags.no_io {
            out.push(w(
                "file-smaller-than-bs",
                format!(
                    "{}: the I/O region ({} bytes) is smaller than the block size ({bs} bytes); \
                     no I/O can be issued to it",
                    f.path.display(),
                    f.size
                ),
                "increase size= or decrease bs=",
            ));
        }
    }
    out
}

/// Buffered reads of a working set that fits in free memory, or of a file in tmpfs/ramfs.
fn memory_served(job: &JobSpec, plan: &FilePlan) -> Option<Warning> {
    if let Some(f) = plan.files.iter().find(|f| {
        f.kind == FileKind::Regular
            && fiox_engine::sys::fs_magic(&f.path)
                .map(|m| m == TMPFS_MAGIC || m == RAMFS_MAGIC)
                .unwrap_or(false)
    }) {
        return Some(w(
            "memory-backed-file",
            format!(
                "{} is on tmpfs/ramfs: reads and writes are memory copies, not storage I/O",
                f.path.display()
            ),
            "put the file on the storage you want to measure",
        ));
    }
    if job.direct {
        return None;
    }
    let ws: u64 = plan.files.iter().map(|f| f.size).sum();
    let avail = crate::sys::mem_available()?;
    let rereads = plan.io_bytes > ws
        || job.timing.time_based
        || job.timing.loops > 1
        || !job.files.invalidate;
    if ws < avail && rereads {
        return Some(w(
            "page-cache",
            format!(
                "buffered reads of a {} MiB working set (smaller than the {} MiB of free \
                 memory) were likely served from the page cache",
                ws >> 20,
                avail >> 20
            ),
            "use direct=1, or a working set larger than memory",
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::PlannedFile;

    fn plan(size: u64) -> FilePlan {
        FilePlan {
            files: vec![PlannedFile {
                path: "/nonexistent-fiox/f".into(),
                kind: FileKind::Regular,
                offset: 0,
                size,
                real_size: size,
                needs_layout: false,
                created: false,
            }],
            io_bytes: size,
        }
    }

    #[test]
    fn sync_engine_depth_warns() {
        let mut j = JobSpec {
            iodepth: 32,
            ..JobSpec::default()
        };
        let f = EngineFlags {
            sync: true,
            ..EngineFlags::default()
        };
        let ws = job_warnings(&j, &plan(1 << 20), f);
        assert!(ws.iter().any(|w| w.code == "iodepth-sync-engine"));
        j.iodepth = 1;
        let ws = job_warnings(&j, &plan(1 << 20), f);
        assert!(!ws.iter().any(|w| w.code == "iodepth-sync-engine"));
    }

    #[test]
    fn time_based_small_buffered_read_warns_page_cache() {
        let mut j = JobSpec::default();
        j.timing.time_based = true;
        let f = EngineFlags::default();
        let ws = job_warnings(&j, &plan(1 << 20), f);
        assert!(ws.iter().any(|w| w.code == "page-cache"), "{ws:?}");
        j.direct = true;
        let ws = job_warnings(&j, &plan(1 << 20), f);
        assert!(!ws.iter().any(|w| w.code == "page-cache"));
    }

    #[test]
    fn buffered_libaio_warns_once_from_the_result() {
        let mut j = JobSpec {
            ioengine: "libaio".into(),
            iodepth: 32,
            ..JobSpec::default()
        };
        let ws = job_warnings(&j, &plan(1 << 20), EngineFlags::default());
        assert!(!ws.iter().any(|w| w.code == "buffered-libaio"), "{ws:?}");
        let r = fiox_stats::JobResult::default();
        let ws = result_warnings(&j, &r);
        assert_eq!(
            ws.iter().filter(|w| w.code == "buffered-libaio").count(),
            1,
            "{ws:?}"
        );
        j.direct = true;
        assert!(!result_warnings(&j, &r)
            .iter()
            .any(|w| w.code == "buffered-libaio"));
    }

    #[test]
    fn tiny_file_warns() {
        let j = JobSpec::default();
        let ws = job_warnings(&j, &plan(512), EngineFlags::default());
        assert!(ws.iter().any(|w| w.code == "file-smaller-than-bs"));
    }
}
