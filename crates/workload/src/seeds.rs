//! Per-job seed derivation, as fio 3.33 does it: one 64-bit seed per random stream (block sizes,
//! mix, offsets, file choice, buffers ...), derived from `randseed` and the job's 1-based thread
//! number, with `randrepeat=1` pinning the offset stream to a fixed constant times the thread
//! number. Keeping the streams separate means changing `bs` does not change the mix sequence.

/// fio's fixed seed for repeatable offset streams (`FIO_RANDSEED`).
pub const FIO_RANDSEED: u64 = 0xb189_9bed;

/// fio's seed spreading multiplier.
const SPREAD: u64 = 0x9e37_0001;

/// The independent random streams of one job (fio's `FIO_RAND_*_OFF` order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    BsRead = 0,
    BsWrite,
    BsTrim,
    Verify,
    Mix,
    File,
    Block,
    FileSize,
    Trim,
    Buf,
    SeqRandRead,
    SeqRandWrite,
    SeqRandTrim,
    StartDelay,
    Dedupe,
    Poisson,
    Zone,
    Poisson2,
    Poisson3,
    PrioCmds,
    DedupeWorkingSet,
}

/// Number of streams.
pub const NR_STREAMS: usize = 21;

/// The seeds of every stream of one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seeds {
    seeds: [u64; NR_STREAMS],
}

impl Seeds {
    /// Derive the seeds of job number `thread_number` (1-based, counting every job and clone
    /// of the run, as fio's `td->thread_number`) from `randseed`.
    ///
    /// With `randrepeat=1` and a random workload, fio replaces the offset stream's seed with
    /// `FIO_RANDSEED * thread_number` (so `randseed` then does not move offsets; it does move
    /// the mix, block size and buffer streams). With `randrepeat=0` and no explicit `randseed`,
    /// fio seeds from the OS; the caller passes a time- or entropy-derived value as `randseed`
    /// in that case (this crate never reads clocks).
    pub fn derive(randseed: u64, thread_number: u32, randrepeat: bool, random: bool) -> Seeds {
        let tn = thread_number as u64;
        let mut seed = randseed;
        for _ in 0..4 {
            seed = seed.wrapping_mul(SPREAD);
        }
        let mut seeds = [0u64; NR_STREAMS];
        for (i, s) in seeds.iter_mut().enumerate() {
            *s = seed.wrapping_mul(tn).wrapping_add(i as u64);
            seed = seed.wrapping_mul(SPREAD);
        }
        if randrepeat && random {
            seeds[Stream::Block as usize] = FIO_RANDSEED.wrapping_mul(tn);
        }
        Seeds { seeds }
    }

    pub fn get(&self, s: Stream) -> u64 {
        self.seeds[s as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeatable_offsets_ignore_randseed_but_other_streams_do_not() {
        let a = Seeds::derive(0x89, 1, true, true);
        let b = Seeds::derive(42, 1, true, true);
        assert_eq!(a.get(Stream::Block), b.get(Stream::Block));
        assert_eq!(a.get(Stream::Block), FIO_RANDSEED);
        assert_ne!(a.get(Stream::Mix), b.get(Stream::Mix));
    }

    #[test]
    fn thread_number_changes_every_stream() {
        let a = Seeds::derive(0x89, 1, false, true);
        let b = Seeds::derive(0x89, 2, false, true);
        for i in 0..NR_STREAMS {
            assert_ne!(a.seeds[i], b.seeds[i]);
        }
    }
}
