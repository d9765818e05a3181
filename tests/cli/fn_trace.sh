#!/usr/bin/env bash
# fn_trace.sh -- rbf model --fn trace:FILE (docs/models.md 9.5) against rbf
# simulate on a real text (tests/data/kjv_genesis.txt: the first 24000
# words of the King James Bible, from Debian's bible-kjv-text), whole epochs
# and steady state; exact answers on tiny traces; usage errors.
# RBF_TEST_SHRINK > 1 (valgrind): a shorter excerpt and fewer cases.
. "$RBF_SRC/tests/data/cli_lib.bash"
TMPD=$(mktemp -d); trap 'rm -rf "$TMPD"' EXIT
SHRINK=${RBF_TEST_SHRINK:-1}
E=6
LINES=$((24000 / SHRINK))
[ "$LINES" -ge 6000 ] || LINES=6000 # shorter ones forget nothing at these sizes
head -n "$LINES" "$RBF_SRC/tests/data/kjv_genesis.txt" > "$TMPD/t.txt"
A=$((LINES / E))

# model_vs_sim "FILTER ARGS": the model (--arrivals A, the arrivals of one
# epoch) inside the simulated 99% interval, or within 5% of its mean (the
# criterion of docs/models.md 9.5), for fp and fn, whole epochs and (where
# at least two epochs recycled twice) the steady state.  Fixed seeds.
model_vs_sim() {
  CHECKS=$((CHECKS + 1))
  CMD=model run_rbf $1 --fn "trace:$TMPD/t.txt" --arrivals "$A" --json || { bad "model $1"; return; }
  cp "$OUT" "$TMPD/m.json"
  CMD=simulate run_rbf $1 --workload "trace:$TMPD/t.txt" --epochs "$E" --threads 1 --json ||
    { bad "simulate $1"; return; }
  python3 - "$TMPD/m.json" "$OUT" <<'PY' || bad "model vs simulate: $1"
import json, sys
m = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
ok = True
def check(name, v, mean, ci):
    global ok
    if mean is None:
        return
    inside = ci is not None and ci[0] <= v <= ci[1]
    near = abs(v - mean) <= 0.05 * abs(mean) or (mean == 0 and v < 1e-4)
    print(f"{name}: model {v:.5g} sim {mean:.5g} {ci} {'ok' if inside or near else 'FAIL'}")
    ok = ok and (inside or near)
check("fp", m["whole"]["fp"], s["fp"], s["fp_ci99"])
check("fn", m["whole"]["fn"], s["fn"], s["fn_ci99"])
if s["steady_epochs"] >= 2 and m["steady"]["cycles"] > 0:
    check("steady fn", m["steady"]["fn"], s["steady_fn"], s["steady_fn_ci99"])
if not s["fn"] or s["fn"] <= 0:
    print("the case must exercise forgetting")
    ok = False
sys.exit(0 if ok else 1)
PY
}

model_vs_sim "--bits 500 --hashes 1 --sigma 150"
model_vs_sim "--bits 800 --hashes 2 --sigma 150 --phases 2"
if [ "$SHRINK" -le 1 ]; then
  model_vs_sim "--bits 1200 --hashes 2 --sigma 500 --recycle retaining"
  model_vs_sim "--bits 4000 --hashes 4 --messages 250"
  model_vs_sim "--bits 1000 --hashes 2 --messages 100 --oracle"
fi

# The two-phase oracle where most of the fill comes from re-inserted repeats:
# a Zipf(1.2) stream over 3000 words (a fixed generator), 240000 arrivals,
# 24 epochs of 10000.  The model counts the re-inserted words against the
# frozen filter's words (docs/models.md 9.5); the mean field it replaced was
# 7.6% low here (0.2269 against 0.2456 [0.2402, 0.2509], the simulator of
# that build; the simulator now gives each epoch its own hash function).  Tighter than the
# criterion above: inside the simulated 99% interval and within 3% of its
# mean, fp and fn.
python3 - "$TMPD/z.txt" <<'PY'
import bisect, itertools, sys
x = 12345
w = list(itertools.accumulate(1.0 / r ** 1.2 for r in range(1, 3001)))
with open(sys.argv[1], "w") as f:
    for i in range(240000):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        f.write("w%d\n" % bisect.bisect_left(w, (x >> 11) / float(1 << 53) * w[-1]))
PY
CHECKS=$((CHECKS + 1))
ZC="--bits 2000 --hashes 3 --messages 200 --oracle --phases 2"
# shellcheck disable=SC2086
if CMD=model run_rbf $ZC --fn "trace:$TMPD/z.txt" --arrivals 10000 --json; then
  cp "$OUT" "$TMPD/zm.json"
  # shellcheck disable=SC2086
  CMD=simulate run_rbf $ZC --workload "trace:$TMPD/z.txt" --epochs 24 --threads 1 --json &&
    python3 - "$TMPD/zm.json" "$OUT" <<'PY' || bad "two-phase oracle on a Zipf stream"
import json, sys
m = json.load(open(sys.argv[1]))["whole"]; s = json.load(open(sys.argv[2]))
ok = True
for name in ("fp", "fn"):
    v, mean, ci = m[name], s[name], s[name + "_ci99"]
    good = ci[0] <= v <= ci[1] and abs(v - mean) <= 0.03 * mean
    print(f"{name}: model {v:.5g} sim {mean:.5g} {ci} {'ok' if good else 'FAIL'}")
    ok = ok and good
sys.exit(0 if ok and s["fn"] > 0.001 else 1)
PY
else
  bad "model $ZC"
fi

# Exact answers.  "a b a b ...": the oracle with N = 1 recycles at every new
# arrival, so every repeat is forgotten, and an empty filter has no false
# positive: fn = 1, tick_fraction = 1 (whatever the draws).
for i in $(seq 1 50); do printf 'a\nb\n'; done > "$TMPD/ab.txt"
CHECKS=$((CHECKS + 1))
CMD=model run_rbf --bits 1000 --hashes 3 --messages 1 --oracle --fn "trace:$TMPD/ab.txt" --json &&
  python3 - "$OUT" <<'PY' || bad "oracle N=1 on a b a b"
import json, sys
m = json.load(open(sys.argv[1]))
w = m["whole"]
print(w)
sys.exit(0 if w["fn"] == 1.0 and w["tick_fraction"] == 1.0 and w["repeats"] == 98 else 1)
PY
# One message: a single tick, no recycle, no false negative.
yes x | head -n 100 > "$TMPD/x.txt"
CHECKS=$((CHECKS + 1))
CMD=model run_rbf --bits 1000 --hashes 3 --sigma 300 --fn "trace:$TMPD/x.txt" --json &&
  python3 - "$OUT" <<'PY' || bad "one message"
import json, sys
w = json.load(open(sys.argv[1]))["whole"]
sys.exit(0 if w["fn"] == 0.0 and w["repeats"] == 99 and abs(w["tick_fraction"] - 0.01) < 1e-12 else 1)
PY

# The replicas' spread: several replicas give a standard error, one none.
CHECKS=$((CHECKS + 1))
CMD=model run_rbf --bits 500 --hashes 1 --sigma 150 --fn "trace:$TMPD/t.txt" --replicas 4 --json &&
  python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["whole"]; sys.exit(0 if w["fn_se"] and w["fn_se"] > 0 else 1)' "$OUT" ||
  bad "replicas: a standard error"

# The forgetting curve by gap in arrivals adds up to the totals, forgets
# more at longer gaps (one phase, many cycles), and forgets nothing at gap 1
# beyond the cycle ends.
CHECKS=$((CHECKS + 1))
CMD=model run_rbf --bits 500 --hashes 1 --sigma 150 --fn "trace:$TMPD/t.txt" --arrivals "$A" --json &&
  python3 - "$OUT" <<'PY' || bad "forget curve"
import json, sys
m = json.load(open(sys.argv[1])); w = m["whole"]; c = m["forget_curve"]
rep = sum(b["repeats"] for b in c)
forg = sum(b["repeats"] * b["forgotten"] for b in c) / rep
fn = sum(b["repeats"] * b["fn"] for b in c) / rep
print(rep, w["repeats"], forg, w["forgotten"], fn, w["fn"])
ok = abs(rep - w["repeats"]) < 1e-6 * rep and abs(forg - w["forgotten"]) < 1e-9 and abs(fn - w["fn"]) < 1e-9
f = [b["forgotten"] for b in c if b["repeats"] >= 5]
ok = ok and all(b >= a - 0.02 for a, b in zip(f, f[1:])) and f[-1] > 0.5 and c[0]["forgotten"] < 0.05
sys.exit(0 if ok else 1)
PY

# rbf plan --fn trace: none at 3000 bits for fn <= 0.05 at fp <= 0.01; the
# least memory it names has a plan, whose fn on the trace the simulation
# confirms (one epoch: within 10%), and 5% less memory has none.
# (RBF_TEST_SHRINK > 4, valgrind: the plan at 6500 bits only, not the search)
LEAST=
if [ "$SHRINK" -gt 4 ]; then
  LEAST=6500
else
CHECKS=$((CHECKS + 1))
CMD=plan run_rbf --bits 3000 --fp 0.01 --fn "trace:$TMPD/t.txt" --miss 0.05 --json &&
  LEAST=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["least_bits"] if not d["feasible"] and d["least_bits"] else "")' "$OUT") &&
  [ -n "$LEAST" ] || bad "plan --fn: a least memory"
fi
if [ -n "${LEAST:-}" ]; then
  CHECKS=$((CHECKS + 1))
  CMD=plan run_rbf --bits "$LEAST" --fp 0.01 --fn "trace:$TMPD/t.txt" --miss 0.05 --json && cp "$OUT" "$TMPD/p.json" &&
    ARGS=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["feasible"] and d["fp"] <= 0.01 and d["fn"] <= 0.05; print("--bits %d --hashes %d --sigma %d --phases %d" % (d["bits"], d["hashes"], d["sigma"], d["phases"]))' "$TMPD/p.json") &&
    CMD=simulate run_rbf $ARGS --workload "trace:$TMPD/t.txt" --epochs 1 --threads 1 --json &&
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); s=json.load(open(sys.argv[2])); print(p["fn"], s["fn"]); sys.exit(0 if abs(p["fn"] - s["fn"]) <= 0.1 * s["fn"] else 1)' "$TMPD/p.json" "$OUT" ||
    bad "plan --fn at the least memory $LEAST"
  [ "$SHRINK" -gt 4 ] || { CHECKS=$((CHECKS + 1))
  CMD=plan run_rbf --bits $((LEAST * 95 / 100)) --fp 0.01 --fn "trace:$TMPD/t.txt" --miss 0.05 --json &&
    python3 -c 'import json,sys; sys.exit(0 if not json.load(open(sys.argv[1]))["feasible"] else 1)' "$OUT" ||
    bad "plan --fn below the least memory"; }
fi
CMD=plan
expect_usage "fn" --bits 3000 --fp 0.01 --fn uniform:100
expect_usage "arrivals" --bits 3000 --fp 0.01 --arrivals 10

CMD=model
expect_usage "arrivals" --bits 1000 --hashes 3 --sigma 300 --fn uniform:100 --arrivals 10
expect_usage "arrivals" --bits 1000 --hashes 3 --sigma 300 --fn "trace:$TMPD/x.txt" --arrivals 1000
expect_usage "new-fraction" --bits 1000 --hashes 3 --sigma 300 --fn "trace:$TMPD/x.txt" --new-fraction 0.1
expect_fail "cannot read" --bits 1000 --hashes 3 --sigma 300 --fn "trace:$TMPD/none.txt"
finish
