#!/usr/bin/env bash
# basics.sh -- the command-line conventions of src/cli/cli.h for the whole
# tool: --help and --version on stdout with exit 0, `rbf CMD --help` for each
# command, a usage error exits 2 with ONE line on stderr naming the bad
# command or option, a runtime failure exits 1.
. "$RBF_SRC/tests/data/cli_lib.bash"

COMMANDS="model plan simulate reproduce dedup bench"

# rbf --help / -h / help: stdout, exit 0, every command listed, nothing on stderr
for h in --help -h help; do
  CHECKS=$((CHECKS + 1))
  run_rbf $h; rc=$?
  if [ $rc -ne 0 ] || [ -s "$ERR" ] || ! grep -q "^Usage: rbf" "$OUT"; then
    bad "$h -> exit $rc, or stderr written, or no usage on stdout"
  fi
  for c in $COMMANDS; do
    grep -q "^  $c " "$OUT" || bad "$h does not list '$c'"
  done
done

# rbf with no arguments: usage on stderr, exit 2
CHECKS=$((CHECKS + 1))
run_rbf; rc=$?
{ [ $rc -eq 2 ] && [ ! -s "$OUT" ] && grep -q "^Usage: rbf" "$ERR"; } || bad "(no arguments) -> exit $rc"

# rbf --version: "rbf X.Y.Z" from include/rbf_base.h, exit 0
want=$(sed -n 's/^#define RBF_VERSION_STRING "\(.*\)"/\1/p' "$RBF_SRC/include/rbf_base.h")
for v in --version -V; do
  CHECKS=$((CHECKS + 1))
  run_rbf $v; rc=$?
  [ $rc -eq 0 ] && [ "$(cat "$OUT")" = "rbf $want" ] && [ ! -s "$ERR" ] ||
    bad "$v -> exit $rc, stdout '$(cat "$OUT")', wanted 'rbf $want'"
done

# rbf CMD --help and rbf help CMD: usage of that command on stdout, exit 0
for c in $COMMANDS; do
  for form in "$c --help" "help $c"; do
    CHECKS=$((CHECKS + 1))
    run_rbf $form; rc=$?
    [ $rc -eq 0 ] && [ ! -s "$ERR" ] && grep -q "^Usage: rbf $c" "$OUT" ||
      bad "$form -> exit $rc or no 'Usage: rbf $c' on stdout"
  done
done

# usage errors: one line naming the culprit, exit 2
expect_usage "frobnicate" frobnicate
expect_usage "Model" Model
expect_usage "--bogus" --bogus
expect_usage "-x" -x
expect_usage "--help=yes" --help=yes
for c in $COMMANDS; do
  expect_usage "--no-such-option" "$c" --no-such-option
  [ "$c" = bench ] || expect_usage "-Z" "$c" -Z
done
expect_usage "nosuchbench" bench nosuchbench

# runtime failures: exit 1
# stdout that cannot be written (a full disk): an error, not a silent loss
CHECKS=$((CHECKS + 1))
"$RBF" --help >/dev/full 2>"$ERR"; rc=$?
[ $rc -eq 1 ] && [ -s "$ERR" ] || bad "--help >/dev/full -> exit $rc, wanted 1 with a message"
CHECKS=$((CHECKS + 1))
"$RBF" --version >/dev/full 2>"$ERR"; rc=$?
[ $rc -eq 1 ] || bad "--version >/dev/full -> exit $rc, wanted 1"
# a missing trace file for the simulator
expect_fail "/nonexistent" simulate --bits 1000 --hashes 3 --sigma 300 \
  --epochs 2 --workload trace:/nonexistent/trace.txt

# a closed pipe ends quietly: no message, success
CHECKS=$((CHECKS + 1))
( set -o pipefail; "$RBF" --help 2>"$ERR" | head -c 1 >/dev/null ); rc=$?
[ $rc -eq 0 ] && [ ! -s "$ERR" ] || bad "--help | head -c 1 -> exit $rc, stderr '$(cat "$ERR")'"

finish
