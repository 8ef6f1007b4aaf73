//! fio 3.33's job profiles (`--profile=tiobench`, `--profile=act`), run by fio and by fiox with
//! the same arguments: the jobs they make (names, groups, options as written), their totals,
//! and act's own latency table must agree.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// fio's stdout in `cwd`; act prints its table before the results, JSON or not.
fn fio_in(cwd: &Path, args: &[&str]) -> String {
    let o = Command::new("fio")
        .current_dir(cwd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run fio");
    assert!(o.status.success(), "fio {args:?}: {o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The JSON document in a stdout that may carry act's table before it.
fn json_of(out: &str) -> Value {
    let start = out.find("{\n").unwrap_or(0);
    serde_json::from_str(&out[start..]).unwrap_or_else(|e| panic!("JSON ({e}): {out}"))
}

/// Per reported job: name, group, options as written.
fn job_list(v: &Value) -> Vec<(String, u64, BTreeMap<String, String>)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let opts = j["job options"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect();
            let name = j["jobname"].as_str().unwrap().to_string();
            (name, j["groupid"].as_u64().unwrap(), opts)
        })
        .collect()
}

fn io_bytes(v: &Value) -> Vec<(u64, u64)> {
    let jobs = v["jobs"].as_array().unwrap();
    let dir = |j: &Value, d: &str| j[d]["io_bytes"].as_u64().unwrap();
    jobs.iter()
        .map(|j| (dir(j, "read"), dir(j, "write")))
        .collect()
}

/// The files in `dir` with their sizes.
fn files(dir: &TempDir) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| {
            let len = e.metadata().unwrap().len();
            (e.file_name().to_string_lossy().into_owned(), len)
        })
        .collect();
    out.sort();
    out
}

/// tiobench's defaults (fio 3.33 runs only those: it never reads its options): four phases
/// over four files in the working directory, 4 KiB per MiB of memory, direct I/O. Same jobs,
/// same options, same bytes, same files.
#[test]
fn tiobench_makes_fios_jobs_and_moves_its_bytes() {
    // Direct I/O: a directory on disk, not /dev/shm.
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (fd, xd) = (
        TempDir::under(base, "tio-fio"),
        TempDir::under(base, "tio-fiox"),
    );
    let args = ["--profile=tiobench", "--output-format=json"];
    // fio hands tiobench's size=4*1024*$mb_memory to bc ("bc is needed for performing math").
    require_tool("bc");
    let fio = json_of(&fio_in(fd.path(), &args));
    let r = fiox_in(xd.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "");
    let x = r.json();
    assert_eq!(job_list(&x), job_list(&fio));
    assert_eq!(io_bytes(&x), io_bytes(&fio));
    assert_eq!(files(&xd), files(&fd));
    assert_eq!(files(&xd).len(), 4);
    // The profile's global options: fio shows `timeout` by its main name and the size
    // expression evaluated.
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v["global options"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.replace("timeout", "runtime"))
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(&x), keys(&fio));
}

/// tiobench's own options, which fio 3.33 parses and then ignores, take effect in fiox.
#[test]
fn tiobench_options_take_effect() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (cwd, dir) = (
        TempDir::under(base, "tio-cwd"),
        TempDir::under(base, "tio-dir"),
    );
    let d = format!("--dir={}", dir.path().display());
    let args = [
        "--profile=tiobench",
        "--size=1",
        "--block=8192",
        "--numruns=2",
        "--threads=2",
        &d,
        "--output-format=json",
    ];
    let r = fiox_in(cwd.path(), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    // Two threads, two runs, 1 MiB each, per phase; the files in --dir.
    let mib4 = 4 << 20;
    assert_eq!(io_bytes(&v), [(0, mib4), (0, mib4), (mib4, 0), (mib4, 0)]);
    let bs = v["jobs"][0]["write"]["io_bytes"].as_u64().unwrap()
        / v["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    assert_eq!(bs, 8192);
    assert_eq!(files(&dir).len(), 4);
    assert!(files(&cwd).is_empty());
}

/// `profile=` and `threads=` in a job file: fio 3.33 stores them and runs the job as written;
/// fiox runs it alike (it used to refuse the job), same jobs and bytes, a note on stdout
/// (normal output) and nothing on stderr.
#[test]
fn profile_and_threads_in_a_job_run_as_in_fio() {
    let (fd, xd) = (TempDir::new("prof-fio"), TempDir::new("prof-fiox"));
    for d in [&fd, &xd] {
        let job = format!(
            "[a]\nprofile=tiobench\nthreads=4\nfilename={}\nsize=1m\nrw=write\nbs=4k\n",
            d.join("f")
        );
        std::fs::write(d.path().join("job.fio"), job).unwrap();
    }
    let fio = json_of(&fio_in(fd.path(), &["--output-format=json", "job.fio"]));
    let r = fiox_in(xd.path(), &["--output-format=json", "job.fio"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let x = r.json();
    assert_eq!(io_bytes(&x), io_bytes(&fio));
    assert_eq!(io_bytes(&x), [(0, 1 << 20)]);
    let notes = x["fiox"]["notes"].to_string();
    assert!(notes.contains("profile=tiobench has no effect"), "{notes}");
    assert!(notes.contains("threads=4 has no effect"), "{notes}");
}

/// act's table as fio prints it, from its first line to the verdict, with the measured numbers
/// and the verdict blanked (latencies on a shared machine differ from run to run).
fn act_table(out: &str) -> Vec<String> {
    let start = out
        .find("        trans")
        .unwrap_or_else(|| panic!("no act table: {out}"));
    let end = out[start..].find("device(s): ").expect("verdict") + start;
    let line_end = out[end..].find('\n').map_or(out.len(), |n| n + end);
    out[start..line_end]
        .lines()
        .map(|l| {
            if l.starts_with("    1\t") {
                let cols: Vec<&str> = l.split('\t').collect();
                let shape = |c: &&str| {
                    let ok = c.split_once('.').is_some_and(|(_, f)| f.len() == 2);
                    if ok {
                        "N.NN"
                    } else {
                        "?"
                    }
                };
                format!(
                    "{}\t{}",
                    cols[0],
                    cols[1..].iter().map(shape).collect::<Vec<_>>().join("\t")
                )
            } else {
                l.replace("PASSED", "VERDICT").replace("FAILED", "VERDICT")
            }
        })
        .collect()
}

/// act on a loop device: fio's jobs (a reader job per thread and a writer per device, rate
/// limited, time based), its totals at act's rates, and its table and verdict line for line.
#[test]
fn act_on_a_loop_device_matches_fio() {
    if !loop_devices() {
        return;
    }
    let dir = TempDir::new("act");
    let img = dir.path().join("act.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(32 << 20))
        .unwrap();
    let dev = fiox_testbed::LoopDevice::attach(&img, &fiox_testbed::LoopOptions::default())
        .expect("attach a loop device");
    let names = format!("--device-names={}", dev.path().display());
    let args = [
        "--profile=act",
        names.as_str(),
        "--test-duration=2",
        "--threads-per-queue=2",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let cwd = TempDir::new("act-cwd");
    let strs = |v: &[String]| {
        v.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\u{0}")
    };
    let run_fio = |extra: &[&str]| {
        let a = with(extra);
        fio_in(
            cwd.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    };
    let run_fiox = |extra: &[&str]| {
        let mut a = with(extra);
        a.push("--allow-destructive".into());
        let r = fiox_in(
            cwd.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert_eq!(r.code, 0, "{}: {}", strs(&a), r.stderr);
        assert_eq!(r.stderr, "");
        r.stdout
    };
    let (fio_text, fiox_text) = (run_fio(&[]), run_fiox(&[]));
    assert_eq!(act_table(&fiox_text), act_table(&fio_text));
    // Header lines: the same jobs, no version line (fio adds a profile's jobs after it).
    let head = |t: &str| -> Vec<String> {
        t.lines()
            .take_while(|l| !l.starts_with("Starting"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(head(&fiox_text), head(&fio_text));
    let (f, x) = (
        json_of(&run_fio(&["--output-format=json"])),
        json_of(&run_fiox(&["--output-format=json"])),
    );
    assert_eq!(job_list(&x), job_list(&f));
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v["global options"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(&x), keys(&f));
    let ios = |v: &Value, d: &str| v["jobs"][0][d]["total_ios"].as_u64().unwrap() as f64;
    // The rates act sets: 2000 reads/s over the threads, 1000 x 1536 B worth of 128 KiB
    // writes per second (12), for 2 s. fio falls short of them on a busy machine; neither
    // may go over them, and fiox must not fall far short (a loose bound: the machine is shared).
    for (d, want) in [("read", 4000.0), ("write", 24.0)] {
        let (a, b) = (ios(&x, d), ios(&f, d));
        assert!(
            a <= want * 1.05 + 2.0 && b <= want * 1.05 + 2.0,
            "{d}: fiox {a}, fio {b}"
        );
        assert!(a >= want * 0.5, "{d}: fiox {a} I/Os, fio {b}, want {want}");
    }
    // fiox keeps the table in its JSON (fio's text before the document breaks it).
    let act = &x["fiox"]["act"];
    let slice = &act["slices"][0];
    let pct = |k: &str| slice[k].as_f64().unwrap();
    let within =
        pct("pct_over_1ms") < 5.0 && pct("pct_over_8ms") < 1.0 && pct("pct_over_64ms") < 0.1;
    assert_eq!(act["passed"], within, "{act}");
    assert_eq!(
        slice["total_ios"].as_u64().unwrap() as f64,
        ios(&x, "read") + ios(&x, "write")
    );
    // The prep phase: a zeroing pass, then a stonewalled random 4 KiB overwrite over libaio,
    // each over the whole device; an empty table.
    let (f, x) = (
        json_of(&run_fio(&["--prep", "--output-format=json"])),
        json_of(&run_fiox(&["--prep", "--output-format=json"])),
    );
    assert_eq!(job_list(&x), job_list(&f));
    assert_eq!(io_bytes(&x), io_bytes(&f));
    assert_eq!(io_bytes(&x), [(0, 32 << 20), (0, 32 << 20)]);
    assert_eq!(x["fiox"]["act"]["slices"][0]["total_ios"], 0);
}
