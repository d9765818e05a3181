#!/usr/bin/env python3
"""calls.py OBJECT... -- no call cycle between the source files of a module.

Reads each object's defined and undefined symbols (nm) and links file A to
file B when A uses a symbol B defines.  A cycle (A reaches B and B reaches
A, directly or through other files) means the files cannot be read, or
changed, one after the other: exit 1 naming the files on it.  A function
called through a pointer stored at run time (the filter's struct rbf_ops)
is no link: the file that stores it is.
"""
import os
import subprocess
import sys


def main(objs):
    if not objs:
        print("usage: calls.py OBJECT...")
        return 2
    defs, uses = {}, {}
    for o in objs:
        name = os.path.basename(o).split(".")[0]
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        uses[name] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDRB":
                defs[f[2]] = name
            elif len(f) == 2 and f[0] == "U":
                uses[name].add(f[1])
    links = {n: {defs[s] for s in u if s in defs and defs[s] != n} for n, u in uses.items()}

    def reaches(a, b):
        seen, todo = set(), [a]
        while todo:
            for x in links[todo.pop()]:
                if x == b:
                    return True
                if x not in seen:
                    seen.add(x)
                    todo.append(x)
        return False

    for n in sorted(links):
        print(f"{n} -> {' '.join(sorted(links[n])) or '(none)'}")
    cyc = sorted(n for n in links if reaches(n, n))
    if cyc:
        print("call cycle through: " + " ".join(cyc))
        return 1
    print(f"no call cycle between the {len(links)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
