#!/usr/bin/env bash
# blocked.sh -- `--layout flat|blocked` on the command line: rbf simulate
# runs the blocked filter (and reports its layout), rbf dedup with the
# blocked layout writes exactly the lines a flat run writes on input with
# no false positive to make (few distinct lines in a large memory), rounds
# its memory down to whole 64-byte blocks, and both refuse a bad --layout.
. "$RBF_SRC/tests/data/cli_lib.bash"

CMD=simulate
P="--bits 51200 --hashes 5 --sigma 20000 --arrivals 20000 --epochs 3 --seed 4 --json"
expect_ok $P --layout blocked
CHECKS=$((CHECKS + 1))
grep -q '"layout": "blocked"' "$OUT" || bad "$P --layout blocked: no \"layout\": \"blocked\""
cp "$OUT" "$WORK/blocked.json"
expect_ok $P
CHECKS=$((CHECKS + 1))
grep -q '"layout": "flat"' "$OUT" || bad "$P: no \"layout\": \"flat\""
# the two layouts are different filters: their counts differ
CHECKS=$((CHECKS + 1))
cmp -s "$OUT" "$WORK/blocked.json" && bad "$P: the blocked run gave the flat run's output"
expect_usage "--layout" $P --layout diagonal
expect_usage "512" --bits 51201 --hashes 5 --sigma 20000 --layout blocked

CMD=dedup
seq 1 3000 | awk '{ print $1 % 1000 }' >"$WORK/in.txt"
STDIN="$WORK/in.txt"
expect_ok --memory 1MiB --seed 5 --layout blocked
cp "$OUT" "$WORK/blocked.out"
expect_ok --memory 1MiB --seed 5
CHECKS=$((CHECKS + 1))
cmp -s "$OUT" "$WORK/blocked.out" || bad "dedup --layout blocked wrote other lines than flat"
CHECKS=$((CHECKS + 1))
[ "$(wc -l <"$OUT")" -eq 1000 ] || bad "dedup wrote $(wc -l <"$OUT") lines, wanted 1000"
expect_ok --memory 100001 --seed 5 --layout blocked --stats
CHECKS=$((CHECKS + 1))
grep -q "memory: 99968 bytes (799744 bits, 1 phase, blocked layout)" "$ERR" ||
  bad "dedup --memory 100001 --layout blocked: memory not rounded down to 99968 bytes"
expect_usage "--layout" --layout diagonal
finish
