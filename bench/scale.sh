#!/usr/bin/env bash
# Scale, side by side with fio 3.33 (issue 28): many files, many jobs, deep queues, and
# io_uring against fio's own minimal submitter t/io_uring. Every row is one run of each tool
# on the same job in the same minute; wall and CPU seconds and max RSS from /usr/bin/time.
#
# Usage: bench/scale.sh [files|jobs|depth|uring|all]   (default all)
#   FIOX=path (default target/release/fiox), FIO=path (default fio),
#   T_IO_URING=path to fio's t/io_uring (built from fio's source: `make t/io_uring`; the uring
#   part is skipped without it), RUNTIME (seconds, default 5).
# Scratch space: /dev/shm/fiox-scale (removed at the end); the uring part makes a fiox
# testbed (a direct-I/O loop device over a tmpfs file) and takes it down.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
fiox=${FIOX:-target/release/fiox}
fio=${FIO:-fio}
runtime=${RUNTIME:-5}
what=${1:-all}
scratch=/dev/shm/fiox-scale
mkdir -p "$scratch"
trap '"$fiox" testbed down scale-uring >/dev/null 2>&1; rm -rf "$scratch"' EXIT

# run TOOL ARGS... -> "wall user sys maxrss_kb rc" on stdout; the tool's stdout in $scratch/out
run() {
    local tool=$1; shift
    /usr/bin/time -f "%e %U %S %M" -o "$scratch/time" "$tool" "$@" >"$scratch/out" 2>"$scratch/err"
    local rc=$?
    echo "$(cat "$scratch/time" | tail -1) $rc"
}

files() {
    echo "## nrfiles (4 KiB files on tmpfs; unlink=1; wall s / user s / sys s / max RSS KiB / exit)"
    for n in 1000 16000 100000; do
        for job in "filecreate" "write"; do
            args=(--name=s --nrfiles="$n" --filesize=4k --bs=4k --directory="$scratch/d" --unlink=1 --output-format=json)
            if [ "$job" = filecreate ]; then args+=(--ioengine=filecreate); else args+=(--ioengine=psync --rw=write); fi
            for tool in "$fiox" "$fio"; do
                rm -rf "$scratch/d"; mkdir -p "$scratch/d"
                echo "$job nrfiles=$n $(basename "$tool"): $(run "$tool" "${args[@]}") left=$(ls "$scratch/d" | wc -l) $(grep -m1 -o 'Too many open files' "$scratch/err")"
            done
        done
    done
}

jobs() {
    echo "## numjobs of a null job (randread 4k, ${runtime}s each; wall / user / sys / max RSS KiB / exit; I/Os, IOPS)"
    for n in 1 64 512 2000; do
        for tool in "$fiox" "$fio"; do
            t=$(run "$tool" --name=n --ioengine=null --rw=randread --bs=4k --size=1g --numjobs="$n" \
                --time_based --runtime="$runtime" --group_reporting --output-format=json)
            echo "numjobs=$n $(basename "$tool"): $t $(ios_of "$scratch/out")"
        done
    done
}

depth() {
    echo "## deep queues (randread 4k on a tmpfs file, ${runtime}s; wall / user / sys / max RSS KiB / exit; I/Os, IOPS)"
    head -c 256M /dev/zero >"$scratch/f"
    for e in io_uring libaio; do
        for d in 4096 65536; do
            for tool in "$fiox" "$fio"; do
                t=$(run "$tool" --name=d --ioengine="$e" --rw=randread --bs=4k --filename="$scratch/f" \
                    --size=256m --iodepth="$d" --time_based --runtime="$runtime" --output-format=json)
                echo "$e iodepth=$d $(basename "$tool"): $t $(ios_of "$scratch/out")"
            done
        done
    done
}

uring() {
    local t_io_uring=${T_IO_URING:-}
    if [ -z "$t_io_uring" ] || [ ! -x "$t_io_uring" ]; then
        echo "## t/io_uring: skipped (set T_IO_URING to fio's t/io_uring, built with make t/io_uring)"
        return
    fi
    local dev
    dev=$("$fiox" testbed up loop --name=scale-uring --size=1g --direct_io=on --dir="$scratch" | awk '{print $3}')
    echo "## io_uring at its limit: $dev (direct-I/O loop over tmpfs), 4k randread, depth 32, batches of 8, fixed buffers, registered files, ${runtime}s"
    echo "## whole-process CPU from /usr/bin/time; per I/O in microseconds"
    for mode in io_uring aio; do
        local a=0 engine=io_uring extra=(--fixedbufs --registerfiles)
        if [ "$mode" = aio ]; then a=1; engine=libaio; extra=(); fi
        t=$(run "$t_io_uring" -d32 -s8 -c8 -b4096 -p0 -B$((1 - a)) -F$((1 - a)) -a$a -r"$runtime" "$dev")
        local ios
        ios=$(t_io_uring_ios "$scratch/out")
        echo "$mode t/io_uring: $t ios=$ios $(per_io "$t" "$ios")"
        # fiox also with gtod_reduce=1: what fio's default statistics cost it.
        for tool in "$fiox" "$fiox gtod_reduce" "$fio"; do
            local bin=${tool% gtod_reduce} more=()
            [ "$bin" != "$tool" ] && more=(--gtod_reduce=1)
            t=$(run "$bin" --name=u --ioengine="$engine" --rw=randread --bs=4k --filename="$dev" --direct=1 \
                --iodepth=32 --iodepth_batch_submit=8 --iodepth_batch_complete_min=1 \
                --iodepth_batch_complete_max=8 "${extra[@]}" "${more[@]}" --time_based \
                --runtime="$runtime" --output-format=json)
            read -r ios _ <<<"$(ios_of "$scratch/out")"
            echo "$mode $(basename "$bin")${more[*]:+ ${more[*]}}: $t ios=$ios $(per_io "$t" "$ios")"
        done
    done
    "$fiox" testbed down scale-uring >/dev/null
}

# per_io "wall user sys rss rc" IOS -> "user_us/io sys_us/io"
per_io() {
    awk -v t="$1" -v n="$2" 'BEGIN {split(t, f, " "); if (n > 0) printf "user %.2f us/io sys %.2f us/io", f[2] * 1e6 / n, f[3] * 1e6 / n}'
}

case $what in
files) files ;;
jobs) jobs ;;
depth) depth ;;
uring) uring ;;
all) files; jobs; depth; uring ;;
*) echo "usage: $0 [files|jobs|depth|uring|all]" >&2; exit 2 ;;
esac
