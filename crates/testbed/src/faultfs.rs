//! FaultFs: a one-file FUSE filesystem backed by memory that fails or shortens reads and
//! writes on chosen byte ranges, so fiox's error paths (EIO, short reads, short writes,
//! ENOSPC) can be driven by real system calls. The filesystem is served by a background
//! thread through the `fuser` crate's session; the mount itself is fiox-guard's (/dev/fuse
//! opened as that device only, mount(2) on a fresh directory the guard made, by descriptor;
//! no libfuse, no fusermount). Dropping the handle unmounts that mount id (lazily if busy),
//! stops the thread and removes the mount point if it is still the directory made.
//!
//! By default the file is opened in FUSE direct_io mode (FOPEN_DIRECT_IO): the page cache is
//! bypassed, so every read(2)/write(2) reaches the filesystem with the caller's offset and
//! length and its result (an errno, a short count) is what the caller sees. Opening with
//! O_DIRECT works in both modes. With `page_cache: true` the kernel caches pages and reads
//! ahead: it asks for whole pages and readahead windows, so a rule fires for any kernel
//! request overlapping its range (also when the caller read elsewhere in the window), a short
//! reply ends the caller's read at that point, and cached pages are served without asking
//! the filesystem again — use it only to test cached behaviour.

use crate::cleanup::CleanupGuard;
use crate::error::{Result, TestbedError};
use crate::loopdev::require_root;
use crate::mount::MountPoint;
use fiox_guard::{Dir, Identity};
use fuser::{
    FileAttr, FileType, Filesystem, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, Request, Session, SessionACL,
};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// Largest file FaultFs keeps in memory.
pub const MAX_SIZE: u64 = 2 << 30;

const ROOT_INO: u64 = 1;
const FILE_INO: u64 = 2;
/// Attributes change under the kernel's feet (size via writes/truncate): never cache them.
const TTL: Duration = Duration::ZERO;

/// Which operations a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultOps {
    Read,
    Write,
    ReadWrite,
}

/// What happens to an operation that touches a rule's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultAction {
    /// Fail with this errno (e.g. `libc::EIO`).
    Error(i32),
    /// Transfer at most `max` bytes (from the request's offset; data stays correct). A read
    /// with `max == 0` returns 0, which callers see as end of file.
    Short { max: u32 },
}

/// A fault on the byte range `start..end` of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultRule {
    pub start: u64,
    pub end: u64,
    pub ops: FaultOps,
    pub action: FaultAction,
}

impl FaultRule {
    fn applies(&self, write: bool, off: u64, len: u64) -> bool {
        let op = match self.ops {
            FaultOps::Read => !write,
            FaultOps::Write => write,
            FaultOps::ReadWrite => true,
        };
        op && off < self.end && off.saturating_add(len.max(1)) > self.start
    }
}

/// How a FaultFs is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultFsOptions {
    /// Name of the one file in the root directory.
    pub file_name: String,
    /// Initial size (zero-filled) and capacity: writes beyond it fail with ENOSPC (a write
    /// crossing it is cut short first, as on a full disk).
    pub size: u64,
    /// Let the kernel cache the file's pages (see the module documentation).
    pub page_cache: bool,
    pub rules: Vec<FaultRule>,
    /// Every read and write request waits this long before it is served. One server thread
    /// serves the requests one at a time, so this is a slow device with a queue depth of one
    /// (the `slow` testbed; seed 000's blocking submissions).
    pub delay: Duration,
    /// Share (0..1) of read and write requests that fail with EIO, picked by a fixed
    /// pseudo-random sequence over the request numbers (the same run fails the same requests).
    pub error_rate: f64,
}

impl Default for FaultFsOptions {
    fn default() -> Self {
        FaultFsOptions {
            file_name: "data".into(),
            size: 1 << 20,
            page_cache: false,
            rules: Vec::new(),
            delay: Duration::ZERO,
            error_rate: 0.0,
        }
    }
}

/// Counters of what the filesystem served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultStats {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Operations a rule failed or shortened.
    pub faults: u64,
}

#[derive(Default)]
struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    read_bytes: AtomicU64,
    write_bytes: AtomicU64,
    faults: AtomicU64,
}

struct Inner {
    data: Vec<u8>,
    rules: Vec<FaultRule>,
    /// The file's times. Reads do not move atime (as on a noatime mount).
    atime: SystemTime,
    mtime: SystemTime,
    ctime: SystemTime,
}

impl Inner {
    fn modified(&mut self) {
        self.mtime = SystemTime::now();
        self.ctime = self.mtime;
    }
}

fn resolve(t: fuser::TimeOrNow) -> SystemTime {
    match t {
        fuser::TimeOrNow::SpecificTime(t) => t,
        fuser::TimeOrNow::Now => SystemTime::now(),
    }
}

struct Shared {
    inner: Mutex<Inner>,
    counters: Counters,
    capacity: u64,
    file_name: String,
    open_flags: u32,
    uid: u32,
    gid: u32,
    born: SystemTime,
    delay: Duration,
    error_rate: f64,
    requests: AtomicU64,
}

/// splitmix64: a well-mixed hash of the request number.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Shared {
    /// The slow-device model: wait, then maybe fail the request at the configured rate.
    fn slow_down(&self) -> std::result::Result<(), i32> {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        if self.error_rate > 0.0 {
            let n = self.requests.fetch_add(1, Ordering::Relaxed);
            if (mix(n) as f64 / u64::MAX as f64) < self.error_rate {
                self.counters.faults.fetch_add(1, Ordering::Relaxed);
                return Err(libc::EIO);
            }
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let born = (self.born, self.born, self.born);
        let (kind, size, perm, nlink, (atime, mtime, ctime)) = match ino {
            ROOT_INO => (FileType::Directory, 0, 0o755, 2, born),
            FILE_INO => {
                let i = self.lock();
                let times = (i.atime, i.mtime, i.ctime);
                (FileType::RegularFile, i.data.len() as u64, 0o644, 1, times)
            }
            _ => return None,
        };
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime,
            mtime,
            ctime,
            crtime: self.born,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn fault(&self, write: bool, off: u64, len: u64) -> Option<FaultAction> {
        let rule = self
            .lock()
            .rules
            .iter()
            .find(|r| r.applies(write, off, len))
            .map(|r| r.action);
        if rule.is_some() {
            self.counters.faults.fetch_add(1, Ordering::Relaxed);
        }
        rule
    }

    fn read(&self, off: u64, len: u32) -> std::result::Result<Vec<u8>, i32> {
        self.counters.reads.fetch_add(1, Ordering::Relaxed);
        self.slow_down()?;
        let mut want = len as u64;
        match self.fault(false, off, want) {
            Some(FaultAction::Error(errno)) => return Err(errno),
            Some(FaultAction::Short { max }) => want = want.min(max as u64),
            None => {}
        }
        let inner = self.lock();
        let size = inner.data.len() as u64;
        let from = off.min(size);
        let to = off.saturating_add(want).min(size);
        self.counters
            .read_bytes
            .fetch_add(to - from, Ordering::Relaxed);
        Ok(inner.data[from as usize..to as usize].to_vec())
    }

    fn write(&self, off: u64, data: &[u8]) -> std::result::Result<u32, i32> {
        self.counters.writes.fetch_add(1, Ordering::Relaxed);
        self.slow_down()?;
        let mut n = data.len() as u64;
        match self.fault(true, off, n) {
            Some(FaultAction::Error(errno)) => return Err(errno),
            Some(FaultAction::Short { max }) => n = n.min(max as u64),
            None => {}
        }
        if off >= self.capacity && n > 0 {
            return Err(libc::ENOSPC);
        }
        let n = n.min(self.capacity - off.min(self.capacity));
        let mut inner = self.lock();
        let end = (off + n) as usize;
        if inner.data.len() < end {
            inner.data.resize(end, 0);
        }
        inner.data[off as usize..end].copy_from_slice(&data[..n as usize]);
        inner.modified();
        self.counters.write_bytes.fetch_add(n, Ordering::Relaxed);
        Ok(n as u32)
    }

    fn truncate(&self, size: u64) -> std::result::Result<(), i32> {
        if size > self.capacity {
            return Err(libc::EFBIG);
        }
        let mut inner = self.lock();
        inner.data.resize(size as usize, 0);
        inner.modified();
        Ok(())
    }
}

/// The fuser side: translates FUSE requests to [`Shared`].
struct FaultFsServer(Arc<Shared>);

impl Filesystem for FaultFsServer {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        match (parent, self.0.attr(FILE_INO)) {
            (ROOT_INO, Some(attr)) if name == OsStr::new(&self.0.file_name) => {
                reply.entry(&TTL, &attr, 0)
            }
            _ => reply.error(libc::ENOENT),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match self.0.attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(libc::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)] // fuser's trait signature
    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<fuser::TimeOrNow>,
        mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        // Ownership and mode are fixed: refused rather than silently dropped.
        if ino != FILE_INO || mode.is_some() || uid.is_some() || gid.is_some() {
            return reply.error(libc::EPERM);
        }
        if let Some(Err(errno)) = size.map(|s| self.0.truncate(s)) {
            return reply.error(errno);
        }
        if atime.is_some() || mtime.is_some() {
            let mut inner = self.0.lock();
            if let Some(t) = atime {
                inner.atime = resolve(t);
            }
            if let Some(t) = mtime {
                inner.mtime = resolve(t);
            }
            inner.ctime = SystemTime::now();
        }
        match self.0.attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(libc::ENOENT),
        }
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        if ino == FILE_INO {
            reply.opened(0, self.0.open_flags)
        } else {
            reply.error(libc::EISDIR)
        }
    }

    #[allow(clippy::too_many_arguments)] // fuser's trait signature
    fn read(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock: Option<u64>,
        reply: ReplyData,
    ) {
        match self.0.read(offset.max(0) as u64, size) {
            Ok(data) => reply.data(&data),
            Err(errno) => reply.error(errno),
        }
    }

    #[allow(clippy::too_many_arguments)] // fuser's trait signature
    fn write(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock: Option<u64>,
        reply: ReplyWrite,
    ) {
        match self.0.write(offset.max(0) as u64, data) {
            Ok(n) => reply.written(n),
            Err(errno) => reply.error(errno),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lock: u64, reply: ReplyEmpty) {
        reply.ok()
    }

    fn fsync(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _ds: bool, reply: ReplyEmpty) {
        reply.ok()
    }

    fn readdir(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        mut reply: ReplyDirectory,
    ) {
        if ino != ROOT_INO {
            return reply.error(libc::ENOTDIR);
        }
        let entries = [
            (ROOT_INO, FileType::Directory, "."),
            (ROOT_INO, FileType::Directory, ".."),
            (FILE_INO, FileType::RegularFile, self.0.file_name.as_str()),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset.max(0) as usize) {
            if reply.add(*ino, (i + 1) as i64, *kind, name) {
                break;
            }
        }
        reply.ok()
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        let blocks = self.0.capacity / 4096;
        let used = (self.0.lock().data.len() as u64).div_ceil(4096);
        let free = blocks.saturating_sub(used);
        reply.statfs(blocks, free, free, 2, 0, 4096, 255, 4096)
    }

    fn access(&mut self, _req: &Request<'_>, _ino: u64, _mask: i32, reply: ReplyEmpty) {
        reply.ok()
    }
}

/// `Ok` when FUSE filesystems can be mounted here (root and /dev/fuse), else
/// [`TestbedError::Unsupported`].
pub fn fuse_support() -> Result<()> {
    if !Path::new("/dev/fuse").exists() {
        return Err(TestbedError::Unsupported(
            "no /dev/fuse (FUSE module not loaded; try `modprobe fuse`)".into(),
        ));
    }
    require_root("FUSE mounts")
}

/// A mounted FaultFs; unmounted when dropped.
pub struct FaultFs {
    shared: Arc<Shared>,
    dir: PathBuf,
    file: PathBuf,
    dir_id: Identity,
    mnt_id: u64,
    done: Option<Receiver<Option<String>>>,
    mount_guard: Option<CleanupGuard>,
    dir_guard: Option<CleanupGuard>,
}

impl std::fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultFs").field("file", &self.file).finish()
    }
}

impl FaultFs {
    /// Mount a FaultFs on a fresh directory under the system temp dir.
    pub fn mount(opts: FaultFsOptions) -> Result<FaultFs> {
        validate(&opts)?;
        fuse_support()?;
        let parent = Arc::new(Dir::open(&std::env::temp_dir())?);
        let mp = MountPoint::new(&parent, "faultfs")?;
        let dir = mp.made.path().to_path_buf();
        let dir_id = mp.made.stat_self().id;
        let shared = Arc::new(shared_state(&opts, &mp.made)?);
        let (fuse, mnt_id) = mount_fuse(&parent, &mp.name, &shared)?;
        mp.mounted(mnt_id);
        let mut session = Session::from_fd(
            FaultFsServer(shared.clone()),
            fuse.into(),
            SessionACL::RootAndOwner,
        );
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("fiox-faultfs".into())
            .spawn(move || {
                let r = session.run();
                let _ = tx.send(r.err().map(|e| e.to_string()));
            })
            .map_err(|e| TestbedError::io("spawn FUSE thread for", &dir, e))?;
        let file = dir.join(&opts.file_name);
        Ok(FaultFs {
            shared,
            dir,
            file,
            dir_id,
            mnt_id,
            done: Some(rx),
            mount_guard: Some(mp.mount_guard),
            dir_guard: Some(mp.dir_guard),
        })
    }

    /// The identity of the mount point directory (under the mount) and the mount's id: what
    /// a record needs to unmount and remove exactly these later.
    pub fn identity(&self) -> (Identity, u64) {
        (self.dir_id, self.mnt_id)
    }

    /// The file to test against.
    pub fn file_path(&self) -> &Path {
        &self.file
    }

    /// The mount point.
    pub fn mount_point(&self) -> &Path {
        &self.dir
    }

    /// Replace the fault rules (takes effect for the next request).
    pub fn set_rules(&self, rules: Vec<FaultRule>) -> Result<()> {
        validate_rules(&rules)?;
        self.shared.lock().rules = rules;
        Ok(())
    }

    /// What the filesystem served so far.
    pub fn stats(&self) -> FaultStats {
        let c = &self.shared.counters;
        FaultStats {
            reads: c.reads.load(Ordering::Relaxed),
            writes: c.writes.load(Ordering::Relaxed),
            read_bytes: c.read_bytes.load(Ordering::Relaxed),
            write_bytes: c.write_bytes.load(Ordering::Relaxed),
            faults: c.faults.load(Ordering::Relaxed),
        }
    }

    /// A copy of the file's current contents.
    pub fn contents(&self) -> Vec<u8> {
        self.shared.lock().data.clone()
    }

    /// Unmount, stop the server thread and remove the mount point, reporting failure.
    pub fn unmount(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        let unmounted = self.mount_guard.take().map_or(Ok(()), CleanupGuard::run);
        if let Some(rx) = self.done.take() {
            // The thread ends when the kernel tears the connection down: at once for an idle
            // mount, when the last open file closes after a lazy unmount.
            match rx.recv_timeout(Duration::from_secs(10)) {
                Ok(Some(err)) => {
                    fiox_guard::eprintln!("fiox-testbed: FaultFs server ended with: {err}")
                }
                Ok(None) | Err(RecvTimeoutError::Disconnected) => {}
                Err(RecvTimeoutError::Timeout) => fiox_guard::eprintln!(
                    "fiox-testbed: FaultFs at {} still in use; its server thread stays until \
                     the last file is closed",
                    self.dir.display()
                ),
            }
        }
        let removed = self.dir_guard.take().map_or(Ok(()), CleanupGuard::run);
        unmounted.and(removed)
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            fiox_guard::eprintln!("fiox-testbed: cleanup failed: {e}");
        }
    }
}

fn validate_rules(rules: &[FaultRule]) -> Result<()> {
    match rules.iter().find(|r| r.start >= r.end) {
        Some(r) => Err(TestbedError::Invalid(format!(
            "fault range {}..{} is empty",
            r.start, r.end
        ))),
        None => Ok(()),
    }
}

fn validate(opts: &FaultFsOptions) -> Result<()> {
    if opts.size > MAX_SIZE {
        return Err(TestbedError::Invalid(format!(
            "FaultFs size {} above the {MAX_SIZE}-byte in-memory limit",
            opts.size
        )));
    }
    if !(0.0..=1.0).contains(&opts.error_rate) {
        return Err(TestbedError::Invalid(format!(
            "FaultFs error rate {} (a share between 0 and 1)",
            opts.error_rate
        )));
    }
    let name = &opts.file_name;
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(TestbedError::Invalid(format!(
            "FaultFs file name {name:?} (one path component)"
        )));
    }
    validate_rules(&opts.rules)
}

/// /dev/fuse's character device numbers (misc major 10, minor 229).
const FUSE_MAJOR: u32 = 10;

/// Open /dev/fuse and mount a FUSE filesystem served through it on `name` in `parent`;
/// returns the device (the session's channel) and the mount id.
fn mount_fuse(parent: &Dir, name: &OsStr, shared: &Shared) -> Result<(std::fs::File, u64)> {
    use fiox_guard::device::{open_rw, Node};
    use std::os::fd::AsRawFd;
    let fuse = open_rw(Path::new("/dev/fuse"), Node::Char(FUSE_MAJOR))?;
    let data = format!(
        "fd={},rootmode=40000,user_id={},group_id={}",
        fuse.as_raw_fd(),
        shared.uid,
        shared.gid
    );
    let what = fiox_guard::mount::Source {
        fstype: "fuse.fiox-faultfs",
        source: OsStr::new("fiox-faultfs"),
        flags: libc::MS_NOSUID | libc::MS_NODEV,
        data: &data,
    };
    let id = fiox_guard::mount::mount_on(parent, name, &what)?;
    Ok((fuse, id))
}

/// The state of a FaultFs whose file belongs to the owner of the mount point `dir` (just
/// made by this process, open as `made`).
fn shared_state(opts: &FaultFsOptions, made: &Dir) -> Result<Shared> {
    use std::os::unix::fs::MetadataExt;
    let meta =
        std::fs::metadata(made.fd_path()).map_err(|e| TestbedError::io("stat", made.path(), e))?;
    let now = SystemTime::now();
    let open_flags = if opts.page_cache {
        0
    } else {
        fuser::consts::FOPEN_DIRECT_IO
    };
    Ok(Shared {
        inner: Mutex::new(Inner {
            data: vec![0; opts.size as usize],
            rules: opts.rules.clone(),
            atime: now,
            mtime: now,
            ctime: now,
        }),
        counters: Counters::default(),
        capacity: opts.size,
        file_name: opts.file_name.clone(),
        open_flags,
        uid: meta.uid(),
        gid: meta.gid(),
        born: now,
        delay: opts.delay,
        error_rate: opts.error_rate,
        requests: AtomicU64::new(0),
    })
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{fs_type_of, is_mount_point};
    use crate::testutil::skip;
    use std::fs::OpenOptions;
    use std::os::unix::fs::{FileExt, OpenOptionsExt};

    fn mounted(size: u64, rules: Vec<FaultRule>) -> Option<FaultFs> {
        if skip(fuse_support(), "FaultFs test") {
            return None;
        }
        Some(
            FaultFs::mount(FaultFsOptions {
                size,
                rules,
                ..FaultFsOptions::default()
            })
            .unwrap(),
        )
    }

    fn rule(start: u64, end: u64, ops: FaultOps, action: FaultAction) -> FaultRule {
        FaultRule {
            start,
            end,
            ops,
            action,
        }
    }

    #[test]
    fn round_trip_then_everything_goes_away() {
        let Some(fs) = mounted(1 << 20, Vec::new()) else {
            return;
        };
        let dir = fs.mount_point().to_path_buf();
        assert!(is_mount_point(&dir));
        assert!(fs_type_of(&dir).unwrap().starts_with("fuse"));
        assert_eq!(std::fs::metadata(fs.file_path()).unwrap().len(), 1 << 20);
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsStr::new("data").to_owned()]);
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(fs.file_path())
            .unwrap();
        let pattern: Vec<u8> = (0..8192u32).map(|i| (i % 253) as u8).collect();
        f.write_all_at(&pattern, 4096).unwrap();
        let mut back = vec![0u8; 8192];
        f.read_exact_at(&mut back, 4096).unwrap();
        assert_eq!(back, pattern);
        assert_eq!(&fs.contents()[4096..4096 + 8192], &pattern[..]);
        let st = fs.stats();
        assert!(st.writes >= 1 && st.reads >= 1, "{st:?}");
        assert_eq!((st.write_bytes, st.read_bytes, st.faults), (8192, 8192, 0));
        drop(f);
        drop(fs);
        assert!(!is_mount_point(&dir));
        assert!(!dir.exists());
    }

    #[test]
    fn chosen_ranges_fail_with_the_chosen_errno() {
        let rules = vec![
            rule(
                64 << 10,
                128 << 10,
                FaultOps::Read,
                FaultAction::Error(libc::EIO),
            ),
            rule(
                256 << 10,
                260 << 10,
                FaultOps::Write,
                FaultAction::Error(libc::EROFS),
            ),
        ];
        let Some(fs) = mounted(1 << 20, rules) else {
            return;
        };
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(fs.file_path())
            .unwrap();
        let mut buf = vec![0u8; 4096];
        f.read_exact_at(&mut buf, 0).unwrap();
        let e = f.read_at(&mut buf, 64 << 10).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
        // A request overlapping the range by one byte fails too.
        let e = f.read_at(&mut buf, (64 << 10) - 4095).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
        f.read_exact_at(&mut buf, 128 << 10).unwrap();
        // Writes to the read-fault range work; writes to the write-fault range fail.
        f.write_all_at(&buf, 64 << 10).unwrap();
        let e = f.write_at(&buf, 256 << 10).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EROFS));
        f.read_exact_at(&mut buf, 256 << 10).unwrap();
        assert_eq!(fs.stats().faults, 3);
        // Rules can change while mounted.
        fs.set_rules(Vec::new()).unwrap();
        f.read_exact_at(&mut buf, 64 << 10).unwrap();
    }

    #[test]
    fn short_reads_and_writes_return_short_counts() {
        let rules = vec![
            rule(0, 4096, FaultOps::Read, FaultAction::Short { max: 100 }),
            rule(
                8192,
                12288,
                FaultOps::Write,
                FaultAction::Short { max: 512 },
            ),
            rule(16384, 20480, FaultOps::Read, FaultAction::Short { max: 0 }),
        ];
        let Some(fs) = mounted(64 << 10, rules) else {
            return;
        };
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(fs.file_path())
            .unwrap();
        let mut buf = vec![0u8; 4096];
        assert_eq!(f.read_at(&mut buf, 0).unwrap(), 100);
        assert_eq!(f.write_at(&[7u8; 4096], 8192).unwrap(), 512);
        assert_eq!(f.read_at(&mut buf, 8192).unwrap(), 4096);
        assert!(buf[..512].iter().all(|&b| b == 7) && buf[512..].iter().all(|&b| b == 0));
        assert_eq!(f.read_at(&mut buf, 16384).unwrap(), 0);
    }

    #[test]
    fn full_file_gives_enospc_after_a_short_write() {
        let Some(fs) = mounted(64 << 10, Vec::new()) else {
            return;
        };
        let f = OpenOptions::new().write(true).open(fs.file_path()).unwrap();
        assert_eq!(f.write_at(&[1u8; 8192], 60 << 10).unwrap(), 4096);
        let e = f.write_at(&[1u8; 4096], 64 << 10).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        // Truncating below and growing back up to the capacity is allowed; beyond is not.
        f.set_len(4096).unwrap();
        assert_eq!(fs.contents().len(), 4096);
        f.set_len(64 << 10).unwrap();
        assert_eq!(
            f.set_len(65 << 10).unwrap_err().raw_os_error(),
            Some(libc::EFBIG)
        );
    }

    #[test]
    fn times_follow_writes_and_setattr() {
        let Some(fs) = mounted(64 << 10, Vec::new()) else {
            return;
        };
        let f = OpenOptions::new().write(true).open(fs.file_path()).unwrap();
        let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        f.set_times(
            std::fs::FileTimes::new()
                .set_modified(past)
                .set_accessed(past),
        )
        .unwrap();
        let m = std::fs::metadata(fs.file_path()).unwrap();
        assert_eq!((m.modified().unwrap(), m.accessed().unwrap()), (past, past));
        f.write_all_at(b"x", 0).unwrap();
        let m = std::fs::metadata(fs.file_path()).unwrap();
        assert!(m.modified().unwrap() > past);
        assert_eq!(m.accessed().unwrap(), past);
        // Mode changes are refused, not ignored.
        use std::os::unix::fs::PermissionsExt;
        let e = std::fs::set_permissions(fs.file_path(), std::fs::Permissions::from_mode(0o600));
        assert_eq!(e.unwrap_err().raw_os_error(), Some(libc::EPERM));
    }

    #[test]
    fn o_direct_opens_work_and_see_faults() {
        let rules = vec![rule(
            4096,
            8192,
            FaultOps::Read,
            FaultAction::Error(libc::EIO),
        )];
        let Some(fs) = mounted(64 << 10, rules) else {
            return;
        };
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(fs.file_path())
            .unwrap();
        let mut raw = vec![0u8; 3 * 4096];
        let skip = raw.as_ptr().align_offset(4096);
        let buf = &mut raw[skip..skip + 4096];
        buf.fill(9);
        f.write_all_at(buf, 0).unwrap();
        buf.fill(0);
        f.read_exact_at(buf, 0).unwrap();
        assert!(buf.iter().all(|&b| b == 9));
        assert_eq!(
            f.read_at(buf, 4096).unwrap_err().raw_os_error(),
            Some(libc::EIO)
        );
    }

    #[test]
    fn page_cache_mode_still_surfaces_faults() {
        if skip(fuse_support(), "page_cache_mode_still_surfaces_faults") {
            return;
        }
        let fs = FaultFs::mount(FaultFsOptions {
            size: 1 << 20,
            page_cache: true,
            rules: vec![
                rule(0, 4096, FaultOps::Read, FaultAction::Short { max: 100 }),
                rule(
                    512 << 10,
                    516 << 10,
                    FaultOps::Read,
                    FaultAction::Error(libc::EIO),
                ),
            ],
            ..FaultFsOptions::default()
        })
        .unwrap();
        let f = std::fs::File::open(fs.file_path()).unwrap();
        let mut buf = vec![0u8; 4096];
        // The kernel's (readahead-sized) request overlaps the short range: the read ends there.
        assert_eq!(f.read_at(&mut buf, 0).unwrap(), 100);
        assert_eq!(std::fs::metadata(fs.file_path()).unwrap().len(), 1 << 20);
        let e = f.read_at(&mut buf, 512 << 10).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
        assert!(fs.stats().faults >= 2);
    }

    #[test]
    fn delay_and_error_rate_make_a_slow_flaky_file() {
        if skip(
            fuse_support(),
            "delay_and_error_rate_make_a_slow_flaky_file",
        ) {
            return;
        }
        let fs = FaultFs::mount(FaultFsOptions {
            size: 1 << 20,
            delay: Duration::from_millis(2),
            error_rate: 0.25,
            ..FaultFsOptions::default()
        })
        .unwrap();
        let f = std::fs::File::open(fs.file_path()).unwrap();
        let mut buf = vec![0u8; 4096];
        let t = std::time::Instant::now();
        let failed = (0..200u64)
            .filter(|i| f.read_at(&mut buf, i * 4096).is_err())
            .count();
        // Each of the 200 requests waited 2 ms (a lower bound, which load cannot break).
        assert!(
            t.elapsed() >= Duration::from_millis(400),
            "{:?}",
            t.elapsed()
        );
        assert!((25..=75).contains(&failed), "{failed} of 200 failed");
        assert_eq!(fs.stats().faults, failed as u64);
    }

    #[test]
    fn bad_options_are_clear_errors() {
        let bad = |o: FaultFsOptions| FaultFs::mount(o).unwrap_err().to_string();
        let e = bad(FaultFsOptions {
            file_name: "a/b".into(),
            ..FaultFsOptions::default()
        });
        assert!(e.contains("file name"), "{e}");
        let e = bad(FaultFsOptions {
            size: MAX_SIZE + 1,
            ..FaultFsOptions::default()
        });
        assert!(e.contains("in-memory limit"), "{e}");
        let e = bad(FaultFsOptions {
            rules: vec![rule(10, 10, FaultOps::Read, FaultAction::Error(libc::EIO))],
            ..FaultFsOptions::default()
        });
        assert!(e.contains("10..10"), "{e}");
    }
}
