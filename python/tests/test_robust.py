"""No leak (reference counts and memory stable over a million calls),
hostile inputs, and the extension's build (limited API, abi3, the
project's warnings as errors)."""
import gc
import os
import pickle
import re
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

import rbf
from conftest import SRC


def rss_kib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_refcounts_and_memory_stable_over_a_million_calls():
    f = rbf.Filter(bits=1 << 16, hashes=3, sigma=20000, seed=1)
    items = [b"bytes", "str-é", 12345, -2**90, bytearray(b"ba"), memoryview(b"mv")]
    bad = [1.5, True, None]
    watched = items + [bad[0], 2.5]  # (True and None are shared by everything)
    before = [sys.getrefcount(x) for x in watched]
    t_before, f_before = sys.getrefcount(True), sys.getrefcount(False)
    small = [b"a", "b", 3]
    arr = np.array([b"x", b"y"], dtype="S2")

    def round_(n):
        for i in range(n):
            x = items[i % 6]
            f.add(x)
            x in f
        for i in range(n // 20):
            f.update(small)
            f.add_many(small)
            f.contains_many(small)
            f.add_many(arr)
            f.stats
            for b in bad:
                try:
                    f.add(b)
                except TypeError:
                    pass
        for i in range(n // 2000):
            rbf.Filter.from_bytes(f.to_bytes())
            pickle.loads(pickle.dumps(f))
            try:
                rbf.Filter.from_bytes(b"junk")
            except ValueError:
                pass

    round_(100000)  # warm up caches and arenas
    gc.collect()
    m0 = rss_kib()
    round_(10**6)
    gc.collect()
    m1 = rss_kib()
    assert [sys.getrefcount(x) for x in watched] == before
    assert abs(sys.getrefcount(True) - t_before) < 100
    assert abs(sys.getrefcount(False) - f_before) < 100
    # a leak of even 16 bytes per call would be 16 MB here
    assert m1 - m0 < 4096, "RSS grew by %d KiB over a million calls" % (m1 - m0)


def test_models_do_not_leak():
    def round_(n):
        for _ in range(n):
            rbf.model(bits=1000, hashes=3, sigma=300)
            rbf.model(bits=1000, hashes=3, messages=50)
            rbf.model(bits=1000, hashes=3, sigma=300, points=3)
            try:
                rbf.model(bits=1000, hashes=3, sigma=5000)
            except ValueError:
                pass
        for _ in range(n // 50):
            rbf.plan(memory=4096, fp=0.01)
            rbf.simulate(bits=1000, hashes=3, sigma=300, epochs=2, arrivals=100, threads=1,
                         detail=True)
    round_(200)
    gc.collect()
    m0 = rss_kib()
    round_(2000)
    gc.collect()
    assert rss_kib() - m0 < 2048


def test_filters_are_freed():
    gc.collect()
    m0 = rss_kib()
    for _ in range(200):
        f = rbf.Filter(bits=8 << 20, hashes=3, sigma=4 << 20)  # 1 MiB each
        f.update(range(1000))
        g = f.copy()
        del f, g
    gc.collect()
    assert rss_kib() - m0 < 32 * 1024


def test_hostile_inputs():
    f = rbf.Filter(bits=1 << 12, hashes=3, sigma=1000)
    # a huge item is hashed, not copied into anything fixed-size
    big = b"x" * (64 << 20)
    assert f.add(big) is True and big in f
    assert f.add_many([big, b"y"]) == [False, True]
    with pytest.raises(ValueError):
        rbf.Filter.from_bytes(b"\xff" * (1 << 20))
    # an iterator that fails midway: the exception comes through, the items
    # before it were added (as a loop of add would)
    def gen():
        yield b"g1"
        yield b"g2"
        raise RuntimeError("midway")
    with pytest.raises(RuntimeError):
        f.update(gen())
    assert b"g1" in f and b"g2" in f
    # an item of the wrong type midway: the ones before it are added, none after
    class Evil:
        pass
    n = f.stats["inserts"]
    with pytest.raises(TypeError):
        f.update([b"ok%d" % i for i in range(10)] + [Evil()] + [b"never"])
    assert f.stats["inserts"] == n + 10 and b"ok9" in f and b"never" not in f
    # numpy arrays that are not bytes go item by item (and ints are decimal)
    assert f.add_many(np.array([7, 8], dtype=object)) == [True, True]
    assert 7 in f
    with pytest.raises(ValueError):
        f.add_many(np.zeros((2, 2), dtype="S2"))
    for kw in (dict(bits=2**64), dict(bits=-5), dict(hashes=2**40)):
        with pytest.raises(ValueError):
            rbf.Filter(**dict(dict(bits=1024, hashes=2, sigma=100), **kw))
    with pytest.raises(ValueError):
        rbf.model(bits=2**64 + 1, hashes=2, sigma=10)
    with pytest.raises(TypeError):
        rbf.Filter.load(12.5)
    with pytest.raises(ValueError):
        rbf.Filter.load("bad\x00path")
    # __init__ a second time is refused (it would free the filter under a
    # batch running without the GIL); the filter is left as it was
    for conc in (False, True):
        g = rbf.Filter(bits=1 << 12, hashes=3, sigma=1000, concurrent=conc)
        g.add(b"kept")
        with pytest.raises(RuntimeError):
            g.__init__(bits=1 << 14, hashes=2, sigma=100)
        assert b"kept" in g and g.config["bits"] == 1 << 12 and g.config["concurrent"] is conc


def test_built_with_the_limited_api_and_the_projects_warnings():
    so = rbf._rbf.__file__
    assert so.endswith(".abi3.so"), so
    src = os.path.join(os.path.dirname(rbf.__file__), "_rbf.c")
    text = open(src).read()
    # the flags of CMakeLists.txt (RBF_WARNINGS) are the ones setup.py uses
    cm = open(os.path.join(SRC, "CMakeLists.txt")).read()
    flags = re.search(r"set\(RBF_WARNINGS (.*?)\)", cm, re.S).group(1).split()
    setup = open(os.path.join(SRC, "python", "setup.py")).read()
    for w in flags + ["-Werror"]:
        assert '"%s"' % w in setup, w
    assert '"Py_LIMITED_API", "0x030B0000"' in setup
    cc = sysconfig.get_config_var("CC").split()[0]
    cmd = [cc, "-fsyntax-only", "-std=c11", "-DPy_LIMITED_API=0x030B0000", "-Werror"] + flags + [
        "-I" + sysconfig.get_paths()["include"], "-I" + os.path.join(SRC, "include"), src]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # and it fails when the limited API is violated (the check is real)
    p = subprocess.run([cc, "-fsyntax-only", "-DPy_LIMITED_API=0x030B0000", "-Werror",
                        "-Wimplicit-function-declaration", "-I" + sysconfig.get_paths()["include"],
                        "-x", "c", "-"], input='#include <Python.h>\nvoid g(PyObject *o);\n'
                        'void g(PyObject *o) { (void)PyList_GET_ITEM(o, 0); }\n',
                       capture_output=True, text=True)
    assert p.returncode != 0


def test_typed_package():
    d = os.path.dirname(rbf.__file__)
    assert os.path.exists(os.path.join(d, "py.typed"))
    stub = open(os.path.join(d, "__init__.pyi")).read()
    for name in rbf.__all__:
        if name != "__version__":
            assert re.search(r"\b%s\b" % name, stub), name
    for meth in ("add", "update", "add_many", "contains_many", "recycle", "clear", "copy",
                 "to_bytes", "from_bytes", "save", "load", "planned", "stats", "config", "plan"):
        assert hasattr(rbf.Filter, meth) and ("def %s(" % meth) in stub, meth


def test_module_docstring_examples():
    import doctest
    r = doctest.testmod(rbf, verbose=False)
    assert r.attempted >= 4 and r.failed == 0
