#!/usr/bin/env bash
# robust_reproduce.sh -- bad input to `rbf reproduce` (docs/robustness.md).
# Only checks that fail before any computation: the run itself is tested by
# the reproduce tests.
. "$RBF_SRC/tests/data/cli_lib.bash"

expect_usage "--quick" reproduce --quick --full
for v in -1 65 abc "" 99999999999999999999999; do
  expect_usage "--threads" reproduce --quick --threads "$v"
done
expect_usage "--seed" reproduce --quick --seed -1
expect_usage "--seed" reproduce --quick --seed 18446744073709551616
expect_usage "--out" reproduce --out
expect_usage "--bogus" reproduce --bogus
expect_usage "extra" reproduce extra
# an output directory that cannot be created
: >"$WORK/afile"
expect_fail "$WORK/afile" reproduce --quick --out "$WORK/afile/report"
expect_fail "/dev/null" reproduce --quick --out /dev/null/report
finish
