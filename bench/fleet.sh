#!/usr/bin/env bash
# A fleet on one machine: N fiox servers (null engine) in a private network namespace (loopback
# only, nothing outside the machine), driven by one client, fio 3.33's and fiox's in turn, on
# the same fleet and job. For each client: wall time, the client's own CPU (user+sys) and peak
# memory (wait4's rusage), and what that costs per server.
#
# The job runs a fixed 2 s on every server (time_based), so `wall - 2 s` is the client's time to
# start every server (connect, probe, send the job, RUN) and to collect every result.
#
# Usage: bench/fleet.sh [--rounds R] [N ...]      (default: 3 rounds of 1 8 64 servers)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
if [[ ${1:-} == --rounds ]]; then rounds=$2; shift 2; fi
sizes=("${@:-1 8 64}")
read -r -a sizes <<<"${sizes[*]}"
command -v fio >/dev/null || { apt-get update -qq && apt-get install -y -qq fio >/dev/null; }
cargo build --release -q
fiox=$PWD/target/release/fiox
work=$(mktemp -d /tmp/fiox-fleet.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat >"$work/job.fio" <<'EOF'
[j]
ioengine=null
size=1g
bs=4k
rw=randread
time_based
runtime=2
EOF

# One measurement inside a fresh network namespace: N servers on 127.0.0.1:9000+i, then the
# client; prints "wall_s cpu_s maxrss_kb".
cat >"$work/inside.sh" <<'EOF'
set -u
n=$1 client=$2 fiox=$3 job=$4 work=$5
ip link set lo up
pids=()
for ((i = 0; i < n; i++)); do
    "$fiox" --server=ip:127.0.0.1,$((9000 + i)) 2>/dev/null &
    pids+=($!)
done
want=$n
for _ in $(seq 300); do
    up=$(awk 'NR > 1 && $4 == "0A"' /proc/net/tcp | wc -l)
    ((up >= want)) && break
    sleep 0.05
done
args=()
for ((i = 0; i < n; i++)); do args+=("--client=127.0.0.1,$((9000 + i))"); done
bin=$fiox
[[ $client == fio ]] && bin=fio
# wait4's rusage: the client's CPU to the microsecond and its peak RSS.
python3 - "$work" "$bin" "${args[@]}" --output-format=json "$job" <<'PY' >"$work/time"
import os, sys, time
work, argv = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    out = os.open(f"{work}/out.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(f"{work}/err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1); os.dup2(err, 2)
    os.execvp(argv[0], argv)
_, status, ru = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss)
PY
read -r rc wall cpu rss <"$work/time"
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
stats=$(python3 -c "import json;d=json.load(open('$work/out.json'));print(len(d['client_stats']))" 2>/dev/null || echo 0)
echo "$rc $wall $cpu $rss $stats"
EOF

printf '%-7s %-6s %-5s %9s %9s %11s %12s %12s\n' servers client round wall_s "cpu_s" maxrss_MiB \
    "start+collect_ms/server" "cpu_ms/server"
for n in "${sizes[@]}"; do
    for client in fio fiox; do
        for ((r = 1; r <= rounds; r++)); do
            read -r rc wall cpu rss stats < <(unshare --net bash "$work/inside.sh" "$n" "$client" \
                "$fiox" "$work/job.fio" "$work")
            if [[ $rc != 0 || $stats -lt $n ]]; then
                echo "servers=$n client=$client round=$r: exit $rc, $stats results" >&2
                cat "$work/err" >&2
                head -c 2000 "$work/out.json" >&2
                continue
            fi
            over=$(echo "($wall - 2) * 1000 / $n" | bc -l)
            per=$(echo "$cpu * 1000 / $n" | bc -l)
            printf '%-7s %-6s %-5s %9.2f %9.2f %11.1f %12.1f %12.2f\n' "$n" "$client" "$r" \
                "$wall" "$cpu" "$(echo "$rss / 1024" | bc -l)" "$over" "$per"
        done
    done
done
