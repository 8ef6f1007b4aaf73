//! The resolved, typed job: what every crate below the parser consumes.
//!
//! `JobSpec` is the contract between the `job` crate (which fills it from job files and command
//! lines) and the runner, workload generators, engines and reports (which only read it). Nothing
//! downstream ever sees option strings, except `raw_options`, kept verbatim for fio's JSON
//! `job options` object and `--showcmd`.
//!
//! Units: sizes and offsets in bytes, times as `Duration` (or nanoseconds where noted), rates in
//! bytes/s or I/Os per second, percentages as integers 0..=100 unless noted.
//!
//! The folder, by concept (the lower in this list, the more it may use of those above it,
//! never the reverse): [`io`] (directions, pattern, block sizes), [`files`], [`engine`],
//! [`workload`] (offsets and buffer contents), [`control`] (pacing, timing, replay), [`output`]
//! (logs and statistics), [`placement`] (CPUs, NUMA), [`exit`] (errors, exitall), [`verify`],
//! [`run`] (whole-run settings); this file holds [`JobSpec`], which gathers them.

pub mod control;
pub mod engine;
pub mod exit;
pub mod files;
pub mod io;
pub mod output;
pub mod placement;
pub mod run;
pub mod verify;
pub mod workload;

pub use control::*;
pub use engine::*;
pub use exit::*;
pub use files::*;
pub use io::*;
pub use output::*;
pub use placement::*;
pub use run::*;
pub use verify::*;
pub use workload::*;

use std::time::Duration;

/// One job after `[global]` inheritance, numjobs expansion and derivation of defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub description: Option<String>,
    /// fio 3.42's `comm`: the name the job's thread takes (prctl PR_SET_NAME).
    pub comm: Option<String>,
    /// Position of this (expanded) job in the run, from 0.
    pub index: u32,
    /// Which of `numjobs` clones this is: fio's `subjob_number`, the `$jobnum` of its file
    /// names and the multiplier of `offset_increment`. 0 is the job itself; the clones after
    /// it count down (see [`subjob_number`]), so it is not the position among the clones.
    pub clone_index: u32,
    pub numjobs: u32,
    /// Reporting group: increments at each `stonewall`/`new_group` and at each new job file.
    pub group_id: u32,
    /// This job waits for all earlier jobs to finish before starting.
    pub stonewall: bool,
    pub new_group: bool,
    /// `wait_for=NAME`
    pub wait_for: Option<String>,
    /// Job file this job came from (None for command line), for messages.
    pub source: Option<String>,

    pub rw: RwSpec,
    /// `rw=<sequential mode>:-N`: the `:N` of `rw` is subtracted instead of added, so
    /// sequential I/O walks backwards (fio's negative `ddir_seq_add`).
    pub seq_backwards: bool,
    pub rwmixread: u32,
    pub bs: PerDir<BsSpec>,
    pub blockalign: PerDir<Option<u64>>,
    pub bs_unaligned: bool,
    /// `bs_is_seq_rand`: the read,write sizes of `bs`/`bsrange`/`bssplit` are the sizes of
    /// sequential,random I/O instead.
    pub bs_is_seq_rand: bool,
    pub size: Option<SizeSpec>,
    pub io_size: Option<SizeSpec>,
    pub offset: SizeSpec,
    pub offset_increment: u64,
    /// `offset_increment=N%`: N percent (whole, as fio reads it) of each file's size at setup,
    /// rounded up to `offset_align` or the smallest block size (0: `offset_increment` bytes).
    pub offset_increment_pct: u32,
    pub offset_align: u64,
    pub number_ios: Option<u64>,
    pub zero_fill: bool,

    pub files: FileSpec,
    pub thread: bool,
    /// `ioengine=`: the name as fio prints it and the engine it names.
    pub ioengine: crate::IoEngineName,
    pub engine: EngineOptions,
    pub iodepth: u32,
    /// `iodepth` was given (a blktrace replay otherwise takes the depth the trace shows).
    pub iodepth_given: bool,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub iodepth_low: u32,
    pub io_submit_mode: IoSubmitMode,

    pub direct: bool,
    /// `atomic=1`: open with O_DIRECT and fio's OS_O_ATOMIC bit (`direct` is set too).
    pub atomic: bool,
    /// `write_barrier=N`: fio marks every Nth write as a barrier, which only its libpmem
    /// engine acts on; kept for `--showcmd` and the report, it changes no I/O here either.
    pub write_barrier: u32,
    pub sync: SyncMode,
    pub fsync: u64,
    pub fdatasync: u64,
    pub end_fsync: bool,
    /// fio 3.42's `end_syncfs`: at the end of the writes, one syncfs(2) per filesystem holding
    /// the job's files instead of end_fsync's fsync(2) per file.
    pub end_syncfs: bool,
    pub fsync_on_close: bool,

    pub timing: TimingSpec,
    pub rand: RandSpec,
    pub buffers: BufferSpec,
    pub pacing: PacingSpec,
    pub stats: StatsSpec,
    pub logs: LogSpec,
    pub cpu: CpuSpec,
    pub errors: ErrorSpec,
    pub verify: VerifySpec,
    pub kb_base: u32,
    pub unit_base: u32,
    /// `zonemode`, `zonesize`, `zonerange`, `zoneskip`.
    pub zone: ZoneSpec,
    /// `read_iolog` and the `replay_*` options.
    pub replay: ReplaySpec,
    /// `steadystate`, `ss_dur`, `ss_ramp`.
    pub steadystate: SteadySpec,
    /// `flow`, `flow_id`, `flow_sleep`.
    pub flow: FlowSpec,
    /// `latency_target`, `latency_window`, `latency_percentile`, `latency_run`.
    pub lat_target: LatTargetSpec,
    /// `cmdprio_percentage` / `cmdprio_bssplit` (io_uring, libaio): which I/Os get which
    /// priority; None when the job uses neither (every I/O has the job's default priority).
    pub cmdprio: Option<crate::cmdprio::CmdPrio>,
    /// `exec_prerun=` / `exec_postrun=`: shell commands run before the job's I/O and after it.
    pub exec_prerun: Option<String>,
    pub exec_postrun: Option<String>,
    /// `ioscheduler=`: the I/O scheduler to switch the job's disks to.
    pub ioscheduler: Option<String>,
    /// `clocksource=`: how I/O times are read (None: fio's default choice, the TSC where the
    /// kernel trusts it, else clock_gettime).
    pub clocksource: Option<ClockSource>,

    /// Options exactly as written for this job (after `[global]` inheritance, before
    /// defaults), in order, for `--showcmd`.
    pub raw_options: Vec<(String, String)>,
    /// Only the options written in the job's own section (with `name` when it was given as an
    /// option, as on the command line), in order, under fio's names (`rw` for `readwrite`):
    /// fio's JSON `job options`, which leaves out what `[global]` set.
    pub own_options: Vec<(String, String)>,
    /// fio options, option values and engines this job uses that fiox parses and checks but
    /// cannot execute yet, in the order written (one entry per option name, the last value
    /// wins). Non-empty means the job must not run: see [`JobSpec::refusal`].
    pub unsupported: Vec<Unsupported>,
    /// `--aux-path`: where verify state files and verify dumps go (None: as without it).
    pub aux_path: Option<String>,
    /// `--profile=act`: count this job's latencies into act's hourly slices (fio hooks every
    /// job of the run once act is loaded).
    pub act: Option<crate::profile::ActSpec>,
    /// `--profile=NAME`: the profile that made this job (None: a job of its own).
    pub profile: Option<crate::profile::ProfileCall>,
    /// Notes about how options were read that the user should see (printed by `--parse-only`
    /// and before a run), e.g. a `[global]` option of another engine that fio drops.
    pub notes: Vec<String>,
    /// The notes that fio 3.33 prints as parser warnings too (`--warnings-fatal` stops on
    /// them, as in fio); also among `notes`.
    pub fio_warnings: Vec<String>,
}

/// One fio feature a job uses that fiox does not support yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The option as fio names it (`ioengine` for an engine).
    pub option: String,
    /// The value as written (empty for a bare option).
    pub value: String,
    /// `"option"` (the option itself), `"value"` (this value of an option fiox implements)
    /// or `"engine"` (`ioengine=value`).
    pub what: &'static str,
    /// Extra hint appended in parentheses (may be empty).
    pub note: String,
}

impl Unsupported {
    /// `zonemode=zbd`: a job fio 3.33 runs here (it emulates zones on a regular file or a
    /// device without zones, and fails the job with EINVAL on one smaller than a zone).
    pub fn is_zbd(&self) -> bool {
        self.what == "value" && self.option == "zonemode" && self.value.eq_ignore_ascii_case("zbd")
    }

    /// The sentence that names it, e.g. "`flow` is a fio option that fiox does not support yet".
    pub fn describe(&self) -> String {
        let head = match self.what {
            "engine" => format!(
                "ioengine `{}` is a fio engine that fiox does not support yet",
                self.value
            ),
            "value" => format!(
                "`{}={}` is a fio option value that fiox does not support yet",
                self.option, self.value
            ),
            _ => format!(
                "`{}` is a fio option that fiox does not support yet",
                self.option
            ),
        };
        if self.note.is_empty() {
            head
        } else {
            format!("{head} ({})", self.note)
        }
    }
}

impl JobSpec {
    /// The job's own ioprio value (fio's `td->ioprio`): `prioclass`/`prio` as fio combines them
    /// (class 0 or unset is best-effort, level unset is 0), or 0 when neither is set.
    pub fn default_ioprio(&self) -> u16 {
        let c = &self.cpu;
        if c.prioclass.is_none() && c.prio.is_none() && c.priohint.is_none() {
            return 0;
        }
        // fio's ioprio_value(class, level, hint): the hint above the level's 3 bits.
        let v = crate::cmdprio::ioprio_value(c.prioclass.unwrap_or(0), c.prio.unwrap_or(0));
        v | ((c.priohint.unwrap_or(0) as u16 & 0x3ff) << 3)
    }

    /// How fio 3.33 fails this job, when its engine is one fiox lacks and fio loads but cannot
    /// use here (see [`crate::defs::unsupported::FAILS_WHEN_RUN`]): such a job is not refused,
    /// it runs and fails as fio's does (its other unsupported options are never used).
    pub fn fails_as_in_fio(&self) -> Option<&'static crate::defs::unsupported::FailsWhenRun> {
        let lacked = self.unsupported.iter().any(|u| u.what == "engine");
        lacked
            .then(|| crate::defs::unsupported::fails_when_run(self.ioengine.as_str()))
            .flatten()
    }

    /// `zonemode=zbd`, which fiox lacks: such a job is not refused, it fails when run with
    /// EINVAL (fio 3.33's error for a file smaller than a zone) and the others run.
    pub fn zoned(&self) -> bool {
        self.unsupported.iter().any(Unsupported::is_zbd)
    }

    /// What `--parse-only` says of a job that will fail as fio's does ("job X: ioengine `sg` is
    /// a fio engine that fiox does not support yet (...); this job will fail when run, ...").
    pub fn failing(&self) -> Option<String> {
        if let Some(f) = self.fails_as_in_fio() {
            return Some(format!(
                "job {}: ioengine `{}` is a fio engine that fiox does not support yet (it needs \
                 {}); this job will fail when run, as fio 3.33's does here (err={}), and the \
                 others will run",
                self.name, f.engine, f.needs, f.errno
            ));
        }
        self.zoned().then(|| {
            format!(
                "job {}: `zonemode=zbd` is a fio option value that fiox does not support yet \
                 (zoned block devices); this job will fail when run (err=22, as fio 3.33's on a \
                 file smaller than a zone), and the others will run",
                self.name
            )
        })
    }

    /// Why this job must not run, one line per unsupported feature ("job X: ...; this job
    /// will not run"); empty when fiox can run it, or when it fails as fio's does
    /// ([`Self::fails_as_in_fio`]).
    pub fn refusal(&self) -> Vec<String> {
        // A job that fails as fio's never uses its other options, but fio still rejects the
        // file for those it cannot parse here.
        let failing = self.fails_as_in_fio().is_some();
        // A zoned job fails when run: its zones' own options are never used either.
        let zoned = self.zoned();
        self.unsupported
            .iter()
            .filter(|u| !(u.is_zbd() || zoned && u.note == crate::defs::unsupported::ZONED))
            .filter(|u| !failing || crate::defs::unsupported::fio_rejects_here(u))
            .map(|u| format!("job {}: {}; this job will not run", self.name, u.describe()))
            .collect()
    }
}

impl Default for JobSpec {
    /// A job with every option at fio 3.33's default (name "job", psync, 4k read).
    fn default() -> Self {
        JobSpec {
            name: "job".to_string(),
            description: None,
            comm: None,
            index: 0,
            clone_index: 0,
            numjobs: 1,
            group_id: 0,
            stonewall: false,
            new_group: false,
            wait_for: None,
            source: None,
            rw: RwSpec {
                mode: RwMode::Read,
                n: 0,
            },
            seq_backwards: false,
            rwmixread: 50,
            bs: PerDir::all(BsSpec::fixed(4096)),
            blockalign: PerDir::all(None),
            bs_unaligned: false,
            bs_is_seq_rand: false,
            size: None,
            io_size: None,
            offset: SizeSpec::Bytes(0),
            offset_increment: 0,
            offset_increment_pct: 0,
            offset_align: 0,
            number_ios: None,
            zero_fill: false,
            files: FileSpec::default(),
            thread: false,
            ioengine: crate::Engine::Psync.into(),
            engine: EngineOptions::default(),
            iodepth: 1,
            iodepth_given: false,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 1,
            iodepth_low: 1,
            io_submit_mode: IoSubmitMode::Inline,
            direct: false,
            atomic: false,
            write_barrier: 0,
            sync: SyncMode::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            end_syncfs: false,
            fsync_on_close: false,
            timing: TimingSpec {
                runtime: None,
                time_based: false,
                ramp_time: None,
                ramp_size: None,
                startdelay: (Duration::ZERO, Duration::ZERO),
                loops: 1,
                stonewall_ranks: false,
            },
            rand: RandSpec {
                randrepeat: true,
                randseed: 0x89,
                norandommap: false,
                generator: RandomGenerator::Tausworthe,
                distribution: RandomDistribution::Random,
                percentage_random: PerDir::all(100),
                allrandrepeat: false,
                distribution_center: None,
                rw_seq_identical: false,
                softrandommap: false,
            },
            buffers: BufferSpec {
                zero_buffers: false,
                refill_buffers: false,
                scramble_buffers: true,
                compress_percentage: None,
                compress_chunk: 512,
                pattern: Vec::new(),
                dedupe_percentage: 0,
                dedupe_mode: DedupeMode::Repeat,
                dedupe_working_set_percentage: 5,
                dedupe_global: false,
                dedupe_peer_seeds: Vec::new(),
                mem: MemKind::Malloc,
                mmapfile: None,
                mem_align: 0,
                hugepage_size: 2 << 20,
                lockmem: 0,
            },
            pacing: PacingSpec {
                rate: PerDir::all(0),
                rate_min: PerDir::all(0),
                rate_iops: PerDir::all(0),
                rate_iops_min: PerDir::all(0),
                rate_process: RateProcess::Linear,
                rate_cycle: Duration::from_millis(1000),
                thinktime: Duration::ZERO,
                thinktime_spin: Duration::ZERO,
                thinktime_blocks: 1,
                thinktime_blocks_set: false,
                thinktime_blocks_issue: false,
                thinktime_iotime: Duration::ZERO,
                thinkcycles: 0,
                rate_ignore_thinktime: false,
            },
            stats: StatsSpec {
                percentile_list: DEFAULT_PERCENTILES.to_vec(),
                block_error_percentiles: false,
                clat_percentiles: true,
                lat_percentiles: false,
                slat_percentiles: false,
                disable_lat: false,
                disable_clat: false,
                disable_slat: false,
                disable_bw: false,
                gtod_reduce: false,
                bwavgtime: Duration::from_millis(500),
                iopsavgtime: Duration::from_millis(500),
                group_reporting: false,
                stats: true,
                unified_mixed: false,
                unified_both: false,
                sig_figs: 4,
                disk_util: true,
            },
            logs: LogSpec {
                write_bw_log: None,
                write_iolog: None,
                log_compression: 0,
                log_compression_cpus: None,
                log_store_compressed: false,
                log_issue_time: false,
                log_prio: false,
                log_max_value: false,
                log_window_both: false,
                log_hist_coarseness: 0,
                log_unix_epoch: false,
                log_alternate_epoch: false,
                log_epoch_clock_id: 0,
                job_start_clock_id: None,
                log_entries: 1024,
                write_lat_log: None,
                write_iops_log: None,
                write_hist_log: None,
                log_avg_msec: 0,
                log_hist_msec: 0,
                per_job_logs: true,
                log_offset: false,
            },
            cpu: CpuSpec {
                cpus_allowed: None,
                policy: CpusAllowedPolicy::Shared,
                nice: 0,
                prio: None,
                prioclass: None,
                priohint: None,
                uid: None,
                gid: None,
                cgroup: None,
                cgroup_weight: 0,
                cgroup_nodelete: false,
                gtod_cpu: None,
                numa_cpu_nodes: None,
                numa_mem_policy: None,
            },
            errors: ErrorSpec {
                continue_on_error: ContinueOnError::None,
                ignore_error: PerDir::default(),
                exitall: false,
                exitall_on_error: false,
                error_dump: false,
                exit_what: ExitWhat::Group,
            },
            verify: VerifySpec {
                method: VerifyMethod::None,
                do_verify: true,
                verify_only: false,
                verify_strict: false,
                verify_write_sequence: None,
                verify_header_seed: None,
                verify_fatal: false,
                verify_dump: false,
                verify_async: 0,
                verify_async_cpus: None,
                verify_backlog: 0,
                verify_backlog_batch: 0,
                verify_interval: None,
                verify_offset: 0,
                verify_pattern: Vec::new(),
                verify_pattern_offsets: Vec::new(),
                method_given: false,
                verify_state_save: true,
                verify_state_load: false,
                serialize_overlap: false,
                experimental_verify: false,
                trim_percentage: 0,
                trim_verify_zero: true,
                trim_backlog: 0,
                trim_backlog_batch: 0,
            },
            kb_base: 1024,
            unit_base: 0,
            zone: ZoneSpec {
                mode: ZoneMode::None,
                size: 0,
                range: 0,
                skip: 0,
            },
            replay: ReplaySpec::default(),
            steadystate: SteadySpec::default(),
            flow: FlowSpec::default(),
            lat_target: LatTargetSpec::default(),
            clocksource: None,
            ioscheduler: None,
            exec_prerun: None,
            exec_postrun: None,
            raw_options: Vec::new(),
            own_options: Vec::new(),
            unsupported: Vec::new(),
            aux_path: None,
            act: None,
            profile: None,
            notes: Vec::new(),
            fio_warnings: Vec::new(),
            cmdprio: None,
        }
    }
}

/// fio's `subjob_number` of the clone at `position` (0-based, in run order) of a job with
/// `numjobs` clones. fio's add_job adds the job itself (subjob 0) and then its clones in a loop
/// counting numjobs down, so the second thread of the job is subjob `numjobs - 1` and the last
/// is subjob 1: with numjobs=3 the threads write `j.0.0`, `j.2.0`, `j.1.0` in that order.
/// Seeds, log names and the JSON order follow the position; file names and offsets this.
pub fn subjob_number(position: u32, numjobs: u32) -> u32 {
    if position == 0 {
        0
    } else {
        numjobs.saturating_sub(position)
    }
}
