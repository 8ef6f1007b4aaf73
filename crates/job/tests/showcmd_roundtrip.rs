//! `--showcmd` round trip: job file(s) -> command line -> the same resolved jobs, checked on
//! generated job files.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::jobfile::SubstEnv;
use fiox_job::{parse_invocation_with, showcmd_args, JobSpec};
use proptest::prelude::*;

/// Options with valid values to draw from (`None` = written bare).
const POOL: &[(&str, &[Option<&str>])] = &[
    ("bs", &[Some("4k"), Some("8k,16k"), Some("512,,1k")]),
    (
        "rw",
        &[
            Some("read"),
            Some("randrw:4"),
            Some("write"),
            Some("readwrite"),
        ],
    ),
    (
        "size",
        &[Some("1m"), Some("10%"), Some("(2*4k)"), Some("$pagesize*2")],
    ),
    ("iodepth", &[Some("1"), Some("32")]),
    ("direct", &[Some("0"), Some("1"), None]),
    ("time_based", &[None]),
    ("numjobs", &[Some("1"), Some("2"), Some("3")]),
    ("stonewall", &[None, Some("1")]),
    ("new_group", &[None]),
    (
        "ioengine",
        &[
            Some("psync"),
            Some("libaio"),
            Some("io_uring"),
            Some("threads"),
        ],
    ),
    (
        "bssplit",
        &[Some("4k/50:8k/"), Some("4k/10:64k/50:32k/40,8k")],
    ),
    ("runtime", &[Some("10"), Some("1m")]),
    ("thinktime", &[Some("10"), Some("2ms")]),
    ("filename", &[Some(r"a\:b:c"), Some("/dev/null")]),
    ("description", &[Some("two words; not a comment")]),
    ("kb_base", &[Some("1000"), Some("1024")]),
    (
        "random_distribution",
        &[Some("zipf:1.2"), Some("zoned:60/10:40/90")],
    ),
    ("rate", &[Some("1m,2m")]),
    ("group_reporting", &[None]),
    ("cpus_allowed", &[Some("0-1")]),
    ("write_lat_log", &[None, Some("lat")]),
    ("percentile_list", &[Some("50:99")]),
    ("offset", &[Some("4k")]),
    ("filename_format", &[Some("$jobname.$jobnum")]),
    ("name", &[Some("renamed")]),
    ("rwmixwrite", &[Some("30")]),
    ("blocksize_range", &[Some("1k-4k")]),
    ("verify", &[Some("crc32c")]),
    ("buffer_pattern", &[Some("0xdeadbeef")]),
    ("ignore_error", &[Some("EIO:5")]),
];

const NAMES: &[&str] = &["a", "job1", "x-y", "random_rw"];

#[derive(Debug, Clone)]
struct Sec {
    global: bool,
    name: usize,
    opts: Vec<(usize, usize)>,
}

fn section() -> impl Strategy<Value = Sec> {
    (
        prop::bool::weighted(0.25),
        0..NAMES.len(),
        prop::collection::vec((0..POOL.len(), 0..4usize), 0..6),
    )
        .prop_map(|(global, name, opts)| Sec { global, name, opts })
}

fn render(secs: &[Sec]) -> String {
    // ';' inside a value would start a comment in a job file: the description value ends
    // the line there on purpose, which the resolved job must reflect in both paths.
    let mut t = String::new();
    for s in secs {
        t.push_str(&format!(
            "[{}]\n",
            if s.global { "global" } else { NAMES[s.name] }
        ));
        for (o, v) in &s.opts {
            let (name, vals) = POOL[*o];
            match vals[v % vals.len()] {
                Some(val) => t.push_str(&format!("{name}={val}\n")),
                None => t.push_str(&format!("{name}\n")),
            }
        }
    }
    t
}

fn env() -> SubstEnv {
    SubstEnv {
        vars: Default::default(),
        pagesize: 4096,
        mb_memory: 1024,
        ncpus: 2,
    }
}

fn parse(args: Vec<String>, files: &[String]) -> Vec<JobSpec> {
    let mut read = |p: &str| -> std::io::Result<String> {
        let i: usize = p
            .trim_start_matches("f")
            .trim_end_matches(".fio")
            .parse()
            .unwrap();
        Ok(files[i].clone())
    };
    parse_invocation_with(&args, &env(), &mut read)
        .unwrap_or_else(|e| panic!("{e}\nargs: {args:?}\nfiles: {files:#?}"))
        .jobs
}

/// Where a job came from legitimately differs (file vs command line), and so does how its
/// own options are listed for fio's JSON `job options` (`name` is an option only on the
/// command line; globals may become job options).
fn normalize(mut jobs: Vec<JobSpec>) -> Vec<JobSpec> {
    for j in &mut jobs {
        j.source = None;
        j.own_options.clear();
    }
    jobs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn showcmd_round_trips(files in prop::collection::vec(prop::collection::vec(section(), 1..5), 1..4)) {
        // Every file needs a job section.
        let files: Vec<Vec<Sec>> = files
            .into_iter()
            .map(|mut f| {
                if f.iter().all(|s| s.global) {
                    f.push(Sec { global: false, name: 0, opts: vec![] });
                }
                f
            })
            .collect();
        let texts: Vec<String> = files.iter().map(|f| render(f)).collect();
        let args: Vec<String> = (0..texts.len()).map(|i| format!("f{i}.fio")).collect();
        let first = parse(args, &texts);
        let cmd = showcmd_args(&first);
        let second = parse(cmd.clone(), &[]);
        let mut want = normalize(first);
        // A barrier implied by a new job file is written out as --stonewall.
        for (w, g) in want.iter_mut().zip(&second) {
            if w.raw_options.len() + 1 == g.raw_options.len()
                && g.raw_options.last().map(|(k, _)| k.as_str()) == Some("stonewall")
            {
                w.raw_options.push(("stonewall".into(), String::new()));
            }
        }
        prop_assert_eq!(want, normalize(second), "command line: {:?}", cmd);
    }
}
