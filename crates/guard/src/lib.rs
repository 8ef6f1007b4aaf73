//! fiox-guard is the one door through which fiox creates, replaces, renames and removes files
//! and directories, mounts and unmounts, attaches and detaches loop devices and signals the
//! servers it started: every other crate asks it, and `clippy.toml` forbids
//! the direct `std::fs` calls elsewhere (tests/repo.rs checks the libc ones).
//!
//! The threat it answers: another local user who can write to a shared directory (/tmp,
//! /var/tmp, a results directory) and plants a symbolic link, swaps a path component between a
//! check and its use, bind-mounts something into a directory fiox will delete, or copies or
//! forges fiox's mark. So the guard works on directory descriptors, not path strings:
//! - [`Dir`]: a directory opened once, component by component, following a symbolic link only
//!   when root or the running user owns it; names inside it are single components.
//! - New things are made only where nothing is (O_EXCL, mkdirat) and marked ([`mark`]) as
//!   fiox's, bound to their inode, so a copy or a forged mark does not count.
//! - [`output`]: outputs fiox names itself replace only fiox's earlier output, atomically.
//! - Removal ([`Dir::remove_if`], [`Dir::remove_owned`], [`tree::remove_tree`]) happens only
//!   after statx on the same descriptor proves the identity fiox recorded, never across a mount
//!   (statx's mount id, which tells a bind mount apart).
//! - [`mount`]: mounts onto and unmounts from directories held by descriptor, an unmount only
//!   of the very mount fiox recorded.
//! - [`kernel`]: writes to kernel tunables (sysfs, cgroupfs), only where the filesystem is the
//!   one expected.
//! - [`device`], [`loopdev`]: device nodes opened read-write only when they are the device
//!   expected; loop devices attached to a file fiox holds open and detached only while bound
//!   to the backing inode fiox recorded.
//! - [`allow`]: what `--allow-destructive` allows, bound to the object (fstat of the job's
//!   descriptor), never to a path read twice.
//! - [`input`]: the one bounded reader of every input (job files, experiments, logs, JSON):
//!   regular files (or a documented stdin) up to a limit, never a FIFO or an endless device.
//! - [`named::holds_data`], [`scratch`]: which existing files a job may write over without
//!   destroying anything (a file of holes only) or because the user declared the place scratch
//!   space, both decided on the open descriptor.
//! - [`process`]: signals only to a process fiox started (pid and start time) that still runs
//!   this very fiox executable.

pub mod allow;
pub mod console;
pub mod device;
pub mod dir;
pub mod error;
pub mod ident;
pub mod input;
pub mod kernel;
pub mod loopdev;
pub mod mark;
pub mod mount;
pub mod named;
pub mod output;
pub mod parents;
pub mod process;
pub mod scratch;
mod sys;
/// The workspace's test harness for what a test needs from the machine (tests/harness/need.rs).
#[cfg(test)]
#[path = "../../../tests/harness/need.rs"]
mod test_need;
pub mod tree;

pub use allow::Allowed;
pub use dir::Dir;
pub use error::{GuardError, Result};
pub use ident::{Identity, Kind, Stat};
pub use mark::{Layout, Mark, MARK};
pub use output::{Named, Open};
pub use parents::Parents;
