//! Where a job runs: CPU affinity (`cpus_allowed`, `cpus_allowed_policy`) and NUMA
//! (`numa_cpu_nodes`, `numa_mem_policy`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpusAllowedPolicy {
    Shared,
    Split,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSpec {
    /// `cpus_allowed=0-3,5`; None = no restriction.
    pub cpus_allowed: Option<Vec<usize>>,
    pub policy: CpusAllowedPolicy,
    pub nice: i32,
    /// `prio=` 0..=7 and `prioclass=` 0..=3 (ioprio_set).
    pub prio: Option<u32>,
    pub prioclass: Option<u32>,
    /// fio 3.42's `priohint` 0..=1023: the hint bits of the job's ioprio value (bit 3 up).
    pub priohint: Option<u32>,
    /// `uid=`/`gid=`: the job's thread takes these credentials before any work (fio's
    /// setgid/setuid in the job's process).
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// `cgroup=`: the job's thread joins this blkio (or cgroup2) group, created if missing.
    pub cgroup: Option<String>,
    /// `cgroup_weight=` 100..=1000 (0: not set): written to the group's blkio.weight.
    pub cgroup_weight: u32,
    /// `cgroup_nodelete`: a group the run created is left in place.
    pub cgroup_nodelete: bool,
    /// `gtod_cpu=`: a thread on this CPU keeps the time for every job (and this job leaves
    /// the CPU out of `cpus_allowed`).
    pub gtod_cpu: Option<u32>,
    /// `numa_cpu_nodes=`: the job runs on the CPUs of these NUMA nodes.
    pub numa_cpu_nodes: Option<NumaNodes>,
    /// `numa_mem_policy=`: the job thread's memory policy (set_mempolicy(2)).
    pub numa_mem_policy: Option<NumaMemPolicy>,
}

/// A NUMA node list as libnuma's numa_parse_nodestring reads it (`all`, `0-1,3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumaNodes {
    /// Every online node.
    All,
    /// These nodes (sorted, no repeats).
    List(Vec<usize>),
}

/// fio's `numa_mem_policy` modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumaMemPolicy {
    Default,
    /// `prefer:N`: allocate on node N when it can.
    Prefer(usize),
    /// `bind:list`: allocate only on these nodes.
    Bind(NumaNodes),
    /// `interleave[:list]`: spread pages over these nodes (all by default).
    Interleave(NumaNodes),
    /// `local`: allocate on the node of the CPU that asks.
    Local,
}
