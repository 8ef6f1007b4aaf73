//! End to end against fio 3.33: each fixture in `tests/fixtures/sweep` holds fio options and
//! the I/O sequence fio's `write_iolog` recorded for them (null engine; regenerate with
//! `tests/fixtures/sweep.sh`). The options go through fiox-job's parser, the files are sized
//! with `split_size`, and the generator must reproduce fio's sequence exactly.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::{Ddir, JobSpec, SizeSpec};
use fiox_workload::{split_size, FileExtent, GenOptions, Generator, IoReq};

fn parse(args: &str) -> JobSpec {
    let mut argv: Vec<String> = vec!["--name=t".into(), "--ioengine=null".into()];
    argv.extend(args.split_whitespace().map(String::from));
    let env = fiox_job::jobfile::SubstEnv::from_system();
    let inv = fiox_job::parse_invocation_with(&argv, &env, &mut |p| {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            p.to_string(),
        ))
    })
    .unwrap_or_else(|e| panic!("fiox-job rejects `{args}`: {e}"));
    inv.jobs.into_iter().next().expect("one job")
}

fn bytes(s: &Option<SizeSpec>) -> Option<u64> {
    match s {
        Some(SizeSpec::Bytes(b)) => Some(*b),
        _ => None,
    }
}

/// The runner's part, as fio does it: per-file sizes, the `offset=` start, the pass size.
fn generate(job: &JobSpec) -> Vec<IoReq> {
    let n = job.files.nrfiles.max(1);
    let size = bytes(&job.size);
    let sizes = split_size(job, n, size, job.rand.randseed);
    let start = match job.offset {
        SizeSpec::Bytes(b) => b,
        SizeSpec::Percent(_) => panic!("percent offsets are not in the sweep"),
    };
    let files: Vec<FileExtent> = sizes
        .iter()
        .map(|s| FileExtent {
            offset: start,
            size: s.expect("sized"),
        })
        .collect();
    let total: u64 = files.iter().map(|f| f.size).sum();
    let pass = size.map_or(total, |s| s.min(total));
    let io_bytes = bytes(&job.io_size).unwrap_or(pass);
    // fio's null engine cannot size a file, so fio takes size/nrfiles as its real size
    // (filesetup.c); I/O may overhang a smaller filesize= region up to there.
    let real = size.map_or(0, |s| s / n as u64);
    let opts = GenOptions {
        file_names: Some((0..n).map(|i| format!("t.0.{i}")).collect()),
        real_sizes: Some(files.iter().map(|f| real.max(f.offset + f.size)).collect()),
        ..GenOptions::default()
    };
    let mut g = Generator::with_options(job, &files, io_bytes, &opts).expect("generator");
    let mut out = Vec::new();
    loop {
        while let Some(io) = g.next() {
            out.push(io);
        }
        if !g.another_pass() {
            return out;
        }
        g.restart();
    }
}

fn expected(text: &str) -> Vec<IoReq> {
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            IoReq {
                ddir: match f[0] {
                    "read" => Ddir::Read,
                    "write" => Ddir::Write,
                    _ => Ddir::Trim,
                },
                file: f[1].parse().unwrap(),
                offset: f[2].parse().unwrap(),
                len: f[3].parse().unwrap(),
            }
        })
        .collect()
}

#[test]
fn sweep_matches_fio() {
    let dir = format!("{}/tests/fixtures/sweep", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(names.len() > 300, "sweep fixtures present");
    let mut failures = Vec::new();
    for path in &names {
        let text = std::fs::read_to_string(path).unwrap();
        let args = text.lines().next().unwrap().trim_start_matches("# ");
        let want = expected(&text);
        let got = generate(&parse(args));
        if got != want {
            let first = got.iter().zip(&want).position(|(g, w)| g != w);
            failures.push(format!(
                "{}: `{args}`: {} I/Os vs fio's {}, first difference at {:?}",
                path.file_name().unwrap().to_string_lossy(),
                got.len(),
                want.len(),
                first
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}
