//! Prints the I/O sequence fiox generates for fio-style options, one "ddir file offset length"
//! line per I/O (the format of `tests/fixtures`), to compare with fio's `write_iolog`:
//! `cargo run -p fiox-workload --example iolog -- --rw=randread --size=64k`.
//! Files are sized as fio sizes them (`split_size`) and named `t.0.N` like fio's defaults.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::SizeSpec;
use fiox_workload::{split_size, FileExtent, GenOptions, Generator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv: Vec<String> = vec!["--name=t".into(), "--ioengine=null".into()];
    argv.extend(std::env::args().skip(1));
    let inv = fiox_job::parse_invocation(&argv)?;
    let job = inv.jobs.first().ok_or("no job")?;
    let n = job.files.nrfiles.max(1);
    let size = match job.size {
        Some(SizeSpec::Bytes(b)) => Some(b),
        _ => None,
    };
    let start = match job.offset {
        SizeSpec::Bytes(b) => b,
        SizeSpec::Percent(_) => return Err("percent offsets need a real file size".into()),
    };
    let mut files = Vec::new();
    for s in split_size(job, n, size, job.rand.randseed) {
        let size = s.ok_or("size= or filesize= is needed")?;
        files.push(FileExtent {
            offset: start,
            size,
        });
    }
    let total: u64 = files.iter().map(|f| f.size).sum();
    let pass = size.map_or(total, |s| s.min(total));
    let io_bytes = match job.io_size {
        Some(SizeSpec::Bytes(b)) => b,
        _ => pass,
    };
    let opts = GenOptions {
        file_names: Some((0..n).map(|i| format!("t.0.{i}")).collect()),
        ..GenOptions::default()
    };
    let mut g = Generator::with_options(job, &files, io_bytes, &opts)?;
    let names = ["read", "write", "trim"];
    loop {
        while let Some(io) = g.next() {
            println!(
                "{} {} {} {}",
                names[io.ddir.index()],
                io.file,
                io.offset,
                io.len
            );
        }
        if !g.another_pass() {
            return Ok(());
        }
        g.restart();
    }
}
