//! Engines that move no file data: `null` (fiox's own per-I/O cost), `cpuio` (burns CPU for
//! `cpuload` percent), `exec` (runs a program for the job's runtime) and `page_fault` (I/O
//! into anonymous memory).

pub(crate) mod cpuio;
pub(crate) mod exec;
pub(crate) mod null;
pub(crate) mod pagefault;
