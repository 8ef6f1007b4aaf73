//! Job description, grouping, run time, processes/CPUs and error handling options.

use super::{Category as C, Kind as K, OptDef};
use crate::value;
use crate::{ContinueOnError, CpusAllowedPolicy, ExitWhat};

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new("exec_prerun", K::Str, C::General, "Shell command run before the job's I/O", |j, v| {
        j.exec_prerun = Some(v.str().to_string()).filter(|s| !s.is_empty());
        Ok(())
    })
    .long("As fio: run through the shell as `CMD > JOB.prerun.txt 2>&1` after the files are set up; when it fails, the job does no I/O."),
    OptDef::new("exec_postrun", K::Str, C::General, "Shell command run after the job's I/O", |j, v| {
        j.exec_postrun = Some(v.str().to_string()).filter(|s| !s.is_empty());
        Ok(())
    })
    .long("As fio: run through the shell as `CMD > JOB.postrun.txt 2>&1` when the job ends."),
    OptDef::new("clocksource", K::Choice(&["gettimeofday", "clock_gettime", "cpu"]), C::General, "Clock for I/O times", |j, v| {
        j.clocksource = Some(match v.choice()?.as_str() {
            "gettimeofday" => crate::ClockSource::Gettimeofday,
            "clock_gettime" => crate::ClockSource::ClockGettime,
            _ => crate::ClockSource::Cpu,
        });
        Ok(())
    })
    .long("Unset, fiox does as fio: the CPU's TSC when the kernel trusts it (clocksource tsc), else clock_gettime. `cpu` asks for the TSC (clock_gettime where it cannot be used: not x86_64, or the kernel does not trust it), `clock_gettime` for CLOCK_MONOTONIC, `gettimeofday` for the wall clock at microsecond resolution."),
    OptDef::new("description", K::Str, C::General, "Text description of the job", |j, v| {
        j.description = Some(v.str().to_string());
        Ok(())
    })
    .long("Free text printed with the job's results; it has no effect on the workload."),
    OptDef::new("comm", K::Str, C::General, "Name the job's thread takes (fio 3.42)", |j, v| {
        j.comm = Some(v.str().to_string());
        Ok(())
    })
    .long("fio 3.42's option: the job's thread sets its name (prctl PR_SET_NAME, what ps and top show; the kernel keeps the first 15 bytes) when it starts."),
    OptDef::new("profile", K::Str, C::General, "No effect in a job (as in fio); profiles run from --profile", |j, v| {
        // fio 3.33 stores profile= from a job file and never reads it; the job runs as written.
        j.notes.push(format!(
            "profile={} has no effect in a job (fio ignores it too); run a profile with --profile={} before any --name=",
            v.str(),
            v.str()
        ));
        Ok(())
    })
    .long("fio 3.33 stores it and runs the job as written; so does fiox, with a note. A profile runs from the command line: `--profile=tiobench`, `--profile=act`."),
    OptDef::new("threads", K::Int, C::General, "tiobench's thread count: no effect in a job (as in fio)", |j, v| {
        // fio registers its tiobench profile's options for every job; outside the profile
        // they land in a struct nothing reads, so the job runs as written.
        let n = v.int()?;
        j.notes.push(format!(
            "threads={n} has no effect outside --profile=tiobench (fio ignores it too); did you mean `thread` or `numjobs`?"
        ));
        Ok(())
    })
    .long("An option of fio's tiobench profile (`--profile=tiobench --threads=N` gives each phase N jobs). In a job it does nothing, in fio as in fiox (which notes it); `thread` runs jobs as threads and `numjobs` clones a job."),
    OptDef::new("name", K::Str, C::General, "Name of this job", |j, v| {
        if v.str().is_empty() {
            return Err("a job name cannot be empty".into());
        }
        if v.str().starts_with("global") {
            return Err("a job name cannot start with 'global' (that name introduces global options)".into());
        }
        j.name = v.str().to_string();
        Ok(())
    })
    .long("On the command line `--name=NAME` starts a new job (`--name=global` starts global options); in a job file it renames the section's job."),
    OptDef::new("wait_for", K::Str, C::General, "Name of the job this one waits for before starting", |j, v| {
        j.wait_for = Some(v.str().to_string());
        Ok(())
    })
    .long("The job starts only after the named job (which must appear earlier) has finished."),
    OptDef::new("stonewall", K::Bool, C::General, "Wait for all previous jobs to finish before starting; starts a new group", |j, v| {
        j.stonewall = v.bool()?;
        Ok(())
    })
    .alias(&["wait_for_previous"])
    .long("Inserts a barrier: this job starts when every job before it has exited, and it begins a new reporting group."),
    OptDef::new("new_group", K::Bool, C::General, "Start a new reporting group with this job", |j, v| {
        j.new_group = v.bool()?;
        Ok(())
    })
    .long("Without a barrier, begins a new reporting group so `group_reporting` aggregates separately."),
    OptDef::new("numjobs", K::Int, C::General, "Run this many clones of the job", |j, v| {
        j.numjobs = v.u32()?;
        Ok(())
    })
    .def("1")
    .range(1, super::MAX_JOBS as i64)
    .long("Each clone is an independent job with the same options, named like the original; clones share a group."),
    OptDef::new("group_reporting", K::Bool, C::Stats, "Report each group as a whole instead of per job", |j, v| {
        j.stats.group_reporting = v.bool()?;
        Ok(())
    })
    .long("Aggregates the statistics of all jobs in a reporting group into one report."),
    OptDef::new("unified_rw_reporting", K::Choice(&["none", "mixed", "both", "0", "1", "2"]), C::Stats, "Report reads, writes and trims as one mixed direction", |j, v| {
        let word = v.choice()?;
        j.stats.unified_mixed = matches!(word.as_str(), "mixed" | "1");
        j.stats.unified_both = matches!(word.as_str(), "both" | "2");
        Ok(())
    })
    .def("none")
    .long("`mixed` (or 1): one `mixed` line per job and a `MIXED` group line (JSON key `mixed`) with the sums of all directions, as fio; `none` (or 0) reports each direction; `both` (or 2) reports each direction and then the `mixed` sums (normal `mixed:` block and `MIXED:` group line, JSON `mixed` object, terse fields after trim), as fio."),
    OptDef::new("kb_base", K::Choice(&["1024", "1000"]), C::General, "Base of k/m/g: 1024 (k=KiB, fio's default) or 1000", |j, v| {
        j.kb_base = match v.choice()?.as_str() {
            "1000" => 1000,
            _ => 1024,
        };
        Ok(())
    })
    .def("1024")
    .long("With 1024, `k` means 1024 and `KiB` means 1000 (fio's inverted convention); with 1000 the meanings swap. It applies to every size in the job, wherever it is written."),
    OptDef::new("unit_base", K::Choice(&["0", "1", "8"]), C::General, "Report in bytes (1), bits (8) or auto (0)", |j, v| {
        j.unit_base = v.choice()?.parse().map_err(|_| "unit_base must be 0, 1 or 8".to_string())?;
        Ok(())
    })
    .def("0")
    .long("Unit used for bandwidth in the normal output: 8 reports bits per second, 1 bytes, 0 lets fiox pick bytes."),
    OptDef::new("loops", K::Int, C::Timing, "Run the whole workload this many times", |j, v| {
        j.timing.loops = v.u32()?;
        Ok(())
    })
    .def("1")
    .range(0, u32::MAX as i64)
    .long("0 means once, as in fio."),
    OptDef::new("startdelay", K::Time("s"), C::Timing, "Wait this long before starting (range a-b picks at random)", |j, v| {
        let (lo, hi) = value::split_range(v.raw);
        let lo = value::parse_time_us(lo, 1_000_000)?;
        let hi = value::parse_time_us(hi, 1_000_000)?;
        if hi < lo {
            return Err(format!("range end {hi}us is below its start {lo}us"));
        }
        j.timing.startdelay = (dur(lo), dur(hi));
        Ok(())
    })
    .def("0")
    .long("Delays the job's start; `a-b` picks a delay uniformly in the range, seeded like other random choices."),
    OptDef::new("runtime", K::Time("s"), C::Timing, "Stop the job after this long", |j, v| {
        let us = v.time_us()?;
        j.timing.runtime = if us == 0 { None } else { Some(dur(us)) };
        Ok(())
    })
    .alias(&["timeout"])
    .def("0")
    .long("Caps the job's run time (excluding ramp_time). 0 means no cap. Without time_based, the job may still end earlier when its size is done."),
    OptDef::new("time_based", K::Bool, C::Timing, "Keep running until runtime expires, repeating the workload", |j, v| {
        j.timing.time_based = v.bool()?;
        Ok(())
    }),
    OptDef::new("ramp_time", K::Time("s"), C::Timing, "Run this long before recording statistics", |j, v| {
        let us = v.time_us()?;
        j.timing.ramp_time = if us == 0 { None } else { Some(dur(us)) };
        Ok(())
    })
    .long("I/O runs during the ramp but statistics are reset when it ends."),
    OptDef::new("ramp_size", K::Size, C::Timing, "Transfer this much before recording statistics (fio 3.42)", |j, v| {
        j.timing.ramp_size = Some(v.size()?);
        Ok(())
    })
    .range(1, i64::MAX)
    .long("fio 3.42's option: I/O runs until the job has read, written and trimmed this many bytes (with group_reporting, its whole reporting group together), then statistics are reset as at the end of ramp_time; runtime counts from there. Not with ramp_time, and the same in every job of a reporting group (fio refuses the job otherwise, EINVAL)."),
    OptDef::new("stonewall_ranks", K::Bool, C::Timing, "Under MPI, stop every rank when the first finishes (fiox)", |j, v| {
        j.timing.stonewall_ranks = v.bool()?;
        Ok(())
    })
    .long("fiox, for runs under mpirun/srun (built with the mpi feature): when the first rank's jobs of a stonewall group have done their fixed amount of I/O, every rank stops, as IOR's stonewalling does. The report gives the stonewalled rate and, per rank, the time it would have needed to finish (`fiox.mpi.stonewall` in JSON). In a run of one process it changes nothing: that process is the first to finish."),
    OptDef::new("thread", K::Bool, C::Process, "Run jobs as threads instead of processes", |j, v| {
        j.thread = v.bool()?;
        Ok(())
    })
    .long("fiox runs every job on a thread. Without this option a job of the sync family (sync, psync, vsync, pvsync, pvsync2, submitting inline and not writing a block device) gets its own file table, as fio's job process has, so the kernel skips a reference count in every read/write call; with it the jobs share the process's table, as fio's threads do."),
    OptDef::new("gtod_cpu", K::Int, C::Process, "A thread on this CPU keeps the time for every job", |j, v| {
        j.cpu.gtod_cpu = Some(v.u32()?);
        Ok(())
    })
    .long("As fio: while the run lasts, a thread pinned to this CPU reads the wall clock (µs) into a shared word and every job's latencies are taken from it (so in whole microseconds); a job naming the CPU leaves it out of its cpus_allowed set (fio skips that for CPU 0)."),
    OptDef::new("numa_cpu_nodes", K::Complex("node list: all, N, N-M, comma-separated"), C::Process, "Run the job on the CPUs of these NUMA nodes", |j, v| {
        j.cpu.numa_cpu_nodes = Some(parse_node_list(v.str())?);
        Ok(())
    })
    .long("As fio's numa_run_on_node_mask: the job's thread may run on every CPU of these nodes (this replaces cpus_allowed). A node that is not online fails the job when it starts (fio refuses it when parsing)."),
    OptDef::new("numa_mem_policy", K::Complex("default | prefer:N | bind:list | interleave[:list] | local"), C::Process, "NUMA memory policy of the job", |j, v| {
        j.cpu.numa_mem_policy = Some(parse_mem_policy(v.str())?);
        Ok(())
    })
    .long("Set with set_mempolicy(2) on the job's thread before its buffers are allocated, as fio does through libnuma: prefer one node, bind to nodes, interleave over nodes (all online nodes without a list), allocate locally, or the default policy."),
    OptDef::new("cgroup", K::Str, C::Process, "Put the job in this blkio cgroup", |j, v| {
        let name = v.str();
        if name.is_empty() {
            return Err("needs a group name".into());
        }
        j.cpu.cgroup = Some(name.to_string());
        Ok(())
    })
    .long("As fio: the group is a directory under the first mounted cgroup v1 hierarchy with the blkio controller (else the cgroup2 mount), created if missing and removed at the end of the run if the run created it (unless cgroup_nodelete). The job's thread joins it (v1 `tasks`; with cgroup2 `cgroup.procs` moves the whole fiox process, as fio's does with thread=1) and returns to the root group when the job ends."),
    OptDef::new("cgroup_weight", K::Int, C::Process, "blkio.weight of the job's cgroup", |j, v| {
        j.cpu.cgroup_weight = v.u32()?;
        Ok(())
    })
    .range(100, 1000)
    .long("Only with cgroup=, as in fio. Kernels without a weight-based I/O scheduler have no blkio.weight file: the job then fails (EACCES), as fio's does; with cgroup2 fio refuses the weight, and so does fiox."),
    OptDef::new("cgroup_nodelete", K::Bool, C::Process, "Leave a cgroup the run created", |j, v| {
        j.cpu.cgroup_nodelete = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("uid", K::Int, C::Process, "Run the job as this user ID", |j, v| {
        j.cpu.uid = Some(v.u32()?);
        Ok(())
    })
    .long("The job's thread switches to this user after its files are laid out and before it opens them, as fio's job process does (fio lays files out beforehand, as the user running it): a file that user may not open fails the job (EACCES). The kernel keeps credentials per thread, so the rest of fiox keeps its own; with thread=1 fio's setuid changes the whole fio process instead. Needs privilege (CAP_SETUID); without it the job fails with EPERM as fio's does."),
    OptDef::new("gid", K::Int, C::Process, "Run the job as this group ID", |j, v| {
        j.cpu.gid = Some(v.u32()?);
        Ok(())
    })
    .long("Set before uid (a new group needs the privilege uid may drop), as in fio; see uid."),
    OptDef::new("exitall", K::Bool, C::Process, "Stop all jobs when one finishes", |j, v| {
        j.errors.exitall = v.bool()?;
        Ok(())
    }),
    OptDef::new("exit_what", K::Choice(&["group", "stonewall", "all"]), C::Process, "Which jobs exitall stops", |j, v| {
        j.errors.exit_what = match v.choice()?.as_str() {
            "stonewall" => ExitWhat::Stonewall,
            "all" => ExitWhat::All,
            _ => ExitWhat::Group,
        };
        Ok(())
    })
    .def("group")
    .long("With exitall, a finishing job stops: `group` the jobs of its group (later groups still run), `stonewall` every job running now in any group (the next stonewalled group still runs), `all` every job, started or not. As in fio, `exitall` on any job applies to every job of the run.")
    ,
    OptDef::new("exitall_on_error", K::Bool, C::Process, "Stop all jobs when one fails", |j, v| {
        j.errors.exitall_on_error = v.bool()?;
        Ok(())
    }),
    OptDef::new("error_dump", K::Bool, C::Process, "Print each I/O error the job survives", |j, v| {
        j.errors.error_dump = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("As fio: an error that stops the job is always printed; with error_dump=1, each error survived through continue_on_error/ignore_error is printed to stderr too, as it happens (`fiox: io_u error on file F: ...`)."),
    OptDef::new("continue_on_error", K::Choice(&["none", "read", "write", "io", "verify", "all", "0", "1"]), C::Process, "Keep going after non-fatal I/O errors of these kinds", |j, v| {
        j.errors.continue_on_error = match v.choice()?.as_str() {
            "none" | "0" => ContinueOnError::None,
            "read" => ContinueOnError::Read,
            "write" => ContinueOnError::Write,
            "io" => ContinueOnError::Io,
            "verify" => ContinueOnError::Verify,
            _ => ContinueOnError::All,
        };
        Ok(())
    })
    .def("none")
    .long("`1` is the same as `all`, `0` as `none`. Errors are counted and reported instead of ending the job."),
    OptDef::new("ignore_error", K::Complex("errno list per direction: read,write,verify (each a:b:c)"), C::Process, "Error numbers or names to ignore, per direction", |j, v| {
        let parts: Vec<&str> = v.raw.split(',').collect();
        if parts.len() > 3 {
            return Err("at most 3 comma-separated lists (read,write,verify) are allowed".into());
        }
        for (i, p) in parts.iter().enumerate() {
            let list = p
                .split(':')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(errno_value)
                .collect::<Result<Vec<i32>, String>>()?;
            let d = [crate::Ddir::Read, crate::Ddir::Write, crate::Ddir::Trim][i];
            *j.errors.ignore_error.get_mut(d) = list;
        }
        Ok(())
    })
    .long("Lists are `:`-separated error names (EIO) or numbers; the third list applies to verification (stored in the trim slot)."),
    OptDef::new("nice", K::Int, C::Process, "CPU nice value of the job", |j, v| {
        j.cpu.nice = v.int()? as i32;
        Ok(())
    })
    .def("0")
    .range(-20, 19),
    OptDef::new("prio", K::Int, C::Process, "I/O priority level (0 highest .. 7 lowest)", |j, v| {
        j.cpu.prio = Some(v.u32()?);
        Ok(())
    })
    .range(0, 7),
    OptDef::new("prioclass", K::Int, C::Process, "I/O priority class (0 none, 1 realtime, 2 best-effort, 3 idle)", |j, v| {
        j.cpu.prioclass = Some(v.u32()?);
        Ok(())
    })
    .range(0, 3),
    OptDef::new("priohint", K::Int, C::Process, "I/O priority hint of the job (fio 3.42)", |j, v| {
        j.cpu.priohint = Some(v.u32()?);
        Ok(())
    })
    .range(0, 1023)
    .long("fio 3.42's option: the hint bits (e.g. a command duration limit index for CDL devices) of the job thread's ioprio_set(2) value, with prioclass (best-effort when unset) and prio. Kernels before 6.10 reject a hint: the job then fails, as fio's."),
    OptDef::new("cpus_allowed", K::Complex("cpu list, e.g. 0-3,6"), C::Process, "CPUs the job may run on", |j, v| {
        j.cpu.cpus_allowed = Some(parse_cpu_list(v.raw)?);
        Ok(())
    })
    .long("Comma-separated CPU numbers and ranges (`0-3,6`). With cpus_allowed_policy=split each job gets one CPU, round-robin by its number in the run (as fio)."),
    OptDef::new("cpumask", K::Int, C::Process, "CPU affinity as a bit mask", |j, v| {
        let m = v.u64()?;
        let cpus: Vec<usize> = (0..64).filter(|b| m & (1u64 << b) != 0).collect();
        if cpus.is_empty() {
            return Err("the mask selects no CPU".into());
        }
        j.cpu.cpus_allowed = Some(cpus);
        Ok(())
    }),
    OptDef::new("cpus_allowed_policy", K::Choice(&["shared", "split"]), C::Process, "Share the CPU set (shared) or give each job one CPU (split)", |j, v| {
        j.cpu.policy = if v.choice()? == "split" {
            CpusAllowedPolicy::Split
        } else {
            CpusAllowedPolicy::Shared
        };
        Ok(())
    })
    .def("shared"),
];

fn dur(us: u64) -> std::time::Duration {
    std::time::Duration::from_micros(us)
}

/// `0-3,6` -> [0,1,2,3,6] (sorted, deduplicated).
/// libnuma's node strings, the forms fio's examples use: `all`, or numbers and ranges.
fn parse_node_list(s: &str) -> Result<crate::NumaNodes, String> {
    if s == "all" {
        return Ok(crate::NumaNodes::All);
    }
    let nodes = parse_cpu_list(s)
        .map_err(|_| format!("'{s}' is not a NUMA node list (all, N, N-M, comma-separated)"))?;
    if nodes.iter().any(|&n| n >= 1024) {
        return Err(format!("'{s}': NUMA nodes are numbered below 1024"));
    }
    Ok(crate::NumaNodes::List(nodes))
}

/// fio's str_numa_mpol_cb rules: a node list only where the mode takes one.
fn parse_mem_policy(s: &str) -> Result<crate::NumaMemPolicy, String> {
    use crate::NumaMemPolicy as P;
    let (mode, list) = match s.split_once(':') {
        Some((m, l)) => (m, Some(l)),
        None => (s, None),
    };
    match (mode, list) {
        ("default", None) => Ok(P::Default),
        ("local", None) => Ok(P::Local),
        ("default" | "local", Some(_)) => Err(format!("no node list for '{mode}'")),
        ("prefer", Some(n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => n
            .parse::<usize>()
            .ok()
            .filter(|&n| n < 1024)
            .map(P::Prefer)
            .ok_or_else(|| format!("'{n}' is not a NUMA node")),
        ("prefer", _) => Err("one node is needed for 'prefer' (prefer:N)".into()),
        ("bind", Some(l)) => Ok(P::Bind(parse_node_list(l)?)),
        ("bind", None) => Err("a node list is needed for 'bind' (bind:list)".into()),
        ("interleave", l) => Ok(P::Interleave(parse_node_list(l.unwrap_or("all"))?)),
        _ => Err(format!(
            "'{mode}' is not a memory policy (default, prefer, bind, interleave, local)"
        )),
    }
}

pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let lo: usize = a
            .trim()
            .parse()
            .map_err(|_| format!("'{part}' is not a CPU number or range"))?;
        let hi: usize = b
            .trim()
            .parse()
            .map_err(|_| format!("'{part}' is not a CPU number or range"))?;
        if hi < lo || hi >= 4096 {
            return Err(format!("CPU range '{part}' is invalid"));
        }
        out.extend(lo..=hi);
    }
    if out.is_empty() {
        return Err("empty CPU list".into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Linux errno names fio accepts in `ignore_error`.
const ERRNOS: &[(&str, i32)] = &[
    ("EPERM", 1),
    ("ENOENT", 2),
    ("ESRCH", 3),
    ("EINTR", 4),
    ("EIO", 5),
    ("ENXIO", 6),
    ("E2BIG", 7),
    ("ENOEXEC", 8),
    ("EBADF", 9),
    ("ECHILD", 10),
    ("EAGAIN", 11),
    ("ENOMEM", 12),
    ("EACCES", 13),
    ("EFAULT", 14),
    ("ENOTBLK", 15),
    ("EBUSY", 16),
    ("EEXIST", 17),
    ("EXDEV", 18),
    ("ENODEV", 19),
    ("ENOTDIR", 20),
    ("EISDIR", 21),
    ("EINVAL", 22),
    ("ENFILE", 23),
    ("EMFILE", 24),
    ("ENOTTY", 25),
    ("ETXTBSY", 26),
    ("EFBIG", 27),
    ("ENOSPC", 28),
    ("ESPIPE", 29),
    ("EROFS", 30),
    ("EMLINK", 31),
    ("EPIPE", 32),
    ("EDOM", 33),
    ("ERANGE", 34),
    ("EDEADLK", 35),
    ("ENAMETOOLONG", 36),
    ("ENOLCK", 37),
    ("ENOSYS", 38),
    ("ENOTEMPTY", 39),
    ("ELOOP", 40),
    ("ENODATA", 61),
    ("ETIME", 62),
    ("EILSEQ", 84),
    ("EOPNOTSUPP", 95),
    ("ETIMEDOUT", 110),
    ("ECANCELED", 125),
    ("EREMOTEIO", 121),
    ("EDQUOT", 122),
];

fn errno_value(s: &str) -> Result<i32, String> {
    if let Ok(n) = s.parse::<i32>() {
        return if n > 0 {
            Ok(n)
        } else {
            Err(format!("error number {n} must be positive"))
        };
    }
    ERRNOS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(s))
        .map(|(_, v)| *v)
        .ok_or_else(|| format!("'{s}' is not a known error name"))
}

#[cfg(test)]
pub(super) use tests::CASES;

#[cfg(test)]
mod tests {
    use super::super::testutil::{run, Case};
    use super::*;
    use crate::{NumaMemPolicy, NumaNodes};
    use std::time::Duration;

    pub static CASES: &[Case] = &[
        (
            "exec_prerun",
            "echo a",
            Some(|j| j.exec_prerun.as_deref() == Some("echo a")),
        ),
        (
            "exec_postrun",
            "echo b",
            Some(|j| j.exec_postrun.as_deref() == Some("echo b")),
        ),
        (
            "clocksource",
            "gettimeofday",
            Some(|j| j.clocksource == Some(crate::ClockSource::Gettimeofday)),
        ),
        (
            "clocksource",
            "cpu",
            Some(|j| j.clocksource == Some(crate::ClockSource::Cpu)),
        ),
        ("clocksource", "hpet", None),
        (
            "description",
            "a test",
            Some(|j| j.description.as_deref() == Some("a test")),
        ),
        (
            "profile",
            "tiobench",
            Some(|j| {
                j.notes.len() == 1 && j.notes[0].starts_with("profile=tiobench has no effect")
            }),
        ),
        (
            "threads",
            "4",
            Some(|j| j.notes.len() == 1 && j.notes[0].starts_with("threads=4 has no effect")),
        ),
        ("threads", "four", None),
        ("name", "foo", Some(|j| j.name == "foo")),
        (
            "comm",
            "fiox-a",
            Some(|j| j.comm.as_deref() == Some("fiox-a")),
        ),
        ("name", "", None),
        ("name", "global2", None),
        (
            "wait_for",
            "first",
            Some(|j| j.wait_for.as_deref() == Some("first")),
        ),
        ("stonewall", "", Some(|j| j.stonewall)),
        ("wait_for_previous", "1", Some(|j| j.stonewall)),
        ("stonewall", "0", Some(|j| !j.stonewall)),
        ("new_group", "", Some(|j| j.new_group)),
        ("numjobs", "4", Some(|j| j.numjobs == 4)),
        ("numjobs", "0", None),
        ("group_reporting", "", Some(|j| j.stats.group_reporting)),
        (
            "unified_rw_reporting",
            "mixed",
            Some(|j| j.stats.unified_mixed),
        ),
        ("unified_rw_reporting", "1", Some(|j| j.stats.unified_mixed)),
        (
            "unified_rw_reporting",
            "0",
            Some(|j| !j.stats.unified_mixed),
        ),
        (
            "unified_rw_reporting",
            "none",
            Some(|j| !j.stats.unified_mixed),
        ),
        (
            "unified_rw_reporting",
            "both",
            Some(|j| j.stats.unified_both && !j.stats.unified_mixed && j.unsupported.is_empty()),
        ),
        ("unified_rw_reporting", "3", None),
        ("kb_base", "1000", Some(|j| j.kb_base == 1000)),
        ("kb_base", "1001", None),
        ("unit_base", "8", Some(|j| j.unit_base == 8)),
        ("unit_base", "2", None),
        ("loops", "3", Some(|j| j.timing.loops == 3)),
        (
            "startdelay",
            "2",
            Some(|j| j.timing.startdelay == (Duration::from_secs(2), Duration::from_secs(2))),
        ),
        (
            "startdelay",
            "1-3s",
            Some(|j| j.timing.startdelay == (Duration::from_secs(1), Duration::from_secs(3))),
        ),
        ("startdelay", "3-1", None),
        (
            "runtime",
            "20",
            Some(|j| j.timing.runtime == Some(Duration::from_secs(20))),
        ),
        (
            "timeout",
            "1m",
            Some(|j| j.timing.runtime == Some(Duration::from_secs(60))),
        ),
        ("runtime", "0", Some(|j| j.timing.runtime.is_none())),
        ("runtime", "10x", None),
        ("time_based", "", Some(|j| j.timing.time_based)),
        (
            "ramp_time",
            "500ms",
            Some(|j| j.timing.ramp_time == Some(Duration::from_millis(500))),
        ),
        (
            "ramp_size",
            "1m",
            Some(|j| j.timing.ramp_size == Some(1 << 20)),
        ),
        ("thread", "", Some(|j| j.thread)),
        ("stonewall_ranks", "1", Some(|j| j.timing.stonewall_ranks)),
        ("exitall", "", Some(|j| j.errors.exitall)),
        ("exitall_on_error", "1", Some(|j| j.errors.exitall_on_error)),
        ("error_dump", "1", Some(|j| j.errors.error_dump)),
        ("error_dump", "maybe", None),
        (
            "exit_what",
            "stonewall",
            Some(|j| j.errors.exit_what == ExitWhat::Stonewall),
        ),
        (
            "exit_what",
            "all",
            Some(|j| j.errors.exit_what == ExitWhat::All),
        ),
        ("exit_what", "some", None),
        (
            "continue_on_error",
            "io",
            Some(|j| j.errors.continue_on_error == ContinueOnError::Io),
        ),
        (
            "continue_on_error",
            "1",
            Some(|j| j.errors.continue_on_error == ContinueOnError::All),
        ),
        ("continue_on_error", "bogus", None),
        (
            "ignore_error",
            "EIO:ENOSPC,5",
            Some(|j| {
                j.errors.ignore_error.read == vec![5, 28] && j.errors.ignore_error.write == vec![5]
            }),
        ),
        ("ignore_error", "EWHAT", None),
        (
            "cgroup",
            "fio-a",
            Some(|j| j.cpu.cgroup.as_deref() == Some("fio-a")),
        ),
        ("cgroup", "", None),
        ("gtod_cpu", "1", Some(|j| j.cpu.gtod_cpu == Some(1))),
        ("gtod_cpu", "-1", None),
        (
            "numa_cpu_nodes",
            "0-1,3",
            Some(|j| j.cpu.numa_cpu_nodes == Some(NumaNodes::List(vec![0, 1, 3]))),
        ),
        (
            "numa_cpu_nodes",
            "all",
            Some(|j| j.cpu.numa_cpu_nodes == Some(NumaNodes::All)),
        ),
        ("numa_cpu_nodes", "x", None),
        (
            "numa_mem_policy",
            "bind:0",
            Some(|j| j.cpu.numa_mem_policy == Some(NumaMemPolicy::Bind(NumaNodes::List(vec![0])))),
        ),
        (
            "numa_mem_policy",
            "interleave",
            Some(|j| j.cpu.numa_mem_policy == Some(NumaMemPolicy::Interleave(NumaNodes::All))),
        ),
        (
            "numa_mem_policy",
            "prefer:1",
            Some(|j| j.cpu.numa_mem_policy == Some(NumaMemPolicy::Prefer(1))),
        ),
        ("numa_mem_policy", "prefer:1,2", None),
        ("numa_mem_policy", "prefer", None),
        ("numa_mem_policy", "bind", None),
        ("numa_mem_policy", "local:0", None),
        (
            "numa_mem_policy",
            "local",
            Some(|j| j.cpu.numa_mem_policy == Some(NumaMemPolicy::Local)),
        ),
        ("numa_mem_policy", "spread", None),
        ("cgroup_weight", "500", Some(|j| j.cpu.cgroup_weight == 500)),
        ("cgroup_weight", "50", None),
        ("cgroup_nodelete", "1", Some(|j| j.cpu.cgroup_nodelete)),
        ("uid", "65534", Some(|j| j.cpu.uid == Some(65534))),
        ("uid", "-1", None),
        ("gid", "100", Some(|j| j.cpu.gid == Some(100))),
        ("nice", "-5", Some(|j| j.cpu.nice == -5)),
        ("nice", "20", None),
        ("prio", "4", Some(|j| j.cpu.prio == Some(4))),
        ("prio", "8", None),
        ("prioclass", "3", Some(|j| j.cpu.prioclass == Some(3))),
        (
            "priohint",
            "2",
            Some(|j| j.default_ioprio() == (2 << 13) | (2 << 3)),
        ),
        ("priohint", "1024", None),
        (
            "cpus_allowed",
            "0-2,5",
            Some(|j| j.cpu.cpus_allowed == Some(vec![0, 1, 2, 5])),
        ),
        ("cpus_allowed", "3-1", None),
        (
            "cpumask",
            "0x5",
            Some(|j| j.cpu.cpus_allowed == Some(vec![0, 2])),
        ),
        (
            "cpus_allowed_policy",
            "split",
            Some(|j| j.cpu.policy == CpusAllowedPolicy::Split),
        ),
    ];

    #[test]
    fn general_options() {
        run(CASES);
    }
}
