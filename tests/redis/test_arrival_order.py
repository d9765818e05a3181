"""Commands on a key run in arrival order, even while a planned reservation
of that key is being sized on a worker thread.  Client A sends a
reservation that plans (BF.RESERVE big 0.0001 50000000); client B sends its
command only once A is seen blocked (CLIENT LIST flags contain 'b') or A's
answer has already arrived, so the order is fixed whatever the planning
time: B's command comes after A's in every case.

  - B's BF.ADD gets 1 and lands in A's planned filter (Capacity >= 50e6);
  - B's BF.INSERT / RBF.INSERT ... ITEMS a b c land in the planned filter;
  - DEL of the key being planned: A gets an error saying the plan was
    cancelled, and the key does not exist afterwards;
  - RENAME of a missing key onto the key being planned fails and leaves
    the plan alone; RENAME of an existing key onto it cancels the plan;
  - A disconnects while B's planned reservation of the key waits: B plans
    and creates the key (not the refusal meant for MULTI and scripts);
  - a command inside MULTI/EXEC on the key being planned gets an error
    (not a hang, not a different filter);
  - SAVE while the plan is pending, then a restart: no key (nothing
    half-made is saved)."""
import select
import sys
import time

import redis

from rrtest import Checks, Harness, Resp, check, scaled

EPS, CAP = "0.0001", "50000000"


def start_plan(server, *cmd):
    """Client A: a raw connection that sends cmd; returns (conn, client id)."""
    a = Resp(server.port, timeout=scaled(300))
    t, cid = a.call("CLIENT", "ID")
    check(t == ":", "CLIENT ID answered %r" % t)
    a.send(*cmd)
    return a, int(cid)


def blocked_or_answered(ctl, a, cid, timeout=60):
    """Wait until A is blocked (flags contain 'b') or its answer has arrived.
    Returns 'blocked' or 'answered'."""
    t0 = time.time()
    while time.time() - t0 < scaled(timeout):
        line = ctl.execute_command("CLIENT", "LIST", "ID", cid)
        line = line.decode() if isinstance(line, bytes) else line
        flags = dict(kv.split("=", 1) for kv in line.split() if "=" in kv).get("flags", "")
        if "b" in flags:
            return "blocked"
        if a.buf or select.select([a.sock], [], [], 0)[0]:
            return "answered"
        time.sleep(0.001)
    raise AssertionError("client A neither blocked nor answered within %.0f s" % scaled(timeout))


def capacity(c, key):
    info = c.execute_command("BF.INFO", key)
    d = {info[i].decode(): info[i + 1] for i in range(0, len(info), 2)}
    return d.get("Capacity")


def add_during_plan_runs_after_reserve(s, c):
    a, cid = start_plan(s, "BF.RESERVE", "big", EPS, CAP)
    state = blocked_or_answered(c, a, cid)
    b = c.execute_command("BF.ADD", "big", "x")
    ta, ra = a.read()
    a.close()
    check((ta, ra) == ("+", b"OK"), "A's BF.RESERVE answered %s%r (B's BF.ADD was sent when A "
          "was %s): B's BF.ADD ran first and created the key" % (ta, ra, state))
    check(b == 1, "B's BF.ADD answered %r, not 1 (new)" % b)
    cap = capacity(c, "big")
    check(cap is not None and cap >= int(CAP),
          "BF.INFO big Capacity %r: not A's planned filter (>= %s)" % (cap, CAP))
    check(c.execute_command("RBF.EXISTS", "big", "x") == 1, "RBF.EXISTS big x is not 1")
    c.delete("big")
    print("  (B sent while A was %s)" % state)


def bf_insert_during_plan_lands_in_planned_filter(s, c):
    a, cid = start_plan(s, "BF.RESERVE", "big-bi", EPS, CAP)
    state = blocked_or_answered(c, a, cid)
    b = c.execute_command("BF.INSERT", "big-bi", "ITEMS", "a", "b", "c")
    ta, ra = a.read()
    a.close()
    check((ta, ra) == ("+", b"OK"), "A's BF.RESERVE answered %s%r (A was %s when B sent BF.INSERT)"
          % (ta, ra, state))
    check(list(b) == [1, 1, 1], "B's BF.INSERT answered %r, not [1, 1, 1]" % (b,))
    cap = capacity(c, "big-bi")
    check(cap is not None and cap >= int(CAP), "Capacity %r: not the planned filter" % cap)
    got = c.execute_command("RBF.MEXISTS", "big-bi", "a", "b", "c")
    check(list(got) == [1, 1, 1], "RBF.MEXISTS big-bi a b c = %r" % (got,))
    c.delete("big-bi")


def rbf_insert_during_plan_lands_in_planned_filter(s, c):
    a, cid = start_plan(s, "RBF.RESERVE", "big-ri", "ERROR_RATE", EPS, "CAPACITY", CAP)
    state = blocked_or_answered(c, a, cid)
    try:
        b = c.execute_command("RBF.INSERT", "big-ri", "ITEMS", "a", "b", "c")
    except redis.ResponseError as e:
        b = e
    ta, ra = a.read()
    a.close()
    check((ta, ra) == ("+", b"OK"), "A's RBF.RESERVE answered %s%r (A was %s)" % (ta, ra, state))
    check(not isinstance(b, Exception) and list(b) == [1, 1, 1],
          "B's RBF.INSERT ... ITEMS a b c answered %r, not [1, 1, 1]" % (b,))
    mpc = c.execute_command("RBF.INFO", "big-ri", "model_messages_per_cycle")
    check(float(mpc) >= float(CAP), "model_messages_per_cycle %r: not the planned filter" % mpc)
    got = c.execute_command("RBF.MEXISTS", "big-ri", "a", "b", "c")
    check(list(got) == [1, 1, 1], "RBF.MEXISTS big-ri a b c = %r" % (got,))
    c.delete("big-ri")


def del_cancels_plan(s, c):
    a, cid = start_plan(s, "BF.RESERVE", "big-del", EPS, CAP)
    state = blocked_or_answered(c, a, cid)
    deleted = c.execute_command("DEL", "big-del")
    ta, ra = a.read()
    a.close()
    if ta == "+":
        # the plan finished before the DEL: then DEL must have found the key
        check(deleted == 1, "A's reservation answered OK but the DEL after it found no key "
              "(DEL answered %r; A was %s): the DEL neither cancelled the plan nor deleted "
              "the filter" % (deleted, state))
    else:
        check(ta == "-" and b"cancel" in ra.lower(),
              "A's reservation answered %s%r after DEL: not an error saying the plan was "
              "cancelled" % (ta, ra))
    check(c.exists("big-del") == 0, "big-del exists after its DEL (A answered %s%r)" % (ta, ra))


def failed_rename_onto_planned_key_keeps_plan(s, c):
    """RENAME of a missing key onto the key being planned fails ('no such
    key') and changes nothing: the plan goes on and A gets its filter."""
    a, cid = start_plan(s, "BF.RESERVE", "big-rn", EPS, CAP)
    state = blocked_or_answered(c, a, cid)
    try:
        c.execute_command("RENAME", "no-such-key", "big-rn")
        raise AssertionError("RENAME of a missing key answered OK")
    except redis.ResponseError as e:
        check("no such key" in str(e).lower(), "RENAME of a missing key: %s" % e)
    ta, ra = a.read()
    a.close()
    check((ta, ra) == ("+", b"OK"), "A's BF.RESERVE answered %s%r after a RENAME that failed "
          "(A was %s)" % (ta, ra, state))
    cap = capacity(c, "big-rn")
    check(cap is not None and cap >= int(CAP), "big-rn Capacity %r: not A's planned filter" % cap)


def rename_onto_planned_key_cancels_plan(s, c):
    """RENAME of an existing key onto the key being planned overwrites it:
    the plan is cancelled and the key holds the renamed value."""
    c.set("rn-src", "v")
    a, cid = start_plan(s, "BF.RESERVE", "big-rn2", EPS, CAP)
    state = blocked_or_answered(c, a, cid)
    check(c.execute_command("RENAME", "rn-src", "big-rn2") in (b"OK", True), "RENAME failed")
    ta, ra = a.read()
    a.close()
    if ta == "-":
        check(b"cancel" in ra.lower() and b"renam" in ra.lower(),
              "A's reservation answered %s%r after the RENAME onto its key" % (ta, ra))
    else:
        check(state == "answered" or ta == "+", "A answered %s%r" % (ta, ra))
    check(c.get("big-rn2") == b"v", "big-rn2 does not hold the renamed value (A answered %s%r, "
          "A was %s)" % (ta, ra, state))


def waiting_reserve_plans_after_reserver_leaves(s, c):
    """A reserves (a plan), B's planned reservation of the same key waits,
    then A disconnects: B runs as if A had never come, so it plans and
    creates the key (or, if A's plan ended first, finds A's filter); it
    never gets the MULTI/script refusal, and the key always exists."""
    a, cid = start_plan(s, "BF.RESERVE", "big-gone", EPS, CAP)
    state = blocked_or_answered(c, a, cid)
    b, bid = start_plan(s, "RBF.RESERVE", "big-gone", "ERROR_RATE", "0.01", "MEMORY", "1048576")
    bstate = blocked_or_answered(c, b, bid)
    a.close()
    tb, rb = b.read()
    b.close()
    check(b"multi" not in rb.lower() and b"script" not in rb.lower(),
          "B's reservation, which waited for A's plan (A %s, B %s), answered %s%r after A "
          "disconnected" % (state, bstate, tb, rb))
    if tb == "+":
        bits = c.execute_command("RBF.INFO", "big-gone", "BITS")
        check(bits == 8 * 1048576, "B's reservation answered OK but big-gone has %r bits, not "
              "B's 8388608" % (bits,))
    else:
        check(b"exist" in rb.lower(), "B's reservation answered %s%r" % (tb, rb))
        cap = capacity(c, "big-gone")
        check(cap is not None and cap >= int(CAP), "B was refused but big-gone is not A's "
              "filter (Capacity %r)" % cap)
    print("  (A was %s, B %s; B answered %s%r)" % (state, bstate, tb, rb[:40]))


def multi_on_planned_key_errors(s, c):
    a, cid = start_plan(s, "BF.RESERVE", "big-tx", EPS, CAP)
    state = blocked_or_answered(c, a, cid)
    tx = c.pipeline(transaction=True)
    tx.execute_command("BF.ADD", "big-tx", "x")
    try:
        res = tx.execute(raise_on_error=False)
    except redis.TimeoutError:
        raise AssertionError("MULTI/EXEC on a key being planned hung")
    except redis.ResponseError as e:  # EXEC itself refused (EXECABORT)
        res = [e]
    ta, ra = a.read()
    a.close()
    if state == "blocked":
        check(isinstance(res[0], Exception),
              "BF.ADD inside MULTI on a key being planned answered %r, not an error (and A's "
              "BF.RESERVE then answered %s%r)" % (res[0], ta, ra))
    check((ta, ra) == ("+", b"OK"), "A's BF.RESERVE answered %s%r" % (ta, ra))
    cap = capacity(c, "big-tx")
    check(cap is not None and cap >= int(CAP), "Capacity %r: the transaction made another filter"
          % cap)
    c.delete("big-tx")


def save_during_plan_saves_no_key(s, c):
    a, cid = start_plan(s, "BF.RESERVE", "big-save", EPS, CAP)
    state = blocked_or_answered(c, a, cid)
    saved = c.execute_command("SAVE")
    check(saved in (b"OK", True), "SAVE answered %r" % (saved,))
    still = blocked_or_answered(c, a, cid) if state == "blocked" else "answered"
    s.kill9()
    a.close()
    s.start()
    c2 = s.client()
    if still == "blocked":
        check(c2.exists("big-save") == 0,
              "a SAVE while the plan was pending saved big-save (restart found it)")
    else:
        # the plan finished before the SAVE: a whole filter or none
        if c2.exists("big-save"):
            cap = capacity(c2, "big-save")
            check(cap is not None and cap >= int(CAP), "restored big-save is half-made: Capacity %r" % cap)
    print("  (A was %s at SAVE)" % still)
    return c2


def main():
    ck = Checks()
    with Harness() as h:
        s = h.server(module_args=["BF-COMPAT", "yes"], args=["--dbfilename", "dump.rdb"])
        c = s.client()
        for fn in (add_during_plan_runs_after_reserve, bf_insert_during_plan_lands_in_planned_filter,
                   rbf_insert_during_plan_lands_in_planned_filter, del_cancels_plan,
                   failed_rename_onto_planned_key_keeps_plan, rename_onto_planned_key_cancels_plan,
                   waiting_reserve_plans_after_reserver_leaves, multi_on_planned_key_errors):
            ck.run(fn, s, c)
            if not s.alive():
                raise AssertionError("the server died in %s" % fn.__name__)
            c = s.client()
            c.delete("big", "big-bi", "big-ri", "big-del", "big-rn", "big-rn2", "big-gone",
                     "big-tx")
        ck.run(save_during_plan_saves_no_key, s, c)
        check(s.alive() and s.client().ping(), "server up at the end")
        ck.done()
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
