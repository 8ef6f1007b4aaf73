//! `cleanup_all` undoes every live resource of the process, newest first, and the guards
//! dropped afterwards find nothing left to do. One test per binary: `cleanup_all` is
//! process-wide and would tear down a parallel test's resources.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

#[allow(dead_code)] // each test binary uses part of the shared helpers
mod common;

use fiox_testbed::{cleanup_all, Cleanup, Undo};

#[test]
fn cleanup_all_undoes_everything_and_later_drops_are_no_ops() {
    // Fails without root or mkfs.ext4; skipped (recorded) without loop, tmpfs or ext4.
    if !common::supported() {
        return;
    }
    let all = common::Everything::new();
    let traces = all.traces();
    let pending = Cleanup::pending();
    assert!(pending.iter().any(|u| matches!(u, Undo::DetachLoop { .. })));
    assert!(pending.iter().any(|u| matches!(
        u,
        Undo::Unmount {
            mnt_id: Some(_),
            ..
        }
    )));
    // Reverse order matters: the ext4 mount, its directory, its loop device, the image and
    // the image's directory must go in that order or the later steps fail.
    let failures = cleanup_all();
    assert!(failures.is_empty(), "{failures:?}");
    assert!(Cleanup::pending().is_empty());
    traces.assert_all_gone();
    drop(all);
    assert!(Cleanup::pending().is_empty());
    traces.assert_all_gone();
}
