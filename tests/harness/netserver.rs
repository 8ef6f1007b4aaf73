//! fio and fiox servers for the client/server tests (tests/netserver.rs: fio's client
//! against fiox's server; tests/netclient.rs: fiox's client against both): a server on a free
//! loopback port killed on drop, and the comparisons of their reports (JSON key paths, the
//! normal report's shape).

use super::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server (fio's or fiox's) on a free loopback port, killed on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

/// Whether process `pid` itself holds the socket listening on 127.0.0.1:`port` (the socket's
/// inode in /proc/net/tcp, state 0A, among its descriptors; read without connecting, as a
/// connection would be served and serving is one connection at a time): a server that failed
/// to bind while another program took the port is not mistaken for a listening one.
pub fn listening_by(port: u16, pid: u32) -> bool {
    let want = format!("0100007F:{port:04X}");
    let inodes: Vec<String> = std::fs::read_to_string("/proc/net/tcp")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 9 && f[1] == want && f[3] == "0A").then(|| format!("socket:[{}]", f[9]))
        })
        .collect();
    if inodes.is_empty() {
        return false;
    }
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .any(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str()))
}

/// A port a server may listen on at `host`: below the kernel's ephemeral range (32768 up),
/// so no client connection of a test running beside this one takes it between this check and
/// the server's bind. A port the kernel picked (`:0`) and this check freed again was taken
/// that way once, and the server failed with EADDRINUSE.
pub fn free_port(host: &str) -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let base = (std::process::id() % 1000) as u16 * 12;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = 20_000 + (base.wrapping_add(n) % 12_000);
        if std::net::TcpListener::bind((host, port)).is_ok() {
            return port;
        }
    }
}

impl Server {
    pub fn start(tool: &str) -> Server {
        // A port found free can be taken by another program before the server binds it:
        // then (and only then) the server is started again on another port.
        for _ in 0..3 {
            match Server::try_start(tool) {
                Ok(server) => return server,
                Err(why) if why.contains("Address already in use") => {
                    eprintln!("{tool} --server: {why} (trying another port)");
                }
                Err(why) => panic!("{why}"),
            }
        }
        panic!("{tool} --server: every port tried was taken");
    }

    /// A server on a free port, listening; Err with its status and log when it ended first.
    fn try_start(tool: &str) -> Result<Server, String> {
        let port = free_port("127.0.0.1");
        let bin = if tool == "fiox" { fiox_bin() } else { "fio" };
        let child = Command::new(bin)
            .arg(format!("--server=ip:127.0.0.1,{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let mut server = Server { child, port };
        let t0 = Instant::now();
        // Listening, and by this child: another program on the port would pass a check of
        // the port alone while this server failed to bind (seen: EADDRINUSE after the port
        // was found free). (`ended` takes the log: once.)
        loop {
            if let Some(why) = server.ended() {
                return Err(format!("{tool} --server on port {port} ended: {why}"));
            }
            if listening_by(port, server.child.id()) {
                return Ok(server);
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "{tool} --server did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the server has exited, and then its status and log (for a failure's message).
    pub fn ended(&mut self) -> Option<String> {
        let st = self.child.try_wait().ok().flatten()?;
        let mut log = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut log);
        }
        Some(format!("{st}; its stderr:\n{log}"))
    }

    /// `fio --client=127.0.0.1,PORT ARGS...`
    pub fn client(&self, args: &[&str]) -> Run {
        let o = Command::new("fio")
            .arg(format!("--client=127.0.0.1,{}", self.port))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run fio --client");
        Run::from(o)
    }

    /// Wait until a connection's process exists, then a little longer (the job runs).
    pub fn wait_for_job(&self) {
        let t0 = Instant::now();
        let pid = self.child.id();
        while !std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .is_ok_and(|c| !c.trim().is_empty())
        {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "no connection process"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(1500));
    }

    /// Stop the server (SIGTERM) and return its exit code and log.
    pub fn stop(mut self) -> (i32, String) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let st = self.child.wait().unwrap();
        let mut log = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut log);
        }
        (st.code().unwrap_or(-1), log)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON document in a client's stdout (after the lines the server sent as text).
pub fn json_of(r: &Run) -> Value {
    let at = r.stdout.find("\n{").map_or(0, |i| i + 1);
    serde_json::from_str(&r.stdout[at..])
        .unwrap_or_else(|e| panic!("no JSON ({e}):\n{}\nstderr:\n{}", r.stdout, r.stderr))
}

pub const NULL_JOB: &str = "[global]\nioengine=null\nsize=16m\nbs=4k\n[job1]\nrw=randread\n\
                        [job2]\nrw=write\n";

pub fn job_file(dir: &TempDir, text: &str) -> String {
    let p = dir.join("job.fio");
    std::fs::write(&p, text).unwrap();
    p
}

/// Every key path of a JSON document (array elements merged), without json+'s bins keys.
pub fn keys(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if at.ends_with("/bins") {
                    continue;
                }
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                keys(x, &p, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| keys(x, &format!("{at}[]"), out)),
        _ => {}
    }
}

pub fn key_set(v: &Value) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    keys(v, "", &mut s);
    s
}

/// The normal report's shape: each line's first word (numbers left out), without the latency
/// bucket lines (which buckets have I/Os depends on the run).
pub fn shape(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !(l.trim_start().starts_with("lat (") && l.contains('%')))
        .map(|l| {
            l.split(|c: char| c == ':' || c == '=' || c.is_ascii_digit())
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .collect()
}

/// `TOOL --client=127.0.0.1,PORT` for each port, then ARGS (fio or fiox as the client).
pub fn client_of(tool: &str, ports: &[u16], args: &[&str]) -> Run {
    let bin = if tool == "fiox" { fiox_bin() } else { "fio" };
    let mut cmd = Command::new(bin);
    for p in ports {
        cmd.arg(format!("--client=127.0.0.1,{p}"));
    }
    let o = cmd
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the client");
    Run::from(o)
}

/// A 24-byte header with a valid header CRC.
pub fn header(version: u16, op: u16, len: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&op.to_le_bytes());
    h.extend_from_slice(&[0; 12]);
    h.extend_from_slice(&len.to_le_bytes());
    let crc = fiox_crc16(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h.extend_from_slice(&[0, 0]);
    h
}

/// CRC-16/ARC (fio's crc16), bit by bit: the test's own, independent of fiox's.
pub fn fiox_crc16(b: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &x in b {
        crc ^= x as u16;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xa001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// Take the files of `dir` whose names begin with `prefix` (the logs a client wrote): their
/// names, sorted, with their line counts; the files are removed.
pub fn take_files(dir: &TempDir, prefix: &str) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .map(|n| {
            let lines = std::fs::read_to_string(dir.join(&n))
                .unwrap()
                .lines()
                .count();
            let _ = std::fs::remove_file(dir.join(&n));
            (n, lines)
        })
        .collect();
    v.sort();
    v
}
