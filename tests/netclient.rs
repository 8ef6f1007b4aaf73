//! `fiox --client` against fio 3.33's servers and fiox's (on loopback, and inside a network
//! namespace the test makes): for the same jobs and servers, fiox's client prints what fio's
//! client prints (JSON key paths, the normal report's lines, terse fields) with the same
//! counts; a fleet of several servers (fio and fiox mixed) is summed as `All clients`; a server
//! that cannot be reached is an error naming it, and the others still report.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::netserver::*;
use harness::*;
use serde_json::Value;

fn stats(v: &Value) -> Vec<Value> {
    v["client_stats"].as_array().cloned().unwrap_or_default()
}

#[test]
fn fiox_client_prints_fios_json_from_fio_and_fiox_servers() {
    need_fio();
    let dir = TempDir::new("ncjson");
    let job = job_file(&dir, NULL_JOB);
    for tool in ["fio", "fiox"] {
        let s = Server::start(tool);
        let a = client_of("fio", &[s.port], &["--output-format=json", &job]);
        let b = client_of("fiox", &[s.port], &["--output-format=json", &job]);
        assert_eq!(
            (a.code, b.code),
            (0, 0),
            "{tool}: {}\n{}",
            a.stderr,
            b.stderr
        );
        assert!(b.stderr.is_empty(), "{}", b.stderr);
        // fiox's stdout is one JSON document, nothing around it.
        let vb: Value = serde_json::from_str(&b.stdout).expect("only JSON on stdout");
        let va = json_of(&a);
        assert_eq!(key_set(&va), key_set(&vb), "{tool} server");
        let (sa, sb) = (stats(&va), stats(&vb));
        assert_eq!(sb.len(), 3, "two jobs and All clients");
        for (x, y) in sa.iter().zip(&sb) {
            assert_eq!(x["jobname"], y["jobname"]);
            for d in ["read", "write"] {
                assert_eq!(x[d]["total_ios"], y[d]["total_ios"], "{tool} {d}");
                assert_eq!(x[d]["io_bytes"], y[d]["io_bytes"], "{tool} {d}");
            }
            assert_eq!(y["hostname"], "127.0.0.1");
            assert_eq!(y["port"].as_u64(), Some(s.port as u64));
        }
        assert_eq!(sb[0]["read"]["clat_ns"]["N"].as_u64(), Some(4096));
        assert_eq!(sb[0]["job options"]["rw"], "randread");
        assert_eq!(sb[2]["read"]["total_ios"].as_u64(), Some(4096));
        assert_eq!(sb[2]["write"]["total_ios"].as_u64(), Some(4096));
        assert_eq!(va["global options"], vb["global options"]);
    }
}

#[test]
fn fiox_client_prints_fios_normal_and_terse_reports() {
    need_fio();
    let dir = TempDir::new("ncnormal");
    let job = job_file(&dir, NULL_JOB);
    let s = Server::start("fio");
    let a = client_of("fio", &[s.port], &["--eta=never", &job]);
    let b = client_of("fiox", &[s.port], &["--eta=never", &job]);
    assert_eq!((a.code, b.code), (0, 0), "{}\n{}", a.stderr, b.stderr);
    assert!(b.stdout.starts_with("hostname="), "{}", b.stdout);
    assert_eq!(
        shape(&a.stdout),
        shape(&b.stdout),
        "{}\n----\n{}",
        a.stdout,
        b.stdout
    );
    for l in [
        "> Starting 2 processes",
        "Run status group 0 (all jobs):",
        "All clients: (groupid=0, jobs=2)",
        "issued rwts: total=4096,0,0,0",
    ] {
        assert!(b.stdout.contains(l), "{l}:\n{}", b.stdout);
    }
    for v in ["3", "4"] {
        let tv = format!("--terse-version={v}");
        let a = client_of("fio", &[s.port], &["--output-format=terse", &tv, &job]);
        let b = client_of("fiox", &[s.port], &["--output-format=terse", &tv, &job]);
        let fields = |s: &str| {
            s.lines()
                .filter(|l| l.contains(';'))
                .map(|l| l.split(';').count())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            fields(&a.stdout),
            fields(&b.stdout),
            "v{v}\n{}\n{}",
            a.stdout,
            b.stdout
        );
        assert_eq!(fields(&b.stdout).len(), 3, "{}", b.stdout);
    }
}

#[test]
fn a_mixed_fleet_is_summed_as_all_clients_by_both_clients() {
    need_fio();
    let dir = TempDir::new("ncfleet");
    let job = job_file(&dir, NULL_JOB);
    let fleet = [
        Server::start("fio"),
        Server::start("fiox"),
        Server::start("fiox"),
    ];
    let ports: Vec<u16> = fleet.iter().map(|s| s.port).collect();
    // A host list file, as fio reads one: the job goes to every host in it.
    let list = dir.join("hosts");
    let text: String = ports.iter().map(|p| format!("127.0.0.1,{p}\n")).collect();
    std::fs::write(&list, text).unwrap();
    let hosts = format!("--client={list}");
    let run = |tool: &str| {
        let bin = if tool == "fiox" { fiox_bin() } else { "fio" };
        let o = std::process::Command::new(bin)
            .args([hosts.as_str(), "--output-format=json", &job])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        Run::from(o)
    };
    let (a, b) = (run("fio"), run("fiox"));
    assert_eq!((a.code, b.code), (0, 0), "{}\n{}", a.stderr, b.stderr);
    let (va, vb) = (json_of(&a), json_of(&b));
    assert_eq!(key_set(&va), key_set(&vb));
    let (sa, sb) = (stats(&va), stats(&vb));
    // fio 3.33's client sums as the servers' stats arrive and prints "All clients" whenever
    // the count it has seen so far equals the jobs announced so far: when one server's fast
    // jobs end before another server has announced its jobs, fio prints a partial "All
    // clients" too (client.c, handle_ts against handle_start). The loaded CI machine hit it;
    // fiox's client waits for every server, so it prints one
    // (a_late_server_is_summed_once makes the race happen).
    let jobs_of = |s: &[Value]| s.iter().filter(|j| j["jobname"] != "All clients").count();
    assert_eq!(jobs_of(&sa), 6, "fio: 3 servers x 2 jobs");
    assert!(sa.len() > 6 && sa.last().unwrap()["jobname"] == "All clients");
    assert_eq!(sb.len(), 7);
    let all = &sb[6];
    assert_eq!(all["jobname"], "All clients");
    assert_eq!(all["read"]["total_ios"].as_u64(), Some(3 * 4096));
    assert_eq!(all["write"]["io_bytes"].as_u64(), Some((3 * 16) << 20));
    let mut seen: Vec<u64> = sb[..6].iter().filter_map(|s| s["port"].as_u64()).collect();
    seen.dedup();
    assert_eq!(seen, ports.iter().map(|p| *p as u64).collect::<Vec<_>>());
}

#[test]
fn a_late_server_is_summed_once() {
    need_fio();
    let dir = TempDir::new("nclate");
    let job = job_file(&dir, NULL_JOB);
    let fleet = [
        Server::start("fio"),
        Server::start("fiox"),
        Server::start("fio"),
    ];
    let ports: Vec<u16> = fleet.iter().map(|s| s.port).collect();
    let late = fleet[2].child.id() as i32;
    let run = |tool: &str| {
        // The last server is stopped while the others run their jobs and report: its
        // connection waits in the listen backlog until it is continued 3 s later.
        // SAFETY: kill(2) on the test's own child process.
        unsafe { libc::kill(late, libc::SIGSTOP) };
        let wake = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(3));
            // SAFETY: as above.
            unsafe { libc::kill(late, libc::SIGCONT) };
        });
        let r = client_of(tool, &ports, &["--output-format=json", &job]);
        wake.join().unwrap();
        r
    };
    let (a, b) = (run("fio"), run("fiox"));
    assert_eq!((a.code, b.code), (0, 0), "{}\n{}", a.stderr, b.stderr);
    let (sa, sb) = (stats(&json_of(&a)), stats(&json_of(&b)));
    let names = |s: &[Value]| -> Vec<String> {
        s.iter()
            .map(|j| j["jobname"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let (na, nb) = (names(&sa), names(&sb));
    let alls = |n: &[String]| n.iter().filter(|j| *j == "All clients").count();
    // fio sums what has arrived when its count matches the jobs announced so far: the two
    // early servers get an "All clients" of their own before the late one starts.
    assert!(alls(&na) >= 1, "{na:?}");
    assert_eq!((nb.len(), alls(&nb)), (7, 1), "{nb:?}");
    let all = &sb[6];
    assert_eq!(all["jobname"], "All clients");
    assert_eq!(all["read"]["total_ios"].as_u64(), Some(3 * 4096));
}

#[test]
fn an_unreachable_server_is_an_error_and_the_others_still_report() {
    need_fio();
    let dir = TempDir::new("ncdown");
    let job = job_file(&dir, NULL_JOB);
    let up = Server::start("fiox");
    let down = free_port("127.0.0.1");
    let b = client_of("fiox", &[up.port, down], &["--output-format=json", &job]);
    assert_eq!(b.code, 1, "{}", b.stderr);
    assert!(
        b.stderr.contains("connect") && b.stderr.contains("refused"),
        "{}",
        b.stderr
    );
    let v: Value = serde_json::from_str(&b.stdout).expect("JSON on stdout");
    assert_eq!(
        stats(&v).len(),
        3,
        "the reachable server's jobs and All clients"
    );
    // No server, no job: errors naming what is missing.
    let r = fiox(&["--client=127.0.0.1,0", &job]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("port"), "{}", r.stderr);
    let r = fiox(&["--rw=read", "--client=127.0.0.1,1"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("after the --client"), "{}", r.stderr);
    // --parse-only checks every server's job here and connects to none (port 1: nobody).
    let r = fiox(&["--parse-only", "--client=127.0.0.1,1", &job]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let bad = job_file(&dir, "[x]\nrw=bogus\n");
    let r = fiox(&["--parse-only", "--client=127.0.0.1,1", &bad]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("job.fio:2: rw=bogus"), "{}", r.stderr);
}

/// Servers and client inside a network namespace the test makes: loopback only, nothing
/// outside the machine is reachable or reached.
#[test]
fn a_fleet_in_a_network_namespace() {
    need_fio();
    require_tool("unshare");
    require_tool("ip");
    let dir = TempDir::new("ncnetns");
    let job = job_file(&dir, NULL_JOB);
    let out = dir.join("out.json");
    let script = format!(
        "ip link set lo up || exit 9; ip addr add 127.0.0.2/8 dev lo 2>/dev/null; \
         fio --server=ip:127.0.0.1,8765 >/dev/null 2>&1 & a=$!; \
         {fiox} --server=ip:127.0.0.2,8765 >/dev/null 2>&1 & b=$!; \
         for i in $(seq 200); do \
           [ $(grep -c ':1F4D 00000000:0000 0A' /proc/net/tcp) -ge 2 ] && break; sleep 0.1; \
         done; \
         {fiox} --client=127.0.0.1 --client=ip:127.0.0.2,8765 --output-format=json {job} > {out}; \
         rc=$?; kill $a $b; exit $rc",
        fiox = fiox_bin(),
    );
    let o = std::process::Command::new("unshare")
        .args(["--net", "sh", "-c", &script])
        .output()
        .unwrap();
    let r = Run::from(o);
    if r.stderr.contains("Operation not permitted") {
        eprintln!(
            "skipped: cannot make a network namespace here ({})",
            r.stderr.trim()
        );
        return;
    }
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let s = stats(&v);
    assert_eq!(s.len(), 5, "{v}");
    let hosts: Vec<&str> = s.iter().filter_map(|x| x["hostname"].as_str()).collect();
    assert_eq!(
        hosts[..4],
        ["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"]
    );
    assert_eq!(s[4]["read"]["total_ios"].as_u64(), Some(2 * 4096));
}

#[test]
fn ctrl_c_stops_every_servers_jobs_and_their_results_come_back() {
    need_fio();
    let dir = TempDir::new("ncstop");
    let job = job_file(
        &dir,
        "[t]\nioengine=null\nsize=1g\ntime_based\nruntime=60\nrate=100m\n",
    );
    let (a, b) = (Server::start("fio"), Server::start("fiox"));
    let child = std::process::Command::new(fiox_bin())
        .arg(format!("--client=127.0.0.1,{}", a.port))
        .arg(&job)
        .arg(format!("--client=127.0.0.1,{}", b.port))
        .arg(&job)
        .arg("--output-format=json")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let t0 = std::time::Instant::now();
    kill_with(child.id(), "INT");
    let r = Run::from(child.wait_with_output().unwrap());
    assert!(
        t0.elapsed().as_secs() < 20,
        "the client took {:?}",
        t0.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON after Ctrl-C");
    let s = stats(&v);
    assert_eq!(s.len(), 3, "{v}");
    for x in &s[..2] {
        let ms = x["read"]["runtime"].as_u64().unwrap();
        assert!((500..30_000).contains(&ms), "runtime {ms} ms of 60 s");
        assert!(x["read"]["total_ios"].as_u64().unwrap() > 0);
    }
}

/// `kill -SIG PID` through the kill program (no libc in the tests).
fn kill_with(pid: u32, sig: &str) {
    let st = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn logs_come_back_from_the_server_as_fios_client_writes_them() {
    need_fio();
    let dir = TempDir::new("nclogs");
    let prefix = dir.join("run");
    let job = job_file(
        &dir,
        &format!(
            "[j]\nioengine=null\nsize=16m\nrw=read\nrate=40m\nlog_avg_msec=20\n\
             write_bw_log={prefix}\nwrite_lat_log={prefix}\n"
        ),
    );
    let s = Server::start("fio");
    let files = |tag: &str| {
        let v = take_files(&dir, "run_");
        assert!(!v.is_empty(), "{tag}: no log came back");
        v
    };
    let a = client_of("fio", &[s.port], &[&job]);
    assert_eq!(a.code, 0, "{}", a.stderr);
    let from_fio = files("fio");
    let b = client_of("fiox", &[s.port], &[&job]);
    assert_eq!(b.code, 0, "{}", b.stderr);
    let from_fiox = files("fiox");
    let names = |v: &[(String, usize)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&from_fio), names(&from_fiox));
    assert!(from_fiox
        .iter()
        .any(|(n, l)| n == "run_bw.1.log.127.0.0.1" && *l > 3));
    for ((n, a), (_, b)) in from_fio.iter().zip(&from_fiox) {
        assert!(
            a.abs_diff(*b) <= 2,
            "{n}: {a} lines from fio's client, {b} from fiox's"
        );
    }
}

/// A hostile "server": accepts one connection, reads what the client sends for a moment, then
/// sends `bytes` in pieces `pace` apart and holds the connection open for `hold`.
fn hostile_server(bytes: Vec<u8>, pace: std::time::Duration, hold: std::time::Duration) -> u16 {
    use std::io::Write;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        // Take what the client sends first (PROBE, JOB, RUN), so closing is not a reset.
        use std::io::Read;
        s.set_read_timeout(Some(std::time::Duration::from_millis(300)))
            .unwrap();
        let mut sink = [0u8; 65536];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
        let step = if pace.is_zero() {
            bytes.len().max(1)
        } else {
            1
        };
        for c in bytes.chunks(step) {
            if s.write_all(c).is_err() {
                return;
            }
            std::thread::sleep(pace);
        }
        std::thread::sleep(hold);
    });
    port
}

#[test]
fn a_hostile_server_ends_its_own_conversation_and_the_others_report() {
    need_fio();
    let dir = TempDir::new("nchostile");
    let job = job_file(&dir, NULL_JOB);
    let good = Server::start("fiox");
    let zero = std::time::Duration::ZERO;
    let mut bad_crc = header(97, 10, 0);
    bad_crc[20] ^= 0xff;
    let mut truncated = header(97, 6, 1000);
    truncated.extend([0u8; 10]);
    let (hold, slow) = (
        std::time::Duration::from_secs(30),
        std::time::Duration::from_millis(1500),
    );
    let cases: Vec<(
        &str,
        Vec<u8>,
        std::time::Duration,
        std::time::Duration,
        &str,
    )> = vec![
        ("bad CRC", bad_crc, zero, hold, "header checksum"),
        ("wrong version", header(96, 10, 0), zero, hold, "version 96"),
        (
            "4 GiB claimed",
            header(97, 6, u32::MAX),
            zero,
            hold,
            "claims 4294967295 bytes",
        ),
        // Half a message, then the connection closes.
        ("truncated", truncated, zero, zero, "closed in the middle"),
        // One byte every 1.5 s: no message within the 10 s limit.
        (
            "slowloris",
            header(97, 5, 100),
            slow,
            hold,
            "no complete message",
        ),
    ];
    for (what, bytes, pace, hold, says) in cases {
        let port = hostile_server(bytes, pace, hold);
        let t0 = std::time::Instant::now();
        let r = client_of("fiox", &[good.port, port], &["--output-format=json", &job]);
        assert!(t0.elapsed().as_secs() < 25, "{what}: {:?}", t0.elapsed());
        assert_eq!(r.code, 1, "{what}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{what}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).expect("JSON");
        assert_eq!(stats(&v).len(), 3, "{what}: the good server's results");
    }
}
