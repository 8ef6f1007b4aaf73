//! `read_iolog` of a blktrace binary file, read as fio 3.33 reads it (blktrace.c). The file is
//! a run of 48-byte `blk_io_trace` records, each followed by `pdu_len` bytes of payload, in the
//! byte order of the machine that traced (told apart by the magic). Only queue events become
//! I/O (the others are the block layer's own doing): reads and writes as traced, discards as
//! trims, flushes as syncs; notify events and zero-byte reads/writes are dropped. Each traced
//! device (its major:minor) is found as a block device under /dev, unless `replay_redirect`
//! names the one target. Queue, merge and complete events also give the deepest queue the
//! trace saw, which becomes the job's iodepth when the job sets none.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use fiox_job::{Ddir, ReplaySpec};

use crate::replay::{delay_since, push_io, Act, Entry, Replay};

/// `BLK_IO_TRACE_MAGIC`: the top 24 bits of each record's first word.
const MAGIC: u32 = 0x6561_7400;
/// `BLK_IO_TRACE_VERSION`: the low byte of that word.
const VERSION: u32 = 7;
/// The size of `struct blk_io_trace`.
pub(crate) const RECORD: usize = 48;

/// Category bits (`BLK_TC_*`), shifted into the action word's upper half.
const TC_READ: u32 = 1 << 16;
const TC_WRITE: u32 = 1 << 17;
const TC_FLUSH: u32 = 1 << 18;
const TC_NOTIFY: u32 = 1 << 26;
const TC_DISCARD: u32 = 1 << 29;
/// Action numbers (`__BLK_TA_*`) in the action word's lower half.
const TA_QUEUE: u32 = 1;
const TA_BACKMERGE: u32 = 2;
const TA_FRONTMERGE: u32 = 3;
const TA_COMPLETE: u32 = 8;
/// fio caps the probed depth: stacked devices may never report completions.
const MAX_DEPTH: u32 = 1024;

/// The byte order of a blktrace file, if `bytes` starts like one (fio's `is_blktrace`).
pub fn byte_order(bytes: &[u8]) -> Option<bool> {
    let w: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    if u32::from_le_bytes(w) & 0xffff_ff00 == MAGIC {
        Some(true)
    } else if u32::from_be_bytes(w) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else {
        None
    }
}

/// The fields of one record that the replay uses.
#[derive(Debug, Clone, Copy)]
struct Trace {
    magic: u32,
    time_ns: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    device: u32,
    pdu_len: u16,
}

fn record(b: &[u8], le: bool) -> Trace {
    let u32_at = |o: usize| {
        let w = [b[o], b[o + 1], b[o + 2], b[o + 3]];
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    let u64_at = |o: usize| {
        let (lo, hi) = (u64::from(u32_at(o)), u64::from(u32_at(o + 4)));
        if le {
            hi << 32 | lo
        } else {
            lo << 32 | hi
        }
    };
    let pdu = [b[46], b[47]];
    Trace {
        magic: u32_at(0),
        time_ns: u64_at(8),
        sector: u64_at(16),
        bytes: u32_at(24),
        action: u32_at(28),
        device: u32_at(36),
        pdu_len: if le {
            u16::from_le_bytes(pdu)
        } else {
            u16::from_be_bytes(pdu)
        },
    }
}

/// The direction a record's categories name (fio's `t_get_ddir`), for the depth probe.
fn ddir_of(action: u32) -> Option<usize> {
    if action & TC_READ != 0 {
        Some(0)
    } else if action & TC_WRITE != 0 {
        Some(1)
    } else if action & TC_DISCARD != 0 {
        Some(2)
    } else {
        None
    }
}

/// The deepest queue per direction: queued I/Os less merged ones, up to each completion.
#[derive(Default)]
struct Depth {
    now: [i64; 3],
    max: [i64; 3],
}

impl Depth {
    fn see(&mut self, t: &Trace) {
        let Some(d) = ddir_of(t.action) else {
            return;
        };
        match t.action & 0xffff {
            TA_QUEUE => self.now[d] += 1,
            TA_BACKMERGE | TA_FRONTMERGE => self.now[d] -= 1,
            TA_COMPLETE => {
                self.max[d] = self.max[d].max(self.now[d]);
                self.now[d] = 0;
            }
            _ => {}
        }
    }

    /// The job's depth: the deepest direction (at most 1024; a direction with I/O counts
    /// at least 1).
    fn job_depth(&self, r: &Replay) -> u32 {
        let has = [r.reads, r.writes, r.trims];
        let deepest = (0..3)
            .map(|d| match self.max[d] {
                0 if has[d] => 1,
                n => n.min(i64::from(MAX_DEPTH)),
            })
            .max()
            .unwrap_or(1);
        u32::try_from(deepest).unwrap_or(1).max(1)
    }
}

/// Parse a whole blktrace file.
pub fn parse(bytes: &[u8], spec: &ReplaySpec) -> Result<Replay, String> {
    let le = byte_order(bytes).ok_or("not a blktrace file (no blktrace magic)")?;
    let mut r = Replay::default();
    let mut devices = Devices::new(spec, Path::new("/dev"));
    let mut depth = Depth::default();
    let mut last_ns = 0u64;
    let mut at = 0usize;
    while at < bytes.len() {
        let Some(b) = bytes.get(at..at + RECORD) else {
            // fio stops at a short record, saying so; the records before it still replay.
            r.notes
                .push(format!("the trace ends in a partial record at byte {at}"));
            break;
        };
        let mut t = record(b, le);
        if t.magic & 0xffff_ff00 != MAGIC {
            return Err(format!(
                "bad magic {:#x} in the record at byte {at}",
                t.magic
            ));
        }
        if t.magic & 0xff != VERSION {
            return Err(format!(
                "blktrace version {} in the record at byte {at} (fio 3.33 reads version {VERSION})",
                t.magic & 0xff
            ));
        }
        at += RECORD + usize::from(t.pdu_len);
        if t.action & TC_NOTIFY != 0 {
            continue;
        }
        depth.see(&t);
        if t.action & 0xffff != TA_QUEUE {
            continue;
        }
        let delay_us = delay_since(last_ns, t.time_ns, spec) / 1000;
        last_ns = t.time_ns;
        if spec.align > 0 {
            // fio rounds the length up to replay_align (and the offset down, below).
            let a = spec.align;
            t.bytes = u32::try_from(u64::from(t.bytes).div_ceil(a) * a).unwrap_or(u32::MAX);
        }
        queue_event(&mut r, &mut devices, &t, delay_us, spec)?;
    }
    if r.entries.is_empty() {
        return Err("found no I/Os in the blktrace data".into());
    }
    r.depth = Some(depth.job_depth(&r));
    Ok(r)
}

/// One queue event: a trim, a sync or a read/write, unless `replay_skip` drops its kind.
fn queue_event(
    r: &mut Replay,
    devices: &mut Devices,
    t: &Trace,
    delay_us: u64,
    spec: &ReplaySpec,
) -> Result<(), String> {
    let (act, skip) = if t.action & TC_DISCARD != 0 {
        (Act::Io(Ddir::Trim), ReplaySpec::SKIP_TRIM)
    } else if t.action & TC_FLUSH != 0 {
        (Act::Sync, ReplaySpec::SKIP_SYNC)
    } else if t.action & TC_WRITE != 0 {
        (Act::Io(Ddir::Write), ReplaySpec::SKIP_WRITE)
    } else {
        (Act::Io(Ddir::Read), ReplaySpec::SKIP_READ)
    };
    if spec.skip & skip != 0 {
        return Ok(());
    }
    let file = devices.file(r, t.device)?;
    if act == Act::Sync {
        r.entries.push(Entry {
            act,
            file,
            offset: 0,
            len: 0,
            delay_us,
        });
        return Ok(());
    }
    if t.bytes == 0 {
        // fio warns and drops zero-byte reads and writes (it would queue a zero-byte trim,
        // which no device takes: fiox drops those too, counted alike).
        r.zero_byte_traces += 1;
        return Ok(());
    }
    let offset = t.sector.saturating_mul(512);
    push_io(r, act, file, offset, t.bytes, delay_us, spec);
    Ok(())
}

/// fio's `--debug=blktrace` lines for the I/Os a trace stored (one per entry, as fio prints
/// them while it reads the trace; printed by the job that replays it, once).
#[cold]
pub fn debug_stored(r: &Replay) {
    use crate::debug::{log, BLKTRACE};
    for e in &r.entries {
        let (off, len, delay) = (e.offset, e.len, e.delay_us);
        match e.act {
            Act::Io(Ddir::Trim) => log(
                BLKTRACE,
                format_args!("store discard, off={off}, len={len}, delay={delay}"),
            ),
            Act::Io(d) => log(
                BLKTRACE,
                format_args!(
                    "store ddir={}, off={off}, len={len}, delay={delay}",
                    d.index()
                ),
            ),
            Act::Sync => log(BLKTRACE, format_args!("store flush delay={delay}")),
            _ => {}
        }
    }
}

/// The replay's files, by the traced device numbers they stand for.
struct Devices {
    redirect: Option<String>,
    root: PathBuf,
    /// (major, minor, file index)
    known: Vec<(u32, u32, u32)>,
}

impl Devices {
    fn new(spec: &ReplaySpec, root: &Path) -> Devices {
        Devices {
            redirect: spec.redirect.clone(),
            root: root.to_path_buf(),
            known: Vec::new(),
        }
    }

    /// The file index of a traced `dev_t` (the kernel's internal form: 12-bit major above a
    /// 20-bit minor).
    fn file(&mut self, r: &mut Replay, device: u32) -> Result<u32, String> {
        let (maj, min) = (device >> 20, device & 0xf_ffff);
        if let Some(&(_, _, i)) = self.known.iter().find(|k| (k.0, k.1) == (maj, min)) {
            return Ok(i);
        }
        let path = match &self.redirect {
            Some(p) => p.clone(),
            None => find_block_device(&self.root, maj, min)
                .ok_or_else(|| {
                    format!(
                        "the traced device {maj}:{min} is no block device under {} \
                         (set replay_redirect to replay on another device or file)",
                        self.root.display()
                    )
                })?
                .to_string_lossy()
                .into_owned(),
        };
        let i = match r.files.iter().position(|f| *f == path) {
            Some(i) => i as u32,
            None => {
                r.files.push(path);
                (r.files.len() - 1) as u32
            }
        };
        self.known.push((maj, min, i));
        Ok(i)
    }
}

/// The block device node with this major:minor under `dir` (searched depth first; links are
/// not followed, as in fio).
fn find_block_device(dir: &Path, maj: u32, min: u32) -> Option<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    for p in names {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.is_dir() {
            if let Some(found) = find_block_device(&p, maj, min) {
                return Some(found);
            }
        } else if m.file_type().is_block_device() && dev_numbers(m.rdev()) == (maj, min) {
            return Some(p);
        }
    }
    None
}

/// glibc's `major()` and `minor()` of a `st_rdev`.
fn dev_numbers(rdev: u64) -> (u32, u32) {
    let maj = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let min = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    (maj as u32, min as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One record in the given byte order.
    fn rec(le: bool, time: u64, sector: u64, bytes: u32, action: u32, device: u32) -> Vec<u8> {
        let mut v = Vec::new();
        let w32 =
            |v: &mut Vec<u8>, x: u32| v.extend(if le { x.to_le_bytes() } else { x.to_be_bytes() });
        w32(&mut v, MAGIC | VERSION);
        w32(&mut v, 0);
        for x in [time, sector] {
            v.extend(if le { x.to_le_bytes() } else { x.to_be_bytes() });
        }
        for x in [bytes, action, 0, device, 0] {
            w32(&mut v, x);
        }
        v.extend([0u8; 4]);
        v
    }

    const Q: u32 = TA_QUEUE | 1 << 20;

    fn trace(le: bool) -> Vec<u8> {
        [
            rec(le, 1000, 8, 4096, Q | TC_READ, 7 << 20 | 3),
            rec(le, 3000, 16, 8192, Q | TC_WRITE, 7 << 20 | 3),
            rec(le, 3500, 16, 8192, TA_COMPLETE | TC_WRITE, 7 << 20 | 3),
            rec(le, 4000, 0, 0, Q | TC_WRITE | TC_FLUSH, 7 << 20 | 3),
            rec(le, 5000, 64, 0, Q | TC_READ, 7 << 20 | 3),
            rec(le, 6000, 32, 4096, Q | TC_DISCARD | TC_WRITE, 7 << 20 | 3),
            rec(le, 6500, 0, 0, 1 | TC_NOTIFY, 0),
        ]
        .concat()
    }

    fn redirected() -> ReplaySpec {
        ReplaySpec {
            redirect: Some("target".into()),
            ..ReplaySpec::default()
        }
    }

    #[test]
    fn both_byte_orders_queue_events_only() {
        for le in [true, false] {
            let r = parse(&trace(le), &redirected()).unwrap();
            assert_eq!(r.files, ["target"]);
            let e: Vec<_> = r
                .entries
                .iter()
                .map(|e| (e.act, e.offset, e.len, e.delay_us))
                .collect();
            assert_eq!(
                e,
                [
                    (Act::Io(Ddir::Read), 4096, 4096, 0),
                    (Act::Io(Ddir::Write), 8192, 8192, 2),
                    (Act::Sync, 0, 0, 1),
                    // 1 us: the zero-byte read still moved the clock, as in fio.
                    (Act::Io(Ddir::Trim), 16384, 4096, 1),
                ],
                "little endian: {le}"
            );
            assert_eq!(r.zero_byte_traces, 1);
            assert_eq!(r.depth, Some(1));
        }
    }

    #[test]
    fn skip_scale_align_and_bad_input() {
        let s = ReplaySpec {
            skip: ReplaySpec::SKIP_WRITE | ReplaySpec::SKIP_SYNC | ReplaySpec::SKIP_TRIM,
            scale: 2,
            align: 4096,
            no_stall: true,
            ..redirected()
        };
        let t = [
            rec(true, 1000, 9, 1000, Q | TC_READ, 1),
            rec(true, 2000, 8, 512, Q | TC_WRITE, 1),
        ]
        .concat();
        let r = parse(&t, &s).unwrap();
        assert_eq!(r.entries.len(), 1);
        assert_eq!((r.entries[0].offset, r.entries[0].len), (0, 4096));
        let mut bad = trace(true);
        bad[0] = 6;
        let e = parse(&bad, &redirected()).unwrap_err();
        assert!(e.contains("version 6"), "{e}");
        let e = parse(&rec(true, 1, 0, 0, 1 | TC_NOTIFY, 0), &redirected()).unwrap_err();
        assert!(e.contains("no I/Os"), "{e}");
        let mut short = trace(true);
        short.truncate(RECORD + 10);
        let r = parse(&short, &redirected()).unwrap();
        assert_eq!((r.entries.len(), r.notes.len()), (1, 1));
    }

    /// Two reads in flight before a completion (a merged write does not count): depth 2,
    /// the job's iodepth unless it sets its own.
    #[test]
    fn depth_probe_sets_iodepth() {
        let t = [
            rec(true, 1, 0, 4096, Q | TC_READ, 1),
            rec(true, 2, 8, 4096, Q | TC_WRITE, 1),
            rec(true, 3, 16, 4096, TA_BACKMERGE | TC_WRITE, 1),
            rec(true, 4, 32, 4096, Q | TC_READ, 1),
            rec(true, 5, 0, 4096, TA_COMPLETE | TC_READ, 1),
            rec(true, 6, 64, 4096, Q | TC_DISCARD, 1),
        ]
        .concat();
        let r = parse(&t, &redirected()).unwrap();
        assert_eq!(r.depth, Some(2));
        let mut job = fiox_job::JobSpec::default();
        let j = crate::replay::reshape(&job, &r);
        assert_eq!((j.iodepth, j.rw.mode), (2, fiox_job::RwMode::ReadWrite));
        job.iodepth_given = true;
        assert_eq!(crate::replay::reshape(&job, &r).iodepth, 1);
    }

    #[test]
    fn devices_are_found_by_number() {
        let mut d = Devices::new(&ReplaySpec::default(), Path::new("/dev"));
        let mut r = Replay::default();
        // 1:3 is /dev/null, a character device: not a replay target.
        let e = d.file(&mut r, 1 << 20 | 3).unwrap_err();
        assert!(e.contains("1:3") && e.contains("replay_redirect"), "{e}");
        assert_eq!(dev_numbers(0x0103), (1, 3));
        // glibc's makedev(259, 300).
        assert_eq!(dev_numbers(0x11_032c), (259, 300));
    }
}
