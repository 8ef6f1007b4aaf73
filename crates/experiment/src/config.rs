//! Experiment files (TOML): what to run (a fio job file, by path or inline), the variants to
//! compare (each a name with a testbed to make, an existing target, option overrides,
//! environment variables for the job file's `${VAR}`s, or just a label for "this machine as
//! it is now"), repetitions, warm-up runs, order, cache dropping and an adaptive stop. Also the
//! job-text rewriting that applies a variant (its overrides and target go at the end of every
//! job section, where they win over the job's own lines) and the run order.
//!
//! ```toml
//! name = "loop-dio"
//! job_file = "loop-dio.fio"        # or: jobs = """[randread]\nrw=randread ..."""
//! repetitions = 3
//! warmup = 0
//! order = "shuffled"               # (default) or "interleaved", "sequential"
//! drop_caches = true
//! [stop]                           # optional adaptive stop
//! ci = 0.02                        # every change's 95% interval within ±2%...
//! max_runs = 10                    # ...or at most 10 runs per variant
//! metric = "iops"                  # (default: every job's headline metrics)
//! [[variant]]
//! name = "buffered"
//! testbed = { kind = "loop", size = "256m", direct_io = "off" }
//! [[variant]]
//! name = "dio"
//! testbed = { kind = "loop", size = "256m", direct_io = "on" }
//! options = { iodepth = "4" }
//! ```
//!
//! `vm = { kernel = "6.1.0-56-amd64", aio = "io_uring", cache = "none", memory = "2g",
//! cpus = 4, sched = "mq-deadline" }` (the experiment's, each variant's keys over it) runs
//! every run of a variant in a fresh QEMU guest on its virtio-blk disk (`--vm`, fiox-testbed's
//! vm module): variants that differ in `kernel` are a kernel A/B run interleaved.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Errors reading an experiment file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {why}", path.display())]
    Invalid { path: PathBuf, why: String },
}

/// A parsed experiment file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub name: Option<String>,
    /// A fio job file, relative to the experiment file.
    pub job_file: Option<PathBuf>,
    /// Or the job file's text inline.
    pub jobs: Option<String>,
    #[serde(default = "one")]
    pub repetitions: u32,
    #[serde(default)]
    pub warmup: u32,
    #[serde(default)]
    pub order: Order,
    #[serde(default)]
    pub drop_caches: bool,
    /// Telemetry sampling interval in milliseconds (0: off).
    #[serde(default = "thousand")]
    pub telemetry_ms: u64,
    /// `--explain` on every run: where the latency went, per job, in each run's JSON
    /// (`explain = true`, or how: `explain = "full"`, `explain = "20ms/200ms"`).
    #[serde(default)]
    pub explain: Explain,
    /// Environment variables for every variant.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Option overrides for every variant (a variant's own win).
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    pub stop: Option<Stop>,
    /// Machine limits for every variant's runs (a variant's own keys win).
    pub machine: Option<MachineSpec>,
    /// A QEMU guest for every variant's runs (a variant's own keys win; see the module
    /// documentation).
    pub vm: Option<BTreeMap<String, toml::Value>>,
    #[serde(rename = "variant")]
    pub variants: Vec<Variant>,
}

fn one() -> u32 {
    1
}

/// `explain = true | false | "MODE"`: whether the runs trace their jobs, and how (fiox's
/// `--explain=MODE`: `sampled`, `full`, or `WINDOW/PERIOD`; fiox checks the times).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Explain {
    Switch(bool),
    Mode(String),
}

impl Default for Explain {
    fn default() -> Explain {
        Explain::Switch(false)
    }
}

impl Explain {
    /// The run's fiox argument, if any.
    pub fn arg(&self) -> Option<String> {
        match self {
            Explain::Switch(false) => None,
            Explain::Switch(true) => Some("--explain".into()),
            Explain::Mode(m) => Some(format!("--explain={m}")),
        }
    }

    fn check(&self) -> Result<(), String> {
        let Explain::Mode(m) = self else {
            return Ok(());
        };
        let ok = matches!(m.as_str(), "full" | "sampled")
            || m.split_once('/').is_some_and(|(w, p)| {
                [w, p].iter().all(|t| {
                    !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
                })
            });
        if ok {
            Ok(())
        } else {
            Err(format!(
                "explain = \"{m}\": expected true, false, \"full\", \"sampled\" or \"WINDOW/PERIOD\" (e.g. \"20ms/200ms\")"
            ))
        }
    }
}

fn thousand() -> u64 {
    1000
}

/// Order of runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// v1 v2 v1 v2 ...: drift spreads over all variants, but the first of every round is
    /// always v1 (a position effect then looks like a variant effect).
    Interleaved,
    /// Each round (one run of every variant) in its own seeded random order, so that neither
    /// drift nor the position within a round is confounded with a variant; the default.
    #[default]
    Shuffled,
    /// All runs of v1, then v2 (for comparison with naive runs).
    Sequential,
}

/// Adaptive stop: keep adding rounds until the 95% interval of every row compare will show
/// (every job's headline metrics, `metric = "all"` for every metric, or the one named; each
/// variant against its baseline) is narrower than `ci` either side, or `max_runs` measured
/// runs per variant (see `stop`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    pub ci: f64,
    pub max_runs: u32,
    pub metric: Option<String>,
}

/// One variant.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    /// A testbed to make before the runs and remove after: `kind` plus fiox-testbed's keys.
    pub testbed: Option<BTreeMap<String, toml::Value>>,
    /// An existing target: a directory (directory=) or a device/file (filename=).
    pub target: Option<PathBuf>,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// This variant's machine limits (over the experiment's).
    pub machine: Option<MachineSpec>,
    /// This variant's guest keys (over the experiment's `vm`).
    pub vm: Option<BTreeMap<String, toml::Value>>,
    /// The variant this one is compared against (default: the first variant).
    pub baseline: Option<String>,
}

/// `machine = { memory = "2g", cpus = 4 }`: each run goes into a cgroup with that memory
/// limit (page cache included) and a cpuset of that many CPUs (`--machine-memory`,
/// `--machine-cpus` of the run's fiox).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    pub memory: Option<String>,
    pub cpus: Option<u32>,
}

impl MachineSpec {
    /// The run's fiox switches for these limits.
    pub fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(m) = &self.memory {
            a.push(format!("--machine-memory={m}"));
        }
        if let Some(c) = self.cpus {
            a.push(format!("--machine-cpus={c}"));
        }
        a
    }

    /// As the definition keeps it ("memory=2g cpus=4"; empty without limits).
    pub fn text(&self) -> String {
        let mut a = Vec::new();
        if let Some(m) = &self.memory {
            a.push(format!("memory={m}"));
        }
        if let Some(c) = self.cpus {
            a.push(format!("cpus={c}"));
        }
        a.join(" ")
    }
}

impl Experiment {
    /// The machine limits of variant `v`: its own keys over the experiment's.
    pub fn machine_of(&self, v: &Variant) -> MachineSpec {
        let base = self.machine.clone().unwrap_or_default();
        let own = v.machine.clone().unwrap_or_default();
        MachineSpec {
            memory: own.memory.or(base.memory),
            cpus: own.cpus.or(base.cpus),
        }
    }
}

impl Experiment {
    /// The guest of variant `v` as `--vm`'s text ("aio=native,cache=none"; its keys over the
    /// experiment's); None when neither asks for a guest.
    pub fn vm_of(&self, v: &Variant) -> Option<String> {
        if self.vm.is_none() && v.vm.is_none() {
            return None;
        }
        let mut keys = self.vm.clone().unwrap_or_default();
        keys.extend(v.vm.clone().unwrap_or_default());
        let text: Vec<String> = keys
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
                    other => other.to_string(),
                };
                format!("{k}={s}")
            })
            .collect();
        Some(text.join(","))
    }

    /// Read and check an experiment file; returns it with the job text.
    pub fn load(path: &Path) -> Result<(Experiment, String), ConfigError> {
        let io = |source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        };
        let bad = |why: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            why,
        };
        // The one bounded reader: a FIFO or /dev/zero named here is refused at once.
        let max = fiox_guard::input::JOB_FILE_MAX;
        let text = fiox_guard::input::read_text(path, max).map_err(io)?;
        let exp: Experiment = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let jobs = match (&exp.job_file, &exp.jobs) {
            (Some(f), None) => {
                let p = path.parent().unwrap_or(Path::new(".")).join(f);
                fiox_guard::input::read_text(&p, max)
                    .map_err(|source| ConfigError::Io { path: p, source })?
            }
            (None, Some(j)) => j.clone(),
            _ => return Err(bad("give exactly one of job_file and jobs".into())),
        };
        exp.check().map_err(bad)?;
        Ok((exp, jobs))
    }

    fn check(&self) -> Result<(), String> {
        if self.variants.is_empty() {
            return Err("no [[variant]]".into());
        }
        if self.repetitions == 0 {
            return Err("repetitions = 0".into());
        }
        // Planning holds a run per repetition: 2^32-1 of them took 3 GB before the first run
        // and no Ctrl-C could stop it.
        if self.repetitions > MAX_REPETITIONS || self.warmup > MAX_REPETITIONS {
            return Err(format!(
                "repetitions = {} and warmup = {}: at most {MAX_REPETITIONS} each",
                self.repetitions, self.warmup
            ));
        }
        self.check_values()?;
        self.explain.check()?;
        let mut seen = std::collections::BTreeSet::new();
        for v in &self.variants {
            let ok = !v.name.is_empty()
                && v.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !ok {
                return Err(format!(
                    "variant name {:?}: use letters, digits, '-', '_' or '.'",
                    v.name
                ));
            }
            if !seen.insert(&v.name) {
                return Err(format!("variant {} appears twice", v.name));
            }
            if let Some(b) = &v.baseline {
                if b == &v.name || !self.variants.iter().any(|x| &x.name == b) {
                    let names: Vec<&str> = self.variants.iter().map(|x| x.name.as_str()).collect();
                    return Err(format!(
                        "variant {}: baseline = {b:?} is {}; the variants are {}",
                        v.name,
                        if b == &v.name { "itself" } else { "no variant" },
                        names.join(", ")
                    ));
                }
            }
            let m = self.machine_of(v);
            fiox_testbed::machine::Limits::parse(
                m.memory.as_deref(),
                m.cpus.map(|c| c.to_string()).as_deref(),
            )
            .map_err(|e| format!("variant {}: machine: {e}", v.name))?;
            if let Some(text) = self.vm_of(v) {
                fiox_testbed::vm::VmSpec::parse(&text)
                    .map_err(|e| format!("variant {}: vm: {e}", v.name))?;
                if v.testbed.is_some() || v.target.is_some() || !m.text().is_empty() {
                    return Err(format!(
                        "variant {}: a vm runs on its own disk (/dev/vda in the guest) with its \
                         own memory and cpus: give no testbed, target or machine with it",
                        v.name
                    ));
                }
            }
            if v.testbed.is_some() && v.target.is_some() {
                return Err(format!(
                    "variant {}: give a testbed or a target, not both",
                    v.name
                ));
            }
        }
        if let Some(s) = &self.stop {
            if !(s.ci > 0.0 && s.ci < 1.0) || s.max_runs < self.repetitions {
                return Err("[stop]: ci must be in (0, 1) and max_runs >= repetitions".into());
            }
            if s.metric
                .as_deref()
                .is_some_and(|m| m != "all" && !stop_metric_known(m))
            {
                return Err(format!(
                    "[stop]: metric = {:?} is none of fiox's metrics: {}, optionally with \
                     read./write./trim. before it, or telemetry.NAME, or \"all\" (leave it out \
                     for every job's headline metrics)",
                    s.metric.as_deref().unwrap_or_default(),
                    STOP_METRICS.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// The most repetitions (and warm-up runs) per variant an experiment may ask for.
pub const MAX_REPETITIONS: u32 = 100_000;

impl Experiment {
    /// A value that becomes a job-file line (`options`, `env`) must stay one line: a newline
    /// in it would add job lines of its own (`rw = "read\nfilename=/x"`).
    fn check_values(&self) -> Result<(), String> {
        let maps = std::iter::once(("", &self.options, &self.env)).chain(
            self.variants
                .iter()
                .map(|v| (v.name.as_str(), &v.options, &v.env)),
        );
        for (variant, options, env) in maps {
            for (what, map) in [("options", options), ("env", env)] {
                for (k, v) in map {
                    if k.contains(['\n', '\r', '=']) && what == "options"
                        || v.contains(['\n', '\r', '\0'])
                    {
                        let at = if variant.is_empty() {
                            String::new()
                        } else {
                            format!("variant {variant}: ")
                        };
                        return Err(format!(
                            "{at}{what}: {k} = {v:?}: a value must be one line (a line break \
                             would add lines to the job file)"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The per-job metrics compare reads from a result (load.rs), by their last part.
pub const STOP_METRICS: [&str; 12] = [
    "iops",
    "bw_mib",
    "lat_mean_us",
    "slat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_p999_us",
    "ctx",
    "ctx_per_io",
    "ctx_per_s",
    "cpu_us_per_io",
    "errors",
];

/// Whether the adaptive stop's `metric` can match anything a run reports.
fn stop_metric_known(m: &str) -> bool {
    if m.starts_with("telemetry.") {
        return true;
    }
    let base = ["read.", "write.", "trim."]
        .iter()
        .find_map(|d| m.strip_prefix(d))
        .unwrap_or(m);
    STOP_METRICS.contains(&base)
}

/// The testbed table as fiox-testbed `key=value` pairs (kind first, then the rest).
pub fn testbed_pairs(
    t: &BTreeMap<String, toml::Value>,
) -> Result<(String, Vec<(String, String)>), String> {
    let kind = t
        .get("kind")
        .and_then(toml::Value::as_str)
        .ok_or("testbed needs kind = \"loop\"|\"tmpfs\"|\"ramfs\"|\"fs\"")?
        .to_string();
    let pairs = t
        .iter()
        .filter(|(k, _)| *k != "kind")
        .map(|(k, v)| {
            let s = match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
                other => other.to_string(),
            };
            (k.clone(), s)
        })
        .collect();
    Ok((kind, pairs))
}

/// Append `lines` at the end of every job section of `jobs` (not `[global]`), where they
/// override the section's own settings.
pub fn apply_overrides(jobs: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return jobs.to_string();
    }
    let mut out = String::new();
    let mut in_job = false;
    let flush = |out: &mut String| {
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
    };
    for line in jobs.lines() {
        let t = line.trim();
        if t.starts_with('[') && t.ends_with(']') {
            if in_job {
                flush(&mut out);
            }
            in_job = !t[1..t.len() - 1].trim().eq_ignore_ascii_case("global");
        }
        out.push_str(line);
        out.push('\n');
    }
    if in_job {
        flush(&mut out);
    }
    out
}

/// One planned run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub variant: String,
    /// 0-based index among the variant's runs (warm-ups first): its round.
    pub index: u32,
    pub warmup: bool,
    /// 0-based position within its round (recorded, so that a position effect can be seen).
    pub position: u32,
}

/// The runs of rounds `from..to` (a round is one run of every variant), in `order`; warm-up
/// rounds come first and are never shuffled out of the front. A shuffled round's order
/// depends only on `seed` and the round, so a resumed experiment, or a round the adaptive stop
/// adds, plans exactly what a whole run would have.
pub fn plan(exp: &Experiment, names: &[String], from: u32, to: u32, seed: u64) -> Vec<Planned> {
    let mut out = Vec::new();
    let rounds: Vec<u32> = (from..to).collect();
    if exp.order == Order::Sequential {
        for n in names {
            for &r in &rounds {
                out.push(planned(n, r, exp.warmup, 0));
            }
        }
        return out;
    }
    for &r in &rounds {
        let mut round: Vec<&String> = names.iter().collect();
        if exp.order == Order::Shuffled {
            let mut rng =
                crate::stats::SplitMix(seed ^ u64::from(r).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            // Fisher-Yates.
            for i in (1..round.len()).rev() {
                round.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
        }
        let at = round.into_iter().enumerate();
        out.extend(at.map(|(i, n)| planned(n, r, exp.warmup, i as u32)));
    }
    out
}

fn planned(name: &str, round: u32, warmup: u32, position: u32) -> Planned {
    Planned {
        variant: name.to_string(),
        index: round,
        warmup: round < warmup,
        position,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys serde knows for the table that `toml` (with `bogus_key_41 = 1` added) is
    /// parsed into: from its "unknown field, expected one of" error.
    fn keys_of<T: for<'de> Deserialize<'de> + std::fmt::Debug>(toml_text: &str) -> Vec<String> {
        let e = toml::from_str::<T>(toml_text).unwrap_err().to_string();
        // "expected one of `a`, `b`, ..." or "expected `a` or `b`".
        let at = e.find("`, expected").unwrap_or_else(|| panic!("{e}")) + 2;
        e[at..]
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    /// docs/experiments.md's reference lists every key of the file, of a variant, of `[stop]`
    /// and of `machine` (issue 41: they were documented only in the history page), and
    /// `fiox experiment --help` points there; the docs hold no path of this project's machine.
    #[test]
    fn the_reference_documents_every_key() {
        let docs = include_str!("../../../docs/experiments.md");
        let at = docs
            .find("## The experiment file: every key")
            .expect("the reference section");
        let reference = &docs[at..];
        let top = keys_of::<Experiment>("bogus_key_41 = 1\n");
        let variant = keys_of::<Variant>("name = \"a\"\nbogus_key_41 = 1\n");
        let stop = keys_of::<Stop>("ci = 1.0\nmax_runs = 2\nbogus_key_41 = 1\n");
        let machine = keys_of::<MachineSpec>("bogus_key_41 = 1\n");
        assert!(top.len() >= 15 && variant.len() >= 7, "{top:?} {variant:?}");
        for k in top.iter().chain(&variant).chain(&stop).chain(&machine) {
            assert!(
                reference.contains(&format!("| `{k}` |")),
                "docs/experiments.md's reference lacks the key `{k}`"
            );
        }
        for k in fiox_testbed::managed::SPEC_KEYS
            .split([',', ';', ' ', ':'])
            .chain(fiox_testbed::vm::VM_KEYS.split([',', ' ']))
            .filter(|w| !w.is_empty() && !w.starts_with('(') && !w.ends_with(')'))
            .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        {
            assert!(reference.contains(k), "the reference lacks the key {k}");
        }
        for d in ["docs/experiments.md", "README.md"] {
            let text = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .join(d),
            )
            .unwrap();
            assert!(!text.contains("/work/"), "{d} names a path of this machine");
        }
    }

    #[test]
    fn overrides_land_at_the_end_of_every_job_section() {
        let jobs = "[global]\nbs=4k\n[a]\nrw=read\n[b]\nrw=write\n";
        let out = apply_overrides(jobs, &["bs=8k".into()]);
        assert_eq!(
            out,
            "[global]\nbs=4k\n[a]\nrw=read\nbs=8k\n[b]\nrw=write\nbs=8k\n"
        );
    }

    #[test]
    fn absurd_repetitions_and_multi_line_values_are_refused() {
        let exp = |extra: &str| -> Experiment {
            toml::from_str(&format!(
                "jobs = \"\"\n{extra}\n[[variant]]\nname = \"a\"\n"
            ))
            .unwrap()
        };
        let e = exp("repetitions = 4294967295").check().unwrap_err();
        assert!(e.contains("at most 100000"), "{e}");
        assert!(exp("warmup = 4294967295").check().is_err());
        assert!(exp("repetitions = 100000").check().is_ok());
        let e = exp("options = { rw = \"read\\nfilename=/x\\nrw=write\" }")
            .check()
            .unwrap_err();
        assert!(e.contains("must be one line"), "{e}");
        assert!(exp("env = { T = \"a\\nb\" }").check().is_err());
        assert!(exp("options = { bs = \"4k\" }").check().is_ok());
    }

    #[test]
    fn explain_is_a_switch_or_a_mode() {
        let exp = |line: &str| -> Experiment {
            toml::from_str(&format!("jobs = \"\"\n{line}\n[[variant]]\nname = \"a\"\n")).unwrap()
        };
        assert_eq!(exp("").explain.arg(), None);
        assert_eq!(
            exp("explain = true").explain.arg().as_deref(),
            Some("--explain")
        );
        let full = exp("explain = \"full\"");
        assert_eq!(full.explain.arg().as_deref(), Some("--explain=full"));
        assert!(full.check().is_ok());
        assert!(exp("explain = \"20ms/200ms\"").check().is_ok());
        let e = exp("explain = \"often\"").check().unwrap_err();
        assert!(e.contains("WINDOW/PERIOD"), "{e}");
    }

    #[test]
    fn vm_keys_merge_and_are_checked() {
        let exp: Experiment = toml::from_str(
            "jobs = \"\"\nvm = { aio = \"threads\", cpus = 2 }\n[[variant]]\nname = \"a\"\n\
             vm = { aio = \"native\", iothread = true }\n[[variant]]\nname = \"b\"\n",
        )
        .unwrap();
        assert_eq!(
            exp.vm_of(&exp.variants[0]).as_deref(),
            Some("aio=native,cpus=2,iothread=on")
        );
        assert_eq!(
            exp.vm_of(&exp.variants[1]).as_deref(),
            Some("aio=threads,cpus=2")
        );
        assert!(exp.check().is_ok());
        let bad: Experiment =
            toml::from_str("jobs = \"\"\n[[variant]]\nname = \"a\"\nvm = { aio = \"posix\" }\n")
                .unwrap();
        let e = bad.check().unwrap_err();
        assert!(
            e.contains("variant a: vm:") && e.contains("threads, native"),
            "{e}"
        );
        let both: Experiment = toml::from_str(
            "jobs = \"\"\n[[variant]]\nname = \"a\"\nvm = {}\ntarget = \"/dev/null\"\n",
        )
        .unwrap();
        assert!(both
            .check()
            .unwrap_err()
            .contains("no testbed, target or machine"));
    }

    #[test]
    fn an_unknown_stop_metric_is_refused() {
        let exp = |m: &str| -> Experiment {
            toml::from_str(&format!(
                "jobs = \"\"\n[stop]\nci = 0.1\nmax_runs = 3\nmetric = \"{m}\"\n\
                 [[variant]]\nname = \"a\"\n"
            ))
            .unwrap()
        };
        let e = exp("latency").check().unwrap_err();
        assert!(e.contains("\"latency\" is none of fiox's metrics"), "{e}");
        assert!(exp("read.lat_p99_us").check().is_ok());
        assert!(exp("iops").check().is_ok());
        assert!(exp("all").check().is_ok());
        assert!(exp("telemetry.cpu_busy.mean").check().is_ok());
    }

    #[test]
    fn plans_interleave_and_shuffle_reproducibly() {
        let exp: Experiment = toml::from_str(
            "jobs = \"\"\nrepetitions = 2\nwarmup = 1\n[[variant]]\nname = \"a\"\n\
             [[variant]]\nname = \"b\"\n",
        )
        .unwrap();
        let names = vec!["a".to_string(), "b".to_string()];
        let interleaved = Experiment {
            order: Order::Interleaved,
            ..exp.clone()
        };
        let p = plan(&interleaved, &names, 0, 3, 7);
        let order: Vec<(&str, u32, bool)> = p
            .iter()
            .map(|x| (x.variant.as_str(), x.index, x.warmup))
            .collect();
        assert_eq!(
            order,
            [
                ("a", 0, true),
                ("b", 0, true),
                ("a", 1, false),
                ("b", 1, false),
                ("a", 2, false),
                ("b", 2, false)
            ]
        );
        assert_eq!(exp.order, Order::Shuffled, "shuffled is the default");
        let shuffled = exp.clone();
        let names: Vec<String> = (0..6).map(|i| format!("v{i}")).collect();
        let (x, y) = (
            plan(&shuffled, &names, 0, 4, 9),
            plan(&shuffled, &names, 0, 4, 9),
        );
        assert_eq!(x, y);
        let names_of = |r: &[Planned]| r.iter().map(|p| p.variant.clone()).collect::<Vec<_>>();
        let rounds: Vec<Vec<String>> = x.chunks(6).map(names_of).collect();
        assert!(
            rounds.iter().any(|r| *r != rounds[0]),
            "rounds should differ: {rounds:?}"
        );
        // A round planned alone (the adaptive stop's next round, a resume) is the same round.
        assert_eq!(plan(&shuffled, &names, 3, 4, 9), x[18..].to_vec());
        assert!(x.iter().all(|p| p.position < 6));
        assert_eq!(x[7].position, 1);
        // Over many rounds every variant is sometimes first.
        let firsts: std::collections::BTreeSet<String> = plan(&shuffled, &names, 0, 60, 9)
            .iter()
            .filter(|p| p.position == 0)
            .map(|p| p.variant.clone())
            .collect();
        assert_eq!(firsts.len(), 6, "{firsts:?}");
    }
}
