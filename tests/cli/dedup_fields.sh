#!/usr/bin/env bash
# rbf dedup keys by field: --field N (awk's default splitting, and
# --delimiter C as awk -F C) against awk itself on real text (Debian's
# wamerican words in random columns, blanks and empty fields), --repeated
# against awk 'seen[$N]++', --missing keep against awk 'NF < N ||
# !seen[$N]++'; --json-field against an expected file written here by hand
# (no jq); -0/--null records; no progress line when stderr is not a
# terminal; and the usage errors of the new options.  The filter is large
# and its rate tiny (--memory 8MiB --fp 1e-9 --layout flat: no false
# positive, no recycle; --stats proves "recycles: 0"), so the output must
# equal awk's byte for byte.
set -euo pipefail
: "${RBF:?path of the rbf binary}"
DICT=/usr/share/dict/american-english
[ -r "$DICT" ] || { echo "missing $DICT (Debian package wamerican: scripts/deps.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C
fails=0
checks=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
F=(--memory 8MiB --fp 1e-9 --seed 11 --layout flat)

python3 - "$DICT" "$tmp" <<'PY'
import random, sys
words = [w for w in open(sys.argv[1], "rb").read().split(b"\n") if w][:3000]
rnd = random.Random(20261127)
blank = [b" ", b"  ", b"\t", b" \t "]
ws, csv, tsv = [], [], []
for i in range(60000):
    n = rnd.randint(0, 5)
    f = [rnd.choice(words) for _ in range(n)]
    lead = rnd.choice([b"", b"", b" ", b"\t "])
    tail = rnd.choice([b"", b"", b" "])
    ws.append(lead + b"".join(x + rnd.choice(blank) for x in f[:-1]) + (f[-1] if f else b"") + tail)
    g = [rnd.choice(words + [b""]) for _ in range(n)]
    csv.append(b",".join(g))
    tsv.append(b"\t".join(g))
open(sys.argv[2] + "/ws", "wb").write(b"\n".join(ws) + b"\n")
open(sys.argv[2] + "/csv", "wb").write(b"\n".join(csv) + b"\n")
open(sys.argv[2] + "/tsv", "wb").write(b"\n".join(tsv) + b"\n")
PY

# cmp_awk NAME AWK-PROGRAM-ARGS -- RBF-ARGS: the two outputs must be equal
cmp_awk() {
    local name=$1 file=$2 sep=$3 prog=$4
    shift 4
    checks=$((checks + 1))
    if [ -z "$sep" ]; then awk "$prog" "$tmp/$file" >"$tmp/want"; else awk -F "$sep" "$prog" "$tmp/$file" >"$tmp/want"; fi
    local rc=0
    "$RBF" dedup "${F[@]}" "$@" "$tmp/$file" >"$tmp/got" 2>"$tmp/err" || rc=$?
    [ "$rc" = 0 ] || bad "$name: exit $rc: $(cat "$tmp/err")"
    if ! cmp -s "$tmp/got" "$tmp/want"; then
        bad "$name: differs from awk ($(wc -l <"$tmp/got") lines, awk $(wc -l <"$tmp/want"))"
        diff "$tmp/want" "$tmp/got" | head -5
    fi
}

# Every run below inserts at most one key per line (60,000), so one run per
# file with --stats shows that none of them recycles.
for f in ws csv tsv; do
    checks=$((checks + 1))
    "$RBF" dedup "${F[@]}" --stats "$tmp/$f" >/dev/null 2>"$tmp/err"
    grep -q '^recycles: 0$' "$tmp/err" || bad "$f: the filter recycled (the test assumes it does not)"
    grep -q '^lines read: 60000$' "$tmp/err" || bad "$f: --stats: $(grep 'lines read' "$tmp/err")"
done
for n in 1 2 3 6; do
    cmp_awk "--field $n (blanks)" ws "" "!seen[\$$n]++" --field "$n"
    cmp_awk "--field $n --delimiter ' ' (awk's default)" ws " " "!seen[\$$n]++" --field "$n" --delimiter ' '
    cmp_awk "--field $n --delimiter ," csv "," "!seen[\$$n]++" --field "$n" --delimiter ,
    cmp_awk "--field $n --delimiter '\\t'" tsv "\t" "!seen[\$$n]++" --field "$n" --delimiter '\t'
    cmp_awk "--field $n --repeated" ws "" "seen[\$$n]++" --field "$n" --repeated
    cmp_awk "--field $n --delimiter , --repeated" csv "," "seen[\$$n]++" --field "$n" --delimiter , --repeated
    cmp_awk "--field $n --missing keep" ws "" "NF < $n || !seen[\$$n]++" --field "$n" --missing keep
    cmp_awk "--field $n --delimiter , --missing keep" csv "," "NF < $n || !seen[\$$n]++" --field "$n" --delimiter , --missing keep
done
cmp_awk "--repeated (whole line)" ws "" 'seen[$0]++' --repeated
cmp_awk "whole line" csv "" '!seen[$0]++'
# a repeat in a second file is a repeat
checks=$((checks + 1))
awk -F, 'seen[$2]++' "$tmp/csv" "$tmp/csv" >"$tmp/want"
"$RBF" dedup "${F[@]}" --field 2 --delimiter , --repeated "$tmp/csv" - <"$tmp/csv" >"$tmp/got"
cmp -s "$tmp/got" "$tmp/want" || bad "--repeated over two inputs differs from awk"

# --json-field: the key is a string's decoded content, or another value's
# compact JSON text; invalid JSON, a non-object, or a missing path is a
# missing field (the empty key, or written with --missing keep).  The
# string "true" has the key true, as the JSON value true does.
cat >"$tmp/j" <<'J'
{"id": "a", "n": 1}
{"n": 2, "id": "a"}
{"id": "\u0061"}
{"id": "b\u0000c"}
{"id": "b\u0000d"}
{"id": 7}
{"id": 7.0}
{"id":  7 }
{"id": [1, 2]}
{"id": [1,2]}
{"id": {"x": null}}
{"id": null}
{"id": true}
{"id": "true"}
not json at all
{"other": 1}
["id"]
{"id": "a", "user": {"name": "ann", "tags": {"k": "v"}}}
{"user": {"name": "ann"}}
{"user": {"name": "bob"}}
{"user": "name"}
{"user": {"name": {"first": "c"}}}
J
printf '%s\n' '{"id": "a", "n": 1}' '{"id": "b\u0000c"}' '{"id": "b\u0000d"}' '{"id": 7}' \
    '{"id": 7.0}' '{"id": [1, 2]}' '{"id": {"x": null}}' '{"id": null}' '{"id": true}' \
    'not json at all' >"$tmp/want.id"
printf '%s\n' '{"id": "a", "user": {"name": "ann", "tags": {"k": "v"}}}' \
    '{"user": {"name": "bob"}}' '{"user": {"name": {"first": "c"}}}' >"$tmp/want.name"
# keep: every line without user.name, and the firsts of each name
grep -v '"name"' "$tmp/j" >"$tmp/nameless"
printf '%s\n' '{"id": "a", "user": {"name": "ann", "tags": {"k": "v"}}}' \
    '{"user": {"name": "bob"}}' '{"user": {"name": {"first": "c"}}}' >"$tmp/named"
checks=$((checks + 3))
"$RBF" dedup "${F[@]}" --json-field id "$tmp/j" >"$tmp/got"
cmp -s "$tmp/got" "$tmp/want.id" || { bad "--json-field id"; diff "$tmp/want.id" "$tmp/got" | head; }
"$RBF" dedup "${F[@]}" --json-field user.name "$tmp/j" >"$tmp/got"
# the first line has no user.name... it has: ann; lines without it share the empty key
printf '%s\n' '{"id": "a", "n": 1}' '{"id": "a", "user": {"name": "ann", "tags": {"k": "v"}}}' \
    '{"user": {"name": "bob"}}' '{"user": {"name": {"first": "c"}}}' >"$tmp/want.name"
cmp -s "$tmp/got" "$tmp/want.name" || { bad "--json-field user.name"; diff "$tmp/want.name" "$tmp/got" | head; }
"$RBF" dedup "${F[@]}" --json-field user.name --missing keep "$tmp/j" >"$tmp/got"
grep -v '"name": "ann"}}$' "$tmp/j" | grep -v '"name": "ann", "tags"' >"$tmp/want.keep"
printf '%s\n' '{"id": "a", "n": 1}' '{"n": 2, "id": "a"}' '{"id": "\u0061"}' '{"id": "b\u0000c"}' \
    '{"id": "b\u0000d"}' '{"id": 7}' '{"id": 7.0}' '{"id":  7 }' '{"id": [1, 2]}' '{"id": [1,2]}' \
    '{"id": {"x": null}}' '{"id": null}' '{"id": true}' '{"id": "true"}' 'not json at all' \
    '{"other": 1}' '["id"]' '{"id": "a", "user": {"name": "ann", "tags": {"k": "v"}}}' \
    '{"user": {"name": "bob"}}' '{"user": "name"}' '{"user": {"name": {"first": "c"}}}' >"$tmp/want.keep"
cmp -s "$tmp/got" "$tmp/want.keep" || { bad "--json-field user.name --missing keep"; diff "$tmp/want.keep" "$tmp/got" | head; }

# -0/--null: NUL-ended records, as find -print0 writes them
checks=$((checks + 3))
printf 'a\0b\nx\0a\0c\0b\nx\0a' | "$RBF" dedup "${F[@]}" -0 >"$tmp/got"
printf 'a\0b\nx\0c\0' | cmp -s - "$tmp/got" || bad "-0: $(od -c "$tmp/got" | head -2)"
printf 'a b\0c b\0d e\0' | "$RBF" dedup "${F[@]}" --null --field 2 >"$tmp/got"
printf 'a b\0d e\0' | cmp -s - "$tmp/got" || bad "--null --field 2: $(od -c "$tmp/got" | head -2)"
(cd "$tmp" && mkdir -p t/a t/b && touch t/a/x t/b/x t/a/y && find t -type f -print0 | sort -z) >"$tmp/files0"
"$RBF" dedup "${F[@]}" -0 --field 3 --delimiter / "$tmp/files0" | tr '\0' '\n' >"$tmp/got"
[ "$(wc -l <"$tmp/got")" = 2 ] || bad "-0 --field 3 --delimiter / over find -print0: $(cat "$tmp/got")"

# no progress line when stderr is not a terminal (a file here)
checks=$((checks + 1))
"$RBF" dedup "${F[@]}" "$tmp/ws" "$tmp/csv" >/dev/null 2>"$tmp/err"
[ ! -s "$tmp/err" ] || bad "stderr not a terminal, yet: $(od -c "$tmp/err" | head -2)"

# usage errors: exit 2 and one line naming the option
usage() {
    local name=$1 want=$2
    shift 2
    checks=$((checks + 1))
    local rc=0
    "$RBF" dedup "$@" </dev/null >/dev/null 2>"$tmp/err" || rc=$?
    [ "$rc" = 2 ] || bad "$name: exit $rc, wanted 2"
    grep -q -- "$want" "$tmp/err" || bad "$name: stderr does not name $want: $(cat "$tmp/err")"
}
usage "--delimiter without --field" "--delimiter" --delimiter ,
usage "--delimiter of two bytes" "--delimiter" --field 1 --delimiter ab
usage "--field 0" "--field" --field 0
usage "--field x" "--field" --field x
usage "--missing maybe" "--missing" --field 1 --missing maybe
usage "--missing without a field" "--missing" --missing keep
usage "--json-field ''" "--json-field" --json-field ''
usage "--json-field a..b" "--json-field" --json-field a..b
usage "--field and --json-field" "--json-field" --field 1 --json-field a
usage "--key without --redis" "--key" --key k
usage "--redis without --key" "--redis" --redis redis://127.0.0.1:1
usage "--on-error without --redis" "--on-error" --on-error pass
usage "--on-error maybe" "--on-error" --redis redis://127.0.0.1:1 --key k --on-error maybe
usage "rediss://" "rediss" --redis rediss://127.0.0.1:6380 --key k
usage "http://" "redis://" --redis http://127.0.0.1:6379 --key k
usage "no port" "port" --redis redis://127.0.0.1 --key k
usage "port 0" "port" --redis redis://127.0.0.1:0 --key k
usage "port 70000" "port" --redis redis://127.0.0.1:70000 --key k
usage "no host" "host" --redis redis://:6379 --key k
usage "bad db" "database" --redis redis://127.0.0.1:6379/x --key k
usage "relative unix path" "absolute" --redis unix://tmp/s --key k
usage "bad escape" "escape" --redis 'redis://u:%zz@127.0.0.1:6379' --key k

# --help names every option
checks=$((checks + 1))
"$RBF" dedup --help >"$tmp/help"
for o in --memory --fp --phases --seed --layout --redis --key --on-error --field --delimiter \
    --json-field --missing --repeated -0, --null --stats --trace-recycles --help RBF_REDIS_AUTH; do
    grep -q -- "$o" "$tmp/help" || bad "--help does not mention $o"
done

echo "$checks checks, $fails failures"
[ "$fails" = 0 ]
