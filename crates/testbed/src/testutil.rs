//! Helpers shared by this crate's unit tests: skip messages and bounded polling for kernel
//! state that settles asynchronously (loop teardown, lazy unmount).

use std::time::{Duration, Instant};

/// Print why a test is skipped and return true when `support` says the feature is missing.
pub fn skip(support: crate::Result<()>, test: &str) -> bool {
    match support {
        Ok(()) => false,
        Err(e) => {
            eprintln!("skipped {test}: {e}");
            true
        }
    }
}

/// Poll `cond` for up to 10 s; true as soon as it holds. Never used to assert a duration.
pub fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
