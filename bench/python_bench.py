#!/usr/bin/python3
"""rbf.Filter against Python's set and against a plain pure-Python Bloom
filter (hashlib-based, below), side by side, in one run:

  - 10^6 distinct 16-byte keys and 10^6 short str, a filter of 4 MiB
    planned at an average false-positive rate of 1%;
  - f.add in a loop against set.add in a loop, f.update(list) against
    set.update(list), `in` against `in`;
  - the same operations on the pure-Python Bloom filter;
  - memory for 10^7 items: a set of them against a filter planned for
    10^7 items per cycle at an average rate of 1%.

    PYTHONPATH=python /usr/bin/python3 bench/python_bench.py [--n N] [--repeat R] [--json]

Each timing is the best of R runs (default 3); the ratios are of those.
Timings are of a machine shared with other work: run it several times and
give ranges.  Targets (docs/python.md): the add loop at most 1.3x the
set.add loop, update at most 1.0x set.update, at least 50x the pure-Python
filter, and at most 1/20 of the set's memory for 10^7 items.
"""
import argparse
import gc
import hashlib
import json
import math
import os
import platform
import sys
import time
import tracemalloc

import rbf


class PyBloom:
    """A plain Bloom filter in pure Python: k positions from one blake2b
    digest (double hashing), the bits in a bytearray."""

    def __init__(self, bits, hashes):
        self.m = bits
        self.k = hashes
        self.a = bytearray((bits + 7) // 8)

    def _pos(self, item):
        if isinstance(item, str):
            item = item.encode()
        d = hashlib.blake2b(item, digest_size=16).digest()
        h1 = int.from_bytes(d[:8], "little")
        h2 = int.from_bytes(d[8:], "little") | 1
        m = self.m
        return [(h1 + i * h2) % m for i in range(self.k)]

    def add(self, item):
        new = False
        a = self.a
        for p in self._pos(item):
            byte, bit = p >> 3, 1 << (p & 7)
            if not a[byte] & bit:
                a[byte] |= bit
                new = True
        return new

    def __contains__(self, item):
        a = self.a
        return all(a[p >> 3] & (1 << (p & 7)) for p in self._pos(item))

    def update(self, items):
        for x in items:
            self.add(x)


def best(fn, repeat):
    t = math.inf
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def cpu_name():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_kind(name, keys, repeat, pure_n):
    out = {}
    plan = rbf.plan(memory="4MiB", fp=0.01)["sigma_bounded"]

    def new_filter():
        return rbf.Filter(bits=4 * 1024 * 1024 * 8, hashes=plan["hashes"], sigma=plan["sigma"])

    def add_loop_f():
        f = new_filter()
        add = f.add
        for x in keys:
            add(x)

    def add_loop_s():
        s = set()
        add = s.add
        for x in keys:
            add(x)

    out["add_loop"] = (best(add_loop_f, repeat), best(add_loop_s, repeat))
    out["update"] = (best(lambda: new_filter().update(keys), repeat),
                     best(lambda: set().update(keys), repeat))
    f = new_filter()
    f.update(keys)
    s = set(keys)

    def in_f():
        for x in keys:
            x in f

    def in_s():
        for x in keys:
            x in s

    out["in_loop"] = (best(in_f, repeat), best(in_s, repeat))
    # the pure-Python filter on a slice (it is slow), scaled per item
    sub = keys[:pure_n]
    b = PyBloom(4 * 1024 * 1024 * 8, plan["hashes"])
    t_pb_add = best(lambda: [b.add(x) for x in sub], 1) * len(keys) / len(sub)
    t_pb_in = best(lambda: [x in b for x in sub], 1) * len(keys) / len(sub)
    out["pure_python"] = {"add_loop": t_pb_add, "in_loop": t_pb_in}
    return out


def memory_for(n):
    """Bytes held by a set of n 16-byte keys (the set and its keys, traced)
    against a filter planned for n items per cycle at an average rate of 1%."""
    keys_src = os.urandom(16 * n)
    gc.collect()
    tracemalloc.start()
    s = set()
    for i in range(0, 16 * n, 16):
        s.add(keys_src[i:i + 16])
    set_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del s
    f = rbf.Filter.planned(capacity=n, fp=0.01)
    return set_bytes, f.__sizeof__(), f.config


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pure", type=int, default=50000, help="items for the pure-Python filter")
    ap.add_argument("--memory-items", type=int, default=10**7)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    n = a.n
    raw = os.urandom(16 * n)
    byte_keys = list(dict.fromkeys(raw[i:i + 16] for i in range(0, 16 * n, 16)))
    str_keys = ["user-%d" % i for i in range(n)]
    res = {"cpu": cpu_name(), "python": sys.version.split()[0], "n": n, "repeat": a.repeat,
           "bytes16": run_kind("bytes16", byte_keys, a.repeat, a.pure),
           "str": run_kind("str", str_keys, a.repeat, a.pure)}
    set_b, f_b, cfg = memory_for(a.memory_items)
    res["memory"] = {"items": a.memory_items, "set_bytes": set_b, "filter_bytes": f_b,
                     "filter": {k: cfg[k] for k in ("bits", "hashes", "sigma")},
                     "ratio": f_b / set_b}
    if a.json:
        print(json.dumps(res, indent=1))
        return
    print("rbf Python benchmark: %s, Python %s, %d items, best of %d" %
          (res["cpu"], res["python"], n, a.repeat))
    print("%-10s %-10s %10s %10s %8s %12s %8s" % ("keys", "op", "rbf (s)", "set (s)", "rbf/set",
                                                  "pure-Py (s)", "pure/rbf"))
    for kind in ("bytes16", "str"):
        r = res[kind]
        for op in ("add_loop", "update", "in_loop"):
            tf, ts = r[op]
            pp = r["pure_python"].get(op if op != "update" else "add_loop")
            print("%-10s %-10s %10.3f %10.3f %7.2fx %12.2f %7.0fx" % (
                kind, op, tf, ts, tf / ts, pp, pp / tf))
    m = res["memory"]
    print("memory for %d items: set %.1f MiB, filter %.1f MiB (%s): %.4f of the set (1/%.0f)" % (
        m["items"], m["set_bytes"] / 2**20, m["filter_bytes"] / 2**20, m["filter"], m["ratio"],
        1 / m["ratio"]))


if __name__ == "__main__":
    main()
