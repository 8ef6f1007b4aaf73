//! Every format must print any result the model can hold — empty, degenerate or extreme —
//! without panicking, and the JSON forms must stay valid JSON.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::{Ddir, OutputFormat};
use fiox_report::{header, json, json_status_line, normal, render, terse, to_fio_json_text};
use fiox_stats::{DiskResult, GroupResult, JobResult, LatStat, RunResult, SampleStat};

/// Deterministic pseudo-random numbers (xorshift), biased towards edge values.
struct Gen(u64);

impl Gen {
    fn coin(&mut self) -> bool {
        self.next() & 1 == 0
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        match self.0 % 8 {
            0 => 0,
            1 => 1,
            2 => u64::MAX,
            3 => self.0 % 1000,
            _ => self.0 % 10_000_000_000,
        }
    }
}

fn lat(g: &mut Gen) -> LatStat {
    let mut s = LatStat::default();
    for _ in 0..(g.next() % 50) {
        s.add(g.next() % 100_000_000_000);
    }
    s
}

fn job(g: &mut Gen, i: u32) -> JobResult {
    let mut j = JobResult {
        name: format!("job \"{i}\"\n;x"),
        groupid: (g.next() % 3) as u32,
        jobs: g.next() as u32,
        error: (g.next() % 200) as i32,
        verror: "error=Input/output error".into(),
        start_unix: g.next(),
        elapsed_s: g.next(),
        runtime_ms: g.next(),
        usr_cpu_pct: g.next() as f64 / 7.0,
        sys_cpu_pct: f64::NAN,
        percentile_list: vec![0.0, 50.0, 99.999_999, 100.0, 120.0],
        clat_percentiles: g.coin(),
        lat_percentiles: g.coin(),
        slat_percentiles: g.coin(),
        has_slat: g.coin(),
        iodepth: g.next() as u32,
        continue_on_error: g.coin(),
        first_error: g.next() as i32,
        description: "d;e".into(),
        job_options: vec![(
            "percentile_list".into(),
            "50:99.99999999999999999999999999999999999999999999999999999999999999999".into(),
        )],
        sync_lat: lat(g),
        ..Default::default()
    };
    for d in Ddir::ALL {
        let r = j.dirs.get_mut(d);
        r.io_bytes = g.next();
        r.total_ios = g.next();
        r.runtime_ms = g.next();
        r.clat = lat(g);
        r.slat = lat(g);
        r.lat = lat(g);
        r.bw = SampleStat::from_parts(g.next(), g.next(), g.next(), g.next() as f64, 1e300);
        r.iops = SampleStat::from_parts(g.next(), g.next(), g.next(), -1.0, 0.0);
    }
    for b in j.lat_buckets.us.iter_mut() {
        *b = g.next() % 1_000_000;
    }
    j.io_depth.buckets[3] = g.next() % 1_000_000;
    j.submit.buckets[1] = g.next() % 1_000_000;
    j
}

#[test]
fn any_result_prints_in_every_format() {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let empty = RunResult::default();
    let mut runs = vec![empty];
    for round in 0..40 {
        let jobs: Vec<JobResult> = (0..(round % 4)).map(|i| job(&mut g, i)).collect();
        let groups = (0..3)
            .map(|gid| GroupResult {
                groupid: gid,
                kb_base: [0, 1000, 1024, 7][(g.next() % 4) as usize],
                unit_base: [0, 1, 8][(g.next() % 3) as usize],
                ..Default::default()
            })
            .collect();
        let disk = DiskResult {
            name: "md0".into(),
            util: g.next() as f64,
            slaves: vec![DiskResult::default(), DiskResult::default()],
            ..Default::default()
        };
        runs.push(RunResult {
            jobs,
            groups,
            disks: vec![disk],
            start_unix_ms: g.next(),
            ..Default::default()
        });
    }
    for run in &runs {
        let _ = normal(run);
        let _ = terse(run);
        for plus in [false, true] {
            let text = to_fio_json_text(&json(run, plus));
            serde_json::from_str::<serde_json::Value>(&text).expect("valid JSON");
            let line = json_status_line(run, plus);
            serde_json::from_str::<serde_json::Value>(&line).expect("valid JSON line");
        }
        let _ = render(run, &[OutputFormat::Terse, OutputFormat::Normal]);
    }
    let _ = header(&[]);
}
