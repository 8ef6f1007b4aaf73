//! `verify_dump`: after a failure, write the interval as read (`<file>.<offset>.received`) and
//! as it should be (`<file>.<offset>.expected`, regenerated — nothing was stored) next to each
//! other, named as fio names them, so the damage can be inspected with `cmp -l` or a hex diff.

use crate::error::VerifyError;
use crate::failure::VerifyFailure;
use crate::verifier::Verifier;
use std::path::{Path, PathBuf};

/// Files written by [`Verifier::dump`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpFiles {
    pub received: PathBuf,
    /// `None` when the expected contents cannot be regenerated (see
    /// [`Verifier::expected_bytes`]).
    pub expected: Option<PathBuf>,
}

/// `<dir>/<basename of file>.<offset>.<kind>`.
pub fn dump_path(dir: &Path, file_name: &str, offset: u64, kind: &str) -> PathBuf {
    let base = Path::new(file_name).file_name().map_or_else(
        || file_name.replace('/', "."),
        |b| b.to_string_lossy().into_owned(),
    );
    dir.join(format!("{base}.{offset}.{kind}"))
}

impl Verifier {
    /// Writes the failing interval of `block` (the whole block as read, starting at
    /// `failure.block_offset`) and its expected contents into `dir`. `file_name` is the data
    /// file's name; only its last component is used.
    pub fn dump(
        &self,
        dir: &Path,
        file_name: &str,
        block: &[u8],
        failure: &VerifyFailure,
    ) -> Result<DumpFiles, VerifyError> {
        self.dump_with(dir, file_name, block, failure, &|p| {
            use fiox_guard::output::{self, Named, Open};
            Ok(output::open(p, Open::Truncate, Named::ByFiox)?)
        })
    }

    /// As [`Verifier::dump`], creating each file with `open` (the caller's rule for what may
    /// be replaced and whether a symbolic link is followed).
    pub fn dump_with(
        &self,
        dir: &Path,
        file_name: &str,
        block: &[u8],
        failure: &VerifyFailure,
        open: &dyn Fn(&Path) -> std::io::Result<std::fs::File>,
    ) -> Result<DumpFiles, VerifyError> {
        let start = failure.offset.wrapping_sub(failure.block_offset);
        let start = usize::try_from(start)
            .unwrap_or(usize::MAX)
            .min(block.len());
        let len = usize::try_from(failure.len).unwrap_or(usize::MAX);
        let end = start.saturating_add(len).min(block.len());
        let received = dump_path(dir, file_name, failure.offset, "received");
        write(&received, &block[start..end], open)?;
        let expected = match self.expected_bytes(failure) {
            Some(bytes) => {
                let p = dump_path(dir, file_name, failure.offset, "expected");
                write(&p, &bytes, open)?;
                Some(p)
            }
            None => None,
        };
        Ok(DumpFiles { received, expected })
    }
}

fn write(
    path: &Path,
    bytes: &[u8],
    open: &dyn Fn(&Path) -> std::io::Result<std::fs::File>,
) -> Result<(), VerifyError> {
    use std::io::Write;
    open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|source| VerifyError::Io {
            path: path.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_fio() {
        let p = dump_path(Path::new("/tmp/x"), "/dev/shm/data.0.0", 8192, "received");
        assert_eq!(p, Path::new("/tmp/x/data.0.0.8192.received"));
        let p = dump_path(Path::new("."), "file", 0, "expected");
        assert_eq!(p, Path::new("./file.0.expected"));
    }
}
