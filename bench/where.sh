#!/usr/bin/env bash
# Where a psync 4 KiB random read's time goes: fiox's psync job and the bare pread(2) loop
# (bench/bare_pread.c) over the same 512 MiB tmpfs file, each sampled with `perf record -e
# cpu-clock` (this VM has no hardware counters; the timer samples every 50 us). Prints, per
# tool, nanoseconds per I/O by part: the page copy, the page-cache lookup, the file lookup
# (fdget/fput), the rest of the kernel, and user space by symbol.
# Usage: bench/where.sh [SECONDS] [FIOX_ARGS...] (e.g. --thread to see the shared file table)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-4}
shift || true
file=/dev/shm/fiox-where.dat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$file"' EXIT
command -v perf >/dev/null || { apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null; }
cargo build --release -q
gcc -O2 -o "$tmp/bare_pread" bench/bare_pread.c
head -c 512M /dev/urandom > "$file"
perf record -q -e cpu-clock -F 20000 -o "$tmp/bare.data" "$tmp/bare_pread" "$file" "$secs" > "$tmp/bare.out" 2>/dev/null
perf record -q -e cpu-clock -F 20000 -o "$tmp/fiox.data" target/release/fiox --name=where \
    --ioengine=psync --rw=randread --bs=4k --size=512m "--filename=$file" "--runtime=$secs" \
    --time_based --output-format=json "$@" > "$tmp/fiox.json" 2>/dev/null
for t in bare fiox; do
    perf report -i "$tmp/$t.data" -n --no-children --sort sym -q 2>/dev/null > "$tmp/$t.txt"
done
python3 - "$tmp" <<'PY'
import json, re, sys
tmp = sys.argv[1]
n, _ = open(f"{tmp}/bare.out").read().split()
ios = {"bare": int(n), "fiox": json.load(open(f"{tmp}/fiox.json"))["jobs"][0]["read"]["total_ios"]}
parts = [("page copy", r"copy_to_iter|copy_page_to_iter|copy_user"),
         ("page-cache lookup", r"filemap_get_entry|xas_|shmem_get_folio"),
         ("file lookup (fdget/fput)", r"fdget|fput|__fget"),
         ("kernel, other", r"\[k\]"),
         ("user", r"\[\.\]")]
rows = {}
for t in ("bare", "fiox"):
    acc = {p: 0.0 for p, _ in parts}
    user = {}
    for line in open(f"{tmp}/{t}.txt"):
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\[.\])\s+(.*\S)", line)
        if not m:
            continue
        ns = int(m.group(1)) * 50_000 / ios[t]          # 20 kHz: 50 us per sample
        sym = f"{m.group(2)} {m.group(3)}"
        for p, rx in parts:
            if re.search(rx, sym):
                acc[p] += ns
                if p == "user":
                    user[m.group(3)] = user.get(m.group(3), 0) + ns
                break
    rows[t] = (acc, user)
print(f"{'ns per I/O':<28}{'bare loop':>10}{'fiox':>10}")
for p, _ in parts:
    print(f"{p:<28}{rows['bare'][0][p]:>10.1f}{rows['fiox'][0][p]:>10.1f}")
tot = {t: sum(rows[t][0].values()) for t in rows}
print(f"{'total (sampled)':<28}{tot['bare']:>10.1f}{tot['fiox']:>10.1f}")
for t in ("bare", "fiox"):
    top = sorted(rows[t][1].items(), key=lambda kv: -kv[1])[:6]
    print(f"{t} user: " + ", ".join(f"{s[:48]} {v:.1f}" for s, v in top))
PY
