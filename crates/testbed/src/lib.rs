//! fiox-testbed sets up test targets for experiments and for fiox's own tests — loop devices
//! (buffered or direct I/O), RAM disks, size-limited tmpfs and ramfs mounts, ext4 images, and a
//! fault-injecting FUSE file — and guarantees their cleanup: each resource registers an undo
//! action in a process-wide registry ([`Cleanup`]) that runs when its guard drops or when a
//! shutdown path calls [`cleanup_all`]. It also holds the safety probes (libblkid and magic
//! signatures, mount points, holders, loop backing files) a runner needs before writing to a
//! device. [`managed`] keeps named testbeds that outlive their maker (`fiox testbed`), with a
//! state directory and `cleanup` after a kill -9. [`machine`] puts a run under machine
//! limits (cgroups); [`vm`] runs it inside a QEMU guest on a virtio-blk disk.
//!
//! ```no_run
//! use fiox_testbed::{Ext4Image, FaultAction, FaultFs, FaultFsOptions, FaultOps, FaultRule};
//! use fiox_testbed::{LoopOptions, TmpfsMount};
//! # fn main() -> fiox_testbed::Result<()> {
//! // Seed 001: ext4 on a loop device whose backing file is accessed with direct I/O.
//! let mut img = Ext4Image::create(1 << 30)?;
//! img.attach(&LoopOptions { direct_io: true, ..LoopOptions::default() })?;
//! let dir = img.mount()?.to_path_buf();
//! // Issue #5: ENOSPC on a small tmpfs, EIO on a chosen range of a FUSE file.
//! let small = TmpfsMount::new(8 << 20)?;
//! let faulty = FaultFs::mount(FaultFsOptions {
//!     size: 16 << 20,
//!     rules: vec![FaultRule {
//!         start: 4 << 20,
//!         end: 5 << 20,
//!         ops: FaultOps::Read,
//!         action: FaultAction::Error(libc::EIO),
//!     }],
//!     ..FaultFsOptions::default()
//! })?;
//! // ... run fiox against dir, small.path(), faulty.file_path() ...
//! # let _ = (dir, small, faulty);
//! Ok(()) // everything is unmounted, detached and removed here, newest first
//! # }
//! ```

pub mod blkid;
pub mod cleanup;
pub mod error;
#[cfg(feature = "faultfs")]
pub mod faultfs;
pub mod loopdev;
pub mod machine;
pub mod managed;
pub mod mount;
pub mod probe;
mod sys;
pub mod temp;
#[cfg(test)]
mod testutil;
pub mod vm;

pub use cleanup::{cleanup_all, cleanup_on_signals, Cleanup, CleanupGuard, Undo};
pub use error::{Result, TestbedError};
#[cfg(feature = "faultfs")]
pub use faultfs::{
    fuse_support, FaultAction, FaultFs, FaultFsOptions, FaultOps, FaultRule, FaultStats,
};
pub use loopdev::{loop_support, LoopDevice, LoopOptions};
pub use mount::{mount_support, DeviceMount, Ext4Image, RamDisk, TmpfsMount};
pub use probe::{mount_points_of, probe_signatures, Signature, SignatureKind};
pub use temp::TempDir;
