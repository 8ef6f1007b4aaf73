//! Adapter between the runner and the workload generator: the runner asks for the next I/O
//! (direction, file index, offset, length) and restarts a pass for `loops`/`time_based`.
//!
//! Until fiox-workload's `Generator` lands, this module carries a small fallback that covers
//! sequential and uniform-random patterns with a random map (each block once per pass), fixed
//! block sizes per direction and `rwmixread`; the runner only depends on [`Gen`]'s methods.

use fiox_job::{Ddir, JobSpec, RwMode};

/// The region of one file the job may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileExtent {
    pub offset: u64,
    pub size: u64,
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoReq {
    pub ddir: Ddir,
    pub file: u32,
    pub offset: u64,
    pub len: u64,
}

/// The generator the runner drives.
pub struct Gen {
    files: Vec<FileExtent>,
    mode: RwMode,
    mix_read: u32,
    bs: [u64; 3],
    budget: u64,
    issued: u64,
    next_file: usize,
    seq_pos: Vec<u64>,
    maps: Vec<Vec<u64>>,
    rng: u64,
    seed: u64,
}

impl Gen {
    pub fn new(job: &JobSpec, files: &[FileExtent], io_bytes: u64) -> Gen {
        let bs = [job.bs.read.min, job.bs.write.min, job.bs.trim.min].map(|b| b.max(1));
        let seed = job.rand.randseed ^ (job.index as u64).wrapping_mul(0x9E37_79B9);
        let mut g = Gen {
            files: files.to_vec(),
            mode: job.rw.mode,
            mix_read: job.rwmixread,
            bs,
            budget: io_bytes,
            issued: 0,
            next_file: 0,
            seq_pos: Vec::new(),
            maps: Vec::new(),
            rng: seed | 1,
            seed: seed | 1,
        };
        g.restart();
        g
    }

    /// Start a new pass over the same files (same sequence when randrepeat).
    pub fn restart(&mut self) {
        self.issued = 0;
        self.next_file = 0;
        self.rng = self.seed;
        self.seq_pos = self.files.iter().map(|f| f.offset).collect();
        self.maps = self
            .files
            .iter()
            .map(|f| vec![0u64; (f.size / self.bs[0].min(self.bs[1])).div_ceil(64) as usize])
            .collect();
    }

    fn rand(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn pick_ddir(&mut self) -> Ddir {
        match self.mode {
            RwMode::Read | RwMode::RandRead => Ddir::Read,
            RwMode::Write | RwMode::RandWrite => Ddir::Write,
            RwMode::Trim | RwMode::RandTrim => Ddir::Trim,
            RwMode::ReadWrite | RwMode::RandRw => {
                if (self.rand() % 100) < self.mix_read as u64 {
                    Ddir::Read
                } else {
                    Ddir::Write
                }
            }
            RwMode::TrimWrite => Ddir::Write,
        }
    }

    pub fn next(&mut self) -> Option<IoReq> {
        if self.issued >= self.budget || self.files.is_empty() {
            return None;
        }
        let ddir = self.pick_ddir();
        let len = self.bs[ddir.index()].min(self.budget - self.issued);
        let fi = self.next_file;
        self.next_file = (self.next_file + 1) % self.files.len();
        let f = self.files[fi];
        let offset = if self.mode.is_random() {
            self.random_offset(fi, len)
        } else {
            let mut o = self.seq_pos[fi];
            if o + len > f.offset + f.size {
                o = f.offset;
            }
            self.seq_pos[fi] = o + len;
            o
        };
        self.issued += len;
        Some(IoReq {
            ddir,
            file: fi as u32,
            offset,
            len,
        })
    }

    fn random_offset(&mut self, fi: usize, len: u64) -> u64 {
        let f = self.files[fi];
        let blocks = (f.size / len).max(1);
        let start = self.rand() % blocks;
        let map = &mut self.maps[fi];
        for k in 0..blocks {
            let b = (start + k) % blocks;
            let (w, bit) = ((b / 64) as usize, b % 64);
            if w < map.len() && map[w] & (1 << bit) == 0 {
                map[w] |= 1 << bit;
                return f.offset + b * len;
            }
        }
        map.iter_mut().for_each(|w| *w = 0);
        f.offset + start * len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::RwSpec;

    #[test]
    fn random_visits_each_block_once() {
        let job = JobSpec {
            rw: RwSpec {
                mode: RwMode::RandRead,
                n: 0,
            },
            ..JobSpec::default()
        };
        let mut g = Gen::new(
            &job,
            &[FileExtent {
                offset: 0,
                size: 64 * 4096,
            }],
            64 * 4096,
        );
        let mut seen: Vec<u64> = std::iter::from_fn(|| g.next()).map(|r| r.offset).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 64);
    }
}
