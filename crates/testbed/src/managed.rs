//! Named testbeds that outlive the process that made them (`fiox testbed up|list|down|
//! cleanup`, and experiments): a loop device over a backing file (direct I/O on or off,
//! logical block size), a size-limited tmpfs, a ramfs, or a filesystem (mkfs ext4, xfs or
//! btrfs, with options) on a loop device fiox made, mounted with options, or a slow device
//! (`slow`: a FaultFs file served by a fiox process of its own, with a per-request delay and
//! an error rate).
//!
//! Each testbed is a record file in the state directory (`$FIOX_TESTBED_DIR`, else
//! /run/fiox/testbeds as root, else `$XDG_RUNTIME_DIR/fiox/testbeds`), created with O_EXCL so
//! two makers cannot share a name. The record is written ahead: every step (a directory, a
//! backing file, the loop devices over that file, a mount) is recorded before it is made, so a
//! maker killed at any point (kill -9 included) leaves a record that `cleanup` can undo.
//! Teardown undoes the steps newest first, and each undo checks identity: a loop device is
//! detached only while it is bound to the inode fiox created, a directory is one fiox created
//! fresh (removal never crosses into a mount). A record carries its owner's pid and start
//! time; `cleanup` removes the testbeds whose owner is gone, `down` any named one. Kept
//! testbeds (`testbed up`) have no owner and stay until `down`.

use crate::cleanup::Undo;
use crate::error::{Result, TestbedError};
use crate::loopdev::{backing_dev_ino, LoopDevice, LoopOptions};
use crate::probe::is_mount_point;
use crate::sys;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What kind of testbed to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Loop,
    Tmpfs,
    Ramfs,
    Fs,
    Slow,
}

impl Kind {
    fn name(&self) -> &'static str {
        match self {
            Kind::Loop => "loop",
            Kind::Tmpfs => "tmpfs",
            Kind::Ramfs => "ramfs",
            Kind::Fs => "fs",
            Kind::Slow => "slow",
        }
    }
}

/// A testbed's description (from `fiox testbed up` switches or an experiment file).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub kind: Kind,
    /// Bytes of the backing file (loop, fs) or the tmpfs limit.
    pub size: u64,
    /// LOOP_SET_DIRECT_IO on the loop device (loop, fs).
    pub direct_io: bool,
    /// Logical block size of the loop device.
    pub block_size: Option<u32>,
    /// Where the backing file lives (its filesystem matters); default /var/tmp.
    pub dir: Option<PathBuf>,
    /// Filesystem for `fs`: ext4, xfs or btrfs.
    pub fs: String,
    /// Extra mkfs arguments for `fs`.
    pub mkfs_options: Vec<String>,
    /// Mount options (comma separated) for `fs` and tmpfs.
    pub mount_options: String,
    /// `slow`: microseconds each read or write request waits (served one at a time).
    pub delay_us: u64,
    /// `slow`: share of requests failing with EIO.
    pub error_rate: f64,
    /// `slow`: the program serving the file, run as `SERVER testbed serve-slow ...` (the fiox
    /// binary; set by the caller, not by a key).
    pub server: Option<PathBuf>,
}

/// Keys [`Spec::from_pairs`] accepts.
pub const SPEC_KEYS: &str = "size, direct_io (on|off), block_size, dir, fs (ext4|xfs|btrfs), \
                             mkfs_options, mount_options; slow: size, delay_us, error_rate";

impl Spec {
    /// Build a spec from a kind name and `key=value` pairs (see [`SPEC_KEYS`]).
    pub fn from_pairs(kind: &str, pairs: &[(String, String)]) -> Result<Spec> {
        let kind = match kind {
            "loop" => Kind::Loop,
            "tmpfs" => Kind::Tmpfs,
            "ramfs" => Kind::Ramfs,
            "fs" => Kind::Fs,
            "slow" => Kind::Slow,
            k => {
                return Err(TestbedError::Invalid(format!(
                    "testbed kind {k:?}: expected loop, tmpfs, ramfs, fs or slow"
                )))
            }
        };
        let mut s = Spec {
            kind,
            size: 1 << 30,
            direct_io: false,
            block_size: None,
            dir: None,
            fs: "ext4".into(),
            mkfs_options: Vec::new(),
            mount_options: String::new(),
            delay_us: 0,
            error_rate: 0.0,
            server: None,
        };
        if s.kind == Kind::Slow {
            // FaultFs keeps the file in memory.
            s.size = 64 << 20;
        }
        for (k, v) in pairs {
            s.set(k, v)?;
        }
        Ok(s)
    }

    fn set(&mut self, key: &str, v: &str) -> Result<()> {
        let bad = |why: &str| TestbedError::Invalid(format!("testbed {key}={v}: {why}"));
        match key.replace('-', "_").as_str() {
            "size" => self.size = parse_size(v).ok_or_else(|| bad("expected a size like 1g"))?,
            "direct_io" | "dio" => {
                self.direct_io = match v {
                    "on" | "1" | "true" | "yes" => true,
                    "off" | "0" | "false" | "no" => false,
                    _ => return Err(bad("expected on or off")),
                }
            }
            "block_size" | "bs" => {
                self.block_size = Some(v.parse().map_err(|_| bad("expected 512..4096"))?)
            }
            "dir" => self.dir = Some(PathBuf::from(v)),
            "fs" => match v {
                "ext4" | "xfs" | "btrfs" => self.fs = v.into(),
                _ => return Err(bad("expected ext4, xfs or btrfs")),
            },
            "mkfs_options" => self.mkfs_options = v.split_whitespace().map(String::from).collect(),
            "mount_options" => self.mount_options = v.into(),
            "delay_us" => self.delay_us = v.parse().map_err(|_| bad("expected microseconds"))?,
            "error_rate" => {
                self.error_rate = v
                    .parse()
                    .ok()
                    .filter(|r| (0.0..=1.0).contains(r))
                    .ok_or_else(|| bad("expected a share between 0 and 1"))?
            }
            _ => return Err(bad(&format!("unknown key; known: {SPEC_KEYS}"))),
        }
        Ok(())
    }
}

/// Parse "4096", "512k", "1g", "1.5g" (binary multiples, as fio's sizes).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let s = s.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    let v: f64 = num.parse().ok()?;
    (v > 0.0 && v.is_finite()).then_some((v * mult as f64) as u64)
}

/// One recorded step, undone in reverse order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A directory fiox created fresh: removed with its contents (never crossing a mount).
    Tree(PathBuf),
    /// A mount on a directory fiox created.
    Mount(PathBuf),
    /// Every loop device bound to the file with this device and inode number (the backing
    /// file fiox created at `path`).
    LoopsOver { path: PathBuf, dev: u64, ino: u64 },
    /// A server process fiox started (pid, start time): stopped with SIGTERM, then SIGKILL.
    Process { pid: u32, start: u64 },
}

/// A testbed's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub name: String,
    pub kind: String,
    /// (pid, start time in clock ticks) of the owning process; `None` for kept testbeds.
    pub owner: Option<(u32, u64)>,
    /// What a job should use: the device node (loop) or the mount point.
    pub target: PathBuf,
    /// Descriptive settings (device, backing, direct_io, fs...).
    pub info: BTreeMap<String, String>,
    pub steps: Vec<Step>,
    /// Whether making it finished.
    pub ready: bool,
}

impl Record {
    fn to_text(&self) -> String {
        let mut t = format!("fiox-testbed 1\nname {}\nkind {}\n", self.name, self.kind);
        if let Some((pid, start)) = self.owner {
            let _ = writeln!(t, "owner {pid} {start}");
        }
        let _ = writeln!(t, "target {}", self.target.display());
        let _ = writeln!(t, "ready {}", self.ready);
        for (k, v) in &self.info {
            let _ = writeln!(t, "info {k}={v}");
        }
        for s in &self.steps {
            let _ = match s {
                Step::Tree(p) => writeln!(t, "tree {}", p.display()),
                Step::Mount(p) => writeln!(t, "mount {}", p.display()),
                Step::LoopsOver { path, dev, ino } => {
                    writeln!(t, "loops-over {dev} {ino} {}", path.display())
                }
                Step::Process { pid, start } => writeln!(t, "process {pid} {start}"),
            };
        }
        t
    }

    fn parse(text: &str, file: &Path) -> Result<Record> {
        let bad = |line: &str| {
            TestbedError::Invalid(format!(
                "testbed record {}: bad line {line:?}",
                file.display()
            ))
        };
        let mut r = Record {
            name: String::new(),
            kind: String::new(),
            owner: None,
            target: PathBuf::new(),
            info: BTreeMap::new(),
            steps: Vec::new(),
            ready: false,
        };
        for line in text.lines().skip(1) {
            let (key, rest) = line.split_once(' ').ok_or_else(|| bad(line))?;
            match key {
                "name" => r.name = rest.into(),
                "kind" => r.kind = rest.into(),
                "owner" => {
                    let (p, s) = rest.split_once(' ').ok_or_else(|| bad(line))?;
                    r.owner = Some((p.parse().map_err(|_| bad(line))?, s.parse().unwrap_or(0)));
                }
                "target" => r.target = rest.into(),
                "ready" => r.ready = rest == "true",
                "info" => {
                    let (k, v) = rest.split_once('=').ok_or_else(|| bad(line))?;
                    r.info.insert(k.into(), v.into());
                }
                "tree" => r.steps.push(Step::Tree(rest.into())),
                "process" => {
                    let (p, s) = rest.split_once(' ').ok_or_else(|| bad(line))?;
                    let pid = p.parse().map_err(|_| bad(line))?;
                    let start = s.parse().map_err(|_| bad(line))?;
                    r.steps.push(Step::Process { pid, start });
                }
                "mount" => r.steps.push(Step::Mount(rest.into())),
                "loops-over" => {
                    let mut f = rest.splitn(3, ' ');
                    let (d, i, p) = (f.next(), f.next(), f.next());
                    let num =
                        |x: Option<&str>| x.and_then(|x| x.parse().ok()).ok_or_else(|| bad(line));
                    let path = p.ok_or_else(|| bad(line))?.into();
                    r.steps.push(Step::LoopsOver {
                        path,
                        dev: num(d)?,
                        ino: num(i)?,
                    });
                }
                _ => return Err(bad(line)),
            }
        }
        Ok(r)
    }

    /// Whether the owner process is gone, or a server process the testbed needs (a kept
    /// testbed has no owner; it is orphaned only by losing its server).
    pub fn orphaned(&self) -> bool {
        let gone = |pid: u32, start: u64| process_start(pid) != Some(start);
        self.owner.is_some_and(|(pid, start)| gone(pid, start))
            || (self.ready
                && self.steps.iter().any(|s| match s {
                    Step::Process { pid, start } => gone(*pid, *start),
                    _ => false,
                }))
    }
}

/// The start time of process `pid` in clock ticks since boot (field 22 of /proc/PID/stat), so
/// a reused pid is not taken for the owner.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let after = stat.get(stat.rfind(')')? + 2..)?;
    after.split_whitespace().nth(19)?.parse().ok()
}

/// The state directory (see the module documentation).
pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FIOX_TESTBED_DIR") {
        return PathBuf::from(d);
    }
    if crate::loopdev::require_root("").is_ok() {
        return PathBuf::from("/run/fiox/testbeds");
    }
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(|d| PathBuf::from(d).join("fiox/testbeds"))
        .unwrap_or_else(|| std::env::temp_dir().join("fiox-testbeds"))
}

fn record_path(name: &str) -> PathBuf {
    state_dir().join(format!("{name}.testbed"))
}

fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(TestbedError::Invalid(format!(
            "testbed name {name:?}: use 1-64 letters, digits, '-', '_' or '.'"
        )))
    }
}

/// A record being made: saved after every step.
struct Maker {
    rec: Record,
    path: PathBuf,
}

impl Maker {
    fn save(&self) -> Result<()> {
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, self.rec.to_text())
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| TestbedError::io("write testbed record", &self.path, e))
    }

    fn step(&mut self, s: Step) -> Result<()> {
        self.rec.steps.push(s);
        self.save()
    }
}

/// Create the record file exclusively: a name is taken by one maker only.
fn claim(name: &str, kind: &Kind) -> Result<Maker> {
    check_name(name)?;
    let dir = state_dir();
    std::fs::create_dir_all(&dir).map_err(|e| TestbedError::io("create state dir", &dir, e))?;
    let path = record_path(name);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => TestbedError::Invalid(format!(
                "a testbed named {name} exists ({}); pick another --name or \
                 `fiox testbed down {name}`",
                path.display()
            )),
            _ => TestbedError::io("create testbed record", &path, e),
        })?;
    let me = std::process::id();
    let rec = Record {
        name: name.into(),
        kind: kind.name().into(),
        owner: Some((me, process_start(me).unwrap_or(0))),
        target: PathBuf::new(),
        info: BTreeMap::new(),
        steps: Vec::new(),
        ready: false,
    };
    f.write_all(rec.to_text().as_bytes())
        .map_err(|e| TestbedError::io("write testbed record", &path, e))?;
    Ok(Maker { rec, path })
}

/// A free name "KIND-N".
fn free_name(kind: &Kind) -> String {
    let taken: Vec<String> = list()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.name)
        .collect();
    (1..)
        .map(|n| format!("{}{n}", kind.name()))
        .find(|n| !taken.contains(n) && !record_path(n).exists())
        .unwrap_or_else(|| kind.name().into())
}

/// Make a testbed. `keep`: it stays after this process exits (until `down`); otherwise this
/// process owns it and `cleanup` removes it once the process is gone.
pub fn up(spec: &Spec, name: Option<&str>, keep: bool) -> Result<Record> {
    let name = name.map_or_else(|| free_name(&spec.kind), str::to_string);
    let mut m = claim(&name, &spec.kind)?;
    match build(&mut m, spec) {
        Ok(()) => {
            m.rec.ready = true;
            if keep {
                m.rec.owner = None;
            }
            m.save()?;
            Ok(m.rec)
        }
        Err(e) => {
            // Undo what was made; the first error is the one to report.
            let _ = teardown(&m.rec);
            let _ = std::fs::remove_file(&m.path);
            Err(e)
        }
    }
}

fn build(m: &mut Maker, spec: &Spec) -> Result<()> {
    match spec.kind {
        Kind::Tmpfs | Kind::Ramfs => build_ram(m, spec),
        Kind::Loop | Kind::Fs => build_loop(m, spec),
        Kind::Slow => build_slow(m, spec),
    }
}

/// A fresh directory `fiox-testbed-NAME-PID` under `parent`, recorded before it is made.
fn fresh_dir(m: &mut Maker, parent: &Path) -> Result<PathBuf> {
    let dir = parent.join(format!(
        "fiox-testbed-{}-{}",
        m.rec.name,
        std::process::id()
    ));
    m.step(Step::Tree(dir.clone()))?;
    std::fs::create_dir(&dir).map_err(|e| TestbedError::io("create directory", &dir, e))?;
    Ok(dir)
}

fn build_ram(m: &mut Maker, spec: &Spec) -> Result<()> {
    let fs = spec.kind.name();
    crate::mount::mount_support(fs)?;
    let dir = fresh_dir(m, &std::env::temp_dir())?;
    let mut data = String::from("mode=0755");
    if spec.kind == Kind::Tmpfs {
        let _ = write!(data, ",size={}", spec.size);
    }
    if !spec.mount_options.is_empty() {
        let _ = write!(data, ",{}", spec.mount_options);
    }
    m.step(Step::Mount(dir.clone()))?;
    sys::mount(
        "fiox-testbed",
        &dir,
        fs,
        libc::MS_NOSUID | libc::MS_NODEV,
        Some(&data),
    )
    .map_err(|e| TestbedError::io("mount", &dir, e))?;
    m.rec.target = dir.clone();
    m.rec.info.insert("mount".into(), dir.display().to_string());
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
    let dir = fresh_dir(m, &parent)?;
    let image = dir.join("backing.img");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&image)
        .map_err(|e| TestbedError::io("create backing file", &image, e))?;
    f.set_len(spec.size)
        .map_err(|e| TestbedError::io("size backing file", &image, e))?;
    let meta = f
        .metadata()
        .map_err(|e| TestbedError::io("stat", &image, e))?;
    drop(f);
    if spec.kind == Kind::Fs {
        mkfs(&spec.fs, &spec.mkfs_options, &image)?;
    }
    m.step(Step::LoopsOver {
        path: image.clone(),
        dev: meta.dev(),
        ino: meta.ino(),
    })?;
    let opts = LoopOptions {
        direct_io: false,
        block_size: spec.block_size,
        autoclear: false,
        ..LoopOptions::default()
    };
    let dev = LoopDevice::attach(&image, &opts)?;
    let info = &mut m.rec.info;
    info.insert("device".into(), dev.path().display().to_string());
    info.insert("backing".into(), image.display().to_string());
    if let Some(fs) = crate::probe::fs_type_of(&image) {
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
    // The binding stays after this process exits; the record's LoopsOver step undoes it.
    let dev_path = dev.persist();
    m.rec.target = dev_path.clone();
    if spec.kind == Kind::Fs {
        let mnt = dir.join("mnt");
        std::fs::create_dir(&mnt).map_err(|e| TestbedError::io("create directory", &mnt, e))?;
        m.step(Step::Mount(mnt.clone()))?;
        mount_fs(&dev_path, &mnt, &spec.fs, &spec.mount_options)?;
        m.rec.target = mnt.clone();
        m.rec.info.insert("mount".into(), mnt.display().to_string());
        m.rec.info.insert("fs".into(), spec.fs.clone());
        if !spec.mount_options.is_empty() {
            m.rec
                .info
                .insert("mount_options".into(), spec.mount_options.clone());
        }
    }
    m.save()
}

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// `mkfs.FS -q|-f ... IMAGE`.
fn mkfs(fs: &str, extra: &[String], image: &Path) -> Result<()> {
    let prog = format!("mkfs.{fs}");
    let force: &[&str] = match fs {
        "ext4" => &["-q", "-F"],
        "xfs" => &["-q", "-f"],
        _ => &["-q", "-f"],
    };
    let out = Command::new(&prog)
        .args(force)
        .args(extra)
        .arg(image)
        .output()
        .map_err(|e| TestbedError::Command {
            cmd: prog.clone(),
            detail: format!(
                "cannot run it ({e}); install its package (e2fsprogs, xfsprogs, btrfs-progs)"
            ),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(TestbedError::Command {
            cmd: format!("{prog} {}", image.display()),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// Mount `dev` on `mnt`; the flag-like options (ro, noatime, sync...) become mount flags, the
/// rest the filesystem's data string.
fn mount_fs(dev: &Path, mnt: &Path, fs: &str, options: &str) -> Result<()> {
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
    let data = data.join(",");
    let src = dev.to_string_lossy();
    sys::mount(
        &src,
        mnt,
        fs,
        flags,
        (!data.is_empty()).then_some(data.as_str()),
    )
    .map_err(|e| TestbedError::io("mount", mnt, e))
}

/// The slow device: a FaultFs served by `SERVER testbed serve-slow`, in its own process group
/// (a Ctrl-C in the terminal that made it does not stop it), which prints "ready MOUNT FILE".
fn build_slow(m: &mut Maker, spec: &Spec) -> Result<()> {
    use std::io::BufRead;
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
        start: process_start(pid).unwrap_or(0),
    })?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = std::io::BufReader::new(out).read_line(&mut line);
    }
    let mut words = line.split_whitespace();
    let (Some("ready"), Some(mnt), Some(file)) = (words.next(), words.next(), words.next()) else {
        let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
        return Err(TestbedError::Command {
            cmd: format!("{} testbed serve-slow", server.display()),
            detail: format!("did not get ready ({status}); run it by hand to see why"),
        });
    };
    m.step(Step::Tree(mnt.into()))?;
    m.step(Step::Mount(mnt.into()))?;
    m.rec.target = file.into();
    let info = &mut m.rec.info;
    info.insert("file".into(), file.into());
    info.insert("mount".into(), mnt.into());
    info.insert("size".into(), spec.size.to_string());
    info.insert("delay_us".into(), spec.delay_us.to_string());
    info.insert("error_rate".into(), spec.error_rate.to_string());
    info.insert("server_pid".into(), pid.to_string());
    m.save()
}

/// Stop server `pid` if it is still the process fiox started: SIGTERM, up to 3 s, SIGKILL.
fn stop_process(pid: u32, start: u64) -> Result<()> {
    let alive = || process_start(pid) == Some(start) && !is_zombie(pid);
    for (sig, wait_ms) in [("-TERM", 3000u64), ("-KILL", 1000)] {
        if !alive() {
            return Ok(());
        }
        let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
        let t0 = std::time::Instant::now();
        while alive() && t0.elapsed() < std::time::Duration::from_millis(wait_ms) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    if alive() {
        Err(TestbedError::Invalid(format!(
            "server process {pid} does not stop"
        )))
    } else {
        Ok(())
    }
}

/// A zombie has exited (its parent has not reaped it yet): it holds nothing.
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s.get(s.rfind(')')? + 2..)?.starts_with('Z')))
        .unwrap_or(false)
}

/// Undo a record's steps newest first; returns the first failure after trying them all.
pub fn teardown(rec: &Record) -> Result<()> {
    let mut first = None;
    for s in rec.steps.iter().rev() {
        let r = match check_step(s) {
            Ok(true) => undo_step(s),
            Ok(false) => Ok(()),
            Err(e) => Err(e),
        };
        if let Err(e) = r {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

/// Whether a path is (under) a directory fiox made for a testbed: every directory fiox
/// creates for one is named `fiox-testbed-...`.
fn in_testbed_dir(p: &Path) -> bool {
    p.ancestors().any(|a| {
        a.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("fiox-testbed-"))
    })
}

/// Refuse a step that cannot be fiox's, whatever the record file says (a record is only a
/// file: removal, unmount, detach and kill must stay within what fiox makes). `Ok(false)`:
/// nothing of fiox's is left to undo.
fn check_step(s: &Step) -> Result<bool> {
    let refuse = |what: String| {
        Err(TestbedError::Invalid(format!(
            "testbed record step refused: {what} is not something fiox makes"
        )))
    };
    match s {
        Step::Tree(p)
            if !p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("fiox-testbed-")) =>
        {
            refuse(format!("directory {}", p.display()))
        }
        Step::Mount(p) if !in_testbed_dir(p) => refuse(format!("mount {}", p.display())),
        Step::LoopsOver { path, dev, ino } => {
            // The backing file must still be the recorded inode in a testbed directory; once
            // it is gone no loop device can be bound to it by path, and the inode number may
            // be reused by someone else's file.
            let same = std::fs::metadata(path).is_ok_and(|m| m.dev() == *dev && m.ino() == *ino);
            if !in_testbed_dir(path) {
                refuse(format!("backing file {}", path.display()))
            } else {
                Ok(same)
            }
        }
        Step::Process { pid, start } => {
            if process_start(*pid) != Some(*start) || is_zombie(*pid) {
                // Exited (or the pid now belongs to another process): nothing to stop.
                return Ok(false);
            }
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if cmd.split(|b| *b == 0).any(|w| w == b"serve-slow") {
                Ok(true)
            } else {
                refuse(format!("process {pid}"))
            }
        }
        _ => Ok(true),
    }
}

fn undo_step(s: &Step) -> Result<()> {
    match s {
        Step::Tree(p) => Undo::RemoveTree(p.clone()).run(),
        Step::Mount(p) if is_mount_point(p) => Undo::Unmount(p.clone()).run(),
        Step::Mount(_) => Ok(()),
        Step::LoopsOver { dev, ino, .. } => detach_loops_over(*dev, *ino),
        Step::Process { pid, start } => stop_process(*pid, *start),
    }
}

/// Read a record file, which must belong to this user and be writable by nobody else (a
/// record names things to remove, so a planted one must not be taken for fiox's).
fn read_record(p: &Path) -> Result<Record> {
    let meta = std::fs::symlink_metadata(p).map_err(|e| TestbedError::io("stat", p, e))?;
    let euid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|st| {
            st.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u32>().ok())
        });
    if !meta.is_file() || Some(meta.uid()) != euid || meta.mode() & 0o022 != 0 {
        return Err(TestbedError::Invalid(format!(
            "testbed record {} is not a regular file of yours writable only by you; fiox does \
             not act on it (remove it by hand)",
            p.display()
        )));
    }
    let text = std::fs::read_to_string(p).map_err(|e| TestbedError::io("read", p, e))?;
    Record::parse(&text, p)
}

/// Detach every loop device bound to inode (`dev`, `ino`).
fn detach_loops_over(dev: u64, ino: u64) -> Result<()> {
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Ok(());
    };
    let names = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop") && backing_dev_ino(n) == Some((dev, ino)));
    for n in names {
        Undo::DetachLoop {
            device: PathBuf::from(format!("/dev/{n}")),
            backing_dev: dev,
            backing_ino: ino,
        }
        .run()?;
    }
    Ok(())
}

/// Every recorded testbed, by name.
pub fn list() -> Result<Vec<Record>> {
    let dir = state_dir();
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TestbedError::io("read state dir", &dir, e)),
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "testbed") {
            out.push(read_record(&p)?);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Remove the testbed `name` (whoever owns it).
pub fn down(name: &str) -> Result<()> {
    check_name(name)?;
    let path = record_path(name);
    if !path.exists() {
        return Err(TestbedError::Invalid(format!(
            "no testbed named {name} (in {}); see `fiox testbed list`",
            state_dir().display()
        )));
    }
    let rec = read_record(&path)?;
    teardown(&rec)?;
    std::fs::remove_file(&path).map_err(|e| TestbedError::io("remove testbed record", &path, e))
}

/// Remove every testbed whose owner process is gone; returns their names.
pub fn cleanup() -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for rec in list()? {
        if rec.orphaned() {
            down(&rec.name)?;
            removed.push(rec.name);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_outside_fiox_testbed_dirs_are_refused() {
        let refused = |s: Step| check_step(&s).unwrap_err().to_string();
        assert!(refused(Step::Tree("/etc".into())).contains("directory /etc"));
        assert!(refused(Step::Mount("/mnt".into())).contains("mount /mnt"));
        let e = refused(Step::LoopsOver {
            path: "/var/lib/x.img".into(),
            dev: 1,
            ino: 2,
        });
        assert!(e.contains("backing file /var/lib/x.img"), "{e}");
        // pid 1 is not a slow-device server.
        let init = process_start(1).unwrap();
        let e = refused(Step::Process {
            pid: 1,
            start: init,
        });
        assert!(e.contains("process 1"), "{e}");
        // A pid whose start time differs is another process: nothing to stop.
        assert!(!check_step(&Step::Process {
            pid: 1,
            start: init + 1
        })
        .unwrap());
        // A testbed's own directory passes; a backing file no longer there is nothing to undo.
        let tree = Step::Tree("/var/tmp/fiox-testbed-x-1".into());
        assert!(check_step(&tree).unwrap());
        let gone = Step::LoopsOver {
            path: "/var/tmp/fiox-testbed-x-1/backing.img".into(),
            dev: 1,
            ino: 2,
        };
        assert!(!check_step(&gone).unwrap());
    }

    #[test]
    fn record_round_trips_and_sizes_parse() {
        let rec = Record {
            name: "t1".into(),
            kind: "fs".into(),
            owner: Some((12, 34)),
            target: "/var/tmp/x/mnt".into(),
            info: [("direct_io".to_string(), "on".to_string())].into(),
            steps: vec![
                Step::Tree("/var/tmp/x".into()),
                Step::LoopsOver {
                    path: "/var/tmp/x/backing img".into(),
                    dev: 2049,
                    ino: 77,
                },
                Step::Mount("/var/tmp/x/mnt".into()),
            ],
            ready: true,
        };
        let back = Record::parse(&rec.to_text(), Path::new("t1.testbed")).unwrap();
        assert_eq!(back, rec);
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("512KiB"), Some(512 << 10));
        assert_eq!(parse_size("x"), None);
        assert!(check_name("../x").is_err());
        assert!(Spec::from_pairs("loop", &[("direct_io".into(), "maybe".into())]).is_err());
    }
}
