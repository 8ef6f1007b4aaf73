//! The safety check before a job writes or trims a block device, and the exclusive claim that
//! keeps the device safe while the job runs. Refused (unless `allow_mounted_write=1` or
//! `--allow-destructive`): a device that is mounted, held by another device, or that carries
//! any signature libblkid knows, on itself or any partition the kernel lists (fiox-testbed's
//! `block_write_refusal`); a loop device over a regular file fiox did not create (the same
//! protection a file gets, see owned.rs); and a device someone else has open exclusively
//! (open with O_EXCL fails with EBUSY: mounted in another mount namespace, claimed by
//! dm/md/bcache, or being formatted). A device that passes stays claimed with O_EXCL for as
//! long as a job of this process writes it, so nobody can mount it mid-run; the job's own
//! I/O descriptors are opened without O_EXCL, which a claim does not block.

use crate::error::RunError;
use crate::files::owned;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

/// An exclusive (O_EXCL) open of a block device, shared by every job of this process that
/// writes it; released when the last one drops its claim.
#[derive(Debug, Clone)]
pub struct BlockClaim {
    _file: Arc<File>,
}

/// Claims that passed the checks, by device number: a second O_EXCL open from this same
/// process would fail with EBUSY, so jobs sharing a device share one claim. Only a claim whose
/// checks passed is recorded, and the lock is held from the lookup to the record, so a job
/// never joins a claim whose checks are still running or failed (two jobs of `numjobs=2` on a
/// device holding a filesystem: both are refused).
static CLAIMS: Mutex<Vec<(u64, Weak<File>)>> = Mutex::new(Vec::new());

/// Open `path` exclusively (read-only is enough: O_EXCL claims the device whatever the access
/// mode).
fn open_exclusive(path: &Path) -> std::io::Result<File> {
    fiox_guard::named::open(path, libc::O_RDONLY | libc::O_EXCL)
}

fn refusal(path: &Path, why: &str) -> RunError {
    RunError::Refused(format!(
        "refusing to write to block device {}: {why}; writing would destroy its data \
         (set allow_mounted_write=1 in the job or pass --allow-destructive to override, {})",
        path.display(),
        fiox_guard::scratch::HINT
    ))
}

/// Check block device `path` before a job writes or trims it; on success the returned claim
/// must be kept until the job's I/O is over. None: the device the path opens now is one the
/// user allowed by `--allow-destructive=PATH` (its device number, from the descriptor). The
/// caller skips this when the user allowed writing over anything.
pub fn check_block_write(
    path: &Path,
    allowed: &fiox_guard::Allowed,
) -> Result<Option<BlockClaim>, RunError> {
    let m = device_meta(path)?;
    if allowed.allows(&m).is_some() {
        return Ok(None);
    }
    check_claim(path, m.rdev()).map(Some)
}

/// Whether a job of this process holds a claim on device `rdev`: its checks passed.
pub fn claimed(rdev: u64) -> bool {
    let claims = CLAIMS.lock().unwrap_or_else(|p| p.into_inner());
    claims
        .iter()
        .any(|(d, w)| *d == rdev && w.strong_count() > 0)
}

/// The checks and the claim of [`check_block_write`] for the device `rdev` at `path`.
fn check_claim(path: &Path, rdev: u64) -> Result<BlockClaim, RunError> {
    let mut claims = CLAIMS.lock().unwrap_or_else(|p| p.into_inner());
    claims.retain(|(_, w)| w.strong_count() > 0);
    // Another job of this run checked and claimed it, and may be writing it already (its data
    // must not be mistaken for a signature): nothing to check again.
    if let Some(f) = claims
        .iter()
        .find(|(d, _)| *d == rdev)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(BlockClaim { _file: f });
    }
    // Claim first, so nothing can be mounted between the checks and the I/O.
    let claim = open_exclusive(path);
    // A device that cannot be claimed still gets the specific reason when one can be found
    // (mounted on ..., holds ...).
    check_in_use(path)?;
    let f = Arc::new(claim.map_err(|e| match e.raw_os_error() {
        Some(libc::EBUSY) => refusal(
            path,
            "it is in use: mounted (perhaps in another mount namespace) or held by another \
             device or program (opening it with O_EXCL failed with EBUSY)",
        ),
        _ => RunError::Refused(format!(
            "refusing to write to block device {}: cannot open it to claim it ({e})",
            path.display()
        )),
    })?);
    claims.push((rdev, Arc::downgrade(&f)));
    Ok(BlockClaim { _file: f })
}

/// The refusals of a block device in use (mounted, held, holding a signature, a loop device
/// over someone's file), without claiming it.
fn check_in_use(path: &Path) -> Result<(), RunError> {
    match fiox_testbed::probe::block_write_refusal(path) {
        Ok(None) => {}
        Ok(Some(why)) => return Err(refusal(path, &why)),
        Err(e) => {
            return Err(RunError::Refused(format!(
                "refusing to write to block device {}: cannot check whether it is in use ({e})",
                path.display()
            )))
        }
    }
    match loop_backing_owner(path) {
        Some(why) => Err(refusal(path, &why)),
        None => Ok(()),
    }
}

/// The check of [`check_block_write`] made before the run's first group (nothing claimed
/// yet: the job claims the device when it starts).
pub(crate) fn precheck(path: &Path, allowed: &fiox_guard::Allowed) -> Result<(), RunError> {
    if allowed.allows(&device_meta(path)?).is_none() {
        check_in_use(path)?;
    }
    Ok(())
}

/// fstat of the device `path` opens now (the descriptor's, not a second path lookup).
fn device_meta(path: &Path) -> Result<std::fs::Metadata, RunError> {
    fiox_guard::named::open(path, libc::O_RDONLY | libc::O_NONBLOCK)
        .and_then(|f| f.metadata())
        .map_err(|e| {
            RunError::Refused(format!(
                "refusing to write to block device {}: cannot check it ({e})",
                path.display()
            ))
        })
}

/// The check a job's block device gets, for a device a guest writes (`--vm=disk=DEV`: QEMU
/// writes it, fiox in the guest sees only /dev/vda): skipped when the user allowed writing
/// over anything or named this device (`--allow-destructive[=DEV]`); otherwise the same
/// refusals (mounted, held, holding a signature, a loop device over someone's file), and the
/// claim (O_EXCL: nobody mounts it meanwhile; QEMU's own open is not exclusive) is kept
/// until the guest is gone.
pub fn claim_for_guest(
    path: &Path,
    allow_destructive: bool,
    allow_targets: &[std::path::PathBuf],
) -> Result<Option<BlockClaim>, RunError> {
    if allow_destructive {
        return Ok(None);
    }
    let allowed = fiox_guard::Allowed::resolve(allow_targets)
        .map_err(|e| RunError::Refused(e.to_string()))?;
    check_block_write(path, &allowed)
}

/// A loop device (or a partition of one) over a regular file with data that fiox did not
/// create: writing the device writes that file, so it gets the file's protection.
fn loop_backing_owner(path: &Path) -> Option<String> {
    let backing = fiox_testbed::probe::loop_backing_file(path)?;
    let meta = std::fs::metadata(&backing).ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    let whose = owned::mark_of(&backing).why_not_ours()?;
    Some(format!(
        "it is a loop device over the regular file {}, which holds {} bytes of existing data, \
         and {whose}",
        backing.display(),
        meta.len()
    ))
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use fiox_testbed::{LoopDevice, LoopOptions, TempDir};

    fn excl_open(p: &Path) -> std::io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        File::options()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(p)
    }

    #[test]
    fn jobs_share_one_claim_that_ends_with_the_last() {
        if !crate::test_need::loop_devices() {
            return;
        }
        let d = TempDir::new("claim").unwrap();
        let img = d.path().join("img");
        let f = std::fs::File::create(&img).unwrap();
        f.set_len(1 << 20).unwrap();
        owned::mark(&f, &img, owned::Layout::Complete).unwrap();
        drop(f);
        let dev = LoopDevice::attach(&img, &LoopOptions::default()).unwrap();
        let first = check_block_write(dev.path(), &fiox_guard::Allowed::none())
            .unwrap()
            .unwrap();
        let second = check_block_write(dev.path(), &fiox_guard::Allowed::none())
            .expect("a second job joins the claim")
            .unwrap();
        let busy = excl_open(dev.path()).unwrap_err();
        assert_eq!(busy.raw_os_error(), Some(libc::EBUSY));
        drop(first);
        assert!(
            excl_open(dev.path()).is_err(),
            "still claimed by the second job"
        );
        drop(second);
        let held = excl_open(dev.path()).expect("released with the last job");
        let e = check_block_write(dev.path(), &fiox_guard::Allowed::none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("O_EXCL failed with EBUSY"), "{e}");
        drop(held);
    }
}
