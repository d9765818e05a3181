#!/usr/bin/env bash
# model.sh -- `rbf model` gives the values of MODEL.md 6 (JSON, table and
# CSV forms), echoes its inputs, and treats --phases 2 --bits as the total.
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD=model

# jcheck KEY WANT [TOL]: the JSON on $OUT has KEY within TOL relative of WANT
jcheck() {
  CHECKS=$((CHECKS + 1))
  python3 - "$OUT" "$1" "$2" "${3:-1e-10}" <<'PY' || bad "$ARGS: $1 != $2"
import json, sys
d = json.load(open(sys.argv[1]))
key, want, tol = sys.argv[2], sys.argv[3], float(sys.argv[4])
got = d[key]
try:
    w = float(want)
    ok = isinstance(got, (int, float)) and abs(got - w) <= tol * abs(w)
except ValueError:
    ok = str(got) == want
sys.exit(0 if ok else 1)
PY
}

for method in fast paper; do
  ARGS="--bits 1000 --hashes 3 --sigma 300 --method $method"
  expect_ok $ARGS --json
  jcheck fp 0.00750723486414; jcheck expected_messages 119.153581653
  jcheck bits 1000; jcheck hashes 3; jcheck sigma 300; jcheck phases 1
  jcheck hashing colliding; jcheck recycle non-retaining; jcheck method $method
  ARGS="--bits 1000 --hashes 3 --sigma 300 --recycle retaining --method $method"
  expect_ok $ARGS --json; jcheck fp 0.00757051775451; jcheck recycle retaining
  ARGS="--bits 1000 --hashes 3 --sigma 300 --hashing non-colliding --method $method"
  expect_ok $ARGS --json; jcheck fp 0.0074316810054; jcheck expected_messages 119.034682001
  ARGS="--bits 1000 --hashes 3 --sigma 300 --hashing non-colliding --recycle retaining --method $method"
  expect_ok $ARGS --json; jcheck fp 0.00749439011159
  ARGS="--bits 1000 --hashes 1 --sigma 500 --method $method"
  expect_ok $ARGS --json; jcheck fp 0.278770815295
  ARGS="--bits 10k --hashes 7 --sigma 6000 --method $method"   # suffix
  expect_ok $ARGS --json; jcheck fp 0.00498180288102; jcheck expected_messages 1309.30819464
  jcheck bits 10000
  # --phases 2: --bits is the total, two filters of 500
  ARGS="--bits 1000 --hashes 3 --sigma 200 --phases 2 --method $method"
  expect_ok $ARGS --json; jcheck fp 0.0808680840295; jcheck bits_per_filter 500
  python3 -c "import json,sys; d=json.load(open('$OUT')); sys.exit(0 if abs(1-(1-d['fp_active'])*(1-d['fp_frozen'])-d['fp'])<1e-15 else 1)" ||
    bad "$ARGS: fp != 1-(1-fp_active)(1-fp_frozen)"
done

ARGS="--bits 1000 --hashes 5 --messages 100"
expect_ok $ARGS --json
jcheck f_w 0.00944912525434; jcheck f_o 0.00183255166536; jcheck f_a 0.00183879886327
jcheck exact_worst 0.00948248425817; jcheck exact_oracle 0.00183942003614
jcheck exact_real 0.00185310094183; jcheck messages 100
ARGS="--bits 1000 --hashes 5 --messages 200"
expect_ok $ARGS --json; jcheck exact_real 0.0257235481745

# readable table: the values, aligned, no JSON
ARGS="--bits 1000 --hashes 3 --sigma 300"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
grep -q "^fp  *0.00750723486414" "$OUT" && grep -q "^expected_messages  *119.153581653" "$OUT" ||
  bad "$ARGS: table lacks the values"

# --curve: header, one row per sigma 1..S, last row equal to the point value
ARGS="--bits 1000 --hashes 3 --sigma 300 --curve"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
[ "$(head -1 "$OUT")" = "sigma,fp,expected_messages" ] && [ "$(wc -l <"$OUT")" -eq 301 ] &&
  awk -F, 'END { exit !($1 == 300 && ($2 - 0.00750723486414)^2 < 1e-26) }' "$OUT" ||
  bad "$ARGS: wrong CSV"
ARGS="--bits 1000 --hashes 3 --sigma 200 --phases 2 --curve"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
[ "$(head -1 "$OUT")" = "sigma,fp,fp_active,fp_frozen,expected_messages" ] &&
  awk -F, 'END { exit !($1 == 200 && ($2 - 0.0808680840295)^2 < 1e-24) }' "$OUT" ||
  bad "$ARGS: wrong CSV"
ARGS="--bits 1000 --hashes 5 --messages 200 --curve"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
[ "$(wc -l <"$OUT")" -eq 201 ] && awk -F, 'NR == 101 { ok = ($1 == 100 && ($7 - 0.00185310094183)^2 < 1e-26) } END { exit !ok }' "$OUT" ||
  bad "$ARGS: wrong CSV"
ARGS="--bits 1000 --hashes 3 --sigma 10 --recycle retaining --curve"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
[ "$(sed -n 2p "$OUT" | cut -d, -f1)" = 3 ] || bad "$ARGS: retaining curve should start at sigma = k"

# --curve --method paper: the same curve from the paper's method
for rec in non-retaining retaining; do
  ARGS="--bits 100 --hashes 3 --sigma 60 --recycle $rec --curve"
  expect_ok $ARGS; cp "$OUT" "$WORK/fast.csv"
  expect_ok $ARGS --method paper
  CHECKS=$((CHECKS + 1))
  paste -d, "$WORK/fast.csv" "$OUT" | awk -F, 'NR > 1 { for (i = 2; i <= 3; i++) { d = $i - $(i + 3); if (d < 0) d = -d; if (d > 1e-10 * $i) bad = 1 } } END { exit bad }' ||
    bad "$ARGS: fast and paper curves differ"
done

# any N answers at once past saturation, and says so
ARGS="--bits 1000 --hashes 3 --messages 1T --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 -c "
import json; d = json.load(open('$OUT'))
assert d['exact_worst'] == 1 and d['exact_real'] == 1 and d['saturated_at'] == 25316, d
assert 1 - 1e-8 < d['exact_oracle'] < 1 and abs(d['f_o'] / d['exact_oracle'] - 1) < 1e-9, d
" || bad "$ARGS: saturation"
ARGS="--bits 1000 --hashes 3 --messages 1T"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
grep -q "^saturated          from n = 25316" "$OUT" || bad "$ARGS: no saturation line"
# three_way WHAT PYTHON: ARGS with --method exact, auto and fast; PYTHON
# (statements) sees them as e, a and f
three_way() {
  expect_ok $ARGS --method exact; cp "$OUT" "$OUT.exact"
  expect_ok $ARGS; cp "$OUT" "$OUT.auto"
  expect_ok $ARGS --method fast
  CHECKS=$((CHECKS + 1))
  python3 -c "
import json; e = json.load(open('$OUT.exact')); a = json.load(open('$OUT.auto')); f = json.load(open('$OUT'))
$2" || bad "$ARGS: $1"
}
# above 2^22 messages auto takes the fast exact rates at any size (the
# propagation would run N k W steps): past saturation the same n and values
# as the propagation (--method exact, seconds at 64Ki bits)
ARGS="--bits 64Ki --hashes 7 --messages 5M --json"
three_way "auto above 2^22 messages" "
assert a['method'] == 'auto' and e['saturated_at'] == a['saturated_at'] == 750550, (e, a)
for k in ('exact_worst', 'exact_oracle', 'exact_real'):
    assert a[k] == f[k] and abs(a[k] / e[k] - 1) <= 1e-9, (k, a[k], f[k], e[k])"
# auto takes the fast rates where the propagation would cost N k sqrt(M) >
# 5e7 (here 1.1e8, heavy load: the potentials of exact_real to O(1/N^2)),
# and they equal the propagation (--method exact) to 1e-9; below that cost
# (64Ki bits, k = 32, N = 5000: 4.1e7) auto is the propagation, digit for digit
ARGS="--bits 256Ki --hashes 8 --messages 27000 --json"
three_way "auto where the chain is costly" "
assert 1e-4 < e['exact_real'] < 0.9, e
for k in ('exact_worst', 'exact_oracle', 'exact_real'):
    assert a[k] == f[k] and abs(a[k] / e[k] - 1) <= 1e-9, (k, a[k], f[k], e[k])"
# where the potentials refuse exact_real (k = 32 at 2^18 bits), auto and
# fast step the chain a message at a time by its kernel: the hash-by-hash
# chain's values (--method exact) to 1e-11, both hashings.  Under the
# sanitizers (RBF_TEST_SHRINK > 1) the same path at 2^16 bits, N = 7000
# (cost 5.7e7, exact_real 0.086): the 2^18-bit propagation takes a minute
# or more there
KCHAIN="--bits 256Ki --hashes 32 --messages 12288"
[ "${RBF_TEST_SHRINK:-1}" -le 1 ] || KCHAIN="--bits 64Ki --hashes 32 --messages 7000"
for h in colliding non-colliding; do
  ARGS="$KCHAIN --hashing $h --json"
  three_way "the kernel chain" "
assert 1e-6 < e['exact_real'] < 0.1, e
for k in ('exact_worst', 'exact_oracle', 'exact_real', 'exact_real_worst'):
    assert a[k] == f[k] and abs(a[k] / e[k] - 1) <= 1e-11, (k, a[k], f[k], e[k])"
done
ARGS="--bits 64Ki --hashes 32 --messages 5000 --json"
expect_ok $ARGS --method exact; cp "$OUT" "$OUT.exact"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 -c "
import json; e = json.load(open('$OUT.exact')); a = json.load(open('$OUT'))
for k in ('exact_worst', 'exact_oracle', 'exact_real'):
    assert a[k] == e[k], (k, a[k], e[k])
" || bad "$ARGS: auto below the chain's cost is the propagation"
# the fast exact N-bounded rates (auto above 2^22 bits) = the propagation
# (--method exact) where that is cheap (light load), both hashings
for h in colliding non-colliding; do
  ARGS="--bits 8Mi --hashes 8 --messages 2000 --hashing $h --json"
  expect_ok $ARGS --method exact; cp "$OUT" "$OUT.exact"
  expect_ok $ARGS
  CHECKS=$((CHECKS + 1))
  python3 -c "
import json; e = json.load(open('$OUT.exact')); f = json.load(open('$OUT'))
for k in ('exact_worst', 'exact_oracle', 'exact_real'):
    assert abs(f[k] / e[k] - 1) <= 1e-9, (k, f[k], e[k])
" || bad "$ARGS: fast != exact"
done
# 10^12 messages at 2^44 bits answer (the propagation would take hours):
# Jensen (exact_worst >= f_w, exact_oracle >= f_o) and E_fp >= N oracle
ARGS="--bits 16Ti --hashes 7 --messages 1T --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 -c "
import json; d = json.load(open('$OUT'))
assert d['exact_worst'] >= d['f_w'] * (1 - 1e-12) and d['exact_oracle'] >= d['f_o'] * (1 - 1e-12), d
o = d['exact_oracle']
assert o / (1 + o) <= d['exact_real'] < d['exact_worst'], d
" || bad "$ARGS: 10^12 messages"
# sampled curves at any size; a full curve of 2^39 rows needs --force
ARGS="--bits 1Ti --hashes 8 --sigma 512Gi --curve --points 5"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
[ "$(wc -l < "$OUT")" -eq 6 ] && sed -n 6p "$OUT" | grep -q "^549755813888," ||
  bad "$ARGS: 5 rows ending at sigma = 2^39"
ARGS="--bits 1000 --hashes 3 --sigma 300 --curve --points 2"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
grep -q "^300,0.0075072348641" "$OUT" || bad "$ARGS: the MODEL.md vector as the last point"
expect_usage "--curve" --bits 1Ti --hashes 8 --sigma 512Gi --curve
expect_usage "--points" --bits 1000 --hashes 3 --sigma 300 --points 5
expect_usage "--method" --bits 1000 --hashes 3 --sigma 300 --method bogus
# the asymptotic method at a size the exact pass takes minutes for, against
# the exact pass at a size where it is quick (2^23: same value to 1e-9)
ARGS="--bits 8Mi --hashes 8 --sigma 4Mi --method exact --json"
expect_ok $ARGS
fx=$(python3 -c "import json; print(json.load(open('$OUT'))['fp'])")
ARGS="--bits 8Mi --hashes 8 --sigma 4Mi --method fast --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 -c "
import json; d = json.load(open('$OUT'))
assert d['method'] == 'fast' and abs(d['fp'] / $fx - 1) <= 1e-9, d
" || bad "$ARGS: fast vs exact"

# usage errors specific to this command
expect_usage "--sigma" --bits 1000 --hashes 5 --sigma 4 --recycle retaining
expect_usage "--oracle" --bits 1000 --hashes 5 --sigma 100 --oracle
expect_usage "--curve" --bits 1000 --hashes 5 --sigma 100 --curve --json
expect_usage "--bits" --hashes 5 --sigma 100
expect_usage "--hashes" --bits 1000 --sigma 100
finish
