//! The job's features as one typed set, and the fast paths that declare which of them they
//! handle. The set is computed once per run from the loop's parts ([`IoLoop::features`]);
//! a fast path is taken when the set is a subset of what the path supports (and the engine
//! can go that way). Each path decides every feature in an exhaustive `match`
//! ([`FastPath::supports`]): a new per-I/O feature does not compile until every path has
//! said whether it handles it, so none can skip it silently.

use super::IoLoop;

/// One thing a job may do per I/O that a fast path may not know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Feature {
    /// `verify=`: writes carry headers, reads are checked.
    Verify,
    /// Verify reads queued for this run (the verify phase, a `verify_backlog` batch).
    VerifyReads,
    /// `read_iolog`: the log's I/Os replace the generator's.
    Replay,
    /// `flow=`: the job may be held back for its flow.
    Flow,
    /// `lockfile=`: each submission takes its file's lock.
    Locks,
    /// `latency_target`: the depth is probed and changed.
    LatencyTarget,
    /// `write_iolog`: every I/O is logged as it is queued.
    WriteIolog,
    /// `openfiles` below nrfiles: files open and close as the generator says.
    OpenGate,
    /// fio's file-operation engines: an operation at each open of a file.
    FileOps,
    /// cpuio's `exit_on_io_done`.
    ExitOnIoDone,
    /// `sync_file_range` every N writes.
    SyncFileRange,
    /// `fsync` / `fdatasync` every N writes.
    SyncInterval,
    /// `--debug=io` lines per I/O.
    DebugIo,
    /// `--debug=random` lines per offset draw.
    DebugRandom,
    /// Rate limits, `rate_iops`, thinktime or an engine's own thinktime.
    Paced,
    /// `thinkcycles` after each I/O.
    ThinkCycles,
    /// I/O overlapping an in-flight write is held back (verify, `serialize_overlap`).
    Serialize,
    /// `trim_backlog`: verify-trim rounds between I/Os.
    TrimBacklog,
    /// The workload trims.
    Trims,
    /// Per-I/O log lines (lat/clat/slat logs, bw/iops logs without averaging).
    LogSamples,
    /// `max_latency`.
    MaxLatency,
    /// `act=`: per-I/O latency slices.
    Act,
    /// `--explain` windows: each I/O's latency inside them.
    ExplainWindows,
    /// `--explain` marks around libaio's io_submit/io_getevents made by the loop.
    ExplainAioMarks,
    /// cmdprio: per-priority statistics.
    Prios,
    /// Statistics other than fio's defaults for the engine (slat or lat with histograms, or
    /// some off).
    PartialMeasure,
    /// No per-I/O clocks (`gtod_reduce` or every latency off).
    Untimed,
}

impl Feature {
    pub(crate) const ALL: [Feature; 27] = [
        Feature::Verify,
        Feature::VerifyReads,
        Feature::Replay,
        Feature::Flow,
        Feature::Locks,
        Feature::LatencyTarget,
        Feature::WriteIolog,
        Feature::OpenGate,
        Feature::FileOps,
        Feature::ExitOnIoDone,
        Feature::SyncFileRange,
        Feature::SyncInterval,
        Feature::DebugIo,
        Feature::DebugRandom,
        Feature::Paced,
        Feature::ThinkCycles,
        Feature::Serialize,
        Feature::TrimBacklog,
        Feature::Trims,
        Feature::LogSamples,
        Feature::MaxLatency,
        Feature::Act,
        Feature::ExplainWindows,
        Feature::ExplainAioMarks,
        Feature::Prios,
        Feature::PartialMeasure,
        Feature::Untimed,
    ];

    const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// The features `account` hands to its per-I/O hooks.
    pub(crate) const fn is_hook(self) -> bool {
        matches!(
            self,
            Feature::LogSamples
                | Feature::MaxLatency
                | Feature::LatencyTarget
                | Feature::Act
                | Feature::ExplainWindows
        )
    }
}

/// A set of [`Feature`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Features(u32);

impl Features {
    pub(crate) const fn with(self, f: Feature) -> Features {
        Features(self.0 | f.bit())
    }

    /// `self` plus `f` when `on`.
    pub(crate) const fn with_if(self, f: Feature, on: bool) -> Features {
        if on {
            self.with(f)
        } else {
            self
        }
    }

    pub(crate) const fn contains(self, f: Feature) -> bool {
        self.0 & f.bit() != 0
    }

    pub(crate) const fn is_subset_of(self, other: Features) -> bool {
        self.0 & !other.0 == 0
    }

    /// Whether any of the per-I/O hooks is in the set.
    pub(crate) fn has_hooks(self) -> bool {
        Feature::ALL
            .iter()
            .any(|&f| f.is_hook() && self.contains(f))
    }
}

/// The loop's fast paths (module notes of [`super`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FastPath {
    /// [`super::lean`]: a synchronous engine's I/O issued and accounted in one tight loop.
    Lean,
    /// `next_slot` / `fill_queue` take the generator's next request without checking for
    /// verify reads, syncs, replays, gates or flows.
    PlainNext,
    /// [`super::batch`]: each submit batch queued in one engine call.
    Batch,
    /// [`super::ring`]: the batch path through the engine's ring directly.
    Ring,
    /// `account_plain`: a queued unit accounted with fio's default statistics only.
    PlainAccounting,
    /// The ring loop's accounting without per-I/O clocks (`gtod_reduce`, or every latency
    /// off): bytes and I/Os only, the clock read once per reap. Taken only when the job is
    /// not timed (the plan checks that: what is measured does not matter then).
    UntimedAccounting,
}

impl FastPath {
    #[cfg(test)]
    pub(crate) const ALL: [FastPath; 6] = [
        FastPath::Lean,
        FastPath::PlainNext,
        FastPath::Batch,
        FastPath::Ring,
        FastPath::PlainAccounting,
        FastPath::UntimedAccounting,
    ];

    /// Whether this path handles `f` itself (or `f` cannot change what it does). Exhaustive
    /// on purpose: a new feature is decided here for every path.
    pub(crate) const fn supports(self, f: Feature) -> bool {
        use Feature::*;
        match self {
            // Its own request/submit/account steps: only the statistics' variants and the
            // per-I/O hooks `account` takes are handled.
            FastPath::Lean => match f {
                Trims | LogSamples | MaxLatency | Act | ExplainWindows | ExplainAioMarks
                | Prios | PartialMeasure | Untimed => true,
                Verify | VerifyReads | Replay | Flow | Locks | LatencyTarget | WriteIolog
                | OpenGate | FileOps | ExitOnIoDone | SyncFileRange | SyncInterval | DebugIo
                | DebugRandom | Paced | ThinkCycles | Serialize | TrimBacklog => false,
            },
            // Only where the next unit comes from: what submit and complete do is the
            // general path's.
            FastPath::PlainNext => match f {
                Verify | VerifyReads | Replay | Flow | OpenGate | FileOps | ExitOnIoDone
                | SyncFileRange | SyncInterval | Serialize | TrimBacklog => false,
                Locks | LatencyTarget | WriteIolog | DebugIo | DebugRandom | Paced
                | ThinkCycles | Trims | LogSamples | MaxLatency | Act | ExplainWindows
                | ExplainAioMarks | Prios | PartialMeasure | Untimed => true,
            },
            // PlainNext's sources, units prepared without pacing, locks, debug lines,
            // thinkcycles or a probed depth; reads and writes only.
            FastPath::Batch => match f {
                Verify | VerifyReads | Replay | Flow | OpenGate | FileOps | ExitOnIoDone
                | SyncFileRange | SyncInterval | Serialize | TrimBacklog | Locks
                | LatencyTarget | DebugIo | Paced | ThinkCycles | Trims => false,
                WriteIolog | DebugRandom | LogSamples | MaxLatency | Act | ExplainWindows
                | ExplainAioMarks | Prios | PartialMeasure | Untimed => true,
            },
            // The batch path without the engine's marked calls.
            FastPath::Ring => match f {
                ExplainAioMarks => false,
                _ => FastPath::Batch.supports(f),
            },
            FastPath::PlainAccounting => match f {
                LogSamples | MaxLatency | LatencyTarget | Act | ExplainWindows | Paced | Prios
                | PartialMeasure | Untimed => false,
                Verify | VerifyReads | Replay | Flow | Locks | WriteIolog | OpenGate | FileOps
                | ExitOnIoDone | SyncFileRange | SyncInterval | DebugIo | DebugRandom
                | ThinkCycles | Serialize | TrimBacklog | Trims | ExplainAioMarks => true,
            },
            // Plain accounting's counts without its clocks: nothing is timed, so which
            // latencies would be measured does not matter.
            FastPath::UntimedAccounting => match f {
                Untimed | PartialMeasure => true,
                _ => FastPath::PlainAccounting.supports(f),
            },
        }
    }

    /// Every feature the path handles.
    pub(crate) const fn supported(self) -> Features {
        let mut set = Features(0);
        let mut i = 0;
        while i < Feature::ALL.len() {
            set = set.with_if(Feature::ALL[i], self.supports(Feature::ALL[i]));
            i += 1;
        }
        set
    }

    /// Whether a job with `set` may take this path (the engine's part aside).
    pub(crate) const fn allows(self, set: Features) -> bool {
        set.is_subset_of(self.supported())
    }
}

impl IoLoop<'_> {
    /// The job's features for this run, from the loop's parts (the verify phase is a run of
    /// its own, with verify reads).
    pub(super) fn features(&self) -> Features {
        use Feature::*;
        let job = self.job;
        let m = self.time.measure;
        // fio's defaults; a synchronous engine has no slat (its submission is the I/O).
        let slat = m.slat || self.eng.copy_lat;
        let default_stats = m.clat && slat && !m.slat_hist && m.lat && !m.lat_hist;
        Features::default()
            .with_if(Verify, self.check.verify.is_some())
            .with_if(
                VerifyReads,
                self.check.verify_phase || !self.check.vq.is_empty(),
            )
            .with_if(Replay, self.ctl.replay.is_some())
            .with_if(Flow, self.ctl.flow.is_some())
            .with_if(Locks, self.ctl.locks.is_some())
            .with_if(LatencyTarget, self.per_io.lat_target.is_some())
            .with_if(WriteIolog, self.obs.iolog.is_some())
            .with_if(OpenGate, self.files.gate.is_some())
            .with_if(FileOps, self.files.file_ops.is_some())
            .with_if(ExitOnIoDone, self.ctl.io_jobs_done.is_some())
            .with_if(SyncFileRange, job.files.sync_file_range.is_some())
            .with_if(SyncInterval, job.fsync != 0 || job.fdatasync != 0)
            .with_if(DebugIo, self.obs.dbg_io)
            .with_if(DebugRandom, self.obs.dbg_random)
            .with_if(Paced, self.time.paced)
            .with_if(ThinkCycles, job.pacing.thinkcycles != 0)
            .with_if(Serialize, self.check.serialize)
            .with_if(TrimBacklog, job.verify.trim_backlog != 0)
            .with_if(Trims, job.rw.mode.has_trim())
            .with_if(LogSamples, self.obs.log_io)
            .with_if(MaxLatency, self.per_io.max_lat_on)
            .with_if(Act, self.acct.act.is_some())
            .with_if(ExplainWindows, self.per_io.win_lat.is_some())
            .with_if(ExplainAioMarks, self.plan.mark_aio.is_some())
            .with_if(Prios, self.acct.dirs.iter().any(|d| !d.prios.is_empty()))
            .with_if(PartialMeasure, !default_stats)
            .with_if(Untimed, !self.time.timed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_feature_has_its_own_bit() {
        let mut seen = Features::default();
        for f in Feature::ALL {
            assert!(!seen.contains(f), "{f:?} shares a bit");
            seen = seen.with(f);
            assert!(seen.contains(f));
        }
        assert_eq!(seen.0.count_ones() as usize, Feature::ALL.len());
    }

    /// Each path is allowed for a job with exactly one feature iff it supports that feature,
    /// and for a plain job (no feature) always; a feature it does not support in a set of
    /// otherwise supported ones still turns it away.
    #[test]
    fn a_path_is_taken_exactly_for_the_features_it_supports() {
        for p in FastPath::ALL {
            assert!(p.allows(Features::default()), "{p:?} refuses a plain job");
            for f in Feature::ALL {
                let one = Features::default().with(f);
                assert_eq!(p.allows(one), p.supports(f), "{p:?} with {f:?}");
                let mut mixed = one;
                for g in Feature::ALL.into_iter().filter(|&g| p.supports(g)) {
                    mixed = mixed.with(g);
                }
                assert_eq!(
                    p.allows(mixed),
                    p.supports(f),
                    "{p:?} with {f:?} among others"
                );
            }
        }
    }

    /// The paths nest as the loop uses them: the ring loop is a batch path, the batch path
    /// takes the generator's requests plainly.
    #[test]
    fn the_queued_fast_paths_nest() {
        let sup = |p: FastPath| p.supported();
        assert!(sup(FastPath::Ring).is_subset_of(sup(FastPath::Batch)));
        assert!(sup(FastPath::Batch).is_subset_of(sup(FastPath::PlainNext)));
        assert!(!FastPath::Ring.supports(Feature::ExplainAioMarks));
        // Nothing that changes a unit's source, pacing or checks goes the lean way.
        for f in [
            Feature::Verify,
            Feature::Paced,
            Feature::Replay,
            Feature::SyncInterval,
        ] {
            assert!(!FastPath::Lean.supports(f), "{f:?}");
        }
    }

    type Builder<'a> = super::super::api::IoLoopBuilder<'a>;

    fn none(b: Builder<'_>) -> Builder<'_> {
        b
    }

    /// The features the loop finds for a null-engine job with `options` (after `extra` set
    /// what only the job's owner gives the builder), once its run is planned.
    fn found(options: &str, extra: impl for<'a> FnOnce(Builder<'a>) -> Builder<'a>) -> Features {
        let text = format!("[t]\nioengine=null\nsize=1m\nthread\n{options}\n");
        let job = fiox_job::parse_job_text(&text, "features.fio")
            .expect("job parses")
            .remove(0);
        let plan = crate::files::plan(&job, true).expect("plan");
        let gen = crate::gen::generator(&job, &plan).expect("generator");
        let mut filler = crate::gen::filler(&job, &gen);
        // As the job's phases make it (verify=).
        let origins: Vec<u64> = plan.files.iter().map(|f| f.offset).collect();
        let verify = crate::verify::JobVerify::new(&job, gen.seed(), &origins).expect("verify");
        let mut pool = crate::job::memory::buffer_pool(&job, &mut filler).expect("pool");
        let mut engine = fiox_engine::create(&job).expect("engine");
        let progress = crate::io::acct::Progress::default();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let b = IoLoop::builder(
            &job,
            &mut *engine,
            &mut pool,
            (gen, filler),
            (&progress, &stop),
        );
        let mut lp = extra(b.verify(verify, false)).build();
        lp.start(None);
        lp.plan_run();
        lp.plan.features
    }

    /// Each feature a job's options or its owner can give is found from them, alone: a
    /// fast path's subset check sees what the job really does.
    #[test]
    fn the_loop_finds_each_feature_the_job_has() {
        use Feature::*;
        assert_eq!(
            found("rw=randread", none),
            Features::default(),
            "a plain job"
        );
        let cases: [(&str, &[Feature]); 15] = [
            ("rw=write\nfsync=4", &[SyncInterval]),
            ("rw=write\nfdatasync=2", &[SyncInterval]),
            ("rw=write\nsync_file_range=write:4", &[SyncFileRange]),
            ("rw=read\nthinkcycles=100", &[ThinkCycles]),
            ("rw=read\nrate=1m", &[Paced]),
            ("rw=read\nthinktime=10", &[Paced]),
            ("rw=randtrim", &[Trims]),
            ("rw=write\nverify=crc32c", &[Verify]),
            ("rw=write\nverify=crc32c\niodepth=4", &[Verify, Serialize]),
            ("rw=write\nserialize_overlap=1\niodepth=4", &[Serialize]),
            (
                "rw=trimwrite\nverify=md5\ntrim_percentage=10\ntrim_backlog=16",
                &[Verify, TrimBacklog, Trims],
            ),
            ("rw=read\nmax_latency=10ms", &[MaxLatency]),
            (
                "rw=read\nlatency_target=10ms\nlatency_window=1s\niodepth=4",
                &[LatencyTarget],
            ),
            ("rw=read\ngtod_reduce=1", &[Untimed, PartialMeasure]),
            ("rw=read\ndisable_slat=1\niodepth=4", &[PartialMeasure]),
        ];
        for (opts, want) in cases {
            let want = want.iter().fold(Features::default(), |s, &f| s.with(f));
            assert_eq!(found(opts, none), want, "{opts}");
        }
        fn cpuio_end(b: Builder<'_>) -> Builder<'_> {
            b.io_jobs_done(|| false)
        }
        let cpuio = found("rw=read", cpuio_end);
        assert_eq!(cpuio, Features::default().with(ExitOnIoDone));
    }

    #[test]
    fn hooks_are_what_plain_accounting_skips() {
        for f in Feature::ALL.into_iter().filter(|f| f.is_hook()) {
            assert!(!FastPath::PlainAccounting.supports(f), "{f:?}");
            assert!(!FastPath::UntimedAccounting.supports(f), "{f:?}");
            assert!(Features::default().with(f).has_hooks());
        }
        assert!(!Features::default().with(Feature::Verify).has_hooks());
    }
}
