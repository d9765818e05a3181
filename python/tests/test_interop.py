"""The interop rule: the same item gets the same answer from the same saved
filter in Python, in C (rbf_ref, the library itself) and in the Redis
module (the image loaded with RBF.LOADCHUNK; items sent by redis-py, which
sends an int as its decimal text)."""
import os
import random
import shutil
import sys

import pytest

import rbf
from conftest import HERE, REDIS_MODULE, SRC, item_bytes, run_ref

ITEMS = [b"alpha", "beta", "é-gamma", 42, -7, 0, 2**80, b"", b"\x00\xff", bytearray(b"delta"),
         memoryview(b"eps")]


def probe_items(rng):
    extra = [rng.randbytes(rng.randrange(1, 16)) for _ in range(300)]
    extra += [rng.randrange(-10**9, 10**9) for _ in range(300)]
    extra += ["w%d" % rng.randrange(10**6) for _ in range(300)]
    return ITEMS + extra


@pytest.fixture(params=[dict(bits=1 << 13, hashes=4, sigma=3000),
                        dict(bits=1 << 14, hashes=3, sigma=4000, phases=2, layout="blocked")],
                ids=["flat", "blocked-two-phase"])
def saved(request, tmp_path):
    rng = random.Random(5)
    f = rbf.Filter(seed=rng.getrandbits(64), **request.param)
    f.update(ITEMS[::2])
    f.update(rng.randbytes(8) for _ in range(600))
    path = tmp_path / "f.rbf"
    f.save(path)
    return f, path, probe_items(rng)


def test_python_and_c_agree(saved):
    f, path, probe = saved
    g = rbf.Filter.load(path)
    py = [x in g for x in probe]
    assert py == [x in f for x in probe]
    out = run_ref(["O %s" % path] + ["E %s" % item_bytes(x).hex() for x in probe])
    assert [bool(int(v)) for v in out] == py
    assert any(py) and not all(py)  # the probe has both answers
    # and inserting after the load: the same answers and the same image
    img = path.parent / "c.img"
    adds = ["more-%d" % i for i in range(200)] + list(range(100))
    out = run_ref(["O %s" % path] + ["A %s" % item_bytes(x).hex() for x in adds] +
                  ["D %s" % img])
    assert [bool(int(v)) for v in out] == g.add_many(adds)
    assert img.read_bytes() == g.to_bytes()


def test_python_c_and_redis_agree(saved):
    exe = shutil.which("redis-server") or ("/usr/bin/redis-server"
                                            if os.path.exists("/usr/bin/redis-server") else None)
    if not exe:
        pytest.skip("SKIPPED: redis-server not found (Debian: redis-server; scripts/deps.sh)")
    assert os.path.exists(REDIS_MODULE), "the Redis module %s is not built" % REDIS_MODULE
    os.environ["RBF_REDIS_MODULE"] = REDIS_MODULE
    sys.path.insert(0, os.path.join(SRC, "tests", "redis"))
    try:
        import rrtest
    finally:
        sys.path.pop(0)
    f, path, probe = saved
    data = path.read_bytes()
    c_answers = [bool(int(v)) for v in
                 run_ref(["O %s" % path] + ["E %s" % item_bytes(x).hex() for x in probe])]
    with rrtest.Harness() as h:
        r = h.server().client()
        # the whole image as one chunk: its cursor is its length
        assert r.execute_command("RBF.LOADCHUNK", "k", len(data), data) in (b"OK", "OK", True)
        wire = [bytes(x) if isinstance(x, (bytearray, memoryview)) else x for x in probe]
        redis_answers = [bool(r.execute_command("RBF.EXISTS", "k", x)) for x in wire]
        assert redis_answers == c_answers == [x in f for x in probe]
        # and back: items added in Redis, dumped with SCANDUMP, answer the same in Python
        adds = ["r-%d" % i for i in range(150)] + list(range(-50, 50))
        new_in_redis = [bool(r.execute_command("RBF.ADD", "k", x)) for x in adds]
        assert new_in_redis == f.add_many(adds)
        chunks, cur = [], 0
        while True:
            cur, chunk = r.execute_command("RBF.SCANDUMP", "k", cur)
            if int(cur) == 0:
                break
            chunks.append(chunk)
        g = rbf.Filter.from_bytes(b"".join(chunks))
        assert g.to_bytes() == f.to_bytes()
