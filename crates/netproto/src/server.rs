//! The server's side of fio's protocol: where it listens ([`Listen`], fio's `--server` forms)
//! and one connection's conversation ([`serve`]), as fio 3.33's server holds it:
//!
//! PROBE is answered with who the server is; a JOB (job file text), JOBLINE (command line)
//! or LOAD_FILE (a job file on the server) is parsed by the [`Backend`] and answered with
//! the job lines as TEXT, then START; RUN runs the jobs in a thread while SEND_ETA keeps
//! being answered from the run's progress; the results go back as JOB_OPT, TS, GS and DU,
//! then STOP and QUIT, and the connection is closed. A QUIT from the client stops a running
//! job (its results still come back) or ends the connection; EXIT ends the server too.
//!
//! Any protocol error ends that connection only (the caller logs it).

use crate::frame::{self, Limits, Message, Reader, TimedRead};
use crate::pdu::{self, Eta};
use crate::{Opcode, ProtoError, DEFAULT_PORT};
use std::io::Write;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where `--server` listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address (IPv4 or IPv6) and port.
    Tcp(IpAddr, u16),
    /// A unix domain socket at this path (`sock:PATH`).
    Unix(String),
}

/// Parse fio's `--server` argument: `sock:PATH`, `ip:HOST[,PORT]`, `ip4:HOST[,PORT]`,
/// `ip6:HOST[,PORT]`, `:PORT`, `HOST[,PORT]`, or nothing. Unlike fio (which listens on every
/// address by default), fiox listens on loopback unless an address is given.
pub fn parse_listen(arg: Option<&str>) -> Result<Listen, String> {
    let arg = arg.unwrap_or("");
    if let Some(p) = arg.strip_prefix("sock:") {
        if p.is_empty() {
            return Err("sock: needs a path (sock:/path/to/socket)".into());
        }
        return Ok(Listen::Unix(p.to_string()));
    }
    let (v6, host) = if let Some(h) = arg.strip_prefix("ip6:") {
        (true, h)
    } else if let Some(h) = arg.strip_prefix("ip4:").or_else(|| arg.strip_prefix("ip:")) {
        (false, h)
    } else if let Some(p) = arg.strip_prefix(':') {
        return Ok(Listen::Tcp(loopback(false), port(p)?));
    } else {
        (false, arg)
    };
    let (host, port) = match host.split_once(',') {
        Some((h, p)) => (h, crate::server::port(p)?),
        None => (host, DEFAULT_PORT),
    };
    if host.is_empty() {
        return Ok(Listen::Tcp(loopback(v6), port));
    }
    let ip = resolve(host, v6)?;
    Ok(Listen::Tcp(ip, port))
}

fn loopback(v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)
    } else {
        IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)
    }
}

fn port(p: &str) -> Result<u16, String> {
    match p.trim().parse::<u16>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("bad server port '{p}' (1 to 65535)")),
    }
}

/// An address, or a host name resolved to one of the asked family.
fn resolve(host: &str, v6: bool) -> Result<IpAddr, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return if ip.is_ipv6() == v6 {
            Ok(ip)
        } else if v6 {
            Err(format!("{host} is not an IPv6 address (ip6: asks for one)"))
        } else {
            Err(format!("{host} is an IPv6 address: write ip6:{host}"))
        };
    }
    use std::net::ToSocketAddrs;
    let addrs = (host, 0)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve host '{host}': {e}"))?;
    addrs
        .map(|a| a.ip())
        .find(|ip| ip.is_ipv6() == v6)
        .ok_or_else(|| format!("host '{host}' has no IPv{} address", if v6 { 6 } else { 4 }))
}

/// A connection's stream: read with limits, written by two threads, shut down by the run.
pub trait Conn: TimedRead + Write + Send {
    fn clone_conn(&self) -> std::io::Result<Box<dyn Conn>>;
    /// End the connection both ways (unblocks a read in another thread).
    fn shutdown_conn(&self);
    /// End the sending side only (the peer reads the end; what it still sends can be read).
    fn shutdown_write(&self);
}

impl Conn for std::net::TcpStream {
    fn clone_conn(&self) -> std::io::Result<Box<dyn Conn>> {
        Ok(Box::new(self.try_clone()?))
    }
    fn shutdown_conn(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
    fn shutdown_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl Conn for std::os::unix::net::UnixStream {
    fn clone_conn(&self) -> std::io::Result<Box<dyn Conn>> {
        Ok(Box::new(self.try_clone()?))
    }
    fn shutdown_conn(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
    fn shutdown_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl TimedRead for Box<dyn Conn> {
    fn set_limit(&mut self, t: Option<Duration>) -> std::io::Result<()> {
        (**self).set_limit(t)
    }
}

/// The sending half, shared by the connection's reader (replies) and the run (output).
#[derive(Clone)]
pub struct Outbox {
    w: Arc<Mutex<Box<dyn Conn>>>,
}

impl Outbox {
    pub fn send(&self, op: Opcode, tag: u64, payload: &[u8]) -> std::io::Result<()> {
        let bytes = frame::encode(op, 0, tag, payload);
        let mut w = self.w.lock().unwrap_or_else(|p| p.into_inner());
        w.write_all(&bytes)?;
        w.flush()
    }
    /// Output lines, as fio's server sends its log: the client prints them after `<host> `.
    pub fn text(&self, level: u32, s: &str) -> std::io::Result<()> {
        self.send(
            Opcode::Text,
            0,
            &pdu::text(level, s, std::time::SystemTime::now()),
        )
    }
    fn shutdown(&self) {
        self.w
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .shutdown_conn();
    }
    /// The last message is sent: end the sending side, so the client reads everything and
    /// closes; a close of both sides now would turn the client's late messages (an ETA
    /// request in flight) into a reset that can destroy results it has not read yet.
    fn finish(&self) {
        self.w
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .shutdown_write();
    }
}

/// How long a connection waits for the client to close once everything is sent.
const LINGER: Duration = Duration::from_secs(5);

/// The run's progress, read when the client asks for an ETA.
pub type EtaCell = Arc<Mutex<Eta>>;

/// Where the jobs come from: the client's command line (JOBLINE, without the program name;
/// it may define jobs, or only options for the job file that follows) and a job file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobInput {
    pub args: Vec<String>,
    pub file: JobFile,
}

/// The job file of a [`JobInput`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum JobFile {
    /// None yet: the command line alone.
    #[default]
    None,
    /// A job file's text (JOB).
    Text(String),
    /// A job file on the server (LOAD_FILE, the client's `--remote-config`).
    Path(String),
}

/// What the backend made of the jobs: how many there are, how many results will follow,
/// and the lines fio prints for each job before the run.
pub struct Prepared {
    pub jobs: u32,
    pub stat_outputs: u32,
    pub lines: Vec<String>,
    /// None: the input defines no job (a command line carrying only options).
    pub run: Option<Box<dyn PreparedRun>>,
}

/// What a finished run sends back.
pub struct Finished {
    /// `[global]` options, for the client's JSON `global options`.
    pub global_options: Vec<(String, String)>,
    /// One TS payload per result, with its options (`job options`).
    pub results: Vec<JobReport>,
    /// One GS payload per group.
    pub groups: Vec<Vec<u8>>,
    /// One DU payload per disk.
    pub disks: Vec<Vec<u8>>,
    /// One IOLOG payload per log the jobs wrote ([`crate::iolog::stored`]).
    pub logs: Vec<Vec<u8>>,
    /// fio's STOP: the run's error (0: none) and the signal that stopped it (0: none).
    pub error: u32,
    pub signal: u32,
    /// The client asked for fio's normal output: its server then sends the normal report's
    /// leading newline as TEXT (JSON and terse alone get no text).
    pub normal: bool,
}

/// One result: its TS payload and the job's options (the client's JSON `job options`).
pub type JobReport = (Vec<u8>, Vec<(String, String)>);

/// A parsed job, ready to run.
pub trait PreparedRun: Send {
    /// Run the jobs; informational lines go to `out` as TEXT, progress into `eta`.
    fn run(self: Box<Self>, out: &Outbox, eta: &EtaCell) -> Finished;
}

/// What the server does with jobs (the binary parses and runs them with fiox's runner).
pub trait Backend {
    /// The server's PROBE reply fields: host name, version text, CPUs.
    fn identity(&self) -> (String, String, u32);
    /// Parse the jobs. Err: the message for the client (fio prints it and stops).
    fn prepare(&mut self, input: JobInput) -> Result<Prepared, String>;
    /// Ask a running run to stop (a QUIT from the client).
    fn stop(&self);
}

/// How a connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// The run finished and was reported, or the client left.
    Done,
    /// The client sent EXIT: the server should stop listening.
    Exit,
}

/// How long a connection may stay silent before its job runs: a client that connects and
/// says nothing is dropped (during a run the client may be silent for as long as it lasts).
pub const IDLE_BEFORE_RUN: Duration = Duration::from_secs(120);

/// Hold one connection's conversation until it ends.
pub fn serve(conn: Box<dyn Conn>, backend: &mut dyn Backend) -> Result<Ended, ProtoError> {
    let out = Outbox {
        w: Arc::new(Mutex::new(conn.clone_conn()?)),
    };
    let mut reader = Reader::new(
        conn,
        Limits {
            idle: Some(IDLE_BEFORE_RUN),
            ..frame::Limits::default()
        },
    );
    let eta: EtaCell = Arc::new(Mutex::new(Eta::default()));
    let mut prepared: Option<Box<dyn PreparedRun>> = None;
    let mut args: Vec<String> = Vec::new();
    let mut running: Option<std::thread::JoinHandle<()>> = None;
    // Set once the results and QUIT are sent; this side's handle also tells the run that the
    // reader is still waiting for the client to close.
    let sent = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let is_sent = |s: &std::sync::atomic::AtomicBool| s.load(std::sync::atomic::Ordering::SeqCst);
    loop {
        let m = match reader.read_message() {
            Ok(Some(m)) => m,
            // The client closes once it has read QUIT: a clean end.
            Ok(None) => break,
            Err(_) if is_sent(&sent) => break,
            Err(e) => {
                backend.stop();
                drop(sent);
                join(running);
                return Err(e);
            }
        };
        if is_sent(&sent) {
            // Everything is sent (an ETA request crossed QUIT): wait for the close.
            continue;
        }
        match handle(&m, backend, &out, &eta, &mut prepared, &mut args)? {
            Step::Continue => {}
            Step::Run => {
                let Some(run) = prepared.take() else {
                    out.text(pdu::LOG_ERR, "fio: RUN before any job was sent\n")?;
                    continue;
                };
                // The client may be silent for the whole run (--eta=never).
                reader.set_limits(Limits {
                    idle: None,
                    ..Limits::default()
                });
                running = Some(spawn_run(run, out.clone(), eta.clone(), sent.clone()));
            }
            Step::Quit if running.is_some() => backend.stop(),
            Step::Quit => break,
            Step::Exit => {
                backend.stop();
                drop(sent);
                join(running);
                return Ok(Ended::Exit);
            }
        }
    }
    drop(sent);
    join(running);
    Ok(Ended::Done)
}

fn join(h: Option<std::thread::JoinHandle<()>>) {
    if let Some(h) = h {
        let _ = h.join();
    }
}

enum Step {
    Continue,
    Run,
    Quit,
    Exit,
}

/// Answer one message.
fn handle(
    m: &Message,
    backend: &mut dyn Backend,
    out: &Outbox,
    eta: &EtaCell,
    prepared: &mut Option<Box<dyn PreparedRun>>,
    args: &mut Vec<String>,
) -> Result<Step, ProtoError> {
    let input = match m.op {
        Opcode::Probe => {
            let p = pdu::Probe::decode(&m.payload)?;
            let _ = p.flags; // fiox sends no compressed logs: it never sets ZLIB
            let (host, version, cpus) = backend.identity();
            let reply = pdu::ProbeReply::local(&host, &version, cpus, 0);
            out.send(Opcode::Probe, m.tag, &reply.encode())?;
            return Ok(Step::Continue);
        }
        Opcode::SendEta => {
            let e = eta.lock().unwrap_or_else(|p| p.into_inner()).encode();
            out.send(Opcode::Eta, m.tag, &e)?;
            return Ok(Step::Continue);
        }
        Opcode::Run => return Ok(Step::Run),
        Opcode::Quit => return Ok(Step::Quit),
        Opcode::Exit => return Ok(Step::Exit),
        Opcode::Job => JobInput {
            args: args.clone(),
            file: JobFile::Text(pdu::JobText::decode(&m.payload)?.text),
        },
        Opcode::JobLine => {
            let l = pdu::JobLine::decode(&m.payload)?;
            *args = l.args.into_iter().skip(1).collect();
            JobInput {
                args: args.clone(),
                file: JobFile::None,
            }
        }
        Opcode::LoadFile => JobInput {
            args: args.clone(),
            file: JobFile::Path(pdu::decode_load_file(&m.payload)?),
        },
        other => {
            // UPDATE_JOB and VTRIGGER (gfio's and --trigger-remote's), or a command only a
            // server sends: said to the client, the connection goes on.
            out.text(
                pdu::LOG_ERR,
                &format!(
                    "fiox --server: {} is not supported by fiox's server\n",
                    other.name()
                ),
            )?;
            return Ok(Step::Continue);
        }
    };
    if prepared.is_some() {
        out.text(
            pdu::LOG_ERR,
            "fiox --server: one job file (or command line) per connection; the first one \
             is kept\n",
        )?;
        return Ok(Step::Continue);
    }
    match backend.prepare(input) {
        Ok(p) => {
            for l in &p.lines {
                out.text(pdu::LOG_INFO, l)?;
            }
            out.send(Opcode::Start, 0, &pdu::start(p.jobs, p.stat_outputs))?;
            *prepared = p.run;
            Ok(Step::Continue)
        }
        Err(why) => {
            // As fio's server: the error, then QUIT (the client ends with an error).
            let mut why = why;
            if !why.ends_with('\n') {
                why.push('\n');
            }
            out.text(pdu::LOG_ERR, &why)?;
            out.send(Opcode::Quit, 0, &[])?;
            Ok(Step::Quit)
        }
    }
}

/// Run the jobs in a thread and send their results, STOP and QUIT, then close the
/// connection (which ends the reader).
fn spawn_run(
    run: Box<dyn PreparedRun>,
    out: Outbox,
    eta: EtaCell,
    sent: Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<()> {
    use std::sync::atomic::Ordering;
    std::thread::spawn(move || {
        let f = run.run(&out, &eta);
        let _ = send_finished(&out, &f);
        sent.store(true, Ordering::SeqCst);
        out.finish();
        // The client closes once it has read QUIT; one that does not is cut off.
        let t0 = std::time::Instant::now();
        while Arc::strong_count(&sent) > 1 && t0.elapsed() < LINGER {
            std::thread::sleep(Duration::from_millis(10));
        }
        out.shutdown();
    })
}

fn send_finished(out: &Outbox, f: &Finished) -> std::io::Result<()> {
    for (k, v) in &f.global_options {
        out.send(Opcode::JobOpt, 0, &pdu::job_option(true, 0, k, v))?;
    }
    for (i, (ts, opts)) in f.results.iter().enumerate() {
        for (k, v) in opts {
            out.send(Opcode::JobOpt, 0, &pdu::job_option(false, i as u32, k, v))?;
        }
        out.send(Opcode::Ts, 0, ts)?;
    }
    for g in &f.groups {
        out.send(Opcode::Gs, 0, g)?;
    }
    for d in &f.disks {
        out.send(Opcode::Du, 0, d)?;
    }
    for l in &f.logs {
        out.send(Opcode::IoLog, 0, l)?;
    }
    // fio's normal output buffer begins with a newline, which its server sends as TEXT.
    if f.normal {
        out.text(pdu::LOG_INFO, "\n")?;
    }
    out.send(Opcode::Stop, 0, &pdu::end(f.error, f.signal))?;
    out.send(Opcode::Quit, 0, &[])
}

#[cfg(test)]
mod tests;
