//! Ctrl-C (or SIGTERM) at each phase of a job: laying out a file, ramp, I/O, verify and the
//! final fsync (end_fsync). fiox must exit with 130, print valid JSON of what was measured,
//! and remove the files it created for an unlink=1 job; a second signal exits at once. Phases
//! are recognised from fiox's stdout, where fio prints them too (the layout message and the
//! ETA line's job state, with `--output-format=json,normal --eta=always`), and /proc (a thread
//! inside fsync(2)), never from timing.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::io::Read;
use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

/// What the watched runs print: as fio, the header and layout line, the ETA lines (drawn on
/// stdout with `--eta=always`), then the JSON report and the normal one.
const STREAM: [&str; 2] = ["--output-format=json,normal", "--eta=always"];

/// fiox's stdout as it arrives, split at newlines and carriage returns (ETA lines); the whole
/// text is kept for the report at the end.
struct Stdout {
    rx: mpsc::Receiver<String>,
    seen: String,
    all: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Stdout {
    fn watch(child: &mut Child) -> Stdout {
        let mut out = child.stdout.take().expect("stdout piped");
        let (tx, rx) = mpsc::channel();
        let all = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = all.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let mut line = Vec::new();
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                keep.lock().unwrap().extend_from_slice(&buf[..n]);
                for &b in &buf[..n] {
                    if b == b'\n' || b == b'\r' {
                        let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
                        line.clear();
                    } else {
                        line.push(b);
                    }
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
        });
        Stdout {
            rx,
            seen: String::new(),
            all,
            reader: Some(reader),
        }
    }

    /// Everything fiox printed on stdout (call after it exited).
    fn text(&mut self) -> String {
        if let Some(r) = self.reader.take() {
            r.join().expect("stdout reader");
        }
        String::from_utf8_lossy(&self.all.lock().unwrap()).into_owned()
    }

    /// The JSON report (fio's layout: from a `{` line to the first `}` line), with the whole
    /// stdout in the panic message when there is none.
    fn json(&mut self) -> serde_json::Value {
        let text = self.text();
        let doc = text.find("\n{\n").and_then(|start| {
            let end = text[start..].find("\n}\n")? + start + 3;
            Some(&text[start + 1..end])
        });
        doc.and_then(|d| serde_json::from_str(d).ok())
            .unwrap_or_else(|| panic!("no JSON report on stdout:\n{text}"))
    }

    /// Whether a report was printed (a forced exit prints none).
    fn has_report(&mut self) -> bool {
        let text = self.text();
        text.contains("\"fio version\"") || text.contains("Run status group")
    }

    /// Block until a line contains `marker` (panics if fiox ends first; the generous limit
    /// only turns a hang into a failure, it measures nothing).
    fn wait_for(&mut self, marker: &str) {
        loop {
            match self.rx.recv_timeout(Duration::from_secs(120)) {
                Ok(l) => {
                    self.seen.push_str(&l);
                    self.seen.push('\n');
                    if l.contains(marker) {
                        return;
                    }
                }
                Err(_) => panic!("never saw {marker:?}; stdout so far:\n{}", self.seen),
            }
        }
    }
}

impl Stdout {
    /// Like `wait_for`, but fail after `lines` lines without `marker` (ETA lines come about
    /// once a second, so a job stuck in another phase fails instead of hanging the test).
    fn wait_for_within(&mut self, marker: &str, lines: usize) {
        for _ in 0..lines {
            let l = self
                .rx
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("fiox ended before {marker:?}:\n{}", self.seen));
            self.seen.push_str(&l);
            self.seen.push('\n');
            if l.contains(marker) {
                return;
            }
        }
        panic!("no {marker:?} in {lines} lines:\n{}", self.seen);
    }
}

/// Deliver signals `sigs` (kill -s names, all different) to `pid` at the same instant: the
/// process is stopped, the signals are queued (checked in /proc), then it continues with all
/// of them pending.
fn signals_together(pid: u32, sigs: &[&str]) {
    let id = pid.to_string();
    sh("kill", &["-s", "STOP", &id]).expect("send SIGSTOP");
    poll_until("fiox stops", || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('T'))
        })
    });
    for sig in sigs {
        sh("kill", &["-s", sig, &id]).expect("send the signal");
    }
    for sig in sigs {
        let nr = match *sig {
            "INT" => libc::SIGINT,
            "TERM" => libc::SIGTERM,
            "HUP" => libc::SIGHUP,
            other => panic!("signal {other} not handled here"),
        };
        poll_until(&format!("SIG{sig} pending"), || pending(pid, nr));
    }
    sh("kill", &["-s", "CONT", &id]).expect("send SIGCONT");
}

fn sigint(child: &Child) {
    sh("kill", &["-INT", &child.id().to_string()]).expect("send SIGINT");
}

/// Whether signal `sig` is pending for process `pid` (process- or thread-directed), from
/// /proc: a second identical signal sent while the first is pending merges with it.
fn pending(pid: u32, sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let bit = 1u64 << (sig - 1);
    status
        .lines()
        .filter(|l| l.starts_with("SigPnd:") || l.starts_with("ShdPnd:"))
        .filter_map(|l| u64::from_str_radix(l.split_whitespace().nth(1)?, 16).ok())
        .any(|mask| mask & bit != 0)
}

/// Ctrl-C twice: the second SIGINT is sent once the first was taken (not pending any more),
/// as a person pressing twice would; sent back to back they can merge into one.
fn sigint_twice(child: &Child) {
    sigint(child);
    let mut polls = 0;
    while pending(child.id(), libc::SIGINT) {
        polls += 1;
        assert!(polls < 60_000, "the first SIGINT was never taken");
        std::thread::sleep(Duration::from_millis(1));
    }
    sigint(child);
}

/// Start fiox with `args` (plus JSON and normal output and the ETA, on stdout), wait for
/// `marker` on stdout, interrupt it, and check exit status, JSON and cleanup of `dir`.
fn interrupt_at(dir: &TempDir, args: &[&str], marker: &str) -> serde_json::Value {
    signal_at(dir, args, marker, "INT")
}

/// [`interrupt_at`] with signal `sig` (a `kill -s` name).
fn signal_at(dir: &TempDir, args: &[&str], marker: &str, sig: &str) -> serde_json::Value {
    let (child, out, _cwd) = started_until(args, marker, libc::SIG_DFL);
    sh("kill", &["-s", sig, &child.id().to_string()]).expect("send the signal");
    stopped(child, out, dir)
}

/// fiox started with `args` (plus JSON and normal output and the ETA, on stdout, and
/// unlink), SIGHUP's disposition `hup`, once `marker` is on its stdout; the working
/// directory it runs in.
fn started_until(args: &[&str], marker: &str, hup: libc::sighandler_t) -> (Child, Stdout, TempDir) {
    let mut a = args.to_vec();
    a.extend(STREAM);
    a.push("--unlink=1");
    // A verify job saves its state in the working directory: not in the source tree.
    let cwd = TempDir::new("sig-cwd");
    let mut child = spawn_fiox_hup(cwd.path(), &a, hup);
    let mut out = Stdout::watch(&mut child);
    out.wait_for(marker);
    (child, out, cwd)
}

/// A signalled fiox's end: status 130, its JSON report, nothing left in `dir`.
fn stopped(child: Child, mut out: Stdout, dir: &TempDir) -> serde_json::Value {
    let r = wait(child);
    assert_eq!(r.code, 130, "stderr:\n{}\nstdout:\n{}", r.stderr, out.seen);
    let v = out.json();
    assert!(dir.entries().is_empty(), "left behind: {:?}", dir.entries());
    v
}

#[test]
fn sigint_while_laying_out() {
    let dir = TempDir::under(std::path::Path::new("/tmp"), "sig-layout");
    let f = dir.join("big");
    // A read job lays out 2 GiB of data before its first I/O.
    let args = [
        "--name=l",
        "--rw=read",
        "--size=2g",
        "--time_based",
        "--runtime=60",
        &format!("--filename={f}") as &str,
    ];
    let v = interrupt_at(&dir, &args, "Laying out IO file");
    assert_eq!(v["jobs"][0]["jobname"], "l");
}

#[test]
fn sigint_during_ramp() {
    let dir = TempDir::new("sig-ramp");
    let f = dir.join("f");
    let args = [
        "--name=r",
        "--rw=randwrite",
        "--size=8m",
        "--ramp_time=60",
        "--time_based",
        "--runtime=60",
        &format!("--filename={f}") as &str,
    ];
    let v = interrupt_at(&dir, &args, "[/(1)]");
    // Nothing is measured during the ramp.
    assert_eq!(issued(&v, "write").0, 0, "{v}");
}

#[test]
fn sigint_during_io() {
    let dir = TempDir::new("sig-io");
    let f = dir.join("f");
    let args = [
        "--name=i",
        "--rw=randrw",
        "--size=8m",
        "--time_based",
        "--runtime=60",
        &format!("--filename={f}") as &str,
    ];
    let v = interrupt_at(&dir, &args, "[m(1)]");
    assert!(issued(&v, "read").0 > 0, "{v}");
}

/// SIGTERM stops a job as Ctrl-C does (fio handles both alike): report, cleanup, 130.
#[test]
fn sigterm_during_io() {
    let dir = TempDir::new("sig-term-io");
    let f = dir.join("f");
    let args = [
        "--name=t",
        "--rw=randwrite",
        "--size=8m",
        "--time_based",
        "--runtime=60",
        &format!("--filename={f}") as &str,
    ];
    let v = signal_at(&dir, &args, "[w(1)]", "TERM");
    assert!(issued(&v, "write").0 > 0, "{v}");
}

/// SIGHUP (an ssh session dropped) stops a job as Ctrl-C does: the report and cleanup come,
/// status 130 (it used to kill the run with no report, status 129).
#[test]
fn sighup_during_io() {
    let dir = TempDir::new("sig-hup-io");
    let f = dir.join("f");
    let args = [
        "--name=h",
        "--rw=randwrite",
        "--size=8m",
        "--time_based",
        "--runtime=60",
        &format!("--filename={f}") as &str,
    ];
    let v = signal_at(&dir, &args, "[w(1)]", "HUP");
    assert!(issued(&v, "write").0 > 0, "{v}");
}

/// Under `nohup` (SIGHUP ignored when fiox starts) a SIGHUP is ignored: the run goes on
/// until Ctrl-C, which stops it as usual.
#[test]
fn sighup_stays_ignored_under_nohup() {
    let dir = TempDir::new("sig-nohup");
    let f = dir.join("f");
    let args = [
        "--name=n",
        "--rw=randwrite",
        "--size=8m",
        "--time_based",
        "--runtime=60",
        &format!("--filename={f}") as &str,
    ];
    let (mut child, out, _cwd) = started_until(&args, "[w(1)]", libc::SIG_IGN);
    sh("kill", &["-s", "HUP", &child.id().to_string()]).expect("send SIGHUP");
    // Still running a while after (a handled SIGHUP stops a job within a few ms).
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "SIGHUP stopped a nohup run"
    );
    sigint(&child);
    let v = stopped(child, out, &dir);
    assert!(issued(&v, "write").0 > 0, "{v}");
}

#[test]
fn sigint_during_verify() {
    let dir = TempDir::new("sig-verify");
    let f = dir.join("f");
    // sha3-512 over 512 MiB keeps the verify phase busy for several ETA lines.
    let args = [
        "--name=v",
        "--rw=write",
        "--bs=1m",
        "--size=512m",
        "--verify=sha3-512",
        &format!("--filename={f}") as &str,
    ];
    let v = interrupt_at(&dir, &args, "[V(1)]");
    let (reads, _) = issued(&v, "read");
    assert!(
        reads < 512,
        "the verify phase stopped early: {reads} blocks read"
    );
}

/// A second signal at the phase `marker` shows forces the exit: status 130 at once, no
/// report, and the job's file (created by fiox, unlink=1) removed (fio has no such exit: a
/// second signal only repeats its termination request).
///
/// Both signals reach fiox together: it is stopped (SIGSTOP) while SIGTERM and SIGINT are
/// queued (two different signals never merge), then continued. Sent one after the other to a
/// running fiox, the first could end the run (report printed, exit 130) before the second
/// arrived on a loaded machine, which once failed this test.
fn force_at(args: &[&str], file: &str, marker: &str) {
    let mut a = args.to_vec();
    let filename = format!("--filename={file}");
    a.extend([filename.as_str(), "--unlink=1"]);
    a.extend(STREAM);
    // A verify job saves its state in the working directory: not in the source tree.
    let cwd = TempDir::new("force-cwd");
    let mut child = spawn_fiox_in(cwd.path(), &a);
    let mut out = Stdout::watch(&mut child);
    out.wait_for(marker);
    // The layout message comes just before the file: wait until it is there.
    poll_until(&format!("{marker}: fiox creates {file}"), || {
        std::path::Path::new(file).exists()
    });
    signals_together(child.id(), &["TERM", "INT"]);
    let r = wait(child);
    assert_eq!(r.code, 130, "stderr:\n{}\nstdout:\n{}", r.stderr, out.seen);
    assert!(
        !out.has_report(),
        "a forced exit prints no report:\n{}",
        out.text()
    );
    assert!(
        !std::path::Path::new(file).exists(),
        "{marker}: a forced exit still removes the file fiox created for unlink=1"
    );
}

#[test]
fn second_signal_forces_exit_at_every_phase() {
    let layout = TempDir::under(std::path::Path::new("/tmp"), "sig-force-layout");
    let f = layout.join("big");
    let read = [
        "--name=l",
        "--rw=read",
        "--size=2g",
        "--time_based",
        "--runtime=60",
    ];
    force_at(&read, &f, "Laying out IO file");
    let dir = TempDir::new("sig-force");
    let f = dir.join("f");
    let timed = ["--size=8m", "--time_based", "--runtime=60"];
    let ramp = [
        &["--name=r", "--rw=randwrite", "--ramp_time=60"][..],
        &timed,
    ]
    .concat();
    force_at(&ramp, &f, "[/(1)]");
    let io = [&["--name=i", "--rw=randrw"][..], &timed].concat();
    force_at(&io, &f, "[m(1)]");
    let verify = [
        "--name=v",
        "--rw=write",
        "--bs=1m",
        "--size=512m",
        "--verify=sha3-512",
    ];
    force_at(&verify, &f, "[V(1)]");
}

/// A second SIGINT exits at once with 130 even when the job cannot stop: here its final
/// fsync hangs on a frozen file system, so the first SIGINT cannot end it, and the second
/// ends the process without a report. (A FIFO, which blocked the job's open before, is now
/// refused before any open.)
#[test]
fn second_sigint_forces_exit() {
    let Some(mut fs) = StalledFs::new() else {
        return;
    };
    let Some((child, mut out)) = start_stalled_end_fsync(&mut fs) else {
        return;
    };
    let pid = child.id();
    sigint_twice(&child);
    // The forced exit has happened once the main thread is a zombie (the thread in fsync
    // holds the rest of the process until the file system thaws).
    poll_until("the forced exit", || leader_state(pid) == Some('Z'));
    fs.resume();
    let r = wait(child);
    assert_eq!(r.code, 130, "{}", r.stderr);
    let text = out.text();
    assert!(
        !text.contains("\"jobs\""),
        "a forced exit prints no report: {text}"
    );
}

/// The state letter of process `pid`'s main thread (/proc/PID/stat's third field).
fn leader_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.get(stat.rfind(')')? + 2..)?.chars().next()
}

/// Ctrl-C during the write phase of a verify job saves its write log (verify_state_save, as
/// fio): a verify_only run with verify_state_load then checks exactly what was written.
#[test]
fn sigint_saves_the_verify_state() {
    let dir = TempDir::new("sig-vstate");
    let f = dir.join("f");
    let job = |extra: &[&str]| {
        let mut a = vec![
            "--name=s".to_string(),
            "--rw=randwrite".into(),
            "--bs=4k".into(),
            "--size=64m".into(),
            "--verify=crc32c".into(),
            "--time_based".into(),
            "--runtime=60".into(),
            format!("--filename={f}"),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let a = job(&STREAM);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut child = spawn_fiox_in(dir.path(), &a);
    let mut out = Stdout::watch(&mut child);
    out.wait_for("[w(1)]");
    sigint(&child);
    let r = wait(child);
    assert_eq!(r.code, 130, "stderr:\n{}\nstdout:\n{}", r.stderr, out.seen);
    let v = out.json();
    let written = issued(&v, "write").0;
    assert!(written > 0, "{v}");
    assert!(
        dir.path().join("local-s-0-verify.state").exists(),
        "{:?}",
        dir.entries()
    );
    let a = job(&[
        "--verify_only=1",
        "--verify_state_load=1",
        "--output-format=json",
    ]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = fiox_in(dir.path(), &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (checked, _) = issued(&r.json(), "read");
    // Every block still holding its last write is checked (rewritten blocks once).
    assert!(checked > 0 && checked <= written, "{checked} of {written}");
}

/// A file system whose writeback hangs until the test says so: ext4 on a loop device whose
/// image lives on another ext4 (in /dev/shm) that the test freezes. Writes to the inner file
/// system go to the page cache as usual, but an fsync blocks until the outer one is thawed,
/// so the end_fsync phase lasts exactly as long as the test wants (no timing involved).
/// Fails without root, mkfs.ext4, mount or fsfreeze; None (the skip recorded) when the kernel
/// has no loop driver or no ext4.
struct StalledFs {
    // Drop thaws first, then the fields go in declaration order: the inner image (mounted
    // inside the outer one) before the outer.
    inner: fiox_testbed::Ext4Image,
    outer: fiox_testbed::Ext4Image,
    frozen: bool,
}

impl StalledFs {
    fn new() -> Option<StalledFs> {
        for tool in ["mkfs.ext4", "mount", "umount", "fsfreeze"] {
            require_tool(tool);
        }
        if !loop_devices() || !kernel_filesystem("ext4") {
            return None;
        }
        let setup = || -> Result<StalledFs, String> {
            let mut outer =
                fiox_testbed::Ext4Image::create_in(std::path::Path::new("/dev/shm"), 64 << 20)
                    .map_err(|e| e.to_string())?;
            let o = outer.mount().map_err(|e| e.to_string())?.to_path_buf();
            let mut inner =
                fiox_testbed::Ext4Image::create_in(&o, 32 << 20).map_err(|e| e.to_string())?;
            inner.mount().map_err(|e| e.to_string())?;
            Ok(StalledFs {
                outer,
                inner,
                frozen: false,
            })
        };
        Some(setup().unwrap_or_else(|e| panic!("cannot stack two ext4 images: {e}")))
    }

    /// Where the test's files go.
    fn dir(&self) -> &std::path::Path {
        self.inner.mount_point().expect("mounted")
    }

    fn outer_dir(&self) -> String {
        self.outer
            .mount_point()
            .expect("mounted")
            .display()
            .to_string()
    }

    /// Stall every write the inner file system sends to its device (ext4 always freezes).
    fn stall(&mut self) -> bool {
        sh("fsfreeze", &["-f", &self.outer_dir()]).expect("fsfreeze the outer ext4");
        self.frozen = true;
        true
    }

    fn resume(&mut self) {
        if self.frozen {
            sh("fsfreeze", &["-u", &self.outer_dir()]).expect("thaw");
            self.frozen = false;
        }
    }
}

impl Drop for StalledFs {
    fn drop(&mut self) {
        // Never leave a frozen file system behind: unmounting would hang on it.
        if self.frozen {
            let _ = sh("fsfreeze", &["-u", &self.outer_dir()]);
        }
    }
}

/// Whether a thread of process `pid` is inside system call `nr` (from /proc, no timing).
fn thread_in_syscall(pid: u32, nr: i64) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("syscall"))
            .is_ok_and(|s| s.split_whitespace().next() == Some(&nr.to_string()))
    })
}

/// Poll (without measuring time) until `done` holds; `what` names it in the failure.
fn poll_until(what: &str, done: impl Fn() -> bool) {
    let mut polls = 0;
    while !done() {
        polls += 1;
        assert!(polls < 60_000, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Start an end_fsync job on `fs` whose final fsync hangs; returns it once the ETA line shows
/// the job finishing ('f') and one of its threads sits in fsync(2).
fn start_stalled_end_fsync(fs: &mut StalledFs) -> Option<(Child, Stdout)> {
    if !fs.stall() {
        return None;
    }
    let f = fs.dir().join("f").display().to_string();
    let mut child = spawn_fiox(&[
        "--name=e",
        "--rw=write",
        "--bs=1m",
        "--size=8m",
        "--end_fsync=1",
        // No fsync after laying the file out (it would hang there, before any I/O).
        "--create_fsync=0",
        "--unlink=1",
        &format!("--filename={f}"),
        STREAM[0],
        STREAM[1],
    ]);
    let mut out = Stdout::watch(&mut child);
    out.wait_for_within("[f(1)]", 120);
    let pid = child.id();
    poll_until("a thread in fsync", || {
        thread_in_syscall(pid, libc::SYS_fsync)
    });
    Some((child, out))
}

/// SIGTERM during end_fsync: fiox cannot interrupt the fsync, so it finishes it, then prints
/// what it measured (valid JSON), removes the file it created (unlink=1) and exits with 130.
#[test]
fn sigterm_during_end_fsync() {
    let Some(mut fs) = StalledFs::new() else {
        return;
    };
    let Some((child, mut out)) = start_stalled_end_fsync(&mut fs) else {
        return;
    };
    sh("kill", &["-TERM", &child.id().to_string()]).expect("send SIGTERM");
    fs.resume();
    let r = wait(child);
    assert_eq!(
        r.code,
        130,
        "stderr:\n{}\nstdout:\n{}",
        r.stderr,
        out.text()
    );
    let v = out.json();
    // Every write completed before the final fsync.
    assert_eq!(issued(&v, "write"), (8, 8 << 20), "{v}");
    let left: Vec<_> = std::fs::read_dir(fs.dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "lost+found")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A second signal during a hung end_fsync forces the exit: the main thread is gone (the
/// process is a zombie waiting only for the thread stuck in fsync), no report is printed, and
/// the status is 130 once the fsync returns.
#[test]
fn second_signal_during_end_fsync_forces_exit() {
    let Some(mut fs) = StalledFs::new() else {
        return;
    };
    let Some((child, mut out)) = start_stalled_end_fsync(&mut fs) else {
        return;
    };
    let pid = child.id();
    sh("kill", &["-TERM", &pid.to_string()]).expect("send SIGTERM");
    sigint(&child);
    let leader_exited = || {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map(|s| {
                s.lines()
                    .any(|l| l.starts_with("State:") && l.contains('Z'))
            })
            .unwrap_or(true)
    };
    poll_until("fiox exits while its fsync still hangs", leader_exited);
    assert!(
        thread_in_syscall(pid, libc::SYS_fsync),
        "the fsync was still hung"
    );
    fs.resume();
    let r = wait(child);
    assert_eq!(r.code, 130, "{}", r.stderr);
    assert!(
        !out.has_report(),
        "a forced exit prints no report:\n{}",
        out.text()
    );
}

/// Ctrl-C and SIGTERM stop a job that is waiting between I/Os: a thinktime of 11 days, a rate
/// of 1 KiB/s (a 4 KiB block every 4 s, and a rate_iops of 1). fiox used to sleep out the
/// wait (19 s for thinktime=20s, 16 minutes for a huge one) before reporting. The limit below
/// only turns a hang into a failure; it measures nothing.
#[test]
fn signals_wake_thinktime_and_rate_waits() {
    for (wait, sig) in [
        ("--thinktime=1000000s", "INT"),
        ("--rate=1k", "TERM"),
        ("--rate_iops=1", "INT"),
    ] {
        let dir = TempDir::new("sig-wait");
        let file = format!("--filename={}", dir.join("f"));
        let mut child = spawn_fiox(&[
            "--name=w",
            "--rw=read",
            "--bs=4k",
            "--size=1m",
            &file,
            wait,
            "--unlink=1",
            STREAM[0],
            STREAM[1],
        ]);
        let mut out = Stdout::watch(&mut child);
        out.wait_for("[R(1)]");
        sh("kill", &["-s", sig, &child.id().to_string()]).expect("send the signal");
        let mut polls = 0;
        while child.try_wait().expect("poll fiox").is_none() {
            polls += 1;
            if polls > 600 {
                let _ = child.kill();
                panic!("{wait}: still waiting 60 s after SIG{sig}:\n{}", out.seen);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let r = harness::wait(child);
        assert_eq!(r.code, 130, "{wait}: {}\n{}", r.stderr, out.seen);
        let v = out.json();
        assert!(issued(&v, "read").0 >= 1, "{wait}: {v}");
        assert!(dir.entries().is_empty(), "{wait}: left {:?}", dir.entries());
    }
}

/// unlink=1 removes only the inode fiox created: a user's file renamed over fiox's file while
/// the job runs is left in place, bytes unchanged.
#[test]
fn unlink_spares_a_file_renamed_over_fioxs_mid_run() {
    let dir = TempDir::new("unlink-replaced");
    let f = dir.join("f");
    let mut child = spawn_fiox(&[
        "--name=u",
        "--rw=randwrite",
        "--size=8m",
        "--time_based",
        "--runtime=60",
        &format!("--filename={f}"),
        "--unlink=1",
        STREAM[0],
        STREAM[1],
    ]);
    let mut out = Stdout::watch(&mut child);
    out.wait_for("[w(1)]");
    let mine = dir.join("mine");
    std::fs::write(&mine, b"the user's data\n").unwrap();
    std::fs::rename(&mine, &f).unwrap();
    sigint(&child);
    let r = wait(child);
    assert_eq!(r.code, 130, "stderr:\n{}\nstdout:\n{}", r.stderr, out.seen);
    assert_eq!(
        std::fs::read(&f).expect("unlink=1 removed the user's file"),
        b"the user's data\n"
    );
}

/// Whether some 4 KiB block of `path` is all zeros (never written by a layout, whose data is
/// pseudo-random).
fn has_zero_block(path: &str) -> bool {
    let mut f = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return false;
        }
        if buf[..n].chunks(4096).any(|b| b.iter().all(|&x| x == 0)) {
            return true;
        }
    }
}

/// Ctrl-C while laying out leaves a file fiox knows is incomplete: the next run lays it out
/// again instead of reading the unwritten parts.
#[test]
fn interrupted_layout_is_laid_out_again() {
    let dir = TempDir::under(std::path::Path::new("/tmp"), "sig-relayout");
    let f = dir.join("big");
    let job = [
        "--name=l",
        "--rw=read",
        "--size=2g",
        "--io_size=4k",
        &format!("--filename={f}") as &str,
    ];
    let mut child = spawn_fiox(&job);
    let mut out = Stdout::watch(&mut child);
    out.wait_for("Laying out IO file");
    sigint(&child);
    let r = wait(child);
    assert_eq!(r.code, 130, "stderr:\n{}\nstdout:\n{}", r.stderr, out.seen);
    let len = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
    if len == 2 << 30 {
        assert!(has_zero_block(&f), "the layout was not interrupted");
    }
    let r = fiox(&job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("l: Laying out IO file"), "{}", r.stdout);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 2 << 30);
    assert!(
        !has_zero_block(&f),
        "the second run used a half-laid-out file"
    );
}
