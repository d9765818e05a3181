# cli_lib.bash -- helpers for the shell tests of the rbf command line
# (tests/cli/basics.sh, tests/cli/robust_*.sh).  Source it; it needs $RBF.
#
#   expect_usage WORD ARGS...   exit 2, nothing on stdout, exactly one line on
#                               stderr that contains WORD and the --help hint
#   expect_fail WORD ARGS...    exit 1, at least one line on stderr containing WORD
#   expect_ok ARGS...           exit 0
#   unprivileged                the next helper runs rbf as an unprivileged user:
#                               itself when not root, else `nobody` through
#                               setpriv (util-linux); false (and a recorded
#                               skip) when that is impossible
#   skip REASON                 record a row that cannot run here
# Every helper runs `rbf ARGS` with stdin from $STDIN (default /dev/null) and
# a time limit, and counts failures in $FAILS; finish prints the summary and
# sets the exit status: 1 if any check failed, else 77 (which CTest reports
# as skipped, with the SKIPPED lines) if a row could not run, else 0.
set -u
: "${RBF:?RBF must name the rbf binary}"
FAILS=0
CHECKS=0
SKIPS=0
AS=()
STDIN=${STDIN:-/dev/null}
# Under ASan a huge allocation aborts by default; in real life it returns
# NULL, which the "too large to allocate" rows are about.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rbf-cli-test.XXXXXX")
trap 'chmod -R u+rwx "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
OUT=$WORK/stdout
ERR=$WORK/stderr

# CMD: words put before every helper's arguments (e.g. CMD=simulate).
CMD=${CMD:-}

# A command that runs this long has hung: 2 minutes, times the shrink
# factor of the slow builds (ASan, valgrind), which also run slower.
CMD_TIMEOUT=$((120 * ${RBF_TEST_SHRINK:-1}))
run_rbf() {
  # shellcheck disable=SC2086
  timeout "$CMD_TIMEOUT" "${AS[@]}" "$RBF" $CMD "$@" <"$STDIN" >"$OUT" 2>"$ERR"
  local rc=$?
  AS=()
  return $rc
}

bad() {
  FAILS=$((FAILS + 1))
  echo "FAIL: rbf ${CMD:+$CMD }$*" >&2
  echo "  stderr: $(head -c 600 "$ERR")" >&2
}

expect_usage() {
  local word=$1; shift
  CHECKS=$((CHECKS + 1))
  run_rbf "$@"; local rc=$?
  local lines; lines=$(wc -l <"$ERR")
  if [ $rc -ne 2 ]; then bad "$* -> exit $rc, wanted 2 (usage error)"; return; fi
  if [ -s "$OUT" ]; then bad "$* -> wrote to stdout on a usage error"; return; fi
  if [ "$lines" -ne 1 ]; then bad "$* -> $lines lines on stderr, wanted 1"; return; fi
  if ! grep -qF -- "$word" "$ERR"; then bad "$* -> stderr does not name '$word'"; return; fi
  if ! grep -qF -- "--help" "$ERR"; then bad "$* -> no --help hint"; return; fi
}

expect_fail() {
  local word=$1; shift
  CHECKS=$((CHECKS + 1))
  run_rbf "$@"; local rc=$?
  if [ $rc -ne 1 ]; then bad "$* -> exit $rc, wanted 1 (runtime failure)"; return; fi
  if ! [ -s "$ERR" ]; then bad "$* -> exit 1 with nothing on stderr"; return; fi
  if ! grep -qF -- "$word" "$ERR"; then bad "$* -> stderr does not mention '$word'"; return; fi
}

expect_ok() {
  CHECKS=$((CHECKS + 1))
  run_rbf "$@"; local rc=$?
  if [ $rc -ne 0 ]; then bad "$* -> exit $rc, wanted 0"; return; fi
}

skip() {
  SKIPS=$((SKIPS + 1))
  echo "SKIPPED: $*"
}

unprivileged() {
  AS=()
  [ "$(id -u)" -ne 0 ] && return 0
  if ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
    skip "running as root, and cannot run as nobody (needs setpriv from util-linux)"
    return 1
  fi
  local g=nogroup
  getent group nogroup >/dev/null 2>&1 || g=$(id -g nobody)
  chmod 711 "$WORK" # nobody may reach the files named in $WORK
  AS=(setpriv --reuid=nobody --regid="$g" --clear-groups)
}

finish() {
  echo "$CHECKS checks, $FAILS failed, $SKIPS skipped"
  [ "$FAILS" -eq 0 ] || exit 1
  [ "$SKIPS" -eq 0 ] || exit 77
  exit 0
}
