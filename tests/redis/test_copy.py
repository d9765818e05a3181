"""COPY of a filter key: COPY f g gives an independent filter that answers
as f (equal DEBUG DIGEST-VALUE, same answers); writes to g leave f
unchanged; COPY f g DB 1 too.  For flat and blocked, one- and two-phase
filters."""
import sys

from rrtest import Checks, Harness, check, digest, wait_until

FILTERS = {
    "flat": ["BITS", 200000, "HASHES", 4, "SIGMA", 30000],
    "blocked2": ["BITS", 204800, "HASHES", 4, "SIGMA", 20000, "PHASES", 2, "LAYOUT", "blocked"],
}
ITEMS = ["item-%d" % i for i in range(5000)]


def copy_answers_as_source(c, name):
    f, g = name, name + "-copy"
    r = c.execute_command("COPY", f, g)
    check(r == 1, "COPY %s %s answered %r, not 1" % (f, g, r))
    check(digest(c, g) == digest(c, f), "COPY %s: the copy's digest differs" % f)
    probe = ITEMS[:100] + ["absent-%d" % i for i in range(200)]
    check(c.execute_command("RBF.MEXISTS", g, *probe) == c.execute_command("RBF.MEXISTS", f, *probe),
          "COPY %s: the copy answers differently" % f)
    check(c.execute_command("RBF.INFO", g) == c.execute_command("RBF.INFO", f),
          "COPY %s: RBF.INFO differs" % f)


def writing_copy_leaves_source(c, name):
    f, g = name, name + "-copy"
    before = digest(c, f)
    news = ["only-in-copy-%d" % i for i in range(300)]
    c.execute_command("RBF.MADD", g, *news)
    c.execute_command("RBF.RECYCLE", g)
    c.execute_command("RBF.MADD", g, *news)
    check(digest(c, f) == before, "writes to the copy of %s changed %s" % (f, f))
    check(digest(c, g) != before, "writes to the copy of %s changed nothing" % f)
    got = c.execute_command("RBF.MEXISTS", f, *ITEMS[-200:])
    check(all(x == 1 for x in got), "%s lost its items after writes to its copy" % f)
    g_before = digest(c, g)
    c.execute_command("RBF.MADD", f, "only-in-source")
    check(digest(c, f) != before, "a write to %s changed nothing" % f)
    check(digest(c, g) == g_before, "a write to %s changed its copy" % f)


def copy_to_other_db(s, c, name):
    f = name
    r = c.execute_command("COPY", f, f + "-db1", "DB", 1)
    check(r == 1, "COPY %s %s-db1 DB 1 answered %r" % (f, f, r))
    c1 = s.client(db=1)
    check(digest(c1, f + "-db1") == digest(c, f), "COPY ... DB 1: digest differs")
    c1.execute_command("RBF.ADD", f + "-db1", "db1-only")
    check(digest(c1, f + "-db1") != digest(c, f), "a write in db 1 changed nothing")


def main():
    ck = Checks()
    with Harness() as h:
        s = h.server()
        c = s.client()
        for name, args in FILTERS.items():
            c.execute_command("RBF.RESERVE", name, *args)
            for i in range(0, len(ITEMS), 1000):
                c.execute_command("RBF.MADD", name, *ITEMS[i:i + 1000])
            # the model values of an explicit filter come from a worker
            # thread: copy once they are in, so RBF.INFO compares whole
            wait_until(lambda: c.execute_command("RBF.INFO", name, "model_fp") != b"pending",
                       what="the model values of " + name)
            ck.run(copy_answers_as_source, c, name)
            if c.exists(name + "-copy"):
                ck.run(writing_copy_leaves_source, c, name)
            ck.run(copy_to_other_db, s, c, name)
        check(s.alive() and c.ping(), "server up")
        ck.done()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
