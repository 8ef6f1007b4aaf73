//! Signals to processes fiox started and recorded (a slow testbed's server): a process is
//! named by pid AND start time (clock ticks since boot, field 22 of /proc/PID/stat), so a
//! later process that reuses the pid is not it; a zombie (exited, not yet reaped) counts as
//! gone; and the signal goes only to a process whose executable is this very fiox executable
//! (/proc/PID/exe and /proc/self/exe are the same inode), so a forged record cannot make fiox
//! kill a shell or any other program. The signal is sent through a pidfd opened before the
//! checks: if the checked process exits and its pid is reused, the pidfd still names the old
//! one and the signal goes nowhere. A program fiox started that is not fiox (a vm testbed's
//! QEMU) is signalled through [`signal_program`]: the same pid, start time and pidfd rules,
//! and /proc/PID/exe must be the recorded executable's inode, which must still be the file at
//! the recorded path, whose name must begin with the prefix the caller allows.
//!
//! A program fiox starts dies with fiox ([`die_with_parent`]: SIGKILL from the kernel when
//! the spawning thread ends, kill -9 included), and one recorded before it was started (its
//! pid not known yet) is found again by [`find_program`]: the recorded executable, run by
//! this user, with a tag fiox put on its command line.

use crate::error::{GuardError, Result};
use crate::ident::Identity;
use crate::sys;
use std::os::fd::AsFd;
use std::path::Path;

/// The fields of /proc/PID/stat after the command name (which may hold spaces and ')').
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.get(stat.rfind(')')? + 2..)?;
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// The start time of process `pid` in clock ticks since boot; None when there is none.
pub fn start_time(pid: u32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

/// Whether `pid` is a zombie: it has exited and holds nothing, only its parent's wait is due.
pub fn is_zombie(pid: u32) -> bool {
    stat_fields(pid).is_some_and(|f| f.first().is_some_and(|s| s == "Z"))
}

/// Whether the process started at `start` with pid `pid` still runs (not a zombie).
pub fn running(pid: u32, start: u64) -> bool {
    start_time(pid) == Some(start) && !is_zombie(pid)
}

fn exe_identity(path: &str) -> Option<Identity> {
    std::fs::metadata(path).ok().map(|m| Identity::of(&m))
}

/// Whether process `pid` runs this very executable (the same inode as /proc/self/exe).
pub fn runs_this_executable(pid: u32) -> bool {
    let theirs = exe_identity(&format!("/proc/{pid}/exe"));
    theirs.is_some() && theirs == exe_identity("/proc/self/exe")
}

/// Send `sig` to the process `pid` started at `start`, if it still runs and runs this very
/// executable. Ok(false): it is gone (or a zombie), nothing was sent. A process that runs
/// another program is refused.
pub fn signal_own(pid: u32, start: u64, sig: i32) -> Result<bool> {
    let what = format!("/proc/{pid}");
    let Some(pidfd) = open_recorded(pid, start, &what)? else {
        return Ok(false);
    };
    if !runs_this_executable(pid) {
        return Err(GuardError::refused(
            "signal",
            Path::new(&what),
            "it does not run this fiox executable (fiox signals only the servers it started; \
             after fiox was rebuilt or upgraded, stop an old server by hand)",
        ));
    }
    send(&pidfd, sig, &what)
}

/// Send `sig` to the process `pid` started at `start` if it still runs the program `exe`
/// (whose file name begins with `prefix`, e.g. "qemu-system-") with the recorded (device,
/// inode) `exe_id`: /proc/PID/exe and the file at `exe` must both be that inode. Ok(false):
/// it is gone (or a zombie). Anything else is refused.
pub fn signal_program(
    pid: u32,
    start: u64,
    exe: &Path,
    exe_id: (u64, u64),
    prefix: &str,
    sig: i32,
) -> Result<bool> {
    let what = format!("/proc/{pid}");
    let named = exe
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(prefix));
    if !named {
        return Err(GuardError::refused(
            "signal",
            Path::new(&what),
            format!(
                "the recorded program {} is not a {prefix}* program",
                exe.display()
            ),
        ));
    }
    let Some(pidfd) = open_recorded(pid, start, &what)? else {
        return Ok(false);
    };
    let theirs = exe_identity(&format!("/proc/{pid}/exe")).map(|i| i.dev_ino());
    let file = exe.to_str().and_then(exe_identity).map(|i| i.dev_ino());
    if theirs != Some(exe_id) || file != Some(exe_id) {
        return Err(GuardError::refused(
            "signal",
            Path::new(&what),
            format!(
                "it does not run the program fiox started ({}); stop it by hand if it is \
                 a leftover",
                exe.display()
            ),
        ));
    }
    send(&pidfd, sig, &what)
}

/// Have `cmd`'s child killed (SIGKILL) when the thread that spawns it ends, fiox killed with
/// kill -9 included; the spawn fails when fiox died before that took effect. The spawning
/// thread must outlive the child (wait for it there).
pub fn die_with_parent(cmd: &mut std::process::Command) -> &mut std::process::Command {
    sys::die_with_parent(cmd, libc::SIGKILL);
    cmd
}

/// The processes (pid, start time) that run the executable (device, inode) `exe_id`, belong
/// to this effective user (another user cannot start a process as root) and have `tag` as
/// one whole argument: a program fiox recorded before starting it, found after fiox was
/// killed between the start and the record of its pid. Each is then signalled through
/// [`signal_program`] with its own checks.
pub fn find_program(exe_id: (u64, u64), tag: &str) -> Vec<(u32, u64)> {
    use std::os::unix::fs::MetadataExt;
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = sys::euid();
    let mut found = Vec::new();
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let base = format!("/proc/{pid}");
        let owned = std::fs::metadata(&base).is_ok_and(|m| m.uid() == me);
        let runs = exe_identity(&format!("{base}/exe")).map(|i| i.dev_ino()) == Some(exe_id);
        if !owned || !runs {
            continue;
        }
        let Ok(cmdline) = std::fs::read(format!("{base}/cmdline")) else {
            continue;
        };
        let tagged = cmdline.split(|b| *b == 0).any(|a| a == tag.as_bytes());
        if let (true, Some(start)) = (tagged, start_time(pid)) {
            if !is_zombie(pid) {
                found.push((pid, start));
            }
        }
    }
    found
}

/// A pidfd of `pid`, opened before any check so a reused pid cannot be signalled, if it is
/// still the process started at `start` (None: gone, a zombie, or another process now).
fn open_recorded(pid: u32, start: u64, what: &str) -> Result<Option<std::os::fd::OwnedFd>> {
    let pidfd = match sys::pidfd_open(pid) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(None),
        Err(e) => return Err(GuardError::io("open process", Path::new(what), e)),
    };
    Ok(running(pid, start).then_some(pidfd))
}

/// Send `sig` through `pidfd`; Ok(false) when the process has exited meanwhile.
fn send(pidfd: &std::os::fd::OwnedFd, sig: i32, what: &str) -> Result<bool> {
    match sys::pidfd_send_signal(pidfd.as_fd(), sig) {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(false),
        Err(e) => Err(GuardError::io("signal", Path::new(what), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Not a test: the long-running copy of this executable the test below signals.
    #[test]
    #[ignore]
    fn helper_sleeps_when_asked() {
        if std::env::var_os("FIOX_GUARD_HELPER_SLEEP").is_some() {
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    }

    fn wait_for_start(pid: u32) -> u64 {
        for _ in 0..500 {
            if let Some(s) = start_time(pid) {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("process {pid} has no start time");
    }

    #[test]
    fn only_a_running_process_of_this_executable_is_signalled() {
        // Another program, named like a server in its arguments: refused, left running.
        let mut other = Command::new("sh")
            .args(["-c", "sleep 60", "serve-slow"])
            .spawn()
            .unwrap();
        let pid = other.id();
        let start = wait_for_start(pid);
        let e = signal_own(pid, start, libc::SIGTERM).unwrap_err();
        assert!(e.to_string().contains("does not run this fiox"), "{e}");
        assert!(running(pid, start));
        // The wrong start time is another process: nothing sent.
        assert!(!signal_own(pid, start + 1, libc::SIGTERM).unwrap());
        other.kill().unwrap();
        // Killed but not reaped: a zombie counts as gone.
        for _ in 0..500 {
            if is_zombie(pid) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(is_zombie(pid) && !running(pid, start));
        assert!(!signal_own(pid, start, libc::SIGTERM).unwrap());
        other.wait().unwrap();

        // A copy of this executable: signalled.
        let mut own = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "process::tests::helper_sleeps_when_asked",
                "--ignored",
            ])
            .env("FIOX_GUARD_HELPER_SLEEP", "1")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = own.id();
        let start = wait_for_start(pid);
        assert!(signal_own(pid, start, libc::SIGTERM).unwrap());
        let status = own.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }

    #[test]
    fn a_child_dies_with_the_thread_that_started_it_and_is_found_by_its_tag() {
        let tag = format!("fiox-tag-{}", std::process::id());
        let t = tag.clone();
        let spawner = std::thread::spawn(move || {
            let mut c = Command::new("sh");
            c.args(["-c", "while :; do sleep 1; done", &t]);
            let child = die_with_parent(&mut c).spawn().unwrap();
            let pid = child.id();
            (pid, wait_for_start(pid), child)
        });
        let (pid, start, mut child) = spawner.join().unwrap();
        // The spawning thread ended: the kernel sent SIGKILL.
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        assert!(!running(pid, start));
        // While it runs, a tagged program is found by executable and tag, and only so. It
        // waits on a read of a pipe that never brings a line: a builtin, no fork (a loop of
        // `sleep 1` forks a copy of the shell, tag included, once a second, and that copy
        // was found too when the test looked at that moment).
        let mut c = Command::new("sh");
        c.args(["-c", "read line", &tag])
            .stdin(std::process::Stdio::piped());
        let mut child = die_with_parent(&mut c).spawn().unwrap();
        let pid = child.id();
        let start = wait_for_start(pid);
        let id = exe_identity(&format!("/proc/{pid}/exe")).unwrap().dev_ino();
        assert_eq!(find_program(id, &tag), vec![(pid, start)]);
        assert!(find_program(id, "fiox-tag-other").is_empty());
        assert!(find_program((id.0, id.1 + 1), &tag).is_empty());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(find_program(id, &tag).is_empty());
    }

    #[test]
    fn a_recorded_program_is_signalled_only_while_it_runs_that_executable() {
        use std::os::unix::process::ExitStatusExt;
        let mut p = Command::new("sleep").arg("60").spawn().unwrap();
        let pid = p.id();
        let start = wait_for_start(pid);
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
        let id = exe_identity(exe.to_str().unwrap()).unwrap().dev_ino();
        let name = exe.file_name().unwrap().to_str().unwrap().to_string();
        // Another prefix than the program's name: refused before anything else.
        let e = signal_program(pid, start, &exe, id, "qemu-system-", libc::SIGTERM).unwrap_err();
        assert!(e.to_string().contains("not a qemu-system-"), "{e}");
        // Another inode (a forged record naming another program): refused, left running.
        let e =
            signal_program(pid, start, &exe, (id.0, id.1 + 1), &name, libc::SIGTERM).unwrap_err();
        assert!(e.to_string().contains("does not run the program"), "{e}");
        assert!(running(pid, start));
        assert!(!signal_program(pid, start + 1, &exe, id, &name, libc::SIGTERM).unwrap());
        assert!(signal_program(pid, start, &exe, id, &name, libc::SIGTERM).unwrap());
        assert_eq!(p.wait().unwrap().signal(), Some(libc::SIGTERM));
    }
}
