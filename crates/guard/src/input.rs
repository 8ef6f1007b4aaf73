//! The one reader of every input fiox takes from a file (job files and what they include,
//! experiment files and the job files they name, `--inflate-log`, `read_iolog` logs, the JSON
//! results plot and compare read): a regular file only, of at most a limit the caller names.
//!
//! Why: a FIFO named as a job file blocked fiox in open(2) for ever, deaf to Ctrl-C once the
//! run's signal handlers were in place, and /dev/zero filled gigabytes of memory in seconds. So
//! the open never blocks (O_NONBLOCK: a FIFO with no writer opens at once), the kind is checked
//! on the descriptor (not on a path that may be swapped), and the read stops at the limit.
//! Standard input, where a command documents `-`, is read the same way: a pipe or a terminal
//! until its end, a regular file, never a device that has no end (/dev/zero), and never past
//! the limit.

use std::io::{self, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The largest job file (and each file it includes) fiox reads: fio's own job files are a few
/// KiB; 16 MiB leaves room for generated ones.
pub const JOB_FILE_MAX: u64 = 16 << 20;
/// The largest result, manifest or log fiox reads whole (a JSON+ result of many jobs).
pub const RESULT_MAX: u64 = 1 << 30;

/// What kind of thing a descriptor is, for the refusal.
fn kind_of(ft: &std::fs::FileType) -> &'static str {
    if ft.is_fifo() {
        "a FIFO (named pipe), which may never end"
    } else if ft.is_char_device() {
        "a character device (such as /dev/zero), which may never end"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn refused(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

/// Read `from` (whose kind the caller checked) to its end, refusing more than `max` bytes.
fn read_bounded(from: impl Read, max: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    from.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(refused(format!(
            "it holds more than the {max} bytes fiox reads from such an input"
        )));
    }
    Ok(bytes)
}

/// The bytes of the regular file `path`, at most `max` of them. Errors say what the thing is
/// (a FIFO, a device, a directory) or that it is too large; the caller adds the path.
pub fn read_bytes(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let f = crate::named::open(path, libc::O_RDONLY | libc::O_NONBLOCK)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(refused(format!(
            "it is {}; fiox reads this input from a regular file only",
            kind_of(&m.file_type())
        )));
    }
    if m.len() > max {
        return Err(refused(format!(
            "it is {} bytes long, more than the {max} fiox reads from such an input",
            m.len()
        )));
    }
    // Regular files never block; the descriptor stays non-blocking.
    read_bounded(f, max)
}

/// [`read_bytes`] as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> io::Result<String> {
    text(read_bytes(path, max)?)
}

/// Standard input, where a command documents `-`: a pipe, a terminal or a regular file, read
/// to its end, at most `max` bytes; a device with no end (/dev/zero) is refused.
pub fn read_stdin(max: u64) -> io::Result<String> {
    let stdin = io::stdin();
    let fd = std::os::fd::AsFd::as_fd(&stdin);
    let m = std::fs::File::from(fd.try_clone_to_owned()?).metadata()?;
    let ft = m.file_type();
    // SAFETY: isatty only inspects the descriptor, which stdin keeps open.
    let tty = unsafe { libc::isatty(0) } == 1;
    if !(ft.is_file() || ft.is_fifo() || ft.is_socket() || tty) {
        return Err(refused(format!(
            "standard input is {}; give a job file on a pipe, a terminal or a regular file",
            kind_of(&ft)
        )));
    }
    text(read_bounded(stdin.lock(), max)?)
}

fn text(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        refused(format!(
            "it is not UTF-8 text (bad byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the tests make their own scratch files
mod tests {
    use super::*;

    fn scratch(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("fiox-input-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_at_once() {
        let d = scratch("fifo");
        let fifo = d.join("job.fio");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would wait for ever; this returns at once.
        let e = read_text(&fifo, JOB_FILE_MAX).unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        let e = read_bytes(Path::new("/dev/zero"), RESULT_MAX)
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
        let e = read_text(&d, JOB_FILE_MAX).unwrap_err().to_string();
        assert!(e.contains("directory"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_over_the_limit_is_refused_and_text_must_be_utf8() {
        let d = scratch("limit");
        let p = d.join("big");
        std::fs::write(&p, vec![b'a'; 100]).unwrap();
        assert_eq!(read_text(&p, 100).unwrap().len(), 100);
        let e = read_text(&p, 99).unwrap_err().to_string();
        assert!(e.contains("100 bytes long"), "{e}");
        std::fs::write(&p, [0xffu8, 0xfe]).unwrap();
        let e = read_text(&p, 100).unwrap_err().to_string();
        assert!(e.contains("UTF-8"), "{e}");
        assert_eq!(read_bytes(&p, 100).unwrap(), [0xff, 0xfe]);
        // A stream longer than the limit stops at it.
        let e = read_bounded(io::repeat(0).take(1 << 20), 4096)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than the 4096"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
