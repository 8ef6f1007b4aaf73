//! fiox's results as fio 3.33's result structures on the wire: `thread_stat` followed by its
//! group's `group_run_stats` (TS), `group_run_stats` alone (GS), and a disk's
//! `disk_util_stat` + `disk_util_agg` (DU). The layouts are fio's to the byte (its `stat.h`
//! with `__attribute__((packed))`, `sync_stat` aligned to 8, the whole aligned to 8): the
//! offsets below were checked against a TS fio's own server sent (tests).
//!
//! What fio's structures carry and fiox does not send: per-priority latencies
//! (`clat_prio`, sent as none, `disable_prio_stat` set), steady state ring buffers (`ss_*`
//! zero) and page cache hits (`cachehit`/`cachemiss` zero, fio fills them only for its
//! `cachehit` counting).

use crate::wire::{Get, Put};
use crate::ProtoError;
use fiox_stats::hist::FIO_NBUCKETS;
use fiox_stats::{DirResult, DiskResult, GroupResult, JobResult, LatStat, SampleStat};

/// `sizeof(struct thread_stat)` in fio 3.33.
pub const THREAD_STAT: usize = 183_888;
/// `sizeof(struct group_run_stats)` (packed).
pub const GROUP_STAT: usize = 164;
/// `sizeof(struct cmd_ts_pdu)`: the two, padded to 8.
pub const TS_PDU: usize = 184_056;
/// `sizeof(struct cmd_du_pdu)`.
pub const DU_PDU: usize = 256;

/// Offsets of fields in `thread_stat` the tests and the summary reader use.
pub mod off {
    pub const SYNC_STAT: usize = 544;
    pub const CLAT_STAT: usize = 600;
    pub const USR_TIME: usize = 1440;
    pub const PERCENTILE_LIST: usize = 1504;
    pub const IO_U_MAP: usize = 1824;
    pub const IO_U_PLAT: usize = 2248;
    pub const TOTAL_IO_U: usize = 150_728;
    pub const IO_BYTES: usize = 150_824;
    pub const BLOCK_INFOS: usize = 150_912;
    pub const KB_BASE: usize = 183_680;
    pub const SIG_FIGS: usize = 183_728;
}

/// fio's `MAX_NR_BLOCK_INFOS`.
const MAX_BLOCK_INFOS: usize = 8192;
/// fio's `FIO_IO_U_LIST_MAX_LEN`.
const MAX_PERCENTILES: usize = 20;

/// fio's `io_stat` of a latency: max, min, samples, mean and the sum of squared deviations.
fn lat_stat(p: &mut Put, s: &LatStat) {
    let n = s.n;
    p.u64(s.max);
    p.u64(s.min);
    p.u64(n);
    p.fp64(s.mean());
    p.fp64(s.stddev() * s.stddev() * n.saturating_sub(1) as f64);
}

fn sample_stat(p: &mut Put, s: &SampleStat) {
    p.u64(s.max);
    p.u64(s.min);
    p.u64(s.n);
    p.fp64(s.mean());
    p.fp64(s.stddev() * s.stddev() * s.n.saturating_sub(1) as f64);
}

/// fio's unit_base for the wire: fio resolves its default ("auto", 0) to bytes per second
/// (`N2S_BYTEPERSEC`, 4); `unit_base=1` is bits (`N2S_BITPERSEC`, 5).
pub fn wire_unit_base(fiox_unit_base: u32) -> u32 {
    if fiox_unit_base == 1 {
        5
    } else {
        4
    }
}

fn dirs(j: &JobResult) -> [&DirResult; 3] {
    [&j.dirs.read, &j.dirs.write, &j.dirs.trim]
}

/// `thread_stat` fields up to the latency histograms.
fn head(p: &mut Put, j: &JobResult, thread_number: u32) {
    p.text(&j.name, 128);
    p.text(&j.verror, 128);
    p.u32(j.error as u32);
    p.u32(thread_number);
    p.u32(j.groupid);
    p.u32(j.pid);
    p.text(&j.description, 256);
    p.u32(j.jobs.max(1));
    p.u32(if j.unified_both {
        2
    } else if j.mixed {
        1
    } else {
        0
    });
    p.u32(1); // disable_prio_stat: no per-priority latencies follow
    p.align(8);
    debug_assert_eq!(p.len(), off::SYNC_STAT);
    lat_stat(p, &j.sync_lat);
    let empty = LatStat::default();
    for d in dirs(j) {
        lat_stat(p, &d.clat);
    }
    for d in dirs(j) {
        lat_stat(p, if j.has_slat { &d.slat } else { &empty });
    }
    for d in dirs(j) {
        lat_stat(p, &d.lat);
    }
    for d in dirs(j) {
        sample_stat(p, &d.bw);
    }
    for d in dirs(j) {
        sample_stat(p, &d.iops);
    }
    debug_assert_eq!(p.len(), off::USR_TIME);
    // fio keeps CPU time in ms and prints it against total_run_time.
    let ms = |pct: f64| (pct * j.runtime_ms as f64 / 100.0).round() as u64;
    p.u64(ms(j.usr_cpu_pct));
    p.u64(ms(j.sys_cpu_pct));
    p.u64(j.ctx);
    p.u64(j.minf);
    p.u64(j.majf);
    p.u32(j.clat_percentiles as u32);
    p.u32(j.lat_percentiles as u32);
    p.u32(j.slat_percentiles as u32);
    p.u32(0); // pad
    p.u64(2); // percentile_precision: fio's default, as its server sends it
    debug_assert_eq!(p.len(), off::PERCENTILE_LIST);
    for i in 0..MAX_PERCENTILES {
        p.fp64(j.percentile_list.get(i).copied().unwrap_or(0.0));
    }
    debug_assert_eq!(p.len(), off::IO_U_MAP);
    p.u64s(&j.io_depth.buckets);
    p.u64s(&j.submit.buckets);
    p.u64s(&j.complete.buckets);
    p.u64s(&j.lat_buckets.ns);
    p.u64s(&j.lat_buckets.us);
    p.u64s(&j.lat_buckets.ms);
}

fn plat(p: &mut Put, s: &LatStat) {
    let mut counts = [0u64; FIO_NBUCKETS];
    s.hist.fio_counts(&mut counts);
    p.u64s(&counts);
}

/// The `thread_stat` of one result (`thread_number`: its 1-based place among the results).
/// `unit_base`: the run's (fiox's) `unit_base`.
pub fn thread_stat(j: &JobResult, thread_number: u32, kb_base: u32, unit_base: u32) -> Vec<u8> {
    let mut p = Put::with_capacity(TS_PDU);
    head(&mut p, j, thread_number);
    debug_assert_eq!(p.len(), off::IO_U_PLAT);
    // io_u_plat[slat, clat, lat][read, write, trim]
    for d in dirs(j) {
        plat(&mut p, &d.slat);
    }
    for d in dirs(j) {
        plat(&mut p, &d.clat);
    }
    for d in dirs(j) {
        plat(&mut p, &d.lat);
    }
    plat(&mut p, &j.sync_lat);
    debug_assert_eq!(p.len(), off::TOTAL_IO_U);
    let ds = dirs(j);
    p.u64s(&[
        ds[0].total_ios,
        ds[1].total_ios,
        ds[2].total_ios,
        j.sync_lat.n,
    ]);
    p.u64s(&ds.map(|d| d.short_ios));
    p.u64s(&ds.map(|d| d.drop_ios));
    p.u64(j.submit.buckets.iter().sum());
    p.u64(j.complete.buckets.iter().sum());
    debug_assert_eq!(p.len(), off::IO_BYTES);
    p.u64s(&ds.map(|d| d.io_bytes));
    p.u64s(&ds.map(|d| d.runtime_ms));
    p.u64(j.runtime_ms);
    p.u16(j.continue_on_error as u16);
    p.u16(0); // the union's other half
    p.u32(j.first_error as u32);
    p.u64(j.total_err);
    p.u64(0); // nr_zone_resets: fiox has no zoned block device support
    let infos = j.block_infos.as_deref().unwrap_or(&[]);
    let infos = &infos[..infos.len().min(MAX_BLOCK_INFOS)];
    p.u64(infos.len() as u64);
    debug_assert_eq!(p.len(), off::BLOCK_INFOS);
    for i in 0..MAX_BLOCK_INFOS {
        p.u32(infos.get(i).copied().unwrap_or(0));
    }
    debug_assert_eq!(p.len(), off::KB_BASE);
    p.u32(kb_base);
    p.u32(wire_unit_base(unit_base));
    let (depth, target, window, pct) = j.lat_target.unwrap_or((j.iodepth, 0, 0, 100.0));
    p.u32(depth);
    p.u32(0); // pad3
    p.u64(target);
    p.fp64(pct);
    p.u64(window);
    debug_assert_eq!(p.len(), off::SIG_FIGS);
    p.u32(if j.sig_figs == 0 { 4 } else { j.sig_figs });
    p.u64(0); // ss_dur
    p.u32(0); // ss_state
    p.u32(0); // ss_head
    for _ in 0..4 {
        p.fp64(0.0); // ss_limit, ss_slope, ss_deviation, ss_criterion
    }
    p.u32(j.ioprio);
    p.u64(0); // ss_iops_data offset
    p.u64(0); // ss_bw_data offset
    p.u64s(&[0; 3]); // clat_prio offsets
    p.bytes(&[0; 12]); // nr_clat_prio
    p.u64(0); // cachehit
    p.u64(0); // cachemiss
    p.align(8);
    debug_assert_eq!(p.len(), THREAD_STAT);
    p.buf
}

/// `group_run_stats` of a group.
pub fn group_stat(g: &GroupResult) -> Vec<u8> {
    let mut p = Put::with_capacity(GROUP_STAT);
    let ds = [&g.dirs.read, &g.dirs.write, &g.dirs.trim];
    p.u64s(&ds.map(|d| d.max_runtime_ms));
    p.u64s(&ds.map(|d| d.min_runtime_ms));
    p.u64s(&ds.map(|d| d.max_bw));
    p.u64s(&ds.map(|d| d.min_bw));
    p.u64s(&ds.map(|d| d.io_bytes));
    p.u64s(&ds.map(|d| d.agg_bw));
    p.u32(g.kb_base);
    p.u32(wire_unit_base(g.unit_base));
    p.u32(if g.sig_figs == 0 { 4 } else { g.sig_figs });
    p.u32(g.groupid);
    p.u32(if g.both {
        2
    } else if g.mixed {
        1
    } else {
        0
    });
    debug_assert_eq!(p.len(), GROUP_STAT);
    p.buf
}

/// `cmd_ts_pdu`: a result and its group.
pub fn ts_pdu(j: &JobResult, thread_number: u32, g: &GroupResult) -> Vec<u8> {
    let mut b = thread_stat(j, thread_number, g.kb_base, g.unit_base);
    b.extend(group_stat(g));
    b.resize(TS_PDU, 0);
    b
}

/// The time base fio derives utilisation from: `util = io_ticks * 100 / msec`.
fn disk_msec(d: &DiskResult, run_ms: u64) -> u64 {
    if d.util > 0.0 {
        ((d.io_ticks as f64) * 100.0 / d.util).round().max(1.0) as u64
    } else {
        run_ms.max(1)
    }
}

fn disk_counts(p: &mut Put, d: &DiskResult) {
    p.u64s(&d.ios);
    p.u64s(&d.merges);
    p.u64s(&d.sectors);
    p.u64s(&d.ticks);
    p.u64(d.io_ticks);
    p.u64(d.in_queue);
}

/// `cmd_du_pdu` of a disk (`run_ms`: the run's length, the time base of an idle disk). Stacked
/// devices carry their underlying disks' sum as fio's `agg` (`slavecount`, the busiest one's
/// utilisation).
pub fn du_pdu(d: &DiskResult, run_ms: u64) -> Vec<u8> {
    let mut p = Put::with_capacity(DU_PDU);
    p.text(&d.name, 64);
    disk_counts(&mut p, d);
    p.u64(disk_msec(d, run_ms));
    let mut agg = DiskResult::default();
    let mut max_util: f64 = 0.0;
    for s in &d.slaves {
        for i in 0..2 {
            agg.ios[i] += s.ios[i];
            agg.merges[i] += s.merges[i];
            agg.sectors[i] += s.sectors[i];
            agg.ticks[i] += s.ticks[i];
        }
        agg.io_ticks += s.io_ticks;
        agg.in_queue += s.in_queue;
        max_util = max_util.max(s.util);
    }
    disk_counts(&mut p, &agg);
    p.u32(d.slaves.len() as u32);
    p.u32(0);
    p.fp64(max_util);
    debug_assert_eq!(p.len(), DU_PDU);
    p.buf
}

/// A few fields of a TS payload (fio's or fiox's), enough to check one against the other.
#[derive(Debug, Clone, PartialEq)]
pub struct TsSummary {
    pub name: String,
    pub thread_number: u32,
    pub groupid: u32,
    pub clat_samples: [u64; 3],
    pub clat_mean: [f64; 3],
    pub total_io_u: [u64; 4],
    pub io_bytes: [u64; 3],
    pub kb_base: u32,
    pub unit_base: u32,
    pub sig_figs: u32,
    /// The group's `max_run` per direction.
    pub group_max_run: [u64; 3],
}

/// Read a [`TsSummary`] from a TS payload (an error if it is not a whole `cmd_ts_pdu`).
pub fn ts_summary(b: &[u8]) -> Result<TsSummary, ProtoError> {
    if b.len() < TS_PDU {
        return Err(ProtoError::Malformed {
            what: "TS",
            why: format!("{} bytes, {TS_PDU} expected", b.len()),
        });
    }
    let mut g = Get::new(b, "TS");
    let name = g.text(128)?;
    g.skip(128 + 4)?;
    let thread_number = g.u32()?;
    let groupid = g.u32()?;
    let mut clat_samples = [0; 3];
    let mut clat_mean = [0.0; 3];
    for i in 0..3 {
        g.seek(off::CLAT_STAT + i * 56 + 16)?;
        clat_samples[i] = g.u64()?;
        clat_mean[i] = g.fp64()?;
    }
    g.seek(off::TOTAL_IO_U)?;
    let total_io_u = [g.u64()?, g.u64()?, g.u64()?, g.u64()?];
    g.seek(off::IO_BYTES)?;
    let io_bytes = [g.u64()?, g.u64()?, g.u64()?];
    g.seek(off::KB_BASE)?;
    let (kb_base, unit_base) = (g.u32()?, g.u32()?);
    g.seek(off::SIG_FIGS)?;
    let sig_figs = g.u32()?;
    g.seek(THREAD_STAT)?;
    let group_max_run = [g.u64()?, g.u64()?, g.u64()?];
    Ok(TsSummary {
        name,
        thread_number,
        groupid,
        clat_samples,
        clat_mean,
        total_io_u,
        io_bytes,
        kb_base,
        unit_base,
        sig_figs,
        group_max_run,
    })
}

mod decode;
pub use decode::{decode_du, decode_gs, decode_ts};

#[cfg(test)]
mod tests;
