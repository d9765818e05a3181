"""A second real client: node-redis with its @redis/bloom commands
(tests/redis/node/bf_client.js) against a server with the module loaded
with BF-COMPAT yes.  The packages are installed with `npm ci` from the
locked package-lock.json into the build directory (RBF_REDIS_BUILD, or a
temporary directory).  SKIPPED (exit 77) where node or npm is missing."""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from rrtest import Harness, check, scaled  # noqa: E402

FILES = ("package.json", "package-lock.json", "bf_client.js")


def install():
    """npm ci into <build>/redis-node (again only when the lock changed)."""
    base = os.environ.get("RBF_REDIS_BUILD") or os.path.join(HERE, "..", "..", "..", "build")
    dest = os.path.join(os.path.abspath(base), "redis-node")
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(HERE, "package-lock.json"), "rb") as f:
        lock = f.read()
    stamp = os.path.join(dest, "node_modules", ".rbf-lock")
    fresh = os.path.exists(stamp) and open(stamp, "rb").read() == lock
    for name in FILES:
        shutil.copyfile(os.path.join(HERE, name), os.path.join(dest, name))
    if not fresh:
        r = subprocess.run(["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund"], cwd=dest,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=scaled(300))
        check(r.returncode == 0, "npm ci failed in %s:\n%s" % (dest, r.stdout.decode(errors="replace")[-3000:]))
        with open(stamp, "wb") as f:
            f.write(lock)
    return dest


def main():
    missing = [t for t in ("node", "npm") if not shutil.which(t)]
    if missing:
        print("SKIPPED: %s not found (node-redis needs node v20 and npm)" % " and ".join(missing))
        return 77
    dest = install()
    with Harness() as h:
        s = h.server(module_args=["BF-COMPAT", "yes"])
        r = subprocess.run(["node", os.path.join(dest, "bf_client.js"), str(s.port)], cwd=dest,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scaled(300))
        out = r.stdout.decode(errors="replace")
        print(out, end="")
        check(r.returncode == 0, "node-redis client failed (exit %d): its FAILED lines above say "
              "which answers were wrong" % r.returncode)
        check(s.alive() and s.client().ping(), "server up after the node client")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
