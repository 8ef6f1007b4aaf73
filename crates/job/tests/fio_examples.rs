//! fio's own example job files (/work/fio-src/examples, not shipped with fiox): at least 95%
//! must parse (fio options and engines fiox cannot run yet parse and are recorded in
//! `JobSpec::unsupported`); the rest must fail with a clear message. Skips with a printed
//! reason when fio's source is not present (CI).

use fiox_job::jobfile::SubstEnv;
use fiox_job::parse_invocation_with;
use std::path::{Path, PathBuf};

fn examples_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FIO_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/fio-src"))
        .join("examples");
    dir.is_dir().then_some(dir)
}

/// Examples that fio 3.33 itself rejects (`fio --parse-only` says "failed parsing port"):
/// their values are placeholders to fill in (`port=[port]`), so fiox must reject them too.
const PLACEHOLDER_EXAMPLES: &[&str] = &[
    "gpudirect-rdmaio-client.fio",
    "gpudirect-rdmaio-server.fio",
    "rdmaio-client.fio",
    "rdmaio-server.fio",
];

/// The environment the examples' headers ask for (credentials, directories, GPU ids).
fn example_env() -> SubstEnv {
    let mut env = SubstEnv::from_system();
    for (k, v) in [
        ("S3_KEY", "key"),
        ("S3_ID", "id"),
        ("SSE_KEY", "ssekey"),
        ("STORAGE_CLASS", "STANDARD"),
        ("SWIFT_id", "token"),
        ("POOL", "pool"),
        ("CONT", "cont"),
        ("FIO_DIR", "/tmp"),
        ("GPU_DEV_IDS", "0"),
    ] {
        env.vars.insert(k.to_string(), v.to_string());
    }
    env
}

/// Parse one example as its header says it is meant to be run.
fn parse_example(path: &Path, env: &SubstEnv) -> Result<fiox_job::Invocation, String> {
    let name = path.file_name().unwrap().to_string_lossy();
    let mut args = vec!["--parse-only".to_string()];
    // The xnvme examples' [override] section needs FIO_BS/FIO_RW/FIO_IODEPTH; their headers
    // run the [default] section otherwise.
    if name.starts_with("xnvme-") {
        args.push("--section=default".to_string());
    }
    args.push(path.to_string_lossy().to_string());
    parse_invocation_with(&args, env, &mut |p| std::fs::read_to_string(p))
        .map_err(|e| e.to_string())
}

#[test]
fn fio_examples_parse() {
    let Some(dir) = examples_dir() else {
        eprintln!("skipped: fio's examples not found (set FIO_SRC to a fio source tree)");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    files.sort();
    let env = example_env();
    let (mut parsed, mut refused, mut failed, mut wrong) = (0, 0, Vec::new(), Vec::new());
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let placeholder = PLACEHOLDER_EXAMPLES.contains(&name.as_str());
        match parse_example(f, &env) {
            Ok(inv) if !placeholder => {
                parsed += 1;
                if inv.jobs.iter().any(|j| !j.unsupported.is_empty()) {
                    refused += 1;
                }
            }
            Ok(_) => wrong.push(format!("{name}: parsed, but fio rejects it")),
            Err(e) if placeholder && e.contains(": port=[port]: ") => {
                failed.push(format!("{name}: {e}"))
            }
            Err(e) => wrong.push(format!("{name}: {e}")),
        }
    }
    eprintln!(
        "fio examples: {} files, {parsed} parse ({refused} of them would be refused when run: \
         fio features fiox does not support yet), {} fail as in fio",
        files.len(),
        failed.len()
    );
    for f in &failed {
        eprintln!("  fails as in fio: {f}");
    }
    assert!(
        wrong.is_empty(),
        "unexpected results:\n{}",
        wrong.join("\n")
    );
    assert!(
        files.len() > 50,
        "expected fio's examples, found {}",
        files.len()
    );
    assert!(
        parsed * 100 >= files.len() * 95,
        "only {parsed} of {} examples parse (need 95%)",
        files.len()
    );
}

/// Every example fiox parses but cannot run names what it lacks in its refusal.
#[test]
fn refusals_name_the_option_or_engine() {
    let Some(dir) = examples_dir() else {
        eprintln!("skipped: fio's examples not found (set FIO_SRC to a fio source tree)");
        return;
    };
    let env = example_env();
    let cases = [
        ("butterfly.fio", "`rw=read:-8k` is a fio option value"),
        ("http-s3.fio", "ioengine `http` is a fio engine"),
        ("surface-scan.fio", "`fill_device` is a fio option"),
        (
            "steadystate.fio",
            "`threads` is a fio option that fiox does not support yet (an option of fio's tiobench profile; did you mean `thread`?)",
        ),
    ];
    for (file, want) in cases {
        let inv = parse_example(&dir.join(file), &env).unwrap();
        let lines = inv.refusals();
        assert!(
            lines
                .iter()
                .any(|l| l.contains(want) && l.ends_with("; this job will not run")),
            "{file}: {lines:?}"
        );
    }
    let e4 = parse_example(&dir.join("e4defrag2.fio"), &env).unwrap();
    assert!(
        e4.notes().iter().any(|n| n.contains(
            "`donorname` (set in [global] for ioengine e4defrag) does not apply to this job's ioengine libaio"
        )),
        "{:?}",
        e4.notes()
    );
}
