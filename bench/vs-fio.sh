#!/usr/bin/env bash
# Side-by-side comparison of fio 3.33 and fiox on the same jobs; see bench/vs_fio.py for the cases.
# Usage: bench/vs-fio.sh [--rounds N] [--runtime S] [case ...]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v fio >/dev/null || { apt-get update -qq && apt-get install -y -qq fio >/dev/null; }
cargo build --release -q
exec python3 bench/vs_fio.py "$@"
