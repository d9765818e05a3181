#!/usr/bin/env bash
# simulate.sh -- `rbf simulate` end to end: the JSON object's fields, the
# same numbers whatever the thread count, the text table, --epochs-detail,
# a trace workload, --oracle and two-phase runs.  (Bad input is in
# robust_simulate.sh.)
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD=simulate

# jget KEY: the raw value of a top-level key of the one-line JSON in $OUT.
jget() { grep -o "\"$1\": \(\[[^]]*\]\|\"[^\"]*\"\|[^,}]*\)" "$OUT" | head -1 | sed "s/^\"$1\": //"; }
check() { # check DESCRIPTION COMMAND...: count a failure when COMMAND fails
  local what=$1; shift
  CHECKS=$((CHECKS + 1))
  if ! "$@"; then FAILS=$((FAILS + 1)); echo "FAIL: $what" >&2; fi
}
num_le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

P="--bits 1000 --hashes 3 --sigma 300 --arrivals 20000 --epochs 4 --seed 9"

# JSON: every documented key, one line, sane values.
expect_ok $P --json --threads 1
cp "$OUT" "$WORK/t1"
check "one JSON line" test "$(wc -l <"$OUT")" -eq 1
for k in fp fp_ci99 fp_first fp_each fn epochs arrivals new_arrivals cycles \
         messages_per_cycle seed model model_name threads elapsed_seconds arrivals_per_second \
         fp_first_ci99 fp_each_ci99 fn_ci99 false_positives repeats false_negatives; do
  check "key $k present" grep -q "\"$k\": " "$OUT"
done
check "arrivals = epochs x arrivals" test "$(jget arrivals)" = 80000
check "epochs" test "$(jget epochs)" = 4
check "seed" test "$(jget seed)" = 9
check "threads" test "$(jget threads)" = 1
check "model name" test "$(jget model_name)" = '"f_sigma^1"'
ci=$(jget fp_ci99 | tr -d '[]' | tr ',' ' ')
lo=${ci%% *}; hi=${ci##* }; fp=$(jget fp)
check "fp inside its interval" num_le "$lo" "$fp"
check "interval ordered" num_le "$fp" "$hi"
check "fp_first <= fp" num_le "$(jget fp_first)" "$fp"
check "new_arrivals <= arrivals" num_le "$(jget new_arrivals)" 80000

# Same seed, more threads: the same numbers (timing fields aside).
expect_ok $P --json --threads 2
strip() { sed -e 's/"threads": [0-9]*//; s/"elapsed_seconds": [^,]*//; s/"arrivals_per_second": [^,}]*//' "$1"; }
check "same numbers with 1 and 2 threads" diff <(strip "$WORK/t1") <(strip "$OUT")
# Another seed: other numbers.
expect_ok ${P/--seed 9/--seed 10} --json --threads 2
check "another seed changes the counts" test "$(jget new_arrivals)" != "$(grep -o '"new_arrivals": [0-9]*' "$WORK/t1" | cut -d' ' -f2)"

# --epochs-detail: one entry per epoch.
expect_ok $P --json --epochs-detail
check "per_epoch has 4 entries" test "$(grep -o '"per_epoch": \[.*\]' "$OUT" | grep -o '{' | wc -l)" -eq 4

# The text table names the rates, the model and the interval verdict.
expect_ok $P
for w in "count-instance" "count-first" "count-each" "false negatives" "messages per cycle" \
         "model f_sigma^1" "inside the 99% interval"; do
  check "table shows '$w'" grep -qF "$w" "$OUT"
done
expect_ok $P --epochs 1
check "one epoch: no interval" grep -qF "no interval" "$OUT"

# N-bounded: real user and oracle models; two-phase N-bounded has none.
expect_ok --bits 1000 --hashes 5 --messages 100 --arrivals 20000 --epochs 3 --json
check "real-user model" test "$(jget model_name)" = '"exact_real"'
expect_ok --bits 1000 --hashes 5 --messages 100 --oracle --arrivals 20000 --epochs 3 --json
check "oracle model" test "$(jget model_name)" = '"exact_oracle"'
expect_ok --bits 2000 --hashes 5 --messages 100 --phases 2 --arrivals 20000 --epochs 3 --json
check "two-phase N-bounded model" test "$(jget model_name)" = '"f_N^2_real"'
# nothing observed: null, not 0; too few events: no verdict; trace + --arrivals
expect_ok --bits 1000 --hashes 3 --sigma 300 --workload uniform:100000 --arrivals 50 --epochs 3 --json
check "no completed cycle: messages_per_cycle null" test "$(jget messages_per_cycle)" = null
check "no repeats: fn null" test "$(jget fn)" = null
check "too few events: no verdict" test "$(jget model_inside_ci99)" = null
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); lo,hi=d["fp_ci99"]; sys.exit(0 if 0<=lo<=hi<=1 else 1)' "$OUT" ||
  bad "fp interval not clipped to [0, 1]"
expect_ok --bits 1000 --hashes 3 --sigma 300 --workload uniform:100000 --arrivals 50 --epochs 3
check "text: too few events" grep -q "too few events to judge" "$OUT"
check "text: n/a" grep -q "n/a .*no repeats" "$OUT"
for i in 1 2 3; do echo "x$i"; done >"$WORK/t3"
expect_usage "--arrivals" --bits 1000 --hashes 3 --sigma 300 --workload "trace:$WORK/t3" --arrivals 10
expect_ok --bits 1000 --hashes 3 --sigma 200 --phases 2 --arrivals 20000 --epochs 3 --json
check "two-phase model" test "$(jget model_name)" = '"f_sigma^2"'

# Other workloads run.
for w in zipf:1000:1.0 fading:0.2:100; do
  expect_ok $P --workload "$w" --json
  check "$w counted" test "$(jget arrivals)" = 80000
done

# A trace: 300 lines split over 3 epochs, whatever --arrivals says.
for i in $(seq 1 300); do echo "msg$((i % 37))"; done >"$WORK/trace"
expect_ok --bits 1000 --hashes 3 --sigma 300 --epochs 3 --workload "trace:$WORK/trace" --json
check "trace: 300 arrivals" test "$(jget arrivals)" = 300
check "trace: 37 first arrivals in each of 3 parts" test "$(jget repeats)" = $((300 - 3 * 37))

# --help goes to stdout and exits 0.
expect_ok --help
check "help names --workload" grep -q -- "--workload" "$OUT"
finish
