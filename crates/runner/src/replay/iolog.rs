//! `write_iolog`: fio's version 3 I/O log of what a job did, line by line as fio writes it
//! (`fio version 3 iolog`, then `<usec> <file> add|open|close` and `<usec> <file> <ddir>
//! <offset> <length>`, microseconds since the log began), so `read_iolog` in fio or fiox
//! replays it. Lines go through a buffer; nothing is allocated per I/O.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

/// fio's first line of a version 3 log.
pub const VER3: &str = "fio version 3 iolog";

/// An open `write_iolog` file.
pub struct IoLogWriter {
    out: BufWriter<File>,
    start: Instant,
    names: Vec<String>,
    open: Vec<bool>,
    /// The first write error, reported when the log is closed.
    failed: Option<io::Error>,
}

/// Whether the file open as `f` is an I/O log fio wrote (its first line is `fio version N
/// iolog`), or empty: `write_iolog` appends to such a file, as fio does.
pub fn is_fio_iolog(f: &mut File) -> bool {
    use std::io::Read;
    let mut head = [0u8; 32];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(_) => return false,
        }
    }
    let head = &head[..n];
    head.is_empty()
        || (head.starts_with(b"fio version ") && head.windows(6).any(|w| w == b" iolog"))
}

impl IoLogWriter {
    /// Open the log (created as fiox creates its logs: see `safeopen::append_output`) for
    /// appending, as fio opens it ("a": numjobs clones and reruns add to the same file), then
    /// write the version line and an `add` line per file.
    pub fn create(path: &Path, names: Vec<String>) -> io::Result<IoLogWriter> {
        let checked = crate::files::safeopen::append_output(path, is_fio_iolog)?;
        // The descriptor just checked, opened again with O_APPEND: clones writing the same
        // log add to its end instead of overwriting each other.
        let f = fiox_guard::named::reopen(&checked, libc::O_WRONLY | libc::O_APPEND)?;
        let mut w = IoLogWriter {
            out: BufWriter::with_capacity(8192, f),
            start: Instant::now(),
            open: vec![false; names.len()],
            names,
            failed: None,
        };
        writeln!(w.out, "{VER3}")?;
        for i in 0..w.names.len() {
            w.file_line(i, "add");
        }
        Ok(w)
    }

    fn usec(&self) -> u128 {
        self.start.elapsed().as_micros()
    }

    fn file_line(&mut self, file: usize, what: &str) {
        let t = self.usec();
        let r = writeln!(self.out, "{t} {} {what}", self.names[file]);
        self.keep(r);
    }

    fn keep(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.failed.get_or_insert(e);
        }
    }

    /// One I/O as it is queued (`ddir` is fio's name: read, write, trim, sync, datasync),
    /// after an `open` line when it is the file's first I/O since the last close.
    pub fn io(&mut self, file: u32, ddir: &str, offset: u64, len: u32) {
        let i = file as usize;
        if i >= self.names.len() {
            return;
        }
        if !self.open[i] {
            self.open[i] = true;
            self.file_line(i, "open");
        }
        let t = self.usec();
        let r = writeln!(self.out, "{t} {} {ddir} {offset} {len}", self.names[i]);
        self.keep(r);
    }

    /// The end of a phase: the files used are closed (fio reopens them for the verify phase).
    pub fn close_files(&mut self) {
        for i in 0..self.names.len() {
            if self.open[i] {
                self.open[i] = false;
                self.file_line(i, "close");
            }
        }
    }

    /// Flush the log; the first error writing it, if any.
    pub fn finish(&mut self) -> io::Result<()> {
        self.close_files();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

/// Create each `write_iolog` file once, before any job starts: numjobs clones sharing one
/// then only open a file fiox already created and marked (creating it from two threads at
/// once, one would find the other's file before its mark and refuse it).
pub(crate) fn prepare(jobs: &[fiox_job::JobSpec]) -> Result<(), Vec<(usize, crate::RunError)>> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let Some(name) = j.logs.write_iolog.as_deref() else {
            continue;
        };
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        if let Err(e) =
            crate::files::safeopen::append_output(std::path::Path::new(name), is_fio_iolog)
        {
            let msg = format!("cannot create write_iolog file '{name}': {e}");
            return Err(vec![(
                i,
                crate::RunError::Job {
                    job: j.name.clone(),
                    msg,
                },
            )]);
        }
    }
    Ok(())
}
