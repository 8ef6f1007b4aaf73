//! The crate's typed error: every failure names the operation and the path (or command) it
//! concerns, so a test or the runner can print it as is.

use std::path::PathBuf;

/// Errors of fiox-testbed.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    /// A system call or file operation failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The kernel or machine lacks the feature (no /dev/loop-control, no /dev/fuse, not root).
    /// Tests skip on this variant only.
    #[error("unsupported here: {0}")]
    Unsupported(String),
    /// LOOP_SET_DIRECT_IO was refused, usually because the backing file's filesystem has no
    /// O_DIRECT support or its alignment is larger than the loop block size.
    #[error(
        "loop device {} refused direct I/O: backing file {} is on a {fs} filesystem that \
         does not support O_DIRECT at a {block_size}-byte loop block size ({source})",
        dev.display(), backing.display()
    )]
    DirectIoRefused {
        dev: PathBuf,
        backing: PathBuf,
        fs: String,
        block_size: u32,
        #[source]
        source: std::io::Error,
    },
    /// An external command (mkfs.ext4) failed or could not be started.
    #[error("{cmd} failed: {detail}")]
    Command { cmd: String, detail: String },
    /// A caller-supplied argument is invalid (zero size, bad fault range...).
    #[error("invalid argument: {0}")]
    Invalid(String),
}

impl TestbedError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TestbedError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// The OS error number behind this error, if there is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            TestbedError::Io { source, .. } | TestbedError::DirectIoRefused { source, .. } => {
                source.raw_os_error()
            }
            _ => None,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = TestbedError> = std::result::Result<T, E>;
