//! Merging blktrace files (`merge_blktrace_file`, `merge_blktrace_scalars`,
//! `merge_blktrace_iters`, `--merge-blktrace-only`), as fio documents it (HOWTO "Merging
//! traces") and as its blktrace.c `merge_blktrace_iologs` does since the fix of its reads
//! (fio 3.33 read 8 bytes per record and failed with "iolog short read"). The files
//! `read_iolog` lists (colon-separated) are read whole; their queue events with a direction
//! (the records fio's replay uses) are interleaved by time stamp into one blktrace file, which
//! the job then replays. Each trace's time stamps are scaled by its scalar (percent), and a
//! trace repeated by its iters follows itself shifted by its length (the time stamp of its
//! last queue event, before scaling: fio scaled it twice, so repetitions overlapped). Records
//! are written without payload in this machine's byte order; a tie in time goes to the file
//! listed first.

use std::io::Write;
use std::path::Path;

use fiox_job::ReplaySpec;

use crate::replay::blktrace::{byte_order, RECORD};

/// One `struct blk_io_trace`, every field (the merged file keeps them all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record {
    pub magic: u32,
    pub sequence: u32,
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub pdu_len: u16,
}

impl Record {
    /// The record at the start of `b` (at least [`RECORD`] bytes) in the given byte order.
    pub(crate) fn decode(b: &[u8], le: bool) -> Record {
        let n = |o: usize, w: usize| {
            let mut x = 0u64;
            for i in 0..w {
                let byte = u64::from(b[if le { o + w - 1 - i } else { o + i }]);
                x = x << 8 | byte;
            }
            x
        };
        Record {
            magic: n(0, 4) as u32,
            sequence: n(4, 4) as u32,
            time: n(8, 8),
            sector: n(16, 8),
            bytes: n(24, 4) as u32,
            action: n(28, 4) as u32,
            pid: n(32, 4) as u32,
            device: n(36, 4) as u32,
            cpu: n(40, 4) as u32,
            error: n(44, 2) as u16,
            pdu_len: n(46, 2) as u16,
        }
    }

    /// The record in this machine's byte order.
    fn encode(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            b[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&self.magic.to_ne_bytes());
        put(&self.sequence.to_ne_bytes());
        put(&self.time.to_ne_bytes());
        put(&self.sector.to_ne_bytes());
        for x in [self.bytes, self.action, self.pid, self.device, self.cpu] {
            put(&x.to_ne_bytes());
        }
        put(&self.error.to_ne_bytes());
        put(&self.pdu_len.to_ne_bytes());
        b
    }
}

/// `__BLK_TA_QUEUE` and the categories that give a record a direction (fio's `t_get_ddir`).
const TA_QUEUE: u32 = 1;
const TC_DIRS: u32 = 1 << 16 | 1 << 17 | 1 << 29;

/// The queue events with a direction of one blktrace file, in file order.
fn queue_events(bytes: &[u8], name: &str) -> Result<Vec<Record>, String> {
    let le = byte_order(bytes).ok_or_else(|| format!("'{name}' is not a blktrace file"))?;
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let b = bytes.get(at..at + RECORD).ok_or_else(|| {
            format!("'{name}' ends in a partial record at byte {at} (fio: iolog short read)")
        })?;
        let r = Record::decode(b, le);
        if byte_order(&r.magic.to_le_bytes()) != Some(true) {
            return Err(format!(
                "'{name}': bad magic {:#x} in the record at byte {at}",
                r.magic
            ));
        }
        at += RECORD + usize::from(r.pdu_len);
        if r.action & 0xffff == TA_QUEUE && r.action & TC_DIRS != 0 {
            out.push(r);
        }
    }
    Ok(out)
}

/// One input trace being merged.
struct Cursor {
    events: Vec<Record>,
    scalar: u64,
    iters: u32,
    /// The raw time stamp of the last queue event: how far each repetition shifts.
    length: u64,
    iter: u32,
    next: usize,
}

impl Cursor {
    /// The next record with its merged time stamp, if any is left.
    fn peek(&self) -> Option<Record> {
        if self.iter >= self.iters {
            return None;
        }
        let mut r = *self.events.get(self.next)?;
        let t = (u128::from(r.time) + u128::from(self.iter) * u128::from(self.length))
            * u128::from(self.scalar)
            / 100;
        r.time = u64::try_from(t).unwrap_or(u64::MAX);
        r.pdu_len = 0;
        Some(r)
    }

    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.events.len() {
            self.next = 0;
            self.iter += 1;
        }
    }
}

/// The files a `read_iolog` value lists: colon-separated, `\:` for a colon in a name, empty
/// names skipped (fio's `get_next_str`; the same syntax as `filename=`).
pub(crate) fn listed_files(list: &str) -> Vec<String> {
    fiox_job::value::split_colon_list(list)
}

/// A per-file parameter list: empty gives `def` for each file, else one per file.
fn per_file(vals: &[u32], n: usize, def: u32, option: &str) -> Result<Vec<u32>, String> {
    match vals.len() {
        0 => Ok(vec![def; n]),
        l if l == n => Ok(vals.to_vec()),
        l => Err(format!(
            "{option} has {l} value(s) but read_iolog lists {n} file(s): give one per file"
        )),
    }
}

/// The merged records of the traces in `inputs` (name, bytes), in merged order.
fn merge_records(
    inputs: &[(String, Vec<u8>)],
    scalars: &[u32],
    iters: &[u32],
) -> Result<Vec<Record>, String> {
    let n = inputs.len();
    let scalars = per_file(scalars, n, 100, "merge_blktrace_scalars")?;
    let iters = per_file(iters, n, 1, "merge_blktrace_iters")?;
    let mut cursors = Vec::with_capacity(n);
    for (i, (name, bytes)) in inputs.iter().enumerate() {
        let events = queue_events(bytes, name)?;
        cursors.push(Cursor {
            length: events.last().map_or(0, |r| r.time),
            events,
            scalar: u64::from(scalars[i]),
            iters: iters[i],
            iter: 0,
            next: 0,
        });
    }
    let mut out = Vec::new();
    loop {
        let mut best: Option<(usize, Record)> = None;
        for (i, c) in cursors.iter().enumerate() {
            if let Some(r) = c.peek() {
                if best.is_none_or(|(_, b)| r.time < b.time) {
                    best = Some((i, r));
                }
            }
        }
        let Some((i, r)) = best else {
            break;
        };
        out.push(r);
        cursors[i].advance();
    }
    if out.is_empty() {
        return Err("the traces hold no queue events to merge".into());
    }
    Ok(out)
}

/// Merge the traces the job's `read_iolog` lists into its `merge_blktrace_file`; the number
/// of records written.
pub fn merge(spec: &ReplaySpec) -> Result<usize, String> {
    let (Some(list), Some(out)) = (spec.read_iolog.as_deref(), spec.merge_file.as_deref()) else {
        return Err("merge_blktrace_file needs read_iolog to list the traces to merge".into());
    };
    let mut inputs = Vec::new();
    for name in listed_files(list) {
        let bytes = std::fs::read(&name).map_err(|e| format!("read_iolog '{name}': {e}"))?;
        inputs.push((name, bytes));
    }
    if inputs.is_empty() {
        return Err("read_iolog lists no file to merge".into());
    }
    let records = merge_records(&inputs, &spec.merge_scalars, &spec.merge_iters)?;
    let mut text = Vec::with_capacity(records.len() * RECORD);
    for r in &records {
        text.extend_from_slice(&r.encode());
    }
    let write = |path: &Path| -> std::io::Result<()> {
        let mut f = crate::files::safeopen::create_output(path)?;
        f.write_all(&text)?;
        f.flush()
    };
    write(Path::new(out)).map_err(|e| format!("merge_blktrace_file '{out}': {e}"))?;
    Ok(records.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: u32 = TA_QUEUE | 1 << 20;
    const R: u32 = 1 << 16;
    const W: u32 = 1 << 17;

    fn rec(time: u64, sector: u64, action: u32, device: u32) -> Record {
        Record {
            magic: 0x6561_7407,
            sequence: 0,
            time,
            sector,
            bytes: 4096,
            action,
            pid: 1,
            device,
            cpu: 0,
            error: 0,
            pdu_len: 0,
        }
    }

    /// A file of records in the given byte order, each with a payload of `pdu` bytes.
    fn file(recs: &[Record], le: bool, pdu: u16) -> Vec<u8> {
        let mut v = Vec::new();
        for r in recs {
            let mut r = *r;
            r.pdu_len = pdu;
            let mut b = r.encode();
            if le != cfg!(target_endian = "little") {
                // Swap each field's bytes: the same record as the other byte order writes it.
                for (o, w) in [(0, 4), (4, 4), (8, 8), (16, 8), (24, 4), (28, 4)] {
                    b[o..o + w].reverse();
                }
                for o in [32, 36, 40] {
                    b[o..o + 4].reverse();
                }
                b[44..46].reverse();
                b[46..48].reverse();
            }
            v.extend_from_slice(&b);
            v.extend(std::iter::repeat_n(0xaa, usize::from(pdu)));
        }
        v
    }

    fn times(recs: &[Record]) -> Vec<(u64, u64)> {
        recs.iter().map(|r| (r.time, r.sector)).collect()
    }

    #[test]
    fn interleaves_by_time_scales_and_repeats() {
        let a = file(
            &[
                rec(100, 1, Q | R, 1),
                rec(150, 0, 8 | R, 1), // a completion: not merged
                rec(300, 2, Q | W, 1),
            ],
            true,
            0,
        );
        let b = file(&[rec(200, 10, Q | W, 2), rec(300, 11, Q | R, 2)], false, 8);
        let inputs = [("a".to_string(), a), ("b".to_string(), b)];
        let m = merge_records(&inputs, &[], &[]).unwrap();
        // The tie at 300 goes to the file listed first; devices are kept.
        assert_eq!(times(&m), [(100, 1), (200, 10), (300, 2), (300, 11)]);
        assert_eq!(m.iter().map(|r| r.device).collect::<Vec<_>>(), [1, 2, 1, 2]);
        assert!(m.iter().all(|r| r.pdu_len == 0));
        // a twice at double speed (length 300: its second pass starts at (100+300)/2).
        let m = merge_records(&inputs, &[50, 100], &[2, 1]).unwrap();
        assert_eq!(
            times(&m),
            [(50, 1), (150, 2), (200, 1), (200, 10), (300, 2), (300, 11)]
        );
    }

    #[test]
    fn bad_inputs_say_what_is_wrong() {
        let a = file(&[rec(1, 1, Q | R, 1)], true, 0);
        let two = [("a".to_string(), a.clone()), ("b".to_string(), a.clone())];
        let e = merge_records(&two, &[50], &[]).unwrap_err();
        assert!(
            e.contains("merge_blktrace_scalars has 1") && e.contains("2 file"),
            "{e}"
        );
        let e = merge_records(&[("t".into(), b"text".to_vec())], &[], &[]).unwrap_err();
        assert!(e.contains("'t' is not a blktrace"), "{e}");
        let e = merge_records(&[("s".into(), a[..40].to_vec())], &[], &[]).unwrap_err();
        assert!(e.contains("partial record"), "{e}");
        let notify = file(&[rec(1, 0, 1 | 1 << 26, 0)], true, 0);
        let e = merge_records(&[("n".into(), notify)], &[], &[]).unwrap_err();
        assert!(e.contains("no queue events"), "{e}");
    }

    #[test]
    fn lists_files_as_fio() {
        assert_eq!(listed_files("a:b\\:c::d"), ["a", "b:c", "d"]);
        assert_eq!(listed_files("one"), ["one"]);
    }
}
