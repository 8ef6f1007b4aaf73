//! The option table: one [`OptDef`] per option fiox implements (name, aliases, type, default,
//! range, category, help, owning engine and the function that stores the parsed value into a
//! [`JobSpec`]), plus the fio options ([`fio_only`]) and engines ([`unsupported`]) fiox
//! parses and checks but cannot run yet; those are recorded in `JobSpec::unsupported`.
//! Parsing, validation, `--cmdhelp`, `--enghelp` and `docs/options.md` are all driven by it.
//!
//! The definitions live in one file per category; each definition has its test cases in the
//! same file, and `every_option_has_a_test` enforces that.

mod engine;
mod files;
pub mod fio342;
pub mod fio_master;
pub mod fio_only;
mod general;
mod io;
mod memory;
mod replay;
mod stats;
mod steady;
pub mod unsupported;
mod workload;

use crate::value;
use crate::JobSpec;

/// fiox's limit on jobs, counting numjobs clones. fio stops at 4,096 (REAL_MAX_JOBS); fiox
/// starts jobs in time linear in their number (issue 28: 10,000 sections), and each job is a
/// thread of about 130 KB: the limit only keeps a typo (numjobs=1000000) from exhausting the
/// machine's threads.
pub const MAX_JOBS: usize = 65_536;

/// Value type of an option (drives bare-flag handling and the docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `0`/`1`; a bare name means 1.
    Bool,
    /// Integer with optional range.
    Int,
    /// Byte size with `k/m/g` suffixes.
    Size,
    /// Size or percentage.
    SizeOrPercent,
    /// Time; the bare-number unit is given (e.g. "s", "us", "ms").
    Time(&'static str),
    /// Free text.
    Str,
    /// Free text that may be omitted (a bare name means "use the default text").
    OptStr,
    /// One of a fixed set of words (optionally with `:N` parameters).
    Choice(&'static [&'static str]),
    /// Structured value (ranges, lists, triplets, distributions).
    Complex(&'static str),
}

impl Kind {
    /// Type name as shown in help and docs.
    pub fn type_name(&self) -> String {
        match self {
            Kind::Bool => "bool".into(),
            Kind::Int => "int".into(),
            Kind::Size => "size".into(),
            Kind::SizeOrPercent => "size or %".into(),
            Kind::Time(u) => format!("time (default unit {u})"),
            Kind::Str => "string".into(),
            Kind::OptStr => "[string]".into(),
            Kind::Choice(c) => c.join("|"),
            Kind::Complex(d) => (*d).into(),
        }
    }

    /// A bare `name` (no `=value`) is accepted and means `1`.
    pub fn allows_bare(&self) -> bool {
        matches!(self, Kind::Bool | Kind::OptStr)
    }
}

/// Option categories (for help grouping and docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    General,
    Files,
    Io,
    Random,
    Buffers,
    Rate,
    Timing,
    Stats,
    Logs,
    Process,
    Verify,
    Engine,
}

impl Category {
    pub fn title(self) -> &'static str {
        match self {
            Category::General => "Job description and grouping",
            Category::Files => "Files and devices",
            Category::Io => "I/O type, size and depth",
            Category::Random => "Random I/O",
            Category::Buffers => "Buffer contents",
            Category::Rate => "Rate limits and think time",
            Category::Timing => "Run time",
            Category::Stats => "Statistics and reporting",
            Category::Logs => "Logs",
            Category::Process => "Processes, CPUs and errors",
            Category::Verify => "Verification",
            Category::Engine => "Engine-specific",
        }
    }
}

/// Stores a parsed value into the job; errors are sentence fragments (no location).
pub type ApplyFn = fn(&mut JobSpec, &Val) -> Result<(), String>;

/// One option definition.
#[derive(Clone, Copy)]
pub struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// fio's default, as text.
    pub default: &'static str,
    /// Inclusive allowed range for integer options.
    pub range: Option<(i64, i64)>,
    pub category: Category,
    pub help: &'static str,
    pub long_help: &'static str,
    /// Engines this option belongs to; empty for core options.
    pub engines: &'static [&'static str],
    pub apply: ApplyFn,
}

impl std::fmt::Debug for OptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptDef").field("name", &self.name).finish()
    }
}

impl OptDef {
    /// A definition with no aliases, default, range or engine.
    pub const fn new(
        name: &'static str,
        kind: Kind,
        category: Category,
        help: &'static str,
        apply: ApplyFn,
    ) -> Self {
        OptDef {
            name,
            aliases: &[],
            kind,
            default: "",
            range: None,
            category,
            help,
            long_help: "",
            engines: &[],
            apply,
        }
    }
    pub const fn alias(mut self, a: &'static [&'static str]) -> Self {
        self.aliases = a;
        self
    }
    pub const fn def(mut self, d: &'static str) -> Self {
        self.default = d;
        self
    }
    pub const fn range(mut self, lo: i64, hi: i64) -> Self {
        self.range = Some((lo, hi));
        self
    }
    pub const fn long(mut self, l: &'static str) -> Self {
        self.long_help = l;
        self
    }
    pub const fn engines(mut self, e: &'static [&'static str]) -> Self {
        self.engines = e;
        self
    }
    /// The long help, or the short one when no longer text exists.
    pub fn long_text(&self) -> &'static str {
        if self.long_help.is_empty() {
            self.help
        } else {
            self.long_help
        }
    }
    /// Does `n` name this option (name or alias, case-insensitive)?
    pub fn matches(&self, n: &str) -> bool {
        self.name.eq_ignore_ascii_case(n) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(n))
    }
}

/// A raw value with what is needed to interpret it.
pub struct Val<'a> {
    /// The text after `=`; empty for a bare option.
    pub raw: &'a str,
    pub kb_base: u32,
    pub def: &'a OptDef,
}

impl Val<'_> {
    /// Check an integer against the definition's range.
    fn check_range(&self, v: i64) -> Result<i64, String> {
        if let Some((lo, hi)) = self.def.range {
            if v < lo {
                return Err(format!("{v} is below the minimum {lo}"));
            }
            if v > hi {
                return Err(format!("{v} is above the maximum {hi}"));
            }
        }
        Ok(v)
    }
    pub fn bool(&self) -> Result<bool, String> {
        if self.raw.trim().is_empty() {
            return Ok(true);
        }
        value::parse_bool(self.raw)
    }
    pub fn int(&self) -> Result<i64, String> {
        let v = value::parse_int(self.raw, self.kb_base)?;
        self.check_range(v)
    }
    pub fn u32(&self) -> Result<u32, String> {
        let v = self.int()?;
        u32::try_from(v).map_err(|_| format!("{v} is out of range 0..{}", u32::MAX))
    }
    pub fn u64(&self) -> Result<u64, String> {
        let v = self.int()?;
        u64::try_from(v).map_err(|_| format!("{v} is negative"))
    }
    pub fn size(&self) -> Result<u64, String> {
        let v = value::parse_size(self.raw, self.kb_base)?;
        if let Some((lo, hi)) = self.def.range {
            if (v as i128) < lo as i128 {
                return Err(format!("{v} is below the minimum {lo}"));
            }
            if (v as i128) > hi as i128 {
                return Err(format!("{v} is above the maximum {hi}"));
            }
        }
        Ok(v)
    }
    pub fn size_pct(&self) -> Result<crate::SizeSpec, String> {
        value::parse_size_or_percent(self.raw, self.kb_base)
    }
    /// A time in microseconds; the bare-number unit comes from the definition's kind.
    pub fn time_us(&self) -> Result<u64, String> {
        value::parse_time_us(self.raw, unit_us(self.def.kind))
    }
    pub fn duration(&self) -> Result<std::time::Duration, String> {
        Ok(std::time::Duration::from_micros(self.time_us()?))
    }
    pub fn str(&self) -> &str {
        self.raw.trim()
    }
    /// The lowercase word before any `:` parameter, checked against a `Choice` kind.
    pub fn choice(&self) -> Result<String, String> {
        let word = self.raw.trim().to_ascii_lowercase();
        if let Kind::Choice(list) = self.def.kind {
            let head = word.split(':').next().unwrap_or("");
            if !list.contains(&head) {
                return Err(format!(
                    "'{}' is not one of {}",
                    self.raw.trim(),
                    list.join(", ")
                ));
            }
        }
        Ok(word)
    }
}

fn unit_us(kind: Kind) -> u64 {
    match kind {
        Kind::Time("s") => 1_000_000,
        Kind::Time("ms") => 1_000,
        _ => 1,
    }
}

/// All implemented options, in category order.
pub fn all() -> impl Iterator<Item = &'static OptDef> {
    general::OPTS
        .iter()
        .chain(files::OPTS)
        .chain(io::OPTS)
        .chain(workload::OPTS)
        .chain(memory::OPTS)
        .chain(replay::OPTS)
        .chain(steady::OPTS)
        .chain(stats::OPTS)
        .chain(engine::OPTS)
}

/// Find an implemented option by name or alias (case-insensitive).
pub fn lookup(name: &str) -> Option<&'static OptDef> {
    all().find(|d| d.matches(name))
}

/// A size fiox's syntax refuses, read as fio 3.33 reads it: its number parser stops at the
/// first character it does not understand, so `filesize=65536)` (a typo scripts carry) is
/// 65536. Returns the value to apply instead and a note naming what fio ignored; None for
/// other kinds of option, where fio refuses the value too, or where nothing was ignored.
pub fn size_as_fio_reads(def: &OptDef, raw: &str, kb_base: u32) -> Option<(String, String)> {
    // filesize is a size or a range, whose own checks stand.
    let size = matches!(def.kind, Kind::Size | Kind::SizeOrPercent)
        || def.name == "filesize" && !raw.contains(['-', ':']);
    if !size {
        return None;
    }
    let (v, ignored) = value::fio_lenient_size(raw, kb_base).ok()?;
    (!ignored.trim().is_empty()).then(|| (v.to_string(), ignored_note(def.name, raw, v, &ignored)))
}

/// The note for a size read as fio reads it, naming what it ignored.
pub(crate) fn ignored_note(opt: &str, raw: &str, v: u64, ignored: &str) -> String {
    format!(
        "{opt}: '{}' read as {v} bytes, as fio 3.33 reads it: '{ignored}' ignored",
        raw.trim()
    )
}

/// fio's name for the option written as `name` (an alias such as `blocksize`, `readwrite` or
/// `ss` gives `bs`, `rw`, `steadystate`), as fio's JSON `job options` and `global options`
/// carry it; a name no table knows (a profile's option) stays as written.
pub fn canonical(name: &str) -> String {
    lookup(name)
        .or_else(|| fio_only::lookup(name))
        .map_or_else(|| name.to_string(), |d| d.name.to_string())
}

/// Engines fiox implements, with their help lines (the [`crate::Engine`] table's).
pub fn engines() -> impl Iterator<Item = (&'static str, &'static str)> {
    crate::Engine::ALL.iter().map(|e| (e.name(), e.about()))
}

/// The fio engine fiox parses but cannot run yet that `name` names, if any.
pub fn fio_only_engine(name: &str) -> Option<&'static str> {
    let n = name.trim().to_ascii_lowercase();
    unsupported::ENGINES.iter().copied().find(|e| *e == n)
}

/// Record an unsupported feature on the job; a later setting of the same option replaces an
/// earlier one (as the later value wins in fio).
pub fn record(job: &mut JobSpec, u: crate::Unsupported) {
    forget(job, &u.option);
    job.unsupported.push(u);
}

/// Drop the record of `option` (a later, supported value overrides it).
pub fn forget(job: &mut JobSpec, option: &str) {
    job.unsupported.retain(|x| x.option != option);
}

/// Record `option=value` as a value of an implemented option that fiox cannot run yet.
pub fn record_value(job: &mut JobSpec, option: &str, value: &str, note: &str) {
    record(
        job,
        crate::Unsupported {
            option: option.to_string(),
            value: value.trim().to_string(),
            what: "value",
            note: note.to_string(),
        },
    );
}

/// Record (or, when `on` is false, forget) a boolean option that parses into `JobSpec` but
/// that the runner cannot act on yet, so the job is refused when run instead of ignoring it.
pub fn flag_unimplemented(job: &mut JobSpec, option: &str, on: bool, note: &str) {
    forget(job, option);
    if on {
        record(
            job,
            crate::Unsupported {
                option: option.to_string(),
                value: String::new(),
                what: "option",
                note: note.to_string(),
            },
        );
    }
}

/// Canonical engine name for `ioengine=` input, or the error sentence.
pub fn canonical_engine(name: &str) -> Result<&'static str, String> {
    let n = name.trim().to_ascii_lowercase();
    if let Some(e) = crate::Engine::parse(&n) {
        return Ok(e.name());
    }
    if unsupported::ENGINES.contains(&n.as_str()) {
        return Err(format!(
            "ioengine '{n}' is a fio engine that fiox does not support yet"
        ));
    }
    if n.starts_with("external:") || n.contains('/') || n.ends_with(".so") {
        return Err(format!(
            "ioengine '{}': external engines are a fio feature that fiox does not support yet",
            name.trim()
        ));
    }
    let all = crate::Engine::ALL.iter();
    let names = all
        .clone()
        .map(|e| e.name())
        .chain(all.flat_map(|e| e.aliases().iter().copied()));
    Err(match crate::suggest::closest(&n, names) {
        Some(s) => format!("unknown ioengine '{n}' (did you mean '{s}'?)"),
        None => format!("unknown ioengine '{n}'"),
    })
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Helpers for the per-option tests in each definition file.
    use super::*;

    /// Apply `name=value` to a default job; `Err` carries the message.
    pub fn apply(name: &str, value: &str) -> Result<JobSpec, String> {
        let mut j = JobSpec::default();
        apply_to(&mut j, name, value)?;
        Ok(j)
    }

    pub fn apply_to(j: &mut JobSpec, name: &str, value: &str) -> Result<(), String> {
        let def = lookup(name).ok_or_else(|| format!("no option {name}"))?;
        let v = Val {
            raw: value,
            kb_base: j.kb_base,
            def,
        };
        (def.apply)(j, &v)
    }

    /// A table row: option, value, check on the result (None = must be rejected).
    pub type Case = (&'static str, &'static str, Option<fn(&JobSpec) -> bool>);

    /// Run the rows, naming the failing one.
    pub fn run(cases: &[Case]) {
        for (name, value, check) in cases {
            let r = apply(name, value);
            match (check, r) {
                (Some(f), Ok(j)) => assert!(f(&j), "{name}={value}: wrong result"),
                (Some(_), Err(e)) => panic!("{name}={value}: unexpected error {e}"),
                (None, Ok(_)) => panic!("{name}={value}: accepted but should fail"),
                (None, Err(_)) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn aliases_give_fios_canonical_names() {
        for (written, fio) in [
            ("blocksize", "bs"),
            ("readwrite", "rw"),
            ("ss", "steadystate"),
            ("ss_dur", "steadystate_duration"),
            ("ss_ramp", "steadystate_ramp_time"),
            ("timeout", "runtime"),
            ("blockalign", "ba"),
            ("BS", "bs"),
            ("iodepth", "iodepth"),
            ("no_such_option", "no_such_option"),
        ] {
            assert_eq!(canonical(written), fio, "{written}");
        }
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = HashSet::new();
        for d in all() {
            for n in std::iter::once(&d.name).chain(d.aliases) {
                assert!(seen.insert(n.to_ascii_lowercase()), "duplicate {n}");
            }
        }
    }

    #[test]
    fn implemented_options_are_not_listed_as_unsupported() {
        // Implemented names with their engines: a fio-only option may share a name only with
        // an implemented engine option of other engines (net's and rdma's `hostname`).
        let mut seen: std::collections::HashMap<String, &[&str]> = Default::default();
        for d in all() {
            for n in std::iter::once(&d.name).chain(d.aliases) {
                seen.insert(n.to_ascii_lowercase(), d.engines);
            }
        }
        // fio-only names may repeat only between different engines (rdma's and net's `proto`).
        let mut fio_seen: Vec<(String, &[&str])> = Vec::new();
        for d in fio_only::all() {
            for n in std::iter::once(&d.name).chain(d.aliases) {
                let n = n.to_ascii_lowercase();
                let shared = seen.get(&n).is_some_and(|own| {
                    !own.is_empty()
                        && !d.engines.is_empty()
                        && !own.iter().any(|e| d.engines.contains(e))
                });
                assert!(
                    !seen.contains_key(&n) || shared,
                    "{n} is both implemented and fio-only"
                );
                for (m, engines) in &fio_seen {
                    assert!(
                        *m != n
                            || (!engines.is_empty()
                                && !engines.iter().any(|e| d.engines.contains(e))),
                        "{n} is listed twice"
                    );
                }
                fio_seen.push((n, d.engines));
            }
        }
        for (e, _) in engines() {
            assert!(
                !unsupported::ENGINES.contains(&e),
                "engine {e} in both lists"
            );
        }
    }

    #[test]
    fn every_option_has_a_test() {
        let tested: HashSet<&str> = general::CASES
            .iter()
            .chain(files::CASES)
            .chain(io::CASES)
            .chain(workload::CASES)
            .chain(memory::tests::CASES)
            .chain(replay::tests::CASES)
            .chain(steady::tests::CASES)
            .chain(stats::CASES)
            .chain(engine::CASES)
            .map(|c| c.0)
            .collect();
        for d in all() {
            assert!(
                tested.contains(d.name),
                "option {} has no test case",
                d.name
            );
        }
    }

    /// The options of issue #2's "must support" set and those fio's examples use in five or
    /// more files (fio-facts.md) are all implemented, not merely known.
    #[test]
    fn required_options_are_implemented() {
        const REQUIRED: &[&str] = &[
            "rw",
            "rwmixread",
            "rwmixwrite",
            "bs",
            "bsrange",
            "bssplit",
            "blockalign",
            "size",
            "filesize",
            "offset",
            "offset_increment",
            "io_size",
            "number_ios",
            "filename",
            "directory",
            "filename_format",
            "nrfiles",
            "openfiles",
            "file_service_type",
            "numjobs",
            "thread",
            "iodepth",
            "iodepth_batch_submit",
            "iodepth_batch_complete_min",
            "iodepth_batch_complete_max",
            "iodepth_low",
            "io_submit_mode",
            "direct",
            "buffered",
            "sync",
            "fsync",
            "fdatasync",
            "end_fsync",
            "fsync_on_close",
            "runtime",
            "time_based",
            "ramp_time",
            "startdelay",
            "loops",
            "stonewall",
            "wait_for_previous",
            "new_group",
            "wait_for",
            "group_reporting",
            "randrepeat",
            "randseed",
            "norandommap",
            "random_generator",
            "random_distribution",
            "zero_buffers",
            "refill_buffers",
            "scramble_buffers",
            "buffer_compress_percentage",
            "buffer_compress_chunk",
            "buffer_pattern",
            "create_on_open",
            "unlink",
            "allow_file_create",
            "invalidate",
            "overwrite",
            "fallocate",
            "pre_read",
            "rate",
            "rate_iops",
            "rate_min",
            "rate_process",
            "thinktime",
            "thinktime_spin",
            "thinktime_blocks",
            "percentile_list",
            "clat_percentiles",
            "lat_percentiles",
            "slat_percentiles",
            "disable_lat",
            "disable_clat",
            "disable_slat",
            "disable_bw_measurement",
            "gtod_reduce",
            "bwavgtime",
            "iopsavgtime",
            "write_bw_log",
            "write_lat_log",
            "write_iops_log",
            "log_avg_msec",
            "per_job_logs",
            "cpus_allowed",
            "cpus_allowed_policy",
            "nice",
            "prio",
            "prioclass",
            "continue_on_error",
            "ignore_error",
            "exitall",
            "description",
            "kb_base",
            "unit_base",
            "allow_mounted_write",
            "verify",
            "do_verify",
            "verify_only",
            "verify_fatal",
            "verify_dump",
            "verify_async",
            "verify_backlog",
            "verify_backlog_batch",
            "verify_interval",
            "verify_offset",
            "verify_pattern",
            "verify_state_save",
            "verify_state_load",
            // engine options
            "fixedbufs",
            "registerfiles",
            "sqthread_poll",
            "sqthread_poll_cpu",
            "nonvectored",
            "force_async",
            "hipri",
            "hipri_percentage",
            "nowait",
            "uncached",
            "userspace_reap",
            "guasi_workers",
            "guasi_submit",
            "guasi_kick",
            "guasi_reap_runs",
            // used in five or more of fio's example files
            "ioengine",
            "name",
            "blocksize",
            "zonemode",
            "zonesize",
            "create_serialize",
        ];
        for o in REQUIRED {
            assert!(lookup(o).is_some(), "{o} is not implemented");
        }
    }

    #[test]
    fn every_option_has_help() {
        for d in all() {
            assert!(!d.help.is_empty(), "{} has no help", d.name);
        }
    }

    #[test]
    fn engines_resolve() {
        assert_eq!(canonical_engine("threads"), Ok("guasi"));
        assert_eq!(canonical_engine("LIBAIO"), Ok("libaio"));
        assert_eq!(
            canonical_engine("rbd").unwrap_err(),
            "ioengine 'rbd' is a fio engine that fiox does not support yet"
        );
        assert_eq!(
            canonical_engine("libaoi").unwrap_err(),
            "unknown ioengine 'libaoi' (did you mean 'libaio'?)"
        );
    }
}

#[cfg(test)]
mod default_tests {
    use super::testutil::apply;
    use super::*;

    /// The default an option's table row documents (`--cmdhelp`, docs/options.md) is the
    /// job's real default: applying it to a default job changes nothing. (nonvectored's row
    /// said fio's -1, probe the kernel, while the job said 0, vectored.)
    #[test]
    fn documented_defaults_are_the_jobs_defaults() {
        let plain = format!("{:?}", JobSpec::default());
        let mut wrong = Vec::new();
        // These record that they were written (fio tells a default from a written value):
        // their values apart, the job must not change.
        let marks_written = [
            "iodepth",
            "thinktime_blocks",
            "steadystate_check_interval",
            "verify",
            "verify_write_sequence",
        ];
        for d in all().filter(|d| !d.default.is_empty() && !marks_written.contains(&d.name)) {
            match apply(d.name, d.default) {
                Ok(j) if format!("{j:?}") == plain => {}
                Ok(j) => wrong.push(format!(
                    "{}={}: changes the job: {}",
                    d.name,
                    d.default,
                    diff(&plain, &format!("{j:?}"))
                )),
                Err(e) => wrong.push(format!("{}={}: {e}", d.name, d.default)),
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    fn diff(a: &str, b: &str) -> String {
        let (a, b): (Vec<&str>, Vec<&str>) = (a.split(", ").collect(), b.split(", ").collect());
        a.iter()
            .zip(&b)
            .filter(|(x, y)| x != y)
            .map(|(x, y)| format!("{x} -> {y}"))
            .take(3)
            .collect::<Vec<_>>()
            .join("; ")
    }
}
