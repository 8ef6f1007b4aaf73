//! The only unsafe code of fiox-testbed: thin wrappers over the few libblkid calls the
//! signature probe needs (libblkid.so.1 loaded at run time with dlopen, so building fiox needs
//! no -dev package and a machine without it still runs) and the recording signal handler.
//! Loop-device ioctls, mounts and unmounts are fiox-guard's (`fiox_guard::loopdev`,
//! `fiox_guard::mount`).
//! Every wrapper takes owned or borrowed Rust types and returns `io::Result`, so the rest of
//! the crate stays safe.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn cpath(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in string"))
}

/// libblkid's `BLKID_SUBLKS_*` and `BLKID_PARTS_*` flags (blkid.h; stable ABI since 2.15).
pub const BLKID_SUBLKS_LABEL: libc::c_int = 1 << 1;
pub const BLKID_SUBLKS_TYPE: libc::c_int = 1 << 5;
pub const BLKID_SUBLKS_USAGE: libc::c_int = 1 << 7;
pub const BLKID_SUBLKS_MAGIC: libc::c_int = 1 << 9;
pub const BLKID_PARTS_MAGIC: libc::c_int = 1 << 3;

type BlkidProbePtr = *mut libc::c_void;
type FnNew = unsafe extern "C" fn(*const libc::c_char) -> BlkidProbePtr;
type FnFree = unsafe extern "C" fn(BlkidProbePtr);
type FnSet = unsafe extern "C" fn(BlkidProbePtr, libc::c_int) -> libc::c_int;
type FnProbe = unsafe extern "C" fn(BlkidProbePtr) -> libc::c_int;
type FnLookup = unsafe extern "C" fn(
    BlkidProbePtr,
    *const libc::c_char,
    *mut *const libc::c_char,
    *mut libc::size_t,
) -> libc::c_int;

/// The libblkid functions fiox calls, resolved once from libblkid.so.1. The library is never
/// unloaded, so the pointers stay valid for the life of the process.
pub struct Libblkid {
    new_probe_from_filename: FnNew,
    free_probe: FnFree,
    enable_superblocks: FnSet,
    set_superblocks_flags: FnSet,
    enable_partitions: FnSet,
    set_partitions_flags: FnSet,
    do_safeprobe: FnProbe,
    do_probe: FnProbe,
    lookup_value: FnLookup,
}

/// libblkid.so.1, loaded on first use; `None` when it is not installed (or lacks a symbol).
pub fn libblkid() -> Option<&'static Libblkid> {
    static LIB: std::sync::OnceLock<Option<Libblkid>> = std::sync::OnceLock::new();
    LIB.get_or_init(load_libblkid).as_ref()
}

fn load_libblkid() -> Option<Libblkid> {
    // SAFETY: dlopen takes a NUL-terminated name; the handle is leaked on purpose (the
    // function pointers taken from it must outlive every caller).
    let handle = unsafe { libc::dlopen(c"libblkid.so.1".as_ptr(), libc::RTLD_NOW) };
    if handle.is_null() {
        return None;
    }
    let sym = |name: &std::ffi::CStr| {
        // SAFETY: `handle` is a live dlopen handle and `name` a NUL-terminated symbol name.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    type P = *mut libc::c_void;
    // SAFETY: each symbol is transmuted to the C prototype libblkid declares for it in
    // blkid.h (pointer-sized arguments, int results), non-null as checked by `sym`.
    unsafe {
        Some(Libblkid {
            new_probe_from_filename: std::mem::transmute::<P, FnNew>(sym(
                c"blkid_new_probe_from_filename",
            )?),
            free_probe: std::mem::transmute::<P, FnFree>(sym(c"blkid_free_probe")?),
            enable_superblocks: std::mem::transmute::<P, FnSet>(sym(
                c"blkid_probe_enable_superblocks",
            )?),
            set_superblocks_flags: std::mem::transmute::<P, FnSet>(sym(
                c"blkid_probe_set_superblocks_flags",
            )?),
            enable_partitions: std::mem::transmute::<P, FnSet>(sym(
                c"blkid_probe_enable_partitions",
            )?),
            set_partitions_flags: std::mem::transmute::<P, FnSet>(sym(
                c"blkid_probe_set_partitions_flags",
            )?),
            do_safeprobe: std::mem::transmute::<P, FnProbe>(sym(c"blkid_do_safeprobe")?),
            do_probe: std::mem::transmute::<P, FnProbe>(sym(c"blkid_do_probe")?),
            lookup_value: std::mem::transmute::<P, FnLookup>(sym(c"blkid_probe_lookup_value")?),
        })
    }
}

/// One libblkid probe of a device or file (`blkid_probe`), freed on drop. Not shared between
/// threads: libblkid probes are not thread-safe, each caller makes its own.
pub struct BlkidProbe {
    lib: &'static Libblkid,
    pr: std::ptr::NonNull<libc::c_void>,
}

impl BlkidProbe {
    /// blkid_new_probe_from_filename: opens `path` read-only.
    pub fn open(lib: &'static Libblkid, path: &Path) -> io::Result<BlkidProbe> {
        let p = cpath(path)?;
        // SAFETY: `p` is a NUL-terminated path valid for the call; the result is null or a
        // probe this struct now owns.
        let pr = unsafe { (lib.new_probe_from_filename)(p.as_ptr()) };
        match std::ptr::NonNull::new(pr) {
            Some(pr) => Ok(BlkidProbe { lib, pr }),
            // libblkid leaves open(2)'s errno in place; a zero errno still reads as an error.
            None => Err(match io::Error::last_os_error() {
                e if e.raw_os_error() == Some(0) => io::Error::from_raw_os_error(libc::EIO),
                e => e,
            }),
        }
    }

    /// Probe superblocks with `sb_flags` and, when `pt_flags` is given, partition tables.
    pub fn configure(&mut self, sb_flags: libc::c_int, pt_flags: Option<libc::c_int>) {
        let pr = self.pr.as_ptr();
        // SAFETY: `pr` is a live probe owned by self; these setters only store flags.
        unsafe {
            (self.lib.enable_superblocks)(pr, 1);
            (self.lib.set_superblocks_flags)(pr, sb_flags);
            (self.lib.enable_partitions)(pr, pt_flags.is_some() as libc::c_int);
            if let Some(f) = pt_flags {
                (self.lib.set_partitions_flags)(pr, f);
            }
        }
    }

    /// blkid_do_safeprobe: 0 found, 1 nothing, -2 ambivalent, -1 error.
    pub fn safeprobe(&mut self) -> libc::c_int {
        // SAFETY: `pr` is a live probe owned by self.
        unsafe { (self.lib.do_safeprobe)(self.pr.as_ptr()) }
    }

    /// blkid_do_probe: the next signature (0), none left (1), error (-1).
    pub fn probe_next(&mut self) -> libc::c_int {
        // SAFETY: `pr` is a live probe owned by self.
        unsafe { (self.lib.do_probe)(self.pr.as_ptr()) }
    }

    /// blkid_probe_lookup_value: a result value ("TYPE", "PTTYPE", "LABEL"...) of the last probe.
    pub fn value(&self, name: &str) -> Option<String> {
        let n = cstr(name).ok()?;
        let mut data: *const libc::c_char = std::ptr::null();
        let mut len: libc::size_t = 0;
        // SAFETY: `pr` is live, `n` NUL-terminated, and the out-pointers point at locals.
        let r =
            unsafe { (self.lib.lookup_value)(self.pr.as_ptr(), n.as_ptr(), &mut data, &mut len) };
        if r != 0 || data.is_null() {
            return None;
        }
        // SAFETY: on success libblkid points `data` at a NUL-terminated string it owns, valid
        // until the next probe call on this probe (we copy it at once).
        let s = unsafe { std::ffi::CStr::from_ptr(data) };
        Some(s.to_string_lossy().into_owned())
    }
}

impl Drop for BlkidProbe {
    fn drop(&mut self) {
        // SAFETY: `pr` came from blkid_new_probe_from_filename and is freed exactly once.
        unsafe { (self.lib.free_probe)(self.pr.as_ptr()) }
    }
}

/// The last SIGINT/SIGTERM/SIGHUP number received by [`record_signal`] (0: none yet).
static LAST_SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn record_signal(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe. A watcher thread does the real work.
    LAST_SIGNAL.store(sig, std::sync::atomic::Ordering::SeqCst);
}

/// Install a handler for `sig` that only records the signal number (see [`last_signal`]).
pub fn install_recording_handler(sig: libc::c_int) -> io::Result<()> {
    // SAFETY: sigaction is plain data, zeroed then given a valid handler (which only stores
    // to an atomic) and an empty mask; the pointers passed live across the call.
    let r = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = record_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = libc::SA_RESTART;
        libc::sigaction(sig, &sa, std::ptr::null_mut())
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The last signal recorded by a handler from [`install_recording_handler`], 0 if none.
pub fn last_signal() -> i32 {
    LAST_SIGNAL.load(std::sync::atomic::Ordering::SeqCst)
}
