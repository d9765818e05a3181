"""Hypothesis state machines: random sequences of add / in / update /
recycle / clear / save+load / to_bytes+from_bytes / copy / pickle on
rbf.Filter, replayed by the C library (rbf_ref) at the end of each run:
every answer, the counters and the final image must be the C library's."""
import pickle

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import rbf
from conftest import item_bytes, new_cmd, run_ref, stats_tuple

ITEMS = st.one_of(
    st.binary(max_size=24),
    st.text(max_size=12),
    st.integers(min_value=-2**70, max_value=2**70),
    st.sampled_from([b"a", b"b", "a", 0, -1, b"0", b"-1"]),  # collide on purpose
)

CONFIGS = st.sampled_from([
    dict(bits=256, hashes=3, sigma=60),
    dict(bits=512, hashes=2, messages=20),
    dict(bits=512, hashes=3, sigma=100, phases=2),
    dict(bits=300, hashes=4, sigma=90, hashing="non-colliding", recycle="retaining"),
    dict(bits=1024, hashes=5, sigma=200, layout="blocked"),
    dict(bits=2048, hashes=3, messages=40, phases=2, layout="blocked"),
])


class FilterVsC(RuleBasedStateMachine):
    @initialize(cfg=CONFIGS, seed=st.integers(min_value=0, max_value=2**64 - 1))
    def start(self, cfg, seed):
        self.f = rbf.Filter(seed=seed, **cfg)
        self.lines = [new_cmd(self.f.config)]
        self.expect = []  # (kind, value, count of answer lines)
        self.tmp = None

    def _record(self, cmd, xs, got):
        self.lines += ["%s %s" % (cmd, item_bytes(x).hex()) for x in xs]
        self.expect.append(("list", [int(v) for v in got], len(xs)))

    @rule(x=ITEMS)
    def add(self, x):
        self._record("A", [x], [self.f.add(x)])

    @rule(x=ITEMS)
    def contains(self, x):
        self._record("E", [x], [x in self.f])

    @rule(xs=st.lists(ITEMS, max_size=30))
    def add_many(self, xs):
        self._record("A", xs, self.f.add_many(xs))

    @rule(xs=st.lists(ITEMS, max_size=30))
    def contains_many(self, xs):
        self._record("E", xs, self.f.contains_many(xs))

    @rule(xs=st.lists(ITEMS, max_size=30))
    def update(self, xs):
        n = self.f.update(iter(xs))
        self.lines += ["A %s" % item_bytes(x).hex() for x in xs]
        self.expect.append(("count", n, len(xs)))

    @rule()
    def recycle(self):
        self.f.recycle()
        self.lines.append("R")

    @rule()
    def clear(self):
        self.f.clear()
        self.lines += ["R"] * self.f.config["phases"]
        assert self.f.stats["bits_set"] == 0 and self.f.stats["frozen_bits_set"] == 0

    @rule(how=st.sampled_from(["bytes", "copy", "pickle", "file"]))
    def roundtrip(self, how):
        before = self.f.to_bytes()
        if how == "bytes":
            g = rbf.Filter.from_bytes(before)
        elif how == "copy":
            g = self.f.copy()
        elif how == "pickle":
            g = pickle.loads(pickle.dumps(self.f))
        else:
            import os
            import tempfile
            fd, path = tempfile.mkstemp(suffix=".rbf")
            os.close(fd)
            try:
                self.f.save(path)
                g = rbf.Filter.load(path)
            finally:
                os.unlink(path)
        assert g.to_bytes() == before
        self.f = g  # go on with the copy: it must behave exactly as the original

    @rule()
    def stats(self):
        self.lines.append("T")
        self.expect.append(("stats", stats_tuple(self.f.stats), 1))

    @invariant()
    def counters_agree(self):
        s = self.f.stats
        assert s["reported_new"] <= s["inserts"]

    def teardown(self):
        if not hasattr(self, "f"):
            return
        import os
        import tempfile
        fd, img = tempfile.mkstemp(suffix=".img")
        os.close(fd)
        try:
            self.lines.append("T")
            self.expect.append(("stats", stats_tuple(self.f.stats), 1))
            self.lines.append("D %s" % img)
            out = run_ref(self.lines)
            pos = 0
            for kind, v, n in self.expect:
                got = out[pos:pos + n]
                pos += n
                if kind == "stats":
                    assert got == [v]
                elif kind == "list":
                    assert [int(a) for a in got] == v
                else:
                    assert sum(int(a) for a in got) == v
            assert pos == len(out)
            with open(img, "rb") as fh:
                assert fh.read() == self.f.to_bytes()
        finally:
            os.unlink(img)


FilterVsC.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None,
                                       suppress_health_check=[HealthCheck.too_slow],
                                       derandomize=True)
TestFilterVsC = FilterVsC.TestCase
