//! The block tracepoints read another way, to check the BPF programs' numbers on the same run:
//! the kernel's own event tracer (ftrace) records `block_io_start` (a bio made a request, just
//! after btt's G: where the programs' queued time starts), `block_rq_issue` and
//! `block_rq_complete` of one device into a private tracefs instance's ring buffer, and the
//! text it prints afterwards is paired request by request into btt's G2D and D2C (the field
//! `q2d_mean_ns` is that G2D). This is
//! what blktrace + btt would give (blktrace reads the same tracepoints), without debugfs:
//! a kernel in lockdown (this project's machines) refuses blktrace's debugfs files. The
//! instance is made and removed through the guard; tracefs is mounted if it is not.

use crate::tracefs::Tracefs;
use crate::ExplainError;
use fiox_guard::ident::Identity;
use fiox_guard::kernel::{self, KernelFs};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const EVENTS: [&str; 3] = ["block_io_start", "block_rq_issue", "block_rq_complete"];

/// A trace of one device's block events in progress.
#[derive(Debug)]
pub struct BlockTrace {
    _tfs: Tracefs,
    inst: PathBuf,
    id: Identity,
}

/// What the trace says: requests seen from dispatch to completion, their mean Q2D (queued to
/// dispatched, for those whose queueing was seen) and D2C, and events the buffer dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BlockTimes {
    pub requests: u64,
    pub q2d_mean_ns: f64,
    pub d2c_mean_ns: f64,
    pub overrun: u64,
}

fn failed(what: &str, e: impl std::fmt::Display) -> ExplainError {
    ExplainError::Unavailable(format!("ftrace of the block layer: {what}: {e}"))
}

impl BlockTrace {
    /// Start recording the block events of device `major:minor` (a 64 MiB buffer per CPU).
    pub fn start(major: u32, minor: u32) -> Result<BlockTrace, ExplainError> {
        let tfs = Tracefs::open()?;
        let inst = tfs
            .root()
            .join("instances")
            .join(format!("fiox-blocktrace-{}", std::process::id()));
        let id = kernel::make_trace_instance(&inst)
            .map_err(|e| failed("making the instance", e))?
            .ok_or_else(|| failed("making the instance", "it exists already"))?;
        let t = BlockTrace {
            _tfs: tfs,
            inst,
            id,
        };
        // The clock of bpf_ktime_get_ns, the same on every CPU (the default is per CPU).
        t.knob("trace_clock", "mono")?;
        t.knob("buffer_size_kb", "65536")?;
        let dev = (major << 20) | minor;
        for e in EVENTS {
            t.knob(
                &format!("events/block/{e}/filter"),
                &format!("dev == {dev}"),
            )?;
            t.knob(&format!("events/block/{e}/enable"), "1")?;
        }
        Ok(t)
    }

    fn knob(&self, rel: &str, value: &str) -> Result<(), ExplainError> {
        kernel::write_knob(&self.inst.join(rel), value.as_bytes(), KernelFs::Tracefs)
            .map_err(|e| failed(&format!("writing {value:?} to {rel}"), e))
    }

    /// Stop, read the buffer and pair the events.
    pub fn finish(self) -> Result<BlockTimes, ExplainError> {
        self.knob("events/block/enable", "0")?;
        let text = std::fs::read_to_string(self.inst.join("trace"))
            .map_err(|e| failed("reading the trace", e))?;
        let mut t = parse(&text);
        t.overrun = overrun(&self.inst);
        Ok(t)
    }
}

impl Drop for BlockTrace {
    fn drop(&mut self) {
        let _ = kernel::remove_trace_instance(&self.inst, &self.id);
    }
}

/// Events the per-CPU buffers overwrote (`overrun:` in per_cpu/cpuN/stats).
fn overrun(inst: &Path) -> u64 {
    let Ok(cpus) = std::fs::read_dir(inst.join("per_cpu")) else {
        return 0;
    };
    cpus.flatten()
        .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok())
        .flat_map(|s| {
            s.lines()
                .filter_map(|l| l.strip_prefix("overrun:"))
                .filter_map(|v| v.trim().parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// One event line: (event index, time in ns, sector).
fn event(line: &str) -> Option<(usize, u64, u64)> {
    let (i, at) = EVENTS
        .iter()
        .enumerate()
        .find_map(|(i, e)| line.find(&format!(": {e}: ")).map(|at| (i, at)))?;
    let ts = line[..at].split_whitespace().last()?;
    let (s, frac) = ts.split_once('.')?;
    let frac_ns = format!("{frac:0<9}");
    let ns = s.parse::<u64>().ok()? * 1_000_000_000 + frac_ns.get(..9)?.parse::<u64>().ok()?;
    let rest: Vec<&str> = line[at..].split_whitespace().collect();
    let plus = rest.iter().position(|w| *w == "+")?;
    let sector = rest.get(plus.checked_sub(1)?)?.parse::<u64>().ok()?;
    Some((i, ns, sector))
}

/// Pair the trace's events by sector: queued -> dispatched -> completed, as btt does.
pub fn parse(text: &str) -> BlockTimes {
    let mut open: HashMap<u64, [Option<u64>; 2]> = HashMap::new();
    let (mut q2d, mut nq, mut d2c, mut nd) = (0u64, 0u64, 0u64, 0u64);
    for (ev, ns, sector) in text.lines().filter_map(event) {
        match ev {
            0 => {
                open.insert(sector, [Some(ns), None]);
            }
            1 => open.entry(sector).or_insert([None, None])[1] = Some(ns),
            _ => {
                if let Some([q, Some(d)]) = open.remove(&sector) {
                    d2c += ns.saturating_sub(d);
                    nd += 1;
                    if let Some(q) = q {
                        q2d += d.saturating_sub(q);
                        nq += 1;
                    }
                }
            }
        }
    }
    let mean = |s: u64, n: u64| if n == 0 { 0.0 } else { s as f64 / n as f64 };
    BlockTimes {
        requests: nd,
        q2d_mean_ns: mean(q2d, nq),
        d2c_mean_ns: mean(d2c, nd),
        overrun: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_requests_by_sector() {
        let t = "# tracer: nop\n\
          fiox-d-621     [001] ..... 22437.710975: block_io_start: 7,1 R 4096 () 31616 + 8 be,0,4 [fiox-d]\n\
          fiox-d-621     [001] ..... 22437.710988: block_rq_issue: 7,1 R 4096 () 31616 + 8 be,0,4 [fiox-d]\n\
          fiox-d-621     [001] ..... 22437.711000: block_io_start: 7,1 R 4096 () 8 + 8 be,0,4 [fiox-d]\n\
     ksoftirqd/1-22      [001] ..s.. 22437.711047: block_rq_complete: 7,1 R () 31616 + 8 be,0,4 [0]\n\
          fiox-d-621     [001] ..... 22437.711010: block_rq_issue: 7,1 R 4096 () 8 + 8 be,0,4 [fiox-d]\n\
     ksoftirqd/1-22      [000] ..s.. 22437.711020: block_rq_complete: 7,1 R () 8 + 8 be,0,4 [0]\n\
     ksoftirqd/1-22      [000] ..s.. 22437.711030: block_rq_complete: 7,1 R () 99 + 8 be,0,4 [0]\n";
        let b = parse(t);
        assert_eq!(b.requests, 2);
        assert_eq!(b.d2c_mean_ns, (59_000.0 + 10_000.0) / 2.0);
        assert_eq!(b.q2d_mean_ns, (13_000.0 + 10_000.0) / 2.0);
    }

    #[test]
    fn ignores_other_lines() {
        assert_eq!(parse("garbage\n: block_rq_issue: x\n").requests, 0);
    }
}
