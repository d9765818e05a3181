#!/usr/bin/env bash
# robust_simulate.sh -- bad input to `rbf simulate` (docs/robustness.md):
# every bad option value is a usage error (exit 2, one line naming the
# option); files that cannot be used are runtime failures (exit 1).
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD=simulate

B="--hashes 3 --epochs 2 --arrivals 200"
OK="--bits 1000 --hashes 3 --sigma 300 --epochs 2 --arrivals 200"
expect_ok $OK
expect_ok --bits 1.5k $B --sigma 300          # a suffix with a fraction that is whole

# numbers: negative, zero, non-numeric, overflowing, fractional, empty, bad suffix
for v in -1 0 abc "" 99999999999999999999999 1.5 1e999 12XB 1kk; do
  expect_usage "--bits" --bits "$v" $B --messages 10
done
for v in -1 0 257 4294967297 abc ""; do
  expect_usage "--hashes" --bits 1000 --hashes "$v" --sigma 300 --epochs 2
done
for v in -5 0 abc 99999999999999999999999; do
  expect_usage "--sigma" --bits 1000 $B --sigma "$v"
  expect_usage "--messages" --bits 1000 $B --messages "$v"
done
for o in --arrivals --epochs --threads --warmup --seed; do
  expect_usage "$o" $OK $o -1
  expect_usage "$o" $OK $o abc
  expect_usage "$o" $OK $o 99999999999999999999999
done
expect_usage "--arrivals" $OK --arrivals 0
expect_usage "--epochs" $OK --epochs 0
# sigma >= M, sigma < k, both/neither thresholds, k > M non-colliding
expect_usage "--sigma" --bits 1000 $B --sigma 1000
expect_usage "--sigma" --bits 1000 $B --sigma 500 --phases 2
expect_usage "--sigma" --bits 1000 $B --sigma 2
expect_usage "--messages" --bits 1000 $B --sigma 300 --messages 10
expect_usage "--sigma" --bits 1000 $B
expect_usage "--hashes" --bits 10 --hashes 11 --messages 5 --hashing non-colliding --epochs 2
# enumerations
expect_usage "--hashing" $OK --hashing sideways
expect_usage "--recycle" $OK --recycle sometimes
expect_usage "--phases" $OK --phases 3
expect_usage "--phases" $OK --phases 0
# workloads
for w in bogus uniform: uniform:0 uniform:-3 uniform:abc zipf:10 zipf:10:-1 zipf:10:nan \
         fading:2:5 fading:0:5 fading:0.5:0 fading:0.5:inf trace:; do
  expect_usage "--workload" $OK --workload "$w"
done
# missing values, unknown options, stray arguments
expect_usage "--bits" $B --sigma 300 --bits
expect_usage "--bogus" $OK --bogus
expect_usage "stray" $OK stray
# files: missing, a directory, empty
expect_fail "/nonexistent" --bits 1000 --hashes 3 --sigma 300 --epochs 2 --workload trace:/nonexistent
expect_fail "$WORK" --bits 1000 --hashes 3 --sigma 300 --epochs 2 --workload "trace:$WORK"
: >"$WORK/empty"
expect_fail "empty" --bits 1000 --hashes 3 --sigma 300 --epochs 2 --workload "trace:$WORK/empty"
# a filter too large to allocate: a clean runtime failure
expect_fail "memory" --bits 1Ei --hashes 3 --sigma 300 --epochs 2 --arrivals 10
finish
