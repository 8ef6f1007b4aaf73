#!/usr/bin/env python3
"""Reference values for every statistic `fiox compare` prints, from scipy (and numpy for the
few with no scipy function: the log-ratio CI, Hedges' g, Hodges-Lehmann, Holm and BH written
out from their textbook definitions). Prints one JSON document on stdout: a list of cases,
each with its inputs and scipy's answers. tests/scipy_reference.rs runs this script and
compares fiox's numbers to these.

Cases are seeded random samples (normal, lognormal, rounded so that ties occur) of 2 to 12
values a side, plus the report's hand-picked ones. The Wilcoxon cases avoid ties and zeros at
small n (scipy's handling there changed between versions) and use n > 50 for the normal
approximation. Needs scipy 1.11 or later (checked with 1.17.1).

usage: python3 scipy_reference.py > reference.json
"""
import json
import sys

try:
    import numpy as np
    import scipy
    from scipy import stats
except ImportError as e:  # the Rust test names the install command
    sys.stderr.write(f"scipy is missing ({e}): python3 -m pip install scipy\n")
    sys.exit(3)
# ttest_ind's and ttest_rel's confidence_interval() and df came with scipy 1.11.
if tuple(int(x) for x in scipy.__version__.split(".")[:2]) < (1, 11):
    sys.stderr.write(f"scipy {scipy.__version__} is older than 1.11: python3 -m pip install -U scipy\n")
    sys.exit(3)


def none_if_nan(x):
    x = float(x)
    return None if np.isnan(x) or np.isinf(x) else x


def summary(x):
    x = np.asarray(x, float)
    m = x.mean()
    sd = x.std(ddof=1)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=m, scale=sd / np.sqrt(len(x)))
    return {"mean": m, "sd": sd, "ci": [lo, hi]}


def ratio_ci(a, b):
    """CI of mean(b)/mean(a) - 1 from the log ratio, delta method, Welch-Satterthwaite df."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    va = (a.std(ddof=1) / a.mean()) ** 2 / len(a)
    vb = (b.std(ddof=1) / b.mean()) ** 2 / len(b)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    h = stats.t.ppf(0.975, df) * np.sqrt(va + vb)
    l = np.log(b.mean() / a.mean())
    return [np.exp(l - h) - 1, np.exp(l + h) - 1]


def hedges_g(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    na, nb = len(a), len(b)
    pooled = ((na - 1) * a.var(ddof=1) + (nb - 1) * b.var(ddof=1)) / (na + nb - 2)
    return (b.mean() - a.mean()) / np.sqrt(pooled) * (1 - 3 / (4 * (na + nb) - 9))


def holm(ps):
    m = len(ps)
    order = np.argsort(ps, kind="stable")
    out, run = [0.0] * m, 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (m - k) * ps[i]))
        out[i] = run
    return out


def bh(ps):
    if hasattr(stats, "false_discovery_control"):
        return list(stats.false_discovery_control(ps, method="bh"))
    m = len(ps)
    order = np.argsort(ps, kind="stable")
    out, run = [0.0] * m, 1.0
    for k in range(m - 1, -1, -1):
        i = order[k]
        run = min(run, min(1.0, m / (k + 1) * ps[i]))
        out[i] = run
    return out


RUNS_CAP = 200
POWER = 0.8


def power(t, se, df, model, sd_a, sd_b, scale=1.0):
    """The change found with 80% power at levels 0.05 and 0.001 (the smallest detectable
    change), and the runs a side needed for a 5% change: the smallest n in 2..RUNS_CAP with
    (t_(1-level/2) + t_0.8) * se(n) <= delta (None beyond the cap)."""
    out = {}
    for level in (0.05, 0.001):
        m = (stats.t.ppf(1 - level / 2, df) + stats.t.ppf(POWER, df)) * se
        mde = m / scale if model == "raw" else np.exp(m) - 1
        delta = 0.05 * scale if model == "raw" else np.log(1.05)
        need = None
        for n in range(2, RUNS_CAP + 1):
            if model == "paired":
                d, var = n - 1, sd_a**2
            else:
                d, var = 2 * n - 2, sd_a**2 + sd_b**2
            q = stats.t.ppf(1 - level / 2, d) + stats.t.ppf(POWER, d)
            if q * np.sqrt(var / n) <= delta:
                need = n
                break
        out[str(level)] = {"mde": mde, "runs_needed": need}
    return out


def welch_log(a, b):
    la, lb = np.log(a), np.log(b)
    w = stats.ttest_ind(lb, la, equal_var=False)
    ci = w.confidence_interval(0.95)
    est = lb.mean() - la.mean()
    se = np.sqrt(la.var(ddof=1) / len(la) + lb.var(ddof=1) / len(lb))
    return {"t": w.statistic, "df": w.df, "p": w.pvalue, "rel": np.exp(est) - 1,
            "rel_ci": [np.exp(ci.low) - 1, np.exp(ci.high) - 1],
            "power": power(w.statistic, se, w.df, "welch", la.std(ddof=1), lb.std(ddof=1))}


def two_sample(a, b):
    w = stats.ttest_ind(b, a, equal_var=False)
    ci = w.confidence_interval(0.95)
    u = stats.mannwhitneyu(a, b, alternative="two-sided", method="auto")
    return {
        "a": a, "b": b,
        "summary_a": summary(a), "summary_b": summary(b),
        "welch": {"t": w.statistic, "df": w.df, "p": w.pvalue, "diff_ci": [ci.low, ci.high]},
        "ratio_ci": ratio_ci(a, b),
        "mann_whitney": {"u": u.statistic, "p": u.pvalue},
        "hedges_g": hedges_g(a, b),
        "hodges_lehmann": float(np.median(np.subtract.outer(b, a))),
        "welch_log": welch_log(np.asarray(a), np.asarray(b)),
        # Mann-Whitney's smallest p at these sizes: two samples that do not overlap.
        "mann_whitney_floor": stats.mannwhitneyu(
            np.arange(len(a)), np.arange(len(b)) + len(a), method="exact").pvalue,
    }


def paired(a, b):
    d = list(np.subtract(b, a))
    t = stats.ttest_rel(b, a)
    ci = t.confidence_interval(0.95)
    wx = stats.wilcoxon(d)
    # The verdict's test when rounds pair: the paired t of per-round log ratios.
    la, lb = np.log(a), np.log(b)
    lt = stats.ttest_rel(lb, la)
    lci = lt.confidence_interval(0.95)
    dl = lb - la
    se = dl.std(ddof=1) / np.sqrt(len(dl))
    lwx = stats.wilcoxon(dl)
    return {"a": a, "b": b, "d": d,
            "t": {"t": t.statistic, "p": t.pvalue, "diff_ci": [ci.low, ci.high]},
            "wilcoxon": {"w": wx.statistic, "p": wx.pvalue},
            "paired_log": {"t": lt.statistic, "p": lt.pvalue, "rel": np.exp(dl.mean()) - 1,
                           "rel_ci": [np.exp(lci.low) - 1, np.exp(lci.high) - 1],
                           "power": power(lt.statistic, se, len(dl) - 1, "paired",
                                          dl.std(ddof=1), dl.std(ddof=1)),
                           "wilcoxon": {"w": lwx.statistic, "p": lwx.pvalue}},
            # The signed-rank test's smallest p with this many pairs: every sign the same.
            "wilcoxon_floor": stats.wilcoxon(np.arange(1, len(d) + 1)).pvalue}


def trend(x):
    k = stats.kendalltau(np.arange(len(x)), x)
    return {"x": x, "tau": k.statistic, "p": k.pvalue}


def main():
    rng = np.random.default_rng(2026)
    cases = {"two_sample": [], "paired": [], "trend": [], "adjust": [], "friedman": []}
    fixed = [
        ([8015, 8102, 7950, 8060, 7990], [8136, 8210, 8090, 8175, 8150]),
        ([1, 2, 2, 3, 4, 5, 5, 6, 7, 9], [3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12, 14]),
        ([100, 400, 1000], [50, 60, 70]),
        ([1987, 1110, 1987, 1987, 1987], [2023, 2026, 2026, 2026, 2018]),
    ]
    for a, b in fixed:
        cases["two_sample"].append(two_sample([float(x) for x in a], [float(x) for x in b]))
    for i in range(60):
        na, nb = int(rng.integers(2, 13)), int(rng.integers(2, 13))
        kind = i % 3
        if kind == 0:
            a = rng.normal(1000, 30, na)
            b = rng.normal(1000 * rng.choice([1.0, 1.05, 1.2]), 30, nb)
        elif kind == 1:
            a = rng.lognormal(5, 0.3, na)
            b = rng.lognormal(5.1, 0.3, nb)
        else:  # quantised: ties within and across sides
            a = np.round(rng.normal(20, 2, na))
            b = np.round(rng.normal(21, 2, nb))
        a, b = [float(x) for x in a], [float(x) for x in b]
        if np.std(a) == 0 and np.std(b) == 0:
            continue
        cases["two_sample"].append(two_sample(a, b))
    for i in range(30):
        n = int(rng.integers(3, 13)) if i % 5 else 60
        a = rng.normal(1000, 30, n)
        b = a + rng.normal(10, 15, n)
        if i % 5 == 0:  # n > 50: the normal approximation, with ties in |d|
            b = a + np.round(rng.normal(3, 3, n))
        a, b = [float(x) for x in a], [float(x) for x in b]
        if i % 5 and len(set(np.abs(np.subtract(b, a)))) < n:
            continue
        cases["paired"].append(paired(a, b))
    for i in range(30):
        n = int(rng.integers(3, 40))
        x = rng.normal(0, 1, n) + np.arange(n) * rng.choice([0.0, 0.1, 0.5])
        if i % 4 == 0:
            x = np.round(x)
        cases["trend"].append(trend([float(v) for v in x]))
    for i in range(10):
        ps = [float(p) for p in rng.uniform(0, 0.2, int(rng.integers(1, 30)))]
        cases["adjust"].append({"p": ps, "holm": holm(ps), "bh": bh(ps)})
    for i in range(30):
        # Blocks (rows) x rounds (columns), some with a round effect, some quantised (ties).
        n, k = int(rng.integers(2, 13)), int(rng.integers(3, 9))
        x = rng.normal(0, 1, (n, k)) + np.arange(k) * rng.choice([0.0, 0.3, 1.0])
        if i % 3 == 0:
            x = np.round(x)
        if any(len(set(row)) == 1 for row in x):
            continue
        f = stats.friedmanchisquare(*x.T)
        cases["friedman"].append({"blocks": x.tolist(), "chi2": f.statistic, "p": f.pvalue})
    json.dump(cases, sys.stdout, default=none_if_nan)


if __name__ == "__main__":
    main()
