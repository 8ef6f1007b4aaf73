//! Tests of the comparison's assembly: verdicts, missing values, errors, pairing, drift.

use super::*;
use crate::load::Run;

fn side(name: &str, vals: &[f64]) -> Side {
    Side {
        name: name.into(),
        runs: vals
            .iter()
            .map(|v| {
                let mut r = Run::default();
                let j = r.jobs.entry("randread".into()).or_default();
                j.insert("read.iops".into(), *v);
                j.insert("read.lat_mean_us".into(), 1e6 / v);
                r
            })
            .collect(),
    }
}

fn cmp(sides: &[Side]) -> Comparison {
    compare(sides, &Options::default())
}

fn change<'a>(c: &'a Comparison, metric: &str) -> &'a Change {
    let r = c.rows.iter().find(|r| r.metric == metric).unwrap();
    r.changes[0].as_ref().unwrap()
}

#[test]
fn verdicts_follow_the_metric_direction() {
    // Same numbers as stats' scipy reference: p(Welch) = 0.0054, two tests (Holm: 0.0108).
    let a = side("base", &[8015.0, 8102.0, 7950.0, 8060.0, 7990.0]);
    let b = side("dio", &[8136.0, 8210.0, 8090.0, 8175.0, 8150.0]);
    let c = cmp(&[a, b]);
    assert_eq!(c.tests, 2);
    let ch = change(&c, "read.iops");
    assert_eq!(ch.verdict, Verdict::Inconclusive, "{}", ch.reason);
    assert!(ch.reason.contains("significant"), "{}", ch.reason);
    assert!((ch.rel.unwrap() - 0.0161).abs() < 1e-3, "{:?}", ch.rel);
    let p = ch.p_adjusted.unwrap();
    assert!((p - 2.0 * ch.welch.unwrap().p).abs() < 1e-12 || p == 2.0 * 0.005417444288932234);
    // With a 1% threshold the same change is better (and the latency, lower, too).
    let o = Options {
        thresholds: Thresholds::parse(&["1%".into()]).unwrap(),
        ..Options::default()
    };
    let a = side("base", &[8015.0, 8102.0, 7950.0, 8060.0, 7990.0]);
    let b = side("dio", &[8136.0, 8210.0, 8090.0, 8175.0, 8150.0]);
    let c = compare(&[a, b], &o);
    assert_eq!(change(&c, "read.iops").verdict, Verdict::Better);
    assert_eq!(change(&c, "read.lat_mean_us").verdict, Verdict::Better);
    let text = to_text(&c, &[]);
    assert!(
        text.contains("read.iops") && text.contains("better: +1.6%"),
        "{text}"
    );
    assert!(
        text.contains("2 test(s); controls the family-wise error rate (Holm)"),
        "{text}"
    );
    let csv = to_csv(&c, &["iops".into()]);
    assert_eq!(csv.lines().count(), 3, "{csv}");
    let cols = csv.lines().next().unwrap().split(',').count();
    assert!(csv.lines().all(|l| l.split(',').count() >= cols), "{csv}");
    let md = to_markdown(&c, &[]);
    assert!(
        md.contains("| randread | read.iops | 8023 ± 59.4 (n=5) |"),
        "{md}"
    );
}

#[test]
fn a_wide_interval_is_inconclusive_and_a_narrow_one_equivalent() {
    let c = cmp(&[side("a", &[1.0, 2.0, 3.0]), side("b", &[1.5, 2.5, 3.5])]);
    let ch = change(&c, "read.iops");
    assert_eq!(ch.verdict, Verdict::Inconclusive);
    assert!(
        ch.reason.contains("too wide") && ch.reason.contains("runs a side"),
        "{}",
        ch.reason
    );
    let c = cmp(&[
        side("a", &[1000.0, 1001.0, 999.0, 1000.5]),
        side("b", &[1000.2, 1000.9, 999.1, 1000.4]),
    ]);
    let ch = change(&c, "read.iops");
    assert_eq!(ch.verdict, Verdict::Equivalent, "{}", ch.reason);
}

#[test]
fn constant_sides_make_no_claim() {
    // The report's D1 and D7b: 2001 vs 2002 and identical values on both sides.
    for (a, b) in [
        ([2001.0; 3], [2002.0; 3]),
        ([36.0; 5][..3].try_into().unwrap(), [36.0; 3]),
    ] {
        let c = cmp(&[side("a", &a), side("b", &b)]);
        let ch = change(&c, "read.iops");
        assert_eq!(ch.verdict, Verdict::NoClaim, "{}", ch.reason);
        assert!(ch.welch.is_none() && ch.p_adjusted.is_none());
        assert!(ch.reason.contains("constant") || ch.reason.contains("every value"));
    }
    // D2: a base mean of 0 has no relative change.
    let c = cmp(&[side("a", &[0.0, 0.0, 0.0]), side("b", &[5.0, 5.0, 6.0])]);
    assert_eq!(change(&c, "read.iops").verdict, Verdict::NoClaim);
    assert_eq!(change(&c, "read.iops").rel, None);
}

#[test]
fn one_run_per_side_makes_no_claim() {
    let c = cmp(&[side("a", &[1.0]), side("b", &[2.0])]);
    assert_eq!(change(&c, "read.iops").verdict, Verdict::NoClaim);
    assert!(c.warnings.iter().any(|w| w.contains("at least 3")));
}

#[test]
fn a_run_without_a_metric_is_left_out_and_said() {
    let a = side("a", &[100.0, 101.0, 99.0]);
    let mut b = side("b", &[100.0, 101.0, 99.0]);
    b.runs[0]
        .jobs
        .get_mut("randread")
        .unwrap()
        .remove("read.lat_mean_us");
    let c = cmp(&[a, b]);
    let r = c
        .rows
        .iter()
        .find(|r| r.metric == "read.lat_mean_us")
        .unwrap();
    assert_eq!(r.summaries[1].as_ref().unwrap().n, 2);
    let w = c.warnings.join("\n");
    assert!(
        w.contains("b randread read.lat_mean_us: in 2 of 3 run(s)"),
        "{w}"
    );
}

#[test]
fn io_errors_are_a_row_and_named_beside_verdicts() {
    let a = side("a", &[100.0, 101.0, 99.0, 100.0]);
    let mut b = side("b", &[200.0, 202.0, 198.0, 200.0]);
    for r in &mut a.runs.clone() {
        r.jobs
            .get_mut("randread")
            .unwrap()
            .insert("errors".into(), 0.0);
    }
    for (i, r) in b.runs.iter_mut().enumerate() {
        r.jobs
            .get_mut("randread")
            .unwrap()
            .insert("errors".into(), 10.0 * i as f64);
    }
    let c = cmp(&[a, b]);
    let ch = change(&c, "read.iops");
    assert_eq!(ch.verdict, Verdict::Better);
    assert!(ch.reason.contains("I/O errors on b"), "{}", ch.reason);
    let text = to_text(&c, &[]);
    assert!(text.contains("\nerrors\n"), "{text}");
    assert!(
        text.contains("b randread errors: 60 I/O error(s) in 3 of 4 run(s)"),
        "{text}"
    );
}

#[test]
fn rounds_pair_and_drift_is_found() {
    let mut a = side(
        "a",
        &[100.0, 110.0, 120.0, 130.0, 140.0, 150.0, 160.0, 170.0],
    );
    let mut b = side(
        "b",
        &[101.0, 111.5, 121.0, 132.0, 141.0, 151.5, 161.0, 172.0],
    );
    for (i, (x, y)) in a.runs.iter_mut().zip(&mut b.runs).enumerate() {
        x.round = Some(i as u64);
        y.round = Some(i as u64);
    }
    let c = cmp(&[a, b]);
    let ch = change(&c, "read.iops");
    let p = ch.paired.as_ref().unwrap();
    assert_eq!(p.n, 8);
    // Unpaired, the drift swamps the 1% shift; paired, it is plain.
    assert!(ch.welch.unwrap().p > 0.5 && p.t.unwrap().p < 0.001, "{p:?}");
    assert!(p.wilcoxon.unwrap().p < 0.01, "{p:?}");
    assert!(
        ch.reason
            .contains("paired by round (8 pairs, unadjusted): t p < 0.001"),
        "{}",
        ch.reason
    );
    assert!(c
        .drift
        .iter()
        .any(|d| d.side == "a" && d.metric == "read.iops"));
    let text = to_text(&c, &[]);
    assert!(
        text.contains("a randread read.iops: rises over run order"),
        "{text}"
    );
}

#[test]
fn the_chosen_metrics_are_the_family() {
    let a = side("base", &[8015.0, 8102.0, 7950.0, 8060.0, 7990.0]);
    let b = side("dio", &[8136.0, 8210.0, 8090.0, 8175.0, 8150.0]);
    let o = Options {
        metrics: vec!["iops".into()],
        ..Options::default()
    };
    let c = compare(&[a, b], &o);
    assert_eq!((c.tests, c.rows.len()), (1, 1));
    let w = change(&c, "read.iops").welch.unwrap().p;
    assert_eq!(change(&c, "read.iops").p_adjusted, Some(w));
}

#[test]
fn a_clear_change_lost_to_the_adjustment_says_so() {
    // One real +30% among many null rows: unadjusted p 0.0002 but Holm over 100 rows is not.
    let mut a = side("a", &[100.0, 110.0, 90.0, 105.0]);
    let mut b = side("b", &[130.0, 140.0, 120.0, 135.0]);
    for (s, shift) in [(&mut a, 0.0), (&mut b, 0.5)] {
        for (i, r) in s.runs.iter_mut().enumerate() {
            let j = r.jobs.get_mut("randread").unwrap();
            for k in 0..100 {
                j.insert(format!("m{k}.iops"), 50.0 + i as f64 + shift);
            }
        }
    }
    let c = cmp(&[a, b]);
    let ch = change(&c, "read.iops");
    assert_eq!(ch.verdict, Verdict::Inconclusive, "{}", ch.reason);
    assert!(ch.reason.contains("lies beyond ±2.0%"), "{}", ch.reason);
}

#[test]
fn welch_and_mann_whitney_disagreeing_is_said() {
    // The report's D9: one stalled run; Welch p 0.293, Mann-Whitney p 0.009.
    let a = side("a", &[1987.0, 1110.0, 1987.0, 1987.0, 1987.0]);
    let b = side("b", &[2023.0, 2026.0, 2026.0, 2026.0, 2018.0]);
    let c = cmp(&[a, b]);
    let ch = change(&c, "read.iops");
    assert_eq!(ch.verdict, Verdict::Inconclusive);
    assert!(ch.reason.contains("disagree"), "{}", ch.reason);
}

#[test]
fn an_outlier_run_is_named() {
    let a = side("a", &[100.0, 101.0, 99.0, 100.0, 102.0, 98.0, 40.0]);
    let b = side("b", &[100.0, 101.0, 99.0, 100.0, 102.0]);
    let c = cmp(&[a, b]);
    let w = c.warnings.join("\n");
    assert!(
        w.contains("a randread read.iops: outlier run(s) 7 of 7 (values 40.0)"),
        "{w}"
    );
    assert!(!w.contains("b randread read.iops: outlier"), "{w}");
}

#[test]
fn bootstrap_only_on_percentile_rows_and_seeded() {
    let mk = |name: &str, v: &[f64]| {
        let mut s = side(name, v);
        for (r, x) in s.runs.iter_mut().zip(v) {
            r.jobs
                .get_mut("randread")
                .unwrap()
                .insert("read.lat_p99_us".into(), *x);
        }
        s
    };
    let o = Options {
        bootstrap: 1000,
        seed: 3,
        ..Options::default()
    };
    let sides = [
        mk("a", &[10.0, 12.0, 11.0, 30.0]),
        mk("b", &[20.0, 22.0, 21.0, 25.0]),
    ];
    let c = compare(&sides, &o);
    let ci = change(&c, "read.lat_p99_us").bootstrap_ci.unwrap();
    assert_eq!(
        Some(ci),
        change(&compare(&sides, &o), "read.lat_p99_us").bootstrap_ci
    );
    assert!(change(&c, "read.iops").bootstrap_ci.is_none());
}
