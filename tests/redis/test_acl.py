"""ACL key permissions follow each command's key access: a user with
read-only key permission (ACL SETUSER reader on nopass %R~* +@all) may run
every reading command (RBF.EXISTS, MEXISTS, INFO, SCANDUMP; BF.EXISTS,
MEXISTS, INFO, CARD, SCANDUMP) and gets NOPERM from every writing one
(RBF.ADD, MADD, INSERT, RESERVE, RECYCLE, LOADCHUNK; BF.ADD, MADD, INSERT,
RESERVE, LOADCHUNK).  COMMAND INFO's key specs say so: rbf.exists RO and
ACCESS, rbf.add RW and UPDATE or INSERT."""
import sys

import redis

from rrtest import Checks, Harness, Resp, check, scandump


def reads(chunk_cursor, chunk):
    return [
        ("RBF.EXISTS", "f", "a"), ("RBF.MEXISTS", "f", "a", "b"), ("RBF.INFO", "f"),
        ("RBF.SCANDUMP", "f", 0),
        ("BF.EXISTS", "bf", "a"), ("BF.MEXISTS", "bf", "a", "b"), ("BF.INFO", "bf"),
        ("BF.CARD", "bf"), ("BF.SCANDUMP", "bf", 0),
    ]


def writes(chunk_cursor, chunk):
    return [
        ("RBF.ADD", "f", "x"), ("RBF.MADD", "f", "x", "y"), ("RBF.INSERT", "f", "ITEMS", "x"),
        ("RBF.RESERVE", "new", "BITS", 1000, "HASHES", 2, "SIGMA", 100), ("RBF.RECYCLE", "f"),
        ("RBF.LOADCHUNK", "new", chunk_cursor, chunk),
        ("BF.ADD", "bf", "x"), ("BF.MADD", "bf", "x", "y"), ("BF.INSERT", "bf", "ITEMS", "x"),
        ("BF.RESERVE", "new", "0.01", "100"), ("BF.LOADCHUNK", "new", chunk_cursor, chunk),
    ]


def is_noperm(e):
    return isinstance(e, redis.exceptions.NoPermissionError) or "NOPERM" in str(e) or \
        "no permissions" in str(e)


def reader_may(rc, cmd):
    def fn():
        try:
            rc.execute_command(*cmd)
        except redis.ResponseError as e:
            raise AssertionError("reader (read-only keys) got %r for %s" % (str(e), cmd[0]))
    fn.__name__ = "reader_may_run_" + cmd[0].lower().replace(".", "_")
    return fn


def reader_may_not(rc, c, cmd):
    def fn():
        before = c.execute_command("DEBUG", "DIGEST")
        try:
            r = rc.execute_command(*cmd)
        except redis.ResponseError as e:
            check(is_noperm(e), "%s as reader: error %r, not NOPERM" % (cmd[0], str(e)))
            check(c.execute_command("DEBUG", "DIGEST") == before, "%s as reader changed the data" % cmd[0])
            return
        raise AssertionError("%s as reader (read-only keys) answered %r, not NOPERM" % (cmd[0], r))
    fn.__name__ = "reader_gets_noperm_for_" + cmd[0].lower().replace(".", "_")
    return fn


def key_spec_flags(port, name):
    """The flags of each key spec of COMMAND INFO name (RESP2, raw)."""
    r = Resp(port)
    try:
        t, v = r.call("COMMAND", "INFO", name)
    finally:
        r.close()
    check(t == "*" and v and v[0][0] == "*", "COMMAND INFO %s answered %r" % (name, (t, v)))
    doc = v[0][1]
    check(len(doc) >= 9, "COMMAND INFO %s: no key specs field" % name)
    specs = doc[8][1] or []
    out = []
    for spec in specs:
        kv = spec[1]
        d = {kv[i][1].decode().lower(): kv[i + 1] for i in range(0, len(kv), 2)}
        out.append({f[1].decode().upper() for f in (d.get("flags", ("*", []))[1] or [])})
    return out


def rbf_exists_key_spec_is_ro_access(port):
    specs = key_spec_flags(port, "rbf.exists")
    check(specs and all({"RO", "ACCESS"} <= f for f in specs),
          "rbf.exists key spec flags %r: want RO and ACCESS" % specs)
    check(not any("RW" in f for f in specs), "rbf.exists key spec flags %r include RW" % specs)


def rbf_add_key_spec_is_rw_update(port):
    specs = key_spec_flags(port, "rbf.add")
    check(specs and all("RW" in f and ({"UPDATE", "INSERT"} & f) for f in specs),
          "rbf.add key spec flags %r: want RW and UPDATE or INSERT" % specs)


def main():
    ck = Checks()
    with Harness() as h:
        s = h.server(module_args=["BF-COMPAT", "yes"])
        c = s.client()
        c.execute_command("RBF.RESERVE", "f", "BITS", 100000, "HASHES", 3, "SIGMA", 20000)
        c.execute_command("RBF.MADD", "f", "a", "b")
        c.execute_command("BF.RESERVE", "bf", "0.01", "1000")
        c.execute_command("BF.MADD", "bf", "a", "b")
        cur, chunk = scandump(c, "f")[0]
        check(c.execute_command("ACL", "SETUSER", "reader", "on", "nopass", "%R~*", "+@all") == b"OK",
              "ACL SETUSER")
        rc = s.client(username="reader", password="any")
        check(rc.execute_command("ACL", "WHOAMI") == b"reader", "connected as reader")
        for cmd in reads(cur, chunk):
            ck.run(reader_may(rc, cmd))
        for cmd in writes(cur, chunk):
            ck.run(reader_may_not(rc, c, cmd))
        ck.run(rbf_exists_key_spec_is_ro_access, s.port)
        ck.run(rbf_add_key_spec_is_rw_update, s.port)
        # the check can fail: the default user may write
        check(c.execute_command("RBF.ADD", "f", "by-default-user") == 1, "default user writes")
        ck.done()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
