//! Opening files fiox writes without trusting a check made earlier on the path: a file fiox
//! means to create is created with O_CREAT|O_EXCL (and O_NOFOLLOW, so a symbolic link there
//! is never followed into someone's file), and a file that already exists is checked on the
//! open descriptor (fstat, fgetxattr) before any byte is written: it must carry fiox's mark
//! for this inode (see [`crate::files::owned`]) when the job writes over existing bytes, and it must
//! neither back a loop device nor hold a filesystem or partition signature (a filesystem
//! image, even one fiox once laid out). A file with no data where the job writes (only holes)
//! is written, and so is any file in scratch space the user declared (FIOX_SCRATCH, see
//! [`fiox_guard::scratch`]). Also the implicit outputs fiox names itself (logs in
//! the working directory): they replace only a file fiox wrote.

use crate::error::RunError;
use crate::files::owned::{self, Identity, Layout, Mark};
use fiox_engine::OpenSpec;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Who writes, for refusal messages, and what the user allowed: writing over anything the job
/// names (`allow_mounted_write=1` or `--allow-destructive`), or over the objects
/// `--allow-destructive=PATH` named when the run started.
pub struct Writer<'a> {
    pub job: &'a str,
    pub allow: bool,
    pub allowed: &'a fiox_guard::Allowed,
}

/// No `--allow-destructive=PATH` target.
#[cfg(test)]
pub static NO_TARGETS: fiox_guard::Allowed = fiox_guard::Allowed::none();

/// Create `path` only if nothing is there (not even a symbolic link), read-write, marked as
/// fiox's with `layout`. None when something already exists.
/// Inside a [`HeldDirs`] scope the directory is held open for the next file in it.
pub fn create_new(path: &Path, layout: Layout) -> Result<Option<File>, RunError> {
    let held = HELD.with(|h| {
        h.borrow_mut()
            .as_mut()
            .map(|s| s.parents.create_new(path, layout))
    });
    match held {
        Some(r) => Ok(r?),
        None => Ok(fiox_guard::named::create_new(path, layout)?),
    }
}

/// What a [`HeldDirs`] scope keeps: the directories held open, and the loop devices once
/// looked at (None until a check needs them).
struct Held {
    parents: fiox_guard::Parents,
    loops: Option<Vec<LoopBacking>>,
}

thread_local! {
    static HELD: std::cell::RefCell<Option<Held>> = const { std::cell::RefCell::new(None) };
}

/// A scope (a job's preparation: layout and first opens) in which [`create_new`] keeps each
/// file's directory open for the next file in it: one walk from `/` per directory instead of
/// per file (issue 28: 100,000 files). Scoped, not for the thread's life, so no descriptor of
/// a directory outlives the preparation (a testbed's unmount would find it busy).
/// In the same scope the loop devices are looked at once (see `loop_backed_by`).
pub struct HeldDirs {
    outer: Option<Held>,
}

impl HeldDirs {
    pub fn enter() -> HeldDirs {
        let scope = Held {
            parents: fiox_guard::Parents::new(),
            loops: None,
        };
        let outer = HELD.with(|h| h.borrow_mut().replace(scope));
        HeldDirs { outer }
    }
}

impl Drop for HeldDirs {
    fn drop(&mut self) {
        let outer = self.outer.take();
        HELD.with(|h| *h.borrow_mut() = outer);
    }
}

/// Open an existing file read-only to check it (non-blocking, so a FIFO put there does not
/// hang the check). None when it is gone.
pub fn open_to_check(path: &Path) -> Result<Option<File>, RunError> {
    match fiox_guard::named::open(path, libc::O_RDONLY | libc::O_NONBLOCK) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(RunError::io("open to check", path, e)),
    }
}

/// Refuse writing to the regular file open as `file` (at `path`, from byte `from` on) unless
/// the user allowed it: when it backs a loop device, holds a filesystem or partition
/// signature (not checked for files this run created: their data is fiox's), or has bytes
/// at or after `from` and is not fiox's. The user's allow counts for this descriptor only:
/// an allowed target must be this very object (fstat), and the switch that allows anything
/// does not reach through another user's link in a sticky directory (see
/// [`fiox_guard::allow`]). A block device must be one this process checked and claimed
/// ([`crate::files::blockdev`]); other file types are used as they are.
pub fn check_writable(
    who: &Writer,
    file: &File,
    path: &Path,
    from: u64,
) -> Result<Writable, RunError> {
    use std::os::unix::fs::FileTypeExt;
    let m = file.metadata().map_err(|e| RunError::io("stat", path, e))?;
    let block = m.file_type().is_block_device();
    if !m.is_file() && !block {
        return Ok(Writable::Yes);
    }
    if who.allowed.allows(&m).is_some() {
        return Ok(Writable::Yes);
    }
    if who.allow {
        return fiox_guard::allow::reached_as_named(path, &m)
            .map(|()| Writable::Yes)
            .map_err(|e| RunError::Refused(format!("job '{}': {e}", who.job)));
    }
    if block {
        if crate::files::blockdev::claimed(m.rdev()) {
            return Ok(Writable::Yes);
        }
        return Err(refusal(
            who,
            path,
            "it is not the block device fiox checked before the job (the path changed)",
        ));
    }
    if let Some(fs) = fiox_guard::kernel::pseudo_fs(file) {
        // M3: not "data" to destroy, and scratch space does not lift it: say what a write
        // does and the two switches that do.
        return Err(RunError::Refused(format!(
            "job '{}': refusing to write to {}: it is a file of the kernel's {fs}, a setting \
             or a view of the system, so a write changes the running system, not a file's \
             contents (pass --allow-destructive={} or set allow_mounted_write=1 in the job to \
             write to it anyway)",
            who.job,
            path.display(),
            path.display()
        )));
    }
    let id = Identity::of(&m);
    if let Some(dev) = loop_backed_by(&id) {
        return Err(refusal(
            who,
            path,
            &format!("it backs loop device {dev}, so it is a disk image in use"),
        ));
    }
    // Declared scratch space (FIOX_SCRATCH, a config file): existing data there may go.
    if fiox_guard::scratch::Scratch::declared()
        .covers(file)
        .is_some()
    {
        return Ok(Writable::Yes);
    }
    if m.len() > 0 && owned::created_here(&id).is_none() {
        if let Some(what) = signature_of(file, path)? {
            return Err(refusal(
                who,
                path,
                &format!("it holds {what}, so it is a disk image"),
            ));
        }
    }
    let mark = owned::mark_of_file(file);
    let Some(why) = mark.why_not_ours() else {
        return Ok(Writable::Yes);
    };
    let data_from = |at: u64| {
        fiox_guard::named::holds_data(file, at)
            .map_err(|e| RunError::io("look for data in", path, e))
    };
    // Only holes from `from` on (`truncate -s 8M f`): writing destroys nothing.
    if m.len() > from && data_from(from)? {
        return Err(refusal(
            who,
            path,
            &format!(
                "it holds existing data ({} bytes long, {} bytes allocated) and {why}",
                m.len(),
                m.blocks() * 512
            ),
        ));
    }
    // No data anywhere (an empty file made for fiox, KDiskMark's mktemp): whatever it will
    // hold is fiox's. One name only: a second one is someone's way back to it.
    let markable = !matches!(mark, Mark::Unsupported(_)) && m.nlink() == 1;
    if markable && (m.len() == 0 || !data_from(0)?) {
        return Ok(Writable::Empty);
    }
    Ok(Writable::Yes)
}

/// What [`check_writable`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writable {
    /// fiox may write it: fiox's, allowed, scratch space, or data only before the job's region.
    Yes,
    /// Not fiox's, but it holds no data at all: once fiox writes it, every byte is fiox's, so
    /// it is marked as fiox's (the next run may write it, as a file fiox created).
    Empty,
}

fn refusal(who: &Writer, path: &Path, why: &str) -> RunError {
    RunError::Refused(format!(
        "job '{}': refusing to write to {}: {why}; writing would destroy that data (set \
         allow_mounted_write=1 in the job or pass --allow-destructive to write to it anyway, \
         {})",
        who.job,
        path.display(),
        fiox_guard::scratch::HINT
    ))
}

/// The loop device (`/dev/loopN`) whose backing file is this inode: per sysfs (the backing
/// file's current path, which follows renames), or where that path does not resolve here
/// (another mount namespace, a removed name of a file still linked elsewhere), per the
/// device's LOOP_GET_STATUS64 (needs permission to open the device; without it such a
/// device is not found).
/// Inside a [`HeldDirs`] scope the loop devices are looked at once, for all the files the
/// preparation checks (100,000 files: one scan, not one per file); the window this leaves (a
/// loop device bound after the scan) is the one every check has until the job's writes.
fn loop_backed_by(id: &Identity) -> Option<String> {
    let find = |all: &[LoopBacking]| {
        all.iter()
            .find(|(dev_ino, _)| *dev_ino == id.dev_ino())
            .map(|(_, n)| format!("/dev/{n}"))
    };
    HELD.with(|h| match &mut *h.borrow_mut() {
        Some(scope) => find(scope.loops.get_or_insert_with(loop_backings)),
        None => find(&loop_backings()),
    })
}

/// A bound loop device's backing inode (device, inode number) and its name (`loop3`).
type LoopBacking = ((u64, u64), String);

/// Every bound loop device and its backing inode.
fn loop_backings() -> Vec<LoopBacking> {
    use fiox_testbed::loopdev;
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop"))
        .filter_map(|n| {
            let b = loopdev::sys_backing_file(&n)?; // None: not bound
            let dev_ino = match std::fs::metadata(b) {
                Ok(m) => Some((m.dev(), m.ino())),
                Err(_) => loopdev::backing_dev_ino(&n),
            }?;
            Some((dev_ino, n))
        })
        .collect()
}

/// The filesystem, partition-table, RAID, swap or LUKS signature of the file open as `file`
/// (libblkid, see `file_signature`), probed through /proc/thread-self/fd (the same inode, not the
/// path).
fn signature_of(file: &File, path: &Path) -> Result<Option<String>, RunError> {
    let fd_path = format!("/proc/thread-self/fd/{}", file.as_raw_fd());
    match fiox_testbed::probe::file_signature(Path::new(&fd_path)) {
        Ok(found) => Ok(found),
        Err(e) => Err(RunError::Refused(format!(
            "refusing to write to {}: cannot read its first bytes to check for a filesystem \
             signature ({e}) (set allow_mounted_write=1 or pass --allow-destructive to write \
             to it anyway)",
            path.display()
        ))),
    }
}

/// A job's file opened for I/O, and what fiox knows about it.
pub struct Opened {
    pub file: File,
    pub id: Identity,
    /// This open created the file.
    pub created: bool,
}

/// Open a job's file with the job's flags. A file the job may create is created first with
/// O_EXCL (and marked, complete: nothing to lay out); the job's own open must then find that
/// inode. An existing file opened for writing is checked on the descriptor
/// ([`check_writable`], writes from `from` on) unless it is `known`: the inode this job
/// already checked.
pub fn open_job_file(
    who: &Writer,
    path: &Path,
    spec: &OpenSpec,
    from: u64,
    known: Option<&Identity>,
) -> Result<Opened, RunError> {
    let mut made = None;
    if spec.create {
        if let Some(f) = create_new(path, Layout::Complete)? {
            made = Some(identity(&f, path)?);
        }
    }
    let file = fiox_engine::open_file(path, spec)?;
    let id = identity(&file, path)?;
    match made {
        Some(m) if m != id => {
            return Err(RunError::Refused(format!(
                "job '{}': {} was replaced by another file while fiox opened the file it had \
                 just created; not writing to it",
                who.job,
                path.display()
            )))
        }
        Some(_) => {}
        // An empty file someone made for fiox: fiox's from its first write on.
        None if spec.write
            && known != Some(&id)
            && check_writable(who, &file, path, from)? == Writable::Empty =>
        {
            owned::mark(&file, path, Layout::Complete)?;
        }
        None => {}
    }
    crate::dprint!(crate::debug::FILE, "fd open {}", path.display());
    Ok(Opened {
        file,
        id,
        created: made.is_some(),
    })
}

fn identity(f: &File, path: &Path) -> Result<Identity, RunError> {
    let m = f.metadata().map_err(|e| RunError::io("stat", path, e))?;
    Ok(Identity::of(&m))
}

/// Open a file to lay it out (read-write): created with O_EXCL when missing (marked as being
/// laid out), else checked on the descriptor for writing from its current end on, from
/// `job_from` on when the job itself writes there (so a file the job may not write is not
/// even extended), or from 0 when fiox's earlier layout of it did not finish. Returns the
/// file, its mark, and how it came to be fiox's to lay out.
pub fn open_for_layout(
    who: &Writer,
    path: &Path,
    may_create: bool,
    job_from: Option<u64>,
) -> Result<(File, Mark, Origin), RunError> {
    if may_create {
        if let Some(f) = create_new(path, Layout::Partial)? {
            return Ok((f, Mark::Ours(Layout::Partial), Origin::Created));
        }
    }
    let f = match fiox_guard::named::open(path, libc::O_RDWR) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound && !may_create => {
            return Err(RunError::Plan(format!(
                "{} does not exist and allow_file_create=0 forbids creating it",
                path.display()
            )))
        }
        Err(e) => return Err(RunError::io("open to lay out", path, e)),
    };
    let mark = owned::mark_of_file(&f);
    let from = match mark {
        Mark::Ours(Layout::Partial) => 0,
        _ => {
            let size = f
                .metadata()
                .map_err(|e| RunError::io("stat", path, e))?
                .len();
            job_from.map_or(size, |j| j.min(size))
        }
    };
    let origin = match check_writable(who, &f, path, from)? {
        Writable::Empty => Origin::Empty,
        Writable::Yes => Origin::Existing,
    };
    Ok((f, mark, origin))
}

/// How a file opened for layout came to be fiox's to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// This open created it.
    Created,
    /// It was there, and fiox may write it (its own, allowed, or scratch space).
    Existing,
    /// It was there, not fiox's, with no data at all: the layout makes it fiox's.
    Empty,
}

/// Create an output file fiox names itself (a log in the working directory), as fio does
/// but without destroying anything: a new file is created (O_EXCL) and marked; an existing
/// one is replaced (truncated) only when it is a regular file fiox wrote (its mark binds it);
/// a symbolic link is never followed. The error says what was found and what to do.
pub fn create_output(path: &Path) -> io::Result<File> {
    use fiox_guard::output::{self, Named, Open};
    Ok(output::open(path, Open::Truncate, Named::ByFiox)?)
}

/// As [`create_output`] for a log fio writes under the same name (`write_bw_log`,
/// `write_lat_log`, `write_iops_log`, `write_hist_log`, the `--bandwidth-log` files): a file
/// fio wrote there (recognised by its format, [`fiox_stats::log::is_fio_log`]) is replaced too,
/// as fio would replace it; anything else is refused.
pub fn create_log_output(path: &Path) -> io::Result<File> {
    use fiox_guard::output::{self, Named, Open};
    let named = Named::Recognized(fiox_stats::log::is_fio_log);
    Ok(output::open(path, Open::Truncate, named)?)
}

/// As [`create_output`], but an existing file fiox wrote is kept as it is (for logs fio
/// appends to, such as `write_iolog`), and so is a file `fio_wrote` recognises as one fio
/// wrote there (for an I/O log, its first line: the caller knows the format): fio appends
/// to it too.
pub fn append_output(path: &Path, fio_wrote: fn(&mut File) -> bool) -> io::Result<File> {
    use fiox_guard::output::{self, Named, Open};
    Ok(output::open(
        path,
        Open::Append,
        Named::Recognized(fio_wrote),
    )?)
}

#[allow(clippy::disallowed_methods)] // the test makes its scratch directory itself
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_dirs_serve_their_scope_only_and_create_as_without() {
        let d = std::env::temp_dir().join(format!("fiox-helddirs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("users"), b"data").unwrap();
        {
            let _held = HeldDirs::enter();
            assert!(HELD.with(|h| h.borrow().is_some()));
            for i in 0..3 {
                let f = create_new(&d.join(format!("f{i}")), Layout::Complete).unwrap();
                assert!(f.is_some());
            }
            // Something already there: None, and it is left as it was.
            assert!(create_new(&d.join("users"), Layout::Complete)
                .unwrap()
                .is_none());
        }
        assert!(HELD.with(|h| h.borrow().is_none()), "the scope let go");
        assert!(create_new(&d.join("f3"), Layout::Complete)
            .unwrap()
            .is_some());
        assert_eq!(std::fs::read(d.join("users")).unwrap(), b"data");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
