//! The repository tests itself alone: a plain `git clone` runs `cargo test --workspace` with
//! nothing beside it, and CI runs every test binary even when one fails. These tests read the
//! repository's own files (no I/O benchmark runs).

#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every Rust file under `dir`, recursively (target directories left out).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// No test or source file reaches outside the repository for its data (the fio reference
/// outputs once came from a sibling `shared/` directory, so a fresh clone failed its tests).
#[test]
fn no_test_reads_data_from_outside_the_repository() {
    let mut files = Vec::new();
    for d in ["src", "tests", "crates", "bench", "fuzz"] {
        rust_files(&root().join(d), &mut files);
    }
    assert!(files.len() > 20, "found only {} Rust files", files.len());
    let me = Path::new(file!()).file_name().unwrap();
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| f.file_name() != Some(me)) {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.contains("shared/reference") || line.contains("../shared") {
                bad.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "files outside the repository:\n{}",
        bad.join("\n")
    );
}

/// The golden tests' fio 3.33 reference outputs live in the repository.
#[test]
fn fio_reference_outputs_are_in_the_repository() {
    let dir = root().join("crates/report/tests/data/fio-3.33-reference");
    for f in [
        "randrw-libaio.normal.txt",
        "randrw-libaio.json",
        "randrw-libaio.terse.txt",
        "randread-psync.jsonplus.json",
    ] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        assert!(
            text.contains("3.33"),
            "{f}: missing or not fio 3.33's output"
        );
    }
}

/// CI's test command runs every test binary even when one fails, so one failure does not hide
/// the others.
#[test]
fn ci_runs_every_test_binary() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let cmd: Vec<&str> = ci
        .lines()
        .filter(|l| l.trim_start().starts_with("cargo test"))
        .collect();
    assert!(!cmd.is_empty(), ".ci/run runs no `cargo test`");
    for l in cmd {
        assert!(l.contains("--workspace"), "{l}");
        assert!(l.contains("--no-fail-fast"), "{l}");
    }
}

/// fiox's code names its own descriptors through /proc/thread-self/fd, never /proc/self/fd:
/// a job thread with its own file table (runner's fdtable.rs) would otherwise reach the main
/// thread's descriptor of the same number, another file or none (a log appended to, or a
/// signature probed, in the wrong file).
#[test]
fn descriptors_are_named_through_thread_self() {
    let mut files = Vec::new();
    for d in ["src", "crates"] {
        rust_files(&root().join(d), &mut files);
    }
    let needle = ["/proc/", "self/fd"].concat();
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.lines()
                .enumerate()
                .filter(|(_, l)| l.contains(&needle))
                .map(|(i, l)| format!("{}:{}: {}", f.display(), i + 1, l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        bad.is_empty(),
        "use /proc/thread-self/fd:\n{}",
        bad.join("\n")
    );
}

/// The calls that create, replace, rename or remove files, directories, mounts or links,
/// which only the guard crate may make (clippy.toml forbids the std ones; this also catches
/// the libc ones). Test code is left out: files under tests/, benches/, examples/, fuzz/, and
/// everything from a `#[cfg(test)]` line on.
const DOORS: &[&str] = &[
    "fs::write(",
    "File::create(",
    "File::create_new(",
    "fs::remove_file(",
    "fs::remove_dir_all(",
    "fs::remove_dir(",
    "fs::rename(",
    "fs::copy(",
    "fs::create_dir_all(",
    "fs::create_dir(",
    "DirBuilder::new(",
    "OpenOptions::new(",
    "libc::unlink(",
    "libc::unlinkat(",
    "libc::rmdir(",
    "libc::rename(",
    "libc::renameat(",
    "libc::renameat2(",
    "libc::umount(",
    "libc::umount2(",
    "libc::mount(",
    "libc::open(",
    "libc::openat(",
    "libc::creat(",
    "libc::symlink(",
    "libc::link(",
    "libc::mkdir(",
    "libc::mkdirat(",
    "libc::truncate(",
    "libc::ftruncate(",
];

/// The lines of one source file (up to its tests) whose code, comments cut off, `hit` matches,
/// as "path:line: text".
fn code_lines_where(path: &Path, hit: impl Fn(&str) -> bool) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        if hit(line.split("//").next().unwrap_or("")) {
            found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
        }
    }
    found
}

/// The doors of one source file outside the guard, as "path:line: text".
fn doors_in(path: &Path) -> Vec<String> {
    code_lines_where(path, |code| DOORS.iter().any(|d| code.contains(d)))
}

/// Every create, replace, rename and remove of a file, directory, mount or link goes through
/// crates/guard (issue 21: one door; `python3 ../shared/tools/fs-doors.py crates/guard` counts
/// the same way).
#[test]
fn only_the_guard_creates_and_removes_files() {
    let mut files = Vec::new();
    for d in ["src", "crates"] {
        rust_files(&root().join(d), &mut files);
    }
    let skip = [
        "/tests/",
        "/benches/",
        "/examples/",
        "/fuzz/",
        "crates/guard/",
    ];
    let bad: Vec<String> = files
        .iter()
        .filter(|f| {
            let s = f.to_string_lossy();
            let name = f.file_name().unwrap().to_string_lossy();
            !skip.iter().any(|k| s.contains(k))
                && name != "tests.rs"
                && !name.ends_with("_tests.rs")
        })
        .flat_map(|f| doors_in(f))
        .collect();
    assert!(
        bad.is_empty(),
        "{} direct file/mount/link operations outside crates/guard (use fiox_guard):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The check above finds what it looks for (so it cannot pass by reading nothing).
#[test]
fn the_door_check_finds_a_door() {
    let dir = std::env::temp_dir().join(format!("fiox-repo-doors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("x.rs");
    std::fs::write(
        &f,
        "fn a() { std::fs::remove_file(p); }\n#[cfg(test)]\nfn b() { std::fs::write(p, b); }\n",
    )
    .unwrap();
    let found = doors_in(&f);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
}

#[path = "repo/programs.rs"]
mod programs;

/// The programs the tests run, by name, with the file that runs each: see [`programs`] (names
/// given to `Command::new`, `sh`, `sh_in`, `require_tool` or a helper passing its parameter on,
/// as literals or through variables bound to literals), in tests/ and crates/*/tests/, and in
/// the `#[cfg(test)]` part of the sources (src/, crates/*/src/). Helpers of tests/harness are seen by every file.
fn programs_tests_run() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&root().join("tests"), &mut files);
    let mut sources = Vec::new();
    rust_files(&root().join("src"), &mut sources);
    let crates = std::fs::read_dir(root().join("crates")).unwrap();
    for c in crates.flatten() {
        rust_files(&c.path().join("tests"), &mut files);
        rust_files(&c.path().join("src"), &mut sources);
    }
    let mine = root().join("tests/repo");
    let files: Vec<(PathBuf, String)> = files
        .into_iter()
        .filter(|f| !f.starts_with(&mine) && f.file_name() != Path::new(file!()).file_name())
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            (f, text)
        })
        .chain(sources.into_iter().filter_map(|f| {
            // Only the tests of a source file: what follows its first #[cfg(test)].
            let text = std::fs::read_to_string(&f).unwrap();
            let at = text.find("#[cfg(test)]")?;
            Some((f, text[at..].to_string()))
        }))
        .collect();
    let mut runners = programs::base_runners();
    for (f, text) in &files {
        if f.starts_with(root().join("tests/harness")) {
            programs::add_runners(text, &mut runners);
        }
    }
    let mut found = Vec::new();
    for (f, text) in &files {
        for p in programs::programs_in(text, &runners) {
            found.push((p, f.display().to_string()));
        }
    }
    found
}

/// The programs of `found` that `list` (ci/packages.txt's text) does not name, but for the
/// binaries the build makes.
fn unlisted(found: &[(String, String)], list: &str) -> Vec<String> {
    let tools: Vec<&str> = list
        .lines()
        .filter_map(|l| l.split('#').next().unwrap().split_whitespace().next())
        .collect();
    // The built binaries are not programs to install.
    let ours = ["fiox", "plot"];
    let mut missing: Vec<String> = found
        .iter()
        .filter(|(p, _)| !ours.contains(&p.as_str()) && !tools.contains(&p.as_str()))
        .map(|(p, f)| format!("{p} (run by {f})"))
        .collect();
    missing.sort();
    missing.dedup();
    missing
}

/// The checker finds programs named through variables and helpers, and reports the ones the
/// list lacks (a check that could not fail would prove nothing).
#[test]
fn the_program_check_finds_programs_behind_variables_and_helpers() {
    let text = r##"
        fn mkfs(dir: &Path, size: u64, prog: &str, args: &[&str]) -> PathBuf {
            let out = Command::new(prog).args(args).output();
        }
        fn outer(tool: &str) { mkfs(d, 1, tool, &[]); }
        const XFS: &str = "mkfs.xfs";
        fn t() {
            let tool = "mkfs.bogus1";
            Command::new(tool).status();
            require_tool(XFS);
            for t in ["bogus2", "bogus3"] { sh(t, &["-v"]); }
            let list = ["bogus4"];
            for x in list { require_tool(x); }
            mkfs(d, 1 << 20, "bogus5", &["a, b"]);
            outer("bogus6");
            sh_in(dir, "bogus7", &[]);
            let name = pick("not-a-program"); Command::new(name);
            match kind {
                "ext4" | "xfs" => mkfs(d, 1, &format!("mkfs.{kind}"), &[]),
                _ => {}
            }
            let prog = format!("bogus8-{}", "x");
            Command::new(&prog);
            Command::new(format!("mkfs.{other}"));
            // Command::new("in-a-comment")
            push("not-a-call"); x.sh("a-method");
        }
    "##;
    let runners = programs::base_runners();
    let mut got = programs::programs_in(text, &runners);
    got.sort();
    got.dedup();
    let want = [
        "bogus2",
        "bogus3",
        "bogus4",
        "bogus5",
        "bogus6",
        "bogus7",
        "bogus8-x",
        "mkfs.bogus1",
        "mkfs.ext4",
        "mkfs.xfs",
        "mkfs.{other}",
    ];
    assert_eq!(got, want);
    let found: Vec<(String, String)> = got.into_iter().map(|p| (p, "t.rs".into())).collect();
    let list = "mkfs.xfs xfsprogs  # t\nbogus2 b # t\n";
    let missing = unlisted(&found, list);
    assert_eq!(missing.len(), 9, "{missing:?}");
    assert!(missing.contains(&"mkfs.bogus1 (run by t.rs)".to_string()));
    // A format!-built name: its expansions are checked, and one it cannot expand is reported.
    assert!(missing.contains(&"mkfs.ext4 (run by t.rs)".to_string()));
    assert!(missing.contains(&"mkfs.{other} (run by t.rs)".to_string()));
}

/// Every program a test runs is in ci/packages.txt (which ci/test.sh installs before the suite),
/// so a fresh machine gets every tool the tests call (issue 24).
#[test]
fn every_program_the_tests_run_is_in_the_package_list() {
    let list = std::fs::read_to_string(root().join("ci/packages.txt")).unwrap();
    let found = programs_tests_run();
    assert!(found.len() > 50, "found only {} program calls", found.len());
    // Names only a variable, a helper's parameter or a format! carries (older checks missed them).
    for p in [
        "fio",
        "losetup",
        "mkfs.ext4",
        "fsfreeze",
        "git",
        "make-bcache",
        "mkfs.bfs",
        "mkfs.nilfs2",
    ] {
        assert!(found.iter().any(|(f, _)| f == p), "{p} not found");
    }
    let missing = unlisted(&found, &list);
    assert!(
        missing.is_empty(),
        "programs the tests run that ci/packages.txt does not list:\n{}",
        missing.join("\n")
    );
}

/// The maps a newcomer reads stay true: every `crates/...` path README.md, CONTRIBUTING.md and
/// docs/ARCHITECTURE.md name exists, and ARCHITECTURE.md and README's layout name every crate.
#[test]
fn the_docs_name_every_crate_and_no_path_that_is_gone() {
    let read = |p: &str| std::fs::read_to_string(root().join(p)).unwrap();
    let docs = ["README.md", "CONTRIBUTING.md", "docs/ARCHITECTURE.md"];
    let mut missing = Vec::new();
    for doc in docs {
        let text = read(doc);
        for (i, _) in text.match_indices("crates/") {
            let path: String = text[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "_./-".contains(*c))
                .collect();
            let path = path.trim_end_matches(['.', '/']);
            if !root().join(path).exists() {
                missing.push(format!("{doc}: {path}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths the docs name that do not exist: {missing:?}"
    );
    let (arch, readme) = (read("docs/ARCHITECTURE.md"), read("README.md"));
    let layout = &readme[readme
        .find("## Layout")
        .expect("README has a Layout section")..];
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(
            arch.contains(&format!("crates/{name}")),
            "docs/ARCHITECTURE.md does not describe crates/{name}"
        );
        assert!(
            layout.contains(&format!("`{name}`")) || layout.contains(&format!("crates/{name}`")),
            "README's Layout does not name crates/{name}"
        );
    }
}

/// Uses of std's printing macros in one source file, as "path:line: text" (up to its tests).
fn std_prints_in(path: &Path) -> Vec<String> {
    code_lines_where(path, |code| {
        ["eprintln!(", "eprint!(", "println!(", "print!("]
            .iter()
            .any(|m| {
                code.match_indices(m).any(|(at, _)| {
                    let before = code[..at].chars().last();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                })
            })
    })
}

/// No message goes through std's `println!`/`eprintln!`, which panic (exit 101, the run's
/// results lost) when stdout or stderr cannot be written, e.g. redirected to a full disk
/// (issue 43's N9): `fiox_guard::eprintln!` and its siblings ignore the failure, as fio does.
#[test]
fn messages_never_panic_on_a_full_disk() {
    let mut files = Vec::new();
    for d in ["src", "crates"] {
        rust_files(&root().join(d), &mut files);
    }
    let skip = ["/tests/", "/benches/", "/examples/", "/fuzz/", "/build.rs"];
    let bad: Vec<String> = files
        .iter()
        .filter(|f| {
            let s = f.to_string_lossy();
            let name = f.file_name().unwrap().to_string_lossy();
            !skip.iter().any(|k| s.contains(k)) && name != "tests.rs" && name != "console.rs"
        })
        .flat_map(|f| std_prints_in(f))
        .collect();
    assert!(
        bad.is_empty(),
        "{} uses of std's print macros (use fiox_guard::eprintln! and its siblings):\n{}",
        bad.len(),
        bad.join("\n")
    );
    // The check finds one.
    let probe = std::env::temp_dir().join(format!("fiox-print-probe-{}.rs", std::process::id()));
    std::fs::write(
        &probe,
        "fn f() {\n    eprintln!(\"x\");\n    fiox_guard::eprintln!(\"y\");\n}\n",
    )
    .unwrap();
    let found = std_prints_in(&probe);
    let _ = std::fs::remove_file(&probe);
    assert_eq!(found.len(), 1, "{found:?}");
}

/// The non-test Rust sources of src/ and crates/ (test directories and files, benches,
/// examples and fuzz targets left out).
fn product_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in ["src", "crates"] {
        rust_files(&root().join(d), &mut files);
    }
    let skip = ["/tests/", "/benches/", "/examples/", "/fuzz/", "/build.rs"];
    files
        .into_iter()
        .filter(|f| {
            let s = f.to_string_lossy();
            let name = f.file_name().unwrap().to_string_lossy();
            !skip.iter().any(|k| s.contains(k))
                && name != "tests.rs"
                && !name.ends_with("_tests.rs")
        })
        .collect()
}

/// Lines of one source file (up to its tests) that spell one of `words` as a string literal
/// (`"word"`), as "path:line: text".
fn literals_in(path: &Path, words: &[&str]) -> Vec<String> {
    code_lines_where(path, |code| {
        words.iter().any(|w| code.contains(&format!("\"{w}\"")))
    })
}

/// The table of warnings (issue 46): every warning code string is spelled once, in
/// crates/stats/src/warning.rs; everything else builds and reads warnings through
/// `fiox_stats::WarningCode`, so a code cannot drift between its writers and its readers.
#[test]
fn warning_codes_are_spelled_only_in_their_table() {
    let codes: Vec<&str> = fiox_stats::WarningCode::ALL
        .iter()
        .map(|c| c.code())
        .collect();
    assert!(codes.contains(&"buffered-libaio"), "{codes:?}");
    // Not warnings: the telemetry chart of the page cache, the --idle-prof option.
    let allowed = [
        ("crates/plot/src/chart/telemetry.rs", "page-cache"),
        ("crates/job/src/getopt.rs", "idle-prof"),
        ("crates/job/src/cli.rs", "idle-prof"),
    ];
    let table = root().join("crates/stats/src/warning.rs");
    let bad = uses_outside(|f| *f == table, &codes, &allowed, literals_in);
    assert!(
        bad.is_empty(),
        "{} warning code literals outside crates/stats/src/warning.rs (use fiox_stats::WarningCode):\n{}",
        bad.len(),
        bad.join("\n")
    );
    assert_eq!(
        literals_in(&table, &codes).len(),
        codes.len(),
        "the table spells each code once"
    );
}

/// What `find` reports in every product source but those `home` owns, of the `words` each
/// file may not use (`allowed`: (file, word) pairs that are not what the words name there).
fn uses_outside(
    home: impl Fn(&Path) -> bool,
    words: &[&str],
    allowed: &[(&str, &str)],
    find: fn(&Path, &[&str]) -> Vec<String>,
) -> Vec<String> {
    product_sources()
        .iter()
        .filter(|f| !home(f))
        .flat_map(|f| {
            let others: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| !allowed.iter().any(|(p, a)| f.ends_with(p) && a == w))
                .collect();
            find(f, &others)
        })
        .collect()
}

/// Lines of one source file (up to its tests) that compare a string with one of `names`
/// (`== "psync"`, `!= "psync"`, a match arm `"psync" =>` or `"psync" | ...`,
/// `.eq_ignore_ascii_case("psync")`), as "path:line: text".
fn name_comparisons_in(path: &Path, names: &[&str]) -> Vec<String> {
    code_lines_where(path, |code| {
        names.iter().any(|n| {
            let q = format!("\"{n}\"");
            [
                format!("== {q}"),
                format!("!= {q}"),
                format!("{q} =>"),
                format!("{q} |"),
                format!("| {q}"),
                format!("{q} if "),
                format!("eq_ignore_ascii_case({q})"),
            ]
            .iter()
            .any(|p| code.contains(p.as_str()))
        })
    })
}

/// The engine enum (issue 46): `ioengine=` is parsed once, by the option parser
/// (crates/job/src/defs/) into `fiox_job::Engine` (crates/job/src/engine.rs, the one table of
/// engines and their kinds); everything else matches the enum or asks its properties, and
/// never compares an engine's name.
#[test]
fn engine_names_are_compared_only_by_the_parser() {
    let names: Vec<&str> = fiox_job::Engine::ALL
        .iter()
        .flat_map(|e| std::iter::once(e.name()).chain(e.aliases().iter().copied()))
        // fio's engines fiox lacks are names of the parser's too.
        .chain(fiox_job::defs::unsupported::ENGINES.iter().copied())
        .collect();
    assert!(
        names.contains(&"threads") && names.contains(&"io_uring") && names.contains(&"nbd"),
        "{names:?}"
    );
    // Not engines: an I/O log's sync action, a mount option, QEMU's aio= values.
    let allowed = [
        ("crates/runner/src/replay/mod.rs", "sync"),
        ("crates/testbed/src/managed/build.rs", "sync"),
        ("crates/testbed/src/vm/spec.rs", "threads"),
        ("crates/testbed/src/vm/spec.rs", "io_uring"),
    ];
    let parser = ["crates/job/src/engine.rs", "crates/job/src/defs/"];
    let in_parser = |f: &Path| parser.iter().any(|p| f.to_string_lossy().contains(p));
    let bad = uses_outside(in_parser, &names, &allowed, name_comparisons_in);
    assert!(
        bad.is_empty(),
        "{} engine name comparisons outside the option parser (use fiox_job::Engine):\n{}",
        bad.len(),
        bad.join("\n")
    );
    // The check finds each form.
    let probe = std::env::temp_dir().join(format!("fiox-engine-probe-{}.rs", std::process::id()));
    std::fs::write(
        &probe,
        "fn f(e: &str) -> bool {\n    e == \"psync\"\n        || matches!(e, \"net\" | \"exec\")\n        \
         || e.eq_ignore_ascii_case(\"null\")\n}\nfn g(e: &str) -> u8 {\n    match e {\n        \
         \"libaio\" => 1,\n        _ => 0,\n    }\n}\n",
    )
    .unwrap();
    let found = name_comparisons_in(&probe, &names);
    let _ = std::fs::remove_file(&probe);
    assert_eq!(found.len(), 4, "{found:?}");
}
