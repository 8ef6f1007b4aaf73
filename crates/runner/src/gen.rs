//! The workload generator the runner drives, from fiox-workload: fio's exact I/O sequence
//! (direction, file, offset, length) per job, pass restarts for `loops`/`time_based`, and
//! fio's write-buffer contents. This module only adapts construction to the runner's plan.

use crate::error::RunError;
use crate::files::FilePlan;
use fiox_job::JobSpec;
pub use fiox_workload::{BufferFiller, FileExtent, GenOptions, Generator, IoReq, Stream};

/// Build the generator for a planned job.
pub fn generator(job: &JobSpec, plan: &FilePlan) -> Result<Generator, RunError> {
    let extents: Vec<FileExtent> = plan
        .files
        .iter()
        .map(|f| FileExtent {
            offset: f.offset,
            size: f.size,
        })
        .collect();
    let opts = GenOptions {
        seed: None,
        file_names: Some(
            plan.files
                .iter()
                .map(|f| f.path.display().to_string())
                .collect(),
        ),
        real_sizes: Some(
            plan.files
                .iter()
                .map(|f| f.real_size.max(f.offset + f.size))
                .collect(),
        ),
    };
    Generator::with_options(job, &extents, plan.io_bytes, &opts).map_err(|e| RunError::Job {
        job: job.name.clone(),
        msg: e.to_string(),
    })
}

/// The write-buffer filler seeded as fio seeds it (the generator's buffer stream).
pub fn filler(job: &JobSpec, gen: &Generator) -> BufferFiller {
    let min_write = job.bs.write.min;
    BufferFiller::new(&job.buffers, gen.seeds().get(Stream::Buf)).with_min_write(min_write)
}
