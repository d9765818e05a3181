#!/usr/bin/env bash
# plan.sh -- `rbf plan` reproduces the planner example of MODEL.md 6 (JSON
# and table), honours --memory, --max-hashes and the variants, answers the
# least-memory question consistently with the forward plan, and rejects
# contradictory options with exit 2.
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD=plan

# jq-like check: jcheck PYTHON-EXPRESSION-ON-d
jcheck() {
  CHECKS=$((CHECKS + 1))
  python3 -c "import json,sys; d=json.load(open('$OUT')); sys.exit(0 if ($1) else 1)" ||
    bad "$ARGS: not ($1)"
}

for K in 14 32; do
  ARGS="--bits 1000 --fp 0.01 --max-hashes $K --json"
  expect_ok $ARGS
  jcheck "d['sigma_bounded']['hashes'] == 6 and d['sigma_bounded']['sigma'] == 606"
  jcheck "abs(d['sigma_bounded']['expected_messages'] - 155.5) < 0.05"
  jcheck "d['average_n']['hashes'] == 6 and d['average_n']['messages'] == 155"
  jcheck "d['oracle_n']['hashes'] == 5 and d['oracle_n']['messages'] == 155"
  jcheck "d['worst_case']['hashes'] == 7 and d['worst_case']['messages'] == 104"
  jcheck "d['worst_case']['gain_vs_worst_case'] == 1"
  jcheck "abs(d['sigma_bounded']['gain_vs_worst_case'] - d['sigma_bounded']['expected_messages'] / 104) < 1e-12"
  jcheck "all(d[p]['fp'] <= 0.01 for p in ('sigma_bounded', 'average_n', 'oracle_n', 'worst_case', 'two_phase'))"
  jcheck "d['two_phase']['bits_per_filter'] == 500 and d['max_hashes'] == $K and d['bits'] == 1000"
done

# --memory in bytes: 125 bytes = 1000 bits, the same plan
ARGS="--memory 125 --fp 0.01 --json"
expect_ok $ARGS
jcheck "d['bits'] == 1000 and d['sigma_bounded']['sigma'] == 606"
# the plan agrees with rbf model at its choice
ARGS="--bits 1000 --fp 0.01 --json"
expect_ok $ARGS
fp=$(python3 -c "import json; print(json.load(open('$OUT'))['sigma_bounded']['fp'])")
ARGS="--bits 1000 --hashes 6 --sigma 606 --json"
CMD=model expect_ok $ARGS
jcheck "abs(d['fp'] - $fp) < 1e-15 and d['fp'] <= 0.01"
ARGS="--bits 1000 --hashes 6 --sigma 607 --json"
CMD=model expect_ok $ARGS
jcheck "d['fp'] > 0.01"

# human output leads with the recommendation and the gain over worst case
ARGS="--bits 1000 --fp 0.01"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
head -1 "$OUT" | grep -q "^Recommended: sigma-bounded one-phase filter of 1000 bits" &&
  grep -q "+50% messages per cycle vs classic worst-case sizing (k = 7, N = 104)" "$OUT" &&
  grep -q "\.hashes = 6, \.sigma = 606" "$OUT" &&
  grep -q "^  two-phase " "$OUT" || bad "$ARGS: human output"

# variants reach the planner
ARGS="--bits 1000 --fp 0.01 --hashing non-colliding --recycle retaining --json"
expect_ok $ARGS
jcheck "d['hashing'] == 'non-colliding' and d['recycle'] == 'retaining' and d['sigma_bounded']['feasible']"

# an unreachable target is an answer, not an error
ARGS="--bits 10 --fp 1e-12 --json"
expect_ok $ARGS
jcheck "d['sigma_bounded']['feasible'] is False and d['sigma_bounded']['hashes'] is None"

# least memory: N per cycle fits in `bits` and not in bits - 1
ARGS="--capacity 155 --fp 0.01 --json"
expect_ok $ARGS
jcheck "d['capacity'] == 155 and d['sigma_bounded']['expected_messages'] >= 155 and d['bits'] <= 1000"
cp "$OUT" "$OUT.capacity"
# --messages: the old name of --capacity, the same answer and one line on stderr
ARGS="--messages 155 --fp 0.01 --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
cmp -s "$OUT" "$OUT.capacity" && [ "$(wc -l <"$ERR")" -eq 1 ] &&
  grep -q "^rbf plan: --messages is the old name of --capacity" "$ERR" ||
  bad "$ARGS: not the --capacity answer with one deprecation line ($(head -c 200 "$ERR"))"
rm -f "$OUT.capacity"
b=$(python3 -c "import json; print(json.load(open('$OUT'))['bits'])")
ARGS="--bits $((b - 1)) --fp 0.01 --json"
expect_ok $ARGS
jcheck "not d['sigma_bounded']['feasible'] or d['sigma_bounded']['expected_messages'] < 155"
ARGS="--capacity 1k --fp 0.001"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
head -1 "$OUT" | grep -q "^Least memory for 1000 messages per cycle" || bad "$ARGS: human output"

# the best k at the --max-hashes limit is pointed out; not otherwise
ARGS="--bits 1Mi --fp 1e-9 --max-hashes 4"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
grep -q "note: k = 4 is the largest k allowed (--max-hashes 4)" "$OUT" || bad "$ARGS: no --max-hashes note"
ARGS="--bits 1Mi --fp 1e-9 --max-hashes 4 --json"
expect_ok $ARGS
jcheck "d['k_at_max_hashes'] is True and d['sigma_bounded']['hashes'] == 4"
ARGS="--bits 1Mi --fp 1e-3"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
grep -q "largest k allowed" "$OUT" && bad "$ARGS: --max-hashes note without reason"
ARGS="--bits 1Mi --fp 1e-3 --json"
expect_ok $ARGS
jcheck "d['k_at_max_hashes'] is False"

# --method: at 16Mi the fast (asymptotic) plan is the exact one; at 1Gi the
# default (auto -> fast) finds the exact planner's sigma (573589773, from a
# 46 s exact run, docs/models.md 7); 2^44 bits and 10^12 messages answer
ARGS="--bits 16Mi --fp 0.001 --method exact --json"
expect_ok $ARGS
cp "$OUT" "$OUT.exact"
ARGS="--bits 16Mi --fp 0.001 --method fast --json"
expect_ok $ARGS
jcheck "d['method'] == 'fast'"
CHECKS=$((CHECKS + 1))
python3 - "$OUT.exact" "$OUT" <<'PY' || bad "$ARGS: fast plan differs from the exact plan"
import json, sys
e, f = (json.load(open(x)) for x in sys.argv[1:3])
for p in ("sigma_bounded", "average_n", "oracle_n", "worst_case", "two_phase"):
    for key in ("hashes", "sigma", "messages"):
        assert e[p].get(key) == f[p].get(key), (p, key, e[p], f[p])
    assert abs(f[p]["expected_messages"] / e[p]["expected_messages"] - 1) <= 1e-9, p
PY
ARGS="--bits 1Gi --fp 0.001 --json"
expect_ok $ARGS
jcheck "d['method'] == 'auto' and d['sigma_bounded']['hashes'] == 8 and d['sigma_bounded']['sigma'] == 573589773"
ARGS="--bits 16Ti --fp 0.001 --json"
expect_ok $ARGS
jcheck "d['sigma_bounded']['hashes'] == 8 and abs(d['sigma_bounded']['sigma'] / 2**44 - 0.5341969) < 1e-6 and d['sigma_bounded']['fp'] <= 0.001"
ARGS="--capacity 1000000000000 --fp 0.001 --json"
expect_ok $ARGS
jcheck "d['sigma_bounded']['expected_messages'] >= 1e12 and d['sigma_bounded']['hashes'] == 8"
expect_usage "--method" --bits 1000 --fp 0.01 --method paper

expect_usage "--memory" --bits 1000 --memory 1KiB --fp 0.01
expect_usage "--capacity" --bits 1000 --capacity 100 --fp 0.01
expect_usage "--max-hashes" --bits 1000 --fp 0.01 --max-hashes 257
finish
