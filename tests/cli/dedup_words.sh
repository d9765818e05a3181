#!/usr/bin/env bash
# rbf dedup on real text the project does not write: Debian's wamerican word
# list, three copies shuffled with a fixed seed (about 313,000 lines).  A
# small memory makes recycles and false positives happen in volume; each run
# is checked by dedup_check.py (order, bytes, no repeat without a recycle,
# awk's lines kept except false positives, false-positive count and cycle
# length within the model's 99.9% intervals).  One- and two-phase.
# The flat layout is asked for: the checker computes the flat model (the
# default layout may be blocked at these sizes: docs/dedup.md).
set -euo pipefail
: "${RBF:?path of the rbf binary}" "${RBF_SRC:?source directory}"
DICT=/usr/share/dict/american-english
[ -r "$DICT" ] || { echo "missing $DICT (Debian package wamerican: scripts/deps.sh)"; exit 1; }
CHECK="$RBF_SRC/tests/cli/dedup_check.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C

python3 - "$DICT" "$tmp/in" <<'PY'
import random, sys
words = open(sys.argv[1], "rb").read().split(b"\n")
if words[-1] == b"":
    words.pop()
lines = words * 3
random.Random(20240607).shuffle(lines)
open(sys.argv[2], "wb").write(b"\n".join(lines) + b"\n")
PY
awk '!seen[$0]++' "$tmp/in" >"$tmp/awk"

# run PHASES MEMORY EPS SEED: dedup with stats and trace, then the checks
run() {
    local phases=$1 mem=$2 eps=$3 seed=$4
    echo "== --phases $phases --memory $mem --fp $eps --seed $seed"
    "$RBF" dedup --layout flat --phases "$phases" --memory "$mem" --fp "$eps" --seed "$seed" \
        --stats --trace-recycles <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
    grep '^recycle ' "$tmp/err" >"$tmp/trace" || true
    grep -v '^recycle ' "$tmp/err" >"$tmp/stats"
    cat "$tmp/stats"
    python3 "$CHECK" "$tmp/in" "$tmp/out" "$tmp/trace" "$tmp/stats" "$tmp/awk" "$eps"
}

run 1 4KiB 0.01 42
run 2 8KiB 0.01 43

# The same seed gives the same output, byte for byte, without the trace.
"$RBF" dedup --layout flat --memory 4KiB --fp 0.01 --seed 42 <"$tmp/in" >"$tmp/again"
cmp "$tmp/again" "$tmp/out.1" 2>/dev/null || {
    "$RBF" dedup --layout flat --phases 1 --memory 4KiB --fp 0.01 --seed 42 <"$tmp/in" >"$tmp/out.1"
    cmp "$tmp/again" "$tmp/out.1"
}
# Without --seed the seed is random: two runs drop different lines (with
# thousands of false positives, equal outputs would mean a fixed seed).
"$RBF" dedup --memory 4KiB --fp 0.01 --stats <"$tmp/in" >"$tmp/r1" 2>"$tmp/s1"
"$RBF" dedup --memory 4KiB --fp 0.01 --stats <"$tmp/in" >"$tmp/r2" 2>"$tmp/s2"
if cmp -s "$tmp/r1" "$tmp/r2"; then echo "FAIL: two unseeded runs gave the same output"; exit 1; fi
if [ "$(grep '^seed:' "$tmp/s1")" = "$(grep '^seed:' "$tmp/s2")" ]; then
    echo "FAIL: two unseeded runs report the same seed"; exit 1
fi
echo "all dedup word-list checks passed"
