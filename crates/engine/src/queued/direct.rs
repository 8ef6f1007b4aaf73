//! The ring loop's calls (issue 28): the runner drives a plain job's reads and writes on
//! io_uring and libaio through these, typed and inlined, instead of `queue_rw`/`commit`/
//! `getevents`, which serve every kind of unit behind a dynamic call and fill the runner's
//! lists on the way. [`Direct`] names the engine (one match per call, no dynamic dispatch);
//! each engine says when its setup needs the general calls instead (`direct_ok`), and keeps
//! the error of a failed call for [`Direct::take_error`], so no large error value travels
//! through every call.

use super::libaio::LibaioEngine;
use super::uring::UringEngine;
use crate::{BufSpan, EngineError};

/// One read or write for [`Direct::submit_rw`], as unit `id`.
#[derive(Debug, Clone, Copy)]
pub struct RingIo {
    pub id: u32,
    /// Index of the file in the order given to `add_file`.
    pub file: u32,
    pub offset: u64,
    /// The memory read into or written from, and so the I/O's length ([`BufSpan::len`]).
    pub buf: BufSpan,
    pub write: bool,
    /// ioprio value (as [`IoUnit::ioprio`](crate::IoUnit)).
    pub ioprio: u16,
}

/// A completion [`Direct::reap_into`] took: the unit's id and the kernel's result (bytes
/// moved, or -errno).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingCqe {
    pub id: u32,
    pub res: i64,
}

/// An engine the ring loop drives directly ([`IoEngine::direct`](crate::IoEngine::direct)).
pub enum Direct<'a> {
    Uring(&'a mut UringEngine),
    Libaio(&'a mut LibaioEngine),
}

impl Direct<'_> {
    /// Whether the ring loop may drive the engine now (its setup needs none of the general
    /// calls); prepares what the first `queue` would (io_uring's file table).
    pub fn direct_ok(self) -> Result<bool, EngineError> {
        match self {
            Direct::Uring(e) => e.direct_ok(),
            Direct::Libaio(e) => Ok(e.direct_ok()),
        }
    }

    /// Queue `ios` as far as the engine has room and submit them: how many were queued (the
    /// rest were not touched), and whether the batch or its submission failed. `wait`: the
    /// completions the caller's next reap will wait for, when it reaps at once (0: none);
    /// io_uring then waits in the submitting call itself (`io_uring_enter` with
    /// `min_complete`: one system call a round instead of two), if it queued all of `ios`.
    /// Only for a caller that stamps no issue time after the submit: the call returns after
    /// the wait. libaio has no such call and waits in the reap as before.
    #[inline]
    pub fn submit_rw(self, ios: &[RingIo], wait: usize) -> (usize, bool) {
        match self {
            Direct::Uring(e) => e.submit_rw(ios, wait),
            Direct::Libaio(e) => e.submit_rw(ios),
        }
    }

    /// Up to `out.len()` completions into `out`, waiting for at least `min` of them (0: take
    /// what is there): how many, or None when the engine failed.
    #[inline]
    pub fn reap_into(self, min: usize, out: &mut [RingCqe]) -> Option<usize> {
        match self {
            Direct::Uring(e) => e.reap_into(min, out),
            Direct::Libaio(e) => e.reap_into(min, out),
        }
    }

    /// Up to `max` completions, each (unit, result) handed to `sink` as the engine takes it,
    /// waiting for at least `min` of them first (0: take what is there): how many, or None
    /// when the engine failed. `sink` is called only after the wait (a clock it reads at its
    /// first call is the reap's).
    #[inline(always)]
    pub fn reap_with(self, min: usize, max: usize, sink: impl FnMut(u32, i64)) -> Option<usize> {
        match self {
            Direct::Uring(e) => e.reap_with(min, max, sink),
            Direct::Libaio(e) => e.reap_direct(min, max, sink),
        }
    }

    /// The error a call reported (as failed, or None), taken.
    pub fn take_error(self) -> Option<EngineError> {
        match self {
            Direct::Uring(e) => e.direct_error.take(),
            Direct::Libaio(e) => e.direct_error.take(),
        }
    }
}
