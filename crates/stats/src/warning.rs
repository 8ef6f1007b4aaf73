//! fiox's warnings: the one table of their codes ([`WarningCode`]), each with its stable code
//! string (what JSON readers and the text report see) and its fix where the fix is the same
//! every time, and the [`Warning`] a result carries. Every warning is built through this table
//! (`Warning::new(WarningCode::PageCache, ...)`), and every reader of a code compares
//! [`WarningCode`]s, so no code string is spelled anywhere else (`tests/repo.rs` checks it).

use std::fmt;

/// The table: `Variant = "code", fix: Some("constant fix")` (or `None` when the fix depends on
/// the case, then the site gives it with [`Warning::with_fix`]).
macro_rules! warning_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $code:literal, fix: $fix:expr;)*) => {
        /// What a warning is about; its [`code`](WarningCode::code) is the stable identifier
        /// printed as `fiox: warning [code]` and stored under `fiox.warnings[].code`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum WarningCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl WarningCode {
            /// Every code, in the table's order.
            pub const ALL: &'static [WarningCode] = &[$(WarningCode::$variant,)*];

            /// The stable code string, e.g. `buffered-libaio`.
            pub const fn code(self) -> &'static str {
                match self {
                    $(WarningCode::$variant => $code,)*
                }
            }

            /// The fix when it is the same for every warning of this code.
            pub const fn fix(self) -> Option<&'static str> {
                match self {
                    $(WarningCode::$variant => $fix,)*
                }
            }
        }
    };
}

warning_codes! {
    // Advice from the run's own evidence (`advice`).
    /// `ioengine=libaio` with `direct=0` and `iodepth>1`: buffered kernel AIO blocks in
    /// `io_submit`.
    BufferedLibaio = "buffered-libaio",
        fix: Some("use direct=1, or ioengine=io_uring or guasi");
    /// A queued engine whose submissions blocked instead of queueing.
    SyncSubmission = "sync-submission",
        fix: Some(
            "keep iodepth within the device queue (/sys/block/DEV/queue/nr_requests), use \
             direct=1 for kernel AIO, or ioengine=guasi with guasi_submit=offload for buffered I/O",
        );
    // The runner's warnings about the job.
    /// `iodepth>1` with a synchronous engine.
    IodepthSyncEngine = "iodepth-sync-engine",
        fix: Some("use ioengine=io_uring or libaio (with direct=1), or numjobs for parallelism");
    /// `runtime` shorter than `ramp_time`.
    RuntimeBelowRamp = "runtime-below-ramp",
        fix: Some("make runtime longer than ramp_time");
    /// `clocksource=cpu` where the TSC is not trusted.
    ClocksourceCpuFallback = "clocksource-cpu-fallback",
        fix: Some("use clocksource=clock_gettime to ask for that clock directly");
    /// A file's I/O region is smaller than a block.
    FileSmallerThanBs = "file-smaller-than-bs",
        fix: Some("increase size= or decrease bs=");
    /// Reads of a file on tmpfs/ramfs.
    MemoryBackedFile = "memory-backed-file",
        fix: Some("put the file on the storage you want to measure");
    /// Buffered reads served from the page cache (the fix depends on why).
    PageCache = "page-cache", fix: None;
    /// Dropping a file's cached pages failed.
    InvalidateFailed = "invalidate-failed",
        fix: Some("run as root for block devices, or use direct=1");
    /// The `fadvise_hint` access hint failed.
    FadviseFailed = "fadvise-failed",
        fix: Some("fadvise_hint=0 to run without the hint");
    /// `ioscheduler=` on a device without a scheduler.
    IoschedulerNotTunable = "ioscheduler-not-tunable",
        fix: Some("the device has no scheduler to switch (fio says the same)");
    /// `lockmem` capped to leave memory unpinned.
    LockmemLimited = "lockmem-limited",
        fix: Some("lockmem leaves 128 MiB of the machine unpinned, as fio does");
    /// `read_iolog` trims not replayed.
    ReplayTrims = "replay-trims",
        fix: Some("fio 3.33 does not replay trims from an I/O log either");
    /// `read_iolog` zero-byte blktrace events not replayed.
    ReplayZeroBytes = "replay-zero-bytes",
        fix: Some("fio 3.33 ignores zero-byte traces too");
    /// A note of the I/O log reader.
    ReplayLog = "replay-log",
        fix: Some("the I/Os read before it are replayed, as fio 3.33 does");
    /// Blocks that failed verification.
    VerifyFailed = "verify-failed",
        fix: Some(
            "the data read back is not what was written: check the device, cache settings \
             and other writers of the file",
        );
    /// More files than descriptors: `openfiles` capped (the fix names the limit needed).
    OpenfilesCapped = "openfiles-capped", fix: None;
    /// `gtod_cpu`'s time thread (the fix depends on what failed).
    GtodCpu = "gtod-cpu", fix: None;
    /// `--idle-prof` could not start.
    IdleProf = "idle-prof",
        fix: Some("run without --idle-prof, or with fewer other threads");
    /// Disk statistics unavailable.
    DiskStats = "disk-stats",
        fix: Some("check /sys/block; results of the jobs are not affected");
    /// `verify_state_save` could not write its state.
    VerifyStateNotSaved = "verify-state-not-saved",
        fix: Some(
            "a later verify_only=1 verify_state_load=1 run cannot use this run's \
             state; run in a directory where fiox may write its state file",
        );
    /// Writes off the verify log's grid, not read back.
    VerifyUnalignedWrites = "verify-unaligned-writes",
        fix: Some(
            "use block sizes, offset and blockalign that are multiples of one another \
             (or of 512 bytes)",
        );
    /// A note of the verifier.
    VerifyNote = "verify-note",
        fix: Some("see the verify options in the documentation");
    /// A verify option without effect in this job.
    VerifyOptionIgnored = "verify-option-ignored",
        fix: Some(
            "add verify_only=1 to check an earlier run's data, or remove \
             verify_state_load",
        );
    /// An engine completed I/O units that were not in flight.
    EngineBogusCompletions = "engine-bogus-completions",
        fix: Some("this is an engine bug: please report it with the job");
    /// The first direct I/O failed with EINVAL.
    DirectIoEinval = "direct-io-einval",
        fix: Some(
            "use a block size and offset that are multiples of the logical block size \
             (often 512 or 4096; iomem_align= for buffers), or try direct=0",
        );
    /// I/O errors tolerated by `continue_on_error`/`ignore_error`.
    IoErrorsTolerated = "io-errors-tolerated",
        fix: Some("the results exclude the failed I/Os; check the device and the error settings");
    // Machine limits (`fiox.env.limits`) and guests (`fiox.env.vm`).
    /// The run's cgroup peaked above its memory limit.
    MachineLimitExceeded = "machine-limit-exceeded",
        fix: Some(
            "check the memory controller of the cgroup hierarchy fiox used (fiox.env.limits.groups)",
        );
    /// The memory limit shaped nothing.
    MachineLimitNotReached = "machine-limit-not-reached",
        fix: Some("lower the machine memory or make the job's files larger than it");
    /// A loop device's backing file cached past the run's memory limit.
    MachineLimitEscaped = "machine-limit-escaped",
        fix: Some(
            "use cgroup v2 (the loop driver charges the issuing cgroup since Linux 5.12), a \
             guest with that memory (vm =), or the loop device with direct_io = on",
        );
    /// The guest ran under TCG emulation.
    VmTcg = "vm-tcg",
        fix: Some("re-measure on a machine where KVM runs a guest (accel=kvm)");
}

impl WarningCode {
    /// The code of a code string (`None` for a string that is no fiox warning code).
    pub fn from_code(code: &str) -> Option<WarningCode> {
        WarningCode::ALL.iter().copied().find(|c| c.code() == code)
    }
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for WarningCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for WarningCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        WarningCode::from_code(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown warning code {s}")))
    }
}

/// A warning attached to a result: what is wrong with the numbers and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Warning {
    /// Stable identifier, e.g. `buffered-libaio`, `page-cache`.
    pub code: WarningCode,
    pub message: String,
    pub fix: String,
}

impl Warning {
    /// A warning whose fix is its code's constant fix (the table's).
    pub fn new(code: WarningCode, message: impl Into<String>) -> Warning {
        debug_assert!(code.fix().is_some(), "{code} has no constant fix");
        Warning {
            code,
            message: message.into(),
            fix: code.fix().unwrap_or_default().to_string(),
        }
    }

    /// A warning whose fix depends on the case (codes whose table fix is `None`).
    pub fn with_fix(
        code: WarningCode,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Warning {
        Warning {
            code,
            message: message.into(),
            fix: fix.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_round_trip() {
        for (i, c) in WarningCode::ALL.iter().enumerate() {
            assert_eq!(WarningCode::from_code(c.code()), Some(*c));
            assert_eq!(c.to_string(), c.code());
            assert!(
                WarningCode::ALL[..i].iter().all(|o| o.code() != c.code()),
                "{c} twice"
            );
        }
        assert_eq!(WarningCode::from_code("no-such-warning"), None);
    }
}
