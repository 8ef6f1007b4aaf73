//! What watches a run from beside it: the status thread with fio's ETA line and periodic status
//! ([`eta`]), aggregate bandwidth logs ([`agglog`]), `group_reporting`'s merge ([`grouprep`]),
//! idle profiling ([`idleprof`]) and fio's self-tests (`--crctest`, `--memcpytest`:
//! [`selftest`]; `--cpuclock-test`: [`clocktest`]).
//!
//! Observers read the jobs' shared progress ([`crate::io::acct`]); no job depends on them.

pub(crate) mod agglog;
pub mod clocktest;
pub(crate) mod eta;
pub(crate) mod grouprep;
pub mod idleprof;
pub mod selftest;
