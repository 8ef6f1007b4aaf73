//! Tracing in windows (sampling in time): the frequent programs (syscalls, context switches,
//! wakeups, block requests: one or more runs per I/O) are attached for a window of W in
//! every period of P and detached in between, so that a run pays their cost W/P of the time;
//! the rare ones (thread creation, io_uring setup: thread discovery must not miss a thread)
//! stay attached. This module owns the window words (layout C_*: mapped here, addressed
//! directly by the programs) and the control thread that opens and closes the windows; the
//! first window opens at start, before the jobs, so that a job shorter than a period is
//! still seen. Nothing pairs across a closed gap: a window's start is written before its
//! programs are attached, and every end the programs (and the marks) see is dropped when its
//! start stamp is older than that (a worker's pending run carries the window's number).
//! A program still running when its link is dropped finishes within its tracepoint call
//! (microseconds): its stamps are older than the next window's start, read P - W later.
//! A thread that gives itself a copy of the file table (a sync job, as fio's job process)
//! would hold the open window's links in it until it ends: [`unshare_files`] closes them in
//! the copy.
//! Windows stretch to the I/Os: an I/O counts only when it starts and ends inside one window,
//! so one of L in a window of W is seen with odds (W - L) / W, and the long ones would be
//! under-sampled. The job threads say the mean latency of their I/Os ([`hint_latency`]) and
//! each window opens at least [`STRETCH`] times the longest such mean long (the period
//! stretched alike, so the traced share and the cost stay the same).

use crate::layout::*;
use crate::{sys, ExplainError};
use serde_json::{json, Value};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A window is at least this many times the jobs' mean I/O latency: an I/O of the mean is then
/// seen with odds 19 in 20, one of five times the mean 3 in 4.
pub const STRETCH: u32 = 20;

/// The longest a window stretches (then an I/O of 500 ms is still seen with odds 19 in 20).
const MAX_WINDOW: Duration = Duration::from_secs(10);

/// The mean I/O latency from which the default sampling traces the rest of the run in full:
/// I/Os this long cost the programs (one to two microseconds each) under 0.2% of their time,
/// so windows save next to nothing, while they lose every I/O that straddles their edges
/// and, in stretched windows of seconds, see too few to measure completion->reaped (seed 000
/// at load 15: 6% of the latency explained in windows, 96% traced in full).
pub const FULL_AT: Duration = Duration::from_millis(1);

/// The longest mean I/O latency a job thread reported since the control thread last looked,
/// ns (0: none).
static LAT_HINT: AtomicU64 = AtomicU64::new(0);

/// How often the first window looks again for the jobs' first report.
const FIRST_WAIT: Duration = Duration::from_millis(5);

/// How long the first window waits for it at most (jobs that time no I/O, gtod_reduce's,
/// never report).
const FIRST_MAX: Duration = Duration::from_secs(1);

/// The job threads' I/O completion rates reported since the control thread last looked,
/// summed (I/Os per second; each thread reports once per window transition).
static RATE_HINT: AtomicU64 = AtomicU64::new(0);

/// The I/O rate (all jobs, per second) up to which the default sampling traces the rest of
/// the run in full: at one to two microseconds of programs per I/O, 10,000 I/Os a second
/// cost the machine at most 2% of one CPU, while windows that cannot pair an engine's reaps
/// (io_uring's, a pool's) leave most of a queued I/O's latency unexplained.
pub const FULL_RATE: u64 = 10_000;

/// A job thread's mean I/O latency over a stretch of its run (ns): the next windows are made
/// long enough for I/Os of it.
pub(crate) fn hint_latency(mean_ns: u64) {
    LAT_HINT.fetch_max(mean_ns, Ordering::Relaxed);
}

/// The longest mean reported since the last call (0: none).
pub(crate) fn take_hint() -> u64 {
    LAT_HINT.swap(0, Ordering::Relaxed)
}

/// A job thread's I/O completion rate (per second) over a stretch of its run.
pub(crate) fn hint_rate(per_s: u64) {
    RATE_HINT.fetch_add(per_s, Ordering::Relaxed);
}

pub(crate) fn take_rate() -> u64 {
    RATE_HINT.swap(0, Ordering::Relaxed)
}

/// What the jobs reported since the control thread last looked, over what it knew: the
/// longest mean latency and the summed rate (a zero: nothing new reported, the last kept).
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    lat_ns: u64,
    rate: u64,
}

impl Seen {
    fn update(&mut self) {
        let (lat, rate) = (take_hint(), take_rate());
        if lat > 0 {
            self.lat_ns = lat;
        }
        if rate > 0 {
            self.rate = rate;
        }
    }

    /// Why the rest of the run is better traced in full (default sampling only): I/Os long
    /// enough ([`FULL_AT`]) or few enough ([`FULL_RATE`]) that the programs cost little.
    fn full_because(&self) -> Option<String> {
        if self.lat_ns >= FULL_AT.as_nanos() as u64 {
            Some(format!(
                "the I/Os' mean latency ({:.2} ms) is at least {} ms: tracing every I/O costs \
                 little against it, and windows would cut them at their edges",
                self.lat_ns as f64 / 1e6,
                FULL_AT.as_millis()
            ))
        } else if self.rate > 0 && self.rate <= FULL_RATE {
            Some(format!(
                "the jobs complete {} I/Os a second, at most {FULL_RATE}: tracing every I/O \
                 costs at most 2% of one CPU, and windows would miss what they cannot pair",
                self.rate
            ))
        } else {
            None
        }
    }
}

/// The window and period for I/Os of `lat_ns` on average: `window` and `period` as asked, or
/// both stretched by the same factor so that the window is [`STRETCH`] times the latency
/// (at most [`MAX_WINDOW`]).
pub(crate) fn stretch(window: Duration, period: Duration, lat_ns: u64) -> (Duration, Duration) {
    let want = Duration::from_nanos(lat_ns.saturating_mul(u64::from(STRETCH))).min(MAX_WINDOW);
    if want <= window {
        return (window, period);
    }
    let factor = want.as_secs_f64() / window.as_secs_f64();
    (want, period.mul_f64(factor))
}

/// How `--explain` traces: all the time, or in windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Every program attached for the whole run: every I/O seen, the full cost.
    Full,
    /// The frequent programs attached for `window` in every `period`, both stretched to the
    /// I/Os' mean latency when `stretch` (the default's; windows one asked for are kept).
    Windows {
        window: Duration,
        period: Duration,
        stretch: bool,
    },
}

impl Sampling {
    /// The default: 20 ms in every 200 ms. A tenth of the time keeps the cost of a CPU-bound
    /// 4k QD8 job under 5% (BENCHMARKS.md: the full cost is about 20%); 200 ms periods give
    /// a one-second job five windows; a 20 ms window is a hundred times a 200 us I/O, so
    /// that few I/Os straddle its edges (an I/O counts only when it starts and ends inside
    /// one window, so windows stretch to `STRETCH` times the I/Os' mean latency).
    pub const DEFAULT: Sampling = Sampling::Windows {
        window: Duration::from_millis(20),
        period: Duration::from_millis(200),
        stretch: true,
    };

    /// `window` in every `period` exactly (not stretched: a user who names windows gets them,
    /// with the report's note when the I/Os are long against them); full tracing when the
    /// window covers the period. Errors
    /// name what is wrong (a zero window, a window longer than its period).
    pub fn windows(window: Duration, period: Duration) -> Result<Sampling, String> {
        if window < Duration::from_millis(1) {
            return Err("the window must be at least 1 ms".into());
        }
        if window > period {
            return Err(format!(
                "the window ({} ms) is longer than its period ({} ms)",
                window.as_millis(),
                period.as_millis()
            ));
        }
        Ok(if window == period {
            Sampling::Full
        } else {
            Sampling::Windows {
                window,
                period,
                stretch: false,
            }
        })
    }
}

/// What a tracer traced: how, for how long of how long, in how many windows; why sampling
/// stopped early if it did (a re-attach the kernel refused: the rest of the run untraced).
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    pub sampling: Sampling,
    pub traced_ns: u64,
    pub run_ns: u64,
    pub windows: u64,
    /// The longest window opened (longer than asked when it stretched to the I/Os), ns.
    pub longest_window_ns: u64,
    /// Default sampling only: from when (ns after the start) the last window stayed open to
    /// the end, and why (see the window module's `FULL_AT` and `FULL_RATE`).
    pub full_from: Option<(u64, String)>,
    pub error: Option<String>,
}

impl Coverage {
    /// Full tracing (what a caller without a tracer's coverage assumes).
    pub fn full() -> Coverage {
        Coverage {
            sampling: Sampling::Full,
            traced_ns: 0,
            run_ns: 0,
            windows: 1,
            longest_window_ns: 0,
            full_from: None,
            error: None,
        }
    }

    pub fn is_sampled(&self) -> bool {
        matches!(self.sampling, Sampling::Windows { .. })
    }

    /// Whether every I/O of the run was traced: full tracing, or default sampling whose first
    /// window stayed open to the end (no window edge, so every reap pairs as in full).
    pub fn traced_whole_run(&self) -> bool {
        !self.is_sampled() || matches!(self.full_from, Some((0, _)))
    }

    /// The share of the run the frequent programs were attached (1 for full tracing).
    pub fn fraction(&self) -> f64 {
        if !self.is_sampled() || self.run_ns == 0 {
            return 1.0;
        }
        (self.traced_ns as f64 / self.run_ns as f64).min(1.0)
    }

    /// `jobs[].fiox.explain.sampling` (with the job's `ios_seen` added by the caller).
    pub fn json(&self) -> Value {
        let mut v = match self.sampling {
            Sampling::Full => json!({"mode": "full", "traced_fraction": 1.0}),
            Sampling::Windows {
                window,
                period,
                stretch,
            } => json!({
                "mode": "windows",
                "stretch": stretch,
                "window_ms": window.as_secs_f64() * 1e3,
                "period_ms": period.as_secs_f64() * 1e3,
                "traced_fraction": (self.fraction() * 1e4).round() / 1e4,
                "windows": self.windows,
            }),
        };
        if let Sampling::Windows { window, .. } = self.sampling {
            if self.longest_window_ns > window.as_nanos() as u64 {
                v["longest_window_ms"] = json!((self.longest_window_ns as f64 / 1e4).round() / 1e2);
            }
        }
        if let Some((at, why)) = &self.full_from {
            v["full_from_ms"] = json!((*at as f64 / 1e4).round() / 1e2);
            v["full_because"] = json!(why);
        }
        if let Some(e) = &self.error {
            v["error"] = json!(e);
        }
        v
    }
}

/// A frequent program: attached only while a window is open.
#[derive(Debug)]
pub(crate) struct Hook {
    pub name: &'static str,
    /// The raw tracepoint's name, None for a BTF-typed program (its type names it).
    pub tp: Option<&'static str>,
    pub prog: OwnedFd,
}

/// Attach every hook (all or none: a failure drops those attached).
pub(crate) fn attach(hooks: &[Hook]) -> Result<Vec<OwnedFd>, (String, std::io::Error)> {
    hooks
        .iter()
        .map(|h| {
            sys::raw_tracepoint_open(h.tp, &h.prog)
                .map_err(|e| (format!("attaching to raw tracepoint {}", h.name), e))
        })
        .collect()
}

/// The descriptors of the open window's links (every tracer's), while it is open: what a
/// thread that unshares its file table must close in its copy. Held while a window opens
/// or closes, so that an unshare sees either all of a window's links or none.
static WINDOW_LINKS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Run `unshare` (the calling thread's `unshare(CLONE_FILES)`) while no window opens or
/// closes, then close, in the thread's new copy of the file table, the open windows' links:
/// a copy would keep their programs attached (and counting) until the thread exits, in every
/// closed gap. Nothing to do when `unshare` failed (the table is still the shared one).
pub fn unshare_files(unshare: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<()> {
    let held = WINDOW_LINKS.lock().unwrap_or_else(|e| e.into_inner());
    unshare()?;
    for &fd in held.iter() {
        sys::close_copy(fd);
    }
    Ok(())
}

/// The window words, mapped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctl(pub &'static [AtomicU64]);

impl Ctl {
    /// Open a window: its start (and number) first, then the programs, then the marks.
    fn open(&self, hooks: &[Hook]) -> Result<(Vec<OwnedFd>, u64), String> {
        use std::os::fd::AsRawFd;
        let start = sys::monotonic_ns();
        self.0[C_START].store(start, Ordering::SeqCst);
        self.0[C_GEN].fetch_add(1, Ordering::SeqCst);
        let mut held = WINDOW_LINKS.lock().unwrap_or_else(|e| e.into_inner());
        let links = attach(hooks).map_err(|(what, e)| format!("{what} failed: {e}"))?;
        held.extend(links.iter().map(|l| l.as_raw_fd()));
        drop(held);
        self.0[C_OPEN].store(start, Ordering::SeqCst);
        Ok((links, start))
    }

    /// Close it: the marks first, then the programs. Returns its length.
    fn close(&self, links: Vec<OwnedFd>, start: u64) -> u64 {
        use std::os::fd::AsRawFd;
        self.0[C_OPEN].store(0, Ordering::SeqCst);
        let mut held = WINDOW_LINKS.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|fd| !links.iter().any(|l| l.as_raw_fd() == *fd));
        drop(links);
        drop(held);
        sys::monotonic_ns().saturating_sub(start)
    }
}

type Stop = Arc<(Mutex<bool>, Condvar)>;

/// True if asked to stop before `until` (None: wait for the stop).
fn wait_stop(stop: &Stop, until: Option<Instant>) -> bool {
    let (lock, cv) = &**stop;
    let Ok(mut g) = lock.lock() else { return true };
    while !*g {
        let wait = match until {
            Some(t) => match t.checked_duration_since(Instant::now()) {
                Some(d) if !d.is_zero() => d,
                _ => return false,
            },
            None => Duration::from_secs(3600),
        };
        g = match cv.wait_timeout(g, wait) {
            Ok((g, _)) => g,
            Err(_) => return true,
        };
    }
    true
}

/// The windows of a tracer: the control thread (sampling), or the links held all the time.
#[derive(Debug)]
pub(crate) struct Sampler {
    stop: Stop,
    thread: Option<JoinHandle<Option<Coverage>>>,
    /// Full tracing: the links, held until the end.
    links: Vec<OwnedFd>,
    start: u64,
    sampling: Sampling,
    done: Option<Coverage>,
}

impl Sampler {
    /// Open the first window now (an error: tracing cannot start) and, when sampling, start
    /// the control thread that closes it and opens the next ones.
    pub fn start(ctl: Ctl, hooks: Vec<Hook>, sampling: Sampling) -> Result<Sampler, ExplainError> {
        let stop: Stop = Arc::new((Mutex::new(false), Condvar::new()));
        let mut s = Sampler {
            stop: stop.clone(),
            thread: None,
            links: Vec::new(),
            start: 0,
            sampling,
            done: None,
        };
        match sampling {
            Sampling::Full => {
                let (links, start) = ctl.open(&hooks).map_err(ExplainError::Unavailable)?;
                (s.links, s.start) = (links, start);
            }
            Sampling::Windows {
                window,
                period,
                stretch,
            } => {
                // A report left from an earlier run in this process is not this run's.
                take_hint();
                take_rate();
                // The control thread opens every window, the first too (it says how that
                // went before this returns), and closes every window: the links are made
                // and dropped by the thread that owns them.
                let (tx, rx) = std::sync::mpsc::channel();
                let t = std::thread::Builder::new()
                    .name("fiox-explain".into())
                    .spawn(move || {
                        let first = ctl.open(&hooks);
                        let _ = tx.send(first.as_ref().map(|f| f.1).map_err(Clone::clone));
                        let (links, start) = first.ok()?;
                        Some(run(
                            ctl,
                            hooks,
                            links,
                            start,
                            (window, period),
                            stretch,
                            &stop,
                        ))
                    })
                    .map_err(|e| {
                        ExplainError::Unavailable(format!("starting the window thread: {e}"))
                    })?;
                let got = rx.recv().map_err(|_| {
                    ExplainError::Unavailable("the window thread did not start".into())
                });
                match got.and_then(|r| r.map_err(ExplainError::Unavailable)) {
                    Ok(start) => s.start = start,
                    Err(e) => {
                        let _ = t.join();
                        return Err(e);
                    }
                }
                s.thread = Some(t);
            }
        }
        Ok(s)
    }

    /// Close the windows for good (the control thread stopped and joined) and say what was
    /// traced. Idempotent.
    pub fn stop(&mut self, ctl: Ctl) -> Coverage {
        if let Some(c) = &self.done {
            return c.clone();
        }
        if let Ok(mut g) = self.stop.0.lock() {
            *g = true;
        }
        self.stop.1.notify_all();
        let run_ns = sys::monotonic_ns().saturating_sub(self.start);
        let c = match self.thread.take() {
            Some(t) => t.join().ok().flatten().unwrap_or_else(|| Coverage {
                error: Some("the window thread failed".into()),
                ..Coverage::full()
            }),
            None => {
                let traced_ns = ctl.close(std::mem::take(&mut self.links), self.start);
                Coverage {
                    sampling: self.sampling,
                    traced_ns,
                    run_ns,
                    windows: 1,
                    longest_window_ns: traced_ns,
                    full_from: None,
                    error: None,
                }
            }
        };
        self.done = Some(c.clone());
        c
    }
}

/// The gap before the next window: the period less the window, times a factor drawn from
/// [0.5, 1.5) (`rng`, xorshift64). Windows at a fixed phase alias with a periodic workload:
/// the blkio throttle lets a slice's I/Os through in a burst every 100 ms, and windows every
/// 200 ms opened 20 ms after the job started never saw one (0 I/Os seen in 6 windows, the
/// throttle test below); a jittered gap keeps the mean period and the traced share.
fn jittered_gap(window: Duration, period: Duration, rng: &mut u64) -> Duration {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    let u = (*rng >> 11) as f64 / (1u64 << 53) as f64;
    period.saturating_sub(window).mul_f64(0.5 + u)
}

/// The control thread: close the open window after its length, open the next one after a
/// jittered gap ([`jittered_gap`]), until told to stop (then the open window is closed). Each
/// window and its period are stretched to the latency the job threads last reported
/// ([`stretch`]).
fn run(
    ctl: Ctl,
    hooks: Vec<Hook>,
    first: Vec<OwnedFd>,
    t0: u64,
    asked: (Duration, Duration),
    stretched: bool,
    stop: &Stop,
) -> Coverage {
    let mut links = Some(first);
    let mut start = t0;
    let mut opened = Instant::now();
    let (mut window, mut period) = asked;
    let mut seen = Seen::default();
    let mut longest = 0u64;
    let mut rng = t0 | 1;
    let mut gap = jittered_gap(window, period, &mut rng);
    let (mut traced_ns, mut windows, mut error) = (0u64, 1u64, None);
    let mut full_from = None;
    loop {
        let until = opened + window + if links.is_some() { Duration::ZERO } else { gap };
        if wait_stop(stop, Some(until)) {
            break;
        }
        match links.take() {
            Some(l) => {
                seen.update();
                let waiting = opened.elapsed() < FIRST_MAX;
                if stretched
                    && windows == 1
                    && waiting
                    && seen.rate == 0
                    && seen.full_because().is_none()
                {
                    // The first window waits for the jobs' first rate (they may still be
                    // laying out files): whether to trace in full is best decided before the
                    // first gap, when no reap can yet be of an I/O submitted unseen.
                    links = Some(l);
                    if wait_stop(stop, Some(Instant::now() + FIRST_WAIT)) {
                        break;
                    }
                    continue;
                }
                if let Some(why) = seen.full_because().filter(|_| stretched) {
                    // This window stays open to the end.
                    full_from = Some((start.saturating_sub(t0), why));
                    links = Some(l);
                    wait_stop(stop, None);
                    break;
                }
                let len = ctl.close(l, start);
                traced_ns += len;
                longest = longest.max(len);
            }
            None => {
                // The latest report, or the one before when no I/O completed since (I/Os
                // longer than a period).
                seen.update();
                if stretched {
                    (window, period) = stretch(asked.0, asked.1, seen.lat_ns);
                }
                gap = jittered_gap(window, period, &mut rng);
                match ctl.open(&hooks) {
                    Ok((l, s)) => {
                        (links, start, opened) = (Some(l), s, Instant::now());
                        windows += 1;
                        if let Some(why) = seen.full_because().filter(|_| stretched) {
                            // This window stays open to the end.
                            full_from = Some((start.saturating_sub(t0), why));
                            wait_stop(stop, None);
                            break;
                        }
                    }
                    Err(e) => {
                        error = Some(format!("{e}: the rest of the run was not traced"));
                        wait_stop(stop, None);
                        break;
                    }
                }
            }
        }
    }
    if let Some(l) = links.take() {
        let len = ctl.close(l, start);
        traced_ns += len;
        longest = longest.max(len);
    }
    Coverage {
        sampling: Sampling::Windows {
            window: asked.0,
            period: asked.1,
            stretch: stretched,
        },
        traced_ns,
        run_ns: sys::monotonic_ns().saturating_sub(t0),
        windows,
        longest_window_ns: longest,
        full_from,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_must_fit_its_period() {
        let ms = Duration::from_millis;
        assert!(Sampling::windows(ms(0), ms(10)).is_err());
        assert!(Sampling::windows(ms(20), ms(10)).is_err());
        assert_eq!(Sampling::windows(ms(10), ms(10)), Ok(Sampling::Full));
        assert_eq!(
            Sampling::windows(ms(5), ms(50)),
            Ok(Sampling::Windows {
                window: ms(5),
                period: ms(50),
                stretch: false
            })
        );
    }

    #[test]
    fn coverage_says_how_much_was_traced() {
        let c = Coverage {
            sampling: Sampling::DEFAULT,
            traced_ns: 100,
            run_ns: 1000,
            windows: 5,
            longest_window_ns: 20_000_000,
            full_from: None,
            error: None,
        };
        let v = c.json();
        assert_eq!(v["mode"], "windows");
        assert_eq!(v["window_ms"], 20.0);
        assert_eq!(v["period_ms"], 200.0);
        assert_eq!(v["traced_fraction"], 0.1);
        assert!(v.get("longest_window_ms").is_none(), "{v}");
        let stretched = Coverage {
            longest_window_ns: 123_456_789,
            ..c
        };
        assert_eq!(stretched.json()["longest_window_ms"], 123.46);
        let slow = Seen {
            lat_ns: 12_500_000,
            rate: 50_000,
        };
        let full = Coverage {
            full_from: Some((40_000_000, slow.full_because().unwrap())),
            ..stretched
        };
        assert_eq!(full.json()["full_from_ms"], 40.0);
        let why = full.json()["full_because"].as_str().unwrap().to_string();
        assert!(
            why.contains("mean latency (12.50 ms) is at least 1 ms"),
            "{why}"
        );
        // Few I/Os a second: full; many short ones, or nothing reported yet: windows.
        let few = Seen {
            lat_ns: 200_000,
            rate: 4_000,
        };
        assert!(few.full_because().unwrap().contains("4000 I/Os a second"));
        let many = Seen {
            lat_ns: 200_000,
            rate: 40_000,
        };
        assert!(many.full_because().is_none());
        assert!(Seen::default().full_because().is_none());
        assert_eq!(Coverage::full().json()["traced_fraction"], 1.0);
    }

    #[test]
    fn gaps_are_jittered_around_the_period() {
        let ms = Duration::from_millis;
        let mut rng = 12345u64;
        let gaps: Vec<f64> = (0..10_000)
            .map(|_| jittered_gap(ms(20), ms(200), &mut rng).as_secs_f64() * 1e3)
            .collect();
        assert!(gaps.iter().all(|g| (90.0..270.0).contains(g)), "{gaps:?}");
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((175.0..185.0).contains(&mean), "mean gap {mean} ms");
        // Spread over the range, not stuck at a phase.
        assert!(gaps.iter().any(|g| *g < 100.0) && gaps.iter().any(|g| *g > 260.0));
    }

    #[test]
    fn windows_stretch_to_the_latency_and_keep_their_share() {
        let ms = Duration::from_millis;
        // Short I/Os (or none reported): the windows asked for.
        assert_eq!(stretch(ms(20), ms(200), 0), (ms(20), ms(200)));
        assert_eq!(stretch(ms(20), ms(200), 1_000_000), (ms(20), ms(200)));
        // I/Os of 5 ms: windows of 100 ms in every second.
        assert_eq!(stretch(ms(20), ms(200), 5_000_000), (ms(100), ms(1000)));
        assert_eq!(stretch(ms(2), ms(8), 500_000), (ms(10), ms(40)));
        // At most 10 s, whatever the latency (and no overflow).
        assert_eq!(
            stretch(ms(20), ms(200), u64::MAX).0,
            Duration::from_secs(10)
        );
        assert_eq!(
            stretch(ms(20), ms(200), u64::MAX).1,
            Duration::from_secs(100)
        );
    }
}
