//! The crate's typed error: every failure names the operation and the path (or command) it
//! concerns, so a test or the runner can print it as is. The cause is part of each message and
//! never also a `source`, so a chain printed with `{:#}` (anyhow) says it once.

use fiox_guard::GuardError;
use std::path::PathBuf;

/// Errors of fiox-testbed.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    /// A system call or file operation failed.
    #[error("{op} {}: {err}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        err: std::io::Error,
    },
    /// fiox-guard refused or failed to create, remove, mount, unmount, attach, detach or
    /// signal (its message names the path and the reason).
    #[error("{0}")]
    Guard(GuardError),
    /// The kernel or machine lacks the feature (no /dev/loop-control, no /dev/fuse, not root).
    /// Tests skip on this variant only.
    #[error("unsupported here: {0}")]
    Unsupported(String),
    /// LOOP_SET_DIRECT_IO was refused, usually because the backing file's filesystem has no
    /// O_DIRECT support or its alignment is larger than the loop block size.
    #[error(
        "loop device {} refused direct I/O: backing file {} is on a {fs} filesystem that \
         does not support O_DIRECT at a {block_size}-byte loop block size ({err})",
        dev.display(), backing.display()
    )]
    DirectIoRefused {
        dev: PathBuf,
        backing: PathBuf,
        fs: String,
        block_size: u32,
        err: std::io::Error,
    },
    /// An external command (mkfs.ext4) failed or could not be started.
    #[error("{cmd} failed: {detail}")]
    Command { cmd: String, detail: String },
    /// A caller-supplied argument is invalid (zero size, bad fault range...).
    #[error("{0}")]
    Invalid(String),
}

impl From<GuardError> for TestbedError {
    fn from(e: GuardError) -> Self {
        TestbedError::Guard(e)
    }
}

impl TestbedError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, err: std::io::Error) -> Self {
        TestbedError::Io {
            op,
            path: path.into(),
            err,
        }
    }

    /// The OS error number behind this error, if there is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            TestbedError::Io { err, .. } | TestbedError::DirectIoRefused { err, .. } => {
                err.raw_os_error()
            }
            TestbedError::Guard(g) => g.os_error(),
            _ => None,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = TestbedError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// M1: "File exists (os error 17): File exists (os error 17)" came from a cause that was
    /// both in the message and the `source` a `{:#}` chain prints after it.
    #[test]
    fn an_error_names_its_cause_once() {
        let eexist = || std::io::Error::from_raw_os_error(libc::EEXIST);
        let errors = [
            TestbedError::io("create directory", "/x", eexist()),
            TestbedError::Guard(GuardError::io(
                "create directory",
                std::path::Path::new("/x"),
                eexist(),
            )),
            TestbedError::DirectIoRefused {
                dev: "/dev/loop0".into(),
                backing: "/x".into(),
                fs: "ramfs".into(),
                block_size: 512,
                err: std::io::Error::from_raw_os_error(libc::EINVAL),
            },
        ];
        for e in errors {
            assert!(std::error::Error::source(&e).is_none(), "{e}");
            assert_eq!(e.to_string().matches("(os error").count(), 1, "{e}");
        }
        let e = TestbedError::io("create directory", "/x", eexist());
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    }
}
