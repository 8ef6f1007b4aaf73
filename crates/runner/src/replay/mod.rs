//! `read_iolog`: replaying fio's version 2 and 3 I/O logs as fio 3.33's `read_iolog` does.
//! The log names the files (`add` lines; `replay_redirect` sends everything to one file),
//! and each I/O line gives direction, offset and length; version 3 lines also carry a time
//! stamp, and the replay waits out the gaps (scaled by `replay_time_scale`, none with
//! `replay_no_stall`). `replay_scale` divides offsets, `replay_align` aligns them down.
//! As in fio: trims are skipped (fio 3.33 rejects them as a bad direction), version 3 `wait`
//! lines are ignored, version 2 `wait` lines wait until that many ms into the job.
//! blktrace binary files are read by `blktrace.rs` into the same [`Replay`].
//!
//! The job is reshaped before it runs ([`reshape`]): its files become the log's, its size
//! covers every logged I/O, its direction is read, write or rw as the log's I/Os are.
//!
//! The folder holds fio's trace formats: blktrace files read ([`blktrace`]) and merged
//! ([`blkmerge`]), and `write_iolog`'s version 3 log written ([`iolog`]).

pub(crate) mod blkmerge;
pub(crate) mod blktrace;
pub(crate) mod iolog;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use fiox_job::{BsSpec, Ddir, JobSpec, ReplaySpec, RwMode, SizeSpec};

/// What one replayed log line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Io(Ddir),
    Sync,
    Datasync,
    /// Version 2: wait until this many ms since the replay began.
    WaitUntilMs(u64),
}

/// One replayed I/O (or sync, or wait).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub act: Act,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// Microseconds to leave since the previous I/O was issued (version 3).
    pub delay_us: u64,
}

/// A parsed log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replay {
    pub files: Vec<String>,
    pub entries: Vec<Entry>,
    pub(crate) reads: bool,
    pub(crate) writes: bool,
    /// Trims replayed (blktrace discards).
    pub(crate) trims: bool,
    /// Largest length per direction (read, write, trim).
    max_len: [u32; 3],
    /// The end of the furthest I/O.
    max_end: u64,
    /// Trim lines skipped.
    pub skipped_trims: u64,
    /// blktrace: reads and writes of zero bytes, dropped as fio drops them.
    pub zero_byte_traces: u64,
    /// blktrace: the queue depth the trace shows (the job's iodepth unless it sets one).
    pub depth: Option<u32>,
    /// Things about the log the run's warnings should tell.
    pub notes: Vec<String>,
}

/// Read and parse the job's log: of several logs listed with colons, the one at the
/// job's numjobs clone index (wrapping around), as fio's `get_name_by_idx` picks it.
pub fn load(job: &JobSpec) -> Result<Replay, String> {
    let spec = &job.replay;
    let Some(list) = spec.read_iolog.as_deref() else {
        return Err("no read_iolog".into());
    };
    let names = crate::replay::blkmerge::listed_files(list);
    let Some(path) = names.get(job.clone_index as usize % names.len().max(1)) else {
        return Err(format!("read_iolog '{list}' names no file"));
    };
    let bytes = std::fs::read(path).map_err(|e| format!("read_iolog '{path}': {e}"))?;
    if crate::replay::blktrace::byte_order(&bytes).is_some() {
        return crate::replay::blktrace::parse(&bytes, spec)
            .map_err(|e| format!("read_iolog '{path}' (blktrace): {e}"));
    }
    let text = String::from_utf8_lossy(&bytes);
    parse(&text, spec).map_err(|e| format!("read_iolog '{path}': {e}"))
}

/// Parse a version 2 or 3 log.
pub fn parse(text: &str, spec: &ReplaySpec) -> Result<Replay, String> {
    let mut lines = text.lines();
    let version = match lines.next().map(str::trim_end) {
        Some(l) if l.starts_with("fio version 2 iolog") => 2,
        Some(l) if l.starts_with("fio version 3 iolog") => 3,
        _ => {
            return Err(
                "not a fio version 2 or 3 iolog (fio: version 1 is no longer supported)".into(),
            )
        }
    };
    let mut r = Replay::default();
    let mut last_t = 0u64;
    for (n, line) in lines.enumerate() {
        let mut f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let mut delay_us = 0;
        if version == 3 {
            let t: u64 = f[0]
                .parse()
                .map_err(|_| format!("line {}: '{}' is not a time stamp", n + 2, f[0]))?;
            delay_us = delay_since(last_t, t, spec);
            last_t = t;
            f.remove(0);
        }
        line_entry(&mut r, &f, delay_us, version, spec)
            .map_err(|e| format!("line {}: {e}", n + 2))?;
    }
    if !r.reads
        && !r.writes
        && !r
            .entries
            .iter()
            .any(|e| matches!(e.act, Act::WaitUntilMs(_)))
    {
        return Err("the log holds no reads or writes to replay".into());
    }
    Ok(r)
}

/// fio's `delay_since_ttime` (in the log's time unit).
pub(crate) fn delay_since(last: u64, t: u64, spec: &ReplaySpec) -> u64 {
    if last == 0 || spec.no_stall || t < last {
        return 0;
    }
    let d = t - last;
    if spec.time_scale == 100 {
        d
    } else {
        (d as f64 * 100.0 / f64::from(spec.time_scale.max(1))) as u64
    }
}

fn file_index(r: &Replay, name: &str) -> Option<u32> {
    r.files.iter().position(|f| f == name).map(|i| i as u32)
}

/// One line's fields (without the version 3 stamp).
fn line_entry(
    r: &mut Replay,
    f: &[&str],
    delay_us: u64,
    version: u32,
    spec: &ReplaySpec,
) -> Result<(), String> {
    let name = spec.redirect.as_deref().unwrap_or(f[0]);
    match f.len() {
        2 => {
            // add / open / close: only `add` matters (fiox opens the files itself).
            match f[1] {
                "add" if file_index(r, name).is_none() => r.files.push(name.to_string()),
                "add" | "open" | "close" => {}
                other => return Err(format!("unknown file action '{other}'")),
            }
            Ok(())
        }
        4 => io_entry(r, name, f, delay_us, version, spec),
        _ => Err(format!("cannot read '{}'", f.join(" "))),
    }
}

fn io_entry(
    r: &mut Replay,
    name: &str,
    f: &[&str],
    delay_us: u64,
    version: u32,
    spec: &ReplaySpec,
) -> Result<(), String> {
    let num = |s: &str| -> Result<u64, String> {
        s.parse().map_err(|_| format!("'{s}' is not a number"))
    };
    let (offset, len) = (num(f[2])?, num(f[3])?);
    let act = match f[1] {
        "read" => Act::Io(Ddir::Read),
        "write" => Act::Io(Ddir::Write),
        "sync" => Act::Sync,
        "datasync" => Act::Datasync,
        "trim" => {
            r.skipped_trims += 1;
            return Ok(());
        }
        // fio ignores `wait` in version 3 logs; replay_no_stall drops version 2 waits.
        "wait" if version == 3 || spec.no_stall => return Ok(()),
        "wait" => Act::WaitUntilMs(offset),
        other => return Err(format!("unknown action '{other}'")),
    };
    let file = match act {
        Act::WaitUntilMs(_) => 0,
        _ => file_index(r, name)
            .ok_or_else(|| format!("I/O on '{name}', which no `add` line named"))?,
    };
    let len = u32::try_from(len).map_err(|_| format!("length {len} is too large"))?;
    push_io(r, act, file, offset, len, delay_us, spec);
    Ok(())
}

/// Add an entry, its offset scaled by `replay_scale` and aligned down to `replay_align`.
pub(crate) fn push_io(
    r: &mut Replay,
    act: Act,
    file: u32,
    offset: u64,
    len: u32,
    delay_us: u64,
    spec: &ReplaySpec,
) {
    let mut offset = if spec.scale > 1 {
        offset / spec.scale
    } else {
        offset
    };
    if spec.align > 0 {
        offset -= offset % spec.align;
    }
    if let Act::Io(d) = act {
        let i = d.index();
        r.max_len[i] = r.max_len[i].max(len);
        r.max_end = r.max_end.max(offset.saturating_add(u64::from(len)));
        r.reads |= d == Ddir::Read;
        r.writes |= d == Ddir::Write;
        r.trims |= d == Ddir::Trim;
    }
    r.entries.push(Entry {
        act,
        file,
        offset,
        len,
        delay_us,
    });
}

/// The job as the log makes it: the log's files, a size covering every I/O, read/write/rw
/// as the log's I/Os are, buffers as large as its largest I/O.
pub fn reshape(job: &JobSpec, r: &Replay) -> JobSpec {
    let mut j = job.clone();
    j.files.filenames = r.files.clone();
    j.files.nrfiles = r.files.len().max(1) as u32;
    j.files.filesize = None;
    let per_file = r.max_end.max(1);
    j.size = Some(SizeSpec::Bytes(
        per_file.saturating_mul(u64::from(j.files.nrfiles)),
    ));
    j.io_size = None;
    j.rw.mode = match (r.reads, r.writes, r.trims) {
        (true, false, false) => RwMode::Read,
        (false, true, false) => RwMode::Write,
        (false, false, true) => RwMode::Trim,
        (false, true, true) => RwMode::TrimWrite,
        _ => RwMode::ReadWrite,
    };
    j.rw.n = 0;
    if let (Some(d), false) = (r.depth, j.iodepth_given) {
        j.iodepth = d;
    }
    for (d, len) in [
        (Ddir::Read, r.max_len[0]),
        (Ddir::Write, r.max_len[1]),
        (Ddir::Trim, r.max_len[2]),
    ] {
        if len > 0 {
            let mut b = BsSpec::fixed(u64::from(len));
            b.min = b.min.min(j.bs.get(d).min);
            *j.bs.get_mut(d) = b;
        }
    }
    j
}

/// The entries still to replay, and the clock of the last issue.
pub struct ReplayQueue {
    entries: VecDeque<Entry>,
    start: Instant,
    last_issue: Option<Instant>,
}

impl ReplayQueue {
    pub fn new(r: Replay) -> ReplayQueue {
        ReplayQueue {
            entries: r.entries.into(),
            start: Instant::now(),
            last_issue: None,
        }
    }

    pub fn pop(&mut self) -> Option<Entry> {
        self.entries.pop_front()
    }

    /// Put back an entry that could not be issued yet.
    pub fn push_front(&mut self, e: Entry) {
        self.entries.push_front(e);
    }

    /// When `e` may be issued: after its delay since the last issue, or at its wait time.
    pub fn due(&self, e: &Entry) -> Option<Instant> {
        match e.act {
            Act::WaitUntilMs(ms) => Some(self.start + Duration::from_millis(ms)),
            _ if e.delay_us == 0 => None,
            _ => self
                .last_issue
                .map(|t| t + Duration::from_micros(e.delay_us)),
        }
    }

    /// An I/O was issued now.
    pub fn issued(&mut self) {
        self.last_issue = Some(Instant::now());
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ReplaySpec {
        ReplaySpec::default()
    }

    #[test]
    fn version_3_with_delays_scale_and_align() {
        let log = "fio version 3 iolog\n1 a add\n2 b add\n10 a open\n100 a read 8192 4096\n\
                   600 b write 12288 512\n700 a trim 0 4096\n900 a sync 0 0\n1000 a close\n";
        let r = parse(log, &spec()).unwrap();
        assert_eq!(r.files, ["a", "b"]);
        assert_eq!(r.skipped_trims, 1);
        let e: Vec<_> = r
            .entries
            .iter()
            .map(|e| (e.act, e.file, e.offset, e.len, e.delay_us))
            .collect();
        assert_eq!(
            e,
            [
                (Act::Io(Ddir::Read), 0, 8192, 4096, 90),
                (Act::Io(Ddir::Write), 1, 12288, 512, 500),
                (Act::Sync, 0, 0, 0, 200),
            ]
        );
        let s = ReplaySpec {
            scale: 2,
            align: 4096,
            time_scale: 200,
            ..spec()
        };
        let r = parse(log, &s).unwrap();
        assert_eq!((r.entries[0].offset, r.entries[0].delay_us), (4096, 45));
        assert_eq!(r.entries[1].offset, 4096);
        let s = ReplaySpec {
            no_stall: true,
            redirect: Some("dev".into()),
            ..spec()
        };
        let r = parse(log, &s).unwrap();
        assert_eq!(r.files, ["dev"]);
        assert!(r.entries.iter().all(|e| e.delay_us == 0 && e.file == 0));
        let j = reshape(&JobSpec::default(), &r);
        assert_eq!(
            (j.rw.mode, j.size),
            (RwMode::ReadWrite, Some(SizeSpec::Bytes(12288 + 512)))
        );
    }

    /// `read_iolog=a:b`: each numjobs clone replays the log at its index, as fio.
    #[test]
    fn clones_take_their_log_from_a_list() {
        let dir = std::env::temp_dir().join(format!("fiox-replay-list-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.log"), dir.join("b.log"));
        std::fs::write(&a, "fio version 2 iolog\nfa add\nfa read 0 4096\n").unwrap();
        std::fs::write(&b, "fio version 2 iolog\nfb add\nfb read 0 4096\n").unwrap();
        let mut job = JobSpec::default();
        job.replay.read_iolog = Some(format!("{}:{}", a.display(), b.display()));
        let files = |i: u32| {
            let j = JobSpec {
                clone_index: i,
                ..job.clone()
            };
            load(&j).map(|r| r.files)
        };
        assert_eq!(files(0), Ok(vec!["fa".to_string()]));
        assert_eq!(files(1), Ok(vec!["fb".to_string()]));
        assert_eq!(files(2), Ok(vec!["fa".to_string()]));
        job.replay.read_iolog = Some(":".into());
        assert!(load(&job).unwrap_err().contains("names no file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn version_2_and_bad_logs() {
        let r = parse(
            "fio version 2 iolog\nf add\nf write 0 4096\nf wait 250 0\n",
            &spec(),
        )
        .unwrap();
        assert_eq!(r.entries[1].act, Act::WaitUntilMs(250));
        assert!(parse("1 f add\n", &spec()).is_err());
        let e = parse("fio version 2 iolog\nf read 0 4096\n", &spec()).unwrap_err();
        assert!(e.contains("no `add` line"), "{e}");
        let e = parse("fio version 3 iolog\nx f add\n", &spec()).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(parse("fio version 3 iolog\n1 f add\n", &spec()).is_err());
    }
}
