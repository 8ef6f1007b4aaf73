#!/usr/bin/env bash
# Many jobs from one job file (issue 28): N sections of a short null job, parsed, started, run
# and reported by fiox and by fio 3.33; wall, user, system seconds and max RSS from
# /usr/bin/time. fio 3.33 refuses more than 4,096 jobs, so its rows stop there.
#
# Usage: bench/sections.sh [N...]   (default: 1000 2000 4000 10000)
#   FIOX=path (default target/release/fiox), FIO=path (default fio), NICE (default -10: the
#   tools get the CPUs before background builds at nice 0..19).
set -euo pipefail
cd "$(dirname "$0")/.."
fiox=${FIOX:-target/release/fiox}
fio=${FIO:-fio}
nice=${NICE:--10}
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(1000 2000 4000 10000)
scratch=$(mktemp -d /tmp/fiox-sections.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

echo "| sections | fiox: wall / user / sys s, max RSS | fio 3.33: wall / user / sys s, max RSS |"
echo "|---:|---|---|"
for n in "${counts[@]}"; do
    job="$scratch/s$n.fio"
    {
        printf '[global]\nioengine=null\nsize=1m\nrw=read\n'
        for ((i = 0; i < n; i++)); do printf '[j%d]\n' "$i"; done
    } >"$job"
    row=()
    for tool in "$fiox" "$fio"; do
        if [[ $tool == "$fio" && $n -gt 4096 ]]; then
            row+=("refuses more than 4,096 jobs")
            continue
        fi
        nice -n "$nice" /usr/bin/time -f "%e / %U / %S, %M KB" -o "$scratch/time" \
            "$tool" "$job" --output-format=terse >/dev/null || true
        row+=("$(tail -1 "$scratch/time")")
    done
    echo "| $n | ${row[0]} | ${row[1]} |"
done
