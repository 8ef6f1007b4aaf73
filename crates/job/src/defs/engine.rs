//! Options that belong to one engine. They are accepted only when the job's final `ioengine`
//! (which may be set later in the section or in `[global]`) is one of `engines`; the check is
//! done after all options are applied, as fio loads engine options once the engine is known.

use super::{Category as C, Kind as K, OptDef};

// fio's io_uring_cmd engine shares io_uring's option table; fiox parses it (a job using it
// is refused when run, see `unsupported`), so io_uring's options belong to it too.
const URING: &[&str] = &["io_uring", "io_uring_cmd"];
const SYNC2_URING: &[&str] = &["pvsync2", "io_uring", "io_uring_cmd"];
// fio's sg engine has a `hipri` of its own; a job using sg is refused (unsupported engine), so
// the option only has to parse there.
const HIPRI: &[&str] = &["pvsync2", "io_uring", "io_uring_cmd", "sg"];
const NOWAIT: &[&str] = &["pvsync2", "io_uring", "io_uring_cmd", "libaio"];
const GUASI: &[&str] = &["guasi"];
// fio 3.33's cmdprio options (engines/cmdprio.c), shared by io_uring and libaio.
const CMDPRIO: &[&str] = &["io_uring", "io_uring_cmd", "libaio"];

/// `read,write` integers of a cmdprio option, each checked against the option's range; as in
/// fio a single value applies to both directions and a trim value is ignored.
fn cmdprio_pair(v: &super::Val, out: &mut [u32; 2]) -> Result<(), String> {
    let parts = crate::value::split_triplet(v.raw)?;
    for (slot, part) in out.iter_mut().zip(parts) {
        if let Some(raw) = part {
            *slot = super::Val { raw, ..*v }.u32()?;
        }
    }
    Ok(())
}
const NET: &[&str] = &["net", "netsplice"];

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new("hipri", K::Bool, C::Engine, "Use polled (high priority) I/O", |j, v| {
        j.engine.hipri = v.bool()?;
        Ok(())
    })
    .engines(HIPRI)
    .long("pvsync2 sets RWF_HIPRI; io_uring sets up an I/O-polled ring. Needs direct=1 and a device with poll queues."),
    OptDef::new("hipri_percentage", K::Int, C::Engine, "Percent of I/Os issued with RWF_HIPRI", |j, v| {
        j.engine.hipri_percentage = v.u32()?;
        Ok(())
    })
    .engines(&["pvsync2"])
    .def("100")
    .range(0, 100),
    OptDef::new("uncached", K::Int, C::Engine, "Issue buffered I/O with RWF_UNCACHED", |j, v| {
        j.engine.uncached = v.u32()?;
        Ok(())
    })
    .engines(SYNC2_URING)
    .def("0")
    .range(0, 1),
    OptDef::new("nowait", K::Bool, C::Engine, "Issue I/O with RWF_NOWAIT (fail instead of blocking)", |j, v| {
        j.engine.nowait = v.bool()?;
        Ok(())
    })
    .engines(NOWAIT)
    .def("0"),
    OptDef::new("fixedbufs", K::Bool, C::Engine, "Register I/O buffers with the ring", |j, v| {
        j.engine.fixedbufs = v.bool()?;
        Ok(())
    })
    .engines(URING),
    OptDef::new("registerfiles", K::Bool, C::Engine, "Register files with the ring", |j, v| {
        j.engine.registerfiles = v.bool()?;
        Ok(())
    })
    .engines(URING),
    OptDef::new("sqthread_poll", K::Bool, C::Engine, "Let a kernel thread poll the submission queue", |j, v| {
        j.engine.sqthread_poll = v.bool()?;
        Ok(())
    })
    .engines(URING),
    OptDef::new("sqthread_poll_cpu", K::Int, C::Engine, "CPU of the submission-polling thread", |j, v| {
        j.engine.sqthread_poll_cpu = Some(v.u32()?);
        Ok(())
    })
    .engines(URING)
    .range(0, 4095),
    OptDef::new("nonvectored", K::Int, C::Engine, "Use non-vectored read/write commands (1), vectored (0), or non-vectored where the kernel has them (-1)", |j, v| {
        j.engine.nonvectored = v.int()? as i32;
        Ok(())
    })
    .engines(URING)
    .def("-1")
    .range(-1, 1),
    OptDef::new("force_async", K::Int, C::Engine, "Set IOSQE_ASYNC on every Nth I/O", |j, v| {
        j.engine.force_async = v.u32()?;
        Ok(())
    })
    .engines(URING)
    .def("0"),
    OptDef::new("libaio_vectored", K::Bool, C::Engine, "Submit reads and writes as vectored aio (fio 3.42)", |j, v| {
        j.engine.libaio_vectored = v.bool()?;
        Ok(())
    })
    .engines(&["libaio"])
    .def("0")
    .long("fio 3.42's option: each read or write is an IOCB_CMD_PREADV/IOCB_CMD_PWRITEV of one iovec instead of IOCB_CMD_PREAD/IOCB_CMD_PWRITE."),
    OptDef::new("userspace_reap", K::Bool, C::Engine, "Reap completions from user space", |j, v| {
        j.engine.userspace_reap = v.bool()?;
        Ok(())
    })
    .engines(&["libaio"]),
    OptDef::new("stat_type", K::Choice(&["stat", "lstat", "statx"]), C::Engine, "System call the filestat and dirstat engines time", |j, v| {
        j.engine.stat_type = match v.choice()?.as_str() {
            "lstat" => crate::StatType::Lstat,
            "statx" => crate::StatType::Statx,
            _ => crate::StatType::Stat,
        };
        Ok(())
    })
    .engines(&["filestat", "dirstat"])
    .def("stat")
    .long("`stat` (stat(2), default), `lstat` (lstat(2): a symbolic link itself) or `statx` (statx(2) of every basic field, as fio asks)."),
    OptDef::new("cpuload", K::Int, C::Engine, "Percent of one CPU the cpuio engine burns", |j, v| {
        j.engine.cpuload = v.u32()?;
        Ok(())
    })
    .engines(&["cpuio"])
    .long("Required with cpuio (fio refuses a cpuio job without it); above 100 counts as 100. Each I/O burns `cpuchunks` microseconds, then the job sleeps long enough to make the load this percentage."),
    OptDef::new("cpuchunks", K::Int, C::Engine, "Length of one cpuio burn cycle in microseconds", |j, v| {
        j.engine.cpuchunks = v.u32()?;
        Ok(())
    })
    .engines(&["cpuio"])
    .def("50000"),
    OptDef::new("cpumode", K::Choice(&["noop", "qsort"]), C::Engine, "How cpuio burns CPU", |j, v| {
        j.engine.cpumode_qsort = v.choice()? == "qsort";
        Ok(())
    })
    .engines(&["cpuio"])
    .def("noop")
    .long("`noop` spins for `cpuchunks` microseconds per I/O; `qsort` sorts 256 Ki integers four ways per I/O (as fio) and sets the sleep from how long that took."),
    OptDef::new("exit_on_io_done", K::Bool, C::Engine, "End the cpuio job when every I/O job has finished", |j, v| {
        j.engine.exit_on_io_done = v.bool()?;
        Ok(())
    })
    .engines(&["cpuio"])
    .def("0")
    .long("As fio: jobs of later groups count as not finished; with no I/O job at all the cpuio job runs to its own end."),
    OptDef::new("program", K::Str, C::Engine, "Program the exec engine runs", |j, v| {
        j.engine.program = Some(v.str().to_string());
        Ok(())
    })
    .engines(&["exec"])
    .long("Required with exec (fio refuses an exec job without it). Looked up in PATH; started at the job's first I/O, sent SIGTERM once the runtime is over, SIGKILL `grace_time` seconds later (or when the job ends)."),
    OptDef::new("arguments", K::Str, C::Engine, "Arguments of the exec engine's program", |j, v| {
        j.engine.arguments = Some(v.str().to_string());
        Ok(())
    })
    .engines(&["exec"])
    .long("Split at spaces, as fio (no quoting). `%r` becomes the job's runtime in seconds, `%n` its name."),
    OptDef::new("grace_time", K::Int, C::Engine, "Seconds between the exec program's SIGTERM and SIGKILL", |j, v| {
        j.engine.grace_time = v.u64()?;
        Ok(())
    })
    .engines(&["exec"])
    .def("1")
    .range(0, i64::MAX),
    OptDef::new("std_redirect", K::Bool, C::Engine, "Save the exec program's stdout and stderr in NAME.stdout and NAME.stderr", |j, v| {
        j.engine.std_redirect = v.bool()?;
        Ok(())
    })
    .engines(&["exec"])
    .def("1")
    .long("Created in the working directory, as fio; with 0 the program writes to fiox's own stdout and stderr."),
    OptDef::new("hostname", K::Str, C::Engine, "Host the net engine's sender connects to", |j, v| {
        j.engine.hostname = Some(v.str().to_string());
        Ok(())
    })
    .engines(NET)
    .long("A name or an address; as in fio it also becomes the job's filename (for `protocol=unix` the socket's path). With protocol=udp an IPv4 multicast group (224.0.0.0/4) works for both sides: the reader joins it (the only hostname a reader takes, as in fio), the writer sends to it with `ttl` and `interface`."),
    OptDef::new("port", K::Int, C::Engine, "TCP/UDP port of the net engines", |j, v| {
        j.engine.port = v.u32()?;
        Ok(())
    })
    .engines(NET)
    .range(1, 65535)
    .long("Required for tcp and udp, refused for unix; each numjobs clone uses the next port, as fio."),
    OptDef::new("protocol", K::Choice(&["tcp", "tcpv6", "udp", "udpv6", "unix", "vsock"]), C::Engine, "Protocol of the net engines", |j, v| {
        j.engine.protocol = match v.choice()?.as_str() {
            "tcpv6" => crate::NetProto::Tcpv6,
            "udp" => crate::NetProto::Udp,
            "udpv6" => crate::NetProto::Udpv6,
            "unix" => crate::NetProto::Unix,
            "vsock" => {
                super::record_value(j, "protocol", "vsock", "fio 3.42's vsock sockets");
                return Ok(());
            }
            _ => crate::NetProto::Tcp,
        };
        super::forget(j, "protocol");
        Ok(())
    })
    .alias(&["proto"])
    .engines(NET)
    .def("tcp"),
    OptDef::new("listen", K::Bool, C::Engine, "The net job listens for its peer (TCP)", |j, v| {
        j.engine.listen = v.bool()?;
        Ok(())
    })
    .engines(NET)
    .long("Only for tcp/tcpv6; with udp and unix the reading job is the one that listens."),
    OptDef::new("pingpong", K::Bool, C::Engine, "Each net I/O waits for the peer to send it back", |j, v| {
        j.engine.pingpong = v.bool()?;
        Ok(())
    })
    .engines(NET)
    .long("The writer sends a block and reads it back, the reader receives and returns it, so the latency is a round trip."),
    OptDef::new("nodelay", K::Bool, C::Engine, "Set TCP_NODELAY on the connection", |j, v| {
        j.engine.nodelay = v.bool()?;
        Ok(())
    })
    .engines(NET),
    OptDef::new("window_size", K::Int, C::Engine, "Socket buffer size (SO_RCVBUF/SO_SNDBUF)", |j, v| {
        j.engine.window_size = v.u32()?;
        Ok(())
    })
    .engines(NET)
    .range(0, u32::MAX as i64),
    OptDef::new("mss", K::Int, C::Engine, "TCP maximum segment size (TCP_MAXSEG)", |j, v| {
        j.engine.mss = v.u32()?;
        Ok(())
    })
    .engines(NET)
    .range(0, u32::MAX as i64),
    OptDef::new("ttl", K::Int, C::Engine, "Multicast TTL of a UDP sender", |j, v| {
        j.engine.ttl = v.u32()?;
        Ok(())
    })
    .engines(NET)
    .def("1")
    .range(0, u32::MAX as i64),
    OptDef::new("interface", K::Str, C::Engine, "Interface address for UDP multicast", |j, v| {
        j.engine.interface = Some(v.str().to_string());
        Ok(())
    })
    .engines(NET)
    .long("The IPv4 address of the interface (127.0.0.1 for the loopback): a writer to a multicast group (`hostname` in 224.0.0.0/4, protocol=udp) sends through it, a reader joins the group on it (default: the system's choice). Unused without a multicast hostname, as in fio."),
    OptDef::new("donorname", K::Str, C::Engine, "Donor file of the e4defrag engine (in the job's directory)", |j, v| {
        j.engine.donorname = Some(v.str().to_string());
        Ok(())
    })
    .engines(&["e4defrag"])
    .long("Required with e4defrag. Created if missing; an existing file fiox did not create is refused unless allowed (its blocks would be exchanged)."),
    OptDef::new("inplace", K::Int, C::Engine, "Allocate and free the donor's space per I/O (1) or once (0)", |j, v| {
        j.engine.inplace = v.int()? == 1;
        Ok(())
    })
    .engines(&["e4defrag"])
    .range(0, 1),
    OptDef::new("guasi_workers", K::Int, C::Engine, "Worker threads of the guasi engine (default: iodepth, at most 64)", |j, v| {
        j.engine.guasi_workers = Some(v.u32()?);
        Ok(())
    })
    .engines(GUASI)
    .range(1, 4096),
    OptDef::new("guasi_submit", K::Choice(&["offload", "inline"]), C::Engine, "Hand every request to the workers (offload: submission never blocks) or run the first of each batch in the job thread (inline, like a blocking io_submit)", |j, v| {
        j.engine.guasi_submit_offload = v.choice()? == "offload";
        Ok(())
    })
    .engines(GUASI)
    .def("offload"),
    OptDef::new("guasi_kick", K::Choice(&["batch", "each"]), C::Engine, "Wake workers once per batch or once per request", |j, v| {
        j.engine.guasi_kick_each = v.choice()? == "each";
        Ok(())
    })
    .engines(GUASI)
    .def("batch"),
    OptDef::new("guasi_reap_runs", K::Int, C::Engine, "Let the reaping thread run queued requests itself (1) or not (0)", |j, v| {
        j.engine.guasi_reap_runs = v.int()? == 1;
        Ok(())
    })
    .engines(GUASI)
    .def("0")
    .range(0, 1),
    OptDef::new("cmdprio_percentage", K::Complex("int[,int]"), C::Engine, "Percent of I/Os issued with the cmdprio priority (read,write)", |j, v| {
        cmdprio_pair(v, &mut j.engine.cmdprio.percentage)
    })
    .engines(CMDPRIO)
    .def("0")
    .range(0, 100)
    .long("Each chosen I/O carries `cmdprio_class`/`cmdprio` in its request (io_uring `sqe->ioprio`, libaio `aio_reqprio`); the others keep the job's `prioclass`/`prio`. Reports then show latencies per priority, as fio. Not with `cmdprio_bssplit`."),
    OptDef::new("cmdprio_class", K::Complex("int[,int]"), C::Engine, "I/O priority class of cmdprio I/Os (read,write; default 1, real-time)", |j, v| {
        cmdprio_pair(v, &mut j.engine.cmdprio.class)
    })
    .engines(CMDPRIO)
    .range(1, 3),
    OptDef::new("cmdprio", K::Complex("int[,int]"), C::Engine, "I/O priority level of cmdprio I/Os (read,write; 0 highest .. 7)", |j, v| {
        cmdprio_pair(v, &mut j.engine.cmdprio.level)
    })
    .engines(CMDPRIO)
    .def("0")
    .range(0, 7),
    OptDef::new("cmdprio_bssplit", K::Complex("bs/pct[/class/level[/hint]]:...[,...]"), C::Engine, "Percent of I/Os of each block size issued with a priority", |j, v| {
        super::forget(j, "cmdprio_bssplit");
        j.engine.cmdprio.bssplit = v.str().to_string();
        if crate::cmdprio::bssplit_has_hint(v.raw) {
            super::record_value(j, "cmdprio_bssplit", v.raw, "priority hints (the fifth field)");
        }
        Ok(())
    })
    .engines(CMDPRIO)
    .long("`4k/30:64k/10/3/0`: 30% of 4 KiB I/Os get `cmdprio_class`/`cmdprio`, 10% of 64 KiB I/Os class 3 level 0; `read,write` lists per direction. Not with `cmdprio_percentage`."),
];

#[cfg(test)]
pub(super) use tests::CASES;

#[cfg(test)]
mod tests {
    use super::super::testutil::{run, Case};

    pub static CASES: &[Case] = &[
        (
            "cmdprio_percentage",
            "30,40",
            Some(|j| j.engine.cmdprio.percentage == [30, 40]),
        ),
        (
            "cmdprio_percentage",
            "25",
            Some(|j| j.engine.cmdprio.percentage == [25, 25]),
        ),
        ("cmdprio_percentage", "50,101", None),
        (
            "cmdprio_class",
            "3,2",
            Some(|j| j.engine.cmdprio.class == [3, 2]),
        ),
        ("cmdprio_class", "0", None),
        ("cmdprio", ",5", Some(|j| j.engine.cmdprio.level == [0, 5])),
        ("cmdprio", "8", None),
        (
            "cmdprio_bssplit",
            "4k/10",
            Some(|j| j.engine.cmdprio.bssplit == "4k/10"),
        ),
        ("hipri", "", Some(|j| j.engine.hipri)),
        (
            "hipri_percentage",
            "30",
            Some(|j| j.engine.hipri_percentage == 30),
        ),
        ("hipri_percentage", "101", None),
        ("uncached", "1", Some(|j| j.engine.uncached == 1)),
        ("uncached", "2", None),
        ("nowait", "1", Some(|j| j.engine.nowait)),
        ("fixedbufs", "", Some(|j| j.engine.fixedbufs)),
        ("registerfiles", "1", Some(|j| j.engine.registerfiles)),
        ("sqthread_poll", "1", Some(|j| j.engine.sqthread_poll)),
        (
            "sqthread_poll_cpu",
            "1",
            Some(|j| j.engine.sqthread_poll_cpu == Some(1)),
        ),
        ("nonvectored", "1", Some(|j| j.engine.nonvectored == 1)),
        ("nonvectored", "2", None),
        ("force_async", "4", Some(|j| j.engine.force_async == 4)),
        ("userspace_reap", "", Some(|j| j.engine.userspace_reap)),
        ("libaio_vectored", "1", Some(|j| j.engine.libaio_vectored)),
        (
            "stat_type",
            "statx",
            Some(|j| j.engine.stat_type == crate::StatType::Statx),
        ),
        ("stat_type", "fstat", None),
        ("cpuload", "50", Some(|j| j.engine.cpuload == 50)),
        ("cpuload", "x", None),
        ("cpuchunks", "1000", Some(|j| j.engine.cpuchunks == 1000)),
        ("cpumode", "qsort", Some(|j| j.engine.cpumode_qsort)),
        ("cpumode", "spin", None),
        ("exit_on_io_done", "1", Some(|j| j.engine.exit_on_io_done)),
        (
            "program",
            "/bin/sleep",
            Some(|j| j.engine.program.as_deref() == Some("/bin/sleep")),
        ),
        (
            "arguments",
            "%r x",
            Some(|j| j.engine.arguments.as_deref() == Some("%r x")),
        ),
        ("grace_time", "3", Some(|j| j.engine.grace_time == 3)),
        ("grace_time", "-1", None),
        ("std_redirect", "0", Some(|j| !j.engine.std_redirect)),
        (
            "donorname",
            "d.def",
            Some(|j| j.engine.donorname.as_deref() == Some("d.def")),
        ),
        ("inplace", "1", Some(|j| j.engine.inplace)),
        ("inplace", "2", None),
        (
            "hostname",
            "localhost",
            Some(|j| j.engine.hostname.as_deref() == Some("localhost")),
        ),
        ("port", "8888", Some(|j| j.engine.port == 8888)),
        ("port", "70000", None),
        (
            "protocol",
            "udp",
            Some(|j| j.engine.protocol == crate::NetProto::Udp),
        ),
        ("protocol", "sctp", None),
        ("listen", "", Some(|j| j.engine.listen)),
        ("pingpong", "1", Some(|j| j.engine.pingpong)),
        ("nodelay", "1", Some(|j| j.engine.nodelay)),
        (
            "window_size",
            "65536",
            Some(|j| j.engine.window_size == 65536),
        ),
        ("mss", "1400", Some(|j| j.engine.mss == 1400)),
        ("ttl", "4", Some(|j| j.engine.ttl == 4)),
        (
            "interface",
            "127.0.0.1",
            Some(|j| j.engine.interface.as_deref() == Some("127.0.0.1")),
        ),
        (
            "guasi_workers",
            "8",
            Some(|j| j.engine.guasi_workers == Some(8)),
        ),
        ("guasi_workers", "0", None),
        (
            "guasi_submit",
            "offload",
            Some(|j| j.engine.guasi_submit_offload),
        ),
        (
            "guasi_submit",
            "inline",
            Some(|j| !j.engine.guasi_submit_offload),
        ),
        ("guasi_submit", "sideways", None),
        ("guasi_kick", "each", Some(|j| j.engine.guasi_kick_each)),
        ("guasi_reap_runs", "1", Some(|j| j.engine.guasi_reap_runs)),
        ("guasi_reap_runs", "2", None),
    ];

    #[test]
    fn engine_options() {
        run(CASES);
    }
}
