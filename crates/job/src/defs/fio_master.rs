//! Options fio added after 3.42 (fio master 3.42-135, Aug 2026): io_uring_cmd's BSG commands
//! (`cmd_type=bsg`, `cdb_len`, `read_mode`, `verify_bytchk`), mixed `write_mode` ratios,
//! libhipfile's `rocm_io`, `random_sequence_stride` and `verify_policy`; also `cmdprio_hint`
//! (fio 3.38), which the fio 3.42 table missed because fio defines it in a header macro. fiox parses and checks
//! them like the options of [`super::fio_only`] and refuses a job that uses one as "not
//! supported yet". Rows are `crates/job/tools/gen_fio_only.py`'s output on fio master (facts
//! only); `crates/job/tools/fio_option_diff.py` lists what a newer fio adds. `cmd_type` and
//! `write_mode` replace the older rows of fio 3.33/3.42 because fio changed their values.

use super::fio_only::{known, HELP};
use super::{Category as C, Kind as K, OptDef, Val};
use crate::JobSpec;

/// The NVMe write commands fio's io_uring_cmd `write_mode` names.
const WRITE_MODES: &[&str] = &["write", "uncor", "zeroes", "verify", "zone_append"];

/// fio master's options that fio 3.42 did not have (or typed differently), sorted by name.
pub static OPTS: &[OptDef] = &[
    known("cdb_len", K::Choice(&["0", "10", "16", "32"]), C::Engine)
        .engines(&["io_uring", "io_uring_cmd"]),
    known("cmd_type", K::Choice(&["nvme", "bsg"]), C::Engine)
        .engines(&["io_uring", "io_uring_cmd"]),
    // fio 3.38's, defined in fio's engines/cmdprio.h macro (IOPRIO_MAX_PRIO_HINT is 1023).
    OptDef::new(
        "cmdprio_hint",
        K::Complex("int[,int]"),
        C::Engine,
        HELP,
        check_per_dir_int,
    )
    .range(0, 1023)
    .engines(&["io_uring", "io_uring_cmd", "libaio"]),
    known("random_sequence_stride", K::Bool, C::Io),
    known("read_mode", K::Choice(&["read", "prefetch"]), C::Engine)
        .engines(&["io_uring", "io_uring_cmd"]),
    known("rocm_io", K::Choice(&["hipfile", "posix"]), C::Engine).engines(&["libhipfile"]),
    known("verify_bytchk", K::Choice(&["0", "1", "3"]), C::Engine)
        .engines(&["io_uring", "io_uring_cmd"]),
    OptDef::new(
        "verify_policy",
        K::Complex("completed|fsynced[,...]"),
        C::Io,
        HELP,
        check_verify_policy,
    ),
    OptDef::new(
        "write_mode",
        K::Complex("mode or mode/pct:mode/pct..."),
        C::Engine,
        HELP,
        check_write_mode,
    )
    .engines(&["io_uring", "io_uring_cmd"]),
];

/// A per-direction integer (`read[,write]`), each in the option's range.
fn check_per_dir_int(_: &mut JobSpec, v: &Val) -> Result<(), String> {
    let parts: Vec<&str> = v.raw.split(',').collect();
    if parts.len() > 2 {
        return Err(format!(
            "at most 2 values (read,write), found {}",
            parts.len()
        ));
    }
    for raw in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        Val {
            raw,
            kb_base: v.kb_base,
            def: v.def,
        }
        .int()?;
    }
    Ok(())
}

/// The words fio's `verify_policy` accepts.
const VERIFY_POLICIES: &[&str] = &["completed", "fsynced"];

/// fio's `verify_policy` is a multi-word option: comma-separated words, each a known policy.
fn check_verify_policy(_: &mut JobSpec, v: &Val) -> Result<(), String> {
    for w in v.raw.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if !VERIFY_POLICIES.contains(&w.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "'{w}' is not a verify policy (one of {})",
                VERIFY_POLICIES.join(", ")
            ));
        }
    }
    Ok(())
}

/// fio's `write_mode`: one of [`WRITE_MODES`], or at least two `mode/pct` entries separated
/// by `:` whose percentages (a blank one shares the rest) add up to at most 100.
fn check_write_mode(_: &mut JobSpec, v: &Val) -> Result<(), String> {
    let raw = v.raw.trim();
    let mode = |m: &str| {
        WRITE_MODES.contains(&m).then_some(()).ok_or_else(|| {
            format!(
                "'{m}' is not a write mode (one of {})",
                WRITE_MODES.join(", ")
            )
        })
    };
    if !raw.contains(':') {
        return mode(raw);
    }
    let entries: Vec<&str> = raw.split(':').collect();
    if entries.len() > WRITE_MODES.len() {
        return Err(format!(
            "at most {} mode/pct entries are allowed (found {})",
            WRITE_MODES.len(),
            entries.len()
        ));
    }
    let mut total = 0u64;
    for e in entries {
        let (m, pct) = e
            .split_once('/')
            .ok_or_else(|| format!("entry '{e}' needs a '/' (mode/pct, pct may be blank)"))?;
        mode(m.trim())?;
        if !pct.trim().is_empty() {
            total += pct
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("'{pct}' in '{e}' is not a percentage (0..100, or blank)"))?;
        }
    }
    if total > 100 {
        return Err(format!("the percentages add up to {total}, above 100"));
    }
    Ok(())
}
