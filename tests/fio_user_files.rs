//! Users' existing files (issue 23): what fiox writes over without being told, beside fio 3.33,
//! which writes over anything. A file holding no data (only holes) is written; the logs a job
//! names replace a log fio wrote under that name, and nothing else; a directory or device the
//! user declared scratch space once (FIOX_SCRATCH, or a config file) lifts the refusal, which
//! names that fix. Each tool runs in its own directory.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// Run `tool` in `cwd` with `env` added and any scratch declaration of the caller's own
/// environment removed (FIOX_SCRATCH unset, XDG_CONFIG_HOME an empty directory unless `env`
/// sets it).
fn run(tool: &str, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let bin = if tool == "fio" { "fio" } else { fiox_bin() };
    let empty = TempDir::new("no-config");
    let o = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .env_remove("FIOX_SCRATCH")
        .env("XDG_CONFIG_HOME", empty.path())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run");
    Run::from(o)
}

/// Make `name` in `dir` `len` bytes long with no data (as `truncate -s` does).
fn sparse(dir: &TempDir, name: &str, len: u64) -> String {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().set_len(len).unwrap();
    p
}

fn write_job(path: &str) -> Vec<String> {
    ["--name=w", "--rw=write", "--bs=64k", "--size=8M"]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--filename={path}")])
        .collect()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_file_of_holes_only_is_written_as_fio_writes_it() {
    need_fio();
    for tool in ["fio", "fiox"] {
        let d = TempDir::new("holes");
        let f = sparse(&d, "s", 8 << 20);
        let job = write_job(&f);
        let r = run(tool, d.path(), &args(&job), &[]);
        assert_eq!(r.code, 0, "{tool}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.is_empty(), "{tool}: {}", r.stderr);
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!(m.len(), 8 << 20, "{tool}");
        use std::os::unix::fs::MetadataExt;
        assert!(m.blocks() * 512 >= 8 << 20, "{tool} wrote the file");
    }
    // Data before the job's region, holes in it: written too (nothing there is lost).
    let d = TempDir::new("holes-after");
    let f = sparse(&d, "s", 16 << 20);
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let mut job = write_job(&f);
    job.push("--offset=8M".into());
    let r = run("fiox", d.path(), &args(&job), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let head = std::fs::read(&f).unwrap();
    assert!(
        head[..1 << 20].iter().all(|&b| b == 7),
        "data before the region kept"
    );
}

#[test]
fn a_file_with_data_is_refused_naming_the_fixes_and_written_in_declared_scratch_space() {
    need_fio();
    let d = TempDir::new("data");
    let f = d.join("f");
    // fio makes the file; fio writes it again; fiox, which did not make it, refuses.
    let job = write_job(&f);
    for _ in 0..2 {
        let r = run("fio", d.path(), &args(&job), &[]);
        assert_eq!(r.code, 0, "fio: {}", r.stdout);
    }
    let before = std::fs::read(&f).unwrap();
    let r = run("fiox", d.path(), &args(&job), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    for fix in [
        "allow_mounted_write=1",
        "--allow-destructive",
        "FIOX_SCRATCH=",
    ] {
        assert!(r.stderr.contains(fix), "refusal names {fix}: {}", r.stderr);
    }
    assert!(r.stderr.contains("existing data"), "{}", r.stderr);
    assert_eq!(std::fs::read(&f).unwrap(), before, "refused: untouched");

    // Scratch space elsewhere does not cover it; a link from scratch space to it neither.
    let other = TempDir::new("other-scratch");
    std::os::unix::fs::symlink(&f, other.path().join("link")).unwrap();
    let via_link = write_job(&other.join("link"));
    let env_other = [("FIOX_SCRATCH", other.path().to_str().unwrap())];
    for j in [&job, &via_link] {
        let r = run("fiox", d.path(), &args(j), &env_other);
        assert_eq!(r.code, 1, "{}", r.stderr);
    }
    assert_eq!(std::fs::read(&f).unwrap(), before);

    // Declared in the environment (among other entries): written, as fio writes it.
    let list = format!(
        "/nonexistent:{}:{}",
        other.path().display(),
        d.path().display()
    );
    let r = run("fiox", d.path(), &args(&job), &[("FIOX_SCRATCH", &list)]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));

    // Declared in the config file instead.
    let cfg = TempDir::new("config");
    std::fs::create_dir(cfg.path().join("fiox")).unwrap();
    let scratch = cfg.path().join("fiox/scratch");
    std::fs::write(&scratch, format!("# scratch\n{}\n", d.path().display())).unwrap();
    let xdg = [("XDG_CONFIG_HOME", cfg.path().to_str().unwrap())];
    let r = run("fiox", d.path(), &args(&job), &xdg);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    // ... but not a config file anybody may write.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&scratch, std::fs::Permissions::from_mode(0o666)).unwrap();
    let r = run("fiox", d.path(), &args(&job), &xdg);
    assert_eq!(
        r.code, 1,
        "a world-writable config declares nothing: {}",
        r.stderr
    );
}

/// Unmounts a test's bind mount however the test ends.
struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Adversarial round 3's N6: scratch space was decided by path, so a bind mount of a user's
/// directory inside a scratch directory, or a hard link made there to a user's file, made that
/// data writable. A file counts only on the declared directory's own mount and with no other
/// hard link; a plain file of scratch space is still written.
#[test]
fn a_bind_mount_or_hard_link_inside_scratch_space_is_not_scratch() {
    require_root("bind mount");
    let d = TempDir::new("n6");
    let (scratch, home) = (d.path().join("scratch"), d.path().join("home"));
    std::fs::create_dir_all(scratch.join("ref")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let data: Vec<u8> = (0..64u32 << 10).map(|i| (i % 251) as u8).collect();
    let victim = home.join("dataset.bin");
    std::fs::write(&victim, &data).unwrap();
    let status = Command::new("mount")
        .arg("--bind")
        .arg(&home)
        .arg(scratch.join("ref"))
        .status()
        .expect("mount");
    assert!(status.success(), "mount --bind");
    let _bound = Unmount(scratch.join("ref"));
    std::fs::hard_link(&victim, scratch.join("hl.bin")).unwrap();
    let env = [("FIOX_SCRATCH", scratch.to_str().unwrap())];
    for through in ["ref/dataset.bin", "hl.bin"] {
        let job = write_job(scratch.join(through).to_str().unwrap());
        let r = run("fiox", d.path(), &args(&job), &env);
        assert_eq!(r.code, 1, "{through}: {}", r.stderr);
        assert!(
            r.stderr.contains("existing data"),
            "{through}: {}",
            r.stderr
        );
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            data,
            "{through}: the user's file changed"
        );
    }
    let own = scratch.join("own.bin");
    std::fs::write(&own, &data).unwrap();
    let r = run(
        "fiox",
        d.path(),
        &args(&write_job(own.to_str().unwrap())),
        &env,
    );
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (0, ""),
        "a file of scratch space itself"
    );
}

/// The log and state options of one job, writing its file `f`.
fn logged_job() -> Vec<&'static str> {
    vec![
        "--name=w",
        "--filename=f",
        "--rw=randwrite",
        "--bs=4k",
        "--size=256k",
        "--write_bw_log=w",
        "--write_iops_log=w",
        "--write_lat_log=w",
        "--write_hist_log=w",
        "--log_hist_msec=10",
        "--write_iolog=io.log",
        "--verify=crc32c",
        "--verify_state_save=1",
        "--allow_file_create=1",
    ]
}

#[test]
fn logs_a_job_names_replace_what_fio_wrote_under_those_names_and_nothing_else() {
    need_fio();
    let d = TempDir::new("logs");
    let job = logged_job();
    let r = run("fio", d.path(), &job, &[]);
    assert_eq!(r.code, 0, "fio: {}", r.stdout);
    let mut fio_files = d.entries();
    fio_files.sort();
    for want in ["w_bw.1.log", "w_lat.1.log", "w_clat_hist.1.log", "io.log"] {
        assert!(
            fio_files.iter().any(|e| e == want),
            "fio wrote {want}: {fio_files:?}"
        );
    }
    let fio_bw = std::fs::read_to_string(d.path().join("w_bw.1.log")).unwrap();
    // fiox in the same directory: fio's data file is its own business (allowed here), the
    // logs are fio's format under the names this job gives: replaced.
    let mut fiox_job = job.clone();
    fiox_job.push("--allow_mounted_write=1");
    let r = run("fiox", d.path(), &fiox_job, &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    let fiox_bw = std::fs::read_to_string(d.path().join("w_bw.1.log")).unwrap();
    assert_ne!(fio_bw, fiox_bw, "the bw log is fiox's now");
    // write_iolog appends, as fio's "a" open does: fio's log, then fiox's.
    let iolog = std::fs::read_to_string(d.path().join("io.log")).unwrap();
    let versions = iolog
        .lines()
        .filter(|l| l.starts_with("fio version"))
        .count();
    assert_eq!(versions, 2, "{iolog}");

    // A file of the user's at a log's name stays, and the job is refused.
    std::fs::remove_file(d.path().join("w_iops.1.log")).unwrap();
    std::fs::write(d.path().join("w_iops.1.log"), "my notes\n").unwrap();
    let r = run("fiox", d.path(), &fiox_job, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("w_iops.1.log"), "{}", r.stderr);
    let kept = std::fs::read_to_string(d.path().join("w_iops.1.log")).unwrap();
    assert_eq!(kept, "my notes\n");
    // fio writes over it (what fiox refuses to do).
    let r = run("fio", d.path(), &job, &[]);
    assert_eq!(r.code, 0, "fio: {}", r.stdout);
}
