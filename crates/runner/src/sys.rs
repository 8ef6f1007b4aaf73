//! Thin safe wrappers over the few libc calls the runner needs that std does not offer: CPU
//! affinity, per-thread nice and I/O priority, preallocation,
//! block-device size, extended attributes and signal handlers. Each `unsafe` block states why it is sound; the only
//! state is the count of stop signals received.

pub use fiox_stats::sys::ThreadUsage;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

/// Turn a libc return value into `io::Result`.
fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Kernel thread id of the calling thread (for per-thread nice/ioprio).
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// Restrict the calling thread to `cpus` (one implementation, in the stats crate).
pub use fiox_stats::sys::set_affinity;

/// The CPUs the calling thread may run on (sched_getaffinity), in increasing order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid cpu_set_t and we pass its exact size; pid 0 = caller.
    check(unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) })?;
    let n = libc::CPU_SETSIZE as usize;
    // SAFETY: every c < CPU_SETSIZE lies inside `set`.
    Ok((0..n)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// setgid(2) then setuid(2) for the calling thread only: the raw system calls (glibc's
/// wrappers change every thread of the process).
pub fn set_thread_creds(
    uid: Option<u32>,
    gid: Option<u32>,
) -> Result<(), (&'static str, io::Error)> {
    if let Some(g) = gid {
        // SAFETY: setgid takes one integer and touches no memory of ours.
        check(unsafe { libc::syscall(libc::SYS_setgid, g as libc::c_long) } as i32)
            .map_err(|e| ("setgid", e))?;
    }
    if let Some(u) = uid {
        // SAFETY: setuid takes one integer and touches no memory of ours.
        check(unsafe { libc::syscall(libc::SYS_setuid, u as libc::c_long) } as i32)
            .map_err(|e| ("setuid", e))?;
    }
    Ok(())
}

/// set_mempolicy(2) for the calling thread: `mode` (MPOL_*) over `nodes` (each below 1024).
pub fn set_mempolicy(mode: i32, nodes: &[usize]) -> io::Result<()> {
    let mut mask = [0u64; 16];
    for &n in nodes.iter().filter(|&&n| n < 1024) {
        mask[n / 64] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        // One more than the mask's bits, as libnuma passes it (the kernel reads maxnode - 1).
        (mask.as_ptr(), 1025)
    };
    // SAFETY: the kernel reads at most (maxnode - 1) bits = 16 words from ptr (or nothing
    // when it is null), and `mask` lives across the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            mode as libc::c_long,
            ptr,
            maxnode as libc::c_ulong,
        )
    };
    check(r as i32)?;
    Ok(())
}

/// The number of CPUs configured (fio's cpus_configured), at least 1.
pub fn cpus_configured() -> usize {
    // SAFETY: sysconf takes an integer and reads no memory of ours.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// Clock ticks per second (fio's os_clk_tck), for `--debug=helperthread`.
pub fn clk_tck() -> libc::c_long {
    // SAFETY: sysconf takes an integer and reads no memory of ours.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) }
}

/// The calling thread to SCHED_IDLE (runs only when nothing else wants the CPU).
pub fn set_sched_idle() -> io::Result<()> {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: p is a valid sched_param that lives across the call; pid 0 is this thread.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &p) })?;
    Ok(())
}

/// clock_gettime(2) of clock `id`, in ms.
pub fn clock_ms(id: i32) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec the kernel writes; an unknown id only returns EINVAL.
    check(unsafe { libc::clock_gettime(id as libc::clockid_t, &mut ts) })?;
    Ok(ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000)
}

/// Set the nice value of the calling thread (Linux applies PRIO_PROCESS to a tid per thread).
pub fn set_thread_nice(nice: i32) -> io::Result<()> {
    // SAFETY: setpriority takes plain integers; a tid selects only this thread.
    check(unsafe { libc::setpriority(libc::PRIO_PROCESS, gettid() as libc::id_t, nice) })?;
    Ok(())
}

/// `ioprio_set(IOPRIO_WHO_PROCESS, tid, value)` for the calling thread (value: class << 13 | hint << 3 | level).
pub fn set_thread_ioprio(value: u32) -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    let prio = value as libc::c_long;
    // SAFETY: ioprio_set takes three integers and touches no memory of ours.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            gettid() as libc::c_long,
            prio,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// CPU counters of the calling thread (fiox-stats' getrusage(RUSAGE_THREAD) wrapper); zero
/// counters when the call fails, so a missing figure never stops a job.
pub fn thread_usage() -> ThreadUsage {
    ThreadUsage::now().unwrap_or_default()
}

/// CPU counters of the calling thread plus the given helper threads of this process (an
/// engine's workers); a helper whose counters cannot be read (it exited) adds nothing.
pub fn job_usage(helpers: &[libc::pid_t]) -> ThreadUsage {
    let mut u = thread_usage();
    for &tid in helpers {
        if let Ok(h) = ThreadUsage::of_task(tid) {
            u.add(&h);
        }
    }
    u
}

/// prctl(PR_SET_NAME): the calling thread's name (the kernel keeps its first 15 bytes).
pub fn set_thread_name(name: &str) -> io::Result<()> {
    let c = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: c is NUL-terminated and outlives the call; the kernel copies at most 16 bytes.
    if unsafe { libc::prctl(libc::PR_SET_NAME, c.as_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The process's open-file limit, after raising the soft limit to the hard one (as shells'
/// `ulimit -n unlimited` would within the hard cap): the number of descriptors fiox may hold.
pub fn raise_nofile_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } < 0 {
        return 1024;
    }
    if r.rlim_cur < r.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: r.rlim_max,
            rlim_max: r.rlim_max,
        };
        // SAFETY: setrlimit reads the struct; raising the soft limit up to the hard one needs
        // no privilege and changes nothing else.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            r.rlim_cur = r.rlim_max;
        }
    }
    r.rlim_cur
}

/// syncfs(2) of the filesystem holding `fd`.
pub fn syncfs(fd: RawFd) -> io::Result<()> {
    // SAFETY: syncfs takes a descriptor by value and touches no memory of ours.
    if unsafe { libc::syncfs(fd) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// fallocate(2) with `mode` (0 = allocate and extend, FALLOC_FL_KEEP_SIZE = keep size).
pub fn fallocate(fd: RawFd, mode: i32, off: u64, len: u64) -> io::Result<()> {
    // SAFETY: plain integer arguments; touches no memory of ours.
    check(unsafe { libc::fallocate(fd, mode, off as libc::off_t, len as libc::off_t) })?;
    Ok(())
}

/// fcntl(2) write life hint (RWH_WRITE_LIFE_*): on the open file (F_SET_FILE_RW_HINT) or
/// on its inode (F_SET_RW_HINT).
pub fn set_write_hint(fd: RawFd, hint: u64, on_file: bool) -> io::Result<()> {
    // F_LINUX_SPECIFIC_BASE (1024) + 14 and + 12.
    let cmd = if on_file { 1024 + 14 } else { 1024 + 12 };
    let v: u64 = hint;
    // SAFETY: the kernel reads one u64 from the pointer, which lives across the call.
    check(unsafe { libc::fcntl(fd, cmd, &v as *const u64) })?;
    Ok(())
}

/// posix_fallocate(3).
pub fn posix_fallocate(fd: RawFd, off: u64, len: u64) -> io::Result<()> {
    // SAFETY: plain integer arguments.
    let r = unsafe { libc::posix_fallocate(fd, off as libc::off_t, len as libc::off_t) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// Size in bytes of the block device open at `fd` (BLKGETSIZE64).
pub fn blkdev_size(fd: RawFd) -> io::Result<u64> {
    // _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 to the pointer we pass, which is valid.
    check(unsafe { libc::ioctl(fd, BLKGETSIZE64 as _, &mut size as *mut u64) })?;
    Ok(size)
}

/// Signals seen since start: SIGINT/SIGTERM count, read by the run loop and the binary.
static SIGNALS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only an atomic store/exit here: both are async-signal-safe.
    let n = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
    if n >= 3 {
        // The second signal's forced exit (run by the watcher thread) did not happen: a third
        // one exits here and now, without any cleanup.
        // SAFETY: _exit is async-signal-safe and ends the process immediately.
        unsafe { libc::_exit(130) };
    }
}

/// Whether `sig`'s disposition is SIG_IGN (as `nohup` leaves SIGHUP).
fn ignored(sig: libc::c_int) -> bool {
    // SAFETY: sigaction with a NULL new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// End the process at once with `code`: no destructors, no buffered output (a forced exit).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit has no preconditions; it never returns.
    unsafe { libc::_exit(code) }
}

/// Install SIGINT/SIGTERM/SIGHUP handlers that count signals (see [`signals_seen`]): a
/// terminal hangup (an ssh session dropped) stops the run as Ctrl-C does, with its report and
/// cleanup, instead of killing it. A SIGHUP that is ignored (`nohup`) stays ignored.
pub fn install_stop_handlers() -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        if sig == libc::SIGHUP && ignored(sig) {
            continue;
        }
        // SAFETY: sigaction is plain data; zeroed then filled with a valid handler and an empty
        // mask. The handler only touches an atomic and calls _exit.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = libc::SA_RESTART;
            check(libc::sigaction(sig, &sa, std::ptr::null_mut()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
/// Set extended attribute `name` of the file open at `fd` to `value`.
pub fn fset_xattr(fd: RawFd, name: &str, value: &[u8]) -> io::Result<()> {
    let n = std::ffi::CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: the name is NUL-terminated and lives across the call; value is a valid slice of
    // value.len() bytes the kernel only reads.
    check(unsafe { libc::fsetxattr(fd, n.as_ptr(), value.as_ptr().cast(), value.len(), 0) })?;
    Ok(())
}

#[cfg(test)]
/// Extended attribute values are short here: a longer one is not fiox's (ERANGE).
const XATTR_MAX: usize = 256;

#[cfg(test)]
/// Extended attribute `name` of the file open at `fd` (Err(ENODATA) when it is not set).
pub fn fget_xattr(fd: RawFd, name: &str) -> io::Result<Vec<u8>> {
    let n = std::ffi::CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut buf = vec![0u8; XATTR_MAX];
    // SAFETY: NUL-terminated name; buf is valid for buf.len() bytes of writes.
    let r = unsafe { libc::fgetxattr(fd, n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(r as usize);
    Ok(buf)
}

/// How many SIGINT/SIGTERM arrived since the handlers were installed.
pub fn signals_seen() -> u32 {
    SIGNALS.load(Ordering::Relaxed)
}

/// Whether stdout is a terminal (fio draws its ETA line there, by default only on a terminal).
pub fn stdout_is_tty() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
}

/// Give the calling thread its own copy of the process's file table (`unshare(CLONE_FILES)`):
/// the same numbers name the same open files, but what it opens or closes from now on is its
/// own, and threads it starts later share its copy.
pub(crate) fn unshare_file_table() -> io::Result<()> {
    // SAFETY: unshare takes no pointers; it only changes the calling thread's kernel state.
    check(unsafe { libc::unshare(libc::CLONE_FILES) }).map(|_| ())
}

/// Sleep while `word` holds `expected`, at most `timeout` (FUTEX_WAIT, process-private). Returns
/// on a wake, a change of the word, the timeout or a signal: the caller re-checks its condition.
pub fn futex_wait(
    word: &std::sync::atomic::AtomicU32,
    expected: u32,
    timeout: std::time::Duration,
) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a live, aligned u32 for the duration of the call and `ts` a valid
    // relative timeout; the kernel only reads both. Errors (EAGAIN, ETIMEDOUT, EINTR) all mean
    // "look again", which the caller does.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

/// Wake every thread sleeping in [`futex_wait`] on `word`.
pub fn futex_wake_all(word: &std::sync::atomic::AtomicU32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE only reads its address.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_usage_grows_with_work() {
        let a = thread_usage();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let b = thread_usage();
        assert!(b.usr_us + b.sys_us >= a.usr_us + a.sys_us);
    }

    #[test]
    fn affinity_to_all_online_cpus_works() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cpus: Vec<usize> = (0..n).collect();
        // May fail in restricted cpusets; only check it does not panic and errors are typed.
        let _ = set_affinity(&cpus);
        assert!(set_affinity(&[usize::MAX]).is_err());
    }
}
