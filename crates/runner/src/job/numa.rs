//! `numa_cpu_nodes` and `numa_mem_policy` without libnuma, as fio applies them through it: the
//! job's thread runs on the CPUs of the given nodes (sched_setaffinity) and takes the memory
//! policy (set_mempolicy). Nodes and their CPUs come from /sys/devices/system/node.

use std::path::Path;

use crate::error::RunError;
use fiox_job::{JobSpec, NumaMemPolicy, NumaNodes};

const NODE_DIR: &str = "/sys/devices/system/node";

/// The kernel's list format (`0-3,8`), as in sysfs `online` and `cpulist` files.
pub(crate) fn parse_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
        if hi < lo || hi - lo > 1 << 16 {
            return None;
        }
        out.extend(lo..=hi);
    }
    Some(out)
}

fn read_list(path: &Path) -> Result<Vec<usize>, RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| RunError::io("read", path, e))?;
    parse_list(&text).ok_or_else(|| RunError::Target {
        msg: format!(
            "{}: not a list of numbers: '{}'",
            path.display(),
            text.trim()
        ),
        errno: libc::EINVAL,
    })
}

/// The nodes of `n`, each checked to be online (libnuma refuses others).
fn nodes(job: &JobSpec, opt: &str, n: &NumaNodes) -> Result<Vec<usize>, RunError> {
    let online = read_list(&Path::new(NODE_DIR).join("online"))?;
    match n {
        NumaNodes::All => Ok(online),
        NumaNodes::List(l) => match l.iter().find(|x| !online.contains(x)) {
            Some(bad) => Err(RunError::Target {
                msg: format!(
                    "job '{}': {opt}: NUMA node {bad} is not online here (online: {online:?})",
                    job.name
                ),
                errno: libc::EINVAL,
            }),
            None => Ok(l.clone()),
        },
    }
}

/// The job's nodes checked before the run's first job starts: fio's job file parser hands
/// them to libnuma, which refuses a node that is not online, and the whole file is rejected
/// (exit 1, no job runs), not just this job when its turn comes.
pub(crate) fn check(job: &JobSpec) -> Result<(), RunError> {
    if let Some(n) = &job.cpu.numa_cpu_nodes {
        nodes(job, "numa_cpu_nodes", n)?;
    }
    match &job.cpu.numa_mem_policy {
        Some(NumaMemPolicy::Prefer(n)) => {
            nodes(job, "numa_mem_policy", &NumaNodes::List(vec![*n]))?;
        }
        Some(NumaMemPolicy::Bind(n) | NumaMemPolicy::Interleave(n)) => {
            nodes(job, "numa_mem_policy", n)?;
        }
        _ => {}
    }
    Ok(())
}

/// The job's NUMA placement for its thread: CPUs first, then the memory policy.
pub(crate) fn place(job: &JobSpec) -> Result<(), RunError> {
    let fail = |what: &str, e: std::io::Error| RunError::Target {
        msg: format!("job '{}': {what}: {e}", job.name),
        errno: e.raw_os_error().unwrap_or(libc::EINVAL),
    };
    if let Some(n) = &job.cpu.numa_cpu_nodes {
        let mut cpus = Vec::new();
        for node in nodes(job, "numa_cpu_nodes", n)? {
            cpus.extend(read_list(
                &Path::new(NODE_DIR).join(format!("node{node}/cpulist")),
            )?);
        }
        cpus.sort_unstable();
        cpus.dedup();
        crate::sys::set_affinity(&cpus).map_err(|e| fail("numa_run_on_node_mask", e))?;
    }
    // `default` keeps the thread's policy, as fio leaves it.
    let Some(p) = job
        .cpu
        .numa_mem_policy
        .as_ref()
        .filter(|p| **p != NumaMemPolicy::Default)
    else {
        return Ok(());
    };
    // The kernel's MPOL_* numbers.
    let (mode, list) = match p {
        NumaMemPolicy::Default => (0, Vec::new()),
        NumaMemPolicy::Prefer(n) => (
            1,
            nodes(job, "numa_mem_policy", &NumaNodes::List(vec![*n]))?,
        ),
        NumaMemPolicy::Bind(n) => (2, nodes(job, "numa_mem_policy", n)?),
        NumaMemPolicy::Interleave(n) => (3, nodes(job, "numa_mem_policy", n)?),
        NumaMemPolicy::Local => (4, Vec::new()),
    };
    crate::sys::set_mempolicy(mode, &list).map_err(|e| fail("set_mempolicy", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_lists_parse() {
        assert_eq!(parse_list("0-3,8\n"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_list("0"), Some(vec![0]));
        assert_eq!(parse_list("\n"), Some(vec![]));
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("a"), None);
    }

    #[test]
    fn a_node_that_is_not_online_is_refused() {
        let mut j = JobSpec::default();
        j.cpu.numa_mem_policy = Some(NumaMemPolicy::Bind(NumaNodes::List(vec![1023])));
        let e = place(&j).unwrap_err().to_string();
        assert!(e.contains("NUMA node 1023 is not online"), "{e}");
        let e = check(&j).unwrap_err().to_string();
        assert!(
            e.contains("numa_mem_policy: NUMA node 1023 is not online"),
            "{e}"
        );
        j.cpu.numa_mem_policy = None;
        j.cpu.numa_cpu_nodes = Some(NumaNodes::List(vec![0, 1023]));
        let e = check(&j).unwrap_err().to_string();
        assert!(
            e.contains("numa_cpu_nodes: NUMA node 1023 is not online"),
            "{e}"
        );
    }
}
