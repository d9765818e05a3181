"""Dumps (RBF.SCANDUMP / RBF.LOADCHUNK) and their limits:
  - LOADCHUNK of a header chunk onto a key holding a live filter is refused
    and the filter is unchanged;
  - several SCANDUMPs of one key may run at once: two clients interleave
    their cursors, with writes between the chunks, and each dump restores
    to the filter as of its own first SCANDUMP call;
  - load arguments DUMP-TIMEOUT seconds (default 60) and DUMP-MEMORY bytes
    (default 256 MiB): with DUMP-TIMEOUT 1 an idle dump is dropped
    (rbf_dumps_open falls; its next cursor answers an error saying
    "dropped"); with DUMP-MEMORY 1 MiB and two dumps of a large filter open,
    writes that force copy-on-write drop the oldest (its next cursor says
    "dropped");
  - a dump whose key is renamed or deleted goes with it, and its next
    cursor says so."""
import sys
import time

import redis

from rrtest import Checks, Harness, check, digest, expect_error, scaled


def reserve(c, key, bits=1 << 20, k=4):
    c.execute_command("RBF.RESERVE", key, "BITS", bits, "HASHES", k, "SIGMA", bits // 2)


def first_chunk(c, key):
    """(digest, cursor, data) of SCANDUMP key 0, the digest taken atomically
    with it."""
    tx = c.pipeline(transaction=True)
    tx.execute_command("DEBUG", "DIGEST-VALUE", key)
    tx.execute_command("RBF.SCANDUMP", key, 0)
    (d,), (cur, data) = tx.execute()
    return d, cur, data


def restore(c, key, chunks):
    c.delete(key)
    for cur, data in chunks:
        c.execute_command("RBF.LOADCHUNK", key, cur, data)
    return digest(c, key)


def loadchunk_header_onto_live_filter_refused(c):
    reserve(c, "live")
    c.execute_command("RBF.MADD", "live", *["l%d" % i for i in range(500)])
    reserve(c, "other")
    _, cur, header = first_chunk(c, "other")
    before = digest(c, "live")
    for cursor in (cur, 1):
        expect_error(c.execute_command, "RBF.LOADCHUNK", "live", cursor, header,
                     what="RBF.LOADCHUNK live %d <header chunk> onto a live filter" % cursor)
        check(digest(c, "live") == before, "RBF.LOADCHUNK live %d <header> changed the live filter"
              % cursor)
        check(c.execute_command("RBF.EXISTS", "live", "l7") == 1, "live filter lost its items")


def dump_dropped_with_its_key_says_why(c):
    """RENAME and DEL take a dump in progress with them; the next cursor
    says so (not the generic stale-cursor error)."""
    for how in ("RENAME", "DEL"):
        reserve(c, "gone1")
        c.execute_command("RBF.MADD", "gone1", *["g%d" % i for i in range(300)])
        cur, _ = c.execute_command("RBF.SCANDUMP", "gone1", 0)
        check(cur != 0, "the first SCANDUMP chunk was the whole dump (CHUNK-BYTES)")
        if how == "RENAME":
            c.execute_command("RENAME", "gone1", "gone2")
            key = "gone2"
        else:
            c.delete("gone1")
            reserve(c, "gone1")
            key = "gone1"
        expect_error(c.execute_command, "RBF.SCANDUMP", key, cur, contains="renamed",
                     what="the next cursor of a dump whose key went by %s" % how)
        c.delete("gone1", "gone2")


def two_dumps_interleave(s, c, writes_between_starts):
    key = "two%d" % writes_between_starts
    reserve(c, key)
    c.execute_command("RBF.MADD", key, *["p%d" % i for i in range(2000)])
    a, b = s.client(), s.client()
    da, ca, xa = first_chunk(a, key)
    if writes_between_starts:
        c.execute_command("RBF.MADD", key, *["between%d" % i for i in range(300)])
    db, cb, xb = first_chunk(b, key)
    chunks_a, chunks_b = [(ca, xa)], [(cb, xb)]
    n = 0
    while ca or cb:
        n += 1
        c.execute_command("RBF.MADD", key, *["w%d-%d" % (n, i) for i in range(50)])
        if ca:
            ca, xa = a.execute_command("RBF.SCANDUMP", key, ca)
            if ca:
                chunks_a.append((ca, xa))
        c.execute_command("RBF.ADD", key, "x%d" % n)
        if cb:
            cb, xb = b.execute_command("RBF.SCANDUMP", key, cb)
            if cb:
                chunks_b.append((cb, xb))
    check(n > 2, "the dump had too few chunks to interleave (CHUNK-BYTES)")
    check(restore(c, key + ".a", chunks_a) == da, "dump A does not restore to the filter as of A's "
          "first SCANDUMP (writes between chunks leaked in)")
    check(restore(c, key + ".b", chunks_b) == db, "dump B does not restore to the filter as of B's "
          "first SCANDUMP")
    if not writes_between_starts:
        check(da == db, "two dumps started with no write between them differ")


def two_dumps_interleave_no_writes_between_starts(s, c):
    two_dumps_interleave(s, c, 0)


def two_dumps_interleave_with_writes_between_starts(s, c):
    two_dumps_interleave(s, c, 1)


def start_or_fail(h, name, module_args):
    try:
        return h.server(name, module_args=module_args)
    except RuntimeError as e:
        h.servers[-1].kill9()
        why = [ln[:200] for ln in str(e).splitlines() if "rbf" in ln or "Module" in ln]
        raise AssertionError("the server did not start with load arguments %r: %s"
                             % (module_args, " | ".join(why[-3:])))


def load_arguments_with_defaults_accepted(h):
    s = start_or_fail(h, "defaults", ["DUMP-TIMEOUT", "60", "DUMP-MEMORY", str(256 << 20)])
    s.stop()


def idle_dump_dropped_after_timeout(h):
    s = start_or_fail(h, "timeout", ["DUMP-TIMEOUT", "1", "CHUNK-BYTES", "1024"])
    c = s.client()
    reserve(c, "idle")
    _, cur, _ = first_chunk(c, "idle")
    check(c.info("rbf").get("rbf_dumps_open") == 1, "rbf_dumps_open is not 1 during a dump: %r"
          % c.info("rbf").get("rbf_dumps_open"))
    t0 = time.time()
    while c.info("rbf").get("rbf_dumps_open") != 0:
        check(time.time() - t0 < scaled(30), "an idle dump with DUMP-TIMEOUT 1 still open after %.0f s"
              % scaled(30))
        time.sleep(0.1)
    expect_error(c.execute_command, "RBF.SCANDUMP", "idle", cur, contains="dropped",
                 what="the next cursor of a dump dropped by DUMP-TIMEOUT")
    s.stop()


def oldest_dump_dropped_over_dump_memory(h):
    s = start_or_fail(h, "memory", ["DUMP-MEMORY", str(1 << 20), "CHUNK-BYTES", "65536"])
    c = s.client()
    bits = 1 << 27  # 16 MiB: 4096 pages of 4 KiB
    reserve(c, "large", bits=bits, k=4)
    a, b = s.client(), s.client()
    _, ca, _ = first_chunk(a, "large")
    c.execute_command("RBF.ADD", "large", "between")
    db, cb, xb = first_chunk(b, "large")
    # each insert saves up to 4 pages per open dump: 50 items at most 800
    # KiB per dump, so both dumps together pass 1 MiB and one alone does not
    c.execute_command("RBF.MADD", "large", *["cow%d" % i for i in range(50)])
    expect_error(a.execute_command, "RBF.SCANDUMP", "large", ca, contains="dropped",
                 what="the next cursor of the oldest dump over DUMP-MEMORY")
    # the newer one goes on, and is the filter as of its start (or, if the
    # module dropped it too, says so)
    chunks = [(cb, xb)]
    try:
        while cb:
            cb, xb = b.execute_command("RBF.SCANDUMP", "large", cb)
            if cb:
                chunks.append((cb, xb))
    except redis.ResponseError as e:
        check("dropped" in str(e), "the newer dump failed with %r" % str(e))
        print("  (the newer dump was dropped too)")
        return
    check(restore(c, "large.b", chunks) == db, "the newer dump does not restore to its start")
    s.stop()


def main():
    ck = Checks()
    with Harness() as h:
        s = h.server(module_args=["CHUNK-BYTES", "4096"])
        c = s.client()
        ck.run(loadchunk_header_onto_live_filter_refused, c)
        ck.run(dump_dropped_with_its_key_says_why, c)
        ck.run(two_dumps_interleave_no_writes_between_starts, s, c)
        ck.run(two_dumps_interleave_with_writes_between_starts, s, c)
        check(s.alive() and c.ping(), "server up")
        s.stop()
        ck.run(load_arguments_with_defaults_accepted, h)
        ck.run(idle_dump_dropped_after_timeout, h)
        ck.run(oldest_dump_dropped_over_dump_memory, h)
        ck.done()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
