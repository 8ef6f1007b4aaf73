//! Integration tests of fiox under real faults: a write job larger than a size-limited tmpfs
//! (fiox-testbed) meets ENOSPC, which must be reported by name with file, offset and length,
//! fail the job (exit 1, `error` in JSON) or be tolerated with `continue_on_error` (counted in
//! `total_err`, `first_error`).

mod harness;

use harness::*;
use std::path::Path;

const MIB: u64 = 1 << 20;

fn small_tmpfs() -> Option<fiox_testbed::mount::TmpfsMount> {
    match fiox_testbed::mount::TmpfsMount::new(MIB) {
        Ok(m) => Some(m),
        Err(e) => {
            eprintln!("skipped: cannot mount a small tmpfs: {e}");
            None
        }
    }
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

#[test]
fn enospc_is_counted_with_continue_on_error() {
    let Some(m) = small_tmpfs() else { return };
    let f = m.path().join("f");
    let r = write_4m(&f, &["--continue_on_error=write"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    let job = &v["jobs"][0];
    let failed = job["total_err"].as_u64().unwrap();
    let counts = format!(
        "{failed} I/O error(s) were tolerated by continue_on_error/ignore_error (ENOSPC: {failed})"
    );
    assert!(r.stderr.contains(&counts), "{}", r.stderr);
    let warning = &job["fiox"]["warnings"][0]["message"];
    assert!(warning.as_str().unwrap().contains(&counts), "{v}");
    assert_eq!(job["error"], 0, "{v}");
    assert_eq!(job["first_error"], libc::ENOSPC, "{v}");
    let (ios, bytes) = issued(&v, "write");
    assert!(failed >= 48, "at most 1 MiB of 4 fits: {failed} errors");
    assert_eq!(ios + failed, 64, "every block issued once");
    assert_eq!(bytes, ios * (64 << 10));
}
