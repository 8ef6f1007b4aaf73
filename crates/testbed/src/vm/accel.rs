//! Which accelerator a guest would get on this machine, and why (`fiox env`): with the default
//! `accel = "auto"`, KVM is tried first where /dev/kvm opens read-write and answers
//! KVM_GET_API_VERSION, else TCG, whose numbers measure the emulator. Whether KVM then runs a
//! guest is known only by booting one: a /dev/kvm that answers but runs no standard guest (a
//! nested VM's) costs `probe_s` before the run falls back to TCG, and the run's `fiox.env.vm`
//! records which it got.

use super::spec::Accel;
use std::path::{Path, PathBuf};

/// The answer for one description of the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccelReport {
    /// The accelerators tried, in order ("kvm", "tcg").
    pub tries: Vec<&'static str>,
    /// Why, in words.
    pub why: String,
    /// The QEMU that would run it, if any is on PATH.
    pub qemu: Option<PathBuf>,
    /// With `accel = "auto"`, why KVM is passed over (the run's vm-tcg warning says it).
    pub kvm_refused: Option<String>,
}

/// What KVM says here: Ok(API version) when /dev/kvm opens read-write and answers, else why
/// not in words.
fn kvm_here() -> Result<i32, String> {
    let dev = Path::new("/dev/kvm");
    let f = fiox_guard::named::open(dev, libc::O_RDWR).map_err(|e| format!("/dev/kvm: {e}"))?;
    // _IO(KVMIO, 0x00): its argument must be 0 (the kernel answers EINVAL to anything else,
    // so it is passed, not left to whatever the register holds).
    const KVM_GET_API_VERSION: libc::c_ulong = 0xAE00;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    // SAFETY: an ioctl whose argument is a plain 0, on a descriptor this function holds open.
    let v = unsafe { libc::ioctl(fd, KVM_GET_API_VERSION, 0 as libc::c_ulong) };
    if v < 0 {
        return Err(format!(
            "/dev/kvm does not answer KVM_GET_API_VERSION ({})",
            std::io::Error::last_os_error()
        ));
    }
    Ok(v)
}

/// The accelerators a guest described with `accel` and `probe_s` would be given here.
pub fn would_use(accel: Accel, probe_s: u64) -> AccelReport {
    let qemu = super::find_program(super::QEMU);
    let kvm = kvm_here();
    let (tries, why) = match (accel, &kvm) {
        (Accel::Auto, Ok(v)) => (
            vec!["kvm", "tcg"],
            format!(
                "/dev/kvm answers (API {v}); TCG if a guest does not reach its init under KVM \
                 within probe_s ({probe_s} s)"
            ),
        ),
        (Accel::Auto, Err(no)) => (
            vec!["tcg"],
            format!("{no}: TCG, which measures the emulator"),
        ),
        (Accel::Kvm, Ok(v)) => (
            vec!["kvm"],
            format!("accel = \"kvm\"; /dev/kvm answers (API {v})"),
        ),
        (Accel::Kvm, Err(no)) => (
            vec!["kvm"],
            format!("accel = \"kvm\", but {no}: the run fails"),
        ),
        (Accel::Tcg, _) => (vec!["tcg"], "accel = \"tcg\"".to_string()),
    };
    let kvm_refused = match (accel, kvm) {
        (Accel::Auto, Err(no)) => Some(no),
        _ => None,
    };
    AccelReport {
        tries,
        why,
        qemu,
        kvm_refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer follows what /dev/kvm says here, and a pinned choice is kept.
    #[test]
    fn the_report_follows_dev_kvm_and_the_pinned_choice() {
        let auto = would_use(Accel::Auto, 20);
        match kvm_here() {
            Ok(_) => {
                assert_eq!(auto.tries, ["kvm", "tcg"]);
                assert!(auto.why.contains("probe_s (20 s)"), "{}", auto.why);
            }
            Err(no) => {
                assert_eq!(auto.tries, ["tcg"]);
                assert!(auto.why.starts_with(&no), "{}", auto.why);
            }
        }
        assert_eq!(would_use(Accel::Tcg, 20).tries, ["tcg"]);
        assert_eq!(would_use(Accel::Kvm, 20).tries, ["kvm"]);
    }
}
