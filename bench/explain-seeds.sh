#!/usr/bin/env bash
# Seeds 001 and 004 with --explain (issue 26): where the latency went and which threads
# worked for each job. Prints one summary line per job and direction: IOPS, mean latency,
# the phases (us), the threads woken for the job (CPU us per I/O, runs per I/O) and, for
# seed 001, how much the page cache grew during the run and how much of it is the loop
# device's backing file (fincore): a buffered loop device caches the data a second time.
#   seed 001: psync 4k random reads on a loop device over a 1 GiB file in $DIR (default
#             /var/tmp, the disk), loop direct I/O off vs on, the job direct=1 vs buffered;
#   seed 004: 4k randrw at depth 100 on a 1 GiB file in $DIR, direct and buffered: the
#             thread-pool engines (guasi, offload; posixaio, glibc's) vs libaio
#             (examples/seeds/seed004-{direct,buffered}.fio); the pools' helper threads'
#             syscalls are the job's (helper_* phases).
# Needs root. Usage: sudo bench/explain-seeds.sh [SECONDS]   (FIOX=path uses that binary;
# ONLY=004 runs seed 004 alone)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
dir=${DIR:-/var/tmp}
if [ -z "${FIOX:-}" ]; then
    cargo build --release -q
fi
fiox=$(realpath "${FIOX:-target/release/fiox}")
seeds=$(realpath examples/seeds)
summary() {
    python3 -c 'import json,sys
tag = sys.argv[1]
d = json.load(sys.stdin)
for j in d["jobs"]:
    e = j.get("fiox", {}).get("explain", {})
    for dn in ("read", "write"):
        x = e.get(dn)
        if not x: continue
        ph = " ".join("%s=%.1f" % (p["name"], p["mean_ns"] / 1e3) for p in x["phases"] if p["mean_ns"])
        wk = " ".join("%s=%.2fus/%.2fruns" % (k, w["cpu_ns_per_io"] / 1e3, w["runs_per_io"]) for k, w in e.get("workers", {}).items())
        w = x["submit"]["waits"]
        print("%s %s %s: iops=%d lat=%.1fus | %s | waits D=%d S=%d R=%d | woken: %s" % (tag, j["jobname"], dn,
              j[dn]["iops"], x["lat_mean_ns"] / 1e3, ph, w["blocked"], w["sleeping"], w["preempted"], wk or "-"))
' "$1"
}
name=explain-seeds-$$
work=$dir/$name
mkdir "$work"
trap '"$fiox" testbed down "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
dios="off on"
[ "${ONLY:-}" = 004 ] && dios=""
for dio in $dios; do
    tb=$("$fiox" testbed up loop --name "$name" --size 1g --dir "$dir" --direct_io "$dio")
    dev=$(echo "$tb" | awk '{print $3}')
    backing=$(echo "$tb" | tr ' ' '\n' | sed -n 's/^backing=//p')
    for direct in 1 0; do
        sync; echo 3 > /proc/sys/vm/drop_caches
        c0=$(awk '/^Cached:/ {print $2}' /proc/meminfo)
        "$fiox" --name=seed001 --filename="$dev" --ioengine=psync --rw=randread --bs=4k \
            --direct="$direct" --runtime="$secs" --time_based --explain --output-format=json |
            summary "seed001 loop-dio=$dio direct=$direct"
        c1=$(awk '/^Cached:/ {print $2}' /proc/meminfo)
        echo "  page cache grew by $(( (c1 - c0) / 1024 )) MiB; the backing file's part: $(fincore -n -o RES "$backing")"
    done
    "$fiox" testbed down "$name" >/dev/null
done
cd "$work"
for kind in direct buffered; do
    for sec in guasi-qd100 posixaio-qd100 libaio-qd100; do
        "$fiox" "$seeds/seed004-$kind.fio" --section="$sec" --runtime="$secs" --explain \
            --output-format=json | summary "seed004 $kind"
    done
done
