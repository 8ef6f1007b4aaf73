//! Whole invocations: command-line jobs mixed with job files, globals, `--section`, stdin,
//! actions and showcmd text.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::jobfile::SubstEnv;
use fiox_job::{parse_invocation_with, Action, Invocation, JobError, OutputFormat};

fn env() -> SubstEnv {
    SubstEnv {
        vars: [("DEV".to_string(), "/dev/nvme0n1".to_string())].into(),
        pagesize: 4096,
        mb_memory: 2048,
        ncpus: 4,
    }
}

fn run(args: &[&str], files: &[(&str, &str)]) -> Result<Invocation, JobError> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut read = |p: &str| -> std::io::Result<String> {
        files
            .iter()
            .find(|(n, _)| *n == p)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| std::io::ErrorKind::NotFound.into())
    };
    parse_invocation_with(&args, &env(), &mut read)
}

const TWO: &str = "[global]\nbs=8k\n[a]\nrw=randread\n[b]\nrw=write\nsize=$mb_memory/2\n";

#[test]
fn command_line_jobs_come_first_and_globals_reach_files() {
    let inv = run(
        &["--iodepth=4", "--name=cl", "--size=1m", "two.fio"],
        &[("two.fio", TWO)],
    )
    .unwrap();
    let names: Vec<&str> = inv.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["cl", "a", "b"]);
    assert!(inv.jobs.iter().all(|j| j.iodepth == 4));
    assert_eq!(
        inv.jobs[0].bs.read.min, 4096,
        "file globals stay in the file"
    );
    assert_eq!(inv.jobs[1].bs.read.min, 8192);
    // $mb_memory is a plain number (a MiB count), so this is 1024 bytes, as in fio.
    assert_eq!(inv.jobs[2].size, Some(fiox_job::SizeSpec::Bytes(1024)));
    assert_eq!(
        inv.global_options,
        [
            ("iodepth".to_string(), "4".to_string()),
            ("bs".to_string(), "8k".to_string())
        ]
    );
    assert_eq!(inv.action, Action::Run);
}

#[test]
fn section_selects_jobs() {
    let inv = run(&["--section=b", "two.fio"], &[("two.fio", TWO)]).unwrap();
    assert_eq!(inv.jobs.len(), 1);
    assert_eq!(inv.jobs[0].name, "b");
    assert_eq!(inv.jobs[0].bs.write.min, 8192);
    let e = run(&["--section=zz", "two.fio"], &[("two.fio", TWO)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "two.fio: no jobs defined (a job file needs at least one [job] section matching --section)"
    );
}

#[test]
fn stdin_job_file() {
    let inv = run(&["-"], &[("-", "[s]\nfilename=${DEV}\n")]).unwrap();
    assert_eq!(inv.jobs[0].files.filenames, ["/dev/nvme0n1"]);
    assert_eq!(inv.jobs[0].source.as_deref(), Some("<stdin>"));
    let e = run(&["-"], &[("-", "bs=4k\n")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "<stdin>:1: option 'bs=4k' is outside of any [section]"
    );
}

#[test]
fn actions() {
    assert!(matches!(run(&[], &[]).unwrap().action, Action::NoJobs(..)));
    match run(&["--rw=read", "--size=16m"], &[]).unwrap().action {
        Action::NoJobs(_, why) => assert!(why.contains("no --name="), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        run(&["--help"], &[]).unwrap().action,
        Action::Help(_)
    ));
    assert_eq!(run(&["--version"], &[]).unwrap().action, Action::Version);
    assert!(
        matches!(run(&["--cmdhelp=bs"], &[]).unwrap().action, Action::CmdHelp(t) if t.starts_with("bs "))
    );
    assert!(
        matches!(run(&["--enghelp"], &[]).unwrap().action, Action::EngHelp(t) if t.contains("libaio"))
    );
    let p = run(&["--parse-only", "--minimal", "--name=x"], &[]).unwrap();
    assert_eq!(p.action, Action::ParseOnly);
    assert_eq!(p.settings.output_formats, [OutputFormat::Terse]);
}

#[test]
fn showcmd_text() {
    let inv = run(&["--showcmd", "two.fio"], &[("two.fio", TWO)]).unwrap();
    assert_eq!(
        inv.action,
        Action::ShowCmd(
            "fiox --name=a --bs=8k --rw=randread --name=b --bs=8k --rw=write '--size=(2048/2)'"
                .into()
        )
    );
    let two_files = run(
        &["--showcmd", "two.fio", "one.fio"],
        &[("two.fio", TWO), ("one.fio", "[c]\n")],
    )
    .unwrap();
    let Action::ShowCmd(cmd) = two_files.action else {
        panic!()
    };
    assert!(cmd.ends_with("--name=c --stonewall"), "{cmd}");
}

/// fio's `--exitall_on_error` and `--profile` switches are also job options: they parse as
/// options (so `--showcmd` output carrying them parses again, which the fuzzer checks):
/// exitall_on_error applies to every job; `--profile` after a `--name=` is the job option fio
/// ignores, run with a note as fio runs it (before any `--name=` it runs the profile).
#[test]
fn switches_that_are_also_job_options_parse_as_options() {
    let inv = run(&["--exitall_on_error", "--name=a", "--name=b"], &[]).unwrap();
    assert!(inv.jobs.iter().all(|j| j.errors.exitall_on_error));
    let inv = run(&["--name=a", "--profile=tiobench"], &[]).unwrap();
    assert!(inv.refusals().is_empty(), "{:?}", inv.refusals());
    let notes = inv.notes();
    assert!(
        notes.len() == 1 && notes[0].contains("profile=tiobench has no effect in a job"),
        "{notes:?}"
    );
    let shown = fiox_job::showcmd(&inv.jobs);
    assert!(shown.contains("--profile=tiobench"), "{shown}");
}
