#!/usr/bin/env python3
"""deps-cycles.py - the call and include cycles between the files of a source folder.

File A depends on file B when A calls (or reads) a symbol that B's object
defines (from `nm`: A's undefined symbols against B's defined ones), or when
A includes B's own header (B.h beside B.c, or B_internal.h). Prints every
strongly connected group of two or more files, with the symbols or headers
that make each edge, and exits 1 when there is one.

usage: tools/deps-cycles.py OBJ_DIR [SRC_DIR]
  OBJ_DIR  the folder of the objects (e.g. build/obj/src/study)
  SRC_DIR  the folder of the sources, for the include edges (e.g. src/study)
"""
import os
import re
import subprocess
import sys


def symbols(obj):
    """(defined, undefined) global symbol names of one object file."""
    out = subprocess.run(["nm", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCGSVW":
            defined.add(parts[2])
    return defined, undefined


def header_owner(src_dir, names):
    """header file name -> the file (stem) it belongs to."""
    owner = {}
    for h in os.listdir(src_dir):
        if not h.endswith(".h"):
            continue
        stem = h[:-2]
        stem = stem[: -len("_internal")] if stem.endswith("_internal") else stem
        if stem in names:
            owner[h] = stem
    return owner


def include_edges(src_dir, names, edges):
    owner = header_owner(src_dir, names)
    for a in names:
        path = os.path.join(src_dir, a + ".c")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for m in re.finditer(r'^#include "([^"]+)"', f.read(), re.M):
                b = owner.get(os.path.basename(m.group(1)))
                if b and b != a:
                    edges.setdefault((a, b), set()).add("#include " + m.group(1))


def strongly_connected(names, edges):
    """Tarjan's algorithm: the groups of mutually reachable files."""
    succ = {n: sorted({b for (a, b) in edges if a == n}) for n in names}
    index, low, stack, on, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            g = []
            while True:
                w = stack.pop()
                on.discard(w)
                g.append(w)
                if w == v:
                    break
            if len(g) > 1:
                groups.append(sorted(g))

    sys.setrecursionlimit(10000)
    for n in names:
        if n not in index:
            visit(n)
    return groups


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    obj_dir = argv[1]
    objs = sorted(f for f in os.listdir(obj_dir) if f.endswith(".o"))
    if not objs:
        sys.stderr.write("deps-cycles: %s: no object files (build first)\n" % obj_dir)
        return 2
    names = [o[:-2] for o in objs]
    syms = {n: symbols(os.path.join(obj_dir, n + ".o")) for n in names}
    definer = {}
    for n in names:
        for s in syms[n][0]:
            definer[s] = n
    edges = {}
    for a in names:
        for s in syms[a][1]:
            b = definer.get(s)
            if b and b != a:
                edges.setdefault((a, b), set()).add(s)
    if len(argv) == 3:
        include_edges(argv[2], names, edges)
    groups = strongly_connected(names, edges)
    for g in groups:
        print("cycle among %d files: %s" % (len(g), " ".join(g)))
        for a in g:
            for b in g:
                if (a, b) in edges:
                    why = sorted(edges[(a, b)])
                    more = " ..." if len(why) > 4 else ""
                    print("  %s -> %s: %s%s" % (a, b, ", ".join(why[:4]), more))
    pairs = sorted((a, b) for (a, b) in edges if a < b and (b, a) in edges)
    print("%d files, %d edges, %d cycle groups, %d two-file cycles%s" % (
        len(names), len(edges), len(groups), len(pairs),
        (": " + ", ".join("%s<->%s" % p for p in pairs)) if pairs else ""))
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
