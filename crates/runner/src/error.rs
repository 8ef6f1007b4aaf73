//! The runner's typed errors: planning mistakes, refused targets, OS failures with the path and
//! the operation that failed, engine failures and fatal I/O errors with their position.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The job cannot run as described (sizes, names, directories).
    #[error("{0}")]
    Plan(String),
    /// The target cannot be used as given, with the errno fio reports for it (EISDIR for a
    /// directory given as filename=).
    #[error("{msg}")]
    Target { msg: String, errno: i32 },
    /// A safety check refused the target (mounted device, filesystem signature, --readonly).
    #[error("{0}")]
    Refused(String),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Engine(#[from] fiox_engine::EngineError),
    /// A fatal I/O error during the run (after `continue_on_error`/`ignore_error` were applied).
    #[error("{0}")]
    IoFailed(String),
    #[error("job '{job}': {msg}")]
    Job { job: String, msg: String },
}

/// The guard's failures keep their operation and path; its refusals stay refusals.
impl From<fiox_guard::GuardError> for RunError {
    fn from(e: fiox_guard::GuardError) -> Self {
        match e {
            fiox_guard::GuardError::Io { op, path, err } => RunError::Io {
                what: op,
                path: path.display().to_string(),
                source: err,
            },
            r @ fiox_guard::GuardError::Refused { .. } => RunError::Refused(r.to_string()),
        }
    }
}

impl RunError {
    pub fn io(what: &'static str, path: &Path, source: std::io::Error) -> Self {
        RunError::Io {
            what,
            path: path.display().to_string(),
            source,
        }
    }

    /// errno to report as the job's `err=` (EINVAL for non-OS failures, like fio).
    pub fn errno(&self) -> i32 {
        match self {
            // The guard words an EEXIST with who owns what is there; the kind keeps the errno.
            RunError::Io { source, .. } => source.raw_os_error().unwrap_or(
                if source.kind() == std::io::ErrorKind::AlreadyExists {
                    libc::EEXIST
                } else {
                    libc::EIO
                },
            ),
            RunError::Engine(
                e @ (fiox_engine::EngineError::Os { .. }
                | fiox_engine::EngineError::File { .. }
                | fiox_engine::EngineError::FailsAsInFio(_)
                | fiox_engine::EngineError::Fails { .. }),
            ) => e.os_errno().unwrap_or(libc::EIO),
            RunError::Refused(_) => libc::EPERM,
            RunError::Target { errno, .. } => *errno,
            _ => libc::EINVAL,
        }
    }
}
