//! Integration tests of fiox under real faults: a write job larger than a size-limited tmpfs
//! (fiox-testbed) meets ENOSPC, which must be reported by name with file, offset and length,
//! fail the job (exit 1, `error` in JSON) or be tolerated with `continue_on_error` (counted in
//! `total_err`, `first_error`).

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;

const MIB: u64 = 1 << 20;

fn small_tmpfs() -> Option<fiox_testbed::mount::TmpfsMount> {
    require_root("mounts a tmpfs");
    if !kernel_filesystem("tmpfs") {
        return None;
    }
    Some(fiox_testbed::mount::TmpfsMount::new(MIB).expect("mount a small tmpfs"))
}

fn write_4m(f: &Path, extra: &[&str]) -> Run {
    let mut a = vec![
        "--name=full".to_string(),
        "--rw=write".into(),
        "--bs=64k".into(),
        format!("--size={}", 4 * MIB),
        format!("--filename={}", f.display()),
        "--output-format=json".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    fiox(&a)
}

/// The offset named in "... (ENOSPC): write offset=N, length=65536".
fn enospc_offset(stderr: &str, f: &Path) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.contains("No space left on device (ENOSPC): write offset="))
        .unwrap_or_else(|| panic!("no ENOSPC line:\n{stderr}"));
    assert!(line.contains(&f.display().to_string()), "{line}");
    assert!(line.ends_with("length=65536"), "{line}");
    let off = line
        .split("offset=")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    off.parse().unwrap()
}

#[test]
fn enospc_fails_the_job_with_its_position() {
    let Some(m) = small_tmpfs() else { return };
    let f = m.path().join("f");
    let r = write_4m(&f, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let off = enospc_offset(&r.stderr, &f);
    // The filesystem filled up somewhere in its first MiB, at a block boundary.
    assert!(off <= MIB && off.is_multiple_of(64 << 10), "offset {off}");
    let v = r.json();
    assert_eq!(v["jobs"][0]["error"], libc::ENOSPC, "{v}");
    assert_eq!(
        issued(&v, "write").1,
        off,
        "bytes written before the failure"
    );
}

/// ENOSPC is survived only when listed: fio's continue_on_error covers EIO and EILSEQ unless
/// `ignore_error` gives the type its own list (which also turns continue_on_error on for it).
/// fio then still reports the first error as the job's `error`, with exit status 0.
#[test]
fn enospc_is_counted_when_ignore_error_lists_it() {
    let Some(m) = small_tmpfs() else { return };
    let f = m.path().join("f");
    let r = write_4m(&f, &["--ignore_error=,ENOSPC"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let job = &v["jobs"][0];
    let failed = job["total_err"].as_u64().unwrap();
    let counts = format!(
        "{failed} I/O error(s) were tolerated by continue_on_error/ignore_error (ENOSPC: {failed})"
    );
    let warning = &job["fiox"]["warnings"][0]["message"];
    assert!(warning.as_str().unwrap().contains(&counts), "{v}");
    assert_eq!(job["error"], libc::ENOSPC, "{v}");
    assert_eq!(job["first_error"], libc::ENOSPC, "{v}");
    let (ios, bytes) = issued(&v, "write");
    assert!(failed >= 48, "at most 1 MiB of 4 fits: {failed} errors");
    assert_eq!(
        ios, 64,
        "every block issued once, the failed ones included (fio's total)"
    );
    assert_eq!(bytes, (ios - failed) * (64 << 10));
}

/// `continue_on_error=all` does not survive ENOSPC in fio 3.33: err=28, total_err=1,
/// first_error=28, the failed write counted as issued, exit 1. fiox used to exit 0 with error 0.
#[test]
fn continue_on_error_all_still_stops_on_enospc() {
    let Some(m) = small_tmpfs() else { return };
    let f = m.path().join("f");
    let r = write_4m(&f, &["--continue_on_error=all"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    let job = &v["jobs"][0];
    assert_eq!(job["error"], libc::ENOSPC, "{v}");
    assert_eq!(job["total_err"], 1, "{v}");
    assert_eq!(job["first_error"], libc::ENOSPC, "{v}");
    let (ios, bytes) = issued(&v, "write");
    assert_eq!(
        ios,
        bytes / (64 << 10) + 1,
        "the failed write is issued too"
    );
    if need_fio() {
        std::fs::remove_file(&f).unwrap();
        let a = [
            "--name=full",
            "--rw=write",
            "--bs=64k",
            "--size=4m",
            &format!("--filename={}", f.display()),
            "--continue_on_error=all",
        ];
        // fio prints its "err=" line on stdout before the JSON: parse from the first brace.
        let out = std::process::Command::new("fio")
            .args(a)
            .arg("--output-format=json")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8_lossy(&out.stdout);
        let fio: serde_json::Value =
            serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        let fj = &fio["jobs"][0];
        for k in ["error", "total_err", "first_error"] {
            assert_eq!(fj[k], job[k], "{k}");
        }
        let (fios, fbytes) = issued(&fio, "write");
        assert_eq!(fios, fbytes / (64 << 10) + 1, "fio: {fj}");
    }
}

/// `error_dump=1` prints every error the job survives as it happens (fio 3.33 prints one
/// `io_u error` line per failed write on stderr); `error_dump=0`, fio's default, prints none.
/// Both tools print the same number of lines for the same job.
#[test]
fn error_dump_prints_each_survived_error() {
    let Some(m) = small_tmpfs() else { return };
    let f = m.path().join("f");
    let mut counts = Vec::new();
    for dump in ["0", "1"] {
        let _ = std::fs::remove_file(&f);
        let r = write_4m(
            &f,
            &["--ignore_error=,ENOSPC", &format!("--error_dump={dump}")],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let failed = r.json()["jobs"][0]["total_err"].as_u64().unwrap();
        let lines = r
            .stderr
            .lines()
            .filter(|l| l.contains("io_u error"))
            .count();
        counts.push((failed, lines as u64));
    }
    assert_eq!(counts[0].1, 0, "error_dump=0 prints nothing");
    assert!(counts[1].0 > 0);
    assert_eq!(counts[1].1, counts[1].0, "one line per survived error");
    if need_fio() {
        let _ = std::fs::remove_file(&f);
        let out = std::process::Command::new("fio")
            .args(["--name=full", "--rw=write", "--bs=64k", "--size=4m"])
            .arg(format!("--filename={}", f.display()))
            .args([
                "--ignore_error=,ENOSPC",
                "--error_dump=1",
                "--output=/dev/null",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let err = String::from_utf8_lossy(&out.stderr);
        let fio_lines = err.lines().filter(|l| l.contains("io_u error")).count();
        assert_eq!(fio_lines as u64, counts[1].0, "fio: {err}");
    }
}
