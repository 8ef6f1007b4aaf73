//! One job's life on its own thread ([`worker`]): start delay, CPU and memory placement
//! ([`numa`]), its own file table ([`fdtable`]), its blkio cgroup ([`cgroup`]), the disks' I/O
//! scheduler ([`iosched`]), the write phase through [`crate::io`]'s loop, the verify phase after
//! it ([`vphase`]), and the result with the warnings that say when its numbers mean less than
//! they seem ([`warn`]).
//!
//! This is the top of a job: it may use every other part of the runner; nothing below uses it.

pub(crate) mod cgroup;
pub(crate) mod env;
pub(crate) mod fdtable;
pub(crate) mod iosched;
pub(crate) mod memory;
pub(crate) mod numa;
mod phases;
pub(crate) mod prepare;
pub(crate) mod vphase;
pub(crate) mod warn;
pub(crate) mod worker;
