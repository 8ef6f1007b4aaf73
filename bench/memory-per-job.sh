#!/usr/bin/env bash
# Memory per job: peak RSS (GNU time's %M) of a null job at numjobs 1 and 64 (seed 002's
# aio-stress shape: 64 threads, 8 KiB blocks, depth 64, default statistics), for fiox and fio
# 3.33 alternately; prints the medians and the per-job cost ((RSS64 - RSS1) / 63).
# Usage: bench/memory-per-job.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
fiox=${FIOX:-target/release/fiox}
[ -x "$fiox" ] || cargo build --release -q
rss() { # tool numjobs -> peak RSS KiB
    /usr/bin/time -f "%M" "$1" --name=mem --ioengine=null --rw=randread --bs=8k --size=8m \
        --iodepth=64 --thread --numjobs="$2" --runtime=2 --time_based --group_reporting \
        --output-format=json 2>&1 >/dev/null | tail -1
}
declare -A got
for r in $(seq "$rounds"); do
    for t in "$fiox" fio; do
        for n in 1 64; do got[$t.$n]+="$(rss "$t" "$n") "; done
    done
done
python3 - "$fiox" "${got[$fiox.1]}" "${got[$fiox.64]}" "${got[fio.1]}" "${got[fio.64]}" <<'PY'
import statistics, sys
name = sys.argv[1]
m = [statistics.median(int(v) for v in a.split()) for a in sys.argv[2:6]]
print("tool   RSS numjobs=1 (MiB)   RSS numjobs=64 (MiB)   per job (KiB)")
for label, one, many in (("fiox", m[0], m[1]), ("fio", m[2], m[3])):
    print(f"{label:<6} {one / 1024:>18.1f} {many / 1024:>22.1f} {(many - one) / 63:>15.0f}")
PY
