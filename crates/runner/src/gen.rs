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
        seed: fresh_seed(job),
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

/// With `randrepeat=0` and no explicit `randseed`, fio seeds every run differently; the
/// generator itself reads no clocks or entropy, so the seed is drawn here.
fn fresh_seed(job: &JobSpec) -> Option<u64> {
    let explicit = job.raw_options.iter().any(|(k, _)| k == "randseed");
    if job.rand.randrepeat || explicit {
        return None;
    }
    let mut bytes = [0u8; 8];
    let from_urandom = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    if from_urandom {
        return Some(u64::from_le_bytes(bytes));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Some(now.as_nanos() as u64 ^ (u64::from(job.index) << 48))
}

/// The write-buffer filler seeded as fio seeds it (the generator's buffer and dedupe
/// streams), with the dedupe working set when the job asks for one.
pub fn filler(job: &JobSpec, gen: &Generator) -> BufferFiller {
    let min_write = job.bs.write.min;
    let f = BufferFiller::from_seeds(&job.buffers, gen.seeds()).with_min_write(min_write);
    let b = &job.buffers;
    if b.dedupe_percentage == 0 || b.dedupe_mode != fiox_job::DedupeMode::WorkingSet {
        return f;
    }
    // fio sizes the set from `size=` as written (the resolver requires it).
    let size = match job.size {
        Some(fiox_job::SizeSpec::Bytes(n)) => n,
        _ => 0,
    };
    let pages =
        size.saturating_mul(u64::from(b.dedupe_working_set_percentage)) / 100 / min_write.max(1);
    // Another job's buffer stream is seeded from its randseed and its place in the run.
    let peers: Vec<u64> = b
        .dedupe_peer_seeds
        .iter()
        .enumerate()
        .map(|(k, &seed)| match k == job.index as usize {
            true => gen.seeds().get(Stream::Buf),
            false => {
                fiox_workload::Seeds::derive(seed, k as u32 + 1, false, false).get(Stream::Buf)
            }
        })
        .collect();
    f.with_working_set(pages, &peers, job.index as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn randrepeat_off_draws_a_new_seed_unless_randseed_is_given() {
        let mut job = JobSpec::default();
        assert_eq!(
            fresh_seed(&job),
            None,
            "randrepeat=1 keeps fio's fixed seed"
        );
        job.rand.randrepeat = false;
        let (a, b) = (fresh_seed(&job), fresh_seed(&job));
        assert!(a.is_some() && a != b, "{a:?} {b:?}");
        job.raw_options.push(("randseed".into(), "42".into()));
        assert_eq!(fresh_seed(&job), None, "an explicit randseed wins");
    }
}
