//! Integration tests of fiox's data-safety rules: existing files fiox did not create are never
//! written without an explicit allow, files fiox laid out are reused, `unlink` removes only
//! fiox's files, and `--readonly` keeps every byte of every target unchanged.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;

/// Extended attribute `name` of `path` through Python's os module (no xattr tools needed);
/// Err when it is not set or the filesystem has none.
fn getxattr(path: &str, name: &str) -> Result<String, String> {
    let code = "import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())";
    sh("python3", &["-c", code, path, name])
}

/// Whether the directory's filesystem stores user extended attributes (fiox's ownership mark).
fn xattrs_supported(dir: &TempDir) -> bool {
    let p = dir.join("xattr-probe");
    std::fs::write(&p, b"x").unwrap();
    let code = "import os,sys; os.setxattr(sys.argv[1], 'user.fiox.probe', b'1')";
    let set = sh("python3", &["-c", code, &p]);
    std::fs::remove_file(&p).unwrap();
    match set {
        Ok(_) => true,
        Err(e) => {
            // python3 ran (sh fails the test when it is missing): the filesystem refused.
            let fs = format!("user extended attributes on {}", dir.path().display());
            skip_for_kernel(&fs, &e);
            false
        }
    }
}

fn write_job(f: &str, extra: &[&str]) -> Run {
    let mut a = vec![
        "--name=w".to_string(),
        "--rw=write".into(),
        "--bs=4k".into(),
        "--size=256k".into(),
        format!("--filename={f}"),
        "--output-format=json".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    fiox(&a)
}

/// A user's file is refused with a message saying how to allow it; the bytes stay as they were.
#[test]
fn user_file_is_refused_until_allowed() {
    let dir = TempDir::new("userfile");
    let f = dir.join("mine");
    let data: Vec<u8> = (0..256u32 << 10).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let r = write_job(&f, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("refusing to write to {f}"))
            && r.stderr.contains("allow_mounted_write=1")
            && r.stderr.contains("--allow-destructive"),
        "{}",
        r.stderr
    );
    assert_eq!(r.json()["jobs"][0]["error"], libc::EPERM);
    assert_eq!(
        std::fs::read(&f).unwrap(),
        data,
        "refused job changed the file"
    );
    for allow in ["--allow_mounted_write=1", "--allow-destructive"] {
        let r = write_job(&f, &[allow]);
        assert_eq!(r.code, 0, "{allow}: {}", r.stderr);
        assert_eq!(issued(&r.json(), "write"), (64, 256 << 10), "{allow}");
    }
    assert_ne!(std::fs::read(&f).unwrap(), data, "allowed job wrote");
}

/// Reading a user's file needs no allow.
#[test]
fn user_file_may_be_read() {
    let dir = TempDir::new("userread");
    let f = dir.join("mine");
    std::fs::write(&f, vec![1u8; 128 << 10]).unwrap();
    let r = fiox(&[
        "--name=r",
        "--rw=randread",
        "--bs=4k",
        &format!("--filename={f}"),
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(issued(&r.json(), "read"), (32, 128 << 10));
}

/// A file fiox laid out in an earlier run is fiox's: a second write job reuses it without the
/// allow, and unlink=1 removes it.
#[test]
fn file_fiox_created_is_reused_and_unlinked() {
    let dir = TempDir::new("reuse");
    if !xattrs_supported(&dir) {
        return;
    }
    let f = dir.join("fiox-made");
    let r = write_job(&f, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    getxattr(&f, "user.fiox.created").expect("fiox marked the file it created");
    let r = write_job(&f, &[]);
    assert_eq!(r.code, 0, "second run: {}", r.stderr);
    let r = write_job(&f, &["--unlink=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!Path::new(&f).exists(), "unlink=1 left fiox's own file");
}

/// unlink=1 never removes a file fiox did not create, even when the job was allowed to write it.
#[test]
fn unlink_leaves_a_user_file_alone() {
    let dir = TempDir::new("unlink-user");
    let f = dir.join("mine");
    std::fs::write(&f, vec![3u8; 256 << 10]).unwrap();
    let r = write_job(&f, &["--unlink=1", "--allow_mounted_write=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(Path::new(&f).exists(), "unlink removed the user's file");
    let r = fiox(&[
        "--name=r",
        "--rw=read",
        "--bs=4k",
        "--unlink=1",
        &format!("--filename={f}"),
        "--output-format=json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        Path::new(&f).exists(),
        "unlink removed the user's file after reading"
    );
}

/// `--readonly`: write, trim and unlink jobs are refused before any I/O (the target's bytes and
/// mtime unchanged, even with the destructive allow), a file to lay out is refused, and a read
/// job runs.
#[test]
fn readonly_keeps_every_byte() {
    let dir = TempDir::new("readonly");
    let f = dir.join("target");
    let data: Vec<u8> = (0..256u32 << 10).map(|i| (i % 241) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(old)
        .unwrap();
    for (rw, extra) in [
        ("write", "--allow-destructive"),
        ("randtrim", "--allow_mounted_write=1"),
        ("randrw", "--allow-destructive"),
        ("read", "--unlink=1"),
    ] {
        let r = write_job(&f, &["--readonly", &format!("--rw={rw}"), extra]);
        assert_eq!(r.code, 1, "rw={rw}: {}", r.stderr);
        assert!(
            r.stderr.contains("--readonly was given"),
            "rw={rw}: {}",
            r.stderr
        );
        assert_eq!(r.json()["jobs"][0]["error"], libc::EPERM, "rw={rw}");
        assert_eq!(issued(&r.json(), "write"), (0, 0), "rw={rw}");
    }
    assert_eq!(std::fs::read(&f).unwrap(), data);
    let meta = std::fs::metadata(&f).unwrap();
    assert_eq!(meta.modified().unwrap(), old, "mtime changed");
    let r = write_job(&f, &["--readonly", "--rw=randread"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(issued(&r.json(), "read"), (64, 256 << 10));
    assert_eq!(std::fs::read(&f).unwrap(), data);
    let missing = dir.join("missing");
    let r = write_job(&missing, &["--readonly", "--rw=read"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("must be laid out"), "{}", r.stderr);
    assert!(!Path::new(&missing).exists());
}

/// On a filesystem without user extended attributes (ramfs) fiox cannot mark its files: it
/// still creates and uses them, but a later run cannot tell them from a user's file, so it is
/// refused with the reason and how to allow it.
#[test]
fn without_xattrs_a_later_run_needs_the_allow() {
    require_root("mounts a ramfs");
    if !kernel_filesystem("ramfs") {
        return;
    }
    let m = fiox_testbed::mount::TmpfsMount::ramfs().expect("mount a ramfs");
    let f = m.path().join("f").display().to_string();
    let r = write_job(&f, &[]);
    assert_eq!(r.code, 0, "first run creates the file: {}", r.stderr);
    let r = write_job(&f, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("does not support the extended attribute user.fiox.created")
            && r.stderr.contains("--allow-destructive"),
        "{}",
        r.stderr
    );
    assert_eq!(write_job(&f, &["--allow-destructive"]).code, 0);
    // Within one run fiox remembers what it created: a second job may write the file.
    std::fs::remove_file(&f).unwrap();
    let r = write_job(
        &f,
        &[
            "--name=again",
            "--rw=randwrite",
            "--stonewall",
            &format!("--filename={f}"),
            "--size=256k",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["jobs"].as_array().unwrap().len(), 2);
}

/// Set extended attribute `name` of `path` to `value` through Python (as `setfattr` would).
fn setxattr(path: &str, name: &str, value: &str) {
    let code = "import os,sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())";
    sh("python3", &["-c", code, path, name, value]).expect("setxattr");
}

/// A directory on a filesystem with user extended attributes, or None (test skipped).
fn xattr_dir(tag: &str) -> Option<TempDir> {
    let dir = TempDir::new(tag);
    xattrs_supported(&dir).then_some(dir)
}

/// unlink=1 with `filename` a user's symbolic link (even one to a file fiox created): the
/// link is not fiox's, so it stays, and so does its target.
#[test]
fn unlink_never_removes_a_users_symlink() {
    let Some(dir) = xattr_dir("unlink-symlink") else {
        return;
    };
    let target = dir.join("fiox-made");
    assert_eq!(write_job(&target, &[]).code, 0);
    let link = dir.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let r = write_job(&link, &["--unlink=1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let m = std::fs::symlink_metadata(&link).expect("unlink=1 removed the user's symlink");
    assert!(m.file_type().is_symlink());
    assert!(Path::new(&target).exists());
}

/// The mark belongs to the inode fiox created: a copy made with `cp -a` (which copies the
/// extended attributes) is the user's file, and so is a file with a forged mark or the old
/// mark value "1"; all are refused, their bytes unchanged.
#[test]
fn copied_or_forged_marks_do_not_count() {
    let Some(dir) = xattr_dir("mark-copy") else {
        return;
    };
    let orig = dir.join("fiox-made");
    assert_eq!(write_job(&orig, &[]).code, 0);
    let copy = dir.join("copy");
    sh("cp", &["-a", &orig, &copy]).expect("cp -a");
    getxattr(&copy, "user.fiox.created").expect("cp -a copied the mark");
    let data: Vec<u8> = (0..256u32 << 10).map(|i| (i % 239) as u8).collect();
    let forged = dir.join("forged");
    std::fs::write(&forged, &data).unwrap();
    for (path, value) in [(&forged, "0"), (&forged, "1")] {
        setxattr(path, "user.fiox.created", value);
        let r = write_job(path, &[]);
        assert_eq!(r.code, 1, "mark {value:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("marked by an older fiox or copied")
                && r.stderr.contains("--allow-destructive"),
            "{}",
            r.stderr
        );
        assert_eq!(std::fs::read(path).unwrap(), data, "mark {value:?}");
    }
    let before = std::fs::read(&copy).unwrap();
    let r = write_job(&copy, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("copied"), "{}", r.stderr);
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    // The original is still fiox's.
    assert_eq!(write_job(&orig, &[]).code, 0);
}

/// A file fiox laid out and the user then turned into an ext4 image holds a filesystem:
/// refused although it carries fiox's mark, until allowed.
#[test]
fn fiox_file_made_into_a_filesystem_is_refused() {
    let Some(dir) = xattr_dir("mark-mkfs") else {
        return;
    };
    let f = dir.join("image");
    assert_eq!(write_job(&f, &["--size=8m"]).code, 0);
    sh("mkfs.ext4", &["-F", "-q", &f]).expect("mkfs.ext4");
    let before = std::fs::read(&f).unwrap();
    let r = write_job(&f, &["--size=8m"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        (r.stderr.contains("ext4 filesystem") || r.stderr.contains("ext2/3/4 filesystem"))
            && r.stderr.contains("--allow-destructive"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&f).unwrap(), before, "refused job wrote");
    assert_eq!(write_job(&f, &["--size=8m", "--allow-destructive"]).code, 0);
}

/// A regular file that backs a loop device (even fiox's own) is refused for writing.
#[test]
fn file_backing_a_loop_device_is_refused() {
    let Some(dir) = xattr_dir("mark-loop") else {
        return;
    };
    let f = dir.join("backing");
    assert_eq!(write_job(&f, &["--size=4m"]).code, 0);
    if !loop_devices() {
        return;
    }
    let lo = fiox_testbed::loopdev::LoopDevice::attach(Path::new(&f), &Default::default())
        .expect("attach a loop device");
    let before = std::fs::read(&f).unwrap();
    let r = write_job(&f, &["--size=4m"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("backs loop device {}", lo.path().display())),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&f).unwrap(), before, "refused job wrote");
    // The path the loop device was bound through is gone (sysfs shows "(deleted)"), the inode
    // lives on under another name: found by the device's own record of its backing inode.
    let other = dir.join("other-name");
    std::fs::hard_link(&f, &other).unwrap();
    std::fs::remove_file(&f).unwrap();
    let r = write_job(&other, &["--size=4m"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("backs loop device"), "{}", r.stderr);
    lo.detach().unwrap();
    assert_eq!(write_job(&other, &["--size=4m"]).code, 0);
}

/// create_on_open: a user's file that appears at the path after the job's safety check, before
/// the lazy open that would have created it, is found by that open and refused, not written.
#[test]
fn create_on_open_refuses_a_file_that_appeared_after_the_check() {
    let dir = TempDir::new("create-race");
    let first = dir.join("c.0.0");
    let second = dir.join("c.0.1");
    // Two files opened one after the other (openfiles=1, sequential service), the first
    // slowed by rate_iops, so the second is opened well after the job started.
    let child = spawn_fiox(&[
        "--name=c",
        "--rw=write",
        "--bs=4k",
        "--size=2m",
        "--nrfiles=2",
        "--openfiles=1",
        "--file_service_type=sequential",
        "--create_on_open=1",
        "--rate_iops=64",
        &format!("--directory={}", dir.path().display()),
        "--output-format=json",
    ]);
    let mut polls = 0;
    while !Path::new(&first).exists() {
        polls += 1;
        assert!(polls < 100_000, "fiox never created {first}");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 233) as u8).collect();
    std::fs::write(&second, &data).unwrap();
    let r = wait(child);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("refusing to write to {second}")),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(&second).unwrap(),
        data,
        "the user's file was written"
    );
}

/// --bandwidth-log's implicit `agg-*_bw.log` in the working directory: a user's file of that
/// name is not overwritten and a symbolic link there is not followed; both are reported.
#[test]
fn bandwidth_log_spares_user_files_and_symlinks() {
    let dir = TempDir::new("agglog-user");
    let mine = dir.join("agg-read_bw.log");
    std::fs::write(&mine, b"my notes\n").unwrap();
    let elsewhere = TempDir::new("agglog-target");
    let target = elsewhere.join("precious");
    std::fs::write(&target, b"precious\n").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("agg-write_bw.log")).unwrap();
    let args = [
        "--bandwidth-log",
        "--name=a",
        "--ioengine=null",
        "--rw=randrw",
        "--size=1m",
        "--output-format=json",
    ];
    let r = fiox_in(dir.path(), &args);
    assert!(
        r.stderr.contains("--bandwidth-log") && r.stderr.contains("agg-read_bw.log"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&mine).unwrap(), b"my notes\n");
    std::fs::remove_file(&mine).unwrap();
    let r = fiox_in(dir.path(), &args);
    assert!(
        r.stderr.contains("agg-write_bw.log") && r.stderr.contains("symbolic link"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"precious\n");
    // Logs fiox wrote itself are replaced by the next run, as fio does.
    std::fs::remove_file(dir.path().join("agg-write_bw.log")).unwrap();
    for _ in 0..2 {
        let r = fiox_in(dir.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(!r.stderr.contains("--bandwidth-log"), "{}", r.stderr);
    }
}

/// write_bw_log with a prefix: a user's file with the log's name is refused, not truncated;
/// fiox's own log from an earlier run is replaced.
#[test]
fn job_logs_spare_user_files() {
    let dir = TempDir::new("joblog-user");
    let mine = dir.join("p_bw.1.log");
    std::fs::write(&mine, b"keep\n").unwrap();
    let args = [
        "--name=j",
        "--ioengine=null",
        "--rw=read",
        "--size=1m",
        "--write_bw_log=p",
        "--output-format=json",
    ];
    let r = fiox_in(dir.path(), &args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("p_bw.1.log"), "{}", r.stderr);
    assert_eq!(std::fs::read(&mine).unwrap(), b"keep\n");
    std::fs::remove_file(&mine).unwrap();
    std::os::unix::fs::symlink("/nonexistent-fiox-target", &mine).unwrap();
    let r = fiox_in(dir.path(), &args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!Path::new("/nonexistent-fiox-target").exists());
    std::fs::remove_file(&mine).unwrap();
    for _ in 0..2 {
        let r = fiox_in(dir.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
}

/// verify_dump's `<file>.<offset>.received/expected` next to the data file: a symbolic link
/// there is not followed and a user's file is not overwritten; fiox's own dumps are replaced.
#[test]
fn verify_dump_spares_user_files_and_symlinks() {
    let dir = TempDir::new("vdump-user");
    let f = dir.join("f");
    let job = |rw: &str, extra: &[&str]| {
        let mut a = vec![
            "--name=v".to_string(),
            format!("--rw={rw}"),
            "--bs=4k".into(),
            "--size=64k".into(),
            format!("--filename={f}"),
            "--verify=crc32c".into(),
            "--output-format=json".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        fiox_in(dir.path(), &a)
    };
    assert_eq!(job("write", &[]).code, 0);
    let mut data = std::fs::read(&f).unwrap();
    data[8192 + 100] ^= 0x04;
    std::fs::write(&f, &data).unwrap();
    let elsewhere = TempDir::new("vdump-target");
    let target = elsewhere.join("precious");
    std::fs::write(&target, b"precious\n").unwrap();
    let received = dir.path().join("f.8192.received");
    let expected = dir.path().join("f.8192.expected");
    std::os::unix::fs::symlink(&target, &received).unwrap();
    std::fs::write(&expected, b"mine\n").unwrap();
    let r = job("read", &["--verify_dump=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("verify_dump failed") && r.stderr.contains("symbolic link"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"precious\n");
    std::fs::remove_file(&received).unwrap();
    let r = job("read", &["--verify_dump=1"]);
    assert!(r.stderr.contains("fiox did not create it"), "{}", r.stderr);
    assert_eq!(std::fs::read(&expected).unwrap(), b"mine\n");
    std::fs::remove_file(&expected).unwrap();
    for _ in 0..2 {
        let r = job("read", &["--verify_dump=1"]);
        assert!(!r.stderr.contains("verify_dump failed"), "{}", r.stderr);
        assert_eq!(std::fs::read(&expected).unwrap().len(), 4096);
    }
}
