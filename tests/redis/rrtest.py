"""Shared helpers of the rbf-redis tests: start Debian's redis-server with the
module on a free 127.0.0.1 port in a temporary directory, stop it by PID.

A test that cannot find redis-server prints SKIPPED and exits 77 (CTest's
SKIP_RETURN_CODE); everything else is a real failure.

Environment (set by CTest, redis/CMakeLists.txt):
  RBF_REDIS_MODULE   the module to load
  RBF_REDIS_PRELOAD  libraries to LD_PRELOAD into redis-server only (the
                     ASan+UBSan runtime when the module is built with the
                     sanitizers); the server's stderr and log are then
                     checked for sanitizer reports when it stops
  RBF_REDIS_SLOW     a factor (e.g. 5) for every timeout of the tests, for
                     slow builds; no test asserts a duration
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

try:
    import redis
except ImportError:  # python3-redis is a dependency (scripts/deps.sh)
    print("FAILED: python3-redis (redis-py) is not importable by %s (Debian: python3-redis, for /usr/bin/python3)" % sys.executable, file=sys.stderr)
    sys.exit(1)

MODULE = os.environ.get("RBF_REDIS_MODULE", "build/rbf-redis.so")
REPLAY = os.environ.get("RBF_REPLAY", "build/redis/rbf_replay")
PRELOAD = os.environ.get("RBF_REDIS_PRELOAD", "")
try:
    SLOW = max(1.0, float(os.environ.get("RBF_REDIS_SLOW", "1") or "1"))
except ValueError:
    SLOW = 1.0

# What a sanitizer prints when it finds an error (ASan, UBSan).
SANITIZER_MARKS = ("AddressSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")


def scaled(seconds):
    """A timeout, scaled for slow (sanitizer) builds by RBF_REDIS_SLOW."""
    return seconds * SLOW


def server_env():
    """The environment of a redis-server: ours, plus the sanitizer runtime
    preloaded when the module is built with ASan+UBSan (Debian's
    redis-server is not, and the runtime must come first)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if PRELOAD:
        env["LD_PRELOAD"] = PRELOAD
        # redis-server itself is not instrumented: its own allocations are
        # not leak-checked; a report aborts the server (and fails the test)
        opts = env.get("ASAN_OPTIONS", "")
        opts = ":".join(o for o in opts.split(":") if o and not o.startswith("detect_leaks"))
        env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "detect_leaks=0"
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    return env


def redis_server_or_skip():
    path = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)
    if not path:
        print("SKIPPED: redis-server not found (Debian: redis-server; scripts/deps.sh)")
        sys.exit(77)
    if not os.path.exists(MODULE):
        print("FAILED: module %s not built" % MODULE, file=sys.stderr)
        sys.exit(1)
    return path


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """One redis-server process with the module loaded."""

    def __init__(self, workdir, name="s", module_args=(), args=(), port=None):
        self.exe = redis_server_or_skip()
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.name = name
        self.module_args = list(module_args)
        self.args = list(args)
        self.port = port
        self.proc = None

    def start(self, timeout=60):
        for attempt in range(5):
            if self.port is None or attempt > 0:
                self.port = free_port()
            cmd = [self.exe, "--port", str(self.port), "--bind", "127.0.0.1",
                   "--dir", self.dir, "--enable-debug-command", "yes",
                   "--save", "", "--appendfilename", "appendonly.aof",
                   "--logfile", "redis.log", "--daemonize", "no",
                   "--loadmodule", MODULE] + self.module_args + self.args
            with open(os.path.join(self.dir, "stderr.log"), "ab") as err:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err,
                                             stderr=err, env=server_env())
            t0 = time.time()
            while time.time() - t0 < scaled(timeout):
                if self.proc.poll() is not None:
                    break
                try:
                    if self.client().ping():
                        # wait until loading finished
                        while self.client().info("persistence").get("loading", 0):
                            time.sleep(0.05)
                        return self
                except (redis.ConnectionError, redis.BusyLoadingError):
                    time.sleep(0.05)
            if self.proc.poll() is None:
                self.kill9()
            if "Address already in use" not in self.log():
                break
        raise RuntimeError("redis-server %s did not start; log:\n%s" % (self.name, self.log()[-3000:]))

    def log(self):
        try:
            with open(os.path.join(self.dir, "redis.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stderr(self):
        try:
            with open(os.path.join(self.dir, "stderr.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def sanitizer_reports(self):
        """Lines of a sanitizer report in the server's stderr or log."""
        text = self.stderr() + "\n" + self.log()
        # (a refused allocation, with allocator_may_return_null=1, is a
        # warning the module handles, not an error)
        return [ln for ln in text.splitlines() if any(m in ln for m in SANITIZER_MARKS)
                and "AddressSanitizer failed to allocate" not in ln]

    def client(self, **kw):
        kw.setdefault("socket_timeout", scaled(120))
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self, timeout=60):
        """SIGTERM by PID, then wait (SIGKILL if it does not exit)."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(scaled(timeout))
            except subprocess.TimeoutExpired:
                self.kill9()
        self.proc = None

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


def wait_until(pred, timeout=120, what="condition"):
    t0 = time.time()
    while time.time() - t0 < scaled(timeout):
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


class Harness:
    """Context manager: a temporary directory and every server started in
    it, all stopped by PID on exit (also on failure)."""

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="rbf-redis-test-")
        self.servers = []
        return self

    def server(self, name="s", **kw):
        s = Server(self.tmp, name, **kw)
        self.servers.append(s)
        return s.start()

    def __exit__(self, et, ev, tb):
        for s in self.servers:
            try:
                s.stop()
            except Exception:
                s.kill9()
        reports = [(s.name, r) for s in self.servers for r in s.sanitizer_reports()]
        if reports and et is None:
            print("test directory kept: " + self.tmp, file=sys.stderr)
            for s in self.servers:
                print("---- stderr of %s (last lines)\n%s" % (s.name, s.stderr()[-6000:]),
                      file=sys.stderr)
            raise AssertionError("sanitizer report in the server output: %s" % "; ".join(
                "%s: %s" % nr for nr in reports[:5]))
        if et is None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print("test directory kept: " + self.tmp, file=sys.stderr)
            for s in self.servers:
                print("---- log of %s (last lines)\n%s" % (s.name, s.log()[-2000:]), file=sys.stderr)
                if s.stderr().strip():
                    print("---- stderr of %s (last lines)\n%s" % (s.name, s.stderr()[-4000:]),
                          file=sys.stderr)
            for name, r in reports[:5]:
                print("sanitizer report in %s: %s" % (name, r), file=sys.stderr)
        return False


def info_dict(client, key):
    raw = client.execute_command("RBF.INFO", key)
    return {raw[i].decode(): raw[i + 1] for i in range(0, len(raw), 2)}


def scandump(client, key):
    """The whole RBF.SCANDUMP of key: a list of (cursor, chunk)."""
    out, cur = [], 0
    while True:
        cur, data = client.execute_command("RBF.SCANDUMP", key, cur)
        if cur == 0:
            return out
        out.append((cur, data))


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def expect_error(fn, *args, contains=None, what=None):
    """Run fn(*args); it must raise a redis error reply (ResponseError).
    Returns the message; with contains, the message must contain it
    (case-insensitive)."""
    label = what or " ".join(str(a) for a in args)[:120]
    try:
        r = fn(*args)
    except redis.ResponseError as e:
        msg = str(e)
        if contains is not None:
            check(contains.lower() in msg.lower(),
                  "%s: error %r does not mention %r" % (label, msg, contains))
        return msg
    raise AssertionError("%s: expected an error reply, got %r" % (label, r))


def digest(client, key):
    """DEBUG DIGEST-VALUE of one key (bytes)."""
    return client.execute_command("DEBUG", "DIGEST-VALUE", key)[0]


def digests(client, keys):
    return {k: digest(client, k) for k in keys}


def synced(primary, replica):
    """The replica's link is up and it has applied everything the primary
    sent so far."""
    po = primary.info("replication")["master_repl_offset"]
    ri = replica.info("replication")
    return ri.get("master_link_status") == "up" and ri.get("slave_repl_offset", -1) == po


def info_rbf(client):
    """INFO rbf as a dict (empty when the module has no such section)."""
    return client.info("rbf")


def library_version_number():
    """The library's version as major*10000+minor*100+patch, read at test
    time from include/rbf_base.h (RBF_VERSION_NUMBER's parts), never
    hard-coded in a test."""
    here = os.path.dirname(os.path.abspath(__file__))
    hdr = os.path.join(here, "..", "..", "include", "rbf_base.h")
    parts = {}
    with open(hdr) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[0] == "#define" and w[1] in (
                    "RBF_VERSION_MAJOR", "RBF_VERSION_MINOR", "RBF_VERSION_PATCH"):
                parts[w[1]] = int(w[2])
    check(len(parts) == 3, "RBF_VERSION_MAJOR/MINOR/PATCH not found in %s" % hdr)
    return parts["RBF_VERSION_MAJOR"] * 10000 + parts["RBF_VERSION_MINOR"] * 100 + parts["RBF_VERSION_PATCH"]


class Resp:
    """A raw RESP connection (not redis-py's parser), to check the exact
    type byte of each reply, RESP2 or RESP3."""

    def __init__(self, port, timeout=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout or scaled(60))
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))

    def _fill(self):
        d = self.sock.recv(65536)
        if not d:
            raise ConnectionError("server closed the connection")
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _bytes(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        """One reply as (type byte, value): value is a list of replies for
        arrays, sets and pushes, a list of (key, value) pairs for maps, and
        the raw payload otherwise."""
        line = self._line()
        t, rest = chr(line[0]), line[1:]
        if t in "$=!":
            n = int(rest)
            return (t, None) if n < 0 else (t, self._bytes(n))
        if t in "*~>":
            n = int(rest)
            return (t, None) if n < 0 else (t, [self.read() for _ in range(n)])
        if t == "%" or t == "|":
            n = int(rest)
            return (t, [(self.read(), self.read()) for _ in range(n)])
        return (t, rest)

    def call(self, *args):
        self.send(*args)
        return self.read()


class Checks:
    """Collects failed checks so that one run reports every failure, not
    only the first: run each behaviour with c.run(fn, *args) (an
    AssertionError or redis error inside is recorded with fn's name), then
    c.done() raises one AssertionError listing them all."""

    def __init__(self):
        self.failed = []
        self.passed = []

    def run(self, fn, *args, **kw):
        name = getattr(fn, "__name__", str(fn))
        tags = [a for a in args if isinstance(a, str)]
        if tags:
            name += "(%s)" % ", ".join(tags)
        try:
            r = fn(*args, **kw)
        except AssertionError as e:
            self.failed.append("%s: %s" % (name, e))
            print("FAIL %s: %s" % (name, e), file=sys.stderr)
            return None
        except redis.RedisError as e:
            msg = "unexpected %s: %s" % (type(e).__name__, e)
            self.failed.append("%s: %s" % (name, msg))
            print("FAIL %s: %s" % (name, msg), file=sys.stderr)
            return None
        self.passed.append(name)
        print("ok   %s" % name)
        return r

    def done(self):
        if self.failed:
            raise AssertionError("%d check(s) failed (%d passed):\n  %s" % (
                len(self.failed), len(self.passed), "\n  ".join(self.failed)))
