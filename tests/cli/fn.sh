#!/usr/bin/env bash
# fn.sh -- rbf model --fn / --oracle / --phases 2 --messages and
# rbf plan --remember (docs/models.md 8): values against rbf simulate,
# a gaps file against the same workload's closed form, usage errors.
. "$RBF_SRC/tests/data/cli_lib.bash"
TMPD=$(mktemp -d); trap 'rm -rf "$TMPD"' EXIT

# jget FILE KEY
jget() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print("null" if v is None else v)' "$1" "$2"; }

# near A B TOL: |A - B| <= TOL * |B|
near() { python3 -c 'import sys; a,b,t=map(float,sys.argv[1:]); sys.exit(0 if abs(a-b)<=t*abs(b) else 1)' "$1" "$2" "$3"; }

# model_vs_sim "MODEL ARGS" "SIM ARGS" KEY: model's KEY inside the simulated
# 99% interval widened by 2% (fixed seed)
model_vs_sim() {
  CHECKS=$((CHECKS + 1))
  CMD=model run_rbf $1 --json || { bad "model $1"; return; }
  cp "$OUT" "$TMPD/m.json"
  CMD=simulate run_rbf $2 --threads 1 --seed 5 --json || { bad "simulate $2"; return; }
  python3 - "$TMPD/m.json" "$OUT" "$3" <<'PY' || bad "model $1 vs simulate $2 ($3)"
import json, sys
m = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2])); key = sys.argv[3]
v = m[key]; mean = s[key]
lo, hi = s[key + "_ci99"]
print(f"{key}: model {v:.5f} sim {mean:.5f} [{lo:.5f}, {hi:.5f}]")
sys.exit(0 if lo * 0.98 - 1e-4 <= v <= hi * 1.02 + 1e-4 else 1)
PY
}

SIM="--bits 1000 --arrivals 200000 --warmup 10000 --epochs 6"
model_vs_sim "--bits 1000 --hashes 3 --sigma 300 --fn uniform:1000" "$SIM --hashes 3 --sigma 300 --workload uniform:1000" fn
model_vs_sim "--bits 1000 --hashes 4 --sigma 120 --phases 2 --recycle retaining --fn fading:0.3:400" \
  "$SIM --hashes 4 --sigma 120 --phases 2 --recycle retaining --workload fading:0.3:400" fn
model_vs_sim "--bits 1000 --hashes 5 --messages 80 --oracle --fn zipf:3000:0.8" \
  "$SIM --hashes 5 --messages 80 --oracle --workload zipf:3000:0.8" fn
model_vs_sim "--bits 1000 --hashes 5 --messages 100 --phases 2" \
  "$SIM --hashes 5 --messages 100 --phases 2 --workload uniform:100000" fp

# gaps:FILE with the uniform:1000 gap law (geometric, q = 1/1000) = uniform:1000
python3 -c '
q = 1/1000
print("gap,probability")
for t in range(1, 40001): print(f"{t},{q*(1-q)**(t-1):.17g}")' > "$TMPD/gaps.csv"
CMD=model expect_ok --bits 1000 --hashes 3 --sigma 300 --fn uniform:1000 --json
A=$(jget "$OUT" fn)
CMD=model expect_ok --bits 1000 --hashes 3 --sigma 300 --fn "gaps:$TMPD/gaps.csv" --new-fraction 0 --json
B=$(jget "$OUT" fn)
CHECKS=$((CHECKS + 1)); near "$B" "$A" 1e-4 || bad "gaps file $B != uniform $A"
# the same gaps in another order (the model sorts them; an ordered file is
# taken as it is): the same answer, to 1e-12 (the file's total mass is
# summed in the file's order)
cp "$OUT" "$TMPD/sorted.json"
python3 -c '
import random, sys
rows = open(sys.argv[1]).read().splitlines()
body = rows[1:]; random.Random(7).shuffle(body)
print("\n".join([rows[0]] + body))' "$TMPD/gaps.csv" > "$TMPD/gaps_shuf.csv"
CMD=model expect_ok --bits 1000 --hashes 3 --sigma 300 --fn "gaps:$TMPD/gaps_shuf.csv" --new-fraction 0 --json
CHECKS=$((CHECKS + 1))
python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d in (a, b):
    for k in ("read_seconds", "model_seconds", "workload"):
        d.pop(k, None)
def same(x, y):
    if isinstance(x, float) and isinstance(y, float):
        return abs(x - y) <= 1e-12 * abs(y)
    return x == y
ok = a.keys() == b.keys() and all(same(a[k], b[k]) for k in a) and 0.5 < a["fn"] < 1
sys.exit(0 if ok else 1)' "$TMPD/sorted.json" "$OUT" || bad "gaps file shuffled: not the same answer"
# a gaps file's reading and model times are reported (not for a closed form)
CHECKS=$((CHECKS + 1))
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["read_seconds"] >= 0 and d["model_seconds"] >= 0 else 1)' "$OUT" ||
  bad "gaps file: no read_seconds/model_seconds"
CMD=model expect_ok --bits 1000 --hashes 3 --sigma 300 --fn "gaps:$TMPD/gaps.csv" --new-fraction 0
CHECKS=$((CHECKS + 1)); grep -q '^seconds  *[0-9.e+-]* reading, [0-9.e+-]* model$' "$OUT" || bad "gaps file: no seconds line"
CMD=model expect_ok --bits 1000 --hashes 3 --sigma 300 --forget 10
CHECKS=$((CHECKS + 1)); grep -q '^seconds' "$OUT" && bad "--forget alone: a seconds line"

# --json names what it models
CMD=model expect_ok --bits 1000 --hashes 5 --messages 100 --oracle --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" oracle)" = True ] || bad "oracle not echoed"
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" fn)" = null ] || bad "fn not null without --fn"
CHECKS=$((CHECKS + 1)); near "$(jget "$OUT" fp)" 0.00183942003614 1e-9 || bad "oracle fp"

# A real user whose filter can fill before its N-th bit-setting message
# has exact_real = 1 (mass above 1e-30 on a full filter: MODEL.md's E_fp is
# infinite).  Whether it gets stuck in practice the cycle law says, with or
# without --fn: at 1000 bits per filter, k = 2, N = 680 a full filter has
# about 4e-19 a cycle and it recycles (rbf simulate: fp 0.48 one phase,
# 0.91 two phases); at N = 800 it fills (rbf simulate completes no cycle):
# fp 1, no mean cycle, fn 0 (every arrival reported seen)
CMD=model expect_ok --bits 1000 --hashes 2 --messages 680 --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" exact_real)" = 1 ] || bad "1000/2/680: exact_real not 1"
CMD=model expect_ok --bits 2000 --hashes 2 --messages 680 --phases 2 --json
F2=$(jget "$OUT" fp)
CHECKS=$((CHECKS + 1)); awk -v f="$F2" 'BEGIN { exit !(f > 0.9 && f < 0.95) }' || bad "2000/2/680 two-phase: fp $F2"
CMD=model expect_ok --bits 2000 --hashes 2 --messages 680 --phases 2 --fn uniform:3000 --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" fp)" = "$F2" ] || bad "2000/2/680 --fn: fp $(jget "$OUT" fp) != $F2"
CMD=model expect_ok --bits 1000 --hashes 2 --messages 680 --fn uniform:3000 --json
CHECKS=$((CHECKS + 1)); awk -v f="$(jget "$OUT" fp)" 'BEGIN { exit !(f > 0.45 && f < 0.52) }' ||
  bad "1000/2/680 --fn: fp $(jget "$OUT" fp)"
for PH in 1 2; do
  D=$((1000 * PH))
  if [ "$PH" = 2 ]; then
    CMD=model expect_ok --bits "$D" --hashes 2 --messages 800 --phases 2 --json
    CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" fp)" = 1 ] || bad "phases 2 800: fp not 1"
  fi
  CMD=model expect_ok --bits "$D" --hashes 2 --messages 800 --phases "$PH" --fn uniform:3000 --json
  CHECKS=$((CHECKS + 1))
  [ "$(jget "$OUT" fp)" = 1 ] && [ "$(jget "$OUT" cycle_mean)" = null ] &&
    [ "$(jget "$OUT" fn)" = 0 ] && [ "$(jget "$OUT" forgotten)" = null ] ||
    bad "phases $PH 800 --fn: not stuck: $(cat "$OUT")"
done
# N = 300: it recycles, and --fn runs the cycle law
CMD=model expect_ok --bits 2000 --hashes 2 --messages 300 --phases 2 --fn uniform:3000 --json
CHECKS=$((CHECKS + 1)); awk -v f="$(jget "$OUT" fp)" 'BEGIN { exit !(f > 0.2 && f < 0.5) }' ||
  bad "2000/2/300 two-phase --fn: fp $(jget "$OUT" fp)"

# --method reaches the two-phase N-bounded model and is echoed: exact (the
# hash-by-hash chain) and fast (the potentials) agree to 1e-9
CMD=model expect_ok --bits 512Ki --hashes 5 --messages 40000 --phases 2 --method exact --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" method)" = exact ] || bad "two-phase: method exact not echoed"
FE=$(jget "$OUT" fp)
CMD=model expect_ok --bits 512Ki --hashes 5 --messages 40000 --phases 2 --method fast --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" method)" = fast ] || bad "two-phase: method fast not echoed"
CHECKS=$((CHECKS + 1)); near "$(jget "$OUT" fp)" "$FE" 1e-9 || bad "two-phase fast $(jget "$OUT" fp) != exact $FE"

# 10^12 messages answer at once (no cycle-length law of 10^12 entries):
# the oracle from the N-bounded rates of the same N (two phases: held by
# neither filter), the two-phase real user 1 once its active filter fills
# (it never recycles)
for B in 1000 1Mi 1Ti; do
  CMD=model expect_ok --bits "$B" --hashes 7 --messages 1T --json; cp "$OUT" "$TMPD/one.json"
  CMD=model expect_ok --bits "$B" --hashes 7 --messages 1T --oracle --json; cp "$OUT" "$TMPD/or1.json"
  D="$((${B%%[KMGT]*} * 2))${B##*[0-9]}" # two filters of B bits each
  CMD=model expect_ok --bits "$D" --hashes 7 --messages 1T --oracle --phases 2 --json; cp "$OUT" "$TMPD/or2.json"
  CMD=model expect_ok --bits "$D" --hashes 7 --messages 1T --phases 2 --json
  CHECKS=$((CHECKS + 1))
  python3 - "$TMPD" "$OUT" <<'PY' || bad "--bits $B --messages 1T: oracle / two-phase"
import json, sys
d = sys.argv[1]
one, or1, or2 = (json.load(open(f"{d}/{n}.json")) for n in ("one", "or1", "or2"))
two = json.load(open(sys.argv[2]))
assert or1["fp"] == one["exact_oracle"] and or1["cycle_mean"] == 1e12, (or1, one)
# two filters of the one-phase filter's size: the oracle's two-phase rate
# from that size's worst and oracle rates
w, o = one["exact_worst"], one["exact_oracle"]
assert abs(or2["fp"] - (1 - (1 - o) * (1 - w))) <= 1e-15, (or2, one)
assert one["exact_real"] == 1 and two["fp"] == 1 and two["cycle_mean"] is None, (one, two)
assert two["saturated_at"] == one["saturated_at"], (two, one)
PY
done
# below saturation, the same values as the cycle-length law gives
CMD=model expect_ok --bits 1000 --hashes 5 --messages 100 --oracle --phases 2 --json
CHECKS=$((CHECKS + 1)); near "$(jget "$OUT" cycle_mean)" 100 1e-12 || bad "oracle two-phase cycle"

# the two-phase real user below saturation without --fn: from the one-phase
# rates of a filter of half the bits (exact_real, and exact_real_worst for
# the frozen filter), no cycle-length law, so at 2^29 bits per filter
# (once "out of memory": the law would have 7e7 entries) as at 500
for P in "1000 3 100" "1Gi 7 10M"; do
  set -- $P
  H=$(python3 -c "
u = {'Gi': 1 << 30}
s = '$1'
print(int(s[:-2]) * u[s[-2:]] // 2 if s[-2:] in u else int(s) // 2)")
  CMD=model expect_ok --bits "$H" --hashes "$2" --messages "$3" --json; cp "$OUT" "$TMPD/half.json"
  CMD=model expect_ok --bits "$1" --hashes "$2" --messages "$3" --phases 2 --json
  CHECKS=$((CHECKS + 1))
  python3 - "$TMPD/half.json" "$OUT" <<'PY' || bad "--bits $1 --messages $3 --phases 2: from the one-phase rates"
import json, sys
one, two = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
n = float(one["messages"])
efp = n * one["exact_real"] / (1 - one["exact_real"])
fp = (efp + n * one["exact_real_worst"]) / (n + efp)
assert 0 < two["fp"] < 1 and abs(two["fp"] / fp - 1) <= 1e-12, (two, fp)
assert abs(two["cycle_mean"] / (n + efp) - 1) <= 1e-12, (two, n + efp)
assert one["exact_real_worst"] >= one["exact_worst"], one
PY
done
CMD=model expect_ok --bits 1000 --hashes 3 --messages 100 --phases 2 --json
CHECKS=$((CHECKS + 1)); near "$(jget "$OUT" fp)" 0.124400714386991 1e-12 || bad "two-phase real user 1000/3/100"

# plan --remember: a choice with its phases, or the least memory
CMD=plan expect_ok --bits 1000 --fp 0.01 --remember 50 --miss 0.05 --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" phases)" = 2 ] || bad "remember 50: phases $(jget "$OUT" phases)"
M=$(jget "$OUT" miss); CHECKS=$((CHECKS + 1)); python3 -c "import sys; sys.exit(0 if float('$M') <= 0.05 else 1)" || bad "miss $M"
CMD=plan expect_ok --bits 1000 --fp 0.01 --remember 10 --miss 0.5 --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" phases)" = 1 ] || bad "remember 10: phases $(jget "$OUT" phases)"
CMD=plan expect_ok --memory 125 --fp 0.01 --remember 60 --miss 0.02 --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" feasible)" = False ] || bad "should be infeasible"
L=$(jget "$OUT" least_bits); CHECKS=$((CHECKS + 1)); [ "$L" != null ] && [ "$L" -gt 1000 ] || bad "least_bits $L"
CMD=plan expect_ok --bits "$L" --fp 0.01 --remember 60 --miss 0.02 --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" feasible)" = True ] || bad "least_bits $L is not feasible"

# remember past 2^17 ticks: decided by the bounds alone; a one-phase plan
# that surely spans W ticks forgets with probability (W + 1)/E[L], E[L]
# within a tick of E[N_0]
CMD=plan expect_ok --memory 1GiB --fp 0.01 --remember 200000 --json
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "remember 200000 at 1 GiB"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["feasible"] and d["phases"] == 1 and d["miss_is_bound"] is False, d
want = 200001 / d["expected_messages"]
assert abs(d["miss"] / want - 1) < 1e-6 and d["miss"] <= 0.01, (d["miss"], want)
PY
# miss 0 without retaining: the recycle's trigger is always forgotten, so no
# memory has a plan (answered without a search)
CMD=plan expect_ok --bits 1000 --fp 0.01 --remember 0 --miss 0 --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" feasible)" = False ] && [ "$(jget "$OUT" least_bits)" = null ] ||
  bad "miss 0: $(cat "$OUT")"

# --forget: the forgetting curve and its false negatives by gap (ticks)
for PH in 1 2; do
  B=$((1000 * PH))
  CMD=model expect_ok --bits $B --hashes 3 --sigma 300 --phases $PH --forget 0:600:50 --json
  CHECKS=$((CHECKS + 1))
  python3 - "$OUT" "$PH" <<'PY' || bad "--forget phases $PH: $(head -c 400 "$OUT")"
import json, sys
d = json.load(open(sys.argv[1])); ph = int(sys.argv[2]); fp = d["fp"]
g = d["forget"]
assert [x["gap"] for x in g] == list(range(0, 601, 50)), g
prev_f = prev_m = 0.0
for x in g:
    f, m = x["forgotten"], x["false_negative"]
    assert 0 <= m <= f <= 1 and f >= prev_f and m >= prev_m, x
    prev_f, prev_m = f, m
# long gaps: forgotten for sure, a false negative unless a false positive
assert g[-1]["forgotten"] == 1 and abs(g[-1]["false_negative"] - (1 - fp)) < 1e-9, (g[-1], fp)
# one phase, gap 0: only the trigger (1/E[L]), and a fresh filter has no false positives
if ph == 1:
    assert abs(g[0]["forgotten"] - 1 / d["cycle_mean"]) < 1e-9 and g[0]["false_negative"] == g[0]["forgotten"], g[0]
PY
done
# a filter that never recycles forgets nothing: null
CMD=model expect_ok --bits 1000 --hashes 2 --messages 800 --forget 10 --json
CHECKS=$((CHECKS + 1)); [ "$(jget "$OUT" forget)" = null ] || bad "stuck --forget: $(cat "$OUT")"

# usage errors
CMD=model expect_usage "--forget" --bits 1000 --hashes 3 --sigma 300 --forget 1:2:0
CMD=model expect_usage "--forget" --bits 1000 --hashes 3 --sigma 300 --forget 0:20000
CMD=model expect_usage "--forget" --bits 1000 --hashes 3 --sigma 300 --forget 10,,20
CMD=model expect_usage "--forget" --bits 1000 --hashes 3 --sigma 300 --forget x
CMD=model expect_usage "--new-fraction" --bits 1000 --hashes 3 --sigma 300 --fn uniform:10 --new-fraction 0.5
CMD=model expect_usage "--new-fraction" --bits 1000 --hashes 3 --sigma 300 --fn "gaps:$TMPD/gaps.csv"
CMD=model expect_usage "trace" --bits 1000 --hashes 3 --sigma 300 --fn trace:/dev/null
CMD=model expect_usage "--oracle" --bits 1000 --hashes 3 --sigma 300 --oracle
CMD=model expect_usage "--fn" --bits 1000 --hashes 3 --sigma 300 --fn nonsense:1
CMD=plan expect_usage "--miss" --bits 1000 --fp 0.01 --miss 0.1
CMD=plan expect_usage "--layout" --bits 4096 --fp 0.01 --remember 100 --layout blocked
finish
