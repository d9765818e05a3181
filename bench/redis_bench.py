#!/usr/bin/python3
"""rbf-redis throughput benchmark (make bench; docs/redis.md, "Benchmark").

One client, pipelines of 1000 commands, 16-byte random items, on one
redis-server started here (127.0.0.1, a free port, no persistence):

  SET / GET          16-byte keys and values: the server's own per-command cost
  RBF.ADD / EXISTS   a filter of 8 Mi bits, k = 7 (sigma = 4 Mi)
  Lua ADD / EXISTS   what users do without a module: a Bloom filter of 8 Mi
                     bits in a string, k = 7 positions from redis.sha1hex of
                     the item (double hashing), k GETBIT/SETBIT in an EVALSHA

The client writes each pipeline's pre-encoded bytes and counts the replies
and reads exactly the bytes of the replies (all writes of a round run
before its reads, so that half of the probes are present and every reply
has a known length), so the client's own cost is small and the same for
every row.  The rows are interleaved pipeline by pipeline, in a random
order each time, so that a loaded machine slows every row alike.  The
table gives the median and range of commands per second over the rounds,
and ratios of medians; also the server's own usec_per_call (INFO
commandstats).

  bench/redis_bench.py [--module build/rbf-redis.so] [--ops N] [--rounds R] [--json]
"""
import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PIPE = 1000
BITS = 8 << 20
HASHES = 7

LUA_ADD = """
local h = redis.sha1hex(ARGV[1])
local m = tonumber(ARGV[2])
local h1 = tonumber(string.sub(h, 1, 8), 16)
local h2 = tonumber(string.sub(h, 9, 16), 16)
local new = 0
for i = 0, tonumber(ARGV[3]) - 1 do
  local pos = (h1 + i * h2) % m
  if redis.call('GETBIT', KEYS[1], pos) == 0 then
    new = 1
    redis.call('SETBIT', KEYS[1], pos, 1)
  end
end
return new
"""

LUA_EXISTS = """
local h = redis.sha1hex(ARGV[1])
local m = tonumber(ARGV[2])
local h1 = tonumber(string.sub(h, 1, 8), 16)
local h2 = tonumber(string.sub(h, 9, 16), 16)
for i = 0, tonumber(ARGV[3]) - 1 do
  if redis.call('GETBIT', KEYS[1], (h1 + i * h2) % m) == 0 then return 0 end
end
return 1
"""


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a).encode()
        elif isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def run(self, payload, nbytes):
        """Send a pipeline, read exactly `nbytes` of replies."""
        self.s.sendall(payload)
        got, buf = 0, []
        while got < nbytes:
            b = self.s.recv(1 << 20)
            if not b:
                raise RuntimeError("connection closed")
            buf.append(b)
            got += len(b)
        data = b"".join(buf)
        if got != nbytes or data[:1] == b"-":
            raise RuntimeError("unexpected replies: %r" % data[:200])
        return data

    def call(self, *args):
        """One command; returns the raw reply (a bulk reply read whole)."""
        self.s.sendall(resp(*args))
        data = b""
        while b"\r\n" not in data:
            data += self.s.recv(1 << 20)
        if data[:1] == b"$" and not data.startswith(b"$-1"):
            need = int(data[1:data.index(b"\r\n")]) + data.index(b"\r\n") + 4
            while len(data) < need:
                data += self.s.recv(1 << 20)
        return data


ALPHA = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def items(rng, n):
    return [bytes(rng.choice(ALPHA) for _ in range(16)) for _ in range(n)]


def start_server(module, tmp):
    exe = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.path.exists(exe):
        return None, None
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp,
                          "--save", "", "--appendonly", "no", "--logfile", "redis.log",
                          "--loadmodule", module], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    t0 = time.time()
    while time.time() - t0 < 30:
        try:
            c = Conn(port)
            if c.call("PING") == b"+PONG\r\n":
                return p, c
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("redis-server did not start")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", default="build/rbf-redis.so")
    ap.add_argument("--ops", type=int, default=100_000, help="commands per row and round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not shutil.which("redis-server") and not os.path.exists("/usr/bin/redis-server"):
        print("SKIPPED: redis-server not found (Debian: redis-server; scripts/deps.sh)")
        return 0
    tmp = tempfile.mkdtemp(prefix="rbf-redis-bench-")
    proc, c = start_server(os.path.abspath(a.module), tmp)
    try:
        rng = random.Random(1)
        n = a.ops - a.ops % PIPE
        sha_add = c.call("SCRIPT", "LOAD", LUA_ADD).split(b"\r\n")[1].decode()
        sha_ex = c.call("SCRIPT", "LOAD", LUA_EXISTS).split(b"\r\n")[1].decode()
        # payloads, built before timing; every round uses fresh items (the
        # filters grow as they would in use; sigma = M/2 is not reached)
        rows = ["SET", "GET", "RBF.ADD", "RBF.EXISTS", "Lua ADD", "Lua EXISTS"]
        times = {r: [] for r in rows}
        for rd in range(a.rounds):
            c.call("FLUSHALL")
            c.call("RBF.RESERVE", "rbf", "BITS", BITS, "HASHES", HASHES, "SIGMA", BITS // 2)
            c.call("SETBIT", "lbf", BITS - 1, 0)
            keys = items(rng, n)
            vals = items(rng, n)
            probes = keys[: n // 2] + items(rng, n - n // 2)   # half present, half absent
            # writes first, then reads (each group in a random order), so
            # that half of the probes are present: every reply then has a
            # known length and the client reads exactly that many bytes
            writes, reads = ["SET", "RBF.ADD", "Lua ADD"], ["GET", "RBF.EXISTS", "Lua EXISTS"]
            rng.shuffle(writes)
            rng.shuffle(reads)
            pipes = {}
            for row in writes + reads:
                pipes[row] = []
                for i in range(0, n, PIPE):
                    if row == "SET":
                        cmds = [resp("SET", k, v) for k, v in zip(keys[i:i + PIPE], vals[i:i + PIPE])]
                        nbytes = 5 * PIPE                      # +OK
                    elif row == "GET":
                        cmds = [resp("GET", k) for k in probes[i:i + PIPE]]
                        hits = sum(1 for t in range(i, min(i + PIPE, n)) if t < n // 2)
                        nbytes = 23 * hits + 5 * (PIPE - hits)  # $16 value / $-1
                    elif row == "RBF.ADD":
                        cmds = [resp("RBF.ADD", "rbf", k) for k in keys[i:i + PIPE]]
                        nbytes = 4 * PIPE                      # :0 / :1
                    elif row == "RBF.EXISTS":
                        cmds = [resp("RBF.EXISTS", "rbf", k) for k in probes[i:i + PIPE]]
                        nbytes = 4 * PIPE
                    elif row == "Lua ADD":
                        cmds = [resp("EVALSHA", sha_add, 1, "lbf", k, BITS, HASHES) for k in keys[i:i + PIPE]]
                        nbytes = 4 * PIPE
                    else:
                        cmds = [resp("EVALSHA", sha_ex, 1, "lbf", k, BITS, HASHES) for k in probes[i:i + PIPE]]
                        nbytes = 4 * PIPE
                    pipes[row].append((b"".join(cmds), nbytes))
            # pipeline by pipeline, the rows of a group in a random order each
            # time, so that the machine's load falls on every row alike
            spent = {r: 0.0 for r in rows}
            for group in (writes, reads):
                for i in range(n // PIPE):
                    rng.shuffle(group)
                    for row in group:
                        p, nbytes = pipes[row][i]
                        t0 = time.perf_counter()
                        c.run(p, nbytes)
                        spent[row] += time.perf_counter() - t0
            for row in rows:
                times[row].append(n / spent[row])
        stats = {}
        info = c.call("INFO", "commandstats")
        for line in info.decode(errors="replace").split("\r\n"):
            if line.startswith("cmdstat_"):
                name, rest = line[8:].split(":", 1)
                f = dict(kv.split("=") for kv in rest.split(","))
                stats[name] = float(f["usec_per_call"])
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    med = {r: statistics.median(v) for r, v in times.items()}
    res = {"ops": n, "rounds": a.rounds, "pipeline": PIPE, "bits": BITS, "hashes": HASHES,
           "ops_per_sec": {r: {"median": med[r], "min": min(v), "max": max(v)} for r, v in times.items()},
           "ratios": {},
           "usec_per_call": stats}
    pairs = (("RBF.ADD", "SET"), ("RBF.EXISTS", "GET"), ("RBF.ADD", "Lua ADD"),
             ("RBF.EXISTS", "Lua EXISTS"))
    for x, y in pairs:
        per_round = [p / q for p, q in zip(times[x], times[y])]
        res["ratios"][x + "/" + y] = {"median": statistics.median(per_round),
                                      "min": min(per_round), "max": max(per_round)}
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print("rbf-redis benchmark: one client, pipelines of %d, 16-byte random items, %d commands "
          "per row x %d rounds (interleaved by pipeline)" % (PIPE, n, a.rounds))
    print("filter: %d bits, k = %d; Lua filter: the same size in a string\n" % (BITS, HASHES))
    print("%-12s %14s %25s" % ("command", "ops/s median", "range over rounds"))
    for r in rows:
        v = times[r]
        print("%-12s %14.0f %12.0f - %-12.0f" % (r, med[r], min(v), max(v)))
    print()
    print("%-24s %8s %20s" % ("ratio (per round)", "median", "range over rounds"))
    for k, v in res["ratios"].items():
        print("%-24s %7.2fx %10.2fx - %.2fx" % (k, v["median"], v["min"], v["max"]))
    print("\nserver usec_per_call (INFO commandstats): " +
          ", ".join("%s %.2f" % (k, v) for k, v in sorted(stats.items())
                    if k in ("set", "get", "rbf.add", "rbf.exists", "evalsha")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
