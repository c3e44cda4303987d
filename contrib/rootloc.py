#!/usr/bin/python3
"""rootloc.py - the lines each process runs, by uid, and the root total.

    contrib/rootloc.py BUILD_DIR MON_SRC WRK_SRC BRK_SRC
                                      (from the top of the checkout; each
                                      *_SRC one argument, as GNUmakefile
                                      has it)

An executable's files are the sources it links and the headers they
include, as the build's dependency files say (BUILD_DIR/obj/{mon,wrk,brk}/). A file's lines are counted
as contrib/loc.sh does (no blanks, no comments). Whom a file of the
worker runs as is what its "runs in:" line says: "root" on that line
means some of its code runs as root there; a file of the worker without
that word runs only as another uid: in its children that dropped to a
sandbox's uid (the prober, a session child, the relay) or its parsing
jobs, which drop to sbx-job (privsep/worker/jobuser.c). A file without a "runs in:" line
is counted as root and named. The root total counts each file once,
whether the monitor or the worker (or both) runs it.

Then the lines that read bytes another process or a container controls:
the functions (and files) that privsep/monitor/README.md's table of them
names in its "read by" column, each found where it is defined, with the
functions of its file it calls or names (a check table's), counted
without blanks and comments.
"""
import os
import re
import subprocess
import sys

import ctext

EXES = (('mon', 'sbx-monitor'), ('wrk', 'sbx-worker'), ('brk', 'sbx-broker'))
OURS = ('privsep/', 'shared/', 'broker/')


def files_of(objdir, sources):
    found = set()
    for src in sources.split():
        d = os.path.join(objdir, src[:-2] + '.d')
        if not src.startswith(OURS) or not os.path.isfile(d):
            continue
        text = open(d).read().replace('\\\n', ' ')
        deps = text.split(':', 1)[1].split() if ':' in text else []
        found |= {p for p in deps if p.startswith(OURS) and
                  os.path.isfile(p)}
    return found


def loc(path):
    out = subprocess.run(['gcc', '-fpreprocessed', '-dD', '-E', '-P',
                          '-x', 'c', path], capture_output=True, text=True,
                         check=True).stdout
    return sum(1 for line in out.splitlines() if line.strip())


def defined(lines):
    """{name: (start, end)} of the functions a file's lines define: from
    the return type's line to the closing brace."""
    spans = {}
    for i, line in enumerate(lines):
        m = re.match(r'([a-z_][a-z0-9_]*)\(', line)
        if m is None or i == 0:
            continue
        start = i - 1 if lines[i - 1].strip() else i
        end = next((j for j in range(i, len(lines))
                    if lines[j].startswith('}')), len(lines) - 1)
        spans[m.group(1)] = (start, end)
    return spans


def function_lines(name, files):
    """(file, lines) of name's definition and of every function of its
    file it names (calls, or puts in a table), transitively; None if no
    file defines it."""
    for f in files:
        lines = ctext.split(open(f).read())[1].split('\n')
        spans = defined(lines)
        if name not in spans:
            continue
        todo, seen = [name], set()
        while todo:
            fn = todo.pop()
            if fn in seen:
                continue
            seen.add(fn)
            a, b = spans[fn]
            body = '\n'.join(lines[a:b + 1])
            todo += [g for g in spans if g not in seen and
                     re.search(r'\b' + g + r'\b', body)]
        return f, {fn: sum(1 for ln in lines[spans[fn][0]:spans[fn][1] + 1]
                           if ln.strip()) for fn in seen}
    return None


def readers(readme, files):
    """The "read by" column's functions and files, with their lines."""
    found, rows = {}, False
    for line in open(readme):
        if line.startswith('| bytes |'):
            rows = True
            continue
        if rows and not line.startswith('|'):
            break
        if not rows or line.startswith('| ---'):
            continue
        col = line.split('|')[3]
        for tok in re.findall(r'`([^`]+)`', col):
            if re.fullmatch(r'[a-z][a-z0-9_]*', tok):
                hit = function_lines(tok, files)
                if hit is not None:
                    found[tok] = hit
            elif re.fullmatch(r'[\w/]+\.c', tok) and \
                    not any(f.endswith(tok) for f, _ in found.values()):
                path = next((f for f in files if f.endswith('/' + tok) or
                             f == tok), None)
                if path is not None and not col.count(tok + '`)'):
                    found[tok] = (path, {'': loc(path)})
    return found


def runs_in(path):
    """The file's runs-in text, or None."""
    text = open(path, encoding='utf-8', errors='replace').read(4096)
    m = re.search(r'^ \* runs in: (.*(?:\n \*   .*)*)', text, re.M)
    return None if m is None else m.group(1)


def main(argv):
    if len(argv) != 4:
        print('usage: rootloc.py BUILD_DIR MON_SRC WRK_SRC BRK_SRC',
              file=sys.stderr)
        return 2
    build = argv[0]
    sets = {exe: files_of(os.path.join(build, 'obj', key), src)
            for (key, exe), src in zip(EXES, argv[1:])}
    if not all(sets.values()):
        print('rootloc: no dependency files: build first', file=sys.stderr)
        return 1
    lines = {f: loc(f) for s in sets.values() for f in s}
    unlabelled = sorted(f for f in sets['sbx-worker'] | sets['sbx-monitor']
                        if runs_in(f) is None)

    def as_root(f):
        r = runs_in(f)
        return r is None or re.search(r'\broot\b', r) is not None

    wrk_root = {f for f in sets['sbx-worker'] if as_root(f)}
    wrk_other = sets['sbx-worker'] - wrk_root
    rows = [
        ('sbx-monitor', 'root', sets['sbx-monitor']),
        ('sbx-worker', 'root', wrk_root),
        ('sbx-worker', 'other uids', wrk_other),
        ('sbx-broker', 'the broker user', sets['sbx-broker']),
    ]
    print(f'{"process":<12} {"uid":<20} {"files":>5} {"lines":>7}'
          f'   of which shared/')
    for exe, uid, fs in rows:
        sh = sum(lines[f] for f in fs if f.startswith('shared/'))
        print(f'{exe:<12} {uid:<20} {len(fs):>5} '
              f'{sum(lines[f] for f in fs):>7}   {sh:>6}')
    root = sets['sbx-monitor'] | wrk_root
    print(f'{"root total":<33} {len(root):>5} '
          f'{sum(lines[f] for f in root):>7}   (each file once)')
    if unlabelled:
        print('no "runs in:" line, counted as root: ' +
              ' '.join(unlabelled))
    monitor_files = sorted(f for f in sets['sbx-monitor'] | sets['sbx-worker']
                           if f.endswith('.c'))
    found = readers('privsep/monitor/README.md', monitor_files)
    unique = {(f, fn): n for f, fns in found.values()
              for fn, n in fns.items()}
    print(f'reading bytes others control (privsep/monitor/README.md): '
          f'{sum(unique.values())} lines in {len(found)} functions and '
          f'files (and the functions of their files they call, each once)')
    for name, (f, fns) in sorted(found.items(),
                                 key=lambda x: -sum(x[1][1].values())):
        print(f'  {sum(fns.values()):5}  {name} ({f})')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
