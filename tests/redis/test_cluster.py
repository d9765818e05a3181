"""A 2-node Redis Cluster (CLUSTER ADDSLOTS, CLUSTER MEET): every rbf command
declares its key, so a node answers MOVED for a key of the other node and
serves its own."""
import sys

import redis

from rrtest import Harness, check, free_port, wait_until

CMDS = [("RBF.RESERVE", ["BITS", "1000", "HASHES", "3", "SIGMA", "100"]),
        ("RBF.ADD", ["x"]), ("RBF.MADD", ["x", "y"]), ("RBF.EXISTS", ["x"]),
        ("RBF.MEXISTS", ["x", "y"]), ("RBF.INSERT", ["ITEMS", "x"]), ("RBF.RECYCLE", []),
        ("RBF.INFO", []), ("RBF.SCANDUMP", ["0"]), ("RBF.LOADCHUNK", ["1", "zz"]),
        ("BF.ADD", ["x"]), ("BF.EXISTS", ["x"]), ("BF.CARD", []), ("BF.INFO", [])]


def main():
    with Harness() as h:
        nodes, bus = [], []
        for name in ("n1", "n2"):
            bus.append(free_port())
            nodes.append(h.server(name, module_args=["BF-COMPAT", "yes"],
                                  args=["--cluster-enabled", "yes", "--cluster-config-file",
                                        "nodes.conf", "--cluster-node-timeout", "5000",
                                        "--cluster-port", str(bus[-1])]))
        a, b = nodes[0].client(), nodes[1].client()
        a.execute_command("CLUSTER", "ADDSLOTS", *range(0, 8192))
        b.execute_command("CLUSTER", "ADDSLOTS", *range(8192, 16384))
        a.execute_command("CLUSTER", "MEET", "127.0.0.1", nodes[1].port, bus[1])
        wait_until(lambda: all(c.execute_command("CLUSTER", "INFO").decode().find("cluster_state:ok") >= 0
                               for c in (a, b)), what="cluster_state ok", timeout=60)
        # a key on each side
        ka = next(k for k in ("k%d" % i for i in range(100)) if a.execute_command("CLUSTER", "KEYSLOT", k) < 8192)
        kb = next(k for k in ("k%d" % i for i in range(100)) if a.execute_command("CLUSTER", "KEYSLOT", k) >= 8192)
        raw = nodes[0].client()
        raw.response_callbacks = {}
        for cmd, rest in CMDS:
            check(raw.execute_command("COMMAND", "GETKEYS", cmd, ka, *rest) == [ka.encode()],
                  "COMMAND GETKEYS %s" % cmd)
            for client, key, port in ((a, kb, nodes[1].port), (b, ka, nodes[0].port)):
                try:
                    client.execute_command(cmd, key, *rest)
                    raise AssertionError("%s %s on the wrong node was served" % (cmd, key))
                except redis.ResponseError as e:
                    msg = str(e)
                    check(msg.startswith("MOVED ") and msg.endswith(":%d" % port),
                          "%s: expected MOVED to port %d, got %r" % (cmd, port, msg))
        check(a.execute_command("RBF.RESERVE", ka, "BITS", 1000, "HASHES", 3, "SIGMA", 100) == b"OK", "own key")
        check(a.execute_command("RBF.ADD", ka, "x") == 1, "own key add")
        check(b.execute_command("RBF.INSERT", kb, "ERROR_RATE", "0.01", "CAPACITY", "100", "ITEMS", "x") == [1],
              "own key insert")
        print("MOVED for the other node's keys on %d commands; own keys served" % len(CMDS))
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
