"""Failover loses no acknowledged write: a primary and a replica (both with
BF-COMPAT yes); writes with RBF.ADD / RBF.MADD / RBF.INSERT and BF.ADD /
BF.MADD / BF.INSERT, each acknowledged by the replica with WAIT 1 0; then
kill -9 of the primary and REPLICAOF NO ONE on the replica: every
acknowledged item is present there (RBF.MEXISTS all 1) and the promoted
replica takes writes."""
import sys

from rrtest import Harness, check, wait_until

MOD = ["BF-COMPAT", "yes"]


def acknowledged(pc, cmd):
    """Run one write on the primary and WAIT for the replica to have it."""
    r = pc.execute_command(*cmd)
    n = pc.execute_command("WAIT", 1, 0)
    check(n == 1, "WAIT 1 0 after %s answered %r replicas" % (cmd[0], n))
    return r


def writes():
    """(key, command, items it adds) for every write kind."""
    out = []
    for kind in ("RBF", "BF"):
        it = lambda tag, n: ["%s-%s-%d" % (kind, tag, i) for i in range(n)]  # noqa: E731
        if kind == "RBF":
            out.append(("rbf-res", ["RBF.RESERVE", "rbf-res", "ERROR_RATE", "0.001", "CAPACITY", "100000"], []))
            out.append(("rbf-res", ["RBF.ADD", "rbf-res"] + it("add", 1), it("add", 1)))
            out.append(("rbf-res", ["RBF.MADD", "rbf-res"] + it("madd", 50), it("madd", 50)))
            out.append(("rbf-res", ["RBF.INSERT", "rbf-res", "ITEMS"] + it("ins", 20), it("ins", 20)))
            out.append(("rbf-new", ["RBF.INSERT", "rbf-new", "ERROR_RATE", "0.001", "CAPACITY", "50000",
                                    "ITEMS"] + it("insnew", 20), it("insnew", 20)))
        else:
            out.append(("bf-res", ["BF.RESERVE", "bf-res", "0.001", "100000"], []))
            out.append(("bf-res", ["BF.ADD", "bf-res"] + it("add", 1), it("add", 1)))
            out.append(("bf-res", ["BF.MADD", "bf-res"] + it("madd", 50), it("madd", 50)))
            out.append(("bf-res", ["BF.INSERT", "bf-res", "ITEMS"] + it("ins", 20), it("ins", 20)))
            out.append(("bf-auto", ["BF.ADD", "bf-auto"] + it("auto", 1), it("auto", 1)))
            out.append(("bf-mauto", ["BF.MADD", "bf-mauto"] + it("mauto", 10), it("mauto", 10)))
            out.append(("bf-new", ["BF.INSERT", "bf-new", "CAPACITY", "50000", "ERROR", "0.001",
                                   "ITEMS"] + it("insnew", 20), it("insnew", 20)))
    return out


def main():
    with Harness() as h:
        p = h.server("primary", module_args=MOD, args=["--repl-diskless-sync-delay", "0"])
        r = h.server("replica", module_args=MOD, args=["--replicaof", "127.0.0.1", str(p.port)])
        pc, rc = p.client(), r.client()
        wait_until(lambda: rc.info("replication").get("master_link_status") == "up",
                   what="the replica's link to the primary")
        acked = {}
        for key, cmd, items in writes():
            acknowledged(pc, cmd)
            acked.setdefault(key, []).extend(items)
        # many more acknowledged writes, in batches, up to the kill
        for b in range(20):
            items = ["late-%d-%d" % (b, i) for i in range(100)]
            acknowledged(pc, ["RBF.MADD", "rbf-res", *items])
            acked["rbf-res"].extend(items)
            items = ["late-bf-%d-%d" % (b, i) for i in range(100)]
            acknowledged(pc, ["BF.MADD", "bf-res", *items])
            acked["bf-res"].extend(items)
        p.kill9()
        check(rc.execute_command("REPLICAOF", "NO", "ONE") == b"OK", "REPLICAOF NO ONE")
        check(rc.info("replication")["role"] == "master", "the replica was not promoted")
        total = 0
        for key, items in acked.items():
            check(rc.exists(key) == 1, "key %s missing on the promoted replica" % key)
            if not items:
                continue
            got = rc.execute_command("RBF.MEXISTS", key, *items)
            lost = [i for i, x in zip(items, got) if x != 1]
            check(not lost, "%s: %d of %d acknowledged items lost after failover, e.g. %r"
                  % (key, len(lost), len(items), lost[:5]))
            total += len(items)
        check(rc.execute_command("RBF.ADD", "rbf-res", "after-failover") == 1,
              "the promoted replica does not take a write")
        print("failover: %d acknowledged items in %d keys all present on the promoted replica"
              % (total, len(acked)))
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
