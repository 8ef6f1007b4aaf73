//! Making a testbed: the record is claimed first (written whole under a free name, or not at
//! all), then each thing is made through fiox-guard and recorded with its identity: the
//! testbed's directory is created fresh (never adopted: something already at its name, a
//! planted link included, fails the make and is left alone), the backing file is created in it
//! (O_EXCL, marked), the loop device is recorded by the backing inode before it is attached,
//! mounts are made on the directory held open and recorded by their mount id, and a slow
//! device's server is recorded by pid and start time before it is waited for.

use super::record::{check_path, Record, Step, SUFFIX};
use super::spec::{check_mkfs_options, Kind, Spec};
use super::{teardown, State};
use crate::error::{Result, TestbedError};
use crate::loopdev::{LoopDevice, LoopOptions};
use fiox_guard::mount::{mount_on, Source};
use fiox_guard::output::{self, Named};
use fiox_guard::{Dir, Identity, Layout};
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A record being made: saved after every step.
pub(crate) struct Maker {
    pub(crate) rec: Record,
    state: Dir,
    file: OsString,
}

impl Maker {
    pub(crate) fn save(&self) -> Result<()> {
        let text = self.rec.to_text();
        output::write_in_mode(
            &self.state,
            &self.file,
            text.as_bytes(),
            Named::ByFiox,
            0o600,
        )
        .map_err(Into::into)
    }

    pub(crate) fn step(&mut self, s: Step) -> Result<()> {
        let p = match &s {
            Step::Tree { path, .. }
            | Step::DirToMake { path }
            | Step::File { path, .. }
            | Step::Mount { path, .. }
            | Step::LoopsOver { path, .. }
            | Step::Cgroup { path, .. } => Some(path),
            Step::Program { exe, .. } => Some(exe),
            Step::Process { .. } => None,
        };
        if let Some(p) = p {
            check_path(p).map_err(|w| TestbedError::Invalid(format!("testbed path: {w}")))?;
        }
        self.rec.steps.push(s);
        self.save()
    }

    /// The failed make is undone; the record goes once everything it names is gone.
    pub(crate) fn abandon(self) {
        let _ = self.finish();
    }

    /// Undo every step, then remove the record (kept, for `cleanup`, when a step could not
    /// be undone).
    pub(crate) fn finish(self) -> Result<()> {
        teardown::teardown(&self.rec)?;
        self.state.remove_owned(&self.file)?;
        Ok(())
    }
}

/// Write the record `NAME.testbed` whole under its free name (a name is taken by one maker
/// only; a write that fails, ENOSPC included, leaves no record behind).
pub(crate) fn claim(state: &State, name: &str, kind: &Kind) -> Result<Maker> {
    super::check_name(name)?;
    let dir = state.open_or_create()?;
    let file = OsString::from(format!("{name}{SUFFIX}"));
    let me = std::process::id();
    let start = fiox_guard::process::start_time(me).unwrap_or(0);
    let rec = Record::new(name, kind, Some((me, start)));
    output::create_in(&dir, &file, rec.to_text().as_bytes(), 0o600).map_err(|e| {
        if e.is_exists() {
            TestbedError::Invalid(format!(
                "a testbed named {name} exists ({}); pick another --name or \
                 `fiox testbed down {name}`",
                dir.join(&file).display()
            ))
        } else {
            e.into()
        }
    })?;
    Ok(Maker {
        rec,
        state: dir,
        file,
    })
}

pub(crate) fn build(m: &mut Maker, spec: &Spec) -> Result<()> {
    match spec.kind {
        Kind::Tmpfs | Kind::Ramfs => build_ram(m, spec),
        Kind::Loop | Kind::Fs => build_loop(m, spec),
        Kind::Slow => build_slow(m, spec),
        Kind::Vm => Err(TestbedError::Invalid(
            "a vm is made around a run (--vm, an experiment's vm = {...}), not as a testbed".into(),
        )),
        Kind::Machine => Err(TestbedError::Invalid(
            "machine limits are made around a run (--machine-memory, --machine-cpus), not \
             as a testbed"
                .into(),
        )),
        Kind::Scratch => Err(TestbedError::Invalid(
            "a scratch file is made by the run that uses it (fiox quick), not as a testbed".into(),
        )),
    }
}

/// The absolute path the kernel knows for the directory open as `dir`.
fn real_path(dir: &Dir) -> Result<PathBuf> {
    std::fs::read_link(dir.fd_path()).map_err(|e| TestbedError::io("resolve", dir.path(), e))
}

/// Tries of [`fresh_dir`] before a taken name is the make's error.
const NAME_TRIES: u32 = 8;

/// The name of a testbed's directory: `fiox-testbed-NAME-PID`, and from the second try on
/// with bits of the clock, so that a name another user planted in a shared directory (they can
/// guess the first) costs a retry, not the testbed (adversarial round 3's M8).
fn dir_name(testbed: &str, attempt: u32) -> OsString {
    let pid = std::process::id();
    if attempt == 0 {
        return format!("fiox-testbed-{testbed}-{pid}").into();
    }
    let salt = fiox_guard::output::name_salt();
    format!("fiox-testbed-{testbed}-{pid}-{salt:x}").into()
}

/// Create the directory `fiox-testbed-NAME-PID` under `parent` (nothing may be at the name:
/// something there, a planted link included, is passed over for another name) and record it
/// with its identity.
pub(crate) fn fresh_dir(m: &mut Maker, parent: &Path) -> Result<Fresh> {
    let parent = Dir::open(parent)?;
    let real = real_path(&parent)?;
    let mut attempt = 0;
    loop {
        let name = dir_name(&m.rec.name, attempt);
        let path = real.join(&name);
        // Recorded before it exists: a kill between the mkdir and the step below left an
        // empty directory that cleanup said it had removed (R3).
        m.step(Step::DirToMake { path: path.clone() })?;
        let dir = match parent.create_dir(&name, 0o755) {
            Ok(dir) => dir,
            Err(e) if e.is_exists() && attempt + 1 < NAME_TRIES => {
                attempt += 1;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        m.step(Step::Tree {
            path: path.clone(),
            id: dir.stat_self().id,
        })?;
        return Ok(Fresh {
            parent,
            name,
            dir,
            path,
        });
    }
}

/// A testbed's fresh directory: its parent, its name there, itself, and its recorded path.
pub(crate) struct Fresh {
    pub(crate) parent: Dir,
    pub(crate) name: OsString,
    pub(crate) dir: Dir,
    pub(crate) path: PathBuf,
}

fn build_ram(m: &mut Maker, spec: &Spec) -> Result<()> {
    let fs = spec.kind.name();
    crate::mount::mount_support(fs)?;
    let parent = spec.dir.clone().unwrap_or_else(std::env::temp_dir);
    let Fresh {
        parent,
        name,
        dir,
        path,
    } = fresh_dir(m, &parent)?;
    let mut data = String::from("mode=0755");
    if spec.kind == Kind::Tmpfs {
        let _ = write!(data, ",size={}", spec.size);
    }
    if !spec.mount_options.is_empty() {
        let _ = write!(data, ",{}", spec.mount_options);
    }
    let what = Source {
        fstype: fs,
        source: OsStr::new("fiox-testbed"),
        flags: libc::MS_NOSUID | libc::MS_NODEV,
        data: &data,
    };
    if parent.stat(&name)?.map(|s| s.id) != Some(dir.stat_self().id) {
        return Err(TestbedError::Invalid(format!(
            "{} was replaced while fiox made it",
            path.display()
        )));
    }
    drop(dir);
    let mnt_id = mount_on(&parent, &name, &what)?;
    m.step(Step::Mount {
        path: path.clone(),
        mnt_id,
    })?;
    m.rec.target = path.clone();
    m.rec
        .info
        .insert("mount".into(), path.display().to_string());
    m.rec.info.insert("fs".into(), fs.into());
    if spec.kind == Kind::Tmpfs {
        m.rec.info.insert("size".into(), spec.size.to_string());
    }
    m.save()
}

fn build_loop(m: &mut Maker, spec: &Spec) -> Result<()> {
    if spec.size < 1 << 20 {
        return Err(TestbedError::Invalid(format!(
            "testbed size {} (at least 1 MiB)",
            spec.size
        )));
    }
    let parent = spec
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    let Fresh { dir, path, .. } = fresh_dir(m, &parent)?;
    let image = path.join("backing.img");
    let f = dir.create_file(OsStr::new("backing.img"), 0o644, Layout::Complete)?;
    f.set_len(spec.size)
        .map_err(|e| TestbedError::io("size backing file", &image, e))?;
    let meta = f
        .metadata()
        .map_err(|e| TestbedError::io("stat", &image, e))?;
    if spec.kind == Kind::Fs {
        mkfs(&spec.fs, &spec.mkfs_options, &f, &image)?;
    }
    let (dev_no, ino) = Identity::of(&meta).dev_ino();
    m.step(Step::LoopsOver {
        path: image.clone(),
        dev: dev_no,
        ino,
    })?;
    let opts = LoopOptions {
        direct_io: false,
        block_size: spec.block_size,
        autoclear: false,
        ..LoopOptions::default()
    };
    let dev = LoopDevice::attach_open(&f, &image, &opts)?;
    drop(f);
    describe_loop(m, spec, &dev, &image)?;
    // The binding stays after this process exits; the record's LoopsOver step undoes it.
    let dev_path = dev.persist();
    m.rec.target = dev_path.clone();
    if spec.kind == Kind::Fs {
        mount_fs(m, spec, &dir, &path, &dev_path)?;
    }
    m.save()
}

fn describe_loop(m: &mut Maker, spec: &Spec, dev: &LoopDevice, image: &Path) -> Result<()> {
    let info = &mut m.rec.info;
    info.insert("device".into(), dev.path().display().to_string());
    info.insert("backing".into(), image.display().to_string());
    if let Some(fs) = crate::probe::fs_type_of(image) {
        info.insert("backing_fs".into(), fs);
    }
    if spec.direct_io {
        dev.set_direct_io(true)?;
    }
    info.insert("direct_io".into(), on_off(dev.direct_io().unwrap_or(false)));
    info.insert(
        "block_size".into(),
        dev.logical_block_size().unwrap_or(512).to_string(),
    );
    Ok(())
}

/// Make `mnt` in the testbed's directory and mount the loop device's filesystem there.
fn mount_fs(m: &mut Maker, spec: &Spec, dir: &Dir, path: &Path, dev: &Path) -> Result<()> {
    let mnt = path.join("mnt");
    dir.create_dir(OsStr::new("mnt"), 0o755)?;
    let (flags, data) = mount_flags(&spec.mount_options);
    let what = Source {
        fstype: &spec.fs,
        source: dev.as_os_str(),
        flags,
        data: &data,
    };
    let mnt_id = mount_on(dir, OsStr::new("mnt"), &what)?;
    m.step(Step::Mount {
        path: mnt.clone(),
        mnt_id,
    })?;
    m.rec.target = mnt.clone();
    m.rec.info.insert("mount".into(), mnt.display().to_string());
    m.rec.info.insert("fs".into(), spec.fs.clone());
    if !spec.mount_options.is_empty() {
        m.rec
            .info
            .insert("mount_options".into(), spec.mount_options.clone());
    }
    Ok(())
}

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// `mkfs.FS -q -F|-f OPTIONS /proc/PID/fd/N`: the backing file open as `file` (mkfs formats
/// that very inode); the options are checked again here (paths may have appeared since the
/// spec was read).
fn mkfs(fs: &str, extra: &[String], file: &std::fs::File, image: &Path) -> Result<()> {
    check_mkfs_options(extra).map_err(|w| {
        TestbedError::Invalid(format!("testbed mkfs_options={}: {w}", extra.join(" ")))
    })?;
    let force = if fs == "ext4" { "-F" } else { "-f" };
    let mut args = vec!["-q".to_string(), force.to_string()];
    args.extend(extra.iter().cloned());
    crate::mount::mkfs(&format!("mkfs.{fs}"), &args, file, image)
}

/// The flag-like mount options (ro, noatime, sync...) as mount flags, the rest as the
/// filesystem's data string.
fn mount_flags(options: &str) -> (libc::c_ulong, String) {
    let mut flags: libc::c_ulong = 0;
    let mut data = Vec::new();
    for o in options.split(',').filter(|o| !o.is_empty()) {
        match o {
            "ro" => flags |= libc::MS_RDONLY,
            "noatime" => flags |= libc::MS_NOATIME,
            "nodiratime" => flags |= libc::MS_NODIRATIME,
            "relatime" => flags |= libc::MS_RELATIME,
            "sync" => flags |= libc::MS_SYNCHRONOUS,
            "nosuid" => flags |= libc::MS_NOSUID,
            "nodev" => flags |= libc::MS_NODEV,
            "noexec" => flags |= libc::MS_NOEXEC,
            _ => data.push(o),
        }
    }
    (flags, data.join(","))
}

/// What `serve-slow` prints once it serves: "ready MOUNT FILE DEV INO BTIME MNT_ID" (the
/// mount point's directory identity, BTIME "-" when none, and the mount's id).
struct Ready {
    mnt: PathBuf,
    file: PathBuf,
    id: Identity,
    mnt_id: u64,
}

fn parse_ready(line: &str) -> Option<Ready> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let [ready, mnt, file, dev, ino, btime, mnt_id] = w.as_slice() else {
        return None;
    };
    let btime = match *btime {
        "-" => None,
        b => Some(b.parse().ok()?),
    };
    (*ready == "ready").then_some(())?;
    Some(Ready {
        mnt: PathBuf::from(mnt),
        file: PathBuf::from(file),
        id: Identity::from_parts(dev.parse().ok()?, ino.parse().ok()?, btime),
        mnt_id: mnt_id.parse().ok()?,
    })
}

/// The slow device: a FaultFs served by `SERVER testbed serve-slow`, in its own process group
/// (a Ctrl-C in the terminal that made it does not stop it), which prints a [`Ready`] line,
/// or why it failed (shown in the error).
fn build_slow(m: &mut Maker, spec: &Spec) -> Result<()> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let server = spec.server.clone().ok_or_else(|| {
        TestbedError::Invalid("a slow testbed needs the fiox binary to serve it".into())
    })?;
    let mut child = Command::new(&server)
        .args(["testbed", "serve-slow"])
        .arg(format!("--size={}", spec.size))
        .arg(format!("--delay_us={}", spec.delay_us))
        .arg(format!("--error_rate={}", spec.error_rate))
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| TestbedError::io("start slow-device server", &server, e))?;
    let pid = child.id();
    m.step(Step::Process {
        pid,
        start: fiox_guard::process::start_time(pid).unwrap_or(0),
    })?;
    let line = child.stdout.as_mut().map(read_line).unwrap_or_default();
    let Some(r) = parse_ready(&line) else {
        // M3: the server says why on its stdout (stderr is not kept: nobody reads it later).
        let mut rest = String::new();
        if let Some(out) = child.stdout.as_mut() {
            let _ = out.take(64 << 10).read_to_string(&mut rest);
        }
        let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
        let said = format!("{line}{rest}").trim().to_string();
        return Err(TestbedError::Command {
            cmd: format!("{} testbed serve-slow", server.display()),
            detail: format!("did not get ready ({status}): {said}"),
        });
    };
    m.step(Step::Tree {
        path: r.mnt.clone(),
        id: r.id,
    })?;
    m.step(Step::Mount {
        path: r.mnt.clone(),
        mnt_id: r.mnt_id,
    })?;
    m.rec.target = r.file.clone();
    let info = &mut m.rec.info;
    info.insert("file".into(), r.file.display().to_string());
    info.insert("mount".into(), r.mnt.display().to_string());
    info.insert("size".into(), spec.size.to_string());
    info.insert("delay_us".into(), spec.delay_us.to_string());
    info.insert("error_rate".into(), spec.error_rate.to_string());
    info.insert("server_pid".into(), pid.to_string());
    m.save()
}

/// One line from the server (byte by byte: the pipe must not be read past it, the server
/// keeps it).
fn read_line(out: &mut std::process::ChildStdout) -> String {
    use std::io::Read;
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while line.len() < 64 << 10 && matches!(out.read(&mut b), Ok(1)) {
        if b[0] == b'\n' {
            break;
        }
        line.push(b[0]);
    }
    String::from_utf8_lossy(&line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_carries_the_mount_points_identity() {
        let r = parse_ready("ready /tmp/m /tmp/m/slow.dat 1 2 - 77").unwrap();
        assert_eq!((r.mnt_id, r.id.dev_ino()), (77, (1, 2)));
        assert!(parse_ready("ready /tmp/m /tmp/m/slow.dat").is_none());
        assert!(parse_ready("error: FaultFs size too big").is_none());
        assert_eq!(mount_flags("ro,noatime,data=ordered").1, "data=ordered");
    }
}
