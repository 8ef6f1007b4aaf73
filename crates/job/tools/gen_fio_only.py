#!/usr/bin/env python3
"""Print the body of `OPTS` in crates/job/src/defs/fio_only.rs from a fio 3.33 source tree.

Usage: gen_fio_only.py FIO_SRC CRATE_SRC > table.txt

Reads facts only (option name, alias, type, min/max, choice words, per-direction, owning
engines) from FIO_SRC/options.c, FIO_SRC/engines/*.c and the tiobench profile; no help text.
Options fiox implements (found in CRATE_SRC/defs/*.rs) are left out. Paste the output between
`pub static OPTS: &[OptDef] = &[` and `];`.
"""
import glob
import re
import sys

def blocks(text, start_re):
    """(name, body) of every `struct ... NAME[] = { ... }` initializer."""
    out = []
    for m in re.finditer(start_re, text):
        i = text.index('{', m.end() - 1)
        depth, j = 0, i
        while True:
            depth += {'{': 1, '}': -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        out.append((m.group(1), text[i + 1:j]))
    return out


def entries(body):
    """Top-level `{ ... }` entries of a table."""
    res, depth, start = [], 0, None
    for k, c in enumerate(body):
        if c == '{':
            if depth == 0:
                start = k
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                res.append(body[start + 1:k])
    return res


def field(e, f):
    m = re.search(r'^\s*\.' + f + r'\s*=\s*(.+?),?\s*$', e, re.M)
    return m.group(1).strip().rstrip(',') if m else None


def strf(e, f):
    v = field(e, f)
    return v.strip('"') if v and v.startswith('"') else v


def num(v):
    try:
        return int(v.strip(), 0)
    except (AttributeError, ValueError):
        return None


def kind(e):
    t = field(e, 'type')
    posval = re.search(r'\.posval\s*=\s*\{(.*)\}', e, re.S)
    words = re.findall(r'\.ival\s*=\s*"([^"]*)"', posval.group(1)) if posval else []
    timed = 'is_time' in e or t == 'FIO_OPT_STR_VAL_TIME'
    if t == 'FIO_OPT_STR' and words:
        return 'K::Choice(&[%s])' % ', '.join('"%s"' % w.lower() for w in words)
    if t in ('FIO_OPT_BOOL', 'FIO_OPT_STR_SET'):
        return 'K::Bool'
    if timed and t in ('FIO_OPT_INT', 'FIO_OPT_ULL', 'FIO_OPT_STR_VAL_TIME'):
        return 'K::Time("s")' if 'is_seconds' in e else 'K::Time("us")'
    if t in ('FIO_OPT_INT', 'FIO_OPT_ULL'):
        return 'K::Int'
    if t in ('FIO_OPT_STR_VAL', 'FIO_OPT_STR_VAL_ZONE'):
        return 'K::Size'
    if t == 'FIO_OPT_RANGE':
        return 'K::Complex("range")'
    if t == 'FIO_OPT_FLOAT_LIST':
        return 'K::Complex("list of numbers")'
    return 'K::Str'


CATS = {'FIO_OPT_C_GENERAL': 'General', 'FIO_OPT_C_IO': 'Io', 'FIO_OPT_C_FILE': 'Files',
        'FIO_OPT_C_STAT': 'Stats', 'FIO_OPT_C_LOG': 'Logs', 'FIO_OPT_C_PROFILE': 'General',
        'FIO_OPT_C_ENGINE': 'Engine'}
# Tables shared by engines defined in other files.
SHARED = {'gfapi_options': ['gfapi', 'gfapi_async'],
          'librpma_fio_options': ['librpma_apm_client', 'librpma_apm_server',
                                  'librpma_gpspm_client', 'librpma_gpspm_server']}

def implemented_names(crate):
    """Lower-case names and aliases of the options fiox implements (defs/*.rs but fio_only)."""
    implemented = set()
    for f in glob.glob(crate + '/defs/*.rs'):
        if f.endswith('fio_only.rs'):
            continue
        t = open(f).read()
        implemented |= {n.lower() for n in re.findall(r'OptDef::new\(\s*"([^"]+)"', t)}
        for a in re.findall(r'\.alias\(&\[([^\]]*)\]\)', t):
            implemented |= {n.lower() for n in re.findall(r'"([^"]+)"', a)}
    return implemented


def add(rows, e, engines, skip):
    """Record option entry `e` (owned by `engines`) unless its name is in `skip`."""
    name = strf(e, 'name')
    if not name or name == 'NULL' or name.lower() in skip:
        return
    t = field(e, 'type')
    alias = strf(e, 'alias')
    if name in rows:  # the same option in several engines (or compiled-out duplicates)
        r = rows[name]
        r['engines'] = sorted(set(r['engines']) | set(engines))
        if alias and not r['alias']:
            r['alias'] = alias
        if r['type'] != 'FIO_OPT_UNSUPPORTED' or t == 'FIO_OPT_UNSUPPORTED':
            return
    cat = CATS.get(field(e, 'category') or '', 'General')
    rows[name] = dict(type=t, kind=kind(e), alias=alias, lo=num(field(e, 'minval')),
                      hi=num(field(e, 'maxval')), engines=list(engines),
                      cat='Engine' if engines else cat, per_dir='.off2' in e)


def option_macros(fio):
    """Option entries engines share through a header macro (CMDPRIO_OPTIONS): name -> body of
    its first (Linux) definition, line continuations removed."""
    out = {}
    for h in sorted(glob.glob(fio + '/engines/*.h')):
        text = open(h).read().replace('\\\n', '\n')
        for m in re.finditer(r'#define (\w+)\([^)]*\)\s*\n(.*?)\n#', text, re.S):
            if '.name' in m.group(2):
                out.setdefault(m.group(1), m.group(2))
    return out


def collect(fio, skip=frozenset()):
    """Every option of fio's tree at `fio` (core, engines, tiobench's `threads`) by name, and
    the sorted names of its engines."""
    rows, names = {}, set()
    for _, body in blocks(open(fio + '/options.c').read(),
                          r'struct fio_option (fio_options)\[FIO_MAX_OPTS\] = '):
        for e in entries(body):
            add(rows, e, [], skip)
    macros = option_macros(fio)
    for f in sorted(glob.glob(fio + '/engines/*.c')):
        text = open(f).read()
        for name, body in macros.items():
            text = re.sub(name + r'\([^)]*\)', lambda _: body, text)
        owners = {}
        for _, ops in blocks(text, r'struct ioengine_ops (\w+) = '):
            names.add(strf(ops, 'name'))
            if field(ops, 'options'):
                owners.setdefault(field(ops, 'options'), []).append(strf(ops, 'name'))
        for table, body in blocks(text, r'struct fio_option (\w+)\[\] = '):
            engines = SHARED.get(table, owners.get(table, []))
            if 'skeleton' in f or not engines:
                continue
            for e in entries(body):
                add(rows, e, engines, skip)
    for _, body in blocks(open(fio + '/profiles/tiobench.c').read(),
                          r'struct fio_option (\w+)\[\] = '):
        for e in entries(body):
            if strf(e, 'name') == 'threads':  # the only one not also a job option
                add(rows, e, [], skip)
    return rows, sorted(n for n in names if n)


def main():
    fio, crate = sys.argv[1], sys.argv[2]
    implemented = implemented_names(crate)
    rows, _ = collect(fio, implemented)
    for name in sorted(rows):
        r = rows[name]
        ctor = 'known_per_dir' if r['per_dir'] else 'known'
        s = '    %s("%s", %s, C::%s)' % (ctor, name, r['kind'], r['cat'])
        if r['alias'] and r['alias'] != 'NULL' and r['alias'].lower() not in implemented:
            s += '\n        .alias(&["%s"])' % r['alias']
        if r['kind'] in ('K::Int', 'K::Size') and (r['lo'] is not None or r['hi'] is not None):
            lo = r['lo'] if r['lo'] is not None else (0 if r['kind'] == 'K::Size' else 'i64::MIN')
            hi = r['hi'] if r['hi'] is not None else 'i64::MAX'
            s += '\n        .range(%s, %s)' % (lo, hi)
        if r['engines']:
            s += '\n        .engines(&[%s])' % ', '.join('"%s"' % e for e in r['engines'])
        print(s + ',')


if __name__ == '__main__':
    main()
