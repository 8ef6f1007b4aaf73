//! Where a log's bytes go: the file (created without following a link) or, with
//! `log_compression`, the job's compression thread ([`crate::logzip`]); and the error every
//! log file reports. Shared by the sample logs ([`super::file`]) and the histogram log
//! ([`super::hist`]).

use crate::logzip::ChunkSink;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Bytes buffered before a log writes to its file.
pub(crate) const BUF_BYTES: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot create log file {}: {source}", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("cannot write log file {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot start the log compression thread (log_compression_cpus={cpus}): {source}")]
    Compressor { cpus: String, source: io::Error },
}

/// How log files are created: given the path, an open file to write from its start.
pub type Opener<'a> = &'a dyn Fn(&Path) -> io::Result<File>;

/// Create or truncate `path` for writing, failing (ELOOP) where it is a symbolic link: a log
/// name never leads fiox into a file elsewhere.
pub fn create_nofollow(path: &Path) -> io::Result<File> {
    use fiox_guard::output::{self, Named, Open};
    Ok(output::open(path, Open::Truncate, Named::ByUser)?)
}

/// How much of an existing file [`is_fio_log`] reads to recognise it.
const RECOGNISE_BYTES: u64 = 64 * 1024;

/// Whether the file open as `f` is a log fio (or fiox) wrote in this format: empty, or text
/// whose lines are each at least four comma-separated unsigned integers (`time, value, ddir,
/// bs[, offset][, prio]`, prio possibly hex with `log_prio`; a histogram log's `time, ddir,
/// bs, bins...`). A log a job names may replace such a file (a user who ran fio, then fiox,
/// in one directory), never anything else. Only the first 64 KiB are read; a line cut there
/// is not judged.
pub fn is_fio_log(f: &mut File) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    if f.take(RECOGNISE_BYTES).read_to_end(&mut head).is_err() {
        return false;
    }
    let Ok(text) = std::str::from_utf8(&head) else {
        return false;
    };
    let whole = match text.rfind('\n') {
        Some(i) if head.len() as u64 == RECOGNISE_BYTES => &text[..i],
        _ => text,
    };
    let number = |t: &str| {
        let t = t.trim();
        match t.strip_prefix("0x") {
            Some(h) => !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()),
            None => !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()),
        }
    };
    whole.lines().all(|l| {
        let fields: Vec<&str> = l.split(',').collect();
        fields.len() >= 4 && fields.iter().all(|f| number(f))
    })
}

/// Where a log's lines (or samples) go while the job runs: the file, or with
/// `log_compression` the job's compression thread ([`crate::logzip`]).
pub(crate) enum Out {
    File(File),
    Chunks(ChunkSink),
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Out::File(_) => "File",
            Out::Chunks(_) => "Chunks",
        })
    }
}

impl Out {
    /// `log_compression`: a log's chunks back from the compression thread into `file`, as
    /// text (inflated) or, with `store`, as they are. Nothing to do for a plain file.
    pub(crate) fn write_chunks(&mut self, file: File, store: bool) -> io::Result<()> {
        let Out::Chunks(sink) = self else {
            return Ok(());
        };
        let mut w = BufWriter::with_capacity(BUF_BYTES, file);
        for chunk in sink.take()? {
            if store {
                w.write_all(&chunk)?;
            } else {
                io::copy(&mut flate2::read::ZlibDecoder::new(&chunk[..]), &mut w)?;
            }
        }
        w.flush()
    }
}

impl Write for Out {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Out::File(f) => f.write(b),
            Out::Chunks(c) => c.write(b),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::File(f) => f.flush(),
            Out::Chunks(c) => c.flush(),
        }
    }
}
