//! bench/explain-floor.sh's driver: runs a fiox job (4k random reads, libaio, direct, QD8)
//! on a device with no programs, with empty programs on the syscall hooks, on the five others
//! (what is left when fiox marks its own calls), on all of
//! `--explain`'s per-I/O hooks, and with programs that only read the clock on all of them,
//! in alternating rounds, and prints each set's median IOPS and job-thread CPU per I/O
//! against the first. Usage: explain_floor FIOX DEVICE ROUNDS SECONDS (root: BPF).

use fiox_explain::floor;
use std::process::Command;

fn job(fiox: &str, dev: &str, secs: &str) -> Result<(f64, f64), String> {
    let out = Command::new(fiox)
        .args([
            "--name=floor",
            "--ioengine=libaio",
            "--direct=1",
            "--iodepth=8",
            "--rw=randread",
            "--bs=4k",
            &format!("--filename={dev}"),
            &format!("--runtime={secs}"),
            "--time_based",
            "--output-format=json",
        ])
        .output()
        .map_err(|e| format!("{fiox}: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{fiox}'s JSON: {e}"))?;
    let j = &v["jobs"][0];
    let f = |x: &serde_json::Value| x.as_f64().unwrap_or(0.0);
    let n = f(&j["read"]["total_ios"]).max(1.0);
    let cpu = (f(&j["usr_cpu"]) + f(&j["sys_cpu"])) / 100.0 * f(&j["job_runtime"]) * 1000.0 / n;
    Ok((f(&j["read"]["iops"]), cpu))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let [_, fiox, dev, rounds, secs] = args.as_slice() else {
        return Err("usage: explain_floor FIOX DEVICE ROUNDS SECONDS".into());
    };
    let rounds: usize = rounds.parse().map_err(|_| format!("rounds: {rounds}"))?;
    let sets: [(&str, &[&str], bool); 5] = [
        ("no programs", &[], false),
        ("empty on sys_enter/exit", &floor::HOOKS[..2], false),
        // The hooks --explain keeps when fiox marks its own calls (crates/explain/src/marks.rs).
        ("empty on the other 5", &floor::HOOKS[2..], false),
        ("empty on all 7 hooks", &floor::HOOKS, false),
        ("clock read on all 7", &floor::HOOKS, true),
    ];
    let mut res = vec![Vec::new(); sets.len()];
    for r in 0..rounds {
        let mut order: Vec<usize> = (0..sets.len()).collect();
        if r % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let (_, hooks, clock) = sets[i];
            let _attached = floor::attach(hooks, clock).map_err(|e| e.to_string())?;
            res[i].push(job(fiox, dev, secs)?);
        }
    }
    let (io0, cpu0) = (
        median(res[0].iter().map(|r| r.0).collect()),
        median(res[0].iter().map(|r| r.1).collect()),
    );
    for ((name, _, _), runs) in sets.iter().zip(&res) {
        let io = median(runs.iter().map(|r| r.0).collect());
        let cpu = median(runs.iter().map(|r| r.1).collect());
        println!(
            "{name:24} median IOPS {io:7.0} ({:+5.1}%)  CPU per I/O {cpu:.2} us ({:+.2})  IOPS {:?}",
            100.0 * (io - io0) / io0.max(1.0),
            cpu - cpu0,
            runs.iter().map(|r| r.0 as u64).collect::<Vec<_>>()
        );
    }
    Ok(())
}
