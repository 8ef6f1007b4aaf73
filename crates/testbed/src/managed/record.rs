//! A testbed's record: the text file `NAME.testbed` in the state directory that lists what was
//! made, each step bound to the identity it must still have when it is undone (a directory's
//! device, inode and birth time; a mount's id; a backing file's device and inode; a server's
//! pid and start time). Reading is strict: a record that is not a regular file owned by root
//! (by the running user when not root) with mode 0600, or that holds a line fiox does not
//! write (an unknown key, a relative path, a `.` or `..` component, a name that is not the
//! file's), is reported and skipped, never acted on.
//!
//! ```text
//! fiox-testbed 2
//! name NAME
//! kind loop|tmpfs|ramfs|fs|slow
//! owner PID START          (absent for kept testbeds)
//! target PATH
//! ready true|false
//! info KEY=VALUE           (any number)
//! tree DEV INO BTIME PATH  (BTIME in ns since the epoch, "-" where the filesystem has none)
//! mount MNT_ID PATH
//! loops-over DEV INO PATH
//! process PID START
//! cgroup DEV INO BTIME PATH (a cgroup directory fiox made for machine limits)
//! program PID START DEV INO PATH (a vm testbed's QEMU: pid, start time, executable)
//! ```

use super::spec::Kind;
use fiox_guard::process::running;
use fiox_guard::{Dir, Identity};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The first line of a record this fiox writes.
const HEADER: &str = "fiox-testbed 2";
/// The suffix of record file names.
pub(crate) const SUFFIX: &str = ".testbed";
/// A record is a few hundred bytes; anything larger is not one.
const MAX_RECORD: u64 = 1 << 20;

/// One recorded step, undone in reverse order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A directory fiox created fresh: removed with its contents (never crossing a mount)
    /// while it is still this directory.
    Tree { path: PathBuf, id: Identity },
    /// A directory about to be made (an intent, recorded before the mkdir: its maker may be
    /// killed between the two, R3): removed only while it is an empty directory of the
    /// running user's, which no one's data can be.
    DirToMake { path: PathBuf },
    /// A regular file fiox creates (a run's scratch file): removed while it is still the
    /// inode `id`; recorded before it exists (`id` None: its maker may die before the file is
    /// made), it is removed only while it carries fiox's mark.
    File { path: PathBuf, id: Option<Identity> },
    /// The mount `mnt_id` fiox made on a directory of this testbed.
    Mount { path: PathBuf, mnt_id: u64 },
    /// Every loop device bound to the inode (`dev`, `ino`): the backing file fiox created at
    /// `path`, inside a directory of this testbed.
    LoopsOver { path: PathBuf, dev: u64, ino: u64 },
    /// A server process fiox started (pid, start time): stopped with SIGTERM, then SIGKILL,
    /// only while it runs this fiox executable.
    Process { pid: u32, start: u64 },
    /// A cgroup directory fiox made (machine limits), removed (the kernel refuses while
    /// tasks are in it) only while it is still this directory on a cgroup filesystem.
    Cgroup { path: PathBuf, id: Identity },
    /// A program fiox started that is not fiox (a vm testbed's QEMU, `qemu-system-*`): pid,
    /// start time and its executable (path, device, inode); stopped with SIGTERM, then
    /// SIGKILL, only while it runs that executable. Pid 0: recorded before it was started
    /// (an intent); cleanup then looks for that executable carrying the record's tag.
    Program {
        pid: u32,
        start: u64,
        exe: PathBuf,
        dev: u64,
        ino: u64,
    },
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

/// A record file that was not acted on, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub file: PathBuf,
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "testbed record {} skipped: {}; fiox does not act on it (check it and remove it \
             by hand)",
            self.file.display(),
            self.why
        )
    }
}

/// The records of a state directory: the valid ones by name, and the skipped ones.
#[derive(Debug, Default)]
pub struct Listing {
    pub records: Vec<Record>,
    pub skipped: Vec<Skipped>,
}

fn btime_text(id: &Identity) -> String {
    id.btime().map_or("-".into(), |b| b.to_string())
}

impl Record {
    pub(crate) fn new(name: &str, kind: &Kind, owner: Option<(u32, u64)>) -> Record {
        Record {
            name: name.into(),
            kind: kind.name().into(),
            owner,
            target: PathBuf::new(),
            info: BTreeMap::new(),
            steps: Vec::new(),
            ready: false,
        }
    }

    /// The record's text (every path was checked by [`check_path`] when it was added).
    pub(crate) fn to_text(&self) -> String {
        let mut t = format!("{HEADER}\nname {}\nkind {}\n", self.name, self.kind);
        if let Some((pid, start)) = self.owner {
            let _ = writeln!(t, "owner {pid} {start}");
        }
        // A maker killed before its target is known leaves a record without one, which
        // `cleanup` must still read.
        if !self.target.as_os_str().is_empty() {
            let _ = writeln!(t, "target {}", self.target.display());
        }
        let _ = writeln!(t, "ready {}", self.ready);
        for (k, v) in &self.info {
            let _ = writeln!(t, "info {k}={v}");
        }
        for s in &self.steps {
            let _ = match s {
                Step::Tree { path, id } => {
                    let (dev, ino) = id.dev_ino();
                    let b = btime_text(id);
                    writeln!(t, "tree {dev} {ino} {b} {}", path.display())
                }
                Step::File { path, id: Some(id) } => {
                    let (dev, ino) = id.dev_ino();
                    let b = btime_text(id);
                    writeln!(t, "file {dev} {ino} {b} {}", path.display())
                }
                Step::File { path, id: None } => writeln!(t, "file - - - {}", path.display()),
                Step::DirToMake { path } => writeln!(t, "dir-to-make {}", path.display()),
                Step::Mount { path, mnt_id } => writeln!(t, "mount {mnt_id} {}", path.display()),
                Step::LoopsOver { path, dev, ino } => {
                    writeln!(t, "loops-over {dev} {ino} {}", path.display())
                }
                Step::Process { pid, start } => writeln!(t, "process {pid} {start}"),
                Step::Program {
                    pid,
                    start,
                    exe,
                    dev,
                    ino,
                } => writeln!(t, "program {pid} {start} {dev} {ino} {}", exe.display()),
                Step::Cgroup { path, id } => {
                    let (dev, ino) = id.dev_ino();
                    let b = btime_text(id);
                    writeln!(t, "cgroup {dev} {ino} {b} {}", path.display())
                }
            };
        }
        t
    }

    /// Parse a record's text; `name` is the testbed name its file name gives.
    pub(crate) fn parse(text: &str, name: &str) -> Result<Record, String> {
        let mut lines = text.lines();
        match lines.next() {
            Some(HEADER) => {}
            Some("fiox-testbed 1") => {
                return Err(
                    "it was written by an older fiox (format 1, whose steps carry no \
                            identity)"
                        .into(),
                )
            }
            _ => return Err(format!("it does not start with {HEADER:?}")),
        }
        let mut r = Record::new(name, &Kind::Loop, None);
        r.kind.clear();
        let mut seen_name = false;
        for line in lines {
            parse_line(&mut r, line).map_err(|why| format!("line {line:?}: {why}"))?;
            seen_name |= line.starts_with("name ");
        }
        if !seen_name || r.name != name {
            return Err(format!("it does not name itself {name:?}"));
        }
        if Kind::from_name(&r.kind).is_none() {
            return Err(format!("kind {:?} is no testbed kind", r.kind));
        }
        Ok(r)
    }

    /// Whether the owner process is gone (exited, a zombie, or its pid reused), or a server
    /// process the testbed needs (a kept testbed has no owner; it is orphaned only by losing
    /// its server).
    pub fn orphaned(&self) -> bool {
        self.owner.is_some_and(|(pid, start)| !running(pid, start))
            || (self.ready
                && self.steps.iter().any(|s| match s {
                    Step::Process { pid, start } => !running(*pid, *start),
                    _ => false,
                }))
    }

    /// The tree step whose directory is `dir`.
    pub(crate) fn tree_at(&self, dir: &Path) -> Option<&Identity> {
        self.steps.iter().find_map(|s| match s {
            Step::Tree { path, id } if path == dir => Some(id),
            _ => None,
        })
    }
}

fn num<T: std::str::FromStr>(w: Option<&str>) -> Result<T, String> {
    w.and_then(|w| w.parse().ok())
        .ok_or_else(|| "expected a number".to_string())
}

fn parse_line(r: &mut Record, line: &str) -> Result<(), String> {
    let (key, rest) = line.split_once(' ').ok_or("no value")?;
    match key {
        "name" => r.name = rest.into(),
        "kind" => r.kind = rest.into(),
        "owner" => {
            let mut w = rest.split(' ');
            r.owner = Some((num(w.next())?, num(w.next())?));
        }
        "target" => r.target = checked(rest)?,
        "ready" => {
            r.ready = match rest {
                "true" => true,
                "false" => false,
                _ => return Err("expected true or false".into()),
            }
        }
        "info" => {
            let (k, v) = rest.split_once('=').ok_or("expected KEY=VALUE")?;
            r.info.insert(k.into(), v.into());
        }
        "tree" | "cgroup" => {
            let mut w = rest.splitn(4, ' ');
            let (dev, ino) = (num(w.next())?, num(w.next())?);
            let btime = match w.next() {
                Some("-") => None,
                b => Some(num(b)?),
            };
            let path = checked(w.next().ok_or("no path")?)?;
            let id = Identity::from_parts(dev, ino, btime);
            r.steps.push(if key == "tree" {
                Step::Tree { path, id }
            } else {
                Step::Cgroup { path, id }
            });
        }
        "file" => {
            let mut w = rest.splitn(4, ' ');
            let id = match (w.next(), w.next(), w.next()) {
                (Some("-"), Some("-"), Some("-")) => None,
                (dev, ino, b) => Some(Identity::from_parts(
                    num(dev)?,
                    num(ino)?,
                    match b {
                        Some("-") => None,
                        b => Some(num(b)?),
                    },
                )),
            };
            let path = checked(w.next().ok_or("no path")?)?;
            r.steps.push(Step::File { path, id });
        }
        "dir-to-make" => r.steps.push(Step::DirToMake {
            path: checked(rest)?,
        }),
        "mount" => {
            let (id, p) = rest.split_once(' ').ok_or("no path")?;
            let mnt_id = num(Some(id))?;
            r.steps.push(Step::Mount {
                path: checked(p)?,
                mnt_id,
            });
        }
        "loops-over" => {
            let mut w = rest.splitn(3, ' ');
            let (dev, ino) = (num(w.next())?, num(w.next())?);
            let path = checked(w.next().ok_or("no path")?)?;
            r.steps.push(Step::LoopsOver { path, dev, ino });
        }
        "process" => {
            let mut w = rest.split(' ');
            let (pid, start) = (num(w.next())?, num(w.next())?);
            r.steps.push(Step::Process { pid, start });
        }
        "program" => {
            let mut w = rest.splitn(5, ' ');
            let (pid, start) = (num(w.next())?, num(w.next())?);
            let (dev, ino) = (num(w.next())?, num(w.next())?);
            let exe = checked(w.next().ok_or("no path")?)?;
            r.steps.push(Step::Program {
                pid,
                start,
                exe,
                dev,
                ino,
            });
        }
        _ => return Err("unknown key".into()),
    }
    Ok(())
}

/// The argument a guest's QEMU carries (`-name TAG`) so that a QEMU recorded only as an
/// intent (fiox killed between its start and the record of its pid) is found again.
pub(crate) fn program_tag(record: &str) -> String {
    format!("fiox-{record}")
}

/// A path as records hold them: absolute, with no `.` or `..` component, no newline, UTF-8.
pub(crate) fn check_path(p: &Path) -> Result<(), String> {
    let s = p
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))?;
    checked(s).map(|_| ())
}

fn checked(s: &str) -> Result<PathBuf, String> {
    if !s.starts_with('/') {
        return Err(format!("{s:?} is not an absolute path"));
    }
    if s.split('/').any(|c| c == "." || c == "..") || s.contains(['\n', '\0']) {
        return Err(format!(
            "{s:?} has a '.' or '..' component or a control character"
        ));
    }
    Ok(PathBuf::from(s))
}

/// The owner a record file must have: root when running as root, else the running user.
fn expected_owner() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Read the record file `file` (NAME.testbed) in the state directory `dir`: its record and
/// the identity of the file read, or why it is skipped.
pub(crate) fn read(dir: &Dir, file: &OsStr) -> Result<(Record, Identity), String> {
    let name = file
        .to_str()
        .and_then(|f| f.strip_suffix(SUFFIX))
        .filter(|n| super::check_name(n).is_ok())
        .ok_or("its name is no testbed name")?;
    let f = match dir.open_file(file, libc::O_RDONLY) {
        Ok(Some(f)) => f,
        Ok(None) => return Err("it vanished".into()),
        Err(e) => return Err(e.to_string()),
    };
    let meta = f.metadata().map_err(|e| e.to_string())?;
    let mode = meta.permissions().mode() & 0o7777;
    let owner = expected_owner();
    if !meta.is_file() || Some(meta.uid()) != owner || mode != 0o600 {
        return Err(format!(
            "it is not a regular file owned by uid {} with mode 0600 (uid {}, mode {mode:o})",
            owner.map_or("?".into(), |u| u.to_string()),
            meta.uid()
        ));
    }
    let mut text = String::new();
    f.take(MAX_RECORD)
        .read_to_string(&mut text)
        .map_err(|e| format!("unreadable: {e}"))?;
    Ok((Record::parse(&text, name)?, Identity::of(&meta)))
}

/// Every record in the state directory `dir` (None: there is none yet), valid or skipped.
pub(crate) fn list(dir: Option<&Dir>) -> Result<Listing, fiox_guard::GuardError> {
    let mut out = Listing::default();
    let Some(dir) = dir else {
        return Ok(out);
    };
    let mut names: Vec<OsString> = dir.names()?;
    names.sort();
    for n in names {
        let b = n.as_encoded_bytes();
        if b.starts_with(b".") || !b.ends_with(SUFFIX.as_bytes()) {
            continue;
        }
        match read(dir, &n) {
            Ok((r, _)) => out.records.push(r),
            Err(why) => out.skipped.push(Skipped {
                file: dir.join(&n),
                why,
            }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips() {
        let rec = Record {
            name: "t1".into(),
            kind: "fs".into(),
            owner: Some((12, 34)),
            target: "/var/tmp/x/mnt".into(),
            info: [("direct_io".to_string(), "on".to_string())].into(),
            steps: vec![
                Step::Tree {
                    path: "/var/tmp/x".into(),
                    id: Identity::from_parts(1, 2, Some(-3)),
                },
                Step::LoopsOver {
                    path: "/var/tmp/x/backing img".into(),
                    dev: 2049,
                    ino: 77,
                },
                Step::Mount {
                    path: "/var/tmp/x/mnt".into(),
                    mnt_id: 99,
                },
                Step::Process { pid: 5, start: 6 },
                Step::DirToMake {
                    path: "/var/tmp/fiox-testbed-t1-5".into(),
                },
                Step::Program {
                    pid: 7,
                    start: 8,
                    exe: "/usr/bin/qemu-system-x86_64".into(),
                    dev: 9,
                    ino: 10,
                },
                Step::Cgroup {
                    path: "/sys/fs/cgroup/memory/fiox-machine-1-0".into(),
                    id: Identity::from_parts(40, 41, None),
                },
            ],
            ready: true,
        };
        assert_eq!(Record::parse(&rec.to_text(), "t1").unwrap(), rec);
        let no_btime = Step::Tree {
            path: "/a".into(),
            id: Identity::from_parts(1, 2, None),
        };
        let r = Record {
            steps: vec![no_btime],
            ..rec
        };
        assert_eq!(Record::parse(&r.to_text(), "t1").unwrap(), r);
    }

    #[test]
    fn tampered_and_malformed_records_are_refused_with_the_reason() {
        let head = "fiox-testbed 2\nname t\nkind loop\n";
        let bad = |body: &str| Record::parse(&format!("{head}{body}"), "t").unwrap_err();
        // D4: `..` after a fiox-looking component, and relative paths.
        assert!(bad("mount 5 /s/fiox-testbed-x/../mnt\n").contains("'..'"));
        assert!(bad("loops-over 1 2 /s/fiox-testbed-x/../img\n").contains("'..'"));
        assert!(bad("tree 1 2 - fiox-testbed-x\n").contains("not an absolute"));
        assert!(bad("tree 1 2 - /s/./fiox-testbed-x\n").contains("'.'"));
        // The version 1 form of a step (no identity) is no longer one.
        assert!(bad("tree /s/fiox-testbed-x\n").contains("expected a number"));
        assert!(bad("process 1\n").contains("expected a number"));
        assert!(bad("ready maybe\n").contains("true or false"));
        assert!(bad("rm -rf /\n").contains("unknown key"));
        // M4: a record cut short.
        let e = Record::parse("fiox-testbed 2\nname half\nki", "half").unwrap_err();
        assert!(e.contains("\"ki\""), "{e}");
        let e = Record::parse("fiox-testbed 1\nname t\n", "t").unwrap_err();
        assert!(e.contains("older fiox"), "{e}");
        let e = Record::parse("fiox-testbed 2\nname other\nkind loop\n", "t").unwrap_err();
        assert!(e.contains("does not name itself"), "{e}");
        let e = Record::parse("", "t").unwrap_err();
        assert!(e.contains("does not start"), "{e}");
    }
}
