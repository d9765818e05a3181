"""Reply types under RESP3 (HELLO 3) and RESP2, read from a raw socket (not
redis-py's parser): under RESP3 BF.ADD / BF.EXISTS / RBF.ADD / RBF.EXISTS
answer a boolean (#); BF.MADD / BF.MEXISTS / BF.INSERT / RBF.MADD /
RBF.MEXISTS / RBF.INSERT an array (*) of booleans; BF.INFO and RBF.INFO key
a map (%); BF.CARD an integer (:).  Under RESP2 the replies are as before:
integers, arrays of integers, BF.INFO and RBF.INFO flat arrays."""
import sys

from rrtest import Checks, Harness, Resp, check


def shape(reply):
    """A short description of a raw reply's types, e.g. '*[#,#]'."""
    t, v = reply
    if t in "*~>":
        return t + "[" + ",".join(shape(x) for x in v) + "]"
    if t == "%":
        return "%{" + ",".join(shape(k) + ":" + shape(x) for k, x in v[:3]) + (",..}" if len(v) > 3 else "}")
    return t


def expect(conn, cmd, want_type, elem=None, values=None):
    def fn():
        r = conn.call(*cmd)
        t, v = r
        check(t == want_type, "%s answered %s, want type %r" % (" ".join(map(str, cmd)), shape(r), want_type))
        if elem is not None:
            bad = [shape(x) for x in v if x[0] != elem]
            check(not bad, "%s answered %s: elements should all be %r" % (cmd[0], shape(r), elem))
        if isinstance(values, bytes):
            check(v == values, "%s answered %r, want %r" % (" ".join(map(str, cmd)), v, values))
        elif values is not None:
            got = [x[1] for x in v] if t == "*" else v
            check(got == values, "%s answered %r, want %r" % (cmd[0], got, values))
        return r
    fn.__name__ = "%s_%s_is_%s" % (conn.proto, cmd[0].lower().replace(".", "_"),
                                    {"#": "boolean", "*": "array", "%": "map", ":": "integer"}[want_type]
                                    + ("_of_" + {"#": "booleans", ":": "integers"}[elem] if elem else ""))
    return fn


def run(ck, conn, resp3):
    t, f, T, F = ("#", "#", b"t", b"f") if resp3 else (":", ":", b"1", b"0")
    info_type = "%" if resp3 else "*"
    x = conn.call
    x("DEL", "bf", "rbf", "bfi", "rbfi")
    x("BF.RESERVE", "bf", "0.01", "1000")
    x("RBF.RESERVE", "rbf", "BITS", 100000, "HASHES", 3, "SIGMA", 20000)
    cases = [
        (("BF.ADD", "bf", "a"), t, None, T),
        (("BF.ADD", "bf", "a"), t, None, F),
        (("BF.EXISTS", "bf", "a"), t, None, T),
        (("BF.EXISTS", "bf", "zz-absent"), t, None, F),
        (("BF.MADD", "bf", "a", "b"), "*", f, [F, T]),
        (("BF.MEXISTS", "bf", "a", "zz-absent"), "*", f, [T, F]),
        (("BF.INSERT", "bfi", "ITEMS", "a", "a"), "*", f, [T, F]),
        (("BF.INFO", "bf"), info_type, None, None),
        (("BF.CARD", "bf"), ":", None, b"2"),
        (("RBF.ADD", "rbf", "a"), t, None, T),
        (("RBF.EXISTS", "rbf", "a"), t, None, T),
        (("RBF.EXISTS", "rbf", "zz-absent"), t, None, F),
        (("RBF.MADD", "rbf", "a", "b"), "*", f, [F, T]),
        (("RBF.MEXISTS", "rbf", "a", "zz-absent"), "*", f, [T, F]),
        (("RBF.INSERT", "rbf", "ITEMS", "c", "c"), "*", f, [T, F]),
        (("RBF.INFO", "rbf"), info_type, None, None),
    ]
    for cmd, want, elem, values in cases:
        ck.run(expect(conn, cmd, want, elem, values))
    # a map's keys under RESP3 / the flat array under RESP2: the field names
    r = x("BF.INFO", "bf")
    if resp3 and r[0] == "%":
        keys = [k[1] for k, _ in r[1]]
    else:
        keys = [e[1] for e in r[1][0::2]] if r[0] == "*" else []
    ck.run(bf_info_names(conn.proto, keys))


def bf_info_names(proto, keys):
    def fn():
        check(b"Capacity" in keys and b"Number of items inserted" in keys,
              "BF.INFO field names %r" % keys)
    fn.__name__ = proto + "_bf_info_has_field_names"
    return fn


def main():
    ck = Checks()
    with Harness() as h:
        s = h.server(module_args=["BF-COMPAT", "yes"])
        c3 = Resp(s.port)
        c3.proto = "resp3"
        t, hello = c3.call("HELLO", "3")
        check(t == "%", "HELLO 3 answered type %r, not a map" % t)
        run(ck, c3, True)
        c2 = Resp(s.port)
        c2.proto = "resp2"
        run(ck, c2, False)
        c3.close()
        c2.close()
        check(s.alive(), "server up")
        ck.done()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
