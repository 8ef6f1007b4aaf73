//! fiox's statistics against scipy: `scipy_reference.py` (beside this file) computes every
//! statistic `fiox compare` prints on seeded random and hand-picked samples, and each must
//! agree to 1e-9 relative (p-values to 1e-9 absolute). Needs python3 with scipy; without it
//! the test fails and names the install command (it never skips).

use fiox_experiment::stats::{
    adjust, hedges_g, hodges_lehmann, kendall_trend, mann_whitney, paired_t, ratio_ci, summary,
    welch, wilcoxon, Adjust,
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
    }
    for c in r["trend"].as_array().expect("trend cases") {
        let t = kendall_trend(&nums(&c["x"])).expect("a trend test");
        check("Kendall tau", t.tau, f(&c["tau"]), c);
        check("Kendall p", t.p, f(&c["p"]), c);
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
