//! The helper thread of a run: fio's one-line ETA on stdout, as fio prints it (on a terminal,
//! or always with `--eta=always`; the binary turns it off when a machine format alone goes to
//! stdout, as fio does)
//! (`Jobs: 1 (f=1): [r(1)][45.0%][r=107MiB/s][r=27.4k IOPS][eta 00m:05s]`) and periodic status
//! snapshots for `--status-interval`; it also passes a Ctrl-C on to the run's jobs. It only
//! reads the jobs' relaxed counters ([`Progress`]).

use crate::io::acct::{JobState, Progress};
use crate::RunOptions;
use fiox_job::{EtaMode, JobSpec, RwMode};
use fiox_report::units::{count, Units};
use fiox_stats::{JobResult, RunResult};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// fio's run-state letter of a job (eta.c's letters).
fn state_char(job: &JobSpec, st: JobState) -> char {
    match st {
        JobState::Waiting => 'P',
        JobState::Setup => 'I',
        JobState::Ramp => '/',
        JobState::Finishing => 'f',
        JobState::Verifying => 'V',
        JobState::Done => '_',
        JobState::Running => {
            let c = match job.rw.mode {
                RwMode::Read | RwMode::RandRead => 'r',
                RwMode::Write | RwMode::RandWrite => 'w',
                RwMode::ReadWrite | RwMode::RandRw | RwMode::TrimWrite | RwMode::RandTrimWrite => {
                    'm'
                }
                RwMode::Trim | RwMode::RandTrim => 'd',
            };
            if job.rw.mode.is_random() {
                c
            } else {
                c.to_ascii_uppercase()
            }
        }
    }
}

/// `r(2)w(1)`: run-length encoded state letters.
fn state_string(jobs: &[JobSpec], progress: &[Progress]) -> String {
    let mut out = String::new();
    let mut run: Option<(char, usize)> = None;
    for (j, p) in jobs.iter().zip(progress) {
        let c = state_char(j, p.state());
        run = match run {
            Some((pc, n)) if pc == c => Some((pc, n + 1)),
            Some((pc, n)) => {
                out.push_str(&format!("{pc}({n})"));
                Some((c, 1))
            }
            None => Some((c, 1)),
        };
    }
    if let Some((c, n)) = run {
        out.push_str(&format!("{c}({n})"));
    }
    out
}

/// Totals over jobs: bytes and I/Os per direction.
fn totals(progress: &[Progress]) -> ([u64; 3], [u64; 3]) {
    let mut b = [0; 3];
    let mut i = [0; 3];
    for p in progress {
        for d in 0..3 {
            b[d] += p.bytes[d].load(Ordering::Relaxed);
            i[d] += p.ios[d].load(Ordering::Relaxed);
        }
    }
    (b, i)
}

/// Fraction done and seconds left, from time limits where jobs have them, else bytes.
/// `elapsed[i]`: how long job `i` has been running (zero before it started). Jobs still
/// waiting for their group add their time limit (the longest per group) to what is left.
fn completion(jobs: &[JobSpec], progress: &[Progress], elapsed: &[Duration]) -> (f64, u64) {
    let mut frac_sum = 0.0;
    let mut left: u64 = 0;
    let mut waiting: Vec<(u32, u64)> = Vec::new();
    for ((j, p), el) in jobs.iter().zip(progress).zip(elapsed) {
        let planned = p.planned_bytes.load(Ordering::Relaxed);
        let done: u64 = p.bytes.iter().map(|b| b.load(Ordering::Relaxed)).sum();
        let limit = j
            .timing
            .runtime
            .map(|r| r + j.timing.ramp_time.unwrap_or_default());
        let f = match (p.state(), limit) {
            (JobState::Done, _) => 1.0,
            (JobState::Waiting, l) => {
                let secs = l.map(|l| l.as_secs()).unwrap_or(0);
                match waiting.iter_mut().find(|(g, _)| *g == j.group_id) {
                    Some((_, s)) => *s = (*s).max(secs),
                    None => waiting.push((j.group_id, secs)),
                }
                0.0
            }
            (_, Some(l)) if j.timing.time_based || planned == 0 => {
                (el.as_secs_f64() / l.as_secs_f64().max(1e-9)).min(1.0)
            }
            _ if planned > 0 => (done as f64 / planned as f64).min(1.0),
            _ => 0.0,
        };
        frac_sum += f;
        if f > 0.0 && f < 1.0 {
            let rest = el.as_secs_f64() * (1.0 - f) / f;
            left = left.max(rest.round() as u64);
        }
    }
    let queued: u64 = waiting.iter().map(|(_, s)| s).sum();
    (frac_sum / jobs.len().max(1) as f64, left + queued)
}

fn eta_text(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    if h > 0 {
        format!("{h}h:{m:02}m:{s:02}s")
    } else {
        format!("{m:02}m:{s:02}s")
    }
}

/// One ETA line (without the leading carriage return).
fn eta_line(
    jobs: &[JobSpec],
    progress: &[Progress],
    elapsed: &[Duration],
    rates: ([u64; 3], [u64; 3]),
) -> String {
    let running = progress
        .iter()
        .filter(|p| !matches!(p.state(), JobState::Done | JobState::Waiting))
        .count();
    let files: u64 = progress
        .iter()
        .filter(|p| p.state() != JobState::Done)
        .map(|p| p.files.load(Ordering::Relaxed))
        .sum();
    let (frac, left) = completion(jobs, progress, elapsed);
    let u = Units::default();
    let names = ['r', 'w', 't'];
    let used: Vec<usize> = (0..3)
        .filter(|&d| jobs.iter().any(|j| uses(j, d)))
        .collect();
    let bw: Vec<String> = used
        .iter()
        .map(|&d| format!("{}={}", names[d], u.rate(rates.0[d])))
        .collect();
    let iops: Vec<String> = used
        .iter()
        .map(|&d| format!("{}={}", names[d], count(rates.1[d])))
        .collect();
    format!(
        "Jobs: {running} (f={files}): [{}][{:.1}%][{}][{} IOPS][eta {}]",
        state_string(jobs, progress),
        frac * 100.0,
        bw.join(","),
        iops.join(","),
        eta_text(left)
    )
}

fn uses(j: &JobSpec, d: usize) -> bool {
    let m = j.rw.mode;
    [m.has_read(), m.has_write(), m.has_trim()][d]
}

/// The helper thread's body: draws the ETA line once a second and calls `on_status` every
/// `status_interval`, until `done`.
pub fn run_eta(
    jobs: &[JobSpec],
    progress: &[Progress],
    opts: &RunOptions,
    done: &AtomicBool,
    run_stop: &AtomicBool,
    start_ms: u64,
    on_status: &mut (dyn FnMut(&RunResult) + Send),
) {
    crate::dprint!(
        crate::debug::HELPERTHREAD,
        "clk_tck = {}",
        crate::sys::clk_tck()
    );
    let tty = crate::sys::stdout_is_tty();
    let show = match opts.eta {
        EtaMode::Always => true,
        EtaMode::Never => false,
        EtaMode::Auto => tty,
    };
    let t0 = Instant::now();
    let mut last = (t0, totals(progress));
    let mut next_status = opts.status_interval.map(|i| t0 + i);
    let mut drawn = false;
    let interval = opts.eta_interval.unwrap_or(Duration::from_secs(1));
    // --eta-newline: a terminal's redrawn line is left standing this often (fio's
    // eta_new_line_pending: the next line starts on a new row).
    let mut last_newline = t0;
    let mut newline_pending = false;
    let mut started: Vec<Option<Instant>> = vec![None; jobs.len()];
    let mut agg = agg_log(opts, jobs, t0);
    let mut ss = crate::control::steady::setup(jobs);
    let mut timeout_left = opts.trigger.timeout;
    let mut triggered = false;
    let ss_every = Duration::from_millis(crate::control::steady::interval_ms(jobs));
    let mut next_ss = t0 + ss_every;
    publish_steady(&ss, progress);
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
        // A signal (process-wide) stops this run's jobs.
        if crate::stop_requested() {
            run_stop.store(true, Ordering::Relaxed);
        }
        let now = Instant::now();
        for (st, p) in started.iter_mut().zip(progress) {
            if st.is_none() && p.state() != JobState::Waiting {
                *st = Some(now);
            }
        }
        // Once is enough: the jobs are stopping, and a trigger file that cannot be removed
        // (`--trigger-file=/`) said so twice when asked again before they were done (M9).
        if !triggered && fired(&opts.trigger, &mut timeout_left, now - t0) {
            triggered = true;
            // fio: terminate every job, then run the trigger command.
            run_stop.store(true, Ordering::Relaxed);
            run_trigger(opts.trigger.cmd.as_deref());
        }
        if ss.iter().any(Option::is_some) && now >= next_ss {
            next_ss += ss_every;
            steady_check(jobs, progress, &mut ss, &started, t0, now);
        }
        if let Some(a) = agg.as_mut() {
            let ramping = progress.iter().any(|p| p.state() == JobState::Ramp);
            if let Err(e) = a.tick(now, t0, totals(progress).0, ramping) {
                fiox_guard::eprintln!("fiox: --bandwidth-log: {e}");
                agg = None;
            }
        }
        if show && now.duration_since(last.0) >= interval {
            let cur = totals(progress);
            let dt = now.duration_since(last.0).as_secs_f64();
            let rate =
                |a: [u64; 3], b: [u64; 3]| [0, 1, 2].map(|d| ((a[d] - b[d]) as f64 / dt) as u64);
            let rates = (rate(cur.0, last.1 .0), rate(cur.1, last.1 .1));
            let elapsed: Vec<Duration> = started
                .iter()
                .map(|s| s.map(|s| now - s).unwrap_or_default())
                .collect();
            let line = eta_line(jobs, progress, &elapsed, rates);
            let mut out = std::io::stdout().lock();
            let nl = if std::mem::take(&mut newline_pending) {
                "\n"
            } else {
                ""
            };
            if opts
                .eta_newline
                .is_some_and(|p| now.duration_since(last_newline) > p)
            {
                last_newline = now;
                newline_pending = true;
            }
            // fio ends each line with a carriage return, also when stdout is not a terminal.
            let _ = if tty {
                write!(out, "{nl}\r{line}\x1b[K")
            } else {
                write!(out, "{line}\r")
            };
            let _ = out.flush();
            drawn = true;
            last = (now, cur);
        }
        if let (Some(at), Some(iv)) = (next_status, opts.status_interval) {
            if now >= at {
                on_status(&snapshot(jobs, progress, start_ms, now - t0));
                next_status = Some(at + iv);
            }
        }
    }
    if drawn {
        // A terminal's line is cleared; elsewhere the last line is ended, as fio does before
        // its report.
        let _ = write!(std::io::stdout(), "{}", if tty { "\r\x1b[K" } else { "\n" });
    }
    if let Some(a) = agg {
        if let Err(e) = a.finish(t0.elapsed().as_millis() as u64) {
            fiox_guard::eprintln!("fiox: --bandwidth-log: {e}");
        }
    }
}

/// The trigger file appeared (it is removed, as fio removes it) or the trigger timeout passed
/// (once).
fn fired(t: &crate::Trigger, timeout_left: &mut Option<Duration>, elapsed: Duration) -> bool {
    if let Some(f) = &t.file {
        match fiox_guard::named::remove_trigger(f) {
            Ok(true) => return true,
            Ok(false) => {}
            Err(e) => {
                // fio's words: the cause once, after the path.
                match e.os_error() {
                    Some(n) => fiox_guard::eprintln!(
                        "fiox: failed to unlink {}: {}",
                        f.display(),
                        std::io::Error::from_raw_os_error(n)
                    ),
                    None => fiox_guard::eprintln!("fiox: {e}"),
                }
                return true;
            }
        }
    }
    if timeout_left.is_some_and(|d| elapsed >= d) {
        *timeout_left = None;
        return true;
    }
    false
}

/// fio's `exec_trigger`: the command through the shell.
fn run_trigger(cmd: Option<&str>) {
    let Some(cmd) = cmd.filter(|c| !c.is_empty()) else {
        return;
    };
    if let Err(e) = std::process::Command::new("sh").arg("-c").arg(cmd).status() {
        fiox_guard::eprintln!("fiox: failed executing {cmd} trigger: {e}");
    }
}

/// fio's once-a-second steady state look: stop the jobs that attained it, publish the data.
fn steady_check(
    jobs: &[JobSpec],
    progress: &[Progress],
    ss: &mut [Option<crate::control::steady::JobSs>],
    started: &[Option<Instant>],
    t0: Instant,
    now: Instant,
) {
    let ms = |t: Instant| t.duration_since(t0).as_millis() as u64;
    let looks: Vec<crate::control::steady::Look> = progress
        .iter()
        .zip(started)
        .map(|(p, st)| crate::control::steady::Look {
            running: matches!(
                p.state(),
                JobState::Running | JobState::Ramp | JobState::Verifying
            ),
            since_start_us: st.map_or(0, |s| now.duration_since(s).as_micros() as u64),
            start_ms: st.map_or(0, ms),
            ios: (0..3).map(|d| p.ios[d].load(Ordering::Relaxed)).sum(),
            bytes: (0..3).map(|d| p.bytes[d].load(Ordering::Relaxed)).sum(),
        })
        .collect();
    for k in crate::control::steady::check(jobs, ss, &looks, ms(now)) {
        progress[k].terminate.store(true, Ordering::Relaxed);
    }
    publish_steady(ss, progress);
}

fn publish_steady(ss: &[Option<crate::control::steady::JobSs>], progress: &[Progress]) {
    for (s, p) in ss.iter().zip(progress) {
        if let Some(t) = s.as_ref().and_then(|s| s.tracker.as_ref()) {
            if let Ok(mut g) = p.steady.lock() {
                *g = Some(t.result());
            }
        }
    }
}

/// `--bandwidth-log`: the aggregate logs in the current directory (None when not asked for,
/// or when they cannot be created, which is reported and does not stop the run).
fn agg_log(
    opts: &RunOptions,
    jobs: &[JobSpec],
    t0: Instant,
) -> Option<crate::observe::agglog::AggBwLog> {
    if !opts.bandwidth_log {
        return None;
    }
    let tag = opts.log_tag.as_deref();
    crate::observe::agglog::AggBwLog::create(std::path::Path::new("."), jobs, t0, tag)
        .map_err(|e| fiox_guard::eprintln!("fiox: --bandwidth-log: {e}"))
        .ok()
}

/// A status snapshot: every started job publishes its current result when asked (jobs that
/// do not answer within 250 ms, e.g. stuck in a slow I/O, are shown from their live counters).
fn snapshot(
    jobs: &[JobSpec],
    progress: &[Progress],
    start_ms: u64,
    elapsed: Duration,
) -> RunResult {
    let live = |p: &Progress| matches!(p.state(), JobState::Running | JobState::Ramp);
    for p in progress.iter().filter(|p| live(p)) {
        p.snap_req.store(true, Ordering::Relaxed);
    }
    let until = Instant::now() + Duration::from_millis(250);
    while Instant::now() < until
        && progress
            .iter()
            .any(|p| live(p) && p.snap_req.load(Ordering::Relaxed))
    {
        std::thread::sleep(Duration::from_millis(2));
    }
    let results: Vec<JobResult> = jobs
        .iter()
        .zip(progress)
        .filter(|(_, p)| p.state() != JobState::Waiting)
        .map(|(j, p)| {
            let published = p.snapshot.lock().ok().and_then(|g| g.clone());
            published.unwrap_or_else(|| from_counters(j, p, elapsed))
        })
        .collect();
    let results = crate::observe::grouprep::apply(results, jobs);
    let (kb, unit) = jobs
        .first()
        .map(|j| (j.kb_base, j.unit_base))
        .unwrap_or((1024, 0));
    RunResult {
        groups: fiox_stats::group_results(&results, kb, unit),
        jobs: results,
        start_unix_ms: start_ms,
        ..Default::default()
    }
}

/// A job's result from its live counters only (bytes, I/Os, elapsed time).
fn from_counters(j: &JobSpec, p: &Progress, elapsed: Duration) -> JobResult {
    let ms = elapsed.as_millis() as u64;
    let mut r = JobResult {
        name: j.name.clone(),
        groupid: j.group_id,
        jobs: 1,
        pid: std::process::id(),
        runtime_ms: ms,
        elapsed_s: ms / 1000,
        iodepth: j.iodepth,
        job_options: j.own_options.clone(),
        percentile_list: j.stats.percentile_list.clone(),
        ..Default::default()
    };
    for (d, dir) in fiox_job::Ddir::ALL.iter().enumerate() {
        let x = r.dirs.get_mut(*dir);
        x.io_bytes = p.bytes[d].load(Ordering::Relaxed);
        x.total_ios = p.ios[d].load(Ordering::Relaxed);
        x.runtime_ms = if x.total_ios > 0 { ms } else { 0 };
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_run_length_encoded() {
        let mut a = JobSpec::default();
        a.rw.mode = RwMode::RandRead;
        let b = a.clone();
        let mut c = a.clone();
        c.rw.mode = RwMode::Write;
        let p: Vec<Progress> = (0..3).map(|_| Progress::default()).collect();
        for x in &p {
            x.set_state(JobState::Running);
        }
        assert_eq!(state_string(&[a, b, c], &p), "r(2)W(1)");
    }

    #[test]
    fn waiting_groups_add_their_runtime() {
        let mut a = JobSpec::default();
        a.timing.runtime = Some(Duration::from_secs(10));
        a.timing.time_based = true;
        let mut b = a.clone();
        b.group_id = 1;
        let p: Vec<Progress> = (0..2).map(|_| Progress::default()).collect();
        p[0].set_state(JobState::Running);
        let (frac, left) = completion(&[a, b], &p, &[Duration::from_secs(5), Duration::ZERO]);
        assert!((frac - 0.25).abs() < 1e-9, "{frac}");
        assert_eq!(left, 5 + 10);
    }

    #[test]
    fn eta_line_shape() {
        let mut j = JobSpec::default();
        j.rw.mode = RwMode::RandRead;
        j.timing.runtime = Some(Duration::from_secs(10));
        j.timing.time_based = true;
        let p = vec![Progress::default()];
        p[0].set_state(JobState::Running);
        p[0].files.store(1, Ordering::Relaxed);
        let line = eta_line(
            &[j],
            &p,
            &[Duration::from_millis(4500)],
            ([112_197_632, 0, 0], [27_400, 0, 0]),
        );
        assert_eq!(
            line,
            "Jobs: 1 (f=1): [r(1)][45.0%][r=107MiB/s][r=27.4k IOPS][eta 00m:06s]"
        );
    }
}
