//! The vm testbed: one fiox run inside a QEMU guest. It owns the guest's whole life: the
//! kernel ([`initramfs::resolve`]: a release in /boot or a developer's bzImage), the
//! initramfs fiox writes itself ([`initramfs`]), the host's root filesystem shared read-only
//! over 9p (virtme-ng's approach: the very fiox binary and its libraries run inside), a
//! virtio-blk disk backed by a fresh file (in /dev/shm by default, as seed 002) with QEMU's
//! `cache=`, `aio=`, queues and iothread as the description says ([`spec`]), guest memory
//! and vCPUs; the accelerator (KVM when a guest reaches its init under it within `probe_s`,
//! else TCG, whose numbers measure the emulator); the guest script that runs fiox with the
//! job's arguments on /dev/vda and writes its output, exit status and the guest's I/O
//! scheduler to a second, writable 9p share; and the end: QEMU stopped and every file
//! removed when the run ends, fails or is interrupted.
//!
//! Everything is recorded first as a testbed record of kind `vm` ([`crate::managed`]): the
//! work directory and the disk's directory (fresh, marked, by identity) and QEMU by pid,
//! start time and executable, so `fiox testbed cleanup` after a kill -9 stops a leftover
//! QEMU (never a process that reused its pid, never another program) and removes its files.

pub mod accel;
pub mod initramfs;
pub mod spec;

pub use accel::{would_use, AccelReport};
pub use initramfs::Kernel;
pub use spec::{Accel, Aio, VmSpec, VM_KEYS};

use crate::error::{Result, TestbedError};
use crate::managed::build::{claim, fresh_dir, Maker};
use crate::managed::{Kind, State, Step};
use fiox_guard::output::{self, Named};
use fiox_guard::{Dir, Identity, Layout};
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The QEMU binary the guest runs in.
pub const QEMU: &str = "qemu-system-x86_64";
/// The guest's disk as the guest names it.
pub const GUEST_DISK: &str = "/dev/vda";
/// Where the loop device's ext4 is mounted in the guest (`guest_loop`).
pub const GUEST_LOOP_DIR: &str = "/run/fiox-loop";
/// Where the guest mounts the writable share (inside the guest only).
const GUEST_OUT: &str = "/run/fiox-out";
/// The overlay's upper and work directories over the working directory (guest tmpfs).
const GUEST_OVERLAY: &str = "/run/fiox-ov";
/// At most this many files, each at most this big, come back from the guest's working
/// directory (a log is far smaller; the guest's tmpfs bounds them anyway).
const MAX_FILES: usize = 4096;
const MAX_FILE_BYTES: u64 = 1 << 30;

/// One run in a guest: what runs and where.
pub struct Run<'a> {
    pub spec: &'a VmSpec,
    /// The fiox binary (a host path: the guest sees the host's root).
    pub fiox: PathBuf,
    /// Its arguments in the guest.
    pub args: Vec<String>,
    /// The directory it starts in (read-only in the guest).
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Files the guest cannot see where the host has them (see [`guest_sees`]): (name, bytes),
    /// put in the output share before boot, where the guest finds them at [`guest_input`].
    pub inputs: Vec<(String, Vec<u8>)>,
    /// Polled while the guest runs (Ctrl-C): QEMU is stopped and everything removed.
    pub interrupted: &'a dyn Fn() -> bool,
}

/// What a guest run gave back.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// "kvm" or "tcg".
    pub accel: String,
    /// Why KVM was not used (auto only), e.g. QEMU's error.
    pub kvm_refused: Option<String>,
    pub kernel: Option<Kernel>,
    /// The guest fiox's stdout and stderr.
    pub stdout: Vec<u8>,
    pub stderr: String,
    /// Its exit status (None: interrupted).
    pub exit: Option<i32>,
    /// The disk's scheduler line in the guest ("none mq-deadline").
    pub sched: Option<String>,
    /// With `guest_loop`: the loop device in the guest and its sysfs `loop/dio` ("loop0 1").
    pub guest_loop: Option<String>,
    /// Seconds from QEMU's start until the guest's script ran, and in all.
    pub boot_seconds: f64,
    pub seconds: f64,
    pub qemu_args: Vec<String>,
    pub interrupted: bool,
    /// The files the guest's fiox wrote in its working directory (relative paths, contents),
    /// to be written beside the host's report as a host run would have.
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// Boots that did not reach the guest's init and were tried again (`boot_retries`): why,
    /// with the console from its panic line.
    pub boot_retries: Vec<String>,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

/// Where the guest mounts file systems of its own over the host's root (devtmpfs, proc, sysfs,
/// a tmpfs on /run): a host file below one of them is not what the guest finds at its path.
const GUEST_SHADOWED: [&str; 4] = ["/dev", "/proc", "/sys", "/run"];

/// Whether the guest finds the host's file at the (canonical) path `p`: the guest's root is
/// the host's over 9p, which crosses the host's mounts, except where the guest mounts its own.
pub fn guest_sees(p: &Path) -> bool {
    p.is_absolute() && !GUEST_SHADOWED.iter().any(|d| p.starts_with(d))
}

/// The guest's path of the input `name` (a [`Run::inputs`] entry).
pub fn guest_input(name: &str) -> String {
    format!("{GUEST_OUT}/in/{name}")
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The program `name` on PATH.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Whether a guest can be started here (QEMU, a kernel, root for the shares): checked
/// before anything is made.
pub fn check(spec: &VmSpec) -> Result<Kernel> {
    crate::loopdev::require_root("vm (QEMU with the host's root shared)")?;
    if find_program(QEMU).is_none() {
        return Err(TestbedError::Unsupported(format!(
            "vm: {QEMU} is not installed (apt-get install qemu-system-x86)"
        )));
    }
    initramfs::resolve(spec.kernel.as_deref())
}

/// Run `r` in a fresh guest recorded in the default state directory.
pub fn run(r: &Run) -> Result<Outcome> {
    run_in(&State::default(), r)
}

/// [`run`] with the record in `state`.
pub fn run_in(state: &State, r: &Run) -> Result<Outcome> {
    let kernel = check(r.spec)?;
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let name = format!("vm-{}-{seq}", std::process::id());
    let maker = claim(state, &name, &Kind::Vm)?;
    let mut g = Guest {
        maker: Some(maker),
        child: None,
    };
    let out = g.run(r, kernel);
    g.finish()?;
    out
}

/// A guest being run: its record, and QEMU while it runs. Drop stops QEMU and removes
/// everything.
struct Guest {
    maker: Option<Maker>,
    child: Option<Child>,
}

/// The guest's files on the host.
struct Files {
    work: Dir,
    work_path: PathBuf,
    out: Dir,
    out_path: PathBuf,
    disk: PathBuf,
    initrd: PathBuf,
}

impl Guest {
    fn maker(&mut self) -> &mut Maker {
        self.maker
            .as_mut()
            .expect("a guest has its record until it finishes")
    }

    fn run(&mut self, r: &Run, kernel: Kernel) -> Result<Outcome> {
        let files = self.make_files(r, &kernel)?;
        let mut o = Outcome {
            kernel: Some(kernel.clone()),
            ..Outcome::default()
        };
        let t0 = Instant::now();
        // What `fiox env` reports: a /dev/kvm that does not answer KVM_GET_API_VERSION runs
        // no guest, so TCG is not kept waiting for its probe.
        let plan = accel::would_use(r.spec.accel, r.spec.probe_s);
        o.kvm_refused = plan.kvm_refused;
        let tries = plan.tries;
        let mut booted = false;
        let mut retries = r.spec.boot_retries;
        let mut i = 0;
        while let Some(accel) = tries.get(i) {
            let last = i + 1 == tries.len();
            let wait = if last { r.spec.boot_s } else { r.spec.probe_s };
            let args = qemu_args(r.spec, &kernel, &files, accel);
            self.start(&args, &files, accel)?;
            o.accel = accel.to_string();
            o.qemu_args = args;
            match self.wait_boot(&files, Duration::from_secs(wait), r.interrupted)? {
                Boot::Booted => {
                    booted = true;
                    break;
                }
                Boot::Interrupted => {
                    o.interrupted = true;
                    return Ok(o);
                }
                Boot::Failed(why) => {
                    let qemu = tail(&files.work_path.join(format!("qemu-{accel}.log")));
                    let why = if qemu.is_empty() {
                        why
                    } else {
                        format!("{why}; {qemu}")
                    };
                    let console = files.work_path.join(format!("console-{accel}.log"));
                    if last && retries > 0 {
                        retries -= 1;
                        self.kill();
                        o.boot_retries
                            .push(format!("{why}; console: {}", console_excerpt(&console)));
                        continue;
                    }
                    if last {
                        return Err(TestbedError::Command {
                            cmd: format!("{QEMU} (accel={accel})"),
                            detail: format!(
                                "the guest did not reach its init: {why}; console: {}{}{}",
                                console_excerpt(&console),
                                retried(&o.boot_retries),
                                whole_console(&console)
                            ),
                        });
                    }
                    o.kvm_refused = Some(why);
                }
            }
            i += 1;
        }
        debug_assert!(booted);
        o.boot_seconds = t0.elapsed().as_secs_f64();
        if !self.wait_exit(r.interrupted)? {
            o.interrupted = true;
            return Ok(o);
        }
        o.seconds = t0.elapsed().as_secs_f64();
        let read = |n: &str| std::fs::read(files.out_path.join(n)).ok();
        o.stdout = read("stdout").unwrap_or_default();
        o.stderr = String::from_utf8_lossy(&read("stderr").unwrap_or_default()).into_owned();
        o.sched = read("sched").map(|s| String::from_utf8_lossy(&s).trim().to_string());
        o.guest_loop = read("loop").map(|s| String::from_utf8_lossy(&s).trim().to_string());
        o.exit = read("exit").and_then(|s| String::from_utf8_lossy(&s).trim().parse().ok());
        if o.exit.is_none() {
            let log = files.work_path.join(format!("console-{}.log", o.accel));
            let console = format!("{}{}", console_excerpt(&log), whole_console(&log));
            let setup =
                String::from_utf8_lossy(&read("setup.log").unwrap_or_default()).into_owned();
            return Err(TestbedError::Command {
                cmd: format!("{QEMU} (accel={})", o.accel),
                detail: format!(
                    "the guest ended before fiox did (setup: {}; stderr: {}); console: {console}",
                    setup.trim(),
                    o.stderr.trim()
                ),
            });
        }
        o.files = written_files(&files.out_path.join("files"))?;
        drop(files.work);
        drop(files.out);
        Ok(o)
    }

    /// The work directory (initramfs, guest script, logs, the output share) in /var/tmp and
    /// the disk's backing file, each recorded before anything is put in it.
    fn make_files(&mut self, r: &Run, kernel: &Kernel) -> Result<Files> {
        let m = self.maker();
        let (disk, disk_fresh) = match &r.spec.disk {
            Some(dev) => (block_device(dev)?, None),
            None => {
                let fresh = fresh_dir(m, &r.spec.disk_dir)?;
                let disk = fresh.path.join("disk.img");
                let f = fresh
                    .dir
                    .create_file(OsStr::new("disk.img"), 0o600, Layout::Complete)?;
                f.set_len(r.spec.disk_size)
                    .map_err(|e| TestbedError::io("size the vm disk", &disk, e))?;
                (disk, Some(fresh))
            }
        };
        // The work directory must be visible in the guest (the guest hides /dev and /run):
        // /var/tmp, or the disk's directory when that is already there.
        let var_tmp = Dir::open(Path::new("/var/tmp"))?.stat_self().id;
        let w = match disk_fresh {
            Some(f) if f.parent.stat_self().id == var_tmp => f,
            _ => fresh_dir(m, Path::new("/var/tmp"))?,
        };
        let (work, work_path) = (w.dir, w.path);
        let out = work.create_dir(OsStr::new("out"), 0o755)?;
        let out_path = work_path.join("out");
        if !r.inputs.is_empty() {
            let inputs = out.create_dir(OsStr::new("in"), 0o755)?;
            for (name, bytes) in &r.inputs {
                output::create_in(&inputs, OsStr::new(name), bytes, 0o644)?;
            }
        }
        let script = work_path.join("guest.sh");
        output::write_in(
            &work,
            OsStr::new("guest.sh"),
            guest_script(r).as_bytes(),
            Named::ByFiox,
        )?;
        let initrd = work_path.join("initrd.cpio");
        let bytes = initramfs::build(kernel, &script)?;
        let mut f = work.create_file(OsStr::new("initrd.cpio"), 0o644, Layout::Complete)?;
        f.write_all(&bytes)
            .map_err(|e| TestbedError::io("write", &initrd, e))?;
        m.rec.target = disk.clone();
        let info = &mut m.rec.info;
        info.insert("kernel".into(), kernel.release.clone());
        info.insert("disk".into(), disk.display().to_string());
        info.insert("aio".into(), r.spec.aio.name().into());
        info.insert("cache".into(), r.spec.cache.clone());
        m.save()?;
        Ok(Files {
            work,
            work_path,
            out,
            out_path,
            disk,
            initrd,
        })
    }

    /// Start QEMU (its own process group: a Ctrl-C reaches fiox, which stops it; killed by
    /// the kernel when fiox dies, kill -9 included) and record it: first as an intent (the
    /// executable, no pid yet) so a kill -9 between the start and the pid's record still
    /// leaves a record `testbed cleanup` can act on (it finds the QEMU by its tag, see
    /// [`crate::managed::record::program_tag`]), then by pid, start time and executable.
    fn start(&mut self, args: &[String], files: &Files, accel: &str) -> Result<()> {
        let qemu = find_program(QEMU).unwrap_or_else(|| PathBuf::from(QEMU));
        let qemu = std::fs::canonicalize(&qemu).unwrap_or(qemu);
        let log_name = format!("qemu-{accel}.log");
        let log = output::open_in(
            &files.work,
            OsStr::new(&log_name),
            output::Open::Truncate,
            Named::ByFiox,
        )?;
        let (dev, ino) = std::fs::metadata(&qemu)
            .map(|m| Identity::of(&m).dev_ino())
            .map_err(|e| TestbedError::io("stat", &qemu, e))?;
        let m = self.maker();
        let tag = crate::managed::record::program_tag(&m.rec.name);
        m.step(Step::Program {
            pid: 0,
            start: 0,
            exe: qemu.clone(),
            dev,
            ino,
        })?;
        let mut cmd = Command::new(&qemu);
        cmd.args(["-name", &tag])
            .args(args)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(
                log.try_clone()
                    .map_err(|e| TestbedError::io("open", files.work_path.join(&log_name), e))?,
            )
            .stderr(log);
        fiox_guard::process::die_with_parent(&mut cmd);
        let child = cmd
            .spawn()
            .map_err(|e| TestbedError::io("start", &qemu, e))?;
        let pid = child.id();
        self.child = Some(child);
        let start = fiox_guard::process::start_time(pid).unwrap_or(0);
        let m = self.maker();
        if let Some(Step::Program {
            pid: p, start: s, ..
        }) = m.rec.steps.last_mut()
        {
            (*p, *s) = (pid, start);
        }
        m.save()
    }

    fn wait_boot(
        &mut self,
        files: &Files,
        limit: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Boot> {
        let t0 = Instant::now();
        loop {
            if files.out.stat(OsStr::new("booted"))?.is_some() {
                return Ok(Boot::Booted);
            }
            if stop() {
                self.kill();
                return Ok(Boot::Interrupted);
            }
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    self.child = None;
                    return Ok(Boot::Failed(format!("QEMU ended ({status})")));
                }
            }
            if t0.elapsed() > limit {
                self.kill();
                return Ok(Boot::Failed(format!("no init after {} s", limit.as_secs())));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Wait for QEMU to end (the guest powers off after fiox); false: interrupted.
    fn wait_exit(&mut self, stop: &dyn Fn() -> bool) -> Result<bool> {
        loop {
            let Some(c) = self.child.as_mut() else {
                return Ok(true);
            };
            if c.try_wait().ok().flatten().is_some() {
                self.child = None;
                return Ok(true);
            }
            if stop() {
                self.kill();
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stop QEMU (our own child: the handle cannot name another process before it is
    /// waited for).
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stop QEMU and remove every file and the record; Err: something stayed (its record
    /// stays for `fiox testbed cleanup`).
    fn finish(&mut self) -> Result<()> {
        self.kill();
        let Some(mk) = self.maker.take() else {
            return Ok(());
        };
        let name = mk.rec.name.clone();
        match crate::managed::teardown(&mk.rec) {
            Ok(()) => {
                mk.abandon();
                Ok(())
            }
            Err(e) => Err(TestbedError::Invalid(format!(
                "vm: {e}; `fiox testbed cleanup` removes {name} later"
            ))),
        }
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

enum Boot {
    Booted,
    Interrupted,
    Failed(String),
}

/// The block device `dev` (a guest's `disk=`), by its canonical path; anything else is
/// refused before QEMU could open it.
fn block_device(dev: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let real = std::fs::canonicalize(dev).map_err(|e| TestbedError::io("open", dev, e))?;
    let meta = std::fs::metadata(&real).map_err(|e| TestbedError::io("stat", &real, e))?;
    if !meta.file_type().is_block_device() {
        return Err(TestbedError::Invalid(format!(
            "vm disk={}: not a block device (give a device such as /dev/loop0, or leave disk= \
             out for a fresh file in disk_dir)",
            dev.display()
        )));
    }
    Ok(real)
}

/// The regular files under `root` (the share the guest copied its working directory's new
/// files to), by relative path; links and anything else are left out.
fn written_files(root: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel) = dirs.pop() {
        let here = root.join(&rel);
        let Ok(rd) = std::fs::read_dir(&here) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            let r = rel.join(e.file_name());
            if meta.is_dir() && r.components().count() < 16 {
                dirs.push(r);
            } else if meta.is_file() && out.len() < MAX_FILES {
                if meta.len() > MAX_FILE_BYTES {
                    return Err(TestbedError::Invalid(format!(
                        "vm: the guest wrote {} ({} bytes), more than fiox brings back",
                        r.display(),
                        meta.len()
                    )));
                }
                let bytes = std::fs::read(e.path())
                    .map_err(|err| TestbedError::io("read", e.path(), err))?;
                out.push((r, bytes));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The last lines of a log, on one line (for an error message).
fn tail(p: &Path) -> String {
    let t = std::fs::read(p)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(6);
    lines[from..].join(" | ")
}

/// The console's lines that say why a guest stopped: from the kernel's panic line when
/// there is one (the last lines were the reboot timer's, and the reason was cut off), else
/// the last lines; on one line.
fn console_excerpt(p: &Path) -> String {
    let t = std::fs::read(p)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = t.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.iter().rposition(|l| l.contains("Kernel panic")) {
        Some(at) => lines[at..lines.len().min(at + 8)].join(" | "),
        None => tail(p),
    }
}

/// The earlier boots' reasons, for an error.
fn retried(reasons: &[String]) -> String {
    reasons
        .iter()
        .enumerate()
        .map(|(i, r)| format!("; boot {} of {} also failed: {r}", i + 1, reasons.len() + 1))
        .collect()
}

/// The whole console log (its last 64 KiB), on lines of its own after an error: the guest's
/// work directory goes with it, and an experiment keeps a failed run's messages beside its
/// results.
fn whole_console(p: &Path) -> String {
    let b = std::fs::read(p).unwrap_or_default();
    if b.is_empty() {
        return String::new();
    }
    let from = b.len().saturating_sub(64 << 10);
    format!(
        "\n--- the guest's console ({} bytes{}) ---\n{}\n--- end of console ---",
        b.len(),
        if from > 0 { ", its end" } else { "" },
        String::from_utf8_lossy(&b[from..]).trim_end()
    )
}

/// QEMU's command line for `accel`.
fn qemu_args(s: &VmSpec, k: &Kernel, f: &Files, accel: &str) -> Vec<String> {
    let cpu = if accel == "kvm" { "host" } else { "max" };
    let mut a: Vec<String> = vec![
        "-machine".into(),
        format!("q35,accel={accel}"),
        "-cpu".into(),
        cpu.into(),
        "-m".into(),
        format!("{}M", s.memory >> 20),
        "-smp".into(),
        s.cpus.to_string(),
        "-nodefaults".into(),
        "-display".into(),
        "none".into(),
        "-no-reboot".into(),
        "-serial".into(),
        format!(
            "file:{}",
            f.work_path.join(format!("console-{accel}.log")).display()
        ),
        "-kernel".into(),
        k.image.display().to_string(),
        "-initrd".into(),
        f.initrd.display().to_string(),
        "-append".into(),
        match &s.kernel_cmdline {
            Some(c) => format!("console=ttyS0 panic=-1 quiet {c}"),
            None => "console=ttyS0 panic=-1 quiet".into(),
        },
        "-virtfs".into(),
        "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap".into(),
        "-virtfs".into(),
        format!(
            "local,path={},mount_tag=out,security_model=none",
            f.out_path.display()
        ),
    ];
    let mut dev = "virtio-blk-pci,drive=d0".to_string();
    if s.iothread {
        a.extend(["-object".into(), "iothread,id=io0".into()]);
        dev.push_str(",iothread=io0");
    }
    if let Some(q) = s.queues {
        dev.push_str(&format!(",num-queues={q}"));
    }
    a.extend([
        "-drive".into(),
        format!(
            "file={},if=none,id=d0,format=raw,cache={},aio={}",
            f.disk.display(),
            s.cache,
            s.aio.name()
        ),
        "-device".into(),
        dev,
    ]);
    a
}

/// The script the guest runs on the host's root: mount the output share, say it booted,
/// load virtio_blk, set the disk's scheduler, run fiox, keep its exit status, power off.
fn guest_script(r: &Run) -> String {
    let o = GUEST_OUT;
    let mut s = format!(
        "export PATH=/usr/sbin:/usr/bin:/sbin:/bin\n\
         mount -t sysfs sys /sys\n\
         mkdir -p {o} && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out {o} \
         || echo o > /proc/sysrq-trigger\n\
         echo booted > {o}/booted\n\
         modprobe virtio_blk 2>>{o}/setup.log\n\
         i=0; while [ ! -b {GUEST_DISK} ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done\n"
    );
    if let Some(sched) = &r.spec.sched {
        s.push_str(&format!(
            "modprobe -q {sched} 2>/dev/null; modprobe -q {sched}-iosched 2>/dev/null\n\
             echo {sched} > /sys/block/vda/queue/scheduler 2>>{o}/setup.log\n"
        ));
    }
    if let Some(direct) = r.spec.guest_loop {
        s.push_str(&loop_script(direct, r.spec.loop_size));
    }
    // The working directory writable through an overlay (upper in the guest's tmpfs): the
    // files the job writes there (logs, I/O logs) are copied to the share afterwards.
    s.push_str(&format!(
        "cat /sys/block/vda/queue/scheduler > {o}/sched 2>/dev/null\n\
         W={w}\n\
         mkdir -p {ov}/u {ov}/w {o}/files\n\
         if [ \"$W\" != / ]; then modprobe -q overlay 2>>{o}/setup.log; \
         mount -t overlay overlay -o lowerdir=\"$W\",upperdir={ov}/u,workdir={ov}/w \"$W\" \
         2>>{o}/setup.log; fi\n\
         cd \"$W\" 2>/dev/null || cd /\n",
        w = shell_quote(&r.cwd.to_string_lossy()),
        ov = GUEST_OVERLAY,
    ));
    for (k, v) in &r.env {
        if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.is_empty() {
            s.push_str(&format!("export {k}={}\n", shell_quote(v)));
        }
    }
    let mut cmd = shell_quote(&r.fiox.to_string_lossy());
    for a in &r.args {
        cmd.push(' ');
        cmd.push_str(&shell_quote(a));
    }
    s.push_str(&format!(
        "{cmd} > {o}/stdout 2> {o}/stderr\n\
         st=$?\n\
         (cd {ov}/u && find . -type f -exec cp --parents {{}} {o}/files/ \\;) 2>>{o}/setup.log\n\
         echo $st > {o}/exit\n\
         sync\n\
         echo o > /proc/sysrq-trigger\n",
        ov = GUEST_OVERLAY,
    ));
    s
}

/// Seed 001's stack in the guest: ext4 on /dev/vda, a file there under a loop device with
/// direct I/O `direct`, ext4 on the loop device mounted on [`GUEST_LOOP_DIR`]; the device and
/// its sysfs dio flag to the share. A step that fails ends the guest with the reason as the
/// run's stderr (fiox does not run on the guest's tmpfs instead).
fn loop_script(direct: bool, size: u64) -> String {
    let o = GUEST_OUT;
    let dio = if direct { "on" } else { "off" };
    format!(
        "modprobe -q loop 2>>{o}/setup.log; modprobe -q ext4 2>>{o}/setup.log\n\
         mkdir -p /run/fiox-vda {GUEST_LOOP_DIR}\n\
         if mkfs.ext4 -q -F {GUEST_DISK} >>{o}/setup.log 2>&1 \
         && mount {GUEST_DISK} /run/fiox-vda 2>>{o}/setup.log \
         && truncate -s {size} /run/fiox-vda/loop.img 2>>{o}/setup.log \
         && L=$(losetup --direct-io={dio} -f --show /run/fiox-vda/loop.img 2>>{o}/setup.log) \
         && mkfs.ext4 -q -F \"$L\" >>{o}/setup.log 2>&1 \
         && mount \"$L\" {GUEST_LOOP_DIR} 2>>{o}/setup.log; then\n\
         echo \"${{L#/dev/}} $(cat /sys/block/${{L#/dev/}}/loop/dio)\" > {o}/loop\n\
         else\n\
         {{ echo 'fiox: --vm guest_loop: the loop device stack in the guest failed:'; \
         cat {o}/setup.log; }} > {o}/stderr\n\
         echo 1 > {o}/exit; sync; echo o > /proc/sysrq-trigger; sleep 60\n\
         fi\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::managed::Record;

    /// A QEMU that emulates nothing (no machine, paused): cheap to start, a real
    /// qemu-system-* process.
    fn idle_qemu(tag: &str) -> Child {
        Command::new(QEMU)
            .args(["-name", tag, "-machine", "none", "-display", "none"])
            .args(["-nodefaults", "-S", "-monitor", "none", "-serial", "none"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    #[test]
    fn cleanup_stops_the_qemu_of_an_intent_by_its_tag_and_no_other() {
        crate::testutil::need::require_tool(QEMU);
        let name = format!("vm-intent-{}", std::process::id());
        let exe = std::fs::canonicalize(find_program(QEMU).unwrap()).unwrap();
        let (dev, ino) = Identity::of(&std::fs::metadata(&exe).unwrap()).dev_ino();
        let mut ours = idle_qemu(&crate::managed::record::program_tag(&name));
        let mut other = idle_qemu(&crate::managed::record::program_tag("vm-someone-else"));
        let tag = crate::managed::record::program_tag(&name);
        assert!(crate::testutil::eventually(|| {
            fiox_guard::process::find_program((dev, ino), &tag)
                .iter()
                .any(|(pid, _)| *pid == ours.id())
        }));
        // A record of a QEMU fiox meant to start (pid 0): cleanup finds and stops ours only.
        let mut rec = Record::new(&name, &crate::managed::Kind::Vm, None);
        rec.steps.push(Step::Program {
            pid: 0,
            start: 0,
            exe: exe.clone(),
            dev,
            ino,
        });
        crate::managed::teardown(&rec).unwrap();
        use std::os::unix::process::ExitStatusExt;
        // SIGTERM kills a QEMU still starting; one past its start-up ends itself on it
        // ("terminating on signal 15", status 0), as a loaded machine's fresh Debian run saw.
        let st = ours.wait().unwrap();
        assert!(
            st.signal() == Some(libc::SIGTERM) || st.code() == Some(0),
            "{st:?}"
        );
        assert!(
            other.try_wait().unwrap().is_none(),
            "another tag's QEMU was stopped"
        );
        // Nothing tagged left: the intent's undo finds nothing and succeeds.
        crate::managed::teardown(&rec).unwrap();
        other.kill().unwrap();
        other.wait().unwrap();
    }

    #[test]
    fn the_guest_sees_the_hosts_root_but_not_its_own_mounts() {
        assert!(guest_sees(Path::new("/var/tmp/r/a.fio")));
        assert!(guest_sees(Path::new("/home/u/dev/a.fio")));
        for p in ["/dev/shm/r/a.fio", "/run/x", "/proc/1/x", "/sys/x"] {
            assert!(!guest_sees(Path::new(p)), "{p}");
        }
        assert!(!guest_sees(Path::new("relative.fio")));
        assert_eq!(guest_input("0-a.fio"), "/run/fiox-out/in/0-a.fio");
    }

    #[test]
    fn the_guest_script_quotes_what_it_runs() {
        let spec = VmSpec::parse("sched=mq-deadline").unwrap();
        let r = Run {
            spec: &spec,
            fiox: "/usr/bin/fiox".into(),
            args: vec!["--name=it's".into(), "--filename=/dev/vda".into()],
            cwd: "/var/tmp/a b".into(),
            env: vec![("T".into(), "x y".into()), ("bad;k".into(), "v".into())],
            inputs: Vec::new(),
            interrupted: &|| false,
        };
        let s = guest_script(&r);
        assert!(
            s.contains("'/usr/bin/fiox' '--name=it'\\''s' '--filename=/dev/vda'"),
            "{s}"
        );
        assert!(s.contains("W='/var/tmp/a b'"), "{s}");
        assert!(s.contains("lowerdir=\"$W\""), "{s}");
        assert!(
            s.contains("find . -type f -exec cp --parents {} /run/fiox-out/files/ \\;"),
            "{s}"
        );
        assert!(s.contains("export T='x y'"), "{s}");
        assert!(!s.contains("bad;k"), "{s}");
        assert!(
            s.contains("echo mq-deadline > /sys/block/vda/queue/scheduler"),
            "{s}"
        );
    }
}
