//! The adversarial round of 2026-11-27 against the whole binary (issue 21): each test is one
//! reported way to destroy data, run as the report ran it, and checks the user's bytes are
//! intact and the refusal is clear. The guard crate's own tests (crates/guard/tests) attack
//! its primitives (planted links, parent swaps, bind mounts, copied marks).
#![allow(clippy::disallowed_methods)]

mod harness;

use harness::*;
use std::path::Path;

const DATA: &[u8] = b"the user's data, not fiox's";

fn user_file(p: &Path) {
    std::fs::write(p, DATA).unwrap();
}

fn intact(p: &Path) -> bool {
    std::fs::read(p).is_ok_and(|b| b == DATA)
}

/// D8: a file of the kernel's procfs reports size 0, so "no existing bytes" let a write job
/// change the hostname. Run in a UTS namespace of its own, so the machine's name is safe even
/// if the refusal failed.
#[test]
fn d8_a_write_job_never_writes_a_kernel_file() {
    // A 64-byte write job on the hostname, with `extra` arguments first.
    let job = |extra: &[&str]| {
        let out = std::process::Command::new("unshare")
            .arg("-u")
            .arg(fiox_bin())
            .args(extra)
            .args([
                "--name=w",
                "--rw=write",
                "--bs=64",
                "--size=64",
                "--filename=/proc/sys/kernel/hostname",
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("unshare (util-linux: apt-get install util-linux)");
        Run::from(out)
    };
    let r = job(&[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("procfs"), "{}", r.stderr);
    // M3: no "data" to destroy, no scratch space to offer (it does not lift this refusal), and
    // the switch it names does lift it: in the private UTS namespace the write is tried.
    assert!(
        r.stderr
            .contains("--allow-destructive=/proc/sys/kernel/hostname or set allow_mounted_write=1")
            && !r.stderr.contains("destroy")
            && !r.stderr.contains("FIOX_SCRATCH"),
        "{}",
        r.stderr
    );
    let r = job(&["--allow-destructive=/proc/sys/kernel/hostname"]);
    assert!(!r.stderr.contains("refusing"), "{}", r.stderr);
}

/// D9: the exec engine's NAME.stdout/NAME.stderr replaced a user's file and wrote through a
/// link.
#[test]
fn d9_exec_outputs_keep_users_files_and_links() {
    let dir = TempDir::new("d9");
    let d = dir.path();
    user_file(&d.join("j.stdout"));
    user_file(&d.join("victim"));
    std::os::unix::fs::symlink(d.join("victim"), d.join("k.stdout")).unwrap();
    for name in ["j", "k"] {
        let r = fiox_in(
            d,
            &[
                &format!("--name={name}"),
                "--ioengine=exec",
                "--program=/bin/echo",
                "--arguments=hello",
                "--runtime=1",
                "--std_redirect=1",
            ],
        );
        assert_ne!(r.code, 0, "{name}: {}", r.stderr);
        assert!(r.stderr.contains(&format!("{name}.stdout")), "{}", r.stderr);
    }
    assert!(intact(&d.join("j.stdout")) && intact(&d.join("victim")));
    // Once the names are free, the outputs are made, and replaced on the next run.
    std::fs::remove_file(d.join("j.stdout")).unwrap();
    for _ in 0..2 {
        let r = fiox_in(
            d,
            &[
                "--name=j",
                "--ioengine=exec",
                "--program=/bin/echo",
                "--arguments=hello",
                "--runtime=1",
                "--std_redirect=1",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    assert_eq!(std::fs::read(d.join("j.stdout")).unwrap(), b"hello\n");
}

/// A result JSON to plot, made by a null job.
fn result_json(dir: &Path) -> String {
    let r = fiox_in(
        dir,
        &[
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--output-format=json",
            "--output=r.json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    "r.json".into()
}

/// D11: `fiox plot`'s default output replaced a user's fiox-report.html (and followed a link).
#[test]
fn d11_plot_keeps_a_users_file_at_its_default_name() {
    let dir = TempDir::new("d11");
    let d = dir.path();
    let json = result_json(d);
    user_file(&d.join("fiox-report.html"));
    let r = fiox_in(d, &["plot", &json]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("fiox-report.html"), "{}", r.stderr);
    assert!(intact(&d.join("fiox-report.html")));
    // Named by the user: written as asked; fiox's own default output is replaced.
    assert_eq!(
        fiox_in(d, &["plot", &json, "-o", "fiox-report.html"]).code,
        0
    );
    std::fs::remove_file(d.join("fiox-report.html")).unwrap();
    assert_eq!(fiox_in(d, &["plot", &json]).code, 0);
    assert_eq!(fiox_in(d, &["plot", &json]).code, 0);
}

/// D6, D7: an experiment's --out wrote over a user's file named like a variant's job file
/// (with --out=. next to the job file: the user's own job file) and through links.
#[test]
fn d6_d7_an_experiment_keeps_users_files_in_its_results_directory() {
    let dir = TempDir::new("d7");
    let d = dir.path();
    std::fs::create_dir(d.join("t")).unwrap();
    std::fs::write(
        d.join("seq.fio"),
        "[seq]\nrw=read\nsize=1m\nbs=4k\n# my notes\n",
    )
    .unwrap();
    let before = std::fs::read(d.join("seq.fio")).unwrap();
    std::fs::write(
        d.join("e.toml"),
        format!(
            "name = \"l1\"\njob_file = \"seq.fio\"\nrepetitions = 1\n[[variant]]\nname = \"seq\"\n\
             target = \"{}\"\noptions = {{ bs = \"8k\" }}\n",
            d.join("t").display()
        ),
    )
    .unwrap();
    let r = fiox_in(d, &["experiment", "e.toml", "--out=."]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("seq.fio"), "{}", r.stderr);
    assert_eq!(std::fs::read(d.join("seq.fio")).unwrap(), before);
    // A link planted at the manifest's name is not written through.
    std::fs::create_dir(d.join("out")).unwrap();
    user_file(&d.join("victim"));
    std::os::unix::fs::symlink(d.join("victim"), d.join("out/manifest.json")).unwrap();
    let r = fiox_in(d, &["experiment", "e.toml", "--out=out"]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(intact(&d.join("victim")));
}

/// F3: two experiments on one results directory at once: the second is refused.
#[test]
fn f3_one_experiment_at_a_time_per_results_directory() {
    let dir = TempDir::new("f3");
    let d = dir.path();
    std::fs::create_dir(d.join("t")).unwrap();
    std::fs::write(
        d.join("e.toml"),
        format!(
            "name = \"f3\"\njobs = \"\"\"\n[j]\nioengine=null\nsize=1m\nruntime=3\ntime_based\n\"\"\"\n\
             repetitions = 1\n[[variant]]\nname = \"a\"\ntarget = \"{}\"\n",
            d.join("t").display()
        ),
    )
    .unwrap();
    let first = spawn_fiox_in(d, &["experiment", "e.toml", "--out=out"]);
    // The first holds the lock once its results directory exists.
    let lock = d.join("out/.fiox-experiment.lock");
    for _ in 0..200 {
        if lock.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let second = fiox_in(d, &["experiment", "e.toml", "--out=out"]);
    let first = wait(first);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_ne!(second.code, 0, "{}", second.stderr);
    assert!(
        second.stderr.contains("in use by another fiox experiment"),
        "{}",
        second.stderr
    );
}

/// Two jobs sharing a block device that holds a filesystem: one job printed the refusal, the
/// other joined its claim and wrote (8 of 8 runs destroyed the filesystem).
#[test]
fn two_jobs_on_one_device_holding_a_filesystem_are_both_refused() {
    let dir = TempDir::under(Path::new("/var/tmp"), "twojobs");
    let img = dir.path().join("img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    sh("mkfs.ext4", &["-q", "-F", &img.display().to_string()])
        .expect("mkfs.ext4 (e2fsprogs) is needed: apt-get install e2fsprogs");
    let lo = fiox_testbed::loopdev::LoopDevice::attach(&img, &Default::default())
        .expect("a loop device (the kernel's loop driver)");
    let dev = lo.path().display().to_string();
    for _ in 0..4 {
        let r = fiox(&[
            "--name=w",
            &format!("--filename={dev}"),
            "--rw=write",
            "--bs=64k",
            "--size=8m",
            "--numjobs=2",
        ]);
        assert_eq!(r.code, 1, "{}", r.stderr);
    }
    let blkid = sh("blkid", &["-p", "-o", "value", "-s", "TYPE", &dev]).unwrap_or_default();
    assert_eq!(blkid.trim(), "ext4", "the filesystem survived");
}

/// D2: an experiment with a loop testbed ran the whole job with --allow-destructive, so
/// another section naming a user's file overwrote it.
#[test]
fn d2_an_experiment_allows_its_testbed_device_and_nothing_else() {
    let dir = TempDir::under(Path::new("/var/tmp"), "d2");
    let d = dir.path();
    let user = d.join("user.img");
    std::fs::write(&user, vec![7u8; 1 << 20]).unwrap();
    std::fs::write(
        d.join("e.toml"),
        format!(
            "name = \"j1\"\njobs = \"\"\"\n# target: ${{TARGET}}\n[dev]\nrw=write\nbs=64k\nsize=1m\n\
             filename=${{TARGET}}\n[ref]\nrw=write\nbs=64k\nsize=1m\nfilename={}\n\"\"\"\n\
             repetitions = 1\n[[variant]]\nname = \"lp\"\n\
             testbed = {{ kind = \"loop\", size = \"8m\", dir = \"{}\" }}\n",
            user.display(),
            d.display()
        ),
    )
    .unwrap();
    let r = fiox_in(d, &["experiment", "e.toml", "--out=out"]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read(&user).unwrap(),
        vec![7u8; 1 << 20],
        "user file intact"
    );
}

/// A job may write the loop device fiox's own `testbed up loop` made: its backing file is made
/// by the guard and carries fiox's mark (it was refused as a loop device over a file fiox did
/// not create, unless --allow-destructive).
#[test]
fn a_job_writes_the_loop_device_of_fioxs_own_testbed() {
    let state = TempDir::new("tb-own");
    let run = |args: &[&str]| {
        Run::from(
            std::process::Command::new(fiox_bin())
                .args(args)
                .env("FIOX_TESTBED_DIR", state.path())
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap(),
        )
    };
    let name = format!("own{}", std::process::id());
    let up = run(&[
        "testbed",
        "up",
        "loop",
        &format!("--name={name}"),
        "--size=16m",
        "--dir=/var/tmp",
    ]);
    assert_eq!(up.code, 0, "{}", up.stderr);
    let text = format!("{}{}", up.stdout, up.stderr);
    let dev = text
        .split_whitespace()
        .find(|w| w.starts_with("/dev/loop"))
        .unwrap_or_else(|| panic!("no device in {text}"))
        .to_string();
    let w = run(&[
        "--name=w",
        &format!("--filename={dev}"),
        "--rw=write",
        "--bs=64k",
        "--size=4m",
        "--output-format=terse",
    ]);
    let down = run(&["testbed", "down", &name]);
    assert_eq!(w.code, 0, "{}", w.stderr);
    assert_eq!(down.code, 0, "{}", down.stderr);
}
