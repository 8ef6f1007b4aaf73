//! CPU usage of the calling thread (`getrusage(RUSAGE_THREAD)`): what fio prints as
//! `cpu : usr=, sys=, ctx=, majf=, minf=`. A job thread samples [`ThreadUsage::now`] when it
//! starts measuring and again at its end; [`ThreadUsage::since`] gives the delta and
//! [`ThreadUsage::apply`] writes it into the job's result.
//!
//! Also the log compression thread's CPU pinning ([`set_affinity`]).
//!
//! This is the only module of the crate with `unsafe` (FFI calls).
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

    /// Totals of another thread of this process (`tid` from gettid), read from
    /// `/proc/self/task/<tid>`: engines' helper threads (guasi workers, offload submit threads)
    /// whose CPU counts as the job's. The total CPU time is exact (schedstat, ns); the usr/sys
    /// split follows the tick-granular utime/stime ratio of `stat`.
    pub fn of_task(tid: i32) -> io::Result<ThreadUsage> {
        let dir = format!("/proc/self/task/{tid}");
        let stat = std::fs::read_to_string(format!("{dir}/stat"))?;
        let status = std::fs::read_to_string(format!("{dir}/status"))?;
        let total_ns = std::fs::read_to_string(format!("{dir}/schedstat"))
            .ok()
            .and_then(|t| t.split_whitespace().next()?.parse::<u64>().ok());
        parse_task(&stat, &status, total_ns).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{dir}/stat: unexpected format"),
            )
        })
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

/// Clock ticks per second of /proc's utime/stime.
fn ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

/// Usage from a task's `stat` and `status` texts; `total_ns` (schedstat) refines the total.
fn parse_task(stat: &str, status: &str, total_ns: Option<u64>) -> Option<ThreadUsage> {
    // Fields after the command name, which may itself contain spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i)?.parse::<u64>().ok();
    let (minf, majf, utime, stime) = (num(7)?, num(9)?, num(11)?, num(12)?);
    let tick_us = 1_000_000 / ticks_per_sec();
    let (mut usr_us, mut sys_us) = (utime * tick_us, stime * tick_us);
    if let Some(ns) = total_ns {
        let total_us = ns / 1000;
        let ticks = utime + stime;
        // Split the exact total in the ticks' proportion (all sys before the first tick:
        // helper threads spend their time in syscalls).
        usr_us = (total_us * utime).checked_div(ticks).unwrap_or(0);
        sys_us = total_us - usr_us;
    }
    let field = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].trim().parse().ok()
    };
    let ctx = field("voluntary_ctxt_switches:")? + field("nonvoluntary_ctxt_switches:")?;
    Some(ThreadUsage {
        usr_us,
        sys_us,
        ctx,
        majf,
        minf,
    })
}

/// Restrict the calling thread to `cpus` (the log compression thread's
/// `log_compression_cpus`).
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {c} is beyond the largest CPU number this system can address"),
            ));
        }
        // SAFETY: c < CPU_SETSIZE was checked above, so the bit lies inside `set`.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: set is a valid, initialised cpu_set_t and we pass its exact size; pid 0 = caller.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
    fn another_threads_usage_comes_from_proc() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let burner = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tx.send(unsafe { libc::gettid() }).unwrap();
            let start = ThreadUsage::now().unwrap();
            let mut x = 0u64;
            while ThreadUsage::now().unwrap().since(&start).usr_us
                + ThreadUsage::now().unwrap().since(&start).sys_us
                < 30_000
            {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
            let own = ThreadUsage::now().unwrap();
            done_rx.recv().unwrap();
            own
        });
        let tid = rx.recv().unwrap();
        // Wait until the burner has burnt its 30 ms, then read it from outside.
        let mut seen = ThreadUsage::default();
        for _ in 0..2000 {
            seen = ThreadUsage::of_task(tid).unwrap();
            if seen.usr_us + seen.sys_us >= 30_000 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        done_tx.send(()).unwrap();
        let own = burner.join().unwrap();
        let (a, b) = (seen.usr_us + seen.sys_us, own.usr_us + own.sys_us);
        assert!(a >= 30_000, "{seen:?}");
        // Both views of the same thread agree within a tick or two.
        assert!(a.abs_diff(b) <= 25_000, "proc {seen:?} vs rusage {own:?}");
        assert!(ThreadUsage::of_task(-5).is_err());
    }

    #[test]
    fn task_stat_parsing_survives_odd_names_and_splits_the_exact_total() {
        let stat = "42 (a (b) c) S 1 2 3 4 5 6 11 0 13 0 30 10 0 0 20 0 1 0 5 0 0";
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t3\n";
        let u = parse_task(stat, status, Some(8_000_000_000)).unwrap();
        assert_eq!((u.minf, u.majf, u.ctx), (11, 13, 10));
        assert_eq!((u.usr_us, u.sys_us), (6_000_000, 2_000_000));
        let coarse = parse_task(stat, status, None).unwrap();
        assert_eq!(coarse.usr_us, 30 * (1_000_000 / ticks_per_sec()));
        assert!(parse_task("garbage", status, None).is_none());
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
