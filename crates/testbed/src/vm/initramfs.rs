//! The guest's kernel and its first userspace: which kernel image boots (a release in /boot,
//! or a developer's bzImage, whose release is read from its setup header), and the initramfs
//! fiox writes for it as a newc cpio archive: busybox with its libraries, the virtio and 9p
//! modules of that release (Debian builds them as modules), and an `init` that loads them,
//! mounts the host's root filesystem read-only over 9p and switches to it, running the
//! guest script fiox wrote (see the vm module). Nothing here writes a file: the archive is
//! bytes the caller stores through fiox-guard.

use crate::error::{Result, TestbedError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The modules the initramfs loads, in dependency order (virtio_ring first). Missing ones
/// (built into the kernel) are skipped.
pub const MODULES: [&str; 10] = [
    "virtio_ring",
    "virtio",
    "virtio_pci_legacy_dev",
    "virtio_pci_modern_dev",
    "virtio_pci",
    "netfs",
    "fscache",
    "9pnet",
    "9pnet_virtio",
    "9p",
];

/// The kernel a guest boots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub image: PathBuf,
    /// Its release (uname -r), which names its modules' directory.
    pub release: String,
}

/// Numbers and words of a release, so 6.1.0-56 sorts after 6.1.0-9.
fn version_key(r: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut num = String::new();
    let mut word = String::new();
    for c in r.chars().chain(std::iter::once('.')) {
        if c.is_ascii_digit() {
            num.push(c);
        } else {
            if !num.is_empty() {
                out.push((num.parse().unwrap_or(u64::MAX), std::mem::take(&mut word)));
                num.clear();
            }
            word.push(c);
        }
    }
    out
}

/// The flavour of a release: what follows its version numbers ("6.1.0-57-rt-amd64" ->
/// "rt-amd64", "6.1.0-57-amd64" -> "amd64"), empty for a bare version.
fn flavour(release: &str) -> &str {
    let mut at = 0;
    for part in release.split('-') {
        if part.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return &release[at..];
        }
        at += part.len() + 1;
    }
    ""
}

/// Whether a flavour is a special build (real-time, cloud) rather than the distribution's
/// generic kernel: never chosen over a generic one unless the host runs it.
fn special(flavour: &str) -> bool {
    flavour
        .split('-')
        .any(|w| matches!(w, "rt" | "cloud" | "dbg" | "unsigned"))
}

/// The kernel a guest boots when none is asked (issue 45: "newest by string" ranked
/// `-rt-amd64` above `-amd64`, so installing an RT kernel silently changed every guest):
/// the host's own release when /boot has it; else the newest of the host's flavour; else the
/// newest generic one; else the newest.
fn default_release(running: &str, installed: &[String]) -> Option<String> {
    if installed.iter().any(|r| r == running) {
        return Some(running.to_string());
    }
    let newest = |pred: &dyn Fn(&str) -> bool| {
        installed
            .iter()
            .filter(|r| pred(r))
            .max_by_key(|r| version_key(r))
            .cloned()
    };
    let host = flavour(running);
    newest(&|r| !host.is_empty() && flavour(r) == host)
        .or_else(|| newest(&|r| !special(flavour(r))))
        .or_else(|| newest(&|_| true))
}

/// `kernel = "installed:a"` / `"installed:b"`: a kernel A/B made of what /boot holds. `a` is
/// the newest generic kernel; `b` the newest PREEMPT_RT build (a flavour pair: the same block
/// layer under another scheduler) when one is installed, else the generic release before
/// `a` (two releases). With one kernel, the error says what to install.
fn ab_pair(installed: &[String]) -> std::result::Result<(String, String), String> {
    let newest = |pred: &dyn Fn(&str) -> bool, not: Option<&str>| {
        installed
            .iter()
            .filter(|r| pred(r) && Some(r.as_str()) != not)
            .max_by_key(|r| version_key(r))
            .cloned()
    };
    let generic = |r: &str| !special(flavour(r));
    let rt = |r: &str| flavour(r).split('-').any(|w| w == "rt");
    let Some(a) = newest(&generic, None) else {
        return Err(format!(
            "no generic kernel in /boot (it has: {}): apt-get install linux-image-amd64",
            listed(installed)
        ));
    };
    let b = newest(&rt, None).or_else(|| newest(&generic, Some(&a)));
    match b {
        Some(b) => Ok((a, b)),
        None => Err(format!(
            "a kernel A/B needs two kernels and /boot has one ({a}): install a PREEMPT_RT \
             build (apt-get install linux-image-rt-amd64) for a flavour pair, or another \
             release's image (apt-get install linux-image-RELEASE) for two releases"
        )),
    }
}

fn listed(installed: &[String]) -> String {
    if installed.is_empty() {
        "none".into()
    } else {
        installed.join(", ")
    }
}

/// The releases of /boot/vmlinuz-* (empty when /boot cannot be read).
fn installed_releases() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir("/boot")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_prefix("vmlinuz-")
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_by_key(|r| version_key(r));
    out
}

/// The host's running release (uname -r).
fn running_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Resolve `kernel` (None: `default_release` of /boot's kernels; a path: that image; else a
/// release, which must be in /boot).
pub fn resolve(kernel: Option<&str>) -> Result<Kernel> {
    let missing = |what: String| {
        let have = installed_releases();
        let listed = if have.is_empty() {
            "/boot has no kernel".to_string()
        } else {
            format!("/boot has {}", have.join(", "))
        };
        TestbedError::Unsupported(format!(
            "vm kernel: {what} ({listed}); name one of those, install one (apt-get install \
             linux-image-amd64), or give kernel=PATH-TO-bzImage"
        ))
    };
    match kernel {
        Some(which @ ("installed:a" | "installed:b")) => {
            let (a, b) = ab_pair(&installed_releases())
                .map_err(|e| TestbedError::Unsupported(format!("vm kernel={which}: {e}")))?;
            resolve(Some(if which.ends_with('a') { &a } else { &b }))
        }
        Some(k) if k.contains('/') => {
            let image = PathBuf::from(k);
            let release = image_release(&image)?;
            Ok(Kernel { image, release })
        }
        Some(k) => {
            let image = PathBuf::from(format!("/boot/vmlinuz-{k}"));
            if !image.is_file() {
                return Err(missing(format!("no {}", image.display())));
            }
            Ok(Kernel {
                image,
                release: k.into(),
            })
        }
        None => {
            let chosen = default_release(&running_release(), &installed_releases())
                .ok_or_else(|| missing("no /boot/vmlinuz-*".into()))?;
            resolve(Some(&chosen))
        }
    }
}

/// The release a bzImage names in its setup header (the string at the header's
/// kernel_version offset + 0x200: "6.1.0-56-amd64 (debian-kernel@...) #1 ...").
fn image_release(image: &Path) -> Result<String> {
    let bytes = std::fs::read(image).map_err(|e| TestbedError::io("read", image, e))?;
    let not = || {
        TestbedError::Invalid(format!(
            "vm kernel={}: not a bzImage (no kernel version in its setup header)",
            image.display()
        ))
    };
    if bytes.get(0x202..0x206) != Some(b"HdrS") {
        return Err(not());
    }
    let off = u16::from_le_bytes([bytes[0x20e], bytes[0x20f]]) as usize + 0x200;
    let text = bytes.get(off..off.saturating_add(256)).ok_or_else(not)?;
    let end = text.iter().position(|&b| b == 0 || b == b' ').unwrap_or(0);
    let r = std::str::from_utf8(&text[..end]).map_err(|_| not())?;
    if r.is_empty() {
        return Err(not());
    }
    Ok(r.to_string())
}

/// The file of module `name` for `release` (modinfo); None when it is built in or absent.
fn module_file(release: &str, name: &str) -> Option<PathBuf> {
    let out = Command::new("modinfo")
        .args(["-k", release, "-n", name])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && p.starts_with('/')).then(|| PathBuf::from(p))
}

/// The busybox binary and the libraries it loads (ldd; none for a static one).
fn busybox() -> Result<(PathBuf, Vec<PathBuf>)> {
    let bb = ["/usr/bin/busybox", "/bin/busybox"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            TestbedError::Unsupported(
                "vm: no busybox for the guest's initramfs (apt-get install busybox)".into(),
            )
        })?;
    let libs = Command::new("ldd")
        .arg(&bb)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .filter(|w| w.starts_with('/'))
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    Ok((bb, libs))
}

/// The guest's `init`: load the modules, mount the host's root read-only over 9p, a tmpfs on
/// /run (the guest's only writable place besides the output share), and switch to it, where
/// `/bin/sh SCRIPT` runs.
fn init_script(modules: &[&str], script: &Path) -> String {
    format!(
        "#!/bin/busybox sh\n\
         /bin/busybox --install -s /bin\n\
         mkdir -p /proc /dev /newroot\n\
         mount -t proc proc /proc; mount -t devtmpfs dev /dev\n\
         for m in {mods}; do insmod /m/$m.ko 2>/dev/null; done\n\
         mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /newroot \
         || {{ echo 'fiox-vm: no host root over 9p'; poweroff -f; }}\n\
         mount -t tmpfs run /newroot/run\n\
         mount --move /proc /newroot/proc; mount --move /dev /newroot/dev\n\
         exec switch_root /newroot /bin/sh {script}\n",
        mods = modules.join(" "),
        script = script.display()
    )
}

/// The initramfs for `kernel` whose init runs `/bin/sh script` on the host's root.
pub fn build(kernel: &Kernel, script: &Path) -> Result<Vec<u8>> {
    let (bb, libs) = busybox()?;
    let mut a = Archive::default();
    a.file("bin/busybox", read(&bb)?, 0o755);
    for l in &libs {
        let rel = l.to_string_lossy().trim_start_matches('/').to_string();
        a.file(&rel, read(l)?, 0o755);
    }
    let mut loaded = Vec::new();
    for m in MODULES {
        if let Some(f) = module_file(&kernel.release, m) {
            a.file(&format!("m/{m}.ko"), read(&f)?, 0o644);
            loaded.push(m);
        }
    }
    for d in ["proc", "dev", "newroot"] {
        a.dir(d);
    }
    a.file("init", init_script(&loaded, script).into_bytes(), 0o755);
    Ok(a.finish())
}

fn read(p: &Path) -> Result<Vec<u8>> {
    std::fs::read(p).map_err(|e| TestbedError::io("read", p, e))
}

/// A newc ("070701") cpio archive, parents before children (a BTreeMap orders "lib" before
/// "lib/x"), as the kernel's initramfs unpacker needs.
#[derive(Default)]
struct Archive {
    entries: BTreeMap<String, (u32, Vec<u8>)>,
}

impl Archive {
    fn dir(&mut self, path: &str) {
        self.entries
            .entry(path.to_string())
            .or_insert((0o040755, Vec::new()));
    }

    fn file(&mut self, path: &str, data: Vec<u8>, mode: u32) {
        let mut parent = String::new();
        for c in path
            .split('/')
            .collect::<Vec<_>>()
            .iter()
            .rev()
            .skip(1)
            .rev()
        {
            if !parent.is_empty() {
                parent.push('/');
            }
            parent.push_str(c);
            self.dir(&parent.clone());
        }
        self.entries
            .insert(path.to_string(), (0o100000 | mode, data));
    }

    fn finish(self) -> Vec<u8> {
        let mut out = Vec::new();
        for (ino, (name, (mode, data))) in self.entries.iter().enumerate() {
            header(&mut out, ino as u32 + 1, *mode, name, data);
        }
        header(&mut out, 0, 0, "TRAILER!!!", &[]);
        out
    }
}

fn pad4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

fn header(out: &mut Vec<u8>, ino: u32, mode: u32, name: &str, data: &[u8]) {
    let nlink = if mode & 0o040000 != 0 { 2 } else { 1 };
    let fields = [
        ino,
        mode,
        0,
        0,
        nlink,
        0,
        data.len() as u32,
        0,
        0,
        0,
        0,
        name.len() as u32 + 1,
        0,
    ];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08x}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad4(out);
    out.extend_from_slice(data);
    pad4(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 45: an installed -rt (or -cloud) kernel never becomes the guests' default.
    #[test]
    fn the_default_kernel_is_the_hosts_or_its_flavours_newest() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(flavour("6.1.0-57-rt-amd64"), "rt-amd64");
        assert_eq!(flavour("6.1.0-57-amd64"), "amd64");
        assert_eq!(flavour("6.18.0"), "");
        let boot = v(&["6.1.0-56-amd64", "6.1.0-57-amd64", "6.1.0-57-rt-amd64"]);
        // The host's own release, when /boot has it.
        assert_eq!(
            default_release("6.1.0-56-amd64", &boot).as_deref(),
            Some("6.1.0-56-amd64")
        );
        // Else the newest of the host's flavour, never the -rt one.
        assert_eq!(
            default_release("6.1.0-99-amd64", &boot).as_deref(),
            Some("6.1.0-57-amd64")
        );
        // A host on a custom kernel (no flavour): the newest generic one.
        assert_eq!(
            default_release("6.18.0", &boot).as_deref(),
            Some("6.1.0-57-amd64")
        );
        // A host running the RT kernel keeps it.
        assert_eq!(
            default_release("6.1.0-57-rt-amd64", &boot).as_deref(),
            Some("6.1.0-57-rt-amd64")
        );
        // Only special kernels: the newest of them.
        let rt = v(&["6.1.0-57-rt-amd64", "6.1.0-58-cloud-amd64"]);
        assert_eq!(
            default_release("6.18.0", &rt).as_deref(),
            Some("6.1.0-58-cloud-amd64")
        );
        assert_eq!(default_release("6.18.0", &[]), None);
    }

    /// A pinned kernel that is missing names what /boot has instead.
    #[test]
    fn an_ab_pair_is_a_flavour_pair_or_two_releases_or_says_what_to_install() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let pair = |xs: &[&str]| ab_pair(&v(xs));
        let ok = |a: &str, b: &str| Ok((a.to_string(), b.to_string()));
        assert_eq!(
            pair(&["6.1.0-57-amd64", "6.1.0-57-rt-amd64"]),
            ok("6.1.0-57-amd64", "6.1.0-57-rt-amd64")
        );
        assert_eq!(
            pair(&["6.1.0-9-amd64", "6.1.0-57-amd64", "6.1.0-56-amd64"]),
            ok("6.1.0-57-amd64", "6.1.0-56-amd64")
        );
        assert_eq!(
            pair(&[
                "6.1.0-56-amd64",
                "6.1.0-57-amd64",
                "6.1.0-56-rt-amd64",
                "6.1.0-57-cloud-amd64"
            ]),
            ok("6.1.0-57-amd64", "6.1.0-56-rt-amd64")
        );
        let one = pair(&["6.1.0-57-amd64"]).unwrap_err();
        assert!(
            one.contains("has one (6.1.0-57-amd64)") && one.contains("linux-image-rt-amd64"),
            "{one}"
        );
        let none = pair(&["6.1.0-57-rt-amd64"]).unwrap_err();
        assert!(none.contains("no generic kernel"), "{none}");
    }

    #[test]
    fn a_missing_pinned_kernel_lists_boot() {
        let e = resolve(Some("0.0.0-not-installed-amd64"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no /boot/vmlinuz-0.0.0-not-installed-amd64"),
            "{e}"
        );
        let have = installed_releases();
        match have.first() {
            Some(r) => assert!(e.contains(&format!("/boot has {r}")), "{e}"),
            None => assert!(e.contains("/boot has no kernel"), "{e}"),
        }
    }

    #[test]
    fn releases_sort_by_their_numbers() {
        let mut r = vec!["6.1.0-9-amd64", "6.1.0-56-amd64", "5.10.0-30-amd64"];
        r.sort_by_key(|x| version_key(x));
        assert_eq!(r, ["5.10.0-30-amd64", "6.1.0-9-amd64", "6.1.0-56-amd64"]);
    }

    #[test]
    fn the_archive_is_newc_with_parents_first_and_a_trailer() {
        let mut a = Archive::default();
        a.file("lib/x86_64/libc.so", b"abc".to_vec(), 0o755);
        let bytes = a.finish();
        let text = String::from_utf8_lossy(&bytes);
        let at = |s: &str| text.find(s).unwrap();
        assert!(at("lib\0") < at("lib/x86_64\0") && at("lib/x86_64\0") < at("libc.so\0"));
        assert!(text.ends_with("TRAILER!!!\0\0\0\0") || text.contains("TRAILER!!!"));
        assert!(bytes.len().is_multiple_of(4));
        assert!(bytes.starts_with(b"070701"));
        // The file's size field (7th) is 3.
        let file_hdr = at("lib/x86_64/libc.so\0") - 110;
        assert_eq!(
            &bytes[file_hdr + 6 + 6 * 8..file_hdr + 6 + 7 * 8],
            b"00000003"
        );
    }

    #[test]
    fn a_file_that_is_no_bzimage_is_refused() {
        let e = image_release(Path::new("/proc/self/exe"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a bzImage"), "{e}");
    }
}
