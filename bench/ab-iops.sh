#!/usr/bin/env bash
# IOPS of two fiox builds and fio 3.33 on one job, in alternating rounds (OLD, NEW, fio in
# each round), with the median and the rounds of each: whether a change to the loop made a
# real job slower, where one run of each is inside the machine's noise (a direct-I/O job on
# the virtio disk moves by a few per cent from run to run). The job is random 4 KiB reads
# of FILE at DEPTH on ENGINE for SECONDS a round; the file is laid out by fio first when it
# is missing (and removed at the end only then).
# Usage: bench/ab-iops.sh OLD NEW FILE [ROUNDS [SECONDS [extra options for all three...]]];
# ENGINE (io_uring), DEPTH (32). Example: the ext4 row of BENCHMARKS.md's summary,
#   bench/ab-iops.sh OLD NEW /var/tmp/ab-iops.dat 5 3 --direct=1   (DEPTH=100)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
old=$(realpath "$1") new=$(realpath "$2") file=$3
rounds=${4:-5} secs=${5:-3}
shift $(($# < 5 ? $# : 5))
engine=${ENGINE:-io_uring} depth=${DEPTH:-32}
made=
if [ ! -e "$file" ]; then
    fio --name=layout --rw=write --bs=1m --size=256m --filename="$file" \
        --output-format=terse >/dev/null
    made=1
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"; [ -z "$made" ] || rm -f "$file"' EXIT
job=(--name=ab --ioengine="$engine" --rw=randread --bs=4k --size=256m --filename="$file"
    --iodepth="$depth" --runtime="$secs" --time_based --thread --output-format=json "$@")
declare -A iops
for _ in $(seq "$rounds"); do
    for who in old new fio; do
        case $who in
            old) "$old" --allow-destructive "${job[@]}" >"$scratch/out.json" ;;
            new) "$new" --allow-destructive "${job[@]}" >"$scratch/out.json" ;;
            fio) fio "${job[@]}" >"$scratch/out.json" ;;
        esac
        iops[$who]+="$(python3 -c 'import json, sys
print(int(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"]))' "$scratch/out.json") "
    done
done
echo "# $engine, 4k randread, depth $depth, $file, ${secs} s x $rounds rounds, alternating"
for who in old new fio; do
    printf "%-4s median %9s IOPS  (rounds: %s)\n" "$who" \
        "$(tr ' ' '\n' <<<"${iops[$who]}" | grep . | median)" "${iops[$who]% }"
done
