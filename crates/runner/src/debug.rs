//! fio's `--debug=<categories>` output: lines `<category> <tid> <message>` on stdout (the
//! category padded to 8 columns, the thread id to 5, as fio's log_prevalist), written at the
//! points where fio writes them for the categories fiox has events for: process, file, io,
//! parse, verify, random, rate, steadystate, blktrace, mem, diskutil, time and helperthread
//! (the README lists which of fio's lines). `job:N` keeps job N's lines only (fio's filter).
//! The categories fiox has no event for say so when turned on (cli::DEBUG_SILENT). A category
//! off costs one relaxed load where it is checked; the I/O loop caches its flags once per job.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// fio's categories, in fio's order (bit i is category i; the parser's list, whose last
/// word `all` names no bit of its own).
pub const CATEGORIES: &[&str] = fiox_job::cli::DEBUG_CATEGORIES;

pub const PROCESS: u32 = 1 << 0;
pub const FILE: u32 = 1 << 1;
pub const IO: u32 = 1 << 2;
pub const RANDOM: u32 = 1 << 6;
pub const VERIFY: u32 = 1 << 5;
pub const PARSE: u32 = 1 << 7;
pub const MEM: u32 = 1 << 3;
pub const BLKTRACE: u32 = 1 << 4;
pub const DISKUTIL: u32 = 1 << 8;
pub const TIME: u32 = 1 << 12;
pub const RATE: u32 = 1 << 14;
pub const COMPRESS: u32 = 1 << 15;
pub const STEADYSTATE: u32 = 1 << 16;
pub const HELPERTHREAD: u32 = 1 << 17;

static MASK: AtomicU32 = AtomicU32::new(0);
/// fio's `job:N`: only job N's lines (u32::MAX: every job's).
static JOB: AtomicU32 = AtomicU32::new(u32::MAX);
/// Job N has started: from then on the other threads' lines are left out too (as fio, whose
/// filter compares pids once job N's is known).
static JOB_STARTED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The job this thread runs (u32::MAX: not a job thread).
    static THIS_JOB: std::cell::Cell<u32> = const { std::cell::Cell::new(u32::MAX) };
}

/// The categories named in a `--debug` value (`all`: every one); None for an unknown name.
pub fn mask_of(list: &str) -> Option<u32> {
    let mut m = 0;
    for c in list.split(',').map(str::trim) {
        if c.starts_with("job:") {
            continue; // a filter, no category of its own
        }
        if c == "all" {
            m = u32::MAX;
        } else {
            m |= 1 << CATEGORIES.iter().position(|k| *k == c)?;
        }
    }
    Some(m)
}

/// Turn on the categories of `mask` for this process.
pub fn enable(mask: u32) {
    MASK.store(mask, Ordering::Relaxed);
}

/// The job number of a `job:N` word in a `--debug` value.
pub fn job_of(list: &str) -> Option<u32> {
    list.split(',')
        .find_map(|c| c.trim().strip_prefix("job:")?.trim().parse().ok())
}

/// Print only job `n`'s lines (fio's `--debug=job:N`).
pub fn only_job(n: u32) {
    JOB.store(n, Ordering::Relaxed);
}

/// This thread runs job `index` (its lines pass a `job:N` filter when N is `index`).
pub fn enter_job(index: u32) {
    THIS_JOB.with(|j| j.set(index));
    if JOB.load(Ordering::Relaxed) == index {
        JOB_STARTED.store(true, Ordering::Relaxed);
    }
}

/// Whether a `job:N` filter leaves this thread's lines out.
fn filtered() -> bool {
    let only = JOB.load(Ordering::Relaxed);
    if only == u32::MAX {
        return false;
    }
    let mine = THIS_JOB.with(|j| j.get());
    mine != only && (mine != u32::MAX || JOB_STARTED.load(Ordering::Relaxed))
}

#[inline]
pub fn on(cat: u32) -> bool {
    MASK.load(Ordering::Relaxed) & cat != 0
}

/// Write one line of category `cat` (which must be on).
pub fn log(cat: u32, msg: std::fmt::Arguments<'_>) {
    if filtered() {
        return;
    }
    let name = CATEGORIES
        .get(cat.trailing_zeros() as usize)
        .copied()
        .unwrap_or("?");
    let line = format!("{name:<8} {:<5} {msg}\n", crate::sys::gettid());
    // A closed stdout loses debug lines only; the run goes on.
    let _ = std::io::stdout().lock().write_all(line.as_bytes());
}

/// `dprint!(CAT, "...", args)`: a debug line when CAT is on.
#[macro_export]
macro_rules! dprint {
    ($cat:expr, $($arg:tt)*) => {
        if $crate::debug::on($cat) {
            $crate::debug::log($cat, format_args!($($arg)*));
        }
    };
}

/// The checksum name of fio's per-header `fill <name> io_u ...` and `<name> verify io_u ...`
/// lines (None: a method whose headers fio fills and checks without a line).
pub fn verify_name(m: fiox_job::VerifyMethod) -> Option<&'static str> {
    use fiox_job::VerifyMethod as M;
    Some(match m {
        M::Md5 => "md5",
        M::Crc64 => "crc64",
        M::Crc32c => "crc32c",
        M::Crc32 => "crc32",
        M::Crc16 => "crc16",
        M::Crc7 => "crc7",
        M::Sha256 => "sha256",
        M::Sha512 => "sha512",
        M::Sha3_256 => "sha3-256",
        M::Sha3_512 => "sha3-512",
        M::Xxhash => "xxhash",
        M::Sha1 => "sha1",
        _ => return None,
    })
}

/// fio's per-header verify lines for an I/O unit of `len` bytes with headers every
/// `interval` bytes: `fill <name> io_u <id>, len <interval>` (`fill`) or
/// `<name> verify io_u <id>, len <interval>`.
pub fn verify_headers(m: fiox_job::VerifyMethod, fill: bool, id: u32, len: u64, interval: u64) {
    let Some(name) = verify_name(m) else {
        return;
    };
    let interval = if interval == 0 {
        len
    } else {
        interval.min(len)
    };
    for _ in 0..len.checked_div(interval).unwrap_or(0) {
        if fill {
            log(
                VERIFY,
                format_args!("fill {name} io_u {id:#x}, len {interval}"),
            );
        } else {
            log(
                VERIFY,
                format_args!("{name} verify io_u {id:#x}, len {interval}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_follow_fios_order() {
        assert_eq!(mask_of("process"), Some(1));
        assert_eq!(mask_of("io,file"), Some(IO | FILE));
        assert_eq!(mask_of("parse"), Some(PARSE));
        assert_eq!(mask_of("verify,random"), Some(VERIFY | RANDOM));
        assert_eq!(mask_of("rate"), Some(RATE));
        assert_eq!(mask_of("all"), Some(u32::MAX));
        assert_eq!(mask_of("disk"), None);
    }
}
