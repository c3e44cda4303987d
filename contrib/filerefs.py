#!/usr/bin/python3
"""filerefs.py - every source file a comment or a doc names exists.

Reads the tracked sources, makefiles, scripts and docs, and finds each
name of a C file in them (a word ending in .c or .h): in C, in comments
alone. A name with a folder (privsep/worker/probe.c) must be a file of
the tree, named from its top or from a folder of it; a bare name
(probe.c) must be the name of one. Not the tree's, and so skipped: what
the build makes (build/gen), a system header (libpq-fe.h, sys/un.h), a
path under a shell variable or an install prefix, and the reader's own
program of the docs' examples (prog.c).

usage: contrib/filerefs.py        (from the top of the checkout)
Prints each dangling name as file:line: name, and exits 1 if any.
"""
import os
import re
import subprocess
import sys

import ctext

REF = re.compile(r'(?<![\w/.<$}-])((?:[\w.-]+/)*[\w-]+\.[ch])(?![\w/])')
READERS = {'prog.c'}
INSTALLED = ('share/', 'lib/systemd/', 'include/')
SCANNED = re.compile(
    r'\.(c|h|md|mk|sh|py|list|awk|[158])$|(^|/)GNUmakefile$|^\.ci/')


def tracked():
    out = subprocess.run(['git', 'ls-files'], capture_output=True,
                         text=True, check=True).stdout
    return [f for f in out.splitlines() if f]


def system_headers():
    """Paths of /usr/include's headers, each from every folder up."""
    found = set()
    for top, _, files in os.walk('/usr/include'):
        rel = os.path.relpath(top, '/usr/include')
        parts = [] if rel == '.' else rel.split('/')
        for f in files:
            for i in range(len(parts) + 1):
                found.add('/'.join(parts[i:] + [f]))
    return found


def exists(ref, paths, names, made, system):
    if ref in READERS or ref.startswith(INSTALLED) or ref in system:
        return True
    base = ref.rsplit('/', 1)[-1]
    if '/' not in ref:
        return ref in names or ref in made
    return ref in paths or any(p.endswith('/' + ref) for p in paths) or \
        (ref.startswith('build/') and base in made)


def main():
    files = tracked()
    paths = set(files)
    names = {f.rsplit('/', 1)[-1] for f in files}
    made = set(os.listdir('build/gen')) if os.path.isdir('build/gen') \
        else set()
    made |= {'seccomp_lists.h'}   # GNUmakefile's GEN_H, made by gen.awk
    system = system_headers()
    bad = 0
    for f in filter(SCANNED.search, files):
        try:
            text = open(f, encoding='utf-8', errors='replace').read()
        except OSError:
            continue
        if f.endswith(('.c', '.h')):
            text = ctext.split(text)[0]
        for n, line in enumerate(text.splitlines(), 1):
            for m in REF.finditer(line):
                if not exists(m.group(1), paths, names, made, system):
                    print(f'{f}:{n}: {m.group(1)}')
                    bad += 1
    if bad:
        print(f'filerefs: {bad} names of files that do not exist',
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
