//! Attaching and detaching loop devices. A device is bound to a backing file fiox holds open
//! (LOOP_CTL_GET_FREE on /dev/loop-control, then LOOP_CONFIGURE, or LOOP_SET_FD and
//! LOOP_SET_STATUS64 before Linux 5.8), and detached only after LOOP_GET_STATUS64 on the open
//! device shows it is still bound to the backing inode fiox recorded (device and inode
//! number): a loop device another process bound meanwhile, or one a forged record names, is
//! left alone. Device nodes are opened through [`crate::device::open_rw`] (block major 7,
//! never a link). Also the two settings fiox changes on its own devices (direct I/O, logical
//! block size) and the status read.

use crate::device::{self, Node};
use crate::error::{GuardError, Result};
use crate::sys;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The loop driver's block major number and /dev/loop-control's character major and minor.
pub const LOOP_MAJOR: u32 = 7;
const MISC_MAJOR: u32 = 10;

/// ioctl numbers from `<linux/loop.h>` (stable kernel ABI).
const LOOP_SET_FD: libc::c_ulong = 0x4C00;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_SET_STATUS64: libc::c_ulong = 0x4C04;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_SET_DIRECT_IO: libc::c_ulong = 0x4C08;
const LOOP_SET_BLOCK_SIZE: libc::c_ulong = 0x4C09;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;

const LO_FLAGS_READ_ONLY: u32 = 1;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_PARTSCAN: u32 = 8;

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
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// How a loop device is bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bind {
    pub read_only: bool,
    pub autoclear: bool,
    pub partscan: bool,
    /// Logical block size; None keeps the kernel's 512.
    pub block_size: Option<u32>,
}

/// The device node of loop device `n`.
pub fn node(n: u32) -> PathBuf {
    PathBuf::from(format!("/dev/loop{n}"))
}

/// Open /dev/loopN read-write (a block device of the loop driver, never a link).
pub fn open(n: u32) -> Result<File> {
    device::open_rw(&node(n), Node::Block(LOOP_MAJOR))
}

/// LOOP_GET_STATUS64 of an open loop device (ENXIO: nothing is bound).
pub fn status(dev: &File) -> io::Result<LoopInfo64> {
    let mut info = LoopInfo64::default();
    // SAFETY: LOOP_GET_STATUS64 fills one `struct loop_info64`, which LoopInfo64 lays out.
    unsafe { sys::ioctl_ptr(dev.as_fd(), LOOP_GET_STATUS64, &mut info) }?;
    Ok(info)
}

/// The backing inode (device, inode number) of loop device `n`; None when unbound or not
/// openable.
pub fn backing_of(n: u32) -> Option<(u64, u64)> {
    let f = open(n).ok()?;
    status(&f).ok().map(|i| (i.lo_device, i.lo_inode))
}

/// LOOP_SET_DIRECT_IO on an open loop device.
pub fn set_direct_io(dev: &File, on: bool) -> io::Result<()> {
    sys::ioctl_arg(dev.as_fd(), LOOP_SET_DIRECT_IO, on as libc::c_ulong).map(|_| ())
}

/// LOOP_SET_BLOCK_SIZE on an open loop device.
pub fn set_block_size(dev: &File, bs: u32) -> io::Result<()> {
    sys::ioctl_arg(dev.as_fd(), LOOP_SET_BLOCK_SIZE, bs as libc::c_ulong).map(|_| ())
}

fn info_for(name: &Path, how: &Bind) -> LoopInfo64 {
    let mut info = LoopInfo64::default();
    for (on, flag) in [
        (how.read_only, LO_FLAGS_READ_ONLY),
        (how.autoclear, LO_FLAGS_AUTOCLEAR),
        (how.partscan, LO_FLAGS_PARTSCAN),
    ] {
        if on {
            info.lo_flags |= flag;
        }
    }
    // Informational (losetup shows it); longer paths are cut as losetup does.
    let b = name.as_os_str().as_bytes();
    let n = b.len().min(info.lo_file_name.len() - 1);
    info.lo_file_name[..n].copy_from_slice(&b[..n]);
    info
}

fn bind(dev: &File, backing: &File, name: &Path, how: &Bind) -> io::Result<()> {
    let mut cfg = LoopConfig {
        fd: backing.as_raw_fd() as u32,
        block_size: how.block_size.unwrap_or(0),
        info: info_for(name, how),
        reserved: [0; 8],
    };
    // SAFETY: LOOP_CONFIGURE reads one `struct loop_config`, which LoopConfig lays out.
    match unsafe { sys::ioctl_ptr(dev.as_fd(), LOOP_CONFIGURE, &mut cfg) } {
        Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => {
            // Before Linux 5.8: bind, then set flags and block size separately.
            let fd = backing.as_raw_fd() as libc::c_ulong;
            sys::ioctl_arg(dev.as_fd(), LOOP_SET_FD, fd)?;
            // SAFETY: LOOP_SET_STATUS64 reads one `struct loop_info64`.
            let rest = unsafe { sys::ioctl_ptr(dev.as_fd(), LOOP_SET_STATUS64, &mut cfg.info) }
                .and_then(|()| how.block_size.map_or(Ok(()), |bs| set_block_size(dev, bs)));
            if let Err(e) = rest {
                let _ = sys::ioctl_arg(dev.as_fd(), LOOP_CLR_FD, 0);
                return Err(e);
            }
            Ok(())
        }
        other => other,
    }
}

/// Bind `backing` (a regular file fiox holds open; `name` is shown by losetup) to a free
/// loop device. Returns the device number and the open device. Another process may take
/// the same free number between LOOP_CTL_GET_FREE and the bind (EBUSY): retried.
pub fn attach(backing: &File, name: &Path, how: &Bind) -> Result<(u32, File)> {
    let ctl_path = Path::new("/dev/loop-control");
    let ctl = device::open_rw(ctl_path, Node::Char(MISC_MAJOR))?;
    let mut last = io::Error::from_raw_os_error(libc::EBUSY);
    for _ in 0..16 {
        let n = sys::ioctl_arg(ctl.as_fd(), LOOP_CTL_GET_FREE, 0)
            .map_err(|e| GuardError::io("find a free loop device", ctl_path, e))?
            as u32;
        let dev = open(n)?;
        match bind(&dev, backing, name, how) {
            Ok(()) => return Ok((n, dev)),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => last = e,
            Err(e) => return Err(GuardError::io("bind loop device", &node(n), e)),
        }
    }
    Err(GuardError::io(
        "find a free loop device (all raced away)",
        ctl_path,
        last,
    ))
}

/// How often and how long a busy detach is retried.
const BUSY_RETRIES: u32 = 20;
const BUSY_PAUSE: Duration = Duration::from_millis(25);

/// Detach the loop device `path` if it is still bound to the backing inode (`dev`, `ino`).
/// Returns false when it was not (unbound, bound to another file, or no such device): then
/// nothing is done. With another opener the kernel defers the detach to the last close.
pub fn detach_if(path: &Path, dev: u64, ino: u64) -> Result<bool> {
    let f = match device::open_rw(path, Node::Block(LOOP_MAJOR)) {
        Ok(f) => f,
        Err(e) if e.is_not_found() || e.os_error() == Some(libc::ENXIO) => return Ok(false),
        Err(e) => return Err(e),
    };
    match status(&f) {
        Ok(i) if (i.lo_device, i.lo_inode) == (dev, ino) => {}
        Ok(_) => return Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Ok(false),
        Err(e) => return Err(GuardError::io("LOOP_GET_STATUS64", path, e)),
    }
    for attempt in 0..BUSY_RETRIES {
        match sys::ioctl_arg(f.as_fd(), LOOP_CLR_FD, 0) {
            Ok(_) => return Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Ok(false),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(BUSY_PAUSE * (attempt + 1).min(4));
            }
            Err(e) => return Err(GuardError::io("detach loop device", path, e)),
        }
    }
    Err(GuardError::io(
        "detach loop device",
        path,
        io::Error::from_raw_os_error(libc::EBUSY),
    ))
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

    #[test]
    fn a_detach_leaves_a_device_bound_to_another_inode_alone() {
        if !crate::test_need::loop_devices() {
            return;
        }
        let dir = std::env::temp_dir();
        let img = dir.join(format!("fiox-guard-loop-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&img)
            .unwrap();
        f.set_len(1 << 20).unwrap();
        let how = Bind::default();
        let (n, dev) = attach(&f, &img, &how).unwrap();
        let info = status(&dev).unwrap();
        let (d, i) = (info.lo_device, info.lo_inode);
        assert!(
            !detach_if(&node(n), d, i + 1).unwrap(),
            "another inode's record"
        );
        assert_eq!(backing_of(n), Some((d, i)));
        drop(dev);
        assert!(detach_if(&node(n), d, i).unwrap());
        std::fs::remove_file(&img).unwrap();
    }
}
