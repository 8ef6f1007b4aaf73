//! What decides when the next I/O may go and when a job stops: `rate`/`rate_iops`/`rate_min`
//! pacing and `thinktime` ([`pacing`]), `flow` between jobs ([`flow`]), `latency_target`'s depth
//! search ([`latarget`]), steady-state detection ([`steady`]) and `lockfile=` ([`filelock`]).
//!
//! These are questions the I/O loop asks before queueing or after reaping; none of them does I/O
//! or touches files, so the I/O loop depends on them and never the other way round.

pub(crate) mod filelock;
pub(crate) mod flow;
pub(crate) mod latarget;
pub(crate) mod pacing;
pub(crate) mod steady;
