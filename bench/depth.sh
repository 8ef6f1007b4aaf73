#!/usr/bin/env bash
# IOPS over queue depth at seed 004's depths (8, 100, 1000, 10000) for guasi, posixaio, libaio
# and io_uring, on a tmpfs file and on an ext4 file with direct=1, fiox and fio 3.33 (fio has
# no guasi) one after the other; also the most threads the process had (sampled from
# /proc/PID/status every 0.2 s): depth must not turn into threads unless asked.
# Usage: bench/depth.sh [SECONDS] [DEPTHS...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
shift || true
depths=("$@")
[ ${#depths[@]} -eq 0 ] && depths=(8 100 1000 10000)
fiox=${FIOX:-target/release/fiox}
[ -x "$fiox" ] || cargo build --release -q
out=$(mktemp -d)
trap 'rm -rf "$out" /dev/shm/depth-*.dat /var/tmp/depth-*.dat' EXIT
run() { # tool engine fs depth -> "iops threads"
    local tool=$1 eng=$2 fs=$3 depth=$4 tag dir extra=()
    tag=$(basename "$tool")
    case $fs in
        tmpfs) dir=/dev/shm ;;
        ext4) dir=/var/tmp; extra=(--direct=1) ;;
    esac
    "$tool" --name=d "--ioengine=$eng" --rw=randread --bs=4k --size=256m \
        "--filename=$dir/depth-$tag.dat" "--iodepth=$depth" "${extra[@]}" \
        --runtime="$secs" --time_based --thread --output-format=json >"$out/j" 2>"$out/e" &
    local pid=$! max=0 t
    while kill -0 "$pid" 2>/dev/null; do
        t=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        [ "${t:-0}" -gt "$max" ] && max=$t
        sleep 0.2
    done
    wait "$pid" || true
    local iops
    iops=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"]))' \
        "$out/j" 2>/dev/null || echo "-")
    echo "$iops $max"
}
echo "| engine | fs | depth | fiox IOPS | fiox threads | fio IOPS | fio threads |"
echo "|---|---|---:|---:|---:|---:|---:|"
for fs in tmpfs ext4; do
    for eng in guasi posixaio libaio io_uring; do
        for d in "${depths[@]}"; do
            read -r xi xt < <(run "$fiox" "$eng" "$fs" "$d")
            if [ "$eng" = guasi ]; then fi_=-; ft=-; else read -r fi_ ft < <(run fio "$eng" "$fs" "$d"); fi
            echo "| $eng | $fs | $d | $xi | $xt | $fi_ | $ft |"
        done
    done
done
