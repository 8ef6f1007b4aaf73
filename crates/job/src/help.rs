//! Text generated from the option table: `--help`, `--cmdhelp[=option]`,
//! `--enghelp[=engine[,option]]` and `docs/options.md`.

use crate::defs::{self, Category, OptDef};
use crate::error::{JobError, Location};
use crate::suggest;

/// One switch of `fiox` (not a job option): name with its value placeholder, and help.
pub struct Switch {
    /// `--name`, or `--name=VALUE`, or `--name[=VALUE]` for an optional value.
    pub spelling: &'static str,
    pub help: &'static str,
    /// Completion words for the value (empty: none or a file name).
    pub choices: &'static [&'static str],
}

impl Switch {
    /// The switch's name without dashes or value.
    pub fn name(&self) -> &'static str {
        let s = self.spelling.trim_start_matches('-');
        s.split(['=', '[']).next().unwrap_or(s)
    }

    /// Whether the switch takes a value (required or optional).
    pub fn takes_value(&self) -> bool {
        self.spelling.contains('=')
    }
}

const fn sw(spelling: &'static str, help: &'static str) -> Switch {
    Switch {
        spelling,
        help,
        choices: &[],
    }
}

/// Every switch `fiox` accepts, in `--help` order; also drives the man page and completions.
pub const SWITCHES: &[Switch] = &[
    sw("--parse-only", "Parse and check the jobs, then exit"),
    sw(
        "--merge-blktrace-only",
        "Write the jobs' merge_blktrace_file, run nothing",
    ),
    sw("--showcmd", "Print the jobs as a command line"),
    sw(
        "--section=NAME",
        "Only run this job file section (may repeat)",
    ),
    sw("--output=FILE", "Write the report to FILE"),
    Switch {
        spelling: "--output-format=LIST",
        help: "normal, json, json+, terse (comma-separated)",
        choices: &["normal", "json", "json+", "terse"],
    },
    sw("--minimal", "Same as --output-format=terse"),
    sw("--append-terse", "Add the terse format to the others"),
    sw(
        "--terse-version=2..5",
        "fio's terse format version (default 3)",
    ),
    sw(
        "--html=FILE",
        "Also write the report page with charts to FILE",
    ),
    Switch {
        spelling: "--eta=WHEN",
        help: "When to show the progress line: auto, always, never",
        choices: &["auto", "always", "never"],
    },
    sw(
        "--status-interval=TIME",
        "Print the report every TIME while running",
    ),
    sw(
        "--eta-interval=TIME",
        "Update the progress line this often (default 1s)",
    ),
    sw("--eta-newline=TIME", "Start a new progress line this often"),
    sw("--readonly", "Refuse any job that would write"),
    sw("--aux-path=DIR", "Where verify state files and dumps go"),
    sw(
        "--trigger-file=FILE",
        "Stop all jobs when FILE appears (it is removed)",
    ),
    sw("--trigger-timeout=TIME", "Stop all jobs after TIME"),
    sw("--trigger=CMD", "Run CMD (through sh) when triggered"),
    sw(
        "--inflate-log=FILE",
        "Print a log stored with log_store_compressed",
    ),
    sw(
        "--alloc-size=KIB",
        "Accepted for fio (sizes no pool in fiox)",
    ),
    sw(
        "--debug=LIST",
        "fio's debug lines: process, file, io, parse (others accepted); ? lists",
    ),
    Switch {
        spelling: "--idle-prof=MODE",
        help: "CPU idleness while the jobs run: system, percpu; calibrate alone",
        choices: &["calibrate", "system", "percpu"],
    },
    sw("--max-jobs=N", "Run at most N jobs at once"),
    sw(
        "--bandwidth-log",
        "Aggregate bandwidth logs agg-{read,write,trim}_bw.log",
    ),
    sw(
        "--latency-log",
        "fio 2.x: per-job latency logs (as write_lat_log=<job name>)",
    ),
    sw(
        "--allow-destructive[=PATH]",
        "Allow writes to devices and files that may hold data (with PATH: to that one only)",
    ),
    sw(
        "--explain[=MODE]",
        "Trace the jobs' threads and devices (BPF on kernel tracepoints, root) and report where each I/O's latency went; MODE: sampled (20ms in every 200ms, the default), full, or WINDOW/PERIOD",
    ),
    sw(
        "--history[=DB]",
        "Record the run in the history (fiox history; DB: another database than the default)",
    ),
    sw(
        "--telemetry[=MS]",
        "Sample /proc (memory, vmstat, CPU, disks, pressure) every MS (1000) around the run",
    ),
    sw(
        "--machine-memory=SIZE",
        "Run in a cgroup with this memory limit, page cache included (as on a smaller machine)",
    ),
    sw(
        "--machine-cpus=N",
        "Run in a cpuset of N CPUs (as on a smaller machine)",
    ),
    sw(
        "--vm=KEY=VALUE,...",
        "Run inside a QEMU guest on a virtio-blk disk, /dev/vda there (kernel, aio, cache, memory, cpus, sched...)",
    ),
    Switch {
        spelling: "--warnings=WHERE",
        help: "fiox's advice: in the report only (report), also on stderr (stderr), or on stderr with exit status 1 (fatal)",
        choices: &["report", "stderr", "fatal"],
    },
    sw(
        "--warnings-fatal",
        "fio's parser warnings stop the run before any I/O (also -w)",
    ),
    Switch {
        spelling: "--profile=NAME",
        help: "Run fio's tiobench or act workload (before any --name=; --cmdhelp after it lists its options)",
        choices: &["tiobench", "act"],
    },
    sw(
        "--crctest[=LIST]",
        "Time the checksum functions (all, or the names given; list names them)",
    ),
    sw(
        "--memcpytest[=LIST]",
        "Time memory copies: memcpy, memmove, simple, hybrid (all, or those given)",
    ),
    sw(
        "--cpuclock-test",
        "Check that the CPU clock (TSC) never goes backwards across CPUs",
    ),
    sw("--cmdhelp[=OPTION]", "Describe all options, or one"),
    sw(
        "--enghelp[=ENGINE]",
        "List engines, or one engine's options",
    ),
    sw(
        "--version",
        "Print the version (fio-3.33 (fiox VERSION) when run as fio or with FIOX_AS_FIO=1)",
    ),
    sw("--help", "Print this text"),
];

/// A subcommand, for `fiox --help`, the man page and the completions.
pub struct Subcommand {
    pub name: &'static str,
    pub about: &'static str,
}

/// `fiox --help`; `subcommands` are listed after the switches.
pub fn usage_with(subcommands: &[Subcommand]) -> String {
    let mut out = format!(
        "fiox {} - a storage I/O benchmark that speaks fio's job language\n\n",
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("Usage: fiox [switches] [--option=value ...] [jobfile ...]\n");
    if !subcommands.is_empty() {
        out.push_str("       fiox SUBCOMMAND [ARGS...] (each has --help)\n");
    }
    out.push_str("\nOptions before the first --name= are global; each --name= starts a job.\n");
    out.push_str("A job file of '-' is read from standard input. Every job option is listed by\n");
    out.push_str("--cmdhelp and in the man page (man fiox, or fiox man).\n");
    out.push_str(
        "\nServer: fiox --server[=ip:HOST[,PORT] | ip6:HOST[,PORT] | :PORT] [--daemonize=PIDFILE]\n\
         serves fio 3.33's clients (fio --client=HOST[,PORT] job.fio runs the job on fiox).\n\
         It listens on 127.0.0.1 port 8765 unless told otherwise (fio listens on every\n\
         address) and logs each connection on stderr.\n\
         \nClient: fiox --client=HOST[,PORT] [--client=...] [jobfile ...] drives fio and fiox\n\
         servers as fio's client does (--client=FILE: a list of hosts; --remote-config=FILE:\n\
         a job file on the server).\n",
    );
    // One column for the names, the longest plus two spaces: a name never runs into its text.
    let width = subcommands
        .iter()
        .map(|c| c.name.len())
        .chain(SWITCHES.iter().map(|s| s.spelling.len()))
        .max()
        .unwrap_or(0)
        + 2;
    if !subcommands.is_empty() {
        out.push_str("\nSubcommands:\n");
        for c in subcommands {
            out.push_str(&entry(c.name, c.about, width));
        }
    }
    out.push_str("\nSwitches:\n");
    for s in SWITCHES {
        out.push_str(&entry(s.spelling, s.help, width));
    }
    out
}

/// The widest line `fiox --help` prints.
pub const HELP_COLUMNS: usize = 100;

/// `  NAME  text`, the text wrapped at word boundaries to [`HELP_COLUMNS`], its further lines
/// under its first.
fn entry(name: &str, text: &str, width: usize) -> String {
    let room = HELP_COLUMNS.saturating_sub(2 + width).max(20);
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split(' ') {
        let cur = lines.last_mut().expect("one line at least");
        if !cur.is_empty() && cur.len() + 1 + word.len() > room {
            lines.push(word.to_string());
        } else {
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
    }
    let mut out = format!("  {name:<width$}{}\n", lines[0]);
    for l in &lines[1..] {
        out.push_str(&format!("  {:<width$}{l}\n", ""));
    }
    out
}

/// The subcommands the `fiox` binary dispatches before reading fio's command line (a test in
/// the binary runs `fiox NAME --help` for each).
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "quick",
        about: "Six-test disk check: SEQ1M Q8T1, RND4K Q32T1 and RND4K Q1T1, read and write",
    },
    Subcommand {
        name: "plot",
        about: "Chart results: an HTML page with inline SVG, or SVG/PNG files",
    },
    Subcommand {
        name: "compare",
        about: "Compare results with statistics: mean, CI, change, p-values, verdict",
    },
    Subcommand {
        name: "testbed",
        about: "Make, list and remove test targets: loop, tmpfs, ramfs, fs, slow",
    },
    Subcommand {
        name: "experiment",
        about: "Run an experiment file: variants x repetitions, telemetry, resumable",
    },
    Subcommand {
        name: "env",
        about: "Describe this machine and its targets as results record it",
    },
    Subcommand {
        name: "history",
        about: "Recorded results: list, show, tag, trend, import, export, gc, regressions, compare",
    },
    Subcommand {
        name: "man",
        about: "Print the man page, or the bash, zsh or fish completion script",
    },
];

/// `fiox --help`.
pub fn usage() -> String {
    usage_with(SUBCOMMANDS)
}

/// `--cmdhelp` (empty or `all`: every option) or `--cmdhelp=NAME`.
pub fn cmdhelp(arg: &str) -> Result<String, JobError> {
    let arg = arg.trim();
    if arg.is_empty() || arg == "all" {
        let mut out = String::new();
        for cat in categories() {
            out.push_str(&format!("{}:\n", cat.title()));
            for d in defs::all().filter(|d| d.category == cat) {
                out.push_str(&format!("  {:<28}: {}\n", d.name, d.help));
            }
        }
        return Ok(out);
    }
    match defs::lookup(arg).or_else(|| defs::fio_only::lookup(arg)) {
        Some(d) => Ok(describe(d)),
        None => Err(crate::resolve::find_def(arg, &Location::CommandLine)
            .err()
            .unwrap_or_else(|| {
                JobError::new(Location::CommandLine, format!("unknown option '{arg}'"))
            })),
    }
}

/// Full description of one option.
pub fn describe(d: &OptDef) -> String {
    let mut out = format!("{:<20}: {}\n", d.name, d.help);
    if !d.aliases.is_empty() {
        out.push_str(&format!("{:<20}: {}\n", "alias", d.aliases.join(", ")));
    }
    out.push_str(&format!("{:<20}: {}\n", "type", d.kind.type_name()));
    if !d.default.is_empty() {
        out.push_str(&format!("{:<20}: {}\n", "default", d.default));
    }
    if let Some((lo, hi)) = d.range {
        out.push_str(&format!("{:<20}: {lo} to {hi}\n", "range"));
    }
    out.push_str(&format!("{:<20}: {}\n", "category", d.category.title()));
    if !d.engines.is_empty() {
        out.push_str(&format!("{:<20}: {}\n", "engine", d.engines.join(", ")));
    }
    if !d.long_help.is_empty() {
        out.push_str(&format!("\n{}\n", d.long_help));
    }
    out
}

/// `--enghelp` (list), `--enghelp=ENGINE` (its options), `--enghelp=ENGINE,OPTION`.
pub fn enghelp(arg: &str) -> Result<String, JobError> {
    let arg = arg.trim();
    if arg.is_empty() {
        let mut out = String::from("Available IO engines:\n");
        for (name, what) in defs::engines() {
            out.push_str(&format!("  {name:<10} {what}\n"));
        }
        out.push_str(&format!(
            "fio engines fiox parses but does not run yet:\n  {}\n",
            defs::unsupported::ENGINES.join(" ")
        ));
        return Ok(out);
    }
    let (engine, opt) = match arg.split_once(',') {
        Some((e, o)) => (e, Some(o.trim())),
        None => (arg, None),
    };
    // A fio engine fiox cannot run still has its options listed (they parse).
    let fio_only = defs::fio_only_engine(engine);
    let engine = match fio_only {
        Some(e) => e,
        None => {
            defs::canonical_engine(engine).map_err(|m| JobError::new(Location::CommandLine, m))?
        }
    };
    let own: Vec<&OptDef> = defs::all()
        .chain(defs::fio_only::all())
        .filter(|d| d.engines.contains(&engine))
        .collect();
    if let Some(o) = opt {
        return match own.iter().find(|d| d.matches(o)) {
            Some(d) => Ok(describe(d)),
            None => Err(JobError::new(
                Location::CommandLine,
                format!(
                    "ioengine {engine} has no option '{o}'{}",
                    suggest::closest(o, own.iter().map(|d| d.name))
                        .map(|s| format!(" (did you mean '{s}'?)"))
                        .unwrap_or_default()
                ),
            )),
        };
    }
    if own.is_empty() {
        return Ok(format!(
            "ioengine {engine} has no engine-specific options\n"
        ));
    }
    let mut out = match fio_only {
        Some(_) => match crate::defs::unsupported::fails_when_run(engine) {
            Some(f) => format!(
                "{engine}: a fio engine that fiox does not support yet (jobs using it parse and \
                 fail when run, err={}, as fio 3.33's do without {})\n",
                f.errno, f.needs
            ),
            None => format!(
                "{engine}: a fio engine that fiox does not support yet (jobs using it parse but are refused when run)\n"
            ),
        },
        None => format!("{engine}:\n"),
    };
    for d in own {
        out.push_str(&format!("  {:<20}: {}\n", d.name, d.help));
    }
    Ok(out)
}

fn categories() -> Vec<Category> {
    let mut cats: Vec<Category> = defs::all().map(|d| d.category).collect();
    cats.sort();
    cats.dedup();
    cats
}

/// The checked-in `docs/options.md`, generated from the table.
pub fn options_markdown() -> String {
    let mut out = String::from(
        "# fiox options\n\n\
Generated from the option table in `crates/job/src/defs/` (do not edit by hand; run\n\
`FIOX_BLESS=1 cargo test -p fiox-job docs_options_md_is_in_sync` to regenerate).\n\n\
Sizes accept k/m/g/t/p with optional b or ib (fio's inverted `KiB` convention under the default\n\
`kb_base=1024`), `0x` hex and `(arithmetic)`; times accept us, ms, s, m, h, d. Per-direction\n\
values are `read,write,trim`.\n\n",
    );
    for cat in categories() {
        out.push_str(&format!("## {}\n\n", cat.title()));
        out.push_str("| Option | Aliases | Type | Default | Range | Engine | Description |\n");
        out.push_str("|---|---|---|---|---|---|---|\n");
        for d in defs::all().filter(|d| d.category == cat) {
            let range = d
                .range
                .map(|(a, b)| format!("{a}..{b}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} |\n",
                d.name,
                d.aliases
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                md(&d.kind.type_name()),
                md(d.default),
                range,
                d.engines.join(", "),
                md(&if d.long_help.is_empty() {
                    d.help.to_string()
                } else {
                    format!("{}. {}", d.help, d.long_help)
                }),
            ));
        }
        out.push('\n');
    }
    out.push_str("## Engines\n\n");
    for (name, what) in defs::engines() {
        out.push_str(&format!("- `{name}`: {what}\n"));
    }
    out.push_str(&crate::profile::markdown());
    out.push_str(&fio_only_markdown());
    out.push_str("\n## fio engines not supported yet\n\n");
    out.push_str("A job using one parses (with the engine's options) but is refused when run.\n\n");
    out.push_str(
        &defs::unsupported::ENGINES
            .iter()
            .map(|o| format!("`{o}`"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    out.push('\n');
    out
}

/// The fio options fiox parses and checks but cannot run yet, as a table.
fn fio_only_markdown() -> String {
    let mut out = String::from(
        "\n## fio options not supported yet\n\nThese parse and are checked (type, range, owning \
engine) like any other option, so `--parse-only` accepts them, but a job using one is refused \
when run, naming the option.\n\n| Option | Type | Range | Engine |\n|---|---|---|---|\n",
    );
    for d in defs::fio_only::all() {
        let mut names = format!("`{}`", d.name);
        for a in d.aliases {
            names.push_str(&format!(", `{a}`"));
        }
        out.push_str(&format!(
            "| {names} | {} | {} | {} |\n",
            md(&d.kind.type_name()),
            d.range
                .map(|(lo, hi)| format!("{lo}..{hi}"))
                .unwrap_or_default(),
            d.engines.join(", "),
        ));
    }
    out
}

fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_table_matches_the_parser() {
        let mut table: Vec<&str> = SWITCHES.iter().map(Switch::name).collect();
        let mut parsed: Vec<&str> = crate::cli::SWITCHES.to_vec();
        table.sort();
        parsed.sort();
        assert_eq!(table, parsed);
        for s in SWITCHES {
            assert_eq!(
                s.takes_value() && !s.spelling.contains('['),
                crate::cli::VALUE_SWITCHES.contains(&s.name()),
                "{}",
                s.spelling
            );
        }
    }

    #[test]
    fn usage_lists_switches() {
        let u = usage();
        assert!(
            u.lines()
                .any(|l| l.starts_with("  --parse-only  ")
                    && l.contains("  Parse and check the jobs")),
            "{u}"
        );
    }

    /// Every name is followed by at least two spaces before its text (issue 41:
    /// `--allow-destructive[=PATH]Allow`), every line fits the help's width, and wrapped text
    /// lines up under its first line.
    #[test]
    fn usage_names_never_run_into_their_text_and_lines_fit() {
        let u = usage();
        for l in u.lines() {
            assert!(l.len() <= HELP_COLUMNS, "{} columns: {l}", l.len());
        }
        for s in SWITCHES {
            let line = u
                .lines()
                .find(|l| l.trim_start().starts_with(s.spelling))
                .unwrap_or_else(|| panic!("{} missing", s.spelling));
            let rest = &line[2 + s.spelling.len()..];
            assert!(rest.starts_with("  "), "{line}");
        }
        assert!(
            u.contains("  --allow-destructive[=PATH]  Allow writes"),
            "{u}"
        );
        let at = u.find("--allow-destructive[=PATH]").unwrap();
        let col = u[at..].find("Allow").unwrap() + 2;
        let next = u[at..].lines().nth(1).unwrap();
        assert!(
            next.len() > col && next[..col].trim().is_empty(),
            "a wrapped line starts under its text: {next:?}"
        );
    }

    #[test]
    fn cmdhelp_one_and_all() {
        let one = cmdhelp("rwmixread").unwrap();
        assert!(one.contains("range               : 0 to 100"), "{one}");
        assert!(one.contains("default             : 50"));
        let alias = cmdhelp("blocksize").unwrap();
        assert!(alias.starts_with("bs "));
        let all = cmdhelp("").unwrap();
        assert!(all.contains("iodepth") && all.contains("guasi_kick"));
        assert_eq!(
            cmdhelp("iodpeth").unwrap_err().to_string(),
            "command line: unknown option 'iodpeth' (did you mean 'iodepth'?)"
        );
    }

    #[test]
    fn enghelp_lists_engine_options() {
        let list = enghelp("").unwrap();
        assert!(
            list.contains("io_uring") && list.contains("does not run yet:\n  cpp_null dev-dax")
        );
        let u = enghelp("io_uring").unwrap();
        assert!(u.contains("fixedbufs") && !u.contains("userspace_reap"));
        assert!(enghelp("libaio,userspace_reap")
            .unwrap()
            .contains("engine              : libaio"));
        assert!(enghelp("psync")
            .unwrap()
            .contains("no engine-specific options"));
        let rbd = enghelp("rbd").unwrap();
        assert!(
            rbd.starts_with("rbd: a fio engine that fiox does not support yet")
                && rbd.contains("rbdname"),
            "{rbd}"
        );
        assert!(enghelp("http,http_mode")
            .unwrap()
            .contains("type                : webdav|s3|swift"));
        assert!(enghelp("io_uring_cmd").unwrap().contains("cmd_type"));
        assert!(cmdhelp("gpu_dev_id").unwrap().contains("does not run yet"));
    }

    #[test]
    fn docs_options_md_is_in_sync() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/options.md");
        let want = options_markdown();
        if std::env::var_os("FIOX_BLESS").is_some() {
            std::fs::write(path, &want).expect("write docs/options.md");
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "docs/options.md is out of date; regenerate with FIOX_BLESS=1 cargo test -p fiox-job docs_options_md_is_in_sync"
        );
    }
}
