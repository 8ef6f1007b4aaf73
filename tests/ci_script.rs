//! README's test command, `sudo ci/test.sh`, finds the Rust toolchain of the user who typed it
//! (issue 41): `sudo` replaces PATH with the system's secure_path, which has no rustup cargo, and
//! the script used to install 500 packages and then fail with `cargo: command not found`. These
//! tests run the script's `--print-cargo` mode (the toolchain discovery alone, before anything
//! is installed) so the suite does not run itself.

#![allow(clippy::disallowed_methods)]

mod harness;

use harness::{require_tool, TempDir};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// A PATH like Debian's sudo secure_path, without /usr/local (where a machine-wide cargo may be).
const SECURE_PATH: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs `c`, again while an executable it starts is "busy": a script this test process has just
/// written can still be open for writing in a child that another test's thread forked and that
/// has not reached exec yet (ETXTBSY, which failed CI once). The window is a fork's length, so a
/// few short retries end it.
fn output_of(c: &mut Command) -> Output {
    for _ in 0..50 {
        match c.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {}
            Ok(o) if String::from_utf8_lossy(&o.stderr).contains("Text file busy") => {}
            r => return r.expect("run the command"),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    c.output().expect("run the command")
}

/// A copy of the script, its toolchain finder and Cargo.toml (the minimum Rust version) in
/// `dir`, readable by any user: returns the copy of ci/test.sh.
fn copy_of_the_script(dir: &TempDir) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.path().join("ci")).unwrap();
    for f in [
        "ci/test.sh",
        "ci/toolchain.sh",
        "Cargo.toml",
        "ci/packages.txt",
    ] {
        std::fs::copy(root().join(f), dir.path().join(f)).unwrap();
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir.path().join("ci/test.sh")
}

/// README's command through the real `sudo`, with a PATH lacking cargo and a HOME without a
/// toolchain: the script finds the caller's rustup cargo (SUDO_USER's home) and says which.
#[test]
fn sudo_ci_test_finds_the_callers_cargo_without_it_on_path() {
    require_tool("sudo");
    let home = TempDir::under(Path::new("/tmp"), "ci-home");
    let o = Command::new("sudo")
        .args(["env", &format!("PATH={SECURE_PATH}")])
        .arg(format!("HOME={}", home.path().display()))
        .arg(root().join("ci/test.sh"))
        .arg("--print-cargo")
        .env_remove("CARGO_HOME")
        .env_remove("RUSTUP_HOME")
        .output()
        .expect("run sudo");
    let (out, err) = text(&o);
    assert!(o.status.success(), "exit {:?}\n{out}\n{err}", o.status);
    assert!(err.is_empty(), "stderr: {err}");
    let cargo = out
        .lines()
        .find_map(|l| l.strip_prefix("cargo: "))
        .unwrap_or_else(|| panic!("no cargo line: {out}"));
    assert!(cargo.contains("(cargo 1."), "{out}");
    // The cargo it names runs, with the RUSTUP_HOME it names.
    let path = cargo.split(" (").next().unwrap();
    let rustup = out
        .lines()
        .find_map(|l| l.strip_prefix("RUSTUP_HOME: "))
        .unwrap();
    let mut c = Command::new(path);
    c.arg("--version").env("PATH", SECURE_PATH);
    if rustup.starts_with('/') {
        c.env("RUSTUP_HOME", rustup);
    }
    let v = output_of(&mut c);
    assert!(v.status.success(), "{path}: {}", text(&v).1);
}

/// rustup's layout: HOME/.cargo/bin/cargo is a proxy that needs HOME/.rustup, and a cargo older
/// than the workspace's rust-version on PATH (Debian's 1.63) is passed over.
#[test]
fn a_rustup_proxy_runs_with_its_homes_rustup_and_an_old_cargo_is_passed_over() {
    let dir = TempDir::under(Path::new("/tmp"), "ci-rustup");
    let test_sh = copy_of_the_script(&dir);
    let home = dir.path().join("home");
    let rustup = home.join(".rustup");
    std::fs::create_dir_all(&rustup).unwrap();
    script(
        &home.join(".cargo/bin/cargo"),
        &format!(
            "[ \"$RUSTUP_HOME\" = '{}' ] || {{ echo 'error: rustup could not choose a version' >&2; exit 1; }}\n\
             echo 'cargo 1.99.0 (proxy)'",
            rustup.display()
        ),
    );
    let old = dir.path().join("old-bin");
    script(&old.join("cargo"), "echo 'cargo 1.63.0'");
    let o = output_of(
        Command::new(&test_sh)
            .arg("--print-cargo")
            .env_clear()
            .env("PATH", format!("{}:{SECURE_PATH}", old.display()))
            .env("HOME", &home),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "exit {:?}\n{out}\n{err}", o.status);
    assert_eq!(
        out,
        format!(
            "cargo: {}/.cargo/bin/cargo (cargo 1.99.0 (proxy))\nRUSTUP_HOME: {}\n",
            home.display(),
            rustup.display()
        )
    );
}

/// With no usable cargo anywhere, the script stops before installing anything, says what it
/// tried and how to get Rust, and prints no test summary (it used to install ~500 packages,
/// then fail with exit 127 and a "0 test(s) skipped" line).
#[test]
fn without_a_cargo_the_script_stops_before_installing_and_says_why() {
    require_tool("setpriv");
    let dir = TempDir::under(Path::new("/tmp"), "ci-nocargo");
    let test_sh = copy_of_the_script(&dir);
    let old = dir.path().join("old-bin");
    script(&old.join("cargo"), "echo 'cargo 1.63.0'");
    // As `nobody` (home /nonexistent): no root home with a toolchain to fall back on.
    let o = output_of(
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&test_sh)
            .env_clear()
            .env("PATH", format!("{}:{SECURE_PATH}", old.display()))
            .env("HOME", "/nonexistent"),
    );
    let (out, err) = text(&o);
    let toml = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let min = toml
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(out.is_empty(), "stdout: {out}");
    assert!(
        err.contains(&format!("no cargo {min} or newer found")),
        "{err}"
    );
    assert!(
        err.contains(&format!("cargo 1.63.0, older than {min}")),
        "{err}"
    );
    assert!(err.contains("rustup"), "{err}");
    assert!(!err.contains("skipped"), "{err}");
}
