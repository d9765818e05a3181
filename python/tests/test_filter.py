"""rbf.Filter against the C library (rbf_ref) and against its own contract."""
import copy
import os
import pickle
import random
import sys
import threading

import numpy as np
import pytest

import rbf
from conftest import item_bytes, new_cmd, run_ref, stats_tuple

CONFIGS = [
    dict(bits=1 << 14, hashes=3, sigma=4000),
    dict(bits=1 << 14, hashes=4, messages=900),
    dict(bits=1 << 14, hashes=3, sigma=3000, phases=2),
    dict(bits=1 << 14, hashes=5, sigma=5000, hashing="non-colliding", recycle="retaining"),
    dict(bits=1 << 15, hashes=6, sigma=9000, layout="blocked"),
    dict(bits=1 << 15, hashes=4, messages=2000, phases=2, layout="blocked"),
]


def items(n, rng):
    out = []
    for i in range(n):
        r = rng.randrange(6)
        if r == 0:
            out.append(rng.randbytes(rng.randrange(0, 40)))
        elif r == 1:
            out.append("s%d-é-%d" % (i, rng.randrange(1000)))
        elif r == 2:
            out.append(rng.randrange(-10**6, 10**6))
        elif r == 3:
            out.append(rng.randrange(-2**200, 2**200))
        elif r == 4:
            out.append(bytearray(rng.randbytes(rng.randrange(0, 20))))
        else:
            out.append(memoryview(rng.randbytes(rng.randrange(0, 20))))
    return out


@pytest.mark.parametrize("cfg", CONFIGS)
def test_every_answer_and_image_match_c(cfg, tmp_path):
    """add, in, update, add_many, contains_many, recycle, clear: the same
    answers, counters and image bytes as the C library's for the same seed."""
    rng = random.Random(hash(str(cfg)) & 0xffff)
    f = rbf.Filter(seed=12345, **cfg)
    c = f.config
    lines, expect = [new_cmd(c)], []
    pool = items(3000, rng)
    for step in range(40):
        batch = [rng.choice(pool) for _ in range(rng.randrange(1, 200))]
        op = rng.randrange(7)
        if op == 0:
            got = [f.add(x) for x in batch]
        elif op == 1:
            got = [x in f for x in batch]
        elif op == 2:
            got = f.add_many(batch)
        elif op == 3:
            got = f.contains_many(iter(batch))
        elif op == 4:
            n = f.update(tuple(batch))
            got = None
        elif op == 5:
            f.recycle()
            lines.append("R")
            continue
        else:
            f.clear()
            lines += ["R"] * c["phases"]
            continue
        cmd = "E" if op in (1, 3) else "A"
        lines += ["%s %s" % (cmd, item_bytes(x).hex()) for x in batch]
        if got is None:
            expect.append(("count", n, len(batch)))
        else:
            assert all(type(v) is bool for v in got)
            expect.append(("list", [int(v) for v in got], len(batch)))
        lines.append("T")
        expect.append(("stats", stats_tuple(f.stats)))
    img = tmp_path / "c.img"
    lines.append("D %s" % img)
    out = run_ref(lines)
    pos = 0
    for e in expect:
        if e[0] == "stats":
            assert out[pos] == e[1]
            pos += 1
            continue
        answers = [int(v) for v in out[pos:pos + e[2]]]
        pos += e[2]
        if e[0] == "list":
            assert answers == e[1]
        else:
            assert sum(answers) == e[1]
    assert pos == len(out)
    assert img.read_bytes() == f.to_bytes()


def test_item_types_are_their_bytes():
    f = rbf.Filter(bits=1 << 16, hashes=4, sigma=20000, seed=7)
    assert f.add(b"42") is True
    assert 42 in f and "42" in f and bytearray(b"42") in f and memoryview(b"42") in f
    assert f.add(-17) is True and b"-17" in f
    assert f.add("é") is True and "é".encode() in f
    big = 2**100
    assert f.add(big) and str(big).encode() in f
    assert f.add(b"") is True and "" in f
    strided = memoryview(b"abcdef")[::2]  # not contiguous: its bytes, b"ace"
    assert f.add(strided) is True and b"ace" in f and f.add(b"ace") is False
    # subclasses of the accepted types
    class S(str):
        pass

    class I(int):
        pass
    assert S("42") in f and I(42) in f
    for bad in (1.0, True, False, None, [1], (b"a",), {"a": 1}, 3j, object()):
        with pytest.raises(TypeError):
            f.add(bad)
        with pytest.raises(TypeError):
            bad in f
        with pytest.raises(TypeError):
            f.update([b"ok", bad])
        with pytest.raises(TypeError):
            f.add_many([bad])
    with pytest.raises(TypeError):
        f.update(5)  # not iterable


def test_add_many_equals_add_loop_and_numpy():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, size=(5000, 16), dtype=np.uint8).view("S16").ravel()
    a[4000:] = a[:1000]  # repeats
    a[5] = b"ab\x00\x00"  # trailing NULs: numpy returns b"ab"
    f1 = rbf.Filter(bits=1 << 16, hashes=3, sigma=30000, seed=99)
    f2 = rbf.Filter(bits=1 << 16, hashes=3, sigma=30000, seed=99)
    got = f1.add_many(a)
    assert isinstance(got, np.ndarray) and got.dtype == np.bool_ and len(got) == len(a)
    want = [f2.add(x) for x in a]
    assert got.tolist() == want
    assert f1.to_bytes() == f2.to_bytes()
    assert f1.contains_many(a).tolist() == [x in f2 for x in a]
    assert b"ab" in f1
    u = np.array(["x", "é", "zz"])
    assert f1.add_many(u).tolist() == [f2.add(x) for x in u.tolist()]
    assert f1.to_bytes() == f2.to_bytes()
    assert f1.add_many(np.array([], dtype="S4")).tolist() == []
    assert f1.add_many([]) == []


def test_add_many_numpy_subclasses_as_the_loop():
    """Subclasses of ndarray go item by item, as iterating them does:
    a chararray's elements lose their trailing blanks, a masked element
    is no item (TypeError, as in the loop)."""
    f1 = rbf.Filter(bits=1 << 16, hashes=3, sigma=30000, seed=7)
    f2 = rbf.Filter(bits=1 << 16, hashes=3, sigma=30000, seed=7)
    c = np.char.array([b"a ", b"b\t", b"c"])
    assert list(f1.add_many(c)) == [f2.add(x) for x in c]
    assert f1.to_bytes() == f2.to_bytes() and b"a" in f1 and b"a " not in f1
    assert list(f1.contains_many(c)) == [x in f2 for x in c]
    m = np.ma.array([b"x", b"y"], mask=[0, 1])
    with pytest.raises(TypeError):
        f1.add_many(m)
    with pytest.raises(TypeError):
        [f2.add(x) for x in m]
    assert f1.to_bytes() == f2.to_bytes()  # b"x" added by both before the masked one


def test_update_counts_new():
    f = rbf.Filter(bits=1 << 16, hashes=3, sigma=30000, seed=1)
    assert f.update([b"a", b"b", b"a", "c"]) == 3
    assert f.update(x for x in ["a", "b", "d"]) == 1
    s = f.stats
    assert s["inserts"] == 7 and s["reported_new"] == 4


def test_stats_config_no_len():
    f = rbf.Filter(bits=1 << 12, hashes=2, messages=100, phases=2, seed=5)
    c = f.config
    assert c == {"bits": 4096, "hashes": 2, "sigma": None, "messages": 100, "phases": 2,
                 "hashing": "colliding", "recycle": "non-retaining", "layout": "flat",
                 "seed": 5, "concurrent": False}
    assert f.stats["bits"] == 2048 and f.stats.bits == 2048 and f.config.seed == 5
    assert not hasattr(f, "__len__") and not hasattr(f, "__iter__")
    with pytest.raises(TypeError):
        len(f)
    assert f.plan is None
    assert "rbf.Filter(bits=4096" in repr(f)


def test_copy_pickle_bytes_save_load(tmp_path):
    f = rbf.Filter.planned(memory=4096, fp=0.01, seed=77)
    f.update(range(500))
    img = f.to_bytes()
    for g in (f.copy(), copy.copy(f), copy.deepcopy(f), pickle.loads(pickle.dumps(f)),
              rbf.Filter.from_bytes(img), rbf.Filter.from_bytes(bytearray(img)),
              rbf.Filter.from_bytes(memoryview(img))):
        assert type(g) is rbf.Filter
        assert g.to_bytes() == img and g.stats == f.stats and g.config == f.config
    g = f.copy()
    g.add(b"only in g")
    assert b"only in g" not in f and f.to_bytes() == img  # independent
    assert pickle.loads(pickle.dumps(f)).plan == f.plan
    p = tmp_path / "f.rbf"
    f.save(p)
    assert p.read_bytes() == img
    h = rbf.Filter.load(str(p))
    assert h.to_bytes() == img
    assert rbf.Filter.load(p, concurrent=True).concurrent is True
    assert not any(n.startswith("f.rbf.tmp") for n in os.listdir(tmp_path))


def test_errors():
    with pytest.raises(ValueError, match="sigma"):
        rbf.Filter(bits=1000, hashes=3, sigma=1000)
    with pytest.raises(ValueError, match="sigma"):
        rbf.Filter(bits=1000, hashes=3, sigma=10, messages=10)
    with pytest.raises(ValueError):
        rbf.Filter(bits=0, hashes=3, sigma=10)
    with pytest.raises(ValueError):
        rbf.Filter(bits=1000, hashes=257, sigma=500)
    with pytest.raises(ValueError):
        rbf.Filter(bits=1000, hashes=3, sigma=500, layout="blocked")
    with pytest.raises(ValueError):
        rbf.Filter(bits=1000, hashes=3, sigma=500, hashing="sometimes")
    with pytest.raises(ValueError):
        rbf.Filter(bits=-1, hashes=3, sigma=500)
    with pytest.raises(ValueError):
        rbf.Filter(bits=2**64, hashes=3, sigma=500)
    with pytest.raises(TypeError):
        rbf.Filter(bits=1.5, hashes=3, sigma=500)
    with pytest.raises(TypeError):
        rbf.Filter(1000, 3, 500)
    with pytest.raises(TypeError):
        rbf.Filter(bits=1000, hashes=3, sigma=500, bogus=1)
    # huge sizes: refused or out of memory, never a crash
    for bits in (2**63, 2**64 - 1, 2**62 + 512):
        with pytest.raises((ValueError, MemoryError)):
            rbf.Filter(bits=bits, hashes=3, sigma=1000)
    with pytest.raises(ValueError):
        rbf.Filter.planned(memory=1, fp=1e-12)
    with pytest.raises(ValueError):
        rbf.Filter.planned(memory="12 parsecs", fp=0.01)
    with pytest.raises(ValueError):
        rbf.Filter.planned(memory="1MiB", capacity=10, fp=0.01)
    with pytest.raises(OSError):
        rbf.Filter.load("/nonexistent-dir/f.rbf")
    with pytest.raises(OSError):
        rbf.Filter(bits=1024, hashes=2, sigma=100).save("/nonexistent-dir/f.rbf")
    with pytest.raises(TypeError):
        rbf.Filter.from_bytes("a str is not an image")


def test_truncated_and_corrupted_images(tmp_path):
    f = rbf.Filter(bits=4096, hashes=3, sigma=1000, phases=2, seed=3)
    f.update(range(300))
    img = f.to_bytes()
    for n in range(len(img)):
        with pytest.raises(ValueError):
            rbf.Filter.from_bytes(img[:n])
    rng = random.Random(11)
    for _ in range(2000):
        b = bytearray(img)
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        with pytest.raises(ValueError):
            rbf.Filter.from_bytes(bytes(b))
    for junk in (b"", b"\x00" * 10**5, os.urandom(4096), img + b"x"):
        with pytest.raises(ValueError):
            rbf.Filter.from_bytes(junk)
    p = tmp_path / "bad.rbf"
    p.write_bytes(img[: len(img) // 2])
    with pytest.raises(ValueError):
        rbf.Filter.load(p)


def test_planned_keeps_the_plan():
    f = rbf.Filter.planned(memory="64KiB", fp=0.001, seed=1)
    p = f.plan
    assert p["bits"] == 64 * 1024 * 8 and p["fp_target"] == 0.001
    c = f.config
    assert (c["bits"], c["hashes"], c["sigma"]) == (
        p["bits"], p["sigma_bounded"]["hashes"], p["sigma_bounded"]["sigma"])
    assert p == rbf.plan(memory="64KiB", fp=0.001)
    g = rbf.Filter.planned(capacity=10**4, fp=0.001)
    assert g.plan["messages"] == 10**4
    assert g.plan["sigma_bounded"]["expected_messages"] >= 10**4
    assert g.config["bits"] == g.plan["bits"]
    g2 = rbf.Filter.planned(capacity=10**4, fp=0.001, phases=2)
    assert g2.config["phases"] == 2 and g2.plan["two_phase"]["expected_messages"] >= 10**4
    assert g2.config["bits"] == rbf.plan(capacity=10**4, fp=0.001)["two_phase_bits"]
    h = rbf.Filter.planned(memory=1 << 16, fp=0.01, phases=2)
    assert h.config["sigma"] == h.plan["two_phase"]["sigma"] and h.config["phases"] == 2
    b = rbf.Filter.planned(memory=1 << 16, fp=0.01, layout="blocked")
    assert b.config["layout"] == "blocked" and b.config["sigma"] == b.plan["layouts"]["blocked"]["sigma"]


def test_seed_is_random_unless_given():
    seeds = {rbf.Filter(bits=1024, hashes=2, sigma=100).config["seed"] for _ in range(4)}
    assert len(seeds) == 4
    assert rbf.Filter(bits=1024, hashes=2, sigma=100, seed=9).config["seed"] == 9


@pytest.mark.parametrize("concurrent", [False, True])
def test_threads_never_corrupt(concurrent):
    """Threads adding at once (batch calls release the GIL): every insert is
    counted, bits and counters agree with a single-threaded replay."""
    f = rbf.Filter(bits=1 << 21, hashes=4, sigma=1 << 20, seed=4, concurrent=concurrent)
    data = [[b"t%d-%d" % (t, i) for i in range(20000)] for t in range(4)]

    def work(d):
        for i in range(0, len(d), 500):
            f.update(d[i:i + 500])
            f.add(d[i])
            d[i] in f

    ts = [threading.Thread(target=work, args=(d,)) for d in data]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    s = f.stats
    assert s["inserts"] == 4 * (20000 + 40)
    # the set of items is the same whatever the interleaving (no recycle here)
    assert s["cycles"] == 0
    g = rbf.Filter(bits=1 << 21, hashes=4, sigma=1 << 20, seed=4)
    for d in data:
        g.update(d)
    assert s["bits_set"] == g.stats["bits_set"]
    assert all(f.contains_many(d) == [True] * len(d) for d in data)
    assert f.config["concurrent"] is concurrent


def test_help_shows_docstrings():
    import pydoc
    text = pydoc.render_doc(rbf.Filter)
    assert "pybloom-live" in text and "hash seed" in text and "concurrent" in text
    assert "Test-and-insert" in rbf.Filter.add.__doc__
