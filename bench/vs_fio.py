#!/usr/bin/env python3
"""Run the same job alternately with fio and fiox and compare IOPS and CPU time per I/O.

Each case is one fio command line; fiox runs the identical arguments. Rounds alternate which tool
goes first so drift (page cache, thermal, noisy neighbours) hits both equally. CPU time is the
child's user+system time from wait4(), so it covers every thread the tool started. Results are
medians over rounds; the ratios are fiox/fio (IOPS: higher is better for fiox; CPU per I/O: lower
is better for fiox). The last two columns are each tool's user time per I/O (ns): the part the
tools differ in; the rest is the kernel's path, the same for both.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def cases(runtime, ext4_dir):
    """name -> (args, setup note). Sizes are small enough for a 2-core, 24 GiB machine."""
    rt = [f"--runtime={runtime}", "--time_based"]
    shm = "/dev/shm/fiox-bench.dat"
    ext4 = os.path.join(ext4_dir, "fiox-bench.dat")
    return {
        "null-qd1": ["--name=null", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g"] + rt,
        "psync-tmpfs": ["--name=tmpfs", "--ioengine=psync", "--rw=randread", "--bs=4k", "--size=512m",
                        f"--filename={shm}"] + rt,
        "psync-ext4-direct": ["--name=ext4", "--ioengine=psync", "--rw=randread", "--bs=4k", "--size=512m",
                              "--direct=1", f"--filename={ext4}"] + rt,
        "io_uring-ext4-qd32": ["--name=uring", "--ioengine=io_uring", "--rw=randread", "--bs=4k", "--size=512m",
                               "--iodepth=32", "--direct=1", f"--filename={ext4}"] + rt,
        "libaio-ext4-qd32": ["--name=aio", "--ioengine=libaio", "--rw=randread", "--bs=4k", "--size=512m",
                             "--iodepth=32", "--direct=1", f"--filename={ext4}"] + rt,
        "io_uring-tmpfs-qd32": ["--name=uring", "--ioengine=io_uring", "--rw=randread", "--bs=4k", "--size=512m",
                                "--iodepth=32", f"--filename={shm}"] + rt,
        "libaio-tmpfs-qd32": ["--name=aio", "--ioengine=libaio", "--rw=randread", "--bs=4k", "--size=512m",
                              "--iodepth=32", f"--filename={shm}"] + rt,
        # tmpfs takes O_DIRECT since Linux 6.6: the issue-28 target (async engines, QD32, direct).
        "io_uring-tmpfs-qd32-direct": ["--name=uring", "--ioengine=io_uring", "--rw=randread", "--bs=4k",
                                       "--size=512m", "--iodepth=32", "--direct=1", f"--filename={shm}"] + rt,
        "libaio-tmpfs-qd32-direct": ["--name=aio", "--ioengine=libaio", "--rw=randread", "--bs=4k",
                                     "--size=512m", "--iodepth=32", "--direct=1", f"--filename={shm}"] + rt,
        # glibc's POSIX AIO: IOPS plus CPU per I/O show the reaper's wake-up pattern.
        "posixaio-ext4-qd32": ["--name=paio", "--ioengine=posixaio", "--rw=randread", "--bs=4k", "--size=512m",
                               "--iodepth=32", "--direct=1", f"--filename={ext4}"] + rt,
        "posixaio-ext4-qd100": ["--name=paio", "--ioengine=posixaio", "--rw=randread", "--bs=4k", "--size=512m",
                                "--iodepth=100", "--direct=1", f"--filename={ext4}"] + rt,
        # io_submit_mode=offload, size-bound (fio 3.33 hangs on offload jobs with a runtime
        # here) and at iodepth=1 (fio caps synchronous engines at 1 even when offloaded).
        "offload-psync-tmpfs": ["--name=off", "--ioengine=psync", "--io_submit_mode=offload", "--rw=randread",
                                "--bs=4k", "--size=512m", "--thread", f"--filename={shm}"],
        "peak-io_uring-tmpfs": ["--name=peak", "--ioengine=io_uring", "--rw=randread", "--bs=4k", "--size=512m",
                                "--iodepth=128", "--iodepth_batch_submit=32", "--iodepth_batch_complete_min=32",
                                "--iodepth_batch_complete_max=32", "--gtod_reduce=1", f"--filename={shm}"] + rt,
    }


def run_timed(tool, args):
    """Run one tool with JSON output; return (IOPS, CPU seconds per I/O, user seconds per I/O)
    from wait4()."""
    cmd = [tool] + args + ["--output-format=json"]
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        out = os.open(f"/tmp/vs-fio-{os.getppid()}.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.execvp(cmd[0], cmd)
    # A tool that hangs (fio 3.33 does on some offload jobs) is killed rather than waited on.
    signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
    signal.alarm(600)
    _, status, ru = os.wait4(pid, 0)
    signal.alarm(0)
    path = f"/tmp/vs-fio-{os.getpid()}.json"
    with open(path) as f:
        text = f.read()
    os.unlink(path)
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed (status {status}); rerun it by hand to see why")
    doc = json.loads(text)
    iops = ios = 0.0
    for job in doc["jobs"]:
        for d in ("read", "write", "trim"):
            iops += float(job[d]["iops"])
            ios += float(job[d]["total_ios"])
    cpu = ru.ru_utime + ru.ru_stime
    return iops, cpu / max(ios, 1.0), ru.ru_utime / max(ios, 1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run")
    ap.add_argument("--fio", default=shutil.which("fio") or "fio")
    ap.add_argument("--fiox", default=os.path.join(ROOT, "target", "release", "fiox"))
    ap.add_argument("--ext4-dir", default="/var/tmp", help="directory on a filesystem with O_DIRECT")
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    a = ap.parse_args()
    table = cases(a.runtime, a.ext4_dir)
    names = a.cases or list(table)
    for n in names:
        if n not in table:
            sys.exit(f"unknown case '{n}'; cases: {', '.join(table)}")
    fio_ver = subprocess.run([a.fio, "--version"], capture_output=True, text=True).stdout.strip()
    fiox_ver = subprocess.run([a.fiox, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# {fio_ver} vs {fiox_ver}, {a.rounds} rounds x {a.runtime}s, {os.cpu_count()} CPUs, "
          f"kernel {os.uname().release}")
    print(f"{'case':<22} {'fio IOPS':>11} {'fiox IOPS':>11} {'IOPS x':>7} "
          f"{'fio ns/IO':>10} {'fiox ns/IO':>10} {'CPU/IO x':>8} {'fio usr':>8} {'fiox usr':>8}")
    for n in names:
        args = table[n]
        res = {"fio": [], "fiox": []}
        for r in range(a.rounds):
            order = [("fio", a.fio), ("fiox", a.fiox)]
            if r % 2:
                order.reverse()
            for key, tool in order:
                res[key].append(run_timed(tool, args))
        fi = statistics.median(x[0] for x in res["fio"])
        xi = statistics.median(x[0] for x in res["fiox"])
        fc = statistics.median(x[1] for x in res["fio"]) * 1e9
        xc = statistics.median(x[1] for x in res["fiox"]) * 1e9
        # User time alone: where the tools differ (the kernel's share of an I/O is the same
        # path for both), so how low CPU/IO x can go.
        fu = statistics.median(x[2] for x in res["fio"]) * 1e9
        xu = statistics.median(x[2] for x in res["fiox"]) * 1e9
        print(f"{n:<22} {fi:>11.0f} {xi:>11.0f} {xi / fi:>7.2f} {fc:>10.0f} {xc:>10.0f} {xc / fc:>8.2f}"
              f" {fu:>8.0f} {xu:>8.0f}", flush=True)
    print("# command: fio|fiox <case args> --output-format=json; see bench/vs_fio.py cases()")
    # The data files were laid out by this script's runs: remove them.
    for path in ("/dev/shm/fiox-bench.dat", os.path.join(a.ext4_dir, "fiox-bench.dat")):
        if os.path.exists(path):
            os.unlink(path)


if __name__ == "__main__":
    main()
