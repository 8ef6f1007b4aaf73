//! The error every reader of `fiox plot`'s inputs returns ([`InputError`]): the file, and what
//! could not be read or was wrong in it. Kept apart from `input`, which calls the readers, so
//! that the readers (`result`, `fiolog`, `compare`) depend on it and not on their caller.

use std::path::{Path, PathBuf};

/// Errors naming the file and what was wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("reading {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {why}", path.display())]
    Format { path: PathBuf, why: String },
}

impl InputError {
    pub(crate) fn format(path: &Path, why: impl Into<String>) -> Self {
        InputError::Format {
            path: path.to_path_buf(),
            why: why.into(),
        }
    }
}
