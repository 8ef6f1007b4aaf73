# Shared helpers of the bench scripts (sourced, not run).

# t_io_uring_ios FILE: the I/Os a t/io_uring run did, from its output in FILE: the sum of its
# once-a-second "IOPS=287.85K, ..." lines (t/io_uring prints no total).
t_io_uring_ios() {
    awk -F'[=,]' '/^IOPS=/ {v = $2; m = 1; if (v ~ /K$/) m = 1e3; if (v ~ /M$/) m = 1e6
        sub(/[KM]$/, "", v); s += v * m} END {printf "%d\n", s}' "$1"
}

# ios_of FILE: the I/Os (all directions) and the IOPS of the fio-shaped JSON report in FILE
# (anything before its first "{" skipped): "ios iops", or "- -" when there is no report.
ios_of() {
    python3 -c '
import json,sys
t=open(sys.argv[1]).read(); t=t[t.find("{"):]
try: d=json.loads(t)
except Exception: print("- -"); sys.exit()
ios=sum(j[k]["total_ios"] for j in d["jobs"] for k in ("read","write","trim"))
iops=sum(j[k]["iops"] for j in d["jobs"] for k in ("read","write","trim"))
print(ios, round(iops))' "$1"
}

# median: the median of the numbers on stdin (one per line).
median() {
    sort -g | awk '{v[NR] = $1} END {if (NR == 0) exit; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# build_bare_uring OUT: compile bench/bare_uring.c (the bare io_uring submitter) to OUT,
# installing liburing's headers first where they are missing.
build_bare_uring() {
    [ -f /usr/include/liburing.h ] || { apt-get update -qq && apt-get install -y -qq liburing-dev >/dev/null; }
    gcc -O2 -o "$1" bench/bare_uring.c -luring
}
