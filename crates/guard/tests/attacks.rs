//! The attacks of the adversarial rounds against the guard's primitives: links planted at
//! names fiox makes, another user's link on the way, a parent directory swapped between a
//! check and a removal, a bind mount inside a tree fiox removes, outputs over users' files.
//! Scratch directories are made here (root runs the tests; links are given to uid 65534 with
//! lchown to play the other local user).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use fiox_guard::output::{self, Named, Open};
use fiox_guard::{tree, Dir, Layout};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fiox-guard-test-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn user_file(p: &Path) {
    fs::write(p, b"the user's data").unwrap();
}

fn intact(p: &Path) -> bool {
    fs::read(p)
        .map(|b| b == b"the user's data")
        .unwrap_or(false)
}

fn chown_link_to_nobody(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; lchown changes the link itself.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
}

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_link_planted_at_a_new_name_is_not_followed() {
    let d = scratch("plant");
    user_file(&d.join("victim"));
    std::os::unix::fs::symlink(d.join("victim"), d.join("new")).unwrap();
    let dir = Dir::open(&d).unwrap();
    let e = dir
        .create_file(OsStr::new("new"), 0o644, Layout::Complete)
        .unwrap_err();
    assert!(e.is_exists(), "{e}");
    let e = output::write(&d.join("new"), b"x", Named::ByFiox).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    // A path the user typed follows only root's or the user's own link: another user's is
    // refused.
    chown_link_to_nobody(&d.join("new"));
    let e = output::write(&d.join("new"), b"x", Named::ByUser).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(intact(&d.join("victim")));
    // M5: the EEXIST of a create says what is in the way, whose it is, and that fiox leaves it.
    for e in [
        dir.create_file(OsStr::new("new"), 0o644, Layout::Complete)
            .unwrap_err(),
        dir.create_dir(OsStr::new("new"), 0o755).unwrap_err(),
    ] {
        let m = e.to_string();
        assert!(e.is_exists(), "{m}");
        assert_eq!(m.matches("File exists").count(), 1, "{m}");
        assert!(
            m.contains("a symbolic link owned by uid 65534 (nobody) is there")
                && m.contains("fiox leaves what it did not make alone"),
            "{m}"
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn another_users_link_on_the_way_is_refused_and_ones_own_is_followed() {
    if !is_root() {
        panic!("this test plays another user with lchown: run it as root");
    }
    let d = scratch("walk");
    fs::create_dir(d.join("real")).unwrap();
    std::os::unix::fs::symlink(d.join("real"), d.join("mine")).unwrap();
    std::os::unix::fs::symlink(d.join("real"), d.join("theirs")).unwrap();
    chown_link_to_nobody(&d.join("theirs"));
    let real = Dir::open(&d.join("real")).unwrap();
    let mine = Dir::open(&d.join("mine")).unwrap();
    assert_eq!(mine.stat_self().id, real.stat_self().id);
    let e = Dir::open(&d.join("theirs")).unwrap_err();
    assert!(e.to_string().contains("uid 65534"), "{e}");
    let e = output::write(&d.join("theirs/out.json"), b"{}", Named::ByUser).unwrap_err();
    assert!(
        e.to_string().contains("symbolic link owned by uid 65534"),
        "{e}"
    );
    assert!(!d.join("real/out.json").exists());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_removal_stays_in_the_directory_it_checked_when_the_path_is_swapped() {
    // D5: the path's parent becomes a link to a directory of same-named user files between
    // the check and the removal; the descriptor still names the directory fiox checked.
    let d = scratch("swap");
    fs::create_dir(d.join("work")).unwrap();
    fs::create_dir(d.join("victim")).unwrap();
    let dir = Dir::open(&d.join("work")).unwrap();
    dir.create_file(OsStr::new("j.0.0"), 0o644, Layout::Complete)
        .unwrap();
    user_file(&d.join("victim/j.0.0"));
    fs::rename(d.join("work"), d.join("moved")).unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("work")).unwrap();
    assert!(dir.remove_owned(OsStr::new("j.0.0")).unwrap());
    assert!(intact(&d.join("victim/j.0.0")));
    assert!(!d.join("moved/j.0.0").exists());
    // And a user's file is never "owned", whatever its name.
    let victim = Dir::open(&d.join("victim")).unwrap();
    assert!(!victim.remove_owned(OsStr::new("j.0.0")).unwrap());
    assert!(intact(&d.join("victim/j.0.0")));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_copied_mark_does_not_make_a_file_fioxs() {
    let d = scratch("copy");
    let dir = Dir::open(&d).unwrap();
    dir.create_file(OsStr::new("made"), 0o644, Layout::Complete)
        .unwrap();
    // cp -a copies the xattr to a new inode.
    let st = std::process::Command::new("cp")
        .args(["-a", "--preserve=xattr"])
        .arg(d.join("made"))
        .arg(d.join("copy"))
        .status()
        .unwrap();
    assert!(st.success());
    assert!(!dir.mark_of(OsStr::new("copy")).unwrap().is_ours());
    assert!(!dir.remove_owned(OsStr::new("copy")).unwrap());
    assert!(d.join("copy").exists());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn outputs_replace_only_fioxs_own_and_atomically() {
    let d = scratch("out");
    let p = d.join("fiox-report.html");
    user_file(&p);
    let e = output::write(&p, b"<html>", Named::ByFiox).unwrap_err();
    assert!(e.to_string().contains("fiox did not create it"), "{e}");
    assert!(intact(&p));
    fs::remove_file(&p).unwrap();
    output::write(&p, b"one", Named::ByFiox).unwrap();
    output::write(&p, b"two", Named::ByFiox).unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"two");
    // No temporary names left behind.
    assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
    // A user-named output replaces a regular file, as a shell redirection would.
    let u = d.join("mine.json");
    user_file(&u);
    output::write(&u, b"{}", Named::ByUser).unwrap();
    assert_eq!(fs::read(&u).unwrap(), b"{}");
    // A FIFO is never written (nor opened in a way that blocks).
    let fifo = d.join("f.json");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    assert!(output::write(&fifo, b"{}", Named::ByUser).is_err());
    assert!(output::open(&fifo, Open::Truncate, Named::ByUser).is_err());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn streaming_outputs_append_to_fioxs_own_and_refuse_the_users() {
    let d = scratch("stream");
    let p = d.join("j.stdout");
    user_file(&p);
    assert!(output::open(&p, Open::Truncate, Named::ByFiox).is_err());
    assert!(intact(&p));
    fs::remove_file(&p).unwrap();
    use std::io::Write;
    output::open(&p, Open::Truncate, Named::ByFiox)
        .unwrap()
        .write_all(b"a")
        .unwrap();
    let mut f = output::open(&p, Open::Append, Named::ByFiox).unwrap();
    use std::io::Seek;
    f.seek(std::io::SeekFrom::End(0)).unwrap();
    f.write_all(b"b").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"ab");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_tree_removal_never_crosses_a_bind_mount() {
    // D3: a bind mount of the same filesystem (same st_dev) inside a directory fiox removes.
    if !is_root() {
        panic!("this test bind-mounts: run it as root");
    }
    let d = scratch("bind");
    fs::create_dir(d.join("userdata")).unwrap();
    user_file(&d.join("userdata/dataset"));
    let parent = Dir::open(&d).unwrap();
    let tb = parent
        .create_dir(OsStr::new("fiox-testbed-x"), 0o700)
        .unwrap();
    let id = tb.stat_self().id;
    tb.create_dir(OsStr::new("sub"), 0o700).unwrap();
    let st = std::process::Command::new("mount")
        .arg("--bind")
        .arg(d.join("userdata"))
        .arg(d.join("fiox-testbed-x/sub"))
        .status()
        .unwrap();
    assert!(st.success());
    let e = tree::remove_tree(&parent, OsStr::new("fiox-testbed-x"), &id).unwrap_err();
    let _ = std::process::Command::new("umount")
        .arg(d.join("fiox-testbed-x/sub"))
        .status();
    assert!(e.to_string().contains("mounted"), "{e}");
    assert!(intact(&d.join("userdata/dataset")));
    // Once unmounted, the tree goes.
    assert!(tree::remove_tree(&parent, OsStr::new("fiox-testbed-x"), &id).unwrap());
    assert!(!d.join("fiox-testbed-x").exists());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_tree_removal_refuses_a_directory_that_is_not_the_one_recorded() {
    // D1: a link (or someone's real directory) sits at the name fiox would have made.
    let d = scratch("d1");
    fs::create_dir(d.join("victim")).unwrap();
    user_file(&d.join("victim/secret"));
    let parent = Dir::open(&d).unwrap();
    let made = parent.create_dir(OsStr::new("mine"), 0o700).unwrap();
    let id = made.stat_self().id;
    fs::remove_dir(d.join("mine")).unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("mine")).unwrap();
    assert!(tree::remove_tree(&parent, OsStr::new("mine"), &id).is_err());
    fs::remove_file(d.join("mine")).unwrap();
    fs::rename(d.join("victim"), d.join("mine")).unwrap();
    assert!(tree::remove_tree(&parent, OsStr::new("mine"), &id).is_err());
    assert!(intact(&d.join("mine/secret")));
    // create_dir never adopts what is there.
    assert!(parent
        .create_dir(OsStr::new("mine"), 0o700)
        .unwrap_err()
        .is_exists());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn names_inside_a_directory_are_one_component() {
    let d = scratch("names");
    let dir = Dir::open(&d).unwrap();
    for bad in ["../x", "a/b", "..", ".", ""] {
        assert!(
            dir.create_file(OsStr::new(bad), 0o644, Layout::Complete)
                .is_err(),
            "{bad:?}"
        );
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_user_named_output_may_be_a_device_a_fiox_named_one_may_not() {
    output::write(Path::new("/dev/null"), b"x", Named::ByUser).unwrap();
    assert!(output::write(Path::new("/dev/null"), b"x", Named::ByFiox).is_err());
    // /dev/fd/N is root's link to this process's descriptor N, as /dev/stdout is to 1 (which
    // is not used here: truncating it would empty the file a CI log is redirected into).
    let (mut reader, writer) = std::io::pipe().unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&writer);
    let path = PathBuf::from(format!("/dev/fd/{fd}"));
    let mut out = output::open(&path, Open::Truncate, Named::ByUser).unwrap();
    std::io::Write::write_all(&mut out, b"through the link").unwrap();
    drop((out, writer));
    let mut got = String::new();
    std::io::Read::read_to_string(&mut reader, &mut got).unwrap();
    assert_eq!(got, "through the link");
}

#[test]
fn kernel_files_are_told_apart_from_data() {
    let f = fs::File::open("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(fiox_guard::kernel::pseudo_fs(&f), Some("procfs"));
    let f = fs::File::open("/sys/kernel/mm/transparent_hugepage/enabled")
        .or_else(|_| fs::File::open("/sys/power/state"))
        .unwrap();
    assert_eq!(fiox_guard::kernel::pseudo_fs(&f), Some("sysfs"));
    let f = fs::File::open(std::env::current_exe().unwrap()).unwrap();
    assert_eq!(fiox_guard::kernel::pseudo_fs(&f), None);
}

#[test]
fn a_new_whole_file_takes_a_free_name_only_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("create-in");
    let dir = Dir::open(&d).unwrap();
    output::create_in(&dir, OsStr::new("rec"), b"one", 0o600).unwrap();
    let e = output::create_in(&dir, OsStr::new("rec"), b"two", 0o600).unwrap_err();
    assert!(e.is_exists(), "{e}");
    assert_eq!(fs::read(d.join("rec")).unwrap(), b"one");
    let mode = fs::metadata(d.join("rec")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Replaced as fiox's own output, the mode asked for stays.
    output::write_in_mode(&dir, OsStr::new("rec"), b"three", Named::ByFiox, 0o600).unwrap();
    assert_eq!(fs::read(d.join("rec")).unwrap(), b"three");
    let names = dir.names().unwrap();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("rec")],
        "no temporary left"
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn missing_directories_are_made_one_by_one_and_a_planted_link_is_not_followed() {
    let d = scratch("open-or-create");
    let made = Dir::open_or_create(&d.join("a/b/c"), 0o700).unwrap();
    assert!(made.stat_self().mode & 0o777 == 0o700);
    assert!(d.join("a/b/c").is_dir());
    fs::create_dir(d.join("victim")).unwrap();
    std::os::unix::fs::symlink(d.join("victim"), d.join("x")).unwrap();
    if is_root() {
        chown_link_to_nobody(&d.join("x"));
        let e = Dir::open_or_create(&d.join("x/state"), 0o700).unwrap_err();
        assert!(e.to_string().contains("uid 65534"), "{e}");
        assert!(!d.join("victim/state").exists());
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn filecreate_says_it_created_a_file_only_when_its_own_open_did() {
    // The answer comes from the open (O_EXCL first), never from a look before it: a user's
    // file that appears just before the open is opened as existing, not claimed as fiox's.
    let d = scratch("createopen");
    let dir = Dir::open(&d).unwrap();
    let (_, created) = dir.create_or_open("new".as_ref(), 0o600).unwrap();
    assert!(created, "a missing name is created");
    user_file(&d.join("users"));
    let (f, created) = dir.create_or_open("users".as_ref(), 0o600).unwrap();
    assert!(!created, "an existing file is opened, not created");
    assert_eq!(f.metadata().unwrap().len(), 15, "and never truncated");
    assert!(intact(&d.join("users")));
    std::os::unix::fs::symlink(d.join("users"), d.join("link")).unwrap();
    assert!(
        dir.create_or_open("link".as_ref(), 0o600).is_err(),
        "a link is not followed"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A tracefs instance is made and removed only on tracefs: the same name under a plain
/// directory (a path that resolves off the tracing filesystem) is refused, both ways.
#[test]
fn trace_instances_only_on_tracefs() {
    use fiox_guard::kernel;
    let d = scratch("traceinst");
    let p = d.join("instances");
    fs::create_dir(&p).unwrap();
    let inst = p.join("fiox-x");
    assert!(kernel::make_trace_instance(&inst).is_err());
    assert!(!inst.exists());
    fs::create_dir(&inst).unwrap();
    let id = Dir::open(&p)
        .unwrap()
        .stat(OsStr::new("fiox-x"))
        .unwrap()
        .unwrap()
        .id;
    assert!(kernel::remove_trace_instance(&inst, &id).is_err());
    assert!(inst.exists());
    let t = Path::new("/sys/kernel/tracing/instances");
    if is_root() && t.is_dir() {
        let real = t.join(format!("fiox-guard-test-{}", std::process::id()));
        let id = kernel::make_trace_instance(&real).unwrap().unwrap();
        assert!(real.join("trace").exists());
        assert_eq!(kernel::make_trace_instance(&real).unwrap(), None);
        assert!(kernel::remove_trace_instance(&real, &id).unwrap());
        assert!(!real.exists());
    }
    fs::remove_dir_all(&d).unwrap();
}
