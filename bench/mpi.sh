#!/usr/bin/env bash
# The cost of fiox's MPI layer (results in BENCHMARKS.md): the same null-engine work as 4 MPI
# ranks of one job (mpirun -np 4) and as one process with numjobs=4, alternating, ROUNDS times.
# Two shapes: a fixed amount of I/O (what a run costs from launch to report: mpirun's start,
# MPI_Init, the barriers, the reduction) and a time-based run (the throughput while the ranks
# exchange their state every 10 ms). Needs a release build with the mpi feature:
#   cargo build --release --features mpi
# Prints one line per run: shape, how, wall seconds, IOPS reported, run= (ms) reported.
set -euo pipefail
cd "$(dirname "$0")/.."
FIOX=${FIOX:-target/release/fiox}
ROUNDS=${ROUNDS:-5}
common=(--ioengine=null --bs=4k --group_reporting --output-format=json)
fixed=(--size=2g)
timed=(--size=1g --time_based --runtime=3)
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 4)

one() { # shape how cmd...
    local shape=$1 how=$2
    shift 2
    local t0 t1 out
    t0=$(date +%s.%N)
    out=$("$@")
    t1=$(date +%s.%N)
    python3 - "$shape" "$how" "$t0" "$t1" "$out" <<'EOF'
import json, sys
shape, how, t0, t1, out = sys.argv[1:]
d = json.loads(out)
j = d["jobs"][0]["read"]
print(f"{shape:6} {how:9} wall={float(t1) - float(t0):.3f}s iops={j['iops']:.0f} run={j['runtime']}ms")
EOF
}

for r in $(seq "$ROUNDS"); do
    for shape in fixed timed; do
        declare -n extra=$shape
        if [ $((r % 2)) -eq 1 ]; then
            one "$shape" numjobs=4 "$FIOX" --name=n --numjobs=4 "${common[@]}" "${extra[@]}"
            one "$shape" mpi-np4 "${mpirun[@]}" "$FIOX" --name=n "${common[@]}" "${extra[@]}"
        else
            one "$shape" mpi-np4 "${mpirun[@]}" "$FIOX" --name=n "${common[@]}" "${extra[@]}"
            one "$shape" numjobs=4 "$FIOX" --name=n --numjobs=4 "${common[@]}" "${extra[@]}"
        fi
    done
done
