//! `fiox --client=HOST[,PORT] [job files]`: drives fio 3.33 servers and fiox servers alike with
//! fio's protocol (fiox-netproto's [`Session`]), and prints what fio's client prints, with
//! fiox's report code: the servers' lines as `<host> ...`, each server's results, then the
//! `All clients` sum when more than one result came back; JSON as fio's client writes it
//! (`client_stats` with `hostname` and `port`, `disk_util`), terse one line per result.
//!
//! The command line, as fio reads it: each `--client` adds a server (or, when its value is a
//! readable file, every host listed in it); job files right after a `--client` are that
//! server's alone, other job files go to every server without its own; `--remote-config=FILE`
//! names a job file on the server. Options after a `--client` travel to that server (to all
//! the hosts of a host list) as the command line fio sends; `--output-format` and
//! `--terse-version` also apply here, and travel to every server so that none prints its job
//! lines into a JSON document. `--output=FILE` is written here, through the guard.
//!
//! One thread per server; exit status 1 when a server could not be reached, broke the
//! protocol, or reported an error (fio's client does the same).

use crate::output::Out;
use anyhow::{bail, Context, Result};
use fiox_job::OutputFormat;
use fiox_netproto::client::{parse_remote, Event, Quitter, Remote, Session};
use fiox_stats::{DiskResult, GroupResult, JobResult};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether the command line asks for the client.
pub fn wanted(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "--client" || a.starts_with("--client="))
}

/// A job file for a server: here (sent as its text) or on the server (`--remote-config`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum JobFile {
    Local(String),
    Remote(String),
}

/// One server and what it is sent.
#[derive(Debug, Clone)]
struct Target {
    remote: Remote,
    files: Vec<JobFile>,
    /// Options for its command line (without the program name).
    args: Vec<String>,
}

/// The parsed command line.
#[derive(Debug, Default)]
struct Plan {
    targets: Vec<Target>,
    /// Job files for every server without its own.
    files: Vec<String>,
    formats: Vec<OutputFormat>,
    terse_version: u32,
    output: Option<String>,
    /// Options every server's command line carries (`--output-format`, `--terse-version`).
    shared: Vec<String>,
    /// `--parse-only`: check the servers' forms, job files and options here, connect to none.
    parse_only: bool,
}

/// `--name=value` or `--name value`: the value, advancing `i` past it.
fn value_of(args: &[String], i: &mut usize, name: &str) -> Result<Option<String>> {
    let a = &args[*i];
    if let Some(v) = a.strip_prefix(&format!("--{name}=")) {
        return Ok(Some(v.to_string()));
    }
    if a == &format!("--{name}") {
        *i += 1;
        return match args.get(*i) {
            Some(v) => Ok(Some(v.clone())),
            None => bail!("--{name} needs a value"),
        };
    }
    Ok(None)
}

fn parse(args: &[String]) -> Result<Plan> {
    let mut p = Plan {
        formats: vec![OutputFormat::Normal],
        terse_version: 3,
        ..Plan::default()
    };
    // The hosts the last --client added (several for a host list file).
    let mut current: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(v) = value_of(args, &mut i, "client")? {
            current = add_clients(&mut p, &v)?;
            // Job files right after a --client are that server's alone.
            let single = current.len() == 1 && !is_host_list(&v);
            while single && args.get(i + 1).is_some_and(|n| !n.starts_with('-')) {
                i += 1;
                let t = &mut p.targets[current[0]];
                t.files.push(JobFile::Local(args[i].clone()));
            }
        } else if let Some(v) = value_of(args, &mut i, "remote-config")? {
            if current.is_empty() {
                bail!("--remote-config={v} needs a --client before it (the server it is on)");
            }
            for &t in &current {
                p.targets[t].files.push(JobFile::Remote(v.clone()));
            }
        } else if let Some(v) = value_of(args, &mut i, "output-format")? {
            p.formats = fiox_job::cli::parse_formats(&v)?;
            p.shared.push(format!("--output-format={v}"));
        } else if let Some(v) = value_of(args, &mut i, "terse-version")? {
            p.terse_version = v
                .parse()
                .ok()
                .filter(|n| (2..=5).contains(n))
                .with_context(|| format!("--terse-version={v}: use 2, 3, 4 or 5"))?;
            p.shared.push(format!("--terse-version={v}"));
        } else if let Some(v) = value_of(args, &mut i, "output")? {
            p.output = Some(v);
        } else if a == "--parse-only" {
            p.parse_only = true;
        } else if a == "--minimal" {
            p.formats = vec![OutputFormat::Terse];
            p.shared.push(a.clone());
        } else if a.starts_with('-') {
            if current.is_empty() {
                bail!(
                    "{a}: with --client, options go after the --client they are for (fio sends \
                     them to that server)"
                );
            }
            for &t in &current {
                p.targets[t].args.push(a.clone());
            }
        } else {
            p.files.push(a.clone());
        }
        i += 1;
    }
    if p.targets.is_empty() {
        bail!("--client needs a server: --client=HOST[,PORT], ip6:HOST, sock:PATH or a host list file");
    }
    Ok(p)
}

/// `--parse-only` with `--client`: every server's job (its command line and the job files it
/// would be sent) parses with fiox's parser, as each server would parse it; nothing connects.
/// (fio's client ignores `--parse-only` and runs the jobs.)
fn check_only(plan: &Plan) -> Result<i32> {
    for t in &plan.targets {
        let mut args = vec!["--parse-only".to_string()];
        args.extend(t.args.iter().cloned());
        if t.files.is_empty() {
            args.extend(plan.files.iter().cloned());
        }
        for f in &t.files {
            match f {
                JobFile::Local(p) => args.push(p.clone()),
                // A file on the server: only that server can read it.
                JobFile::Remote(_) => {}
            }
        }
        if args.len() == 1 {
            continue;
        }
        fiox_job::parse_invocation(&args)
            .with_context(|| format!("the job for {}", t.remote.host))?;
    }
    Ok(0)
}

fn is_host_list(v: &str) -> bool {
    std::path::Path::new(v).is_file()
}

/// Add the server `v` names, or every host of the list file `v` (whitespace separated, as
/// fio reads it); returns their places.
fn add_clients(p: &mut Plan, v: &str) -> Result<Vec<usize>> {
    let hosts: Vec<String> = if is_host_list(v) {
        let text = fiox_guard::input::read_text(std::path::Path::new(v), 1 << 20)
            .with_context(|| format!("cannot read the client list file {v}"))?;
        text.split_whitespace().map(str::to_string).collect()
    } else {
        vec![v.to_string()]
    };
    if hosts.is_empty() {
        bail!("the client list file {v} names no host");
    }
    let mut added = Vec::new();
    for h in hosts {
        let remote =
            parse_remote(&h).map_err(|e| anyhow::anyhow!("fio: failed adding client {h}: {e}"))?;
        added.push(p.targets.len());
        p.targets.push(Target {
            remote,
            files: Vec::new(),
            args: Vec::new(),
        });
    }
    Ok(added)
}

/// What one server sent back.
#[derive(Default)]
struct Collected {
    results: Vec<(u32, JobResult, GroupResult)>,
    groups: Vec<GroupResult>,
    disks: Vec<DiskResult>,
    global_options: Vec<(String, String)>,
    job_options: Vec<(u32, String, String)>,
    stat_outputs: u32,
    /// The server's STOP error, or the reason the conversation failed.
    error: Option<String>,
    stop_error: u32,
    /// A log the server sent could not be written.
    log_failed: bool,
}

/// The servers' QUIT handles, and whether Ctrl-C has been pressed (then a server that
/// connects later is asked to stop at once).
#[derive(Default)]
struct Stopper {
    quitters: Vec<Quitter>,
    stopped: bool,
}

type Stop = Arc<Mutex<Stopper>>;

impl Stopper {
    fn add(stop: &Stop, mut q: Quitter) {
        let mut s = stop.lock().unwrap_or_else(|p| p.into_inner());
        if s.stopped {
            let _ = q.quit();
        }
        s.quitters.push(q);
    }
}

/// On the first SIGINT/SIGTERM, ask every server to stop its jobs (their results still come
/// back and are printed); a second one ends fiox at once (exit 130), as for a local run.
fn watch_signals(stop: Stop) -> Result<()> {
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    std::thread::Builder::new()
        .name("fiox-client-stop".into())
        .spawn(move || loop {
            if fiox_runner::interrupted() {
                let mut s = stop.lock().unwrap_or_else(|p| p.into_inner());
                s.stopped = true;
                for q in &mut s.quitters {
                    let _ = q.quit();
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        })?;
    Ok(())
}

pub fn main(args: &[String]) -> Result<i32> {
    let plan = parse(args)?;
    if plan.parse_only {
        return check_only(&plan);
    }
    let stop: Stop = Arc::default();
    watch_signals(stop.clone())?;
    let out = Out::open(plan.output.as_deref())?;
    let ctx = Arc::new(Ctx {
        files: plan.files.clone(),
        shared: plan.shared.clone(),
        live: Mutex::new(out.clone()),
        stop,
        normal: plan.formats.contains(&OutputFormat::Normal),
    });
    let start = std::time::SystemTime::now();
    let handles: Vec<_> = plan
        .targets
        .iter()
        .map(|t| {
            let (t, ctx) = (t.clone(), ctx.clone());
            std::thread::spawn(move || converse(&t, &ctx))
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.push(h.join().unwrap_or_else(|_| Collected {
            error: Some("the client thread failed".into()),
            ..Collected::default()
        }));
    }
    let failed = report(&plan, &all, &out, start)?;
    if let Some(why) = out.failure() {
        fiox_guard::eprintln!("fiox: {why}");
        return Ok(1);
    }
    Ok(i32::from(failed))
}

/// What every server's thread shares.
struct Ctx {
    /// Job files for every server without its own.
    files: Vec<String>,
    /// Options every server's command line carries.
    shared: Vec<String>,
    /// Where lines printed as they arrive go (probe lines, the servers' TEXT).
    live: Mutex<Out>,
    stop: Stop,
    normal: bool,
}

impl Ctx {
    fn say(&self, text: &str) {
        let out = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let _ = out.write(text);
    }
}

/// One server's conversation, start to end.
fn converse(t: &Target, ctx: &Ctx) -> Collected {
    let mut c = Collected::default();
    if let Err(e) = talk(t, ctx, &mut c) {
        c.error = Some(format!("{e:#}"));
    }
    c
}

fn talk(t: &Target, ctx: &Ctx, c: &mut Collected) -> Result<()> {
    let host = &t.remote.host;
    let own: Vec<JobFile> = if t.files.is_empty() {
        ctx.files.iter().cloned().map(JobFile::Local).collect()
    } else {
        t.files.clone()
    };
    if own.is_empty() && t.args.is_empty() {
        // fio's client drops a server it has no job for, without a word.
        return Ok(());
    }
    let mut s =
        Session::connect(&t.remote, CONNECT_TIMEOUT).with_context(|| match &t.remote.addr {
            fiox_netproto::client::Addr::Unix(p) => format!("fio: failed to connect to {p}"),
            fiox_netproto::client::Addr::Tcp(a) => format!("fio: failed to connect to {a}"),
        })?;
    Stopper::add(&ctx.stop, s.quitter()?);
    s.probe(host)?;
    let mut line = vec!["fio".to_string()];
    line.extend(ctx.shared.iter().cloned());
    line.extend(t.args.iter().cloned());
    if line.len() > 1 {
        s.job_line(&line)?;
    }
    // What this client told the server: the only places a log it sends back may be written.
    let mut sent = line.clone();
    for f in &own {
        match f {
            JobFile::Local(path) => {
                let text = fiox_guard::input::read_text(
                    std::path::Path::new(path),
                    fiox_guard::input::JOB_FILE_MAX,
                )
                .with_context(|| format!("fio: job file <{path}> open"))?;
                s.job_file(&text)?;
                sent.push(text);
            }
            JobFile::Remote(path) => s.load_file(path)?,
        }
    }
    s.run()?;
    let mut name = host.clone();
    let mut skip_prefix = false;
    while let Some(ev) = s.next_event().with_context(|| format!("server {host}"))? {
        match ev {
            Event::Probe(p) => {
                if ctx.normal {
                    ctx.say(&probe_line(&p));
                }
                name = p.hostname.clone();
            }
            Event::Text(_, text) => {
                let prefix = if skip_prefix {
                    String::new()
                } else {
                    format!("<{name}> ")
                };
                ctx.say(&format!("{prefix}{text}"));
                skip_prefix = !text.contains('\n');
            }
            Event::Start { stat_outputs, .. } => c.stat_outputs += stat_outputs,
            Event::JobOpt(o) if o.global => c.global_options.push((o.name, o.value)),
            Event::JobOpt(o) => c.job_options.push((o.index, o.name, o.value)),
            Event::Ts(n, mut j, g) => {
                // fio stamps a result with the time its client prints it.
                j.start_unix = now_secs();
                c.results.push((n, *j, g));
            }
            Event::Gs(g) => c.groups.push(g),
            Event::Du(d) => c.disks.push(d),
            Event::Stop { error, .. } => c.stop_error = error,
            Event::IoLog(l) => {
                if let Err(e) = logs::write(&l, host, &sent) {
                    fiox_guard::eprintln!("fio: log {}: {e:#}", l.name);
                    c.log_failed = true;
                }
            }
            Event::Quit => break,
            Event::SendFile { path, tag } => s.send_file(tag, logs::verify_state(&path))?,
            Event::Other(_) => {}
        }
    }
    Ok(())
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// fio's line for a server's probe reply.
fn probe_line(p: &fiox_netproto::pdu::ProbeReply) -> String {
    let os = if p.os == 1 { "Linux" } else { "unknown" };
    let arch = match p.arch {
        1 => "x86-64",
        13 => "aarch64",
        _ => "unknown",
    };
    format!(
        "hostname={}, be={}, {}-bit, os={os}, arch={arch}, fio={}, flags={:x}\n",
        p.hostname,
        u8::from(p.bigendian),
        u32::from(p.bpp) * 8,
        p.version,
        p.flags
    )
}

mod logs;
mod report;
use report::report;
