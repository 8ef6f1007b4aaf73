//! Seeded simulations of `fiox compare`'s verdicts on synthetic fio-shaped results with a
//! known truth (a port of the synth-fio-json generator: per job, read IOPS ~ Normal(mean *
//! scale, mean * rel_sd), latency 1 / IOPS, fio-style integer percentiles, ctx noise). They
//! check what a verdict promises: A/A families rarely claim anything, a real +10% is found,
//! identical inputs never claim, and the change's CI covers the truth at its level.

use fiox_experiment::compare::{compare, Comparison, Options, Verdict};
use fiox_experiment::load::{run_from_value, Run, Side};
use fiox_experiment::stats::{ratio_ci, SplitMix};
use serde_json::{json, Value};
use std::path::Path;

/// fiox's splitmix64 with Box-Muller normals: the same numbers on every machine.
struct Rng(SplitMix);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(SplitMix(seed))
    }

    fn uniform(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn gauss(&mut self, mean: f64, sd: f64) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        mean + sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// One direction of a job as fio 3.33 writes it.
fn direction(iops: f64, lat_us: f64, ios: u64) -> Value {
    let pct = json!({"1.000000": (lat_us * 500.0) as u64, "50.000000": (lat_us * 1000.0) as u64,
                     "99.000000": (lat_us * 3000.0) as u64});
    json!({"io_bytes": ios * 4096, "bw": iops * 4.0, "iops": iops, "runtime": 1000,
           "total_ios": ios, "slat_ns": {"mean": 0.0},
           "clat_ns": {"mean": lat_us * 1000.0, "percentile": pct},
           "lat_ns": {"mean": lat_us * 1000.0}})
}

/// One run: `jobs` jobs whose read IOPS is Normal(mean * scale, mean * rel_sd).
fn synth_run(rng: &mut Rng, jobs: usize, mean: f64, rel_sd: f64, scale: f64) -> Run {
    let js: Vec<Value> = (0..jobs)
        .map(|j| {
            let iops = rng.gauss(mean * scale, mean * rel_sd).max(1.0);
            json!({"jobname": format!("job{j}"), "error": 0,
                   "read": direction(iops, 1e6 / iops, iops as u64),
                   "write": {"total_ios": 0}, "job_runtime": 1000, "usr_cpu": 10.0,
                   "sys_cpu": 20.0, "ctx": rng.gauss(1000.0, 100.0).round()})
        })
        .collect();
    run_from_value(Path::new("synthetic.json"), &json!({"jobs": js}))
}

fn synth_side(
    rng: &mut Rng,
    name: &str,
    runs: usize,
    jobs: usize,
    rel_sd: f64,
    scale: f64,
) -> Side {
    Side {
        name: name.into(),
        runs: (0..runs)
            .map(|_| synth_run(rng, jobs, 10_000.0, rel_sd, scale))
            .collect(),
        baseline: None,
    }
}

fn claims(c: &Comparison) -> usize {
    c.rows
        .iter()
        .flat_map(|r| r.changes.iter().flatten())
        .filter(|ch| ch.verdict.is_claim())
        .count()
}

/// 200 A/A families of 12 jobs x the headline metrics (48 tests each, of which iops, bw and
/// mean latency move together), n = 5, 5% noise: the share of families with any claim stays
/// near alpha (Holm bounds it by 5%; 16 of 200 is 5% plus two binomial standard deviations).
/// Without the adjustment over a third of the families would claim.
#[test]
fn aa_families_rarely_claim_anything() {
    let mut rng = Rng::new(22);
    let (mut with_claim, mut raw) = (0, 0);
    for _ in 0..200 {
        let a = synth_side(&mut rng, "a", 5, 12, 0.05, 1.0);
        let b = synth_side(&mut rng, "b", 5, 12, 0.05, 1.0);
        let c = compare(&[a, b], &Options::default()).unwrap();
        assert!(c.tests >= 12 * 4, "family of {} tests", c.tests);
        if claims(&c) > 0 {
            with_claim += 1;
        }
        let any_raw = c
            .rows
            .iter()
            .flat_map(|r| r.changes.iter().flatten())
            .any(|ch| ch.test.is_some_and(|t| t.p < 0.05));
        raw += usize::from(any_raw);
    }
    eprintln!("A/A: {with_claim} of 200 families claimed (unadjusted: {raw})");
    assert!(
        with_claim <= 16,
        "{with_claim} of 200 A/A families claimed something"
    );
    assert!(
        raw > 40,
        "unadjusted, {raw} of 200 families would have claimed"
    );
}

/// A true +10% IOPS on every one of 12 jobs (n = 8, 3% noise) is found on at least 10 jobs
/// in each of 20 families, always as "better" (never "worse").
#[test]
fn a_real_ten_percent_is_found() {
    let mut rng = Rng::new(10);
    for family in 0..20 {
        let a = synth_side(&mut rng, "a", 8, 12, 0.03, 1.0);
        let b = synth_side(&mut rng, "b", 8, 12, 0.03, 1.1);
        let c = compare(&[a, b], &Options::default()).unwrap();
        let iops: Vec<Verdict> = c
            .rows
            .iter()
            .filter(|r| r.metric == "read.iops")
            .filter_map(|r| Some(r.changes[0].as_ref()?.verdict))
            .collect();
        let found = iops.iter().filter(|v| **v == Verdict::Better).count();
        eprintln!("+10%: family {family}: {found} of 12 jobs better");
        assert!(
            found >= 10,
            "family {family}: {found} of 12 jobs found: {iops:?}"
        );
        assert!(!iops.contains(&Verdict::Worse));
    }
}

/// The same runs on both sides, and constant runs: never a claim.
#[test]
fn identical_inputs_never_claim() {
    let mut rng = Rng::new(7);
    for _ in 0..20 {
        let a = synth_side(&mut rng, "a", 5, 12, 0.05, 1.0);
        let mut b = a.clone();
        b.name = "b".into();
        let c = compare(&[a, b], &Options::default()).unwrap();
        assert_eq!(claims(&c), 0);
    }
    let run = synth_run(&mut rng, 3, 10_000.0, 0.0, 1.0);
    let same = |name: &str| Side {
        name: name.into(),
        runs: vec![run.clone(); 5],
        baseline: None,
    };
    let c = compare(&[same("a"), same("b")], &Options::default()).unwrap();
    assert_eq!(claims(&c), 0);
    assert!(c
        .rows
        .iter()
        .flat_map(|r| r.changes.iter().flatten())
        .all(|ch| ch.verdict == Verdict::NoClaim));
}

/// In the low-noise case (n = 5, 1% noise, true +5%) the 95% CI of the relative change covers
/// the truth in 95% of 4000 replications (binomial sd 0.34%: allow 93.5% to 96.5%).
#[test]
fn change_intervals_cover_the_truth() {
    let mut rng = Rng::new(95);
    let reps = 4000;
    let covered = (0..reps)
        .filter(|_| {
            let a: Vec<f64> = (0..5).map(|_| rng.gauss(1000.0, 10.0)).collect();
            let b: Vec<f64> = (0..5).map(|_| rng.gauss(1050.0, 10.5)).collect();
            let (lo, hi) = ratio_ci(&a, &b, 0.95).expect("a CI");
            lo <= 0.05 && 0.05 <= hi
        })
        .count();
    let share = covered as f64 / reps as f64;
    eprintln!("coverage of the 95% CI of the change: {share}");
    assert!((0.935..=0.965).contains(&share), "coverage {share}");
}

/// A blocked experiment on a noisy machine, as `fiox experiment` runs one: `rounds` rounds,
/// each running both variants next to each other. A round's load moves every job of the round
/// (sd 30% on the log scale) and each job within it (sd 20%), for both variants alike; each
/// run adds its own 3%. Variant b's first `affected` jobs are `effect` times a's.
fn blocked_family(
    rng: &mut Rng,
    rounds: usize,
    jobs: usize,
    affected: usize,
    effect: f64,
) -> (Side, Side) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        let round = rng.gauss(0.0, 0.3);
        let shared: Vec<f64> = (0..jobs).map(|_| round + rng.gauss(0.0, 0.2)).collect();
        for (runs, side_b) in [(&mut a, false), (&mut b, true)] {
            let js: Vec<Value> = (0..jobs)
                .map(|j| {
                    let scale = if side_b && j < affected { effect } else { 1.0 };
                    let iops = 10_000.0 * scale * (shared[j] + rng.gauss(0.0, 0.03)).exp();
                    json!({"jobname": format!("job{j}"), "error": 0,
                           "read": direction(iops, 1e6 / iops, iops as u64),
                           "write": {"total_ios": 0}, "job_runtime": 1000})
                })
                .collect();
            let mut run = run_from_value(Path::new("synthetic.json"), &json!({"jobs": js}));
            run.round = Some(r as u64);
            runs.push(run);
        }
    }
    let side = |name: &str, runs| Side {
        name: name.into(),
        runs,
        baseline: None,
    };
    (side("a", a), side("b", b))
}

/// The "done": at 5 rounds on a machine whose load moves runs by 30%, a -20% on 4 of
/// 12 jobs is found (read.iops "worse") on at least 3 of the 4 in most of 50 families, and
/// never on an unaffected job; A/A families of the same design claim in at most 5%.
/// Unpaired (the same runs without their rounds) the load swamps the change.
#[test]
fn the_paired_design_finds_minus_twenty_percent_at_five_rounds() {
    let mut rng = Rng::new(42);
    let (mut most, mut unpaired_found, mut wrong) = (0, 0, 0);
    for _ in 0..50 {
        let (a, b) = blocked_family(&mut rng, 5, 12, 4, 0.8);
        let c = compare(&[a.clone(), b.clone()], &Options::default()).unwrap();
        let worse = |c: &Comparison, job: &str| {
            c.rows.iter().any(|r| {
                r.job == job
                    && r.metric == "read.iops"
                    && r.changes[0].as_ref().unwrap().verdict == Verdict::Worse
            })
        };
        let found = (0..4).filter(|j| worse(&c, &format!("job{j}"))).count();
        most += usize::from(found >= 3);
        let affected = ["job0", "job1", "job2", "job3"];
        wrong += c
            .rows
            .iter()
            .filter(|r| !affected.contains(&r.job.as_str()))
            .flat_map(|r| r.changes.iter().flatten())
            .filter(|ch| ch.verdict.is_claim())
            .count();
        let strip = |mut s: Side| {
            s.runs.iter_mut().for_each(|r| r.round = None);
            s
        };
        let u = compare(&[strip(a), strip(b)], &Options::default()).unwrap();
        unpaired_found += (0..4).filter(|j| worse(&u, &format!("job{j}"))).count();
    }
    eprintln!("-20% on 4 of 12, 5 rounds: >= 3 found in {most} of 50; unpaired found {unpaired_found} of 200");
    assert!(most > 25, "only {most} of 50 families found >= 3 of 4");
    assert_eq!(wrong, 0, "claims on unaffected jobs");
    assert!(unpaired_found < 20, "unpaired found {unpaired_found}");
    let mut with_claim = 0;
    for _ in 0..200 {
        let (a, b) = blocked_family(&mut rng, 5, 12, 0, 1.0);
        let c = compare(&[a, b], &Options::default()).unwrap();
        with_claim += usize::from(claims(&c) > 0);
    }
    eprintln!("paired A/A: {with_claim} of 200 families claimed");
    assert!(
        with_claim <= 10,
        "{with_claim} of 200 paired A/A families claimed"
    );
}
