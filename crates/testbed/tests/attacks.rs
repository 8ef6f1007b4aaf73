//! The adversarial round's attacks on managed testbeds (report 2026-11-27: D1, D3, D4, D10,
//! M4), as tests: scratch directories, loop devices, mounts, another user's links (uid 65534
//! via lchown) and forged records are made here, in a state directory of each test's own.
//! They need root (loop devices, mounts) and fail without; a kernel without the loop driver or
//! tmpfs skips them (recorded by the harness).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use fiox_testbed::managed::{self, Spec, State};
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace's test harness for what a test needs from the machine.
#[path = "../../../tests/harness/need.rs"]
mod need;

/// Root, loop devices and tmpfs: fails without root, false (skip recorded) without the others.
fn root() -> bool {
    need::loop_devices() && need::kernel_filesystem("tmpfs")
}

/// A fresh scratch directory with a state directory inside.
fn scratch(tag: &str) -> (PathBuf, State) {
    let d = Path::new("/var/tmp").join(format!("fiox-tb-attack-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(d.join("state")).unwrap();
    let state = State::at(&d.join("state"));
    (d, state)
}

fn user_file(p: &Path) {
    fs::write(p, b"the user's data").unwrap();
}

fn intact(p: &Path) -> bool {
    fs::read(p).is_ok_and(|b| b == b"the user's data")
}

fn lchown_nobody(p: &Path) {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; lchown changes the link itself.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
}

fn spec(kind: &str, pairs: &[(&str, &str)]) -> Spec {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Spec::from_pairs(kind, &pairs).unwrap()
}

fn run(cmd: &str, args: &[&str]) {
    let st = Command::new(cmd).args(args).status().unwrap();
    assert!(st.success(), "{cmd} {args:?}");
}

/// A record file as a forger writes it: root's, mode 0600 unless told otherwise.
fn forge(state: &State, name: &str, body: &str, mode: u32) {
    let p = state.path().join(format!("{name}.testbed"));
    fs::write(
        &p,
        format!("fiox-testbed 2\nname {name}\nkind loop\nowner 999999 1\n{body}"),
    )
    .unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
}

/// D1 and M8: another user's link (in a sticky world-writable directory) or a real directory
/// at the name `fiox-testbed-NAME-PID`: left alone, and passed over for another name (it used
/// to fail the make: anyone who can guess the pid can block a testbed).
#[test]
fn d1_something_planted_at_the_testbed_name_is_never_emptied() {
    if !root() {
        return;
    }
    let (d, state) = scratch("d1");
    let (tmp, victim) = (d.join("tmp"), d.join("victim"));
    fs::create_dir_all(victim.join("nested")).unwrap();
    user_file(&victim.join("secret1"));
    user_file(&victim.join("nested/secret2"));
    fs::create_dir(&tmp).unwrap();
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o1777)).unwrap();
    let pid = std::process::id();
    let link = tmp.join(format!("fiox-testbed-t1-{pid}"));
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    lchown_nobody(&link);
    let real = tmp.join(format!("fiox-testbed-t5-{pid}"));
    fs::create_dir(&real).unwrap();
    user_file(&real.join("keep"));
    for (name, kind) in [("t1", "loop"), ("t1", "tmpfs"), ("t5", "loop")] {
        let s = spec(kind, &[("size", "8m"), ("dir", tmp.to_str().unwrap())]);
        let rec = managed::up_in(&state, &s, Some(name), true).unwrap();
        let planted = tmp.join(format!("fiox-testbed-{name}-{pid}"));
        let made = rec
            .steps
            .iter()
            .find_map(|st| match st {
                managed::Step::Tree { path, .. } => Some(path.clone()),
                _ => None,
            })
            .expect("a directory step");
        assert!(
            made != planted
                && made
                    .to_string_lossy()
                    .starts_with(&format!("{}-", planted.display())),
            "{made:?}"
        );
        managed::down_in(&state, name).unwrap();
        assert!(!made.exists(), "{made:?}");
    }
    assert!(intact(&victim.join("secret1")) && intact(&victim.join("nested/secret2")));
    assert!(intact(&real.join("keep")));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let l = managed::list_in(&state).unwrap();
    assert!(l.records.is_empty() && l.skipped.is_empty(), "{l:?}");
    fs::remove_dir_all(&d).unwrap();
}

/// D3: a bind mount placed in a testbed's directory: `down` refuses to cross it, the bound
/// directory's files stay, and once it is unmounted `down` finishes.
#[test]
fn d3_down_never_deletes_inside_a_bind_mount() {
    if !root() {
        return;
    }
    let (d, state) = scratch("d3");
    let user = d.join("userdata");
    fs::create_dir(&user).unwrap();
    user_file(&user.join("dataset1"));
    let s = spec("loop", &[("size", "8m"), ("dir", d.to_str().unwrap())]);
    let rec = managed::up_in(&state, &s, Some("ae"), true).unwrap();
    let dir = d.join(format!("fiox-testbed-ae-{}", std::process::id()));
    fs::create_dir(dir.join("sub")).unwrap();
    run(
        "mount",
        &[
            "--bind",
            user.to_str().unwrap(),
            dir.join("sub").to_str().unwrap(),
        ],
    );
    let e = managed::down_in(&state, "ae").unwrap_err().to_string();
    assert!(e.contains("mounted"), "{e}");
    assert!(intact(&user.join("dataset1")));
    // M7: a removal that failed partway is no longer listed as a ready testbed.
    let l = managed::list_in(&state).unwrap();
    let r = l
        .records
        .iter()
        .find(|r| r.name == "ae")
        .expect("the record stays");
    assert!(!r.ready, "{r:?}");
    assert_eq!(r.info.get("state").map(String::as_str), Some("removing"));
    run("umount", &[dir.join("sub").to_str().unwrap()]);
    managed::down_in(&state, "ae").unwrap();
    assert!(!dir.exists(), "{rec:?}");
    assert!(intact(&user.join("dataset1")));
    fs::remove_dir_all(&d).unwrap();
}

/// D4 and M4: forged and tampered records (a link named like a testbed directory, `..` after
/// one, a non-fiox process, wrong mode or owner, a record cut short) delete, unmount, detach
/// and kill nothing, are reported, and do not stop the valid ones.
#[test]
fn d4_forged_records_act_on_nothing_and_stop_nothing() {
    if !root() {
        return;
    }
    let (d, state) = scratch("d4");
    let b = d.join("B");
    fs::create_dir_all(b.join("victim")).unwrap();
    fs::create_dir_all(b.join("fiox-testbed-x")).unwrap();
    fs::create_dir_all(b.join("mnt")).unwrap();
    user_file(&b.join("victim/v1"));
    std::os::unix::fs::symlink(b.join("victim"), b.join("fiox-testbed-lnk")).unwrap();
    run(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=4m",
            "advB",
            b.join("mnt").to_str().unwrap(),
        ],
    );
    user_file(&b.join("mnt/inmount"));
    let img = b.join("myimg.img");
    fs::write(&img, vec![0u8; 1 << 20]).unwrap();
    let lo = fiox_testbed::LoopDevice::attach(&img, &Default::default()).unwrap();
    let m = fs::metadata(&img).unwrap();
    use std::os::unix::fs::MetadataExt;
    let (dev, ino) = (m.dev(), m.ino());
    let vm = fs::metadata(b.join("victim")).unwrap();
    let mut sh = Command::new("sh")
        .args(["-c", "sleep 120", "serve-slow"])
        .spawn()
        .unwrap();
    let start = fiox_guard::process::start_time(sh.id()).unwrap();
    let bs = b.display();
    forge(
        &state,
        "lnk",
        &format!("tree {} {} - {bs}/fiox-testbed-lnk\n", vm.dev(), vm.ino()),
        0o600,
    );
    // A well-formed record with the user's directory's true identity: not fiox's mark.
    let vid = fiox_guard::Identity::of(&vm);
    let vb = vid.btime().map_or("-".to_string(), |t| t.to_string());
    forge(
        &state,
        "users",
        &format!("tree {} {} {vb} {bs}/victim\n", vm.dev(), vm.ino()),
        0o600,
    );
    forge(
        &state,
        "dotdot",
        &format!("mount 1 {bs}/fiox-testbed-x/../mnt\n"),
        0o600,
    );
    forge(
        &state,
        "loop",
        &format!("loops-over {dev} {ino} {bs}/fiox-testbed-x/../myimg.img\n"),
        0o600,
    );
    forge(
        &state,
        "loop2",
        &format!("loops-over {dev} {ino} {bs}/myimg.img\n"),
        0o600,
    );
    forge(
        &state,
        "proc",
        &format!("process {} {start}\n", sh.id()),
        0o600,
    );
    forge(&state, "open", "", 0o644);
    fs::write(
        state.path().join("half.testbed"),
        "fiox-testbed 2\nname half\nki",
    )
    .unwrap();
    fs::set_permissions(
        state.path().join("half.testbed"),
        fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    forge(&state, "theirs", "", 0o600);
    lchown_nobody(&state.path().join("theirs.testbed"));
    forge(&state, "empty", "", 0o600); // valid, orphaned, nothing to undo

    let listing = managed::list_in(&state).unwrap();
    let skipped: Vec<String> = listing.skipped.iter().map(|s| s.to_string()).collect();
    assert_eq!(listing.skipped.len(), 5, "{skipped:#?}"); // dotdot, loop, open, half, theirs
    let report = managed::cleanup_in(&state).unwrap();
    assert_eq!(report.removed, vec!["empty".to_string()], "{report:?}");
    let failed: Vec<&str> = report.failed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(failed, ["lnk", "loop2", "proc", "users"], "{report:?}");
    assert!(intact(&b.join("victim/v1")), "victim emptied");
    assert!(intact(&b.join("mnt/inmount")), "tmpfs unmounted");
    assert_eq!(
        fiox_testbed::loopdev::sys_backing_file(&lo.name()),
        Some(img.clone())
    );
    assert!(
        fiox_guard::process::running(sh.id(), start),
        "process killed"
    );
    sh.kill().unwrap();
    sh.wait().unwrap();
    drop(lo);
    run("umount", &[b.join("mnt").to_str().unwrap()]);
    fs::remove_dir_all(&d).unwrap();
}

/// D10: a link or a user's file at the names the state directory's writes could use (the old
/// `NAME.tmp`, the record's own name) is neither written through nor replaced.
#[test]
fn d10_the_state_directory_writes_through_no_link_and_over_no_user_file() {
    if !root() {
        return;
    }
    let (d, state) = scratch("d10");
    let victim = d.join("victim");
    user_file(&victim);
    std::os::unix::fs::symlink(&victim, state.path().join("tb1.tmp")).unwrap();
    user_file(&state.path().join("tb2.tmp"));
    std::os::unix::fs::symlink(&victim, state.path().join("tb3.testbed")).unwrap();
    let s = spec("tmpfs", &[("size", "4m"), ("dir", d.to_str().unwrap())]);
    managed::up_in(&state, &s, Some("tb1"), true).unwrap();
    managed::up_in(&state, &s, Some("tb2"), true).unwrap();
    let e = managed::up_in(&state, &s, Some("tb3"), true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a testbed named tb3 exists"), "{e}");
    assert!(intact(&victim) && intact(&state.path().join("tb2.tmp")));
    let mode = fs::metadata(state.path().join("tb1.testbed"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    managed::down_in(&state, "tb1").unwrap();
    managed::down_in(&state, "tb2").unwrap();
    assert!(intact(&victim));
    fs::remove_dir_all(&d).unwrap();
}

/// M4: ENOSPC in the state directory while claiming a name leaves no record holding it.
#[test]
fn m4_a_full_state_directory_leaves_no_empty_record() {
    if !root() {
        return;
    }
    let (d, _) = scratch("m4");
    let full = d.join("full");
    fs::create_dir(&full).unwrap();
    run(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=4k",
            "fullB",
            full.to_str().unwrap(),
        ],
    );
    fs::create_dir(full.join("state")).unwrap();
    let mut filler = fs::File::create(full.join("filler")).unwrap();
    use std::io::Write;
    while filler.write_all(&[0u8; 1024]).is_ok() {}
    drop(filler);
    let state = State::at(&full.join("state"));
    let s = spec("tmpfs", &[("size", "4m"), ("dir", d.to_str().unwrap())]);
    let e = managed::up_in(&state, &s, Some("n1"), true)
        .unwrap_err()
        .to_string();
    assert_eq!(e.matches("No space left").count(), 1, "{e}");
    assert_eq!(fs::read_dir(full.join("state")).unwrap().count(), 0);
    drop(state);
    umount_when_free(&full);
    fs::remove_dir_all(&d).unwrap();
}

/// Unmount the test's tmpfs, waiting out EBUSY for a while: a child another test thread has
/// just forked holds every descriptor this process had open until it execs, which on a busy
/// 2-CPU machine was once long enough to fail a plain umount (a fresh Debian root's run).
fn umount_when_free(p: &Path) {
    for _ in 0..250 {
        if Command::new("umount").arg(p).status().unwrap().success() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    run("umount", &["-l", p.to_str().unwrap()]);
}

/// N2 (report 2026-12-04): an experiment kept writing /dev/loopN after its loop testbed was
/// detached and another image attached at that number. `prove` re-proves the testbed (its
/// record, and the device still bound to the backing inode fiox made) before each run.
#[test]
fn n2_a_loop_testbed_whose_device_changed_is_no_longer_proven() {
    if !root() {
        return;
    }
    let (d, state) = scratch("n2");
    let s = spec("loop", &[("size", "8m"), ("dir", d.to_str().unwrap())]);
    let rec = managed::up_in(&state, &s, Some("lr"), true).unwrap();
    managed::prove_in(&state, &rec).unwrap();
    let dev = rec.target.to_str().unwrap().to_string();
    let other = d.join("my.img");
    fs::File::create(&other).unwrap().set_len(8 << 20).unwrap();
    // Someone (root) detaches the device and attaches their image at the same number.
    run("losetup", &["-d", &dev]);
    run("losetup", &[&dev, other.to_str().unwrap()]);
    let e = managed::prove_in(&state, &rec).unwrap_err();
    assert!(e.contains("no longer bound"), "{e}");
    run("losetup", &["-d", &dev]);
    let _ = managed::down_in(&state, "lr");
    let _ = managed::cleanup_in(&state);
    let _ = fs::remove_dir_all(&d);
}
