#!/usr/bin/python3
"""rbf dedup --redis against Debian's redis-server with the rbf module
(build/rbf-redis.so), started here on a free 127.0.0.1 port in a temporary
directory and stopped by PID.

Checks, each against values computed here:
  - one process: the output is exactly awk '!seen[$0]++' of the input (a
    large filter at --fp 1e-9 that never recycles: RBF.INFO cycles 0), and
    the server's reported_new equals the lines written;
  - four processes started at once on a key that does not exist (one filter
    results) on disjoint and overlapping shares of the input: every distinct
    line is written exactly once between them;
  - --field and --repeated through the server; --stats prints RBF.INFO;
  - a Unix socket URL, a password from RBF_REDIS_AUTH and from the URL, a
    wrong password, a database number;
  - a filter that exists with other settings: used, with a warning;
  - faults: a refused connection (exit 1), a key holding a string and a
    list (exit 1, named), no module loaded (exit 1), the server killed
    mid-stream (exit 1, the count of lines written on stderr, none of the
    unanswered lines written), and --on-error pass (the lines written
    unfiltered, said once, filtering again after the server is back).

No timing is asserted: waits are for events (an output line, a message),
with generous limits that only guard against a hang.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

RBF = os.environ.get("RBF", "build/rbf")
MODULE = os.environ.get("RBF_REDIS_MODULE", "build/rbf-redis.so")

fails = 0
checks = 0


def check(cond, what):
    global fails, checks
    checks += 1
    if not cond:
        fails += 1
        print("FAIL: " + what)


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, workdir, name, args=(), module=True, port=None):
        self.exe = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.args = list(args)
        self.module = module
        self.port = port
        self.proc = None

    def start(self):
        for attempt in range(5):
            if self.port is None or attempt > 0:
                self.port = free_port()
            cmd = [self.exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                   "--save", "", "--appendonly", "no", "--logfile", "redis.log",
                   "--daemonize", "no"] + (["--loadmodule", os.path.abspath(MODULE)] if self.module else []) + self.args
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t0 = time.time()
            while time.time() - t0 < 60:
                if self.proc.poll() is not None:
                    break
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                        s.sendall(b"PING\r\n")
                        data = s.recv(100)
                        if data.startswith(b"+PONG") or data.startswith(b"-NOAUTH"):
                            return self
                except OSError:
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError("redis-server did not start")

    def cmd(self, *args, password=None):
        """One command over a raw socket (RESP), reply as bytes."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            def enc(a):
                a = a if isinstance(a, bytes) else str(a).encode()
                return b"$%d\r\n%s\r\n" % (len(a), a)
            out = b""
            if password:
                out += b"*2\r\n" + enc("AUTH") + enc(password)
            out += b"*%d\r\n" % len(args) + b"".join(enc(a) for a in args)
            s.sendall(out)
            data = b""
            s.settimeout(30)
            want = 2 if password else 1
            while data.count(b"\r\n") < want or data.endswith(b"\r\n") is False:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                if want == 1 and not data.startswith(b"*"):
                    break
                if data.startswith(b"*") or b"\r\n*" in data:
                    time.sleep(0.05)
                    s.setblocking(False)
                    try:
                        while True:
                            more = s.recv(65536)
                            if not more:
                                break
                            data += more
                    except BlockingIOError:
                        pass
                    break
            return data

    def info(self, key, field, password=None):
        r = self.cmd("RBF.INFO", key, field, password=password)
        lines = r.split(b"\r\n")
        if password:
            lines = lines[1:]
        if lines[0].startswith(b":"):
            return int(lines[0][1:])
        if lines[0].startswith(b"$"):
            return lines[1].decode()
        return lines[0].decode()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def kill(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def run(args, data=b"", env=None):
    e = dict(os.environ)
    e.pop("RBF_REDIS_AUTH", None)
    if env:
        e.update(env)
    p = subprocess.run([RBF, "dedup"] + args, input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=e, timeout=600)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def awk_first(lines):
    seen, out = set(), []
    for l in lines:
        if l not in seen:
            seen.add(l)
            out.append(l)
    return out


def main():
    if not (shutil.which("redis-server") or os.path.exists("/usr/bin/redis-server")):
        print("SKIPPED: redis-server not found (Debian: redis-server; scripts/deps.sh)")
        return 77
    if not os.path.exists(MODULE):
        print("FAILED: module %s not built" % MODULE)
        return 1
    work = tempfile.mkdtemp(prefix="rbf-dedup-redis-")
    servers = []
    try:
        return tests(work, servers)
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


def tests(work, servers):
    rnd = random.Random(20261128)
    S = Server(work, "main").start()
    servers.append(S)
    url = "redis://127.0.0.1:%d" % S.port
    big = ["--memory", "8MiB", "--fp", "1e-9", "--layout", "flat"]

    # one process, exactly awk's lines
    lines = [b"id-%d" % rnd.randrange(40000) for _ in range(200000)]
    data = b"\n".join(lines) + b"\n"
    rc, out, err = run(["--redis", url, "--key", "one", "--seed", "5"] + big, data)
    want = b"".join(l + b"\n" for l in awk_first(lines))
    check(rc == 0, "one process: exit %d: %s" % (rc, err))
    check(out == want, "one process: output differs from awk '!seen[$0]++' (%d vs %d lines)"
          % (out.count(b"\n"), want.count(b"\n")))
    check(S.info("one", "cycles") == 0, "one process: the filter recycled")
    check(S.info("one", "reported_new") == want.count(b"\n"),
          "one process: reported_new %r, lines written %d" % (S.info("one", "reported_new"), want.count(b"\n")))
    check(S.info("one", "bits") == 8 * 8 * 1024 * 1024, "one process: bits %r" % S.info("one", "bits"))
    # again: everything is seen now
    rc, out, err = run(["--redis", url, "--key", "one"] + big, data)
    check(rc == 0 and out == b"", "second run on the same filter: exit %d, %d bytes out" % (rc, len(out)))
    check("warning" not in err, "second run with the same flags warned: " + err)
    # --repeated: every line the server calls seen, as awk 'seen[$0]++'
    rc, out, err = run(["--redis", url, "--key", "rep"] + big, data)
    seen, rep = set(), []
    for l in lines:
        if l in seen:
            rep.append(l + b"\n")
        seen.add(l)
    rc, out2, err = run(["--redis", url, "--key", "rep2", "--repeated"] + big, data)
    check(rc == 0 and out2 == b"".join(rep), "--repeated: differs from awk 'seen[$0]++'")
    # --field through the server
    rows = [b"%d,%s,x" % (i, rnd.choice([b"a", b"b", b"c", b""])) for i in range(1000)] + [b"lonely"]
    rc, out, err = run(["--redis", url, "--key", "f2", "--field", "2", "--delimiter", ","] + big,
                       b"\n".join(rows) + b"\n")
    seen, want = set(), []
    for r in rows:
        f = r.split(b",")
        k = f[1] if len(f) > 1 else b""
        if k not in seen:
            seen.add(k)
            want.append(r + b"\n")
    check(rc == 0 and out == b"".join(want), "--field 2 --delimiter , through the server: %r" % out[:200])
    # --missing keep: lines without the field are written and never sent
    rc, out, err = run(["--redis", url, "--key", "f2keep", "--field", "3", "--delimiter", ",",
                        "--missing", "keep"] + big, b"a,b,c\nlonely\nx,y,c\nlonely\nq,r,s\n")
    check(rc == 0 and out == b"a,b,c\nlonely\nlonely\nq,r,s\n", "--missing keep through the server: %r" % out)
    check(S.info("f2keep", "inserts") == 3, "--missing keep: %r keys sent, wanted 3" % S.info("f2keep", "inserts"))
    # --stats prints the server's RBF.INFO
    rc, out, err = run(["--redis", url, "--key", "one", "--stats"] + big, b"zzz\n")
    check(rc == 0 and out == b"zzz\n", "--stats run: exit %d" % rc)
    check("server bits: 67108864" in err and "server reported_new:" in err and "lines read: 1" in err,
          "--stats lacks RBF.INFO: " + err)

    # four processes at once on a new key: disjoint and overlapping shares
    ids = list(range(60000))
    shares = [ids[0:20000], ids[20000:40000], ids[10000:30000] + ids[40000:50000],
              ids[45000:60000] + ids[0:5000]]
    inputs = []
    for sh in shares:
        ls = [b"u%d" % i for i in sh] * 2
        rnd.shuffle(ls)
        inputs.append(b"\n".join(ls) + b"\n")
    procs = []
    for i, d in enumerate(inputs):
        fn = os.path.join(work, "share%d" % i)
        open(fn, "wb").write(d)
        procs.append(subprocess.Popen([RBF, "dedup", "--redis", url, "--key", "fleet", fn] + big,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outs = [p.communicate(timeout=600) for p in procs]
    allout = b"".join(o for o, e in outs).split(b"\n")[:-1]
    check(all(p.returncode == 0 for p in procs), "fleet: exit codes %r: %r" % ([p.returncode for p in procs], [e for o, e in outs]))
    check(sorted(allout) == sorted(b"u%d" % i for i in ids),
          "fleet: %d lines written between four processes, %d distinct, wanted each of %d once"
          % (len(allout), len(set(allout)), len(ids)))
    check(S.info("fleet", "cycles") == 0, "fleet: the filter recycled")
    check(S.info("fleet", "reported_new") == len(ids), "fleet: reported_new %r" % S.info("fleet", "reported_new"))

    # a filter that exists with other settings: used as it is, with a warning
    rc, out, err = run(["--redis", url, "--key", "one", "--memory", "4MiB", "--fp", "0.01",
                        "--layout", "blocked"], b"id-1\nnew-line\n")
    check(rc == 0 and out == b"new-line\n", "other flags: exit %d, out %r" % (rc, out))
    check("warning" in err and "67108864 bits" in err and "blocked" in err,
          "other flags: no warning naming the differences: " + err)

    # wrong types at the key
    S.cmd("SET", "astring", "hello")
    S.cmd("RPUSH", "alist", "a")
    for k in ("astring", "alist"):
        rc, out, err = run(["--redis", url, "--key", k] + big, b"a\n")
        check(rc == 1 and "another kind of value" in err and out == b"",
              "key holding a %s: exit %d, %r" % (k, rc, err))

    # a refused connection
    dead = free_port()
    rc, out, err = run(["--redis", "redis://127.0.0.1:%d" % dead, "--key", "k"] + big, b"a\n")
    check(rc == 1 and "cannot connect" in err and out == b"", "refused: exit %d, %r" % (rc, err))
    # a server without the module
    P = Server(work, "plain", module=False).start()
    servers.append(P)
    rc, out, err = run(["--redis", "redis://127.0.0.1:%d" % P.port, "--key", "k"] + big, b"a\n")
    check(rc == 1 and "no rbf module" in err, "no module: exit %d, %r" % (rc, err))

    # a Unix socket, a password (environment and URL), a database number
    sock = os.path.join(work, "r.sock")
    A = Server(work, "auth", args=["--unixsocket", sock, "--unixsocketperm", "700",
                                   "--requirepass", "s3cret"]).start()
    servers.append(A)
    rc, out, err = run(["--redis", "unix://" + sock, "--key", "u"] + big, b"a\na\nb\n",
                       env={"RBF_REDIS_AUTH": "s3cret"})
    check(rc == 0 and out == b"a\nb\n", "unix socket with RBF_REDIS_AUTH: exit %d, %r" % (rc, err))
    rc, out, err = run(["--redis", "redis://:s3cret@127.0.0.1:%d/3" % A.port, "--key", "u"] + big, b"a\nc\n")
    check(rc == 0 and out == b"a\nc\n", "password in the URL, db 3: exit %d %r %r" % (rc, out, err))
    check("s3cret" not in err, "the password appears in a message")
    rc, out, err = run(["--redis", "redis://127.0.0.1:%d" % A.port, "--key", "u"] + big, b"a\n",
                       env={"RBF_REDIS_AUTH": "wrong"})
    check(rc == 1 and "password" in err and "wrong" not in err, "wrong password: exit %d, %r" % (rc, err))
    rc, out, err = run(["--redis", "redis://127.0.0.1:%d" % A.port, "--key", "u"] + big, b"a\n")
    check(rc == 1 and out == b"", "no password: exit %d, %r" % (rc, err))

    # the server killed mid-stream
    K = Server(work, "kill").start()
    servers.append(K)
    kill_midstream(K, big, pass_mode=False)
    K2 = Server(work, "kill2").start()
    servers.append(K2)
    kill_midstream(K2, big, pass_mode=True)

    # killed while the stream flows (no idle moment): what was written is
    # awk's output for a prefix of the input, no line twice, and stderr
    # gives its count
    K3 = Server(work, "kill3").start()
    servers.append(K3)
    # the input never ends (chunks until the pipe breaks), so the process
    # cannot finish before the kill, however busy the machine
    fed = []
    p = subprocess.Popen([RBF, "dedup", "--redis", "redis://127.0.0.1:%d" % K3.port, "--key", "k"] + big,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = Reader(p.stdout), Reader(p.stderr)
    frnd = random.Random(7)
    def feed():
        try:
            while True:
                chunk = [b"f%d" % frnd.randrange(300000) for _ in range(50000)]
                fed.extend(chunk)
                p.stdin.write(b"\n".join(chunk) + b"\n")
                p.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass
    t = threading.Thread(target=feed, daemon=True)
    t.start()
    check(out.wait_for(lambda d: len(d) > 100000), "flowing: no output before the kill")
    K3.kill()
    rc = p.wait(300)
    t.join(60)
    out.join(60)
    err.join(60)
    got = out.data.split(b"\n")[:-1]
    first = awk_first(fed)
    e = err.data.decode(errors="replace")
    check(rc == 1, "flowing: exit %d after the kill" % rc)
    check(got == first[:len(got)], "flowing: the output is not awk's output for a prefix of the input")
    check("%d lines written" % len(got) in e, "flowing: stderr does not say %d lines written: %r" % (len(got), e))

    print("%d checks, %d failures" % (checks, fails))
    return 1 if fails else 0


class Reader(threading.Thread):
    """Collects a pipe's bytes; wait_for() blocks until a predicate holds."""

    def __init__(self, f):
        super().__init__(daemon=True)
        self.f, self.data, self.cv = f, b"", threading.Condition()
        self.start()

    def run(self):
        while True:
            b = os.read(self.f.fileno(), 65536)
            with self.cv:
                if not b:
                    self.eof = True
                    self.cv.notify_all()
                    return
                self.data += b
                self.cv.notify_all()

    def wait_for(self, pred, limit=120):
        with self.cv:
            return self.cv.wait_for(lambda: pred(self.data) or getattr(self, "eof", False), limit) and pred(self.data)


def kill_midstream(K, big, pass_mode):
    name = "pass" if pass_mode else "fail"
    url = "redis://127.0.0.1:%d" % K.port
    args = [RBF, "dedup", "--redis", url, "--key", "k"] + big
    if pass_mode:
        args += ["--on-error", "pass"]
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = Reader(p.stdout), Reader(p.stderr)
    part1 = b"".join(b"p%d\n" % i for i in range(3000)) * 2
    p.stdin.write(part1)
    p.stdin.flush()
    # the stream idles: the answered lines come out
    want1 = b"".join(b"p%d\n" % i for i in range(3000))
    check(out.wait_for(lambda d: len(d) >= len(want1)), "%s: part 1 never came out" % name)
    check(out.data == want1, "%s: part 1 output differs" % name)
    K.kill()
    part2 = b"".join(b"q%d\n" % i for i in range(5000)) * 2
    try:
        p.stdin.write(part2)
        p.stdin.flush()
    except BrokenPipeError:
        pass
    if not pass_mode:
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
        rc = p.wait(120)
        out.join(60)
        err.join(60)
        e = err.data.decode(errors="replace")
        check(rc == 1, "fail: exit %d after the server was killed" % rc)
        check("6000 lines read" not in e and "%d lines written" % 3000 in e,
              "fail: stderr does not say 3000 lines written: %r" % e)
        check(out.data == want1, "fail: lines the server never answered were written (%d bytes more)"
              % (len(out.data) - len(want1)))
        return
    # pass: part 2 comes out unfiltered, repeats included, said once
    check(out.wait_for(lambda d: len(d) >= len(want1) + len(part2)), "pass: part 2 never came out")
    check(out.data == want1 + part2, "pass: part 2 not written unfiltered")
    e = err.data.decode(errors="replace")
    check(e.count("unfiltered") == 1, "pass: stderr should say 'unfiltered' once: %r" % e)
    # the server comes back on the same port: lines are filtered again
    K.start()
    check(K.port is not None, "pass: restart")
    back = False
    for i in range(600):  # a probe line every 0.2 s until the client reconnects (at most 120 s)
        p.stdin.write(b"probe%d\n" % i)
        p.stdin.flush()
        if err.wait_for(lambda d: b"reconnected" in d, 0.2):
            back = True
            break
    check(back, "pass: no reconnection after the server came back: %r" % err.data)
    p.stdin.write(b"again\nagain\nagain\n")
    p.stdin.close()
    rc = p.wait(120)
    out.join(60)
    check(rc == 0, "pass: exit %d" % rc)
    check(out.data.endswith(b"again\n") and not out.data.endswith(b"again\nagain\n"),
          "pass: after reconnecting, repeats were not filtered: %r %r" % (out.data[-40:], err.data))


if __name__ == "__main__":
    sys.exit(main())
