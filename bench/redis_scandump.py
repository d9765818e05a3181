#!/usr/bin/python3
"""How long RBF.SCANDUMP holds the server's main thread on a 128 MiB filter
(docs/redis.md, "RBF.SCANDUMP, RBF.LOADCHUNK"): a filter reserved with
ERROR_RATE 0.01 MEMORY 134217728 and 10^5 items, then RUNS whole dumps.
For each dump: the server-side duration (SLOWLOG) of the cursor-0 call and
the longest of any call, the client's wall-clock time for the whole dump,
and the longest PING round trip a second client saw meanwhile (the stall
another client feels).  The dump is checked to load back (RBF.LOADCHUNK
into another key, equal DEBUG DIGEST-VALUE).

  bench/redis_scandump.py [--module build/rbf-redis.so] [--runs 3] [--writes] [--chunk BYTES]

--writes: a third client adds items while the dumps run (each dump must
still load back and equal the filter as it was at cursor 0 where the module
promises that).
"""
import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "redis"))
import rrtest  # noqa: E402


def pinger(client, stop, out):
    worst = 0.0
    while not stop.is_set():
        t = time.perf_counter()
        client.ping()
        worst = max(worst, time.perf_counter() - t)
        time.sleep(0.001)
    out.append(worst)


def writer(client, stop, out):
    i = 0
    while not stop.is_set():
        client.execute_command("RBF.ADD", "big", "w%d" % i)
        i += 1
    out.append(i)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default="build/rbf-redis.so")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--writes", action="store_true")
    ap.add_argument("--chunk", type=int, default=0, help="CHUNK-BYTES load argument (default: the module's)")
    a = ap.parse_args()
    rrtest.MODULE = os.path.abspath(a.module)
    with rrtest.Harness() as h:
        s = h.server(module_args=["CHUNK-BYTES", str(a.chunk)] if a.chunk else [])
        c = s.client()
        c.config_set("slowlog-log-slower-than", 0)
        c.config_set("slowlog-max-len", 100000)
        c.execute_command("RBF.RESERVE", "big", "ERROR_RATE", "0.01", "MEMORY", 134217728)
        for j in range(0, 100000, 1000):
            c.execute_command("RBF.MADD", "big", *["i%d" % x for x in range(j, j + 1000)])
        for run in range(a.runs):
            stop, pings, writes = threading.Event(), [], []
            threads = [threading.Thread(target=pinger, args=(s.client(), stop, pings))]
            if a.writes:
                threads.append(threading.Thread(target=writer, args=(s.client(), stop, writes)))
            if a.writes:
                # the digest at cursor 0, atomically with it (MULTI); the
                # writer and the pinger start after it
                tx = c.pipeline(transaction=True)
                tx.execute_command("DEBUG", "DIGEST-VALUE", "big")
                tx.execute_command("RBF.SCANDUMP", "big", 0)
                c.slowlog_reset()
                t0 = time.perf_counter()
                (digest0,), (cur, data) = tx.execute()
                for t in threads:
                    t.start()
            else:
                digest0 = c.execute_command("DEBUG", "DIGEST-VALUE", "big")[0]
                for t in threads:
                    t.start()
                time.sleep(0.05)
                c.slowlog_reset()
                t0 = time.perf_counter()
                cur, data = c.execute_command("RBF.SCANDUMP", "big", 0)
            chunks = [(cur, data)]
            while True:
                cur, data = c.execute_command("RBF.SCANDUMP", "big", cur)
                if cur == 0:
                    break
                chunks.append((cur, data))
            wall = time.perf_counter() - t0
            stop.set()
            for t in threads:
                t.join()
            full = c.slowlog_get(100000)
            log = [x for x in full if x["command"].startswith(b"RBF.SCANDUMP")]
            adds = [x["duration"] for x in full if x["command"].startswith(b"RBF.ADD")]
            first = [x["duration"] for x in log if x["command"].endswith(b" 0")] or [float("nan")]
            longest = max(x["duration"] for x in log if not x["command"].endswith(b" 0"))
            c.execute_command("DEL", "copy")
            for cu, data in chunks:
                c.execute_command("RBF.LOADCHUNK", "copy", cu, data)
            same = c.execute_command("DEBUG", "DIGEST-VALUE", "copy")[0] == digest0
            print("run %d: SCANDUMP big 0 %.1f ms (slowlog), longest later call %.1f ms, whole dump "
                  "%.2f s wall (%d chunks, %d bytes), worst PING %.1f ms%s; loads back %s"
                  % (run + 1, first[-1] / 1000, longest / 1000, wall, len(chunks),
                     sum(len(d) for _, d in chunks), pings[0] * 1000,
                     ", %d writes during the dump (longest RBF.ADD %.1f ms)" % (writes[0], max(adds) / 1000)
                     if writes else "",
                     "equal to the filter at cursor 0" if same else "DIFFERENT from cursor 0"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
