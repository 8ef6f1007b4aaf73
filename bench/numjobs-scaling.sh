#!/usr/bin/env bash
# numjobs scaling on this 2-core VM: null and psync on a tmpfs file, numjobs 1 and 2
# (group_reporting), fiox and fio 3.33 alternating; prints median IOPS and the 2/1 ratio.
# Usage: bench/numjobs-scaling.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
secs=${2:-3}
fiox=${FIOX:-target/release/fiox}
[ -x "$fiox" ] || cargo build --release -q
iops_of() { python3 -c 'import json,sys; print(int(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'; }
declare -A got
for r in $(seq "$rounds"); do
    for case in null psync; do
        for t in "$fiox" fio; do
            tag=$(basename "$t")
            file=/dev/shm/scaling-$tag.dat
            args=(--ioengine=null --size=1g)
            [ "$case" = psync ] && args=(--ioengine=psync --size=256m "--filename=$file")
            for n in 1 2; do
                got[$case.$tag.$n]+="$("$t" --name=s "${args[@]}" --rw=randread --bs=4k \
                    --numjobs="$n" --thread --group_reporting --runtime="$secs" --time_based \
                    --output-format=json 2>/dev/null | iops_of) "
            done
        done
    done
done
rm -f /dev/shm/scaling-*.dat
for k in "${!got[@]}"; do echo "$k ${got[$k]}"; done | sort | python3 -c '
import statistics, sys
m = {}
for line in sys.stdin:
    k, *v = line.split()
    m[k] = statistics.median(int(x) for x in v)
print("case   tool   numjobs=1 IOPS   numjobs=2 IOPS   2/1")
for case in ("null", "psync"):
    for tool in sorted({k.split(".")[1] for k in m}):
        a, b = m[f"{case}.{tool}.1"], m[f"{case}.{tool}.2"]
        print(f"{case:<6} {tool:<6} {a:>14,.0f} {b:>16,.0f}   {b / a:.2f}")
'
