#!/usr/bin/env bash
# Instructions per I/O of fiox jobs, load-independent (this VM exposes no hardware counters
# to `perf stat`, so valgrind's cachegrind counts the user-space instructions). Each binary
# runs the job twice, with io_size SMALL and BIG; the difference over the difference in I/Os
# cancels setup and teardown. Kernel time (syscalls) is not counted: for the null engine that
# is all of the I/O path; for real engines compare CPU time instead.
# Usage: bench/ipio.sh BIN... (default: target/release/fiox); JOB, SMALL, BIG override.
# ROUNDS=N (default 1): N rounds alternating the binaries, each round's figure and the median
# (a queued job's count moves with how its completions batch, by up to 50 a run).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bins=("$@")
[ ${#bins[@]} -eq 0 ] && bins=(target/release/fiox)
job=${JOB:---name=ipio --ioengine=null --rw=randread --bs=4k --size=1g}
small=${SMALL:-64m}
big=${BIG:-320m}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() { # bin io_size -> instructions (all threads)
    # shellcheck disable=SC2086
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$tmp/cg" \
        --log-file="$tmp/log" -- "$1" $job --io_size="$2" --output-format=terse >/dev/null
    awk '/I[ ]*refs:/ {gsub(",", "", $NF); print $NF}' "$tmp/log"
}
bytes() { numfmt --from=iec "${1^^}"; }
ios=$(( ($(bytes "$big") - $(bytes "$small")) / 4096 ))
rounds=${ROUNDS:-1}
declare -A runs
for _ in $(seq "$rounds"); do
    for b in "${bins[@]}"; do
        i1=$(count "$b" "$small")
        i2=$(count "$b" "$big")
        runs[$b]+=" $(awk -v i="$((i2 - i1))" -v n="$ios" 'BEGIN {printf "%.1f", i/n}')"
    done
done
for b in "${bins[@]}"; do
    # shellcheck disable=SC2086
    med=$(printf '%s\n' ${runs[$b]} | median)
    if [ "$rounds" -gt 1 ]; then
        printf "%-40s %7.1f instructions/IO (median of%s)\n" "$b" "$med" "${runs[$b]}"
    else
        printf "%-40s %7.1f instructions/IO\n" "$b" "$med"
    fi
done
