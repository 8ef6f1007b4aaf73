//! `read_iolog` and its `replay_*` options: replaying fio's version 2 and 3 I/O logs (what
//! `write_iolog` writes) and blktrace binary traces, as fio 3.33 does.

use super::{Category as C, Kind as K, OptDef};

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new("read_iolog", K::Str, C::Io, "Replay the I/O of this fio I/O log (version 2 or 3) or blktrace file", |j, v| {
        let p = v.str();
        if p.is_empty() {
            return Err("needs a file name".into());
        }
        j.replay.read_iolog = Some(p.to_string());
        Ok(())
    })
    .long("The files, directions, offsets and lengths come from the log (its `add` lines name the files); version 3 logs also give the time between I/Os, which the replay keeps. Trims in a log are skipped, as fio 3.33 skips them; `open`/`close` lines are followed only in the log written back. A blktrace binary file (one device's trace as `blkparse -d` writes it, recognised by its magic in either byte order) replays its queue events: reads, writes, discards as trims and flushes as syncs, each on the block device under /dev with the traced major:minor (or on `replay_redirect`); without `iodepth` the depth is the deepest the trace shows (at most 1024). Several logs separated by colons: each numjobs clone replays the one at its index, as fio (or, with `merge_blktrace_file`, the blktrace files are merged into one)."),
    OptDef::new("replay_no_stall", K::Bool, C::Io, "Replay as fast as possible, ignoring the log's timing", |j, v| {
        j.replay.no_stall = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("replay_redirect", K::Str, C::Io, "Replay every I/O of the log on this one file or device", |j, v| {
        let p = v.str();
        if p.is_empty() {
            return Err("needs a file or device name".into());
        }
        j.replay.redirect = Some(p.to_string());
        Ok(())
    }),
    OptDef::new("replay_scale", K::Int, C::Io, "Divide the log's offsets by this", |j, v| {
        j.replay.scale = v.u64()?;
        Ok(())
    })
    .range(0, i64::MAX)
    .def("1"),
    OptDef::new("replay_align", K::Int, C::Io, "Align the log's offsets down to this power of two", |j, v| {
        let a = v.u64()?;
        if a != 0 && !a.is_power_of_two() {
            return Err(format!("{a} is not a power of two"));
        }
        j.replay.align = a;
        Ok(())
    })
    .range(0, i64::MAX)
    .def("0"),
    OptDef::new("replay_time_scale", K::Int, C::Io, "Replay at this percentage of the log's speed", |j, v| {
        j.replay.time_scale = v.u32()?;
        Ok(())
    })
    .range(1, i64::MAX)
    .def("100")
    .long("200 replays twice as fast (half the time between I/Os), 50 half as fast."),
    OptDef::new("read_iolog_chunked", K::Bool, C::Io, "Read the read_iolog bit by bit", |j, v| {
        j.replay.chunked = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("fio reads a long log gradually with it; fiox reads the log before the run either way, and the replay is the same."),
    OptDef::new("replay_skip", K::Str, C::Io, "Do not replay these kinds of blktrace events (read,write,trim,sync)", |j, v| {
        let mut skip = 0;
        for kind in v.str().trim().split(',') {
            skip |= match kind {
                "read" => crate::ReplaySpec::SKIP_READ,
                "write" => crate::ReplaySpec::SKIP_WRITE,
                "trim" => crate::ReplaySpec::SKIP_TRIM,
                "sync" => crate::ReplaySpec::SKIP_SYNC,
                other => return Err(format!("unknown kind '{other}' (use read, write, trim, sync, separated by commas)")),
            };
        }
        j.replay.skip = skip;
        Ok(())
    })
    .long("Applies to blktrace replays only, as in fio 3.33; a list such as `write,sync`."),
    OptDef::new("merge_blktrace_file", K::Str, C::Io, "Merge the blktrace files read_iolog lists into this file, then replay it", |j, v| {
        let p = v.str();
        if p.is_empty() {
            return Err("needs a file name".into());
        }
        j.replay.merge_file = Some(p.to_string());
        Ok(())
    })
    .long("`read_iolog` lists the traces separated by colons; their queue events are interleaved by time into one blktrace file (records without payload, in this machine's byte order), which the job then replays (with `--merge-blktrace-only`, nothing runs). An existing file there is replaced only if fiox wrote it. This is what fio documents; fio 3.33's own merge fails with \"iolog short read\" (fixed in later fio)."),
    OptDef::new("merge_blktrace_scalars", K::Complex("list of numbers"), C::Io, "Percentage to scale each merged trace's time by", |j, v| {
        j.replay.merge_scalars = merge_list(v.raw)?;
        Ok(())
    })
    .long("One per file of `read_iolog`, separated by colons: 50 runs that trace twice as fast, 200 half as fast (default 100 each). Fractions are cut to whole numbers, as fio does."),
    OptDef::new("merge_blktrace_iters", K::Complex("list of numbers"), C::Io, "How many times each merged trace repeats", |j, v| {
        j.replay.merge_iters = merge_list(v.raw)?;
        Ok(())
    })
    .long("One per file of `read_iolog`, separated by colons (default 1 each): each repetition follows the last, shifted by the trace's length (the time stamp of its last queue event)."),
];

/// A colon-separated merge_blktrace_* list: positive numbers, cut to whole ones as fio casts
/// them, at most 20 (fio's list length).
fn merge_list(raw: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for p in raw.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let f = crate::value::parse_float(p)?;
        if !(1.0..=f64::from(u32::MAX)).contains(&f) {
            return Err(format!("{p} is not a positive whole number (at least 1)"));
        }
        out.push(f as u32);
    }
    if out.is_empty() || out.len() > 20 {
        return Err(format!(
            "between 1 and 20 numbers are allowed (got {})",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::testutil::*;

    pub static CASES: &[Case] = &[
        (
            "read_iolog",
            "io.log",
            Some(|j| j.replay.read_iolog.as_deref() == Some("io.log")),
        ),
        ("replay_no_stall", "1", Some(|j| j.replay.no_stall)),
        (
            "replay_redirect",
            "/dev/sdb",
            Some(|j| j.replay.redirect.as_deref() == Some("/dev/sdb")),
        ),
        ("replay_scale", "4", Some(|j| j.replay.scale == 4)),
        ("replay_align", "4096", Some(|j| j.replay.align == 4096)),
        ("replay_align", "3000", None),
        (
            "replay_time_scale",
            "200",
            Some(|j| j.replay.time_scale == 200),
        ),
        ("replay_time_scale", "0", None),
        ("read_iolog_chunked", "1", Some(|j| j.replay.chunked)),
        (
            "replay_skip",
            "write,sync",
            Some(|j| j.replay.skip == crate::ReplaySpec::SKIP_WRITE | crate::ReplaySpec::SKIP_SYNC),
        ),
        ("replay_skip", "discard", None),
        ("replay_skip", "Write", None),
        ("replay_skip", "read,", None),
        (
            "merge_blktrace_file",
            "m.bin",
            Some(|j| j.replay.merge_file.as_deref() == Some("m.bin")),
        ),
        (
            "merge_blktrace_scalars",
            "50:100.7",
            Some(|j| j.replay.merge_scalars == [50, 100]),
        ),
        (
            "merge_blktrace_iters",
            "2:1",
            Some(|j| j.replay.merge_iters == [2, 1]),
        ),
        ("merge_blktrace_iters", "0:1", None),
        ("merge_blktrace_scalars", "x", None),
    ];

    #[test]
    fn replay_options() {
        run(CASES);
    }
}
