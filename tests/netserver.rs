//! `fiox --server` against fio 3.33's own client (unmodified, on loopback): the same jobs run
//! through a fio server and a fiox server print the same documents (JSON keys, normal
//! report lines, terse fields) with each server's numbers; hostile peers end their own
//! connection only; a signal stops the running job and its results still reach the client.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::netserver::*;
use harness::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn fio_client_prints_the_same_json_from_fiox_as_from_fio() {
    need_fio();
    let dir = TempDir::new("netjson");
    let job = job_file(&dir, NULL_JOB);
    let (fio, fiox) = (Server::start("fio"), Server::start("fiox"));
    let a = fio.client(&["--output-format=json", &job]);
    let b = fiox.client(&["--output-format=json", &job]);
    assert_eq!((a.code, b.code), (0, 0), "{}\n{}", a.stderr, b.stderr);
    let (a, b) = (json_of(&a), json_of(&b));
    assert_eq!(key_set(&a), key_set(&b));
    let stats = |v: &Value| v["client_stats"].as_array().unwrap().clone();
    let (sa, sb) = (stats(&a), stats(&b));
    // Two jobs and fio's "All clients" sum, from each server.
    assert_eq!(sa.len(), 3);
    assert_eq!(sb.len(), 3);
    for (x, y) in sa.iter().zip(&sb) {
        assert_eq!(x["jobname"], y["jobname"]);
        for d in ["read", "write"] {
            assert_eq!(x[d]["total_ios"], y[d]["total_ios"], "{d}");
            assert_eq!(x[d]["io_bytes"], y[d]["io_bytes"], "{d}");
        }
        assert_eq!(y["hostname"], "127.0.0.1");
        assert_eq!(y["port"].as_u64(), Some(fiox.port as u64));
    }
    assert_eq!(sb[2]["jobname"], "All clients");
    assert_eq!(sb[0]["read"]["total_ios"], 4096);
    assert!(sb[0]["read"]["clat_ns"]["N"].as_u64() == Some(4096));
    assert!(sb[1]["write"]["iops"].as_f64().unwrap() > 0.0);
    assert_eq!(a["global options"], b["global options"]);
    assert_eq!(sa[0]["job options"], sb[0]["job options"]);
}

#[test]
fn fio_client_prints_the_same_normal_and_terse_reports_from_fiox() {
    need_fio();
    let dir = TempDir::new("netnormal");
    let job = job_file(&dir, NULL_JOB);
    let (fio, fiox) = (Server::start("fio"), Server::start("fiox"));
    // No ETA line: whether one is drawn depends on how long the run takes.
    let a = fio.client(&["--eta=never", &job]);
    let b = fiox.client(&["--eta=never", &job]);
    assert_eq!((a.code, b.code), (0, 0), "{}\n{}", a.stderr, b.stderr);
    // The probe line names each server's version; the rest has the same lines.
    assert!(b.stdout.starts_with("hostname="), "{}", b.stdout);
    assert!(b.stdout.contains(", fio=fiox-"), "{}", b.stdout);
    let strip = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(shape(&strip(&a.stdout)), shape(&strip(&b.stdout)));
    for l in [
        "Starting 2 processes",
        "Run status group 0 (all jobs):",
        "All clients: (groupid=0, jobs=2)",
        "issued rwts: total=4096,0,0,0",
        "issued rwts: total=0,4096,0,0",
    ] {
        assert!(b.stdout.contains(l), "{l}:\n{}", b.stdout);
    }
    let a = fio.client(&["--output-format=terse", &job]);
    let b = fiox.client(&["--output-format=terse", &job]);
    let fields = |s: &str| s.lines().map(|l| l.split(';').count()).collect::<Vec<_>>();
    assert_eq!(fields(&a.stdout), fields(&b.stdout));
    assert_eq!(fields(&b.stdout), [121, 121, 121], "{}", b.stdout);
}

#[test]
fn fio_client_runs_a_file_job_on_fiox() {
    need_fio();
    let dir = TempDir::new("netfile");
    let data = dir.join("data");
    let job = job_file(
        &dir,
        &format!("[w]\nioengine=psync\nfilename={data}\nsize=8m\nbs=64k\nrw=write\nfsync=32\n"),
    );
    let (fio, fiox) = (Server::start("fio"), Server::start("fiox"));
    let a = fio.client(&["--output-format=json", &job]);
    std::fs::remove_file(&data).unwrap();
    let b = fiox.client(&["--output-format=json", &job]);
    assert_eq!((a.code, b.code), (0, 0), "{}\n{}", a.stderr, b.stderr);
    let (a, b) = (json_of(&a), json_of(&b));
    assert_eq!(key_set(&a), key_set(&b));
    let w = &b["client_stats"][0]["write"];
    assert_eq!(w["io_bytes"], 8 << 20);
    assert_eq!(w["total_ios"], 128);
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 8 << 20);
    // The sync latencies fio's client prints come from the TS's sync_stat.
    let syncs = |v: &Value| v["client_stats"][0]["sync"]["lat_ns"]["N"].clone();
    assert_eq!(syncs(&b), 3);
    assert_eq!(syncs(&a), syncs(&b));
}

/// A raw connection that sends `bytes` and reads until the server closes it.
fn hostile(port: u16, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(bytes).unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    got
}

#[test]
fn hostile_peers_end_their_own_connection_and_the_server_goes_on() {
    need_fio();
    let dir = TempDir::new("nethostile");
    let job = job_file(&dir, NULL_JOB);
    let fiox = Server::start("fiox");
    // A 4 GiB payload claimed, a wrong version, a bad CRC, a truncated packet.
    assert!(hostile(fiox.port, &header(97, 3, u32::MAX)).is_empty());
    assert!(hostile(fiox.port, &header(96, 10, 0)).is_empty());
    let mut bad = header(97, 10, 0);
    bad[20] ^= 0xff;
    assert!(hostile(fiox.port, &bad).is_empty());
    {
        let mut s = TcpStream::connect(("127.0.0.1", fiox.port)).unwrap();
        s.write_all(&header(97, 3, 100)[..]).unwrap();
        s.write_all(&[b'x'; 10]).unwrap();
    }
    // The next client is served as if nothing happened.
    let r = fiox.client(&["--output-format=json", &job]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json_of(&r)["client_stats"][0]["read"]["total_ios"], 4096);
    let (code, log) = fiox.stop();
    assert_eq!(code, 0, "{log}");
    for want in [
        "claims 4294967295 bytes",
        "the peer speaks protocol version 96, fiox speaks fio 3.33's version 97",
        "bad header checksum",
        "closed in the middle of a message",
    ] {
        assert!(log.contains(want), "{want}:\n{log}");
    }
}

#[test]
fn a_signal_stops_the_running_job_and_the_client_still_gets_its_results() {
    need_fio();
    let dir = TempDir::new("netsignal");
    let job = job_file(
        &dir,
        "[long]\nioengine=null\nsize=1m\nbs=4k\nrw=read\ntime_based\nruntime=60\n",
    );
    let fiox = Server::start("fiox");
    let port = fiox.port;
    let client = std::thread::spawn(move || {
        Command::new("fio")
            .arg(format!("--client=127.0.0.1,{port}"))
            .args(["--output-format=json", &job])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    });
    // Once the job runs, stop the server.
    fiox.wait_for_job();
    let (code, log) = fiox.stop();
    assert_eq!(code, 0, "{log}");
    let r = Run::from(client.join().unwrap());
    assert!(!r.stdout.contains("exited with error"), "{}", r.stdout);
    let v = json_of(&r);
    let read = &v["client_stats"][0]["read"];
    assert!(read["total_ios"].as_u64().unwrap() > 0, "{}", r.stdout);
    assert!(read["runtime"].as_u64().unwrap() < 60_000, "{}", r.stdout);
}

#[test]
fn the_clients_ctrl_c_stops_the_job_and_its_results_come_back() {
    need_fio();
    let dir = TempDir::new("netquit");
    let job = job_file(
        &dir,
        "[long]\nioengine=null\nsize=1m\nbs=4k\nrw=read\ntime_based\nruntime=60\n",
    );
    let fiox = Server::start("fiox");
    let client = Command::new("fio")
        .arg(format!("--client=127.0.0.1,{}", fiox.port))
        .args(["--output-format=json", &job])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the job runs, Ctrl-C the client: fio's client sends QUIT, which stops the job.
    fiox.wait_for_job();
    let _ = Command::new("kill")
        .args(["-INT", &client.id().to_string()])
        .status();
    let r = Run::from(client.wait_with_output().unwrap());
    let v = json_of(&r);
    let read = &v["client_stats"][0]["read"];
    assert!(read["total_ios"].as_u64().unwrap() > 0, "{}", r.stdout);
    assert!(read["runtime"].as_u64().unwrap() < 60_000, "{}", r.stdout);
    // The server goes on serving.
    let quick = job_file(&dir, NULL_JOB);
    let r = fiox.client(&["--output-format=json", &quick]);
    assert_eq!(json_of(&r)["client_stats"][0]["read"]["total_ios"], 4096);
}

#[test]
fn a_daemon_server_writes_its_pid_and_serves_over_ipv6() {
    need_fio();
    let dir = TempDir::new("netdaemon");
    let job = job_file(&dir, NULL_JOB);
    let pidfile = dir.join("server.pid");
    let port = free_port("::1");
    let r = fiox(&[
        &format!("--server=ip6:::1,{port}"),
        &format!("--daemonize={pidfile}"),
    ]);
    // The starting process bound the address, started the daemon and left, quietly.
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    struct Kill(String);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = Command::new("kill").args(["-TERM", &self.0]).status();
        }
    }
    let _kill = Kill(pid.clone());
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    let o = Command::new("fio")
        .arg(format!("--client=ip6:::1,{port}"))
        .args(["--output-format=json", &job])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let r = Run::from(o);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(json_of(&r)["client_stats"][0]["read"]["total_ios"], 4096);
}

#[test]
fn a_bad_job_is_reported_to_the_client_naming_line_and_option() {
    need_fio();
    let dir = TempDir::new("netbad");
    let job = job_file(&dir, "[bad]\nrw=reed\n");
    let fiox = Server::start("fiox");
    let r = fiox.client(&[&job]);
    // fio's client prints what its server said; as against a fio server, nothing ran.
    assert!(
        r.stdout
            .contains("fiox: <client job file>:2: rw=reed: 'reed' is not one of read"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("Run status"), "{}", r.stdout);
    let good = job_file(&dir, NULL_JOB);
    let r = fiox.client(&["--output-format=json", &good]);
    assert_eq!(json_of(&r)["client_stats"][0]["read"]["total_ios"], 4096);
}

#[test]
fn a_jobs_logs_go_back_to_fios_client_and_not_onto_the_servers_disk() {
    need_fio();
    let dir = TempDir::new("netlogs");
    let prefix = dir.join("run");
    let job = job_file(
        &dir,
        &format!(
            "[j]\nioengine=null\nsize=16m\nrw=read\nrate=40m\nlog_avg_msec=20\n\
             write_bw_log={prefix}\nwrite_lat_log={prefix}\nwrite_iops_log={prefix}\n"
        ),
    );
    let listing = || -> Vec<String> {
        take_files(&dir, "run_")
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    };
    let temp_dirs = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("fiox-server-logs.")
            })
            .count()
    };
    let before = temp_dirs();
    let (fio, fiox) = (Server::start("fio"), Server::start("fiox"));
    let a = fio.client(&[&job]);
    assert_eq!(a.code, 0, "{}", a.stderr);
    let from_fio = listing();
    let b = fiox.client(&[&job]);
    assert_eq!(b.code, 0, "{}", b.stderr);
    let from_fiox = listing();
    assert!(
        from_fio.contains(&"run_bw.1.log.127.0.0.1".to_string()),
        "{from_fio:?}"
    );
    // The same files, each with the client's suffix: none was written without it (on the
    // server's side), and the server's private directory is gone.
    assert_eq!(from_fio, from_fiox);
    assert_eq!(
        temp_dirs(),
        before,
        "fiox's server left its log directory behind"
    );
}
