//! fio's dependent defaults, derived once every option is applied: zones, device scope,
//! `verify_interval` and the values fio computes from others.

use crate::defs::OptDef;
use crate::{Engine, JobSpec};
use std::collections::HashSet;

/// A size written as a count of zones (`524z`), fio 3.42's syntax for zoned devices.
pub(super) fn zone_count(def: &OptDef, raw: &str) -> bool {
    use crate::defs::Kind;
    let t = raw.trim();
    matches!(def.kind, Kind::Size | Kind::SizeOrPercent)
        && t.len() > 1
        && t[..t.len() - 1].bytes().all(|b| b.is_ascii_digit())
        && t.ends_with(['z', 'Z'])
}

/// fiox runs `fill_device` as fio 3.33 for workloads that only write (overwrite=1 lays the
/// file out first), only read (their file laid out until the file system is full, then
/// read), or mix sequential reads and writes (laid out, then written past the end until
/// ENOSPC); a verifying one verifies nothing after the fill (fio terminates the job). Random
/// mixed workloads are refused: fio 3.33 cannot allocate a random map for an unlimited size,
/// and with `norandommap` its first read past the end fails with EIO. Trims and a read-only
/// job that verifies (fio fails at the first block, fiox checks them all) are not compared
/// with fio yet.
pub(super) fn fill_device_scope(job: &mut JobSpec) {
    let m = job.rw.mode;
    let writes_only = m.has_write() && !m.has_read() && !m.has_trim();
    let read_only = m.has_read() && !m.has_write() && !m.has_trim();
    let seq_mixed = m == crate::RwMode::ReadWrite;
    let verifies = job.verify.method != crate::VerifyMethod::None && job.verify.do_verify;
    if !(writes_only || read_only || seq_mixed) || (read_only && verifies) {
        crate::defs::record_value(
            job,
            "fill_device",
            "1",
            "with a workload that mixes random reads and writes, trims, or only reads and \
             verifies",
        );
    }
}

/// fio's fixup_options for the verify interval of any verifying job (headers or a bare
/// pattern, as fio 3.33 does for every `verify` but none): with varying write sizes (bsrange, bssplit) and no verify_interval, one header per smallest
/// write; an interval above the smallest write (or, in a reading job, the smallest read) is cut
/// to it; one that does not divide both the smallest and the largest write becomes their gcd.
/// So fiox writes and checks headers where fio does (fio verifies fiox's data and the other
/// way round). A fixed write size with no interval keeps `None`: one header per block, which
/// is what fio's gcd gives. verify_interval=0 stays for the verifier to refuse.
pub(super) fn verify_interval_fixup(job: &mut JobSpec) {
    use crate::spec::VerifyMethod as M;
    if matches!(job.verify.method, M::None) || job.verify.verify_interval == Some(0) {
        return;
    }
    let (wmin, wmax, rmin) = (job.bs.write.min, job.bs.write.max, job.bs.read.min);
    if wmin == 0 {
        return;
    }
    let given = job.verify.verify_interval;
    let mut vi = given.unwrap_or(0);
    if wmax != wmin && vi == 0 {
        vi = wmin;
    }
    if vi > wmin {
        vi = wmin;
    } else if job.rw.mode.has_read() && vi > rmin {
        vi = rmin;
    }
    if vi == 0 || wmin % vi != 0 || wmax % vi != 0 {
        vi = gcd(wmin, wmax);
    }
    if given.is_some() || wmin != wmax || vi != wmin {
        job.verify.verify_interval = Some(vi);
    }
}

pub(super) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// fio's dependent defaults (init.c fixups) that downstream code relies on.
pub(super) fn derive(job: &mut JobSpec, given: &HashSet<&str>) {
    if job.replay.read_iolog.is_some() && job.logs.write_iolog.take().is_some() {
        // fio warns about it (a parser warning `--warnings-fatal` stops on).
        let warning = "read_iolog overrides write_iolog (no I/O log is written), as in fio";
        job.notes.push(warning.into());
        job.fio_warnings.push(warning.into());
    }
    let r = &job.replay;
    if r.merge_file.is_none() && !(r.merge_scalars.is_empty() && r.merge_iters.is_empty()) {
        job.notes.push(
            "merge_blktrace_scalars and merge_blktrace_iters do nothing without merge_blktrace_file, as in fio"
                .into(),
        );
    }
    if !given.contains("iodepth_low") || job.iodepth_low == 0 || job.iodepth_low > job.iodepth {
        job.iodepth_low = job.iodepth;
    }
    if job.iodepth_batch_submit == 0 || job.iodepth_batch_submit > job.iodepth {
        job.iodepth_batch_submit = job.iodepth;
    }
    if job.iodepth_batch_complete_max < job.iodepth_batch_complete_min {
        job.iodepth_batch_complete_max = job.iodepth_batch_complete_min;
    }
    // fio's fixup_options: O_ATOMIC implies O_DIRECT, whichever of the two came last.
    if job.atomic {
        job.direct = true;
    }
    if job.files.fill_device {
        fill_device_scope(job);
    }
    verify_interval_fixup(job);
    // fio: loops=0 means once; a disabled latency has no percentiles.
    if job.timing.loops == 0 {
        job.timing.loops = 1;
    }
    if job.stats.disable_lat {
        job.stats.lat_percentiles = false;
    }
    if job.stats.disable_clat {
        job.stats.clat_percentiles = false;
    }
    if job.stats.disable_slat {
        job.stats.slat_percentiles = false;
    }
    if job.pacing.thinktime_spin > job.pacing.thinktime {
        job.pacing.thinktime_spin = job.pacing.thinktime;
    }
    let engine = job.ioengine.engine();
    if matches!(engine, Some(Engine::Cpuio | Engine::Exec)) {
        // fio's cpuio and exec move no data, so no byte count ever ends them: they run until
        // their runtime is over (or forever), on one file (fio sets nr_files = open_files = 1).
        job.timing.time_based = true;
        job.files.nrfiles = 1;
        job.files.openfiles = 1;
        job.size.get_or_insert(crate::SizeSpec::Bytes(1 << 20));
    }
    if engine.is_some_and(Engine::is_net) {
        // As fio: hostname= is the job's file name (a unix socket's path), one "file".
        if let Some(h) = job.engine.hostname.clone() {
            job.files.filenames = vec![h];
        }
        job.files.nrfiles = 1;
        // fio's net engine is bit based: rates are shown in bits unless unit_base says.
        if engine == Some(Engine::Net) && job.unit_base == 0 {
            job.unit_base = 8;
        }
    }
    let name = job.name.clone();
    for p in [
        &mut job.logs.write_bw_log,
        &mut job.logs.write_lat_log,
        &mut job.logs.write_iops_log,
        &mut job.logs.write_hist_log,
    ]
    .into_iter()
    .flatten()
    {
        if p.is_empty() {
            p.clone_from(&name);
        }
    }
}
