//! The blocking engines: each unit's syscall runs on the job's thread and completes inside
//! `queue` (`vsync` gathers contiguous units first). `sync` holds the sync family and the
//! RWF_* flag handling the queued engines borrow; `mmap` copies to and from a mapping;
//! `splice` moves data through a pipe; `pmemblk` reads and writes blocks of a PMDK block pool
//! (libpmemblk, loaded at run time).

pub(crate) mod mmap;
pub mod pmemblk;
pub(crate) mod splice;
pub(crate) mod sync;
