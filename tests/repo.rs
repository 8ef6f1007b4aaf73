//! The repository tests itself alone: a plain `git clone` runs `cargo test --workspace` with
//! nothing beside it, and CI runs every test binary even when one fails. These tests read the
//! repository's own files (no I/O benchmark runs).

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every Rust file under `dir`, recursively (target directories left out).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// No test or source file reaches outside the repository for its data (the fio reference
/// outputs once came from a sibling `shared/` directory, so a fresh clone failed its tests).
#[test]
fn no_test_reads_data_from_outside_the_repository() {
    let mut files = Vec::new();
    for d in ["src", "tests", "crates", "bench", "fuzz"] {
        rust_files(&root().join(d), &mut files);
    }
    assert!(files.len() > 20, "found only {} Rust files", files.len());
    let me = Path::new(file!()).file_name().unwrap();
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| f.file_name() != Some(me)) {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.contains("shared/reference") || line.contains("../shared") {
                bad.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "files outside the repository:\n{}",
        bad.join("\n")
    );
}

/// The golden tests' fio 3.33 reference outputs live in the repository.
#[test]
fn fio_reference_outputs_are_in_the_repository() {
    let dir = root().join("crates/report/tests/data/fio-3.33-reference");
    for f in [
        "randrw-libaio.normal.txt",
        "randrw-libaio.json",
        "randrw-libaio.terse.txt",
        "randread-psync.jsonplus.json",
    ] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        assert!(
            text.contains("3.33"),
            "{f}: missing or not fio 3.33's output"
        );
    }
}

/// CI's test command runs every test binary even when one fails, so one failure does not hide
/// the others.
#[test]
fn ci_runs_every_test_binary() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let cmd: Vec<&str> = ci
        .lines()
        .filter(|l| l.trim_start().starts_with("cargo test"))
        .collect();
    assert!(!cmd.is_empty(), ".ci/run runs no `cargo test`");
    for l in cmd {
        assert!(l.contains("--workspace"), "{l}");
        assert!(l.contains("--no-fail-fast"), "{l}");
    }
}

/// fiox's code names its own descriptors through /proc/thread-self/fd, never /proc/self/fd:
/// a job thread with its own file table (runner's fdtable.rs) would otherwise reach the main
/// thread's descriptor of the same number, another file or none (a log appended to, or a
/// signature probed, in the wrong file).
#[test]
fn descriptors_are_named_through_thread_self() {
    let mut files = Vec::new();
    for d in ["src", "crates"] {
        rust_files(&root().join(d), &mut files);
    }
    let needle = ["/proc/", "self/fd"].concat();
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.lines()
                .enumerate()
                .filter(|(_, l)| l.contains(&needle))
                .map(|(i, l)| format!("{}:{}: {}", f.display(), i + 1, l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        bad.is_empty(),
        "use /proc/thread-self/fd:\n{}",
        bad.join("\n")
    );
}
