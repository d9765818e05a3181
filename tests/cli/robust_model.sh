#!/usr/bin/env bash
# robust_model.sh -- bad input to `rbf model` (its options;
# docs/robustness.md): bad values are usage errors (exit 2, one line naming
# the option); a valid model evaluation exits 0 with rates in [0, 1].
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD=model

OK="--bits 1000 --hashes 3 --sigma 300"
expect_ok $OK --json
grep -q '"fp"' "$OUT" || bad "model --json has no fp"
expect_ok --bits 1000 --hashes 5 --messages 100 --json
expect_ok --bits 1k --hashes 3 --sigma 300        # suffixes

for v in -1 0 abc "" 99999999999999999999999 1.5 12XB; do
  expect_usage "--bits" --bits "$v" --hashes 3 --messages 10
done
for v in -1 0 abc "" 4294967297 257; do
  expect_usage "--hashes" --bits 1000 --hashes "$v" --sigma 300
done
for v in -5 0 abc 99999999999999999999999; do
  expect_usage "--sigma" --bits 1000 --hashes 3 --sigma "$v"
  expect_usage "--messages" --bits 1000 --hashes 3 --messages "$v"
done
expect_usage "--sigma" --bits 1000 --hashes 3 --sigma 1000                 # sigma >= M
expect_usage "--sigma" --bits 1000 --hashes 3 --sigma 500 --phases 2       # >= M/2
expect_usage "--sigma" --bits 1000 --hashes 3                              # neither
expect_usage "--messages" --bits 1000 --hashes 3 --sigma 300 --messages 9  # both
expect_usage "--hashes" --bits 10 --hashes 11 --messages 5 --hashing non-colliding
expect_usage "--hashing" $OK --hashing sideways
expect_usage "--recycle" $OK --recycle sometimes
expect_usage "--phases" $OK --phases 3
expect_usage "--method" $OK --method guess
expect_usage "--bits" --hashes 3 --sigma 300 --bits
expect_usage "--bogus" $OK --bogus
expect_usage "stray" $OK stray
finish
