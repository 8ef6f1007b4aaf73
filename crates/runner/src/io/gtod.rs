//! `gtod_cpu`, as fio's gettime-thread.c: one thread, pinned to that CPU, does nothing but
//! read the wall clock (µs, gettimeofday's resolution) into a shared word while the run lasts,
//! and every job's clock reads that word instead of asking the kernel. Jobs that name the CPU
//! leave it out of their `cpus_allowed` set.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The wall clock in µs as the gtod thread last read it; 0 while no thread runs.
static NOW_US: AtomicU64 = AtomicU64::new(0);

fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Whether a gtod thread is running (clocks made now read it).
pub(crate) fn active() -> bool {
    NOW_US.load(Ordering::Relaxed) != 0
}

/// The shared time in µs.
#[inline(always)]
pub(crate) fn now_us() -> u64 {
    NOW_US.load(Ordering::Relaxed)
}

/// The running gtod thread.
pub(crate) struct Gtod {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Start the thread on `cpu`. A thread that cannot be pinned still keeps the time (fio's
/// stops; the run then reads a clock that never moves), and says so in the returned warning.
pub(crate) fn start(cpu: u32) -> std::io::Result<(Gtod, Option<String>)> {
    NOW_US.store(wall_us(), Ordering::Relaxed);
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("fiox-gtod".into())
        .spawn(move || {
            let placed = crate::sys::set_affinity(&[cpu as usize]);
            let _ = tx.send(placed.err().map(|e| e.to_string()));
            while !s.load(Ordering::Relaxed) {
                NOW_US.store(wall_us(), Ordering::Relaxed);
                std::hint::spin_loop();
            }
        });
    let thread = match thread {
        Ok(t) => t,
        Err(e) => {
            NOW_US.store(0, Ordering::Relaxed);
            return Err(e);
        }
    };
    let warn = rx
        .recv()
        .ok()
        .flatten()
        .map(|e| format!("gtod_cpu={cpu}: the time thread cannot run on that CPU ({e})"));
    Ok((
        Gtod {
            stop,
            thread: Some(thread),
        },
        warn,
    ))
}

impl Drop for Gtod {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        NOW_US.store(0, Ordering::Relaxed);
    }
}

/// fio clears the gtod CPU from the mask of a job that names it (CPU 0 excepted: fio tests the
/// option's value for truth).
pub(crate) fn exclude(cpus: Vec<usize>, gtod_cpu: Option<u32>) -> Vec<usize> {
    match gtod_cpu {
        Some(c) if c != 0 => cpus.into_iter().filter(|&x| x != c as usize).collect(),
        _ => cpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gtod_cpu_leaves_the_job_set() {
        assert_eq!(exclude(vec![0, 1, 2], Some(1)), [0, 2]);
        assert_eq!(exclude(vec![0, 1], Some(0)), [0, 1]);
        assert_eq!(exclude(vec![0, 1], None), [0, 1]);
    }
}
