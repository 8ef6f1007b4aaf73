//! fio 3.33 workload details of issue 10 that fiox runs as fio does, each compared with fio
//! itself where it is installed: sequential I/O walking backwards (`rw=read:-N`), holes,
//! `offset_increment=N%`, `atomic`, `write_barrier`, and the deprecated `percentage_sequential`
//! and `rwmixcycle` (which fio 3.33 refuses). Exact things are compared: the offsets of
//! write_iolog, the open(2) flags and the write calls under strace, exit codes.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;

/// The I/O lines of a write_iolog file ("FILE read OFFSET LEN"), without time stamps.
fn iolog_io(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest.to_string()))
        .filter(|l| l.contains(" read ") || l.contains(" write "))
        .collect()
}

/// Run `tool` with `args` in `dir`, asserting success; the I/O lines of its `io.log`.
fn logged(tool: &str, dir: &Path, args: &[&str]) -> Vec<String> {
    let mut a = args.to_vec();
    a.extend(["--write_iolog=io.log", "--output-format=terse"]);
    let (code, err) = if tool == "fiox" {
        let r = fiox_in(dir, &a);
        (r.code, r.stderr)
    } else {
        let o = std::process::Command::new("fio")
            .current_dir(dir)
            .args(&a)
            .output()
            .expect("run fio");
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    assert_eq!(code, 0, "{tool} {a:?}: {err}");
    let io = iolog_io(&dir.join("io.log"));
    let _ = std::fs::remove_file(dir.join("io.log"));
    io
}

/// Offsets (in KiB) of "f DIR OFFSET LEN" lines.
fn kib(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .map(|l| l.split(' ').nth(2).unwrap().parse::<u64>().unwrap() / 1024)
        .collect()
}

/// `rw=read:-8k` with 4k blocks: fio's first read is at 0, then it wraps to 8k before the
/// end and walks back 4k at a time (each read ends 8k before the last one ended), reaching 0
/// again; `offset=` starts at the region's end instead. Positive holes skip forward and wrap
/// to the start; random modes take `:N` as fio's atoi does. The same offsets as fio, line by
/// line.
#[test]
fn sequential_io_walks_backwards_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "seqback");
    let cases: [(&[&str], Option<Vec<u64>>); 8] = [
        (
            &["--rw=read:-8k"],
            Some(vec![
                0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0,
            ]),
        ),
        (&["--rw=write:-4k", "--bs=8k"], None),
        (&["--rw=read:-16k", "--offset=16k", "--size=48k"], None),
        (&["--rw=rw:-12k", "--rwmixread=50"], None),
        (&["--rw=read:8k"], None),
        // Random modes read `:N` with atoi: 8 I/Os per random offset, not 8192; `-8` wraps
        // to 2^32-8, so after the first offset the job reads sequentially.
        (&["--rw=randread:8k"], None),
        (
            &["--rw=randread:-8"],
            Some((0..16).map(|i| i * 4).collect()),
        ),
        (&["--rw=randrw:3"], None),
    ];
    for (i, (opts, want)) in cases.iter().enumerate() {
        let mut args = vec!["--name=b", "--filename=f", "--bs=4k", "--size=64k"];
        args.extend(opts.iter());
        // A fresh file per case for each tool (fiox writes only files it created).
        let ours_dir = TempDir::under(dir.path(), &format!("ours{i}"));
        let ours = logged("fiox", ours_dir.path(), &args);
        assert!(!ours.is_empty(), "{opts:?}");
        if let Some(want) = want {
            assert_eq!(&kib(&ours), want, "{opts:?}");
        }
        if need_fio() {
            let theirs_dir = TempDir::under(dir.path(), &format!("theirs{i}"));
            let theirs = logged("fio", theirs_dir.path(), &args);
            assert_eq!(ours, theirs, "{opts:?} vs fio");
        }
    }
}

/// `offset_increment=10%` with numjobs=3 on an existing 1,000,000-byte file: clone k starts at
/// k * 100000 rounded up to the 4k block (0, 102400, 200704), as fio computes it.
#[test]
fn offset_increment_percent_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "offincpct");
    let run = |tool: &str, sub: &str, extra: &[&str]| -> Vec<String> {
        let d = TempDir::under(dir.path(), sub);
        std::fs::File::create(d.join("f"))
            .and_then(|f| f.set_len(1_000_000))
            .unwrap();
        let mut args = vec![
            "--name=o",
            "--filename=f",
            "--rw=read",
            "--bs=4k",
            "--size=16k",
            "--numjobs=3",
            "--offset_increment=10%",
        ];
        args.extend(extra);
        let mut lines = logged(tool, d.path(), &args);
        // Clones run at once: their lines interleave in any order.
        lines.sort();
        lines
    };
    for (i, extra) in [&[][..], &["--offset_align=64k"], &["--offset=8k"]]
        .iter()
        .enumerate()
    {
        let ours = run("fiox", &format!("ours{i}"), extra);
        let starts: std::collections::BTreeSet<u64> =
            kib(&ours).iter().map(|k| k - k % 16).collect();
        match i {
            0 => assert_eq!(kib(&ours).iter().min(), Some(&0)),
            1 => assert!(starts.contains(&128) && starts.contains(&256), "{ours:?}"),
            _ => {}
        }
        if i == 0 {
            let mut offs = kib(&ours);
            offs.sort();
            offs.dedup();
            assert_eq!(offs, [0, 4, 8, 12, 100, 104, 108, 112, 196, 200, 204, 208]);
        }
        if need_fio() {
            assert_eq!(ours, run("fio", &format!("theirs{i}"), extra), "{extra:?}");
        }
    }
}

/// fio 3.33 refuses the deprecated `percentage_sequential` and `rwmixcycle` ("Option ... is
/// deprecated", exit 1), on the command line and in job files: so does fiox, naming them.
#[test]
fn deprecated_options_are_refused_like_fio() {
    let dir = TempDir::new("deprecated");
    let file = dir.join("d.fio");
    std::fs::write(&file, "[d]\nrw=randrw\nsize=64k\nrwmixcycle=50\n").unwrap();
    let cli = [
        "--parse-only",
        "--name=d",
        "--size=64k",
        "--percentage_sequential=50",
    ];
    let r = fiox(&cli);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("percentage_sequential is deprecated"),
        "{}",
        r.stderr
    );
    let r = fiox(&["--parse-only", &file]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("rwmixcycle is deprecated"),
        "{}",
        r.stderr
    );
    if need_fio() {
        for args in [&cli[..], &["--parse-only", &file]] {
            let o = std::process::Command::new("fio")
                .args(args)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(1), "fio {args:?}");
        }
    }
}

/// The flags of the job file's read/write open ("O_RDWR|O_CREAT|O_DIRECT|0x800000").
fn io_open_flags(tool: &str, dir: &Path, args: &[&str]) -> Vec<String> {
    let text = strace_text(tool, dir, args, &["-e", "trace=openat"]);
    text.lines()
        .filter(|l| l.contains("\"f\"") || l.contains(&format!("{}/f\"", dir.display())))
        // fiox's layout creates the file O_EXCL first; the job's I/O open comes after.
        .filter(|l| l.contains("O_RDWR") && !l.contains("O_EXCL"))
        .filter_map(|l| l.split(", ").nth(2).map(str::to_string))
        .map(|f| f.replace("|O_CLOEXEC", "").replace(")", ""))
        .collect()
}

/// `atomic=1` opens with O_DIRECT and fio's OS_O_ATOMIC bit (040000000, which strace shows as
/// 0x800000), even after `direct=0`: the same flags as fio's open.
#[test]
fn atomic_opens_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "atomic");
    let args = [
        "--name=a",
        "--filename=f",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--direct=0",
        "--atomic=1",
        "--output-format=terse",
    ];
    let ours = io_open_flags(fiox_bin(), dir.path(), &args);
    assert!(!ours.is_empty());
    assert!(
        ours.iter().all(|f| f.contains("O_DIRECT|0x800000")),
        "{ours:?}"
    );
    if need_fio() {
        let d = TempDir::under(dir.path(), "fio");
        let theirs = io_open_flags("fio", d.path(), &args);
        assert!(theirs.iter().all(|f| f.contains("O_DIRECT|0x800000")));
        // fiox's I/O open never carries O_CREAT (its guard creates a new file first,
        // exclusively): the flags that matter here, O_DIRECT and the atomic bit, are fio's.
        let flags = |f: Option<&String>| {
            f.map(|f| {
                f.replace("|O_CREAT", "")
                    .split([' ', ','])
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
        };
        assert_eq!(
            flags(ours.last()),
            flags(theirs.last()),
            "the I/O open vs fio"
        );
    }
}

/// The write calls on the job's file ("LEN OFFSET"), in order.
fn writes(tool: &str, dir: &Path, args: &[&str]) -> Vec<String> {
    io_trace(tool, dir, args)
        .into_iter()
        .filter_map(|c| c.strip_prefix("pwrite64 ").map(String::from))
        .collect()
}

/// `write_barrier=N`: fio 3.33 marks every Nth write, and only its libpmem engine acts on the
/// mark, so the writes are those without it; fiox runs it with the same writes.
#[test]
fn write_barrier_changes_no_io_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "barrier");
    let base = [
        "--name=w",
        "--filename=f",
        "--rw=randwrite",
        "--bs=4k",
        "--size=64k",
        "--output-format=terse",
    ];
    let mut with = base.to_vec();
    with.push("--write_barrier=3");
    let r = fiox_in(dir.path(), &with);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let ours = writes(fiox_bin(), dir.path(), &with);
    assert_eq!(ours.len(), 16);
    assert_eq!(ours, writes(fiox_bin(), dir.path(), &base));
    if need_fio() {
        let d = TempDir::under(dir.path(), "fio");
        assert_eq!(ours, writes("fio", d.path(), &with), "vs fio");
    }
}

/// Successful unlink(2)s of the job's file `f` under strace.
fn unlinks(tool: &str, dir: &Path, args: &[&str]) -> usize {
    let text = strace_text(tool, dir, args, &["-e", "trace=unlink,unlinkat"]);
    text.lines()
        .filter(|l| l.contains("/f\"") || l.contains("\"f\""))
        .filter(|l| l.trim_end().ends_with("= 0"))
        .count()
}

/// `unlink_each_loop` with loops=3: the file is removed before loops 2 and 3 and created
/// again by the writes, and is left behind at the end (no unlink=1), as with fio. A file
/// fiox did not create is never removed (fio would remove it): a read job over a user's file
/// reads it three times and leaves it.
#[test]
fn unlink_each_loop_removes_files_between_loops_like_fio() {
    let dir = TempDir::under(Path::new("/var/tmp"), "unlinkloop");
    let args = [
        "--name=u",
        "--filename=f",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--loops=3",
        "--unlink_each_loop=1",
        "--output-format=terse",
    ];
    let ours = TempDir::under(dir.path(), "ours");
    assert_eq!(unlinks(fiox_bin(), ours.path(), &args), 2);
    let left = std::fs::metadata(ours.join("f")).unwrap().len();
    assert_eq!(left, 64 << 10);
    if need_fio() {
        let theirs = TempDir::under(dir.path(), "theirs");
        assert_eq!(unlinks("fio", theirs.path(), &args), 2, "fio");
        assert_eq!(std::fs::metadata(theirs.join("f")).unwrap().len(), left);
    }
    // A user's file: read three times, never removed.
    let user = TempDir::under(dir.path(), "user");
    std::fs::write(user.join("f"), vec![7u8; 64 << 10]).unwrap();
    let mut read = args.to_vec();
    read[2] = "--rw=read";
    read[7] = "--output-format=json";
    let r = fiox_in(user.path(), &read);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(issued(&r.json(), "read"), (48, 3 * (64 << 10)));
    assert_eq!(std::fs::read(user.join("f")).unwrap(), vec![7u8; 64 << 10]);
}

/// A 1 MiB tmpfs made for the test (unmounted when dropped).
fn small_tmpfs() -> Option<fiox_testbed::mount::TmpfsMount> {
    require_root("mounts a tmpfs");
    if !kernel_filesystem("tmpfs") {
        return None;
    }
    Some(fiox_testbed::mount::TmpfsMount::new(1 << 20).expect("mount a small tmpfs"))
}

/// (error, io_bytes and total_ios of writes then reads, sizes of the files left, names of
/// the files left in the working directory: verify state files) of a JSON run in `dir`.
type FillOutcome = (i64, [u64; 4], Vec<u64>, Vec<String>);

/// A `fill_device` run of `tool` (a 4k sequential write unless `extra` says otherwise) in
/// `dir`, from a throwaway working directory; the files it leaves are removed.
fn fill_outcome(tool: &str, dir: &Path, extra: &[&str]) -> FillOutcome {
    let d = format!("--directory={}", dir.display());
    let mut args = vec!["--name=fd", d.as_str(), "--rw=write", "--bs=4k"];
    args.extend(extra);
    let cwd = TempDir::new("fill-cwd");
    let (code, v, stderr) = tool_json(tool, cwd.path(), &args, Some(120));
    // A job error (EIO of a read past the end) exits 1, as in fio.
    assert!(code == 0 || code == 1, "{tool} {extra:?}: {stderr}");
    // fio prints the ENOSPC that ends the fill; fiox's successful run stays quiet.
    assert!(
        tool == "fio" || code != 0 || stderr.is_empty(),
        "{extra:?}: {stderr}"
    );
    let mut left: Vec<String> = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let j = &v["jobs"][0];
    let mut sizes: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .collect();
    sizes.sort();
    for e in std::fs::read_dir(dir).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
    (
        j["error"].as_i64().unwrap(),
        [
            n("write", "io_bytes"),
            n("write", "total_ios"),
            n("read", "io_bytes"),
            n("read", "total_ios"),
        ],
        sizes,
        left,
    )
}

/// `fill_device=1` on a 1 MiB tmpfs: without `size=` the job writes until ENOSPC, which ends
/// it without error (the failed write counted as issued, as fio does), over one file or two;
/// with a size beyond the space, the same. A read job first fills its file, then reads what
/// it holds. `rw` lays its file out, then reads and overwrites it until a write past the end
/// fails with ENOSPC; `verify` after such a fill verifies nothing (fio terminates the job)
/// but saves its state; `overwrite=1` lays the file out first, then writes past its end. The
/// same outcome and files as fio 3.33.
#[test]
fn fill_device_writes_until_enospc_like_fio() {
    let Some(m) = small_tmpfs() else { return };
    let cases: [&[&str]; 11] = [
        &["--fill_device=1"],
        &["--fill_device=1", "--nrfiles=2"],
        &["--fill_device=1", "--size=4m", "--bs=64k"],
        &["--fill_device=1", "--rw=read"],
        &["--fill_device=1", "--rw=randread"],
        &["--fill_device=1", "--rw=rw"],
        &["--fill_device=1", "--rw=rw", "--rwmixread=30"],
        &["--fill_device=1", "--verify=crc32c"],
        &["--fill_device=1", "--rw=rw", "--verify=crc32c"],
        &["--fill_device=1", "--overwrite=1"],
        &["--fill_device=1", "--rw=rw", "--overwrite=1"],
    ];
    for extra in cases {
        let ours = fill_outcome("fiox", m.path(), extra);
        assert_eq!(ours.0, 0, "{extra:?}");
        let moved = if extra.contains(&"--rw=read") || extra.contains(&"--rw=randread") {
            ours.1[2]
        } else {
            ours.1[0]
        };
        assert_eq!(moved, 1 << 20, "{extra:?}");
        assert_eq!(ours.2.iter().sum::<u64>(), 1 << 20, "{extra:?}");
        if extra.contains(&"--rw=rw") {
            assert!(ours.1[2] > 0, "{extra:?}: rw read nothing");
        }
        if extra.contains(&"--verify=crc32c") {
            if !extra.contains(&"--rw=rw") {
                assert_eq!(ours.1[2], 0, "{extra:?}: verified after the fill");
            }
            assert_eq!(ours.3, ["local-fd-0-verify.state"], "{extra:?}");
        }
        if need_fio() {
            assert_eq!(
                ours,
                fill_outcome("fio", m.path(), extra),
                "{extra:?} vs fio"
            );
        }
    }
    // rw whose reads reach the end of the filled file first: the read past it moves nothing,
    // which fails the job with EIO before any write hits ENOSPC, as in fio 3.33.
    let extra = ["--fill_device=1", "--rw=rw", "--rwmixread=70"];
    let ours = fill_outcome("fiox", m.path(), &extra);
    assert_eq!((ours.0, ours.1[2]), (libc::EIO as i64, 1 << 20), "{ours:?}");
    if need_fio() {
        assert_eq!(
            ours,
            fill_outcome("fio", m.path(), &extra),
            "{extra:?} vs fio"
        );
    }
    // A random mixed workload is refused, naming the option (fio 3.33 cannot run it: see
    // README).
    let r = fiox(&["--parse-only", "--name=r", "--rw=randrw", "--fill_device=1"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("`fill_device=1`"), "{}", r.stderr);
}
