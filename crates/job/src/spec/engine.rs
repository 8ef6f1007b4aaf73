//! Engine-specific options ([`EngineOptions`]) and the small value types of the net and
//! filestat engines.

/// Engine-specific options. Only the fields of the chosen engine matter; the parser rejects an
/// engine option used with a different engine (as fio does). `Default` is fio's defaults
/// (and guasi's offload submission), the same as in `JobSpec::default()`.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    // pvsync2 / io_uring
    pub hipri: bool,
    pub hipri_percentage: u32,
    pub nowait: bool,
    pub uncached: u32,
    // io_uring
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    pub nonvectored: i32,
    pub force_async: u32,
    // libaio
    pub userspace_reap: bool,
    /// fio 3.42's `libaio_vectored`: reads and writes as IOCB_CMD_PREADV/PWRITEV of one iovec.
    pub libaio_vectored: bool,
    // filestat
    pub stat_type: StatType,
    // cpuio
    /// Percent of one CPU to burn (0: not set, which cpuio refuses as fio does).
    pub cpuload: u32,
    /// Length of one burn cycle in microseconds.
    pub cpuchunks: u32,
    /// `cpumode=qsort` (else noop: spin).
    pub cpumode_qsort: bool,
    pub exit_on_io_done: bool,
    // exec
    pub program: Option<String>,
    /// `arguments=`, with fio's `%r` (runtime in seconds) and `%n` (job name) unexpanded.
    pub arguments: Option<String>,
    /// Seconds between SIGTERM and SIGKILL.
    pub grace_time: u64,
    /// Send the program's stdout/stderr to `NAME.stdout`/`NAME.stderr`.
    pub std_redirect: bool,
    // net, netsplice
    pub hostname: Option<String>,
    /// 0: not set.
    pub port: u32,
    pub protocol: NetProto,
    pub listen: bool,
    pub pingpong: bool,
    pub nodelay: bool,
    /// SO_RCVBUF/SO_SNDBUF (0: the system's).
    pub window_size: u32,
    /// TCP_MAXSEG (0: the system's).
    pub mss: u32,
    /// Multicast TTL.
    pub ttl: u32,
    /// Multicast interface address.
    pub interface: Option<String>,
    // e4defrag
    pub donorname: Option<String>,
    pub inplace: bool,
    // guasi (fiox's thread-pool engine)
    pub guasi_workers: Option<u32>,
    pub guasi_submit_offload: bool,
    pub guasi_kick_each: bool,
    pub guasi_reap_runs: bool,
    // io_uring and libaio: per-command priorities as written (resolved into JobSpec::cmdprio)
    pub cmdprio: crate::cmdprio::CmdPrioOptions,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            hipri: false,
            hipri_percentage: 100,
            nowait: false,
            uncached: 0,
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            nonvectored: -1,
            force_async: 0,
            userspace_reap: false,
            libaio_vectored: false,
            stat_type: StatType::Stat,
            cpuload: 0,
            cpuchunks: 50_000,
            cpumode_qsort: false,
            exit_on_io_done: false,
            program: None,
            arguments: None,
            grace_time: 1,
            std_redirect: true,
            hostname: None,
            port: 0,
            protocol: NetProto::Tcp,
            listen: false,
            pingpong: false,
            nodelay: false,
            window_size: 0,
            mss: 0,
            ttl: 1,
            interface: None,
            donorname: None,
            inplace: false,
            guasi_workers: None,
            // guasi's point: submission never blocks (inline is for A/B runs).
            guasi_submit_offload: true,
            guasi_kick_each: false,
            cmdprio: Default::default(),
            guasi_reap_runs: false,
        }
    }
}

/// `protocol=` of the net engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetProto {
    Tcp,
    Tcpv6,
    Udp,
    Udpv6,
    Unix,
}

impl NetProto {
    pub fn is_udp(self) -> bool {
        matches!(self, NetProto::Udp | NetProto::Udpv6)
    }
    pub fn is_tcp(self) -> bool {
        matches!(self, NetProto::Tcp | NetProto::Tcpv6)
    }
    pub fn is_ipv6(self) -> bool {
        matches!(self, NetProto::Tcpv6 | NetProto::Udpv6)
    }
}

/// `stat_type=` of the filestat engine: which system call it measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatType {
    Stat,
    Lstat,
    Statx,
}

impl StatType {
    /// The system call's name (fio's option value).
    pub fn syscall(self) -> &'static str {
        match self {
            StatType::Stat => "stat",
            StatType::Lstat => "lstat",
            StatType::Statx => "statx",
        }
    }
}
