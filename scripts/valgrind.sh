#!/usr/bin/env bash
# Run the test suite under valgrind memcheck; fail on any memory error or
# leak (definite or indirect).
#   scripts/valgrind.sh [BUILD_DIR]     (default: build; make test-valgrind)
# Every C test program (BUILD_DIR/tests/test_*) runs under valgrind with
# RBF_TEST_SHRINK=$SHRINK (default 20): tests that honour it run fewer
# iterations, every test runs; the programs in NOSHRINK (default test_batch,
# whose checks need its full stream) run at full size.  The CLI tests listed
# in VALGRIND_CLI (default: basics; the robust_* scripts too with
# VALGRIND_CLI="basics robust_simulate ...", slow) run with RBF pointing at a
# wrapper that runs rbf under valgrind, so every rbf invocation they make is
# checked.  (All CLI tests also run against the ASan+UBSan build in make test.)
# The programs in VALGRIND_SKIP do not run under valgrind; by default the
# two pure model programs whose arithmetic valgrind slows most
# (test_blocked_model 160 s and test_model_nexact 87 s of a 280 s stage,
# 45x their native time): they allocate little, and run under ASan+UBSan.
# (test_model and test_model_edges run: with RBF_TEST_SHRINK they thin their
# grids, ~30 s together, and test_model detects that valgrind computes long
# double in 64 bits and widens only its long-double reference tolerances.)
# Environment: JOBS (parallel programs), SHRINK, NOSHRINK, VALGRIND_CLI,
# VALGRIND_SKIP.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
SHRINK=${SHRINK:-20}
NOSHRINK=${NOSHRINK:-test_batch}
VALGRIND_SKIP=${VALGRIND_SKIP-test_blocked_model test_model_nexact}
if ! command -v valgrind >/dev/null; then
  echo "valgrind.sh: valgrind is missing (Debian: valgrind; see scripts/deps.sh)" >&2
  exit 1
fi
[ -d "$B/tests" ] || { echo "valgrind.sh: no $B/tests: build first (make)" >&2; exit 1; }
LOGS=$B/valgrind
rm -rf "$LOGS"
mkdir -p "$LOGS"
VG="valgrind --vgdb=no --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --track-origins=no --quiet"

# The rbf wrapper for the CLI tests.
cat >"$LOGS/rbf" <<WRAP
#!/bin/sh
exec $VG --log-file="$PWD/$LOGS/rbf.%p.log" "$PWD/$B/rbf" "\$@"
WRAP
chmod +x "$LOGS/rbf"

run_one() { # name command...
  local name=$1; shift
  local t0=$SECONDS
  local rc=0
  "$@" >"$LOGS/$name.out" 2>&1 || rc=$?
  if [ $rc -eq 0 ]; then
    echo "valgrind: $name ok ($((SECONDS - t0)) s)"
  elif [ $rc -eq 77 ]; then # the program could not run here and said why
    echo "valgrind: $name SKIPPED: $(grep -m1 SKIPPED "$LOGS/$name.out")"
  else
    echo "valgrind: $name FAILED ($((SECONDS - t0)) s), log $LOGS/$name.out" >&2
    tail -30 "$LOGS/$name.out" >&2
    return 1
  fi
}
export -f run_one
export LOGS VG B

status=0
# Every C test program and every listed CLI test, JOBS at a time.
CLI=${VALGRIND_CLI:-basics}
{
  # the longest first (measured: test_blocked_model alone took most of the
  # stage when it started last), then the rest in name order
  SEEN=
  LONG="test_blocked_model test_model_nexact test_plan test_plan_capacity test_model_asym test_fault test_model_edges test_batch"
  for t in $(for n in $LONG; do echo "$B/tests/$n"; done) "$B"/tests/test_*; do
    case $t in *.*) continue ;; esac
    case " $SEEN " in *" $t "*) continue ;; esac
    SEEN="$SEEN $t"
    n=$(basename "$t")
    case " $VALGRIND_SKIP " in *" $n "*) echo "valgrind: $n not run under valgrind (VALGRIND_SKIP; it runs in the suite and under ASan)" >&2; continue ;; esac
    s=$SHRINK
    case " $NOSHRINK " in *" $n "*) s=1 ;; esac
    [ -x "$t" ] && echo "$n env RBF_TEST_SHRINK=$s $VG $t"
  done
  for t in $CLI; do
    [ -f "tests/cli/$t.sh" ] && echo "cli_$t env RBF_TEST_SHRINK=$SHRINK RBF=$PWD/$LOGS/rbf RBF_SRC=$PWD RBF_BUILD=$PWD/$B bash tests/cli/$t.sh"
  done
} | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _ || status=1

# any error valgrind found in an rbf run (the exit status may have been
# swallowed by a test that only expected "not 0")
for l in "$LOGS"/rbf.*.log; do
  [ -s "$l" ] || continue
  echo "valgrind: error in an rbf run: $l" >&2
  head -40 "$l" >&2
  status=1
done
[ $status -eq 0 ] && echo "valgrind: no errors"
exit $status
