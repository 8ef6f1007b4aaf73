//! The only unsafe code of fiox-testbed: thin wrappers over the loop-device ioctls
//! (`<linux/loop.h>`, which the libc crate does not carry), over mount(2)/umount2(2), and over
//! the few libblkid calls the signature probe needs (libblkid.so.1 loaded at run time with
//! dlopen, so building fiox needs no -dev package and a machine without it still runs).
//! Every wrapper takes owned or borrowed Rust types and returns `io::Result`, so the rest of
//! the crate stays safe.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// ioctl numbers from `<linux/loop.h>` (stable kernel ABI).
pub const LOOP_SET_FD: libc::c_ulong = 0x4C00;
pub const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
pub const LOOP_SET_STATUS64: libc::c_ulong = 0x4C04;
pub const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
pub const LOOP_SET_DIRECT_IO: libc::c_ulong = 0x4C08;
pub const LOOP_SET_BLOCK_SIZE: libc::c_ulong = 0x4C09;
pub const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
pub const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;

pub const LO_FLAGS_READ_ONLY: u32 = 1;
pub const LO_FLAGS_AUTOCLEAR: u32 = 4;
pub const LO_FLAGS_PARTSCAN: u32 = 8;

/// `struct loop_info64` of `<linux/loop.h>`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LoopInfo64 {
    pub lo_device: u64,
    pub lo_inode: u64,
    pub lo_rdevice: u64,
    pub lo_offset: u64,
    pub lo_sizelimit: u64,
    pub lo_number: u32,
    pub lo_encrypt_type: u32,
    pub lo_encrypt_key_size: u32,
    pub lo_flags: u32,
    pub lo_file_name: [u8; 64],
    pub lo_crypt_name: [u8; 64],
    pub lo_encrypt_key: [u8; 32],
    pub lo_init: [u64; 2],
}

impl Default for LoopInfo64 {
    fn default() -> Self {
        LoopInfo64 {
            lo_device: 0,
            lo_inode: 0,
            lo_rdevice: 0,
            lo_offset: 0,
            lo_sizelimit: 0,
            lo_number: 0,
            lo_encrypt_type: 0,
            lo_encrypt_key_size: 0,
            lo_flags: 0,
            lo_file_name: [0; 64],
            lo_crypt_name: [0; 64],
            lo_encrypt_key: [0; 32],
            lo_init: [0; 2],
        }
    }
}

/// `struct loop_config` of `<linux/loop.h>` (LOOP_CONFIGURE, Linux 5.8+).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct LoopConfig {
    pub fd: u32,
    pub block_size: u32,
    pub info: LoopInfo64,
    pub reserved: [u64; 8],
}

/// An ioctl whose argument is a plain integer (or unused). Returns the ioctl's result.
pub fn ioctl_arg(
    fd: BorrowedFd<'_>,
    request: libc::c_ulong,
    arg: libc::c_ulong,
) -> io::Result<i32> {
    // SAFETY: `fd` is a live descriptor for the duration of the borrow, and the requests used
    // with this wrapper (LOOP_CTL_GET_FREE, LOOP_SET_FD, LOOP_CLR_FD, LOOP_SET_DIRECT_IO,
    // LOOP_SET_BLOCK_SIZE) take an integer argument, never a pointer.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// LOOP_CONFIGURE: bind a backing file and set status in one step.
pub fn loop_configure(fd: BorrowedFd<'_>, cfg: &LoopConfig) -> io::Result<()> {
    // SAFETY: `cfg` points to a properly laid-out `struct loop_config` that lives across the
    // call; the kernel only reads it.
    let r = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_CONFIGURE as _,
            cfg as *const LoopConfig,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// LOOP_SET_STATUS64 (used after LOOP_SET_FD on kernels without LOOP_CONFIGURE).
pub fn loop_set_status(fd: BorrowedFd<'_>, info: &LoopInfo64) -> io::Result<()> {
    // SAFETY: `info` is a valid `struct loop_info64` living across the call; read-only for
    // the kernel.
    let r = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_SET_STATUS64 as _,
            info as *const LoopInfo64,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// LOOP_GET_STATUS64: the device's binding (ENXIO when nothing is bound).
pub fn loop_get_status(fd: BorrowedFd<'_>) -> io::Result<LoopInfo64> {
    let mut info = LoopInfo64::default();
    // SAFETY: `info` is a writable `struct loop_info64` that outlives the call; the kernel
    // fills exactly that structure.
    let r = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            LOOP_GET_STATUS64 as _,
            &mut info as *mut LoopInfo64,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(info)
    }
}

fn cpath(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in string"))
}

/// mount(2).
pub fn mount(
    source: &str,
    target: &Path,
    fstype: &str,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let (src, tgt, ty) = (cstr(source)?, cpath(target)?, cstr(fstype)?);
    let data = data.map(cstr).transpose()?;
    let data_ptr = data
        .as_ref()
        .map_or(std::ptr::null(), |d| d.as_ptr() as *const libc::c_void);
    // SAFETY: all pointers are NUL-terminated C strings (or null for `data`) owned by this
    // frame and valid for the duration of the call.
    let r = unsafe { libc::mount(src.as_ptr(), tgt.as_ptr(), ty.as_ptr(), flags, data_ptr) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// umount2(2).
pub fn umount2(target: &Path, flags: libc::c_int) -> io::Result<()> {
    let tgt = cpath(target)?;
    // SAFETY: `tgt` is a NUL-terminated string valid for the call.
    let r = unsafe { libc::umount2(tgt.as_ptr(), flags) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_struct_sizes_match_the_kernel_headers() {
        // sizeof(struct loop_info64) == 232 and sizeof(struct loop_config) == 304 on Linux.
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
        assert_eq!(std::mem::size_of::<LoopConfig>(), 304);
    }
}
