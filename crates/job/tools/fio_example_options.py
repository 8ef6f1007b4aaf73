#!/usr/bin/env python3
"""Print the option names (and ioengine values) each of fio's example job files uses, one file
per line: `FILE: name name ... | engine engine`. Facts only, no job file is copied; the list
drives crates/job/tests/fio_examples.rs when fio's source is not at hand.

Usage: fio_example_options.py FIO_SRC > crates/job/tests/data/fio-3.42-example-options.txt
"""
import glob
import os
import re
import sys

src = sys.argv[1]
for path in sorted(glob.glob(os.path.join(src, "examples", "*.fio"))):
    names, engines = [], []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.strip()
        if not line or line[0] in ";#[":
            continue
        name, _, value = line.partition("=")
        name = name.strip()
        if not re.fullmatch(r"[A-Za-z0-9_]+", name) or name.lower() == "include":
            continue
        if name not in names:
            names.append(name)
        if name == "ioengine":
            e = value.strip()
            if e and "$" not in e and e not in engines:
                engines.append(e)
    print(f"{os.path.basename(path)}: {' '.join(names)} | {' '.join(engines)}")
