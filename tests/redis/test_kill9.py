"""kill -9 of the server under load with appendfsync always loses no
acknowledged add: two clients add unique items (one pipelined, one one at a
time) while the server is killed; after a restart from the AOF every item
whose RBF.ADD / RBF.MADD was acknowledged is reported seen."""
import random
import sys
import threading
import time

import redis

from rrtest import Harness, check, wait_until


def writer(s, prefix, batch, acked, stop):
    c = s.client()
    i = 0
    try:
        while not stop.is_set():
            items = ["%s-%d" % (prefix, i + j) for j in range(batch)]
            if batch == 1:
                r = [c.execute_command("RBF.ADD", "k", items[0])]
            else:
                r = c.execute_command("RBF.MADD", "k", *items)
            check(all(x == 1 for x in r), "unique items reported new: %r" % (r,))
            acked.extend(items)
            i += batch
    except (redis.ConnectionError, redis.TimeoutError, ConnectionError):
        pass


def main():
    rng = random.Random(99)
    with Harness() as h:
        args = ["--appendonly", "yes", "--appendfsync", "always"]
        for round_ in range(3):
            if round_ == 0:
                s = h.server("s", args=args)
                # N-bounded with N far above what the test inserts: nothing
                # is forgotten by a recycle
                s.client().execute_command("RBF.RESERVE", "k", "BITS", 1 << 22, "HASHES", 4,
                                           "MESSAGES", 10_000_000)
            before = s.client().execute_command("RBF.INFO", "k", "inserts")
            acked = [[], []]
            stop = threading.Event()
            ts = [threading.Thread(target=writer, args=(s, "r%d-a" % round_, 1, acked[0], stop)),
                  threading.Thread(target=writer, args=(s, "r%d-b" % round_, 50, acked[1], stop))]
            for t in ts:
                t.start()
            wait_until(lambda: len(acked[0]) >= 300 + rng.randrange(300) and len(acked[1]) >= 3000,
                       what="acknowledged adds")
            s.kill9()
            stop.set()
            for t in ts:
                t.join()
            s.start()
            c = s.client()
            items = acked[0] + acked[1]
            seen = []
            for i in range(0, len(items), 1000):
                seen += c.execute_command("RBF.MEXISTS", "k", *items[i:i + 1000])
            lost = [it for it, x in zip(items, seen) if x != 1]
            check(not lost, "round %d: %d acknowledged adds lost, e.g. %r" % (round_, len(lost), lost[:5]))
            after = c.execute_command("RBF.INFO", "k", "inserts")
            check(after - before >= len(items), "inserts %d - %d < %d acknowledged" % (after, before, len(items)))
            print("round %d: killed with %d acknowledged adds; all present after restart "
                  "(server counted %d)" % (round_, len(items), after - before))
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
