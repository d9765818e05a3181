"""Shared helpers of the rbf-redis tests: start Debian's redis-server with the
module on a free 127.0.0.1 port in a temporary directory, stop it by PID.

A test that cannot find redis-server prints SKIPPED and exits 77 (CTest's
SKIP_RETURN_CODE); everything else is a real failure.
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
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t0 = time.time()
            while time.time() - t0 < timeout:
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

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=120, **kw)

    def stop(self, timeout=60):
        """SIGTERM by PID, then wait (SIGKILL if it does not exit)."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
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
    while time.time() - t0 < timeout:
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
        if et is None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print("test directory kept: " + self.tmp, file=sys.stderr)
            for s in self.servers:
                print("---- log of %s (last lines)\n%s" % (s.name, s.log()[-2000:]), file=sys.stderr)
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
