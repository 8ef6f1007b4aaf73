//! The queued engines: `queue` hands the unit on and its completion comes back from
//! `getevents`. `libaio` and `io_uring` submit to the kernel; `posixaio` to glibc's helper
//! threads; `guasi` and `io_submit_mode=offload` to fiox's own worker [`pool`] (plain
//! syscalls for guasi, a whole depth-1 engine per thread for offload), whose waits
//! [`handoff`] times for `--explain`.

pub mod direct;
pub mod guasi;
pub mod handoff;
pub(crate) mod libaio;
pub(crate) mod offload;
pub mod pool;
pub(crate) mod posixaio;
pub(crate) mod uring;
