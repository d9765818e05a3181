"""Memory limits of a reservation: with maxmemory 50mb and
maxmemory-policy noeviction, a reservation larger than maxmemory (explicit,
planned, BF.RESERVE, RBF.INSERT creating the key) is refused with an error
that mentions maxmemory, and creates no key; with allkeys-lru the same
reservation is accepted (the server may then evict keys, the new one too;
the machine has the physical memory)."""
import sys

from rrtest import Checks, Harness, check, expect_error

BIG = 1 << 30  # bits: 128 MiB, more than maxmemory

RESERVATIONS = [
    ("explicit", ["RBF.RESERVE", "big", "BITS", BIG, "HASHES", 4, "SIGMA", BIG // 2]),
    ("planned", ["RBF.RESERVE", "big", "ERROR_RATE", "0.01", "MEMORY", BIG // 8]),
    ("bf_reserve", ["BF.RESERVE", "big", "0.001", "60000000"]),
    ("rbf_insert", ["RBF.INSERT", "big", "BITS", BIG, "HASHES", 4, "SIGMA", BIG // 2, "ITEMS", "a"]),
]


def refused_under_noeviction(c, name, cmd):
    c.config_set("maxmemory-policy", "noeviction")
    expect_error(c.execute_command, *cmd, contains="maxmemory",
                 what="%s reservation of 128 MiB under maxmemory 50mb, noeviction" % name)
    check(c.exists("big") == 0, "%s: a refused reservation left the key" % name)


def accepted_under_allkeys_lru(c, name, cmd):
    c.config_set("maxmemory-policy", "allkeys-lru")
    try:
        r = c.execute_command(*cmd)
    except Exception as e:  # noqa: BLE001
        raise AssertionError("%s reservation of 128 MiB under maxmemory 50mb, allkeys-lru "
                             "refused: %s" % (name, e))
    # (the key itself may be evicted by the next command: over maxmemory,
    # allkeys-lru evicts any key, so only the answer is checked)
    check(r == b"OK" or r == [1], "%s under allkeys-lru answered %r" % (name, r))
    c.config_set("maxmemory-policy", "noeviction")
    c.delete("big")


def main():
    ck = Checks()
    with Harness() as h:
        s = h.server(module_args=["BF-COMPAT", "yes"],
                     args=["--maxmemory", "50mb", "--maxmemory-policy", "noeviction"])
        c = s.client()
        # the limit holds: a small reservation fits
        check(c.execute_command("RBF.RESERVE", "small", "BITS", 1 << 20, "HASHES", 3,
                                "SIGMA", 1 << 18) == b"OK", "a 128 KiB reservation under 50mb")
        for name, cmd in RESERVATIONS:
            ck.run(refused_under_noeviction, c, name, cmd)
        for name, cmd in RESERVATIONS:
            ck.run(accepted_under_allkeys_lru, c, name, cmd)
        check(s.alive() and c.ping(), "server up")
        ck.done()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
