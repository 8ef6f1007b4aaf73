//! Safety probes for a write target: on-disk signatures (libblkid's, see [`crate::blkid`],
//! then a small magic list of filesystems, partition tables, swap, LVM, LUKS and MD RAID found
//! in the first 68 KiB), where a device, one of its partitions, or a loop device backed by a
//! file is mounted (/proc/self/mountinfo matched by major:minor), which devices hold it, and
//! what a loop device's backing file is. fiox-runner's block-device check is built on
//! [`block_write_refusal`].

use crate::error::{Result, TestbedError};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Bytes read from the start of a target for probing: covers btrfs's superblock at 64 KiB
/// and a swap header on 64 KiB pages.
pub const PROBE_LEN: usize = 68 * 1024;

/// What a signature says the target holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureKind {
    Ext,
    Xfs,
    Btrfs,
    Swap,
    Luks,
    Ntfs,
    Fat32,
    Fat,
    Gpt,
    Lvm2,
    MdRaid,
    F2fs,
    Mbr,
}

impl SignatureKind {
    /// Phrase used in refusals ("it holds an ext2/3/4 filesystem signature"); identical to
    /// fiox-runner's wording.
    pub fn description(self) -> &'static str {
        match self {
            SignatureKind::Ext => "an ext2/3/4 filesystem",
            SignatureKind::Xfs => "an XFS filesystem",
            SignatureKind::Btrfs => "a btrfs filesystem",
            SignatureKind::Swap => "a swap area",
            SignatureKind::Luks => "a LUKS encrypted volume",
            SignatureKind::Ntfs => "an NTFS filesystem",
            SignatureKind::Fat32 => "a FAT32 filesystem",
            SignatureKind::Fat => "a FAT filesystem",
            SignatureKind::Gpt => "a GPT partition table",
            SignatureKind::Lvm2 => "an LVM physical volume",
            SignatureKind::MdRaid => "an MD RAID member",
            SignatureKind::F2fs => "an F2FS filesystem",
            SignatureKind::Mbr => "a DOS/MBR partition table",
        }
    }
}

/// One signature found: its kind and the byte offset of its magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Signature {
    pub kind: SignatureKind,
    pub offset: u64,
}

/// Fixed-offset magics, in fiox-runner's order of precedence.
const FIXED: [(usize, &[u8], SignatureKind); 12] = [
    (1024 + 56, &[0x53, 0xEF], SignatureKind::Ext),
    (0, b"XFSB", SignatureKind::Xfs),
    (65536 + 64, b"_BHRfS_M", SignatureKind::Btrfs),
    (4096 - 10, b"SWAPSPACE2", SignatureKind::Swap),
    (0, b"LUKS\xba\xbe", SignatureKind::Luks),
    (3, b"NTFS    ", SignatureKind::Ntfs),
    (82, b"FAT32   ", SignatureKind::Fat32),
    (54, b"FAT1", SignatureKind::Fat),
    (512, b"EFI PART", SignatureKind::Gpt),
    (4096, &[0xfc, 0x4e, 0x2b, 0xa9], SignatureKind::MdRaid),
    (0, &[0xfc, 0x4e, 0x2b, 0xa9], SignatureKind::MdRaid),
    (1024, &[0x10, 0x20, 0xF5, 0xF2], SignatureKind::F2fs),
];

/// Every signature found in `head` (the first bytes of a target; pass at least
/// [`PROBE_LEN`] to see all of them), in precedence order.
pub fn signatures_in(head: &[u8]) -> Vec<Signature> {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    let mut found: Vec<Signature> = FIXED
        .iter()
        .filter(|(off, magic, _)| at(*off, magic))
        .map(|&(off, _, kind)| Signature {
            kind,
            offset: off as u64,
        })
        .collect();
    // Swap headers end the first page, whatever the page size it was made with.
    for page in [8192usize, 16384, 65536] {
        if at(page - 10, b"SWAPSPACE2") {
            found.push(Signature {
                kind: SignatureKind::Swap,
                offset: (page - 10) as u64,
            });
        }
    }
    // LVM2 label: "LABELONE" in one of the first four sectors, type "LVM2 001" 24 bytes on;
    // in sector 1 (where pvcreate puts it) the type alone suffices, as in fiox-runner.
    for sector in 0..4usize {
        let off = sector * 512;
        if at(off + 24, b"LVM2 001") && (sector == 1 || at(off, b"LABELONE")) {
            found.push(Signature {
                kind: SignatureKind::Lvm2,
                offset: off as u64,
            });
        }
    }
    if at(510, &[0x55, 0xAA])
        && head
            .get(446..510)
            .is_some_and(|p| p.iter().any(|&b| b != 0))
    {
        found.push(Signature {
            kind: SignatureKind::Mbr,
            offset: 510,
        });
    }
    found
}

/// The first signature's description, exactly what fiox-runner's `files::signature` answers.
pub fn signature(head: &[u8]) -> Option<&'static str> {
    signatures_in(head).first().map(|s| s.kind.description())
}

/// Signatures at the start of a device or file.
pub fn probe_signatures(path: &Path) -> Result<Vec<Signature>> {
    let mut f = File::open(path).map_err(|e| TestbedError::io("open", path, e))?;
    let mut head = vec![0u8; PROBE_LEN];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TestbedError::io("read", path, e)),
        }
    }
    Ok(signatures_in(&head[..n]))
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    /// Root of the mount within its filesystem.
    pub root: String,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
}

/// Undo mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse mountinfo text; malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let (pre, post) = line.split_once(" - ")?;
    let f: Vec<&str> = pre.split(' ').collect();
    let (maj, min) = f.get(2)?.split_once(':')?;
    let mut post = post.split(' ');
    Some(MountEntry {
        major: maj.parse().ok()?,
        minor: min.parse().ok()?,
        root: unescape(f.get(3)?),
        mount_point: unescape(f.get(4)?),
        fs_type: post.next()?.to_string(),
        source: unescape(post.next().unwrap_or("")),
    })
}

/// The current mounts of this process's mount namespace.
pub fn mount_entries() -> Result<Vec<MountEntry>> {
    let p = Path::new("/proc/self/mountinfo");
    std::fs::read_to_string(p)
        .map(|t| parse_mountinfo(&t))
        .map_err(|e| TestbedError::io("read", p, e))
}

/// Whether `path` is itself a mount point.
pub fn is_mount_point(path: &Path) -> bool {
    let want = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    mount_entries()
        .unwrap_or_default()
        .iter()
        .any(|m| Path::new(&m.mount_point) == want)
}

/// Filesystem type holding `path` (e.g. "ext4", "tmpfs", "ramfs", "fuse"), from the mount
/// whose device matches the file's st_dev, longest mount point first.
pub fn fs_type_of(path: &Path) -> Option<String> {
    let dev = std::fs::metadata(path).ok()?.dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let canon = path.canonicalize().ok()?;
    mount_entries()
        .ok()?
        .into_iter()
        .filter(|m| m.major == maj && m.minor == min && canon.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.len())
        .map(|m| m.fs_type)
}

/// Mount point of device `maj:min`, if mounted. Matched by the mount's device number, and
/// by its source device node: btrfs (and other filesystems spanning devices) mount with an
/// anonymous device number, so only the source names the device.
pub fn mounted_at(maj: u32, min: u32) -> Option<String> {
    let want = libc::makedev(maj, min);
    mount_entries()
        .ok()?
        .into_iter()
        .find(|m| {
            (m.major == maj && m.minor == min)
                || (m.source.starts_with('/')
                    && std::fs::metadata(&m.source)
                        .is_ok_and(|s| s.file_type().is_block_device() && s.rdev() == want))
        })
        .map(|m| m.mount_point)
}

/// Partitions of a whole-disk device from sysfs: (name, major, minor).
pub fn partitions(maj: u32, min: u32) -> Vec<(String, u32, u32)> {
    let dir = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.path().join("partition").exists())
        .filter_map(|e| {
            let dev = std::fs::read_to_string(e.path().join("dev")).ok()?;
            let (a, b) = dev.trim().split_once(':')?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                a.parse().ok()?,
                b.parse().ok()?,
            ))
        })
        .collect()
}

/// Devices holding `maj:min` (device-mapper, MD...), joined by ", " (fiox-runner's `holders`).
pub fn holders(maj: u32, min: u32) -> Option<String> {
    let dir = format!("/sys/dev/block/{maj}:{min}/holders");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    (!names.is_empty()).then(|| names.join(", "))
}

/// The backing file of /sys/block/`name` (e.g. "loop3"), `None` when it is not bound.
pub fn sys_backing_file(name: &str) -> Option<PathBuf> {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    Some(PathBuf::from(s.trim_end_matches('\n')))
}

/// Loop devices (names like "loop3") currently bound to `backing`, per sysfs.
pub fn loops_backed_by(backing: &Path) -> Vec<String> {
    let want = backing
        .canonicalize()
        .unwrap_or_else(|_| backing.to_path_buf());
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop"))
        .filter(|n| sys_backing_file(n).is_some_and(|b| b == want))
        .collect()
}

/// The (major, minor) pairs whose mounts concern `target`: a block device and its
/// partitions; for a regular file, the loop devices it backs and their partitions.
fn device_numbers_of(target: &Path) -> Result<Vec<(u32, u32)>> {
    let meta = std::fs::metadata(target).map_err(|e| TestbedError::io("stat", target, e))?;
    let mut whole = Vec::new();
    if meta.file_type().is_block_device() {
        whole.push((libc::major(meta.rdev()), libc::minor(meta.rdev())));
    } else if meta.is_file() {
        for name in loops_backed_by(target) {
            let dev = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap_or_default();
            if let Some((a, b)) = dev.trim().split_once(':') {
                if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                    whole.push((a, b));
                }
            }
        }
    }
    let mut all = whole.clone();
    for (maj, min) in whole {
        all.extend(partitions(maj, min).into_iter().map(|(_, a, b)| (a, b)));
    }
    Ok(all)
}

/// Where `target` is mounted: a block device or any of its partitions; for a regular file,
/// any loop device it backs (or their partitions). Empty when not mounted.
pub fn mount_points_of(target: &Path) -> Result<Vec<String>> {
    let devs = device_numbers_of(target)?;
    if devs.is_empty() {
        return Ok(Vec::new());
    }
    Ok(mount_entries()?
        .into_iter()
        .filter(|m| devs.contains(&(m.major, m.minor)))
        .map(|m| m.mount_point)
        .collect())
}

/// How deep loop devices over loop devices are followed (each level is a real device).
const MAX_LOOP_DEPTH: u32 = 4;

/// Why writing to block device `path` would destroy data, or `None` when it looks unused:
/// it or one of its partitions is mounted or held by another device (device-mapper, MD...);
/// it is a loop device whose backing file is bound to another loop device that is mounted or
/// held, or whose backing file or device carries a signature; or it or any partition the
/// kernel lists (even after its partition table was wiped) carries a signature that libblkid
/// (or `blkid -p`, or the magic list in [`signatures_in`]) recognises. The answer is a phrase
/// like "it is mounted on /mnt" or "it holds a signature found by libblkid: exfat filesystem
/// at byte 3", for the runner to wrap in its own refusal. Whether fiox owns a loop device's
/// backing file is the runner's question (see [`loop_backing_file`]).
pub fn block_write_refusal(path: &Path) -> Result<Option<String>> {
    refusal_at_depth(path, 0)
}

fn refusal_at_depth(path: &Path, depth: u32) -> Result<Option<String>> {
    let meta = std::fs::metadata(path).map_err(|e| TestbedError::io("stat", path, e))?;
    let (maj, min) = (libc::major(meta.rdev()), libc::minor(meta.rdev()));
    let parts = partitions(maj, min);
    let mut devs = vec![(None, maj, min)];
    devs.extend(parts.iter().map(|(n, a, b)| (Some(n.as_str()), *a, *b)));
    for &(part, a, b) in &devs {
        let who = part.map_or("it".to_string(), |p| format!("its partition {p}"));
        if let Some(mnt) = mounted_at(a, b) {
            return Ok(Some(format!("{who} is mounted on {mnt}")));
        }
        if let Some(h) = holders(a, b) {
            return Ok(Some(format!(
                "{who} is in use by {h}{} (see /sys/block/*/holders)",
                holder_detail(&h)
            )));
        }
    }
    let backing = loop_backing_of(maj, min);
    if let Some(b) = &backing {
        if let Some(why) = shared_backing_refusal(b, (maj, min))? {
            return Ok(Some(why));
        }
    }
    if let Some(d) = signatures_of(path)? {
        return Ok(Some(format!("it holds {d}")));
    }
    for (name, _, _) in &parts {
        let node = Path::new("/dev").join(name);
        if !node.exists() {
            return Ok(Some(format!(
                "its partition {name} has no device node {} to probe for a filesystem",
                node.display()
            )));
        }
        if let Some(d) = signatures_of(&node)? {
            return Ok(Some(format!("its partition {name} holds {d}")));
        }
    }
    match backing {
        Some(b) => backing_content_refusal(&b, depth),
        None => Ok(None),
    }
}

/// What a target holds, phrased to follow "it holds": libblkid's (or `blkid -p`'s) findings,
/// else the first magic of [`signatures_in`] (which knows a few layouts libblkid may call
/// ambivalent or skip), else `None`.
pub fn signatures_of(path: &Path) -> Result<Option<String>> {
    if let Some(d) = crate::blkid::probe(path)?.and_then(|r| r.describe()) {
        return Ok(Some(d));
    }
    Ok(probe_signatures(path)?
        .first()
        .map(|s| format!("{} signature", s.kind.description())))
}

/// What a regular file holds, for files full of arbitrary data (a benchmark's): libblkid's
/// verdict alone when it is available, since it validates superblocks and a 2-byte magic such
/// as ext's matches random data once in 65536 files; the magic list only without libblkid.
pub fn file_signature(path: &Path) -> Result<Option<String>> {
    match crate::blkid::probe(path)? {
        Some(r) => Ok(r.describe()),
        None => Ok(probe_signatures(path)?
            .first()
            .map(|s| format!("{} signature", s.kind.description()))),
    }
}

/// " (dm-0 holds a signature found by libblkid: ext4 filesystem at byte 1080)" for the
/// first holder that carries a signature, else "". Best effort: only adds detail to a
/// refusal that stands anyway.
fn holder_detail(holders: &str) -> String {
    holders
        .split(", ")
        .find_map(|h| {
            let d = signatures_of(&Path::new("/dev").join(h)).ok()??;
            Some(format!(" ({h} holds {d})"))
        })
        .unwrap_or_default()
}

/// The backing file (or device) of loop device `dev` or of a partition of one (loopNpM),
/// from /sys/block/loopN/loop/backing_file; `None` for other devices or an unbound loop.
pub fn loop_backing_file(dev: &Path) -> Option<PathBuf> {
    let rdev = std::fs::metadata(dev).ok()?.rdev();
    loop_backing_of(libc::major(rdev), libc::minor(rdev))
}

fn loop_backing_of(maj: u32, min: u32) -> Option<PathBuf> {
    let mut dir = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    if dir.join("partition").exists() {
        dir = dir.parent()?.to_path_buf();
    }
    let s = std::fs::read_to_string(dir.join("loop/backing_file")).ok()?;
    Some(PathBuf::from(s.trim_end_matches('\n')))
}

/// Loop devices other than `me` whose backing file is `backing` (same device and inode):
/// (name, major, minor).
fn other_loops_over(backing: &std::fs::Metadata, me: (u32, u32)) -> Vec<(String, u32, u32)> {
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop"))
        .filter_map(|n| {
            let b = sys_backing_file(&n)?;
            let m = std::fs::metadata(b).ok()?;
            if (m.dev(), m.ino()) != (backing.dev(), backing.ino()) {
                return None;
            }
            let dev = std::fs::read_to_string(format!("/sys/block/{n}/dev")).ok()?;
            let (a, b) = dev.trim().split_once(':')?;
            Some((n, a.parse().ok()?, b.parse().ok()?))
        })
        .filter(|&(_, a, b)| (a, b) != me)
        .collect()
}

/// A loop device's backing file is bound to another loop device that is mounted or held:
/// the same bytes, in use under another name.
fn shared_backing_refusal(backing: &Path, me: (u32, u32)) -> Result<Option<String>> {
    let f = backing.display();
    let meta = match std::fs::metadata(backing) {
        Ok(m) => m,
        // Deleted (the kernel shows "path (deleted)") or unreachable from here.
        Err(e) => {
            return Ok(Some(format!(
                "its backing file {f} cannot be examined ({e})"
            )))
        }
    };
    for (name, a, b) in other_loops_over(&meta, me) {
        let mut devs = vec![(a, b)];
        devs.extend(partitions(a, b).into_iter().map(|(_, a, b)| (a, b)));
        for (a, b) in devs {
            if let Some(mnt) = mounted_at(a, b) {
                return Ok(Some(format!(
                    "its backing file {f} is also bound to /dev/{name}, which is mounted on {mnt}"
                )));
            }
            if let Some(h) = holders(a, b) {
                return Ok(Some(format!(
                    "its backing file {f} is also bound to /dev/{name}, which is in use by {h}"
                )));
            }
        }
    }
    Ok(None)
}

/// A loop device's backing device in use or carrying a signature, or its backing file
/// carrying a signature (the device may start at an offset into it).
fn backing_content_refusal(backing: &Path, depth: u32) -> Result<Option<String>> {
    let f = backing.display();
    let meta = std::fs::metadata(backing).map_err(|e| TestbedError::io("stat", backing, e))?;
    if meta.file_type().is_block_device() {
        if depth >= MAX_LOOP_DEPTH {
            return Ok(Some(format!(
                "its backing device {f} is more than {MAX_LOOP_DEPTH} loop devices deep"
            )));
        }
        return Ok(refusal_at_depth(backing, depth + 1)?
            .map(|why| format!("its backing device {f} is unsafe to write: {why}")));
    }
    Ok(signatures_of(backing)?.map(|d| format!("its backing file {f} holds {d}")))
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    fn put(head: &mut [u8], off: usize, bytes: &[u8]) {
        head[off..off + bytes.len()].copy_from_slice(bytes);
    }

    fn kinds(head: &[u8]) -> Vec<SignatureKind> {
        signatures_in(head).iter().map(|s| s.kind).collect()
    }

    #[test]
    fn each_magic_is_found_at_its_offset() {
        let cases: [(usize, &[u8], SignatureKind); 10] = [
            (1080, &[0x53, 0xEF], SignatureKind::Ext),
            (0, b"XFSB", SignatureKind::Xfs),
            (65600, b"_BHRfS_M", SignatureKind::Btrfs),
            (4086, b"SWAPSPACE2", SignatureKind::Swap),
            (65526, b"SWAPSPACE2", SignatureKind::Swap),
            (512, b"EFI PART", SignatureKind::Gpt),
            (0, b"LUKS\xba\xbe", SignatureKind::Luks),
            (4096, &[0xfc, 0x4e, 0x2b, 0xa9], SignatureKind::MdRaid),
            (1024, &[0x10, 0x20, 0xF5, 0xF2], SignatureKind::F2fs),
            (3, b"NTFS    ", SignatureKind::Ntfs),
        ];
        for (off, magic, kind) in cases {
            let mut head = vec![0u8; PROBE_LEN];
            put(&mut head, off, magic);
            let found = signatures_in(&head);
            assert_eq!(
                found,
                vec![Signature {
                    kind,
                    offset: off as u64
                }],
                "{kind:?}"
            );
        }
    }

    #[test]
    fn lvm_needs_label_and_type() {
        let mut head = vec![0u8; PROBE_LEN];
        put(&mut head, 1024 + 24, b"LVM2 001");
        assert!(kinds(&head).is_empty());
        put(&mut head, 1024, b"LABELONE");
        assert_eq!(kinds(&head), vec![SignatureKind::Lvm2]);
        let mut head = vec![0u8; PROBE_LEN];
        put(&mut head, 536, b"LVM2 001");
        assert_eq!(kinds(&head), vec![SignatureKind::Lvm2]);
    }

    #[test]
    fn mbr_needs_a_partition_entry() {
        let mut head = vec![0u8; PROBE_LEN];
        put(&mut head, 510, &[0x55, 0xAA]);
        assert!(kinds(&head).is_empty());
        head[446 + 4] = 0x83;
        assert_eq!(kinds(&head), vec![SignatureKind::Mbr]);
        // A GPT disk has a protective MBR too: both are reported, GPT first.
        put(&mut head, 512, b"EFI PART");
        assert_eq!(kinds(&head), vec![SignatureKind::Gpt, SignatureKind::Mbr]);
        assert_eq!(signature(&head), Some("a GPT partition table"));
    }

    #[test]
    fn empty_and_short_heads_have_no_signature() {
        assert!(signatures_in(&[]).is_empty());
        assert!(signatures_in(&vec![0u8; PROBE_LEN]).is_empty());
        // Ext magic cut off by a short read is not reported.
        let mut head = vec![0u8; 1081];
        head[1080] = 0x53;
        assert!(signatures_in(&head).is_empty());
        assert_eq!(signature(&head), None);
    }

    #[test]
    fn runner_wording_is_kept() {
        let mut head = vec![0u8; PROBE_LEN];
        put(&mut head, 1080, &[0x53, 0xEF]);
        assert_eq!(signature(&head), Some("an ext2/3/4 filesystem"));
    }

    #[test]
    fn mountinfo_lines_parse_with_escapes_and_optional_fields() {
        let text = "36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n\
                    37 35 0:52 / /dev/shm rw - tmpfs tmpfs rw\n\
                    garbage line\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].major, m[0].minor), (98, 0));
        assert_eq!(m[0].mount_point, "/mnt/with space");
        assert_eq!(m[0].root, "/mnt1");
        assert_eq!(m[0].fs_type, "ext3");
        assert_eq!(m[0].source, "/dev/root");
        assert_eq!(m[1].fs_type, "tmpfs");
    }

    #[test]
    fn live_mountinfo_has_proc() {
        let m = mount_entries().unwrap();
        // Not "/": in a chroot (ci/test.sh in a fresh Debian chroot) the root is a directory of
        // the host's filesystem and mountinfo lists only the mounts below it.
        assert!(m
            .iter()
            .any(|e| e.mount_point == "/proc" && e.fs_type == "proc"));
        assert!(is_mount_point(Path::new("/proc")));
        assert_eq!(fs_type_of(Path::new("/proc/self")).as_deref(), Some("proc"));
    }

    #[test]
    fn probing_a_plain_file_reads_its_head() {
        let d = crate::temp::TempDir::new("probe").unwrap();
        let f = d.path().join("img");
        let mut head = vec![0u8; 100 * 1024];
        put(&mut head, 65600, b"_BHRfS_M");
        std::fs::write(&f, &head).unwrap();
        let s = probe_signatures(&f).unwrap();
        assert_eq!(
            s.iter().map(|s| s.kind).collect::<Vec<_>>(),
            vec![SignatureKind::Btrfs]
        );
        assert!(mount_points_of(&f).unwrap().is_empty());
        let e = probe_signatures(&d.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing"), "{e}");
    }
}
