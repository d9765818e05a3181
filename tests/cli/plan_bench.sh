#!/usr/bin/env bash
# plan_bench.sh -- `rbf bench plan` runs (one mode, one rate, one variant)
# and reports a row per mode with its calls and quantiles in its JSON.  No
# timing is asserted here: timings belong to the benchmark itself
# (docs/models.md 4).
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD="bench plan"
ARGS="--only blocked-capacity --fp 0.01 --variants default --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "$ARGS: unexpected JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["clock"] == "cpu" and d["failures"] == 0
(r,) = d["rows"]
# capacities 100 .. 1e10 by powers of 10: nine calls
assert r["mode"] == "blocked-capacity" and r["calls"] == 9, r
assert 0 < r["p50_ms"] <= r["p95_ms"] <= r["max_ms"], r
s = r["slowest"]
assert s["status"] == 0 and s["fp"] == 0.01 and s["messages"] in [10**i for i in range(2, 11)], s
PY
ARGS="--quick --only flat-memory --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "$ARGS: unexpected JSON"
import json, sys
d = json.load(open(sys.argv[1]))
(r,) = d["rows"]
# --quick: memory 1 KiB .. 1 GiB by powers of 16 (six), rates 0.01 and 1e-6
assert r["mode"] == "flat-memory" and r["calls"] == 12, r
assert r["slowest"]["bits"] in [8 * 2**b for b in range(10, 31, 4)], r
PY
expect_usage "--only" --only tiled
expect_usage "--fp" --fp 0,0.1
expect_usage "--variants" --variants some
finish
