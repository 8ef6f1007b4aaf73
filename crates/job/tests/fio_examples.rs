//! fio's own example job files (/work/fio-src/examples, not shipped with fiox): each must
//! either parse or fail with a clear "not supported yet" naming the option or engine. Skips
//! with a printed reason when fio's source is not present (CI).

use fiox_job::parse_invocation;
use std::path::PathBuf;

fn examples_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FIO_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/fio-src"))
        .join("examples");
    dir.is_dir().then_some(dir)
}

#[test]
fn fio_examples_parse_or_say_not_supported() {
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
    let (mut parsed, mut unsupported, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let mut args = vec!["--parse-only".to_string()];
        // Run as the example's own header says it is meant to be run.
        if name == "xnvme-compare.fio" {
            args.push("--section=default".to_string());
        }
        args.push(f.to_string_lossy().to_string());
        match parse_invocation(&args) {
            Ok(_) => parsed.push(name),
            Err(e) if e.to_string().contains("does not support yet") => {
                unsupported.push(format!("{name}: {e}"))
            }
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    eprintln!(
        "fio examples: {} files, {} parse, {} not supported yet, {} other errors",
        files.len(),
        parsed.len(),
        unsupported.len(),
        failed.len()
    );
    for u in &unsupported {
        eprintln!("  not supported: {u}");
    }
    assert!(
        failed.is_empty(),
        "unclear failures:\n{}",
        failed.join("\n")
    );
    assert!(
        files.len() > 50,
        "expected fio's examples, found {}",
        files.len()
    );
}
