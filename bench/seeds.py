#!/usr/bin/env python3
"""Re-run the seeds' experiments (examples/seeds/seed000-local-*.fio, seed004-*.fio) with fiox
and, where fio can run them (libaio, posixaio; fio has no guasi engine), with fio 3.33, and print
one markdown table per experiment.

Each row is one job-file section run alone (--section) with JSON output. Columns:
  r/w IOPS        read and write IOPS
  r/w slat, clat  mean submission and completion latency (us)
  slat/lat        read mean slat as a share of read mean lat (the advice module's first test)
  submit busy     sum of slat over the run time: the share of the run the submitting thread was
                  inside submit calls (the advice module's second test; >100% when one call
                  submits several I/Os, since each I/O's slat covers the whole call)
  paced           Little's law: mean depth x mean slat / mean lat (both directions): the share of
                  each I/O's life the submitter spent in submit calls; near 100% = submission
                  paced the job (advice.rs's pacing test, the one it uses)
  ctx             context switches of the job (fio's ctx)
  load            1-minute load average when the run started (other work on the machine)
  warnings        fiox's warning codes for the job (fio has none)
  advice          what crates/stats/src/advice.rs concludes from this row's numbers (its rules
                  are mirrored in advice() below, so fio's runs are judged too): buffered-libaio
                  (blocked / inconclusive) or sync-submission, "-" for nothing

The disk files are created in a scratch directory (--dir, default a new one under /var/tmp) and
removed at the end; /dev/shm/seed000-rd.dat is removed only if this script created it.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEEDS = os.path.join(ROOT, "examples", "seeds")
RD_FILE = "/dev/shm/seed000-rd.dat"

# (table, job file, section, tools). "fio" only where fio has the engine.
# fio 3.33 hangs on io_submit_mode=offload jobs with a runtime here, so offload rows are fiox's.
S000_DISK = [
    ("libaio-buffered", ("fio", "fiox")),
    ("libaio-offload", ("fiox",)),
    ("libaio-direct", ("fio", "fiox")),
    ("guasi-offload", ("fiox",)),
    ("guasi-inline", ("fiox",)),
    ("guasi-kick-each", ("fiox",)),
    ("guasi-reap-runs", ("fiox",)),
]
S000_RD = [
    ("libaio-buffered", ("fio", "fiox")),
    ("libaio-offload", ("fiox",)),
    ("guasi-offload", ("fiox",)),
    ("guasi-inline", ("fiox",)),
    ("guasi-kick-each", ("fiox",)),
    ("guasi-reap-runs", ("fiox",)),
]
S004 = [
    ("guasi-qd8", ("fiox",)),
    ("libaio-qd8", ("fio", "fiox")),
    ("guasi-qd100", ("fiox",)),
    ("libaio-qd100", ("fio", "fiox")),
    ("guasi-qd1000", ("fiox",)),
    ("libaio-qd1000", ("fio", "fiox")),
    ("guasi-inline-qd100", ("fiox",)),
    ("posixaio-qd100", ("fio", "fiox")),
]
EXPERIMENTS = [
    ("seed 000, disk (ext4 file, 200 MiB, 4k randrw, QD32)", "seed000-local-disk.fio", S000_DISK),
    ("seed 000, ramdisk (tmpfs file, 1700 MiB, 4k randrw, QD32)", "seed000-local-tmpfs.fio", S000_RD),
    ("seed 004, direct=1 (ext4 file, 1 GiB, 4k randrw)", "seed004-direct.fio", S004),
    ("seed 004, buffered (ext4 file, 1 GiB, 4k randrw)", "seed004-buffered.fio", S004),
]


def load_json(path):
    """A tool's JSON output; text before the first '{' (notes) is skipped."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    start = text.find("{")
    if start < 0:
        raise ValueError(f"{path}: no JSON object")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def dir_figures(d):
    """One direction: iops, mean slat/clat/lat in us (None if not recorded), slat sum, runtime."""
    slat, clat, lat = d.get("slat_ns", {}), d.get("clat_ns", {}), d.get("lat_ns", {})
    slat_n = slat.get("N", 0)
    return {
        "iops": d.get("iops", 0.0),
        "slat": slat.get("mean", 0.0) / 1000 if slat_n else None,
        "clat": clat.get("mean", 0.0) / 1000 if clat.get("N", 0) else None,
        "lat": lat.get("mean", 0.0) / 1000 if lat.get("N", 0) else None,
        "slat_sum_ns": slat.get("mean", 0.0) * slat_n,
        "runtime_ms": d.get("runtime", 0),
        "ios": d.get("total_ios", 0),
    }


# advice.rs thresholds (SLAT_SHARE_BLOCKING, SUBMIT_PACED_BLOCKING, MIN_BLOCKING_SLAT_NS in us,
# DEPTH1_STUCK, INLINE_COMPLETION_SHARE) and queued engines; keep in step with the Rust module.
SLAT_SHARE, PACED, MIN_SLAT_US, DEPTH1, INLINE = 0.30, 0.80, 10.0, 0.90, 0.50
QUEUED = ("libaio", "io_uring", "posixaio", "guasi", "threads")


def mean_depth(levels, iodepth):
    """advice::mean_depth from fio's JSON iodepth_level percentages (bucket lower edges)."""
    edges = {"1": 1, "2": 2, "4": 4, "8": 8, "16": 16, "32": 32, ">=64": iodepth}
    total = sum(levels.get(k, 0.0) for k in edges)
    if not total:
        return float(iodepth)
    return sum(levels.get(k, 0.0) * min(v, iodepth) for k, v in edges.items()) / total


def pacing(dirs, depth):
    """advice::pacing: depth x mean slat / mean lat over both directions (None without slat)."""
    ev = [d for d in dirs if d["slat"] is not None and d["lat"] and d["ios"]]
    n = sum(d["ios"] for d in ev)
    if not n:
        return None
    slat = sum(d["slat"] * d["ios"] for d in ev) / n
    lat = sum(d["lat"] * d["ios"] for d in ev) / n
    return depth * slat / lat


def verdict(dirs, paced, depth1):
    """advice::verdict on a row: 'blocked', 'inconclusive' or 'no data'."""
    if depth1 is not None and depth1 >= DEPTH1:
        return "blocked"
    ev = [d for d in dirs if d["slat"] is not None and d["ios"]]
    if not ev or paced is None:
        return "no data"
    share = lambda d: d["slat"] / d["lat"] if d["lat"] else 0.0
    top = max(ev, key=share)
    slowest = max(ev, key=lambda d: d["slat"])
    if share(top) >= SLAT_SHARE and top["slat"] >= MIN_SLAT_US:
        return "blocked"
    if paced >= PACED and slowest["slat"] >= MIN_SLAT_US:
        return "blocked"
    if share(top) >= INLINE:
        return "blocked"
    return "inconclusive"


def advice(opts, dirs, paced, depth1):
    """advice::analyze on a row: the warning code (with the verdict for buffered-libaio)."""
    engine = opts.get("ioengine", "psync").strip().lower()
    depth = int(opts.get("iodepth", "1") or 1)
    direct = opts.get("direct", "0") in ("1", "true") or opts.get("buffered", "1") in ("0", "false")
    if depth <= 1 or engine not in QUEUED:
        return "-"
    v = verdict(dirs, paced, depth1)
    if engine == "libaio" and not direct:
        return f"buffered-libaio ({v})"
    return "sync-submission" if v == "blocked" else "-"


def figures(doc):
    """Row figures of the first job of a JSON document."""
    job = doc["jobs"][0]
    opts = dict(doc.get("global options") or {})
    opts.update(job.get("job options") or {})
    r, w = dir_figures(job["read"]), dir_figures(job["write"])
    busy = 0.0
    for d in (r, w):
        if d["runtime_ms"]:
            busy += d["slat_sum_ns"] / (d["runtime_ms"] * 1e6)
    share = r["slat"] / r["lat"] if r["slat"] is not None and r["lat"] else None
    warns = [w_["code"] for w_ in job.get("fiox", {}).get("warnings", [])]
    levels = job.get("iodepth_level", {})
    depth = int(opts.get("iodepth", "1") or 1)
    paced = pacing((r, w), mean_depth(levels, depth))
    d1 = levels.get("1")
    return {
        "paced": paced,
        "advice": advice(opts, (r, w), paced, None if d1 is None else d1 / 100),
        "r": r,
        "w": w,
        "share": share,
        "busy": busy,
        "ctx": job.get("ctx", 0),
        "cpu": (job.get("usr_cpu", 0.0), job.get("sys_cpu", 0.0)),
        "error": job.get("error", 0),
        "warnings": warns,
    }


def fmt_us(v):
    if v is None:
        return "-"
    if v < 10:
        return f"{v:.2f}"
    if v < 10000:
        return f"{v:.0f}"
    return f"{v / 1000:.1f}ms"


def fmt_pct(v):
    return "-" if v is None else (f"{v * 100:.1f}%" if v < 0.1 else f"{v * 100:.0f}%")


def run_one(tool_path, jobfile, section, cwd, out):
    """Run one section; returns (figures or None, note, load1, wall seconds)."""
    load1 = os.getloadavg()[0]
    args = [tool_path, "--output-format=json", f"--output={out}", f"--section={section}", jobfile]
    if os.path.basename(tool_path).startswith("fiox"):
        # The data files live in this script's own scratch directory and fio may have laid
        # them out first; fiox refuses to write over files it did not create unless told so.
        args.insert(1, "--allow-destructive")
    t0 = time.monotonic()
    try:
        p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return None, "timed out", load1, time.monotonic() - t0
    wall = time.monotonic() - t0
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"exit {p.returncode}: {msg}", load1, wall
    try:
        return figures(load_json(out)), "", load1, wall
    except (ValueError, KeyError, IndexError) as e:
        return None, f"unreadable JSON: {e}", load1, wall


HEADER = ("| run | tool | r IOPS | w IOPS | r slat us | r clat us | w slat us | w clat us "
          "| r slat/lat | submit busy | paced | ctx | usr/sys % | load | warnings | advice |")
RULE = "|" + "---|" * 16


def row(section, tool, f, note, load1):
    if f is None:
        return f"| {section} | {tool} | failed: {note} |" + " |" * 13
    r, w = f["r"], f["w"]
    cpu = f"{f['cpu'][0]:.0f}/{f['cpu'][1]:.0f}"
    warns = ", ".join(f["warnings"]) if tool == "fiox" else "n/a"
    err = f" (err {f['error']})" if f["error"] else ""
    return (f"| {section}{err} | {tool} | {r['iops']:.0f} | {w['iops']:.0f} | {fmt_us(r['slat'])} "
            f"| {fmt_us(r['clat'])} | {fmt_us(w['slat'])} | {fmt_us(w['clat'])} "
            f"| {fmt_pct(f['share'])} | {fmt_pct(f['busy'])} | {fmt_pct(f['paced'])} | {f['ctx']} | {cpu} "
            f"| {load1:.1f} | {warns or '-'} | {f['advice']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fiox", default=os.environ.get("FIOX", os.path.join(ROOT, "target", "release", "fiox")))
    ap.add_argument("--fio", default=os.environ.get("FIO", shutil.which("fio") or ""))
    ap.add_argument("--dir", help="scratch directory on the disk under test (default: new one under /var/tmp)")
    ap.add_argument("--keep-json", help="copy every JSON output into this directory")
    ap.add_argument("--only", help="run only experiments whose job file contains this text")
    a = ap.parse_args()
    if not os.access(a.fiox, os.X_OK):
        sys.exit(f"seeds.py: fiox binary {a.fiox} not found (set FIOX or build with cargo build --release)")
    tools = {"fiox": os.path.abspath(a.fiox)}
    if a.fio and os.access(a.fio, os.X_OK):
        tools["fio"] = a.fio
    else:
        print("note: fio not found: fio baselines are skipped", file=sys.stderr)
    made_dir = a.dir is None
    scratch = a.dir or tempfile.mkdtemp(prefix="fiox-seeds.", dir="/var/tmp")
    os.makedirs(scratch, exist_ok=True)
    rd_preexisting = os.path.exists(RD_FILE)
    outdir = tempfile.mkdtemp(prefix="fiox-seeds-json.")
    print(machine_note(scratch))
    try:
        for title, jobfile, sections in EXPERIMENTS:
            if a.only and a.only not in jobfile:
                continue
            run_experiment(title, jobfile, sections, tools, scratch, outdir)
    finally:
        cleanup(scratch, made_dir, rd_preexisting)
        if a.keep_json:
            os.makedirs(a.keep_json, exist_ok=True)
            for n in os.listdir(outdir):
                shutil.copy(os.path.join(outdir, n), a.keep_json)
        shutil.rmtree(outdir)


def clean_page_cache():
    """Write back dirty pages and drop the page cache (root only; otherwise only the sync)."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        pass


def run_experiment(title, jobfile, sections, tools, scratch, outdir):
    path = os.path.join(SEEDS, jobfile)
    print(f"\n### {title}\n\n`{jobfile}`, one section per row (`--section=NAME`)\n")
    print(HEADER)
    print(RULE, flush=True)
    for i, (section, want) in enumerate(sections):
        # Alternate which tool runs first, and start every run from a clean page cache: a
        # buffered run right after another finds the pages that one dirtied still cached (the
        # job's start-of-run DONTNEED cannot drop dirty pages).
        order = [t for t in want if t in tools]
        if i % 2:
            order.reverse()
        rows = {}
        for tool in order:
            clean_page_cache()
            out = os.path.join(outdir, f"{jobfile[:-4]}.{section}.{tool}.json")
            f, note, load1, _wall = run_one(tools[tool], path, section, scratch, out)
            rows[tool] = row(section, tool, f, note, load1)
        for tool in want:
            if tool in rows:
                print(rows[tool], flush=True)


def machine_note(scratch):
    fs = subprocess.run(["df", "-T", scratch, "/dev/shm"], capture_output=True, text=True).stdout
    types = [ln.split()[1] for ln in fs.splitlines()[1:] if len(ln.split()) > 1]
    return (f"machine: {os.cpu_count()} CPUs, kernel {os.uname().release}, scratch {scratch} "
            f"({types[0] if types else '?'}), /dev/shm ({types[1] if len(types) > 1 else '?'}), "
            f"load {os.getloadavg()[0]:.1f} at start")


def cleanup(scratch, made_dir, rd_preexisting):
    """Remove only what the runs created."""
    for name in ("seed000-disk.dat", "seed004.dat"):
        p = os.path.join(scratch, name)
        if os.path.exists(p):
            os.remove(p)
    if made_dir:
        try:
            os.rmdir(scratch)
        except OSError as e:
            print(f"note: left {scratch}: {e}", file=sys.stderr)
    if not rd_preexisting and os.path.exists(RD_FILE):
        os.remove(RD_FILE)


if __name__ == "__main__":
    main()
