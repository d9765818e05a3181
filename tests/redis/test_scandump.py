"""RBF.SCANDUMP streams the image from the filter, copying nothing at cursor
0, and the dump is the filter as it was at cursor 0 whatever is written
between the chunks: for flat and blocked, one- and two-phase, sigma- and
N-bounded filters, with writes (RBF.ADD, RBF.MADD, RBF.INSERT, BF.ADD)
between every two chunks, recycles by threshold during the dump and
RBF.RECYCLE, the dump loads back (RBF.LOADCHUNK, rbf_load_buffer's checks)
with the digest the filter had at cursor 0 (taken atomically with it in
MULTI), and equals a dump taken with no writes.  The cursor must be the one
just returned (a repeated or skipped cursor is refused); a new cursor 0
invalidates the dump in progress; the memory the saved pages hold is
counted in RBF.INFO memory and freed by the end of the dump."""
import random
import sys

import redis

from rrtest import Harness, check, info_dict, scandump

CHUNK = 1024

FILTERS = [
    # name, reserve args, writes per gap, RBF.RECYCLE before chunk (or None)
    ("flat-sigma", ["BITS", 200000, "HASHES", 4, "SIGMA", 8000], 200, None),
    ("flat-2phase-N", ["BITS", 200001, "HASHES", 3, "MESSAGES", 2000, "PHASES", 2], 200, 10),
    ("blocked-sigma", ["BITS", 204800, "HASHES", 5, "SIGMA", 8000, "LAYOUT", "blocked"], 200, None),
    ("blocked-2phase-retaining", ["BITS", 409600, "HASHES", 4, "SIGMA", 8000, "PHASES", 2,
                                  "RECYCLE", "retaining", "LAYOUT", "blocked"], 200, 20),
    ("blocked-N-nc", ["BITS", 102400, "HASHES", 4, "MESSAGES", 2000, "HASHING", "non-colliding",
                      "LAYOUT", "blocked"], 200, None),
    # writes in the first gap only, no recycle: only the pages (4 KiB of the
    # image) the inserts touch are saved, at most 8 items x 3 of 256
    ("flat-pages", ["BITS", 1 << 23, "HASHES", 3, "SIGMA", 1 << 22], 8, None),
    ("blocked-pages", ["BITS", 1 << 23, "HASHES", 3, "SIGMA", 1 << 22, "LAYOUT", "blocked"], 8, None),
]


def load(c, key, chunks):
    c.execute_command("DEL", key)
    for cur, data in chunks:
        check(c.execute_command("RBF.LOADCHUNK", key, cur, data) == b"OK", "LOADCHUNK")


def main():
    rng = random.Random(5150)
    with Harness() as h:
        s = h.server(module_args=["BF-COMPAT", "yes", "CHUNK-BYTES", str(CHUNK)])
        c = s.client()
        x = c.execute_command
        for name, args, per_gap, recycle_at in FILTERS:
            x("RBF.RESERVE", name, *args, "SEED", rng.getrandbits(64))
            x("RBF.MADD", name, *["pre%d" % i for i in range(3000)])
            cycles0 = info_dict(c, name)["cycles"]
            # the digest and a copy of the state at cursor 0
            tx = c.pipeline(transaction=True)
            tx.execute_command("DEBUG", "DIGEST-VALUE", name)
            tx.execute_command("RBF.SCANDUMP", name, 0)
            (digest0,), first = tx.execute()
            chunks, cur = [tuple(first)], first[0]
            mem_peak = 0
            n = 0
            while True:
                # writes between the chunks
                n += 1
                if n == 1 or not name.endswith("-pages"):
                    items = ["w%s-%d" % (name, rng.randrange(10 ** 9)) for _ in range(per_gap)]
                    x("RBF.MADD", name, *items[: per_gap // 2])
                    for it in items[per_gap // 2: per_gap // 2 + 2]:
                        x("RBF.ADD", name, it)
                    x("RBF.INSERT", name, "ITEMS", *items[per_gap // 2 + 2: per_gap - 1])
                    x("BF.ADD", name, items[-1])
                if recycle_at is not None and n == recycle_at:
                    x("RBF.RECYCLE", name)
                mem_peak = max(mem_peak, info_dict(c, name)["memory"])
                cur, data = x("RBF.SCANDUMP", name, cur)
                if cur == 0:
                    check(data is None, "final chunk %r" % (data,))
                    break
                chunks.append((cur, data))
            info = info_dict(c, name)
            image = sum(len(d) for _, d in chunks)
            if name.endswith("-pages"):
                check(info["cycles"] == cycles0, "%s: recycled" % name)
                check(mem_peak - info["memory"] < image // 4,
                      "%s: saved %d bytes of a %d-byte image for a few writes"
                      % (name, mem_peak - info["memory"], image))
            else:
                check(info["cycles"] > cycles0, "%s: no recycle during the dump (cycles %d)"
                      % (name, info["cycles"]))
            check(x("DEBUG", "DIGEST-VALUE", name)[0] != digest0, "%s: the writes changed nothing" % name)
            load(c, name + ".copy", chunks)
            check(x("DEBUG", "DIGEST-VALUE", name + ".copy")[0] == digest0,
                  "%s: the dump is not the filter at cursor 0" % name)
            # ... and equals a dump of that state taken with no writes
            again = scandump(c, name + ".copy")
            check([d for _, d in again] == [d for _, d in chunks], "%s: images differ" % name)
            check(info["memory"] < mem_peak, "%s: memory %d after the dump, peak %d during it"
                  % (name, info["memory"], mem_peak))
            check(mem_peak > info["memory"] + 4096, "%s: no page saved during the dump" % name)
            print("%s: %d chunks with writes between them (%d recycles, peak saved memory %d "
                  "bytes), loads back with the digest of cursor 0" % (
                      name, len(chunks), info["cycles"] - cycles0, mem_peak - info["memory"]))
        # cursor rules
        key = "flat-sigma"
        cur1, _ = x("RBF.SCANDUMP", key, 0)
        cur2, _ = x("RBF.SCANDUMP", key, cur1)
        for bad in (cur1, cur2 + CHUNK, cur2 + 1):
            try:
                x("RBF.SCANDUMP", key, bad)
                raise AssertionError("cursor %d accepted" % bad)
            except redis.ResponseError as e:
                check("stale SCANDUMP cursor" in str(e), "error %r" % e)
        cur3, _ = x("RBF.SCANDUMP", key, cur2)  # the right one still works
        x("RBF.SCANDUMP", key, 0)  # a new dump: the old cursors are stale
        try:
            x("RBF.SCANDUMP", key, cur3)
            raise AssertionError("a cursor of a replaced dump was accepted")
        except redis.ResponseError as e:
            check("stale" in str(e), "error %r" % e)
        check(s.alive() and c.ping(), "server up")
        print("cursor rules: a repeated, skipped or replaced cursor is refused")
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
