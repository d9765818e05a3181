"""Command behaviour and errors: keywords in any order and case, SEED as an
unsigned 64-bit decimal, ERR item exists / not found / WRONGTYPE / arity /
a message naming the bad argument, RBF.INFO's exact field names, one field,
no seed anywhere, model values equal to `rbf model` for the same
configuration, a planned reservation blocks only its own client (another
client is served meanwhile), planning inside MULTI and Lua, reservations
beyond maxmemory refused, MEMORY USAGE covering the bits."""
import json
import os
import subprocess
import sys
import threading
import time

import redis

from rrtest import Harness, check, info_dict, wait_until

FIELDS = ["bits", "hashes", "sigma", "messages", "phases", "hashing", "recycle", "bits_per_filter",
          "bits_set", "fill", "frozen_bits_set", "cycles", "cycle_messages", "inserts",
          "reported_new", "model_fp", "model_messages_per_cycle", "memory", "layout"]


def err(fn, *a):
    try:
        fn(*a)
    except redis.ResponseError as e:
        return str(e)
    raise AssertionError("no error for %r" % (a,))


def rbf_model(*args):
    cli = os.environ.get("RBF_CLI")
    check(cli and os.path.exists(cli), "RBF_CLI (build/rbf) given")
    return json.loads(subprocess.run([cli, "model", "--json"] + [str(a) for a in args],
                                     stdout=subprocess.PIPE, check=True).stdout)


def main():
    with Harness() as h:
        s = h.server()
        c = s.client()
        x = c.execute_command
        # keywords in any order and case; the same seed gives the same filter
        x("RBF.RESERVE", "a", "BITS", 10000, "HASHES", 3, "SIGMA", 2000, "PHASES", 2, "SEED", 42)
        x("rbf.reserve", "b", "seed", "42", "phases", "2", "sigma", "2000", "Hashes", "3", "bits", "10000")
        for k in ("a", "b"):
            x("RBF.MADD", k, *["i%d" % i for i in range(3000)])
        check(x("DEBUG", "DIGEST-VALUE", "a") == x("DEBUG", "DIGEST-VALUE", "b"), "order/case")
        x("RBF.RESERVE", "c", "BITS", 10000, "HASHES", 3, "SIGMA", 2000, "PHASES", 2, "SEED", 43)
        x("RBF.MADD", "c", *["i%d" % i for i in range(3000)])
        check(x("DEBUG", "DIGEST-VALUE", "a") != x("DEBUG", "DIGEST-VALUE", "c"), "seed matters")
        # SEED range
        check(x("RBF.RESERVE", "s", "BITS", 100, "HASHES", 1, "SIGMA", 10,
                "SEED", "18446744073709551615") == b"OK", "max seed")
        for bad in ("18446744073709551616", "-1", "1.5", "", "0x10"):
            e = err(x, "RBF.RESERVE", "s2", "BITS", 100, "HASHES", 1, "SIGMA", 10, "SEED", bad)
            check("SEED" in e, "SEED error %r" % e)
        # errors name the argument
        for args, word in ((["BITS", "abc", "HASHES", 1, "SIGMA", 10], "BITS"),
                           (["BITS", 100, "HASHES", 0, "SIGMA", 10], "HASHES"),
                           (["BITS", 100, "HASHES", 300, "SIGMA", 10], "HASHES"),
                           (["BITS", 100, "HASHES", 2, "SIGMA", 10, "MESSAGES", 5], "SIGMA or MESSAGES"),
                           (["BITS", 100, "HASHES", 2, "SIGMA", 100], "sigma"),
                           (["BITS", 100, "HASHES", 2, "SIGMA", 10, "PHASES", 3], "PHASES"),
                           (["BITS", 100, "HASHES", 2, "SIGMA", 10, "HASHING", "x"], "HASHING"),
                           (["BITS", 100, "HASHES", 2, "SIGMA", 10, "RECYCLE", "x"], "RECYCLE"),
                           (["BITS", 100, "HASHES", 2, "SIGMA", 10, "COLOUR", "red"], "COLOUR"),
                           (["BITS", 100, "HASHES", 2, "SIGMA"], "SIGMA"),
                           (["BITS", 100, "BITS", 100, "HASHES", 2, "SIGMA", 10], "twice"),
                           (["ERROR_RATE", "1.5", "MEMORY", 1000], "ERROR_RATE"),
                           (["ERROR_RATE", "0.01"], "MEMORY or CAPACITY"),
                           (["ERROR_RATE", "0.01", "MEMORY", 1000, "CAPACITY", 5], "MEMORY or CAPACITY"),
                           (["ERROR_RATE", "0.01", "MEMORY", 1000, "BITS", 5], "not both"),
                           ([], "reservation needs"),
                           (["BITS", 1000, "HASHES", 2, "SIGMA", 10, "LAYOUT", "sideways"], "LAYOUT"),
                           (["BITS", 1000, "HASHES", 2, "SIGMA", 10, "LAYOUT", ""], "LAYOUT"),
                           (["BITS", 1000, "HASHES", 2, "SIGMA", 10, "LAYOUT"], "LAYOUT"),
                           (["BITS", 1000, "HASHES", 2, "SIGMA", 10, "LAYOUT", "flat", "layout",
                             "blocked"], "twice"),
                           (["BITS", 1000, "HASHES", 2, "SIGMA", 10, "LAYOUT", "blocked"],
                            "BITS 1000 with LAYOUT blocked: the bits per filter must be a multiple "
                            "of 512; nearest BITS are 512 and 1024"),
                           (["BITS", 100, "HASHES", 2, "SIGMA", 10, "LAYOUT", "blocked"],
                            "give BITS 512 or more"),
                           (["layout", "BLOCKED", "PHASES", 2, "BITS", 5000, "HASHES", 2, "SIGMA", 10],
                            "BITS 5000 with LAYOUT blocked and PHASES 2: the bits per filter must be "
                            "a multiple of 512; nearest BITS are 4096 and 5120"),
                           (["ERROR_RATE", "0.01", "CAPACITY", 1000, "LAYOUT", "blocked", "PHASES", 2],
                            "PHASES 2"),
                           (["ERROR_RATE", "0.01", "MEMORY", 10, "LAYOUT", "blocked"], "MEMORY")):
            e = err(x, "RBF.RESERVE", "new", *args)
            check(word in e and e.startswith(("ERR", "")) and "\n" not in e,
                  "RESERVE %r: error %r should name %r" % (args, e, word))
        check(c.exists("new") == 0 and c.ping(), "no key from failed reservations, server up")
        e = err(x, "RBF.INSERT", "new", "BITS", 1000, "HASHES", 2, "SIGMA", 10, "LAYOUT", "blocked",
                "ITEMS", "i")
        check("nearest BITS are 512 and 1024" in e, "INSERT with bad blocked BITS: %r" % e)
        check("LAYOUT must be flat or blocked" in err(x, "RBF.INSERT", "new", "BITS", 1024, "HASHES", 2,
                                                       "SIGMA", 10, "LAYOUT", 1, "ITEMS", "i"), "INSERT LAYOUT 1")
        check(c.exists("new") == 0 and c.ping(), "no key from failed inserts, server up")
        # LAYOUT in any case and position; flat is the default and LAYOUT flat
        # changes nothing; LAYOUT blocked is another filter
        x("RBF.RESERVE", "lf", "BITS", 10240, "HASHES", 3, "SIGMA", 2000, "SEED", 42)
        x("RBF.RESERVE", "lf2", "Layout", "FLAT", "BITS", 10240, "HASHES", 3, "SIGMA", 2000, "SEED", 42)
        x("RBF.INSERT", "lb", "BITS", 10240, "HASHES", 3, "lAyOuT", "bLoCkEd", "SIGMA", 2000, "SEED", 42,
          "ITEMS", "x")
        x("RBF.RESERVE", "lb2", "BITS", 10240, "HASHES", 3, "SIGMA", 2000, "SEED", 42, "LAYOUT", "blocked")
        x("RBF.ADD", "lb2", "x")
        for k in ("lf", "lf2"):
            x("RBF.ADD", k, "x")
        check(x("RBF.INFO", "lf", "layout") == b"flat" and x("RBF.INFO", "lb", "layout") == b"blocked",
              "INFO layout")
        check(x("DEBUG", "DIGEST-VALUE", "lf") == x("DEBUG", "DIGEST-VALUE", "lf2"), "LAYOUT flat")
        check(x("DEBUG", "DIGEST-VALUE", "lb") == x("DEBUG", "DIGEST-VALUE", "lb2"), "LAYOUT blocked")
        check(x("DEBUG", "DIGEST-VALUE", "lf") != x("DEBUG", "DIGEST-VALUE", "lb"), "layouts differ")
        # a planned blocked reservation with MEMORY: whole blocks (rounded down)
        x("RBF.RESERVE", "lpm", "ERROR_RATE", "0.01", "MEMORY", 100000, "LAYOUT", "blocked")
        check(x("RBF.INFO", "lpm", "bits") == 799744 and x("RBF.INFO", "lpm", "layout") == b"blocked",
              "planned blocked MEMORY bits %r" % x("RBF.INFO", "lpm", "bits"))
        check(float(x("RBF.INFO", "lpm", "model_fp")) <= 0.01, "planned blocked model_fp")
        check("item exists" in err(x, "RBF.RESERVE", "a", "BITS", 100, "HASHES", 1, "SIGMA", 10), "exists")
        check("not found" in err(x, "RBF.ADD", "nokey", "i"), "ADD on a missing key")
        check("not found" in err(x, "RBF.MADD", "nokey", "i"), "MADD on a missing key")
        check("not found" in err(x, "RBF.RECYCLE", "nokey"), "RECYCLE on a missing key")
        check("not found" in err(x, "RBF.INFO", "nokey"), "INFO on a missing key")
        check(x("RBF.EXISTS", "nokey", "i") == 0 and x("RBF.MEXISTS", "nokey", "i", "j") == [0, 0], "exists")
        check("not found" in err(x, "RBF.INSERT", "nokey", "ITEMS", "i"), "INSERT without options")
        check("not found" in err(x, "RBF.INSERT", "nokey", "NOCREATE", "ITEMS", "i"), "NOCREATE")
        check(x("RBF.INSERT", "ins", "BITS", 1000, "HASHES", 2, "SIGMA", 100, "ITEMS", "i", "i") == [1, 0], "insert")
        check(x("RBF.INSERT", "ins", "ITEMS", "i", "j") == [0, 1], "insert existing")
        check(x("RBF.RECYCLE", "ins") == b"OK" and x("RBF.EXISTS", "ins", "j") == 0, "recycle")
        c.set("str", "v")
        c.rpush("list", "v")
        for cmd, rest in (("RBF.RESERVE", ["BITS", 100, "HASHES", 1, "SIGMA", 10]), ("RBF.ADD", ["i"]),
                          ("RBF.MADD", ["i"]), ("RBF.EXISTS", ["i"]), ("RBF.MEXISTS", ["i"]),
                          ("RBF.INSERT", ["ITEMS", "i"]), ("RBF.RECYCLE", []), ("RBF.INFO", []),
                          ("RBF.SCANDUMP", [0]), ("RBF.LOADCHUNK", [5, "abcde"])):
            for k in ("str", "list"):
                check(err(x, cmd, k, *rest).startswith("WRONGTYPE"), "%s on a %s" % (cmd, k))
            check("wrong number of arguments" in err(x, cmd), "%s arity" % cmd)
        check(c.get("str") == b"v", "other types untouched")
        # INFO: exact names in order, one field, no seed
        raw = x("RBF.INFO", "a")
        check([n.decode() for n in raw[::2]] == FIELDS, "INFO names %r" % raw[::2])
        check(x("RBF.INFO", "a", "bits_per_filter") == 5000 and x("RBF.INFO", "a", "PHASES") == 2, "one field")
        check("unknown INFO field" in err(x, "RBF.INFO", "a", "seed"), "no seed field")
        check(b"42" not in [v for v in raw[1::2] if isinstance(v, bytes)] and 42 not in raw[1::2], "seed hidden")
        # model values equal rbf model's for the same configuration
        for k, args, cli in (
                ("m1", ["BITS", 100000, "HASHES", 5, "SIGMA", 30000], ["--bits", 100000, "--hashes", 5, "--sigma", 30000]),
                ("m2", ["BITS", 100001, "HASHES", 4, "SIGMA", 20000, "PHASES", 2, "RECYCLE", "retaining"],
                 ["--bits", 100001, "--hashes", 4, "--sigma", 20000, "--phases", 2, "--recycle", "retaining"]),
                ("m3", ["BITS", 50000, "HASHES", 3, "MESSAGES", 4000, "HASHING", "non-colliding"],
                 ["--bits", 50000, "--hashes", 3, "--messages", 4000, "--hashing", "non-colliding"]),
                ("m4", ["BITS", 102400, "HASHES", 5, "SIGMA", 30000, "LAYOUT", "blocked"],
                 ["--bits", 102400, "--hashes", 5, "--sigma", 30000, "--layout", "blocked"]),
                ("m5", ["BITS", 51200, "HASHES", 3, "MESSAGES", 4000, "LAYOUT", "blocked"],
                 ["--bits", 51200, "--hashes", 3, "--messages", 4000, "--layout", "blocked"])):
            x("RBF.RESERVE", k, *args)
            wait_until(lambda: x("RBF.INFO", k, "model_fp") != b"pending", what="model of " + k)
            want = rbf_model(*cli)
            fp = float(x("RBF.INFO", k, "model_fp"))
            mpc = float(x("RBF.INFO", k, "model_messages_per_cycle"))
            wfp = want.get("fp", want.get("exact_real"))
            wmpc = want.get("expected_messages", 4000)
            check(abs(fp - wfp) <= 1e-12 * wfp and abs(mpc - wmpc) <= 1e-9 * wmpc,
                  "%s: model %r %r, rbf model %r %r" % (k, fp, mpc, wfp, wmpc))
        print("model values equal rbf model's")
        # a planned reservation blocks only its own client
        res = {}
        t = threading.Thread(target=lambda: res.update(r=s.client().execute_command(
            "RBF.RESERVE", "big", "ERROR_RATE", "0.001", "MEMORY", 4 << 20)))
        t.start()
        seen = 0
        while t.is_alive():
            if c.info("clients")["blocked_clients"] == 1:
                seen += 1
            check(c.ping(), "PING while planning")
            time.sleep(0.002)
        t.join()
        check(res.get("r") == b"OK", "planned reservation %r" % res)
        check(info_dict(c, "big")["bits"] == 4 << 23, "planned MEMORY")
        # (how many polls saw the plan running depends on the machine's
        # speed and load, so it is reported, not asserted)
        print("planning: another client was served %d times while the planner ran" % seen)
        # inside MULTI and Lua (no blocking there: planned inline)
        tx = c.pipeline(transaction=True)
        tx.execute_command("RBF.RESERVE", "tx", "ERROR_RATE", "0.01", "CAPACITY", 500)
        tx.execute_command("RBF.ADD", "tx", "i")
        check(tx.execute() == [b"OK", 1], "MULTI")
        check(c.eval("return redis.call('RBF.RESERVE', KEYS[1], 'ERROR_RATE', '0.01', 'CAPACITY', '300')",
                     1, "lua") == b"OK", "Lua")
        # ... but only small plans run inline: a large one is refused at once
        tx = c.pipeline(transaction=True)
        tx.execute_command("RBF.RESERVE", "txbig", "ERROR_RATE", "0.01", "MEMORY", 64 << 20)
        r = tx.execute(raise_on_error=False)
        check(isinstance(r[0], redis.ResponseError) and "inside MULTI" in str(r[0]), "large plan in MULTI %r" % r)
        e = err(c.eval, "return redis.call('RBF.RESERVE', KEYS[1], 'ERROR_RATE', '0.01', 'CAPACITY', '10000000')",
                1, "luabig")
        check("inside MULTI or a script" in e, "large plan in Lua: %r" % e)
        # ... and a blocked plan (about a second at any size) never runs inline
        tx = c.pipeline(transaction=True)
        tx.execute_command("RBF.RESERVE", "txblk", "ERROR_RATE", "0.01", "CAPACITY", 500, "LAYOUT", "blocked")
        tx.execute_command("RBF.RESERVE", "txblk2", "BITS", 5120, "HASHES", 3, "SIGMA", 1000, "LAYOUT", "blocked")
        r = tx.execute(raise_on_error=False)
        check(isinstance(r[0], redis.ResponseError) and "inside MULTI" in str(r[0]) and r[1] == b"OK",
              "blocked plan in MULTI %r" % r)
        e = err(c.eval, "return redis.call('RBF.RESERVE', KEYS[1], 'ERROR_RATE', '0.01', 'MEMORY', '1000', "
                "'LAYOUT', 'blocked')", 1, "luablk")
        check("inside MULTI or a script" in e, "blocked plan in Lua: %r" % e)
        # maxmemory refuses reservations larger than what is left
        c.config_set("maxmemory", 30 << 20)
        for args in (["BITS", 8 << 30, "HASHES", 3, "SIGMA", 1000],
                     ["ERROR_RATE", "0.01", "MEMORY", 100 << 20],
                     ["ERROR_RATE", "0.01", "CAPACITY", 10 ** 9]):
            e = err(x, "RBF.RESERVE", "huge", *args)
            check("maxmemory" in e, "refusal %r" % e)
        check(c.ping() and c.exists("huge") == 0, "server up, nothing created")
        c.config_set("maxmemory", 0)
        # MEMORY USAGE covers the bit arrays
        mu = x("MEMORY", "USAGE", "big")
        check(mu >= (4 << 20) and mu < (4 << 20) + 4096, "MEMORY USAGE %d" % mu)
        # the filters are allocated by the server's allocator: used_memory sees
        # their 8 MiB come and go (within 1 MiB: the server frees and takes
        # other memory meanwhile, client buffers say; once 8258192 bytes)
        used0 = c.info("memory")["used_memory"]
        x("RBF.RESERVE", "hooked", "BITS", 64 << 20, "HASHES", 3, "SIGMA", 1000)
        used1 = c.info("memory")["used_memory"]
        check(used1 - used0 >= 7 << 20, "used_memory grew by %d" % (used1 - used0))
        check(x("DEL", "hooked") == 1, "hooked deleted")
        used2 = c.info("memory")["used_memory"]
        check(used1 - used2 >= 7 << 20, "used_memory fell by %d" % (used1 - used2))
        print("used_memory sees the filter (+%d bytes, then -%d)" % (used1 - used0, used1 - used2))
        check(s.alive(), "server up")
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
