#!/usr/bin/env bash
# edges.sh -- the command line's edges, as a new user finds them:
#   - `rbf help bogus`, `rbf help model extra`, `rbf --help extra`,
#     `rbf --version extra`: usage errors (exit 2, one line);
#   - `--threads 0` means every online processor in every command that
#     takes --threads (simulate, reproduce);
#   - every bad option value is reported in one form, by the shared helper:
#     "rbf CMD: OPT: invalid value 'ARG'[: WHY][; expected WHAT] (try ...)";
#   - the N-bounded header of `rbf model` has no dangling comma;
#   - `rbf plan --json` gives null, not 0, for a gain against a worst case
#     that cannot reach the target.
. "$RBF_SRC/tests/data/cli_lib.bash"

# ---- help and version take nothing after them
expect_usage "bogus" help bogus
expect_usage "extra" help model extra
expect_usage "extra" --help extra
expect_usage "extra" -h extra
expect_usage "extra" --version extra
expect_usage "extra" -V extra
expect_ok help model
grep -q "^Usage: rbf model" "$OUT" || bad "help model: no model usage"

# ---- --threads 0: every online processor
NPROC=$(getconf _NPROCESSORS_ONLN)
ARGS="simulate --bits 1000 --hashes 3 --sigma 300 --arrivals 1000 --epochs 64 --threads 0 --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
got=$(python3 -c "import json; print(json.load(open('$OUT'))['threads'])")
want=$((NPROC < 64 ? NPROC : 64))
[ "$got" = "$want" ] || bad "$ARGS: threads $got, wanted $want (online processors)"
expect_usage "--threads" simulate --bits 1000 --hashes 3 --sigma 300 --threads 4097
# reproduce announces its thread count before any work: wait for that line
# (no clock decides the outcome: the wait ends on the line, or fails after
# 10 minutes), then stop it
CHECKS=$((CHECKS + 1))
"$RBF" reproduce --quick --threads 0 --out "$WORK/r" 2>"$WORK/r.err" >/dev/null &
pid=$!
for _ in $(seq 6000); do
  grep -q "writing into" "$WORK/r.err" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
kill $pid 2>/dev/null; wait $pid 2>/dev/null
want=$((NPROC < 64 ? NPROC : 64))
grep -q "writing into .*, $want thread" "$WORK/r.err" ||
  bad "reproduce --threads 0: not $want threads: $(head -c 300 "$WORK/r.err")"
expect_usage "--threads" reproduce --threads 65

# ---- one form for every bad value
# bad_value CMD OPT VALUE [ARGS...]: exit 2, and exactly that form
bad_value() {
  local cmd=$1 opt=$2 val=$3; shift 3
  CHECKS=$((CHECKS + 1))
  timeout "$CMD_TIMEOUT" "$RBF" $cmd "$@" "$opt" "$val" </dev/null >"$OUT" 2>"$ERR"; local rc=$?
  local line; line=$(head -n 1 "$ERR")
  local prefix="rbf $cmd: $opt: invalid value '$val'"
  local suffix="(try 'rbf $cmd --help')"
  [ $rc -eq 2 ] && [ "$(wc -l <"$ERR")" -eq 1 ] && [ "${line#"$prefix"}" != "$line" ] &&
    [ "${line%"$suffix"}" != "$line" ] ||
    bad "$cmd $* $opt '$val' -> exit $rc, '$line' (wanted '$prefix...$suffix')"
}
M="--bits 1000 --hashes 3 --sigma 300"
for v in x -1 0 257; do bad_value model --hashes "$v" --bits 1000 --sigma 300; done
bad_value model --bits abc --hashes 3 --sigma 300
bad_value model --sigma 1.5 --bits 1000 --hashes 3
bad_value model --hashing sideways $M
bad_value model --recycle sometimes $M
bad_value model --phases 3 $M
bad_value model --method magic $M
# values out of range given the other options
bad_value model --sigma 100 --bits 100 --hashes 3
bad_value model --sigma 2 --bits 100 --hashes 3 --recycle retaining
bad_value model --hashes 3 --bits 2 --messages 1 --hashing non-colliding
bad_value plan --fp 2 --bits 1000
bad_value plan --fp x --bits 1000
bad_value plan --memory 0 --fp 0.01
bad_value plan --memory 16EiB --fp 0.01
bad_value plan --capacity 2000000000000000 --fp 0.01
bad_value plan --max-hashes 0 --bits 1000 --fp 0.01
bad_value simulate --hashes x --bits 1000 --sigma 300
bad_value simulate --seed -1 $M
bad_value simulate --threads many $M
bad_value simulate --workload nonsense:1 $M
bad_value simulate --arrivals 0 $M
bad_value dedup --memory 8EiB
bad_value dedup --memory x
bad_value dedup --fp 0
bad_value dedup --phases 3
bad_value dedup --seed -1
bad_value reproduce --threads -1
bad_value reproduce --seed x
bad_value "bench filter" --hashes 65
bad_value "bench filter" --phases 3
bad_value "bench filter" --sizes 100
bad_value "bench filter" --keys 0
bad_value "bench model" --fp 1
bad_value "bench sim" --sigma 1000
bad_value "bench dedup" --runs 100
bad_value model --messages 1e39 --bits 1000 --hashes 3
bad_value model --messages 1.5e0 --bits 1000 --hashes 3
bad_value model --messages 2^64 --bits 1000 --hashes 3
bad_value model --bits 2^x --hashes 3 --sigma 300

# ---- counts in scientific and power-of-two form: the same as the digits
for pair in "1e12 1000000000000" "2.5E3 2500" "2^40 1099511627776" "1e0 1"; do
  set -- $pair
  expect_ok model --bits 1000 --hashes 3 --messages "$1" --json
  CHECKS=$((CHECKS + 1))
  python3 -c "import json,sys; sys.exit(0 if json.load(open('$OUT'))['messages'] == $2 else 1)" ||
    bad "--messages $1 is not $2: $(head -c 200 "$OUT")"
done
expect_ok plan --memory 2^20B --fp 0.01 --json
CHECKS=$((CHECKS + 1))
python3 -c "import json,sys; sys.exit(0 if json.load(open('$OUT'))['memory_bytes'] == 1048576 else 1)" ||
  bad "--memory 2^20B is not 1 MiB: $(head -c 200 "$OUT")"

# ---- rbf model: the N-bounded header names the model and the hashing only
expect_ok model --bits 1000 --hashes 3 --messages 100
CHECKS=$((CHECKS + 1))
[ "$(head -n 1 "$OUT")" = "model              N-bounded, colliding" ] ||
  bad "model N-bounded header: '$(head -n 1 "$OUT")'"
expect_ok model --bits 1000 --hashes 3 --messages 100 --hashing non-colliding
CHECKS=$((CHECKS + 1))
[ "$(head -n 1 "$OUT")" = "model              N-bounded, non-colliding" ] ||
  bad "model N-bounded non-colliding header: '$(head -n 1 "$OUT")'"
expect_ok model --bits 1000 --hashes 3 --sigma 300
CHECKS=$((CHECKS + 1))
[ "$(head -n 1 "$OUT")" = "model              sigma-bounded one-phase, colliding, non-retaining (renewal pass)" ] ||
  bad "model sigma header: '$(head -n 1 "$OUT")'"

# ---- rbf plan --json: null gain when the worst case cannot reach the target
# (2 bits, eps 0.1: average-N and oracle-N hold one message, the worst case
# none, so there is no ratio)
expect_ok plan --bits 2 --fp 0.1 --json
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "plan --bits 2 --fp 0.1 --json: gains not null: $(cat "$OUT")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["worst_case"]["feasible"] is False
assert d["average_n"]["feasible"] is True and d["oracle_n"]["feasible"] is True
for p in ("sigma_bounded", "average_n", "oracle_n", "worst_case", "two_phase"):
    assert d[p]["gain_vs_worst_case"] is None, p
PY
# and a number when it can
expect_ok plan --bits 1000 --fp 0.01 --json
CHECKS=$((CHECKS + 1))
python3 -c "import json,sys; d=json.load(open('$OUT')); sys.exit(0 if d['average_n']['gain_vs_worst_case'] > 1 else 1)" ||
  bad "plan --bits 1000 --fp 0.01 --json: no numeric gain"
finish
