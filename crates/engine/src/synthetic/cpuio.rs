//! fio's `cpuio` engine: no data moves; every I/O burns CPU, and the job then sleeps (an
//! engine-set thinktime, see [`IoEngine::thinktime`]) so that one CPU is busy `cpuload`
//! percent of the time, as fio's engines/cpu.c. `cpumode=noop` spins for `cpuchunks`
//! microseconds per I/O; `cpumode=qsort` sorts 256 Ki 32-bit integers four ways (ascending,
//! descending, by byte, descending again) and takes the time that took as the next cycle's
//! length. Each I/O counts as 0 bytes (fio's FIO_NOIO); its latency is the burn.

use std::time::{Duration, Instant};

use fiox_job::spec::EngineOptions;

use crate::{EngineError, EngineFlags, IoEngine, IoUnit, Queued};

/// Integers qsort mode sorts (fio's qsort_size: 256 Ki, 1 MiB of data).
const QSORT_LEN: usize = 256 << 10;

pub(crate) struct CpuEngine {
    /// Percent of one CPU, 1..=100.
    load: u32,
    /// Length of a burn cycle (µs); qsort mode replaces it with the measured sort time.
    cycle_us: u64,
    /// qsort mode's data (None: noop mode).
    data: Option<Vec<i32>>,
}

impl CpuEngine {
    pub fn new(o: &EngineOptions) -> Result<CpuEngine, EngineError> {
        if o.cpuload == 0 {
            return Err(EngineError::Option {
                engine: "cpuio",
                option: "cpuload",
                reason: "cpuio needs cpuload= (the percentage of one CPU to burn, 1-100), \
                         as in fio"
                    .into(),
            });
        }
        Ok(CpuEngine {
            load: o.cpuload.min(100),
            cycle_us: o.cpuchunks as u64,
            data: o.cpumode_qsort.then(seeded_data),
        })
    }

    /// Sort the data four ways; the time it took is the new cycle length.
    fn qsort_round(&mut self) {
        let Some(d) = self.data.as_mut() else {
            return;
        };
        let t = Instant::now();
        d.sort_unstable();
        d.sort_unstable_by(|a, b| b.cmp(a));
        bytes_of(d).sort_unstable();
        d.sort_unstable_by(|a, b| b.cmp(a));
        self.cycle_us = t.elapsed().as_micros() as u64;
    }
}

/// fio's start data: Marsaglia's multiply-with-carry generator from fixed seeds, so every
/// run sorts the same numbers.
fn seeded_data() -> Vec<i32> {
    let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
    (0..QSORT_LEN)
        .map(|_| {
            z = 36969u32.wrapping_mul(z & 65535).wrapping_add(z >> 16);
            w = 18000u32.wrapping_mul(w & 65535).wrapping_add(w >> 16);
            (z << 16).wrapping_add(w) as i32
        })
        .collect()
}

/// The integers' bytes, to sort them byte by byte as fio's third pass does.
fn bytes_of(d: &mut [i32]) -> &mut [u8] {
    let len = std::mem::size_of_val(d);
    // SAFETY: u8 has alignment 1 and every bit pattern is a valid u8 and i32; the byte view
    // covers exactly the slice's memory and borrows it mutably for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(d.as_mut_ptr().cast::<u8>(), len) }
}

/// Busy-wait `us` microseconds (fio's usec_spin).
fn spin(us: u64) {
    let end = Instant::now() + Duration::from_micros(us);
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

impl IoEngine for CpuEngine {
    fn name(&self) -> &'static str {
        "cpuio"
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags::no_data(fiox_job::Engine::Cpuio)
    }

    crate::ignores_files!();

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        if self.data.is_some() {
            self.qsort_round();
        } else {
            spin(self.cycle_us);
        }
        Ok(Queued::Done(io.len() as i64))
    }

    fn thinktime(&self) -> Option<Duration> {
        let l = self.load as u64;
        Some(Duration::from_micros(self.cycle_us * (100 - l) / l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IoOp;

    fn opts(load: u32, chunks: u32, qsort: bool) -> EngineOptions {
        EngineOptions {
            cpuload: load,
            cpuchunks: chunks,
            cpumode_qsort: qsort,
            ..EngineOptions::default()
        }
    }

    #[test]
    fn cpuload_is_required_and_capped() {
        let e = CpuEngine::new(&opts(0, 1000, false))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cpuload="), "{e}");
        let e = CpuEngine::new(&opts(250, 1000, false)).unwrap();
        assert_eq!(
            e.thinktime(),
            Some(Duration::ZERO),
            "over 100 is 100: no sleep"
        );
    }

    #[test]
    fn the_sleep_makes_the_load() {
        let e = CpuEngine::new(&opts(25, 1000, false)).unwrap();
        assert_eq!(e.thinktime(), Some(Duration::from_micros(3000)));
        assert!(e.flags().zero_bytes && e.flags().no_io && e.flags().sync);
    }

    #[test]
    fn qsort_sorts_and_times_itself() {
        let mut e = CpuEngine::new(&opts(50, 1, true)).unwrap();
        let io = IoUnit::range(IoOp::Read, 0, 0, 4096);
        assert_eq!(e.queue(0, &io).unwrap(), Queued::Done(4096));
        let d = e.data.as_ref().unwrap();
        assert_eq!(d.len(), QSORT_LEN);
        assert!(d.windows(2).all(|w| w[0] >= w[1]), "ends sorted descending");
        let t = e.thinktime().unwrap();
        assert_eq!(t, Duration::from_micros(e.cycle_us), "50%: sleep = burn");
    }
}
