//! CPU usage of the calling thread (`getrusage(RUSAGE_THREAD)`): what fio prints as
//! `cpu : usr=, sys=, ctx=, majf=, minf=`. A job thread samples [`ThreadUsage::now`] when it
//! starts measuring and again at its end; [`ThreadUsage::since`] gives the delta and
//! [`ThreadUsage::apply`] writes it into the job's result.
//!
//! This is the only module of the crate with `unsafe` (one FFI call).
#![allow(unsafe_code)]

use crate::model::JobResult;
use std::io;

/// Resource usage of one thread: cpu time in microseconds and event counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadUsage {
    pub usr_us: u64,
    pub sys_us: u64,
    /// Voluntary plus involuntary context switches.
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

fn timeval_us(tv: libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64) * 1_000_000 + tv.tv_usec.max(0) as u64
}

fn counter(v: libc::c_long) -> u64 {
    v.max(0) as u64
}

impl ThreadUsage {
    /// Totals of the calling thread since it started.
    pub fn now() -> io::Result<ThreadUsage> {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` is a valid, writable rusage (zeroed is a valid bit pattern for this
        // plain-data struct); getrusage writes only into it and returns -1 on error.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: zero-initialised above and filled by a successful getrusage.
        let ru = unsafe { ru.assume_init() };
        Ok(ThreadUsage {
            usr_us: timeval_us(ru.ru_utime),
            sys_us: timeval_us(ru.ru_stime),
            ctx: counter(ru.ru_nvcsw) + counter(ru.ru_nivcsw),
            majf: counter(ru.ru_majflt),
            minf: counter(ru.ru_minflt),
        })
    }

    /// What accumulated between `earlier` and `self` (never negative).
    pub fn since(&self, earlier: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            usr_us: self.usr_us.saturating_sub(earlier.usr_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
            ctx: self.ctx.saturating_sub(earlier.ctx),
            majf: self.majf.saturating_sub(earlier.majf),
            minf: self.minf.saturating_sub(earlier.minf),
        }
    }

    /// Add another thread's usage (a job served by several threads).
    pub fn add(&mut self, o: &ThreadUsage) {
        self.usr_us += o.usr_us;
        self.sys_us += o.sys_us;
        self.ctx += o.ctx;
        self.majf += o.majf;
        self.minf += o.minf;
    }

    /// Fill the job's cpu fields. Percentages are cpu time over `job.runtime_ms` (fio's
    /// `usr_time * 100 / total_run_time`; fio truncates cpu time to whole ms, here it is exact
    /// to the microsecond), 0 when the runtime is 0. Set `runtime_ms` first.
    pub fn apply(&self, job: &mut JobResult) {
        let (usr, sys) = self.percent_of(job.runtime_ms);
        job.usr_cpu_pct = usr;
        job.sys_cpu_pct = sys;
        job.ctx = self.ctx;
        job.majf = self.majf;
        job.minf = self.minf;
    }

    /// (usr %, sys %) of a runtime in ms.
    pub fn percent_of(&self, runtime_ms: u64) -> (f64, f64) {
        if runtime_ms == 0 {
            return (0.0, 0.0);
        }
        let rt_us = runtime_ms as f64 * 1000.0;
        (
            self.usr_us as f64 * 100.0 / rt_us,
            self.sys_us as f64 * 100.0 / rt_us,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_this_thread_only() {
        // Burn cpu in a helper thread: its usage must not show up in ours.
        let before = ThreadUsage::now().unwrap();
        let burner = std::thread::spawn(|| {
            let start = ThreadUsage::now().unwrap();
            let mut x = 0u64;
            let mut i = 0u64;
            // Spin until the kernel has charged at least 20 ms of cpu to this thread.
            let cpu = |u: ThreadUsage| u.usr_us + u.sys_us;
            while cpu(ThreadUsage::now().unwrap().since(&start)) < 20_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
                i += 1;
            }
            std::hint::black_box(x);
            ThreadUsage::now().unwrap().since(&start)
        });
        let theirs = burner.join().unwrap();
        let ours = ThreadUsage::now().unwrap().since(&before);
        assert!(theirs.usr_us + theirs.sys_us >= 20_000, "{theirs:?}");
        assert!(
            ours.usr_us + ours.sys_us < theirs.usr_us + theirs.sys_us,
            "ours {ours:?} theirs {theirs:?}"
        );
    }

    #[test]
    fn deltas_and_percentages() {
        let a = ThreadUsage {
            usr_us: 1_000_000,
            sys_us: 500_000,
            ctx: 10,
            majf: 1,
            minf: 100,
        };
        let b = ThreadUsage {
            usr_us: 1_250_000,
            sys_us: 1_500_000,
            ctx: 15,
            majf: 1,
            minf: 130,
        };
        let d = b.since(&a);
        assert_eq!(
            (d.usr_us, d.sys_us, d.ctx, d.majf, d.minf),
            (250_000, 1_000_000, 5, 0, 30)
        );
        assert_eq!(a.since(&b), ThreadUsage::default(), "never negative");
        let mut job = JobResult {
            runtime_ms: 2000,
            ..Default::default()
        };
        d.apply(&mut job);
        assert!((job.usr_cpu_pct - 12.5).abs() < 1e-9);
        assert!((job.sys_cpu_pct - 50.0).abs() < 1e-9);
        assert_eq!((job.ctx, job.minf), (5, 30));
        assert_eq!(d.percent_of(0), (0.0, 0.0));
        let mut sum = d;
        sum.add(&d);
        assert_eq!(sum.ctx, 10);
    }
}
