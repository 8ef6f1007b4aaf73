//! I/O pattern, block size, size/offset, engine, depth and sync options.

use super::{Category as C, Kind as K, OptDef, Val};
use crate::value;
use crate::{BsSpec, IoSubmitMode, RwMode, RwSpec, SyncMode};

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new("rw", K::Choice(&["read", "write", "trim", "randread", "randwrite", "randtrim", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite"]), C::Io, "I/O pattern, optionally with :N", |j, v| {
        super::forget(j, "rw");
        let word = v.choice()?;
        j.seq_backwards = false;
        j.rw = match word.split_once(':') {
            Some((m, n)) if parse_rw(m)?.mode.is_random() => {
                // fio reads a random mode's `:N` with atoi into an unsigned count: `8k` is 8,
                // `-8` wraps to 2^32-8 (after the first offset, sequential for ~4e9 I/Os).
                parse_rw(&format!("{m}:{}", n.trim().trim_start_matches('-')))?;
                RwSpec {
                    mode: parse_rw(m)?.mode,
                    n: u64::from(c_atoi(n) as u32),
                }
            }
            Some((m, n)) if n.trim().starts_with('-') => {
                // fio's negative ddir_seq_add: sequential I/O walks backwards by N.
                let rw = parse_rw(&format!("{m}:{}", &n.trim()[1..]))?;
                j.seq_backwards = rw.n > 0;
                rw
            }
            _ => parse_rw(&word)?,
        };
        Ok(())
    })
    .alias(&["readwrite"])
    .def("read")
    .long("`rw` and `readwrite` are sequential mixed I/O. A `:N` suffix issues N I/Os per new random offset for random modes (N read as C's atoi reads it, as fio: `8k` is 8, `-8` is 2^32-8), or skips N bytes after each I/O for sequential modes; `:-N` in a sequential mode moves N bytes back from the end of each I/O instead (walking backwards, wrapping from the start to the end of the file, as fio)."),
    OptDef::new("rwmixread", K::Int, C::Io, "Percent of a mixed workload that is reads", |j, v| {
        j.rwmixread = v.u32()?;
        Ok(())
    })
    .def("50")
    .range(0, 100),
    OptDef::new("rwmixwrite", K::Int, C::Io, "Percent of a mixed workload that is writes", |j, v| {
        j.rwmixread = 100 - v.u32()?;
        Ok(())
    })
    .def("50")
    .range(0, 100)
    .long("Sets rwmixread to 100 minus this value; the last of the two given wins."),
    OptDef::new("bs", K::Complex("size[,size][,size] (read,write,trim)"), C::Io, "Block size, per direction", |j, v| {
        let mut notes = Vec::new();
        let parsed = per_dir_sizes(v, |s| lenient_bs(s, v.kb_base, "bs", &mut notes))?;
        j.notes.append(&mut notes);
        for (d, bs) in parsed {
            if bs == 0 {
                return Err("block size must be at least 1 byte".into());
            }
            *j.bs.get_mut(d) = BsSpec::fixed(bs);
        }
        Ok(())
    })
    .alias(&["blocksize"])
    .def("4096")
    .long("One value sets all directions; `bs=8k,32k` is 8k reads and 32k writes and trims; an empty field keeps the default."),
    OptDef::new("ba", K::Complex("size[,size][,size]"), C::Io, "Offset alignment of random I/O, per direction", |j, v| {
        for (d, a) in per_dir_sizes(v, |s| value::parse_size(s, v.kb_base))? {
            if a == 0 {
                return Err("alignment must be at least 1 byte".into());
            }
            *j.blockalign.get_mut(d) = Some(a);
        }
        Ok(())
    })
    .alias(&["blockalign"])
    .long("Defaults to the minimum block size of the direction."),
    OptDef::new("bsrange", K::Complex("range[,range][,range] (a-b)"), C::Io, "Block size range, per direction", |j, v| {
        let mut notes = Vec::new();
        let parsed = per_dir_sizes(v, |s| parse_bsrange(s, v.kb_base, &mut notes))?;
        j.notes.append(&mut notes);
        for (d, (lo, hi)) in parsed {
            if lo == 0 {
                return Err("block size must be at least 1 byte".into());
            }
            let (min, max) = (lo.min(hi), lo.max(hi));
            *j.bs.get_mut(d) = BsSpec { min, max, split: Vec::new() };
        }
        Ok(())
    })
    .alias(&["blocksize_range"])
    .long("Sizes are multiples of the minimum unless bs_unaligned is set."),
    OptDef::new("bssplit", K::Complex("bs/pct:bs/pct...[,...][,...]"), C::Io, "Weighted mix of block sizes, per direction", |j, v| {
        let mut notes = Vec::new();
        let parsed = per_dir_sizes(v, |s| parse_bssplit_noted(s, v.kb_base, &mut notes))?;
        j.notes.append(&mut notes);
        for (d, split) in parsed {
            let min = split.iter().map(|e| e.0).min().unwrap_or(4096);
            let max = split.iter().map(|e| e.0).max().unwrap_or(4096);
            *j.bs.get_mut(d) = BsSpec { min, max, split };
        }
        Ok(())
    })
    .long("`4k/10:64k/50:32k/40`; an empty share splits what is left evenly. Shares may not exceed 100 in total; if they add up to less, the last size takes the rest (as fio's selection does)."),
    OptDef::new("bs_unaligned", K::Bool, C::Io, "Allow block sizes that are not multiples of the minimum", |j, v| {
        j.bs_unaligned = v.bool()?;
        Ok(())
    })
    .alias(&["blocksize_unaligned"]),
    OptDef::new("flow", K::Int, C::Rate, "Weight of this job in its flow (0: none)", |j, v| {
        j.flow.weight = v.u32()?;
        Ok(())
    })
    .range(0, 1000)
    .def("0")
    .long("Jobs with the same flow_id issue I/O in proportion to their weights: flow=1 and flow=3 give 1:3. A job leaves its flow once it has ended and the run has reaped it (every 10 ms, as fio's main thread); from then on the others run without it."),
    OptDef::new("flow_id", K::Int, C::Rate, "The flow this job belongs to", |j, v| {
        j.flow.id = v.int()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("flow_sleep", K::Int, C::Rate, "Microseconds to wait when the flow holds the job back", |j, v| {
        j.flow.sleep_us = v.u64()?;
        Ok(())
    })
    .range(0, i64::MAX)
    .def("0"),
    OptDef::new("flow_watermark", K::Str, C::Rate, "Deprecated in fio (no effect)", |j, _| {
        j.notes.push("flow_watermark is deprecated in fio and has no effect".into());
        Ok(())
    }),
    OptDef::new("latency_target", K::Time("us"), C::Io, "Find the queue depth whose latency meets this target", |j, v| {
        j.lat_target.target_ns = v.time_us()?.saturating_mul(1000);
        Ok(())
    })
    .def("0")
    .long("fio's probing: the depth starts at 1 and is raised (doubled, then bisected) after each latency_window in which latency_percentile of the I/Os met the target, lowered after one that did not; at depth 1 an I/O over the target is an error (ETIMEDOUT). Once the depth settles, stats are reset and one more window runs at it."),
    OptDef::new("latency_window", K::Time("us"), C::Io, "Window of latency_target's probing", |j, v| {
        j.lat_target.window_us = v.time_us()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("latency_percentile", K::Complex("percent"), C::Io, "Share of I/Os that must meet latency_target", |j, v| {
        let p = crate::value::parse_float(v.raw.trim())?;
        if !(0.0..=100.0).contains(&p) {
            return Err(format!("{p} is outside 0..100"));
        }
        j.lat_target.percentile = p;
        Ok(())
    })
    .def("100"),
    OptDef::new("latency_run", K::Bool, C::Io, "Keep probing the depth for the whole run", |j, v| {
        j.lat_target.run = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("max_latency", K::Complex("time[,time][,time] (default unit us)"), C::Io, "End the job (ETIMEDOUT) when an I/O's latency exceeds this, per direction", |j, v| {
        for (d, p) in crate::Ddir::ALL.into_iter().zip(value::split_triplet(v.raw)?) {
            if let Some(p) = p {
                *j.lat_target.max_ns.get_mut(d) = value::parse_time_us(p, 1)?.saturating_mul(1000);
            }
        }
        Ok(())
    })
    .def("0")
    .long("As fio: a read or write whose total latency (submission to completion) is over the limit of its direction ends the job with error 110 (ETIMEDOUT) and fio's message naming the file, direction, offset and length. 0 means no limit; trims are not checked."),
    OptDef::new("bs_is_seq_rand", K::Bool, C::Io, "The read,write block sizes are for sequential,random I/O", |j, v| {
        j.bs_is_seq_rand = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("As fio: `bs=4k,64k` then gives sequential I/O (of any direction) 4k and random I/O 64k; the trim size is not used."),
    OptDef::new("size", K::SizeOrPercent, C::Io, "Total bytes of I/O per job (or % of the file/device)", |j, v| {
        j.size = Some(v.size_pct()?);
        Ok(())
    })
    .long("Divided among the job's files. Without it the size of existing files or devices is used."),
    OptDef::new("io_size", K::SizeOrPercent, C::Io, "Bytes of I/O to do, if different from size", |j, v| {
        j.io_size = Some(v.size_pct()?);
        Ok(())
    })
    .alias(&["io_limit"]),
    OptDef::new("offset", K::SizeOrPercent, C::Io, "Start I/O at this offset (or % of the file)", |j, v| {
        j.offset = v.size_pct()?;
        Ok(())
    })
    .alias(&["fileoffset"])
    .def("0"),
    OptDef::new("offset_increment", K::SizeOrPercent, C::Io, "Add this (or % of the file) times the clone number to offset", |j, v| {
        j.offset_increment_pct = 0;
        if v.str().ends_with('%') {
            // fio keeps a whole percentage (strtoll) and applies it to each file's size.
            if let crate::SizeSpec::Percent(p) = value::parse_size_or_percent(v.str(), v.kb_base)? {
                j.offset_increment = 0;
                j.offset_increment_pct = p as u32;
            }
            return Ok(());
        }
        j.offset_increment = v.size()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("offset_align", K::Size, C::Io, "Align a percentage offset to this", |j, v| {
        j.offset_align = v.size()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("number_ios", K::Int, C::Io, "Stop after this many I/Os", |j, v| {
        let n = v.u64()?;
        j.number_ios = if n == 0 { None } else { Some(n) };
        Ok(())
    })
    .def("0"),
    OptDef::new("ioengine", K::Str, C::Io, "I/O engine", |j, v| {
        super::forget(j, "ioengine");
        if let Some(e) = super::fio_only_engine(v.str()) {
            // Kept as named so the engine's own options are checked against it.
            j.ioengine = e.into();
            super::record(j, crate::Unsupported {
                option: "ioengine".into(),
                value: e.into(),
                what: "engine",
                note: String::new(),
            });
            return Ok(());
        }
        j.ioengine = super::canonical_engine(v.str())?.into();
        Ok(())
    })
    .def("psync")
    .long("See `--enghelp` for the list. A fio engine that fiox does not implement parses (with its options) but a job using it is refused when run, as fio refuses a file naming an engine it cannot load; a job of an engine fio 3.33 loads but cannot use without its device or library (sg, mtd, io_uring_cmd, nbd, rdma, rados, rbd, gfapi, dev-dax, libpmem) fails as fio's does, with fio's error number, and the other jobs run. pmemblk runs where libpmemblk.so.1 is installed (filename=path,bsize,fsizemib; thread=1, as fio)."),
    OptDef::new("iodepth", K::Int, C::Io, "I/Os kept in flight", |j, v| {
        j.iodepth = v.u32()?;
        j.iodepth_given = true;
        Ok(())
    })
    .def("1")
    .range(1, 65536)
    .long("Only asynchronous engines keep more than one I/O in flight; libaio needs direct=1 to be asynchronous."),
    OptDef::new("iodepth_batch_submit", K::Int, C::Io, "I/Os submitted at once (0 = iodepth)", |j, v| {
        j.iodepth_batch_submit = v.u32()?;
        Ok(())
    })
    .alias(&["iodepth_batch"])
    .def("1")
    .range(0, 65536),
    OptDef::new("iodepth_batch_complete_min", K::Int, C::Io, "Minimum completions reaped at once", |j, v| {
        j.iodepth_batch_complete_min = v.u32()?;
        Ok(())
    })
    .alias(&["iodepth_batch_complete"])
    .def("1")
    .range(0, 65536),
    OptDef::new("iodepth_batch_complete_max", K::Int, C::Io, "Maximum completions reaped at once", |j, v| {
        j.iodepth_batch_complete_max = v.u32()?;
        Ok(())
    })
    .range(0, 65536)
    .long("Defaults to iodepth_batch_complete_min."),
    OptDef::new("iodepth_low", K::Int, C::Io, "Refill the queue when it drains to this depth", |j, v| {
        j.iodepth_low = v.u32()?;
        Ok(())
    })
    .range(0, 65536)
    .long("Defaults to iodepth."),
    OptDef::new("io_submit_mode", K::Choice(&["inline", "offload"]), C::Io, "Submit I/O from the job thread (inline) or from iodepth submit threads (offload)", |j, v| {
        j.io_submit_mode = if v.choice()? == "offload" { IoSubmitMode::Offload } else { IoSubmitMode::Inline };
        Ok(())
    })
    .def("inline")
    .long("offload: the job thread hands each I/O to iodepth submit threads, each running its own instance of the engine at depth 1 (as fio's offload workers), so slat measures the hand-off. Works with every engine, io_uring included (fio refuses io_uring). The submit threads' CPU time and context switches count as the job's."),
    OptDef::new("atomic", K::Bool, C::Io, "Open with O_DIRECT and fio's O_ATOMIC bit (implies direct)", |j, v| {
        j.atomic = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("As fio 3.33 on Linux: files are opened with O_DIRECT plus fio's OS_O_ATOMIC bit (040000000), which the kernel ignores; `direct=1` is implied whatever order the options come in."),
    OptDef::new("write_barrier", K::Int, C::Io, "Make every Nth write a barrier write", |j, v| {
        j.write_barrier = v.u32()?;
        Ok(())
    })
    .def("0")
    .long("Accepted and checked; changes no I/O, as in fio 3.33, where only the libpmem engine acts on barrier writes."),
    OptDef::new("direct", K::Bool, C::Io, "Use O_DIRECT (bypass the page cache)", |j, v| {
        j.direct = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("buffered", K::Bool, C::Io, "Use the page cache (the opposite of direct)", |j, v| {
        j.direct = !v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("sync", K::Choice(&["none", "0", "1", "sync", "dsync"]), C::Io, "Open files with O_SYNC (sync/1) or O_DSYNC (dsync)", |j, v| {
        j.sync = match v.choice()?.as_str() {
            "1" | "sync" => SyncMode::Sync,
            "dsync" => SyncMode::Dsync,
            _ => SyncMode::None,
        };
        Ok(())
    })
    .def("none"),
    OptDef::new("fsync", K::Int, C::Io, "fsync after this many writes (0 = never)", |j, v| {
        j.fsync = v.u64()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("fdatasync", K::Int, C::Io, "fdatasync after this many writes (0 = never)", |j, v| {
        j.fdatasync = v.u64()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("end_fsync", K::Bool, C::Io, "fsync the files when the job's writes are done", |j, v| {
        j.end_fsync = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("end_syncfs", K::Bool, C::Io, "syncfs the job's filesystems when its writes are done (fio 3.42)", |j, v| {
        j.end_syncfs = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("fio 3.42's option: like `end_fsync`, but one syncfs(2) per filesystem holding the job's files (found from each file's directory) instead of an fsync(2) per file; it replaces end_fsync when both are set. Only engines that can sync accept it (the sync family, io_uring, libaio, posixaio, falloc, ftruncate, filecreate, filedelete, dirdelete); others refuse the job with EINVAL, as fio does."),
    OptDef::new("fsync_on_close", K::Bool, C::Io, "fsync each file when closing it", |j, v| {
        j.fsync_on_close = v.bool()?;
        Ok(())
    })
    .def("0"),
];

/// Apply a per-direction triplet: returns the directions given and their parsed values.
fn per_dir_sizes<T>(
    v: &Val,
    mut parse: impl FnMut(&str) -> Result<T, String>,
) -> Result<Vec<(crate::Ddir, T)>, String> {
    let parts = value::split_triplet(v.raw)?;
    let mut out = Vec::new();
    for (d, p) in crate::Ddir::ALL.into_iter().zip(parts) {
        if let Some(p) = p {
            out.push((d, parse(p)?));
        }
    }
    if out.is_empty() {
        return Err("no value given".into());
    }
    Ok(out)
}

/// A block size in fiox's syntax, else as fio reads it ([`value::fio_lenient_size`]) with a
/// note naming what fio (and so fiox) ignored.
fn lenient_bs(s: &str, kb_base: u32, opt: &str, notes: &mut Vec<String>) -> Result<u64, String> {
    let strict = match value::parse_size(s, kb_base) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    // Where fio refuses too, fiox's own message says more.
    let (v, ignored) = value::fio_lenient_size(s, kb_base).map_err(|_| strict)?;
    if !ignored.is_empty() {
        notes.push(super::ignored_note(opt, s, v, &ignored));
    }
    Ok(v)
}

/// One `bsrange` field as fio reads it: split at the first `-`, else the first `:`, each side
/// a size with whatever follows its number and unit ignored (so
/// `512/25:1k:25:2k:25:4k/25` is 512-1k); the bounds in either order.
fn parse_bsrange(s: &str, kb_base: u32, notes: &mut Vec<String>) -> Result<(u64, u64), String> {
    let t = s.trim();
    // As fio: no separator is an error (fio does not read `4k` as 4k-4k).
    let at = t
        .find('-')
        .or_else(|| t.find(':'))
        .ok_or_else(|| format!("'{t}' is not a range: write low-high, e.g. 4k-16k"))?;
    let (a, b) = value::split_range(s);
    if let (Ok(a), Ok(b)) = (value::parse_size(a, kb_base), value::parse_size(b, kb_base)) {
        return Ok((a, b));
    }
    let mut lost = Vec::new();
    let mut side = |x: &str| -> Result<u64, String> {
        let (v, ignored) = value::fio_lenient_size(x, kb_base)?;
        if !ignored.is_empty() {
            lost.push(format!("'{ignored}' after {v}"));
        }
        Ok(v)
    };
    let (lo, hi) = (side(&t[..at])?, side(&t[at + 1..])?);
    notes.push(format!(
        "bsrange: '{t}' read as {}-{} as fio 3.33 reads it: {} ignored",
        lo.min(hi),
        lo.max(hi),
        lost.join(", ")
    ));
    Ok((lo, hi))
}

/// `bssplit` with fio's leniency where fiox's syntax fails: sizes as fio reads them, shares
/// read with atoi, and the list ending at an empty entry; a note says what was ignored.
fn parse_bssplit_noted(
    s: &str,
    kb_base: u32,
    notes: &mut Vec<String>,
) -> Result<Vec<(u64, u32)>, String> {
    let strict = parse_bssplit(s, kb_base);
    if strict.is_ok() || s.trim().is_empty() {
        return strict;
    }
    let mut fixed = Vec::new();
    let mut lost = Vec::new();
    let t = s.trim();
    let mut parts = t.split(':');
    for part in parts.by_ref() {
        if part.is_empty() {
            lost.push("the entries after an empty one".to_string());
            break;
        }
        let (bs, pct) = part.split_once('/').unwrap_or((part, ""));
        let Ok((v, ignored)) = value::fio_lenient_size(bs, kb_base) else {
            return strict;
        };
        if !ignored.is_empty() {
            lost.push(format!("'{ignored}' after {v}"));
        }
        let digits = pct
            .trim_start()
            .trim_start_matches(['+', '-'])
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let lead = pct.len() - pct.trim_start().len();
        let sign = usize::from(pct.trim_start().starts_with(['+', '-']));
        let kept = &pct[..lead + sign + digits];
        if kept.len() < pct.len() {
            lost.push(format!(
                "'{}' after share {}",
                &pct[kept.len()..],
                kept.trim()
            ));
        }
        let kept = kept.trim();
        if kept.is_empty() || kept.parse::<i64>().unwrap_or(0) <= 0 {
            fixed.push(format!("{v}"));
        } else {
            fixed.push(format!("{v}/{}", kept.trim_start_matches('+')));
        }
    }
    // Where fio's reading fails too, fiox's own message (about the value as written) stands.
    let split = parse_bssplit(&fixed.join(":"), kb_base).or(strict)?;
    notes.push(format!(
        "bssplit: '{t}' read as '{}' as fio 3.33 reads it: {} ignored",
        fixed.join(":"),
        lost.join(", ")
    ));
    Ok(split)
}

/// `randrw:8` -> RwSpec.
pub fn parse_rw(s: &str) -> Result<RwSpec, String> {
    let (mode, n) = match s.split_once(':') {
        Some((m, n)) => {
            let n = value::parse_size(n, 1024).map_err(|e| format!("bad ':N' in '{s}': {e}"))?;
            (m, n)
        }
        None => (s, 0),
    };
    let mode = match mode {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "trim" => RwMode::Trim,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "randtrim" => RwMode::RandTrim,
        "rw" | "readwrite" => RwMode::ReadWrite,
        "randrw" => RwMode::RandRw,
        "trimwrite" => RwMode::TrimWrite,
        _ => RwMode::RandTrimWrite,
    };
    Ok(RwSpec { mode, n })
}

/// C's atoi as glibc computes it: leading blanks, a sign, then digits up to the first
/// non-digit (none: 0), truncated to 32 bits.
fn c_atoi(s: &str) -> i32 {
    let t = s.trim_start();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let mut v: i64 = 0;
    for c in digits.chars().map_while(|c| c.to_digit(10)) {
        v = v.wrapping_mul(10).wrapping_add(i64::from(c));
    }
    (if neg { v.wrapping_neg() } else { v }) as i32
}

/// `4k/10:64k/50:32k/` -> [(4096,10),(65536,50),(32768,40)].
pub fn parse_bssplit(s: &str, kb_base: u32) -> Result<Vec<(u64, u32)>, String> {
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for part in s.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (bs, pct) = match part.split_once('/') {
            Some((b, p)) => (b, p.trim()),
            None => (part, ""),
        };
        let bs = value::parse_size(bs, kb_base)?;
        if bs == 0 {
            return Err(format!("block size in '{part}' must be at least 1 byte"));
        }
        // As fio: a fraction is truncated, and a share of 0 counts as blank.
        let pct = if pct.is_empty() {
            None
        } else {
            let p = value::parse_float(pct)
                .ok()
                .filter(|p| *p >= 0.0)
                .ok_or_else(|| format!("'{pct}' in '{part}' is not a percentage"))?;
            Some(p.min(1000.0) as u32).filter(|p| *p > 0)
        };
        entries.push((bs, pct));
    }
    if entries.is_empty() {
        return Err("no block sizes given".into());
    }
    if entries.len() > 64 {
        return Err("at most 64 block sizes may be given".into());
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    if given > 100 {
        return Err(format!(
            "block size shares add up to {given}%, more than 100%"
        ));
    }
    let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    let rest = 100 - given;
    let mut out: Vec<(u64, u32)> = Vec::new();
    for (bs, p) in entries {
        // Blanks split what is left evenly (rounded down, as fio); the last size takes any
        // remainder below.
        out.push((bs, p.unwrap_or(rest / blanks.max(1))));
    }
    let total: u32 = out.iter().map(|e| e.1).sum();
    if let Some(last) = out.last_mut() {
        last.1 += 100 - total;
    }
    Ok(out)
}

#[cfg(test)]
pub(super) use tests::CASES;

#[cfg(test)]
mod tests {
    use super::super::testutil::{run, Case};
    use super::*;
    use crate::{PerDir, SizeSpec};

    pub static CASES: &[Case] = &[
        (
            "rw",
            "randrw",
            Some(|j| {
                j.rw == RwSpec {
                    mode: RwMode::RandRw,
                    n: 0,
                }
            }),
        ),
        (
            "rw",
            "randread:8",
            Some(|j| {
                j.rw == RwSpec {
                    mode: RwMode::RandRead,
                    n: 8,
                }
            }),
        ),
        ("readwrite", "rw", Some(|j| j.rw.mode == RwMode::ReadWrite)),
        (
            "rw",
            "write:4k",
            Some(|j| {
                j.rw == RwSpec {
                    mode: RwMode::Write,
                    n: 4096,
                }
            }),
        ),
        ("rw", "randomread", None),
        (
            "rw",
            "read:-8k",
            Some(|j| {
                j.rw.mode == RwMode::Read
                    && j.rw.n == 8192
                    && j.seq_backwards
                    && j.unsupported.is_empty()
            }),
        ),
        (
            "rw",
            "randread:-8",
            Some(|j| {
                j.rw.mode == RwMode::RandRead
                    && !j.seq_backwards
                    && j.rw.n == (1 << 32) - 8
                    && j.unsupported.is_empty()
            }),
        ),
        ("rw", "randwrite:8k", Some(|j| j.rw.n == 8)),
        ("rw", "randrw:12", Some(|j| j.rw.n == 12)),
        ("rw", "read:-8q", None),
        ("rw", "trimwrite", Some(|j| j.rw.mode == RwMode::TrimWrite)),
        ("rwmixread", "70", Some(|j| j.rwmixread == 70)),
        ("rwmixread", "101", None),
        ("rwmixwrite", "30", Some(|j| j.rwmixread == 70)),
        ("rwmixwrite", "-1", None),
        (
            "bs",
            "8k",
            Some(|j| j.bs == PerDir::all(BsSpec::fixed(8192))),
        ),
        (
            "blocksize",
            "4k,64k",
            Some(|j| j.bs.read.min == 4096 && j.bs.write.min == 65536 && j.bs.trim.min == 65536),
        ),
        (
            "bs",
            ",8k,",
            Some(|j| j.bs.read.min == 4096 && j.bs.write.min == 8192 && j.bs.trim.min == 4096),
        ),
        ("bs", "0", None),
        (
            "bs",
            "4q",
            Some(|j| j.bs.read.min == 4 && j.notes[0].contains("'q' ignored")),
        ),
        (
            "ba",
            "4k",
            Some(|j| j.blockalign == PerDir::all(Some(4096))),
        ),
        ("blockalign", "0", None),
        (
            "bsrange",
            "1k-16k",
            Some(|j| {
                j.bs.read
                    == BsSpec {
                        min: 1024,
                        max: 16384,
                        split: vec![],
                    }
            }),
        ),
        (
            "blocksize_range",
            "1k:4k,8k-16k",
            Some(|j| j.bs.read.max == 4096 && j.bs.write.min == 8192),
        ),
        // fio's leniency: what follows a number and its unit is ignored, with a note.
        (
            "bsrange",
            "512/25:1k:25:2k:25:4k/25",
            Some(|j| {
                (j.bs.read.min, j.bs.read.max, j.bs.write.max) == (512, 1024, 1024)
                    && j.notes[0].contains("'/25' after 512")
                    && j.notes[0].contains("':25:2k:25:4k/25' after 1024")
            }),
        ),
        (
            "bs",
            "65536)",
            Some(|j| j.bs.read.min == 65536 && j.notes[0].contains("')' ignored")),
        ),
        ("bs", "4kfoo", Some(|j| j.bs.read.min == 4096)),
        ("bs", "k", None),
        ("bs", ")4k", None),
        ("bsrange", "4k", None),
        (
            "bssplit",
            "4k/50):8k/x::16k/10",
            Some(|j| {
                j.bs.read.split == vec![(4096, 50), (8192, 50)]
                    && j.notes[0].contains("'4096/50:8192'")
            }),
        ),
        (
            "bssplit",
            "4k/10:64k/50:32k/40",
            Some(|j| {
                j.bs.read.split == vec![(4096, 10), (65536, 50), (32768, 40)]
                    && j.bs.read.min == 4096
                    && j.bs.read.max == 65536
            }),
        ),
        (
            "bssplit",
            "4k/50:1k/:32k/",
            Some(|j| j.bs.write.split == vec![(4096, 50), (1024, 25), (32768, 25)]),
        ),
        ("bssplit", "4k/60:8k/50", None),
        (
            "bssplit",
            "4k/50:8k/30",
            Some(|j| j.bs.read.split == vec![(4096, 50), (8192, 50)]),
        ),
        (
            "bssplit",
            "2k/50:4k/50,4k/90:8k/10",
            Some(|j| {
                j.bs.read.split.len() == 2 && j.bs.write.split == vec![(4096, 90), (8192, 10)]
            }),
        ),
        (
            "bssplit",
            "4k/x",
            Some(|j| j.bs.read.split == vec![(4096, 100)] && !j.notes.is_empty()),
        ),
        (
            "bssplit",
            "1k/:2k/:4k/",
            Some(|j| j.bs.read.split == vec![(1024, 33), (2048, 33), (4096, 34)]),
        ),
        (
            "bssplit",
            "4k/0:8k/50.7",
            Some(|j| j.bs.read.split == vec![(4096, 50), (8192, 50)]),
        ),
        ("bs_unaligned", "", Some(|j| j.bs_unaligned)),
        ("blocksize_unaligned", "1", Some(|j| j.bs_unaligned)),
        ("bs_is_seq_rand", "1", Some(|j| j.bs_is_seq_rand)),
        ("flow", "3", Some(|j| j.flow.weight == 3)),
        (
            "latency_target",
            "10ms",
            Some(|j| j.lat_target.target_ns == 10_000_000),
        ),
        ("latency_target", "10x", None),
        (
            "max_latency",
            "10ms,2s",
            Some(|j| {
                j.lat_target.max_ns.read == 10_000_000
                    && j.lat_target.max_ns.write == 2_000_000_000
                    && j.lat_target.max_ns.trim == 2_000_000_000
            }),
        ),
        (
            "max_latency",
            "250",
            Some(|j| j.lat_target.max_ns == crate::PerDir::all(250_000)),
        ),
        (
            "max_latency",
            ",1s,",
            Some(|j| j.lat_target.max_ns.read == 0 && j.lat_target.max_ns.write == 1_000_000_000),
        ),
        ("max_latency", "5x", None),
        (
            "latency_window",
            "1s",
            Some(|j| j.lat_target.window_us == 1_000_000),
        ),
        (
            "latency_percentile",
            "99.5",
            Some(|j| j.lat_target.percentile == 99.5),
        ),
        ("latency_percentile", "101", None),
        ("latency_run", "1", Some(|j| j.lat_target.run)),
        ("flow", "1001", None),
        ("flow_id", "7", Some(|j| j.flow.id == 7)),
        ("flow_sleep", "100", Some(|j| j.flow.sleep_us == 100)),
        ("flow_watermark", "2", Some(|j| !j.notes.is_empty())),
        (
            "rw",
            "randtrimwrite",
            Some(|j| j.rw.mode == RwMode::RandTrimWrite && j.rw.mode.is_random()),
        ),
        (
            "size",
            "1g",
            Some(|j| j.size == Some(SizeSpec::Bytes(1 << 30))),
        ),
        (
            "size",
            "50%",
            Some(|j| j.size == Some(SizeSpec::Percent(50.0))),
        ),
        ("size", "10zz", None),
        (
            "io_size",
            "2g",
            Some(|j| j.io_size == Some(SizeSpec::Bytes(2 << 30))),
        ),
        (
            "io_limit",
            "10%",
            Some(|j| j.io_size == Some(SizeSpec::Percent(10.0))),
        ),
        ("offset", "4k", Some(|j| j.offset == SizeSpec::Bytes(4096))),
        (
            "fileoffset",
            "25%",
            Some(|j| j.offset == SizeSpec::Percent(25.0)),
        ),
        (
            "offset_increment",
            "1m",
            Some(|j| j.offset_increment == 1 << 20),
        ),
        (
            "offset_increment",
            "10%",
            Some(|j| {
                j.offset_increment_pct == 10 && j.offset_increment == 0 && j.unsupported.is_empty()
            }),
        ),
        ("atomic", "1", Some(|j| j.atomic)),
        ("write_barrier", "4", Some(|j| j.write_barrier == 4)),
        ("write_barrier", "-1", None),
        ("offset_increment", "150%", None),
        ("offset_align", "4k", Some(|j| j.offset_align == 4096)),
        ("number_ios", "1000", Some(|j| j.number_ios == Some(1000))),
        ("number_ios", "0", Some(|j| j.number_ios.is_none())),
        (
            "ioengine",
            "libaio",
            Some(|j| j.ioengine.is(crate::Engine::Libaio)),
        ),
        (
            "ioengine",
            "threads",
            Some(|j| j.ioengine.is(crate::Engine::Guasi)),
        ),
        (
            "ioengine",
            "rbd",
            Some(|j| j.ioengine.as_str() == "rbd" && j.unsupported[0].what == "engine"),
        ),
        ("ioengine", "external:/x.so", None),
        ("ioengine", "nonsense", None),
        ("iodepth", "32", Some(|j| j.iodepth == 32)),
        ("iodepth", "0", None),
        (
            "iodepth_batch_submit",
            "8",
            Some(|j| j.iodepth_batch_submit == 8),
        ),
        ("iodepth_batch", "4", Some(|j| j.iodepth_batch_submit == 4)),
        (
            "iodepth_batch_complete_min",
            "2",
            Some(|j| j.iodepth_batch_complete_min == 2),
        ),
        (
            "iodepth_batch_complete",
            "3",
            Some(|j| j.iodepth_batch_complete_min == 3),
        ),
        (
            "iodepth_batch_complete_max",
            "16",
            Some(|j| j.iodepth_batch_complete_max == 16),
        ),
        ("iodepth_low", "4", Some(|j| j.iodepth_low == 4)),
        (
            "io_submit_mode",
            "offload",
            Some(|j| j.io_submit_mode == IoSubmitMode::Offload && j.unsupported.is_empty()),
        ),
        (
            "io_submit_mode",
            "inline",
            Some(|j| j.io_submit_mode == IoSubmitMode::Inline && j.unsupported.is_empty()),
        ),
        ("io_submit_mode", "later", None),
        ("direct", "1", Some(|j| j.direct)),
        ("direct", "2", None),
        ("buffered", "0", Some(|j| j.direct)),
        ("sync", "1", Some(|j| j.sync == SyncMode::Sync)),
        ("sync", "dsync", Some(|j| j.sync == SyncMode::Dsync)),
        ("fsync", "32", Some(|j| j.fsync == 32)),
        ("fdatasync", "8", Some(|j| j.fdatasync == 8)),
        ("end_fsync", "1", Some(|j| j.end_fsync)),
        ("end_syncfs", "1", Some(|j| j.end_syncfs)),
        ("fsync_on_close", "1", Some(|j| j.fsync_on_close)),
    ];

    #[test]
    fn io_options() {
        run(CASES);
    }
}
