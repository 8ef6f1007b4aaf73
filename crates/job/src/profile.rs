//! fio's job profiles (`--profile=tiobench`, `--profile=act`): a profile has options of its
//! own and expands into a list of fio options (`name=` starting each job) that is read like a
//! command line after everything else, as fio's `load_profile` and `add_job_opts` do. The
//! expansion here produces the same job names and options as fio 3.33's profiles/tiobench.c
//! and profiles/act.c; act also asks the runner for its latency slices ([`ActSpec`]).
//!
//! Where fio 3.33 loses an option the documentation promises, fiox keeps the documented
//! meaning instead of dropping it silently: tiobench's `size`, `block`, `numruns`, `dir` and
//! `threads` are written by fio's parser into a struct its expansion never reads (fio always
//! runs the defaults), and act's `test-duration` with a unit suffix becomes a runtime a
//! million times too long in fio (it is stored in µs and printed as seconds); a bare number
//! means seconds in both.

use crate::error::{JobError, Location};
use crate::jobfile::{RawOpt, Section, SubstEnv};

/// A profile option's type, with the checks fio's parser applies (plus the ranges the
/// expansion needs: a zero divisor would crash fio).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfKind {
    /// An unsigned integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// Free text.
    Str,
    /// A time; a bare number is seconds.
    Time,
    /// A flag: bare, or `0`/`1`.
    Flag,
}

/// One option of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfOpt {
    pub name: &'static str,
    pub kind: ProfKind,
    /// fio's default, as text ("" = none).
    pub default: &'static str,
    pub help: &'static str,
}

/// A profile: its name and description (fio's `profile=` values) and its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    pub desc: &'static str,
    pub options: &'static [ProfOpt],
}

const U32: u64 = u32::MAX as u64;

const fn int(name: &'static str, min: u64, default: &'static str, help: &'static str) -> ProfOpt {
    ProfOpt {
        name,
        kind: ProfKind::Int { min, max: U32 },
        default,
        help,
    }
}

/// fio registers act first, so `--cmdhelp` lists its options first.
pub static PROFILES: &[Profile] = &[
    Profile {
        name: "act",
        desc: "ACT Aerospike like benchmark",
        options: &[
            ProfOpt {
                name: "device-names",
                kind: ProfKind::Str,
                default: "",
                help: "Devices to use",
            },
            int("load", 0, "1", "ACT load multipler (default 1x)"),
            ProfOpt {
                name: "test-duration",
                kind: ProfKind::Time,
                default: "24h",
                help: "How long the entire test takes to run",
            },
            int(
                "threads-per-queue",
                1,
                "8",
                "Number of read IO threads per device",
            ),
            int(
                "read-req-num-512-blocks",
                1,
                "3",
                "Number of 512B blocks to read at the time",
            ),
            int(
                "large-block-op-kbytes",
                1,
                "131072",
                "Size of large block ops in KiB (writes)",
            ),
            ProfOpt {
                name: "prep",
                kind: ProfKind::Flag,
                default: "",
                help: "Set to run ACT prep phase",
            },
        ],
    },
    Profile {
        name: "tiobench",
        desc: "tiotest/tiobench benchmark",
        options: &[
            int("size", 0, "", "Size in MiB"),
            int("block", 1, "4096", "Block size in bytes"),
            int("numruns", 1, "1", "Number of runs"),
            ProfOpt {
                name: "dir",
                kind: ProfKind::Str,
                default: "",
                help: "Test directory",
            },
            int("threads", 1, "1", "Number of Threads"),
        ],
    },
];

/// The profile called `name`.
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// Is `name` an option of some profile (fio accepts them anywhere on its command line)?
pub fn is_profile_option(name: &str) -> bool {
    PROFILES
        .iter()
        .any(|p| p.options.iter().any(|o| o.name == name))
}

/// The profiles owning option `name`, for messages ("act", "tiobench").
pub fn owners(name: &str) -> Vec<&'static str> {
    PROFILES
        .iter()
        .filter(|p| p.options.iter().any(|o| o.name == name))
        .map(|p| p.name)
        .collect()
}

/// What act's runner hooks need: how many hour-long slices the summary has, and whether this
/// is the prep phase (fio counts no latencies then, yet prints the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActSpec {
    pub slices: u32,
    pub prep: bool,
}

/// How a profile was asked for, as arguments (`--profile=act`, `--device-names=/dev/x`):
/// carried by each job the profile made, so `--showcmd` gives the profile back instead of
/// jobs that would lose its hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileCall {
    pub args: Vec<String>,
}

impl ProfileCall {
    pub fn new(name: &str, opts: &[RawOpt]) -> ProfileCall {
        let mut args = vec![format!("--profile={name}")];
        for o in opts {
            args.push(match &o.written {
                Some(v) => format!("--{}={v}", o.name),
                None => format!("--{}", o.name),
            });
        }
        ProfileCall { args }
    }
}

/// act's slice length: its pass criteria are judged per hour (fio's SAMPLE_SEC).
pub const ACT_SLICE_SECS: u64 = 3600;

/// A profile's options, checked, with defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfValues {
    profile: &'static Profile,
    /// (option, value) after checking; flags are "1"/"0".
    values: Vec<(&'static str, String)>,
}

impl ProfValues {
    /// Check `opts` (options of `profile`, as written) and fill in defaults.
    pub fn new(profile: &'static Profile, opts: &[RawOpt]) -> Result<ProfValues, JobError> {
        let mut values: Vec<(&'static str, String)> = profile
            .options
            .iter()
            .filter(|o| !o.default.is_empty())
            .map(|o| (o.name, o.default.to_string()))
            .collect();
        for raw in opts {
            let Some(def) = profile.options.iter().find(|o| o.name == raw.name) else {
                continue;
            };
            let v = check(profile, def, raw)?;
            values.retain(|(n, _)| *n != def.name);
            values.push((def.name, v));
        }
        Ok(ProfValues { profile, values })
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// An integer option (checked in [`ProfValues::new`]; a default when absent).
    fn int(&self, name: &str) -> u64 {
        self.get(name).and_then(|v| v.parse().ok()).unwrap_or(0)
    }
}

/// Check one option's value as its kind requires; returns it normalised.
fn check(profile: &Profile, def: &ProfOpt, raw: &RawOpt) -> Result<String, JobError> {
    let err = |m: String| {
        JobError::new(
            raw.loc.clone(),
            format!(
                "{} (option of fio's {} profile): {m}",
                def.name, profile.name
            ),
        )
    };
    let value = raw.value.as_deref().map(str::trim);
    match (def.kind, value) {
        (ProfKind::Flag, None) => Ok("1".into()),
        (ProfKind::Flag, Some(v)) => crate::value::parse_bool(v)
            .map(|b| if b { "1" } else { "0" }.to_string())
            .map_err(err),
        (_, None) | (_, Some("")) => Err(err("needs a value (--name=value)".into())),
        (ProfKind::Str, Some(v)) => Ok(v.to_string()),
        (ProfKind::Time, Some(v)) => {
            let us = crate::value::parse_time_us(v, 1_000_000).map_err(&err)?;
            if us < 1_000_000 {
                return Err(err(format!(
                    "'{v}' is under a second; the test runs for whole seconds (e.g. 30 or 2m)"
                )));
            }
            Ok((us / 1_000_000).to_string())
        }
        (ProfKind::Int { min, max }, Some(v)) => {
            let n: u64 = v
                .parse()
                .map_err(|_| err(format!("'{v}' is not a whole number")))?;
            if n < min || n > max {
                return Err(err(format!("{n} is out of range ({min} to {max})")));
            }
            Ok(n.to_string())
        }
    }
}

/// The profile's expansion: fio's option list, `name=` starting each job; what comes before
/// the first `name=` is global.
pub fn expand_list(v: &ProfValues) -> Result<Vec<String>, String> {
    match v.profile.name {
        "tiobench" => Ok(tiobench_list(v)),
        _ => act_list(v),
    }
}

/// profiles/tiobench.c: four phases (sequential and random writes, then reads), each behind a
/// stonewall, over four files. size is in MiB; without it, 4 KiB per MiB of memory.
fn tiobench_list(v: &ProfValues) -> Vec<String> {
    let size = match v.int("size") {
        0 => "size=4*1024*$mb_memory".to_string(),
        mib => format!("size={}", mib.saturating_mul(1024 * 1024)),
    };
    let dir = v.get("dir").unwrap_or("./");
    let mut out = vec![
        "buffered=0".to_string(),
        size,
        format!("bs={}", v.int("block")),
        format!("loops={}", v.int("numruns")),
        format!("directory={dir}"),
        format!("numjobs={}", v.int("threads")),
    ];
    let rest = [
        "timeout=600",
        "group_reporting",
        "thread",
        "overwrite=1",
        "filename=.fio.tio.1:.fio.tio.2:.fio.tio.3:.fio.tio.4",
        "ioengine=sync",
        "name=seqwrite",
        "rw=write",
        "end_fsync=1",
        "name=randwrite",
        "stonewall",
        "rw=randwrite",
        "end_fsync=1",
        "name=seqread",
        "stonewall",
        "rw=read",
        "name=randread",
        "stonewall",
        "rw=randread",
    ];
    out.extend(rest.iter().map(|s| s.to_string()));
    out
}

/// act's 1x loads: reads and large-block writes per second per device.
const ACT_R_LOAD: u64 = 2000;
const ACT_W_LOAD: u64 = 1000;

/// profiles/act.c: per device, rate-limited random reads (threads-per-queue jobs) and
/// large-block random writes running for test-duration; with `prep`, a zeroing pass and a
/// random 4 KiB overwrite instead.
fn act_list(v: &ProfValues) -> Result<Vec<String>, String> {
    let devices = v.get("device-names").ok_or_else(|| {
        "act: you need to set IO target(s) with the device-names option \
         (--device-names=/dev/X[,/dev/Y])"
            .to_string()
    })?;
    let mut out: Vec<String> = [
        "direct=1",
        "ioengine=sync",
        "random_generator=lfsr",
        "group_reporting=1",
        "thread",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let read_bs = v.int("read-req-num-512-blocks") * 512;
    let write_bs = v.int("large-block-op-kbytes");
    if write_bs < read_bs {
        return Err(format!(
            "act: large-block-op-kbytes={write_bs} is smaller than a read \
             (read-req-num-512-blocks x 512 = {read_bs}); fio 3.33 divides by zero here"
        ));
    }
    // fio splits on commas and keeps empty names (strsep).
    for dev in devices.split(',') {
        if v.int("prep") == 1 {
            act_prep(&mut out, dev);
        } else {
            act_dev(&mut out, v, dev, read_bs, write_bs);
        }
    }
    Ok(out)
}

fn act_prep(out: &mut Vec<String>, dev: &str) {
    out.extend([
        format!("name=act-prep-zeroes-{dev}"),
        format!("filename={dev}"),
        "bs=1048576".into(),
        "zero_buffers".into(),
        "rw=write".into(),
        format!("name=act-prep-salt-{dev}"),
        "stonewall".into(),
        format!("filename={dev}"),
        "bs=4096".into(),
        "ioengine=libaio".into(),
        "iodepth=64".into(),
        "rw=randwrite".into(),
    ]);
}

fn act_dev(out: &mut Vec<String>, v: &ProfValues, dev: &str, read_bs: u64, write_bs: u64) {
    let load = v.int("load");
    let tpq = v.int("threads-per-queue").max(1);
    // fio computes in C int: the same truncating divisions, rounding the writes up.
    let rload = load * ACT_R_LOAD / tpq;
    let rsize = (write_bs / read_bs.max(1)).max(1);
    let wload = (load * ACT_W_LOAD).div_ceil(rsize);
    out.extend([
        format!("runtime={}s", v.int("test-duration")),
        "time_based=1".into(),
        format!("name=act-read-{dev}"),
        format!("filename={dev}"),
        "rw=randread".into(),
        format!("numjobs={tpq}"),
        format!("rate_iops={rload}"),
        format!("bs={read_bs}"),
        format!("name=act-write-{dev}"),
        format!("filename={dev}"),
        "rw=randwrite".into(),
        format!("rate_iops={wload}"),
        format!("bs={write_bs}"),
    ]);
}

/// Split an expanded list into sections as fio's `add_job_opts` does: options before the
/// first `name=` go to a global section, each `name=` starts a job and everything after it
/// (until the next `name=`) belongs to that job. Values get `$mb_memory`-style keywords
/// substituted, as fio's option parser does.
pub fn sections(
    profile: &Profile,
    list: &[String],
    env: &SubstEnv,
    file_index: usize,
) -> Result<Vec<Section>, JobError> {
    let loc = Location::CommandLine;
    let mut out = vec![Section {
        name: "global".into(),
        global: true,
        opts: Vec::new(),
        loc: loc.clone(),
        source: None,
        file_index,
    }];
    for item in list {
        let (name, value) = match item.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (item.as_str(), None),
        };
        if name == "name" {
            out.push(Section {
                name: value.unwrap_or_default(),
                global: false,
                opts: Vec::new(),
                loc: loc.clone(),
                source: None,
                file_index,
            });
            continue;
        }
        let subst = match &value {
            Some(v) => Some(crate::jobfile::substitute(v, env).map_err(|m| {
                JobError::new(
                    loc.clone(),
                    format!("profile {}: {name}: {m}", profile.name),
                )
            })?),
            None => None,
        };
        let sec = out.last_mut().expect("starts with the global section");
        sec.opts.push(RawOpt {
            name: name.to_string(),
            value: subst,
            written: value,
            loc: loc.clone(),
        });
    }
    Ok(out)
}

/// act's runner hooks for every job of the run (fio hooks every thread once a profile with
/// I/O hooks is loaded), or None for profiles without them.
pub fn act_spec(v: &ProfValues) -> Option<ActSpec> {
    if v.profile.name != "act" {
        return None;
    }
    let secs = v.int("test-duration");
    let slices = secs.div_ceil(ACT_SLICE_SECS).clamp(1, u64::from(u32::MAX));
    Some(ActSpec {
        slices: slices as u32,
        prep: v.int("prep") == 1,
    })
}

/// `--profile=NAME --cmdhelp`: the profile's options, one line each, as fio lists them.
pub fn cmdhelp_all(profile: &Profile) -> String {
    let mut out = String::new();
    for o in profile.options {
        out.push_str(&format!("{:<24}: {}\n", o.name, o.help));
    }
    out
}

/// `--profile=NAME --cmdhelp=OPTION`: one option of that profile, in fio's layout.
pub fn cmdhelp_one(profile: &Profile, name: &str) -> Result<String, JobError> {
    let Some(o) = profile.options.iter().find(|o| o.name == name) else {
        let names: Vec<&str> = profile.options.iter().map(|o| o.name).collect();
        return Err(JobError::new(
            Location::CommandLine,
            format!(
                "no option '{name}' in fio's {} profile (it has: {})",
                profile.name,
                names.join(", ")
            ),
        ));
    };
    let (ty, range) = match o.kind {
        ProfKind::Int { min, max } => ("integer value (opt=100)", Some((min, max))),
        ProfKind::Str => ("string (opt=bla)", None),
        ProfKind::Time => ("string with time postfix (opt=10s)", None),
        ProfKind::Flag => ("empty or boolean value ([0|1])", None),
    };
    let mut out = format!("{:>20}: {}\n", o.name, o.help);
    out.push_str(&format!("{:>20}: {ty}\n", "type"));
    let def = if o.default.is_empty() {
        "no default"
    } else {
        o.default
    };
    out.push_str(&format!("{:>20}: {def}\n", "default"));
    out.push_str(&format!(
        "{:>20}: only for profile '{}'\n",
        "valid", profile.name
    ));
    if let Some((min, max)) = range {
        out.push_str(&format!("{:>20}: min={min}, max={max}\n", "range"));
    }
    out.push('\n');
    Ok(out)
}

/// The profiles and their options as markdown, for docs/options.md.
pub fn markdown() -> String {
    let mut out = String::from(
        "\n## Profiles\n\n`--profile=NAME` on the command line runs one of fio's built-in \
workloads: its options (below; on the command line, anywhere before the first `--name=`) \
expand into jobs as fio's do. Unlike fio 3.33, tiobench's options take effect (fio reads \
them into a place its expansion ignores) and act's `test-duration` with a unit means that \
time (fio multiplies it by a million); a bare number is seconds in both. \
`large-block-op-kbytes` is used as bytes, as fio does (the default 131072 is 128 KiB). act \
counts every job's I/O latencies per hour and prints fio's table (percent of I/Os over 1, 8 and \
64 ms) and verdict before the results; JSON output keeps them under `fiox.act` instead of \
printing text before the document as fio does. `profile=` in a job file does nothing in fio \
3.33; fiox refuses it, pointing to `--profile`. `--profile=NAME --cmdhelp[=OPTION]` shows the \
profiles' options.\n",
    );
    for p in PROFILES {
        out.push_str(&format!(
            "\n### `{}`: {}\n\n| Option | Type | Default | Description |\n|---|---|---|---|\n",
            p.name, p.desc
        ));
        for o in p.options {
            let ty = match o.kind {
                ProfKind::Int { min, .. } => format!("int (at least {min})"),
                ProfKind::Str => "string".into(),
                ProfKind::Time => "time (default unit s)".into(),
                ProfKind::Flag => "flag".into(),
            };
            out.push_str(&format!(
                "| `{}` | {ty} | {} | {} |\n",
                o.name, o.default, o.help
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::jobfile::SubstEnv;
    use crate::{parse_invocation_with, Action, Invocation, JobError};

    fn run(args: &str) -> Result<Invocation, JobError> {
        let env = SubstEnv {
            vars: Default::default(),
            pagesize: 4096,
            mb_memory: 1000,
            ncpus: 2,
        };
        let a: Vec<String> = args.split_whitespace().map(str::to_string).collect();
        parse_invocation_with(&a, &env, &mut |_| Ok(String::new()))
    }

    fn opts(j: &crate::JobSpec) -> Vec<String> {
        j.own_options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }

    #[test]
    fn tiobench_defaults_are_fios_four_phases() {
        let inv = run("--profile=tiobench").unwrap();
        let names: Vec<(&str, u32, bool)> = inv
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.group_id, j.stonewall))
            .collect();
        assert_eq!(
            names,
            [
                ("seqwrite", 0, false),
                ("randwrite", 1, true),
                ("seqread", 2, true),
                ("randread", 3, true)
            ]
        );
        let j = &inv.jobs[0];
        assert_eq!(opts(j), ["name=seqwrite", "rw=write", "end_fsync=1"]);
        // 4 KiB per MiB of memory over the four files; fio's other globals.
        assert_eq!(j.size, Some(crate::SizeSpec::Bytes(4 * 1024 * 1000)));
        assert!(j.direct && j.thread && j.stats.group_reporting);
        assert_eq!((j.bs.read.min, j.numjobs, j.timing.loops), (4096, 1, 1));
        assert_eq!(j.files.filenames.len(), 4);
        assert_eq!(inv.settings.profile_jobs_from, Some(0));
        assert!(inv.jobs.iter().all(|j| j.act.is_none()));
    }

    #[test]
    fn tiobench_options_take_effect() {
        let inv = run("--profile=tiobench --size=2 --block=8192 --numruns=3 --threads=2 --dir=/x")
            .unwrap();
        assert_eq!(inv.jobs.len(), 8, "two threads per phase");
        let j = &inv.jobs[0];
        assert_eq!(j.size, Some(crate::SizeSpec::Bytes(2 << 20)));
        assert_eq!((j.bs.read.min, j.numjobs, j.timing.loops), (8192, 2, 3));
        assert_eq!(j.files.directories, ["/x"]);
    }

    #[test]
    fn act_makes_a_read_and_a_write_job_per_device() {
        let inv = run("--profile=act --device-names=/a,/b --test-duration=90m --load=2").unwrap();
        let names: Vec<&str> = inv
            .jobs
            .iter()
            .filter(|j| j.clone_index == 0)
            .map(|j| j.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["act-read-/a", "act-write-/a", "act-read-/b", "act-write-/b"]
        );
        assert_eq!(inv.jobs.len(), 18, "8 readers and 1 writer per device");
        let r = &inv.jobs[0];
        assert_eq!(
            opts(r),
            [
                "name=act-read-/a",
                "filename=/a",
                "rw=randread",
                "numjobs=8",
                "rate_iops=500",
                "bs=1536"
            ]
        );
        // fio's list puts the second device's runtime into the job before it.
        let w = inv.jobs.iter().find(|j| j.name == "act-write-/a").unwrap();
        assert_eq!(
            opts(w),
            [
                "name=act-write-/a",
                "filename=/a",
                "rw=randwrite",
                "rate_iops=24",
                "bs=131072",
                "runtime=5400s",
                "time_based=1"
            ]
        );
        assert!(inv.jobs.iter().all(|j| j.timing.time_based && j.direct));
        let spec = r.act.unwrap();
        assert_eq!((spec.slices, spec.prep), (2, false));
    }

    #[test]
    fn act_prep_zeroes_then_salts() {
        let inv = run("--profile=act --device-names=/a --prep").unwrap();
        let names: Vec<(&str, &str, bool)> = inv
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.ioengine.as_str(), j.stonewall))
            .collect();
        assert_eq!(
            names,
            [
                ("act-prep-zeroes-/a", "sync", false),
                ("act-prep-salt-/a", "libaio", true)
            ]
        );
        assert!(inv.jobs[0].act.unwrap().prep);
    }

    #[test]
    fn bad_profile_input_is_named() {
        let err = |a: &str| run(a).unwrap_err().to_string();
        assert!(err("--profile=nope").contains("no such profile (fio 3.33 has: act, tiobench)"));
        assert!(err("--profile=act").contains("device-names option"));
        assert!(err("--profile=act --device-names=/a --threads-per-queue=0")
            .contains("threads-per-queue (option of fio's act profile): 0 is out of range"));
        assert!(
            err("--profile=act --device-names=/a --large-block-op-kbytes=100")
                .contains("smaller than a read")
        );
        assert!(
            err("--profile=act --device-names=/a --test-duration=10ms").contains("under a second")
        );
        assert!(err("--profile=tiobench --block=4k").contains("'4k' is not a whole number"));
        assert!(err("--device-names=/a --name=x")
            .contains("--device-names is an option of fio's act profile; add --profile=act"));
        assert!(err("--profile=act --name=x --device-names=/a")
            .contains("give it before the first --name="));
    }

    #[test]
    fn showcmd_gives_the_profile_back() {
        let inv = run("--profile=act --device-names=/a --prep --name=x --ioengine=null").unwrap();
        let args = crate::showcmd_args(&inv.jobs);
        assert_eq!(
            args,
            [
                "--profile=act",
                "--device-names=/a",
                "--prep",
                "--name=x",
                "--ioengine=null"
            ]
        );
        let again = run(&args.join(" ")).unwrap();
        assert_eq!(again.jobs, inv.jobs);
        // Inside a job, --profile is fio's (ignored) job option: noted, and it round-trips.
        let inv = run("--name=a --profile=tiobench").unwrap();
        assert_eq!(inv.jobs.len(), 1);
        assert!(inv.refusals().is_empty(), "{:?}", inv.refusals());
        assert!(inv.notes()[0].contains("--profile=tiobench before any --name="));
        let args = crate::showcmd_args(&inv.jobs);
        assert_eq!(run(&args.join(" ")).unwrap().jobs, inv.jobs);
    }

    #[test]
    fn cmdhelp_after_profile_shows_its_options() {
        let help = |a: &str| match run(a).unwrap().action {
            Action::CmdHelp(t) => t,
            other => panic!("{other:?}"),
        };
        let all = help("--profile=act --cmdhelp");
        assert!(all.starts_with("device-names            : Devices to use\n"));
        assert!(all.ends_with("\nprep                    : Set to run ACT prep phase\n"));
        assert!(help("--profile=tiobench --cmdhelp").starts_with("size   "));
        assert_eq!(
            help("--profile=act --cmdhelp=test-duration"),
            "       test-duration: How long the entire test takes to run\n\
             \x20               type: string with time postfix (opt=10s)\n\
             \x20            default: 24h\n\
             \x20              valid: only for profile 'act'\n\n"
        );
        // Before --profile, --cmdhelp is about job options (fio's order).
        assert!(help("--cmdhelp=bs --profile=act").starts_with("bs"));
        assert!(run("--profile=tiobench --cmdhelp=load").is_err());
    }
}
