//! Helpers shared by this crate's unit tests: skip messages and bounded polling for kernel
//! state that settles asynchronously (loop teardown, lazy unmount).

use std::time::{Duration, Instant};

/// The workspace's test harness for what a test needs from the machine (tests/harness/need.rs).
#[path = "../../../tests/harness/need.rs"]
pub mod need;

/// True (the skip recorded with the kernel feature the check found missing) when `support`
/// says the kernel lacks it; the test fails when it says root is missing (the suite runs as
/// root, and a test that needs it checks nothing without).
pub fn skip(support: crate::Result<()>, test: &str) -> bool {
    match support {
        Ok(()) => false,
        Err(e) => {
            let why = e.to_string();
            assert!(
                !why.contains("need root"),
                "{test}: {why}: the suite runs as root"
            );
            need::skip_for_kernel(&format!("what {test} needs"), &why);
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
