//! Fuzz the whole job language: arbitrary command lines, job files and included files (all in
//! memory), plus the value parsers and help lookups. Nothing may panic, and whatever parses
//! must survive the `--showcmd` round trip unchanged.
#![no_main]
#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::jobfile::{IncludeFs, SubstEnv};
use fiox_job::{parse_invocation_in, showcmd_args, value, Action, JobSpec};
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Virtual files `f0`, `f1`, ... for job files and includes.
struct MemFs(HashMap<String, String>);

impl IncludeFs for MemFs {
    fn exists(&self, p: &Path) -> bool {
        self.0.contains_key(&p.to_string_lossy().to_string())
    }
    fn canonical(&self, p: &Path) -> std::io::Result<PathBuf> {
        let k = p.to_string_lossy().to_string();
        if self.0.contains_key(&k) {
            Ok(PathBuf::from(k))
        } else {
            Err(std::io::ErrorKind::NotFound.into())
        }
    }
    fn read(&self, p: &Path) -> std::io::Result<String> {
        self.0
            .get(&p.to_string_lossy().to_string())
            .cloned()
            .ok_or_else(|| std::io::ErrorKind::NotFound.into())
    }
}

fn env() -> SubstEnv {
    SubstEnv {
        vars: [("X".to_string(), "4k".to_string())].into(),
        pagesize: 4096,
        mb_memory: 1024,
        ncpus: 2,
    }
}

fn normalize(mut jobs: Vec<JobSpec>) -> Vec<JobSpec> {
    for j in &mut jobs {
        j.source = None;
        // How the job's own options are listed (fio's JSON `job options`) depends on where they
        // were written, not on what the job does.
        j.own_options.clear();
        j.raw_options.retain(|(k, _)| k != "stonewall");
        // Notes tell how the input was read (a dropped [global] option of another engine is
        // not part of the job, so the command line does not repeat it).
        j.notes.clear();
    }
    jobs
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // Value parsers on the raw input.
    let _ = value::parse_size(&text, 1024);
    let _ = value::parse_size_or_percent(&text, 1000);
    let _ = value::parse_time_us(&text, 1_000_000);
    let _ = value::parse_int(&text, 1024);
    let _ = value::split_triplet(&text);
    let _ = value::split_colon_list(&text);
    let _ = fiox_job::help::cmdhelp(&text);
    let _ = fiox_job::help::enghelp(&text);

    // Layout: args \0 file0 \0 file1 ...
    let mut parts = text.split('\0');
    let args_line = parts.next().unwrap_or("");
    let files: HashMap<String, String> = parts
        .enumerate()
        .map(|(i, t)| (format!("f{i}"), t.to_string()))
        .collect();
    let mut args: Vec<String> = args_line.split_whitespace().map(str::to_string).collect();
    if args.is_empty() {
        args.push("f0".into());
    }
    let fs = MemFs(files.clone());
    let mut read = |p: &str| -> std::io::Result<String> {
        files
            .get(p)
            .cloned()
            .ok_or_else(|| std::io::ErrorKind::NotFound.into())
    };
    let Ok(inv) = parse_invocation_in(&args, &env(), &mut read, &fs) else {
        return;
    };
    if matches!(
        inv.action,
        Action::Run | Action::ParseOnly | Action::ShowCmd(_)
    ) {
        let cmd = showcmd_args(&inv.jobs);
        let mut none =
            |_: &str| -> std::io::Result<String> { Err(std::io::ErrorKind::NotFound.into()) };
        let again = parse_invocation_in(&cmd, &env(), &mut none, &fs)
            .unwrap_or_else(|e| panic!("showcmd output does not parse: {e}\n{cmd:?}"));
        assert_eq!(
            normalize(inv.jobs),
            normalize(again.jobs),
            "showcmd round trip differs: {cmd:?}"
        );
    }
});
