#!/usr/bin/env bash
# User-space instructions per I/O at io_uring's own limit (issue 28): fio's minimal submitter
# t/io_uring (no statistics, no random map) against fiox and fio on the same job, counted by
# valgrind's cachegrind (this VM exposes no hardware counters; kernel work is not counted, so
# this is the part of the CPU per I/O each tool adds above the kernel's). fiox is also run with
# the statistics and the random map that fio keeps by default turned off, to say what they cost.
# Needs root (a fiox loop testbed: direct I/O over a 1 GiB /dev/shm file), valgrind, fio 3.33 and
# T_IO_URING: fio's t/io_uring built WITH libaio (apt-get install libaio-dev; in fio's source
# `./configure && rm -f t/*.o && make t/io_uring`: a t/io_uring built without CONFIG_LIBAIO runs
# -a1 with zero I/Os and no error), and without -march=native (`./configure --disable-native`:
# valgrind 3.19 stops at the AVX-512 a native build may use).
# DEPTH (32) and BATCH (8) set the queue: t/io_uring `-dDEPTH -sBATCH -cBATCH` submits BATCH at a
# time and waits for at least BATCH completions, then takes all there are; fio's job says the
# same with iodepth_batch_submit=BATCH, iodepth_batch_complete_min=BATCH and
# iodepth_batch_complete_max=DEPTH. (Until 2026-11-28 the jobs here reaped 1 to 8: fiox's count
# was the same either way, 506 and 506 instructions per I/O.)
# Also bench/bare_uring.c (built here; liburing-dev): the bound a loop keeping fio's default
# statistics and random map can reach, against which fiox's own cost is read.
# Usage: T_IO_URING=/path/to/t/io_uring [DEPTH=n BATCH=n] bench/uring-floor.sh [fiox binary]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
fiox=$(realpath "${1:-target/release/fiox}")
t_io_uring=${T_IO_URING:?set T_IO_URING to fio\'s t/io_uring}
depth=${DEPTH:-32} batch=${BATCH:-8}
scratch=$(mktemp -d /dev/shm/fiox-floor.XXXXXX)
trap '"$fiox" testbed down floor-uring >/dev/null 2>&1; rm -rf "$scratch"' EXIT
dev=$("$fiox" testbed up loop --name=floor-uring --size=1g --direct_io=on --dir="$scratch" | awk '{print $3}')

# t/io_uring: one run under cachegrind: "instructions ios" (the sum of its per-second IOPS
# lines).
t_count() { # seconds aio [stats] -> "instructions ios"
    local fixed=$((1 - $2))
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$scratch/cg" \
        --log-file="$scratch/log" -- "$t_io_uring" -a"$2" -d"$depth" -s"$batch" -c"$batch" -b4096 -p0 \
        -B$fixed -F$fixed -t"${3:-0}" -r"$1" "$dev" >"$scratch/out" 2>&1
    local i ios
    i=$(awk '/I[ ]*refs:/ {gsub(",", "", $NF); print $NF}' "$scratch/log")
    ios=$(t_io_uring_ios "$scratch/out")
    echo "$i $ios"
}
# Runs of 3 and 8 s, the difference over the difference in I/Os: a run's last second prints
# no IOPS line (its I/Os are not in the sum), which the difference cancels.
for a in 0 1; do
    read -r i3 n3 <<<"$(t_count 3 $a)"
    read -r i8 n8 <<<"$(t_count 8 $a)"
    name=$([ $a = 0 ] && echo "t/io_uring (io_uring)" || echo "t/io_uring -a1 (libaio)")
    # A t/io_uring built without CONFIG_LIBAIO runs -a1 with no I/O and no error (see above).
    awk -v b="$name (8 s - 3 s)" -v i="$((i8 - i3))" -v n="$((n8 - n3))" \
        'BEGIN {if (n > 0) printf "%-60s %7.1f instructions/IO\n", b, i/n
                else printf "%-60s no I/O: built without libaio?\n", b}'
done
# t/io_uring's own latency statistics (-t1: a clock read and a histogram add per submit and
# reap batch, not per I/O, and a TSC calibration at start): runs of 3 and 8 s, the
# difference over the difference in I/Os (the calibration cancels).
read -r i3 n3 <<<"$(t_count 3 0 1)"
read -r i8 n8 <<<"$(t_count 8 0 1)"
awk -v b="t/io_uring -t1 (its latency statistics, 8 s - 3 s)" -v i="$((i8 - i3))" \
    -v n="$((n8 - n3))" 'BEGIN {printf "%-60s %7.1f instructions/IO\n", b, i/n}'
# bench/bare_uring.c, the least a loop can do for the same reads, then with what fio keeps per
# I/O by default (STATS: start, slat, clat and lat, clat's histogram, the latency table) and its
# random map (MAP): runs of 2 and 6 s, the difference over the difference in I/Os. With
# statistics it goes to the kernel as fio does (a submit, the issue time, a wait); "one call"
# submits and waits in one io_uring_enter (bench/bare_uring.c's CALLS).
build_bare_uring "$scratch/bare_uring"
b_count() { # seconds stats map [calls] -> "instructions ios"
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$scratch/cg" \
        --log-file="$scratch/log" -- "$scratch/bare_uring" "$dev" "$1" "$depth" "$batch" "$2" \
        "$3" ${4:+"$4"} >"$scratch/out"
    echo "$(awk '/I[ ]*refs:/ {gsub(",", "", $NF); print $NF}' "$scratch/log") $(cut -d' ' -f1 "$scratch/out")"
}
for sm in "0 0" "1 0" "0 1" "1 1" "1 1 1"; do
    read -r i2 n2 <<<"$(b_count 2 $sm)"
    read -r i6 n6 <<<"$(b_count 6 $sm)"
    read -r stats map calls <<<"$sm"
    name=bare_uring
    [ "$stats" = 1 ] && name+=" +statistics"
    [ "$map" = 1 ] && name+=" +map"
    [ -n "$calls" ] && name+=" (one call)"
    awk -v b="$name (6 s - 2 s)" -v i="$((i6 - i2))" -v n="$((n6 - n2))" \
        'BEGIN {printf "%-60s %7.1f instructions/IO\n", b, i/n}'
done
base="--name=floor --rw=randread --bs=4k --filename=$dev --direct=1 --iodepth=$depth --iodepth_batch_submit=$batch --iodepth_batch_complete_min=$batch --iodepth_batch_complete_max=$depth --thread"
for engine in io_uring libaio; do
    extra=""
    [ $engine = io_uring ] && extra="--fixedbufs --registerfiles"
    for variant in "" "--norandommap" "--norandommap --gtod_reduce=1"; do
        for tool in "$fiox" "$(command -v fio)"; do
            [ "$(basename "$tool")" = fio ] && [ -n "$variant" ] && continue
            r=$(JOB="$base --ioengine=$engine $extra $variant" SMALL=32m BIG=160m bench/ipio.sh "$tool")
            printf "%-60s %7s instructions/IO\n" "$(basename "$tool") $engine $variant" \
                "$(awk '{print $(NF-1)}' <<<"$r")"
        done
    done
done
