//! Write-buffer contents: filled once before the job (so the hot path never allocates) and, with
//! `refill_buffers`, refilled per write. Honours `zero_buffers` and `buffer_pattern`; otherwise
//! the data is pseudo-random (incompressible), as fio's default.

use fiox_engine::BufPool;
use fiox_job::JobSpec;

/// Fill every slot of `pool` for the job's first writes.
pub fn fill_initial(pool: &mut BufPool, job: &JobSpec) {
    for i in 0..pool.len() {
        let buf = pool.slice_mut(i);
        fill(buf, job, i as u64 + 1);
    }
}

fn fill(buf: &mut [u8], job: &JobSpec, seed: u64) {
    let b = &job.buffers;
    if b.zero_buffers {
        buf.fill(0);
    } else if !b.pattern.is_empty() {
        for (d, s) in buf.iter_mut().zip(b.pattern.iter().cycle()) {
            *d = *s;
        }
    } else {
        random_fill(buf, seed ^ job.rand.randseed);
    }
}

/// Refill the first `len` bytes of a write buffer with fresh random data (`refill_buffers`).
pub fn refill(buf: &mut [u8], len: usize, seq: u64) {
    let n = len.min(buf.len());
    random_fill(&mut buf[..n], seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
}

fn random_fill(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bytes = x.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_and_pattern_and_random() {
        let mut pool = BufPool::new(2, 4096, 4096).unwrap();
        let mut j = JobSpec::default();
        j.buffers.zero_buffers = true;
        fill_initial(&mut pool, &j);
        assert!(pool.slice(0).iter().all(|&b| b == 0));
        j.buffers.zero_buffers = false;
        j.buffers.pattern = vec![0xab, 0xcd];
        fill_initial(&mut pool, &j);
        assert_eq!(&pool.slice(1)[..4], &[0xab, 0xcd, 0xab, 0xcd]);
        j.buffers.pattern.clear();
        fill_initial(&mut pool, &j);
        assert_ne!(pool.slice(0), pool.slice(1));
    }
}
