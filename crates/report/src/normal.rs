//! fio's human-readable ("normal") output, line for line: the job header lines printed before
//! the run ([`header`]), then per job the `groupid=` block with per-direction IOPS/BW,
//! slat/clat/lat lines, percentile blocks, bw/iops sample rows, latency buckets, cpu and depth
//! lines; then `Run status group` lines and `Disk stats` ([`normal`]). Field widths, unit
//! choices and rounding follow fio 3.33's stat.c so existing readers and scrapers keep working.

use std::fmt::Write as _;

use fiox_job::{Ddir, JobSpec};
use fiox_stats::{ActSlice, DiskResult, GroupResult, JobResult, LatStat, RunResult, SampleStat};

use crate::calc::{self, lat_summary};
use crate::units::{self, num2str, TimeUnit, Unit, Units};

/// The version line fio prints as `fio-3.33` (fiox's identity; see [`crate::identity`]).
pub use crate::identity::version_line;

/// Lines printed before the run: one header per job (`...` for the second clone of a
/// `numjobs` job, nothing for later clones), the version line and `Starting N process(es)`.
pub fn header(jobs: &[JobSpec]) -> String {
    let mut out = String::new();
    for job in jobs {
        match job.clone_index {
            0 => out.push_str(&job_header_line(job)),
            1 => out.push_str("...\n"),
            _ => {}
        }
    }
    out.push_str(&version_line());
    out.push('\n');
    out.push_str(&starting_line(jobs));
    out
}

/// `name: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) ..., (T) ..., ioengine=libaio, iodepth=8`.
pub fn job_header_line(job: &JobSpec) -> String {
    let u = Units::new(job.kb_base, job.unit_base).sig(job.stats.sig_figs);
    let bs = |d: Ddir| {
        let b = job.bs.get(d);
        format!("{}-{}", u.bytes(b.min), u.bytes(b.max))
    };
    // With bs_is_seq_rand the two sizes are sequential and random, and there is no trim one.
    let trim = if job.bs_is_seq_rand {
        "bs_is_seq_rand".to_string()
    } else {
        format!("(T) {}", bs(Ddir::Trim))
    };
    format!(
        "{}: (g={}): rw={}, bs=(R) {}, (W) {}, {trim}, ioengine={}, iodepth={}\n",
        job.name,
        job.group_id,
        job.rw.mode.fio_name(),
        bs(Ddir::Read),
        bs(Ddir::Write),
        job.ioengine,
        job.iodepth
    )
}

/// `Starting 2 threads and 1 process`.
pub fn starting_line(jobs: &[JobSpec]) -> String {
    let threads = jobs.iter().filter(|j| j.thread).count();
    let procs = jobs.len() - threads;
    let mut s = String::from("Starting ");
    if threads > 0 {
        let _ = write!(
            s,
            "{} thread{}",
            threads,
            if threads > 1 { "s" } else { "" }
        );
    }
    if procs > 0 {
        if threads > 0 {
            s.push_str(" and ");
        }
        let _ = write!(s, "{} process{}", procs, if procs > 1 { "es" } else { "" });
    }
    s.push('\n');
    s
}

/// The whole end-of-run report: a blank line, every job block, every group's run status, then
/// disk stats.
pub fn normal(run: &RunResult) -> String {
    let mut out = act_summary(run).unwrap_or_default();
    out.push('\n');
    for job in &run.jobs {
        let group = calc::group_of(run, job.groupid);
        out.push_str(&job_block(job, &group));
    }
    for group in &run.groups {
        out.push_str(&group_status(group));
    }
    out.push_str(&disk_stats(&run.disks));
    if let Some(i) = &run.idle {
        out.push_str(&idle_stats(i));
    }
    out
}

/// All jobs' act slices added up (None: not an act run).
pub fn act_slices(run: &RunResult) -> Option<Vec<ActSlice>> {
    let mut total: Option<Vec<ActSlice>> = None;
    for s in run.jobs.iter().filter_map(|j| j.act_slices.as_ref()) {
        fiox_stats::merge_act_slices(total.get_or_insert_with(Vec::new), s);
    }
    total
}

/// fio's act_show_all_stats: per hour, the percent of I/Os over each latency limit (fio prints
/// the same numbers under "trans" and "device"), then the verdict. fio prints it when the last
/// job ends, before the jobs' results.
pub fn act_summary(run: &RunResult) -> Option<String> {
    let slices = act_slices(run)?;
    let mut out = String::from("        trans                   device\n");
    out.push_str("        %>(ms)                  %>(ms)\n");
    out.push_str(" slice");
    for _ in 0..2 {
        for c in fiox_stats::ACT_CRITERIA {
            out.push_str(&format!("\t {:2}", c.usec / 1000));
        }
    }
    out.push_str("\n -----  -----   -----  ------   -----   -----  ------\n");
    let mut fails = 0;
    for (n, s) in slices.iter().enumerate() {
        fails += s.failures();
        out.push_str(&format!("   {:2}", n + 1));
        for _ in 0..2 {
            for i in 0..3 {
                out.push_str(&format!("\t{:.2}", s.percent(i)));
            }
        }
        out.push('\n');
    }
    let verdict = if fails > 0 { "FAILED" } else { "PASSED" };
    out.push_str(&format!("\nact: test complete, device(s): {verdict}\n"));
    Some(out)
}

/// fio's show_idle_prof_stats: `CPU idleness:` (after a blank line, except for calibration
/// alone), the system and per-CPU idleness, and the calibrated unit of work.
pub fn idle_stats(i: &fiox_stats::model::IdleResult) -> String {
    let mut out = String::new();
    if i.calibrate_only {
        out.push_str("CPU idleness:\n");
    } else {
        out.push_str("\nCPU idleness:\n");
        let _ = writeln!(out, "  system: {:3.2}%", i.system);
        if i.percpu_shown {
            let each: Vec<String> = i.percpu.iter().map(|p| format!("{p:3.2}%")).collect();
            let _ = writeln!(out, "  percpu: {}", each.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "  unit work: mean={:3.2}us, stddev={:3.2}",
        i.unit_mean, i.unit_stddev
    );
    out
}

/// One job's block; empty for a job that did no I/O (fio skips it too).
pub fn job_block(job: &JobResult, group: &GroupResult) -> String {
    let total_bytes = Ddir::ALL
        .iter()
        .map(|d| job.dirs.get(*d).io_bytes)
        .fold(0, u64::saturating_add);
    if total_bytes == 0 && calc::total_rw_ios(job) == 0 {
        return String::new();
    }
    let mut out = String::new();
    // fio stamps the block with the time the report is made: the job's end (or "now" for a
    // status report, where elapsed is the time so far).
    let date = units::ctime(job.start_unix.saturating_add(job.elapsed_s));
    if job.error == 0 {
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={:2}: pid={}: {}",
            job.name, job.groupid, job.jobs, job.error, job.pid, date
        );
    } else {
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={:2} ({}): pid={}: {}",
            job.name, job.groupid, job.jobs, job.error, job.verror, job.pid, date
        );
    }
    if !job.description.is_empty() {
        let _ = writeln!(out, "  Description  : [{}]", job.description);
    }
    for d in Ddir::ALL {
        if job.dirs.get(d).io_bytes > 0 {
            out.push_str(&dir_status(job, d, group));
        }
    }
    if job.unified_both && !job.mixed {
        out.push_str(&both_mixed_status(job, group));
    }
    out.push_str(&latency_buckets(job));
    out.push_str(&sync_status(job));
    out.push_str(&resource_lines(job));
    if let Some(ss) = &job.steadystate {
        out.push_str(&steadystate_line(job, group, ss));
    }
    out
}

fn ddir_name(d: Ddir) -> &'static str {
    match d {
        Ddir::Read => "read",
        Ddir::Write => "write",
        Ddir::Trim => "trim",
    }
}

/// One direction: IOPS/BW line, latency lines, percentile blocks and sample rows.
fn dir_status(job: &JobResult, d: Ddir, group: &GroupResult) -> String {
    let r = job.dirs.get(d);
    if r.runtime_ms == 0 {
        return String::new();
    }
    let u = Units::new(group.kb_base, group.unit_base).sig(job.sig_figs);
    let mut out = String::new();
    let iops = units::iops_int(r.total_ios, r.runtime_ms);
    // fio appends the zoned-device reset count to every write line; fiox has no zoned mode,
    // so the count is always 0.
    let post = if d == Ddir::Write {
        "; 0 zone resets"
    } else {
        ""
    };
    let name = if job.mixed { "mixed" } else { ddir_name(d) };
    let _ = writeln!(
        out,
        "  {}: IOPS={}, {}{}",
        name,
        u.count(iops),
        u.bw_summary(r.io_bytes, r.runtime_ms),
        post
    );
    if job.has_slat {
        out.push_str(&stat_line("slat", &r.slat));
    }
    out.push_str(&stat_line("clat", &r.clat));
    out.push_str(&stat_line(" lat", &r.lat));
    let prios = calc::shown_prios(r);
    let prio_kind = if job.lat_percentiles { "lat" } else { "clat" };
    for p in &prios {
        let (class, level) = calc::prio_class_level(p.ioprio);
        out.push_str(&stat_line(
            &format!("{prio_kind} prio {class}/{level}"),
            &p.stat,
        ));
    }
    let blocks = [
        (job.slat_percentiles && job.has_slat, "slat", &r.slat),
        (job.clat_percentiles, "clat", &r.clat),
        (job.lat_percentiles, "lat", &r.lat),
    ];
    let precision = calc::percentile_precision(job);
    for (on, kind, stat) in blocks {
        if on && stat.n > 0 {
            let values = calc::percentiles(&job.percentile_list, &stat.hist);
            out.push_str(&percentile_block(kind, &values, precision));
        }
    }
    if job.clat_percentiles || job.lat_percentiles {
        let total = if job.lat_percentiles {
            r.lat.n
        } else {
            r.clat.n
        };
        for p in &prios {
            let (class, level) = calc::prio_class_level(p.ioprio);
            let share = 100.0 * p.stat.n as f64 / total as f64;
            let kind = format!("{prio_kind} prio {class}/{level} ({share:.2}% of IOs)");
            let values = calc::percentiles(&job.percentile_list, &p.stat.hist);
            out.push_str(&percentile_block(&kind, &values, precision));
        }
    }
    out.push_str(&bw_row(&r.bw, group.dirs.get(d).agg_bw, u));
    out.push_str(&iops_row(&r.iops));
    out
}

/// `unified_rw_reporting=both`: the `mixed` block after the directions. fio builds it from a
/// thread_stat that never got the job's significant figures (0), so its first line's numbers
/// all print as 0 (`mixed: IOPS=0, BW=0 (0)(0B/13msec)`); the lines below it are complete.
fn both_mixed_status(job: &JobResult, group: &GroupResult) -> String {
    let m = fiox_stats::mixed_view(job);
    let r = m.dirs.get(Ddir::Read);
    if r.runtime_ms == 0 {
        return String::new();
    }
    let block = dir_status(&m, Ddir::Read, group);
    let rest = block.split_once('\n').map_or("", |(_, rest)| rest);
    format!("  mixed: IOPS=0, BW=0 (0)(0B/{}msec)\n{rest}", r.runtime_ms)
}

/// `    clat (usec): min=22, max=2809, avg=151.59, stdev=55.63`; empty without samples.
pub fn stat_line(name: &str, s: &LatStat) -> String {
    match lat_summary(s) {
        Some((min, max, mean, dev)) => stat_line_from(name, min, max, mean, dev),
        None => String::new(),
    }
}

/// [`stat_line`] from summary figures in ns.
pub fn stat_line_from(name: &str, min: u64, max: u64, mean: f64, dev: f64) -> String {
    let unit = TimeUnit::for_stat_line(min, max, dev);
    let div = unit.divisor();
    let fdiv = div as f64;
    format!(
        "    {} ({}): min={}, max={}, avg={:5.2}, stdev={:5.2}\n",
        name,
        unit.label(),
        num2str(min / div, 6, 1, false, Unit::None),
        num2str(max / div, 6, 1, false, Unit::None),
        mean / fdiv,
        dev / fdiv
    )
}

/// A percentile block from `(percentile, ns)` pairs (sorted): unit picked from the smallest and
/// largest value, values rounded up to the unit, percentiles shown with `precision` decimals,
/// as many per row as fit in 80 columns.
pub fn percentile_block(kind: &str, values: &[(f64, u64)], precision: usize) -> String {
    if values.is_empty() {
        return String::new();
    }
    let minv = values.iter().map(|v| v.1).min().unwrap_or(0);
    let maxv = values.iter().map(|v| v.1).max().unwrap_or(0);
    let unit = TimeUnit::for_percentiles(minv, maxv);
    let scaled_max = maxv / unit.divisor();
    let width = if scaled_max == 0 {
        5
    } else {
        (scaled_max.ilog10() as usize + 1).max(5)
    };
    // At least one entry per row, even for absurd precisions (fio would divide by zero).
    let per_line = ((80 - 7) / (precision + 10 + width)).max(1);
    let mut out = format!("    {} percentiles ({}):\n     |", kind, unit.label());
    let last = values.len() - 1;
    for (j, &(p, v)) in values.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let shown = round_up_to(v, unit);
        let _ = write!(
            out,
            " {:w$.prec$}th=[{:width$}]{}",
            p,
            shown,
            if j == last { '\n' } else { ',' },
            w = precision + 3,
            prec = precision,
            width = width
        );
        if j != last && j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
    out
}

/// fio rounds percentile values up, one thousand at a time.
fn round_up_to(mut v: u64, unit: TimeUnit) -> u64 {
    let steps = match unit {
        TimeUnit::Nsec => 0,
        TimeUnit::Usec => 1,
        TimeUnit::Msec => 2,
    };
    for _ in 0..steps {
        v = v.div_ceil(1000);
    }
    v
}

/// `   bw (  KiB/s): min=..., max=..., per=..%, avg=..., stdev=..., samples=N`.
///
/// Like fio 3.33 this always labels KiB/kB (switching to MiB above kb_base² KiB/s, even with
/// kb_base=1000) and ignores `unit_base` here: fio compares the resolved unit against the wrong
/// constant, so its bit-based label never appears, and parsers expect what fio prints.
fn bw_row(s: &SampleStat, group_agg: u64, u: Units) -> String {
    if s.n == 0 {
        return String::new();
    }
    let (mut min, mut max, mut mean, mut dev) = (s.min, s.max, s.mean(), s.stddev());
    let per = calc::bw_share(group_agg, mean);
    let kb = f64::from(u.kb_base);
    let mut label = if u.pow2 { "KiB" } else { "kB" };
    if mean > kb * kb {
        min = (min as f64 / kb) as u64;
        max = (max as f64 / kb) as u64;
        mean /= kb;
        dev /= kb;
        label = "MiB";
    }
    format!(
        "   bw ({:>5}/s): min={:5}, max={:5}, per={:3.2}%, avg={:5.2}, stdev={:5.2}, samples={}\n",
        label, min, max, per, mean, dev, s.n
    )
}

/// `   iops        : min=..., max=..., avg=..., stdev=..., samples=N`.
fn iops_row(s: &SampleStat) -> String {
    if s.n == 0 {
        return String::new();
    }
    format!(
        "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}\n",
        s.min,
        s.max,
        s.mean(),
        s.stddev(),
        s.n
    )
}

const LAT_RANGES: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// `  lat (usec)   : 20=0.01%, 50=0.11%, ...`: only non-empty buckets, five per line.
pub fn latency_buckets(job: &JobResult) -> String {
    let total = calc::total_rw_ios(job);
    let b = &job.lat_buckets;
    let mut out = String::new();
    for (label, counts) in [
        ("nsec", &b.ns[..]),
        ("usec", &b.us[..]),
        ("msec", &b.ms[..]),
    ] {
        let pcts = calc::lat_pct(counts, total);
        let mut in_line = 0;
        for (i, p) in pcts.iter().enumerate() {
            if *p <= 0.0 {
                continue;
            }
            if in_line == 0 {
                let _ = write!(out, "  lat ({label})   : ");
            } else {
                out.push_str(", ");
            }
            let _ = write!(out, "{}={:3.2}%", LAT_RANGES[i], p);
            in_line += 1;
            if in_line == 5 {
                out.push('\n');
                in_line = 0;
            }
        }
        if in_line > 0 {
            out.push('\n');
        }
    }
    out
}

/// fsync/fdatasync latency block, only when the job synced.
fn sync_status(job: &JobResult) -> String {
    let s = &job.sync_lat;
    if s.n == 0 {
        return String::new();
    }
    let mut out = String::from("  fsync/fdatasync/sync_file_range:\n");
    out.push_str(&stat_line("sync", s));
    let values = calc::percentiles(&job.percentile_list, &s.hist);
    out.push_str(&percentile_block(
        "sync",
        &values,
        calc::percentile_precision(job),
    ));
    out
}

/// cpu, IO depths, submit, complete, issued rwts and latency lines.
fn resource_lines(job: &JobResult) -> String {
    let mut out = String::new();
    let (usr, sys) = (job.usr_cpu_pct, job.sys_cpu_pct);
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        usr, sys, job.ctx, job.majf, job.minf
    );
    let depth = calc::dist_pct(&job.io_depth.buckets, calc::total_rw_ios(job));
    let _ = writeln!(
        out,
        "  IO depths    : 1={:3.1}%, 2={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, >=64={:3.1}%",
        depth[0], depth[1], depth[2], depth[3], depth[4], depth[5], depth[6]
    );
    for (label, dist) in [("submit", &job.submit), ("complete", &job.complete)] {
        let p = calc::dist_pct(&dist.buckets, calc::bucket_total(&dist.buckets));
        let _ = writeln!(
            out,
            "     {:<10}: 0={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, 64={:3.1}%, >=64={:3.1}%",
            label, p[0], p[1], p[2], p[3], p[4], p[5], p[6]
        );
    }
    let d = &job.dirs;
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        d.read.total_ios,
        d.write.total_ios,
        d.trim.total_ios,
        job.sync_lat.n,
        d.read.short_ios,
        d.write.short_ios,
        d.trim.short_ios,
        d.read.drop_ios,
        d.write.drop_ios,
        d.trim.drop_ios
    );
    if job.continue_on_error {
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{}>",
            job.total_err,
            job.first_error,
            crate::errno::strerror(job.first_error)
        );
    }
    if let Some((depth, target, window, pct)) = job.lat_target {
        let _ = writeln!(
            out,
            "     latency   : target={target}, window={window}, percentile={pct:.2}%, depth={depth}"
        );
    } else if job.iodepth > 0 {
        // Without latency_target, target/window are 0 and the percentile 100%, which is
        // exactly what fio prints when those options are unset.
        let _ = writeln!(
            out,
            "     latency   : target=0, window=0, percentile=100.00%, depth={}",
            job.iodepth
        );
    }
    if let Some(infos) = &job.block_infos {
        block_lines(&mut out, infos, &job.percentile_list);
    }
    out
}

/// fio's lines of `block_error_percentiles` (its `show_block_infos`): the trim-count
/// percentiles, wrapped at 75 columns, then the blocks per state. When every block is
/// unwritten fio prints no percentile and zero for every state, on the percentiles' line.
fn block_lines(out: &mut String, infos: &[u32], plist: &[f64]) {
    use fiox_stats::blocks::{block_percentiles, STATE_NAMES};
    const LINE: usize = 75;
    let (pcts, states) = block_percentiles(infos, plist).unwrap_or_default();
    out.push_str("  block lifetime percentiles :\n   |");
    let mut pos = 0;
    for (i, (p, n)) in pcts.iter().enumerate() {
        let end = if i + 1 == pcts.len() { '\n' } else { ',' };
        let s = format!(" {p:3.2}th={n}{end}");
        if pos + s.len() > LINE {
            pos = 0;
            out.push_str("\n   |");
        }
        out.push_str(&s);
        pos += s.len();
    }
    out.push_str("        states               :");
    for (i, (name, n)) in STATE_NAMES.iter().zip(states).enumerate() {
        let end = if i + 1 == STATE_NAMES.len() {
            '\n'
        } else {
            ','
        };
        let _ = write!(out, " {name}={n}{end}");
    }
}

/// fio's `  steadystate  : attained=yes, bw=8006KiB/s (8006kB/s), iops=2001, iops mean
/// dev=0.025%`: the window's mean bandwidth in units of kb_base, its mean IOPS, the criterion.
pub fn steadystate_line(
    job: &JobResult,
    group: &GroupResult,
    ss: &fiox_stats::model::SteadyResult,
) -> String {
    let u = Units::new(group.kb_base, group.unit_base).sig(job.sig_figs);
    let kb = u64::from(u.kb_base);
    let bw = |pow2| units::num2str(ss.bw_mean / kb, u.sig_figs, kb, pow2, u.rate_unit);
    format!(
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={:.3}{}\n",
        if ss.attained { "yes" } else { "no" },
        bw(u.pow2),
        bw(!u.pow2),
        u.count(ss.iops_mean),
        if ss.iops { "iops" } else { "bw" },
        if ss.slope { " slope" } else { " mean dev" },
        ss.criterion,
        if ss.pct { "%" } else { "" }
    )
}

/// `\nRun status group N (all jobs):` and one line per direction that ran.
pub fn group_status(g: &GroupResult) -> String {
    let u = Units::new(g.kb_base, g.unit_base).sig(g.sig_figs);
    let mut out = format!("\nRun status group {} (all jobs):\n", g.groupid);
    let read = if g.mixed { "  MIXED" } else { "   READ" };
    for (d, label) in [
        (Ddir::Read, read),
        (Ddir::Write, "  WRITE"),
        (Ddir::Trim, "   TRIM"),
    ] {
        let r = g.dirs.get(d);
        if r.max_runtime_ms == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "{}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            label,
            u.rate(r.agg_bw),
            u.rate_alt(r.agg_bw),
            u.rate(r.min_bw),
            u.rate(r.max_bw),
            u.rate_alt(r.min_bw),
            u.rate_alt(r.max_bw),
            u.bytes(r.io_bytes),
            u.bytes_alt(r.io_bytes),
            r.min_runtime_ms,
            r.max_runtime_ms
        );
    }
    if g.both && !g.mixed {
        out.push_str(&group_mixed_line(g, u));
    }
    out
}

/// `unified_rw_reporting=both`: the group's `MIXED` line (fio's `show_mixed_group_stats`):
/// over the directions that ran, bytes and aggregate rates summed, the extremes of min/max
/// rates and runtimes.
fn group_mixed_line(g: &GroupResult, u: Units) -> String {
    let (mut io, mut agg, mut min_bw, mut max_bw) = (0u64, 0u64, u64::MAX, 0u64);
    let (mut min_run, mut max_run) = (u64::MAX, 0u64);
    for d in Ddir::ALL {
        let r = g.dirs.get(d);
        if r.max_runtime_ms == 0 {
            continue;
        }
        io = io.saturating_add(r.io_bytes);
        agg = agg.saturating_add(r.agg_bw);
        min_bw = min_bw.min(r.min_bw);
        max_bw = max_bw.max(r.max_bw);
        min_run = min_run.min(r.min_runtime_ms);
        max_run = max_run.max(r.max_runtime_ms);
    }
    format!(
        "  MIXED: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec\n",
        u.rate(agg),
        u.rate_alt(agg),
        u.rate(min_bw),
        u.rate(max_bw),
        u.rate_alt(min_bw),
        u.rate_alt(max_bw),
        u.bytes(io),
        u.bytes_alt(io),
        min_run,
        max_run
    )
}

/// `\nDisk stats (read/write):` and one line per device; a stacked device first shows its own
/// line with the averaged `aggr*` figures of the devices under it, then those devices.
pub fn disk_stats(disks: &[DiskResult]) -> String {
    if disks.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nDisk stats (read/write):\n");
    for d in flatten_disks(disks) {
        out.push_str(&disk_line(d));
    }
    out
}

/// Devices in fio's order: each device followed by the devices under it (depth first), each
/// device once.
pub fn flatten_disks(disks: &[DiskResult]) -> Vec<&DiskResult> {
    fn walk<'a>(d: &'a DiskResult, out: &mut Vec<&'a DiskResult>) {
        if out.iter().any(|o| o.name == d.name) {
            return;
        }
        out.push(d);
        for s in &d.slaves {
            walk(s, out);
        }
    }
    let mut out = Vec::new();
    for d in disks {
        walk(d, &mut out);
    }
    out
}

/// The `aggr*` figures of a device with slaves (None for a plain device): fio's averages over
/// the slaves, computed where the disk stats are gathered.
pub use fiox_stats::disk::{slave_aggregate as disk_agg, SlaveAggregate as DiskAgg};

/// fiox's own lines for the disks under loop devices (fio shows a loop device alone):
/// `fiox disk stats under loop devices (read/write):` then `  DISK (backs LOOP): ios=...`.
/// Empty without loop devices on a disk.
pub fn backing_disk_stats(disks: &[DiskResult]) -> String {
    let mut out = String::new();
    for d in flatten_disks(disks) {
        for b in &d.backing {
            let named = DiskResult {
                name: format!("{} (backs {})", b.name, d.name),
                slaves: Vec::new(),
                ..b.clone()
            };
            out.push_str(&disk_line(&named));
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("\nfiox disk stats under loop devices (read/write):\n{out}")
}

fn disk_line(d: &DiskResult) -> String {
    let agg = disk_agg(d);
    let mut out = String::from(if agg.is_some() { "    " } else { "  " });
    let _ = write!(
        out,
        "{}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
        d.name,
        d.ios[0],
        d.ios[1],
        d.merges[0],
        d.merges[1],
        d.ticks[0],
        d.ticks[1],
        d.in_queue,
        d.util.min(100.0)
    );
    if let Some(a) = agg {
        let _ =
            write!(
            out,
            ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={:3.2}%",
            a.ios[0], a.ios[1], a.merges[0], a.merges[1], a.ticks[0], a.ticks[1], a.in_queue, a.util
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::{BsSpec, PerDir, RwMode, RwSpec};

    #[test]
    fn header_lines_as_fio() {
        let job = JobSpec {
            name: "sample".into(),
            rw: RwSpec {
                mode: RwMode::RandRw,
                n: 0,
            },
            ioengine: "libaio".into(),
            iodepth: 8,
            ..JobSpec::default()
        };
        let h = header(std::slice::from_ref(&job));
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(
            lines[0],
            "sample: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=8"
        );
        assert!(lines[1].starts_with("fiox-"));
        assert_eq!(lines[2], "Starting 1 process");
    }

    #[test]
    fn header_clones_and_threads() {
        let mut jobs = Vec::new();
        for i in 0..3 {
            jobs.push(JobSpec {
                name: "seq".into(),
                clone_index: i,
                numjobs: 3,
                thread: i < 2,
                bs: PerDir::all(BsSpec::fixed(131_072)),
                ..JobSpec::default()
            });
        }
        let h = header(&jobs);
        let lines: Vec<&str> = h.lines().collect();
        assert!(lines[0].contains("bs=(R) 128KiB-128KiB, (W) 128KiB-128KiB"));
        assert_eq!(lines[1], "...");
        assert_eq!(lines[3], "Starting 2 threads and 1 process");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn stat_lines_reproduce_fio() {
        // Figures from fio 3.33's randrw-libaio reference run.
        assert_eq!(
            stat_line_from("clat", 722, 1_830_949, 127_325.97, 43_858.78),
            "    clat (nsec): min=722, max=1830.9k, avg=127325.97, stdev=43858.78\n"
        );
        assert_eq!(
            stat_line_from("slat", 3_596, 272_432, 6_310.0, 6_240.0),
            "    slat (usec): min=3, max=272, avg= 6.31, stdev= 6.24\n"
        );
        assert_eq!(
            stat_line_from(" lat", 25_100, 1_834_400, 133_640.0, 44_100.0),
            "     lat (usec): min=25, max=1834, avg=133.64, stdev=44.10\n"
        );
    }

    #[test]
    fn percentile_block_reproduces_fio() {
        let us = [
            71u64, 86, 92, 101, 108, 115, 121, 129, 139, 151, 169, 186, 229, 253, 529, 832, 1795,
        ];
        let list = fiox_job::DEFAULT_PERCENTILES;
        // fio's own values are bucket values in ns that round up to these microseconds.
        let values: Vec<(f64, u64)> = list
            .iter()
            .zip(us)
            .map(|(p, v)| (*p, v * 1000 - 400))
            .collect();
        let expect = "    clat percentiles (usec):
     |  1.00th=[   71],  5.00th=[   86], 10.00th=[   92], 20.00th=[  101],
     | 30.00th=[  108], 40.00th=[  115], 50.00th=[  121], 60.00th=[  129],
     | 70.00th=[  139], 80.00th=[  151], 90.00th=[  169], 95.00th=[  186],
     | 99.00th=[  229], 99.50th=[  253], 99.90th=[  529], 99.95th=[  832],
     | 99.99th=[ 1795]
";
        assert_eq!(percentile_block("clat", &values, 2), expect);
    }

    #[test]
    fn percentile_block_nsec_and_wide_values() {
        let values = vec![(50.0, 10u64), (99.99, 948)];
        assert_eq!(
            percentile_block("clat", &values, 2),
            "    clat percentiles (nsec):\n     | 50.00th=[   10], 99.99th=[  948]\n"
        );
        // Eight-digit msec values widen the column and leave 3 per row.
        let values: Vec<(f64, u64)> = [1.0, 5.0, 10.0, 20.0]
            .iter()
            .zip([3_000_000u64, 4_000_000, 5_000_000, 12_345_678_000_000])
            .map(|(p, v)| (*p, v))
            .collect();
        assert_eq!(
            percentile_block("lat", &values, 2),
            "    lat percentiles (msec):\n     |  1.00th=[       3],  5.00th=[       4], 10.00th=[       5],\n     | 20.00th=[12345678]\n"
        );
    }

    #[test]
    fn disk_lines_with_slaves() {
        let slave = |name: &str, ios: u64, util: f64| DiskResult {
            name: name.into(),
            ios: [ios, ios],
            in_queue: 10,
            util,
            ..Default::default()
        };
        let md = DiskResult {
            name: "md0".into(),
            ios: [100, 50],
            util: 0.0,
            slaves: vec![slave("sda", 60, 40.0), slave("sdb", 40, 55.5)],
            ..Default::default()
        };
        let s = disk_stats(&[md]);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[1], "Disk stats (read/write):");
        assert_eq!(
            lines[2],
            "    md0: ios=100/50, merge=0/0, ticks=0/0, in_queue=0, util=0.00%, aggrios=50/50, aggrmerge=0/0, aggrticks=0/0, aggrin_queue=10, aggrutil=55.50%"
        );
        assert_eq!(
            lines[3],
            "  sda: ios=60/60, merge=0/0, ticks=0/0, in_queue=10, util=40.00%"
        );
        assert!(lines[4].starts_with("  sdb:"));
    }

    /// A loop device prints as fio prints it (a plain line, no aggr*); the disk under it is
    /// only in fiox's own block.
    #[test]
    fn loop_device_alone_in_disk_stats() {
        let lo = DiskResult {
            name: "loop0".into(),
            ios: [64, 0],
            backing: vec![DiskResult {
                name: "vda".into(),
                ios: [2, 0],
                ..Default::default()
            }],
            ..Default::default()
        };
        let disks = [lo];
        assert_eq!(
            disk_stats(&disks),
            "\nDisk stats (read/write):\n  loop0: ios=64/0, merge=0/0, ticks=0/0, in_queue=0, util=0.00%\n"
        );
        assert_eq!(
            backing_disk_stats(&disks),
            "\nfiox disk stats under loop devices (read/write):\n  vda (backs loop0): ios=2/0, merge=0/0, ticks=0/0, in_queue=0, util=0.00%\n"
        );
        assert_eq!(backing_disk_stats(&[DiskResult::default()]), "");
    }

    #[test]
    fn latency_bucket_lines_wrap_at_five() {
        let mut job = JobResult::default();
        job.dirs.read.total_ios = 1000;
        job.lat_buckets.us = [0, 0, 0, 1, 100, 200, 300, 200, 100, 50];
        job.lat_buckets.ms[0] = 49;
        let s = latency_buckets(&job);
        assert_eq!(
            s,
            "  lat (usec)   : 20=0.10%, 50=10.00%, 100=20.00%, 250=30.00%, 500=20.00%\n  lat (usec)   : 750=10.00%, 1000=5.00%\n  lat (msec)   : 2=4.90%\n"
        );
    }
}
