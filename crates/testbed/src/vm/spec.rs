//! A guest's description: `--vm=KEY=VALUE,...` on a fio command line, or an experiment's
//! `vm = { ... }` table turned into the same text. Every key is checked when parsed (an
//! unknown key gets the list of known ones, a bad value its key and the values it takes), so
//! nothing is made for a description QEMU would refuse later.

use crate::error::{Result, TestbedError};
use std::path::PathBuf;

/// QEMU's own submission of the virtio disk's requests to the host (`-drive aio=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aio {
    /// A pool of threads doing blocking preadv/pwritev (QEMU's default).
    Threads,
    /// Linux native AIO (io_submit); QEMU needs cache.direct=on for it.
    Native,
    /// io_uring.
    IoUring,
}

impl Aio {
    pub fn name(self) -> &'static str {
        match self {
            Aio::Threads => "threads",
            Aio::Native => "native",
            Aio::IoUring => "io_uring",
        }
    }
}

/// Which accelerator runs the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    /// KVM when a guest reaches its init under it within `probe_s`, else TCG.
    Auto,
    Kvm,
    Tcg,
}

/// A guest's description.
#[derive(Debug, Clone, PartialEq)]
pub struct VmSpec {
    /// A kernel release (its image in /boot/vmlinuz-RELEASE, modules in /lib/modules), the
    /// path of a kernel image (bzImage), or `installed:a` / `installed:b` (a kernel A/B of
    /// what /boot holds: see `initramfs::resolve`); None: the running kernel's release when
    /// /boot has it, else the newest of its flavour, else the newest generic one.
    pub kernel: Option<String>,
    pub aio: Aio,
    /// QEMU's cache mode of the disk: none, writeback, writethrough, directsync, unsafe.
    pub cache: String,
    /// Guest memory in bytes.
    pub memory: u64,
    pub cpus: u32,
    /// virtio-blk queues (num-queues); None: QEMU's default (one per vCPU).
    pub queues: Option<u32>,
    /// The disk's requests handled in an iothread of their own.
    pub iothread: bool,
    /// The guest's I/O scheduler for the disk (none, mq-deadline, bfq, kyber); None: the
    /// guest kernel's default.
    pub sched: Option<String>,
    /// A block device as the guest's disk (`disk=/dev/loop0`) instead of a fresh backing
    /// file; fiox checks it as it checks a job's device before the guest starts (mounted,
    /// holding a filesystem: refused unless allowed).
    pub disk: Option<PathBuf>,
    /// Seed 001's stack inside the guest: ext4 on the disk, a file there of `loop_size` bytes
    /// under a loop device with direct I/O off (`buffered`) or on (`direct`), ext4 on that,
    /// mounted where the job runs ([`VmSpec::guest_target`]). None: the job gets the disk.
    pub guest_loop: Option<bool>,
    pub loop_size: u64,
    /// Size of the disk's backing file (not used with `disk`).
    pub disk_size: u64,
    /// Where the backing file goes (a directory; /dev/shm as seed 002).
    pub disk_dir: PathBuf,
    pub accel: Accel,
    /// Seconds a KVM guest has to reach its init before TCG is used instead.
    pub probe_s: u64,
    /// Seconds a guest has to reach its init at all (TCG is slow: ~40 s here).
    pub boot_s: u64,
    /// Appended to the guest kernel's command line (`console=ttyS0 panic=-1 quiet`): a later
    /// parameter of the same name wins, so `panic=1` or `nokaslr` reach the guest.
    pub kernel_cmdline: Option<String>,
    /// Boots tried again when a guest does not reach its init (each reason recorded in the
    /// result): an early-boot panic under TCG is sometimes a matter of timing.
    pub boot_retries: u32,
}

/// The keys [`VmSpec::parse`] knows.
pub const VM_KEYS: &str = "kernel, aio (threads|native|io_uring), cache (none|writeback|\
                           writethrough|directsync|unsafe), memory, cpus, queues, iothread \
                           (on|off), sched (none|mq-deadline|bfq|kyber), disk (a block device), \
                           guest_loop (buffered|direct), loop_size, \
                           disk_size, disk_dir, \
                           accel (auto|kvm|tcg), probe_s, boot_s, kernel_cmdline \
                           (appended to the guest kernel's, no commas), boot_retries (0-5)";

impl Default for VmSpec {
    fn default() -> VmSpec {
        VmSpec {
            kernel: None,
            aio: Aio::Threads,
            cache: "none".into(),
            memory: 1 << 30,
            cpus: 2,
            queues: None,
            iothread: false,
            sched: None,
            disk: None,
            guest_loop: None,
            loop_size: 1 << 30,
            disk_size: 2 << 30,
            disk_dir: PathBuf::from("/dev/shm"),
            accel: Accel::Auto,
            probe_s: 20,
            boot_s: 300,
            kernel_cmdline: None,
            boot_retries: 0,
        }
    }
}

fn bad(key: &str, v: &str, want: &str) -> TestbedError {
    TestbedError::Invalid(format!("vm {key}={v:?}: expected {want}"))
}

fn count(key: &str, v: &str, max: u64) -> Result<u64> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| bad(key, v, &format!("a whole number from 1 to {max}")))
}

impl VmSpec {
    /// Parse `KEY=VALUE,KEY=VALUE` (see [`VM_KEYS`]); an empty text is the defaults.
    pub fn parse(text: &str) -> Result<VmSpec> {
        let mut s = VmSpec::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| {
                TestbedError::Invalid(format!("vm {item:?}: expected KEY=VALUE ({VM_KEYS})"))
            })?;
            s.set(k.trim(), v.trim())?;
        }
        if s.aio == Aio::Native && !matches!(s.cache.as_str(), "none" | "directsync") {
            return Err(TestbedError::Invalid(format!(
                "vm aio=native with cache={}: QEMU's native AIO needs O_DIRECT on the backing \
                 file; use cache=none or cache=directsync",
                s.cache
            )));
        }
        if s.guest_loop.is_some() && s.disk.is_none() && s.loop_size + (64 << 20) > s.disk_size {
            return Err(TestbedError::Invalid(format!(
                "vm loop_size={} does not fit on the disk (disk_size={}): leave 64m for the \
                 disk's own ext4",
                s.loop_size, s.disk_size
            )));
        }
        Ok(s)
    }

    /// Where the job's I/O goes in the guest: the disk itself (`filename=/dev/vda`), or with
    /// `guest_loop` the directory the loop device's ext4 is mounted on (`directory=...`).
    pub fn guest_target(&self) -> (&'static str, &'static str) {
        if self.guest_loop.is_some() {
            ("directory", super::GUEST_LOOP_DIR)
        } else {
            ("filename", super::GUEST_DISK)
        }
    }

    fn set(&mut self, k: &str, v: &str) -> Result<()> {
        let size =
            |v: &str| crate::managed::parse_size(v).ok_or_else(|| bad(k, v, "a size like 1g"));
        match k {
            "kernel" if !v.is_empty() => self.kernel = Some(v.into()),
            "aio" => {
                self.aio = match v {
                    "threads" => Aio::Threads,
                    "native" => Aio::Native,
                    "io_uring" => Aio::IoUring,
                    _ => return Err(bad(k, v, "threads, native or io_uring")),
                }
            }
            "cache" => {
                let ok = ["none", "writeback", "writethrough", "directsync", "unsafe"];
                if !ok.contains(&v) {
                    return Err(bad(k, v, &ok.join(", ")));
                }
                self.cache = v.into();
            }
            "memory" => {
                self.memory = size(v)?;
                if self.memory < 128 << 20 {
                    return Err(bad(k, v, "at least 128m (the guest runs fiox)"));
                }
            }
            "cpus" => self.cpus = count(k, v, 64)? as u32,
            "queues" => self.queues = Some(count(k, v, 64)? as u32),
            "iothread" => {
                self.iothread = match v {
                    "on" | "true" => true,
                    "off" | "false" => false,
                    _ => return Err(bad(k, v, "on or off")),
                }
            }
            "sched" => {
                let ok = ["none", "mq-deadline", "bfq", "kyber"];
                if !ok.contains(&v) {
                    return Err(bad(k, v, &ok.join(", ")));
                }
                self.sched = Some(v.into());
            }
            "disk_size" => {
                self.disk_size = size(v)?;
                if self.disk_size < 1 << 20 {
                    return Err(bad(k, v, "at least 1m"));
                }
            }
            "guest_loop" => {
                self.guest_loop = match v {
                    "buffered" => Some(false),
                    "direct" => Some(true),
                    _ => return Err(bad(k, v, "buffered or direct")),
                }
            }
            "loop_size" => {
                self.loop_size = size(v)?;
                if self.loop_size < 64 << 20 {
                    return Err(bad(k, v, "at least 64m (ext4 with room for a job)"));
                }
            }
            "disk" if v.starts_with('/') => self.disk = Some(PathBuf::from(v)),
            "disk" => return Err(bad(k, v, "the absolute path of a block device")),
            "disk_dir" if v.starts_with('/') => self.disk_dir = PathBuf::from(v),
            "disk_dir" => return Err(bad(k, v, "an absolute directory path")),
            "accel" => {
                self.accel = match v {
                    "auto" => Accel::Auto,
                    "kvm" => Accel::Kvm,
                    "tcg" => Accel::Tcg,
                    _ => return Err(bad(k, v, "auto, kvm or tcg")),
                }
            }
            "probe_s" => self.probe_s = count(k, v, 3600)?,
            "boot_s" => self.boot_s = count(k, v, 3600)?,
            "kernel_cmdline" => {
                let ok = !v.is_empty() && v.len() <= 1024 && !v.chars().any(char::is_control);
                if !ok {
                    return Err(bad(
                        k,
                        v,
                        "kernel parameters on one line, at most 1024 bytes",
                    ));
                }
                self.kernel_cmdline = Some(v.into());
            }
            "boot_retries" => {
                self.boot_retries = match v.parse::<u32>() {
                    Ok(n) if n <= 5 => n,
                    _ => return Err(bad(k, v, "a whole number from 0 to 5")),
                }
            }
            _ => {
                return Err(TestbedError::Invalid(format!(
                    "vm key {k:?} is not known; the keys: {VM_KEYS}"
                )))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_bad_values_name_their_key() {
        let s = VmSpec::parse("kernel=6.1.0-56-amd64, aio=io_uring,cache=none,memory=2g,cpus=4,queues=2,iothread=on,sched=mq-deadline,accel=tcg").unwrap();
        assert_eq!(s.kernel.as_deref(), Some("6.1.0-56-amd64"));
        assert_eq!(
            (s.aio, s.memory, s.cpus, s.queues),
            (Aio::IoUring, 2 << 30, 4, Some(2))
        );
        assert!(s.iothread && s.accel == Accel::Tcg);
        assert_eq!(VmSpec::parse("").unwrap(), VmSpec::default());
        let e = |t: &str| VmSpec::parse(t).unwrap_err().to_string();
        assert!(e("aio=posix").contains("threads, native or io_uring"));
        assert!(e("ram=1g").contains("not known"));
        assert!(e("memory=1m").contains("at least 128m"));
        assert!(e("cpus=0").contains("from 1 to 64"));
        assert!(e("aio=native,cache=writeback").contains("cache=none"));
        assert!(e("disk_dir=shm").contains("absolute"));
        assert!(e("disk=loop0").contains("block device"));
        assert!(e("guest_loop=on").contains("buffered or direct"));
        assert!(e("guest_loop=direct,loop_size=2g").contains("does not fit"));
        let l = VmSpec::parse("guest_loop=direct,loop_size=512m").unwrap();
        assert_eq!(l.guest_target(), ("directory", "/run/fiox-loop"));
        assert_eq!(VmSpec::default().guest_target(), ("filename", "/dev/vda"));
        assert_eq!(
            VmSpec::parse("disk=/dev/loop7").unwrap().disk,
            Some(PathBuf::from("/dev/loop7"))
        );
        assert!(e("kernel").contains("KEY=VALUE"));
        let c = VmSpec::parse("kernel_cmdline=panic=1 init=/nonexistent, boot_retries=2").unwrap();
        assert_eq!(
            c.kernel_cmdline.as_deref(),
            Some("panic=1 init=/nonexistent")
        );
        assert_eq!(c.boot_retries, 2);
        assert!(e("boot_retries=9").contains("from 0 to 5"));
        assert!(e("kernel_cmdline=").contains("one line"));
    }
}
