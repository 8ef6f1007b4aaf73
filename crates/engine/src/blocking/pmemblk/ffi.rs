//! libpmemblk (PMDK 1.x) loaded at run time: `libpmemblk.so.1` is opened with dlopen on first
//! use, so fiox builds without PMDK's headers and runs without the library (a pmemblk job is
//! then refused, as fio refuses an engine it cannot load). Every call into the library is in
//! this file, each with its `// SAFETY:` note; [`Pool`] is the safe face the engine uses.
//!
//! The path handed to the library is `/proc/thread-self/fd/N` of a descriptor the runner opened
//! (or created) through the guard, never the user's path: libpmemblk opens what it is given
//! again, and the path, looked up again there, could by then name another file (a link or a
//! renamed file put in its place). The magic link of `/proc/thread-self/fd` resolves to the
//! very inode the guard checked, so the pool libpmemblk maps is that file. thread-self, not
//! self: libpmemblk opens it on the calling thread, whose file table may be its own (the
//! runner's fdtable), and whose number N names its descriptor there.

use crate::buf::BufSpan;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;

type Raw = *mut c_void;
type FnCreate = unsafe extern "C" fn(*const c_char, usize, usize, c_uint) -> Raw;
type FnOpen = unsafe extern "C" fn(*const c_char, usize) -> Raw;
type FnClose = unsafe extern "C" fn(Raw);
type FnSize = unsafe extern "C" fn(Raw) -> usize;
type FnBlock = unsafe extern "C" fn(Raw, *mut c_void, libc::c_longlong) -> c_int;
type FnErrormsg = unsafe extern "C" fn() -> *const c_char;

/// The libpmemblk functions fiox calls, resolved once. The library is never unloaded, so the
/// pointers stay valid for the life of the process.
pub struct Lib {
    create: FnCreate,
    open: FnOpen,
    close: FnClose,
    bsize: FnSize,
    nblock: FnSize,
    read: FnBlock,
    write: FnBlock,
    errormsg: FnErrormsg,
}

/// The library's file name (PMDK 1.x's soname).
pub const SONAME: &str = "libpmemblk.so.1";

/// libpmemblk, loaded on first use, or why it cannot be (dlerror's words).
pub fn lib() -> Result<&'static Lib, &'static str> {
    static LIB: std::sync::OnceLock<Result<Lib, String>> = std::sync::OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(|e| e.as_str())
}

fn dlerror() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message valid until the next dl call
    // on this thread; it is copied at once.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown dlopen error".into()
    } else {
        // SAFETY: non-null, NUL-terminated (see above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn load() -> Result<Lib, String> {
    // SAFETY: dlopen takes a NUL-terminated name; the handle is leaked on purpose (the
    // function pointers taken from it must outlive every caller).
    let handle = unsafe { libc::dlopen(c"libpmemblk.so.1".as_ptr(), libc::RTLD_NOW) };
    if handle.is_null() {
        return Err(dlerror());
    }
    let sym = |name: &CStr| {
        // SAFETY: `handle` is a live dlopen handle and `name` a NUL-terminated symbol name.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        if p.is_null() {
            Err(format!("{SONAME} lacks {}", name.to_string_lossy()))
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol is transmuted to the prototype libpmemblk.h declares for it
    // (PMDK 1.x: pmemblk_create(const char *, size_t, size_t, mode_t), pmemblk_open(const
    // char *, size_t), pmemblk_close(PMEMblkpool *), pmemblk_bsize/nblock(PMEMblkpool *) ->
    // size_t, pmemblk_read/write(PMEMblkpool *, void *, long long) -> int,
    // pmemblk_errormsg(void) -> const char *), non-null as checked by `sym`.
    unsafe {
        Ok(Lib {
            create: std::mem::transmute::<Raw, FnCreate>(sym(c"pmemblk_create")?),
            open: std::mem::transmute::<Raw, FnOpen>(sym(c"pmemblk_open")?),
            close: std::mem::transmute::<Raw, FnClose>(sym(c"pmemblk_close")?),
            bsize: std::mem::transmute::<Raw, FnSize>(sym(c"pmemblk_bsize")?),
            nblock: std::mem::transmute::<Raw, FnSize>(sym(c"pmemblk_nblock")?),
            read: std::mem::transmute::<Raw, FnBlock>(sym(c"pmemblk_read")?),
            write: std::mem::transmute::<Raw, FnBlock>(sym(c"pmemblk_write")?),
            errormsg: std::mem::transmute::<Raw, FnErrormsg>(sym(c"pmemblk_errormsg")?),
        })
    }
}

/// A failed library call: errno as the library left it (EIO if it left none) and its own
/// message (pmemblk_errormsg).
#[derive(Debug)]
pub struct PoolError {
    pub errno: i32,
    pub detail: String,
}

impl Lib {
    fn failure(&self) -> PoolError {
        let errno = match io::Error::last_os_error().raw_os_error() {
            Some(0) | None => libc::EIO,
            Some(e) => e,
        };
        // SAFETY: pmemblk_errormsg takes nothing and returns null or a NUL-terminated
        // thread-local message, copied at once.
        let p = unsafe { (self.errormsg)() };
        let detail = if p.is_null() {
            String::new()
        } else {
            // SAFETY: non-null and NUL-terminated (see above).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        };
        PoolError { errno, detail }
    }
}

/// An open block pool: closed (pmemblk_close) when dropped. libpmemblk serialises the calls
/// on one pool itself (per-lane locks), so a pool is shared by the jobs that use its file.
pub struct Pool {
    lib: &'static Lib,
    raw: NonNull<c_void>,
    bsize: u64,
    nblock: u64,
}

// SAFETY: a PMEMblkpool may be used from any thread, and concurrently: libpmemblk's reads and
// writes are thread-safe (PMDK's libpmemblk(7)); it is closed once, by Drop, when no thread
// holds it any more.
unsafe impl Send for Pool {}
// SAFETY: as above.
unsafe impl Sync for Pool {}

/// How to get the pool of an open file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Make {
    /// pmemblk_open: the file is a pool (block size `0`: any, else it must match).
    Open { bsize: u64 },
    /// pmemblk_create with pool size 0, over the whole of a file fiox has just created and
    /// sized: libpmemblk refuses (EEXIST) a file whose header is not all zeros, so it never
    /// writes a pool over data.
    Create { bsize: u64 },
}

impl Pool {
    /// The pool of the file open as `fd`, reached through `/proc/thread-self/fd/N` (see the module's
    /// note). `fd` need only be open for the duration of the call: libpmemblk opens its own.
    pub fn of_fd(lib: &'static Lib, fd: RawFd, how: Make) -> Result<Pool, PoolError> {
        let path = CString::new(format!("/proc/thread-self/fd/{fd}")).map_err(|_| PoolError {
            errno: libc::EINVAL,
            detail: "bad descriptor".into(),
        })?;
        let raw = match how {
            // SAFETY: `path` is NUL-terminated and outlives the call; the result is null or a
            // pool this struct now owns. Mode 0644 as fio's (unused: the file exists).
            Make::Create { bsize } => unsafe {
                (lib.create)(path.as_ptr(), bsize as usize, 0, 0o644)
            },
            // SAFETY: as above.
            Make::Open { bsize } => unsafe { (lib.open)(path.as_ptr(), bsize as usize) },
        };
        let Some(raw) = NonNull::new(raw) else {
            return Err(lib.failure());
        };
        // SAFETY: `raw` is the live pool just opened.
        let (bsize, nblock) = unsafe { ((lib.bsize)(raw.as_ptr()), (lib.nblock)(raw.as_ptr())) };
        Ok(Pool {
            lib,
            raw,
            bsize: bsize as u64,
            nblock: nblock as u64,
        })
    }

    /// The pool's block size (bytes).
    pub fn bsize(&self) -> u64 {
        self.bsize
    }

    /// How many blocks it holds.
    pub fn nblock(&self) -> u64 {
        self.nblock
    }

    /// Read block `block` into `buf`, which must be exactly one block long (EINVAL otherwise,
    /// and for a block past the pool's end): Ok, or the errno the library set.
    pub fn read(&self, buf: BufSpan, block: u64) -> Result<(), i32> {
        self.transfer(self.lib.read, buf, block)
    }

    /// Write `buf`, exactly one block long, to block `block` (see [`Pool::read`]).
    pub fn write(&self, buf: BufSpan, block: u64) -> Result<(), i32> {
        self.transfer(self.lib.write, buf, block)
    }

    fn transfer(&self, f: FnBlock, buf: BufSpan, block: u64) -> Result<(), i32> {
        if u64::from(buf.len()) != self.bsize || block >= self.nblock {
            return Err(libc::EINVAL);
        }
        // SAFETY: the pool is live; `buf` is valid for its length (BufSpan's contract), which
        // is exactly the pool's block size, the bytes pmemblk_read fills and pmemblk_write
        // reads; the block number is within the pool (so it fits a long long).
        let r = unsafe {
            f(
                self.raw.as_ptr(),
                buf.as_ptr().cast(),
                block as libc::c_longlong,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(self.lib.failure().errno)
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: the pool is live and closed exactly once, here; nobody holds it any more.
        unsafe { (self.lib.close)(self.raw.as_ptr()) }
    }
}
