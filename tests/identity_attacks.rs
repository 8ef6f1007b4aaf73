//! The adversarial round of 2026-12-04 (issue 40): decisions bound to a path or a device
//! number instead of the object fiox uses. Each test is one reported case, run as the report
//! ran it, and checks that the user's bytes are intact and the refusal is clear.
#![allow(clippy::disallowed_methods)]

mod harness;

use harness::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A user's file of 20 KiB of data: larger than the 8 KiB a job writes, so nothing but the
/// allow stands between the job and its bytes (as in the report).
fn data() -> Vec<u8> {
    (0..20u32 << 10).map(|i| (i % 251) as u8).collect()
}

fn intact(p: &Path) -> bool {
    std::fs::read(p).is_ok_and(|b| b == data())
}

/// The N1/N5 setup: a file in a 0700 directory and, in a sticky world-writable directory,
/// a link to it owned by `nobody` (65534), as another local user plants it in /tmp.
fn planted_link(d: &Path) -> (PathBuf, PathBuf) {
    require_root("chown a link to another user");
    let v = d.join("V");
    std::fs::create_dir(&v).unwrap();
    let victim = v.join("important");
    std::fs::write(&victim, data()).unwrap();
    std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o700)).unwrap();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let link = tmp.join("bench.img");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    (victim, link)
}

fn write_job(file: &Path, size: &str) -> Vec<String> {
    vec![
        "--name=w".into(),
        "--rw=write".into(),
        "--bs=4k".into(),
        format!("--size={size}"),
        format!("--filename={}", file.display()),
        "--output-format=terse".into(),
    ]
}

/// N1: `--allow-destructive=PATH` where PATH is another user's link in a sticky directory:
/// root overwrote a file in a 0700 directory. The allowed path is resolved once through the
/// guard's walk, which refuses that link.
#[test]
fn n1_an_allowed_path_through_another_users_link_is_refused() {
    let dir = TempDir::new("n1");
    let (victim, link) = planted_link(dir.path());
    let mut args = write_job(&link, "8k");
    args.push(format!("--allow-destructive={}", link.display()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = fiox(&args);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(intact(&victim), "the victim changed: {}", r.stderr);
    assert!(r.stderr.contains("uid 65534"), "{}", r.stderr);
    // Allowing the real file by its own path still works (the user's own decision).
    let mut args = write_job(&victim, "8k");
    args.push(format!("--allow-destructive={}", victim.display()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = fiox(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// N5: the global `--allow-destructive` followed the same planted link. The job's open is
/// checked to be what the path reaches without another user's link in a sticky directory.
#[test]
fn n5_the_global_switch_does_not_follow_a_planted_link() {
    let dir = TempDir::new("n5");
    let (victim, link) = planted_link(dir.path());
    let mut args = write_job(&link, "64k");
    args.push("--allow-destructive".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = fiox(&args);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(intact(&victim), "the victim changed: {}", r.stderr);
    assert!(r.stderr.contains("sticky"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "one message: {}", r.stderr);
}

/// KDiskMark's flow (ecosystem report N1): its helper creates an empty temp file, fiox's
/// prepare run (`--create_only=1`) fills it, then the write tests run on it. fiox wrote every
/// byte in that file, so it is fiox's: no switch is needed.
#[test]
fn kdiskmark_an_empty_file_fiox_filled_is_fioxs() {
    let dir = TempDir::new("kdm");
    let f = dir.path().join("kdiskmark-Ab12Cd.tmp");
    std::fs::File::create(&f).unwrap(); // QTemporaryFile: empty, made by someone else
    let file = format!("--filename={}", f.display());
    let r = fiox(&[
        "--output-format=json",
        "--create_only=1",
        &file,
        "--size=1m",
        "--zero_buffers=0",
        "--name=prepare",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20);
    for rw in ["write", "randwrite", "randrw"] {
        let r = fiox(&[
            "--output-format=json",
            &file,
            "--size=1m",
            "--bs=4k",
            &format!("--rw={rw}"),
            "--name=w",
        ]);
        assert_eq!(r.code, 0, "{rw}: {}", r.stderr);
        assert!(r.stderr.is_empty(), "{rw}: {}", r.stderr);
    }
    // A file of holes only, written by a write job, is fiox's afterwards too.
    let h = dir.path().join("holes");
    std::fs::File::create(&h)
        .unwrap()
        .set_len(256 << 10)
        .unwrap();
    let hf = format!("--filename={}", h.display());
    for _ in 0..2 {
        let r = fiox(&[
            "--name=w",
            &hf,
            "--rw=write",
            "--bs=4k",
            "--output-format=terse",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    // A file with someone's data stays refused.
    let u = dir.path().join("user");
    std::fs::write(&u, data()).unwrap();
    let r = fiox(&[
        "--name=w",
        &format!("--filename={}", u.display()),
        "--rw=write",
        "--bs=4k",
        "--output-format=terse",
    ]);
    assert_ne!(r.code, 0);
    assert!(intact(&u));
}

/// A job file that fio ran first, then fiox: the refusal of a later stonewall group's file
/// came after the earlier groups ran their whole runtime, once per numjobs clone. Now it comes
/// before any group runs (group 1's file is never made), once, naming the fix.
#[test]
fn a_later_groups_refusal_comes_before_any_group_once_per_file() {
    let dir = TempDir::new("groups");
    let d = dir.path();
    std::fs::write(d.join("fio-made"), data()).unwrap();
    let job = format!(
        "[global]\nbs=4k\nsize=16k\ndirectory={}\n\n[first]\nrw=write\nfilename=first\n\n\
         [second]\nstonewall\nrw=randwrite\nfilename=fio-made\nnumjobs=2\n",
        d.display()
    );
    std::fs::write(d.join("j.fio"), job).unwrap();
    let r = fiox(&[
        &d.join("j.fio").display().to_string(),
        "--output-format=terse",
    ]);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(!d.join("first").exists(), "group 1 ran first: {}", r.stderr);
    assert_eq!(
        r.stderr.matches("fio-made").count(),
        1,
        "one message for the file: {}",
        r.stderr
    );
    assert!(r.stderr.contains("--allow-destructive"), "{}", r.stderr);
    assert!(intact(&d.join("fio-made")));
}

/// M2: `--allow-destructive=PATH` was ignored when the file had to be extended (the layout
/// refused it) while the refusal itself advised that very switch.
#[test]
fn m2_an_allowed_file_may_be_extended() {
    let dir = TempDir::new("m2");
    let f = dir.path().join("short");
    std::fs::write(&f, data()).unwrap();
    let mut args = write_job(&f, "64k");
    args.push(format!("--allow-destructive={}", f.display()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = fiox(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 64 << 10);
}

/// Run fiox with a deadline: a hang is killed (code -1 or 137) instead of hanging the suite.
fn fiox_bounded(args: &[&str]) -> Run {
    let o = std::process::Command::new("timeout")
        .args(["-s", "KILL", "60", fiox_bin()])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("timeout (coreutils)");
    Run::from(o)
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// H1-H3: a job file, an experiment's job_file or `--inflate-log` that is a FIFO or /dev/zero
/// read for ever (GiBs of memory in seconds), ignoring SIGINT and SIGTERM. Each is refused at
/// once, naming what it is.
#[test]
fn h1_h3_endless_inputs_are_refused_at_once() {
    let dir = TempDir::new("endless");
    let fifo = dir.path().join("job.fio");
    mkfifo(&fifo);
    let fifo_s = fifo.display().to_string();
    for (args, what) in [
        (vec![fifo_s.as_str()], "FIFO"),
        (vec!["/dev/zero"], "character device"),
        (vec!["--inflate-log=/dev/zero"], "character device"),
        (vec![&*format!("--inflate-log={fifo_s}")], "FIFO"),
    ] {
        let r = fiox_bounded(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(what), "{args:?}: {}", r.stderr);
    }
    for job in [fifo_s.as_str(), "/dev/zero"] {
        let e = dir.path().join("e.toml");
        std::fs::write(
            &e,
            format!("name = \"h1\"\njob_file = \"{job}\"\n[[variant]]\nname = \"a\"\n"),
        )
        .unwrap();
        let out = dir.path().join("out");
        let r = fiox_bounded(&[
            "experiment",
            &e.display().to_string(),
            &format!("--out={}", out.display()),
        ]);
        assert_eq!(r.code, 1, "{job}: {}", r.stderr);
        assert!(
            r.stderr.contains("FIFO") || r.stderr.contains("character device"),
            "{job}: {}",
            r.stderr
        );
    }
}
