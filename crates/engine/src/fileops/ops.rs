//! fio's file-operation engines: `filecreate` (open(2) with O_CREAT), `filestat` (stat(2),
//! lstat(2) or statx(2), `stat_type=`) and `filedelete` (unlink(2)), and their directory
//! twins of fio 3.42: `dircreate` (mkdir(2)), `dirstat` (the same calls on a directory) and
//! `dirdelete` (rmdir(2)). They measure metadata
//! operations, not data transfer: as in fio (engines/fileoperations.c), the operation is done
//! once per file when the job opens it, and its duration is the job's completion latency (in
//! the job's direction: read unless the job only writes). The I/Os that follow complete at
//! once, moving no data; they are counted (io_bytes, total_ios) without latency or bandwidth
//! samples, as fio's FIO_NOSTATS does. `filecreate` is diskless (fio's FIO_DISKLESSIO: files are
//! not laid out, the operation creates them); `filestat` and `filedelete` work on files laid
//! out at setup. The directory engines are all diskless: `dirstat` and `dirdelete` find their
//! directories made at setup (fio's setup_dirs, done by the runner).

use std::collections::HashMap;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Instant;

use fiox_job::spec::StatType;

use crate::{EngineError, EngineFile, EngineFlags, FileOpDone, IoEngine, IoOp, IoUnit, Queued};

/// Which operation the engine measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileOp {
    Create,
    Stat(StatType),
    Delete,
    DirCreate,
    DirStat(StatType),
    DirDelete,
}

/// One file added: its path as given, NUL-terminated for the stat calls, and for the calls
/// that create or remove, its directory (an index into the engine's directories) and name.
struct OpFile {
    path: PathBuf,
    c: CString,
    dir: usize,
    name: OsString,
}

pub(crate) struct FileOpEngine {
    op: FileOp,
    files: Vec<OpFile>,
    /// The files' directories, each held open by the guard: creations and removals are made
    /// relative to the descriptor (never through a parent swapped for a link after the check).
    dirs: Vec<fiox_guard::Dir>,
    dir_index: HashMap<PathBuf, usize>,
}

impl FileOpEngine {
    pub fn new(op: FileOp) -> FileOpEngine {
        FileOpEngine {
            op,
            files: Vec::new(),
            dirs: Vec::new(),
            dir_index: HashMap::new(),
        }
    }

    /// The index of `path`'s directory, opened once per directory.
    fn dir_of(&mut self, path: &std::path::Path) -> Result<(usize, OsString), EngineError> {
        let guarded = |e: fiox_guard::GuardError| EngineError::File {
            path: path.to_path_buf(),
            what: format!("{}: open its directory", self.name()),
            source: e.into(),
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map(OsStr::to_os_string)
            .ok_or_else(|| guarded(fiox_guard::GuardError::refused("use", path, "no file name")))?;
        if let Some(&i) = self.dir_index.get(&parent) {
            return Ok((i, name));
        }
        let dir = fiox_guard::Dir::open(&parent).map_err(guarded)?;
        self.dirs.push(dir);
        self.dir_index.insert(parent, self.dirs.len() - 1);
        Ok((self.dirs.len() - 1, name))
    }

    fn file(&self, index: u32) -> Result<&OpFile, EngineError> {
        self.files
            .get(index as usize)
            .ok_or_else(|| EngineError::Option {
                engine: self.name(),
                option: "file",
                reason: format!(
                    "operation on file {index} but only {} were added",
                    self.files.len()
                ),
            })
    }
}

/// An errno as an `io::Error`.
trait IntoIo {
    fn into_io(self) -> std::io::Error;
}

impl IntoIo for i32 {
    fn into_io(self) -> std::io::Error {
        std::io::Error::from_raw_os_error(self)
    }
}

/// The clock around one syscall: its duration in ns and its return value.
fn timed<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_nanos() as u64, r)
}

/// statx(2) of `path` with every basic field, as fio asks (STATX_ALL).
fn statx(path: &CString) -> libc::c_int {
    // SAFETY: zeroed statx is a valid out buffer; path is NUL-terminated and outlives the call.
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: see above; AT_FDCWD makes a relative path relative to the working directory.
    unsafe { libc::statx(libc::AT_FDCWD, path.as_ptr(), 0, libc::STATX_ALL, &mut buf) }
}

/// stat(2) or lstat(2) of `path`.
fn stat(path: &CString, follow: bool) -> libc::c_int {
    // SAFETY: zeroed stat is a valid out buffer; path is NUL-terminated and outlives the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: see above.
    unsafe {
        if follow {
            libc::stat(path.as_ptr(), &mut st)
        } else {
            libc::lstat(path.as_ptr(), &mut st)
        }
    }
}

impl FileOpEngine {
    /// Which engine this is.
    fn kind(&self) -> fiox_job::Engine {
        use fiox_job::Engine;
        match self.op {
            FileOp::Create => Engine::Filecreate,
            FileOp::Stat(_) => Engine::Filestat,
            FileOp::Delete => Engine::Filedelete,
            FileOp::DirCreate => Engine::Dircreate,
            FileOp::DirStat(_) => Engine::Dirstat,
            FileOp::DirDelete => Engine::Dirdelete,
        }
    }
}

impl IoEngine for FileOpEngine {
    fn name(&self) -> &'static str {
        self.kind().name()
    }

    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: true,
            no_io: self.kind().is_diskless(),
            seeks: false,
            file_ops: true,
            zero_bytes: false,
            eof_ends: false,
            batches_rw: false,
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        let c = CString::new(file.path.as_os_str().as_bytes()).map_err(|_| EngineError::File {
            path: file.path.clone(),
            what: "file name".into(),
            source: std::io::Error::from_raw_os_error(libc::EINVAL),
        })?;
        let (dir, name) = self.dir_of(&file.path)?;
        self.files.push(OpFile {
            path: file.path.clone(),
            c,
            dir,
            name,
        });
        Ok(())
    }

    fn reopen_file(&mut self, _index: u32, _file: &EngineFile) -> Result<(), EngineError> {
        // The engine never uses the runner's descriptors: only paths.
        Ok(())
    }

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        // fio's queue of these engines completes every unit untouched.
        Ok(Queued::Done(match io.op {
            IoOp::Read | IoOp::Write | IoOp::Trim => io.len() as i64,
            IoOp::Fsync | IoOp::Fdatasync | IoOp::SyncRange(_) => 0,
        }))
    }

    fn file_op(&mut self, index: u32) -> Result<FileOpDone, EngineError> {
        let f = self.file(index)?;
        let (path, c, dir) = (&f.path, &f.c, &self.dirs[f.dir]);
        let failed = |what: &str, source: std::io::Error| EngineError::File {
            path: path.clone(),
            what: format!("{}: {what}", self.name()),
            source,
        };
        let (what, ns, r, created) = match self.op {
            FileOp::Create => {
                // Whether this open created the file: said by the open itself (see
                // create_or_open), so a file made by someone else is never taken for fiox's.
                let (ns, r) = timed(|| dir.create_or_open(&f.name, 0o600));
                let (file, created) = r.map_err(|e| failed("open", e))?;
                ("open", ns, 0, Some(file).filter(|_| created))
            }
            FileOp::DirCreate => {
                // fio passes S_IFDIR as the mode (fio_mkdir(name, S_IFDIR)): mkdir(2) keeps
                // only the permission bits, so the directory is made with mode 0000.
                let (ns, r) = timed(|| dir.mkdir_raw(&f.name, libc::S_IFDIR));
                r.map_err(|e| failed("mkdir", e))?;
                let made = dir.open_file(&f.name, libc::O_RDONLY | libc::O_DIRECTORY);
                ("mkdir", ns, 0, made.ok().flatten())
            }
            FileOp::Stat(t) | FileOp::DirStat(t) => {
                let (ns, r) = match t {
                    StatType::Stat => timed(|| stat(c, true)),
                    StatType::Lstat => timed(|| stat(c, false)),
                    StatType::Statx => timed(|| statx(c)),
                };
                (t.syscall(), ns, r, None)
            }
            FileOp::Delete | FileOp::DirDelete => {
                // Proven fiox's on the directory's descriptor before the clock starts; only
                // the unlinkat(2) is timed.
                let what = if self.op == FileOp::Delete {
                    "unlink"
                } else {
                    "rmdir"
                };
                let proof = match dir.prove_owned(&f.name) {
                    Ok(Some(p)) => p,
                    Ok(None) => return Err(failed(what, libc::ENOENT.into_io())),
                    Err(e) => return Err(failed(what, e.into())),
                };
                if (proof.kind == fiox_guard::Kind::Dir) != (self.op == FileOp::DirDelete) {
                    let errno = if self.op == FileOp::Delete {
                        libc::EISDIR
                    } else {
                        libc::ENOTDIR
                    };
                    return Err(failed(what, errno.into_io()));
                }
                let (ns, r) = timed(|| dir.unlink_proven(&f.name, &proof));
                r.map_err(|e| failed(what, e))?;
                (what, ns, 0, None)
            }
        };
        if r < 0 {
            return Err(EngineError::File {
                path: path.clone(),
                what: format!("{}: {what}", self.name()),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(FileOpDone { ns, created })
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fiox-fileops-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn add(e: &mut FileOpEngine, p: &std::path::Path) {
        e.add_file(&EngineFile {
            fd: -1,
            path: p.to_path_buf(),
            size: 4096,
            writable: false,
        })
        .unwrap();
    }

    #[test]
    fn create_stat_delete_do_their_syscall_once_per_call() {
        let d = dir("all");
        let p = d.join("f");
        let mut c = FileOpEngine::new(FileOp::Create);
        add(&mut c, &p);
        assert!(c.flags().file_ops && c.flags().no_io && c.flags().sync);
        let done = c.file_op(0).unwrap();
        // The runner marks what the engine made (fileop.rs); filedelete removes only that.
        let made = done.created.expect("the open created the file");
        fiox_guard::mark::mark_file(&made, fiox_guard::Layout::Complete).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 0);
        assert!(
            c.file_op(0).unwrap().created.is_none(),
            "second open finds it"
        );
        for t in [StatType::Stat, StatType::Lstat, StatType::Statx] {
            let mut s = FileOpEngine::new(FileOp::Stat(t));
            add(&mut s, &p);
            assert!(!s.flags().no_io);
            s.file_op(0).unwrap();
        }
        let mut del = FileOpEngine::new(FileOp::Delete);
        add(&mut del, &p);
        del.file_op(0).unwrap();
        assert!(!p.exists());
        let e = del.file_op(0).unwrap_err().to_string();
        assert!(
            e.contains("filedelete: unlink") && e.contains("No such file"),
            "{e}"
        );
        assert!(
            del.file_op(3).is_err(),
            "unknown index is an error, not a panic"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn dir_engines_mkdir_stat_and_rmdir() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir("dirs");
        let p = d.join("sub");
        let mut c = FileOpEngine::new(FileOp::DirCreate);
        add(&mut c, &p);
        assert!(c.flags().file_ops && c.flags().no_io);
        let made = c.file_op(0).unwrap().created.expect("mkdir made it");
        fiox_guard::mark::mark_file(&made, fiox_guard::Layout::Complete).unwrap();
        let m = std::fs::metadata(&p).unwrap();
        assert!(m.is_dir());
        assert_eq!(m.permissions().mode() & 0o777, 0, "fio's mode S_IFDIR");
        let e = c.file_op(0).unwrap_err().to_string();
        assert!(e.contains("dircreate: mkdir"), "{e}");
        let mut s = FileOpEngine::new(FileOp::DirStat(StatType::Lstat));
        add(&mut s, &p);
        assert!(s.flags().no_io, "diskless, as fio's dirstat");
        s.file_op(0).unwrap();
        let mut r = FileOpEngine::new(FileOp::DirDelete);
        add(&mut r, &p);
        r.file_op(0).unwrap();
        assert!(!p.exists());
        assert!(r.file_op(0).unwrap_err().to_string().contains("rmdir"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn units_complete_untouched() {
        let mut e = FileOpEngine::new(FileOp::Stat(StatType::Stat));
        let io = IoUnit::range(IoOp::Write, 0, 0, 8192);
        assert_eq!(e.queue(0, &io).unwrap(), Queued::Done(8192));
    }
}
