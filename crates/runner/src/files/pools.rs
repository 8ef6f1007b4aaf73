//! `ioengine=pmemblk`'s files: PMDK block pools named `path[,bsize,fsizemib]`
//! ([`fiox_engine::pmemblk::name`]). As fio's engine: an existing file is opened as a pool
//! (its block size must be `bsize` when the name gives one); a missing one is created when the
//! name gives both sizes and `allow_file_create` allows it; the pool's usable bytes (blocks
//! times block size, less than the file: libpmemblk keeps metadata in it) are the file's size
//! for the job, and nothing is laid out. Unlike fio's, the pool's file is made by fiox, not by
//! libpmemblk: created with O_EXCL through the guard, marked as fiox's, sized (posix_fallocate,
//! as libpmemblk does), and only then made a pool by descriptor (libpmemblk's create with pool
//! size 0, over the whole file); a pool that cannot be made leaves no file behind. An existing
//! file a job writes must be fiox's, or allowed (see [`crate::files::safeopen`]).
//!
//! fio fails a job whose pool it cannot open or create before any I/O, in its words, with no
//! error number (err=0); so does fiox, with libpmemblk's own reason added.

use crate::error::RunError;
use crate::files::owned::{self, Layout};
use crate::files::safeopen::{self, Writer};
use crate::files::{self, FilePlan};
use fiox_engine::pmemblk::name::PoolName;
use fiox_engine::pmemblk::{shared_pool, Make, Pool, PoolError};
use fiox_job::JobSpec;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A pmemblk job's files, open, with their pools (held until the job ends, so the jobs of a
/// group share each pool) and the plan sized by them.
pub(crate) struct PoolFiles {
    pub handles: Vec<Option<File>>,
    pub pools: Vec<Arc<Pool>>,
    pub plan: FilePlan,
}

/// fio's failure to open or create a pool: its words, libpmemblk's reason, err=0.
fn unable(path: &Path, e: &PoolError) -> RunError {
    let why = std::io::Error::from_raw_os_error(e.errno);
    let why = why.to_string();
    let why = why.split(" (os error").next().unwrap_or(&why).to_string();
    let detail = if e.detail.is_empty() {
        String::new()
    } else {
        format!("; libpmemblk: {}", e.detail)
    };
    failed(format!(
        "pmemblk: unable to open pmemblk pool file {} ({why}){detail}",
        path.display()
    ))
}

fn failed(msg: String) -> RunError {
    RunError::Target { msg, errno: 0 }
}

/// Open (or create) every pool of the job and plan its files by their pools' sizes. Files
/// this job created go into `leftovers` when the job unlinks its files.
pub(crate) fn prepare(
    job: &JobSpec,
    who: &Writer,
    leftovers: &mut Vec<PathBuf>,
) -> Result<PoolFiles, RunError> {
    // Clones sharing a pool's file must not both create it: one does, the others open it
    // (and share its pool) once they get the lock.
    static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _setup = SETUP.lock().unwrap_or_else(|p| p.into_inner());
    let _held = safeopen::HeldDirs::enter();
    let mut handles = Vec::new();
    let mut pools = Vec::new();
    let mut sizes = Vec::new();
    for name in files::file_names(job) {
        let path = files::place(job, &PoolName::path_of(&name));
        let create = match PoolName::parse(&name) {
            Ok(p) => p.create,
            // A name fio would take whole: fine if that file is there, else say what is wrong.
            Err(_) if path.exists() => None,
            Err(e) => return Err(failed(format!("pmemblk: {e}"))),
        };
        let made = match create {
            Some(s) if job.files.allow_file_create => make_file(&path, s.file_bytes)?,
            _ => None,
        };
        let (file, pool) = match made {
            Some(file) => {
                let bsize = create.map_or(0, |s| s.bsize);
                let pool = match shared_pool(file.as_raw_fd(), Make::Create { bsize }) {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = owned::unlink_owned_in(&mut fiox_guard::Parents::new(), &path);
                        return Err(unable(&path, &e));
                    }
                };
                owned::mark(&file, &path, Layout::Complete)?;
                if job.files.unlink {
                    owned::leave(leftovers, &path);
                }
                (file, pool)
            }
            None => {
                let file = open_existing(job, who, &path)?;
                let bsize = create.map_or(0, |s| s.bsize);
                let pool = shared_pool(file.as_raw_fd(), Make::Open { bsize })
                    .map_err(|e| unable(&path, &e))?;
                (file, pool)
            }
        };
        crate::dprint!(crate::debug::FILE, "fd open {}", path.display());
        sizes.push(pool.bsize().saturating_mul(pool.nblock()));
        handles.push(Some(file));
        pools.push(pool);
    }
    let plan = files::plan_sized(job, true, Some(&sizes))?;
    Ok(PoolFiles {
        handles,
        pools,
        plan,
    })
}

/// Create the pool's file where nothing is (None when something is), `bytes` long.
fn make_file(path: &Path, bytes: u64) -> Result<Option<File>, RunError> {
    files::check_parent(path)?;
    let Some(file) = safeopen::create_new(path, Layout::Partial)? else {
        return Ok(None);
    };
    let posix = fiox_job::FallocateMode::Posix;
    if let Err(e) = fiox_engine::sys::fallocate(file.as_raw_fd(), posix, 0, bytes) {
        let _ = owned::unlink_owned_in(&mut fiox_guard::Parents::new(), path);
        return Err(RunError::io("size the pmemblk pool file", path, e));
    }
    Ok(Some(file))
}

/// Open the existing pool file `path`: read-write (libpmemblk maps it so), checked on the
/// descriptor when the job writes. A missing file is fio's ENOENT failure.
fn open_existing(job: &JobSpec, who: &Writer, path: &Path) -> Result<File, RunError> {
    let file = fiox_guard::named::open(path, libc::O_RDWR).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        let detail = String::new();
        unable(path, &PoolError { errno, detail })
    })?;
    if files::job_writes(job) {
        safeopen::check_writable(who, &file, path, 0)?;
    }
    Ok(file)
}

/// pmemblk's jobs where libpmemblk cannot be loaded (it is loaded at run time): fio 3.33
/// cannot load such an engine and refuses the whole job file; so does fiox.
pub(crate) fn unloadable(jobs: &[JobSpec]) -> Vec<(usize, RunError)> {
    let uses = |j: &JobSpec| j.ioengine.is(fiox_job::Engine::Pmemblk);
    let Some(Err(why)) = jobs.iter().any(uses).then(fiox_engine::pmemblk::lib) else {
        return Vec::new();
    };
    let lib = fiox_engine::pmemblk::SONAME;
    jobs.iter()
        .enumerate()
        .filter(|(_, j)| uses(j))
        .map(|(i, j)| {
            let msg = format!(
                "job {}: ioengine pmemblk needs {lib} (PMDK's libpmemblk; Debian's package \
                 libpmemblk1), which cannot be loaded ({why}); fio refuses a job file naming \
                 an engine it cannot load, and so does fiox",
                j.name
            );
            (i, RunError::Refused(msg))
        })
        .collect()
}
