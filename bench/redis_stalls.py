#!/usr/bin/python3
"""How long the main thread spends in the rbf-redis commands whose work grows
with the filter's size (docs/redis.md, "Work on the main thread"): server-side
durations from SLOWLOG of RBF.RECYCLE and of RBF.SCANDUMP's first call
(which takes the snapshot), for filters of 16 MiB and 128 MiB, 3 times each.

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
            c.execute_command("DEL", "big")
            c.execute_command("RBF.RESERVE", "big", "BITS", bits, "HASHES", 4, "SIGMA", bits // 2)
            c.execute_command("RBF.RECYCLE", "big")  # the pages touched once
            out = {}
            for _ in range(3):
                for cmd in (("RBF.RECYCLE", "big"), ("RBF.SCANDUMP", "big", 0)):
                    c.slowlog_reset()
                    c.execute_command(*cmd)
                    e = [x for x in c.slowlog_get(10) if x["command"].startswith(cmd[0].encode())]
                    name = cmd[0] + (" 0" if len(cmd) > 2 else "")
                    out.setdefault(name, []).append(e[0]["duration"] / 1000)
            print("%d MiB filter: " % (bits >> 23) +
                  "; ".join("%s %s ms" % (k, ", ".join("%.1f" % x for x in v)) for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
