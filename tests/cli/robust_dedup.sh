#!/usr/bin/env bash
# robust_dedup.sh -- bad input to `rbf dedup` (docs/robustness.md): bad option
# values are usage errors (exit 2); unreadable files are reported, skipped, and
# make the exit status 1; any bytes on stdin are data.
. "$RBF_SRC/tests/data/cli_lib.bash"
D="dedup --memory 1MiB --seed 1"

# numbers and sizes
for v in -1 0 abc "" 99999999999999999999999 16EiB 64XB 1.5.5 1e999 0x10; do
  expect_usage "--memory" dedup --memory "$v"
done
for v in 0 1 -0.1 1.5 nan inf -inf abc "" 1e-400; do
  expect_usage "--fp" dedup --fp "$v"
done
for v in 0 3 -1 x ""; do
  expect_usage "--phases" dedup --phases "$v"
done
for v in -1 abc 18446744073709551616 ""; do
  expect_usage "--seed" dedup --seed "$v"
done
expect_usage "--memory" dedup --memory
expect_usage "--fp" dedup --fp
expect_usage "--bogus" dedup --bogus
expect_usage "--stats" dedup --stats=yes

# empty input: empty output, success
expect_ok $D
[ -s "$OUT" ] && bad "dedup of empty input wrote output"
# any bytes: NUL, CR, 0xff, a last line without newline
printf 'a\0b\nc\r\n\377\376\n\na\0b\nlast' >"$WORK/bytes"
printf 'a\0b\nc\r\n\377\376\n\nlast' >"$WORK/bytes.want"
STDIN="$WORK/bytes" expect_ok $D
cmp -s "$OUT" "$WORK/bytes.want" || bad "dedup changed bytes: $(od -c "$OUT" | head -3)"
# a missing file and a directory: reported, skipped, exit 1; the others still done
printf 'x\ny\nx\n' >"$WORK/good"
expect_fail "/nonexistent" $D /nonexistent "$WORK/good"
[ "$(cat "$OUT")" = "$(printf 'x\ny')" ] || bad "dedup skipped the readable file after a missing one"
expect_fail "$WORK" $D "$WORK" "$WORK/good"
# an unreadable file (as root: run as nobody, for whom it is unreadable)
cp "$WORK/good" "$WORK/secret"; chmod 000 "$WORK/secret"
if unprivileged; then
  expect_fail "secret" $D "$WORK/secret"
  grep -qF "Permission denied" "$ERR" || bad "unreadable file: no 'Permission denied'"
fi
# memory too small for any filter, or too large to allocate: a clean failure
expect_fail "memory" dedup --memory 1
expect_usage "--memory" dedup --memory 8EiB # above what a size may be
# output that cannot be written
CHECKS=$((CHECKS + 1))
"$RBF" $D "$WORK/good" >/dev/full 2>"$ERR"; rc=$?
[ $rc -eq 1 ] && [ -s "$ERR" ] || bad "dedup >/dev/full -> exit $rc"
finish
