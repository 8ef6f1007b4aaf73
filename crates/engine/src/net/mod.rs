//! fio's `net` and `netsplice` engines (engines/net.c): a job's I/O goes over a socket to a
//! peer job instead of to a file. A reading job with `listen` (TCP) or any reading job (UDP,
//! unix) binds and waits for its peer when its file is added (before the I/O phase, as fio
//! accepts at open and resets its statistics); a writing job connects to `hostname:port` (or
//! the unix socket at the file name), retrying while nobody listens yet. Writes send, reads
//! receive; with `pingpong` every block goes back the other way, so the latency is a round
//! trip. UDP writers announce the link with fio's open message, stamp each datagram with fio's
//! sequence trailer (so the reader counts lost datagrams as dropped) and end with fio's close
//! message, which ends the reader. A reader whose TCP peer closes ends too (a 0-byte read,
//! [`EngineFlags::eof_ends`]). `netsplice` moves TCP data through a pipe with splice(2) (`splice.rs`).
//! UDP to an IPv4 multicast group (224.0.0.0/4 as `hostname`) works as in fio: the reader
//! joins the group (IP_ADD_MEMBERSHIP, on `interface` or any) and binds to it, the writer
//! sends to the group with IP_MULTICAST_TTL `ttl` (and IP_MULTICAST_IF `interface`). Like fio,
//! a reader accepts no other hostname, and IPv6 multicast is refused.

use std::ffi::CString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

use fiox_job::spec::NetProto;
use fiox_job::JobSpec;

mod splice;
mod wait;

pub use wait::stop as stop_waits;

use crate::sys::errno;
use crate::{BufSpan, EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};

/// fio's link messages (struct udp_close_msg: magic and command, 32 bits each).
const LINK_MAGIC: u32 = 0x6c69_6e6b;
const LINK_OPEN: u32 = 0x98;
const LINK_CLOSE: u32 = 0x89;
/// fio's UDP sequence trailer (struct udp_seq: magic, seq, bs; 64 bits each, little endian).
const SEQ_MAGIC: u64 = 0x6573_7571_6e55_6563;
const SEQ_LEN: usize = 24;
/// How long a sender retries a connection nobody accepts yet (the receiver job may start
/// later than the sender).
const CONNECT_PATIENCE: Duration = Duration::from_secs(30);

pub(crate) struct NetEngine {
    splice: bool,
    proto: NetProto,
    listen: bool,
    pingpong: bool,
    /// The job reads (else writes); fio's net jobs are one or the other.
    reads: bool,
    nodelay: bool,
    window: u32,
    mss: u32,
    /// Where a sender connects or sends; for unix, the socket's path.
    peer: Option<SocketAddr>,
    unix_path: Option<CString>,
    /// The unix socket this reader bound, by identity: removed when the engine goes (N8: fio
    /// leaves it behind), and only if that name is still this socket.
    bound: Option<(std::path::PathBuf, fiox_guard::Identity)>,
    listen_fd: RawFd,
    fd: RawFd,
    /// netsplice's pipe.
    pipe: [RawFd; 2],
    /// UDP sequence numbers sent and expected; datagrams the reader missed.
    send_seq: u64,
    recv_seq: u64,
    seq_off: bool,
    dropped: u64,
    /// The UDP writer stamps its datagrams (not with verify, as fio).
    stamp: bool,
    /// A UDP reader: who sent the last datagram, where its pingpong replies go (fio's
    /// recvfrom into its address): the writer, never the group or nobody.
    reply_to: Option<(libc::sockaddr_storage, libc::socklen_t)>,
    /// UDP multicast: the group `hostname` names, the writer's TTL, `interface`.
    group: Option<Ipv4Addr>,
    ttl: u32,
    interface: Option<Ipv4Addr>,
}

fn opt(reason: impl Into<String>, option: &'static str) -> EngineError {
    EngineError::Option {
        engine: "net",
        option,
        reason: reason.into(),
    }
}

fn os(what: &str) -> EngineError {
    EngineError::Os {
        engine: "net",
        what: what.to_string(),
        source: std::io::Error::last_os_error(),
    }
}

/// fio's init checks, in its order.
fn check(job: &JobSpec, proto: NetProto) -> Result<(), EngineError> {
    let (e, rw) = (&job.engine, job.rw.mode);
    if rw.is_random() {
        return Err(opt("network I/O can't be random (as in fio)", "rw"));
    }
    if proto == NetProto::Unix && e.port != 0 {
        return Err(opt(
            "port is not valid with a unix socket (as in fio)",
            "port",
        ));
    }
    if proto != NetProto::Unix && e.port == 0 {
        return Err(opt("tcp and udp need port= (as in fio)", "port"));
    }
    if !proto.is_tcp() {
        if e.listen {
            return Err(opt("listen is only valid for TCP (as in fio)", "listen"));
        }
        if rw.has_read() && rw.has_write() {
            return Err(opt(
                "datagram and unix connections must be read OR write (as in fio)",
                "rw",
            ));
        }
    }
    Ok(())
}

/// The address a sender goes to: an address, or a name resolved in the protocol's family.
fn resolve(host: &str, port: u16, v6: bool) -> Result<SocketAddr, EngineError> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| opt(format!("cannot resolve '{host}': {e}"), "hostname"))?
        .find(|a| a.is_ipv6() == v6)
        .ok_or_else(|| {
            opt(
                format!("'{host}' has no address of the protocol's family"),
                "hostname",
            )
        })
}

/// A sockaddr for `addr` and its length.
fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid; the fields set below fit inside it.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage, which is suitably aligned.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage, which is suitably aligned.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// A sockaddr_un for `path` and its length.
fn sockaddr_un(path: &CString) -> Result<(libc::sockaddr_un, libc::socklen_t), EngineError> {
    // SAFETY: an all-zero sockaddr_un is valid.
    let mut sun: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_bytes();
    if bytes.len() >= sun.sun_path.len() {
        return Err(opt("the unix socket path is too long", "filename"));
    }
    for (d, &b) in sun.sun_path.iter_mut().zip(bytes) {
        *d = b as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    Ok((sun, len as libc::socklen_t))
}

fn setopt(fd: RawFd, level: i32, name: i32, val: i32, what: &str) -> Result<(), EngineError> {
    // SAFETY: the option value is a live c_int of the size given.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&val as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(os(what));
    }
    Ok(())
}

impl NetEngine {
    pub fn new(job: &JobSpec, splice: bool) -> Result<NetEngine, EngineError> {
        let e = &job.engine;
        let proto = e.protocol;
        check(job, proto)?;
        let reads = job.rw.mode.has_read();
        // fio: a UDP or unix reader listens; numjobs clones take the next ports.
        let listen = if proto.is_tcp() { e.listen } else { reads };
        let port = (e.port + job.clone_index).min(65535) as u16;
        let file = job.files.filenames.first().cloned();
        let mut n = NetEngine {
            splice: splice && proto.is_tcp(),
            proto,
            listen,
            pingpong: e.pingpong,
            reads,
            nodelay: e.nodelay,
            window: e.window_size,
            mss: e.mss,
            peer: None,
            unix_path: None,
            bound: None,
            listen_fd: -1,
            fd: -1,
            pipe: [-1; 2],
            send_seq: 0,
            recv_seq: 0,
            seq_off: false,
            dropped: 0,
            stamp: proto.is_udp() && job.verify.method == fiox_job::VerifyMethod::None,
            reply_to: None,
            group: None,
            ttl: 1,
            interface: None,
        };
        if proto == NetProto::Unix {
            let p =
                file.ok_or_else(|| opt("unix sockets need a filename (as in fio)", "filename"))?;
            n.unix_path =
                Some(CString::new(p).map_err(|_| opt("NUL in the socket path", "filename"))?);
        } else if let Some(h) = file.filter(|h| !h.is_empty()) {
            n.group = multicast_group(&h, job)?;
            if n.group.is_some() {
                n.ttl = e.ttl;
                n.interface = interface(job)?;
            } else if listen {
                let v6 = h
                    .parse::<std::net::Ipv6Addr>()
                    .is_ok_and(|a| a.is_multicast());
                let why = if v6 {
                    "an IPv6 multicast group: fio supports multicast on IPv4 only"
                } else {
                    "not a multicast group: a receiving job takes a hostname only for UDP multicast (as in fio; drop hostname= from the reader)"
                };
                return Err(opt(format!("'{h}' is {why}"), "hostname"));
            }
            if !listen {
                n.peer = Some(resolve(&h, port, proto.is_ipv6())?);
            }
        } else if !listen {
            return Err(opt(
                "a sender needs hostname= (did you forget to set listen on the reader?)",
                "hostname",
            ));
        }
        if n.splice {
            // SAFETY: pipe2 writes two fds into the array.
            if unsafe { libc::pipe2(n.pipe.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
                return Err(os("pipe"));
            }
        }
        if listen {
            n.bind(port)?;
        }
        Ok(n)
    }

    fn family(&self) -> (i32, i32) {
        let ty = if self.proto.is_udp() {
            libc::SOCK_DGRAM
        } else {
            libc::SOCK_STREAM
        };
        let dom = match self.proto {
            NetProto::Unix => libc::AF_UNIX,
            p if p.is_ipv6() => libc::AF_INET6,
            _ => libc::AF_INET,
        };
        (dom, ty)
    }

    fn socket(&self) -> Result<RawFd, EngineError> {
        let (dom, ty) = self.family();
        // SAFETY: plain syscall.
        let fd = unsafe { libc::socket(dom, ty | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(os("socket"));
        }
        Ok(fd)
    }

    /// window_size and mss, as fio sets them on every socket.
    fn tune(&self, fd: RawFd) -> Result<(), EngineError> {
        if self.window > 0 {
            let w = self.window as i32;
            setopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                w,
                "setsockopt SO_RCVBUF",
            )?;
            setopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                w,
                "setsockopt SO_SNDBUF",
            )?;
        }
        if self.mss > 0 && self.proto.is_tcp() {
            setopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_MAXSEG,
                self.mss as i32,
                "setsockopt TCP_MAXSEG",
            )?;
        }
        Ok(())
    }

    /// The listening (TCP, unix) or receiving (UDP) socket.
    fn bind(&mut self, port: u16) -> Result<(), EngineError> {
        let fd = self.socket()?;
        self.listen_fd = fd;
        let r = if let Some(path) = &self.unix_path {
            // fio removes a stale socket file first: the guard removes only a socket there.
            let p = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
            let _ = fiox_guard::named::remove_stale_socket(p);
            let (sun, len) = sockaddr_un(path)?;
            // SAFETY: a valid sockaddr_un of `len` bytes.
            unsafe { libc::bind(fd, (&sun as *const libc::sockaddr_un).cast(), len) }
        } else {
            setopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                1,
                "setsockopt SO_REUSEADDR",
            )?;
            setopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_REUSEPORT,
                1,
                "setsockopt SO_REUSEPORT",
            )?;
            self.tune(fd)?;
            let any: IpAddr = if self.proto.is_ipv6() {
                std::net::Ipv6Addr::UNSPECIFIED.into()
            } else {
                self.join(fd)?.unwrap_or(Ipv4Addr::UNSPECIFIED).into()
            };
            let (ss, len) = sockaddr(&SocketAddr::new(any, port));
            // SAFETY: a valid sockaddr of `len` bytes.
            unsafe { libc::bind(fd, (&ss as *const libc::sockaddr_storage).cast(), len) }
        };
        if r < 0 {
            return Err(os(&format!("bind (port {port})")));
        }
        if let Some(path) = &self.unix_path {
            let p = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
            if let Ok(Some(id)) = fiox_guard::named::bound_socket(p) {
                self.bound = Some((p.to_path_buf(), id));
            }
        }
        // SAFETY: plain syscall on our socket.
        if !self.proto.is_udp() && unsafe { libc::listen(fd, 10) } < 0 {
            return Err(os("listen"));
        }
        Ok(())
    }

    /// A multicast reader joins its group (on `interface`, else any) and binds to it, as fio.
    fn join(&self, fd: RawFd) -> Result<Option<Ipv4Addr>, EngineError> {
        let Some(g) = self.group else {
            return Ok(None);
        };
        let mr = libc::ip_mreq {
            imr_multiaddr: in_addr(g),
            imr_interface: in_addr(self.interface.unwrap_or(Ipv4Addr::UNSPECIFIED)),
        };
        let what = "setsockopt IP_ADD_MEMBERSHIP";
        setopt_raw(fd, libc::IPPROTO_IP, libc::IP_ADD_MEMBERSHIP, &mr, what)?;
        Ok(Some(g))
    }

    /// A multicast writer's TTL and interface, as fio sets them.
    fn multicast_sender(&self) -> Result<(), EngineError> {
        if self.group.is_none() {
            return Ok(());
        }
        if let Some(i) = self.interface {
            let what = "setsockopt IP_MULTICAST_IF";
            setopt_raw(
                self.fd,
                libc::IPPROTO_IP,
                libc::IP_MULTICAST_IF,
                &in_addr(i),
                what,
            )?;
        }
        let ttl = i32::try_from(self.ttl).unwrap_or(i32::MAX);
        let what = "setsockopt IP_MULTICAST_TTL";
        setopt_raw(
            self.fd,
            libc::IPPROTO_IP,
            libc::IP_MULTICAST_TTL,
            &ttl,
            what,
        )
    }

    /// Accept the peer (TCP, unix) or wait for its open message (UDP).
    fn accept(&mut self) -> Result<(), EngineError> {
        if self.proto.is_udp() {
            self.fd = self.listen_fd;
            self.listen_fd = -1;
            return self.recv_open();
        }
        wait::ready(self.listen_fd, libc::POLLIN).map_err(|e| EngineError::Os {
            engine: "net",
            what: "wait for the peer to connect".into(),
            source: std::io::Error::from_raw_os_error(e),
        })?;
        // SAFETY: plain syscall; the peer's address is not needed.
        let fd = unsafe {
            libc::accept4(
                self.listen_fd,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(os("accept"));
        }
        self.fd = fd;
        if self.nodelay && self.proto.is_tcp() {
            setopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                1,
                "setsockopt TCP_NODELAY",
            )?;
        }
        Ok(())
    }

    /// Connect to the peer, retrying while it is not listening yet.
    fn connect(&mut self) -> Result<(), EngineError> {
        let start = Instant::now();
        loop {
            let fd = self.socket()?;
            if self.nodelay && self.proto.is_tcp() {
                setopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_NODELAY,
                    1,
                    "setsockopt TCP_NODELAY",
                )?;
            }
            self.tune(fd)?;
            if self.proto.is_udp() {
                self.fd = fd;
                self.multicast_sender()?;
                return self.send_link(LINK_OPEN);
            }
            let r = if let Some(path) = &self.unix_path {
                let (sun, len) = sockaddr_un(path)?;
                // SAFETY: a valid sockaddr_un of `len` bytes.
                unsafe { libc::connect(fd, (&sun as *const libc::sockaddr_un).cast(), len) }
            } else {
                let peer = self
                    .peer
                    .ok_or_else(|| opt("no peer address", "hostname"))?;
                let (ss, len) = sockaddr(&peer);
                // SAFETY: a valid sockaddr of `len` bytes.
                unsafe { libc::connect(fd, (&ss as *const libc::sockaddr_storage).cast(), len) }
            };
            if r == 0 {
                self.fd = fd;
                return Ok(());
            }
            let e = errno();
            // SAFETY: our socket, closed once.
            unsafe { libc::close(fd) };
            let waiting = matches!(e, libc::ECONNREFUSED | libc::ENOENT);
            if !waiting || start.elapsed() > CONNECT_PATIENCE || wait::stopping() {
                return Err(EngineError::Os {
                    engine: "net",
                    what: "connect".into(),
                    source: std::io::Error::from_raw_os_error(e),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// fio's link message to the UDP peer.
    fn send_link(&self, cmd: u32) -> Result<(), EngineError> {
        let mut msg = [0u8; 8];
        // fio sends the open message in network order and the close message little endian.
        if cmd == LINK_OPEN {
            msg[..4].copy_from_slice(&LINK_MAGIC.to_be_bytes());
            msg[4..].copy_from_slice(&cmd.to_be_bytes());
        } else {
            msg[..4].copy_from_slice(&LINK_MAGIC.to_le_bytes());
            msg[4..].copy_from_slice(&cmd.to_le_bytes());
        }
        let peer = self
            .peer
            .ok_or_else(|| opt("no peer address", "hostname"))?;
        let (ss, len) = sockaddr(&peer);
        // SAFETY: the message and the address are live for the call.
        let r = unsafe {
            libc::sendto(
                self.fd,
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&ss as *const libc::sockaddr_storage).cast(),
                len,
            )
        };
        if r < 0 {
            return Err(os("sendto udp link message"));
        }
        Ok(())
    }

    /// The UDP reader waits for the writer's open message.
    fn recv_open(&mut self) -> Result<(), EngineError> {
        wait::ready(self.fd, libc::POLLIN).map_err(|e| EngineError::Os {
            engine: "net",
            what: "wait for the udp link open message".into(),
            source: std::io::Error::from_raw_os_error(e),
        })?;
        let mut msg = [0u8; 8];
        // SAFETY: msg is a live buffer of its length.
        let r = unsafe {
            libc::recv(
                self.fd,
                msg.as_mut_ptr().cast(),
                msg.len(),
                libc::MSG_WAITALL,
            )
        };
        if r < 0 {
            return Err(os("recvfrom udp link open"));
        }
        let magic = u32::from_be_bytes([msg[0], msg[1], msg[2], msg[3]]);
        let cmd = u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]);
        if r != 8 || magic != LINK_MAGIC || cmd != LINK_OPEN {
            return Err(opt("bad udp link open message from the peer", "protocol"));
        }
        Ok(())
    }

    /// Send one block: `len` or `-errno`.
    fn send(&mut self, span: BufSpan) -> i64 {
        let (buf, len) = (span.as_ptr(), span.len() as usize);
        if self.stamp && len >= SEQ_LEN {
            let mut t = [0u8; SEQ_LEN];
            t[..8].copy_from_slice(&SEQ_MAGIC.to_le_bytes());
            t[8..16].copy_from_slice(&self.send_seq.to_le_bytes());
            t[16..].copy_from_slice(&(len as u64).to_le_bytes());
            self.send_seq += 1;
            // SAFETY: the trailer lies inside the unit's buffer of `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(t.as_ptr(), buf.add(len - SEQ_LEN), SEQ_LEN) };
        }
        if self.splice {
            return splice::out(self.pipe, self.fd, span);
        }
        loop {
            let r = if self.proto.is_udp() {
                let (ss, sl) = match (self.reply_to, self.peer) {
                    (Some(to), _) if self.reads => to,
                    (_, Some(peer)) => sockaddr(&peer),
                    _ => return -(libc::EDESTADDRREQ as i64),
                };
                // SAFETY: buffer and address are live for the call.
                unsafe {
                    libc::sendto(
                        self.fd,
                        buf.cast(),
                        len,
                        0,
                        (&ss as *const libc::sockaddr_storage).cast(),
                        sl,
                    )
                }
            } else {
                // SAFETY: the unit's buffer of `len` bytes.
                unsafe { libc::send(self.fd, buf.cast(), len, libc::MSG_NOSIGNAL) }
            };
            if r > 0 {
                return r as i64;
            }
            if r < 0 && errno() != libc::EAGAIN && errno() != libc::EINTR {
                return -(errno() as i64);
            }
            if let Err(e) = wait::ready(self.fd, libc::POLLOUT) {
                return -(e as i64);
            }
        }
    }

    /// Receive up to one block: bytes, 0 at the peer's end (EOF or UDP close) or when the run
    /// stops while waiting, or `-errno`. A stream fills the whole block unless it ends (as
    /// MSG_WAITALL), a datagram is one block.
    fn recv(&mut self, span: BufSpan) -> i64 {
        let (buf, len) = (span.as_ptr(), span.len() as usize);
        if self.splice {
            return splice::input(self.pipe, self.fd, span);
        }
        let udp = self.proto.is_udp();
        let mut got = 0usize;
        loop {
            let r = self.recv_now(span, got);
            if r > 0 {
                got += r as usize;
                if udp || got == len {
                    break;
                }
                continue;
            }
            if r == 0 {
                return got as i64;
            }
            match errno() {
                libc::EINTR => continue,
                libc::EAGAIN => match wait::ready(self.fd, libc::POLLIN) {
                    Ok(()) => continue,
                    Err(libc::EINTR) => return got as i64,
                    Err(e) => return -(e as i64),
                },
                e => return -(e as i64),
            }
        }
        if udp {
            // SAFETY: got <= len bytes were just written into the buffer.
            let data = unsafe { std::slice::from_raw_parts(buf, got) };
            if got == 8
                && data[..4] == LINK_MAGIC.to_le_bytes()
                && data[4..] == LINK_CLOSE.to_le_bytes()
            {
                return 0;
            }
            if self.stamp {
                self.check_seq(data, len);
            }
        }
        got as i64
    }

    /// One non-blocking recv into the span from byte `at` on (a UDP reader records the
    /// sender).
    fn recv_now(&mut self, span: BufSpan, at: usize) -> isize {
        let (buf, len) = (span.as_ptr(), span.len() as usize);
        let at = at.min(len);
        // SAFETY: an all-zero sockaddr_storage is valid.
        let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut from_len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        let record = self.proto.is_udp() && self.reads;
        let (fp, lp) = if record {
            (
                (&mut from as *mut libc::sockaddr_storage).cast(),
                &mut from_len as *mut libc::socklen_t,
            )
        } else {
            (std::ptr::null_mut(), std::ptr::null_mut())
        };
        // SAFETY: buf[at..len] lies inside the unit's buffer; `from` and its length are live
        // for the call (or both null).
        let r = unsafe {
            libc::recvfrom(
                self.fd,
                buf.add(at).cast(),
                len - at,
                libc::MSG_DONTWAIT,
                fp,
                lp,
            )
        };
        if r > 0 && record {
            self.reply_to = Some((from, from_len));
        }
        r
    }

    /// fio's verify_udp_seq: a gap in the writer's sequence counts as dropped I/Os.
    fn check_seq(&mut self, got: &[u8], len: usize) {
        if self.seq_off || got.len() < SEQ_LEN || got.len() != len {
            return;
        }
        let t = &got[got.len() - SEQ_LEN..];
        let word = |i: usize| u64::from_le_bytes(t[i..i + 8].try_into().unwrap_or([0; 8]));
        if word(0) != SEQ_MAGIC {
            return;
        }
        if word(16) != len as u64 {
            self.seq_off = true;
            return;
        }
        let seq = word(8);
        if seq > self.recv_seq {
            self.dropped += seq - self.recv_seq;
        }
        self.recv_seq = seq + 1;
    }

    /// One direction of a unit: the full length, a short count, 0 at the end, or `-errno`.
    fn xfer(&mut self, op: IoOp, buf: BufSpan) -> i64 {
        match op {
            IoOp::Write => self.send(buf),
            IoOp::Read => self.recv(buf),
            _ => 0,
        }
    }
}

/// The multicast group `host` names, for UDP (fio's test: an IPv4 address in
/// 224.0.0.0-239.255.255.255); an error for an IPv4 group over udpv6, which fio refuses too.
fn multicast_group(host: &str, job: &JobSpec) -> Result<Option<Ipv4Addr>, EngineError> {
    let proto = job.engine.protocol;
    let Some(g) = host.parse::<Ipv4Addr>().ok().filter(|a| a.is_multicast()) else {
        return Ok(None);
    };
    if !proto.is_udp() {
        return Ok(None);
    }
    if proto.is_ipv6() {
        return Err(opt(
            format!("multicast group {g} over udpv6: fio supports multicast on IPv4 only (use protocol=udp)"),
            "hostname",
        ));
    }
    Ok(Some(g))
}

/// `interface`: the IPv4 address of the interface multicast goes through.
fn interface(job: &JobSpec) -> Result<Option<Ipv4Addr>, EngineError> {
    let Some(i) = job.engine.interface.as_deref() else {
        return Ok(None);
    };
    i.parse().map(Some).map_err(|_| {
        opt(
            format!(
                "'{i}' is not an interface's IPv4 address (as fio wants, e.g. interface=127.0.0.1)"
            ),
            "interface",
        )
    })
}

/// An `in_addr` holding `a`.
fn in_addr(a: Ipv4Addr) -> libc::in_addr {
    libc::in_addr {
        s_addr: u32::from_ne_bytes(a.octets()),
    }
}

/// setsockopt with a value of any plain type.
fn setopt_raw<T>(fd: RawFd, level: i32, name: i32, val: &T, what: &str) -> Result<(), EngineError> {
    // SAFETY: `val` is a live value of the size given, as the option expects.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (val as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(os(what));
    }
    Ok(())
}

impl NetEngine {
    /// Which of the two engines this is.
    fn kind(&self) -> fiox_job::Engine {
        if self.splice {
            fiox_job::Engine::Netsplice
        } else {
            fiox_job::Engine::Net
        }
    }
}

impl IoEngine for NetEngine {
    fn name(&self) -> &'static str {
        self.kind().name()
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: true,
            no_io: self.kind().is_diskless(),
            eof_ends: true,
            ..EngineFlags::default()
        }
    }

    fn add_file(&mut self, _file: &EngineFile) -> Result<(), EngineError> {
        if self.fd >= 0 {
            return Ok(());
        }
        if self.listen {
            self.accept()
        } else {
            self.connect()
        }
    }

    fn reopen_file(&mut self, _index: u32, _file: &EngineFile) -> Result<(), EngineError> {
        Ok(())
    }

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        let buf = io.buf();
        let r = self.xfer(io.op, buf);
        if r <= 0 || !self.pingpong {
            return Ok(Queued::Done(r));
        }
        // pingpong: the reader sends the block back, the writer waits for it.
        let back = match io.op {
            IoOp::Read if self.reads => IoOp::Write,
            IoOp::Write if !self.reads => IoOp::Read,
            _ => return Ok(Queued::Done(r)),
        };
        let b = self.xfer(back, buf.prefix(r as u32).unwrap_or(buf));
        Ok(Queued::Done(if b < 0 { b } else { r }))
    }

    fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl Drop for NetEngine {
    fn drop(&mut self) {
        // fio's close: a UDP writer tells the reader the link is closing.
        if self.proto.is_udp() && !self.reads && self.fd >= 0 {
            let _ = self.send_link(LINK_CLOSE);
        }
        for fd in [self.fd, self.listen_fd, self.pipe[0], self.pipe[1]] {
            if fd >= 0 {
                // SAFETY: our own fds, each closed once here.
                unsafe { libc::close(fd) };
            }
        }
        if let Some((path, id)) = self.bound.take() {
            let _ = fiox_guard::named::remove_made(&path, &id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::{RwMode, RwSpec};

    fn job(mode: RwMode, proto: NetProto, port: u32) -> JobSpec {
        let mut j = JobSpec {
            ioengine: "net".into(),
            rw: RwSpec { mode, n: 0 },
            ..JobSpec::default()
        };
        j.engine.protocol = proto;
        j.engine.port = port;
        j
    }

    #[test]
    fn fios_checks() {
        let e = |j: &JobSpec| NetEngine::new(j, false).err().unwrap().to_string();
        assert!(e(&job(RwMode::RandRead, NetProto::Tcp, 1)).contains("random"));
        assert!(e(&job(RwMode::Read, NetProto::Tcp, 0)).contains("port="));
        assert!(e(&job(RwMode::Read, NetProto::Unix, 5)).contains("unix"));
        assert!(e(&job(RwMode::ReadWrite, NetProto::Udp, 5)).contains("read OR write"));
        assert!(e(&job(RwMode::Write, NetProto::Tcp, 5)).contains("hostname="));
        let mut mc = job(RwMode::Write, NetProto::Udpv6, 5);
        mc.files.filenames = vec!["239.1.1.1".into()];
        assert!(e(&mc).contains("IPv4 only"));
        mc.engine.protocol = NetProto::Udp;
        mc.engine.interface = Some("lo".into());
        assert!(e(&mc).contains("interface=127.0.0.1"));
        let mut rx = job(RwMode::Read, NetProto::Udp, 5);
        rx.files.filenames = vec!["127.0.0.1".into()];
        assert!(e(&rx).contains("not a multicast group"));
        rx.engine.protocol = NetProto::Udpv6;
        rx.files.filenames = vec!["ff05::1".into()];
        assert!(e(&rx).contains("IPv4 only"));
    }

    /// A multicast writer sets fio's TTL and interface on its socket; a reader joins.
    #[test]
    fn multicast_socket_options() {
        let mut w = job(
            RwMode::Write,
            NetProto::Udp,
            45_000 + std::process::id() % 10_000,
        );
        w.files.filenames = vec!["239.7.7.7".into()];
        w.engine.ttl = 3;
        w.engine.interface = Some("127.0.0.1".into());
        let mut r = w.clone();
        r.rw.mode = RwMode::Read;
        let mut rx = NetEngine::new(&r, false).unwrap();
        let mut tx = NetEngine::new(&w, false).unwrap();
        tx.connect().unwrap();
        let get = |fd: RawFd, name: i32| {
            let mut v = [0u8; 4];
            let mut len = 4 as libc::socklen_t;
            // SAFETY: a 4-byte buffer and its length.
            let rc = unsafe {
                libc::getsockopt(fd, libc::IPPROTO_IP, name, v.as_mut_ptr().cast(), &mut len)
            };
            assert_eq!(rc, 0);
            v
        };
        assert_eq!(get(tx.fd, libc::IP_MULTICAST_TTL)[0], 3);
        assert_eq!(get(tx.fd, libc::IP_MULTICAST_IF), [127, 0, 0, 1]);
        // The open message reached the group's member.
        rx.accept().unwrap();
    }

    #[test]
    fn udp_sequence_gaps_count_as_dropped() {
        let mut e = unreachable_engine();
        e.stamp = true;
        let block = |seq: u64| {
            let mut b = vec![0u8; 64];
            b[40..48].copy_from_slice(&SEQ_MAGIC.to_le_bytes());
            b[48..56].copy_from_slice(&seq.to_le_bytes());
            b[56..].copy_from_slice(&64u64.to_le_bytes());
            b
        };
        for s in [0, 1, 4, 5] {
            e.check_seq(&block(s), 64);
        }
        assert_eq!(e.dropped, 2);
    }

    /// An engine value for tests of the pure helpers (no sockets).
    fn unreachable_engine() -> NetEngine {
        NetEngine {
            splice: false,
            proto: NetProto::Udp,
            listen: false,
            pingpong: false,
            reads: true,
            nodelay: false,
            window: 0,
            mss: 0,
            peer: None,
            unix_path: None,
            bound: None,
            listen_fd: -1,
            fd: -1,
            pipe: [-1; 2],
            send_seq: 0,
            recv_seq: 0,
            seq_off: false,
            dropped: 0,
            stamp: true,
            reply_to: None,
            group: None,
            ttl: 1,
            interface: None,
        }
    }
}
