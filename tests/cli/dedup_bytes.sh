#!/usr/bin/env bash
# rbf dedup keeps bytes as they came: NUL, CR, binary garbage, no final
# newline, empty input, a 100 MB line; several files and '-'; output errors
# (/dev/full: exit 1 with a message; a closed pipe: exit 0, quiet); an
# unreadable file (named, skipped, exit 1 at the end, like cat); usage errors
# (exit 2, naming the option).  Every output is compared with cmp against an
# expected output built here (printf, or an exact de-duplication in python).
set -euo pipefail
: "${RBF:?path of the rbf binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# same NAME INPUT EXPECTED [OPTIONS...]: dedup of printf INPUT must equal
# printf EXPECTED, exit 0, nothing on stderr.
same() {
    local name=$1 input=$2 expected=$3
    shift 3
    printf "$input" >"$tmp/in"
    printf "$expected" >"$tmp/want"
    local rc=0
    "$RBF" dedup "$@" <"$tmp/in" >"$tmp/got" 2>"$tmp/err" || rc=$?
    [ "$rc" = 0 ] || bad "$name: exit $rc"
    if [ -s "$tmp/err" ]; then bad "$name: stderr: $(cat "$tmp/err")"; fi
    cmp -s "$tmp/got" "$tmp/want" || bad "$name: output differs: $(od -c "$tmp/got" | head -3)"
}

same "empty input" '' ''
same "one line" 'a\n' 'a\n'
same "repeats" 'a\nb\na\nc\nb\na\n' 'a\nb\nc\n'
same "NUL bytes are data" 'x\0y\nx\0z\nx\0y\nx\n\0\n\0\n' 'x\0y\nx\0z\nx\n\0\n'
same "CR is part of the key" 'a\r\na\na\r\na\n\r\n\r\n' 'a\r\na\n\r\n'
same "no final newline, new" 'a\nb' 'a\nb'
same "no final newline, repeat" 'a\nb\na' 'a\nb\n'
same "no final newline, first line" 'a' 'a'
same "empty lines" '\n\n\na\n\n' '\na\n'
same "two-phase" 'a\nb\na\nc\nb\na\n' 'a\nb\nc\n' --phases 2
same "seeded" 'a\nb\na\nc\nb\na\n' 'a\nb\nc\n' --seed 7 --memory 1MiB --fp 1e-6

# Binary garbage: lines drawn with repeats from 800 random byte strings
# (every byte value but '\n', NUL and CR included), exact dedup in python.
python3 - "$tmp/bin.in" "$tmp/bin.want" <<'PY'
import random, sys
r = random.Random(99)
pool = [bytes(r.choice([b for b in range(256) if b != 10]) for _ in range(r.randrange(0, 300)))
        for _ in range(800)]
lines = [r.choice(pool) for _ in range(6000)]
open(sys.argv[1], "wb").write(b"\n".join(lines))          # no final newline
seen, out = set(), []
for i, l in enumerate(lines):
    if l not in seen:
        seen.add(l)
        out.append(l + (b"\n" if i < len(lines) - 1 else b""))
open(sys.argv[2], "wb").write(b"".join(out))
PY
"$RBF" dedup <"$tmp/bin.in" >"$tmp/bin.got" || bad "binary: exit $?"
cmp "$tmp/bin.got" "$tmp/bin.want" || bad "binary garbage output differs"

# A 100 MB line (no newline inside), then a short line, then the same long
# line again: the output is the long line and the short one.  Streamed
# through pipes, never stored.
big() { head -c 100000000 /dev/zero | tr '\0' 'q'; printf '\0\r\n'; }
cmp <( { big; printf 'short\n'; big; } | "$RBF" dedup ) <( big; printf 'short\n' ) \
    || bad "100 MB line"

# Several files in order, '-' is standard input; each file's end ends a line.
printf 'a\nb\n' >"$tmp/f1"
printf 'b\nc' >"$tmp/f2"
printf 'c\nd\na\n' >"$tmp/f3"
printf 'a\nb\ncd\n' >"$tmp/want"
"$RBF" dedup "$tmp/f1" - "$tmp/f3" <"$tmp/f2" >"$tmp/got" || bad "files: exit $?"
cmp -s "$tmp/got" "$tmp/want" || bad "files and -: $(od -c "$tmp/got")"

# An unreadable file is named on stderr and skipped; the others are still
# de-duplicated and the exit status is 1 at the end (as with cat).
rc=0
"$RBF" dedup "$tmp/f1" "$tmp/missing" "$tmp" "$tmp/f3" >"$tmp/got" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || bad "unreadable file: exit $rc, want 1"
grep -q "$tmp/missing: No such file or directory" "$tmp/err" || bad "missing file not named: $(cat "$tmp/err")"
grep -q "$tmp: Is a directory" "$tmp/err" || bad "directory not named: $(cat "$tmp/err")"
printf 'a\nb\nc\nd\n' | cmp -s - "$tmp/got" || bad "files after an unreadable one: $(od -c "$tmp/got")"

# A stream: lines come out while the input is still open (no waiting for
# 1 MiB of output or for the end).  FIFOs, so the reader waits on rbf, not
# on a clock; the 30 s read timeout only turns a hang into a failure.
mkfifo "$tmp/fin" "$tmp/fout"
"$RBF" dedup <"$tmp/fin" >"$tmp/fout" &
pid=$!
exec 3>"$tmp/fin" 4<"$tmp/fout"
printf 'a\na\nb\n' >&3
l1= l2=
if read -t 30 -r l1 <&4 && read -t 30 -r l2 <&4; then
    [ "$l1/$l2" = "a/b" ] || bad "stream: got '$l1/$l2'"
else
    bad "stream: output held back while the input stays open"
fi
printf 'c\nb\n' >&3
exec 3>&-
read -t 30 -r l1 <&4 || true
[ "$l1" = c ] || bad "stream: after close got '$l1'"
exec 4<&-
wait "$pid" || bad "stream: exit $?"

# Output errors.  A full disk: exit 1 and a message.
DICT=/usr/share/dict/american-english
rc=0
"$RBF" dedup <"$DICT" >/dev/full 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || bad "/dev/full: exit $rc, want 1"
grep -q "No space left on device" "$tmp/err" || bad "/dev/full: message: $(cat "$tmp/err")"
# A closed pipe (the reader took one line): exit 0 and nothing on stderr.
for i in 1 2 3; do
    set +o pipefail
    "$RBF" dedup "$DICT" "$DICT" 2>"$tmp/err" | head -1 >"$tmp/got"
    st=${PIPESTATUS[0]}
    set -o pipefail
    [ "$st" = 0 ] || bad "| head -1: exit $st, want 0"
    if [ -s "$tmp/err" ]; then bad "| head -1: stderr: $(cat "$tmp/err")"; fi
    head -1 "$DICT" | cmp -s - "$tmp/got" || bad "| head -1: wrong first line"
done

# Usage errors: exit 2, one line naming the option, nothing on stdout.
usage_err() {
    local want=$1
    shift
    local rc=0
    "$RBF" dedup "$@" </dev/null >"$tmp/got" 2>"$tmp/err" || rc=$?
    [ "$rc" = 2 ] || bad "dedup $*: exit $rc, want 2"
    grep -q -- "$want" "$tmp/err" || bad "dedup $*: message does not name $want: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" = 1 ] || bad "dedup $*: not one line of error"
    if [ -s "$tmp/got" ]; then bad "dedup $*: wrote to stdout"; fi
}
usage_err --memory --memory 12Q
usage_err --memory --memory 0
usage_err --memory --memory -5M
usage_err --memory --memory
usage_err --fp --fp 0
usage_err --fp --fp 1
usage_err --fp --fp abc
usage_err --phases --phases 3
usage_err --seed --seed x
usage_err --seed --seed -1
usage_err --bogus --bogus
usage_err --stats --stats=yes

# A memory too small for any configuration: exit 1, saying what to change.
rc=0
"$RBF" dedup --memory 1 </dev/null >"$tmp/got" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || bad "--memory 1: exit $rc, want 1"
grep -q -- "--memory" "$tmp/err" || bad "--memory 1: message does not say what to change: $(cat "$tmp/err")"

# --help: stdout, exit 0.
"$RBF" dedup --help >"$tmp/got" || bad "--help: exit $?"
grep -q -- "--phases" "$tmp/got" || bad "--help does not list --phases"

# --stats: the counts, on stderr only.
printf 'a\nb\na\n' | "$RBF" dedup --stats --seed 5 >"$tmp/got" 2>"$tmp/err" || bad "--stats: exit $?"
printf 'a\nb\n' | cmp -s - "$tmp/got" || bad "--stats changed stdout"
for want in "lines read: 3" "lines written: 2" "recycles: 0" "seed: 5" "hashes: " "sigma: " \
    "memory: 67108864 bytes" "predicted fp: " "bits set: "; do
    grep -q "^$want" "$tmp/err" || bad "--stats lacks '$want': $(cat "$tmp/err")"
done

if [ "$fails" -ne 0 ]; then echo "$fails failures"; exit 1; fi
echo "all dedup byte and error checks passed"
