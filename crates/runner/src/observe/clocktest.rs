//! `--cpuclock-test` (fio 3.33's `fio_monotonic_clocktest(1)` in gettime.c): does the CPU
//! clock (the TSC) only move forward when read on different CPUs one after another?
//!
//! One thread per CPU this process may use, each pinned to its CPU, takes turns through a
//! shared sequence number: it reads the number, reads the TSC and claims the number with a
//! compare-and-swap (retrying when another CPU got there first), 100000 times. Sorted by
//! sequence number the TSC values must never decrease; every decrease is printed with both
//! readings. fio's lines, on stdout: `cs: reliable_tsc: yes|no` (the CPU reports an invariant
//! TSC), the calibration of the TSC against the monotonic clock as fio's `time` debug lines
//! (50 samples of cycles per millisecond, their statistics and the shift/multiplier fio
//! derives from them), `cs: Testing N CPUs`, one `cs: cpuNNN: C clocks seen, first F` per CPU, the
//! mismatches, then `cs: Pass!` (exit 0) or `cs: Failed: N` (exit 1).

use crate::io::clock::rdtsc;
use std::io::{self, Write};
use std::sync::atomic::{fence, AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;

/// Readings per CPU (fio's CLOCK_ENTRIES_DEBUG).
const ENTRIES: usize = 100_000;

/// One TSC reading and the sequence number it claimed.
#[derive(Debug, Clone, Copy)]
struct Entry {
    cpu: usize,
    seq: u32,
    tsc: u64,
}

/// What one CPU's thread saw: its readings and the TSC before the first.
struct Seen {
    cpu: usize,
    first: u64,
    entries: Vec<Entry>,
}

/// Runs the test, printing fio's lines to `out` (and its error line to `err`); the exit
/// code (0 pass, 1 fail).
pub fn cpuclock_test(out: &mut dyn Write, err: &mut dyn Write) -> io::Result<i32> {
    let reliable = tsc_invariant(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default());
    writeln!(
        out,
        "cs: reliable_tsc: {}",
        if reliable { "yes" } else { "no" }
    )?;
    calibrate(out)?;
    writeln!(out, "cs: Testing {} CPUs", crate::sys::cpus_configured())?;
    let cpus = crate::sys::allowed_cpus()?;
    let seen = run_threads(&cpus)?;
    for s in &seen {
        let clocks = match (s.entries.first(), s.entries.last()) {
            (Some(a), Some(b)) => b.tsc.wrapping_sub(a.tsc),
            _ => 0,
        };
        writeln!(
            out,
            "cs: cpu{:3}: {clocks} clocks seen, first {}",
            s.cpu, s.first
        )?;
    }
    // fio counts a CPU whose clock reads zero throughout as a failed thread.
    let stuck = seen
        .iter()
        .filter(|s| s.entries.len() > 1 && s.entries[0].tsc == 0)
        .count();
    if stuck > 0 {
        writeln!(err, "Clocksource test: {stuck} threads failed")?;
        return Ok(1);
    }
    let mut all: Vec<Entry> = seen.into_iter().flat_map(|s| s.entries).collect();
    all.sort_unstable_by_key(|e| e.seq);
    let failed = report_backwards(&all, out)?;
    if failed > 0 {
        writeln!(out, "cs: Failed: {failed}")?;
        Ok(1)
    } else {
        writeln!(out, "cs: Pass!")?;
        Ok(0)
    }
}

/// Calibration samples (fio's NR_TIME_ITERS).
const TIME_ITERS: usize = 50;
/// The longest run fio's clock arithmetic is sized for (MAX_CLOCK_SEC), in seconds.
const MAX_CLOCK_SEC: u64 = 60 * 60;

/// One `time` debug line as fio prints it (category, thread id, text).
fn dline(out: &mut dyn Write, msg: std::fmt::Arguments<'_>) -> io::Result<()> {
    writeln!(out, "{:<8} {:<5} {msg}", "time", crate::sys::gettid())
}

/// TSC ticks per millisecond over at least 1.28 ms of the monotonic clock (fio's
/// get_cycles_per_msec).
fn cycles_per_msec() -> u64 {
    let (t0, c0) = (std::time::Instant::now(), rdtsc());
    loop {
        let (ns, c) = (t0.elapsed().as_nanos() as u64, rdtsc());
        if ns >= 1_280_000 {
            return c.wrapping_sub(c0).saturating_mul(1_000_000) / ns;
        }
    }
}

/// fio's calibrate_cpu_clock with its debug lines: samples, mean and deviation (Welford),
/// the mean of the samples within one deviation, then the shift and multiplier that turn
/// ticks into nanoseconds without overflow for MAX_CLOCK_SEC.
fn calibrate(out: &mut dyn Write) -> io::Result<()> {
    cycles_per_msec();
    let cycles: Vec<u64> = (0..TIME_ITERS).map(|_| cycles_per_msec()).collect();
    let (mut mean, mut s) = (0.0f64, 0.0f64);
    for (i, &c) in cycles.iter().enumerate() {
        let delta = c as f64 - mean;
        if delta != 0.0 {
            mean += delta / (i as f64 + 1.0);
            s += delta * (c as f64 - mean);
        }
    }
    if cycles[0] == 0 && cycles[TIME_ITERS - 1] == 0 {
        return Ok(());
    }
    let s = (s / (TIME_ITERS as f64 - 1.0)).sqrt();
    let kept: Vec<u64> = cycles
        .iter()
        .copied()
        .filter(|&c| (c as f64 - mean).abs() <= s)
        .collect();
    for (i, c) in cycles.iter().enumerate() {
        dline(out, format_args!("cycles[{i}]={c}"))?;
    }
    let (minc, maxc) = (cycles.iter().min(), cycles.iter().max());
    let (minc, maxc) = (minc.copied().unwrap_or(0), maxc.copied().unwrap_or(0));
    let sd = s / TIME_ITERS as f64;
    dline(
        out,
        format_args!("min={minc}, max={maxc}, mean={mean:.6}, S={sd:.6}, N={TIME_ITERS}"),
    )?;
    let cpm = (kept.iter().sum::<u64>() / kept.len().max(1) as u64).max(1);
    dline(out, format_args!("trimmed mean={cpm}, N={}", kept.len()))?;
    clock_shifts(cpm, out)
}

/// The second half of fio's calibration: the tick-to-ns shift and multiplier and the
/// wrap-around mask, each step printed.
fn clock_shifts(cpm: u64, out: &mut dyn Write) -> io::Result<()> {
    let max_ticks = (MAX_CLOCK_SEC * 1000).saturating_mul(cpm);
    let max_mult = u64::MAX / max_ticks;
    let clz = max_ticks.leading_zeros();
    dline(
        out,
        format_args!("max_ticks={max_ticks}, __builtin_clzll={clz}, max_mult={max_mult}"),
    )?;
    let (mut tmp, mut sft) = (max_mult.wrapping_mul(cpm) / 1_000_000, 0u32);
    while tmp > 1 {
        tmp >>= 1;
        sft += 1;
        dline(out, format_args!("tmp={tmp}, sft={sft}"))?;
    }
    let mult = (1u64 << sft).saturating_mul(1_000_000) / cpm;
    dline(out, format_args!("clock_shift={sft}, clock_mult={mult}"))?;
    let (mut tmp, mut shift) = ((MAX_CLOCK_SEC * 1000).saturating_mul(cpm), 0u32);
    dline(out, format_args!("tmp={tmp}, max_cycles_shift={shift}"))?;
    while tmp > 1 {
        tmp >>= 1;
        shift += 1;
        dline(out, format_args!("tmp={tmp}, max_cycles_shift={shift}"))?;
    }
    let pow = 1u64 << shift;
    let nsecs = pow.wrapping_mul(mult) >> sft;
    dline(
        out,
        format_args!(
            "max_cycles_shift={shift}, 2^max_cycles_shift={pow}, nsecs_for_max_cycles={nsecs}, max_cycles_mask={:016x}",
            pow - 1
        ),
    )?;
    dline(out, format_args!("cycles_start={}", rdtsc()))
}

/// fio's tsc_reliable: CPUID 0x80000007 EDX bit 8 (invariant TSC), which Linux shows as the
/// `nonstop_tsc` flag.
fn tsc_invariant(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "nonstop_tsc"))
}

/// Starts one pinned thread per CPU, releases them together, and collects what each saw.
fn run_threads(cpus: &[usize]) -> io::Result<Vec<Seen>> {
    let seq = Arc::new(AtomicU32::new(0));
    // 0: wait, 1: go, 2: give up (a thread could not be started).
    let gate = Arc::new(AtomicU8::new(0));
    let mut handles = Vec::new();
    for &cpu in cpus {
        let (my_seq, my_gate) = (seq.clone(), gate.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("fiox-clock{cpu}"))
            .spawn(move || {
                let pinned = crate::sys::set_affinity(&[cpu]);
                let mut g = 0;
                while g == 0 {
                    std::hint::spin_loop();
                    g = my_gate.load(Ordering::Acquire);
                }
                if g == 2 {
                    return Err(io::Error::other("not started: another thread failed"));
                }
                pinned.map(|()| read_clock(cpu, &my_seq))
            });
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                gate.store(2, Ordering::Release);
                handles.into_iter().for_each(|h| drop(h.join()));
                return Err(e);
            }
        }
    }
    gate.store(1, Ordering::Release);
    let mut seen = Vec::new();
    for h in handles {
        match h.join() {
            Ok(r) => seen.push(r?),
            Err(_) => return Err(io::Error::other("a clock test thread panicked")),
        }
    }
    Ok(seen)
}

/// One CPU's turns: read the sequence, read the TSC, claim the sequence number.
fn read_clock(cpu: usize, seq: &AtomicU32) -> Seen {
    let first = rdtsc();
    let mut entries = Vec::with_capacity(ENTRIES);
    for _ in 0..ENTRIES {
        loop {
            let s = seq.load(Ordering::SeqCst);
            // As fio's __sync_synchronize: the TSC is read after the sequence number.
            fence(Ordering::SeqCst);
            let tsc = rdtsc();
            if seq
                .compare_exchange(s, s.wrapping_add(1), Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                entries.push(Entry { cpu, seq: s, tsc });
                break;
            }
        }
    }
    Seen {
        cpu,
        first,
        entries,
    }
}

/// Prints each place where the TSC went backwards between consecutive sequence numbers, in
/// fio's three lines; how many there were.
fn report_backwards(all: &[Entry], out: &mut dyn Write) -> io::Result<u64> {
    let mut failed = 0;
    for w in all.windows(2) {
        let (prev, this) = (w[0], w[1]);
        if prev.tsc > this.tsc {
            writeln!(
                out,
                "cs: CPU clock mismatch (diff={}):",
                prev.tsc - this.tsc
            )?;
            for e in [prev, this] {
                writeln!(out, "\t CPU{:3}: TSC={}, SEQ={}", e.cpu, e.tsc, e.seq)?;
            }
            failed += 1;
        }
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backwards_steps_are_counted_and_printed_as_fio() {
        let e = |cpu, seq, tsc| Entry { cpu, seq, tsc };
        let all = [e(0, 0, 10), e(1, 1, 20), e(0, 2, 15), e(1, 3, 30)];
        let mut out = Vec::new();
        assert_eq!(report_backwards(&all, &mut out).unwrap(), 1);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "cs: CPU clock mismatch (diff=5):\n\t CPU  1: TSC=20, SEQ=1\n\t CPU  0: TSC=15, SEQ=2\n"
        );
    }

    #[test]
    fn invariant_tsc_is_the_nonstop_flag() {
        assert!(tsc_invariant(
            "processor : 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n"
        ));
        assert!(!tsc_invariant("flags\t\t: fpu tsc constant_tsc\n"));
    }
}
