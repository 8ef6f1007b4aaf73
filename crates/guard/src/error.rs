//! The guard's one error type: what was being done, to which path, and why it failed or was
//! refused. The cause is part of the message (and not also a `source`), so a chain printed with
//! `{:#}` says it once ("File exists (os error 17)", not twice).

use std::io;
use std::path::{Path, PathBuf};

/// A failed or refused create, replace, rename or remove.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// The system call failed.
    #[error("{op} {}: {err}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        err: io::Error,
    },
    /// The guard would not do it: doing it could destroy something fiox did not make.
    #[error("refusing to {op} {}: {why}", path.display())]
    Refused {
        op: &'static str,
        path: PathBuf,
        why: String,
    },
}

impl GuardError {
    pub fn io(op: &'static str, path: &Path, err: io::Error) -> GuardError {
        GuardError::Io {
            op,
            path: path.to_path_buf(),
            err,
        }
    }

    pub fn refused(op: &'static str, path: &Path, why: impl Into<String>) -> GuardError {
        GuardError::Refused {
            op,
            path: path.to_path_buf(),
            why: why.into(),
        }
    }

    /// The OS error behind an `Io` failure (None for a refusal).
    pub fn os_error(&self) -> Option<i32> {
        match self {
            GuardError::Io { err, .. } => err.raw_os_error(),
            GuardError::Refused { .. } => None,
        }
    }

    /// Whether the failure was "nothing there" (ENOENT).
    pub fn is_not_found(&self) -> bool {
        matches!(self, GuardError::Io { err, .. } if err.kind() == io::ErrorKind::NotFound)
    }

    /// Whether the failure was "something already there" (EEXIST).
    pub fn is_exists(&self) -> bool {
        matches!(self, GuardError::Io { err, .. } if err.kind() == io::ErrorKind::AlreadyExists)
    }
}

/// For callers whose own errors are `io::Error`: the kind is kept (NotFound stays NotFound),
/// a refusal becomes PermissionDenied, and the message is the guard's whole sentence.
impl From<GuardError> for io::Error {
    fn from(e: GuardError) -> io::Error {
        let kind = match &e {
            GuardError::Io { err, .. } => err.kind(),
            GuardError::Refused { .. } => io::ErrorKind::PermissionDenied,
        };
        io::Error::new(kind, e.to_string())
    }
}

pub type Result<T, E = GuardError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_names_its_cause_once() {
        let e = GuardError::io(
            "create directory",
            Path::new("/x"),
            io::Error::from_raw_os_error(libc::EEXIST),
        );
        let shown = format!("{e}");
        assert_eq!(shown.matches("File exists").count(), 1, "{shown}");
        assert!(std::error::Error::source(&e).is_none());
        let io: io::Error = e.into();
        assert_eq!(io.kind(), io::ErrorKind::AlreadyExists);
    }
}
