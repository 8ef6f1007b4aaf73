//! On-disk signatures as util-linux's libblkid sees them: every filesystem, RAID member,
//! encrypted volume and partition table libblkid knows (exFAT, squashfs, EROFS, ISO9660,
//! minix, ZFS, bcache... far more than a hand-kept magic list), found with libblkid loaded at
//! run time (see `sys::libblkid`) or, when the library is absent, with `blkid -p -o export`.
//! An ambivalent result (libblkid sees more than one signature and will not pick one) is
//! reported as such: for a safety check it means "something is there" just as much.

use crate::error::{Result, TestbedError};
use crate::sys::{self, BlkidProbe};
use std::path::Path;
use std::process::Command;

/// Who found the signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// libblkid.so.1, called directly.
    Library,
    /// The `blkid -p` command (library not loadable).
    Command,
}

impl Source {
    /// How refusals name the prober.
    pub fn name(self) -> &'static str {
        match self {
            Source::Library => "libblkid",
            Source::Command => "blkid -p",
        }
    }
}

/// One signature libblkid recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// libblkid's TYPE ("ext4", "exfat", "crypto_LUKS", "swap") or PTTYPE ("dos", "gpt").
    pub kind: String,
    /// A partition table (PTTYPE) rather than a superblock (TYPE).
    pub table: bool,
    /// USAGE: "filesystem", "raid", "crypto" or "other".
    pub usage: Option<String>,
    pub label: Option<String>,
    /// Byte offset of the magic, when the prober reports it.
    pub offset: Option<u64>,
}

impl Found {
    /// "exfat filesystem at byte 3 labelled \"data\"", "dos partition table at byte 510".
    pub fn describe(&self) -> String {
        let what = match (self.table, self.usage.as_deref()) {
            (true, _) => "partition table",
            (false, Some("filesystem")) => "filesystem",
            (false, Some("raid")) => "RAID member",
            (false, Some("crypto")) => "encrypted volume",
            _ => "signature",
        };
        let mut s = format!("{} {what}", self.kind);
        if let Some(off) = self.offset {
            s.push_str(&format!(" at byte {off}"));
        }
        if let Some(l) = self.label.as_deref().filter(|l| !l.is_empty()) {
            s.push_str(&format!(" labelled {l:?}"));
        }
        s
    }
}

/// What a probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub source: Source,
    /// Every signature found (several when ambivalent; may be empty then with `blkid -p`).
    pub found: Vec<Found>,
    /// libblkid saw more than one signature and would not choose (safeprobe's -2).
    pub ambivalent: bool,
}

impl Report {
    /// Nothing at all was found.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty() && !self.ambivalent
    }

    /// "a signature found by libblkid: ext4 filesystem at byte 1080", or `None` when empty.
    pub fn describe(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let list: Vec<String> = self.found.iter().map(Found::describe).collect();
        let by = self.source.name();
        Some(match (self.ambivalent, list.len()) {
            (true, 0) => {
                format!("more than one signature ({by} reports an ambivalent result; see wipefs)")
            }
            (true, _) => format!(
                "signatures {by} finds ambivalent (more than one): {}",
                list.join("; ")
            ),
            (false, 1) => format!("a signature found by {by}: {}", list[0]),
            (false, _) => format!("signatures found by {by}: {}", list.join("; ")),
        })
    }
}

/// Probe `path` with libblkid, else with `blkid -p`; `Ok(None)` when neither is available.
pub fn probe(path: &Path) -> Result<Option<Report>> {
    if let Some(r) = probe_library(path) {
        return r.map(Some);
    }
    probe_command(path).transpose()
}

/// Probe with libblkid.so.1; `None` when the library cannot be loaded.
pub fn probe_library(path: &Path) -> Option<Result<Report>> {
    let lib = sys::libblkid()?;
    Some(library_report(lib, path))
}

fn library_report(lib: &'static sys::Libblkid, path: &Path) -> Result<Report> {
    // libblkid's lazy global setup (debug mask, config) is not guarded against concurrent
    // first calls; jobs checking devices at the same time take turns.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let err = |what: &'static str, e: std::io::Error| TestbedError::io(what, path, e);
    let flags = sys::BLKID_SUBLKS_TYPE
        | sys::BLKID_SUBLKS_USAGE
        | sys::BLKID_SUBLKS_LABEL
        | sys::BLKID_SUBLKS_MAGIC;
    let mut safe = BlkidProbe::open(lib, path).map_err(|e| err("open for libblkid", e))?;
    safe.configure(flags, Some(sys::BLKID_PARTS_MAGIC));
    let ambivalent = match safe.safeprobe() {
        -2 => true,
        r if r < 0 => return Err(err("probe with libblkid", std::io::Error::other("failed"))),
        _ => false,
    };
    // The safe probe names at most one signature; walking every probing function (what
    // wipefs does) lists them all, including those the safe probe finds ambivalent.
    let mut walk = BlkidProbe::open(lib, path).map_err(|e| err("open for libblkid", e))?;
    walk.configure(flags, Some(sys::BLKID_PARTS_MAGIC));
    let mut found: Vec<Found> = Vec::new();
    // Bounded: libblkid knows ~100 signature types; a loop that never ends is a bug there.
    for _ in 0..256 {
        match walk.probe_next() {
            0 => {
                for f in current(&walk) {
                    if !found.contains(&f) {
                        found.push(f);
                    }
                }
            }
            1 => break,
            _ => return Err(err("probe with libblkid", std::io::Error::other("failed"))),
        }
    }
    Ok(Report {
        source: Source::Library,
        found,
        ambivalent,
    })
}

/// The signatures a probe step left in its values: a superblock (TYPE) and/or a partition
/// table (PTTYPE; values of earlier chains stay, duplicates are dropped by the caller).
fn current(p: &BlkidProbe) -> Vec<Found> {
    let num = |k: &str| p.value(k).and_then(|v| v.trim().parse().ok());
    let mut v = Vec::new();
    if let Some(kind) = p.value("TYPE") {
        v.push(Found {
            kind,
            table: false,
            usage: p.value("USAGE"),
            label: p.value("LABEL"),
            offset: num("SBMAGIC_OFFSET"),
        });
    }
    if let Some(kind) = p.value("PTTYPE") {
        v.push(Found {
            kind,
            table: true,
            usage: None,
            label: None,
            offset: num("PTMAGIC_OFFSET"),
        });
    }
    v
}

/// Probe with `blkid -p -o export`; `None` when no blkid command is found.
pub fn probe_command(path: &Path) -> Option<Result<Report>> {
    // blkid exits 2 ("nothing found") also for a file it cannot open: make sure it can.
    if let Err(e) = std::fs::File::open(path) {
        return Some(Err(TestbedError::io("open for blkid -p", path, e)));
    }
    let out = ["blkid", "/usr/sbin/blkid", "/sbin/blkid"]
        .iter()
        .find_map(|cmd| {
            Command::new(cmd)
                .args(["-p", "-o", "export"])
                .arg(path)
                .output()
                .ok()
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    Some(match out.status.code() {
        Some(0) => Ok(Report {
            source: Source::Command,
            found: parse_export(&stdout),
            ambivalent: false,
        }),
        // blkid(8): 2 nothing found, 8 ambivalent low-level probing result.
        Some(2) => Ok(Report {
            source: Source::Command,
            found: Vec::new(),
            ambivalent: false,
        }),
        Some(8) => Ok(Report {
            source: Source::Command,
            found: parse_export(&stdout),
            ambivalent: true,
        }),
        _ => Err(TestbedError::io(
            "probe with blkid -p",
            path,
            std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        )),
    })
}

/// `blkid -o export` output: KEY=value lines (values with shell escapes, which only matter
/// for labels shown in messages).
pub fn parse_export(text: &str) -> Vec<Found> {
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
            .map(|v| v.replace('\\', ""))
    };
    let mut v = Vec::new();
    if let Some(kind) = get("TYPE") {
        v.push(Found {
            kind,
            table: false,
            usage: get("USAGE"),
            label: get("LABEL"),
            offset: None,
        });
    }
    if let Some(kind) = get("PTTYPE") {
        v.push(Found {
            kind,
            table: true,
            usage: None,
            label: None,
            offset: None,
        });
    }
    v
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use crate::temp::TempDir;

    /// A sparse file of `mib` MiB made into a filesystem by `cmd` (the image path is appended
    /// unless `args` holds "{}").
    fn image(dir: &TempDir, name: &str, mib: u64, cmd: &str, args: &[&str]) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::File::create(&p)
            .and_then(|f| f.set_len(mib << 20))
            .unwrap();
        let ps = p.to_str().unwrap();
        let mut a: Vec<&str> = args
            .iter()
            .map(|s| if *s == "{}" { ps } else { s })
            .collect();
        if !args.contains(&"{}") {
            a.push(ps);
        }
        let out = Command::new(cmd).args(&a).output().unwrap_or_else(|e| {
            panic!("{cmd}: {e} (the CI installs it: see .ci/run)");
        });
        assert!(out.status.success(), "{cmd}: {:?}", out);
        p
    }

    fn kinds(r: &Report) -> Vec<&str> {
        r.found.iter().map(|f| f.kind.as_str()).collect()
    }

    fn library(p: &Path) -> Report {
        probe_library(p)
            .expect("libblkid.so.1 is part of util-linux")
            .unwrap()
    }

    fn command(p: &Path) -> Report {
        probe_command(p)
            .expect("blkid(8) is part of util-linux")
            .unwrap()
    }

    #[test]
    fn filesystems_the_magic_list_misses_are_named() {
        let d = TempDir::new("blkid-fs").unwrap();
        let src = d.path().join("src");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(src.join("f"), b"data").unwrap();
        let exfat = image(&d, "exfat", 16, "mkfs.exfat", &["-L", "photos"]);
        let minix = image(&d, "minix", 16, "mkfs.minix", &[]);
        let squash = d.path().join("squash");
        let out = Command::new("mksquashfs")
            .args([src.as_os_str(), squash.as_os_str()])
            .args(["-quiet", "-noappend"])
            .output()
            .expect("mksquashfs (squashfs-tools; the CI installs it)");
        assert!(out.status.success(), "{out:?}");
        for (p, kind) in [(&exfat, "exfat"), (&minix, "minix"), (&squash, "squashfs")] {
            let r = library(p);
            assert_eq!(r.source, Source::Library);
            assert!(!r.ambivalent, "{kind}: {r:?}");
            let f = r.found.iter().find(|f| f.kind == kind).unwrap();
            assert_eq!(f.usage.as_deref(), Some("filesystem"), "{kind}");
            assert!(f.offset.is_some(), "{kind}: magic offset reported");
            let desc = r.describe().unwrap();
            assert!(
                desc.contains(&format!("{kind} filesystem at byte")),
                "{desc}"
            );
            assert!(kinds(&command(p)).contains(&kind), "blkid -p on {kind}");
        }
        let f = library(&exfat);
        let label = f.found.iter().find_map(|f| f.label.clone());
        assert_eq!(label.as_deref(), Some("photos"));
        // The hand-kept list knows none of these three.
        for p in [&minix, &squash] {
            assert!(crate::probe::probe_signatures(p).unwrap().is_empty());
        }
    }

    #[test]
    fn ambivalent_images_list_every_signature() {
        let d = TempDir::new("blkid-amb").unwrap();
        let btrfs = image(&d, "btrfs", 128, "mkfs.btrfs", &["-q", "-f"]);
        let ext4 = image(&d, "ext4", 16, "mkfs.ext4", &["-q", "-F"]);
        // An ext4 superblock (bytes 1024..2048) over a btrfs image: two filesystems.
        use std::os::unix::fs::FileExt;
        let mut sb = vec![0u8; 1024];
        std::fs::File::open(&ext4)
            .unwrap()
            .read_exact_at(&mut sb, 1024)
            .unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&btrfs)
            .unwrap();
        f.write_all_at(&sb, 1024).unwrap();
        let r = library(&btrfs);
        assert!(r.ambivalent, "{r:?}");
        assert!(
            kinds(&r).contains(&"ext4") && kinds(&r).contains(&"btrfs"),
            "{r:?}"
        );
        let desc = r.describe().unwrap();
        assert!(desc.contains("ambivalent"), "{desc}");
        let c = command(&btrfs);
        assert!(c.ambivalent && !c.is_empty(), "{c:?}");
        assert!(c.describe().unwrap().contains("ambivalent"));
    }

    #[test]
    fn partition_tables_blank_and_missing_files() {
        let d = TempDir::new("blkid-pt").unwrap();
        let blank = d.path().join("blank");
        std::fs::File::create(&blank)
            .and_then(|f| f.set_len(4 << 20))
            .unwrap();
        assert!(library(&blank).is_empty());
        assert!(command(&blank).is_empty());
        assert_eq!(library(&blank).describe(), None);
        // A DOS partition table with one partition.
        let mut mbr = vec![0u8; 512];
        mbr[446 + 4] = 0x83;
        mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
        mbr[446 + 12..446 + 16].copy_from_slice(&4096u32.to_le_bytes());
        mbr[510..512].copy_from_slice(&[0x55, 0xAA]);
        use std::os::unix::fs::FileExt;
        let pt = d.path().join("pt");
        let f = std::fs::File::create(&pt).unwrap();
        f.set_len(4 << 20).unwrap();
        f.write_all_at(&mbr, 0).unwrap();
        let r = library(&pt);
        assert_eq!(kinds(&r), vec!["dos"]);
        assert!(r.found[0].table);
        assert_eq!(
            r.describe().unwrap(),
            "a signature found by libblkid: dos partition table at byte 510"
        );
        assert_eq!(kinds(&command(&pt)), vec!["dos"]);
        let missing = d.path().join("missing");
        let e = probe_library(&missing).unwrap().unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
        let e = probe_command(&missing).unwrap().unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
    }

    #[test]
    fn export_output_parses_type_table_and_label() {
        let text = "DEVNAME=x\nUUID=1\nLABEL=my\\ disk\nTYPE=exfat\nUSAGE=filesystem\nPTTYPE=dos\n";
        let f = parse_export(text);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].kind, "exfat");
        assert_eq!(f[0].label.as_deref(), Some("my disk"));
        assert_eq!(f[0].describe(), "exfat filesystem labelled \"my disk\"");
        assert!(f[1].table && f[1].kind == "dos");
        assert!(parse_export("").is_empty());
        let swap = Found {
            kind: "swap".into(),
            table: false,
            usage: Some("other".into()),
            label: None,
            offset: Some(4086),
        };
        assert_eq!(swap.describe(), "swap signature at byte 4086");
    }
}
