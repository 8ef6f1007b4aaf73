//! fiox's exit status is fio 3.33's (issue 43): the number of jobs that failed, numjobs clones
//! counted one by one, 0 when none did. Writes to /dev/full fail with ENOSPC in both tools,
//! the kernel's test sink that fio and fiox both accept as a target. A job of an engine fiox
//! lacks that fio 3.33 loads fails alone as in fio; one fio cannot load refuses the file.

#![allow(clippy::disallowed_methods)] // the shared harness builds scratch files

mod harness;

use harness::*;

/// `n` jobs (or one job with numjobs=`n` when `clones`) writing to /dev/full, and one good job.
fn args(n: usize, clones: bool) -> Vec<String> {
    let full = [
        "--filename=/dev/full",
        "--rw=write",
        "--bs=4k",
        "--size=16k",
    ];
    let mut a = Vec::new();
    if clones {
        a.push("--name=full".to_string());
        a.extend(full.iter().map(|s| s.to_string()));
        a.push(format!("--numjobs={n}"));
    } else {
        for i in 0..n {
            a.push(format!("--name=full{i}"));
            a.extend(full.iter().map(|s| s.to_string()));
        }
    }
    a.extend(
        [
            "--name=fine",
            "--ioengine=null",
            "--size=16k",
            "--numjobs=1",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a.push("--output-format=terse".into());
    a
}

#[test]
fn exit_status_counts_the_failed_jobs_like_fio() {
    need_fio();
    let dir = TempDir::new("exit");
    for (n, clones) in [(0, false), (1, false), (2, false), (3, true)] {
        let a = args(n, clones);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let fio = tool_in("fio", dir.path(), &a);
        let fiox = fiox_in(dir.path(), &a);
        assert_eq!(fio.code, n as i32, "fio: {}", fio.stderr);
        assert_eq!(fiox.code, fio.code, "{n} failing jobs: {}", fiox.stderr);
    }
}

/// fiox with stdout and stderr sent where writes fail with ENOSPC (/dev/full: a disk that
/// filled up under the run, issue 43's N9): never a panic (exit 101 with every result lost).
/// Its messages are lost, as fio's; the exit status is still the number of failed jobs, or 1
/// for a job file error; a report that cannot be written is the run's error (exit 1; fio 3.33
/// ignores it and exits 0).
fn to_full(args: &[&str], stdout_full: bool) -> i32 {
    let full = || {
        std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let mut c = std::process::Command::new(fiox_bin());
    c.args(args)
        .stdin(std::process::Stdio::null())
        .stderr(full());
    if stdout_full {
        c.stdout(full());
    } else {
        c.stdout(std::process::Stdio::null());
    }
    c.status().unwrap().code().unwrap_or(-1)
}

#[test]
fn a_full_disk_under_stdout_or_stderr_is_never_a_panic() {
    let dir = TempDir::new("exit-full");
    let a = args(2, false);
    let mut a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = dir.join("out.json");
    let out = format!("--output={out}");
    assert_eq!(
        to_full(&a, false),
        2,
        "two failing jobs, their errors lost on stderr"
    );
    assert_eq!(
        to_full(&["--name=x", "--ioengine=null", "--bogus_option=1"], false),
        1
    );
    a.push(&out);
    assert_eq!(to_full(&a, true), 2, "the report to a file, messages lost");
    let fine = ["--name=x", "--ioengine=null", "--size=64k"];
    assert_eq!(
        to_full(&fine, true),
        1,
        "the report itself could not be written"
    );
}

/// The JSON report on a tool's stdout (fio 3.33 prints some engines' failures there, before
/// it) as (job name, error) pairs.
fn json_jobs(r: &Run) -> Vec<(String, u64)> {
    let at = r.stdout.find("{\n").unwrap_or(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout[at..])
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}\n{}", r.stdout, r.stderr));
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let name = j["jobname"].as_str().unwrap().to_string();
            (name, j["error"].as_u64().unwrap())
        })
        .collect()
}

/// A job whose engine fiox lacks but fio 3.33 loads (here without the device, library or
/// service it needs): fio runs the file, fails that job with its engine's error and runs the
/// others; fiox does the same (same jobs in the JSON, same error numbers, same exit status),
/// keeps its stdout one JSON document, and says on stderr that it lacks the engine.
#[test]
fn a_job_of_an_engine_fiox_lacks_fails_alone_as_in_fio() {
    need_fio();
    let dir = TempDir::new("exit-engine");
    let good = "[good]\nioengine=null\nsize=1m\n";
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "sg.fio",
            "[bad]\nioengine=sg\nsize=1m\nfilename=sg.dat\n",
            &["ioengine sg only works on block or character devices"],
        ),
        (
            // err=0 yet counted as failed (io_uring_cmd), EOPNOTSUPP (libpmem), gfapi's -5
            // (unsigned in fio's JSON), numjobs clones one by one.
            "mixed.fio",
            "[ng]\nioengine=io_uring_cmd\nsize=1m\nfilename=ng.dat\nnumjobs=2\n\
             [pmem]\nioengine=libpmem\nsize=1m\nfilename=pmem.dat\n\
             [gluster]\nioengine=gfapi\nsize=1m\nfilename=g.dat\n",
            &["io_uring_cmd only works", "libpmem", "gfapi"],
        ),
    ];
    for (name, bad, says) in cases {
        std::fs::write(dir.path().join(name), format!("{good}{bad}")).unwrap();
        let a = ["--output-format=json", name];
        let fio = tool_in("fio", dir.path(), &a);
        let fiox = fiox_in(dir.path(), &a);
        let want = json_jobs(&fio);
        assert!(want.len() >= 2 && want[0] == ("good".into(), 0), "{want:?}");
        assert_eq!(json_jobs(&fiox), want, "{name}: {}", fiox.stderr);
        fiox.json(); // nothing else on stdout
        assert!(fio.code > 0, "{name}: fio {}", fio.stderr);
        assert_eq!(fiox.code, fio.code, "{name}: {}", fiox.stderr);
        for s in *says {
            assert!(fiox.stderr.contains(s), "{name}: {s}: {}", fiox.stderr);
        }
        assert!(
            fiox.stderr
                .contains("is a fio engine that fiox does not support yet"),
            "{}",
            fiox.stderr
        );
    }
    // The terse line carries the error too (field 5), in both tools.
    let terse = |r: Run| -> Vec<String> {
        r.stdout
            .lines()
            .map(|l| l.split(';').skip(2).take(3).collect::<Vec<_>>().join(";"))
            .collect()
    };
    let a = ["--output-format=terse", "sg.fio"];
    let want = terse(tool_in("fio", dir.path(), &a));
    assert_eq!(want, ["good;0;0", "bad;0;22"]);
    assert_eq!(terse(fiox_in(dir.path(), &a)), want);
}

/// An engine fio 3.33 cannot load (not built into it, like http): fio refuses the whole file
/// ("fio: engine http not loadable", exit 1, no job runs, no report), and so does fiox, naming
/// the engine it lacks.
#[test]
fn a_job_of_an_engine_fio_cannot_load_refuses_the_file_as_in_fio() {
    need_fio();
    let dir = TempDir::new("exit-noload");
    let text = "[good]\nioengine=null\nsize=1m\n[bad]\nioengine=http\nsize=1m\n";
    std::fs::write(dir.path().join("http.fio"), text).unwrap();
    let a = ["--output-format=json", "http.fio"];
    let fio = tool_in("fio", dir.path(), &a);
    let fiox = fiox_in(dir.path(), &a);
    assert_eq!(fio.code, 1, "{}", fio.stderr);
    assert!(
        fio.stderr.contains("engine http not loadable"),
        "{}",
        fio.stderr
    );
    assert!(!fio.stdout.contains("\"jobs\""), "{}", fio.stdout);
    assert_eq!(fiox.code, 1, "{}", fiox.stderr);
    assert!(fiox.stdout.is_empty(), "{}", fiox.stdout);
    assert!(
        fiox.stderr
            .contains("ioengine `http` is a fio engine that fiox does not support yet"),
        "{}",
        fiox.stderr
    );
}

/// `--parse-only` of a job whose engine fiox lacks: where fio 3.33 loads the engine (sg,
/// libpmem) the file parses (exit 0, nothing on stderr) and fiox says on stdout that the job
/// will fail when run; where fio cannot load it (http) both exit 1.
#[test]
fn parse_only_of_an_engine_fiox_lacks_exits_as_fio() {
    need_fio();
    let dir = TempDir::new("parse-engine");
    for engine in ["sg", "libpmem", "http"] {
        let e = format!("--ioengine={engine}");
        let a = ["--parse-only", "--name=x", &e, "--filename=/dev/null"];
        let fio = tool_in("fio", dir.path(), &a);
        let fiox = fiox_in(dir.path(), &a);
        assert_eq!(fiox.code, fio.code, "{engine}: {}", fiox.stderr);
        if fio.code == 0 {
            assert_eq!(fiox.stderr, "", "{engine}");
            assert!(
                fiox.stdout.contains("will fail when run"),
                "{engine}: {}",
                fiox.stdout
            );
        }
    }
}
