//! The one error type of the job language: where the problem is (file and line, or the
//! command line) and the full sentence shown to the user.

use std::fmt;

/// Where a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// No particular place (e.g. a cross-job check).
    Nowhere,
    /// A job file (or `<stdin>`) and a 1-based line number.
    File { path: String, line: usize },
    /// The command line.
    CommandLine,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Nowhere => Ok(()),
            Location::File { path, line } => write!(f, "{path}:{line}: "),
            Location::CommandLine => write!(f, "command line: "),
        }
    }
}

/// A job file or command line error. `Display` is the complete user message, e.g.
/// `fio.job:12: unknown option 'blocksize_foo' (did you mean 'blocksize_range'?)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}{message}")]
pub struct JobError {
    pub location: Location,
    pub message: String,
}

impl JobError {
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        JobError {
            location,
            message: message.into(),
        }
    }

    /// An error with no location (yet).
    pub fn bare(message: impl Into<String>) -> Self {
        JobError::new(Location::Nowhere, message)
    }

    /// Attach a location if the error has none.
    pub fn at(mut self, location: &Location) -> Self {
        if self.location == Location::Nowhere {
            self.location = location.clone();
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_includes_location() {
        let e = JobError::new(
            Location::File {
                path: "a.fio".into(),
                line: 3,
            },
            "boom",
        );
        assert_eq!(e.to_string(), "a.fio:3: boom");
        assert_eq!(
            JobError::new(Location::CommandLine, "x").to_string(),
            "command line: x"
        );
        assert_eq!(JobError::bare("y").to_string(), "y");
    }

    #[test]
    fn at_keeps_existing_location() {
        let e = JobError::new(Location::CommandLine, "x").at(&Location::File {
            path: "f".into(),
            line: 1,
        });
        assert_eq!(e.location, Location::CommandLine);
        let e = JobError::bare("x").at(&Location::CommandLine);
        assert_eq!(e.location, Location::CommandLine);
    }
}
