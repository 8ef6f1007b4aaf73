//! `pmemblk`: fio's engine for PMDK block pools (libpmemblk). A file name is
//! `path[,bsize,fsizemib]` ([`name`]); each read or write is split into the pool's blocks, one
//! pmemblk_read/pmemblk_write each, and must be whole blocks inside the pool (EINVAL
//! otherwise, as fio's); syncs complete at once (the pool is always in sync) and trims fail
//! with EINVAL, as in fio 3.33, which has no trim for this engine.
//!
//! The runner, not the library, makes the pool's file: it opens or creates (and sizes) it
//! through the guard, then has [`shared_pool`] turn it into a pool by descriptor (`ffi`'s note
//! says why by `/proc/thread-self/fd`). libpmemblk locks a pool file (flock) while it is open, so a
//! process can open it once: the jobs using one file share one [`Pool`], as fio's threads
//! share theirs (fio needs thread=1 for this engine; so does fiox, to fail the same jobs).
//! libpmemblk keeps its own descriptor of a pool's file until the pool closes, on whichever
//! job thread closes it last: it must be in the file table every job thread shares, which it
//! is (a private table is only for the sync family's jobs without thread=1, runner's
//! fdtable).

mod ffi;
pub mod name;

pub use ffi::{lib, Make, Pool, PoolError, SONAME};

use crate::target::{target, Target};
use crate::{EngineError, EngineFile, EngineFlags, IoEngine, IoOp, IoUnit, Queued};
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, Weak};

/// The pools open in this process, by the (device, inode) of their file. Weak: a pool closes
/// when the last job holding it lets it go, and is opened again by the next one.
static POOLS: Mutex<Vec<(FileKey, Weak<Pool>)>> = Mutex::new(Vec::new());

/// A file's device and inode numbers.
type FileKey = (u64, u64);

/// The device and inode of the file open as `fd`.
fn key_of(fd: RawFd) -> std::io::Result<FileKey> {
    let st = crate::sys::fstat(fd)?;
    Ok((st.st_dev, st.st_ino))
}

/// The pool of the file open as `fd`: the one this process already has open for that inode,
/// else one opened (or created, see [`Make`]) now. A pool already open is shared whatever
/// block size `how` names, as fio's cache shares it.
pub fn shared_pool(fd: RawFd, how: Make) -> Result<Arc<Pool>, PoolError> {
    let lib = lib().map_err(|e| PoolError {
        errno: libc::ENOENT,
        detail: e.to_string(),
    })?;
    let key = key_of(fd).map_err(|e| PoolError {
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        detail: e.to_string(),
    })?;
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    pools.retain(|(_, w)| w.strong_count() > 0);
    if let Some(p) = pools
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(p);
    }
    let pool = Arc::new(Pool::of_fd(lib, fd, how)?);
    pools.push((key, Arc::downgrade(&pool)));
    Ok(pool)
}

/// The engine: the pools of the job's files, by file index.
pub(crate) struct PmemblkEngine {
    files: Vec<Target>,
    pools: Vec<Option<Arc<Pool>>>,
}

impl PmemblkEngine {
    pub fn new() -> PmemblkEngine {
        PmemblkEngine {
            files: Vec::new(),
            pools: Vec::new(),
        }
    }

    fn pool_of(file: &EngineFile) -> Result<Arc<Pool>, EngineError> {
        shared_pool(file.fd, Make::Open { bsize: 0 }).map_err(|e| EngineError::File {
            path: file.path.clone(),
            what: format!("pmemblk pool ({})", e.detail),
            source: std::io::Error::from_raw_os_error(e.errno),
        })
    }
}

/// A read or write of whole blocks inside the pool, block by block: its length, or -errno.
fn transfer(pool: &Pool, io: &IoUnit) -> i64 {
    let (bs, off, len) = (pool.bsize(), io.offset, u64::from(io.buf().len()));
    let einval = -(libc::EINVAL as i64);
    if bs == 0 || off % bs != 0 || len % bs != 0 || (off + len) / bs > pool.nblock() {
        return einval;
    }
    let Ok(step) = u32::try_from(bs) else {
        return einval;
    };
    for i in 0..(len / bs) as u32 {
        let Some(block) = io.buf().sub(i * step, step) else {
            return einval;
        };
        let n = off / bs + u64::from(i);
        let r = match io.op {
            IoOp::Read => pool.read(block, n),
            _ => pool.write(block, n),
        };
        if let Err(errno) = r {
            return -(errno as i64);
        }
    }
    len as i64
}

impl IoEngine for PmemblkEngine {
    fn name(&self) -> &'static str {
        "pmemblk"
    }

    /// fio's FIO_SYNCIO | FIO_DISKLESSIO | FIO_NODISKUTIL: done inside `queue`; the runner
    /// neither lays out its files (the pool prepares them) nor watches disks for it.
    fn flags(&self) -> EngineFlags {
        EngineFlags {
            sync: true,
            no_io: true,
            ..EngineFlags::default()
        }
    }

    fn add_file(&mut self, file: &EngineFile) -> Result<(), EngineError> {
        let pool = if file.fd < 0 {
            None
        } else {
            Some(Self::pool_of(file)?)
        };
        self.files.push(Target::of(file));
        self.pools.push(pool);
        Ok(())
    }

    fn close_file(&mut self, index: u32) -> Result<(), EngineError> {
        target("pmemblk", &self.files, index)?;
        self.pools[index as usize] = None;
        Ok(())
    }

    fn reopen_file(&mut self, index: u32, file: &EngineFile) -> Result<(), EngineError> {
        target("pmemblk", &self.files, index)?;
        self.pools[index as usize] = Some(Self::pool_of(file)?);
        Ok(())
    }

    fn queue(&mut self, _id: u32, io: &IoUnit) -> Result<Queued, EngineError> {
        target("pmemblk", &self.files, io.file)?;
        let r = match (io.op, &self.pools[io.file as usize]) {
            (IoOp::Fsync | IoOp::Fdatasync | IoOp::SyncRange(_), _) => 0,
            (IoOp::Read | IoOp::Write, Some(pool)) => transfer(pool, io),
            (IoOp::Read | IoOp::Write, None) => -(libc::EBADF as i64),
            (IoOp::Trim, _) => -(libc::EINVAL as i64),
        };
        Ok(Queued::Done(r))
    }
}
