"""Robustness: 12,000 random argument vectors over every command (RBF.* and
BF.*), built from the commands' keywords, numbers valid and not (zero,
negative, huge, 2^64, floats, junk), binary strings, and keys of the
module's type, of other types and missing.  Every reply must be a
well-formed reply of the command's shape or an error reply (never a
dropped connection), and the server must stay up and keep answering
PING; at the end every filter key still passes DEBUG DIGEST-VALUE and
RBF.INFO, and a DEBUG RELOAD round-trips the dataset."""
import random
import sys

import redis

from rrtest import Harness, check

N = 12_000
CMDS = ["RBF.RESERVE", "RBF.ADD", "RBF.MADD", "RBF.EXISTS", "RBF.MEXISTS", "RBF.INSERT",
        "RBF.RECYCLE", "RBF.INFO", "RBF.SCANDUMP", "RBF.LOADCHUNK", "BF.RESERVE", "BF.ADD",
        "BF.MADD", "BF.EXISTS", "BF.MEXISTS", "BF.INSERT", "BF.INFO", "BF.CARD", "BF.SCANDUMP",
        "BF.LOADCHUNK"]
WORDS = ["ERROR_RATE", "MEMORY", "CAPACITY", "BITS", "HASHES", "SIGMA", "MESSAGES", "PHASES",
         "HASHING", "RECYCLE", "SEED", "ITEMS", "NOCREATE", "ERROR", "EXPANSION", "NONSCALING",
         "colliding", "non-colliding", "retaining", "non-retaining", "bits", "fill", "model_fp",
         "memory", "CAPACITY", "SIZE", "FILTERS", "hashes", "error_rate", "Items", "LAYOUT",
         "flat", "blocked", "Layout", "layout"]
KEYS = ["f1", "f2", "f3", "f4", "f5", "str", "list", "missing", "restore"]


def number(rng):
    return rng.choice([
        "0", "1", "2", "3", "7", "100", "1000", "65536", "100000", "1000000", "-1", "-100",
        "0.01", "0.5", "1e-300", "1.0", "0.999999", "1e9", "nan", "inf", "-inf",
        "18446744073709551615", "18446744073709551616", "9223372036854775807",
        "9223372036854775808", "99999999999999999999999", "1099511627776", "4294967296",
        "12abc", "", " 5", "0x10", "+3", str(rng.randrange(1 << 20)), str(rng.random()),
        str(rng.getrandbits(64)), str(rng.getrandbits(48))])


def blob(rng):
    n = rng.choice([0, 1, 5, 16, 128, 200, 1000, 5000])
    return bytes(rng.getrandbits(8) for _ in range(n))


def arg(rng, images):
    x = rng.random()
    if x < 0.35:
        return rng.choice(WORDS) if rng.random() < 0.8 else rng.choice(WORDS).lower()
    if x < 0.7:
        return number(rng)
    if x < 0.8 and images:
        cur, data = rng.choice(images)
        return data if rng.random() < 0.7 else data[: rng.randrange(len(data) + 1)]
    if x < 0.9:
        return blob(rng)
    return "item%d" % rng.randrange(50)


def vector(rng, images):
    cmd = rng.choice(CMDS)
    key = rng.choice(KEYS) if rng.random() < 0.8 else "k%d" % rng.randrange(10000)
    n = rng.choice([0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 8, 10, 14])
    args = [arg(rng, images) for _ in range(n)]
    if rng.random() < 0.4 and cmd in ("RBF.RESERVE", "RBF.INSERT"):
        # plausible reservations: mostly valid numbers, some far too large
        # (refused at once by the maxmemory check, never planned)
        size = rng.choice(["1000", "4096", "65536", "100000", "1000000", "100000000",
                           "10000000000000", "18446744073709551615"])
        form = rng.choice([
            ["BITS", size, "HASHES", str(rng.randrange(1, 40)),
             rng.choice(["SIGMA", "MESSAGES"]), str(rng.choice([1, 5, 50, 500, 5000, 10**6]))],
            ["ERROR_RATE", rng.choice(["0.1", "0.01", "0.001", "1e-9", "0.5"]),
             rng.choice(["MEMORY", "CAPACITY"]),
             rng.choice(["100", "1000", "5000", "20000", "1000000000000", "10000000000000"])]])
        form += rng.choice([[], ["PHASES", "2"], ["SEED", number(rng)], ["HASHING", "non-colliding"],
                            ["RECYCLE", "retaining"]])
        if rng.random() < 0.3:
            form += ["LAYOUT", rng.choice(["blocked", "blocked", "flat", "BLOCKED", "square",
                                           number(rng)])]
        tail = args[:1] if rng.random() < 0.2 else []
        args = form + (["ITEMS"] + args[:3] if cmd == "RBF.INSERT" else tail)
    elif rng.random() < 0.3 and cmd.endswith("RESERVE"):
        # well-formed head, random tail
        args = rng.choice([["BITS", number(rng), "HASHES", number(rng), "SIGMA", number(rng)],
                           ["ERROR_RATE", number(rng), "MEMORY", number(rng)],
                           ["ERROR_RATE", number(rng), "CAPACITY", number(rng)],
                           [number(rng), number(rng)]]) + args[:3]
    if rng.random() < 0.2 and cmd.endswith("LOADCHUNK") and images:
        cur, data = rng.choice(images)
        args = [str(cur if rng.random() < 0.7 else rng.getrandbits(rng.choice([8, 40, 63]))), data]
    if rng.random() < 0.05:
        return [cmd] + args  # no key at all
    return [cmd, key] + args


def well_formed(cmd, r):
    """A reply's shape: integers, OK, arrays of integers/bulks/nil, bulks."""
    if isinstance(r, (int, bytes)) or r is None or r is True:
        return True
    if isinstance(r, list):
        return all(well_formed(cmd, x) for x in r)
    return False


ERROR = object()


def send(c, s, v, seen_errors):
    """One vector: a well-formed reply, or ERROR after a clean error reply."""
    try:
        r = c.execute_command(*v)
    except redis.ResponseError as e:
        msg = str(e)
        check(msg and "\n" not in msg and "\r" not in msg, "bad error text %r" % msg)
        seen_errors.add(msg.split(":")[0][:70] if "maxmemory" not in msg else "maxmemory")
        return ERROR
    except (redis.ConnectionError, redis.TimeoutError) as e:
        raise AssertionError("connection lost after %r: %s\n%s" % (v[:5], e, s.log()[-2000:]))
    check(well_formed(v[0], r), "malformed reply %r to %r" % (r, v[:4]))
    return r


def main():
    rng = random.Random(424242)
    with Harness() as h:
        s = h.server(module_args=["BF-COMPAT", "yes", "CHUNK-BYTES", "1024"],
                     args=["--maxmemory", "200mb", "--maxmemory-policy", "noeviction"])
        c = s.client()
        c.response_callbacks = {}  # raw replies
        errors = created = restores = blocked = 0
        seen_errors = set()
        images = []
        for i in range(N):
            if i % 1000 == 0:
                c.execute_command("FLUSHALL")
                c.execute_command("SET", "str", "v")
                c.execute_command("RPUSH", "list", "a")
                c.execute_command("RBF.RESERVE", "f1", "BITS", 2000, "HASHES", 3, "SIGMA", 500)
                c.execute_command("RBF.RESERVE", "f2", "BITS", 5000, "HASHES", 2, "MESSAGES", 300,
                                  "PHASES", 2)
                c.execute_command("BF.ADD", "f3", "x")
                c.execute_command("RBF.RESERVE", "f4", "BITS", 40000, "HASHES", 3, "SIGMA", 9000)
                c.execute_command("RBF.MADD", "f4", *["i%d" % j for j in range(i // 100, i // 100 + 500)])
                c.execute_command("RBF.RESERVE", "f5", "BITS", 20480, "HASHES", 4, "SIGMA", 5000,
                                  "PHASES", 2, "LAYOUT", "blocked")
                c.execute_command("RBF.MADD", "f5", *["i%d" % j for j in range(i // 100, i // 100 + 300)])
                seqs = []
                for src in ("f1", "f4", "f5"):
                    cur, seq = 0, []
                    while True:
                        cur, data = c.execute_command("RBF.SCANDUMP", src, cur)
                        if cur == 0:
                            break
                        seq.append((cur, data))
                    seqs.append(seq)
                images = seqs[0] + seqs[1] + seqs[2]
            if rng.random() < 0.02:
                # a whole restore, in order, perhaps damaged, cut short or
                # with a chunk repeated
                seq = list(rng.choice(seqs))
                if rng.random() < 0.5:
                    j = rng.randrange(len(seq))
                    d = bytearray(seq[j][1])
                    d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
                    seq[j] = (seq[j][0], bytes(d))
                if rng.random() < 0.3:
                    seq = seq[: rng.randrange(1, len(seq) + 1)]
                if rng.random() < 0.2:
                    j = rng.randrange(len(seq))
                    seq.insert(j, seq[j])
                vs = [["RBF.LOADCHUNK", rng.choice(KEYS), cu, da] for cu, da in seq]
                vs = [[v[0], vs[0][1]] + v[2:] for v in vs]
                # a restore goes to an empty key: a header chunk onto a
                # live filter is refused
                vs.insert(0, ["DEL", vs[0][1]])
            else:
                vs = [vector(rng, images)]
            for v in vs:
                r = send(c, s, v, seen_errors)
                if r is ERROR:
                    errors += 1
                else:
                    created += v[0] in ("RBF.RESERVE", "BF.RESERVE") and r == b"OK"
                    blocked += (v[0] in ("RBF.RESERVE", "RBF.INSERT") and r is not ERROR and
                                any(isinstance(a, str) and a.lower() == "blocked" for a in v) and
                                len(v) > 1 and c.execute_command("EXISTS", v[1]) == 1 and
                                c.execute_command("TYPE", v[1]) == b"rbf-filtr" and
                                c.execute_command("RBF.INFO", v[1], "layout") == b"blocked")
                    restores += v[0] == "RBF.LOADCHUNK" and r == b"OK" and v is vs[-1] and len(vs) > 1
            if i % 500 == 0:
                check(c.execute_command("PING") in (b"PONG", True), "PING")
        check(s.alive(), "server died")
        for k in c.execute_command("KEYS", "*"):
            if c.execute_command("TYPE", k) == b"rbf-filtr":
                c.execute_command("DEBUG", "DIGEST-VALUE", k)
                try:
                    c.execute_command("RBF.INFO", k)
                except redis.ResponseError as e:
                    check("restore incomplete" in str(e), "INFO error %r" % e)
        d = c.execute_command("DEBUG", "DIGEST")
        check(c.execute_command("DEBUG", "RELOAD") == b"OK", "reload")
        check(c.execute_command("DEBUG", "DIGEST") == d, "reload changed the dataset")
        if "-v" in sys.argv:
            print("\n".join(sorted(seen_errors)))
        print("%d vectors, %d error replies of %d kinds, %d reservations made (%d blocked "
              "ones written to), %d whole restores accepted; server up, dataset reloads identical"
              % (N, errors, len(seen_errors), created, blocked, restores))
        check(blocked >= 3, "too few LAYOUT blocked reservations took effect (%d)" % blocked)
        check(any("LAYOUT" in e for e in seen_errors), "no LAYOUT error seen")
        check(restores >= 10, "too few restores completed (%d)" % restores)
        check(created >= 20, "too few reservations succeeded (%d)" % created)
        check(any("maxmemory" in e for e in seen_errors), "no reservation refused by maxmemory")
        check(N - errors > N // 10, "too few accepted vectors (%d)" % (N - errors))
    print("PASS")


if __name__ == "__main__":
    sys.exit(main())
