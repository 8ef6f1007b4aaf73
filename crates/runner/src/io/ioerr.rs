//! fio-style descriptions of failed I/Os: the operation, errno text and name, file, offset and
//! length (`io_u error on file F: No space left on device (ENOSPC): write offset=O, length=L`),
//! and fio's rule for which errors a job survives (`continue_on_error`, `ignore_error`).

use fiox_job::{ContinueOnError, Ddir, ErrorSpec};

/// fio's error types: bit 0 read, 1 write (and trim, sync), 2 verify (EILSEQ, whatever the
/// direction).
const READ: u8 = 1;
const WRITE: u8 = 2;
const VERIFY: u8 = 4;

/// The error types a job continues on: `continue_on_error`'s, plus each type `ignore_error`
/// lists errors for (fio sets the type's bit when it parses such a list).
pub fn continue_bits(e: &ErrorSpec) -> u8 {
    let base = match e.continue_on_error {
        ContinueOnError::None => 0,
        ContinueOnError::Read => READ,
        ContinueOnError::Write => WRITE,
        ContinueOnError::Io => READ | WRITE,
        ContinueOnError::Verify => VERIFY,
        ContinueOnError::All => READ | WRITE | VERIFY,
    };
    let listed = [
        (Ddir::Read, READ),
        (Ddir::Write, WRITE),
        (Ddir::Trim, VERIFY),
    ]
    .iter()
    .filter(|(d, _)| !e.ignore_error.get(*d).is_empty())
    .fold(0, |acc, (_, bit)| acc | bit);
    base | listed
}

/// fio's `td_non_fatal_error`: an error is survived only when its type is covered and the errno
/// is in the type's `ignore_error` list, which defaults to EIO and EILSEQ. So
/// `continue_on_error=all` still stops on ENOSPC, as fio 3.33 does.
pub fn tolerated(e: &ErrorSpec, ddir: Option<Ddir>, errno: i32) -> bool {
    let (bit, list) = if errno == libc::EILSEQ {
        (VERIFY, e.ignore_error.get(Ddir::Trim))
    } else if ddir == Some(Ddir::Read) {
        (READ, e.ignore_error.get(Ddir::Read))
    } else {
        (WRITE, e.ignore_error.get(Ddir::Write))
    };
    if continue_bits(e) & bit == 0 {
        return false;
    }
    if list.is_empty() {
        [libc::EIO, libc::EILSEQ].contains(&errno)
    } else {
        list.contains(&errno)
    }
}

/// The operation of an I/O unit direction (0 read, 1 write, 2 trim, else a sync).
pub fn op_name(ddir: u8, data_only_sync: bool) -> &'static str {
    match ddir {
        0 => "read",
        1 => "write",
        2 => "trim",
        _ if data_only_sync => "fdatasync",
        _ => "fsync",
    }
}

/// The description of a failed I/O of `len` bytes at `offset` of `path`.
pub fn describe(op: &str, errno: i32, path: Option<&str>, offset: u64, len: u32) -> String {
    let err = std::io::Error::from_raw_os_error(errno);
    format!(
        "io_u error on file {}: {} ({}): {op} offset={offset}, length={len}",
        path.unwrap_or("?"),
        strip_os_error(&err),
        fiox_engine::errno_name(errno),
    )
}

/// `Input/output error` without std's ` (os error 5)` suffix.
fn strip_os_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_errno_file_and_position() {
        let d = describe("write", libc::ENOSPC, Some("/f"), 8192, 4096);
        assert_eq!(
            d,
            "io_u error on file /f: No space left on device (ENOSPC): write offset=8192, \
             length=4096"
        );
        assert_eq!(op_name(3, true), "fdatasync");
    }

    fn spec(coe: ContinueOnError) -> ErrorSpec {
        let mut j = fiox_job::JobSpec::default();
        j.errors.continue_on_error = coe;
        j.errors
    }

    /// fio 3.33: continue_on_error=all survives EIO but not ENOSPC (exit 1, err=28); an
    /// ignore_error list replaces the default list and turns its type on by itself.
    #[test]
    fn fio_rules_for_surviving_errors() {
        let all = spec(ContinueOnError::All);
        assert!(tolerated(&all, Some(Ddir::Write), libc::EIO));
        assert!(!tolerated(&all, Some(Ddir::Write), libc::ENOSPC));
        assert!(tolerated(&all, Some(Ddir::Read), libc::EILSEQ));
        let read = spec(ContinueOnError::Read);
        assert!(tolerated(&read, Some(Ddir::Read), libc::EIO));
        assert!(!tolerated(&read, Some(Ddir::Write), libc::EIO));
        assert!(
            !tolerated(&read, Some(Ddir::Read), libc::EILSEQ),
            "EILSEQ is verify's"
        );
        let mut listed = spec(ContinueOnError::None);
        *listed.ignore_error.get_mut(Ddir::Write) = vec![libc::ENOSPC];
        assert_eq!(continue_bits(&listed), WRITE);
        assert!(tolerated(&listed, Some(Ddir::Write), libc::ENOSPC));
        assert!(
            !tolerated(&listed, Some(Ddir::Write), libc::EIO),
            "the list replaces EIO"
        );
        assert!(!tolerated(&listed, Some(Ddir::Read), libc::ENOSPC));
        assert!(!tolerated(
            &spec(ContinueOnError::None),
            Some(Ddir::Read),
            libc::EIO
        ));
    }
}
