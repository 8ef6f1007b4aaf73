//! Per-command I/O priorities against fio 3.33 on the same jobs: `cmdprio_percentage`,
//! `cmdprio_class`, `cmdprio` and `cmdprio_bssplit` on io_uring and libaio (the split of I/Os
//! between priorities, fio's per-priority output in normal and JSON, its validation), proof
//! that the priority reaches the kernel, `log_prio`, and `unified_rw_reporting=both`.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// Exit status, stdout and stderr of one tool (`fio` or fiox) run in `dir`, optionally under
/// `setpriv` arguments.
fn run_tool(tool: &str, dir: &Path, wrap: &[&str], args: &[String]) -> (i32, String, String) {
    assert!(need_fio(), "fio 3.33 is needed (.ci/run installs it)");
    let bin = if tool == "fio" { "fio" } else { fiox_bin() };
    let mut c = if wrap.is_empty() {
        Command::new(bin)
    } else {
        let mut c = Command::new(wrap[0]);
        c.args(&wrap[1..]).arg(bin);
        c
    };
    let o = c
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run tool");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

/// A random read/write job of `n` 4 KiB I/Os on `file` plus `extra` options.
fn job(engine: &str, file: &str, n: u32, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "--name=p".to_string(),
        format!("--ioengine={engine}"),
        "--rw=randrw".into(),
        "--bs=4k".into(),
        "--size=4m".into(),
        "--iodepth=4".into(),
        format!("--number_ios={n}"),
        format!("--filename={file}"),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// Both tools' JSON for the same job (each on its own file).
fn both_json(dir: &Path, mk: impl Fn(&str) -> Vec<String>) -> [Value; 2] {
    ["fio", "fiox"].map(|tool| {
        let mut a = mk(&format!("{}/{tool}.dat", dir.display()));
        a.push("--output-format=json".into());
        let (code, out, err) = run_tool(tool, dir, &[], &a);
        assert_eq!(code, 0, "{tool}: {err}\n{out}");
        let objs = fiox_report_json(&out);
        objs.unwrap_or_else(|| panic!("{tool}: no JSON in {out}"))
    })
}

/// The first JSON object of a tool's stdout (fio may print notes before it).
fn fiox_report_json(out: &str) -> Option<Value> {
    let start = out.find('{')?;
    serde_json::Deserializer::from_str(&out[start..])
        .into_iter::<Value>()
        .next()?
        .ok()
}

/// The key structure of a JSON value: object keys (recursively, in order) with percentile
/// keys and array lengths kept, numbers dropped.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(shape).collect()),
        _ => Value::Null,
    }
}

/// `(prioclass, prio, N)` of each entry of a direction's `prios` array.
fn prios(dir: &Value, key: &str) -> Vec<(u64, u64, u64)> {
    dir["prios"]
        .as_array()
        .unwrap_or_else(|| panic!("no prios in {dir}"))
        .iter()
        .map(|p| {
            let n = p[key]["N"].as_u64().unwrap();
            (
                p["prioclass"].as_u64().unwrap(),
                p["prio"].as_u64().unwrap(),
                n,
            )
        })
        .collect()
}

/// cmdprio_percentage=50 on io_uring and libaio: the same `prios` entries in the same order
/// with the same keys as fio (clat_ns, or lat_ns with lat_percentiles), counts adding up to
/// the direction's I/Os, and about the same share at the high priority as fio.
#[test]
fn cmdprio_percentage_splits_and_reports_as_fio() {
    let dir = TempDir::new("cmdprio-pct");
    let n = 2000;
    for (engine, extra) in [
        ("io_uring", vec!["--cmdprio_percentage=50"]),
        (
            "libaio",
            vec!["--cmdprio_percentage=30,70", "--cmdprio_class=3"],
        ),
        (
            "io_uring",
            vec![
                "--cmdprio_percentage=40",
                "--cmdprio=5",
                "--prioclass=2",
                "--prio=4",
                "--lat_percentiles=1",
            ],
        ),
    ] {
        let [theirs, ours] = both_json(dir.path(), |f| job(engine, f, n, &extra));
        let key = if extra.contains(&"--lat_percentiles=1") {
            "lat_ns"
        } else {
            "clat_ns"
        };
        for d in ["read", "write"] {
            let (t, o) = (&theirs["jobs"][0][d], &ours["jobs"][0][d]);
            assert_eq!(
                shape(&t["prios"]),
                shape(&o["prios"]),
                "{engine} {extra:?} {d}"
            );
            let (tp, op) = (prios(t, key), prios(o, key));
            let classes = |p: &[(u64, u64, u64)]| p.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
            assert_eq!(classes(&tp), classes(&op), "{engine} {extra:?} {d}");
            let total: u64 = op.iter().map(|x| x.2).sum();
            assert_eq!(total, o["total_ios"].as_u64().unwrap(), "{d}: {op:?}");
            // Share at the cmdprio priority (entry 1): binomial spread at ~1000 I/Os is
            // about 1.6 points; allow 8.
            let share = |p: &[(u64, u64, u64)], all: &Value| {
                100.0 * p[1].2 as f64 / all["total_ios"].as_u64().unwrap() as f64
            };
            let (ts, os) = (share(&tp, t), share(&op, o));
            assert!(
                (ts - os).abs() < 8.0,
                "{engine} {extra:?} {d}: fio {ts:.1}% fiox {os:.1}%"
            );
        }
        // The same priority lines in the normal report.
        let mut a = job(engine, &dir.join("n.dat"), 200, &extra);
        a.push("--output-format=normal".into());
        let (code, out, err) = run_tool("fiox", dir.path(), &[], &a);
        assert_eq!(code, 0, "{err}");
        let kind = if key == "lat_ns" { "lat" } else { "clat" };
        let (c, l, _) = prios(&ours["jobs"][0]["read"], key)[1];
        let head = format!("    {kind} prio {c}/{l} (");
        let lines: Vec<&str> = out.lines().filter(|x| x.starts_with(&head)).collect();
        assert!(lines.iter().any(|x| x.contains("): min=")), "{out}");
        assert!(
            lines.iter().any(|x| x.contains("% of IOs) percentiles (")),
            "{out}"
        );
    }
}

/// Without cmdprio there are no per-priority statistics (fio prints them only when two
/// priorities have samples): no `prios` key, no `prio` lines, as fio.
#[test]
fn no_prios_without_cmdprio() {
    let dir = TempDir::new("cmdprio-none");
    let [theirs, ours] = both_json(dir.path(), |f| job("io_uring", f, 100, &["--prioclass=2"]));
    for j in [&theirs["jobs"][0], &ours["jobs"][0]] {
        assert!(j["read"].get("prios").is_none(), "{j}");
    }
}

/// cmdprio_bssplit: 4 KiB I/Os split between idle (3/0) and real-time 2, 8 KiB I/Os at the
/// job's priority; the same priorities and about the same counts as fio.
#[test]
fn cmdprio_bssplit_as_fio() {
    let dir = TempDir::new("cmdprio-bss");
    let extra = [
        "--bssplit=4k/50:8k/50",
        "--cmdprio_bssplit=4k/40/3/0:4k/20/1/2:8k/0,4k/50",
    ];
    let [theirs, ours] = both_json(dir.path(), |f| job("io_uring", f, 2000, &extra));
    for d in ["read", "write"] {
        let (tp, op) = (
            prios(&theirs["jobs"][0][d], "clat_ns"),
            prios(&ours["jobs"][0][d], "clat_ns"),
        );
        let classes = |p: &[(u64, u64, u64)]| p.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
        assert_eq!(classes(&tp), classes(&op), "{d}");
        let all = |p: &[(u64, u64, u64)]| p.iter().map(|x| x.2).sum::<u64>() as f64;
        for (a, b) in tp.iter().zip(&op) {
            let (fa, fb) = (100.0 * a.2 as f64 / all(&tp), 100.0 * b.2 as f64 / all(&op));
            assert!((fa - fb).abs() < 8.0, "{d}: fio {tp:?} fiox {op:?}");
        }
    }
}

/// What fio refuses, fiox refuses (before any I/O): percentage with bssplit, a class or
/// percentage out of range, a bssplit over 100% for one size, cmdprio on an engine without it.
#[test]
fn cmdprio_validation_as_fio() {
    let dir = TempDir::new("cmdprio-bad");
    let cases: [&[&str]; 6] = [
        &[
            "--ioengine=io_uring",
            "--cmdprio_percentage=10",
            "--cmdprio_bssplit=4k/10",
        ],
        &["--ioengine=io_uring", "--cmdprio_percentage=101"],
        &[
            "--ioengine=libaio",
            "--cmdprio_percentage=10",
            "--cmdprio_class=4",
        ],
        &[
            "--ioengine=libaio",
            "--cmdprio_percentage=10",
            "--cmdprio=8",
        ],
        &["--ioengine=io_uring", "--cmdprio_bssplit=4k/60:4k/50"],
        &["--ioengine=psync", "--cmdprio_percentage=10"],
    ];
    for extra in cases {
        for tool in ["fio", "fiox"] {
            let mut a = vec![
                "--name=v".to_string(),
                "--rw=read".into(),
                "--size=64k".into(),
                format!("--filename={}", dir.join(tool)),
            ];
            a.extend(extra.iter().map(|s| s.to_string()));
            let (code, out, err) = run_tool(tool, dir.path(), &[], &a);
            assert_ne!(code, 0, "{tool} accepted {extra:?}: {out}{err}");
            if tool == "fiox" {
                assert!(err.contains("cmdprio"), "{extra:?}: {err}");
            }
        }
    }
    let (_, _, err) = run_tool(
        "fiox",
        dir.path(),
        &[],
        &job("io_uring", "x", 1, &cases[0][1..]),
    );
    assert!(err.contains("mutually exclusive"), "{err}");
}

/// The priority reaches the kernel: without CAP_SYS_ADMIN and CAP_SYS_NICE the kernel refuses
/// a real-time priority in the request itself (io_uring's and aio's `ioprio_check_cap`) with
/// EPERM. So a job whose I/Os carry class 1 fails with EPERM in both tools, while the same job
/// with class 2 (best-effort, always allowed) or without cmdprio runs: had the priority not
/// been sent, nothing would fail.
#[test]
fn cmdprio_reaches_the_kernel() {
    require_root("dropping capabilities to provoke EPERM");
    let dir = TempDir::new("cmdprio-kernel");
    let drop = [
        "setpriv",
        "--inh-caps=-sys_admin,-sys_nice",
        "--bounding-set=-sys_admin,-sys_nice",
    ];
    for engine in ["io_uring", "libaio"] {
        for (class, want_fail) in [("1", true), ("2", false), ("", false)] {
            let mut extra = vec![];
            if !class.is_empty() {
                extra = vec![
                    "--cmdprio_percentage=100".to_string(),
                    format!("--cmdprio_class={class}"),
                ];
            }
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let mut errs = vec![];
            for tool in ["fio", "fiox"] {
                let mut a = job(engine, &dir.join(&format!("{tool}{engine}")), 20, &extra);
                a.extend(["--rw=randread".into(), "--output-format=json".into()]);
                let (code, out, err) = run_tool(tool, dir.path(), &drop, &a);
                let err_no = fiox_report_json(&out)
                    .map_or(-1, |j| j["jobs"][0]["error"].as_i64().unwrap_or(-1));
                errs.push((code != 0, err_no));
                let _ = err;
            }
            let want = if want_fail {
                (true, libc::EPERM as i64)
            } else {
                (false, 0)
            };
            assert_eq!(
                errs,
                vec![want, want],
                "{engine} class {class:?}: (failed, error) of fio, fiox"
            );
        }
    }
}

/// The last column of latency logs: without log_prio 1 for real-time I/Os and 0 for the rest;
/// with it the raw priority in hex. The same set of values as fio's logs of the same job.
#[test]
fn log_prio_as_fio() {
    let dir = TempDir::new("cmdprio-log");
    for log_prio in ["0", "1"] {
        let mut cols = vec![];
        for tool in ["fio", "fiox"] {
            let extra = [
                "--cmdprio_percentage=50".to_string(),
                "--prioclass=2".into(),
                "--prio=4".into(),
                format!("--write_lat_log={tool}{log_prio}"),
                format!("--log_prio={log_prio}"),
                "--output-format=terse".into(),
            ];
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            let a = job("io_uring", &dir.join(&format!("{tool}.dat")), 200, &extra);
            let (code, _, err) = run_tool(tool, dir.path(), &[], &a);
            assert_eq!(code, 0, "{tool}: {err}");
            let log =
                std::fs::read_to_string(dir.path().join(format!("{tool}{log_prio}_clat.1.log")))
                    .unwrap();
            let mut set: Vec<String> = log
                .lines()
                .map(|l| l.rsplit(", ").next().unwrap().to_string())
                .collect();
            set.sort();
            set.dedup();
            cols.push(set);
        }
        let want: Vec<String> = if log_prio == "1" {
            vec!["0x2000".into(), "0x4004".into()]
        } else {
            vec!["0".into(), "1".into()]
        };
        assert_eq!(
            cols,
            vec![want.clone(), want],
            "log_prio={log_prio}: fio, fiox"
        );
    }
}

/// unified_rw_reporting=both (2): each direction, then the mixed sum: normal `mixed:` block
/// (fio's line of zeros included) and `MIXED:` group line, JSON `mixed` object after `sync`,
/// and a fourth direction's fields in terse output, with fio's totals.
#[test]
fn unified_rw_reporting_both_as_fio() {
    let dir = TempDir::new("unified-both");
    for v in ["both", "2"] {
        let outs = ["fio", "fiox"].map(|tool| {
            let mut a = job("psync", &dir.join(&format!("{tool}.dat")), 400, &[]);
            a.extend([
                format!("--unified_rw_reporting={v}"),
                "--output-format=normal".into(),
            ]);
            let (code, out, err) = run_tool(tool, dir.path(), &[], &a);
            assert_eq!(code, 0, "{tool}: {err}");
            out
        });
        for out in &outs {
            let read = out.find("  read: IOPS=").expect(out);
            let write = out.find("  write: IOPS=").expect(out);
            let mixed = out.find("  mixed: IOPS=0, BW=0 (0)(0B/").expect(out);
            assert!(read < write && write < mixed, "{out}");
            assert!(out.contains("issued rwts: total="), "{out}");
            let (r, w, m) = (
                out.find("   READ: bw="),
                out.find("  WRITE: bw="),
                out.find("  MIXED: bw="),
            );
            assert!(r < w && w < m && r.is_some(), "{out}");
            assert!(out.contains("io=1600KiB (1638kB), run="), "{out}");
        }
        let [theirs, ours] = both_json(dir.path(), |f| {
            let mut a = job("psync", f, 400, &[]);
            a.push(format!("--unified_rw_reporting={v}"));
            a
        });
        let keys = |j: &Value| j.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        let (t, o) = (&theirs["jobs"][0], &ours["jobs"][0]);
        let pos = |j: &Value, k: &str| keys(j).iter().position(|x| x == k);
        for j in [t, o] {
            assert!(
                pos(j, "sync") < pos(j, "mixed") && pos(j, "sync").is_some(),
                "{j}"
            );
            assert_eq!(j["mixed"]["total_ios"], 400);
            assert_eq!(j["mixed"]["io_bytes"], 400 * 4096);
            assert_eq!(
                j["read"]["total_ios"].as_u64().unwrap()
                    + j["write"]["total_ios"].as_u64().unwrap(),
                400
            );
            assert_eq!(j["mixed"]["clat_ns"]["N"], 400);
        }
        assert_eq!(keys(&t["mixed"]), keys(&o["mixed"]));
        let terse = ["fio", "fiox"].map(|tool| {
            let mut a = job("psync", &dir.join(&format!("{tool}.dat")), 400, &[]);
            a.extend([
                format!("--unified_rw_reporting={v}"),
                "--output-format=terse".into(),
            ]);
            let (code, out, err) = run_tool(tool, dir.path(), &[], &a);
            assert_eq!(code, 0, "{tool}: {err}");
            out.lines()
                .last()
                .unwrap()
                .split(';')
                .map(str::to_string)
                .collect::<Vec<_>>()
        });
        assert_eq!(terse[0].len(), terse[1].len(), "{:?}", terse[1]);
        // The mixed direction's fields follow write's (terse v3 has no trim): io_kbytes of
        // read at 5, write at 46, mixed at 87.
        assert_eq!(
            (terse[0][87].as_str(), terse[1][87].as_str()),
            ("1600", "1600")
        );
    }
}

/// group_reporting: per-priority statistics summed by priority over the group's jobs, as
/// fio's `sum_clat_prio_stats` — for cmdprio jobs, and for jobs without cmdprio that run at
/// different `prio`s (each counted whole under its own priority).
#[test]
fn group_reporting_merges_prios_as_fio() {
    let dir = TempDir::new("cmdprio-group");
    let cases: [(&str, Vec<&str>); 2] = [
        (
            "cmdprio",
            vec![
                "--numjobs=2",
                "--cmdprio_percentage=50",
                "--cmdprio_class=3",
            ],
        ),
        ("prio", vec!["--prioclass=2", "--prio=0"]),
    ];
    for (what, extra) in cases {
        let [theirs, ours] = both_json(dir.path(), |f| {
            let mut a = vec!["--group_reporting".to_string()];
            a.extend(job("io_uring", f, 300, &extra));
            a.push("--rw=randread".into());
            if what == "prio" {
                // A second job at another priority, same group.
                a.extend(job(
                    "io_uring",
                    &format!("{f}.2"),
                    300,
                    &["--prioclass=2", "--prio=3"],
                ));
                a.push("--rw=randread".into());
            }
            a
        });
        let (t, o) = (&theirs["jobs"][0]["read"], &ours["jobs"][0]["read"]);
        assert_eq!(shape(&t["prios"]), shape(&o["prios"]), "{what}");
        let classes = |p: Vec<(u64, u64, u64)>| p.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
        assert_eq!(
            classes(prios(t, "clat_ns")),
            classes(prios(o, "clat_ns")),
            "{what}"
        );
        let total: u64 = prios(o, "clat_ns").iter().map(|x| x.2).sum();
        assert_eq!(total, 600, "{what}: {o}");
        if what == "prio" {
            assert_eq!(
                prios(o, "clat_ns"),
                prios(t, "clat_ns"),
                "300 I/Os at each priority"
            );
        }
    }
}
