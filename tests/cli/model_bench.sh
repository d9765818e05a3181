#!/usr/bin/env bash
# model_bench.sh -- `rbf bench model` runs (tiny sizes) and reports a sweep
# row per M, a plan row per size and a fast-vs-exact gap row per size in
# its JSON.  No timing is asserted
# here: timings belong to the benchmark itself (docs/models.md).
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD="bench model"
ARGS="--max-log 11 --budget 0.5 --plan-logs 12,14,44 --gap-max-log 20 --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "$ARGS: unexpected JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hashes"] == 4 and d["clock"] == "cpu"
assert [r["bits"] for r in d["sweeps"]] == [1024, 2048]
assert all(r["fast_seconds"] > 0 and r["paper_seconds"] > 0 for r in d["sweeps"])
assert [p["bits"] for p in d["plans"]] == [4096, 16384, 2**44]
# the asymptotic method against the exact pass at 2^20: within 1e-9, same plan
assert [g["bits"] for g in d["gaps"]] == [2**20]
assert 0 < d["gaps"][0]["model_gap"] <= 1e-9, d["gaps"]
assert d["gaps"][0]["plan_same"] is True and d["gaps"][0]["capacity_gap"] <= 1e-9
PY
expect_usage "--max-log" --max-log 40
expect_usage "--plan-logs" --plan-logs 20,x
expect_usage "--plan-logs" --plan-logs 45
expect_usage "--gap-max-log" --gap-max-log 33
finish
