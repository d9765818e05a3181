"""UNLINK of a 256 MiB filter whose pages are all touched, while another
client PINGs in a loop: the key is gone and the server alive afterwards.
The longest gap between two PING replies is printed, not asserted (its
bound is a benchmark's business: bench/redis_stalls.py, UNLINK row)."""
import sys
import threading
import time

from rrtest import Harness, check, wait_until

BITS = 1 << 31  # 256 MiB


def rss(c):
    return c.info("memory")["used_memory_rss"]


def pinger(s, stop, gaps, errors):
    c = s.client()
    try:
        last = time.monotonic()
        while not stop.is_set():
            check(c.ping(), "PING")
            now = time.monotonic()
            gaps.append(now - last)
            last = now
    except Exception as e:  # noqa: BLE001 -- reported by the main thread
        errors.append(repr(e))


def main():
    with Harness() as h:
        s = h.server()
        c = s.client()
        rss0 = rss(c)
        c.execute_command("RBF.RESERVE", "big", "BITS", BITS, "HASHES", 4, "SIGMA", BITS // 2)
        # a recycle of a filter in use clears its whole bit array: every
        # page is written once
        check(c.execute_command("RBF.ADD", "big", "x") == 1, "RBF.ADD")
        check(c.execute_command("RBF.RECYCLE", "big") == b"OK", "RBF.RECYCLE")
        grown = rss(c) - rss0
        check(grown >= (BITS >> 3) * 9 // 10,
              "the filter's pages are not all touched: RSS grew by %d bytes for a %d-byte filter"
              % (grown, BITS >> 3))
        stop, gaps, errors = threading.Event(), [], []
        t = threading.Thread(target=pinger, args=(s, stop, gaps, errors))
        t.start()
        wait_until(lambda: len(gaps) >= 200 or errors, what="PINGs before the UNLINK")
        n0 = len(gaps)
        r = c.execute_command("UNLINK", "big")
        wait_until(lambda: len(gaps) >= n0 + 200 or errors, what="PINGs after the UNLINK")
        stop.set()
        t.join()
        check(not errors, "the PING client failed: %s" % errors)
        check(r == 1, "UNLINK big answered %r, not 1" % r)
        check(c.exists("big") == 0, "big exists after UNLINK")
        check(s.alive() and c.ping(), "server not alive after UNLINK")
        wait_until(lambda: c.info("memory").get("lazyfree_pending_objects", 0) == 0,
                   what="lazy free to finish")
        check(c.dbsize() == 0, "keys left: %d" % c.dbsize())
        before = max(gaps[:n0]) * 1000
        during = max(gaps[n0:]) * 1000
        print("UNLINK of a %d MiB filter (RSS +%d MiB): longest PING gap %.1f ms around the "
              "UNLINK, %.1f ms before it (%d PINGs; reported, not asserted)"
              % (BITS >> 23, grown >> 20, during, before, len(gaps)))
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
