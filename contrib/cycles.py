#!/usr/bin/python3
"""cycles.py - no call cycle between the files of one executable, and no
include cycle between headers.

    contrib/cycles.py OBJDIR... -- HEADERDIR...

Each OBJDIR holds one executable's object files (in folders below it, as
the build makes them: its own and the shared/ ones it links). A file
calls another when its object file uses a symbol the other's defines
(nm). Prints each cycle and exits 1 if there is one.
"""
import glob
import os
import re
import subprocess
import sys


def cycles(graph):
    found = []

    def walk(start, node, path):
        for n in sorted(graph.get(node, ())):
            if n == start:
                found.append(path + [start])
            elif n not in path and n > start:
                walk(start, n, path + [n])

    for node in sorted(graph):
        walk(node, node, [node])
    return found


def calls(objdir):
    defs, uses = {}, {}
    for o in glob.glob(os.path.join(objdir, "**", "*.o"), recursive=True):
        f = os.path.relpath(o, objdir)[:-2] + ".c"
        uses[f] = set()
        out = subprocess.run(["nm", o], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBR":
                defs[p[2]] = f
            elif len(p) == 2 and p[0] == "U":
                uses[f].add(p[1])
    return {f: {defs[s] for s in u if s in defs and defs[s] != f}
            for f, u in uses.items()}


def includes(dirs):
    graph = {}
    for d in dirs:
        for h in glob.glob(os.path.join(d, "*.h")):
            with open(h) as fh:
                names = re.findall(r'#include "([^"]+)"', fh.read())
            graph[h] = {c for n in names for c in
                        (os.path.join(d, n), os.path.join("shared", n))
                        if os.path.exists(c)}
    return graph


def main(argv):
    sep = argv.index("--") if "--" in argv else len(argv)
    bad = []
    for objdir in argv[:sep]:
        if not glob.glob(os.path.join(objdir, "**", "*.o"), recursive=True):
            sys.exit("cycles.py: no object files in %s" % objdir)
        bad += [(objdir, c) for c in cycles(calls(objdir))]
    bad += [("headers", c) for c in cycles(includes(argv[sep + 1:]))]
    for where, c in bad:
        print("cycles.py: %s: %s" % (where, " -> ".join(c)), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
