//! Waiting on a socket without waiting for ever: a peer that never sends (a reader whose
//! writer ended, a multicast group nobody sends to) must not keep a job, and with it the run,
//! from stopping when the user presses Ctrl-C. Every wait polls in slices of [`SLICE_MS`] and
//! gives up once the run is asked to stop ([`crate::stop_waits`]).

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// How long one poll waits before the stop request is looked at again.
const SLICE_MS: i32 = 50;

/// Set once the run is asked to stop.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// The run is stopping: waits on peers end (see the module's note).
pub fn stop() {
    STOPPING.store(true, Ordering::SeqCst);
}

pub(crate) fn stopping() -> bool {
    STOPPING.load(Ordering::Relaxed)
}

/// Wait until `fd` is ready for `events` (fio's poll_wait); Err(EINTR) when the run is
/// stopping, Err(errno) when poll fails.
pub(crate) fn ready(fd: RawFd, events: i16) -> Result<(), i32> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    loop {
        if stopping() {
            return Err(libc::EINTR);
        }
        // SAFETY: one pollfd, valid for the call.
        let r = unsafe { libc::poll(&mut p, 1, SLICE_MS) };
        if r > 0 {
            return Ok(());
        }
        if r < 0 && crate::sys::errno() != libc::EINTR {
            return Err(crate::sys::errno());
        }
    }
}
