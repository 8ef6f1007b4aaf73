#!/usr/bin/env bash
# posixaio 4k randread, fio 3.33 and fiox builds in alternating rounds (the machine is shared,
# so only runs of the same minute compare), then each tool's median IOPS. Per run: IOPS/ctx
# (ctx: the job's context switches from the JSON).
# Usage: [NRFILES=N] bench/posixaio-rounds.sh ROUNDS DEPTH tmpfs|ext4 [SECONDS] [-- TOOL...]
#   TOOL defaults to "fio target/release/fiox"; ext4 means /var/tmp with --direct=1.
#   NRFILES=N spreads the 256 MiB over N files of one directory (--nrfiles, fio's layout).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=$1 depth=$2 fs=$3 secs=${4:-2}
shift 3; [ $# -gt 0 ] && shift
[ "${1:-}" = -- ] && shift
tools=("$@")
[ ${#tools[@]} -eq 0 ] && tools=(fio target/release/fiox)
case $fs in
    tmpfs) file=/dev/shm/posixaio-rounds.dat; extra=() ;;
    ext4) file=/var/tmp/posixaio-rounds.dat; extra=(--direct=1) ;;
    *) echo "fs must be tmpfs or ext4, not $fs" >&2; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out" "$file"' EXIT
nrfiles=${NRFILES:-1}
if [ "$nrfiles" -gt 1 ]; then
    # A directory of N files that the first tool lays out and every run reuses.
    mkdir -p "$file"
    where=("--directory=$file" "--nrfiles=$nrfiles")
else
    head -c 256M /dev/urandom >"$file"
    where=("--filename=$file")
fi
for r in $(seq "$rounds"); do
    line="round $r:"
    for t in "${tools[@]}"; do
        "$t" --name=pa --ioengine=posixaio --rw=randread --bs=4k --size=256m "${where[@]}" \
            "--iodepth=$depth" "${extra[@]}" --runtime="$secs" --time_based \
            --output-format=json >"$out/j" 2>"$out/e" || true
        v=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]
print("%d/%d" % (j["read"]["iops"], j["ctx"]))' "$out/j" 2>/dev/null || echo "-/-")
        echo "${v%/*}" >>"$out/$(echo "$t" | tr / _)"
        line="$line $(basename "$t")=$v"
    done
    echo "$line"
done
for t in "${tools[@]}"; do
    echo "median $(basename "$t"): $(sort -n "$out/$(echo "$t" | tr / _)" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
