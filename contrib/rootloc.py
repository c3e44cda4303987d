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
that word runs only in its children that dropped to another uid (the
prober, a session child, the relay). A file without a "runs in:" line
is counted as root and named. The root total counts each file once,
whether the monitor or the worker (or both) runs it.
"""
import os
import re
import subprocess
import sys

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
        ('sbx-worker', 'its children\'s uids', wrk_other),
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
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
