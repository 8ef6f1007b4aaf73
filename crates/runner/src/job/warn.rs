//! Warnings attached to a job's result: configurations whose numbers do not mean what the user
//! probably thinks (queue depth ignored by a synchronous engine, reads served from memory, ramp
//! longer than the run, files smaller than a block, options fiox handles differently).

use crate::files::{FileKind, FilePlan};
use fiox_engine::EngineFlags;
use fiox_job::JobSpec;
use fiox_stats::{Warning, WarningCode};

const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Warnings known before the job runs.
pub fn job_warnings(job: &JobSpec, plan: &FilePlan, flags: EngineFlags) -> Vec<Warning> {
    let mut out = Vec::new();
    if flags.sync && job.iodepth > 1 && !flags.no_io {
        out.push(Warning::new(
            WarningCode::IodepthSyncEngine,
            format!(
                "iodepth={} has no effect with the synchronous {} engine: one I/O is in flight \
                 at a time",
                job.iodepth, job.ioengine
            ),
        ));
    }
    if let (Some(rt), Some(ramp)) = (job.timing.runtime, job.timing.ramp_time) {
        if rt < ramp {
            out.push(Warning::new(
                WarningCode::RuntimeBelowRamp,
                format!(
                    "runtime ({:?}) is shorter than ramp_time ({:?}): most of the job's time is \
                     warm-up that is not measured",
                    rt, ramp
                ),
            ));
        }
    }
    if job.clocksource == Some(fiox_job::ClockSource::Cpu) {
        if let Some(why) = crate::io::clock::tsc_distrust_here() {
            out.push(Warning::new(
                WarningCode::ClocksourceCpuFallback,
                format!("clocksource=cpu: {why}; fiox reads CLOCK_MONOTONIC instead"),
            ));
        }
    }
    out.extend(file_warnings(job, plan, flags));
    if !flags.no_io && job.rw.mode.has_read() {
        if let Some(m) = memory_served(plan) {
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
            out.push(Warning::new(
                WarningCode::FileSmallerThanBs,
                format!(
                    "{}: the I/O region ({} bytes) is smaller than the block size ({bs} bytes); \
                     no I/O can be issued to it",
                    f.path.display(),
                    f.size
                ),
            ));
        }
    }
    out
}

/// Reads of a file in tmpfs/ramfs (the page cache is the storage there). Whether reads on real
/// storage came from memory is judged after the run ([`page_cache_warning`]).
fn memory_served(plan: &FilePlan) -> Option<Warning> {
    if let Some(f) = plan.files.iter().find(|f| {
        f.kind == FileKind::Regular
            && fiox_engine::sys::fs_magic(&f.path)
                .map(|m| m == TMPFS_MAGIC || m == RAMFS_MAGIC)
                .unwrap_or(false)
    }) {
        return Some(Warning::new(
            WarningCode::MemoryBackedFile,
            format!(
                "{} is on tmpfs/ramfs: reads and writes are memory copies, not storage I/O",
                f.path.display()
            ),
        ));
    }
    None
}

/// Buffered reads served from memory, judged on the run's evidence (cachestat before and after
/// the I/O, see `cache::Residency`), not on sizes: part of the region was cached when the reads
/// began (dirty pages `invalidate` cannot drop, such as a write just before; `invalidate=0`;
/// `pre_read`), or the job re-read blocks without dropping the cache in between and most of
/// the region was cached by the end.
pub fn page_cache_warning(job: &JobSpec, r: &fiox_stats::JobResult) -> Option<Warning> {
    let pc = r.page_cache.as_ref()?;
    let read = r.dirs.read.io_bytes;
    let on_memory = r
        .warnings
        .iter()
        .any(|w| w.code == WarningCode::MemoryBackedFile);
    if job.direct || read == 0 || pc.region_bytes == 0 || on_memory {
        return None;
    }
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let pct = |b: u64| 100.0 * b as f64 / pc.region_bytes as f64;
    let head = format!(
        "buffered reads of {:.1} MiB from a {:.1} MiB region were {} served from the page \
         cache ({}: {:.1} MiB ({:.0}%) cached when the I/O began, {:.1} MiB ({:.0}%) at the end)",
        mib(read),
        mib(pc.region_bytes),
        if pc.cached_before * 10 >= pc.region_bytes * 9 {
            "likely"
        } else {
            "partly"
        },
        pc.method,
        mib(pc.cached_before),
        pct(pc.cached_before),
        mib(pc.cached_after),
        pct(pc.cached_after)
    );
    let cached_at_start = pc.cached_before * 10 >= pc.region_bytes;
    let rereads = read > pc.region_bytes && rereads_undropped(job);
    let cached_at_end = pc.cached_after * 2 >= pc.region_bytes;
    if cached_at_start {
        Some(Warning::with_fix(
            WarningCode::PageCache,
            head,
            "use direct=1; sync (or end_fsync=1 in the job that wrote the file) so invalidate can \
             drop its pages before reading",
        ))
    } else if rereads && cached_at_end {
        Some(Warning::with_fix(
            WarningCode::PageCache,
            head,
            "use direct=1, or invalidate=1 with a workload that does not re-read blocks \
             (a random map, a region larger than memory)",
        ))
    } else {
        None
    }
}

/// Whether the job reads blocks again without fio dropping the cache between the reads:
/// `invalidate=0`, or random reads that repeat blocks within a pass (no random map, or a
/// non-uniform distribution).
fn rereads_undropped(job: &JobSpec) -> bool {
    let repeats = job.rw.mode.is_random()
        && (job.rand.norandommap
            || !matches!(job.rand.distribution, fiox_job::RandomDistribution::Random));
    !job.files.invalidate || repeats
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
                laid_out: None,
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
        assert!(ws.iter().any(|w| w.code == WarningCode::IodepthSyncEngine));
        j.iodepth = 1;
        let ws = job_warnings(&j, &plan(1 << 20), f);
        assert!(!ws.iter().any(|w| w.code == WarningCode::IodepthSyncEngine));
    }

    fn read_result(read: u64, before: u64, after: u64) -> fiox_stats::JobResult {
        let mut r = fiox_stats::JobResult::default();
        r.dirs.read.io_bytes = read;
        r.page_cache = Some(fiox_stats::PageCache {
            method: "cachestat".into(),
            region_bytes: 32 << 20,
            cached_before: before,
            cached_after: after,
        });
        r
    }

    /// The warning follows the evidence, not the sizes: a slow rate-limited read that found
    /// nothing cached is quiet; one that found the region cached (pages written just before)
    /// warns with the numbers; re-reads without a drop warn when the region ended up cached.
    #[test]
    fn page_cache_warning_follows_the_evidence() {
        let mut j = JobSpec::default();
        j.rw.mode = fiox_job::RwMode::RandRead;
        let quiet = read_result(2 << 20, 0, 2 << 20);
        assert_eq!(page_cache_warning(&j, &quiet), None);
        let hot = read_result(200 << 20, 32 << 20, 32 << 20);
        let wn = page_cache_warning(&j, &hot).expect("cached region warns");
        assert!(
            wn.message
                .contains("32.0 MiB (100%) cached when the I/O began"),
            "{}",
            wn.message
        );
        // Random map on, invalidate on: passes re-read only after a drop.
        let wrapped = read_result(200 << 20, 0, 32 << 20);
        assert_eq!(page_cache_warning(&j, &wrapped), None);
        j.rand.norandommap = true;
        assert!(page_cache_warning(&j, &wrapped).is_some());
        j.direct = true;
        assert_eq!(page_cache_warning(&j, &hot), None);
    }

    #[test]
    fn buffered_libaio_warns_once_from_the_result() {
        let mut j = JobSpec {
            ioengine: "libaio".into(),
            iodepth: 32,
            ..JobSpec::default()
        };
        let ws = job_warnings(&j, &plan(1 << 20), EngineFlags::default());
        assert!(
            !ws.iter().any(|w| w.code == WarningCode::BufferedLibaio),
            "{ws:?}"
        );
        let r = fiox_stats::JobResult::default();
        let ws = result_warnings(&j, &r);
        assert_eq!(
            ws.iter()
                .filter(|w| w.code == WarningCode::BufferedLibaio)
                .count(),
            1,
            "{ws:?}"
        );
        j.direct = true;
        assert!(!result_warnings(&j, &r)
            .iter()
            .any(|w| w.code == WarningCode::BufferedLibaio));
    }

    #[test]
    fn tiny_file_warns() {
        let j = JobSpec::default();
        let ws = job_warnings(&j, &plan(512), EngineFlags::default());
        assert!(ws.iter().any(|w| w.code == WarningCode::FileSmallerThanBs));
    }
}
