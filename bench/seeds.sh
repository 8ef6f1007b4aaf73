#!/usr/bin/env bash
# Re-run the seeds' experiments (seed 000: io_submit blocking on buffered libaio; seed 004: guasi
# vs libaio with and without direct=1) with fiox, and with fio where fio has the engine, and print
# markdown tables. About 4-5 minutes (5 s per run). See bench/seeds.py for the columns.
# Usage: bench/seeds.sh [--dir DIR_ON_DISK] [--only seed004] [--keep-json DIR]
#   FIOX=path/to/fiox (default: build, then $CARGO_TARGET_DIR/release/fiox), FIO=path/to/fio.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${FIOX:-}" ]; then
    cargo build --release -q
    FIOX="${CARGO_TARGET_DIR:-target}/release/fiox"
fi
command -v python3 >/dev/null || { echo "seeds.sh: python3 is required" >&2; exit 1; }
FIOX="$FIOX" exec python3 bench/seeds.py "$@"
