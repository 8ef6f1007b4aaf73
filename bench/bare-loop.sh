#!/usr/bin/env bash
# fiox's psync job against the physical limit: a bare pread(2) loop (bench/bare_pread.c) at
# random 4 KiB offsets over the same 512 MiB tmpfs file, and fio 3.33 on the same job, in
# alternating rounds. Prints IOPS and each tool's share of the bare loop's IOPS (medians).
# fiox-nrm is fiox with norandommap=1: the bare loop draws offsets with replacement, while the
# default job (fio's too) visits every block once per pass, and the blocks it finds late in a
# pass lie close together, which makes the kernel's page-cache lookup cheaper.
# Usage: bench/bare-loop.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
secs=${2:-4}
file=/dev/shm/fiox-bare.dat
bin=$(mktemp -d)/bare_pread
trap 'rm -f "$file" "$bin"' EXIT
command -v fio >/dev/null || { apt-get update -qq && apt-get install -y -qq fio >/dev/null; }
cargo build --release -q
gcc -O2 -o "$bin" bench/bare_pread.c
head -c 512M /dev/urandom > "$file"
job=(--name=bare --ioengine=psync --rw=randread --bs=4k --size=512m "--filename=$file"
     "--runtime=$secs" --time_based --output-format=json)
iops_of() { python3 -c 'import json,sys; print(int(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'; }
bare=(); fiox=(); fio=(); nrm=()
for r in $(seq "$rounds"); do
    order=(bare fiox fio nrm)
    [ $((r % 2)) -eq 0 ] && order=(nrm fio fiox bare)
    for t in "${order[@]}"; do
        case $t in
            bare) read -r n s < <("$bin" "$file" "$secs"); bare+=("$(python3 -c "print(int($n/$s))")") ;;
            fiox) fiox+=("$(target/release/fiox "${job[@]}" 2>/dev/null | iops_of)") ;;
            fio) fio+=("$(fio "${job[@]}" 2>/dev/null | iops_of)") ;;
            nrm) nrm+=("$(target/release/fiox "${job[@]}" --norandommap 2>/dev/null | iops_of)") ;;
        esac
    done
done
python3 - "${bare[*]}" "${fiox[*]}" "${fio[*]}" "${nrm[*]}" <<'PY'
import statistics, sys
bare, fiox, fio, nrm = ([int(v) for v in a.split()] for a in sys.argv[1:5])
runs = (("bare", bare), ("fiox", fiox), ("fio", fio), ("fiox-nrm", nrm))
m = {k: statistics.median(v) for k, v in runs}
print(f"# {len(bare)} rounds; IOPS per round: bare {bare} fiox {fiox} fio {fio} fiox-nrm {nrm}")
print("tool        median IOPS   share of bare loop")
for k, _ in runs:
    print(f"{k:<10} {m[k]:>12,.0f}   {m[k] / m['bare']:.3f}")
PY
