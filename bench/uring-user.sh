#!/usr/bin/env bash
# User CPU per I/O by the clock (issue 28): fio's minimal submitter t/io_uring against fiox on
# the same direct-I/O loop device, in alternating rounds, whole-process user and system time
# from /usr/bin/time over the I/Os each run did; with them bench/bare_uring.c, the least a
# loop can do, bare and keeping fio's default statistics and random map (the bound any loop
# with them meets). fiox runs three ways: fio's defaults (per-I/O statistics and the random
# map), --norandommap, and --norandommap --gtod_reduce=1 (neither, as t/io_uring), so the
# table says what the statistics and the map cost in time, not only in instructions
# (bench/uring-floor.sh counts those). fiox's job matches t/io_uring's batching:
# `-sB -cB` submits B at a time and waits for at least B completions, then takes all that are
# there, i.e. iodepth_batch_submit=B, iodepth_batch_complete_min=B,
# iodepth_batch_complete_max=DEPTH.
# The kernel accounts user time by ticks (CONFIG_TICK_CPU_ACCOUNTING here, 250 Hz): a 5 s run
# of t/io_uring has about 25-40 user ticks, hence the rounds and medians.
# Needs root (a fiox loop testbed over /dev/shm) and T_IO_URING (fio's t/io_uring).
# Usage: T_IO_URING=path bench/uring-user.sh [fiox binary]; DEPTH (32), BATCH (8),
# ROUNDS (5), RUNTIME (5 s).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
fiox=$(realpath "${1:-target/release/fiox}")
t_io_uring=${T_IO_URING:?set T_IO_URING to fio\'s t/io_uring}
depth=${DEPTH:-32} batch=${BATCH:-8} rounds=${ROUNDS:-5} runtime=${RUNTIME:-5}
scratch=$(mktemp -d /dev/shm/fiox-uring-user.XXXXXX)
trap '"$fiox" testbed down uring-user >/dev/null 2>&1; rm -rf "$scratch"' EXIT
dev=$("$fiox" testbed up loop --name=uring-user --size=1g --direct_io=on --dir="$scratch" | awk '{print $3}')
job=(--name=u --ioengine=io_uring --rw=randread --bs=4k --filename="$dev" --direct=1
    --iodepth="$depth" --iodepth_batch_submit="$batch" --iodepth_batch_complete_min="$batch"
    --iodepth_batch_complete_max="$depth" --fixedbufs --registerfiles --time_based
    --runtime="$runtime" --output-format=json)
# The bound with statistics goes to the kernel as fio does (a submit, the issue time, then a
# wait: slat ends when the submit returns); "one call" is the same loop submitting and
# waiting in one io_uring_enter, its issue time stamped before the call (the bound until
# 2026-12-06; the two read the same user time: BENCHMARKS.md).
variants=("t/io_uring" "bare_uring" "bare_uring +statistics +map"
    "bare_uring +statistics +map (one call)" "fiox" "fiox --norandommap"
    "fiox --norandommap --gtod_reduce=1")
build_bare_uring "$scratch/bare_uring"

# one VARIANT -> "user_ns_per_io sys_ns_per_io ios"
one() {
    local ios
    if [ "${1%% *}" = bare_uring ]; then
        local sm="0 0"
        [ "$1" != bare_uring ] && sm="1 1"
        [ "${1% (one call)}" != "$1" ] && sm="1 1 1"
        # shellcheck disable=SC2086
        /usr/bin/time -f "%U %S" -o "$scratch/time" "$scratch/bare_uring" "$dev" "$runtime" \
            "$depth" "$batch" $sm >"$scratch/out"
        ios=$(cut -d' ' -f1 "$scratch/out")
    elif [ "$1" = t/io_uring ]; then
        /usr/bin/time -f "%U %S" -o "$scratch/time" "$t_io_uring" -a0 -d"$depth" -s"$batch" \
            -c"$batch" -b4096 -p0 -B1 -F1 -t0 -r"$runtime" "$dev" >"$scratch/out"
        ios=$(t_io_uring_ios "$scratch/out")
    else
        # shellcheck disable=SC2086
        /usr/bin/time -f "%U %S" -o "$scratch/time" "$fiox" "${job[@]}" ${1#fiox} >"$scratch/out"
        read -r ios _ <<<"$(ios_of "$scratch/out")"
    fi
    awk -v n="$ios" '{printf "%.1f %.0f %d\n", $1 * 1e9 / n, $2 * 1e9 / n, n}' "$scratch/time"
}

echo "# $dev (direct-I/O loop over tmpfs), 4k randread, depth $depth, batches of $batch, fixed buffers, registered files, ${runtime} s x $rounds rounds"
declare -A user sys
for _ in $(seq "$rounds"); do
    for v in "${variants[@]}"; do
        read -r u s n <<<"$(one "$v")"
        user[$v]+="$u "
        sys[$v]+="$s "
        printf "%-40s user %6.1f ns/IO  sys %5.0f ns/IO  (%d I/Os)\n" "$v" "$u" "$s" "$n"
    done
done
echo "# medians"
for v in "${variants[@]}"; do
    printf "%-40s user %6.1f ns/IO  sys %5.0f ns/IO  (user per round: %s)\n" "$v" \
        "$(tr ' ' '\n' <<<"${user[$v]}" | grep . | median)" \
        "$(tr ' ' '\n' <<<"${sys[$v]}" | grep . | median)" "${user[$v]% }"
done
