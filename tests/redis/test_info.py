"""INFO: the `rbf` section has rbf_filters (the number of rbf keys),
rbf_bytes (grows with a reservation by at least its bits), rbf_recycles,
rbf_plans_waiting and rbf_dumps_open with plausible values; INFO modules
reports the module's ver= equal to the library's version number
(major*10000+minor*100+patch, read from include/rbf_base.h at test time)."""
import sys

from rrtest import Checks, Harness, check, library_version_number

FIELDS = ("rbf_filters", "rbf_bytes", "rbf_recycles", "rbf_plans_waiting", "rbf_dumps_open")


def rbf_section(c):
    info = c.info("rbf")
    missing = [f for f in FIELDS if f not in info]
    check(not missing, "INFO rbf lacks %s (has %r)" % (", ".join(missing), sorted(info)[:20]))
    return info


def info_rbf_has_every_field(c):
    info = rbf_section(c)
    for f in FIELDS:
        check(isinstance(info[f], int) and info[f] >= 0, "INFO rbf %s = %r: not a count" % (f, info[f]))


def filters_counts_rbf_keys(c):
    before = rbf_section(c)["rbf_filters"]
    for i in range(3):
        c.execute_command("RBF.RESERVE", "cnt%d" % i, "BITS", 10000, "HASHES", 2, "SIGMA", 1000)
    c.set("a-string", "x")
    check(rbf_section(c)["rbf_filters"] == before + 3,
          "rbf_filters %d after 3 reservations, was %d" % (rbf_section(c)["rbf_filters"], before))
    c.delete("cnt0")
    check(rbf_section(c)["rbf_filters"] == before + 2, "rbf_filters after a DEL: %d, want %d"
          % (rbf_section(c)["rbf_filters"], before + 2))
    keys = [k for k in c.keys("*") if c.type(k) not in (b"string",)]
    check(rbf_section(c)["rbf_filters"] == len(keys), "rbf_filters %d, rbf keys %d"
          % (rbf_section(c)["rbf_filters"], len(keys)))


def bytes_grow_with_reservation(c):
    before = rbf_section(c)["rbf_bytes"]
    bits = 1 << 24
    c.execute_command("RBF.RESERVE", "sized", "BITS", bits, "HASHES", 3, "SIGMA", 1 << 20)
    after = rbf_section(c)["rbf_bytes"]
    check(after - before >= bits // 8, "rbf_bytes grew by %d for a %d-byte filter" % (after - before, bits // 8))
    c.delete("sized")
    check(rbf_section(c)["rbf_bytes"] < after, "rbf_bytes did not shrink after a DEL")


def recycles_count(c):
    before = rbf_section(c)["rbf_recycles"]
    c.execute_command("RBF.RESERVE", "rec", "BITS", 10000, "HASHES", 2, "SIGMA", 1000)
    c.execute_command("RBF.RECYCLE", "rec")
    c.execute_command("RBF.RECYCLE", "rec")
    got = rbf_section(c)["rbf_recycles"]
    check(got >= before + 2, "rbf_recycles %d after two RBF.RECYCLE, was %d" % (got, before))


def dumps_open_counts_dumps(c):
    before = rbf_section(c)["rbf_dumps_open"]
    check(before == 0, "rbf_dumps_open %d with no dump" % before)
    c.execute_command("RBF.RESERVE", "dmp", "BITS", 1 << 16, "HASHES", 2, "SIGMA", 1000)
    cur, _ = c.execute_command("RBF.SCANDUMP", "dmp", 0)
    check(cur != 0, "a one-chunk dump (CHUNK-BYTES too large for this test)")
    check(rbf_section(c)["rbf_dumps_open"] == 1, "rbf_dumps_open %d during a dump"
          % rbf_section(c)["rbf_dumps_open"])
    while cur != 0:
        cur, _ = c.execute_command("RBF.SCANDUMP", "dmp", cur)
    check(rbf_section(c)["rbf_dumps_open"] == 0, "rbf_dumps_open %d after the dump ended"
          % rbf_section(c)["rbf_dumps_open"])


def plans_waiting_idle_is_zero(c):
    check(rbf_section(c)["rbf_plans_waiting"] == 0, "rbf_plans_waiting %d with no plan"
          % rbf_section(c)["rbf_plans_waiting"])


def modules_ver_is_library_version(c):
    want = library_version_number()
    mods = c.info("modules")
    # redis-py parses the "module:name=rbf,ver=...,..." lines into a list
    # of dicts under "modules" (older versions: one dict per line)
    entries = []
    for k, v in mods.items():
        if k.startswith("module"):
            entries += v if isinstance(v, list) else [v]
    rbf = [e for e in entries if isinstance(e, dict) and e.get("name") == "rbf"]
    check(rbf, "INFO modules has no module named rbf: %r" % mods)
    check(int(rbf[0].get("ver", -1)) == want,
          "INFO modules ver=%r, the library's version number is %d" % (rbf[0].get("ver"), want))


def main():
    ck = Checks()
    with Harness() as h:
        s = h.server(module_args=["CHUNK-BYTES", "1024"])
        c = s.client()
        for fn in (info_rbf_has_every_field, filters_counts_rbf_keys, bytes_grow_with_reservation,
                   recycles_count, dumps_open_counts_dumps, plans_waiting_idle_is_zero,
                   modules_ver_is_library_version):
            ck.run(fn, c)
        check(s.alive(), "server up")
        ck.done()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
