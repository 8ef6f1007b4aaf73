#!/usr/bin/env bash
# The history at 100,000 recorded runs (issue 47): records N synthetic fio-shaped results
# (20 jobs, read and write, 4 hosts, a new kernel every 1,000 runs) with `fiox history import`,
# then times the queries a user makes: `list` (the newest 50, and every run), `trend` of one
# job's metric and of a metric over every job, `regressions` of one job, each the median of
# 3 runs by the clock. The database lives on /dev/shm unless DB_DIR says otherwise.
# Usage: bench/history.sh [N]   (FIOX=path/to/fiox to time another build)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
n=${1:-100000}
fiox=${FIOX:-target/release/fiox}
[ -x "$fiox" ] || cargo build --release -q
work=$(mktemp -d "${DB_DIR:-/dev/shm}/fiox-bench-history.XXXXXX")
trap 'rm -rf "$work"' EXIT
export FIOX_HISTORY_DB=$work/db/history.db
mkdir -p "$work/runs"
python3 - "$n" "$work/runs" <<'PY'
import json, os, random, sys
n, out = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(47)
for i in range(n):
    sub = os.path.join(out, "%03d" % (i // 1000))
    os.makedirs(sub, exist_ok=True)
    job, host, kernel = "job-%d" % (i % 20), "host-%d" % (i % 4), "6.%d.0" % (i // 1000)
    def d(iops):
        return {"total_ios": 1000, "iops": iops, "bw": iops * 4, "lat_ns": {"mean": 1e9 / iops},
                "clat_ns": {"percentile": {"50.000000": 9e8 / iops, "99.000000": 2e9 / iops}}}
    doc = {"fio version": "fiox-bench", "timestamp": 1_700_000_000 + i * 60,
           "jobs": [{"jobname": job, "job options": {"filename": "/dev/bench%d" % (i % 2)},
                     "read": d(10000 * (1 + rnd.gauss(0, 0.03))),
                     "write": d(5000 * (1 + rnd.gauss(0, 0.03)))}],
           "fiox": {"env": {"hostname": host, "kernel": {"release": kernel}}}}
    with open(os.path.join(sub, "r%06d.json" % i), "w") as f:
        json.dump(doc, f)
PY
start=$(date +%s.%N)
"$fiox" history import "$work/runs"
end=$(date +%s.%N)
echo "import of $n runs: $(echo "$end - $start" | bc) s; database $(du -h "$FIOX_HISTORY_DB" | cut -f1)"
# t NAME ARGS...: the median wall time of 3 runs of `fiox history ARGS` (output discarded).
t() {
    local name=$1 i s e
    shift
    for i in 1 2 3; do
        s=$(date +%s.%N)
        "$fiox" history "$@" >/dev/null
        e=$(date +%s.%N)
        echo "$e - $s" | bc
    done | median | xargs printf "%-58s %6.3f s\n" "$name"
}
t "list (newest 50)" list
t "list --job job-7 --host host-3 (newest 50)" list --job job-7 --host host-3
t "list --limit=0 ($n runs)" list --limit=0
t "trend read.iops --job job-7 --host host-3 ($((n / 20)) points)" trend read.iops --job job-7 --host host-3
t "trend p99 --kernel 6.50.0 (2000 points)" trend p99 --kernel 6.50.0
t "trend iops (every run, both directions: $((2 * n)) points)" trend iops
t "regressions --job job-7 --metric iops" regressions --job job-7 --metric iops
