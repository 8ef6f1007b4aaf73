//! Integration tests of fiox's block-device data safety (issue 9, items 11 and 12): every
//! filesystem (and swap, LUKS, bcache) this machine's tools can make on a loop device is
//! refused for writing with a message naming it, mounted or not, through a second loop device
//! over the same image too, with the device's bytes unchanged; the explicit allow
//! (`allow_mounted_write=1`, `--allow-destructive`) lets every one of them run. A loop device
//! over a user's file gets the file's protection, a kernel-listed partition is probed even
//! after the partition table is gone, a device another program holds with O_EXCL is refused,
//! and a running job holds its device so nobody can claim (mount) it mid-run.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use fiox_testbed::{DeviceMount, LoopDevice, LoopOptions};
use harness::*;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Loop devices need root (the test fails without it) and the loop driver (without it the
/// test is skipped, recorded by the harness).
fn loops_or_skip(_test: &str) -> bool {
    loop_devices()
}

fn run(cmd: &str, args: &[&str]) {
    require_tool(cmd);
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e} (.ci/run installs the tools these tests need)"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Make filesystem (or signature) `kind`, libblkid's TYPE name, in `img` (a sparse file of
/// `mib` MiB; images built from a directory are padded up to 4 MiB).
fn make(kind: &str, dir: &TempDir, mib: u64) -> PathBuf {
    let img = dir.path().join("img");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("file"), vec![0x5au8; 64 << 10]).unwrap();
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(mib << 20))
        .unwrap();
    let (i, s) = (img.to_str().unwrap(), src.to_str().unwrap());
    let key = dir.join("key");
    std::fs::write(&key, b"not a secret").unwrap();
    match kind {
        "ext2" | "ext3" | "ext4" => run(&format!("mkfs.{kind}"), &["-q", "-F", i]),
        "xfs" | "btrfs" => run(&format!("mkfs.{kind}"), &["-q", "-f", i]),
        "f2fs" | "nilfs2" => run(&format!("mkfs.{kind}"), &["-q", "-f", i]),
        "vfat" | "exfat" | "minix" | "bfs" => run(&format!("mkfs.{kind}"), &[i]),
        "ntfs" => run("mkntfs", &["-q", "-F", "-f", i]),
        "jfs" => run("mkfs.jfs", &["-q", i]),
        "reiserfs" => run("mkfs.reiserfs", &["-q", "-f", i]),
        "udf" => run("mkudffs", &[i]),
        "swap" => run("mkswap", &[i]),
        "bcache" => run("make-bcache", &["-B", i]),
        "crypto_LUKS" => run(
            "cryptsetup",
            &[
                "luksFormat",
                "--batch-mode",
                "--type=luks2",
                "--pbkdf=pbkdf2",
                "--pbkdf-force-iterations=1000",
                &format!("--key-file={key}"),
                i,
            ],
        ),
        "cramfs" => run("mkfs.cramfs", &[s, i]),
        "squashfs" => run("mksquashfs", &[s, i, "-quiet", "-noappend"]),
        "erofs" => run("mkfs.erofs", &[i, s]),
        "iso9660" => run("genisoimage", &["-quiet", "-o", i, s]),
        other => panic!("no recipe for {other}"),
    }
    let len = std::fs::metadata(&img).unwrap().len();
    if len < 4 << 20 {
        // Room for the test's 256 KiB writes; trailing space does not disturb these formats.
        std::fs::File::options()
            .write(true)
            .open(&img)
            .and_then(|f| f.set_len(4 << 20))
            .unwrap();
    }
    img
}

/// The kernel's name for mounting `kind`, where it differs from libblkid's.
fn mount_type(kind: &str) -> Option<&str> {
    match kind {
        "swap" | "crypto_LUKS" | "bcache" => None,
        "ntfs" => Some("ntfs3"),
        k => Some(k),
    }
}

fn head(img: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut v = vec![0u8; 1 << 20];
    let f = std::fs::File::open(img).unwrap();
    let n = f.take(1 << 20).read(&mut v).unwrap();
    v.truncate(n);
    v
}

fn write_dev(dev: &Path, extra: &[&str]) -> Run {
    let mut a = vec![
        "--name=w".to_string(),
        "--rw=write".into(),
        "--bs=4k".into(),
        "--size=256k".into(),
        format!("--filename={}", dev.display()),
        "--output-format=json".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    fiox(&a)
}

/// A write job to `dev` is refused naming `words`, and the image's first MiB is unchanged.
fn assert_refused(dev: &Path, img: &Path, words: &[&str], extra: &[&str]) {
    let before = head(img);
    let r = write_dev(dev, extra);
    assert_eq!(r.code, 1, "{} {extra:?}: {}", dev.display(), r.stderr);
    let dev_s = dev.display().to_string();
    for w in words
        .iter()
        .chain(&[dev_s.as_str(), "allow_mounted_write=1"])
    {
        assert!(r.stderr.contains(w), "{w:?} missing: {}", r.stderr);
    }
    assert_eq!(r.json()["jobs"][0]["error"], libc::EPERM);
    assert!(
        head(img) == before,
        "a refused job changed {}",
        dev.display()
    );
}

fn assert_allowed(dev: &Path, extra: &[&str]) {
    for allow in ["--allow_mounted_write=1", "--allow-destructive"] {
        let mut a = extra.to_vec();
        a.push(allow);
        let r = write_dev(dev, &a);
        assert_eq!(r.code, 0, "{allow}: {}", r.stderr);
        assert_eq!(issued(&r.json(), "write"), (64, 256 << 10), "{allow}");
    }
}

/// One row of the matrix: `kind` made on a loop device is refused unmounted, through a second
/// loop device, and mounted (read-only, where the kernel has the filesystem), then accepted
/// with either allow.
fn matrix_case(kind: &str, mib: u64) {
    if !loops_or_skip(kind) {
        return;
    }
    let dir = TempDir::new(&format!("blk-{kind}"));
    let img = make(kind, &dir, mib);
    let dev = LoopDevice::attach(&img, &LoopOptions::default()).unwrap();
    let twin = LoopDevice::attach(&img, &LoopOptions::default()).unwrap();
    let named = format!("{kind} ");
    assert_refused(dev.path(), &img, &[&named], &[]);
    assert_refused(twin.path(), &img, &[&named], &["--rw=randtrim"]);
    match mount_type(kind).map(|t| DeviceMount::new(dev.path(), t, true)) {
        None => {}
        Some(Err(fiox_testbed::TestbedError::Unsupported(why))) => {
            skip_for_kernel(&format!("{kind} (mount)"), &why);
        }
        Some(Err(e)) => panic!("mount {kind}: {e}"),
        Some(Ok(m)) => {
            let mnt = m.path().display().to_string();
            assert_refused(dev.path(), &img, &["is mounted on", &mnt], &[]);
            let also = format!(
                "also bound to {}, which is mounted on {mnt}",
                dev.path().display()
            );
            assert_refused(twin.path(), &img, &[&also], &[]);
            // Allowed while mounted: written where no format keeps anything (the image's end).
            let end = format!("--offset={}", dev.size_bytes().unwrap() - (256 << 10));
            assert_allowed(dev.path(), &[&end]);
            m.unmount().unwrap();
        }
    }
    assert_allowed(dev.path(), &[]);
}

macro_rules! matrix {
    ($($test:ident: $kind:literal, $mib:literal;)*) => {$(
        #[test]
        fn $test() {
            matrix_case($kind, $mib);
        }
    )*};
}

matrix! {
    ext2_is_refused: "ext2", 64;
    ext3_is_refused: "ext3", 64;
    ext4_is_refused: "ext4", 64;
    xfs_is_refused: "xfs", 300;
    btrfs_is_refused: "btrfs", 128;
    vfat_is_refused: "vfat", 64;
    exfat_is_refused: "exfat", 64;
    ntfs_is_refused: "ntfs", 64;
    f2fs_is_refused: "f2fs", 64;
    jfs_is_refused: "jfs", 64;
    reiserfs_is_refused: "reiserfs", 64;
    nilfs2_is_refused: "nilfs2", 160;
    udf_is_refused: "udf", 64;
    minix_is_refused: "minix", 64;
    bfs_is_refused: "bfs", 64;
    cramfs_is_refused: "cramfs", 1;
    squashfs_is_refused: "squashfs", 1;
    erofs_is_refused: "erofs", 1;
    iso9660_is_refused: "iso9660", 1;
    swap_is_refused: "swap", 64;
    luks_is_refused: "crypto_LUKS", 64;
    bcache_is_refused: "bcache", 64;
}

/// Two filesystems' superblocks on one device: libblkid will not pick one (ambivalent),
/// which is a refusal naming both.
#[test]
fn ambivalent_signatures_are_refused() {
    if !loops_or_skip("ambivalent") {
        return;
    }
    let dir = TempDir::new("blk-amb");
    let img = make("btrfs", &dir, 128);
    let other = TempDir::new("blk-amb-ext4");
    let ext4 = make("ext4", &other, 16);
    use std::os::unix::fs::FileExt;
    let mut sb = vec![0u8; 1024];
    std::fs::File::open(&ext4)
        .unwrap()
        .read_exact_at(&mut sb, 1024)
        .unwrap();
    let f = std::fs::File::options().write(true).open(&img).unwrap();
    f.write_all_at(&sb, 1024).unwrap();
    let dev = LoopDevice::attach(&img, &LoopOptions::default()).unwrap();
    assert_refused(dev.path(), &img, &["ambivalent", "ext4", "btrfs"], &[]);
    assert_allowed(dev.path(), &[]);
}

/// A file made by an earlier fiox run (so it carries fiox's mark), zero-filled.
fn fiox_made_file(dir: &TempDir, size: &str) -> String {
    let f = dir.join("made");
    let r = fiox(&[
        "--name=mk",
        "--rw=write",
        "--bs=64k",
        &format!("--size={size}"),
        "--zero_buffers=1",
        &format!("--filename={f}"),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    f
}

/// Writes or trims to /dev/loopN change the file behind it: over a user's file (no fiox
/// mark) they are refused like a write to the file itself; over a file an earlier fiox run
/// created (no filesystem on it) they run.
#[test]
fn loop_over_a_user_file_is_refused_over_a_fiox_file_runs() {
    if !loops_or_skip("loop_over_user_file") {
        return;
    }
    let dir = TempDir::new("blk-user");
    let user = dir.path().join("user-data");
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&user, &data).unwrap();
    let opts = LoopOptions {
        partscan: true,
        ..LoopOptions::default()
    };
    let dev = LoopDevice::attach(&user, &opts).unwrap();
    let words = [
        "loop device over the regular file",
        "fiox did not create it",
    ];
    assert_refused(dev.path(), &user, &words, &[]);
    assert_refused(dev.path(), &user, &words, &["--rw=trim"]);
    // A partition of the loop device writes the same file.
    let part = add_partition(&dev, 4);
    assert_refused(Path::new(&part), &user, &words, &[]);
    assert_eq!(std::fs::read(&user).unwrap(), data);
    assert_allowed(dev.path(), &[]);
    drop(dev);

    let made = fiox_made_file(&dir, "4m");
    let dev = LoopDevice::attach(Path::new(&made), &LoopOptions::default()).unwrap();
    let r = write_dev(dev.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(issued(&r.json(), "write"), (64, 256 << 10));
}

/// Partition 1 of `dev` (bound with partscan), from 1 MiB to the end of its `mib` MiB, made
/// without any partition table: the kernel is told directly (BLKPG, as after a wipe).
fn add_partition(dev: &LoopDevice, mib: u64) -> String {
    let sectors = ((mib << 20) / 512 - 2048).to_string();
    run(
        "addpart",
        &[dev.path().to_str().unwrap(), "1", "2048", &sectors],
    );
    let part = format!("{}p1", dev.path().display());
    let appeared = (0..250).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        Path::new(&part).exists()
    });
    assert!(appeared, "{part} did not appear after addpart");
    part
}

/// A whole disk whose partition table was wiped while the kernel still lists its partition:
/// the partition is probed too, and the filesystem on it refuses the write to the disk.
#[test]
fn listed_partition_is_probed_after_the_table_is_gone() {
    if !loops_or_skip("listed_partition") {
        return;
    }
    let dir = TempDir::new("blk-part");
    let made = fiox_made_file(&dir, "64m");
    let opts = LoopOptions {
        partscan: true,
        ..LoopOptions::default()
    };
    let dev = LoopDevice::attach(Path::new(&made), &opts).unwrap();
    let part = add_partition(&dev, 64);
    run("mkfs.ext4", &["-q", "-F", &part]);
    let pname = format!("its partition {}", &part["/dev/".len()..]);
    assert_refused(
        dev.path(),
        Path::new(&made),
        &[&pname, "ext4 filesystem"],
        &[],
    );
    assert_allowed(dev.path(), &[]);
}

/// Open `dev` with O_EXCL, as mount, mkfs, dm and md do.
fn claim(dev: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
}

/// A device another program has open exclusively (how a mount in another mount namespace, or
/// a dm/md/bcache holder, looks from here) is refused; once released, it is written.
#[test]
fn device_claimed_by_another_program_is_refused() {
    if !loops_or_skip("claimed_device") {
        return;
    }
    let dir = TempDir::new("blk-excl");
    let made = fiox_made_file(&dir, "4m");
    let dev = LoopDevice::attach(Path::new(&made), &LoopOptions::default()).unwrap();
    let held = claim(dev.path()).unwrap();
    assert_refused(
        dev.path(),
        Path::new(&made),
        &["in use", "O_EXCL", "EBUSY"],
        &[],
    );
    // The allow skips the claim: the user asked to write anyway.
    assert_allowed(dev.path(), &[]);
    drop(held);
    let r = write_dev(dev.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// While a job writes a device, fiox holds it exclusively: a mount (or mkfs, or any O_EXCL
/// opener) fails with EBUSY. The job's own jobs, submit threads and verify pass share the
/// device without refusing each other; the claim ends with the run.
#[test]
fn running_job_keeps_its_device_claimed() {
    if !loops_or_skip("running_claim") {
        return;
    }
    let dir = TempDir::new("blk-hold");
    let made = fiox_made_file(&dir, "8m");
    let dev = LoopDevice::attach(Path::new(&made), &LoopOptions::default()).unwrap();
    // The verify pass saves its state files in the working directory.
    let child = spawn_fiox_in(
        dir.path(),
        &[
            "--name=hold",
            "--rw=randwrite",
            "--bs=4k",
            "--size=4m",
            "--numjobs=2",
            "--offset_increment=4m",
            "--io_submit_mode=offload",
            "--time_based",
            "--runtime=3",
            "--verify=crc32c",
            "--verify_backlog=64",
            &format!("--filename={}", dev.path().display()),
            "--output-format=json",
        ],
    );
    let mut child = child;
    // Probe only once the jobs write (the claim is taken before any job opens the device): a
    // probe's own claim taken while fiox starts would make fiox refuse the device as in use.
    while child.try_wait().unwrap().is_none() && proc_io(child.id(), "wchar") == 0 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut busy = false;
    while child.try_wait().unwrap().is_none() {
        match claim(dev.path()) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => busy = true,
            Err(e) => panic!("open {}: {e}", dev.path().display()),
            // Not claimed yet (fiox starting) or already released (ending).
            Ok(_) => {}
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let r = wait(child);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(busy, "the device was never claimed during the run");
    claim(dev.path()).expect("the claim ends with the run");
}

/// A job writing a block device holds the device's claim: one open file shared by every job
/// of the run that writes it and closed by whichever drops it last. So such a job keeps the
/// process's file table (a private one, which psync jobs otherwise get as fio's job processes
/// have, would make the claim's number name another file, or none, in the other jobs): the
/// claim and both jobs' descriptors of the device are in the main thread's table.
#[test]
fn jobs_sharing_a_device_claim_keep_the_shared_file_table() {
    if !loops_or_skip("claim_table") {
        return;
    }
    let dir = TempDir::new("blk-table");
    let made = fiox_made_file(&dir, "8m");
    let dev = LoopDevice::attach(Path::new(&made), &LoopOptions::default()).unwrap();
    let path = dev.path().display().to_string();
    let name = format!("--filename={path}");
    let args = [
        "--name=claim",
        name.as_str(),
        "--ioengine=psync",
        "--rw=randwrite",
        "--bs=4k",
        "--size=4m",
        "--numjobs=2",
        "--offset_increment=4m",
        "--time_based",
        "--runtime=20",
        "--output-format=terse",
    ];
    let (tasks, in_main) = file_tables_during(&args, &path, |_, in_main| in_main >= 3);
    assert_eq!(
        in_main, 3,
        "descriptors of the device in the main table ({tasks:?})"
    );
    claim(dev.path()).expect("the claim ends with the run");
}

/// M10: a loop device with nothing attached (or detached since) has 0 bytes. fio 3.33 says
/// "zero sized block device?" and exits 1 before any I/O; fiox ran and failed with EIO (read)
/// or ENOSPC (write) alone. A minor no other test allocates (losetup takes the lowest free
/// one), so the device stays unattached while both tools look at it.
#[test]
fn a_zero_sized_block_device_is_refused_as_fio_refuses_it() {
    if !loops_or_skip("zero sized block device") {
        return;
    }
    // Not /dev/shm: a tmpfs mounted nodev (as in ci/fresh-debian.sh's root) refuses to open
    // a device node on it (EACCES).
    let dir = TempDir::under(Path::new("/var/tmp"), "zerodev");
    let node = dir.join("loop250");
    let c = std::ffi::CString::new(node.as_str()).unwrap();
    let dev = libc::makedev(7, 250);
    // SAFETY: a NUL-terminated path; mknod reads nothing else.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFBLK | 0o600, dev) };
    assert_eq!(made, 0, "mknod {node}: {}", std::io::Error::last_os_error());
    let args = [
        "--name=z",
        "--rw=read",
        "--size=1m",
        "--output-format=json",
        &format!("--filename={node}"),
    ];
    let r = fiox(&args);
    let f = Run::from(Command::new("fio").args(args).output().expect("fio"));
    assert_eq!((r.code, f.code), (1, 1), "{}\n{}", r.stderr, f.stderr);
    for out in [&r.stderr, &f.stderr] {
        assert!(
            out.contains(&format!("{node}: zero sized block device?")),
            "{out}"
        );
    }
    assert_eq!(r.json()["jobs"][0]["read"]["total_ios"], 0);
}
