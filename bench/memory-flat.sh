#!/usr/bin/env bash
# Memory must stay flat over a long run: fiox keeps no per-I/O storage (histograms are bounded: at most
# 59 pages of 512 bytes each, allocated as values arrive).
# Samples the RSS of a 60 s null-engine and psync job every 5 s and prints first/last/max.
# Usage: bench/memory-flat.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
fiox=${FIOX:-target/release/fiox}
[ -x "$fiox" ] || cargo build --release -q
for job in "--ioengine=null --size=1g" "--ioengine=psync --size=256m --filename=/dev/shm/fiox-memflat.dat"; do
    # shellcheck disable=SC2086
    "$fiox" --name=memflat $job --rw=randread --bs=4k --runtime="$secs" --time_based \
        --output-format=json >/dev/null 2>&1 &
    pid=$!
    samples=()
    while kill -0 "$pid" 2>/dev/null; do
        rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [ -n "$rss" ] && samples+=("$rss")
        sleep 5
    done
    wait "$pid" || true
    printf '%-40s RSS KiB every 5 s: %s\n' "$job" "${samples[*]}"
done
rm -f /dev/shm/fiox-memflat.dat
