//! Loop devices over a backing file: attach (fiox-guard's `loopdev::attach`: LOOP_CTL_GET_FREE,
//! then LOOP_CONFIGURE, or LOOP_SET_FD + LOOP_SET_STATUS64 on kernels before 5.8) to a backing
//! file opened through the guard (never through a link), switch direct I/O and the logical
//! block size, read the binding back from /sys/block/loopN, and detach on drop or on
//! `cleanup_all` only while the device is still bound to the backing inode it was given. Bindings are made with LO_FLAGS_AUTOCLEAR by default, so even a process
//! killed by SIGKILL leaves no bound device behind once its descriptor is closed (unless the
//! device is mounted, which holds it).

use crate::cleanup::{Cleanup, CleanupGuard, Undo};
use crate::error::{Result, TestbedError};
use crate::probe::fs_type_of;
pub use crate::probe::{loops_backed_by, sys_backing_file};
use fiox_guard::loopdev::{self as gloop, Bind};
use fiox_guard::Dir;
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How a loop device is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopOptions {
    /// Bind read-only (LO_FLAGS_READ_ONLY); the backing file is opened read-only too.
    pub read_only: bool,
    /// Switch direct I/O on after binding (fails with [`TestbedError::DirectIoRefused`] when
    /// the backing filesystem cannot do O_DIRECT at the device's block size).
    pub direct_io: bool,
    /// Logical block size of the device (512, 1024, 2048 or 4096); `None` keeps the kernel's
    /// default of 512.
    pub block_size: Option<u32>,
    /// Let the kernel detach the device when its last opener closes it (LO_FLAGS_AUTOCLEAR).
    pub autoclear: bool,
    /// Scan the backing file for a partition table and create loopNpM devices
    /// (LO_FLAGS_PARTSCAN).
    pub partscan: bool,
}

impl Default for LoopOptions {
    fn default() -> Self {
        LoopOptions {
            read_only: false,
            direct_io: false,
            block_size: None,
            autoclear: true,
            partscan: false,
        }
    }
}

/// A bound loop device; detached when dropped.
#[derive(Debug)]
pub struct LoopDevice {
    number: u32,
    path: PathBuf,
    backing: PathBuf,
    /// Kept open for the device's lifetime: with autoclear this descriptor is what keeps the
    /// binding alive, and it serves the ioctls.
    file: Option<File>,
    guard: Option<CleanupGuard>,
}

/// `Ok` when this machine can create loop devices, else [`TestbedError::Unsupported`] with the
/// reason (tests print it and skip).
pub fn loop_support() -> Result<()> {
    if !Path::new("/dev/loop-control").exists() {
        return Err(TestbedError::Unsupported(
            "no /dev/loop-control (loop driver missing; try `modprobe loop`)".into(),
        ));
    }
    require_root("loop devices")
}

pub(crate) fn require_root(what: &str) -> Result<()> {
    // Reading /proc avoids an FFI call: the effective uid is the second field of "Uid:".
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned));
    if euid.as_deref() == Some("0") {
        Ok(())
    } else {
        Err(TestbedError::Unsupported(format!("{what} need root")))
    }
}

impl LoopDevice {
    /// Bind `backing` (a regular file) to a free loop device.
    pub fn attach(backing: &Path, opts: &LoopOptions) -> Result<LoopDevice> {
        loop_support()?;
        if let Some(bs) = opts.block_size {
            check_block_size(bs)?;
        }
        let backing = backing
            .canonicalize()
            .map_err(|e| TestbedError::io("resolve backing file", backing, e))?;
        let bfile = open_backing(&backing, opts.read_only)?;
        LoopDevice::attach_open(&bfile, &backing, opts)
    }

    /// Bind the regular file open as `bfile` (read-write unless `opts.read_only`; `backing`
    /// is its path, shown by losetup and in messages) to a free loop device.
    pub fn attach_open(bfile: &File, backing: &Path, opts: &LoopOptions) -> Result<LoopDevice> {
        loop_support()?;
        if let Some(bs) = opts.block_size {
            check_block_size(bs)?;
        }
        let backing = backing.to_path_buf();
        let meta = bfile
            .metadata()
            .map_err(|e| TestbedError::io("stat", &backing, e))?;
        let how = Bind {
            read_only: opts.read_only,
            autoclear: opts.autoclear,
            partscan: opts.partscan,
            block_size: opts.block_size,
        };
        let (number, file) = gloop::attach(bfile, &backing, &how)?;
        let path = PathBuf::from(format!("/dev/loop{number}"));
        let guard = Cleanup::register(Undo::DetachLoop {
            device: path.clone(),
            backing_dev: meta.dev(),
            backing_ino: meta.ino(),
        });
        let dev = LoopDevice {
            number,
            path,
            backing,
            file: Some(file),
            guard: Some(guard),
        };
        if opts.direct_io {
            dev.set_direct_io(true)?;
        }
        Ok(dev)
    }

    /// The device node, `/dev/loopN`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// N of loopN.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// `loopN`, the name under /sys/block.
    pub fn name(&self) -> String {
        format!("loop{}", self.number)
    }

    /// The backing file as bound (canonical path).
    pub fn backing_file(&self) -> &Path {
        &self.backing
    }

    /// The backing file the kernel reports in /sys/block/loopN/loop/backing_file.
    pub fn sys_backing_file(&self) -> Result<PathBuf> {
        sys_backing_file(&self.name()).ok_or_else(|| {
            TestbedError::io(
                "read backing_file of",
                &self.path,
                io::Error::from_raw_os_error(libc::ENXIO),
            )
        })
    }

    /// Whether the kernel does direct I/O to the backing file (/sys/block/loopN/loop/dio).
    pub fn direct_io(&self) -> Result<bool> {
        Ok(self.sys_attr("loop/dio")? == "1")
    }

    /// Whether the kernel detaches the device at its last close (/sys/block/loopN/loop/autoclear;
    /// also set by a LOOP_CLR_FD that found other openers).
    pub fn autoclear(&self) -> Result<bool> {
        Ok(self.sys_attr("loop/autoclear")? == "1")
    }

    /// Whether the device is read-only (/sys/block/loopN/ro).
    pub fn read_only(&self) -> Result<bool> {
        Ok(self.sys_attr("ro")? == "1")
    }

    /// Logical block size in bytes (/sys/block/loopN/queue/logical_block_size).
    pub fn logical_block_size(&self) -> Result<u32> {
        self.sys_number("queue/logical_block_size")
            .map(|v| v as u32)
    }

    /// Size in bytes (/sys/block/loopN/size is in 512-byte sectors).
    pub fn size_bytes(&self) -> Result<u64> {
        self.sys_number("size").map(|s| s * 512)
    }

    /// (major, minor) of the device node.
    pub fn dev_numbers(&self) -> Result<(u32, u32)> {
        let rdev = std::fs::metadata(&self.path)
            .map_err(|e| TestbedError::io("stat", &self.path, e))?
            .rdev();
        Ok((libc::major(rdev), libc::minor(rdev)))
    }

    /// Partition devices the kernel created for this device (`/dev/loopNpM`), from sysfs.
    pub fn partitions(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(format!("/sys/block/{}", self.name()))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("partition").exists())
            .map(|e| Path::new("/dev").join(e.file_name()))
            .collect();
        v.sort();
        v
    }

    /// Switch direct I/O on or off (LOOP_SET_DIRECT_IO), then confirm through sysfs.
    pub fn set_direct_io(&self, on: bool) -> Result<()> {
        match gloop::set_direct_io(self.fd()?, on) {
            Ok(_) if self.direct_io()? == on => Ok(()),
            // Kernels before 6.11 could accept the ioctl and silently stay buffered.
            Ok(_) => Err(self.dio_refused(io::Error::from_raw_os_error(libc::EINVAL))),
            Err(e) if on && e.raw_os_error() == Some(libc::EINVAL) => Err(self.dio_refused(e)),
            Err(e) => Err(TestbedError::io("LOOP_SET_DIRECT_IO", &self.path, e)),
        }
    }

    /// Set the logical block size (LOOP_SET_BLOCK_SIZE).
    pub fn set_block_size(&self, bs: u32) -> Result<()> {
        check_block_size(bs)?;
        gloop::set_block_size(self.fd()?, bs)
            .map_err(|e| TestbedError::io("LOOP_SET_BLOCK_SIZE", &self.path, e))
    }

    /// Leave the binding in place after this value (and the process) is gone: the cleanup
    /// registry forgets it and our descriptor closes. For testbeds that outlive their maker
    /// (bind without autoclear, or the kernel detaches at the close); whoever keeps it must
    /// record it to detach it later. Returns the device node.
    pub fn persist(mut self) -> PathBuf {
        self.file.take();
        if let Some(g) = self.guard.take() {
            g.disarm();
        }
        std::mem::take(&mut self.path)
    }

    /// Detach now, reporting failure (drop does the same and prints failures).
    pub fn detach(mut self) -> Result<()> {
        self.file.take();
        self.guard.take().map_or(Ok(()), CleanupGuard::run)
    }

    fn fd(&self) -> Result<&File> {
        self.file.as_ref().ok_or_else(|| {
            TestbedError::io("use", &self.path, io::Error::from_raw_os_error(libc::EBADF))
        })
    }

    fn dio_refused(&self, source: io::Error) -> TestbedError {
        TestbedError::DirectIoRefused {
            dev: self.path.clone(),
            backing: self.backing.clone(),
            fs: fs_type_of(&self.backing).unwrap_or_else(|| "unknown".into()),
            block_size: self.logical_block_size().unwrap_or(512),
            err: source,
        }
    }

    fn sys_attr(&self, attr: &str) -> Result<String> {
        let p = PathBuf::from(format!("/sys/block/{}/{attr}", self.name()));
        std::fs::read_to_string(&p)
            .map(|s| s.trim().to_string())
            .map_err(|e| TestbedError::io("read", p, e))
    }

    fn sys_number(&self, attr: &str) -> Result<u64> {
        let v = self.sys_attr(attr)?;
        v.parse().map_err(|_| {
            TestbedError::Invalid(format!("/sys/block/{}/{attr} holds {v:?}", self.name()))
        })
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        // Close our descriptor first so LOOP_CLR_FD finds no other opener and clears at once.
        self.file.take();
        self.guard.take();
    }
}

fn check_block_size(bs: u32) -> Result<()> {
    if (512..=4096).contains(&bs) && bs.is_power_of_two() {
        Ok(())
    } else {
        Err(TestbedError::Invalid(format!(
            "loop block size {bs} (must be 512, 1024, 2048 or 4096)"
        )))
    }
}

/// Device and inode number of the backing file of /dev/`name` (e.g. "loop3") as the kernel
/// holds them (LOOP_GET_STATUS64): right even where the backing path in sysfs names a file
/// this process cannot see (another mount namespace, a deleted or moved file). `None` when
/// the device is unbound or cannot be opened (permissions).
pub fn backing_dev_ino(name: &str) -> Option<(u64, u64)> {
    gloop::backing_of(name.strip_prefix("loop")?.parse().ok()?)
}

/// Open the backing file `backing` (canonical) through the guard: read-write unless
/// `read_only`, never through a link, and only a regular file.
fn open_backing(backing: &Path, read_only: bool) -> Result<File> {
    let (dir, name) = Dir::open_parent(backing)?;
    match dir.stat(&name)?.map(|s| s.kind) {
        Some(fiox_guard::Kind::File) => {}
        Some(_) => {
            return Err(TestbedError::Invalid(format!(
                "loop backing {} is not a regular file",
                backing.display()
            )))
        }
        None => {
            return Err(TestbedError::io(
                "open backing file",
                backing,
                io::Error::from_raw_os_error(libc::ENOENT),
            ))
        }
    }
    let flags = if read_only {
        libc::O_RDONLY
    } else {
        libc::O_RDWR
    };
    let f = dir.open_file(&name, flags)?.ok_or_else(|| {
        TestbedError::io(
            "open backing file",
            backing,
            io::Error::from_raw_os_error(libc::ENOENT),
        )
    })?;
    // O_NONBLOCK (the guard's, so a FIFO cannot block an open) changes nothing for a
    // regular file the loop driver reads and writes.
    Ok(f)
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::temp::{create_sparse_file, TempDir};
    use crate::testutil::{eventually, skip};
    use std::fs::OpenOptions;
    use std::io::{Read, Seek, SeekFrom, Write};

    fn backing(dir: &TempDir, size: u64) -> (PathBuf, CleanupGuard) {
        let p = dir.path().join("backing.img");
        let g = create_sparse_file(&p, size).unwrap();
        (p.canonicalize().unwrap(), g)
    }

    fn gone(name: &str, backing: &Path) -> bool {
        eventually(|| sys_backing_file(name).as_deref() != Some(backing))
            && eventually(|| loops_backed_by(backing).is_empty())
    }

    #[test]
    fn attach_write_read_detach() {
        if skip(loop_support(), "attach_write_read_detach") {
            return;
        }
        let dir = TempDir::new("loop-rw").unwrap();
        let (img, _g) = backing(&dir, 8 << 20);
        let dev = LoopDevice::attach(&img, &LoopOptions::default()).unwrap();
        assert_eq!(dev.sys_backing_file().unwrap(), img);
        assert_eq!(dev.backing_file(), img);
        assert_eq!(dev.size_bytes().unwrap(), 8 << 20);
        assert!(!dev.read_only().unwrap());
        assert!(!dev.direct_io().unwrap());
        assert!(dev.autoclear().unwrap());
        assert_eq!(loops_backed_by(&img), vec![dev.name()]);
        let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut f = OpenOptions::new().write(true).open(dev.path()).unwrap();
        f.seek(SeekFrom::Start(1 << 20)).unwrap();
        f.write_all(&pattern).unwrap();
        f.sync_all().unwrap();
        drop(f);
        let mut back = vec![0u8; 4096];
        let mut b = File::open(&img).unwrap();
        b.seek(SeekFrom::Start(1 << 20)).unwrap();
        b.read_exact(&mut back).unwrap();
        assert_eq!(
            back, pattern,
            "write through the loop device must land in the file"
        );
        let name = dev.name();
        drop(dev);
        assert!(gone(&name, &img), "{name} still bound to {}", img.display());
    }

    #[test]
    fn direct_io_and_block_size_switch() {
        if skip(loop_support(), "direct_io_and_block_size_switch") {
            return;
        }
        // /tmp sits on a disk filesystem here; O_DIRECT must work there for seed 001.
        let dir = TempDir::new("loop-dio").unwrap();
        let (img, _g) = backing(&dir, 4 << 20);
        let opts = LoopOptions {
            direct_io: true,
            block_size: Some(4096),
            ..LoopOptions::default()
        };
        let dev = match LoopDevice::attach(&img, &opts) {
            Err(e @ TestbedError::DirectIoRefused { .. }) => {
                let why = e.to_string();
                crate::testutil::need::skip_for_kernel("O_DIRECT on the backing filesystem", &why);
                return;
            }
            other => other.unwrap(),
        };
        assert!(dev.direct_io().unwrap());
        assert_eq!(dev.logical_block_size().unwrap(), 4096);
        dev.set_direct_io(false).unwrap();
        assert!(!dev.direct_io().unwrap());
        dev.set_block_size(512).unwrap();
        assert_eq!(dev.logical_block_size().unwrap(), 512);
        dev.set_direct_io(true).unwrap();
        assert!(dev.direct_io().unwrap());
        let name = dev.name();
        dev.detach().unwrap();
        assert!(gone(&name, &img));
    }

    #[test]
    fn read_only_device_refuses_writes() {
        if skip(loop_support(), "read_only_device_refuses_writes") {
            return;
        }
        let dir = TempDir::new("loop-ro").unwrap();
        let (img, _g) = backing(&dir, 1 << 20);
        let opts = LoopOptions {
            read_only: true,
            ..LoopOptions::default()
        };
        let dev = LoopDevice::attach(&img, &opts).unwrap();
        assert!(dev.read_only().unwrap());
        let opened = OpenOptions::new().write(true).open(dev.path());
        let wrote = opened.and_then(|mut f| f.write_all(&[1u8; 512]).and_then(|()| f.sync_all()));
        assert!(wrote.is_err(), "a read-only loop device accepted a write");
        let mut buf = vec![1u8; 512];
        File::open(dev.path())
            .unwrap()
            .read_exact(&mut buf)
            .unwrap();
        assert!(buf.iter().all(|&b| b == 0));
    }

    #[test]
    fn stale_undo_leaves_someone_elses_binding_alone() {
        if skip(
            loop_support(),
            "stale_undo_leaves_someone_elses_binding_alone",
        ) {
            return;
        }
        let dir = TempDir::new("loop-stale").unwrap();
        let (img, _g) = backing(&dir, 1 << 20);
        let opts = LoopOptions {
            autoclear: false,
            ..LoopOptions::default()
        };
        let dev = LoopDevice::attach(&img, &opts).unwrap();
        assert!(!dev.autoclear().unwrap());
        let meta = std::fs::metadata(&img).unwrap();
        // An undo recorded for another file that once had this device number: no LOOP_CLR_FD.
        let stale = Undo::DetachLoop {
            device: dev.path().to_path_buf(),
            backing_dev: meta.dev(),
            backing_ino: meta.ino() + 1,
        };
        stale.run().unwrap();
        assert_eq!(dev.sys_backing_file().unwrap(), img);
        assert!(!dev.autoclear().unwrap());
        // Ours matches and issues LOOP_CLR_FD; with our descriptor still open the kernel
        // defers the detach to the last close by turning autoclear on.
        let ours = Undo::DetachLoop {
            device: dev.path().to_path_buf(),
            backing_dev: meta.dev(),
            backing_ino: meta.ino(),
        };
        ours.run().unwrap();
        let name = dev.name();
        assert!(dev.autoclear().unwrap_or(true));
        drop(dev);
        assert!(gone(&name, &img));
    }

    #[test]
    fn bad_arguments_are_clear_errors() {
        let dir = TempDir::new("loop-bad").unwrap();
        let opts = LoopOptions {
            block_size: Some(1000),
            ..LoopOptions::default()
        };
        if loop_support().is_ok() {
            let e = LoopDevice::attach(dir.path(), &opts)
                .unwrap_err()
                .to_string();
            assert!(e.contains("block size 1000"), "{e}");
            let e = LoopDevice::attach(dir.path(), &LoopOptions::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains("not a regular file"), "{e}");
            let missing = dir.path().join("missing");
            let e = LoopDevice::attach(&missing, &LoopOptions::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains("missing"), "{e}");
        }
        assert!(check_block_size(4096).is_ok());
        assert!(check_block_size(256).is_err());
        assert!(check_block_size(8192).is_err());
    }
}
