//! The inverse of the encoders in [`super`]: a TS, GS or DU payload that a fio 3.33 or fiox
//! server sent, read back into fiox's result types so that `fiox --client` prints them with
//! fiox's own report code. Every field is read through the bounds-checked [`Get`]: a short or
//! hostile payload is an error for its connection, never a panic.
//!
//! What a server's structure carries and the result cannot hold is dropped: per-priority
//! latencies (fiox prints none for a remote job), steady-state ring buffers, cache hits.

use super::{off, DU_PDU, GROUP_STAT, MAX_BLOCK_INFOS, MAX_PERCENTILES, THREAD_STAT};
use crate::wire::Get;
use crate::ProtoError;
use fiox_stats::hist::{Histogram, FIO_NBUCKETS};
use fiox_stats::{DirResult, DiskResult, GroupResult, JobResult, LatStat, SampleStat};

/// fio's `io_stat`: max, min, samples, mean, sum of squared deviations.
struct IoStat {
    max: u64,
    min: u64,
    n: u64,
    mean: f64,
    stddev: f64,
}

fn io_stat(g: &mut Get) -> Result<IoStat, ProtoError> {
    let (max, min, n) = (g.u64()?, g.u64()?, g.u64()?);
    let mean = finite(g.fp64()?);
    let s = finite(g.fp64()?).max(0.0);
    let stddev = if n > 1 {
        (s / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    Ok(IoStat {
        max,
        min,
        n,
        mean,
        stddev,
    })
}

/// A NaN or infinity from a hostile peer reads as 0 (fio never sends one).
fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

fn lat(s: &IoStat, hist: Histogram) -> LatStat {
    LatStat::from_parts(s.n, s.min, s.max, s.mean, s.stddev, hist)
}

fn sample(s: &IoStat) -> SampleStat {
    SampleStat::from_parts(s.n, s.min, s.max, s.mean, s.stddev)
}

fn u64s<const N: usize>(g: &mut Get) -> Result<[u64; N], ProtoError> {
    let mut a = [0u64; N];
    for v in &mut a {
        *v = g.u64()?;
    }
    Ok(a)
}

fn plat(g: &mut Get) -> Result<Histogram, ProtoError> {
    let mut counts = vec![0u64; FIO_NBUCKETS];
    for c in &mut counts {
        *c = g.u64()?;
    }
    Ok(Histogram::from_fio_counts(&counts))
}

/// The fiox `unit_base` of fio's wire value (5: bits per second).
fn unit_base(wire: u32) -> u32 {
    u32::from(wire == 5 || wire == 1)
}

/// A TS payload (`cmd_ts_pdu`): the job's result and its group's.
pub fn decode_ts(b: &[u8]) -> Result<(JobResult, GroupResult), ProtoError> {
    if b.len() < THREAD_STAT + GROUP_STAT {
        return Err(ProtoError::Malformed {
            what: "TS",
            why: format!(
                "{} bytes, at least {} expected",
                b.len(),
                THREAD_STAT + GROUP_STAT
            ),
        });
    }
    let mut g = Get::new(b, "TS");
    let mut j = JobResult::default();
    head(&mut g, &mut j)?;
    let cpu_ms = stats(&mut g, &mut j)?;
    tail(&mut g, &mut j)?;
    // fio sends CPU time in milliseconds and prints it against the total run time.
    let run = j.runtime_ms.max(1) as f64;
    j.usr_cpu_pct = cpu_ms[0] as f64 * 100.0 / run;
    j.sys_cpu_pct = cpu_ms[1] as f64 * 100.0 / run;
    let gs = decode_gs(&b[THREAD_STAT..THREAD_STAT + GROUP_STAT])?;
    Ok((j, gs))
}

/// Identity: name, error, thread number, group, pid, description, members, rw_rep.
fn head(g: &mut Get, j: &mut JobResult) -> Result<(), ProtoError> {
    j.name = g.text(128)?;
    j.verror = g.text(128)?;
    j.error = g.u32()? as i32;
    let _thread_number = g.u32()?;
    j.groupid = g.u32()?;
    j.pid = g.u32()?;
    j.description = g.text(256)?;
    j.jobs = g.u32()?.max(1);
    match g.u32()? {
        1 => j.mixed = true,
        2 => j.unified_both = true,
        _ => {}
    }
    Ok(())
}

/// Latencies, rates, CPU, percentile settings, depth and latency buckets, histograms.
/// Returns the user and system CPU time in milliseconds (a percentage needs the run time,
/// which comes later in the structure).
fn stats(g: &mut Get, j: &mut JobResult) -> Result<[u64; 2], ProtoError> {
    g.seek(off::SYNC_STAT)?;
    let sync = io_stat(g)?;
    let mut st: Vec<IoStat> = Vec::with_capacity(15);
    for _ in 0..15 {
        st.push(io_stat(g)?);
    }
    let usr_ms = g.u64()?;
    let sys_ms = g.u64()?;
    j.ctx = g.u64()?;
    j.minf = g.u64()?;
    j.majf = g.u64()?;
    j.clat_percentiles = g.u32()? != 0;
    j.lat_percentiles = g.u32()? != 0;
    j.slat_percentiles = g.u32()? != 0;
    g.seek(off::PERCENTILE_LIST)?;
    let mut list = Vec::with_capacity(MAX_PERCENTILES);
    for _ in 0..MAX_PERCENTILES {
        list.push(finite(g.fp64()?));
    }
    while list.last() == Some(&0.0) {
        list.pop();
    }
    j.percentile_list = list;
    j.io_depth.buckets = u64s(g)?;
    j.submit.buckets = u64s(g)?;
    j.complete.buckets = u64s(g)?;
    j.lat_buckets.ns = u64s(g)?;
    j.lat_buckets.us = u64s(g)?;
    j.lat_buckets.ms = u64s(g)?;
    debug_assert_eq!(g.pos(), off::IO_U_PLAT);
    // io_u_plat[slat, clat, lat][read, write, trim], then sync.
    let mut hists: Vec<Histogram> = Vec::with_capacity(10);
    for _ in 0..10 {
        hists.push(plat(g)?);
    }
    let mut hists = hists.into_iter();
    let mut next = || hists.next().unwrap_or_default();
    let (slat_h, clat_h, lat_h) = (
        [next(), next(), next()],
        [next(), next(), next()],
        [next(), next(), next()],
    );
    j.sync_lat = lat(&sync, next());
    for (i, (((s, c), l), d)) in slat_h
        .into_iter()
        .zip(clat_h)
        .zip(lat_h)
        .zip([&mut j.dirs.read, &mut j.dirs.write, &mut j.dirs.trim])
        .enumerate()
    {
        *d = DirResult {
            clat: lat(&st[i], c),
            slat: lat(&st[3 + i], s),
            lat: lat(&st[6 + i], l),
            bw: sample(&st[9 + i]),
            iops: sample(&st[12 + i]),
            ..DirResult::default()
        };
    }
    j.has_slat = st[3..6].iter().any(|s| s.n > 0);
    Ok([usr_ms, sys_ms])
}

/// Counts, bytes, runtimes, errors, block infos, units, latency target, sig_figs, priority.
fn tail(g: &mut Get, j: &mut JobResult) -> Result<(), ProtoError> {
    g.seek(off::TOTAL_IO_U)?;
    let total: [u64; 4] = u64s(g)?;
    let short: [u64; 3] = u64s(g)?;
    let drop: [u64; 3] = u64s(g)?;
    g.seek(off::IO_BYTES)?;
    let bytes: [u64; 3] = u64s(g)?;
    let runtime: [u64; 3] = u64s(g)?;
    j.runtime_ms = g.u64()?;
    j.continue_on_error = g.u16()? != 0;
    g.skip(2)?;
    j.first_error = g.u32()? as i32;
    j.total_err = g.u64()?;
    let _zone_resets = g.u64()?;
    let nr_infos = (g.u64()? as usize).min(MAX_BLOCK_INFOS);
    let mut infos = Vec::with_capacity(nr_infos);
    for _ in 0..nr_infos {
        infos.push(g.u32()?);
    }
    j.block_infos = (nr_infos > 0).then_some(infos);
    for (i, d) in [&mut j.dirs.read, &mut j.dirs.write, &mut j.dirs.trim]
        .into_iter()
        .enumerate()
    {
        d.total_ios = total[i];
        d.short_ios = short[i];
        d.drop_ios = drop[i];
        d.io_bytes = bytes[i];
        d.runtime_ms = runtime[i];
    }
    // total[3], the sync count, is the sync latency's sample count already.
    g.seek(off::KB_BASE + 8)?;
    let depth = g.u32()?;
    g.skip(4)?;
    let target = g.u64()?;
    let pct = finite(g.fp64()?);
    let window = g.u64()?;
    j.iodepth = depth;
    j.lat_target = (target > 0).then_some((depth, target, window, pct));
    j.sig_figs = g.u32()?;
    g.seek(off::SIG_FIGS + 4 + 8 + 8 + 4 * 16)?;
    j.ioprio = g.u32()?;
    Ok(())
}

/// A GS payload (`group_run_stats`).
pub fn decode_gs(b: &[u8]) -> Result<GroupResult, ProtoError> {
    let mut g = Get::new(b, "GS");
    let max_run: [u64; 3] = u64s(&mut g)?;
    let min_run: [u64; 3] = u64s(&mut g)?;
    let max_bw: [u64; 3] = u64s(&mut g)?;
    let min_bw: [u64; 3] = u64s(&mut g)?;
    let io: [u64; 3] = u64s(&mut g)?;
    let agg: [u64; 3] = u64s(&mut g)?;
    let mut r = GroupResult {
        kb_base: g.u32()?,
        unit_base: unit_base(g.u32()?),
        sig_figs: g.u32()?,
        groupid: g.u32()?,
        ..GroupResult::default()
    };
    match g.u32()? {
        1 => r.mixed = true,
        2 => r.both = true,
        _ => {}
    }
    for (i, d) in [&mut r.dirs.read, &mut r.dirs.write, &mut r.dirs.trim]
        .into_iter()
        .enumerate()
    {
        d.max_runtime_ms = max_run[i];
        d.min_runtime_ms = min_run[i];
        d.max_bw = max_bw[i];
        d.min_bw = min_bw[i];
        d.io_bytes = io[i];
        d.agg_bw = agg[i];
    }
    Ok(r)
}

fn disk_counts(g: &mut Get, d: &mut DiskResult) -> Result<(), ProtoError> {
    d.ios = u64s(g)?;
    d.merges = u64s(g)?;
    d.sectors = u64s(g)?;
    d.ticks = u64s(g)?;
    d.io_ticks = g.u64()?;
    d.in_queue = g.u64()?;
    Ok(())
}

/// A DU payload (`cmd_du_pdu`): the disk's own counts and utilisation. The aggregate of the
/// disks under a stacked device (fio's `agg`, its `aggr*` figures) is read and checked but not
/// kept: fiox's disk result derives it from the underlying disks themselves, which the server
/// sends as DUs of their own.
pub fn decode_du(b: &[u8]) -> Result<DiskResult, ProtoError> {
    if b.len() < DU_PDU {
        return Err(ProtoError::Malformed {
            what: "DU",
            why: format!("{} bytes, {DU_PDU} expected", b.len()),
        });
    }
    let mut g = Get::new(b, "DU");
    let mut d = DiskResult {
        name: g.text(64)?,
        ..DiskResult::default()
    };
    disk_counts(&mut g, &mut d)?;
    let msec = g.u64()?;
    d.util = if msec > 0 {
        (d.io_ticks as f64 * 100.0 / msec as f64).min(100.0)
    } else {
        0.0
    };
    let mut agg = DiskResult::default();
    disk_counts(&mut g, &mut agg)?;
    let _slaves = g.u32()?;
    g.skip(4)?;
    let _max_util = g.fp64()?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stat::{du_pdu, ts_pdu};

    fn job() -> JobResult {
        let mut j = JobResult {
            name: "randread".into(),
            groupid: 2,
            pid: 77,
            jobs: 1,
            runtime_ms: 2000,
            usr_cpu_pct: 10.0,
            sys_cpu_pct: 25.0,
            ctx: 9,
            minf: 3,
            iodepth: 8,
            sig_figs: 4,
            percentile_list: vec![1.0, 50.0, 99.0, 99.9],
            clat_percentiles: true,
            ..JobResult::default()
        };
        for ns in [1_000u64, 2_000, 3_000, 400_000] {
            j.dirs.read.clat.add(ns);
            j.dirs.read.lat.add(ns + 100);
        }
        j.dirs.read.io_bytes = 4 * 4096;
        j.dirs.read.total_ios = 4;
        j.dirs.read.runtime_ms = 2000;
        j.dirs.read.bw.add(8);
        j.dirs.read.bw.add(12);
        j.io_depth.buckets[3] = 4;
        j.lat_buckets.us[1] = 3;
        j
    }

    #[test]
    fn a_ts_comes_back_as_the_result_it_was_made_from() {
        let j = job();
        let g = GroupResult {
            groupid: 2,
            kb_base: 1024,
            unit_base: 0,
            sig_figs: 4,
            ..GroupResult::default()
        };
        let (back, gs) = decode_ts(&ts_pdu(&j, 1, &g)).unwrap();
        assert_eq!(back.name, "randread");
        assert_eq!(
            (back.groupid, back.pid, back.jobs, back.iodepth),
            (2, 77, 1, 8)
        );
        assert_eq!(back.dirs.read.clat.n, 4);
        assert_eq!(back.dirs.read.clat.max, 400_000);
        assert!((back.dirs.read.clat.mean() - j.dirs.read.clat.mean()).abs() < 1e-6);
        assert!((back.dirs.read.clat.stddev() - j.dirs.read.clat.stddev()).abs() < 1e-3);
        assert_eq!(
            back.dirs.read.clat.hist.percentile(99.0),
            j.dirs.read.clat.hist.percentile(99.0)
        );
        assert_eq!(back.dirs.read.bw.n, 2);
        assert_eq!(back.dirs.read.io_bytes, 4 * 4096);
        assert_eq!(back.percentile_list, vec![1.0, 50.0, 99.0, 99.9]);
        assert!(
            (back.usr_cpu_pct - 10.0).abs() < 0.1,
            "{}",
            back.usr_cpu_pct
        );
        assert!((back.sys_cpu_pct - 25.0).abs() < 0.1);
        assert_eq!(back.io_depth.buckets[3], 4);
        assert_eq!(back.lat_buckets.us[1], 3);
        assert_eq!(back.lat_target, None);
        assert_eq!(gs.groupid, 2);
        assert_eq!(gs.kb_base, 1024);
    }

    #[test]
    fn short_or_garbled_payloads_are_errors() {
        let j = job();
        let b = ts_pdu(&j, 1, &GroupResult::default());
        assert!(decode_ts(&b[..1000]).is_err());
        assert!(decode_gs(&b[..10]).is_err());
        assert!(decode_du(&[0u8; 12]).is_err());
        // Garbage of the right length decodes to something, without a panic.
        let junk: Vec<u8> = (0..b.len()).map(|i| (i * 131 % 251) as u8).collect();
        let _ = decode_ts(&junk);
        let _ = decode_du(&junk[..DU_PDU]);
    }

    #[test]
    fn a_du_comes_back_with_its_utilisation() {
        let d = DiskResult {
            name: "loop3".into(),
            ios: [100, 5],
            io_ticks: 500,
            util: 50.0,
            ..DiskResult::default()
        };
        let back = decode_du(&du_pdu(&d, 1000)).unwrap();
        assert_eq!(back.name, "loop3");
        assert_eq!(back.ios, [100, 5]);
        assert!((back.util - 50.0).abs() < 0.01);
        assert!(back.slaves.is_empty());
    }
}
