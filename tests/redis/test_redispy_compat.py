"""RedisBloom compatibility (load argument BF-COMPAT yes), driven by
redis-py's own bf() commands from Debian's python3-redis: create, add,
madd, exists, mexists, insert (auto-creation, NOCREATE), info (BFInfo),
scandump/loadchunk round trip, and BF.CARD; error replies as RedisBloom's
clients expect them (ResponseError)."""
import sys

import redis

from rrtest import Harness, check


def main():
    with Harness() as h:
        s = h.server(module_args=["BF-COMPAT", "yes", "CHUNK-BYTES", "1024"])
        r = s.client()
        bf = r.bf()
        check(bf.create("users", 0.01, 10000) is True, "create")
        check(bf.add("users", "alice") == 1 and bf.add("users", "alice") == 0, "add")
        check(bf.madd("users", "bob", "alice", "carol") == [1, 0, 1], "madd")
        check(bf.exists("users", "bob") == 1 and bf.exists("users", "dave") == 0, "exists")
        check(bf.mexists("users", "alice", "dave", "carol") == [1, 0, 1], "mexists")
        check(bf.exists("nobody", "x") == 0, "exists on a missing key")
        info = bf.info("users")
        check(info.capacity >= 10000, "capacity %r" % info.capacity)   # messages per cycle planned
        check(info.filterNum == 1 and info.insertedNum == 3, "info %r" % vars(info))
        check(info.size > 10000 // 8, "size %r" % info.size)
        check(r.execute_command("BF.CARD", "users") == 3 and r.execute_command("BF.CARD", "none") == 0, "card")
        # BF.CARD counts items reported new since creation, across recycles
        bf.create("small", 0.1, 20)
        bf.madd("small", *["s%d" % i for i in range(500)])
        small = r.execute_command("RBF.INFO", "small")
        sd = {small[i].decode(): small[i + 1] for i in range(0, len(small), 2)}
        check(sd["cycles"] >= 1, "the small filter recycled")
        check(r.execute_command("BF.CARD", "small") == sd["reported_new"] == bf.info("small").insertedNum,
              "BF.CARD equals reported_new and BF.INFO ITEMS")
        # the planner behind BF.RESERVE: RBF.INFO shows a sigma-bounded filter
        # whose model rate is within the error rate and whose cycle holds capacity
        ri = r.execute_command("RBF.INFO", "users")
        d = {ri[i].decode(): ri[i + 1] for i in range(0, len(ri), 2)}
        check(float(d["model_fp"]) <= 0.01 and float(d["model_messages_per_cycle"]) >= 10000, "plan %r" % d)
        # auto-creation with the defaults
        check(bf.add("auto", "x") == 1 and bf.info("auto").capacity >= 100, "auto-create")
        check(bf.insert("ins", ["a", "b", "a"], capacity=500, error=0.05) == [1, 1, 0], "insert creates")
        check(bf.insert("ins", ["c"]) == [1], "insert existing")
        try:
            bf.insert("none", ["a"], noCreate=True)
            raise AssertionError("NOCREATE created a key")
        except redis.ResponseError as e:
            check("not found" in str(e), "NOCREATE error %r" % e)
        check(bf.create("nonscale", 0.01, 1000, expansion=2) is True, "expansion accepted")
        check(bf.create("nonscale2", 0.01, 1000, noScale=True) is True, "nonscaling accepted")
        # errors
        for fn, args in ((bf.create, ("users", 0.01, 100)), (bf.create, ("x", 2, 100)),
                         (bf.create, ("x", 0.01, 0))):
            try:
                fn(*args)
                raise AssertionError("no error for %r" % (args,))
            except redis.ResponseError:
                pass
        r.set("plain", "v")
        try:
            bf.add("plain", "x")
            raise AssertionError("BF.ADD on a string")
        except redis.ResponseError as e:
            check(str(e).startswith("WRONGTYPE"), "WRONGTYPE %r" % e)
        # scandump / loadchunk, as redis-py documents it
        for i in range(3000):
            bf.add("users", "u%d" % i)
        it, chunks = 0, []
        while True:
            it, data = bf.scandump("users", it)
            if it == 0:
                break
            chunks.append((it, data))
        check(len(chunks) > 2, "several chunks")
        for it, data in chunks:
            bf.loadchunk("copy", it, data)
        check(bf.mexists("copy", "alice", "u17", "u2999", "zzz") == bf.mexists("users", "alice", "u17", "u2999", "zzz"),
              "copy answers as the original")
        check(r.execute_command("DEBUG", "DIGEST-VALUE", "copy") == r.execute_command("DEBUG", "DIGEST-VALUE", "users"),
              "copy is identical")
        print("redis-py bf(): create/add/madd/exists/mexists/insert/info/scandump/loadchunk and BF.CARD ok")
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
