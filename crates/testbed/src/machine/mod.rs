//! Machine limits around a run: `--machine-memory` / `--machine-cpus` (and an experiment's
//! `machine = { memory = "2g", cpus = 4 }`) make the run behave as on a smaller machine. The
//! process moves into a fresh cgroup with that memory limit (its page cache is charged to it
//! as well as its buffers) and a cpuset of that many CPUs, before its workers start, and back
//! to where it was after the run, and the group is removed. cgroup v1 (the memory and cpuset
//! hierarchies, the group made under the process's current group there, so limits above it
//! still apply) and cgroup2 (one group under the root, with the controllers enabled there)
//! are both handled (`hier`).
//!
//! Every group is recorded first as a testbed record of kind `machine` ([`crate::managed`]),
//! so a run killed with kill -9 leaves nothing `fiox testbed cleanup` cannot remove. Whether
//! the limits took effect is checked, not assumed: the limit read back, the process found in
//! the group and its CPU affinity equal to the cpuset, and after the run the group's peak
//! memory, its page cache at most (sampled while the run goes) and how often the limit was
//! hit ([`Report`], with warnings when the limit never bound or was exceeded).

mod hier;

use crate::error::{Result, TestbedError};
use crate::managed::build::{claim, Maker};
use crate::managed::{Kind, State, Step};
use fiox_guard::kernel::{make_cgroup, write_knob, KernelFs};
use hier::Hier;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The limits of a run's machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// The memory limit in bytes (page cache included).
    pub memory_bytes: Option<u64>,
    /// How many CPUs the run may use.
    pub cpus: Option<u32>,
}

/// The smallest memory limit fiox accepts: below it the run's own binary does not fit.
pub const MIN_MEMORY: u64 = 16 << 20;

impl Limits {
    pub fn is_empty(&self) -> bool {
        self.memory_bytes.is_none() && self.cpus.is_none()
    }

    /// Limits from their texts: a size ("2g", bytes without a suffix) and a CPU count.
    pub fn parse(memory: Option<&str>, cpus: Option<&str>) -> Result<Limits> {
        let bad = |w: String| TestbedError::Invalid(w);
        let memory_bytes = match memory {
            None => None,
            Some(m) => {
                let b = crate::managed::parse_size(m).ok_or_else(|| {
                    bad(format!(
                        "machine memory {m:?}: expected a size like 2g or 512m"
                    ))
                })?;
                if b < MIN_MEMORY {
                    return Err(bad(format!(
                        "machine memory {m:?}: at least 16m (fiox itself needs a few MiB)"
                    )));
                }
                Some(b)
            }
        };
        let cpus =
            match cpus {
                None => None,
                Some(c) => Some(c.trim().parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(
                    || {
                        bad(format!(
                            "machine cpus {c:?}: expected a whole number above 0"
                        ))
                    },
                )?),
            };
        Ok(Limits { memory_bytes, cpus })
    }
}

/// What a run under limits did with them (for `fiox.env.limits`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub limits: Limits,
    /// "v1" or "v2".
    pub cgroup: String,
    /// The groups' directories.
    pub groups: Vec<PathBuf>,
    /// The CPUs of the cpuset ("0-3").
    pub cpu_list: Option<String>,
    /// The memory group's peak usage (v1 max_usage_in_bytes, v2 memory.peak, else the
    /// largest usage sampled).
    pub peak_bytes: Option<u64>,
    /// The largest page cache charged to the group, sampled while the run went.
    pub page_cache_peak_bytes: Option<u64>,
    /// How often the memory limit was hit (v1 memory.failcnt, v2 memory.events `max`).
    pub limit_hits: Option<u64>,
    /// Warnings: what went wrong with the limit and the message saying so (the report's
    /// caller turns them into fiox's warnings, whose table holds the codes and fixes).
    pub warnings: Vec<(LimitWarning, String)>,
}

/// A memory limit that did not do its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitWarning {
    /// The group peaked above its limit: the limit did not take effect.
    Exceeded,
    /// The group's peak stayed well under the limit, which was never hit: it shaped nothing.
    NotReached,
}

/// One group fiox made.
#[derive(Debug)]
struct Group {
    hier: Hier,
    path: PathBuf,
}

/// A run's machine: the process is in its groups until [`Machine::finish`] (or drop).
pub struct Machine {
    limits: Limits,
    cpu_list: Option<Vec<u32>>,
    groups: Vec<Group>,
    maker: Option<Maker>,
    watch: Option<Watch>,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

fn knob_err(path: &Path, e: fiox_guard::GuardError) -> TestbedError {
    match e {
        fiox_guard::GuardError::Io { err, op, .. } => TestbedError::io(op, path, err),
        e => e.into(),
    }
}

fn write(path: &Path, value: &str) -> Result<()> {
    write_knob(path, value.as_bytes(), KernelFs::Cgroup).map_err(|e| knob_err(path, e))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| TestbedError::io("read", path, e))
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// `key N` from a flat keyed file (memory.stat, memory.events).
fn keyed(path: &Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

impl Machine {
    /// Move this process into fresh groups with `limits`, recorded in the default state
    /// directory.
    pub fn enter(limits: &Limits) -> Result<Machine> {
        Machine::enter_in(&State::default(), limits)
    }

    /// Whether `limits` can be entered here (root, the controllers mounted, enough CPUs),
    /// without making anything: an experiment asks before its first run.
    pub fn check(limits: &Limits) -> Result<()> {
        plan(limits).map(|_| ())
    }

    /// [`Machine::enter`] with the record in `state`.
    pub fn enter_in(state: &State, limits: &Limits) -> Result<Machine> {
        let (hiers, cpu_list) = plan(limits)?;
        let pid = std::process::id();
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let maker = claim(state, &format!("machine-{pid}-{seq}"), &Kind::Machine)?;
        let mut m = Machine {
            limits: *limits,
            cpu_list,
            groups: Vec::new(),
            maker: Some(maker),
            watch: None,
        };
        // On any failure below, drop leaves and removes what was made.
        let name = format!("fiox-machine-{pid}-{seq}");
        for h in hiers {
            m.make_group(h, &name)?;
        }
        for g in &m.groups {
            write(&g.path.join("cgroup.procs"), &pid.to_string())?;
        }
        m.check_joined(&name)?;
        m.watch = m
            .memory_group()
            .map(|g| Watch::start(g.path.clone(), g.hier.v2));
        Ok(m)
    }

    /// Make the group `name` in `h`, record it, and write its limits.
    fn make_group(&mut self, h: Hier, name: &str) -> Result<()> {
        if h.v2 {
            enable_controllers(&h.parent, &self.limits)?;
        }
        let path = h.parent.join(name);
        let id = make_cgroup(&path)
            .map_err(|e| knob_err(&path, e))?
            .ok_or_else(|| {
                TestbedError::Invalid(format!("{} exists: not made by this run", path.display()))
            })?;
        if let Some(mk) = self.maker.as_mut() {
            // What `fiox testbed list` shows for it: its first group.
            if mk.rec.target.as_os_str().is_empty() {
                mk.rec.target = path.clone();
            }
            mk.step(Step::Cgroup {
                path: path.clone(),
                id,
            })?;
        }
        self.groups.push(Group {
            hier: h.clone(),
            path: path.clone(),
        });
        let cpus = self.cpu_list.as_deref().map(hier::cpu_list_text);
        match (h.controller, h.v2) {
            ("memory", false) => self.set_memory(&path.join("memory.limit_in_bytes")),
            ("cpuset", false) => {
                // A v1 cpuset takes no task before it has memory nodes and CPUs.
                let mems = read(&h.parent.join("cpuset.mems"))?;
                write(&path.join("cpuset.mems"), mems.trim())?;
                write(&path.join("cpuset.cpus"), cpus.as_deref().unwrap_or(""))
            }
            _ => {
                if let Some(c) = &cpus {
                    write(&path.join("cpuset.cpus"), c)?;
                }
                if self.limits.memory_bytes.is_some() {
                    self.set_memory(&path.join("memory.max"))?;
                }
                Ok(())
            }
        }
    }

    /// Write the memory limit to `knob` and read it back (the kernel keeps whole pages).
    fn set_memory(&self, knob: &Path) -> Result<()> {
        let Some(want) = self.limits.memory_bytes else {
            return Ok(());
        };
        write(knob, &want.to_string())?;
        let got = read_u64(knob).unwrap_or(u64::MAX);
        if got > want || want - got >= 1 << 16 {
            return Err(TestbedError::Invalid(format!(
                "machine memory: wrote {want} to {}, it reads {got}: the limit did not take",
                knob.display()
            )));
        }
        Ok(())
    }

    /// The process is in every group, and its CPUs are the cpuset's.
    fn check_joined(&self, name: &str) -> Result<()> {
        let own = read(Path::new("/proc/self/cgroup"))?;
        for g in &self.groups {
            let line = own.lines().find(|l| {
                let mut f = l.splitn(3, ':');
                let (id, ctrls) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
                if g.hier.v2 {
                    id == "0" && ctrls.is_empty()
                } else {
                    ctrls.split(',').any(|c| c == g.hier.controller)
                }
            });
            if !line.is_some_and(|l| l.ends_with(&format!("/{name}"))) {
                return Err(TestbedError::Invalid(format!(
                    "machine limits: this process is not in {} after joining it \
                     (/proc/self/cgroup: {})",
                    g.path.display(),
                    line.unwrap_or("no line")
                )));
            }
        }
        if let Some(want) = &self.cpu_list {
            let got = allowed_cpus().unwrap_or_default();
            if &got != want {
                return Err(TestbedError::Invalid(format!(
                    "machine cpus: the cpuset is {} but this process may run on {}",
                    hier::cpu_list_text(want),
                    hier::cpu_list_text(&got)
                )));
            }
        }
        Ok(())
    }

    fn memory_group(&self) -> Option<&Group> {
        self.limits.memory_bytes?;
        self.groups
            .iter()
            .find(|g| g.hier.v2 || g.hier.controller == "memory")
    }

    /// What the groups saw; then leave and remove them. Err: a group could not be removed
    /// (its record stays for `fiox testbed cleanup`).
    pub fn finish(mut self) -> (Report, Result<()>) {
        let report = self.report();
        (report, self.leave())
    }

    fn report(&mut self) -> Report {
        let cache_peak = self.watch.take().map(Watch::finish);
        let v2 = self.groups.iter().any(|g| g.hier.v2);
        let mut r = Report {
            limits: self.limits,
            cgroup: if v2 { "v2" } else { "v1" }.into(),
            groups: self.groups.iter().map(|g| g.path.clone()).collect(),
            cpu_list: self.cpu_list.as_deref().map(hier::cpu_list_text),
            ..Report::default()
        };
        if let Some(g) = self.memory_group() {
            let p = &g.path;
            let (peak, hits) = if v2 {
                let peak = read_u64(&p.join("memory.peak"));
                (peak, keyed(&p.join("memory.events"), "max"))
            } else {
                let peak = read_u64(&p.join("memory.max_usage_in_bytes"));
                (peak, read_u64(&p.join("memory.failcnt")))
            };
            let (usage_peak, cache) = cache_peak.unwrap_or((0, 0));
            r.peak_bytes = peak.or(Some(usage_peak));
            r.page_cache_peak_bytes = Some(cache);
            r.limit_hits = hits;
        }
        r.warnings = warnings(&r);
        r
    }

    /// Back to the groups the process came from; remove fiox's groups and their record.
    fn leave(&mut self) -> Result<()> {
        if let Some(w) = self.watch.take() {
            w.finish();
        }
        let pid = std::process::id().to_string();
        let mut first = None;
        for g in &self.groups {
            if let Err(e) = write(&g.hier.current.join("cgroup.procs"), &pid) {
                first.get_or_insert(e);
            }
        }
        self.groups.clear();
        if let Some(mk) = self.maker.take() {
            // The kernel may need a moment after the move before the group is empty.
            let mut tries = 0;
            while crate::managed::teardown(&mk.rec).is_err() && tries < 20 {
                std::thread::sleep(Duration::from_millis(25));
                tries += 1;
            }
            let name = mk.rec.name.clone();
            if let Err(e) = crate::managed::teardown(&mk.rec) {
                first.get_or_insert(TestbedError::Invalid(format!(
                    "machine limits: {e}; `fiox testbed cleanup` removes {name} later"
                )));
            } else {
                mk.abandon();
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        if self.maker.is_some() {
            let _ = self.leave();
        }
    }
}

/// The hierarchies `limits` need and the CPUs of the cpuset.
fn plan(limits: &Limits) -> Result<(Vec<Hier>, Option<Vec<u32>>)> {
    let mut want = Vec::new();
    if limits.memory_bytes.is_some() {
        want.push("memory");
    }
    if limits.cpus.is_some() {
        want.push("cpuset");
    }
    if want.is_empty() {
        return Err(TestbedError::Invalid("machine limits: none given".into()));
    }
    crate::loopdev::require_root("machine limits (cgroups)")?;
    let mountinfo = read(Path::new("/proc/self/mountinfo"))?;
    let own = read(Path::new("/proc/self/cgroup"))?;
    let hiers = hier::find(&mountinfo, &own, &want).map_err(TestbedError::Unsupported)?;
    let cpu_list = match limits.cpus {
        Some(n) => Some(choose_cpus(&hiers, n)?),
        None => None,
    };
    Ok((hiers, cpu_list))
}

/// Warnings about limits that did not take effect or did not matter.
fn warnings(r: &Report) -> Vec<(LimitWarning, String)> {
    let mut w = Vec::new();
    let (Some(limit), Some(peak)) = (r.limits.memory_bytes, r.peak_bytes) else {
        return w;
    };
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    if peak > limit.saturating_add(1 << 16) {
        w.push((
            LimitWarning::Exceeded,
            format!(
                "the run's cgroup peaked at {:.0} MiB, above its {:.0} MiB limit: the memory \
                 limit did not take effect",
                mib(peak),
                mib(limit)
            ),
        ));
    } else if r.limit_hits == Some(0) && peak < limit / 10 * 9 {
        w.push((
            LimitWarning::NotReached,
            format!(
                "the run's memory peaked at {:.0} MiB of its {:.0} MiB limit: the limit \
                 shaped nothing (no memory pressure)",
                mib(peak),
                mib(limit)
            ),
        ));
    }
    w
}

/// The CPUs this process may run on (its affinity), from /proc/self/status.
fn allowed_cpus() -> Option<Vec<u32>> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    hier::parse_cpu_list(l)
}

/// The first `n` CPUs this process may use now (its group's cpuset and its affinity).
fn choose_cpus(hiers: &[Hier], n: u32) -> Result<Vec<u32>> {
    let mut have = allowed_cpus().unwrap_or_default();
    if let Some(h) = hiers.iter().find(|h| h.v2 || h.controller == "cpuset") {
        let file = if h.v2 {
            "cpuset.cpus.effective"
        } else {
            "cpuset.cpus"
        };
        if let Some(set) = std::fs::read_to_string(h.current.join(file))
            .ok()
            .and_then(|s| hier::parse_cpu_list(&s))
        {
            have.retain(|c| set.contains(c));
        }
    }
    if (n as usize) > have.len() {
        return Err(TestbedError::Invalid(format!(
            "machine cpus = {n}: this machine lets fiox use {} CPU{} ({}); ask for at most {}",
            have.len(),
            if have.len() == 1 { "" } else { "s" },
            hier::cpu_list_text(&have),
            have.len()
        )));
    }
    have.truncate(n as usize);
    Ok(have)
}

/// cgroup2: the controllers the limits need must be enabled in the parent's
/// cgroup.subtree_control (the root's, where fiox's group goes).
fn enable_controllers(parent: &Path, limits: &Limits) -> Result<()> {
    let ctl = parent.join("cgroup.subtree_control");
    let on = read(&ctl)?;
    for (c, need) in [
        ("memory", limits.memory_bytes.is_some()),
        ("cpuset", limits.cpus.is_some()),
    ] {
        if need && !on.split_whitespace().any(|x| x == c) {
            write(&ctl, &format!("+{c}"))?;
        }
    }
    Ok(())
}

/// Samples the memory group's usage and page cache while the run goes, keeping the largest.
struct Watch {
    stop: Arc<AtomicBool>,
    usage: Arc<AtomicU64>,
    cache: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How often the memory group is sampled.
const WATCH_EVERY: Duration = Duration::from_millis(100);

impl Watch {
    fn start(group: PathBuf, v2: bool) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let usage = Arc::new(AtomicU64::new(0));
        let cache = Arc::new(AtomicU64::new(0));
        let (s, u, c) = (stop.clone(), usage.clone(), cache.clone());
        let (usage_file, cache_key) = if v2 {
            ("memory.current", "file")
        } else {
            ("memory.usage_in_bytes", "cache")
        };
        let sample = move || {
            if let Some(x) = read_u64(&group.join(usage_file)) {
                u.fetch_max(x, Ordering::Relaxed);
            }
            if let Some(x) = keyed(&group.join("memory.stat"), cache_key) {
                c.fetch_max(x, Ordering::Relaxed);
            }
        };
        let thread = std::thread::Builder::new()
            .name("fiox-machine".into())
            .spawn(move || loop {
                sample();
                if s.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(WATCH_EVERY);
            })
            .ok();
        Watch {
            stop,
            usage,
            cache,
            thread,
        }
    }

    /// Stop; (largest usage, largest page cache) sampled.
    fn finish(mut self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        (
            self.usage.load(Ordering::Relaxed),
            self.cache.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_with_clear_refusals() {
        let l = Limits::parse(Some("2g"), Some("4")).unwrap();
        assert_eq!(l.memory_bytes, Some(2 << 30));
        assert_eq!(l.cpus, Some(4));
        assert!(Limits::parse(None, None).unwrap().is_empty());
        let e = Limits::parse(Some("lots"), None).unwrap_err().to_string();
        assert!(e.contains("expected a size"), "{e}");
        let e = Limits::parse(Some("1m"), None).unwrap_err().to_string();
        assert!(e.contains("at least 16m"), "{e}");
        let e = Limits::parse(None, Some("0")).unwrap_err().to_string();
        assert!(e.contains("above 0"), "{e}");
    }

    #[test]
    fn a_limit_never_reached_or_exceeded_is_a_warning() {
        let r = |peak: u64, hits: u64| Report {
            limits: Limits {
                memory_bytes: Some(1 << 30),
                cpus: None,
            },
            peak_bytes: Some(peak),
            limit_hits: Some(hits),
            ..Report::default()
        };
        let codes =
            |r: &Report| -> Vec<LimitWarning> { warnings(r).into_iter().map(|w| w.0).collect() };
        assert_eq!(codes(&r(100 << 20, 0)), [LimitWarning::NotReached]);
        assert!(codes(&r(1 << 30, 5)).is_empty());
        assert!(codes(&r(100 << 20, 3)).is_empty());
        assert_eq!(codes(&r(2 << 30, 0)), [LimitWarning::Exceeded]);
    }
}
