#!/usr/bin/python3
"""How long the main thread spends in the rbf-redis commands whose work grows
with the filter's size (docs/redis.md, "Work on the main thread"): server-side
durations from SLOWLOG of RBF.RESERVE (allocating and zeroing the bits), of
RBF.RECYCLE and of RBF.SCANDUMP's first call (which takes the snapshot), for
filters of 16 MiB and 128 MiB, 3 times each.

  bench/redis_stalls.py [--module build/rbf-redis.so]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "redis"))
import rrtest  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default="build/rbf-redis.so")
    a = ap.parse_args()
    rrtest.MODULE = os.path.abspath(a.module)
    with rrtest.Harness() as h:
        c = h.server().client()
        c.config_set("slowlog-log-slower-than", 0)
        for bits in (1 << 27, 1 << 30):
            out = {}
            for _ in range(3):
                c.execute_command("DEL", "big")
                for cmd in (("RBF.RESERVE", "big", "BITS", bits, "HASHES", 4, "SIGMA", bits // 2),
                            ("RBF.RECYCLE", "big"), ("RBF.SCANDUMP", "big", 0)):
                    c.slowlog_reset()
                    c.execute_command(*cmd)
                    e = [x for x in c.slowlog_get(10) if x["command"].startswith(cmd[0].encode())]
                    name = cmd[0] + (" 0" if cmd[0] == "RBF.SCANDUMP" else "")
                    out.setdefault(name, []).append(e[0]["duration"] / 1000)
            print("%d MiB filter: " % (bits >> 23) +
                  "; ".join("%s %s ms" % (k, ", ".join("%.1f" % x for x in v)) for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
