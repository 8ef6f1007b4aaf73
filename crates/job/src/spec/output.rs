//! What a job records: its log files (`write_*_log`) and the statistics it keeps and prints
//! (percentiles, bw/iops windows, group reporting).

use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct LogSpec {
    pub write_bw_log: Option<String>,
    pub write_lat_log: Option<String>,
    pub write_iops_log: Option<String>,
    pub write_hist_log: Option<String>,
    /// 0 = log every I/O.
    pub log_avg_msec: u64,
    pub log_hist_msec: u64,
    pub per_job_logs: bool,
    pub log_offset: bool,
    /// `write_iolog=`: fio's version 3 I/O log of every I/O queued.
    pub write_iolog: Option<String>,
    /// `log_compression=`: the bw/iops/lat logs are kept in memory, compressed in chunks of
    /// this many bytes by a background thread, and written out when the job ends (0: off,
    /// lines go to the file as they come).
    pub log_compression: u64,
    /// `log_compression_cpus=`: the CPUs the log compression thread may run on.
    pub log_compression_cpus: Option<Vec<usize>>,
    /// `log_store_compressed`: bw/iops/lat logs are stored as fio's `.log.fz` files.
    pub log_store_compressed: bool,
    /// fio 3.42's `log_issue_time`: clat/slat log lines end with the I/O's issue time (ns).
    pub log_issue_time: bool,
    /// `log_prio`: the last column of bw/iops/lat logs is the I/O's ioprio value in hex
    /// (`0x2004`) instead of 1 for the real-time class and 0 otherwise.
    pub log_prio: bool,
    /// `log_max_value`: averaged lines hold the window's maximum instead of its mean.
    pub log_max_value: bool,
    /// fio 3.42's `log_window_value=both`: averaged lines hold the mean and the maximum.
    pub log_window_both: bool,
    /// `log_hist_coarseness` (0..=6): histogram log buckets summed in groups of 2^k.
    pub log_hist_coarseness: u32,
    /// `log_unix_epoch` or `log_alternate_epoch` (fio ORs them): log times count from the
    /// epoch of clock `log_alternate_epoch_clock_id` (CLOCK_REALTIME by default) instead of
    /// the job's start.
    pub log_unix_epoch: bool,
    pub log_alternate_epoch: bool,
    pub log_epoch_clock_id: i32,
    /// fio 3.42's `job_start_clock_id`: the JSON report gets each job's `job_start`, that
    /// clock's time in ms when the job's epoch began (None: not asked, fio 3.33's JSON).
    pub job_start_clock_id: Option<i32>,
    /// `log_entries`: fio's initial in-memory log size. fiox writes its logs as it goes, so it
    /// changes no output; kept for `--showcmd` and the JSON job options.
    pub log_entries: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StatsSpec {
    /// Percentiles to report, each 0.0..=100.0 (default fio list).
    pub percentile_list: Vec<f64>,
    /// `block_error_percentiles`: count trims per trim-sized block and report their
    /// percentiles and the blocks' states.
    pub block_error_percentiles: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    pub gtod_reduce: bool,
    pub bwavgtime: Duration,
    pub iopsavgtime: Duration,
    pub group_reporting: bool,
    pub stats: bool,
    /// `unified_rw_reporting=mixed` (or 1): reads, writes and trims reported as one `mixed`
    /// direction.
    pub unified_mixed: bool,
    /// `unified_rw_reporting=both` (or 2): each direction and then the `mixed` sum of them.
    pub unified_both: bool,
    /// `significant_figures=` 1..=10 (fio's default 4): digits of sizes, rates and IOPS in
    /// the normal report.
    pub sig_figs: u32,
    /// `disk_util`: report the disks' utilization (the `Disk stats` block).
    pub disk_util: bool,
}

/// fio's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];
