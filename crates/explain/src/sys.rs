//! The system calls of `--explain`: bpf(2) (maps, program loading, raw tracepoints),
//! perf_event_open(2) for classic tracepoints and the ioctls that attach a program to one.
//! Every `unsafe` block of the crate is here, each with its `// SAFETY:` note; the attribute
//! unions are built as zeroed word arrays and filled by offset, as the kernel's uapi headers
//! lay them out.

use crate::asm::Insn;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::AtomicU64;

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_RAW_TRACEPOINT_OPEN: libc::c_long = 17;

pub const BPF_MAP_TYPE_ARRAY: u32 = 2;
pub const BPF_PROG_TYPE_TRACEPOINT: u32 = 5;
pub const BPF_PROG_TYPE_RAW_TRACEPOINT: u32 = 17;
/// A BTF-typed raw tracepoint program (tp_btf): BPF_PROG_TYPE_TRACING loaded for
/// BPF_TRACE_RAW_TP against the tracepoint's `btf_trace_*` type.
pub const BPF_PROG_TYPE_TRACING: u32 = 26;
const BPF_TRACE_RAW_TP: u64 = 23;

const PERF_TYPE_TRACEPOINT: u64 = 2;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;

/// bpf(2) with a 128-byte attribute block (larger than every command used here needs; the
/// kernel requires the bytes it does not know to be zero, which they are).
fn bpf(cmd: libc::c_long, attr: &mut [u64; 16]) -> io::Result<libc::c_long> {
    // SAFETY: attr is a live, writable 128-byte buffer for the duration of the call and its
    // size is passed alongside; the kernel reads (and for some commands writes) only inside it.
    // The pointers stored in it (keys, values, instructions, log) are checked by the callers
    // to outlive the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.as_mut_ptr() as *mut libc::c_void,
            std::mem::size_of::<[u64; 16]>() as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn owned(fd: libc::c_long) -> OwnedFd {
    // SAFETY: fd was just returned by the kernel as a new descriptor this process owns alone.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// BPF_MAP_CREATE.
pub fn map_create(kind: u32, key: u32, value: u32, entries: u32) -> io::Result<OwnedFd> {
    map_create_flags(kind, key, value, entries, 0)
}

/// BPF_F_MMAPABLE: an array whose values user space can map (and write) directly.
pub const BPF_F_MMAPABLE: u32 = 1 << 10;

/// BPF_MAP_CREATE with map_flags (offset 16).
pub fn map_create_flags(
    kind: u32,
    key: u32,
    value: u32,
    entries: u32,
    flags: u32,
) -> io::Result<OwnedFd> {
    let mut a = [0u64; 16];
    a[0] = kind as u64 | (key as u64) << 32;
    a[1] = value as u64 | (entries as u64) << 32;
    a[2] = flags as u64;
    bpf(BPF_MAP_CREATE, &mut a).map(owned)
}

/// The values of a BPF_F_MMAPABLE array (`words` u64s: entries x value size / 8) mapped
/// shared and writable, as atomics: the programs and this process's threads update the same
/// words. The mapping is never unmapped (it lives until the process exits, holding the map):
/// a thread that still marks after the tracer finished writes where no one reads, never into
/// freed memory. One mapping per tracer started, a few MiB each.
pub fn map_mmap(map: &OwnedFd, words: usize) -> io::Result<&'static [AtomicU64]> {
    use std::os::fd::AsRawFd;
    let len = words * 8;
    // SAFETY: a fresh shared mapping of the map's descriptor, at an address the kernel picks;
    // the length is the array's values' size (the kernel refuses a longer one). Nothing else
    // in the process refers to the region.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            map.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the region is `len` bytes, page-aligned (so u64-aligned), zero-initialised by
    // the kernel, readable and writable, and never unmapped (above): a 'static slice of
    // atomics over it is valid; every access to it (here and by the BPF programs) is a
    // whole-word load, store or atomic add.
    Ok(unsafe { std::slice::from_raw_parts(p as *const AtomicU64, words) })
}

/// Close descriptor `fd` of the calling thread's own copy of the file table (made by
/// unshare(CLONE_FILES)): a copy of a descriptor the process's shared table still holds,
/// owned by nothing in this copy. Errors are of no use (it is gone either way).
pub fn close_copy(fd: i32) {
    // SAFETY: close takes no pointers; `fd` in this thread's private table is a duplicate no
    // Rust object here owns (the owner's is in the shared table, untouched).
    unsafe { libc::close(fd) };
}

/// The calling thread's kernel id.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() as u32 }
}

/// CLOCK_MONOTONIC in ns: the clock bpf_ktime_get_ns reads (through the vDSO: no syscall).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a live timespec the call writes; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn elem_attr(map: i32, key: *const u8, value: *const u8, flags: u64) -> [u64; 16] {
    let mut a = [0u64; 16];
    a[0] = map as u32 as u64;
    a[1] = key as u64;
    a[2] = value as u64;
    a[3] = flags;
    a
}

/// BPF_MAP_LOOKUP_ELEM into `value` (which must be the map's value size); false if absent.
pub fn map_lookup(map: i32, key: &[u8], value: &mut [u8]) -> io::Result<bool> {
    let mut a = elem_attr(map, key.as_ptr(), value.as_mut_ptr(), 0);
    match bpf(BPF_MAP_LOOKUP_ELEM, &mut a) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// BPF_PROG_LOAD of a (raw) tracepoint program; on refusal the verifier's log (retried with
/// logging on) is the error's text. `btf_type`: load it as a tp_btf program (kind
/// BPF_PROG_TYPE_TRACING) for the tracepoint whose `btf_trace_*` type id this is, in the
/// kernel's own BTF.
pub fn prog_load(
    insns: &[Insn],
    name: &str,
    kind: u32,
    btf_type: Option<u32>,
) -> Result<OwnedFd, String> {
    let license = b"Dual MIT/GPL\0";
    let load = |log: Option<&mut Vec<u8>>| {
        let mut a = [0u64; 16];
        a[0] = kind as u64 | (insns.len() as u64) << 32;
        a[1] = insns.as_ptr() as u64;
        a[2] = license.as_ptr() as u64;
        if let Some(buf) = log {
            a[3] = 1 | (buf.len() as u64) << 32;
            a[4] = buf.as_mut_ptr() as u64;
        }
        // prog_name (offset 48): up to 15 bytes, NUL-terminated by the zeroed block.
        let mut nm = [0u8; 16];
        for (d, s) in nm.iter_mut().zip(name.bytes().take(15)) {
            *d = if s.is_ascii_alphanumeric() { s } else { b'_' };
        }
        a[6] = u64::from_le_bytes(nm[..8].try_into().unwrap_or_default());
        a[7] = u64::from_le_bytes(nm[8..].try_into().unwrap_or_default());
        // expected_attach_type (offset 68) and attach_btf_id (offset 108; its object fd at
        // 112 stays 0: vmlinux).
        if let Some(id) = btf_type {
            a[8] = BPF_TRACE_RAW_TP << 32;
            a[13] = (id as u64) << 32;
        }
        bpf(BPF_PROG_LOAD, &mut a)
    };
    match load(None) {
        Ok(fd) => Ok(owned(fd)),
        Err(e) => {
            let mut log = vec![0u8; 1 << 20];
            let _ = load(Some(&mut log));
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            let tail: Vec<&str> = text.lines().rev().take(12).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            Err(format!("{e}: {}", tail.join(" | ")))
        }
    }
}

/// A tracepoint perf event (all CPUs: a BPF program on a tracepoint runs wherever it fires)
/// with `prog` attached and enabled.
pub fn attach_tracepoint(id: u64, prog: &OwnedFd) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    let mut attr = [0u64; 16];
    // type (u32) and size (u32: PERF_ATTR_SIZE_VER0, 64 bytes), config, sample_period = 1.
    attr[0] = PERF_TYPE_TRACEPOINT | 64 << 32;
    attr[1] = id;
    attr[2] = 1;
    // SAFETY: attr is a live 128-byte perf_event_attr whose first 64 bytes are the declared
    // size; pid -1 with cpu 0 and no group is a valid system-wide tracepoint event.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_ptr(),
            -1 as libc::pid_t,
            0 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let ev = owned(fd);
    // SAFETY: both ioctls take an int argument by value on a perf event descriptor we own.
    let r = unsafe { libc::ioctl(ev.as_raw_fd(), PERF_EVENT_IOC_SET_BPF, prog.as_raw_fd()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    let r = unsafe { libc::ioctl(ev.as_raw_fd(), PERF_EVENT_IOC_ENABLE, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ev)
}

/// BPF_RAW_TRACEPOINT_OPEN: `prog` on the raw tracepoint `name` (e.g. "sys_enter"), attached
/// while the returned descriptor is open. A tp_btf program names its tracepoint by the type
/// it was loaded against: `name` None.
pub fn raw_tracepoint_open(name: Option<&str>, prog: &OwnedFd) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    let c = name
        .map(std::ffi::CString::new)
        .transpose()
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut a = [0u64; 16];
    a[0] = c.as_ref().map_or(0, |c| c.as_ptr() as u64);
    a[1] = prog.as_raw_fd() as u32 as u64;
    bpf(BPF_RAW_TRACEPOINT_OPEN, &mut a).map(owned)
}

/// This process's id (the thread group the programs filter on).
pub fn getpid() -> u32 {
    std::process::id()
}
