#!/usr/bin/env bash
# Where fiox's user instructions per I/O go on the io_uring floor job (bench/uring-floor.sh's
# job: 4 KiB random reads, DEPTH deep in batches of BATCH, fixed buffers, registered files),
# by function (inlined code counts in the function it was inlined into): cachegrind of two
# runs, io_size 32m and 160m, and the difference over the difference in I/Os (32,768), so
# the start-up cancels. A queued job's batching varies a little from run to run under
# valgrind: compare builds over several alternating runs.
# Usage: bench/uring-functions.sh [fiox binary [extra fiox options...]]; DEPTH (32), BATCH (8),
# ENGINE (io_uring), TOP (15). Needs root (a fiox loop testbed over /dev/shm) and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
fiox=$(realpath "${1:-target/release/fiox}")
shift $(($# < 1 ? $# : 1))
depth=${DEPTH:-32} batch=${BATCH:-8} engine=${ENGINE:-io_uring} top=${TOP:-15}
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
scratch=$(mktemp -d /dev/shm/fiox-functions.XXXXXX)
trap '"$fiox" testbed down uring-functions >/dev/null 2>&1; rm -rf "$scratch"' EXIT
dev=$("$fiox" testbed up loop --name=uring-functions --size=1g --direct_io=on --dir="$scratch" | awk '{print $3}')
for size in 32m 160m; do
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$scratch/cg.$size" \
        --log-file="$scratch/log" -- "$fiox" --name=floor --rw=randread --bs=4k \
        --filename="$dev" --direct=1 --iodepth="$depth" --iodepth_batch_submit="$batch" \
        --iodepth_batch_complete_min="$batch" --iodepth_batch_complete_max="$depth" --thread \
        --ioengine="$engine" --fixedbufs --registerfiles --io_size="$size" "$@" \
        --output-format=terse >/dev/null
done
cg_diff "$scratch/cg.32m" "$scratch/cg.160m" >"$scratch/cg.diff" 2>/dev/null
echo "# $engine floor job, depth $depth, batches of $batch${*:+ $*}: user instructions per I/O by function"
cg_annotate --auto=no "$scratch/cg.diff" 2>/dev/null | awk -v top="$top" '
    /PROGRAM TOTALS/ { c = $1; gsub(",", "", c); total = c / 32768 }
    /file:function/ { p = 1; next }
    p && /^ *-?[0-9]/ { c = $1; gsub(",", "", c); f = $NF; sub(/^[^:]*:/, "", f); a[f] += c }
    END {
        for (f in a) if (a[f] / 32768 >= 0.5) printf "%7.1f %s\n", a[f] / 32768, f | "sort -rn | head -" top
        close("sort -rn | head -" top)
        printf "%7.1f TOTAL\n", total
    }' | cut -c1-150
