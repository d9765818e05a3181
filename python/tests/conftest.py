"""Shared helpers of the rbf Python tests: where the C programs are, and a
driver for rbf_ref (the C library's answers, python/tests/rbf_ref.c)."""
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("RBF_SRC") or os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("RBF_BUILD") or os.path.join(SRC, "build")
REF = os.environ.get("RBF_REF") or os.path.join(BUILD, "python", "rbf_ref")
CLI = os.environ.get("RBF_CLI") or os.path.join(BUILD, "rbf")
REDIS_MODULE = os.environ.get("RBF_REDIS_MODULE") or os.path.join(BUILD, "rbf-redis.so")

HASHING = {"colliding": 0, "non-colliding": 1}
RECYCLE = {"non-retaining": 0, "retaining": 1}
LAYOUT = {"flat": 0, "blocked": 1}


def item_bytes(x):
    """The bytes the library sees for a Python item (the interop rule)."""
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, int):
        return str(x).encode("ascii")
    return bytes(x)


def new_cmd(cfg):
    return "N %d %d %d %d %d %d %d %d %d" % (
        cfg["bits"], cfg["hashes"], cfg["sigma"] or 0, cfg["messages"] or 0, cfg["phases"],
        HASHING[cfg["hashing"]], RECYCLE[cfg["recycle"]], LAYOUT[cfg["layout"]], cfg["seed"])


def run_ref(lines):
    """Run rbf_ref on the command lines; its output lines."""
    if not os.path.exists(REF):
        pytest.fail("the C reference %s is not built (make)" % REF)
    p = subprocess.run([REF], input="\n".join(lines) + "\n", capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.split("\n")[:-1]


def stats_tuple(s):
    return "%d %d %d %d %d %d %d" % (s["bits"], s["bits_set"], s["frozen_bits_set"], s["cycles"],
                                     s["cycle_messages"], s["inserts"], s["reported_new"])
