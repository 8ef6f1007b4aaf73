//! Tests of disk resolution and deltas: a fake sysfs tree for partitions and dm slaves, and a
//! real loop device (root; skipped, recorded by the harness, only when the kernel has no loop
//! driver).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use super::*;
use std::fs;
use std::os::unix::fs::symlink;
use std::process::Command;

/// The workspace's test harness for what a test needs from the machine (tests/harness/need.rs).
#[path = "../../../../tests/harness/need.rs"]
mod need;

/// A fresh directory under /tmp, removed on drop.
struct TmpDir(PathBuf);
impl TmpDir {
    fn new(tag: &str) -> TmpDir {
        let p = std::env::temp_dir().join(format!("fiox-stats-disk-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TmpDir(p)
    }
}
impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const VDA_LINE: &str = "  126694     9543  8538082   134701    64544    18787 16744472    13239        0    12628   148964     7597       33  1037496      823     4140      199";

#[test]
fn parses_stat_lines() {
    let c = DiskCounters::parse(VDA_LINE).unwrap();
    assert_eq!(c.ios, [126694, 64544]);
    assert_eq!(c.merges, [9543, 18787]);
    assert_eq!(c.sectors, [8538082, 16744472]);
    assert_eq!(c.ticks, [134701, 13239]);
    assert_eq!((c.io_ticks, c.in_queue), (12628, 148964));
    // Old kernels: exactly 11 fields.
    assert!(DiskCounters::parse("1 2 3 4 5 6 7 8 9 10 11").is_some());
    assert!(DiskCounters::parse("1 2 3 4 5 6 7 8 9 10").is_none());
    assert!(DiskCounters::parse("1 2 3 4 5 6 7 8 x 10 11").is_none());
}

#[test]
fn splits_dev_t() {
    assert_eq!(dev_major_minor(0xfe00), (254, 0));
    assert_eq!(dev_major_minor(0x0701), (7, 1));
    // makedev(259, 70000): minor bits above 8 live at bit 20.
    let dev = (259u64 << 8) | (70000 & 0xff) | ((70000u64 & !0xff) << 12);
    assert_eq!(dev_major_minor(dev), (259, 70000));
}

#[test]
fn util_is_capped_and_defined() {
    assert_eq!(util_pct(500, 1000), 50.0);
    assert_eq!(util_pct(5000, 1000), 100.0);
    assert_eq!(util_pct(5, 0), 0.0);
}

fn write_stat(dir: &Path, reads: u64, writes: u64, io_ticks: u64) {
    fs::write(
        dir.join("stat"),
        format!(
            "{reads} 1 {} 7 {writes} 2 {} 9 0 {io_ticks} 20 0 0 0 0\n",
            reads * 8,
            writes * 8
        ),
    )
    .unwrap();
}

/// root/devices/pci/block/sda (disk) with sda1 (partition); root/devices/virtual/block/dm-0
/// on top of sda1; root/dev/block/M:m links as the kernel makes them.
fn fake_sysfs(root: &Path) -> (PathBuf, PathBuf) {
    let sda = root.join("devices/pci/block/sda");
    let sda1 = sda.join("sda1");
    let dm = root.join("devices/virtual/block/dm-0");
    for d in [
        &sda.join("queue"),
        &sda1,
        &dm.join("slaves"),
        &root.join("dev/block"),
    ] {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(sda1.join("partition"), "1\n").unwrap();
    write_stat(&sda, 100, 200, 1000);
    write_stat(&sda1, 50, 60, 500);
    write_stat(&dm, 10, 20, 300);
    symlink("../../../../pci/block/sda/sda1", dm.join("slaves/sda1")).unwrap();
    symlink(
        "../../devices/pci/block/sda/sda1",
        root.join("dev/block/8:1"),
    )
    .unwrap();
    symlink("../../devices/pci/block/sda", root.join("dev/block/8:0")).unwrap();
    symlink(
        "../../devices/virtual/block/dm-0",
        root.join("dev/block/253:0"),
    )
    .unwrap();
    (sda, dm)
}

#[test]
fn partitions_map_to_disks_and_dm_gets_slaves() {
    let t = TmpDir::new("fake");
    let (sda, dm) = fake_sysfs(&t.0);
    let mut s = DiskStatsSampler::with_sysfs_root(&t.0);
    assert!(s.add_device(253, 0).unwrap());
    assert!(
        !s.add_device(8, 1).unwrap(),
        "sda is already watched as dm-0's slave"
    );
    assert!(!s.add_device(8, 0).unwrap());
    assert!(
        !s.add_device(9, 9).unwrap(),
        "unknown device: nothing to watch"
    );
    assert_eq!(s.names(), vec!["dm-0".to_string()]);

    write_stat(&sda, 150, 260, 1800);
    write_stat(&dm, 15, 30, 400);
    let r = s.finish().unwrap();
    assert_eq!(r.len(), 1);
    let d = &r[0];
    assert_eq!((d.name.as_str(), d.ios, d.io_ticks), ("dm-0", [5, 10], 100));
    assert_eq!(d.sectors, [40, 80]);
    assert!((0.0..=100.0).contains(&d.util));
    assert_eq!(d.slaves.len(), 1);
    let sl = &d.slaves[0];
    assert_eq!(
        (sl.name.as_str(), sl.ios, sl.merges),
        ("sda", [50, 60], [0, 0])
    );

    let agg = slave_aggregate(d).unwrap();
    assert_eq!((agg.ios, agg.in_queue), ([50, 60], 0));
    assert!(slave_aggregate(sl).is_none());
}

#[test]
fn restart_rebases_counters() {
    let t = TmpDir::new("restart");
    let (sda, _) = fake_sysfs(&t.0);
    let mut s = DiskStatsSampler::with_sysfs_root(&t.0);
    assert!(s.add_device(8, 1).unwrap());
    write_stat(&sda, 1100, 200, 1000);
    s.restart().unwrap();
    write_stat(&sda, 1101, 200, 1000);
    assert_eq!(s.finish().unwrap()[0].ios, [1, 0]);
}

#[test]
fn broken_stat_file_is_a_clear_error() {
    let t = TmpDir::new("broken");
    let (sda, _) = fake_sysfs(&t.0);
    fs::write(sda.join("stat"), "garbage\n").unwrap();
    let err = DiskStatsSampler::with_sysfs_root(&t.0)
        .add_device(8, 0)
        .unwrap_err();
    assert!(err.to_string().contains("garbage"), "{err}");
    assert!(err.to_string().contains("sda/stat"), "{err}");
}

#[test]
fn tmpfs_has_no_disk() {
    let dir = Path::new("/dev/shm");
    assert!(dir.is_dir(), "no /dev/shm: the tests need the tmpfs there");
    let p = dir.join(format!("fiox-stats-tmpfs-{}", std::process::id()));
    fs::write(&p, b"x").unwrap();
    let r = DiskStatsSampler::new().add_path(&p);
    let _ = fs::remove_file(&p);
    assert!(!r.unwrap(), "a tmpfs file has no block device");
}

/// A loop device attached for the test, detached on drop (also when the test fails).
struct Loop(String);
impl Loop {
    fn attach(file: &Path) -> Result<Loop, String> {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(file)
            .output()
            .map_err(|e| format!("cannot run losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Loop(
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        ))
    }
}
impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// The kernel name of the disk holding `path` (what the sampler should report as its slave).
fn disk_name_of(path: &Path) -> Option<String> {
    let (ma, mi) = device_of(path)?;
    let dir = whole_disk(fs::canonicalize(format!("/sys/dev/block/{ma}:{mi}")).ok()?)?;
    Some(dir.file_name()?.to_string_lossy().into_owned())
}

#[test]
fn real_loop_device_and_its_backing_disk() {
    use std::io::Write;
    let t = TmpDir::new("loop");
    let backing = t.0.join("backing.img");
    fs::write(&backing, vec![0u8; 8 << 20]).unwrap();
    if !need::loop_devices() {
        return;
    }
    need::require_tool("losetup");
    let lo = Loop::attach(&backing).unwrap_or_else(|why| panic!("{why}"));
    let dev = PathBuf::from(&lo.0);
    let mut s = DiskStatsSampler::new();
    assert!(s.add_path(&dev).unwrap());
    let name = dev.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(s.names(), vec![name.clone()]);
    assert!(!s.add_path(&dev).unwrap(), "same device twice");

    let mut f = fs::OpenOptions::new().write(true).open(&dev).unwrap();
    f.write_all(&vec![0xa5u8; 1 << 20]).unwrap();
    f.sync_all().unwrap();
    drop(f);

    let r = s.finish().unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].name, name);
    assert!(
        r[0].ios[1] > 0 && r[0].sectors[1] >= 2048,
        "1 MiB written: {:?}",
        r[0]
    );
    assert!((0.0..=100.0).contains(&r[0].util));
    // fio shows a loop device as a plain device: no slaves (no aggr* figures); the backing
    // disk is kept apart for fiox's part of the report.
    assert!(r[0].slaves.is_empty(), "{:?}", r[0]);
    match disk_name_of(&backing) {
        Some(disk) => {
            assert_eq!(r[0].backing.len(), 1, "{:?}", r[0]);
            assert_eq!(r[0].backing[0].name, disk);
            // The backing disk can still be one of fio's devices (a job file on it).
            assert!(
                s.add_path(&backing).unwrap(),
                "the backing disk is not hidden"
            );
        }
        None => assert!(
            r[0].backing.is_empty(),
            "backing file on tmpfs: no backing disk"
        ),
    }
}
