//! `--explain`: where each I/O's latency went, measured by the kernel while fiox runs. BPF
//! programs on tracepoints (raw syscall, sched and block ones at BTF offsets; no kprobes) keep, per
//! thread of this process, the time inside submitting syscalls on and off CPU, the block
//! layer's queued (Q->D) and device (D->C) time of the requests those syscalls made, merges,
//! splits and off-CPU waits, and timestamp sums from which completion->reaped follows; all
//! aggregated in maps (no per-event stream) and read once at the end. The programs are
//! hand-assembled (asm.rs, progs.rs) and loaded with bpf(2) (sys.rs): nothing to build.
//! [`Tracer::start`] before the jobs, [`Tracer::finish`] after; [`phases`] turns a job's
//! record into phases whose means add up to its mean latency. [`Tracer::start_with`] without
//! the syscall hooks: the job threads mark their own calls instead ([`marks`]).
//! [`Tracer::start_sampled`] attaches the frequent programs in windows (`window`): the
//! report then says how much of the run was traced and divides by the I/Os seen.

mod asm;
mod btf;
#[doc(hidden)]
pub mod floor;
pub mod ftrace;
mod layout;
pub mod marks;
pub mod phases;
mod progs;
mod sys;
mod tracefs;
mod window;

use layout::{C_OPEN, C_WORDS, WORDS};
use progs::Maps;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};

pub use phases::{explain_job, helpers_of, text_block, Handoff, JobInput};
pub use window::{unshare_files, Coverage, Sampling};

/// Why `--explain` could not trace.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// The kernel or the permissions do not allow it: the run goes on without phases.
    #[error("{0}")]
    Unavailable(String),
    /// A program the kernel's verifier refused (a bug in fiox: please report it).
    #[error("BPF program {0}")]
    Program(String),
}

/// Tracing in progress: the maps, the programs and their attachments (the rare programs'
/// here, the frequent ones' in the windows' `window::Sampler`).
#[derive(Debug)]
pub struct Tracer {
    state: OwnedFd,
    _reqs: OwnedFd,
    _workers: OwnedFd,
    _ctl: OwnedFd,
    ctl: window::Ctl,
    _progs: Vec<OwnedFd>,
    links: Vec<OwnedFd>,
    sampler: window::Sampler,
    hooked: bool,
}

/// One thread's record, as the programs left it.
#[derive(Debug, Clone)]
pub struct Record(pub(crate) Vec<u64>);

fn unavailable(what: &str, e: std::io::Error) -> ExplainError {
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => {
            " (tracing needs root, or CAP_BPF and CAP_PERFMON)"
        }
        _ => "",
    };
    ExplainError::Unavailable(format!("{what} failed: {e}{hint}"))
}

/// The tracepoints' ids and formats, read while tracefs is mounted. Another fiox may unmount
/// a tracefs it mounted while this one reads it (each mounts it only for this moment), so a
/// failed read is retried with tracefs opened (and if need be mounted) again.
fn read_events(names: &[(&str, &str)]) -> Result<Vec<tracefs::Event>, ExplainError> {
    let mut last = None;
    for _ in 0..5 {
        let tfs = tracefs::Tracefs::open()?;
        let got: Result<Vec<_>, _> = names.iter().map(|(g, n)| tfs.event(g, n)).collect();
        tfs.close();
        match got {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| ExplainError::Unavailable("tracefs could not be read".into())))
}

impl Tracer {
    /// Load and attach the programs, filtering on this process's threads, with the syscall
    /// hooks: every thread's I/O syscalls are seen, marked or not.
    pub fn start() -> Result<Tracer, ExplainError> {
        Tracer::start_with(true)
    }

    /// As [`Tracer::start`]; `syscall_hooks` false: no programs on raw_syscalls sys_enter and
    /// sys_exit (they put every syscall of the machine through the kernel's slow path), the
    /// traced threads mark their own I/O calls instead ([`marks::this_thread`]); a thread that
    /// does not mark has no submission or reap phases then.
    pub fn start_with(syscall_hooks: bool) -> Result<Tracer, ExplainError> {
        Tracer::start_sampled(syscall_hooks, Sampling::Full)
    }

    /// As [`Tracer::start_with`], the frequent programs attached as `sampling` says (the
    /// first window opens now).
    pub fn start_sampled(syscall_hooks: bool, sampling: Sampling) -> Result<Tracer, ExplainError> {
        let mk = |kind, key, value, n| {
            sys::map_create(kind, key, value, n).map_err(|e| unavailable("creating a BPF map", e))
        };
        let vsize = (WORDS * 8) as u32;
        let state = sys::map_create_flags(
            sys::BPF_MAP_TYPE_ARRAY,
            4,
            vsize,
            layout::T_SLOTS,
            sys::BPF_F_MMAPABLE,
        )
        .map_err(|e| unavailable("creating a BPF map", e))?;
        let records = if syscall_hooks {
            None
        } else {
            Some(
                sys::map_mmap(&state, WORDS * layout::T_SLOTS as usize)
                    .map_err(|e| unavailable("mapping the threads' records", e))?,
            )
        };
        let reqs = mk(
            sys::BPF_MAP_TYPE_ARRAY,
            4,
            (layout::R_WORDS * 8) as u32,
            layout::R_SLOTS,
        )?;
        let workers = mk(
            sys::BPF_MAP_TYPE_ARRAY,
            4,
            (layout::K_WORDS * 8) as u32,
            layout::K_SLOTS,
        )?;
        let ctl_map = sys::map_create_flags(
            sys::BPF_MAP_TYPE_ARRAY,
            4,
            (C_WORDS * 8) as u32,
            1,
            sys::BPF_F_MMAPABLE,
        )
        .map_err(|e| unavailable("creating a BPF map", e))?;
        let ctl = window::Ctl(
            sys::map_mmap(&ctl_map, C_WORDS)
                .map_err(|e| unavailable("mapping the window words", e))?,
        );
        let m = Maps {
            state: state.as_raw_fd(),
            reqs: reqs.as_raw_fd(),
            workers: workers.as_raw_fd(),
            ctl: ctl_map.as_raw_fd(),
        };
        let tgid = sys::getpid();
        let mut progs = Vec::new();
        let mut links = Vec::new();
        let mut hooks = Vec::new();
        type Build<'a> = Box<dyn Fn(&tracefs::Event) -> Result<Vec<asm::Insn>, ExplainError> + 'a>;
        // Rare events (merges, splits): classic tracepoints, their record's rwbs read.
        let points: Vec<(&str, &str, Build)> = vec![
            (
                "block",
                "block_bio_backmerge",
                Box::new(|e| progs::merge_or_split(e, &m, tgid, layout::D_MERGES)),
            ),
            (
                "block",
                "block_bio_frontmerge",
                Box::new(|e| progs::merge_or_split(e, &m, tgid, layout::D_MERGES)),
            ),
            (
                "block",
                "block_split",
                Box::new(|e| progs::merge_or_split(e, &m, tgid, layout::D_SPLITS)),
            ),
        ];
        // The frequent ones (every syscall, context switch and request of the machine): raw
        // tracepoints, which build no record; what they read of the kernel's structures is
        // at the offsets its BTF gives. Those that read through their arguments' pointers
        // (a task's pid and CPU time, a request's flags) are BTF-typed (tp_btf): the verifier
        // knows the types and lets them load the fields directly, where a plain raw
        // tracepoint program pays a bpf_probe_read_kernel call per field.
        let k = progs::Kernel::read()?;
        let mut raw: Vec<(&'static str, Vec<asm::Insn>)> = Vec::new();
        if syscall_hooks {
            raw.push(("sys_enter", progs::sys_enter(&m, &k, tgid)?));
            raw.push(("sys_exit", progs::sys_exit(&m, tgid)?));
        }
        raw.extend([
            ("sched_switch", progs::sched_switch(&m, &k)?),
            ("sched_waking", progs::sched_waking(&m, &k, tgid)?),
            ("task_newtask", progs::task_newtask(&m, &k, tgid)?),
            ("block_io_start", progs::io_start(&m, &k, tgid)?),
            ("block_rq_issue", progs::rq_issue(&m)?),
            ("block_rq_complete", progs::rq_complete(&m)?),
        ]);
        // Thread discovery is never sampled: a thread created while a window is closed must
        // still get its record (and a ring its address).
        let always = ["task_newtask", "io_uring_create"];
        if k.uring.is_some() {
            raw.push(("io_uring_create", progs::uring_create(&m, &k, tgid)?));
        }
        for (name, insns) in &raw {
            let btf_type = k.btf_type(name);
            let kind = match btf_type {
                Some(_) => sys::BPF_PROG_TYPE_TRACING,
                None => sys::BPF_PROG_TYPE_RAW_TRACEPOINT,
            };
            let prog = sys::prog_load(insns, name, kind, btf_type)
                .map_err(|e| ExplainError::Program(format!("{name} refused: {e}")))?;
            let tp = btf_type.is_none().then_some(*name);
            if !always.contains(name) {
                hooks.push(window::Hook { name, tp, prog });
                continue;
            }
            let link = sys::raw_tracepoint_open(tp, &prog)
                .map_err(|e| unavailable(&format!("attaching to raw tracepoint {name}"), e))?;
            progs.push(prog);
            links.push(link);
        }
        let events = read_events(&points.iter().map(|(g, n, _)| (*g, *n)).collect::<Vec<_>>())?;
        for ((group, name, build), ev) in points.iter().zip(&events) {
            let insns = build(ev)?;
            let prog = sys::prog_load(&insns, name, sys::BPF_PROG_TYPE_TRACEPOINT, None)
                .map_err(|e| ExplainError::Program(format!("{group}:{name} refused: {e}")))?;
            let link = sys::attach_tracepoint(ev.id, &prog)
                .map_err(|e| unavailable(&format!("attaching to {group}:{name}"), e))?;
            progs.push(prog);
            links.push(link);
        }
        // The first window (now), then marks: its programs are attached.
        let sampler = window::Sampler::start(ctl, hooks, sampling)?;
        marks::publish(Some(marks::Published {
            open: &ctl.0[C_OPEN],
            records,
            windows: matches!(sampling, Sampling::Windows { .. }),
        }));
        Ok(Tracer {
            state,
            _reqs: reqs,
            _workers: workers,
            _ctl: ctl_map,
            ctl,
            _progs: progs,
            links,
            sampler,
            hooked: syscall_hooks,
        })
    }

    /// How the traced threads' I/O calls are seen: "syscall hooks" (raw_syscalls sys_enter
    /// and sys_exit) or "marks" (the threads' own, [`marks`]).
    pub fn calls_seen_by(&self) -> &'static str {
        if self.hooked {
            "syscall hooks"
        } else {
            "marks"
        }
    }

    /// Detach the programs and read every thread's record by tid: the job threads' and the
    /// helper threads' they created (see [`helpers_of`]).
    pub fn finish(self) -> HashMap<u32, Record> {
        self.finish_covered().0
    }

    /// Stop the windows and detach every program (marks first: a thread still marking
    /// writes only where no one reads).
    fn stop(&mut self) -> Coverage {
        marks::publish(None);
        let c = self.sampler.stop(self.ctl);
        self.links.clear();
        c
    }

    /// As [`Tracer::finish`], with what was traced of the run.
    pub fn finish_covered(mut self) -> (HashMap<u32, Record>, Coverage) {
        let coverage = self.stop();
        let mut out = HashMap::new();
        let mut buf = vec![0u8; WORDS * 8];
        for slot in 0..layout::T_SLOTS {
            if let Ok(true) = sys::map_lookup(self.state.as_raw_fd(), &slot.to_ne_bytes(), &mut buf)
            {
                let words: Vec<u64> = buf
                    .chunks_exact(8)
                    .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or_default()))
                    .collect();
                // A slot some thread claimed (its owner's tid picks it).
                let owner = words.get(layout::S_OWNER).copied().unwrap_or(0) as u32;
                if owner != 0 && owner & (layout::T_SLOTS - 1) == slot {
                    out.insert(owner, Record(words));
                }
            }
        }
        (out, coverage)
    }
}

impl Drop for Tracer {
    /// A tracer dropped unfinished (an error, a panic) stops its window thread too.
    fn drop(&mut self) {
        self.stop();
    }
}
