#!/usr/bin/env bash
# robust_plan.sh -- bad input to `rbf plan` (its options;
# docs/robustness.md): bad values are usage errors (exit 2, one line naming
# the option).
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD=plan

expect_ok --bits 1000 --fp 0.01 --json
expect_ok --memory 1KiB --fp 0.01
expect_ok --capacity 1000 --fp 0.01 --json

for v in 0 1 -0.5 1.5 nan inf abc "" 1e-400; do
  expect_usage "--fp" --bits 1000 --fp "$v"
done
for v in -1 0 abc "" 99999999999999999999999 12XB; do
  expect_usage "--bits" --bits "$v" --fp 0.01
  expect_usage "--capacity" --capacity "$v" --fp 0.01
done
for v in -1 0 abc 16EiB 64XB ""; do
  expect_usage "--memory" --memory "$v" --fp 0.01
done
for v in -1 0 abc 99999999999999999999999; do
  expect_usage "--max-hashes" --bits 1000 --fp 0.01 --max-hashes "$v"
done
expect_usage "--fp" --bits 1000                       # no target rate
expect_usage "--bits" --fp 0.01                       # no size
expect_usage "--hashing" --bits 1000 --fp 0.01 --hashing sideways
expect_usage "--recycle" --bits 1000 --fp 0.01 --recycle sometimes
expect_usage "--fp" --bits 1000 --fp
expect_usage "--bogus" --bits 1000 --fp 0.01 --bogus
finish
