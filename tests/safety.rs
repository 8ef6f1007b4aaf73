//! Integration tests of fiox's data-safety rules: existing files fiox did not create are never
//! written without an explicit allow, files fiox laid out are reused, `unlink` removes only
//! fiox's files, and `--readonly` keeps every byte of every target unchanged.

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
    let ok = sh("python3", &["-c", code, &p]).is_ok();
    std::fs::remove_file(&p).unwrap();
    ok
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
        eprintln!(
            "skipped: {} has no user extended attributes",
            dir.path().display()
        );
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
    let m = match fiox_testbed::mount::TmpfsMount::ramfs() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("skipped: cannot mount a ramfs: {e}");
            return;
        }
    };
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
