//! fio's idle profiling (`--idle-prof`, idletime.c): one thread per configured CPU, pinned
//! to it, times a unit of work (writing a page byte by byte) at full speed, then switches to
//! SCHED_IDLE and repeats the work until the jobs are done. The work it got done, against its
//! calibrated speed, is how idle the CPU was. Nothing here touches the jobs' I/O path.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fiox_job::IdleProfMode;
use fiox_stats::model::IdleResult;

const PAGE: usize = 4096;
/// fio's CALIBRATE_RUNS and CALIBRATE_SCALE: the best of 10 runs of 1000 units.
const RUNS: usize = 10;
const SCALE: usize = 1000;

/// What one thread measured: its calibrated time per unit (µs), the units done while
/// profiling and for how long, or None when it could not be placed (fio aborts then).
struct ThreadOut {
    unit_us: f64,
    loops: f64,
    run: Duration,
}

/// The running profiler: its threads calibrate, wait for `state` to leave CALIBRATING, then
/// work until `stop`.
pub struct IdleProf {
    mode: IdleProfMode,
    stop: Arc<AtomicBool>,
    /// Threads done calibrating.
    ready: Arc<AtomicUsize>,
    state: Arc<AtomicU8>,
    threads: Vec<JoinHandle<Option<ThreadOut>>>,
}

/// `state` values: calibrating, profiling, calibration only (no profiling), aborted (a thread
/// could not be placed: fio then reports zeros).
const CALIBRATING: u8 = 0;
const PROFILING: u8 = 1;
const CALIBRATED: u8 = 2;
const ABORTED: u8 = 3;

/// One unit of fio's work: the page written byte by byte from offset `j`; false when told to
/// stop part-way (the part done is returned in `done`).
#[inline(never)]
fn unit(data: &mut [u8; PAGE], j: usize, stop: &AtomicBool, done: &mut usize) -> bool {
    for k in 0..PAGE {
        data[(k + j) % PAGE] = (k % 256) as u8;
        // Read every byte, as fio's loop reads its status word: the same work calibrated
        // and measured.
        if stop.load(Ordering::Relaxed) {
            *done = k;
            return false;
        }
    }
    true
}

/// fio's calibrate_unit: the smallest time of `RUNS` runs of `SCALE` units, per unit, in µs.
fn calibrate(data: &mut [u8; PAGE], stop: &AtomicBool) -> f64 {
    let mut best = f64::MAX;
    let mut done = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        for j in 0..SCALE {
            unit(data, j, stop, &mut done);
        }
        let us = t.elapsed().as_secs_f64() * 1e6;
        if us > 0.0 {
            best = best.min(us);
        }
    }
    if best == f64::MAX {
        0.0
    } else {
        best / SCALE as f64
    }
}

fn thread_body(
    cpu: usize,
    stop: &AtomicBool,
    ready: &AtomicUsize,
    state: &AtomicU8,
) -> Option<ThreadOut> {
    let placed = crate::sys::set_affinity(&[cpu]).is_ok();
    let mut data = Box::new([0u8; PAGE]);
    // Calibration is never cut short (fio's stop status is not set while it runs).
    let unit_us = if placed {
        calibrate(&mut data, &AtomicBool::new(false))
    } else {
        0.0
    };
    // Only now the idle class, so calibration ran at full speed (as fio).
    if !placed || crate::sys::set_sched_idle().is_err() {
        state.store(ABORTED, Ordering::SeqCst);
    }
    ready.fetch_add(1, Ordering::SeqCst);
    while state.load(Ordering::SeqCst) == CALIBRATING {
        std::thread::sleep(Duration::from_millis(1));
    }
    match state.load(Ordering::SeqCst) {
        ABORTED => return None,
        CALIBRATED => {
            return Some(ThreadOut {
                unit_us,
                loops: 0.0,
                run: Duration::ZERO,
            })
        }
        _ => {}
    }
    let t0 = Instant::now();
    let (mut j, mut done) = (0usize, 0usize);
    while unit(&mut data, j, stop, &mut done) {
        j += 1;
    }
    Some(ThreadOut {
        unit_us,
        loops: j as f64 + done as f64 / PAGE as f64,
        run: t0.elapsed(),
    })
}

impl IdleProf {
    /// Start a thread per configured CPU; returns once all have calibrated, so profiling
    /// starts with the jobs. None when a thread cannot be started.
    pub fn start(mode: IdleProfMode) -> std::io::Result<IdleProf> {
        let n = crate::sys::cpus_configured();
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(AtomicUsize::new(0));
        let state = Arc::new(AtomicU8::new(CALIBRATING));
        let mut p = IdleProf {
            mode,
            stop,
            ready,
            state,
            threads: Vec::with_capacity(n),
        };
        for cpu in 0..n {
            let (stop, ready, state) = (p.stop.clone(), p.ready.clone(), p.state.clone());
            let h = std::thread::Builder::new()
                .name(format!("fiox-idle-{cpu}"))
                .spawn(move || thread_body(cpu, &stop, &ready, &state));
            match h {
                Ok(h) => p.threads.push(h),
                Err(e) => {
                    // The started ones end at once.
                    p.state.store(ABORTED, Ordering::SeqCst);
                    p.stop.store(true, Ordering::SeqCst);
                    for h in p.threads {
                        let _ = h.join();
                    }
                    return Err(e);
                }
            }
        }
        // All calibrated before the jobs start (fio waits the same way).
        while p.ready.load(Ordering::SeqCst) < n {
            std::thread::sleep(Duration::from_millis(1));
        }
        let next = if mode == IdleProfMode::Calibrate {
            CALIBRATED
        } else {
            PROFILING
        };
        let _ = p
            .state
            .compare_exchange(CALIBRATING, next, Ordering::SeqCst, Ordering::SeqCst);
        Ok(p)
    }

    /// Stop the threads and compute fio's numbers (all zero when a thread failed).
    pub fn finish(self) -> IdleResult {
        self.stop.store(true, Ordering::SeqCst);
        let outs: Vec<Option<ThreadOut>> = self
            .threads
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect();
        let failed = self.state.load(Ordering::SeqCst) == ABORTED;
        let units: Vec<f64> = outs.iter().flatten().map(|o| o.unit_us).collect();
        let (mean, stddev) = if failed || units.len() != outs.len() {
            (0.0, 0.0)
        } else {
            mean_stddev(&units)
        };
        let percpu: Vec<f64> = outs
            .iter()
            .map(|o| match o {
                Some(o) if mean != 0.0 && !o.run.is_zero() => {
                    o.loops * mean / (o.run.as_secs_f64() * 1e6) * 100.0
                }
                _ => 0.0,
            })
            .collect();
        let system = if percpu.is_empty() {
            0.0
        } else {
            percpu.iter().sum::<f64>() / percpu.len() as f64
        };
        IdleResult {
            percpu_shown: self.mode == IdleProfMode::Percpu,
            calibrate_only: self.mode == IdleProfMode::Calibrate,
            system,
            percpu,
            unit_mean: mean,
            unit_stddev: stddev,
        }
    }
}

/// fio's calibration_stats: the mean and the sample standard deviation (n - 1; NaN for one
/// CPU, as fio prints it).
fn mean_stddev(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
    (mean, (var / (n - 1.0)).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_fios() {
        let (m, s) = mean_stddev(&[10.0, 14.0]);
        assert_eq!(m, 12.0);
        assert!((s - 2.828_427).abs() < 1e-6, "{s}");
        assert!(mean_stddev(&[3.0]).1.is_nan());
    }

    #[test]
    fn calibration_measures_a_unit() {
        let p = IdleProf::start(IdleProfMode::Calibrate).unwrap();
        let r = p.finish();
        assert!(r.calibrate_only);
        assert_eq!(r.percpu.len(), crate::sys::cpus_configured());
        assert!(r.unit_mean > 0.0, "{r:?}");
    }
}
