//! Two corners of issue 23 compared with fio 3.33 case by case: `zonemode=strided` with
//! combinations of zonesize, zonerange and zoneskip (and offsets, block size ranges, random
//! and mixed workloads, several files), compared by the exact I/O sequence each tool logs
//! with `write_iolog`; and `verify_only` with libaio after `verify_state_save` at several
//! depths, compared by exit code, reads and error. Each tool runs in its own directory.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod harness;

use harness::*;

/// The I/O lines (`file ddir offset length`) of a write_iolog.
fn io_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && ["read", "write", "trim"].contains(&f[2])).then(|| f[1..].join(" "))
        })
        .collect()
}

/// Run `tool` on a 1 MiB file (and `f.0`, `f.1`) with the strided zone options `combo`.
fn strided(tool: &str, combo: &str) -> (i32, Vec<String>) {
    let d = TempDir::new("strided");
    for f in ["f", "f.0", "f.1"] {
        std::fs::File::create(d.path().join(f))
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
    }
    let mut args = vec![
        "--name=z".to_string(),
        "--filename=f".into(),
        "--size=1m".into(),
        "--bs=4k".into(),
        "--rw=read".into(),
        "--zonemode=strided".into(),
        "--write_iolog=log".into(),
    ];
    args.extend(combo.split_whitespace().map(|o| format!("--{o}")));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = tool_in(tool, d.path(), &a);
    let log = std::fs::read_to_string(d.path().join("log")).unwrap_or_default();
    (r.code, io_lines(&log))
}

#[test]
fn strided_zones_do_the_same_ios_as_fio() {
    need_fio();
    let combos = [
        "zonesize=64k zonerange=256k",
        "zonesize=64k zonerange=256k zoneskip=128k",
        "zonesize=64k zoneskip=64k",
        "zonesize=128k zonerange=64k",
        "zonesize=64k zonerange=64k zoneskip=192k",
        "zonesize=48k zonerange=100k zoneskip=10k",
        "zonesize=100k zonerange=300k zoneskip=7k bs=8k",
        "zonesize=300k zonerange=256k",
        "zonesize=1m zonerange=1m zoneskip=0",
        "zonesize=64k zonerange=256k zoneskip=1m",
        "zonesize=64k zonerange=256k offset=100k",
        "zonesize=64k zonerange=256k size=512k",
        "zonesize=64k zonerange=256k zoneskip=64k io_size=2m",
        "zonesize=64k zonerange=256k bsrange=4k-16k",
        "zonesize=64k zonerange=256k rw=read:8k",
        "zonesize=64k zonerange=256k rw=randread",
        "zonesize=64k zonerange=128k rw=randrw",
        "zonesize=64k zonerange=256k rw=randwrite norandommap=1",
        "zonesize=64k zonerange=256k rw=readwrite",
        "zonesize=64k zonerange=256k nrfiles=2 filename_format=f.$filenum",
        "zonerange=256k",
    ];
    let mut differ = Vec::new();
    for c in combos {
        let (fio, fiox) = (strided("fio", c), strided("fiox", c));
        if fio != fiox {
            differ.push(format!(
                "{c}: fio rc {} {} I/Os, fiox rc {} {} I/Os; first differing: {:?}",
                fio.0,
                fio.1.len(),
                fiox.0,
                fiox.1.len(),
                fio.1.iter().zip(&fiox.1).find(|(a, b)| a != b)
            ));
        }
        assert!(fio.0 != 0 || !fio.1.is_empty(), "{c}: fio logged nothing");
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// What a write run and the verify_only run after it did: exit codes, writes, the verify
/// run's reads and error.
#[derive(Debug, PartialEq)]
struct VerifyOnly {
    write_rc: i32,
    verify_rc: i32,
    writes: u64,
    reads: u64,
    error: i64,
}

/// Write with libaio at `depth` (saving the verify state), then verify_only from the state.
fn verify_only_at(tool: &str, depth: u32, rw: &str, extra: &[&str]) -> VerifyOnly {
    let d = TempDir::under(std::path::Path::new("/tmp"), "vonly");
    let iodepth = format!("--iodepth={depth}");
    let rw = format!("--rw={rw}");
    let mut job = vec![
        "--name=v",
        "--filename=f",
        "--size=1m",
        "--bs=4k",
        "--ioengine=libaio",
        "--direct=1",
        "--verify=crc32c",
        &iodepth,
        &rw,
    ];
    job.extend_from_slice(extra);
    let mut write = job.clone();
    write.extend(["--do_verify=0", "--verify_state_save=1"]);
    let (w, wv, _) = tool_json(tool, d.path(), &write, Some(60));
    let mut only = job.clone();
    only.extend(["--verify_only=1", "--verify_state_load=1"]);
    let (o, v, _) = tool_json(tool, d.path(), &only, Some(60));
    let j = &v["jobs"][0];
    VerifyOnly {
        write_rc: w,
        verify_rc: o,
        writes: wv["jobs"][0]["write"]["total_ios"].as_u64().unwrap_or(0),
        reads: j["read"]["total_ios"].as_u64().unwrap_or(0),
        error: j["error"].as_i64().unwrap_or(-1),
    }
}

#[test]
fn verify_only_with_libaio_after_a_saved_state_reads_what_fio_reads_at_any_depth() {
    need_fio();
    let mut differ = Vec::new();
    for depth in [1, 4, 16, 64] {
        for rw in ["write", "randwrite"] {
            // The whole file, and a write phase that ends early (number_ios).
            for extra in [&[][..], &["--number_ios=40"][..]] {
                let fio = verify_only_at("fio", depth, rw, extra);
                let fiox = verify_only_at("fiox", depth, rw, extra);
                if fio != fiox {
                    differ.push(format!(
                        "depth {depth} {rw} {extra:?}: fio {fio:?}, fiox {fiox:?} \
                         (write rc, verify rc, reads, error)"
                    ));
                }
            }
        }
    }
    // A write phase its runtime ends while rate-limited: as many writes as the rate allows
    // in the time (fio: 64 of 4k at 256k/s for 1 s), never `iodepth` more (fiox sent the
    // queue's worth unpaced at the end when the job verified), each read back once.
    for depth in [4, 16, 64] {
        let extra = ["--rate=256k", "--runtime=1"];
        for tool in ["fio", "fiox"] {
            let r = verify_only_at(tool, depth, "randwrite", &extra);
            let ok = r.write_rc == 0
                && r.verify_rc == 0
                && r.error == 0
                && r.writes > 0
                && r.writes <= 64
                && r.reads == r.writes;
            if !ok {
                differ.push(format!("depth {depth} {extra:?}: {tool} {r:?}"));
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
