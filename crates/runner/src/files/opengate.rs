//! `openfiles` below `nrfiles`: the job's real file descriptors follow the generator's model of
//! which files are open (fio's lazy open and close-when-done), so at most `openfiles` files are
//! open during the I/O phase. The gate owns the fds of its files, opens one when the generator
//! first uses it and closes it (after the engine forgot it) when the generator closes it.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use crate::error::RunError;
use crate::files::owned::Identity;
use crate::files::FileKind;
use fiox_engine::{EngineFile, IoEngine, OpenSpec};

/// The files of one job whose opens are driven by the generator.
pub(crate) struct OpenGate {
    files: Vec<GateFile>,
    spec: OpenSpec,
    writable: bool,
    /// Job name and the user's allow, for the checks of each open that writes.
    job: String,
    allow: bool,
    /// `--allow-destructive=PATH`'s targets, matched on each open descriptor.
    allowed: fiox_guard::Allowed,
    /// `fsync_on_close`: each close of a written file fsyncs it first, as fio does.
    fsync_on_close: bool,
    /// `fadvise_hint`'s POSIX_FADV_* value, given at every open (as fio does).
    advice: Option<i32>,
    /// `invalidate=1`: drop each file's cached pages when it is opened, as fio does.
    invalidate: bool,
    /// `write_hint`: the hint and whether it goes on the open file (direct) or the inode.
    write_hint: Option<(u64, bool)>,
    open_now: usize,
    /// Highest number of files open at once (checked by tests against `openfiles`).
    pub(crate) max_open: usize,
    /// Opens done by the gate (each lazy open of a file counts).
    pub(crate) opens: u64,
}

/// One file handed to the gate.
pub(crate) struct GateEntry {
    pub path: PathBuf,
    pub size: u64,
    /// Where the job's region starts.
    pub offset: u64,
    /// The inode setup already created or checked, if it opened the file.
    pub checked: Option<Identity>,
}

struct GateFile {
    path: PathBuf,
    size: u64,
    /// Where the job's region starts (writes over bytes from here on need ownership).
    offset: u64,
    handle: Option<File>,
    /// The inode an earlier open of this file created or checked: reopening it needs no
    /// new check.
    checked: Option<Identity>,
}

impl OpenGate {
    /// A gate over `files`, all closed; the engine already knows each by index. `job` and
    /// `allow` (the user allowed writing over anything) are for the ownership checks of opens
    /// that write.
    pub(crate) fn new(
        files: Vec<GateEntry>,
        spec: OpenSpec,
        writable: bool,
        job: &str,
        (allow, allowed): (bool, &fiox_guard::Allowed),
    ) -> OpenGate {
        OpenGate {
            files: files
                .into_iter()
                .map(|e| GateFile {
                    path: e.path,
                    size: e.size,
                    offset: e.offset,
                    handle: None,
                    checked: e.checked,
                })
                .collect(),
            spec,
            writable,
            job: job.to_string(),
            allow,
            allowed: allowed.clone(),
            fsync_on_close: false,
            advice: None,
            invalidate: false,
            write_hint: None,
            open_now: 0,
            max_open: 0,
            opens: 0,
        }
    }

    /// fsync each file before closing it (`fsync_on_close` of a writing job).
    pub(crate) fn fsync_on_close(mut self, on: bool) -> OpenGate {
        self.fsync_on_close = on && self.writable;
        self
    }

    /// Give each file this POSIX_FADV_* hint when it is opened.
    pub(crate) fn advise(mut self, advice: Option<i32>) -> OpenGate {
        self.advice = advice;
        self
    }

    /// Set this write life hint on each file when it is opened (`write_hint`; `on_file`: on
    /// the open file rather than the inode, for direct jobs).
    pub(crate) fn write_hint(mut self, hint: Option<u64>, on_file: bool) -> OpenGate {
        self.write_hint = hint.map(|h| (h, on_file));
        self
    }

    /// Drop each file's page cache when it is opened (`invalidate=1`).
    pub(crate) fn invalidate(mut self, on: bool) -> OpenGate {
        self.invalidate = on;
        self
    }

    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    pub(crate) fn is_open(&self, i: usize) -> bool {
        self.files.get(i).is_some_and(|f| f.handle.is_some())
    }

    /// Open file `i` (creating it when the job may: `create_on_open`) and hand the new fd to
    /// the engine. A file this open created (O_EXCL) is marked as fiox's, as setup would
    /// have; one that was already there is checked on the descriptor before any write (a
    /// user's file may have appeared since the job's checks).
    pub(crate) fn open(&mut self, engine: &mut dyn IoEngine, i: usize) -> Result<(), RunError> {
        let f = &mut self.files[i];
        let who = crate::files::safeopen::Writer {
            job: &self.job,
            allow: self.allow,
            allowed: &self.allowed,
        };
        let o = crate::files::safeopen::open_job_file(
            &who,
            &f.path,
            &self.spec,
            f.offset,
            f.checked.as_ref(),
        )?;
        f.checked = Some(o.id);
        let h = o.file;
        if let Some((hint, on_file)) = self.write_hint {
            crate::sys::set_write_hint(h.as_raw_fd(), hint, on_file)
                .map_err(|e| RunError::io("fcntl write hint", &f.path, e))?;
        }
        if self.invalidate {
            use std::os::unix::fs::FileTypeExt;
            let block = h.metadata().is_ok_and(|m| m.file_type().is_block_device());
            let kind = if block {
                FileKind::Block
            } else {
                FileKind::Regular
            };
            // As at setup: a failed drop only means reads may be cached (fio goes on too).
            let _ = crate::files::cache::drop_cached(kind, h.as_raw_fd(), 0, f.size);
        }
        if let Some(advice) = self.advice {
            // Over the whole file (the gate does not track regions); a failure only loses
            // the hint.
            let _ = fiox_engine::sys::fadvise(h.as_raw_fd(), 0, 0, advice);
        }
        engine.reopen_file(
            i as u32,
            &EngineFile {
                fd: h.as_raw_fd(),
                path: f.path.clone(),
                size: f.size,
                writable: self.writable,
            },
        )?;
        f.handle = Some(h);
        self.open_now += 1;
        self.opens += 1;
        self.max_open = self.max_open.max(self.open_now);
        Ok(())
    }

    /// Close file `i`: the engine drops its per-file state first, then the fd is closed.
    /// The caller guarantees no I/O to the file is queued or in flight.
    pub(crate) fn close(&mut self, engine: &mut dyn IoEngine, i: usize) -> Result<(), RunError> {
        let Some(h) = self.files[i].handle.as_ref() else {
            return Ok(());
        };
        engine.close_file(i as u32)?;
        if self.fsync_on_close {
            h.sync_all()
                .map_err(|e| RunError::io("fsync on close", &self.files[i].path, e))?;
        }
        self.files[i].handle = None;
        self.open_now -= 1;
        Ok(())
    }

    /// `unlink_each_loop`: remove every file of the gate that fiox created (all closed by
    /// the caller first); the next open creates it afresh. A file fiox did not create stays.
    pub(crate) fn unlink_owned(&mut self) -> Result<(), RunError> {
        let mut parents = fiox_guard::Parents::new();
        for f in &mut self.files {
            debug_assert!(f.handle.is_none());
            if crate::files::owned::unlink_owned_in(&mut parents, &f.path)
                .map_err(|e| RunError::io("unlink", &f.path, e))?
            {
                // A new inode comes next: the next open checks (or creates) it again.
                f.checked = None;
            }
        }
        Ok(())
    }

    /// Close every file (end of the I/O phase).
    pub(crate) fn close_all(&mut self, engine: &mut dyn IoEngine) -> Result<(), RunError> {
        for i in 0..self.files.len() {
            self.close(engine, i)?;
        }
        Ok(())
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use fiox_job::JobSpec;

    #[test]
    fn opens_and_closes_track_the_engine_and_the_peak() {
        let dir = std::env::temp_dir().join(format!("fiox-opengate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let job = JobSpec {
            ioengine: "psync".into(),
            ..Default::default()
        };
        let mut engine = fiox_engine::create(&job).unwrap();
        let spec = OpenSpec::from_job(&job);
        let mut files = Vec::new();
        for n in 0..3 {
            let p = dir.join(format!("f{n}"));
            std::fs::write(&p, vec![7u8; 4096]).unwrap();
            let h = fiox_engine::open_file(&p, &spec).unwrap();
            engine
                .add_file(&EngineFile {
                    fd: h.as_raw_fd(),
                    path: p.clone(),
                    size: 4096,
                    writable: false,
                })
                .unwrap();
            files.push(GateEntry {
                path: p,
                size: 4096,
                offset: 0,
                checked: None,
            });
        }
        let mut g = OpenGate::new(
            files,
            spec,
            false,
            "j",
            (false, &fiox_guard::Allowed::none()),
        );
        assert_eq!(g.len(), 3);
        g.open(engine.as_mut(), 0).unwrap();
        g.close(engine.as_mut(), 0).unwrap();
        g.open(engine.as_mut(), 2).unwrap();
        assert!(g.is_open(2) && !g.is_open(0));
        g.open(engine.as_mut(), 1).unwrap();
        g.close_all(engine.as_mut()).unwrap();
        assert!(!g.is_open(1) && !g.is_open(2));
        assert_eq!((g.opens, g.max_open), (3, 2));
        drop(engine);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
