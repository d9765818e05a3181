#!/usr/bin/env bash
# plan_blocked.sh -- `rbf plan --layout`: both layouts' sigma-bounded plans
# and their messages per cycle per bit; blocked bits rounded down to whole
# blocks; the blocked plan's rate meets the target per `rbf model`.
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD=plan

ARGS="--bits 100000 --fp 0.01 --layout blocked"
expect_ok $ARGS --json
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "$ARGS: layouts"
import json, sys
d = json.load(open(sys.argv[1]))
f, b = d["layouts"]["flat"], d["layouts"]["blocked"]
ok = d["layout"] == "blocked" and b["bits"] == 99840 and f["bits"] == 100000
ok = ok and f["hashes"] == d["sigma_bounded"]["hashes"] and f["sigma"] == d["sigma_bounded"]["sigma"]
ok = ok and b["fp"] <= 0.01 and 0.9 < d["blocked_vs_flat_per_bit"] < 1.0
ok = ok and abs(b["messages_per_cycle_per_bit"] - b["expected_messages"] / 99840) < 1e-12
open(sys.argv[1] + ".k", "w").write("%d %d\n" % (b["hashes"], b["sigma"]))
sys.exit(0 if ok else 1)
PY
read -r K S < "$OUT.k"
# the plan's sigma is the largest that meets the target
CMD=model
ARGS="--bits 99840 --hashes $K --sigma $S --layout blocked"; expect_ok $ARGS --json
CHECKS=$((CHECKS + 1))
python3 -c "import json,sys; sys.exit(0 if json.load(open('$OUT'))['fp'] <= 0.01 else 1)" || bad "$ARGS"
ARGS="--bits 99840 --hashes $K --sigma $((S + 1)) --layout blocked"; expect_ok $ARGS --json
CHECKS=$((CHECKS + 1))
python3 -c "import json,sys; sys.exit(0 if json.load(open('$OUT'))['fp'] > 0.01 else 1)" || bad "$ARGS"
CMD=plan

ARGS="--bits 100000 --fp 0.01 --layout flat"
expect_ok $ARGS
grep -q "^Layouts" "$OUT" || bad "$ARGS: no layouts table"
grep -q "fewer messages per cycle per bit than flat" "$OUT" || bad "$ARGS: no price line"
# --capacity with --layout: the least whole blocks whose blocked plan holds N
ARGS="--capacity 1000 --fp 0.01 --layout blocked"
expect_ok $ARGS --json
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "$ARGS: blocked least memory"
import json, sys
d = json.load(open(sys.argv[1]))
b = d["layouts"]["blocked"]
ok = d["blocked_bits"] % 512 == 0 and b["bits"] == d["blocked_bits"]
ok = ok and d["blocked_memory_bytes"] * 8 == d["blocked_bits"]
ok = ok and b["expected_messages"] >= 1000 and b["fp"] <= 0.01
ok = ok and d["layouts"]["flat"]["bits"] == d["bits"] and d["blocked_bits"] >= d["bits"]
open(sys.argv[1] + ".b", "w").write("%d\n" % (d["blocked_bits"] - 512))
sys.exit(0 if ok else 1)
PY
read -r BM < "$OUT.b"
# one block less does not hold 1000
ARGS="--bits $BM --fp 0.01 --layout blocked"; expect_ok $ARGS --json
CHECKS=$((CHECKS + 1))
python3 -c "import json,sys; sys.exit(0 if json.load(open('$OUT'))['layouts']['blocked']['expected_messages'] < 1000 else 1)" || bad "$ARGS"
expect_usage "--layout" --bits 100 --fp 0.01 --layout blocked
expect_usage "--layout" --bits 10000 --fp 0.01 --layout tiled
finish
