//! Test harness for the `fiox` binary: run it with arguments, capture output and exit status,
//! parse JSON, make and clean temporary directories, and optionally run fio for comparison.

#![allow(dead_code)]

pub mod hog;
pub mod need;
pub mod netserver;
#[allow(unused_imports)]
pub use need::*;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Path of the binary cargo built for these tests.
pub fn fiox_bin() -> &'static str {
    env!("CARGO_BIN_EXE_fiox")
}

/// Result of one run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The result of a finished command (fiox run with its own environment, say).
    pub fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// stdout parsed as JSON, with the output in the panic message when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// The history database the tests' fiox runs record into (`fiox experiment` and `fiox quick`
/// record by default): FIOX_HISTORY_DB when set, else one scratch database in /dev/shm (or
/// /tmp), never the user's own history.
pub fn test_history_db() -> PathBuf {
    if let Some(p) = std::env::var_os("FIOX_HISTORY_DB") {
        return PathBuf::from(p);
    }
    let base = if Path::new("/dev/shm").is_dir() {
        "/dev/shm"
    } else {
        "/tmp"
    };
    Path::new(base).join("fiox-test-history/history.db")
}

/// `c` recording into [`test_history_db`].
pub fn with_test_history(c: &mut Command) -> &mut Command {
    c.env("FIOX_HISTORY_DB", test_history_db())
}

/// Run fiox to completion.
pub fn fiox(args: &[&str]) -> Run {
    let o = with_test_history(&mut Command::new(fiox_bin()))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run fiox");
    Run::from(o)
}

/// Run fiox to completion in directory `cwd` (for files fiox puts in the current directory:
/// verify state files, logs).
pub fn fiox_in(cwd: &Path, args: &[&str]) -> Run {
    tool_in("fiox", cwd, args)
}

/// The command that runs `tool` ("fio", or "fiox" for the built binary) in `cwd` with stdin
/// closed; `secs`: killed after that long (a hang fails the test instead of stalling it).
fn tool_cmd(tool: &str, cwd: &Path, secs: Option<u32>) -> Command {
    let bin = if tool == "fio" { "fio" } else { fiox_bin() };
    let mut c = match secs {
        Some(s) => {
            // SIGKILL 10 s after the SIGTERM when the tool does not end on it (fio's job
            // blocked in a recv keeps a terminated fio alive, and the test's pipes open).
            let mut c = Command::new("timeout");
            c.args(["-k", "10"]).arg(s.to_string()).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    c.current_dir(cwd).stdin(Stdio::null());
    with_test_history(&mut c);
    c
}

/// Run `tool` ("fio" or "fiox") to completion in `cwd`.
pub fn tool_in(tool: &str, cwd: &Path, args: &[&str]) -> Run {
    Run::from(tool_cmd(tool, cwd, None).args(args).output().expect("run"))
}

/// Start fiox without waiting (stdout/stderr piped).
pub fn spawn_fiox(args: &[&str]) -> Child {
    with_test_history(&mut Command::new(fiox_bin()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fiox")
}

/// Start fiox in directory `cwd` without waiting (stdout/stderr piped), SIGHUP at its
/// default: the tests' outcome must not depend on how the suite was started (under `nohup`
/// fiox keeps an ignored SIGHUP ignored, as it should, and a SIGHUP test would wait a minute
/// and fail).
pub fn spawn_fiox_in(cwd: &Path, args: &[&str]) -> Child {
    spawn_fiox_hup(cwd, args, libc::SIG_DFL)
}

/// [`spawn_fiox_in`] with SIGHUP's disposition `hup` (`libc::SIG_IGN`: as `nohup` starts it).
pub fn spawn_fiox_hup(cwd: &Path, args: &[&str], hup: libc::sighandler_t) -> Child {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(fiox_bin());
    with_test_history(&mut c);
    // SAFETY: signal(2) is async-signal-safe, as pre_exec's closure must be (it runs in the
    // forked child before exec); an ignored or default disposition survives the exec.
    unsafe {
        c.pre_exec(move || {
            libc::signal(libc::SIGHUP, hup);
            Ok(())
        });
    }
    c.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fiox")
}

pub fn wait(child: Child) -> Run {
    Run::from(child.wait_with_output().expect("wait for fiox"))
}

/// Run fio with JSON output.
pub fn fio_json(args: &[&str]) -> serde_json::Value {
    // fio leaves verify state files in its working directory: give it a throwaway one.
    let cwd = TempDir::new("fio-cwd");
    tool_json("fio", cwd.path(), args, None).1
}

/// Run `tool` ("fio", or "fiox" for the built binary) in `cwd` with JSON output: exit code,
/// report and stderr. `secs`: kill it after that long (a hang fails the test instead of
/// stalling it). fio prints error and notice lines on stdout before its JSON, so the report
/// starts at the first line that begins with `{`.
pub fn tool_json(
    tool: &str,
    cwd: &Path,
    args: &[&str],
    secs: Option<u32>,
) -> (i32, serde_json::Value, String) {
    let o = tool_cmd(tool, cwd, secs)
        .args(args)
        .arg("--output-format=json")
        .output()
        .expect("run");
    let out = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let at = if out.starts_with('{') {
        0
    } else {
        out.find("\n{").map_or(0, |i| i + 1)
    };
    let v = serde_json::from_str(&out[at..])
        .unwrap_or_else(|e| panic!("{tool} {args:?} JSON ({e}): {out}\nstderr: {stderr}"));
    (o.status.code().unwrap_or(-1), v, stderr)
}

/// A temporary directory removed on drop (in /dev/shm when available: fast and no disk).
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        Self::under(
            if Path::new("/dev/shm").is_dir() {
                Path::new("/dev/shm")
            } else {
                Path::new("/tmp")
            },
            tag,
        )
    }

    pub fn under(base: &Path, tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let d = base.join(format!(
            "fiox-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).expect("create temp dir");
        TempDir(d)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    /// Names of the entries currently in the directory.
    pub fn entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `--read_iolog=` and `--write_iolog=` options for a job on `dir`'s file `f` (`r.log` is
/// written, opening and closing `f`; `w.log` is named): fio warns "read iolog overrides
/// write_iolog", a parser warning `--warnings-fatal` stops on.
pub fn iolog_pair(dir: &TempDir) -> [String; 2] {
    let (log, f) = (dir.join("r.log"), dir.join("f"));
    let text = format!("fio version 2 iolog\n{f} add\n{f} open\n{f} close\n");
    std::fs::write(&log, text).expect("write the iolog");
    [
        format!("--read_iolog={log}"),
        format!("--write_iolog={}", dir.join("w.log")),
    ]
}

/// `jobs[0][dir]` of a fio/fiox JSON report as (total_ios, io_bytes).
pub fn issued(v: &serde_json::Value, dir: &str) -> (u64, u64) {
    let d = &v["jobs"][0][dir];
    (
        d["total_ios"].as_u64().expect("total_ios"),
        d["io_bytes"].as_u64().expect("io_bytes"),
    )
}

pub fn is_root() -> bool {
    std::env::var("USER").map(|u| u == "root").unwrap_or(false)
        || Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false)
}

/// Run a shell command; Ok(stdout) on success, Err(stderr) otherwise.
pub fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    sh_in(Path::new("."), cmd, args)
}

/// [`sh`] in directory `dir` (fio writes verify state files into its working directory).
#[allow(dead_code)]
pub fn sh_in(dir: &Path, cmd: &str, args: &[&str]) -> Result<String, String> {
    match Command::new(cmd).args(args).current_dir(dir).output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        // A program that is not installed fails the test, naming its package.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            require_tool(cmd);
            Err(format!("{cmd}: {e}"))
        }
        Err(e) => Err(format!("{cmd}: {e}")),
    }
}

/// Run `tool args` in `dir` under `strace -f -qq STRACE_ARGS` (which must pass the assertion
/// that the run succeeded) and return the trace.
pub fn strace_text(tool: &str, dir: &Path, args: &[&str], strace_args: &[&str]) -> String {
    let trace = dir.join("strace.trace");
    let out = Command::new("strace")
        .args(["-f", "-qq"])
        .args(strace_args)
        .arg("-o")
        .arg(&trace)
        .arg(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run strace");
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    join_resumed(&text)
}

/// strace's lines with each call whole: a call another thread interrupted is printed as
/// "PID call(args <unfinished ...>" and later "PID <... call resumed>rest) = RET"; the two
/// are joined into "PID call(args rest) = RET" where the first stood (tests read a call and
/// its return value from one line: a split openat once hid every read that followed).
pub fn join_resumed(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut open: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for l in text.lines() {
        let (pid, rest) = l.split_once(' ').unwrap_or(("", l));
        let rest = rest.trim_start();
        if let Some(head) = l.strip_suffix("<unfinished ...>") {
            open.insert(pid.to_string(), lines.len());
            lines.push(head.trim_end().to_string());
        } else if rest.starts_with("<... ") {
            let tail = rest.split_once("resumed>").map_or("", |(_, t)| t);
            match open.remove(pid) {
                Some(i) => lines[i] = format!("{} {}", lines[i], tail.trim_start()),
                None => lines.push(l.to_string()),
            }
        } else {
            lines.push(l.to_string());
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// The reads and writes `tool` makes on the files of `dir` as "pread64 LEN OFFSET", in order:
/// only descriptors opened by a relative path or one in `dir` count (not the loader's
/// libraries, nor fiox's signature probe, which opens through /proc/thread-self/fd).
pub fn io_trace(tool: &str, dir: &Path, args: &[&str]) -> Vec<String> {
    let text = strace_text(
        tool,
        dir,
        args,
        &["-s0", "-e", "trace=pread64,pwrite64,openat,close"],
    );
    let mut job_fds = std::collections::HashSet::new();
    let here = format!("\"{}", dir.display());
    let mut calls = Vec::new();
    for l in text.lines() {
        let ret = l
            .rsplit_once("= ")
            .and_then(|(_, r)| r.trim().parse::<i64>().ok());
        if let Some(a) = l.split_once("openat(").map(|(_, a)| a) {
            let path = a.split_once(", ").map_or("", |(_, p)| p);
            if !path.starts_with("\"/") || path.starts_with(&here) {
                job_fds.extend(ret);
            }
        } else if let Some(a) = l.split_once("close(").map(|(_, a)| a) {
            if let Some(fd) = a.split(')').next().and_then(|f| f.parse::<i64>().ok()) {
                job_fds.remove(&fd);
            }
        } else if let Some((call, a)) = ["pread64(", "pwrite64("]
            .iter()
            .find_map(|c| l.split_once(c).map(|(_, a)| (c.trim_end_matches('('), a)))
        {
            let Some(a) = a.split(')').next() else {
                continue;
            };
            let f: Vec<&str> = a.split(", ").collect();
            if f.len() < 4 || !f[0].parse::<i64>().is_ok_and(|fd| job_fds.contains(&fd)) {
                continue;
            }
            calls.push(format!("{call} {} {}", f[f.len() - 2], f[f.len() - 1]));
        }
    }
    calls
}

/// The posix_fadvise calls `tool` makes for `args` (run in `dir`), as "offset, len, ADVICE",
/// in order. Calls on descriptors opened through /proc/thread-self/fd are left out: that is fiox's
/// signature probe (libblkid advises its own descriptor), not the job's I/O.
pub fn fadvise_trace(tool: &str, dir: &Path, args: &[&str]) -> Vec<String> {
    let text = strace_text(tool, dir, args, &["-e", "trace=fadvise64,openat,close"]);
    let mut probe_fds = std::collections::HashSet::new();
    let mut calls = Vec::new();
    for l in text.lines() {
        // fiox's signature probe (libblkid) reopens the file it checks:
        // "PID openat(AT_FDCWD, "/proc/thread-self/fd/3", O_RDONLY...) = 7"
        let ret = l
            .rsplit_once("= ")
            .and_then(|(_, r)| r.trim().parse::<i64>().ok());
        if l.contains("openat(") {
            if let Some(fd) = ret.filter(|_| l.contains("\"/proc/thread-self/fd/")) {
                probe_fds.insert(fd);
            }
        } else if let Some(args) = l.split_once("close(").map(|(_, a)| a) {
            if let Some(fd) = args.split(')').next().and_then(|f| f.parse::<i64>().ok()) {
                probe_fds.remove(&fd);
            }
        } else if let Some(args) = l.split_once("fadvise64(").map(|(_, a)| a) {
            // A call another thread interrupted in strace's output: "... <unfinished ...>".
            let end = args.find(" <unfinished").or_else(|| args.find(')'));
            let Some(args) = end.map(|e| &args[..e]) else {
                continue;
            };
            let Some((fd, rest)) = args.split_once(", ") else {
                continue;
            };
            if fd.parse::<i64>().is_ok_and(|fd| probe_fds.contains(&fd)) {
                continue;
            }
            calls.push(rest.to_string());
        }
    }
    calls
}

/// A counter of process `pid`'s /proc/<pid>/io (`rchar`, `wchar`, `syscr`, `syscw`, ...); 0
/// once the process is gone or when the field is missing.
pub fn proc_io(pid: u32, field: &str) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    io.lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .strip_prefix(": ")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// The tasks of process `pid` whose file table holds `path` open, as thread names, and how
/// many descriptors of the main thread's table (the process's own, `/proc/<pid>/fd`) do.
pub fn tables_holding(pid: u32, path: &str) -> (Vec<String>, usize) {
    let count = |dir: &str| {
        std::fs::read_dir(dir).map_or(0, |d| {
            d.flatten()
                .filter(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy() == path))
                .count()
        })
    };
    let mut tasks = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let tdir = t.path();
        if count(&format!("{}/fd", tdir.display())) > 0 {
            let comm = std::fs::read_to_string(tdir.join("comm")).unwrap_or_default();
            tasks.push(comm.trim().to_string());
        }
    }
    (tasks, count(&format!("/proc/{pid}/fd")))
}

/// While fiox runs `args`, which tasks hold `path` open and how many descriptors of the main
/// thread's table do: polled until `ready` holds for them (or 20 s passed; the caller's
/// assertions then say what was seen), then the run is stopped with SIGINT.
pub fn file_tables_during(
    args: &[&str],
    path: &str,
    ready: impl Fn(&[String], usize) -> bool,
) -> (Vec<String>, usize) {
    let child = spawn_fiox(args);
    let pid = child.id();
    let mut seen = (Vec::new(), 0);
    for _ in 0..2000 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        seen = tables_holding(pid, path);
        if ready(&seen.0, seen.1) {
            break;
        }
    }
    let _ = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    let run = wait(child);
    assert!(matches!(run.code, 0 | 130), "{}", run.stderr);
    seen
}
