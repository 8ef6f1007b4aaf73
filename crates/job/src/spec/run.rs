//! What holds for the whole run, not per job: output format, ETA, idle profiling and the
//! other command-line switches ([`RunSettings`]), including fio switches fiox does not
//! support yet ([`UnsupportedSwitch`]).

use std::time::Duration;

/// How `--explain` traces (`--explain=full`, `--explain=WINDOW/PERIOD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExplainMode {
    /// In fiox-explain's default windows.
    #[default]
    Sampled,
    /// All the time: every I/O seen, at the full cost.
    Full,
    /// A window of `window_us` in every `period_us` (window < period).
    Windows { window_us: u64, period_us: u64 },
}

impl ExplainMode {
    /// `full`, `sampled`, or `WINDOW/PERIOD` (times; a bare number is in milliseconds).
    pub fn parse(v: &str) -> Result<ExplainMode, String> {
        let v = v.trim();
        match v.to_ascii_lowercase().as_str() {
            "full" => return Ok(ExplainMode::Full),
            "sampled" | "" => return Ok(ExplainMode::Sampled),
            _ => {}
        }
        let Some((w, p)) = v.split_once('/') else {
            return Err(format!(
                "'{v}': expected full, sampled, or WINDOW/PERIOD (e.g. 20ms/200ms)"
            ));
        };
        let window_us = crate::value::parse_time_us(w, 1000)?;
        let period_us = crate::value::parse_time_us(p, 1000)?;
        if window_us < 1000 {
            return Err(format!("'{v}': the window must be at least 1ms"));
        }
        if window_us > period_us {
            return Err(format!("'{v}': the window is longer than its period"));
        }
        Ok(if window_us == period_us {
            ExplainMode::Full
        } else {
            ExplainMode::Windows {
                window_us,
                period_us,
            }
        })
    }
}

/// Global switches and settings that are not per job.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunSettings {
    /// `--profile=NAME`: the index of the first job the profile made (fio adds them after
    /// parsing, so its version line comes before them; 0: the profile made every job).
    pub profile_jobs_from: Option<usize>,
    pub parse_only: bool,
    /// `--merge-blktrace-only`: write the jobs' `merge_blktrace_file`s, run nothing.
    pub merge_blktrace_only: bool,
    pub showcmd: bool,
    pub sections: Vec<String>,
    pub output: Option<String>,
    pub output_formats: Vec<OutputFormat>,
    pub eta: EtaMode,
    pub status_interval: Option<Duration>,
    pub readonly: bool,
    pub allow_destructive: bool,
    /// `--allow-destructive=PATH` (repeatable): writing is allowed to exactly these devices or
    /// files (an experiment's own testbed device), not to anything else.
    pub allow_targets: Vec<std::path::PathBuf>,
    /// `--max-jobs=N`: at most N jobs run at once (None = no limit).
    pub max_jobs: Option<u32>,
    /// `--bandwidth-log`: fio's aggregate bandwidth logs (agg-read_bw.log, agg-write_bw.log,
    /// agg-trim_bw.log: the sum over all jobs every bw_avg_time).
    pub bandwidth_log: bool,
    /// `--latency-log` (fio 2.x; 3.33 rejects it as deprecated): per-job latency logs, as
    /// `write_lat_log=<job name>` on every job that sets no lat log of its own.
    pub latency_log: bool,
    /// `--telemetry[=MS]` (fiox's): sample the system every MS around the run.
    pub telemetry: Option<std::time::Duration>,
    /// `--machine-memory=SIZE` (fiox's): the run goes in a cgroup with this memory limit
    /// (checked and applied by fiox-testbed's machine module).
    pub machine_memory: Option<String>,
    /// `--machine-cpus=N` (fiox's): the run goes in a cpuset of N CPUs.
    pub machine_cpus: Option<String>,
    /// `--vm=KEY=VALUE,...` (fiox's): the run goes into a QEMU guest on a virtio-blk disk
    /// (fiox-testbed's vm module; the job names /dev/vda).
    pub vm: Option<String>,
    /// `--explain` (fiox's): trace the jobs' threads with BPF and report latency phases.
    pub explain: bool,
    /// `--explain=MODE`: how (in the default windows, all the time, or in windows of one's
    /// own).
    pub explain_mode: ExplainMode,
    /// `--html=FILE`: also write the run's report page (charts) to FILE.
    pub html: Option<String>,
    /// `--history[=DB]` (fiox's): record the run in the history database (fiox-history), the
    /// default one or DB.
    pub history: bool,
    pub history_db: Option<String>,
    /// `--warnings=stderr` (or `fatal`): fiox's advice also on stderr (it is always in the
    /// report).
    pub warnings_stderr: bool,
    /// `--warnings=fatal` (fiox's): fiox's advice makes the exit status 1 as well.
    pub advice_fatal: bool,
    /// `--warnings-fatal` (fio's `-w`): fio's parser warnings (the notes fio 3.33 itself warns
    /// with, `JobSpec::fio_warnings`) stop the run before any I/O, as in fio.
    pub warnings_fatal: bool,
    /// `--aux-path`: the directory of fio's state files (verify state, verify dumps).
    pub aux_path: Option<String>,
    /// `--trigger-file`: when this file appears, it is removed and the run stops (then
    /// `--trigger` runs).
    pub trigger_file: Option<String>,
    /// `--trigger-timeout`: the same, this long after the start.
    pub trigger_timeout: Option<Duration>,
    /// `--trigger`: the shell command run when triggered.
    pub trigger_cmd: Option<String>,
    /// `--terse-version` 2..=5 (0: fio's default 3).
    pub terse_version: u32,
    /// `--eta-newline`: start a new ETA line this often (a terminal's line is redrawn).
    pub eta_newline: Option<Duration>,
    /// `--eta-interval`: the ETA line's update period (default 1 s).
    pub eta_interval: Option<Duration>,
    /// fio switches given that fiox parses but cannot act on yet: nothing runs.
    pub unsupported_switches: Vec<UnsupportedSwitch>,
    /// `--idle-prof=system|percpu`: measure CPU idleness while the jobs run.
    pub idle_prof: Option<IdleProfMode>,
    /// `--debug=LIST`: fio's debug categories to print (checked names, comma-separated).
    pub debug: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    JsonPlus,
    Terse,
}

/// fio's `--idle-prof` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleProfMode {
    /// Calibrate only and exit.
    Calibrate,
    /// The mean idleness of all CPUs.
    System,
    /// And each CPU's.
    Percpu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EtaMode {
    #[default]
    Auto,
    Always,
    Never,
}

/// A fio switch fiox parses but cannot act on yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedSwitch {
    /// The switch without dashes.
    pub name: String,
    /// Its value, if given.
    pub value: Option<String>,
    /// Why it cannot run (a missing feature, an external service...).
    pub reason: &'static str,
}

impl UnsupportedSwitch {
    /// "`--debug=io` is a fio switch that fiox does not support yet (reason); nothing will run".
    pub fn describe(&self) -> String {
        let shown = match &self.value {
            Some(v) => format!("--{}={v}", self.name),
            None => format!("--{}", self.name),
        };
        format!(
            "`{shown}` is a fio switch that fiox does not support yet ({}); nothing will run",
            self.reason
        )
    }
}
