#!/usr/bin/env bash
# A/B of two fiox builds on the io_uring floor job (bench/uring-user.sh's job), alternating
# in each round on one direct-I/O loop device: user and system ns per I/O of each run, from
# /usr/bin/time over the I/Os the run reports. User time is charged in 4 ms ticks: use rounds
# of 8 s or more and read the spread, not one figure.
# Usage: bench/ab-uring.sh OLD NEW [ROUNDS [SECONDS [extra fiox options...]]]; DEPTH (32),
# BATCH (8). Needs root (a fiox loop testbed over /dev/shm).
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1") new=$(realpath "$2")
rounds=${3:-4} secs=${4:-8}
shift $(($# < 4 ? $# : 4))
depth=${DEPTH:-32} batch=${BATCH:-8}
scratch=$(mktemp -d /dev/shm/fiox-ab.XXXXXX)
trap '"$new" testbed down ab-uring >/dev/null 2>&1; rm -rf "$scratch"' EXIT
dev=$("$new" testbed up loop --name=ab-uring --size=1g --direct_io=on --dir="$scratch" | awk '{print $3}')
for _ in $(seq "$rounds"); do
    for bin in "$old" "$new"; do
        /usr/bin/time -f "%U %S" -o "$scratch/time" "$bin" --name=u --ioengine=io_uring \
            --rw=randread --bs=4k --filename="$dev" --direct=1 --iodepth="$depth" \
            --iodepth_batch_submit="$batch" --iodepth_batch_complete_min="$batch" \
            --iodepth_batch_complete_max="$depth" --fixedbufs --registerfiles --time_based \
            --runtime="$secs" --output-format=json "$@" >"$scratch/out.json"
        python3 - "$bin" "$scratch/time" "$scratch/out.json" <<'PY'
import json, sys
ios = json.load(open(sys.argv[3]))["jobs"][0]["read"]["total_ios"]
u, s = map(float, open(sys.argv[2]).read().split())
print(f"{sys.argv[1]:<40} user {u * 1e9 / ios:6.1f} ns/IO  sys {s * 1e9 / ios:6.0f} ns/IO")
PY
    done
done
