//! fiox's statistics against scipy: `scipy_reference.py` (beside this file) computes every
//! statistic `fiox compare` prints on seeded random and hand-picked samples, and each must
//! agree to 1e-9 relative (p-values to 1e-9 absolute). Needs python3 with scipy; without it
//! the test fails and names the install command (it never skips).

use fiox_experiment::stats::{
    adjust, friedman, hedges_g, hodges_lehmann, kendall_trend, mann_whitney, mann_whitney_floor,
    paired_log, paired_t, power, ratio_ci, summary, welch, welch_log, wilcoxon, wilcoxon_floor,
    Adjust, Test,
};
use serde_json::Value;
use std::process::Command;

fn reference() -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scipy_reference.py");
    let out = Command::new("python3")
        .arg(script)
        .output()
        .unwrap_or_else(|e| {
            panic!("python3 is needed for the scipy reference ({e}); then: python3 -m pip install scipy")
        });
    assert!(
        out.status.success(),
        "{script} failed: {}\ninstall or upgrade scipy: python3 -m pip install -U scipy",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the script prints JSON")
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Relative agreement (absolute near 0).
fn check(what: &str, ours: f64, theirs: f64, case: &Value) {
    let tol = 1e-9 * theirs.abs().max(1.0);
    assert!(
        (ours - theirs).abs() <= tol,
        "{what}: fiox {ours} vs scipy {theirs} in {case}"
    );
}

fn check_pair(what: &str, ours: (f64, f64), theirs: &Value, case: &Value) {
    check(what, ours.0, f(&theirs[0]), case);
    check(what, ours.1, f(&theirs[1]), case);
}

/// The verdict's test under its model (t, p, the relative change and its CI) and its power
/// (smallest detectable change at two levels, runs needed for a 5% change).
fn check_model(what: &str, t: &Test, theirs: &Value, case: &Value) {
    check(&format!("{what} t"), t.t, f(&theirs["t"]), case);
    check(&format!("{what} p"), t.p, f(&theirs["p"]), case);
    check(&format!("{what} change"), t.rel, f(&theirs["rel"]), case);
    check_pair(&format!("{what} CI"), t.rel_ci, &theirs["rel_ci"], case);
    for level in [0.05, 0.001] {
        let pw = power(t, level, 0.05);
        let want = &theirs["power"][level.to_string()];
        check(
            &format!("{what} MDE at {level}"),
            pw.mde,
            f(&want["mde"]),
            case,
        );
        let need = want["runs_needed"].as_u64().map(|n| n as usize);
        assert_eq!(
            pw.runs_needed, need,
            "{what} runs needed at {level} in {case}"
        );
    }
}

#[test]
fn every_statistic_agrees_with_scipy() {
    let r = reference();
    let two = r["two_sample"].as_array().expect("two_sample cases");
    assert!(two.len() > 50, "too few cases");
    for c in two {
        let (a, b) = (nums(&c["a"]), nums(&c["b"]));
        for (xs, key) in [(&a, "summary_a"), (&b, "summary_b")] {
            let s = summary(xs).unwrap();
            check("mean", s.mean, f(&c[key]["mean"]), c);
            check("sd", s.sd, f(&c[key]["sd"]), c);
            check_pair("mean CI", s.ci.unwrap(), &c[key]["ci"], c);
        }
        let w = welch(&a, &b).expect("a Welch test");
        check("Welch t", w.t, f(&c["welch"]["t"]), c);
        check("Welch df", w.df, f(&c["welch"]["df"]), c);
        check("Welch p", w.p, f(&c["welch"]["p"]), c);
        check_pair("Welch diff CI", w.diff_ci, &c["welch"]["diff_ci"], c);
        check_pair(
            "ratio CI",
            ratio_ci(&a, &b, 0.95).unwrap(),
            &c["ratio_ci"],
            c,
        );
        let m = mann_whitney(&a, &b).unwrap();
        check("Mann-Whitney U", m.u, f(&c["mann_whitney"]["u"]), c);
        check("Mann-Whitney p", m.p, f(&c["mann_whitney"]["p"]), c);
        check("Hedges' g", hedges_g(&a, &b).unwrap(), f(&c["hedges_g"]), c);
        let hl = hodges_lehmann(&a, &b).unwrap();
        check("Hodges-Lehmann", hl, f(&c["hodges_lehmann"]), c);
        let wl = welch_log(&a, &b).expect("a log-scale Welch test");
        check("Welch log df", wl.df, f(&c["welch_log"]["df"]), c);
        check_model("Welch log", &wl, &c["welch_log"], c);
        let floor = mann_whitney_floor(a.len(), b.len());
        check("Mann-Whitney floor", floor, f(&c["mann_whitney_floor"]), c);
    }
    for c in r["paired"].as_array().expect("paired cases") {
        let d = nums(&c["d"]);
        let t = paired_t(&d).expect("a paired test");
        check("paired t", t.t, f(&c["t"]["t"]), c);
        check("paired p", t.p, f(&c["t"]["p"]), c);
        check_pair("paired CI", t.diff_ci, &c["t"]["diff_ci"], c);
        let w = wilcoxon(&d).expect("a Wilcoxon test");
        check("Wilcoxon W", w.w, f(&c["wilcoxon"]["w"]), c);
        check("Wilcoxon p", w.p, f(&c["wilcoxon"]["p"]), c);
        let pairs: Vec<(f64, f64)> = nums(&c["a"]).into_iter().zip(nums(&c["b"])).collect();
        let pl = paired_log(&pairs).expect("a paired log-ratio test");
        check_model("paired log", &pl, &c["paired_log"], c);
        let logs: Vec<f64> = pairs.iter().map(|(a, b)| (b / a).ln()).collect();
        let lw = wilcoxon(&logs).expect("a Wilcoxon test of log ratios");
        check(
            "Wilcoxon log W",
            lw.w,
            f(&c["paired_log"]["wilcoxon"]["w"]),
            c,
        );
        check(
            "Wilcoxon log p",
            lw.p,
            f(&c["paired_log"]["wilcoxon"]["p"]),
            c,
        );
        check(
            "Wilcoxon floor",
            wilcoxon_floor(d.len()),
            f(&c["wilcoxon_floor"]),
            c,
        );
    }
    for c in r["trend"].as_array().expect("trend cases") {
        let t = kendall_trend(&nums(&c["x"])).expect("a trend test");
        check("Kendall tau", t.tau, f(&c["tau"]), c);
        check("Kendall p", t.p, f(&c["p"]), c);
    }
    let fr = r["friedman"].as_array().expect("friedman cases");
    assert!(fr.len() > 10, "too few Friedman cases");
    for c in fr {
        let blocks: Vec<Vec<f64>> = c["blocks"].as_array().unwrap().iter().map(nums).collect();
        let t = friedman(&blocks).expect("a Friedman test");
        check("Friedman chi2", t.chi2, f(&c["chi2"]), c);
        check("Friedman p", t.p, f(&c["p"]), c);
    }
    for c in r["adjust"].as_array().expect("adjust cases") {
        let ps = nums(&c["p"]);
        for (how, key) in [(Adjust::Holm, "holm"), (Adjust::Bh, "bh")] {
            for (ours, theirs) in adjust(&ps, how).iter().zip(nums(&c[key])) {
                check(key, *ours, theirs, c);
            }
        }
    }
}
