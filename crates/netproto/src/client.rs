//! The client's side of fio's protocol: where a server is ([`Remote`], fio's `--client`
//! forms) and one server's conversation ([`Session`]), as fio 3.33's client holds it:
//!
//! connect, PROBE (answered with who the server is), the command line as JOBLINE when it
//! carries options, each job file as JOB (its text) or LOAD_FILE (a file on the server), then
//! RUN at once; the server answers with TEXT lines, START (how many results will come),
//! JOB_OPT, TS, GS and DU, then STOP and QUIT. [`Session::next_event`] turns each message into an
//! [`Event`]; the binary prints them with fiox's report code.
//!
//! Reads are bounded as the server's are ([`frame::Reader`]): a malformed, oversized or stalled
//! message is an error for that server only.

use crate::frame::{self, Limits, Reader};
use crate::pdu::{self, JobLine, Probe, ProbeReply};
use crate::server::Conn;
use crate::wire::{cstr, Get, Put};
use crate::{stat, Opcode, ProtoError, DEFAULT_PORT};
use fiox_stats::{DiskResult, GroupResult, JobResult};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// fio's `FIO_CLIENT_TYPE_CLI`: a command-line client.
const CLIENT_TYPE_CLI: u32 = 1;

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addr {
    Tcp(SocketAddr),
    Unix(String),
}

/// One `--client` argument: the name the client prints (`<name>`, JSON `hostname`), the port
/// (JSON `port`; 0 for a unix socket) and the address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub host: String,
    pub port: u16,
    pub addr: Addr,
}

/// Parse fio's `--client` forms: `HOST`, `HOST,PORT`, `ip:HOST[,PORT]`, `ip4:...`,
/// `ip6:HOST[,PORT]`, `sock:PATH`. A host name is resolved here (an error names it).
pub fn parse_remote(arg: &str) -> Result<Remote, String> {
    let arg = arg.trim();
    if let Some(p) = arg.strip_prefix("sock:") {
        if p.is_empty() {
            return Err("sock: needs a path (sock:/path/to/socket)".into());
        }
        return Ok(Remote {
            host: p.to_string(),
            port: 0,
            addr: Addr::Unix(p.to_string()),
        });
    }
    let (v6, rest) = if let Some(h) = arg.strip_prefix("ip6:") {
        (Some(true), h)
    } else if let Some(h) = arg.strip_prefix("ip4:").or_else(|| arg.strip_prefix("ip:")) {
        (Some(false), h)
    } else {
        (None, arg)
    };
    let (host, port) = match rest.rsplit_once(',') {
        Some((h, p)) => (h, parse_port(p)?),
        None => (rest, DEFAULT_PORT),
    };
    // No host (`,8765`): this machine, as fio takes it; the name stays empty as fio prints it.
    let lookup = match (host.is_empty(), v6) {
        (false, _) => host,
        (true, Some(true)) => "::1",
        (true, _) => "127.0.0.1",
    };
    let addrs = (lookup, port)
        .to_socket_addrs()
        .map_err(|e| format!("--client={arg}: cannot resolve host '{host}': {e}"))?;
    let addr = addrs
        .into_iter()
        .find(|a| v6.is_none_or(|v6| a.is_ipv6() == v6))
        .ok_or_else(|| format!("--client={arg}: host '{host}' has no address of that family"))?;
    Ok(Remote {
        host: host.to_string(),
        port,
        addr: Addr::Tcp(addr),
    })
}

fn parse_port(p: &str) -> Result<u16, String> {
    match p.trim().parse::<u16>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("bad server port '{p}' (1 to 65535)")),
    }
}

/// One option of a job as the server sent it (JOB_OPT): `global` options go to the JSON's
/// `global options`, the others to the `job options` of result `index` (0-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOpt {
    pub global: bool,
    pub index: u32,
    pub name: String,
    pub value: String,
}

/// What a server said, decoded.
#[derive(Debug)]
pub enum Event {
    Probe(ProbeReply),
    /// An output line (fio's log level and the text as sent, newline included).
    Text(u32, String),
    /// The jobs are set up: how many, and how many results (TS) will follow.
    Start {
        jobs: u32,
        stat_outputs: u32,
    },
    JobOpt(JobOpt),
    /// A result (its 1-based thread number) and its group.
    Ts(u32, Box<JobResult>, GroupResult),
    Gs(GroupResult),
    Du(DiskResult),
    /// The run ended: its error (0: none) and the signal that stopped it.
    Stop {
        error: u32,
        signal: u32,
    },
    /// The server asks for a file (fio's SENDFILE: a verify state file for `verify_state_load`),
    /// to be answered with [`Session::send_file`] and this tag.
    SendFile {
        path: String,
        tag: u64,
    },
    /// A job's log (written by the client as `NAME.HOST`).
    IoLog(crate::iolog::IoLog),
    /// The server is done with this connection.
    Quit,
    /// A message the client has no use for (ETA it did not ask for, SERVER_START, ...).
    Other(Opcode),
}

/// One server's connection.
pub struct Session {
    reader: Reader<Box<dyn Conn>>,
    out: Box<dyn Conn>,
}

impl Session {
    /// Connect within `timeout`.
    pub fn connect(r: &Remote, timeout: Duration) -> std::io::Result<Session> {
        let conn: Box<dyn Conn> = match &r.addr {
            Addr::Tcp(a) => {
                let s = TcpStream::connect_timeout(a, timeout)?;
                let _ = s.set_nodelay(true);
                Box::new(s)
            }
            Addr::Unix(p) => Box::new(std::os::unix::net::UnixStream::connect(p)?),
        };
        let out = conn.clone_conn()?;
        // A run may take hours between messages; a message that has begun must finish.
        Ok(Session {
            reader: Reader::new(
                conn,
                Limits {
                    max_bytes: frame::MAX_CLIENT_MESSAGE,
                    ..Limits::default()
                },
            ),
            out,
        })
    }

    fn send(&mut self, op: Opcode, payload: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        self.out.write_all(&frame::encode(op, 0, 0, payload))?;
        self.out.flush()
    }

    /// PROBE, naming the server as the client addressed it.
    pub fn probe(&mut self, server: &str) -> std::io::Result<()> {
        let p = Probe {
            flags: 0, // fiox's client inflates no compressed logs
            server: server.to_string(),
        };
        self.send(Opcode::Probe, &p.encode())
    }

    /// The command line (program name first), as fio sends it when it carries options.
    pub fn job_line(&mut self, args: &[String]) -> std::io::Result<()> {
        let l = JobLine {
            args: args.to_vec(),
            client_type: CLIENT_TYPE_CLI as u16,
        };
        self.send(Opcode::JobLine, &l.encode())
    }

    /// A job file's text.
    pub fn job_file(&mut self, text: &str) -> std::io::Result<()> {
        let j = pdu::JobText {
            text: text.to_string(),
            client_type: CLIENT_TYPE_CLI,
        };
        self.send(Opcode::Job, &j.encode())
    }

    /// A job file on the server (`--remote-config`).
    pub fn load_file(&mut self, path: &str) -> std::io::Result<()> {
        let mut p = Put::default();
        p.u16(path.len().min(u16::MAX as usize) as u16);
        p.u16(CLIENT_TYPE_CLI as u16);
        p.bytes(path.as_bytes());
        p.u8(0);
        self.send(Opcode::LoadFile, &p.buf)
    }

    pub fn run(&mut self) -> std::io::Result<()> {
        self.send(Opcode::Run, &[])
    }

    /// Ask the running jobs to stop (the results still come back).
    pub fn quit(&mut self) -> std::io::Result<()> {
        self.send(Opcode::Quit, &[])
    }

    /// A handle that asks this server to stop its jobs from another thread (Ctrl-C).
    pub fn quitter(&self) -> std::io::Result<Quitter> {
        Ok(Quitter {
            out: self.out.clone_conn()?,
        })
    }

    /// The next event (None: the server closed the connection between messages).
    pub fn next_event(&mut self) -> Result<Option<Event>, ProtoError> {
        match self.reader.read_message()? {
            None => Ok(None),
            Some(m) if m.op == Opcode::SendFile => Ok(Some(Event::SendFile {
                path: cstr(&m.payload[..m.payload.len().min(256)]),
                tag: m.tag,
            })),
            Some(m) => decode(m.op, &m.payload).map(Some),
        }
    }

    /// Answer a SENDFILE (`cmd_sendfile_reply`): the file's bytes, or the errno that kept the
    /// client from reading it.
    pub fn send_file(&mut self, tag: u64, file: Result<Vec<u8>, i32>) -> std::io::Result<()> {
        use std::io::Write;
        let mut p = Put::default();
        match file {
            Ok(bytes) => {
                p.u32(bytes.len().min(u32::MAX as usize) as u32);
                p.u32(0);
                p.bytes(&bytes);
            }
            Err(errno) => {
                p.u32(0);
                p.u32(errno as u32);
            }
        }
        self.out
            .write_all(&frame::encode(Opcode::SendFile, 0, tag, &p.buf))?;
        self.out.flush()
    }
}

/// Sends QUIT to one server from outside its conversation: fio's client does so on Ctrl-C,
/// and the server stops its jobs and still sends their results.
pub struct Quitter {
    out: Box<dyn Conn>,
}

impl Quitter {
    pub fn quit(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        self.out
            .write_all(&frame::encode(Opcode::Quit, 0, 0, &[]))?;
        self.out.flush()
    }
}

/// A message's event.
pub fn decode(op: Opcode, b: &[u8]) -> Result<Event, ProtoError> {
    Ok(match op {
        Opcode::Probe => Event::Probe(ProbeReply::decode(b)?),
        Opcode::Text => {
            let (level, text) = pdu::decode_text(b)?;
            Event::Text(level, text)
        }
        Opcode::Start => {
            let mut g = Get::new(b, "START");
            Event::Start {
                jobs: g.u32()?,
                stat_outputs: g.u32()?,
            }
        }
        Opcode::JobOpt => Event::JobOpt(job_opt(b)?),
        Opcode::Ts => {
            let n = stat::ts_summary(b)?.thread_number;
            let (j, g) = stat::decode_ts(b)?;
            Event::Ts(n, Box::new(j), g)
        }
        Opcode::Gs => Event::Gs(stat::decode_gs(b)?),
        Opcode::Du => Event::Du(stat::decode_du(b)?),
        Opcode::Stop => {
            let mut g = Get::new(b, "STOP");
            Event::Stop {
                error: g.u32()?,
                signal: g.u32()?,
            }
        }
        Opcode::IoLog => Event::IoLog(crate::iolog::IoLog::decode(b)?),
        Opcode::Quit => Event::Quit,
        other => Event::Other(other),
    })
}

/// `cmd_job_option`.
fn job_opt(b: &[u8]) -> Result<JobOpt, ProtoError> {
    let mut g = Get::new(b, "JOB_OPT");
    let global = g.u16()? != 0;
    let _truncated = g.u16()?;
    let index = g.u32()?;
    Ok(JobOpt {
        global,
        index,
        name: cstr(g.bytes(64)?),
        value: cstr(g.bytes(128)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_forms_parse_as_fio_writes_them() {
        let r = parse_remote("127.0.0.1,9000").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("127.0.0.1", 9000));
        assert_eq!(r.addr, Addr::Tcp("127.0.0.1:9000".parse().unwrap()));
        let r = parse_remote("localhost").unwrap();
        assert_eq!(r.port, DEFAULT_PORT);
        let r = parse_remote("ip6:::1,8766").unwrap();
        assert_eq!(r.addr, Addr::Tcp("[::1]:8766".parse().unwrap()));
        let r = parse_remote("sock:/tmp/fio.sock").unwrap();
        assert_eq!(r.addr, Addr::Unix("/tmp/fio.sock".into()));
        assert!(parse_remote("127.0.0.1,0").is_err());
        assert!(parse_remote("127.0.0.1,99999").is_err());
        assert!(parse_remote("sock:").is_err());
        let r = parse_remote(",8765").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("", 8765));
        assert_eq!(r.addr, Addr::Tcp("127.0.0.1:8765".parse().unwrap()));
        assert!(parse_remote("ip6:127.0.0.1").is_err());
    }

    #[test]
    fn job_options_and_stops_decode_and_short_ones_are_errors() {
        let o = job_opt(&pdu::job_option(false, 3, "rw", "randread")).unwrap();
        assert_eq!((o.global, o.index, o.name.as_str()), (false, 3, "rw"));
        assert_eq!(o.value, "randread");
        match decode(Opcode::Stop, &pdu::end(5, 2)).unwrap() {
            Event::Stop { error, signal } => assert_eq!((error, signal), (5, 2)),
            e => panic!("{e:?}"),
        }
        assert!(decode(Opcode::JobOpt, &[0; 10]).is_err());
        assert!(decode(Opcode::Start, &[0; 3]).is_err());
        assert!(decode(Opcode::Ts, &[0; 100]).is_err());
        assert!(matches!(
            decode(Opcode::Eta, &[]).unwrap(),
            Event::Other(Opcode::Eta)
        ));
    }
}
