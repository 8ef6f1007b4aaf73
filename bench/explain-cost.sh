#!/usr/bin/env bash
# The cost of --explain (issue 26): 4 KiB random reads at QD8 with libaio (direct) on a loop
# device over a /dev/shm file (a fiox testbed), with and without --explain, in alternating
# rounds. Prints each round's IOPS and the job thread's CPU time per I/O (usr+sys: the
# programs on the submitting and reaping syscalls run on that thread) and the medians; the
# target is at most 5% fewer IOPS.
# Needs root (loop device, BPF). Usage: sudo bench/explain-cost.sh [ROUNDS] [SECONDS]
# (FIOX=path/to/fiox uses that binary instead of building target/release/fiox; BASE=path/to/
# another fiox adds a third arm, that binary with --explain, to compare two versions of it.
# STATS=1 then runs each version once more with kernel.bpf_stats_enabled=1 and prints each
# program's run time per run and per I/O: the difference of two `bpftool prog show`
# snapshots SECONDS apart in a run SECONDS + 4 long, divided by the run's IOPS times the
# time between them; the stats' own clock reads are included. EXPLAIN=--explain=full (or
# any --explain=MODE) measures that mode instead of the default windows.)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
secs=${2:-5}
if [ -z "${FIOX:-}" ]; then
    cargo build --release -q
fi
fiox=${FIOX:-target/release/fiox}
name=explain-cost-$$
trap '"$fiox" testbed down "$name" >/dev/null 2>&1 || true' EXIT
dev=$("$fiox" testbed up loop --name "$name" --size 1g --dir /dev/shm | awk '{print $3}')
job=(--name=cost --ioengine=libaio --direct=1 --iodepth=8 --rw=randread --bs=4k
     "--filename=$dev" "--runtime=$secs" --time_based --output-format=json)
# "IOPS,CPU-us-per-I/O" of a JSON result.
iops_of() {
    python3 -c 'import json,sys
j = json.load(sys.stdin)["jobs"][0]
n = j["read"]["total_ios"]
cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1000 / n
print("%d,%.2f" % (j["read"]["iops"], cpu))'
}
off=(); on=(); base=()
for r in $(seq "$rounds"); do
    order=(off on)
    [ $((r % 2)) -eq 0 ] && order=(on off)
    [ -n "${BASE:-}" ] && order+=(base)
    for t in "${order[@]}"; do
        case $t in
            off) off+=("$("$fiox" "${job[@]}" | iops_of)") ;;
            on) on+=("$("$fiox" "${job[@]}" "${EXPLAIN:---explain}" | iops_of)") ;;
            base) base+=("$("$BASE" "${job[@]}" --explain | iops_of)") ;;
        esac
    done
done
uptime
python3 - "${off[*]}" "${on[*]}" "${base[*]}" <<'PY'
import statistics, sys
off, on, base = ([tuple(float(x) for x in v.split(",")) for v in a.split()] for a in sys.argv[1:4])
for name, runs in (("without --explain", off), ("with --explain", on)):
    print(f"{name:18} IOPS {[int(r[0]) for r in runs]}  CPU us/IO {[r[1] for r in runs]}")
mo, mn = (statistics.median(r[0] for r in x) for x in (off, on))
co, cn = (statistics.median(r[1] for r in x) for x in (off, on))
print(f"median IOPS without {mo:.0f}, with {mn:.0f}: {100 * (mn - mo) / mo:+.1f}%")
print(f"median CPU per I/O without {co:.2f} us, with {cn:.2f} us: {cn - co:+.2f} us")
# Rounds are paired (run back to back, order alternating): the mean of the per-round log
# ratios with a 95% t interval says whether a set resolves the 5% at all (an interval wider
# than +-5% does not).
if len(off) >= 3:
    import math
    d = [math.log(b[0] / a[0]) for a, b in zip(off, on)]
    n = len(d)
    t95 = {2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23}
    half = t95.get(n - 1, 2.0) * statistics.stdev(d) / math.sqrt(n)
    m = statistics.fmean(d)
    pct = lambda x: 100 * (math.exp(x) - 1)
    print(f"paired IOPS change {pct(m):+.1f}%, 95% interval [{pct(m - half):+.1f}%, {pct(m + half):+.1f}%] over {n} pairs")
if base:
    print(f"BASE with --explain: IOPS {[int(r[0]) for r in base]}  CPU us/IO {[r[1] for r in base]}")
    mb, cb = statistics.median(r[0] for r in base), statistics.median(r[1] for r in base)
    print(f"median IOPS {mb:.0f} ({100 * (mb - mo) / mo:+.1f}%), CPU per I/O {cb:.2f} us ({cb - co:+.2f} us)")
PY
if [ -n "${STATS:-}" ]; then
    snap() { bpftool prog show 2>/dev/null | python3 -c 'import re,sys
for m in re.finditer(r"(?:raw_tracepoint|tracing)\s+name (\S+).*?run_time_ns (\d+) run_cnt (\d+)", sys.stdin.read()):
    print(m.group(1), m.group(2), m.group(3))'; }
    sysctl -q kernel.bpf_stats_enabled=1
    for bin in ${BASE:+"$BASE"} "$fiox"; do
        out=$(mktemp)
        # A longer run, so that both snapshots (each can take a second on a loaded machine)
        # fall inside it; each snapshot's time is the middle of its bpftool call.
        arg=--explain
        [ "$bin" = "$fiox" ] && arg=${EXPLAIN:---explain}
        "$bin" "${job[@]}" --runtime=$((secs + 4)) "$arg" > "$out" &
        sleep 1
        t0=$(date +%s.%N); a=$(snap); t1=$(date +%s.%N)
        sleep "$secs"
        t2=$(date +%s.%N); b=$(snap); t3=$(date +%s.%N)
        t1=$(python3 -c "print(($t0 + $t1) / 2)"); t2=$(python3 -c "print(($t2 + $t3) / 2)")
        wait
        echo "programs of $bin (bpf_stats, per run and per I/O):"
        python3 - "$a" "$b" "$t1" "$t2" "$(iops_of < "$out")" <<'PY'
import sys
snap = lambda t: {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in t.splitlines() if l.strip()}
a, b = snap(sys.argv[1]), snap(sys.argv[2])
ios = float(sys.argv[5].split(",")[0]) * (float(sys.argv[4]) - float(sys.argv[3]))
tot = 0
for name, (ns, cnt) in b.items():
    dns, dcnt = ns - a.get(name, (0, 0))[0], cnt - a.get(name, (0, 0))[1]
    if dcnt:
        tot += dns / ios
        print(f"  {name:18} {dns / dcnt:6.0f} ns/run {dcnt / ios:5.2f} runs/IO {dns / ios:6.0f} ns/IO")
print(f"  total {tot:.0f} ns per I/O")
PY
        rm -f "$out"
    done
    sysctl -q kernel.bpf_stats_enabled=0
fi
