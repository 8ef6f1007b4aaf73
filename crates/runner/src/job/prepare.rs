//! A job's files before and after its I/O: planning and the safety checks (`--allow-destructive`
//! targets, block devices, read-only refusals), laying out missing files, the page cache
//! (`invalidate`, `pre_read`), opening them eagerly or through `openfiles`' gate, and at the end
//! the syncs (`end_fsync`, `fsync_on_close`) and unlinking.

use super::env::JobEnv;
use crate::error::RunError;
use crate::files::opengate::OpenGate;
use crate::files::{self, FileKind, FilePlan};
use crate::sys;
use fiox_engine::{IoEngine, OpenSpec};
use fiox_job::JobSpec;
use fiox_stats::{Warning, WarningCode};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

/// Plan, check, lay out and open the job's files.
/// Files opened for the run (kept open until the end of the job).
pub(crate) struct Opened {
    pub handles: Vec<Option<File>>,
    pub plan: FilePlan,
    /// Per file, the inode its setup open created or checked (None: not opened at setup), so
    /// a lazy reopen of the same inode is not checked again.
    checked: Vec<Option<crate::files::owned::Identity>>,
    /// Problems met while preparing files that do not stop the job (cache invalidation).
    pub(super) warnings: Vec<Warning>,
    /// Exclusive claims on the block devices the job writes, held until the job is done so
    /// nobody mounts them mid-run.
    _claims: Vec<crate::files::blockdev::BlockClaim>,
    /// A pmemblk job's pools, open until the job is done (the job's clones share them).
    pools: Vec<std::sync::Arc<fiox_engine::pmemblk::Pool>>,
}

pub(super) fn prepare_files(
    env: &JobEnv,
    diskless: bool,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<Opened, RunError> {
    let job = env.job;
    crate::dprint!(crate::debug::FILE, "setup files");
    if job.ioengine.is(fiox_job::Engine::Pmemblk) {
        return prepare_pools(env, leftovers);
    }
    let mut plan = files::plan(job, diskless)?;
    env.progress
        .files
        .store(plan.files.len() as u64, Ordering::Relaxed);
    if diskless {
        take_creds(job)?;
        let handles = plan.files.iter().map(|_| None).collect();
        return Ok(Opened {
            checked: vec![None; plan.files.len()],
            handles,
            plan,
            warnings: Vec::new(),
            _claims: Vec::new(),
            pools: Vec::new(),
        });
    }
    // The files' directories stay open from one file to the next until the files are ready.
    let _held = crate::files::safeopen::HeldDirs::enter();
    // The job's existing files were checked before the run's first group
    // (files::precheck); every open below checks its own descriptor again.
    let who = writer(env);
    crate::verify::vstate::check_targets(job, &plan)?;
    let mut claims = Vec::new();
    if files::job_writes(job) && !allow_all(env) {
        for f in plan.files.iter().filter(|f| f.kind == FileKind::Block) {
            if let Some(c) = crate::files::blockdev::check_block_write(&f.path, env.allowed)? {
                claims.push(c);
            }
        }
    }
    // Before the job opens (or lays out) the files it keeps: they go into its own table.
    crate::job::fdtable::enter(job, &claims);
    lay_out_all(env, &mut plan, leftovers)?;
    take_creds(job)?;
    let spec = OpenSpec::from_job(job);
    let mut handles = Vec::with_capacity(plan.files.len());
    let mut warnings = Vec::new();
    let mut checked = Vec::with_capacity(plan.files.len());
    // create_on_open: a missing file is created by its first open during the I/O phase.
    let lazy = files::lazy_open(job, plan.files.len(), diskless);
    let defer = job.files.create_on_open && lazy;
    let stop = || env.stop.load(Ordering::Relaxed);
    for f in &mut plan.files {
        if stop() {
            // Stopped: the job does no I/O, so the remaining files are not opened (they are
            // still listed, unopened, for the end of the job).
            handles.push(None);
            checked.push(None);
            continue;
        }
        if defer && !f.path.exists() {
            // Created at its first open (create_on_open): still removed on an aborted run,
            // by path, once it carries fiox's mark (see the cleanup in lib.rs).
            if job.files.unlink {
                crate::files::owned::leave(leftovers, &f.path);
            }
            handles.push(None);
            checked.push(None);
            continue;
        }
        let known = f.laid_out.as_ref();
        let o = crate::files::safeopen::open_job_file(&who, &f.path, &spec, f.offset, known)?;
        checked.push(Some(o.id));
        let h = o.file;
        if o.created {
            f.created = true;
            if job.files.unlink {
                crate::files::owned::leave(leftovers, &f.path);
            }
        }
        warnings.extend(prepare_cache(job, f, &h)?);
        // Files that open lazily are closed again at once (the gate reopens each when the
        // generator first uses it, checked against `checked`): holding all of them until the
        // gate takes over would need every descriptor `openfiles` exists to save.
        handles.push((!lazy).then_some(h));
    }
    Ok(Opened {
        handles,
        plan,
        checked,
        warnings,
        _claims: claims,
        pools: Vec::new(),
    })
}

/// A pmemblk job's files: its pools, opened or created ([`crate::files::pools`]).
fn prepare_pools(
    env: &JobEnv,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<Opened, RunError> {
    let job = env.job;
    // fio's note (once a run): the engine is always direct.
    static NOTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !job.direct && env.messages && !NOTED.swap(true, Ordering::Relaxed) {
        env.info
            .say("pmemblk: direct == 0, but pmemblk is always direct\n");
    }
    let p = crate::files::pools::prepare(job, &writer(env), leftovers)?;
    env.progress
        .files
        .store(p.plan.files.len() as u64, Ordering::Relaxed);
    take_creds(job)?;
    Ok(Opened {
        checked: vec![None; p.plan.files.len()],
        handles: p.handles,
        plan: p.plan,
        warnings: Vec::new(),
        _claims: Vec::new(),
        pools: p.pools,
    })
}

/// The user allowed writing over anything (`allow_mounted_write=1` or `--allow-destructive`).
pub(super) fn allow_all(env: &JobEnv) -> bool {
    env.job.files.allow_mounted_write || env.allow_destructive
}

/// Who writes the job's files, and what the user allowed: everything, or the objects
/// `--allow-destructive=PATH` named (matched on each open descriptor).
pub(super) fn writer<'a>(env: &'a JobEnv) -> crate::files::safeopen::Writer<'a> {
    crate::files::safeopen::Writer {
        job: &env.job.name,
        allow: allow_all(env),
        allowed: env.allowed,
    }
}

pub(super) fn lay_out_all(
    env: &JobEnv,
    plan: &mut FilePlan,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<(), RunError> {
    let job = env.job;
    // Jobs sharing a file must not lay it out concurrently: one does, the others find it
    // large enough once they get the lock.
    static LAYOUT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LAYOUT.lock().unwrap_or_else(|p| p.into_inner());
    for f in plan.files.iter_mut().filter(|f| f.needs_layout) {
        if let Ok(m) = std::fs::metadata(&f.path) {
            f.real_size = m.len();
            f.needs_layout =
                m.len() < f.offset + f.size || crate::files::owned::layout_incomplete(&f.path);
        }
    }
    let need: Vec<usize> = (0..plan.files.len())
        .filter(|&i| plan.files[i].needs_layout)
        .collect();
    if need.is_empty() {
        return Ok(());
    }
    if env.readonly {
        return Err(RunError::Refused(format!(
            "job '{}': {} must be laid out (created or extended), but --readonly was given",
            job.name,
            plan.files[need[0]].path.display()
        )));
    }
    for &i in &need {
        files::check_parent(&plan.files[i].path)?;
    }
    if env.messages {
        let total: u64 = need
            .iter()
            .map(|&i| plan.files[i].offset + plan.files[i].size)
            .sum();
        let n = need.len();
        env.info.say(&format!(
            "{}: Laying out IO file{} ({} file{} / {}{}MiB)\n",
            job.name,
            if n > 1 { "s" } else { "" },
            n,
            if n > 1 { "s" } else { "" },
            if n > 1 { "total " } else { "" },
            total >> 20
        ));
    }
    let stop = || env.stop.load(Ordering::Relaxed);
    for &i in &need {
        if stop() {
            // Ctrl-C or SIGTERM mid-layout: the rest is not laid out (the job does no I/O).
            break;
        }
        let f = &mut plan.files[i];
        // Registered before it exists, so a forced exit during the layout removes it too
        // (only once it carries fiox's mark: a file someone else made there is never touched).
        if job.files.unlink && !f.path.exists() {
            crate::files::owned::leave(leftovers, &f.path);
        }
        files::lay_out(job, f, &writer(env), &stop)?;
    }
    if job.files.fill_device {
        files::refresh_io_bytes(job, plan);
    }
    Ok(())
}

/// invalidate (drop cached pages), the access hint and pre_read (load them) before the job.
/// A failed invalidation is a warning (as in fio): the job runs, but may read cached data.
pub(super) fn prepare_cache(
    job: &JobSpec,
    f: &files::PlannedFile,
    h: &File,
) -> Result<Vec<Warning>, RunError> {
    let fd = h.as_raw_fd();
    let mut warnings = Vec::new();
    if matches!(f.kind, FileKind::Regular | FileKind::Block) {
        files::apply_write_hint(job, fd, &f.path)?;
    }
    // fio's order at every open: drop the cache (even for direct jobs), then the hint.
    if job.files.invalidate {
        if let Err(e) = crate::files::cache::drop_cached(f.kind, fd, f.offset, f.size) {
            warnings.push(Warning::new(
                WarningCode::InvalidateFailed,
                format!(
                    "dropping the cached pages of {} failed ({e}); reads may be served from \
                     the page cache",
                    f.path.display()
                ),
            ));
        }
    }
    if matches!(f.kind, FileKind::Regular | FileKind::Block) {
        if let Err(e) = files::advise_access(job, fd, f.offset, f.size) {
            warnings.push(Warning::new(
                WarningCode::FadviseFailed,
                format!(
                    "the fadvise_hint access hint for {} failed ({e}); the kernel's default \
                     readahead applies",
                    f.path.display()
                ),
            ));
        }
    }
    if job.files.pre_read {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; 1 << 20];
        let mut off = f.offset;
        let end = f.offset + f.size;
        // A buffered handle: pre_read fills the page cache even for direct jobs (as fio).
        let rh = File::open(&f.path).map_err(|e| RunError::io("open for pre_read", &f.path, e))?;
        while off < end {
            let n = ((end - off) as usize).min(buf.len());
            let got = rh
                .read_at(&mut buf[..n], off)
                .map_err(|e| RunError::io("pre_read", &f.path, e))?;
            if got == 0 {
                break;
            }
            off += got as u64;
        }
    }
    Ok(warnings)
}

/// `openfiles` below nrfiles: close the files opened at setup (the engine forgets them) and
/// hand them to a gate that reopens each when the generator first uses it.
pub(super) fn lazy_open_gate(
    env: &JobEnv,
    opened: &mut Opened,
    engine: &mut dyn IoEngine,
    diskless: bool,
) -> Result<Option<OpenGate>, RunError> {
    let (job, allow) = (env.job, allow_all(env));
    if !files::lazy_open(job, opened.plan.files.len(), diskless) {
        return Ok(None);
    }
    let mut list = Vec::with_capacity(opened.plan.files.len());
    for (i, f) in opened.plan.files.iter().enumerate() {
        if opened.handles[i].is_some() {
            engine.close_file(i as u32)?;
        }
        opened.handles[i] = None;
        list.push(crate::files::opengate::GateEntry {
            path: f.path.clone(),
            size: f.real_size.max(f.offset + f.size),
            offset: f.offset,
            checked: opened.checked[i],
        });
    }
    let spec = fiox_engine::OpenSpec::from_job(job);
    let gate = OpenGate::new(
        list,
        spec,
        files::job_writes(job),
        &job.name,
        (allow, env.allowed),
    );
    Ok(Some(
        gate.fsync_on_close(job.fsync_on_close)
            .advise(files::access_advice(job))
            .write_hint(job.files.write_hint, job.direct)
            .invalidate(job.files.invalidate),
    ))
}

/// end_fsync, fsync_on_close, close, unlink (see [`crate::files::owned::finish_files`]).
pub(super) fn finish_files(
    job: &JobSpec,
    opened: &mut Opened,
    diskless: bool,
    leftovers: &mut Vec<std::path::PathBuf>,
) -> Result<(), RunError> {
    // A pmemblk job's pool files are files all the same: unlink=1 removes them (if fiox's).
    if diskless && opened.pools.is_empty() {
        return Ok(());
    }
    if crate::debug::on(crate::debug::FILE) {
        for (f, h) in opened.plan.files.iter().zip(&opened.handles) {
            if h.is_some() {
                crate::dprint!(crate::debug::FILE, "fd close {}", f.path.display());
            }
        }
    }
    crate::files::owned::finish_files(job, &mut opened.handles, &opened.plan, leftovers)
}

/// Debug builds only, on request (`FIOX_DEBUG_OPENFILES=1`): print how many files the job had
/// open at most and how many opens it did, so tests can check `openfiles` without timing.
pub(super) fn debug_open_counts(job: &JobSpec, g: &OpenGate) {
    if cfg!(debug_assertions) && std::env::var_os("FIOX_DEBUG_OPENFILES").is_some() {
        fiox_guard::eprintln!(
            "fiox-debug: job {}: files open at most {}, opens {}",
            job.name,
            g.max_open,
            g.opens
        );
    }
}

/// uid/gid: the job's thread becomes that user once its files are laid out and before it
/// opens them, as in fio (whose parent process lays the files out, create_serialize being
/// on by default, before the job's process calls setgid/setuid and opens them).
pub(super) fn take_creds(job: &JobSpec) -> Result<(), RunError> {
    sys::set_thread_creds(job.cpu.uid, job.cpu.gid).map_err(|(what, e)| RunError::Target {
        msg: format!("job '{}': {what}: {e}", job.name),
        errno: e.raw_os_error().unwrap_or(libc::EPERM),
    })
}
