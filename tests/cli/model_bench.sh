#!/usr/bin/env bash
# model_bench.sh -- `rbf bench model` runs (tiny sizes) and reports a sweep
# row per M and a plan row per size in its JSON.  No timing is asserted
# here: timings belong to the benchmark itself (docs/models.md).
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD="bench model"
ARGS="--max-log 11 --budget 0.5 --plan-logs 12,14 --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "$ARGS: unexpected JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hashes"] == 4 and d["clock"] == "cpu"
assert [r["bits"] for r in d["sweeps"]] == [1024, 2048]
assert all(r["fast_seconds"] > 0 and r["paper_seconds"] > 0 for r in d["sweeps"])
assert [p["bits"] for p in d["plans"]] == [4096, 16384]
PY
expect_usage "--max-log" --max-log 40
expect_usage "--plan-logs" --plan-logs 20,x
finish
