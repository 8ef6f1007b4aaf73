#!/usr/bin/env python3
"""Compare fio's option tables and engine names with fiox's option table.

Usage: fio_option_diff.py FIO_SRC CRATE_SRC   (e.g. an unpacked fio master, crates/job/src)

Reads facts only from fio (option name, type, choice words, engine names; through
gen_fio_only.py's parser) and prints, one per line:
  missing option NAME KIND           fio has it, fiox's table has no row or alias for it
  kind NAME fio=KIND fiox=KIND        a parse-and-refuse row typed differently from fio
  engines NAME lacks ENGINE...        a parse-and-refuse row that fio's ENGINE also owns
  choice NAME WORD                    a fio choice word that fiox's Choice list lacks
  missing engine NAME                 an ioengine name fiox neither runs nor refuses by name
Exit status 1 when anything is printed, so the check can gate a regeneration.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_fio_only import collect  # noqa: E402

KIND_RE = r'K::\w+(?:\((?:&\[[^\]]*\]|"[^"]*")\))?'
ROW_RE = re.compile(r'(OptDef::new|known(?:_per_dir)?)\(\s*"([^"]+)",\s*(' + KIND_RE + ')', re.S)
# Files whose rows are generated from fio's tables, so their kinds must match fio's exactly.
GENERATED = ('fio_only.rs', 'fio342.rs', 'fio_master.rs')


def normal(kind):
    """A kind as gen_fio_only.py prints it (rustfmt may wrap a choice list)."""
    words = choices(kind)
    return 'K::Choice(&[%s])' % ', '.join('"%s"' % w for w in words) if words else kind


def fiox_table(crate):
    """{name: (kind, generated?)} and the set of aliases of fiox's option rows."""
    rows, aliases = {}, set()
    for f in sorted(glob.glob(crate + '/defs/*.rs')):
        t = open(f).read()
        gen = os.path.basename(f) in GENERATED
        found = list(ROW_RE.finditer(t))
        for k, m in enumerate(found):
            rest = t[m.end():found[k + 1].start() if k + 1 < len(found) else len(t)]
            eng = re.search(r'\.engines\(&\[([^\]]*)\]\)', rest)
            owners = sorted(re.findall(r'"([^"]+)"', eng.group(1))) if eng else []
            rows[m.group(2).lower()] = (normal(m.group(3)), gen, owners)
        for a in re.findall(r'\.alias\(&\[([^\]]*)\]\)', t):
            aliases |= {n.lower() for n in re.findall(r'"([^"]+)"', a)}
    return rows, aliases


def fiox_engines(crate, refused=True):
    """Engine names fiox runs (defs/mod.rs ENGINES) and, with `refused`, those it refuses by
    name (defs/unsupported.rs)."""
    mod = open(crate + '/defs/mod.rs').read()
    table = mod[mod.index('pub const ENGINES'):]
    table = table[:table.index('];')]
    names = set(re.findall(r'\(\s*"([^"]+)",', table)) | {'threads'}
    if not refused:
        return names
    uns = open(crate + '/defs/unsupported.rs').read()
    return names | set(re.findall(r'^\s*"([^"]+)",', uns, re.M))


def choices(kind):
    return re.findall(r'"([^"]*)"', kind) if kind.startswith('K::Choice') else []


def diff(fio, crate):
    rows, fio_engines = collect(fio)
    table, aliases = fiox_table(crate)
    runs = fiox_engines(crate, refused=False)
    out = []
    for name in sorted(rows):
        want = rows[name]['kind']
        have = table.get(name.lower())
        if have is None:
            if name.lower() not in aliases:
                out.append('missing option %s %s' % (name, want))
            continue
        kind, generated, owners = have
        # Engines fiox runs (net's hostname/port...) have their own rows; older fio engines
        # (librpma) stay for old job files, so only an owner fiox lacks is a difference.
        lacking = set(rows[name]['engines']) - set(owners) - runs
        if generated and lacking:
            out.append('engines %s lacks %s' % (name, ' '.join(sorted(lacking))))
        # fio types a value its callback parses (write_mode, multi-word verify_policy) as a
        # string; fiox checks it as a structured value.
        refined = want == 'K::Str' and kind.startswith('K::Complex')
        # A per-direction integer (cmdprio_hint) is checked as `int[,int]`.
        refined |= rows[name]['per_dir'] and kind == 'K::Complex("int[,int]")'
        if generated and kind != want and not refined:
            out.append('kind %s fio=%s fiox=%s' % (name, want, kind))
        elif kind.startswith('K::Choice'):
            out += ['choice %s %s' % (name, w) for w in choices(want) if w not in choices(kind)]
    known = fiox_engines(crate)
    # skeleton_external.c's name is a placeholder ("engine_name"), not an engine.
    out += ['missing engine %s' % e for e in fio_engines if e not in known | {'engine_name'}]
    return out


def main():
    out = diff(sys.argv[1], sys.argv[2])
    print('\n'.join(out))
    sys.exit(1 if out else 0)


if __name__ == '__main__':
    main()
