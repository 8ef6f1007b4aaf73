//! The per-I/O clock. `clock_gettime` through the vDSO costs about 95 ns on this project's VMs,
//! more than the null engine's whole I/O; like fio's `clocksource=cpu`, fiox reads the TSC
//! directly when it is invariant (`constant_tsc`, `nonstop_tsc`) and the kernel itself trusts
//! it (current clocksource `tsc`: synchronised across CPUs), calibrated once against
//! `CLOCK_MONOTONIC`. Otherwise, and on other architectures, it uses `Instant`; a job that
//! asked for `clocksource=cpu` then gets a warning saying why ([`tsc_distrust`]).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Nanoseconds per TSC tick, measured once per process (None: TSC not usable).
static TSC_NS_PER_TICK: OnceLock<Option<f64>> = OnceLock::new();

/// Why the TSC cannot be trusted as a clock here, or None when it can: the CPU must report an
/// invariant TSC (`constant_tsc`: fixed rate whatever the frequency; `nonstop_tsc`: keeps
/// counting in deep C-states) and the kernel must use it as its clocksource (it switches away
/// when it finds the TSCs of different CPUs unsynchronised). `cpuinfo` is /proc/cpuinfo's text,
/// `clocksource` the current clocksource's name.
pub fn tsc_distrust(cpuinfo: &str, clocksource: &str) -> Option<String> {
    if !cfg!(target_arch = "x86_64") {
        return Some("the CPU has no TSC (not x86_64)".into());
    }
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map_or("", |(_, f)| f);
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    let missing: Vec<&str> = ["constant_tsc", "nonstop_tsc"]
        .into_iter()
        .filter(|f| !has(f))
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "the CPU does not report an invariant TSC (no {} in /proc/cpuinfo)",
            missing.join(", ")
        ));
    }
    let cs = clocksource.trim();
    if cs != "tsc" {
        return Some(format!(
            "the kernel's clocksource is '{cs}', not 'tsc' (it does not trust the TSC as \
             synchronised across CPUs)"
        ));
    }
    None
}

/// [`tsc_distrust`] for this machine, read once per process.
pub fn tsc_distrust_here() -> Option<String> {
    static WHY: OnceLock<Option<String>> = OnceLock::new();
    WHY.get_or_init(|| {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cs = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .unwrap_or_else(|_| "unknown".into());
        tsc_distrust(&cpuinfo, &cs)
    })
    .clone()
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86_64 (every x86_64 CPU implements it); it only
    // reads the time-stamp counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn rdtsc() -> u64 {
    0
}

/// The monotonic clock and the TSC read at (nearly) one moment: of a few tries, the reading
/// of the clock bracketed most tightly by two TSC reads, paired with their midpoint. A
/// thread preempted between its clock and TSC reads would otherwise skew the rate (a 1.3 ms
/// preemption in a 20 ms calibration is 6% on every latency reported).
fn paired_reading() -> (Instant, u64) {
    let mut best = (Instant::now(), rdtsc(), u64::MAX);
    for _ in 0..8 {
        let before = rdtsc();
        let t = Instant::now();
        let after = rdtsc();
        let span = after.wrapping_sub(before);
        if span < best.2 {
            best = (t, before + span / 2, span);
        }
    }
    (best.0, best.1)
}

/// Measure the TSC rate against the monotonic clock over ~20 ms.
fn calibrate() -> Option<f64> {
    if tsc_distrust_here().is_some() {
        return None;
    }
    let (t0, c0) = paired_reading();
    std::thread::sleep(Duration::from_millis(20));
    let (t1, c1) = paired_reading();
    let ticks = c1.checked_sub(c0)?;
    if ticks == 0 {
        return None;
    }
    // fio's last calibration line: the counter where the clock starts.
    crate::dprint!(crate::debug::TIME, "cycles_start={c1}");
    Some((t1 - t0).as_nanos() as f64 / ticks as f64)
}

/// A [`Clock`] that reads the TSC: its start and ns per tick (32.32 fixed point).
#[derive(Debug, Clone, Copy)]
pub struct Tsc {
    base: u64,
    mult: u64,
}

impl Tsc {
    /// Nanoseconds since the clock started, as [`Clock::now_ns`].
    #[inline(always)]
    pub fn now_ns(self) -> u64 {
        ((rdtsc().wrapping_sub(self.base) as u128 * self.mult as u128) >> 32) as u64
    }
}

/// A monotonic nanosecond clock starting at zero when created.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    base: Instant,
    /// TSC at start and ns per tick as 32.32 fixed point (one integer multiply per read).
    tsc: Option<(u64, u64)>,
    /// `clocksource=gettimeofday`: the wall clock in whole µs at start.
    gtod_us: Option<u64>,
    /// `gtod_cpu`: that wall clock is read from the gtod thread's shared word.
    shared: bool,
}

/// The wall clock in whole microseconds (gettimeofday's resolution).
fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Clock {
    /// Start a clock now; `use_tsc` false forces `Instant` (tests, comparisons).
    pub fn start(use_tsc: bool) -> Clock {
        let rate = if use_tsc {
            *TSC_NS_PER_TICK.get_or_init(calibrate)
        } else {
            None
        };
        Clock {
            base: Instant::now(),
            tsc: rate.map(|r| (rdtsc(), (r * (1u64 << 32) as f64) as u64)),
            gtod_us: None,
            shared: false,
        }
    }

    /// The clock a job's `clocksource` asks for (None: fio's default, see [`Clock::start`]).
    pub fn for_source(src: Option<fiox_job::ClockSource>) -> Clock {
        use fiox_job::ClockSource as S;
        let clock = Self::for_source_quiet(src);
        // fio's `gettime: clocksource=N` (1 gettimeofday, 2 clock_gettime, 3 cpu), once.
        static SAID: std::sync::Once = std::sync::Once::new();
        if crate::debug::on(crate::debug::TIME) {
            SAID.call_once(|| {
                let n = match src {
                    Some(S::Gettimeofday) => 1,
                    _ if clock.tsc.is_some() => 3,
                    _ => 2,
                };
                crate::debug::log(crate::debug::TIME, format_args!("gettime: clocksource={n}"));
            });
        }
        clock
    }

    fn for_source_quiet(src: Option<fiox_job::ClockSource>) -> Clock {
        use fiox_job::ClockSource as S;
        if crate::io::gtod::active() {
            // gtod_cpu: every job copies the gtod thread's time, whatever its clocksource.
            return Clock {
                gtod_us: Some(crate::io::gtod::now_us()),
                shared: true,
                ..Clock::start(false)
            };
        }
        match src {
            None | Some(S::Cpu) => Clock::start(true),
            Some(S::ClockGettime) => Clock::start(false),
            Some(S::Gettimeofday) => Clock {
                gtod_us: Some(wall_us()),
                ..Clock::start(false)
            },
        }
    }

    /// Start again from zero now, from the same source (a job's clock is built with its
    /// loop, before the common start; its times count from the start).
    pub fn restart(&mut self) {
        self.base = Instant::now();
        if let Some((base, _)) = self.tsc.as_mut() {
            *base = rdtsc();
        }
        if let Some(us) = self.gtod_us.as_mut() {
            *us = if self.shared {
                crate::io::gtod::now_us()
            } else {
                wall_us()
            };
        }
    }

    /// Whether the TSC is read.
    #[cfg(test)]
    pub fn uses_tsc(&self) -> bool {
        self.tsc.is_some()
    }

    /// The TSC reading of this clock, when it reads the TSC: a loop that reads the clock
    /// per I/O takes it once, and its per-I/O code has no choice of clock in it.
    #[inline(always)]
    pub fn tsc(&self) -> Option<Tsc> {
        self.tsc.map(|(base, mult)| Tsc { base, mult })
    }

    /// Nanoseconds since the clock started.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        // The TSC first: the default clock, and never set together with a wall clock.
        if let Some(t) = self.tsc() {
            return t.now_ns();
        }
        if let Some(base) = self.gtod_us {
            let now = if self.shared {
                crate::io::gtod::now_us()
            } else {
                wall_us()
            };
            // A wall clock may step back: never before the start.
            return now.saturating_sub(base) * 1000;
        }
        self.base.elapsed().as_nanos() as u64
    }

    /// The clock never goes back (TSC or `Instant`); a wall clock (gettimeofday) may step back.
    #[inline]
    pub fn steady(&self) -> bool {
        self.gtod_us.is_none()
    }

    /// The `Instant` corresponding to `ns` on this clock (for sleeping until then).
    pub fn instant_at(&self, ns: u64) -> Instant {
        // A thinktime of centuries would overflow Instant: a year is as good as forever here.
        let far = Duration::from_secs(365 * 24 * 3600);
        self.base
            .checked_add(Duration::from_nanos(ns).min(far))
            .unwrap_or(self.base + far)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over 100 ms the TSC clock and Instant agree within 1% (the calibration's rate); of
    /// three tries the closest counts, since a preemption between the two clocks' starts or
    /// reads adds its own time to one try's gap.
    /// A restarted clock counts from zero again, whatever its source.
    #[test]
    fn restart_counts_from_zero_again() {
        for mut c in [
            Clock::start(true),
            Clock::start(false),
            Clock::for_source_quiet(Some(fiox_job::ClockSource::Gettimeofday)),
        ] {
            std::thread::sleep(Duration::from_millis(30));
            assert!(c.now_ns() >= 20_000_000, "{c:?}");
            c.restart();
            assert!(
                c.now_ns() < 20_000_000,
                "{c:?} after restart: {}",
                c.now_ns()
            );
        }
    }

    #[test]
    fn tsc_and_instant_agree() {
        let gap = || {
            let a = Clock::start(true);
            let b = Clock::start(false);
            std::thread::sleep(Duration::from_millis(100));
            let (x, y) = (a.now_ns(), b.now_ns());
            assert!(x >= 100_000_000 && y >= 100_000_000, "{x} {y}");
            x.abs_diff(y)
        };
        let best = (0..3).map(|_| gap()).min().unwrap();
        assert!(
            best < 1_000_000,
            "tsc and instant {best} ns apart after 100 ms"
        );
    }

    #[test]
    fn sources() {
        use fiox_job::ClockSource as S;
        assert!(!Clock::for_source(Some(S::ClockGettime)).uses_tsc());
        let g = Clock::for_source(Some(S::Gettimeofday));
        std::thread::sleep(Duration::from_millis(5));
        let n = g.now_ns();
        assert!(
            n >= 4_000_000 && n.is_multiple_of(1000),
            "{n}: whole microseconds"
        );
        assert_eq!(
            Clock::for_source(Some(S::Cpu)).uses_tsc(),
            Clock::start(true).uses_tsc()
        );
    }

    #[test]
    fn tsc_trust_needs_invariant_flags_and_the_kernels_tsc_clocksource() {
        let good = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rdtscp nonstop_tsc\n";
        if !cfg!(target_arch = "x86_64") {
            assert!(tsc_distrust(good, "tsc").is_some());
            return;
        }
        assert_eq!(tsc_distrust(good, "tsc\n"), None);
        let why = tsc_distrust(good, "hpet\n").unwrap();
        assert!(why.contains("'hpet'"), "{why}");
        let why = tsc_distrust("flags\t: fpu tsc constant_tsc\n", "tsc").unwrap();
        assert!(
            why.contains("nonstop_tsc") && !why.contains("constant_tsc"),
            "{why}"
        );
        let why = tsc_distrust("flags\t: fpu tsc\n", "tsc").unwrap();
        assert!(why.contains("constant_tsc, nonstop_tsc"), "{why}");
        // A flag name inside another must not count (`tsc` is not `constant_tsc`).
        assert!(tsc_distrust("flags\t: xconstant_tsc nonstop_tscx\n", "tsc").is_some());
    }

    #[test]
    fn monotonic() {
        let c = Clock::start(true);
        let mut last = 0;
        for _ in 0..10_000 {
            let n = c.now_ns();
            assert!(n >= last);
            last = n;
        }
    }
}
