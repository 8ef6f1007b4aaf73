//! Advice from a finished job: warnings about queued I/O that did not queue, each backed by the
//! run's own submission-latency evidence. This module owns two warning codes:
//!
//! - [`WarningCode::BufferedLibaio`]: `ioengine=libaio` with `direct=0` and `iodepth>1`. Linux kernel AIO is
//!   asynchronous only for O_DIRECT; buffered reads and writes are executed inside `io_submit`,
//!   so the queue depth buys nothing (fio does not warn; seed 004 is exactly this mistake). The
//!   configuration alone justifies the warning; the run's numbers decide whether it says that
//!   the submissions were seen to block or that this run could not show it (e.g. everything
//!   came from the page cache in microseconds).
//! - [`WarningCode::SyncSubmission`]: any queued engine at `iodepth>1` whose run shows the submissions
//!   blocking — the I/O ran inside the submit call, or the call waited for room in a full
//!   device queue (libaio direct=1 at a depth above the device's nr_requests): submission
//!   latency close to the total latency, the submitting thread inside slow submit calls for
//!   most of the time, or the IO depth distribution stuck at 1. It is evidence-only and never
//!   fires together with `buffered-libaio` (same cause, one warning).
//!
//! Everything is a pure function of the job and its result ([`analyze`]); the runner attaches
//! the returned warnings to the job's result (`runner::warn::result_warnings`). The runner's
//! other warnings (`iodepth-sync-engine`, `page-cache`, `memory-backed-file`, ...) are about
//! other things.

use crate::model::{DepthDist, DirResult, JobResult, Warning, WarningCode};
use fiox_job::{Ddir, Engine, JobSpec};

/// Mean slat at or above this share of mean lat: an I/O spent most of its life inside the
/// submit call, i.e. it completed there. Asynchronous submission of a device I/O costs a few
/// microseconds against a latency of tens of microseconds or more (well under 10%); seed 000's
/// fixed kernel shows 1.65 us of 134 ms.
pub const SLAT_SHARE_BLOCKING: f64 = 0.30;
/// Share of each I/O's life the submitting thread spends in submit calls, by Little's law:
/// with D I/Os in flight the job completes D per mean lat, and submitting them takes
/// D x mean slat, so `D x slat / lat` near 1 means submission paced the job (the submitter was
/// always inside a submit call). Seed 000's blocking kernel: 32 x 3298 us / 105.6 ms = 1.00;
/// the fixed one: 0.0004. Measured (docs/experiments.md): blocking runs 0.90-1.05, libaio
/// direct=1 at QD8-100 0.13-0.37, guasi offload on a disk of a loaded 2-vCPU VM 0.01-0.72.
pub const SUBMIT_PACED_BLOCKING: f64 = 0.80;
/// Mean slat below this did not wait for storage: a syscall plus a 4 KiB memory copy takes a
/// few microseconds, a device read tens of microseconds at least. A busy submitter with such
/// fast submissions is CPU-bound on memory copies (page cache, tmpfs), which cannot show
/// whether submission would block on a device.
pub const MIN_BLOCKING_SLAT_NS: f64 = 10_000.0;
/// Mean slat at or above this share of mean lat, however fast: the I/Os completed inside the
/// submit call (page-cache hits completing inline), so the queue depth overlapped nothing.
pub const INLINE_COMPLETION_SHARE: f64 = 0.50;
/// Share of the submitted I/Os that saw depth 1, at or above which the queue never filled.
pub const DEPTH1_STUCK: f64 = 0.90;

/// Submission evidence of one direction of a finished job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DirEvidence {
    pub ddir: Ddir,
    /// Mean submission latency (ns).
    pub slat_ns: f64,
    /// Mean total latency (ns): lat, or slat + clat when lat was not recorded.
    pub lat_ns: f64,
    /// `slat_ns / lat_ns`.
    pub share: f64,
    /// Sum of slat over the direction's run time, per job: the share of the run the submitting
    /// thread was inside submit calls for this direction. It can exceed 1 when several I/Os are
    /// submitted by one call (each I/O's slat covers the whole call).
    pub busy: f64,
    pub ios: u64,
}

/// Job-level Little's-law figures (see [`SUBMIT_PACED_BLOCKING`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacing {
    /// I/Os in flight at submission: the IO depths distribution's mean (each bucket at its
    /// lower edge, the `>=64` bucket at iodepth), or iodepth without marks.
    pub depth: f64,
    /// Mean slat and lat over all directions (ns), weighted by their I/O counts.
    pub slat_ns: f64,
    pub lat_ns: f64,
    /// `depth x slat_ns / lat_ns`.
    pub paced: f64,
}

/// What the run says about its submissions.
#[derive(Debug, Clone, PartialEq)]
pub enum SubmitVerdict {
    /// The submissions blocked (ran the I/O, or waited for the queue); the text is the evidence.
    Blocked(String),
    /// Submission latencies exist but do not show blocking; the text says what they show.
    Inconclusive(String),
    /// No submission latencies were recorded (disable_slat, gtod_reduce, no I/O).
    NoData,
}

/// Warnings about queued I/O that did not queue, for a finished job (see the module docs).
pub fn analyze(job: &JobSpec, res: &JobResult) -> Vec<Warning> {
    // Only engines whose `iodepth` queues I/O ([`Engine::is_queued`]): sync engines are
    // covered by the runner's `iodepth-sync-engine` warning, and `null` completes instantly by
    // design.
    if job.iodepth <= 1 || !job.ioengine.has(Engine::is_queued) {
        return Vec::new();
    }
    // io_submit_mode=offload: iodepth submit threads each run the engine at depth 1, so a
    // blocking submit (buffered libaio's included) blocks one of them, not the queue: the
    // depth comes from the threads, and the job thread's slat is only the hand-off.
    if job.io_submit_mode == fiox_job::IoSubmitMode::Offload {
        return Vec::new();
    }
    let verdict = verdict(res, job.iodepth, !self_paced(job));
    if job.ioengine.is(Engine::Libaio) && !job.direct {
        return vec![buffered_libaio(job.iodepth, &verdict)];
    }
    match verdict {
        SubmitVerdict::Blocked(evidence) => {
            let engine = job.ioengine.as_str().trim().to_ascii_lowercase();
            vec![sync_submission(&engine, job.iodepth, &evidence)]
        }
        _ => Vec::new(),
    }
}

/// A job that limits its own pace (rate, rate_iops, thinktime) may keep one I/O in flight on
/// purpose, so a shallow depth distribution is no evidence against its engine.
fn self_paced(job: &JobSpec) -> bool {
    let p = &job.pacing;
    let any = |d: &fiox_job::PerDir<u64>| d.read > 0 || d.write > 0 || d.trim > 0;
    any(&p.rate) || any(&p.rate_iops) || !p.thinktime.is_zero()
}

fn buffered_libaio(iodepth: u32, verdict: &SubmitVerdict) -> Warning {
    let config = format!(
        "libaio queues asynchronously only with direct=1; buffered submissions block, so \
         iodepth={iodepth} has no effect"
    );
    let evidence = match verdict {
        SubmitVerdict::Blocked(e) => format!("evidence: {e}"),
        SubmitVerdict::Inconclusive(e) => format!("this run does not show the blocking: {e}"),
        SubmitVerdict::NoData => "this run recorded no submission latencies (disable_slat or \
                            gtod_reduce), so it cannot show the blocking"
            .to_string(),
    };
    Warning::new(WarningCode::BufferedLibaio, format!("{config}. {evidence}"))
}

fn sync_submission(engine: &str, iodepth: u32, evidence: &str) -> Warning {
    Warning::new(
        WarningCode::SyncSubmission,
        format!(
            "the {engine} submissions did not queue asynchronously, so iodepth={iodepth} \
             overlapped little I/O: the submitting thread waited in its submit calls (the I/O \
             ran inside them, the device queue was full, or the thread was preempted in them). \
             evidence: {evidence}"
        ),
    )
}

/// Per-direction submission evidence (read and write; directions without I/O or without
/// recorded slat are left out).
pub fn evidence(res: &JobResult) -> Vec<DirEvidence> {
    let jobs = res.jobs.max(1) as f64;
    [Ddir::Read, Ddir::Write, Ddir::Trim]
        .into_iter()
        .filter_map(|dd| dir_evidence(dd, res.dirs.get(dd), res.runtime_ms, jobs))
        .collect()
}

fn dir_evidence(ddir: Ddir, d: &DirResult, job_ms: u64, jobs: f64) -> Option<DirEvidence> {
    // Without clat or lat there is nothing to compare the submission time with.
    if d.total_ios == 0 || d.slat.n == 0 || (d.lat.n == 0 && d.clat.n == 0) {
        return None;
    }
    let slat_ns = d.slat.mean();
    let lat_ns = if d.lat.n > 0 {
        d.lat.mean()
    } else {
        slat_ns + d.clat.mean()
    };
    let run_ms = if d.runtime_ms > 0 {
        d.runtime_ms
    } else {
        job_ms
    };
    let busy = if run_ms > 0 {
        slat_ns * d.slat.n as f64 / (run_ms as f64 * 1e6 * jobs)
    } else {
        0.0
    };
    let share = if lat_ns > 0.0 { slat_ns / lat_ns } else { 0.0 };
    Some(DirEvidence {
        ddir,
        slat_ns,
        lat_ns,
        share,
        busy,
        ios: d.total_ios,
    })
}

/// Share of the I/Os that were submitted with only one I/O in flight (None without marks).
pub fn depth1_share(depth: &DepthDist) -> Option<f64> {
    let total: u64 = depth.buckets.iter().sum();
    (total > 0).then(|| depth.buckets[0] as f64 / total as f64)
}

/// Mean number of I/Os in flight at submission, from the IO depths buckets (lower edges, so a
/// coarse bucket never overstates the depth; the open `>=64` bucket counts as `iodepth`).
pub fn mean_depth(depth: &DepthDist, iodepth: u32) -> f64 {
    const EDGES: [f64; 6] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
    let total: u64 = depth.buckets.iter().sum();
    let d = iodepth.max(1) as f64;
    if total == 0 {
        return d;
    }
    let sum: f64 = depth
        .buckets
        .iter()
        .enumerate()
        .map(|(i, &n)| n as f64 * EDGES.get(i).copied().unwrap_or(d).min(d))
        .sum();
    sum / total as f64
}

/// Little's-law pacing of a job's submissions (None without slat evidence).
pub fn pacing(res: &JobResult, iodepth: u32) -> Option<Pacing> {
    let ev = evidence(res);
    let n: f64 = ev.iter().map(|e| e.ios as f64).sum();
    if n == 0.0 {
        return None;
    }
    let slat_ns = ev.iter().map(|e| e.slat_ns * e.ios as f64).sum::<f64>() / n;
    let lat_ns = ev.iter().map(|e| e.lat_ns * e.ios as f64).sum::<f64>() / n;
    // No more I/Os can be in flight than the job issued (iodepth=65536 on a 256-I/O job).
    let depth = mean_depth(&res.io_depth, iodepth.min(n as u32).max(1));
    let paced = if lat_ns > 0.0 {
        depth * slat_ns / lat_ns
    } else {
        0.0
    };
    Some(Pacing {
        depth,
        slat_ns,
        lat_ns,
        paced,
    })
}

fn pacing_text(p: &Pacing) -> String {
    format!(
        "with {:.0} I/Os in flight, submit calls took {} of the time ({:.0} x mean slat {} / \
         mean lat {})",
        p.depth,
        pct(p.paced),
        p.depth,
        us(p.slat_ns),
        us(p.lat_ns)
    )
}

/// Decide from the run's numbers whether its submissions blocked (`iodepth`: the job's;
/// `depth_rule`: whether IO depths stuck at 1 count as evidence — not for self-paced jobs).
pub fn verdict(res: &JobResult, iodepth: u32, depth_rule: bool) -> SubmitVerdict {
    let ev = evidence(res);
    let stuck = depth1_share(&res.io_depth).filter(|&s| depth_rule && s >= DEPTH1_STUCK);
    if let Some(share) = stuck {
        let mut text = format!(
            "IO depths 1={:.0}%: one I/O was in flight despite iodepth={iodepth}",
            share * 100.0
        );
        if let Some(e) = ev.iter().max_by(|a, b| a.share.total_cmp(&b.share)) {
            text.push_str(&format!("; {}", share_text(e)));
        }
        return SubmitVerdict::Blocked(text);
    }
    let Some(top) = ev.iter().max_by(|a, b| a.share.total_cmp(&b.share)) else {
        return SubmitVerdict::NoData;
    };
    let Some(p) = pacing(res, iodepth) else {
        return SubmitVerdict::NoData;
    };
    let slowest = ev
        .iter()
        .max_by(|a, b| a.slat_ns.total_cmp(&b.slat_ns))
        .unwrap_or(top);
    if top.share >= SLAT_SHARE_BLOCKING && top.slat_ns >= MIN_BLOCKING_SLAT_NS {
        return SubmitVerdict::Blocked(share_text(top));
    }
    if p.paced >= SUBMIT_PACED_BLOCKING && slowest.slat_ns >= MIN_BLOCKING_SLAT_NS {
        return SubmitVerdict::Blocked(format!("{}; {}", share_text(slowest), pacing_text(&p)));
    }
    if top.share >= INLINE_COMPLETION_SHARE {
        // Fast submissions that are nearly the whole latency: the I/Os completed inside the
        // submit call (page-cache hits, inline execution) — synchronous, if harmlessly fast.
        return SubmitVerdict::Blocked(format!(
            "{}: the I/Os completed inside the submit call",
            share_text(top)
        ));
    }
    let why = if p.paced >= SUBMIT_PACED_BLOCKING {
        // Busy but fast: CPU-bound memory copies, which say nothing about storage.
        "; the submissions were fast but kept the thread busy: the data was likely in memory \
         (page cache, tmpfs), where nothing waits for storage"
    } else {
        "; the submissions did not pace the job"
    };
    SubmitVerdict::Inconclusive(format!("{}; {}{why}", share_text(slowest), pacing_text(&p)))
}

fn share_text(e: &DirEvidence) -> String {
    format!(
        "{} slat {} is {} of lat {}",
        ddir_name(e.ddir),
        us(e.slat_ns),
        pct(e.share),
        us(e.lat_ns)
    )
}

fn ddir_name(d: Ddir) -> &'static str {
    match d {
        Ddir::Read => "read",
        Ddir::Write => "write",
        Ddir::Trim => "trim",
    }
}

/// Microseconds with the precision a reader needs: 1.65 us, 65 us, 6572 us, 108.9 ms.
fn us(ns: f64) -> String {
    let u = ns / 1000.0;
    if u < 10.0 {
        format!("{u:.2} us")
    } else if u < 10_000.0 {
        format!("{u:.0} us")
    } else {
        format!("{:.1} ms", u / 1000.0)
    }
}

fn pct(share: f64) -> String {
    let p = share * 100.0;
    if p > 0.0 && p < 0.01 {
        "<0.01%".to_string()
    } else if p > 0.0 && p < 1.0 {
        format!("{p:.2}%")
    } else {
        format!("{p:.0}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direction with `n` I/Os of the given slat and clat (lat = slat + clat).
    fn dir(n: u64, slat_ns: u64, clat_ns: u64, runtime_ms: u64) -> DirResult {
        let mut d = DirResult {
            total_ios: n,
            io_bytes: n * 4096,
            runtime_ms,
            ..Default::default()
        };
        for i in 0..n {
            // A little spread so the figures are not all identical.
            let jitter = i % 3;
            d.slat.add(slat_ns + jitter);
            d.clat.add(clat_ns + jitter);
            d.lat.add(slat_ns + clat_ns + 2 * jitter);
        }
        d
    }

    fn result(read: DirResult, write: DirResult, runtime_ms: u64, iodepth: u32) -> JobResult {
        let mut r = JobResult {
            jobs: 1,
            runtime_ms,
            iodepth,
            has_slat: true,
            ..Default::default()
        };
        let ios = read.total_ios + write.total_ios;
        r.dirs.read = read;
        r.dirs.write = write;
        // Depth bucket 32 (index 5) for every I/O: the queue was full.
        r.io_depth.buckets[5] = ios;
        r
    }

    fn job(engine: &str, iodepth: u32, direct: bool) -> JobSpec {
        JobSpec {
            ioengine: engine.into(),
            iodepth,
            direct,
            ..JobSpec::default()
        }
    }

    /// Seed 000's unpatched kernel, scaled to one second: 151 read and 151 write IOPS, read
    /// slat 6571.88 us, clat 102349 us; write slat 24.66 us, clat 102260 us.
    fn seed000_unpatched() -> JobResult {
        result(
            dir(151, 6_571_880, 102_349_310, 1000),
            dir(151, 24_660, 102_260_250, 1000),
            1000,
            32,
        )
    }

    /// Seed 000's patched kernel: 123 + 122 IOPS, slat 1.65 / 1.85 us, clat ~134 / 127 ms.
    fn seed000_patched() -> JobResult {
        result(
            dir(123, 1_650, 134_150_000, 1000),
            dir(122, 1_850, 126_590_220, 1000),
            1000,
            32,
        )
    }

    fn codes(ws: &[Warning]) -> Vec<WarningCode> {
        ws.iter().map(|w| w.code).collect()
    }

    /// iodepth=65536 on a 256-I/O job: at most 256 I/Os were ever in flight, so the Little's
    /// law figure uses 256, not 65536 (it said "submit calls took 81385% of the time").
    #[test]
    fn depth_is_capped_at_the_ios_issued() {
        let mut r = result(
            dir(256, 40_000, 5_000_000, 100),
            DirResult::default(),
            100,
            65536,
        );
        r.io_depth.buckets = [0; 7];
        r.io_depth.buckets[6] = 256; // all in the open `>=64` bucket
        let p = pacing(&r, 65536).unwrap();
        assert_eq!(p.depth, 256.0);
        let text = analyze(&job("libaio", 65536, false), &r)[0].message.clone();
        assert!(text.contains("with 256 I/Os in flight"), "{text}");
    }

    #[test]
    fn seed000_unpatched_blocks_with_evidence() {
        let ws = analyze(&job("libaio", 32, false), &seed000_unpatched());
        assert_eq!(codes(&ws), [WarningCode::BufferedLibaio]);
        let m = &ws[0].message;
        assert!(m.contains("iodepth=32 has no effect"), "{m}");
        assert!(
            m.contains("evidence: read slat 6572 us is 6% of lat 108.9 ms"),
            "{m}"
        );
        assert!(
            m.contains("with 32 I/Os in flight, submit calls took 100% of the time"),
            "{m}"
        );
        assert!(ws[0].fix.contains("direct=1"));
    }

    #[test]
    fn seed000_patched_is_inconclusive_but_still_warns() {
        let ws = analyze(&job("libaio", 32, false), &seed000_patched());
        assert_eq!(codes(&ws), [WarningCode::BufferedLibaio]);
        let m = &ws[0].message;
        assert!(m.contains("this run does not show the blocking"), "{m}");
        assert!(m.contains("did not pace the job"), "{m}");
        assert!(!m.contains("evidence: ") && !m.contains("in memory"), "{m}");
        assert!(
            m.contains("write slat 1.85 us"),
            "the slowest submission is cited: {m}"
        );
    }

    /// Offloaded submission: the depth comes from the submit threads, so even the unpatched
    /// seed's blocking numbers say nothing about iodepth being ignored.
    #[test]
    fn offloaded_submission_is_not_judged() {
        let mut j = job("libaio", 32, false);
        j.io_submit_mode = fiox_job::IoSubmitMode::Offload;
        assert!(analyze(&j, &seed000_unpatched()).is_empty());
        j.ioengine = "io_uring".into();
        assert!(analyze(&j, &seed000_unpatched()).is_empty());
    }

    #[test]
    fn direct_libaio_with_async_numbers_is_quiet() {
        assert!(analyze(&job("libaio", 32, true), &seed000_patched()).is_empty());
        assert!(analyze(&job("io_uring", 32, false), &seed000_patched()).is_empty());
    }

    #[test]
    fn brief_example_share_fires() {
        // slat 65 us of lat 135 us at depth 4: the I/O waited inside io_submit.
        let r = result(
            dir(1000, 65_000, 70_000, 1000),
            DirResult::default(),
            1000,
            4,
        );
        let ws = analyze(&job("libaio", 4, false), &r);
        assert_eq!(codes(&ws), [WarningCode::BufferedLibaio]);
        assert!(
            ws[0]
                .message
                .contains("evidence: read slat 65 us is 48% of lat 135 us"),
            "{}",
            ws[0].message
        );
    }

    #[test]
    fn page_cache_speed_is_inconclusive() {
        // 1.2 us submissions keeping the thread busy 80% of the time: memory copies.
        let r = result(
            dir(400_000, 1_200, 38_000, 1000),
            dir(266_000, 1_200, 38_000, 1000),
            1000,
            32,
        );
        let v = verdict(&r, 32, true);
        match &v {
            SubmitVerdict::Inconclusive(t) => assert!(t.contains("likely in memory"), "{t}"),
            other => panic!("{other:?}"),
        }
        let ws = analyze(&job("libaio", 32, false), &r);
        assert!(ws[0].message.contains("does not show the blocking"));
        // The same numbers from io_uring are healthy: no warning.
        assert!(analyze(&job("io_uring", 32, false), &r).is_empty());
    }

    #[test]
    fn no_slat_says_so() {
        let mut r = seed000_unpatched();
        r.dirs.read.slat = Default::default();
        r.dirs.write.slat = Default::default();
        assert_eq!(verdict(&r, 32, true), SubmitVerdict::NoData);
        let ws = analyze(&job("libaio", 32, false), &r);
        assert!(ws[0].message.contains("disable_slat"), "{}", ws[0].message);
    }

    #[test]
    fn sync_submission_from_blocking_slat_on_any_queued_engine() {
        let ws = analyze(&job("guasi", 32, true), &seed000_unpatched());
        assert_eq!(codes(&ws), [WarningCode::SyncSubmission]);
        assert!(ws[0].message.contains("guasi submissions did not queue"));
        assert!(ws[0].message.contains("iodepth=32"));
        // Not for libaio buffered (already buffered-libaio), not for sync engines or depth 1.
        let ws = analyze(&job("libaio", 32, false), &seed000_unpatched());
        assert_eq!(codes(&ws), [WarningCode::BufferedLibaio]);
        assert!(analyze(&job("psync", 32, false), &seed000_unpatched()).is_empty());
        assert!(analyze(&job("null", 32, false), &seed000_unpatched()).is_empty());
        assert!(analyze(&job("guasi", 1, false), &seed000_unpatched()).is_empty());
    }

    #[test]
    fn sync_submission_from_depth_stuck_at_one() {
        let mut r = seed000_patched();
        let total: u64 = r.io_depth.buckets.iter().sum();
        r.io_depth.buckets = [total * 95 / 100, total - total * 95 / 100, 0, 0, 0, 0, 0];
        let ws = analyze(&job("io_uring", 32, true), &r);
        assert_eq!(codes(&ws), [WarningCode::SyncSubmission]);
        assert!(
            ws[0].message.contains("IO depths 1=95%"),
            "{}",
            ws[0].message
        );
        // Not for a job that paces itself (one I/O in flight may be the rate limit's doing).
        let mut paced_job = job("io_uring", 32, true);
        paced_job.pacing.rate_iops.read = 100;
        assert!(analyze(&paced_job, &r).is_empty());
        paced_job.pacing.rate_iops.read = 0;
        paced_job.pacing.thinktime = std::time::Duration::from_micros(50);
        assert!(analyze(&paced_job, &r).is_empty());
        // 85% at depth 1 is not stuck.
        r.io_depth.buckets = [85, 15, 0, 0, 0, 0, 0];
        assert!(analyze(&job("io_uring", 32, true), &r).is_empty());
    }

    #[test]
    fn inline_completion_fires_even_when_fast() {
        // io_uring on cached data: slat 2 us of lat 2.5 us.
        let r = result(dir(1000, 2_000, 500, 1000), DirResult::default(), 1000, 32);
        let ws = analyze(&job("io_uring", 32, false), &r);
        assert_eq!(codes(&ws), [WarningCode::SyncSubmission]);
        assert!(ws[0].message.contains("completed inside the submit call"));
    }

    #[test]
    fn merged_jobs_share_the_run_time() {
        // Two jobs merged by group_reporting, each inside submit calls 40% of the run.
        let mut r = result(
            dir(40_000, 20_000, 500_000, 1000),
            DirResult::default(),
            1000,
            32,
        );
        r.jobs = 2;
        let e = evidence(&r);
        assert!((e[0].busy - 0.4).abs() < 1e-3, "{e:?}");
    }

    #[test]
    fn pacing_uses_the_depth_the_queue_reached() {
        // 20 us submissions of 200 us I/Os: blocking if 32 were in flight (32 x 20 / 220),
        // not if the queue only reached 1-2 (a rate-limited or thinktime job).
        let mut r = result(
            dir(1000, 20_000, 180_000, 1000),
            DirResult::default(),
            1000,
            32,
        );
        let p = pacing(&r, 32).unwrap();
        assert!((p.depth - 32.0).abs() < 1e-9 && p.paced > 2.0, "{p:?}");
        assert!(matches!(verdict(&r, 32, true), SubmitVerdict::Blocked(_)));
        r.io_depth.buckets = [600, 400, 0, 0, 0, 0, 0];
        let p = pacing(&r, 32).unwrap();
        assert!((p.depth - 1.4).abs() < 1e-9, "{p:?}");
        assert!(matches!(
            verdict(&r, 32, true),
            SubmitVerdict::Inconclusive(_)
        ));
        // The open >=64 bucket counts as iodepth; edges never exceed iodepth.
        r.io_depth.buckets = [0, 0, 0, 0, 0, 0, 10];
        assert_eq!(mean_depth(&r.io_depth, 1000), 1000.0);
        r.io_depth.buckets = [0, 0, 0, 0, 0, 10, 0];
        assert_eq!(mean_depth(&r.io_depth, 20), 20.0);
        assert_eq!(mean_depth(&DepthDist::default(), 8), 8.0);
    }

    #[test]
    fn no_completion_latency_is_no_evidence() {
        // disable_clat + disable_lat: slat alone cannot be compared with anything.
        let mut r = result(
            dir(100, 65_000, 70_000, 1000),
            DirResult::default(),
            1000,
            4,
        );
        r.dirs.read.lat = Default::default();
        r.dirs.read.clat = Default::default();
        assert!(evidence(&r).is_empty());
        assert_eq!(verdict(&r, 4, true), SubmitVerdict::NoData);
        assert!(analyze(&job("io_uring", 4, true), &r).is_empty());
    }

    #[test]
    fn missing_lat_uses_slat_plus_clat() {
        let mut r = result(
            dir(100, 65_000, 70_000, 1000),
            DirResult::default(),
            1000,
            4,
        );
        r.dirs.read.lat = Default::default();
        let e = evidence(&r);
        assert!((e[0].lat_ns - 135_002.0).abs() < 5.0, "{e:?}");
    }

    /// Figures measured on this project's 2-vCPU VM (docs/experiments.md, virtio disk with
    /// nr_requests=256, 5 s runs): libaio direct=1 at depth 1000 blocks in io_submit waiting for
    /// request slots; at depth 100 it does not; guasi offload on tmpfs is fast but busy.
    #[test]
    fn measured_on_the_project_vm() {
        let mut qd1000 = result(
            dir(118_520, 20_000, 20_200_000, 5000),
            dir(118_345, 21_000, 21_900_000, 5000),
            5000,
            1000,
        );
        qd1000.io_depth.buckets = [0, 0, 0, 0, 0, 0, 236_865];
        let ws = analyze(&job("libaio", 1000, true), &qd1000);
        assert_eq!(codes(&ws), [WarningCode::SyncSubmission]);
        let m = &ws[0].message;
        assert!(
            m.contains("with 1000 I/Os in flight, submit calls took 97%"),
            "{m}"
        );
        // guasi offload on the disk, on the loaded VM: 12 us submissions, not blocking.
        let offload = result(
            dir(93_620, 12_000, 964_000, 5000),
            dir(93_360, 11_000, 723_000, 5000),
            5000,
            32,
        );
        assert!(analyze(&job("guasi", 32, false), &offload).is_empty());
        let qd100 = result(
            dir(148_435, 5_690, 1_500_000, 5000),
            dir(148_510, 6_640, 1_854_000, 5000),
            5000,
            100,
        );
        assert!(analyze(&job("libaio", 100, true), &qd100).is_empty());
        let guasi_tmpfs = result(
            dir(229_635, 9_190, 336_000, 5000),
            dir(229_530, 9_250, 343_000, 5000),
            5000,
            32,
        );
        assert!(analyze(&job("guasi", 32, false), &guasi_tmpfs).is_empty());
    }

    #[test]
    fn formatting() {
        assert_eq!(us(1_650.0), "1.65 us");
        assert_eq!(us(65_000.0), "65 us");
        assert_eq!(us(108_921_190.0), "108.9 ms");
        assert_eq!(pct(0.0002), "0.02%");
        assert_eq!(pct(0.48), "48%");
        assert_eq!(pct(0.0), "0%");
        assert_eq!(pct(0.000_015), "<0.01%");
    }
}
