"""Replication and the AOF carry only RBF.* commands: a primary with
BF-COMPAT yes (and appendonly yes, appendfsync always) and a replica
WITHOUT BF-COMPAT.  Every BF write kind (BF.RESERVE; BF.ADD and BF.MADD on
a new key and on an existing one; BF.INSERT with and without
CAPACITY/ERROR/NOCREATE; BF.LOADCHUNK of a BF.SCANDUMP copy) and the RBF
writes.  After WAIT 1 0 the replica holds the same digest for every key,
every added item is present there, and neither server logged an unknown
command or a CRITICAL error; the AOF files hold no BF.* command; and a
restart of the primary from its AOF without BF-COMPAT gives the same
digests."""
import glob
import os
import sys

from rrtest import Checks, Harness, check, digests, wait_until

BF = ["BF-COMPAT", "yes", "CHUNK-BYTES", "2048"]


def items(tag, n):
    return ["%s-%d" % (tag, i) for i in range(n)]


def bf_writes(x):
    """Every BF write kind; returns {key: items added}."""
    added = {}

    def add(key, its):
        added.setdefault(key, []).extend(its)

    x("BF.RESERVE", "bf-res", "0.01", "5000")
    add("bf-res", [])
    x("BF.ADD", "bf-add-new", "a1")                       # creates the key
    add("bf-add-new", ["a1"])
    x("BF.ADD", "bf-res", "a2")                           # existing key
    add("bf-res", ["a2"])
    x("BF.MADD", "bf-madd-new", *items("m-new", 30))      # creates the key
    add("bf-madd-new", items("m-new", 30))
    x("BF.MADD", "bf-res", *items("m-old", 30))           # existing key
    add("bf-res", items("m-old", 30))
    x("BF.INSERT", "bf-ins-new", "ITEMS", *items("i-new", 10))   # default options
    add("bf-ins-new", items("i-new", 10))
    x("BF.INSERT", "bf-ins-opt", "CAPACITY", "3000", "ERROR", "0.001", "ITEMS", *items("i-opt", 10))
    add("bf-ins-opt", items("i-opt", 10))
    x("BF.INSERT", "bf-res", "CAPACITY", "3000", "ERROR", "0.001", "ITEMS", *items("i-old", 10))
    add("bf-res", items("i-old", 10))
    x("BF.INSERT", "bf-res", "NOCREATE", "ITEMS", *items("i-nc", 10))
    add("bf-res", items("i-nc", 10))
    # a copy with BF.SCANDUMP / BF.LOADCHUNK, to a new key
    cur = 0
    while True:
        cur, data = x("BF.SCANDUMP", "bf-res", cur)
        if cur == 0:
            break
        x("BF.LOADCHUNK", "bf-copy", cur, data)
    add("bf-copy", list(added["bf-res"]))
    return added


def rbf_writes(x, added):
    x("RBF.RESERVE", "rbf-res", "ERROR_RATE", "0.01", "CAPACITY", "5000")
    added["rbf-res"] = []
    x("RBF.ADD", "rbf-res", "r1")
    x("RBF.MADD", "rbf-res", *items("rm", 30))
    x("RBF.INSERT", "rbf-res", "ITEMS", *items("ri", 10))
    added["rbf-res"] += ["r1"] + items("rm", 30) + items("ri", 10)
    x("RBF.INSERT", "rbf-ins", "BITS", 20000, "HASHES", 3, "SIGMA", 5000, "ITEMS", *items("rin", 10))
    added["rbf-ins"] = items("rin", 10)
    x("RBF.RESERVE", "rbf-rec", "BITS", 20000, "HASHES", 3, "SIGMA", 5000)
    x("RBF.MADD", "rbf-rec", *items("before", 10))
    x("RBF.RECYCLE", "rbf-rec")
    x("RBF.MADD", "rbf-rec", *items("after", 10))
    added["rbf-rec"] = items("after", 10)
    cur = 0
    while True:
        cur, data = x("RBF.SCANDUMP", "rbf-res", cur)
        if cur == 0:
            break
        x("RBF.LOADCHUNK", "rbf-copy", cur, data)
    added["rbf-copy"] = list(added["rbf-res"])


def check_log_clean(server):
    log = server.log()
    bad = [ln for ln in log.splitlines()
           if "unknown command" in ln.lower() or "CRITICAL" in ln]
    check(not bad, "%s logged %d such line(s): %s" % (
        server.name, len(bad), " | ".join(ln[:160] for ln in bad[:5])))


def check_items_present(c, added, where):
    for key, its in added.items():
        check(c.exists(key) == 1, "%s: key %s missing" % (where, key))
        if its:
            got = c.execute_command("RBF.MEXISTS", key, *its)
            lost = [i for i, v in zip(its, got) if v != 1]
            check(not lost, "%s: %s lost %d of %d items, e.g. %r" % (where, key, len(lost), len(its), lost[:5]))


def aof_commands(path):
    """The command names of a RESP AOF file (a multi-part .incr or .base
    .aof); an RDB-preamble base (.rdb) is not RESP and is skipped."""
    with open(path, "rb") as f:
        data = f.read()
    names, pos = [], 0
    while pos < len(data):
        check(data[pos:pos + 1] == b"*", "%s: not RESP at byte %d" % (path, pos))
        end = data.index(b"\r\n", pos)
        argc = int(data[pos + 1:end])
        pos = end + 2
        args = []
        for _ in range(argc):
            end = data.index(b"\r\n", pos)
            n = int(data[pos + 1:end])
            pos = end + 2
            args.append(data[pos:pos + n])
            pos += n + 2
        names.append(args[0].upper())
    return names


def check_aof_only_rbf(server):
    d = os.path.join(server.dir, "appendonlydir")
    files = sorted(glob.glob(os.path.join(d, "*.aof")))
    check(files, "no AOF file in %s" % d)
    names = []
    for f in files:
        names += aof_commands(f)
    bf = sorted({n.decode() for n in names if n.startswith(b"BF.")})
    check(not bf, "the AOF holds BF commands: %s (only RBF.* may be written)" % ", ".join(bf))
    check(any(n.startswith(b"RBF.") for n in names), "the AOF holds no RBF command at all: %r"
          % sorted(set(names))[:20])
    return len(names)


def main():
    c = Checks()
    with Harness() as h:
        p = h.server("primary", module_args=BF,
                     args=["--appendonly", "yes", "--appendfsync", "always",
                           "--repl-diskless-sync-delay", "0"])
        r = h.server("replica", args=["--replicaof", "127.0.0.1", str(p.port)])
        pc, rc = p.client(), r.client()
        wait_until(lambda: rc.info("replication").get("master_link_status") == "up",
                   what="the replica's link")
        added = bf_writes(pc.execute_command)
        rbf_writes(pc.execute_command, added)
        check(pc.execute_command("WAIT", 1, 0) == 1, "WAIT 1 0: the replica did not acknowledge")
        keys = sorted(added)
        dp = digests(pc, keys)

        def replica_without_bf_compat_has_equal_digests():
            dr = digests(rc, keys)
            diff = [k for k in keys if dp[k] != dr[k]]
            check(not diff, "digests differ for %s" % diff)

        def replica_without_bf_compat_has_every_item():
            check_items_present(rc, added, "replica")

        def replica_logs_no_unknown_command():
            check_log_clean(r)

        def primary_logs_no_unknown_command():
            check_log_clean(p)

        def aof_holds_only_rbf_commands():
            print("AOF: %d commands" % check_aof_only_rbf(p))

        for fn in (replica_without_bf_compat_has_equal_digests,
                   replica_without_bf_compat_has_every_item, replica_logs_no_unknown_command,
                   primary_logs_no_unknown_command, aof_holds_only_rbf_commands):
            c.run(fn)
        # restart the primary from its AOF without BF-COMPAT
        r.stop()
        p.stop()
        p.module_args = []

        def aof_loads_without_bf_compat():
            try:
                p.start()
            except RuntimeError as e:
                why = [ln[:200] for ln in p.log().splitlines()
                       if "unknown command" in ln.lower() or "append only file" in ln.lower()]
                raise AssertionError("the server did not start from its AOF: %s" % " | ".join(why[-4:]))

        def aof_restart_without_bf_compat_keeps_digests():
            pc = p.client()
            da = digests(pc, keys)
            diff = [k for k in keys if da[k] != dp[k]]
            check(not diff, "digests differ for %s" % diff)
            check_items_present(pc, added, "AOF restart")
            check_log_clean(p)

        if c.run(aof_loads_without_bf_compat) is None and p.alive():
            c.run(aof_restart_without_bf_compat_keeps_digests)
        c.done()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
