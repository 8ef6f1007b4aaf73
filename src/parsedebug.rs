//! fio's `--debug=parse` lines for the options as read, under fio's names: each global option
//! once, then each job's own options (a numjobs clone is not parsed again), as
//! `handle_option=NAME, ptr=VALUE` (`(null)` for a bare flag), and the lines fio's option
//! callbacks add (the steady state threshold). Printed for a run and for `--parse-only`, which
//! scripts use to check how fio reads their options. Not yet fio's: its per-type
//! `__handle_option=..., type=OPT_...` and `ret=0, out=...` lines and its option-set
//! bookkeeping lines (`dup options`, `free options`).

use fiox_job::Invocation;
use fiox_runner::debug;

/// Print the parse lines of every option of `inv` (when the `parse` category is on).
pub fn print(inv: &Invocation) {
    if !debug::on(debug::PARSE) {
        return;
    }
    let jobs = inv.jobs.iter().filter(|j| j.clone_index == 0);
    let own = jobs.flat_map(|j| j.own_options.iter());
    for (name, value) in inv.global_options.iter().chain(own) {
        for line in lines(name, value) {
            debug::log(debug::PARSE, format_args!("{line}"));
        }
    }
}

/// fio's lines for option `name` (fio's name) given as `value` (empty when bare).
fn lines(name: &str, value: &str) -> Vec<String> {
    let ptr = if value.is_empty() { "(null)" } else { value };
    let mut out = vec![format!("handle_option={name}, ptr={ptr}")];
    if name == "steadystate" {
        out.extend(steadystate_line(value));
    }
    out
}

/// fio's line for the threshold of `steadystate=CRITERION:LIMIT`: a percentage, an IOPS
/// figure, or a bandwidth in bytes.
fn steadystate_line(value: &str) -> Option<String> {
    let (criterion, limit) = value.split_once(':')?;
    if let Some((pct, _)) = limit.split_once('%') {
        let v: f64 = pct.trim().parse().ok()?;
        return Some(format!("set steady state threshold to {v:.6}%"));
    }
    if criterion.trim().to_ascii_lowercase().starts_with("iops") {
        let v: f64 = limit.trim().parse().ok()?;
        return Some(format!("set steady state IOPS threshold to {v:.6}"));
    }
    let v = fiox_job::value::parse_size(limit, 1024).ok()?;
    Some(format!("set steady state BW threshold to {v}"))
}

#[cfg(test)]
mod tests {
    use super::lines;

    #[test]
    fn fios_lines_for_an_option_and_the_steady_state_threshold() {
        assert_eq!(lines("bs", "4k"), ["handle_option=bs, ptr=4k"]);
        assert_eq!(
            lines("time_based", ""),
            ["handle_option=time_based, ptr=(null)"]
        );
        assert_eq!(
            lines("steadystate", "iops:10%")[1],
            "set steady state threshold to 10.000000%"
        );
        assert_eq!(
            lines("steadystate", "iops_slope:20")[1],
            "set steady state IOPS threshold to 20.000000"
        );
        assert_eq!(
            lines("steadystate", "bw:1m")[1],
            "set steady state BW threshold to 1048576"
        );
    }
}
