#!/usr/bin/env bash
# Instructions per I/O of fiox jobs, load-independent (this VM exposes no hardware counters
# to `perf stat`, so valgrind's cachegrind counts the user-space instructions). Each binary
# runs the job twice, with io_size SMALL and BIG; the difference over the difference in I/Os
# cancels setup and teardown. Kernel time (syscalls) is not counted: for the null engine that
# is all of the I/O path; for real engines compare CPU time instead.
# Usage: bench/ipio.sh BIN... (default: target/release/fiox); JOB, SMALL, BIG override.
set -euo pipefail
cd "$(dirname "$0")/.."
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
for b in "${bins[@]}"; do
    i1=$(count "$b" "$small")
    i2=$(count "$b" "$big")
    awk -v b="$b" -v i="$((i2 - i1))" -v n="$ios" \
        'BEGIN {printf "%-40s %7.1f instructions/IO\n", b, i/n}'
done
