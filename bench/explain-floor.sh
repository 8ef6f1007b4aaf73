#!/usr/bin/env bash
# The floor of --explain's per-event design (issue 26): the same 4 KiB random-read job as
# bench/explain-cost.sh (libaio, direct, QD8, a loop testbed over a /dev/shm file) with no
# programs, with programs that return at once on sys_enter/sys_exit, on the five others (the
# floor when fiox marks its own calls instead of hooking syscalls), on all seven raw
# tracepoints --explain hooks on every I/O's path, and with programs that only read the clock
# there: what any tracer built on these hooks pays before it does any work.
# Needs root. Usage: sudo bench/explain-floor.sh [ROUNDS] [SECONDS] (FIOX=path/to/fiox, as
# in explain-cost.sh; the driver is crates/explain/examples/explain_floor.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
secs=${2:-3}
if [ -z "${FIOX:-}" ]; then
    cargo build --release -q
fi
fiox=${FIOX:-target/release/fiox}
cargo build --release -q -p fiox-explain --example explain_floor
name=explain-floor-$$
trap '"$fiox" testbed down "$name" >/dev/null 2>&1 || true' EXIT
dev=$("$fiox" testbed up loop --name "$name" --size 1g --dir /dev/shm | awk '{print $3}')
uptime
target/release/examples/explain_floor "$fiox" "$dev" "$rounds" "$secs"
uptime
