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
        baseline: None,
    }
}

fn cmp(sides: &[Side]) -> Comparison {
    compare(sides, &Options::default()).unwrap()
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
    assert!((p - 2.0 * ch.test.unwrap().p).abs() < 1e-12 || p == 2.0 * 0.005417444288932234);
    // With a 1% threshold the same change is better (and the latency, lower, too).
    let o = Options {
        thresholds: Thresholds::parse(&["1%".into()]).unwrap(),
        ..Options::default()
    };
    let a = side("base", &[8015.0, 8102.0, 7950.0, 8060.0, 7990.0]);
    let b = side("dio", &[8136.0, 8210.0, 8090.0, 8175.0, 8150.0]);
    let c = compare(&[a, b], &o).unwrap();
    assert_eq!(change(&c, "read.iops").verdict, Verdict::Better);
    assert_eq!(change(&c, "read.lat_mean_us").verdict, Verdict::Better);
    let text = to_text(&c);
    assert!(
        text.contains("read.iops") && text.contains("better: +1.6%"),
        "{text}"
    );
    assert!(
        text.contains("2 test(s); controls the family-wise error rate (Holm)"),
        "{text}"
    );
    let o = Options {
        metrics: Metrics::parse(&["iops".into()]),
        ..o
    };
    let a = side("base", &[8015.0, 8102.0, 7950.0, 8060.0, 7990.0]);
    let b = side("dio", &[8136.0, 8210.0, 8090.0, 8175.0, 8150.0]);
    let csv = to_csv(&compare(&[a, b], &o).unwrap());
    assert_eq!(csv.lines().count(), 3, "{csv}");
    let cols = csv.lines().next().unwrap().split(',').count();
    assert!(csv.lines().all(|l| l.split(',').count() >= cols), "{csv}");
    let md = to_markdown(&c);
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
    // A rate limit that holds exactly: 1000 against 800 in every run is an exact -20%,
    // claimed without a test (and outside the adjusted family); with two runs a side, or a
    // step inside the threshold (above), nothing is claimed.
    let c = cmp(&[side("a", &[1000.0; 5]), side("b", &[800.0; 5])]);
    let ch = change(&c, "read.iops");
    assert_eq!(ch.verdict, Verdict::Worse, "{}", ch.reason);
    assert!(ch.reason.starts_with("-20.0% exactly"), "{}", ch.reason);
    assert!(ch.p_adjusted.is_none());
    assert_eq!(c.tests, 0);
    let c = cmp(&[side("a", &[1000.0; 2]), side("b", &[800.0; 2])]);
    assert_eq!(change(&c, "read.iops").verdict, Verdict::NoClaim);
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
    let text = to_text(&c);
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
    // Unpaired, the drift swamps the 1% shift; paired by round (the verdict's test), it is
    // plain.
    let t = ch.test.unwrap();
    assert_eq!(t.model, crate::stats::Model::PairedLog);
    assert!(ch.welch.unwrap().p > 0.5 && t.p < 0.001, "{t:?}");
    assert!(p.wilcoxon.unwrap().p < 0.01, "{p:?}");
    // The 1% shift is known to within ±2%: equivalent, which unpaired it could not be.
    assert_eq!(ch.verdict, Verdict::Equivalent, "{}", ch.reason);
    assert!(
        ch.reason.contains("CI [+0.8%, +1.3%] inside"),
        "{}",
        ch.reason
    );
    // Two samples that rise together over 8 rounds: Friedman's largest statistic there,
    // n (k - 1) = 14, p 0.051: one job alone cannot show a round effect at 5% (below).
    let e = c.round_effect.as_ref().unwrap();
    assert_eq!((e.test.n, e.test.k), (2, 8));
    assert!((e.test.chi2 - 14.0).abs() < 1e-9, "{e:?}");
}

#[test]
fn a_round_effect_across_jobs_is_one_warning() {
    // The report's F2: a +40% climb over 5 rounds, here on 6 jobs of both sides, found by one
    // test (Kendall per sample, Holm-adjusted over the family, could not at n = 5).
    let mk = |name: &str| {
        let mut s = side(name, &[1.0; 5]);
        for (i, r) in s.runs.iter_mut().enumerate() {
            r.round = Some(i as u64);
            r.jobs.clear();
            for j in 0..6 {
                let v = 1000.0 * (1.0 + 0.1 * i as f64) + (j * 7 % 5) as f64;
                let m = r.jobs.entry(format!("job{j}")).or_default();
                m.insert("read.iops".into(), v);
            }
        }
        s
    };
    let c = cmp(&[mk("a"), mk("b")]);
    let e = c.round_effect.as_ref().unwrap();
    assert!(e.significant && e.test.p < 1e-4, "{e:?}");
    assert_eq!(e.rounds.len(), 5);
    assert!(e.rounds[4].1 > 0.15 && e.rounds[0].1 < -0.15, "{e:?}");
    let text = to_text(&c);
    assert_eq!(text.matches("rounds differ").count(), 1, "{text}");
    assert!(text.contains("round 4 +"), "{text}");
}

#[test]
fn the_chosen_metrics_are_the_family() {
    let a = side("base", &[8015.0, 8102.0, 7950.0, 8060.0, 7990.0]);
    let b = side("dio", &[8136.0, 8210.0, 8090.0, 8175.0, 8150.0]);
    let o = Options {
        metrics: Metrics::parse(&["iops".into()]),
        ..Options::default()
    };
    let c = compare(&[a, b], &o).unwrap();
    assert_eq!((c.tests, c.rows.len()), (1, 1));
    let w = change(&c, "read.iops").test.unwrap().p;
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
fn an_outlier_run_is_named_only_when_it_decides_the_verdict() {
    // The report's quiet1: a real -20% and one stalled run on the changed side.
    let named = |mut s: Side| {
        for (i, r) in s.runs.iter_mut().enumerate() {
            r.source = format!("runs/{}-{i:03}.json", s.name).into();
        }
        s
    };
    let a = named(side("a", &[200.0, 199.0, 201.0, 200.5, 199.5]));
    let b = named(side("b", &[160.0, 161.0, 159.0, 160.5, 20.0]));
    let c = cmp(&[a.clone(), b]);
    let w = c.warnings.join("\n");
    assert!(
        w.contains("b vs a randread read.iops: outlier run(s) b-004.json (median/MAD) decide"),
        "{w}"
    );
    assert!(w.contains("inconclusive with them, worse without"), "{w}");
    // An odd run that changes nothing is not named.
    let b = named(side("b", &[160.0, 161.0, 159.0, 160.5, 140.0]));
    let c = cmp(&[a, b]);
    assert!(
        !c.warnings.join("\n").contains("outlier"),
        "{:?}",
        c.warnings
    );
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
    let c = compare(&sides, &o).unwrap();
    let ci = change(&c, "read.lat_p99_us").bootstrap_ci.unwrap();
    assert_eq!(
        Some(ci),
        change(&compare(&sides, &o).unwrap(), "read.lat_p99_us").bootstrap_ci
    );
    assert!(change(&c, "read.iops").bootstrap_ci.is_none());
}

#[test]
fn the_rows_shown_are_the_family_and_claims_are_never_hidden() {
    // The report's F1: a real change on a metric outside the headline ones.
    let mk = |name: &str, vals: &[f64], p50: &[f64]| {
        let mut s = side(name, vals);
        for (r, x) in s.runs.iter_mut().zip(p50) {
            let j = r.jobs.get_mut("randread").unwrap();
            j.insert("read.lat_p50_us".into(), *x);
        }
        s
    };
    let a = mk("a", &[100.0, 150.0, 90.0, 120.0], &[10.0, 10.1, 9.9, 10.0]);
    let b = mk("b", &[110.0, 95.0, 140.0, 100.0], &[5.0, 5.1, 4.9, 5.0]);
    let c = cmp(&[a.clone(), b.clone()]);
    // Headline only: the p50 row is neither tested nor shown, and every tested row is shown.
    assert!(c.rows.iter().all(|r| r.metric != "read.lat_p50_us"));
    let tested = c
        .rows
        .iter()
        .filter(|r| r.changes.iter().flatten().any(|ch| ch.p_adjusted.is_some()))
        .count();
    assert_eq!(c.tests, tested);
    let text = to_text(&c);
    let lines = text.lines().filter(|l| l.starts_with("randread ")).count();
    assert_eq!(lines, c.rows.len(), "{text}");
    // `--metric all`: the claim is in the family and on screen, in every format.
    let o = Options {
        metrics: Metrics::All,
        ..Options::default()
    };
    let c = compare(&[a, b], &o).unwrap();
    let ch = change(&c, "read.lat_p50_us");
    assert_eq!(ch.verdict, Verdict::Better, "{}", ch.reason);
    assert!(to_text(&c).contains("read.lat_p50_us"));
    assert!(to_markdown(&c).contains("read.lat_p50_us"));
    assert!(to_csv(&c).contains("read.lat_p50_us"));
    assert!(to_json(&c).contains("read.lat_p50_us"));
}

#[test]
fn a_check_that_cannot_reach_alpha_raises_no_disagreement() {
    // The seeds' n = 3: Mann-Whitney's smallest p is 0.1, so a clear +20% "disagrees" with
    // every t-test; that note is noise.
    let c = cmp(&[
        side("a", &[100.0, 101.0, 99.0]),
        side("b", &[120.0, 121.0, 119.0]),
    ]);
    let ch = change(&c, "read.iops");
    assert_eq!(ch.verdict, Verdict::Better, "{}", ch.reason);
    assert!(ch.mann_whitney.unwrap().p >= 0.1);
    assert!(!ch.reason.contains("disagree"), "{}", ch.reason);
}

#[test]
fn p_values_are_printed_without_rounding_across_alpha() {
    use super::verdict::p_vs;
    assert_eq!(p_vs(0.04974, 0.05), "= 0.0497");
    assert_eq!(p_vs(0.0504, 0.05), "= 0.0504");
    assert_eq!(p_vs(0.2, 0.05), "= 0.200");
    assert_eq!(p_vs(0.0004, 0.05), "< 0.001");
    assert_eq!(p_vs(0.05, 0.05), "= 0.050");
}

#[test]
fn nothing_to_compare_is_an_error() {
    let a = side("a", &[1.0, 2.0, 3.0]);
    let o = Options {
        metrics: Metrics::parse(&["nosuch".into()]),
        ..Options::default()
    };
    let e = compare(&[a.clone(), a.clone()], &o).unwrap_err();
    assert!(matches!(e, CompareError::NoMetric { .. }), "{e}");
    assert!(compare(&[a], &Options::default()).is_err());
}

#[test]
fn each_side_is_compared_with_its_declared_baseline() {
    let a = side("a", &[100.0, 101.0, 99.0]);
    let mut b = side("b", &[200.0, 202.0, 198.0]);
    let mut c = side("c", &[300.0, 303.0, 297.0]);
    b.baseline = Some("a".into());
    c.baseline = Some("b".into());
    let cmp_ = cmp(&[a, b, c]);
    assert_eq!(cmp_.bases, ["a", "b"]);
    let r = cmp_.rows.iter().find(|r| r.metric == "read.iops").unwrap();
    let rel = |k: usize| r.changes[k].as_ref().unwrap().rel.unwrap();
    assert!(
        (rel(0) - 1.0).abs() < 1e-3 && (rel(1) - 0.5).abs() < 1e-3,
        "{r:?}"
    );
    assert!(to_text(&cmp_).contains("c vs b"));
    // A baseline not among the sides: the first.
    let mut d = side("d", &[100.0, 101.0, 99.0]);
    d.baseline = Some("gone".into());
    assert_eq!(cmp(&[side("a", &[1.0, 2.0]), d]).bases, ["a"]);
}
