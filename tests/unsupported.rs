//! The `fiox` binary with jobs that use fio features fiox parses but cannot run yet:
//! `--parse-only` names them on stderr and exits 1 (the jobs parsed, but will not run); a run
//! is refused before any I/O with the same lines and exit code 1.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;

const FLOW_LINE: &str =
    "fiox: job a: `gpu_dev_id` is a fio option that fiox does not support yet (needs a CUDA GPU); this job will not run\n";
const HTTP_LINE: &str = "fiox: job b: ioengine `http` is a fio engine that fiox does not support yet; this job will not run\n";

fn job_file(dir: &TempDir) -> String {
    let path = dir.join("u.fio");
    let text = format!(
        "[global]\ndirectory={}\nsize=1m\n[a]\nrw=write\ngpu_dev_id=1\n[b]\nioengine=http\nhttp_host=localhost\nhttp_mode=s3\n",
        dir.path().display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn parse_only_names_what_is_not_supported() {
    let dir = TempDir::new("unsup-parse");
    let file = job_file(&dir);
    let r = fiox(&["--parse-only", &file]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "{FLOW_LINE}{HTTP_LINE}fiox: job b: `http_host` is a fio option that fiox does not support yet; this job will not run\n\
             fiox: job b: `http_mode` is a fio option that fiox does not support yet; this job will not run\n"
        )
    );
}

#[test]
fn running_is_refused_before_any_io() {
    let dir = TempDir::new("unsup-run");
    let file = job_file(&dir);
    let r = fiox(&[&file]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.starts_with(FLOW_LINE), "{}", r.stderr);
    assert!(r.stderr.contains(HTTP_LINE), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "no report: {}", r.stdout);
    // Nothing was laid out or written: only the job file is in the directory.
    assert_eq!(dir.entries(), ["u.fio"]);
    let bad = fiox(&[
        "--parse-only",
        "--name=x",
        "--ioengine=http",
        "--http_mode=ftp",
    ]);
    assert_eq!(bad.code, 1);
    assert_eq!(
        bad.stderr,
        "fiox: command line: http_mode=ftp: 'ftp' is not one of webdav, s3, swift\n"
    );
}

#[test]
fn a_later_supported_value_clears_the_refusal() {
    let r = fiox(&[
        "--parse-only",
        "--name=c",
        "--verify=meta",
        "--verify=crc32c",
        "--ioengine=http",
        "--ioengine=psync",
    ]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

#[test]
fn fio_switches_parse_and_refuse_with_the_reason() {
    let r = fiox(&[
        "--parse-only",
        "--trigger-remote=true",
        "--name=x",
        "--size=1m",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "fiox: `--trigger-remote=true` is a fio switch that fiox does not support yet (fiox's \
         client has no --trigger-remote yet); nothing will run\n"
    );
    // --debug runs (tests/fio_jobflow.rs): accepted.
    let ok = fiox(&["--parse-only", "--debug=io,file", "--name=x", "--size=1m"]);
    assert_eq!((ok.code, ok.stderr.as_str()), (0, ""));
    // fio's server (tests/netserver.rs) with a bad address is refused, not answered with the
    // usage.
    let r = fiox(&["--server=ip:127.0.0.1,0"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(r.stderr.contains("bad server port '0'"), "{}", r.stderr);
    let bad = fiox(&["--parse-only", "--debug=disk", "--name=x"]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("unknown category 'disk'"),
        "{}",
        bad.stderr
    );
    // --alloc-size sizes fio's shared-memory pool, which fiox does not have: accepted.
    let ok = fiox(&["--parse-only", "--alloc-size=32768", "--name=x"]);
    assert_eq!((ok.code, ok.stderr.as_str()), (0, ""));
}
