//! The I/O loop and what it measures: [`ioloop`] pulls requests from the generator, queues them
//! to the engine, reaps completions and accounts them; [`acct`] keeps per-direction latency and
//! fio's buckets on the hot path; [`clock`] (with [`gtod`]'s `gtod_cpu` thread) is the per-I/O
//! clock; [`act`] feeds fio's act profile; [`prio`] sets each I/O's priority; [`ioerr`] describes
//! failed I/Os as fio does; [`fileop`] and [`noio`] are the loop's variants for engines that
//! operate on whole files or do no I/O at all.
//!
//! The loop asks [`crate::control`] when it may go on, checks and fills data through
//! [`crate::verify`], opens files through [`crate::files`] and logs through [`crate::replay`];
//! a job's life around the loop (set-up, phases, results) is the job folder's, above this one.

pub(crate) mod acct;
pub(crate) mod act;
pub(crate) mod clock;
pub(crate) mod fileop;
pub(crate) mod gtod;
pub(crate) mod ioerr;
pub(crate) mod ioloop;
pub(crate) mod noio;
pub(crate) mod prio;
pub(crate) mod result;
