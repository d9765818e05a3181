"""rbf.model / rbf.plan / rbf.simulate against the rbf command's --json
(the same library calls, so the same numbers, key by key), progress
callbacks, cancellation, and rbf.dedup."""
import json
import math
import os
import subprocess
import threading
import time

import numpy as np
import pytest

import rbf
from conftest import CLI


def cli_json(*args):
    if not os.path.exists(CLI):
        pytest.fail("the rbf command %s is not built (make)" % CLI)
    p = subprocess.run([CLI] + [str(a) for a in args] + ["--json"], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def same(py, cli, skip=()):
    assert set(cli) - set(skip) <= set(py), set(cli) - set(py)
    for k, v in cli.items():
        if k in skip:
            continue
        w = py[k]
        if isinstance(v, dict):
            same(w, v)
        elif isinstance(v, (int, float)) and isinstance(w, float) and not isinstance(v, bool):
            # the CLI prints %.17g: the exact double
            assert isinstance(w, float) and (w == v or (math.isnan(v) and math.isnan(w))), (k, w, v)
        elif isinstance(v, list):
            assert list(w) == v, k
        else:
            assert w == v and type(w) is type(v), (k, w, v)


MODEL_CASES = [
    dict(bits=1000, hashes=3, sigma=300),
    dict(bits=4000, hashes=4, sigma=1500, phases=2),
    dict(bits=1000, hashes=3, sigma=300, recycle="retaining", hashing="non-colliding"),
    dict(bits=1000, hashes=3, messages=120),
    dict(bits=1 << 16, hashes=5, sigma=20000, method="fast"),
    dict(bits=1 << 14, hashes=4, sigma=5000, layout="blocked"),
    dict(bits=1 << 15, hashes=4, sigma=5000, layout="blocked", phases=2),
    dict(bits=1 << 14, hashes=4, messages=1500, layout="blocked"),
    dict(bits=800, hashes=2, sigma=200, method="paper"),
]


def cli_args(d):
    out = []
    for k, v in d.items():
        out += ["--" + k.replace("_", "-"), v]
    return out


@pytest.mark.parametrize("case", MODEL_CASES)
def test_model_matches_cli(case):
    same(rbf.model(**case), cli_json("model", *cli_args(case)))


def test_model_curve():
    d = rbf.model(bits=1000, hashes=3, sigma=300, points=7)
    c = d["curve"]
    assert isinstance(c["fp"], np.ndarray) and len(c["sigma"]) == 7 and c["sigma"][-1] == 300
    assert c["fp"][-1] == rbf.model(bits=1000, hashes=3, sigma=300)["fp"]
    assert np.all(np.diff(c["fp"]) > 0)
    n = rbf.model(bits=1000, hashes=3, messages=100, points=5)["curve"]
    assert n["messages"].tolist() == [1, 26, 51, 75, 100]  # as rbf model --points
    assert n["exact_real"][-1] == rbf.model(bits=1000, hashes=3, messages=100)["exact_real"]


@pytest.mark.parametrize("case", [dict(memory="64KiB", fp=0.001), dict(bits=10**6, fp=1e-4,
                                  max_hashes=8, hashing="non-colliding"),
                                  dict(messages=10**5, fp=0.01),
                                  dict(memory=1 << 16, fp=0.01, layout="blocked"),
                                  dict(capacity=10**5, fp=0.001, layout="blocked")])
def test_plan_matches_cli(case):
    py = rbf.plan(**case)
    cli = cli_json("plan", *cli_args(case))
    same(py, cli)
    if "layout" in case:
        assert py["layouts"]["blocked"]["feasible"] and py["layouts"]["blocked"]["hashes"] >= 1


def test_simulate_matches_cli():
    case = dict(bits=1000, hashes=3, sigma=300, epochs=4, arrivals=20000, seed=5, threads=1)
    py = rbf.simulate(**case)
    cli = cli_json("simulate", *cli_args(case))
    same(py, cli, skip=("elapsed_seconds", "arrivals_per_second", "fp_ci99", "fp_first_ci99",
                        "fp_each_ci99", "fn_ci99", "messages_per_cycle_ci99"))
    for k in ("fp", "fn", "messages_per_cycle"):
        assert list(py[k + "_ci99"]) == cli[k + "_ci99"]
    assert py["model_inside_ci99"] is True
    assert len(py["epoch_rates"]["fp"]) == 4
    assert np.isclose(py["epoch_rates"]["fp"].mean(), py["fp"])
    # the numbers depend on the seed only, not on the thread count
    two = rbf.simulate(**dict(case, threads=2))
    assert two["fp"] == py["fp"] and two["cycles"] == py["cycles"]
    d = rbf.simulate(**dict(case, detail=True))
    assert len(d["per_epoch"]) == 4 and sum(e["arrivals"] for e in d["per_epoch"]) == 80000


def test_simulate_errors():
    with pytest.raises(ValueError):
        rbf.simulate(bits=1000, hashes=3, sigma=300, workload="nonsense:1")
    with pytest.raises(ValueError):
        rbf.simulate(bits=1000, hashes=3, sigma=2000)
    with pytest.raises(OSError):
        rbf.simulate(bits=1000, hashes=3, sigma=300, workload="trace:/nonexistent/trace.txt")
    with pytest.raises(ValueError):
        rbf.model(bits=1000, hashes=3, sigma=1000)
    with pytest.raises(ValueError):
        rbf.model(bits=1000, hashes=3)
    with pytest.raises(ValueError):
        rbf.plan(memory="1MiB", fp=2)


def test_progress_and_cancel():
    calls = []

    def three(done, total):
        calls.append((done, total))
        return len(calls) >= 3  # a true return value cancels

    with pytest.raises(rbf.Cancelled):
        rbf.simulate(bits=1000, hashes=3, sigma=300, epochs=2, arrivals=10**9, threads=1,
                     progress=three)
    assert len(calls) == 3 and all(t == 2 * 10**9 for _, t in calls)
    assert calls[0][0] <= calls[1][0] <= calls[2][0] < 2 * 10**9

    # an exception in the callback comes through
    def boom(d, t):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        rbf.simulate(bits=1000, hashes=3, sigma=300, epochs=2, arrivals=10**9, threads=1,
                     progress=boom)
    # the planner and the models call it too
    seen = []
    rbf.plan(memory="1MiB", fp=0.001, progress=lambda d, t: seen.append(d))
    with pytest.raises(rbf.Cancelled):
        rbf.plan(memory="1MiB", fp=0.001, progress=lambda d, t: True)
    assert seen


@pytest.mark.parametrize("kw", [dict(memory=4096, fp=0.01), dict(capacity=1000, fp=0.01),
                                dict(memory="1MiB", fp=0.001, layout="blocked")])
def test_progress_stop_on_quick_computations(kw):
    """A computation that ends before it looks at the callback's answer
    still raises what the callback asked for (never a result with an
    exception pending, which Python reports as SystemError)."""
    with pytest.raises(rbf.Cancelled):
        rbf.plan(progress=lambda d, t: True, **kw)
    with pytest.raises(ZeroDivisionError):
        rbf.plan(progress=lambda d, t: 1 / 0, **kw)
    with pytest.raises(TypeError, match="progress"):
        rbf.plan(progress=5, **kw)
    with pytest.raises(TypeError, match="progress"):
        rbf.simulate(bits=1000, hashes=3, sigma=300, epochs=1, arrivals=100, progress=5)
    assert rbf.plan(progress=lambda d, t: None, **kw)["bits"] > 0


def test_ctrl_c_interrupts_a_long_simulation():
    """SIGINT while the simulation runs (GIL released): KeyboardInterrupt
    comes back through the library's progress callback."""
    import _thread
    t = threading.Timer(0.3, _thread.interrupt_main)
    t.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        rbf.simulate(bits=1000, hashes=3, sigma=300, epochs=2, arrivals=10**10, threads=1)
    t.cancel()
    assert time.monotonic() - t0 < 60


def test_gil_released_during_simulation_and_update():
    """Another Python thread runs while a simulation or an update runs.  The
    switch interval is set to 100 s, so the main thread never gives the GIL
    up on its own: the other thread can run only if the call releases it."""
    import sys
    count = [0]
    stop = threading.Event()

    def other():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)  # gives the GIL back at once

    old = sys.getswitchinterval()
    th = threading.Thread(target=other)
    th.start()
    try:
        sys.setswitchinterval(100.0)
        n0 = count[0]
        rbf.simulate(bits=1000, hashes=3, sigma=300, epochs=1, arrivals=4 * 10**6, threads=1)
        n1 = count[0]
        f = rbf.Filter(bits=1 << 20, hashes=3, sigma=1 << 18)
        items = [b"%d" % i for i in range(300000)]
        n2 = count[0]
        f.update(items)
        n3 = count[0]
        for x in items[:100000]:  # single adds keep the GIL
            f.add(x)
        n4 = count[0]
    finally:
        sys.setswitchinterval(old)
        stop.set()
        th.join()
    assert n1 > n0 and n3 > n2
    assert n4 == n3


def test_dedup():
    data = [b"a", b"b", b"a", "c", b"c", 1, "1", b"d"] * 3
    assert list(rbf.dedup(data, memory="1MiB", fp=1e-6, seed=1)) == [b"a", b"b", "c", 1, b"d"]
    rows = [{"id": i % 50, "v": i} for i in range(500)]
    out = list(rbf.dedup(rows, memory=1 << 16, fp=1e-6, key=lambda r: r["id"], seed=2))
    assert [r["v"] for r in out] == list(range(50))
    # a long stream through a small filter: recycles, and about fp of new lines lost
    n = 200000
    got = sum(1 for _ in rbf.dedup(range(n), memory=8192, fp=0.01, seed=3))
    assert 0.97 * n < got <= n


@pytest.mark.parametrize("args", [[], ["--layout", "flat"], ["--layout", "blocked"],
                                  ["--phases", "2"], ["--phases", "2", "--layout", "blocked"]])
def test_dedup_drops_what_rbf_dedup_drops(args):
    """With the same seed rbf.dedup keeps exactly the lines rbf dedup
    keeps: the same filter (the command's default layout rule included),
    through recycles and false positives."""
    lines = [b"%d" % (i * 7919 % 7000) for i in range(30000)]
    cli = subprocess.run([CLI, "dedup", "--memory", "16KiB", "--fp", "0.01", "--seed", "7"] + args,
                         input=b"".join(x + b"\n" for x in lines), capture_output=True, check=True)
    kw = dict(zip(args[::2], args[1::2]))
    py = rbf.dedup(lines, memory="16KiB", fp=0.01, seed=7,
                   phases=int(kw.get("--phases", 1)), layout=kw.get("--layout"))
    assert b"".join(x + b"\n" for x in py) == cli.stdout


def test_without_numpy_curves_are_lists():
    """Where numpy is not installed the curves are lists (numpy hidden in a
    child interpreter)."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['numpy'] = None\n"
            "import rbf\n"
            "c = rbf.model(bits=1000, hashes=3, sigma=300, points=4)['curve']\n"
            "assert type(c['fp']) is list and len(c['fp']) == 4, c\n"
            "d = rbf.simulate(bits=1000, hashes=3, sigma=300, epochs=2, arrivals=1000)\n"
            "assert type(d['epoch_rates']['fp']) is list\n"
            "f = rbf.Filter(bits=1024, hashes=2, sigma=100)\n"
            "assert f.add_many([b'a', b'a']) == [True, False]\n"
            "print('ok')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(
                           rbf.__file__))))
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_ctrl_c_interrupts_an_endless_update():
    """f.update over an endless C iterator stops at Ctrl-C (checked between
    chunks), and the filter stays usable."""
    import _thread
    import itertools
    f = rbf.Filter(bits=1 << 14, hashes=3, sigma=5000)
    t = threading.Timer(0.3, _thread.interrupt_main)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        f.update(itertools.count())
    t.cancel()
    s = f.stats
    assert s["inserts"] > 0 and s["cycles"] > 0
    assert f.add(b"after") is True


CYCLE_CASES = [
    (dict(bits=2000, hashes=3, messages=100, phases=2), []),
    (dict(bits=1000, hashes=3, messages=100, oracle=True), ["--oracle"]),
    (dict(bits=2000, hashes=3, messages=100, oracle=True, phases=2), ["--oracle"]),
    (dict(bits=1000, hashes=3, sigma=300, fn="uniform:1000"), []),
    (dict(bits=2000, hashes=3, sigma=300, phases=2, fn="zipf:5000:0.8"), []),
    (dict(bits=1000, hashes=3, messages=120, fn="fading:0.5:200"), []),
    (dict(bits=1000, hashes=3, sigma=300, forget=[10, 100, 1000]), ["--forget", "10,100,1000"]),
    (dict(bits=1000, hashes=2, messages=800, fn="uniform:1000", forget=[5]),
     ["--forget", "5"]),  # the filter fills before N: stuck
]


@pytest.mark.parametrize("case,extra", CYCLE_CASES)
def test_cycle_models_match_cli(case, extra):
    """The cycle-length models through the library's rbf_model_policy, the
    same numbers as the command's own assembly (cmd_model_fn.c)."""
    args = cli_args({k: v for k, v in case.items() if k not in ("oracle", "forget")})
    py = rbf.model(**case)
    cli = cli_json("model", *args, *extra)
    same(py, cli)
    if case.get("messages") == 800:
        assert py["fp"] == 1.0 and py["cycle_mean"] is None and py["forget"] is None


def test_cycle_model_errors():
    with pytest.raises(ValueError):
        rbf.model(bits=1000, hashes=3, sigma=300, oracle=True)
    with pytest.raises(ValueError):
        rbf.model(bits=1024, hashes=3, sigma=300, fn="uniform:10", layout="blocked")
    with pytest.raises(ValueError):
        rbf.model(bits=1000, hashes=3, sigma=300, fn="trace:")  # no file name
    with pytest.raises(ValueError):
        rbf.model(bits=1000, hashes=3, sigma=300, fn="bogus")
    with pytest.raises(ValueError):
        rbf.model(bits=1000, hashes=3, sigma=300, forget=[])


@pytest.mark.parametrize("case", [dict(bits=1 << 16, fp=0.01, remember=1000),
                                  dict(bits=1 << 16, fp=0.01, remember=100),
                                  dict(bits=1 << 12, fp=0.001, remember=10**5, miss=0.0)])
def test_plan_remember_matches_cli(case):
    py = rbf.plan(**case)
    same(py, cli_json("plan", *cli_args(case)))


def test_planned_blocked_capacity():
    """Filter.planned(capacity=, layout="blocked"): the least whole blocks
    whose blocked plan holds the capacity, as rbf plan --capacity --layout
    blocked; its plan is the filter's own (copies get their own dict)."""
    import copy
    f = rbf.Filter.planned(capacity=10**5, fp=0.001, layout="blocked")
    p = f.plan
    b = p["layouts"]["blocked"]
    assert f.config["layout"] == "blocked" and f.config["bits"] == p["blocked_bits"] == b["bits"]
    assert (f.config["hashes"], f.config["sigma"]) == (b["hashes"], b["sigma"])
    assert b["expected_messages"] >= 10**5 and f.config["bits"] % 512 == 0
    for g in (copy.deepcopy(f), f.copy(), copy.copy(f)):
        assert g.plan == p and g.plan is not p


def test_version_is_the_library_s():
    assert rbf.__version__ == rbf.library_version


@pytest.mark.parametrize("size", ["64MiB", "1.5MiB", "1e6", "2^20", "4096", "1MB", "64M",
                                  "64mib", "1m", "1 MiB", "1.3", "-5", "x", "0"])
def test_parse_size_is_the_cli_s(size):
    """memory="..." is read by the rbf command's own --memory reader: the
    same sizes accepted, the same refused."""
    p = subprocess.run([CLI, "plan", "--memory", size, "--fp", "0.01", "--json"],
                       capture_output=True, text=True)
    if p.returncode == 0:
        assert rbf.parse_size(size) == json.loads(p.stdout)["memory_bytes"]
        assert rbf.plan(memory=size, fp=0.01)["memory_bytes"] == json.loads(p.stdout)["memory_bytes"]
    else:
        with pytest.raises(ValueError):
            rbf.parse_size(size)


def test_checks_as_the_cli_s(tmp_path):
    """What the commands refuse as usage errors, the functions refuse."""
    trace = tmp_path / "t.txt"
    trace.write_text("a\nb\na\n")
    bad = [(["simulate", "--bits", 1000, "--hashes", 3, "--sigma", 300, "--threads", 5000],
            lambda: rbf.simulate(bits=1000, hashes=3, sigma=300, threads=5000)),
           (["simulate", "--bits", 1000, "--hashes", 3, "--sigma", 300, "--workload",
             "trace:%s" % trace, "--arrivals", 100],
            lambda: rbf.simulate(bits=1000, hashes=3, sigma=300, workload="trace:%s" % trace,
                                 arrivals=100)),
           (["model", "--bits", 1000, "--hashes", 3, "--sigma", 300, "--points", 1],
            lambda: rbf.model(bits=1000, hashes=3, sigma=300, points=1))]
    for args, call in bad:
        p = subprocess.run([CLI] + [str(a) for a in args], capture_output=True, text=True)
        assert p.returncode != 0, args
        with pytest.raises(ValueError):
            call()


def _trace(tmp_path):
    t = tmp_path / "trace.txt"
    t.write_text("".join("%d\n" % (i * 7919 % 3000) for i in range(12000)))
    return str(t)


@pytest.mark.parametrize("extra", [{}, {"arrivals": 4000}, {"replicas": 3},
                                   {"messages": 200, "oracle": True}])
def test_model_trace_matches_cli(tmp_path, extra):
    """rbf.model(fn="trace:FILE") is rbf model --fn trace:FILE --json."""
    tr = _trace(tmp_path)
    kw = dict(bits=4000, hashes=3, fn="trace:" + tr)
    kw.update(extra if "messages" in extra else dict(sigma=1200, **extra))
    py = rbf.model(**kw)
    cli = cli_json("model", *cli_args({k: v for k, v in kw.items() if k != "oracle"}),
                   *(["--oracle"] if kw.get("oracle") else []))
    same(py, cli, skip=("read_seconds", "model_seconds"))
    assert py["method"] == "replay" and py["lines"] == 12000 and py["distinct"] == 3000
    with pytest.raises(ValueError, match="arrivals"):
        rbf.model(bits=4000, hashes=3, sigma=1200, arrivals=100)
    with pytest.raises(ValueError, match="forget"):
        rbf.model(bits=4000, hashes=3, sigma=1200, fn="trace:" + tr, forget=[5])
    with pytest.raises(OSError):
        rbf.model(bits=4000, hashes=3, sigma=1200, fn="trace:" + tr + ".missing")


@pytest.mark.parametrize("case", [dict(bits=8000, fp=0.01, miss=0.5),
                                  dict(bits=200000, fp=0.01, miss=0.05),
                                  dict(bits=200000, fp=0.01, miss=0.05, arrivals=6000)])
def test_plan_trace_matches_cli(tmp_path, case):
    """rbf.plan(fn="trace:FILE", miss=) is rbf plan --fn trace:FILE --json."""
    kw = dict(case, fn="trace:" + _trace(tmp_path))
    same(rbf.plan(**kw), cli_json("plan", *cli_args(kw)))


def test_plan_remember_takes_the_hashing():
    kw = dict(bits=10000, fp=0.01, remember=50, miss=0.05, hashing="non-colliding")
    py = rbf.plan(**kw)
    assert py["hashing"] == "non-colliding"
    same(py, cli_json("plan", *cli_args(kw)))

