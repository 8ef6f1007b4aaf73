//! A job's memory: the I/O buffers (`iomem`/`mem`, alignment, huge pages, `iomem_align`) in the
//! engine's pool, and `lockmem`'s pinned memory.

use crate::error::RunError;
use fiox_engine::{BufPool, MemSpec, Pinned};
use fiox_job::JobSpec;
use fiox_stats::{JobResult, WarningCode};

/// `lockmem`: pin that much memory while the job runs; a smaller pin (fio leaves 128 MiB of
/// the machine unpinned) is said in a warning, as fio says it.
pub(super) fn pin_memory(
    job: &JobSpec,
    result: &mut JobResult,
) -> Result<Option<Pinned>, RunError> {
    if job.buffers.lockmem == 0 {
        return Ok(None);
    }
    let want = usize::try_from(job.buffers.lockmem).unwrap_or(usize::MAX);
    crate::dprint!(crate::debug::MEM, "pinning {} bytes", job.buffers.lockmem);
    let pinned = Pinned::new(want).map_err(|msg| RunError::Job {
        job: job.name.clone(),
        msg,
    })?;
    if pinned.len < want {
        result.warnings.push(fiox_stats::Warning::new(
            WarningCode::LockmemLimited,
            format!(
                "job {}: limiting mlocked memory to {}MiB",
                job.name,
                pinned.len >> 20
            ),
        ));
    }
    Ok(Some(pinned))
}

/// fio's `mem=`, `iomem_align` and `hugepage-size` as the engine crate takes them.
pub(super) fn mem_spec(job: &JobSpec) -> MemSpec {
    MemSpec {
        kind: job.buffers.mem,
        file: job.buffers.mmapfile.clone(),
        hugepage_size: usize::try_from(job.buffers.hugepage_size).unwrap_or(usize::MAX),
    }
}

/// One aligned slot per queue entry, as large as the largest block, pre-filled for writes.
/// A job that does not write leaves them as allocated (zero pages the kernel maps only when
/// the I/O touches them), as fio does: filling 64 jobs' depth-64 pools cost 33 MB of RSS.
pub(crate) fn buffer_pool(
    job: &JobSpec,
    filler: &mut crate::gen::BufferFiller,
) -> Result<BufPool, RunError> {
    let max_bs = [&job.bs.read, &job.bs.write, &job.bs.trim]
        .iter()
        .map(|b| b.max.max(b.split.iter().map(|s| s.0).max().unwrap_or(0)))
        .max()
        .unwrap_or(4096) as usize;
    let depth = job.iodepth.max(1) as usize;
    let offset = usize::try_from(job.buffers.mem_align).unwrap_or(usize::MAX);
    let mut pool = BufPool::new_in(&mem_spec(job), depth, max_bs, 4096, offset).map_err(|e| {
        RunError::Job {
            job: job.name.clone(),
            msg: e,
        }
    })?;
    if job.rw.mode.has_write() {
        for i in 0..pool.len() {
            filler.fill(pool.slice_mut(i), true);
        }
    }
    if crate::debug::on(crate::debug::MEM) {
        debug_buffers(job, &pool, depth * max_bs);
    }
    Ok(pool)
}

/// fio's `--debug=mem` lines for a job's buffers (allocate_io_mem, then init_io_u per unit;
/// the slot number stands for fio's io_u pointer).
#[cold]
pub(super) fn debug_buffers(job: &JobSpec, pool: &BufPool, size: usize) {
    let mut total = size as u64;
    // fio adds room to align the buffers where they must be aligned.
    if job.direct || job.buffers.mem_align > 0 {
        total += 4095 + job.buffers.mem_align.saturating_sub(4096);
    }
    crate::dprint!(crate::debug::MEM, "Alloc {total} for buffers");
    // The backing's line, where fiox's allocation is the one fio names (the shm backings'
    // lines carry a segment id fiox's buffer pool does not expose).
    let base = pool.slot(0).as_ptr();
    use fiox_job::MemKind as K;
    match job.buffers.mem {
        K::Malloc => crate::dprint!(crate::debug::MEM, "malloc {total} {base:p}"),
        K::Mmap | K::MmapShared | K::MmapHuge if job.buffers.mmapfile.is_none() => {
            crate::dprint!(crate::debug::MEM, "mmap {total}/-1 {base:p}");
        }
        _ => {}
    }
    for i in 0..pool.len() {
        crate::dprint!(crate::debug::MEM, "io_u alloc {i:#x}, index {i}");
        let mem = pool.slot(i).as_ptr();
        crate::dprint!(crate::debug::MEM, "io_u {i:#x}, mem {mem:p}");
    }
}
