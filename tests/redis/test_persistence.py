"""A filter survives DEBUG RELOAD, a restart from the RDB file, and a
restart from the AOF after a rewrite, bit-identical (DEBUG DIGEST-VALUE,
and the SCANDUMP image); the AOF rewrite writes RBF.LOADCHUNK chunks below
the configured size; a partial LOADCHUNK restore survives too; SCANDUMP /
LOADCHUNK copy a filter to another server; a corrupted chunk is refused; an
RDB file of a newer encoding version is refused at load."""
import os
import random
import sys

from rrtest import Harness, Server, check, info_dict, scandump, wait_until

CHUNK = 1024


def populate(c, rng):
    c.execute_command("RBF.RESERVE", "s1", "BITS", 50000, "HASHES", 4, "SIGMA", 9000)
    c.execute_command("RBF.RESERVE", "s2", "BITS", 70001, "HASHES", 3, "SIGMA", 9000, "PHASES", 2,
                      "RECYCLE", "retaining")
    c.execute_command("RBF.RESERVE", "n1", "BITS", 30000, "HASHES", 5, "MESSAGES", 3000,
                      "HASHING", "non-colliding")
    c.execute_command("RBF.RESERVE", "pl", "ERROR_RATE", "0.001", "MEMORY", 20000)
    c.execute_command("BF.ADD", "bf", "first")
    # the blocked layout: explicit two-phase, and planned (version 2 images)
    c.execute_command("RBF.RESERVE", "bl", "BITS", 3 << 15, "HASHES", 4, "SIGMA", 9000, "PHASES", 2,
                      "LAYOUT", "blocked", "HASHING", "non-colliding")
    c.execute_command("RBF.RESERVE", "blp", "ERROR_RATE", "0.001", "MEMORY", 20000, "LAYOUT",
                      "blocked")
    for k in ("s1", "s2", "n1", "pl", "bf", "bl", "blp"):
        items = ["%s-%d" % (k, rng.randrange(20000)) for _ in range(12000)]
        for i in range(0, len(items), 500):
            c.execute_command("RBF.MADD", k, *items[i:i + 500])
    # an incomplete restore: the first two chunks of src's image
    c.execute_command("RBF.RESERVE", "src", "BITS", 40000, "HASHES", 3, "MESSAGES", 5000)
    c.execute_command("RBF.MADD", "src", *["x%d" % i for i in range(1000)])
    cur, data = c.execute_command("RBF.SCANDUMP", "src", 0)
    c.execute_command("RBF.LOADCHUNK", "part", cur, data)
    cur, data = c.execute_command("RBF.SCANDUMP", "src", cur)
    c.execute_command("RBF.LOADCHUNK", "part", cur, data)


KEYS = ("s1", "s2", "n1", "pl", "bf", "bl", "blp", "src", "part")
BLOCKED = ("bl", "blp")


def layouts(c):
    got = {k: info_dict(c, k)["layout"] for k in KEYS if k != "part"}
    want = {k: b"blocked" if k in BLOCKED else b"flat" for k in got}
    check(got == want, "INFO layout %r" % got)


def digests(c):
    d = {k: c.execute_command("DEBUG", "DIGEST-VALUE", k)[0] for k in KEYS}
    d["*"] = c.execute_command("DEBUG", "DIGEST")
    check(all(v != b"0" * 40 for v in d.values()), "a digest is empty: %r" % d)
    return d


def same_models(a, b):
    """Model values equal, or within 1e-9 relative where they were
    recomputed: an AOF rewrite keeps the image, not the model values, and a
    planned filter's values come from the planner, which takes the fast
    method (within 1e-9 of exact) at sizes where the model's default method
    is exact."""
    if a.keys() != b.keys():
        return False
    for k in a:
        for x, y in zip(a[k], b[k]):
            fx, fy = float(x), float(y)
            if x != y and not abs(fx - fy) <= 1e-9 * max(abs(fx), abs(fy)):
                return False
    return True


def models(c):
    wait_until(lambda: all(info_dict(c, k)["model_fp"] != b"pending" for k in KEYS if k != "part"),
               what="model values")
    return {k: (info_dict(c, k)["model_fp"], info_dict(c, k)["model_messages_per_cycle"])
            for k in KEYS if k != "part"}


def main():
    rng = random.Random(7)
    mod = ["BF-COMPAT", "yes", "CHUNK-BYTES", str(CHUNK)]
    with Harness() as h:
        s = h.server("a", module_args=mod)
        c = s.client()
        populate(c, rng)
        d0, m0 = digests(c), models(c)
        layouts(c)
        # 1. DEBUG RELOAD
        check(c.execute_command("DEBUG", "RELOAD") == b"OK", "reload")
        check(digests(c) == d0, "DEBUG RELOAD changed a digest")
        check(models(c) == m0, "DEBUG RELOAD changed model values")
        layouts(c)
        print("DEBUG RELOAD: digests equal")
        # 2. restart from RDB
        c.execute_command("SAVE")
        s.stop()
        s.start()
        c = s.client()
        check(c.dbsize() == len(KEYS), "keys after RDB restart")
        check(digests(c) == d0, "restart from RDB changed a digest")
        check(models(c) == m0, "restart from RDB changed model values")
        layouts(c)
        print("RDB restart: digests equal")
        # 3. AOF: turn it on (a rewrite writes the base), write more, rewrite
        # again, write more, restart from the AOF alone.
        c.config_set("aof-use-rdb-preamble", "no")
        c.config_set("appendonly", "yes")
        ok = lambda: (c.info("persistence")["aof_rewrite_in_progress"] == 0 and
                      c.info("persistence")["aof_rewrite_scheduled"] == 0 and
                      c.info("persistence")["aof_enabled"] == 1)
        wait_until(ok, what="first AOF rewrite")
        c.execute_command("RBF.MADD", "s1", *["after-%d" % i for i in range(300)])
        c.execute_command("BGREWRITEAOF")
        wait_until(lambda: c.info("persistence")["aof_rewrite_in_progress"] == 0 and
                   c.info("persistence")["aof_rewrite_scheduled"] == 0 and
                   c.info("persistence")["aof_last_bgrewrite_status"] == "ok", what="AOF rewrite")
        c.execute_command("RBF.ADD", "s2", "after-the-rewrite")
        c.execute_command("RBF.RECYCLE", "n1")
        # a planned reservation goes to the AOF as the explicit form with its seed
        c.execute_command("RBF.RESERVE", "aofplan", "ERROR_RATE", "0.01", "CAPACITY", "2000")
        c.execute_command("RBF.MADD", "aofplan", *["p%d" % i for i in range(3000)])
        c.execute_command("RBF.RESERVE", "aofblk", "ERROR_RATE", "0.01", "CAPACITY", "2000",
                          "layout", "BLOCKED")
        c.execute_command("RBF.MADD", "aofblk", *["p%d" % i for i in range(3000)])
        incr = b""
        for f in os.listdir(os.path.join(s.dir, "appendonlydir")):
            if ".incr." in f:
                with open(os.path.join(s.dir, "appendonlydir", f), "rb") as fh:
                    incr += fh.read()
        i = incr.find(b"aofplan")
        check(i > 0, "the reservation is in the AOF")
        cmd = incr[incr.rfind(b"*", 0, i - 20):i + 400].split(b"\r\n")
        words = [w.upper() for w in cmd[2::2]]
        check(words[0] == b"RBF.RESERVE" and b"SEED" in words and b"SIGMA" in words
              and b"ERROR_RATE" not in words and b"CAPACITY" not in words,
              "AOF holds the explicit reservation: %r" % words[:16])
        print("AOF: " + " ".join(w.decode() for w in words[:16]))
        i = incr.find(b"aofblk")
        cmd = incr[incr.rfind(b"*", 0, i - 20):i + 400].split(b"\r\n")
        words = [w.upper() for w in cmd[2::2]]
        check(words[0] == b"RBF.RESERVE" and b"SEED" in words and b"SIGMA" in words
              and words[words.index(b"LAYOUT") + 1] == b"BLOCKED" and b"CAPACITY" not in words,
              "AOF holds the explicit blocked reservation: %r" % words[:18])
        print("AOF: " + " ".join(w.decode() for w in words[:18]))
        aofplan = c.execute_command("DEBUG", "DIGEST-VALUE", "aofplan")
        aofblk = c.execute_command("DEBUG", "DIGEST-VALUE", "aofblk")
        d1, m1 = digests(c), models(c)
        check(d1["s1"] != d0["s1"] and d1["s2"] != d0["s2"], "the writes changed the filters")
        base = [f for f in os.listdir(os.path.join(s.dir, "appendonlydir")) if ".base." in f]
        check(len(base) == 1, "one base AOF file: %r" % base)
        with open(os.path.join(s.dir, "appendonlydir", base[0]), "rb") as f:
            text = f.read()
        n_chunks = text.count(b"RBF.LOADCHUNK")
        check(n_chunks >= 6 * 2, "base AOF holds %d RBF.LOADCHUNK commands" % n_chunks)
        # every bulk argument is at most CHUNK bytes (the chunks) or short
        lens = [int(x[1:]) for x in text.split(b"\r\n") if x[:1] == b"$" and x[1:].isdigit()]
        check(max(lens) <= CHUNK, "an AOF argument of %d bytes (chunk %d)" % (max(lens), CHUNK))
        s.stop()
        os.remove(os.path.join(s.dir, "dump.rdb")) if os.path.exists(os.path.join(s.dir, "dump.rdb")) else None
        s.args = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]
        s.start()
        c = s.client()
        check(digests(c) == d1, "restart from the AOF changed a digest")
        check(c.execute_command("DEBUG", "DIGEST-VALUE", "aofplan") == aofplan,
              "the planned reservation replayed from the AOF differs")
        check(c.execute_command("DEBUG", "DIGEST-VALUE", "aofblk") == aofblk,
              "the planned blocked reservation replayed from the AOF differs")
        check(same_models(models(c), m1), "restart from the AOF changed model values")
        layouts(c)
        print("AOF restart after rewrite: digests equal (%d RBF.LOADCHUNK in the base)" % n_chunks)
        # 4. the incomplete restore completes after all that
        chunks = scandump(c, "src")
        for cur, data in chunks[2:]:
            c.execute_command("RBF.LOADCHUNK", "part", cur, data)
        check(c.execute_command("DEBUG", "DIGEST-VALUE", "part") ==
              c.execute_command("DEBUG", "DIGEST-VALUE", "src"), "completed restore equals src")
        print("an incomplete restore survived all that and completed")
        # 5. SCANDUMP/LOADCHUNK to another server, image identical
        t = h.server("b", module_args=mod)
        ct = t.client()
        for k in ("s1", "s2", "n1", "pl", "bf", "bl", "blp"):
            for cur, data in scandump(c, k):
                check(ct.execute_command("RBF.LOADCHUNK", k, cur, data) == b"OK", "loadchunk")
            check(ct.execute_command("DEBUG", "DIGEST-VALUE", k) ==
                  c.execute_command("DEBUG", "DIGEST-VALUE", k), "copied %s differs" % k)
            check([x for _, x in scandump(ct, k)] == [x for _, x in scandump(c, k)], "images differ")
        print("SCANDUMP/LOADCHUNK copy: digests and images equal")
        # 6. a corrupted chunk (one bit flipped in the bits) is refused and
        # leaves no usable key
        chunks = scandump(c, "s1")
        cur, data = chunks[3]
        bad = bytearray(data)
        bad[100] ^= 4
        for i, (cu, da) in enumerate(chunks):
            r = None
            try:
                r = ct.execute_command("RBF.LOADCHUNK", "corrupt", cu, bytes(bad) if i == 3 else da)
            except Exception as e:  # only the last chunk may fail
                check(i == len(chunks) - 1 and "rejected" in str(e), "corrupt chunk error %r" % e)
                r = "refused"
        check(r == "refused", "a corrupted image was accepted")
        check(ct.exists("corrupt") == 0, "a refused restore leaves no key")
        # out-of-order chunk
        try:
            ct.execute_command("RBF.LOADCHUNK", "ooo", chunks[1][0], chunks[1][1])
            raise AssertionError("chunk 2 without chunk 1 accepted")
        except Exception as e:
            check("first chunk" in str(e) or "no restore" in str(e), "error %r" % e)
        print("corrupted and out-of-order chunks refused")
        # 7. a newer encoding version is refused at load
        v2 = os.environ.get("RBF_REDIS_MODULE_ENCV2")
        check(v2 and os.path.exists(v2), "encv2 test module built")
        import rrtest
        n = Server(h.tmp, "v2", module_args=mod)
        n.exe = n.exe
        saved = rrtest.MODULE
        rrtest.MODULE = v2
        try:
            n.start()
        finally:
            rrtest.MODULE = saved
        h.servers.append(n)
        n.client().execute_command("RBF.RESERVE", "k", "BITS", 1000, "HASHES", 3, "SIGMA", 100)
        n.client().execute_command("SAVE")
        n.stop()
        try:
            n.start(timeout=20)
            raise AssertionError("a server loaded an RDB of a newer encoding version")
        except RuntimeError:
            pass
        check("encoding version 2" in n.log(), "the refusal is logged: %s" % n.log()[-500:])
        print("newer encoding version refused")
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
