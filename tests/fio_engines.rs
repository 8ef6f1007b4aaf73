//! fio's special-purpose engines (falloc, ftruncate, filecreate, filestat, filedelete) run the
//! same jobs as fio 3.33 and give the same counts, directions and files; and fio's own example
//! job files that use them run under fiox (shrunk: a scratch directory instead of /scratch,
//! fewer files, a shorter runtime).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Run `tool` (fiox or fio) with JSON output; fio prints an error line before its JSON when a
/// job fails, so the report starts at the first `{`.
fn run_json(tool: &str, cwd: &Path, args: &[&str]) -> (i32, Value) {
    let (code, v, _) = tool_json(tool, cwd, args, None);
    (code, v)
}

/// The tools to compare: fiox and fio (installed, or the test fails naming it).
fn tools() -> Vec<&'static str> {
    need_fio();
    vec!["fiox", "fio"]
}

/// One line of a [`summary`]: a name and four counts.
type Line = (String, u64, u64, u64, u64);

/// What must agree between fio and fiox for one job: error, and per direction the I/O count,
/// bytes and how many completion / total latencies were recorded.
fn summary(v: &Value) -> Vec<Line> {
    let j = &v["jobs"][0];
    let mut out = vec![("error".into(), j["error"].as_u64().unwrap_or(99), 0, 0, 0)];
    for d in ["read", "write", "trim"] {
        let x = &j[d];
        out.push((
            d.into(),
            x["total_ios"].as_u64().unwrap_or(0),
            x["io_bytes"].as_u64().unwrap_or(0),
            x["clat_ns"]["N"].as_u64().unwrap_or(0),
            x["lat_ns"]["N"].as_u64().unwrap_or(0),
        ));
    }
    out
}

/// Size and allocated 512-byte blocks of every job file in `dir`, by name (verify state
/// files, whose format is not compared here, left out).
fn files_of(dir: &Path) -> Vec<(String, u64, u64)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".state"))
        .map(|e| {
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                m.len(),
                m.blocks(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Run `jobs` (argument lists without the directory) with each tool in a fresh directory;
/// the summaries and the files left must agree.
fn compare(tag: &str, jobs: &[&[&str]]) -> Vec<(Vec<Line>, i32)> {
    let mut seen: Vec<(String, Vec<_>, Vec<_>)> = Vec::new();
    let mut ours = Vec::new();
    for tool in tools() {
        let dir = TempDir::new(&format!("{tag}-{tool}"));
        let dflag = format!("--directory={}", dir.path().display());
        let mut sums = Vec::new();
        for job in jobs {
            let mut args = vec![dflag.as_str()];
            args.extend_from_slice(job);
            let (code, v) = run_json(tool, dir.path(), &args);
            sums.push(summary(&v));
            if tool == "fiox" {
                ours.push((summary(&v), code));
            }
        }
        seen.push((tool.to_string(), sums, files_of(dir.path())));
    }
    if let [(_, a, fa), (_, b, fb)] = &seen[..] {
        assert_eq!(a, b, "{tag}: fiox (left) vs fio (right)");
        assert_eq!(fa, fb, "{tag}: files left, fiox (left) vs fio (right)");
    }
    ours
}

/// falloc: writes allocate and extend, trims punch holes, reads allocate keeping the size.
#[test]
fn falloc_runs_like_fio() {
    let ours = compare(
        "falloc",
        &[
            &[
                "--name=w",
                "--ioengine=falloc",
                "--rw=randwrite",
                "--bs=4k",
                "--size=1m",
            ],
            &[
                "--name=t",
                "--ioengine=falloc",
                "--rw=randtrim",
                "--bs=8k",
                "--size=512k",
            ],
            &[
                "--name=r",
                "--ioengine=falloc",
                "--rw=read",
                "--bs=64k",
                "--size=1m",
            ],
            &[
                "--name=w",
                "--ioengine=falloc",
                "--rw=randtrim",
                "--bs=4k",
                "--size=1m",
                "--number_ios=64",
            ],
        ],
    );
    assert_eq!(ours[0].0[2].1, 256, "256 fallocate writes");
    assert!(ours.iter().all(|(s, code)| s[0].1 == 0 && *code == 0));
}

/// ftruncate: every write truncates to its offset; a read fails with EINVAL, as in fio.
#[test]
fn ftruncate_runs_like_fio() {
    let ours = compare(
        "ftrunc",
        &[
            &[
                "--name=g",
                "--ioengine=ftruncate",
                "--rw=write",
                "--bs=4k",
                "--size=1m",
            ],
            &[
                "--name=r",
                "--ioengine=ftruncate",
                "--rw=randwrite",
                "--norandommap",
                "--bs=4k",
                "--size=1m",
            ],
            &[
                "--name=x",
                "--ioengine=ftruncate",
                "--rw=read",
                "--bs=4k",
                "--size=64k",
            ],
        ],
    );
    assert_eq!(ours[0].0[2].1, 256);
    assert_eq!(ours[2].0[0].1, 22, "reads fail with EINVAL");
    assert_ne!(ours[2].1, 0);
}

/// splice: reads and writes through a pipe, with fio's counts; what it writes verifies.
#[test]
fn splice_runs_like_fio() {
    let ours = compare(
        "splice",
        &[
            &[
                "--name=s",
                "--ioengine=splice",
                "--rw=write",
                "--bs=128k",
                "--size=2m",
            ],
            &[
                "--name=s",
                "--ioengine=splice",
                "--rw=randread",
                "--bs=96k",
                "--size=2m",
            ],
            &[
                "--name=s",
                "--ioengine=splice",
                "--rw=randrw",
                "--bs=4k",
                "--size=256k",
            ],
            &[
                "--name=v",
                "--ioengine=splice",
                "--rw=randwrite",
                "--bs=64k",
                "--size=1m",
                "--verify=crc32c",
            ],
        ],
    );
    assert_eq!(ours[0].0[2].1, 16);
    assert_eq!(ours[3].0[1].1, 16, "every block read back and verified");
    assert!(ours.iter().all(|(s, code)| s[0].1 == 0 && *code == 0));
}

/// filecreate: one open(O_CREAT) per file, timed as the read direction's clat (lat is not
/// recorded); each file's blocks count as I/Os that move nothing, and the files stay empty.
#[test]
fn filecreate_runs_like_fio() {
    let ours = compare(
        "fcreate",
        &[
            &[
                "--name=c",
                "--ioengine=filecreate",
                "--create_on_open=1",
                "--nrfiles=40",
                "--filesize=8k",
                "--bs=4k",
                "--openfiles=1",
                "--fallocate=none",
            ],
            &[
                "--name=w",
                "--ioengine=filecreate",
                "--rw=randwrite",
                "--nrfiles=10",
                "--filesize=4k",
            ],
            // unlink=1 removes the files the job created (the comparison of files left
            // shows none of u.*, as with fio).
            &[
                "--name=u",
                "--ioengine=filecreate",
                "--nrfiles=5",
                "--filesize=4k",
                "--unlink=1",
            ],
        ],
    );
    assert_eq!(ours[0].0[1], ("read".into(), 80, 80 * 4096, 40, 0));
    assert_eq!(ours[1].0[2], ("write".into(), 10, 10 * 4096, 10, 0));
}

/// filestat (each stat_type) and filedelete: one timed call per file on files laid out at
/// setup; filedelete leaves nothing.
#[test]
fn filestat_and_filedelete_run_like_fio() {
    let base = ["--nrfiles=20", "--filesize=8k"];
    let job = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = vec!["--name=s"];
        v.extend_from_slice(&base);
        v.extend_from_slice(extra);
        v
    };
    let stat = job(&["--ioengine=filestat"]);
    let lstat = job(&["--ioengine=filestat", "--stat_type=lstat", "--rw=randwrite"]);
    let statx = job(&["--ioengine=filestat", "--stat_type=statx"]);
    let delete = job(&["--ioengine=filedelete", "--unlink=0"]);
    let ours = compare("fstat", &[&stat, &lstat, &statx, &delete]);
    assert_eq!(ours[0].0[1], ("read".into(), 40, 20 * 8192, 20, 0));
    assert_eq!(ours[1].0[2], ("write".into(), 40, 20 * 8192, 20, 0));
    assert_eq!(ours[3].0[1], ("read".into(), 40, 20 * 8192, 20, 0));
}

/// filedelete never deletes a file fiox did not create, unless allowed.
#[test]
fn filedelete_keeps_files_fiox_did_not_create() {
    let dir = TempDir::new("fdel-user");
    let user = dir.path().join("d.0.0");
    std::fs::write(&user, b"mine").unwrap();
    let d = format!("--directory={}", dir.path().display());
    let args = [
        "--name=d",
        d.as_str(),
        "--ioengine=filedelete",
        "--filesize=4k",
    ];
    let r = fiox(&args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("would delete") && r.stderr.contains("--allow-destructive"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&user).unwrap(), b"mine", "untouched");
    let mut allowed = args.to_vec();
    allowed.push("--allow-destructive");
    let r = fiox(&allowed);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!user.exists());
    let r = fiox(&[
        "--readonly",
        "--name=d",
        d.as_str(),
        "--ioengine=filedelete",
    ]);
    assert!(
        r.stderr.contains("filedelete removes its files"),
        "{}",
        r.stderr
    );
}

/// What a cpuio job reports that must agree with fio: error, and per direction bytes and
/// whether I/Os, clat and lat were recorded (and whether their counts agree).
fn cpu_shape(v: &Value) -> Vec<(String, u64, bool, bool)> {
    let j = &v["jobs"][0];
    let mut out = vec![(
        "error".into(),
        j["error"].as_u64().unwrap_or(99),
        false,
        false,
    )];
    for d in ["read", "write", "trim"] {
        let n = j[d]["total_ios"].as_u64().unwrap_or(0);
        out.push((
            d.into(),
            j[d]["io_bytes"].as_u64().unwrap_or(99),
            n > 0,
            j[d]["clat_ns"]["N"].as_u64() == Some(n) && j[d]["lat_ns"]["N"].as_u64() == Some(n),
        ));
    }
    out
}

/// cpuio: I/Os of 0 bytes whose latency is the burn, in both modes; cpuload is required;
/// fio's start line is printed.
#[test]
fn cpuio_runs_like_fio() {
    let dir = TempDir::new("cpuio");
    for mode in ["noop", "qsort"] {
        let m = format!("--cpumode={mode}");
        let args = [
            "--name=c",
            "--ioengine=cpuio",
            "--cpuload=50",
            "--cpuchunks=20000",
            m.as_str(),
            "--runtime=1",
        ];
        let mut shapes = Vec::new();
        for tool in tools() {
            let (code, v) = run_json(tool, dir.path(), &args);
            assert_eq!(code, 0, "{tool} {mode}");
            shapes.push(cpu_shape(&v));
        }
        let want = vec![
            ("error".to_string(), 0, false, false),
            ("read".to_string(), 0, true, true),
            ("write".to_string(), 0, false, true),
            ("trim".to_string(), 0, false, true),
        ];
        for s in &shapes {
            assert_eq!(s, &want, "{mode}");
        }
        let r = fiox(&args);
        assert!(
            r.stdout.contains(&format!(
                "c ({mode}): ioengine=cpuio, cpuload=50, cpucycle=20000\n"
            )),
            "{}",
            r.stdout
        );
        assert!(!r.stdout.contains("Disk stats"), "diskless: {}", r.stdout);
    }
    for tool in tools() {
        let (code, v) = run_json(
            tool,
            dir.path(),
            &["--name=c", "--ioengine=cpuio", "--runtime=1"],
        );
        assert_ne!(code, 0, "{tool}: no cpuload");
        assert_eq!(v["jobs"][0]["error"], 22, "{tool}");
    }
}

/// exit_on_io_done: the cpuio job (no runtime) ends when the I/O job is done.
#[test]
fn cpuio_exit_on_io_done_ends_with_the_io_jobs() {
    for tool in tools() {
        let dir = TempDir::new("cpuio-exit");
        let job = dir.path().join("j.fio");
        let text = format!(
            "[c]\nioengine=cpuio\ncpuload=20\ncpuchunks=2000\nexit_on_io_done=1\n\
             [w]\nrw=write\nsize=1m\nrate=2m\ndirectory={}\n",
            dir.path().display()
        );
        std::fs::write(&job, text).unwrap();
        // Without exit_on_io_done the cpuio job would run until killed: the timeout is a
        // guard against a hang, not a timing check.
        let (code, v) = run_json_timeout(tool, dir.path(), &[job.to_str().unwrap()], 60);
        assert_eq!(code, 0, "{tool}");
        let jobs = v["jobs"].as_array().unwrap();
        assert!(jobs[0]["read"]["total_ios"].as_u64().unwrap() > 0, "{tool}");
        assert_eq!(jobs[1]["write"]["total_ios"], 256, "{tool}");
    }
}

/// exec: the program runs with fio's %r/%n expanded, its output in NAME.stdout, and the job's
/// I/Os are 0-byte ticks; a program still running at the end is stopped (SIGTERM past the
/// runtime, SIGKILL when the job ends); a missing `program` is an error, as in fio.
#[test]
fn exec_runs_like_fio() {
    for tool in tools() {
        let dir = TempDir::new("exec");
        let args = [
            "--name=e",
            "--ioengine=exec",
            "--program=/bin/echo",
            "--arguments=hi %n %r",
            "--runtime=1",
            "--grace_time=0",
        ];
        let (code, v) = run_json(tool, dir.path(), &args);
        assert_eq!(code, 0, "{tool}");
        let want = vec![
            ("error".to_string(), 0, false, false),
            ("read".to_string(), 0, true, true),
            ("write".to_string(), 0, false, true),
            ("trim".to_string(), 0, false, true),
        ];
        assert_eq!(cpu_shape(&v), want, "{tool}");
        let out = std::fs::read_to_string(dir.path().join("e.stdout")).unwrap();
        assert_eq!(out, "hi e 1\n", "{tool}");
        assert!(dir.path().join("e.stderr").exists(), "{tool}");
        // A program that outlives the job is stopped with it.
        // A seconds count unique to this test run names the process for pgrep.
        let secs = 100_000 + std::process::id() % 100_000;
        let marker = format!("sleep {secs}");
        let long = format!("--arguments={secs}");
        let (code, _) = run_json_timeout(
            tool,
            dir.path(),
            &[
                "--name=s",
                "--ioengine=exec",
                "--program=sleep",
                &long,
                "--runtime=1",
                "--grace_time=0",
            ],
            60,
        );
        assert_eq!(code, 0, "{tool}");
        let left = Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap();
        assert!(left.stdout.is_empty(), "{tool}: the program was stopped");
        let (code, v) = run_json(
            tool,
            dir.path(),
            &["--name=m", "--ioengine=exec", "--runtime=1"],
        );
        assert_ne!(code, 0, "{tool}: no program");
        assert_eq!(v["jobs"][0]["error"], 22, "{tool}");
    }
}

/// A receiver and a sender net job over localhost, as fio's examples/netio.fio (the sender
/// starts a second later: fio's does not retry a refused connection).
fn net_job(dir: &Path, port: u32, global: &str, receiver: &str, sender: &str) -> String {
    let p = dir.join("net.fio");
    let text = format!(
        "[global]\nport={port}\nbs=4k\nsize=4m\n{global}\n[receiver]\nrw=read\n{receiver}\n\
         [sender]\nhostname=localhost\nrw=write\nstartdelay=1\n{sender}\n"
    );
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Per job of a report: (error, read ios, read bytes, dropped reads, write ios, write bytes).
fn net_counts(v: &Value) -> Vec<[u64; 6]> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let n = |d: &str, k: &str| j[d][k].as_u64().unwrap_or(u64::MAX);
            [
                j["error"].as_u64().unwrap_or(99),
                n("read", "total_ios"),
                n("read", "io_bytes"),
                n("read", "drop_ios"),
                n("write", "total_ios"),
                n("write", "io_bytes"),
            ]
        })
        .collect()
}

/// net and netsplice over TCP (plain and pingpong) and UDP, receiver and sender on
/// localhost: the sender's counts are fio's; fiox's receiver gets every byte over TCP (fio's
/// receives short blocks and may stop early, so only its error is compared), and over UDP
/// what it got plus what it counted as dropped never exceeds what was sent. Neither reports
/// disk stats (fio's FIO_DISKLESSIO).
#[test]
fn net_runs_like_fio() {
    // Below the ephemeral range (32768-60999), where a port may be some connection's own.
    let base = 20_000 + (std::process::id() % 3_000) * 4;
    let cases: [(&str, &str, &str); 4] = [
        ("ioengine=net\nprotocol=tcp", "listen", ""),
        (
            "ioengine=net\nprotocol=tcp\npingpong=1\nnodelay=1",
            "listen",
            "",
        ),
        (
            "ioengine=netsplice\nprotocol=tcp\nwindow_size=262144",
            "listen",
            "",
        ),
        // What the socket's receive buffer holds: a datagram dropped while the receiver waits
        // for its CPU could be the sender's close, and then the receiver waits for ever.
        ("ioengine=net\nprotocol=udp\nbs=1k\nsize=32k", "", ""),
    ];
    for (n, (global, rx, tx)) in cases.iter().enumerate() {
        let mut seen = Vec::new();
        for (t, tool) in tools().into_iter().enumerate() {
            // On a disk (not /dev/shm), so a job that watched its directory's disk would
            // report it in disk_util.
            let dir = TempDir::under(Path::new("/var/tmp"), "net");
            let port = base + (n as u32) * 2 + t as u32;
            let job = net_job(dir.path(), port, global, rx, tx);
            let (mut code, mut v) = run_json_timeout(tool, dir.path(), &[&job], 60);
            // fio's TCP receiver may stop a short block early and its sender then fails with
            // ECONNRESET (104): fio's own race, not what this test compares. fiox gets one try.
            for _ in 0..2 {
                if tool == "fiox" || code == 0 {
                    break;
                }
                (code, v) = run_json_timeout(tool, dir.path(), &[&job], 60);
            }
            assert_eq!(code, 0, "{tool} {global}: {v}");
            // fio's net engines are diskless: no disk under the job's directory is watched.
            assert!(v.get("disk_util").is_none(), "{tool} {global}: {v}");
            let c = net_counts(&v);
            let (ios, bytes) = if global.contains("udp") {
                (32, 32 << 10)
            } else {
                (1024, 4 << 20)
            };
            assert_eq!(c[1], [0, 0, 0, 0, ios, bytes], "{tool} {global}: sender");
            assert_eq!(c[0][0], 0, "{tool} {global}: receiver error");
            if global.contains("udp") {
                assert!(c[0][1] > 0 && c[0][1] + c[0][3] <= ios, "{tool}: {c:?}");
            } else if tool == "fiox" {
                assert_eq!(
                    c[0],
                    [0, 1024, 4 << 20, 0, 0, 0],
                    "{tool} {global}: receiver"
                );
            }
            seen.push(c[1]);
        }
        if let [a, b] = &seen[..] {
            assert_eq!(a, b, "{global}: sender, fiox vs fio");
        }
    }
}

/// The job of one side of a UDP multicast link on the loopback: `group`, `port`, 32 1 KiB
/// datagrams (fewer than the reader's socket buffer holds, so none is lost however slowly
/// it reads).
fn multicast_args(engine: &str, group: &str, port: u32, rw: &str) -> Vec<String> {
    [
        "--name=mc",
        &format!("--ioengine={engine}"),
        "--protocol=udp",
        &format!("--hostname={group}"),
        &format!("--port={port}"),
        "--interface=127.0.0.1",
        "--ttl=1",
        "--bs=1k",
        "--size=32k",
        &format!("--rw={rw}"),
    ]
    .map(str::to_string)
    .to_vec()
}

/// Wait until a socket is bound to `group:port` (the reader joins the group before it binds,
/// fio and fiox alike), so the writer's first datagram finds a member.
fn wait_bound(group: std::net::Ipv4Addr, port: u32) {
    // /proc/net/udp prints the address as the in-memory u32 in hex and the port in hex.
    let want = format!("{:08X}:{port:04X}", u32::from_ne_bytes(group.octets()));
    for _ in 0..3000 {
        let t = std::fs::read_to_string("/proc/net/udp").unwrap_or_default();
        if t.lines()
            .any(|l| l.split_whitespace().nth(1) == Some(&want))
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no reader bound to {group}:{port} within 30 s");
}

/// UDP multicast (`hostname` a group, `interface`, `ttl`) on the loopback, net and
/// netsplice: fio writes to a fiox reader and fiox to a fio reader (fiox to fiox without
/// fio); every datagram arrives and both sides count the same bytes.
#[test]
fn net_multicast_udp_between_fio_and_fiox() {
    let group = std::net::Ipv4Addr::new(239, 77, 1, 2);
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    if let Err(e) = probe.join_multicast_v4(&group, &std::net::Ipv4Addr::LOCALHOST) {
        skip_for_kernel("multicast on the loopback", &e.to_string());
        return;
    }
    drop(probe);
    let pairs = {
        need_fio();
        vec![("fio", "fiox"), ("fiox", "fio")]
    };
    // Above the ephemeral ports, apart from the other net tests' ports.
    let base = 61_000 + (std::process::id() % 1000) * 4;
    let runs = ["net", "netsplice"]
        .into_iter()
        .flat_map(|e| pairs.iter().map(move |&(w, r)| (e, w, r)));
    for (n, (engine, writer, reader)) in runs.enumerate() {
        let dir = TempDir::new("mcast");
        let port = base + n as u32;
        let bin = |t: &str| if t == "fio" { "fio" } else { fiox_bin() };
        let rx = Command::new("timeout")
            .args(["60", bin(reader)])
            .args(multicast_args(engine, &group.to_string(), port, "read"))
            .arg("--output-format=json")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the reader");
        wait_bound(group, port);
        let wargs = multicast_args(engine, &group.to_string(), port, "write");
        let wargs: Vec<&str> = wargs.iter().map(String::as_str).collect();
        let (code, w) = run_json_timeout(writer, dir.path(), &wargs, 60);
        let o = rx.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let r: Value =
            serde_json::from_str(&out[out.find('{').unwrap_or(0)..]).unwrap_or_else(|e| {
                panic!(
                    "{reader} reader JSON ({e}): {out} {}",
                    String::from_utf8_lossy(&o.stderr)
                )
            });
        assert_eq!(code, 0, "{writer} writer: {w}");
        assert_eq!(o.status.code(), Some(0), "{reader} reader: {r}");
        let tag = format!("{engine}: {writer} -> {reader}");
        assert_eq!(
            net_counts(&w)[0],
            [0, 0, 0, 0, 32, 32 << 10],
            "{tag}: writer"
        );
        assert_eq!(
            net_counts(&r)[0],
            [0, 32, 32 << 10, 0, 0, 0],
            "{tag}: reader"
        );
    }
}

/// Unix sockets: the reader listens on the path. (fio 3.33 ends both jobs of this job with
/// EISCONN, so fiox alone is checked.)
#[test]
fn net_unix_socket_transfers_everything() {
    let dir = TempDir::new("netunix");
    let sock = dir.path().join("sock");
    let p = dir.path().join("u.fio");
    std::fs::write(
        &p,
        format!(
            "[global]\nioengine=net\nprotocol=unix\nfilename={}\nbs=8k\nsize=2m\n\
             [receiver]\nrw=read\n[sender]\nrw=write\n",
            sock.display()
        ),
    )
    .unwrap();
    let (code, v) = run_json_timeout("fiox", dir.path(), &[p.to_str().unwrap()], 120);
    assert_eq!(code, 0, "{v}");
    let c = net_counts(&v);
    assert_eq!(c[0], [0, 256, 2 << 20, 0, 0, 0]);
    assert_eq!(c[1], [0, 0, 0, 0, 256, 2 << 20]);
    // N8: the reader removes the socket it bound (fio leaves it behind).
    assert!(!sock.exists(), "the reader's socket is left behind");
    let r = fiox(&[
        "--name=x",
        "--ioengine=net",
        "--port=9",
        "--rw=randread",
        "--size=1m",
        "--listen",
    ]);
    assert!(r.stderr.contains("can't be random"), "{}", r.stderr);
}

/// e4defrag on an ext4 image: preallocated and in-place donors move the written range with
/// fio's counts and leave the same files; without filesize= (and inplace=0) both refuse the
/// donor's preallocation with EINVAL, as fio's init does.
#[test]
fn e4defrag_runs_like_fio() {
    require_root("mounts an ext4 image");
    require_tool("mkfs.ext4");
    require_tool("mount");
    let mut img = match fiox_testbed::Ext4Image::create_in(Path::new("/var/tmp"), 256 << 20) {
        Ok(i) => i,
        Err(e) => panic!("cannot make an ext4 image: {e}"),
    };
    let mnt = match img.mount() {
        Ok(m) => m.to_path_buf(),
        Err(_) if !kernel_filesystem("ext4") => return,
        Err(e) => panic!("cannot mount an ext4 image: {e}"),
    };
    let mut seen = Vec::new();
    for tool in tools() {
        let dir = mnt.join(tool);
        std::fs::create_dir_all(&dir).unwrap();
        let d = format!("--directory={}", dir.display());
        let jobs: [&[&str]; 3] = [
            &[
                "--donorname=file.def",
                "--filename=file1",
                "--filesize=8m",
                "--size=8m",
                "--bs=32k",
                "--rw=write",
                "--direct=1",
            ],
            &[
                "--donorname=file3.def",
                "--filename=file3",
                "--size=4m",
                "--bs=4k",
                "--rw=randwrite",
                "--inplace=1",
            ],
            &[
                "--donorname=f4.def",
                "--filename=f4",
                "--size=1m",
                "--rw=write",
            ],
        ];
        let mut sums = Vec::new();
        for j in jobs {
            let mut args = vec!["--name=d", d.as_str(), "--ioengine=e4defrag"];
            args.extend_from_slice(j);
            let (_, v) = run_json(tool, &dir, &args);
            sums.push(summary(&v));
        }
        assert_eq!(
            sums[0][2],
            ("write".into(), 256, 8 << 20, 256, 256),
            "{tool}"
        );
        assert_eq!(
            sums[1][2],
            ("write".into(), 1024, 4 << 20, 1024, 1024),
            "{tool}"
        );
        assert_eq!(sums[2][0].1, 22, "{tool}: no filesize");
        let kept: Vec<_> = files_of(&dir)
            .into_iter()
            .filter(|(n, ..)| n.starts_with("file"))
            .collect();
        seen.push((sums, kept));
    }
    if let [a, b] = &seen[..] {
        assert_eq!(a, b, "fiox (left) vs fio (right)");
    }
    // fio's e4defrag examples, on the image.
    if let Some(ex) = examples_dir() {
        for name in ["e4defrag.fio", "e4defrag2.fio"] {
            let dir = mnt.join(name.trim_end_matches(".fio"));
            std::fs::create_dir_all(&dir).unwrap();
            let text = std::fs::read_to_string(ex.join(name)).unwrap();
            let job = dir.join(name);
            std::fs::write(&job, shrink(&text, &dir)).unwrap();
            let r = fiox_in(&dir, &[job.to_str().unwrap(), "--output-format=json"]);
            // e4defrag2's libaio jobs write file3 from two jobs at once with verify=md5, and
            // its "-bis" fuzzer runs with continue_on_error=all: fio 3.33 reports verify
            // failures and EBUSY there too. The defragmenting jobs must run cleanly.
            for j in r.json()["jobs"].as_array().unwrap() {
                let jn = j["jobname"].as_str().unwrap_or("");
                if !jn.contains("e4defrag") || jn.ends_with("-bis") {
                    continue;
                }
                assert_eq!(j["error"], 0, "{name}: {jn}: {}", r.stderr);
                assert!(
                    j["write"]["total_ios"].as_u64().unwrap() > 0,
                    "{name}: {jn}"
                );
            }
        }
    }
}

/// [`run_json`] that kills the tool after `secs` (a hang fails the test instead of stalling).
fn run_json_timeout(tool: &str, cwd: &Path, args: &[&str], secs: u32) -> (i32, Value) {
    let (code, v, _) = tool_json(tool, cwd, args, Some(secs));
    (code, v)
}

/// fio's example job files for these engines run under fiox: the same sections, with a
/// scratch directory for /scratch, fewer files and less time (`shrink`).
#[test]
fn fio_examples_of_these_engines_run() {
    let Some(dir) = examples_dir() else {
        panic!("fio's examples not found: tests/data/fio-examples, or FIO_SRC/examples");
    };
    for name in [
        "falloc.fio",
        "ftruncate.fio",
        "filecreate-ioengine.fio",
        "filestat-ioengine.fio",
        "filedelete-ioengine.fio",
        "cpuio.fio",
        "exec.fio",
        "netio.fio",
    ] {
        let scratch = TempDir::under(Path::new("/var/tmp"), "example");
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let job = scratch.path().join(name);
        std::fs::write(&job, shrink(&text, scratch.path())).unwrap();
        let r = fiox_in(
            scratch.path(),
            &[job.to_str().unwrap(), "--output-format=json"],
        );
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert!(r.stderr.is_empty(), "{name}: quiet stderr: {}", r.stderr);
        let v = r.json();
        for j in v["jobs"].as_array().unwrap() {
            let ios: u64 = ["read", "write", "trim"]
                .iter()
                .map(|d| j[d]["total_ios"].as_u64().unwrap())
                .sum();
            assert!(ios > 0, "{name}: job {} did I/O", j["jobname"]);
            assert_eq!(j["error"], 0, "{name}");
        }
    }
}

fn examples_dir() -> Option<std::path::PathBuf> {
    let d = std::env::var_os("FIO_SRC")
        .map(std::path::PathBuf::from)
        .map(|d| d.join("examples"))
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fio-examples").into());
    d.is_dir().then_some(d)
}

/// An example made small: /scratch becomes `dir`, sizes, file counts and runtimes shrink.
fn shrink(text: &str, dir: &Path) -> String {
    text.lines()
        .map(|l| {
            let l = l.trim();
            match l.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                Some(("directory", _)) => format!("directory={}", dir.display()),
                Some(("size" | "filesize", v))
                    if v.contains('M') || v.contains('g') || v.contains("k ;") =>
                {
                    format!("{}=4m", l.split('=').next().unwrap_or("size"))
                }
                Some(("nrfiles", v)) => {
                    format!("nrfiles={}", v.parse::<u32>().map_or(50, |n| n.min(50)))
                }
                Some(("runtime", _)) => "runtime=1".into(),
                Some(("numjobs", _)) => "numjobs=1".into(),
                // exec.fio's turbostat reports every 5 s; a 1 s run wants every second.
                Some(("arguments", v)) => {
                    format!("arguments={}", v.replace("--interval 5", "--interval 1"))
                }
                _ => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// filecreate without size= or filesize=: fio sizes each file at one minimum block (its
/// get_file_size), so the job runs one I/O per file instead of failing for want of a size.
#[test]
fn filecreate_without_size_takes_one_block_like_fio() {
    let ours = compare(
        "fcreate-nosize",
        &[&["--name=c", "--ioengine=filecreate", "--nrfiles=3"]],
    );
    assert_eq!(ours[0].1, 0);
    assert_eq!(ours[0].0[1], ("read".into(), 3, 3 * 4096, 3, 0));
}

/// Mode and kind of `path` (None when it is gone).
fn dir_mode(path: &Path) -> Option<(bool, u32)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((m.is_dir(), m.mode() & 0o7777))
}

/// fio 3.42's directory engines (fio 3.33 has none, so checked through the directories):
/// dircreate times mkdir(2) with fio's mode argument S_IFDIR (permissions 0000) and fails on an
/// existing directory; dirstat and dirdelete make the directories at setup with mode 0700,
/// then stat or rmdir each once; one completion latency per directory in the job's direction;
/// unlink=1 removes what was made; a directory fiox did not make is not removed unless allowed.
#[test]
fn dir_engines_make_stat_and_remove_directories() {
    let dir = TempDir::new("dirops");
    let d = format!("--directory={}", dir.path().display());
    let run = |args: &[&str]| {
        let mut v = vec![d.as_str()];
        v.extend_from_slice(args);
        run_json("fiox", dir.path(), &v)
    };
    let p = |n: &str| dir.path().join(n);
    let (code, v) = run(&["--name=c", "--ioengine=dircreate", "--nrfiles=4"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(summary(&v)[1], ("read".into(), 4, 4 * 4096, 4, 0));
    for i in 0..4 {
        assert_eq!(dir_mode(&p(&format!("c.0.{i}"))), Some((true, 0)), "{i}");
    }
    let (code, v) = run(&["--name=c", "--ioengine=dircreate", "--nrfiles=4"]);
    assert_eq!(
        (code, v["jobs"][0]["error"].as_u64()),
        (1, Some(17)),
        "EEXIST"
    );
    let (code, v) = run(&[
        "--name=s",
        "--ioengine=dirstat",
        "--stat_type=statx",
        "--rw=randwrite",
        "--nrfiles=3",
        "--filesize=8k",
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(summary(&v)[2], ("write".into(), 6, 3 * 8192, 3, 0));
    assert_eq!(dir_mode(&p("s.0.2")), Some((true, 0o700)));
    // dirstat needs a size, as fio's (its setup gives the directories none).
    let (code, _) = run(&["--name=s", "--ioengine=dirstat", "--nrfiles=3"]);
    assert_ne!(code, 0);
    // dirdelete: the directories fiox made (by dircreate above, or at its own setup) go.
    let (code, v) = run(&[
        "--name=c",
        "--ioengine=dirdelete",
        "--nrfiles=4",
        "--filesize=4k",
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(summary(&v)[1], ("read".into(), 4, 4 * 4096, 4, 0));
    assert!((0..4).all(|i| dir_mode(&p(&format!("c.0.{i}"))).is_none()));
    let (code, _) = run(&[
        "--name=n",
        "--ioengine=dirdelete",
        "--nrfiles=2",
        "--filesize=4k",
    ]);
    assert_eq!(code, 0);
    assert!(dir_mode(&p("n.0.0")).is_none() && dir_mode(&p("n.0.1")).is_none());
    // unlink=1 removes the directories dircreate made; dirstat's too.
    let (code, _) = run(&[
        "--name=x",
        "--ioengine=dircreate",
        "--nrfiles=2",
        "--unlink=1",
    ]);
    assert_eq!(code, 0);
    assert!(dir_mode(&p("x.0.0")).is_none());
    let (code, _) = run(&[
        "--name=s",
        "--ioengine=dirstat",
        "--nrfiles=3",
        "--size=12k",
        "--unlink=1",
    ]);
    assert_eq!(code, 0);
    assert!(dir_mode(&p("s.0.0")).is_none());
    // A user's directory: dirdelete refuses it unless allowed.
    std::fs::create_dir(p("u.0.0")).unwrap();
    let args = ["--name=u", "--ioengine=dirdelete", "--filesize=4k"];
    let r = fiox_in(dir.path(), &[&[d.as_str()][..], &args].concat());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("ioengine=dirdelete would delete"),
        "{}",
        r.stderr
    );
    assert!(p("u.0.0").is_dir(), "kept");
    let r = fiox_in(
        dir.path(),
        &[&[d.as_str(), "--allow-destructive"][..], &args].concat(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!p("u.0.0").exists());
    let r = fiox(&["--readonly", "--name=c", d.as_str(), "--ioengine=dircreate"]);
    assert!(
        r.stderr.contains("creates and removes directories"),
        "{}",
        r.stderr
    );
}

/// fio 3.42's page_fault engine: the job's I/O goes to an anonymous mapping of size bytes, so
/// written data reads back (verify passes) and no job file is created; several files or an
/// offset are refused, as fio's init refuses them.
#[test]
fn page_fault_engine_does_io_in_anonymous_memory() {
    let dir = TempDir::new("pagefault");
    let d = format!("--directory={}", dir.path().display());
    let base = [
        "--name=p",
        d.as_str(),
        "--ioengine=page_fault",
        "--size=256k",
    ];
    let run = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        a.push("--output-format=json");
        run_json("fiox", dir.path(), &a)
    };
    let (code, v) = run(&["--rw=randwrite", "--verify=crc32c", "--bs=8k"]);
    assert_eq!(code, 0, "{v}");
    let j = &v["jobs"][0];
    assert_eq!(j["write"]["io_bytes"], 256 << 10);
    assert_eq!(
        j["read"]["io_bytes"],
        256 << 10,
        "every block read back and verified"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // The verify state file fio also writes at the end of a verifying job.
        .filter(|n| !n.ends_with(".state"))
        .collect();
    assert!(left.is_empty(), "no file: {left:?}");
    for bad in ["--nrfiles=2", "--offset=4k"] {
        let (code, _) = run(&[bad]);
        assert_ne!(code, 0, "{bad}");
    }
}
