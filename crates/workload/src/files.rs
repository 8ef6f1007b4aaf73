//! Per-file sizes as fio's `setup_files` computes them: `size` divided over `nrfiles` (the first
//! files one minimum block larger when it does not divide evenly), or each file `filesize`,
//! or a size drawn in the `filesize=a-b` range from the job's file-size stream.

use fiox_job::{Ddir, JobSpec, SizeSpec};

use crate::rand::FRand;
use crate::seeds::{Seeds, Stream};

/// Size of each of `nfiles` files of `job`, given the job's total `size` in bytes (resolved
/// by the caller when `size` is a percentage; None when `size` is unset). Sizes are what fio
/// calls each file's `io_size` before `offset` is applied; a file without `size` or
/// `filesize` gets None (fio then uses the existing file's size).
///
/// `randseed` must be the seed the generator uses (`Generator::seed`), so `filesize=a-b`
/// draws match fio's.
pub fn split_size(
    job: &JobSpec,
    nfiles: u32,
    size: Option<u64>,
    randseed: u64,
) -> Vec<Option<u64>> {
    let n = nfiles.max(1) as usize;
    let rw_min_bs = Ddir::ALL
        .iter()
        .map(|&d| job.bs.get(d))
        .map(|b| match b.split.iter().map(|s| s.0).min() {
            Some(m) => m,
            None => b.min,
        })
        .min()
        .unwrap_or(4096)
        .max(1);
    if let Some((lo, hi)) = job.files.filesize {
        if lo == hi {
            return vec![Some(lo); n];
        }
        let seeds = Seeds::derive(
            randseed,
            job.index + 1,
            job.rand.randrepeat,
            job.rw.mode.is_random(),
        );
        let use64 = job.rand.generator == fiox_job::RandomGenerator::Tausworthe64;
        let mut st = FRand::new(seeds.get(Stream::FileSize), use64);
        return (0..n)
            .map(|_| {
                let span = hi - lo;
                let mut v = lo + (span as f64 * st.next_fraction()) as u64;
                v -= v % rw_min_bs;
                Some(v)
            })
            .collect();
    }
    let total = match (size, job.size) {
        (Some(s), _) => s,
        (None, Some(SizeSpec::Bytes(s))) => s,
        _ => return vec![None; n],
    };
    let fs = total / n as u64;
    let mut extra = (total - fs * n as u64) / rw_min_bs;
    (0..n)
        .map(|_| {
            let mut v = fs;
            if extra > 0 {
                extra -= 1;
                v += rw_min_bs;
            }
            Some(v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::JobSpec;

    #[test]
    fn size_divides_over_files() {
        let job = JobSpec::default();
        assert_eq!(
            split_size(&job, 4, Some(1 << 20), 0x89),
            vec![Some(256 << 10); 4]
        );
        // 10000 bytes over 3 files: 3333 each, remainder 1 < 4096 so no extra blocks.
        assert_eq!(split_size(&job, 3, Some(10_000), 0x89), vec![Some(3333); 3]);
        // A remainder of whole minimum blocks goes to the first files.
        let job = JobSpec {
            bs: fiox_job::PerDir::all(fiox_job::BsSpec::fixed(2)),
            ..JobSpec::default()
        };
        assert_eq!(
            split_size(&job, 3, Some(5), 0x89),
            vec![Some(3), Some(1), Some(1)]
        );
    }

    #[test]
    fn filesize_range_is_aligned_and_in_range() {
        let mut job = JobSpec::default();
        job.files.filesize = Some((1 << 20, 4 << 20));
        let s = split_size(&job, 8, None, 0x89);
        for v in &s {
            let v = v.unwrap();
            assert!((1 << 20..=4 << 20).contains(&v));
            assert_eq!(v % 4096, 0);
        }
        assert_eq!(s, split_size(&job, 8, None, 0x89));
        assert_ne!(s[0], s[1]);
    }

    #[test]
    fn no_size_means_existing_file_size() {
        let job = JobSpec::default();
        assert_eq!(split_size(&job, 2, None, 0x89), vec![None, None]);
    }
}
