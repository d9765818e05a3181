#!/usr/bin/python3
"""How long the main thread spends in the rbf-redis commands whose work grows
with the filter's size (docs/redis.md, "Work on the main thread"): server-side
durations from SLOWLOG of RBF.RESERVE (allocating and zeroing the bits), of
RBF.RECYCLE and of RBF.SCANDUMP's first call (which takes the snapshot), for
filters of 16 MiB and 128 MiB, 3 times each.

The UNLINK row: UNLINK of a filter whose pages are all touched (one item
added, then RBF.RECYCLE, which clears the whole bit array) of 16 MiB, 128
MiB and 256 MiB, while another client PINGs in a loop: the UNLINK's
SLOWLOG duration and the longest gap between two PING replies around it,
against the bound --unlink-bound-ms (default 10 ms; a run over it says
OVER).  The test tests/redis/test_unlink.py only reports that gap.

  bench/redis_stalls.py [--module build/rbf-redis.so] [--unlink-bound-ms 10]
"""
import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "redis"))
import rrtest  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default="build/rbf-redis.so")
    ap.add_argument("--unlink-bound-ms", type=float, default=10.0)
    a = ap.parse_args()
    rrtest.MODULE = os.path.abspath(a.module)
    with rrtest.Harness() as h:
        c = h.server().client()
        c.config_set("slowlog-log-slower-than", 0)
        c.config_set("slowlog-max-len", 100000)
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
        over = 0
        for bits in (1 << 27, 1 << 30, 1 << 31):
            durs, gaps = [], []
            for _ in range(3):
                d, g = unlink_once(h.servers[0], c, bits)
                durs.append(d)
                gaps.append(g)
            worst = max(max(durs), max(gaps))
            over += worst > a.unlink_bound_ms
            print("%d MiB filter, UNLINK (all pages touched): %s ms; longest PING gap %s ms; "
                  "bound %.0f ms: %s" % (bits >> 23, ", ".join("%.1f" % x for x in durs),
                                         ", ".join("%.1f" % x for x in gaps), a.unlink_bound_ms,
                                         "OVER" if worst > a.unlink_bound_ms else "ok"))
    return 1 if over else 0


def unlink_once(server, c, bits):
    """UNLINK of a filter of `bits` bits with every page touched: (SLOWLOG
    duration of the UNLINK, longest PING gap around it), in ms."""
    c.execute_command("DEL", "big")
    c.execute_command("RBF.RESERVE", "big", "BITS", bits, "HASHES", 4, "SIGMA", bits // 2)
    c.execute_command("RBF.ADD", "big", "x")
    c.execute_command("RBF.RECYCLE", "big")
    stop, stamps = threading.Event(), []

    def ping():
        p = server.client()
        while not stop.is_set():
            p.ping()
            stamps.append(time.monotonic())

    t = threading.Thread(target=ping)
    t.start()
    while len(stamps) < 100:
        time.sleep(0.001)
    c.slowlog_reset()
    t0 = time.monotonic()
    c.execute_command("UNLINK", "big")
    t1 = time.monotonic()
    n = len(stamps)
    while len(stamps) < n + 100:
        time.sleep(0.001)
    stop.set()
    t.join()
    e = [x for x in c.slowlog_get(100000) if x["command"].startswith(b"UNLINK")]
    # the PING gaps that overlap the UNLINK's round trip
    gap = max((b - a_) for a_, b in zip(stamps, stamps[1:]) if b >= t0 and a_ <= t1 + 0.05)
    return e[0]["duration"] / 1000, gap * 1000


if __name__ == "__main__":
    sys.exit(main())
