"""Writes replicate deterministically: a replica (one attached before the
writes, one attached after them by a full sync) holds the same digest as
its primary for every key, including planned reservations (sized on a
worker thread; they replicate as the explicit form with the seed they
drew; planned blocked ones with LAYOUT blocked), reservations inside MULTI and Lua, RBF.INSERT and BF.ADD creating
keys, RECYCLE and LOADCHUNK."""
import sys

from rrtest import Harness, check, info_dict, wait_until


def synced(p, r):
    po = p.info("replication")["master_repl_offset"]
    ri = r.info("replication")
    return ri.get("master_link_status") == "up" and ri.get("slave_repl_offset", -1) == po


def digests(c, keys):
    return {k: c.execute_command("DEBUG", "DIGEST-VALUE", k)[0] for k in keys}


def main():
    mod = ["BF-COMPAT", "yes", "CHUNK-BYTES", "2048"]
    with Harness() as h:
        p = h.server("primary", module_args=mod, args=["--repl-diskless-sync-delay", "0"])
        pc = p.client()
        r1 = h.server("replica1", module_args=mod, args=["--replicaof", "127.0.0.1", str(p.port)])
        rc1 = r1.client()
        wait_until(lambda: rc1.info("replication").get("master_link_status") == "up",
                   what="replica link")
        pc.execute_command("RBF.RESERVE", "planned", "ERROR_RATE", "0.01", "CAPACITY", "20000")
        pc.execute_command("RBF.RESERVE", "planned2", "error_rate", "0.001", "memory", "65536",
                           "PHASES", "2")
        pc.execute_command("RBF.RESERVE", "explicit", "BITS", 100000, "HASHES", 5, "SIGMA", 30000)
        pc.execute_command("RBF.RESERVE", "plblk", "ERROR_RATE", "0.01", "CAPACITY", "20000",
                           "LAYOUT", "blocked")
        pc.execute_command("RBF.INSERT", "plblk2", "LAYOUT", "blocked", "ERROR_RATE", "0.005",
                           "MEMORY", "30000", "ITEMS", "a", "b")
        pc.execute_command("RBF.INSERT", "ins", "ERROR_RATE", "0.02", "CAPACITY", "3000", "ITEMS",
                           "a", "b", "c")
        pc.execute_command("RBF.INSERT", "ins2", "BITS", 5000, "HASHES", 2, "MESSAGES", 900,
                           "ITEMS", "a", "b")
        pc.execute_command("BF.ADD", "bfauto", "x")
        pc.execute_command("BF.INSERT", "bfins", "CAPACITY", "1000", "ERROR", "0.05", "ITEMS", "x", "y")
        pc.execute_command("BF.RESERVE", "bfres", "0.01", "5000")
        tx = pc.pipeline(transaction=True)
        tx.execute_command("RBF.RESERVE", "inmulti", "ERROR_RATE", "0.01", "CAPACITY", "1000")
        tx.execute_command("RBF.ADD", "inmulti", "m")
        tx.execute()
        pc.eval("return redis.call('RBF.RESERVE', KEYS[1], 'ERROR_RATE', '0.05', 'MEMORY', '4096')",
                1, "inlua")
        for k in ("planned", "planned2", "explicit", "plblk", "plblk2", "ins", "ins2", "bfauto",
                  "bfins", "bfres", "inmulti", "inlua"):
            items = ["%s-%d" % (k, i % 7000) for i in range(15000)]
            for i in range(0, len(items), 1000):
                pc.execute_command("RBF.MADD", k, *items[i:i + 1000])
            pc.execute_command("RBF.ADD", k, "single")
        pc.execute_command("RBF.RECYCLE", "explicit")
        cur = 0
        while True:
            cur, data = pc.execute_command("RBF.SCANDUMP", "planned", cur)
            if cur == 0:
                break
            pc.execute_command("RBF.LOADCHUNK", "copied", cur, data)
        keys = [k.decode() for k in pc.keys("*")]
        check(len(keys) == 13, "keys %r" % keys)
        wait_until(lambda: synced(pc, rc1), what="replica 1 offset")
        dp = digests(pc, keys)
        check(digests(rc1, keys) == dp, "replica 1 digests differ:\n%r\n%r" % (digests(rc1, keys), dp))
        check(pc.execute_command("DEBUG", "DIGEST") == rc1.execute_command("DEBUG", "DIGEST"),
              "dataset digest")
        check(info_dict(rc1, "planned")["bits"] == info_dict(pc, "planned")["bits"], "planned size")
        for k in ("plblk", "plblk2"):
            ip, ir = info_dict(pc, k), info_dict(rc1, k)
            check(ip["layout"] == ir["layout"] == b"blocked" and ip["bits"] == ir["bits"]
                  and ip["sigma"] == ir["sigma"], "%s on the replica: %r" % (k, ir))
        print("replica attached before the writes: %d digests equal" % len(keys))
        # a replica attached afterwards gets everything by a full sync (RDB)
        r2 = h.server("replica2", module_args=mod, args=["--replicaof", "127.0.0.1", str(p.port)])
        rc2 = r2.client()
        wait_until(lambda: synced(pc, rc2), what="replica 2 sync")
        check(digests(rc2, keys) == dp, "replica 2 digests differ")
        print("replica attached after the writes: digests equal")
        # a replica with a smaller maxmemory still applies what the primary
        # accepted (the memory check is the primary's)
        rc1.config_set("maxmemory", 1 << 20)
        pc.execute_command("RBF.RESERVE", "bigger", "BITS", 32 << 20, "HASHES", 3, "SIGMA", 1000)
        pc.execute_command("RBF.ADD", "bigger", "x")
        wait_until(lambda: synced(pc, rc1), what="replica 1 offset")
        check(digests(rc1, ["bigger"]) == digests(pc, ["bigger"]), "replica with small maxmemory")
        rc1.config_set("maxmemory", 0)
        # different digests are detected (the check can fail)
        pc.execute_command("RBF.ADD", "planned", "one more")
        check(digests(pc, ["planned"]) != {"planned": dp["planned"]}, "a write changes the digest")
        wait_until(lambda: synced(pc, rc1), what="replica 1 offset")
        check(digests(rc1, ["planned"]) == digests(pc, ["planned"]), "replica follows the write")
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
