//! `fiox --server[=ARGS]`: fio 3.33's server, so that `fio --client=HOST[,PORT] job.fio`
//! (unmodified fio) runs its jobs on fiox and prints fiox's numbers in its own formats. The
//! protocol is fiox-netproto's; this is the glue: listening, one process per connection
//! (as fio forks one), and the [`Backend`] that parses and runs jobs with fiox's runner.
//!
//! - Listens on loopback unless an address is given (fio listens on every address);
//!   `--daemonize=PIDFILE` detaches and writes the server's pid there.
//! - One connection is served at a time: later ones wait in the listen queue.
//! - Each connection runs in a child fiox process (the socket as its stdin, its own process
//!   group), so a run's process-wide state (the stop flag, signal count) starts fresh. A
//!   SIGINT/SIGTERM to the server is passed to the running connection once (its run stops and
//!   its results still go to the client), then the server exits.
//! - The log (listening address, each connection and how it ended) goes to stderr: a server
//!   has no report of its own; a daemon's stderr is discarded.

mod logs;

use anyhow::{bail, Context, Result};
use fiox_netproto::pdu::{self, Eta};
use fiox_netproto::server::{
    self, Backend, EtaCell, Finished, JobFile, JobInput, Listen, Outbox, Prepared, PreparedRun,
};
use fiox_netproto::{stat, Opcode};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The child that holds one connection (its peer's address as the value).
const CONN_ENV: &str = "FIOX_SERVER_CONN";
/// The daemon: its stdin is the listening socket the starting process bound.
const LISTENER_ENV: &str = "FIOX_SERVER_LISTENER";
/// A connection's exit status when its client sent EXIT: the server stops.
const EXIT_SERVER: i32 = 3;

/// Whether the command line asks for the server (or this process is one of its parts).
pub fn wanted(args: &[String]) -> bool {
    std::env::var_os(CONN_ENV).is_some()
        || std::env::var_os(LISTENER_ENV).is_some()
        || args
            .iter()
            .any(|a| a == "--server" || a.starts_with("--server="))
}

/// `--server[=ARG]` and `--daemonize=PIDFILE`; anything else is refused.
fn parse_args(args: &[String]) -> Result<(Option<String>, Option<String>)> {
    let (mut arg, mut pidfile) = (None, None);
    for a in args {
        if a == "--server" {
            continue;
        } else if let Some(v) = a.strip_prefix("--server=") {
            arg = Some(v.to_string());
        } else if let Some(v) = a.strip_prefix("--daemonize=") {
            if v.is_empty() {
                bail!("--daemonize needs a pid file: --daemonize=PIDFILE");
            }
            pidfile = Some(v.to_string());
        } else {
            bail!(
                "--server with {a} is not supported yet: fiox's server takes no other switch \
                 than --daemonize=PIDFILE (the jobs and their options come from the client)"
            );
        }
    }
    Ok((arg, pidfile))
}

/// Run the server (or the connection child, or the daemon) until it ends.
pub fn main(args: &[String]) -> Result<i32> {
    if let Some(peer) = std::env::var_os(CONN_ENV) {
        return connection_main(&peer.to_string_lossy());
    }
    if std::env::var_os(LISTENER_ENV).is_some() {
        let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
        return serve_forever(TcpListener::from(fd));
    }
    let (arg, pidfile) = parse_args(args)?;
    let listen = server::parse_listen(arg.as_deref())
        .map_err(|e| anyhow::anyhow!("--server={}: {e}", arg.as_deref().unwrap_or("")))?;
    let listener = match listen {
        Listen::Tcp(ip, port) => TcpListener::bind((ip, port))
            .with_context(|| format!("--server: cannot listen on {ip} port {port}"))?,
        Listen::Unix(p) => bail!(
            "--server=sock:{p}: unix domain sockets are not supported by fiox's server yet \
             (use ip:HOST,PORT)"
        ),
    };
    match pidfile {
        Some(p) => daemonize(listener, &p),
        None => serve_forever(listener),
    }
}

/// Start the server detached (its own session-less process group, no terminal output) on
/// the socket bound here, so a bad address is reported before this returns; write its pid.
fn daemonize(listener: TcpListener, pidfile: &str) -> Result<i32> {
    use std::io::Write;
    let mut f = fiox_guard::output::open(
        std::path::Path::new(pidfile),
        fiox_guard::Open::Truncate,
        fiox_guard::Named::ByUser,
    )
    .with_context(|| format!("--daemonize: cannot write the pid file {pidfile}"))?;
    let child = Command::new(std::env::current_exe()?)
        .env(LISTENER_ENV, "1")
        .stdin(Stdio::from(OwnedFd::from(listener)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .context("--daemonize: cannot start the server")?;
    writeln!(f, "{}", child.id())
        .with_context(|| format!("--daemonize: cannot write the pid file {pidfile}"))?;
    Ok(0)
}

/// Accept connections one at a time until a signal or a client's EXIT.
fn serve_forever(listener: TcpListener) -> Result<i32> {
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    let addr = listener.local_addr()?;
    fiox_guard::eprintln!(
        "fiox server: listening on {addr} (fio 3.33's protocol, version {})",
        fiox_netproto::VERSION
    );
    listener.set_nonblocking(true)?;
    while !fiox_runner::interrupted() {
        match listener.accept() {
            Ok((s, peer)) => {
                fiox_guard::eprintln!("fiox server: connection from {peer}");
                s.set_nonblocking(false)?;
                let code = run_connection(s, &peer.to_string())?;
                if code == EXIT_SERVER {
                    fiox_guard::eprintln!("fiox server: {peer} asked the server to exit");
                    break;
                }
                fiox_guard::eprintln!("fiox server: connection from {peer} ended");
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("--server: accept"),
        }
    }
    fiox_guard::eprintln!("fiox server: stopped");
    Ok(0)
}

/// Serve one connection in a child process; a signal to the server is passed to it once.
fn run_connection(s: TcpStream, peer: &str) -> Result<i32> {
    // The server's own binary, even when a newer fiox has replaced or removed its file since
    // it started (a long-lived daemon outlives upgrades); under its own name (as `fio`, it
    // presents itself as fio).
    let mut cmd = Command::new("/proc/self/exe");
    cmd.arg0(std::env::args_os().next().unwrap_or_else(|| "fiox".into()));
    cmd.env(CONN_ENV, peer)
        .stdin(Stdio::from(OwnedFd::from(s)))
        .stdout(Stdio::null())
        .process_group(0);
    fiox_guard::process::die_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .context("--server: cannot start a connection process")?;
    let start = fiox_guard::process::start_time(child.id());
    let mut passed = false;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(st.code().unwrap_or(1));
        }
        if fiox_runner::interrupted() && !passed {
            passed = true;
            if let Some(start) = start {
                let _ = fiox_guard::process::signal_own(child.id(), start, libc::SIGTERM);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The connection child: the socket is stdin.
fn connection_main(peer: &str) -> Result<i32> {
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
    let stream = TcpStream::from(fd);
    match server::serve(Box::new(stream), &mut FioxBackend) {
        Ok(server::Ended::Done) => Ok(0),
        Ok(server::Ended::Exit) => Ok(EXIT_SERVER),
        Err(e) => {
            fiox_guard::eprintln!("fiox server: connection from {peer}: {e}");
            Ok(1)
        }
    }
}

/// Parses jobs with fiox's parser and runs them with fiox's runner.
struct FioxBackend;

impl Backend for FioxBackend {
    fn identity(&self) -> (String, String, u32) {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "localhost".into());
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        (host, fiox_report::normal::version_line(), cpus)
    }

    fn prepare(&mut self, input: JobInput) -> Result<Prepared, String> {
        let mut inv = parse(input)?;
        if matches!(inv.action, fiox_job::Action::NoJobs(..)) {
            // A command line with options only: the job file comes next.
            return Ok(Prepared {
                jobs: 0,
                stat_outputs: 0,
                lines: Vec::new(),
                run: None,
            });
        }
        let refusals = crate::refusals(&inv);
        if !refusals.is_empty() {
            return Err(refusals.iter().map(|r| format!("fiox: {r}\n")).collect());
        }
        if !matches!(inv.action, fiox_job::Action::Run) {
            return Err("fiox --server: the client's command line runs no jobs".into());
        }
        if let Some(why) = unserved(&inv) {
            return Err(why);
        }
        // fio's server prints the job lines (and "Starting") only for the normal output.
        let normal = normal_output(&inv);
        let mut lines: Vec<String> = inv.notes().iter().map(|n| format!("fiox: {n}\n")).collect();
        for job in inv.jobs.iter().filter(|_| normal) {
            match job.clone_index {
                0 => lines.push(fiox_report::normal::job_header_line(job)),
                1 => lines.push("...\n".into()),
                _ => {}
            }
        }
        // The jobs' logs go back to the client (IOLOG), not onto this machine's disk.
        let logs = logs::divert(&mut inv.jobs)?;
        Ok(Prepared {
            jobs: inv.jobs.len() as u32,
            stat_outputs: stat_outputs(&inv.jobs),
            lines,
            run: Some(Box::new(FioxRun { inv, normal, logs })),
        })
    }

    fn stop(&self) {
        fiox_runner::request_stop();
    }
}

/// The jobs of a command line (JOBLINE) with the job file of a JOB (text) or LOAD_FILE (a
/// path on this machine).
fn parse(input: JobInput) -> Result<fiox_job::Invocation, String> {
    const NAME: &str = "<client job file>";
    let mut args = input.args;
    let r = match input.file {
        JobFile::Text(text) => {
            args.push(NAME.to_string());
            let env = fiox_job::jobfile::SubstEnv::from_system();
            fiox_job::parse_invocation_with(&args, &env, &mut |p| {
                if p == NAME {
                    Ok(text.clone())
                } else {
                    std::fs::read_to_string(p)
                }
            })
        }
        JobFile::Path(p) => {
            args.push(p);
            fiox_job::parse_invocation(&args)
        }
        JobFile::None => fiox_job::parse_invocation(&args),
    };
    r.map_err(|e| format!("fiox: {e}"))
}

/// Why the server will not run what the client asked (None: it will): fiox's own switches
/// whose output has no place in fio's protocol, and fio's parser warnings under
/// `--warnings-fatal` (which stop fio before any I/O).
fn unserved(inv: &fiox_job::Invocation) -> Option<String> {
    let s = &inv.settings;
    let own = [
        ("--telemetry", s.telemetry.is_some()),
        ("--machine-memory", s.machine_memory.is_some()),
        ("--machine-cpus", s.machine_cpus.is_some()),
        ("--vm", s.vm.is_some()),
        ("--explain", s.explain),
        ("--html", s.html.is_some()),
    ];
    if let Some((name, _)) = own.iter().find(|(_, on)| *on) {
        return Some(format!(
            "fiox --server: {name} is not supported by fiox's server (fio's protocol has no \
             place for its output); run fiox on that host instead"
        ));
    }
    let warnings = inv.fio_warnings();
    (s.warnings_fatal && !warnings.is_empty()).then(|| {
        let mut t: String = warnings.iter().map(|w| format!("fiox: {w}\n")).collect();
        t.push_str(
            "fiox: --warnings-fatal: stopping on fio's parser warning(s) above; nothing was run",
        );
        t
    })
}

/// How many results the jobs give (fio's `stat_number`): one per job, one per group for the
/// jobs of a group with `group_reporting`.
fn stat_outputs(jobs: &[fiox_job::JobSpec]) -> u32 {
    let mut groups: Vec<u32> = Vec::new();
    let mut n = 0;
    for j in jobs {
        if !j.stats.group_reporting {
            n += 1;
        } else if !groups.contains(&j.group_id) {
            groups.push(j.group_id);
            n += 1;
        }
    }
    n
}

struct FioxRun {
    inv: fiox_job::Invocation,
    /// The client prints fio's normal output.
    normal: bool,
    /// Where the jobs' logs are written until they are sent.
    logs: Option<logs::Diverted>,
}

/// Whether the client's command line asks for fio's normal output (its default).
fn normal_output(inv: &fiox_job::Invocation) -> bool {
    let f = &inv.settings.output_formats;
    f.is_empty() || f.contains(&fiox_job::OutputFormat::Normal)
}

impl PreparedRun for FioxRun {
    fn run(self: Box<Self>, out: &Outbox, eta: &EtaCell) -> Finished {
        let inv = self.inv;
        if self.normal {
            let _ = out.text(
                pdu::LOG_INFO,
                &fiox_report::normal::starting_line(&inv.jobs),
            );
        }
        for _ in &inv.jobs {
            let _ = out.send(Opcode::ServerStart, 0, &[]);
        }
        let info = {
            let out = out.clone();
            fiox_runner::InfoSink::new(move |line: &str| {
                let _ = out.text(pdu::LOG_INFO, line);
            })
        };
        let mut opts = crate::run_options(&inv, info, true, true);
        opts.eta = fiox_job::EtaMode::Never;
        opts.status_interval = Some(Duration::from_secs(1));
        let mut progress = Progress::new(&inv.jobs, eta.clone());
        let mut on_status = move |snap: &fiox_stats::RunResult| progress.update(snap);
        let outcome = fiox_runner::run(&inv.jobs, &opts, &mut on_status);
        for e in &outcome.errors {
            let _ = out.text(pdu::LOG_ERR, &format!("fiox: {e}\n"));
        }
        let mut f = finished(&outcome, self.normal);
        if let Some(d) = self.logs {
            let (logs, problems) = d.collect();
            f.logs = logs;
            for p in problems {
                let _ = out.text(pdu::LOG_ERR, &format!("fiox: {p}\n"));
            }
        }
        f
    }
}

/// The results as fio's server sends them.
fn finished(o: &fiox_runner::RunOutcome, normal: bool) -> Finished {
    let r = &o.result;
    let default = fiox_stats::GroupResult::default();
    let group = |gid: u32| {
        r.groups
            .iter()
            .find(|g| g.groupid == gid)
            .unwrap_or(&default)
    };
    let run_ms = r.jobs.iter().map(|j| j.runtime_ms).max().unwrap_or(0);
    Finished {
        global_options: r.global_options.clone(),
        results: r
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                (
                    stat::ts_pdu(j, i as u32 + 1, group(j.groupid)),
                    j.job_options.clone(),
                )
            })
            .collect(),
        groups: r.groups.iter().map(stat::group_stat).collect(),
        disks: r.disks.iter().map(|d| stat::du_pdu(d, run_ms)).collect(),
        logs: Vec::new(),
        // A stopped run's results are results (as fio's after a signal): the stop shows as
        // the signal the server passed on, not as an error.
        error: u32::from(!o.errors.is_empty()),
        signal: if o.interrupted {
            libc::SIGTERM as u32
        } else {
            0
        },
        normal,
    }
}

/// The ETA the client asks for every second, from the runner's status snapshots.
struct Progress {
    eta: EtaCell,
    t0: Instant,
    last: (Instant, [u64; 3], [u64; 3]),
    /// Jobs of the run (fiox does not tell the client which of them still run).
    jobs: u32,
    /// fio's run_str, condensed: `r(2),W(1)` (`R`/`r` reading, `W`/`w` writing, ...).
    run_str: String,
    /// Seconds the run takes when every job is time based (None: it ends on its size).
    planned: Option<u64>,
    kb_base: u32,
    unit_base: u32,
}

impl Progress {
    fn new(jobs: &[fiox_job::JobSpec], eta: EtaCell) -> Progress {
        let run_str = condensed(jobs.iter().map(state_letter));
        let planned = jobs
            .iter()
            .map(|j| {
                let t = &j.timing;
                t.runtime
                    .filter(|_| t.time_based)
                    .map(|r| (r + t.ramp_time.unwrap_or_default()).as_secs())
            })
            .try_fold(0u64, |acc, s| s.map(|s| acc.max(s)));
        let now = Instant::now();
        let p = Progress {
            eta,
            t0: now,
            last: (now, [0; 3], [0; 3]),
            jobs: jobs.len() as u32,
            run_str,
            planned,
            kb_base: jobs.first().map_or(1024, |j| j.kb_base),
            unit_base: jobs.first().map_or(0, |j| j.unit_base),
        };
        p.publish([0; 3], [0; 3]);
        p
    }

    fn update(&mut self, snap: &fiox_stats::RunResult) {
        let (mut bytes, mut ios) = ([0u64; 3], [0u64; 3]);
        for j in &snap.jobs {
            for (d, dir) in [&j.dirs.read, &j.dirs.write, &j.dirs.trim]
                .iter()
                .enumerate()
            {
                bytes[d] += dir.io_bytes;
                ios[d] += dir.total_ios;
            }
        }
        let now = Instant::now();
        let dt = now.duration_since(self.last.0).as_secs_f64().max(1e-3);
        let per_s = |a: u64, b: u64| (a.saturating_sub(b) as f64 / dt) as u64;
        // fio's ETA rates are KiB/s (eta.c's calc_rate), whatever kb_base.
        let rate: [u64; 3] = std::array::from_fn(|d| per_s(bytes[d], self.last.1[d]) / 1024);
        let iops: [u64; 3] = std::array::from_fn(|d| per_s(ios[d], self.last.2[d]));
        self.last = (now, bytes, ios);
        self.publish(rate, iops);
    }

    fn publish(&self, rate: [u64; 3], iops: [u64; 3]) {
        let elapsed = self.t0.elapsed().as_secs();
        let e = Eta {
            nr_running: self.jobs,
            rate,
            iops: iops.map(|v| v.min(u32::MAX as u64) as u32),
            elapsed_sec: elapsed,
            eta_sec: self.planned.map_or(0, |p| p.saturating_sub(elapsed)),
            kb_base_pow2: self.kb_base.is_power_of_two(),
            unit_base: stat::wire_unit_base(self.unit_base),
            sig_figs: 4,
            run_str: self.run_str.clone(),
            ..Eta::default()
        };
        *self.eta.lock().unwrap_or_else(|p| p.into_inner()) = e;
    }
}

/// fio's condensed run_str (eta.c): each run of one letter as `L(N)`, comma separated.
fn condensed(letters: impl Iterator<Item = char>) -> String {
    let mut runs: Vec<(char, usize)> = Vec::new();
    for c in letters {
        match runs.last_mut() {
            Some((l, n)) if *l == c => *n += 1,
            _ => runs.push((c, 1)),
        }
    }
    let parts: Vec<String> = runs.iter().map(|(c, n)| format!("{c}({n})")).collect();
    parts.join(",")
}

/// fio's letter for a running job (eta.c): upper case sequential, lower case random.
fn state_letter(j: &fiox_job::JobSpec) -> char {
    use fiox_job::RwMode::*;
    let c = match j.rw.mode {
        Read | RandRead => 'r',
        Write | RandWrite => 'w',
        ReadWrite | RandRw | TrimWrite | RandTrimWrite => 'm',
        Trim | RandTrim => 'd',
    };
    if j.rw.mode.is_random() {
        c
    } else {
        c.to_ascii_uppercase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_switches_are_fios_and_nothing_else() {
        let a = |v: &[&str]| parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(a(&["--server"]).unwrap(), (None, None));
        assert_eq!(
            a(&["--server=ip:0.0.0.0,9000", "--daemonize=/tmp/p"]).unwrap(),
            (Some("ip:0.0.0.0,9000".into()), Some("/tmp/p".into()))
        );
        let e = a(&["--server", "job.fio"]).unwrap_err().to_string();
        assert!(
            e.contains("--server with job.fio is not supported yet"),
            "{e}"
        );
        assert!(a(&["--server", "--daemonize="]).is_err());
    }

    #[test]
    fn fiox_only_switches_are_refused_not_ignored() {
        let inv = |args: &[&str]| {
            let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            fiox_job::parse_invocation(&a).unwrap()
        };
        let why = unserved(&inv(&["--telemetry=100", "--name=x", "--ioengine=null"])).unwrap();
        assert!(
            why.contains("--telemetry is not supported by fiox's server"),
            "{why}"
        );
        assert!(unserved(&inv(&["--name=x", "--ioengine=null"])).is_none());
    }

    #[test]
    fn run_str_is_fios_condensed_form() {
        assert_eq!(condensed("rrwR".chars()), "r(2),w(1),R(1)");
        assert_eq!(condensed("".chars()), "");
    }

    #[test]
    fn group_reporting_folds_a_groups_results_into_one() {
        let jobs = fiox_job::parse_job_text(
            "[global]\nioengine=null\nsize=1m\n[a]\nnumjobs=3\ngroup_reporting\n[b]\nstonewall\n",
            "t.fio",
        )
        .unwrap();
        assert_eq!(jobs.len(), 4);
        assert_eq!(stat_outputs(&jobs), 2);
    }
}
