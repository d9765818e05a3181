#!/usr/bin/env bash
# filter_bench.sh -- `rbf bench filter` runs (a tiny size, few keys) in both
# orders and reports every row in its JSON.  No timing is asserted here:
# timings belong to the benchmark itself (docs/performance.md).
. "$RBF_SRC/tests/data/cli_lib.bash"
CMD="bench filter"
for order in interleaved sequential; do
    ARGS="--sizes 128KiB --keys 8192 --reps 1 --fill-cap 4096 --json"
    # the sequential run also streams its keys from one round-sized array
    [ "$order" = sequential ] && ARGS="$ARGS --sequential --chunk 8192"
    expect_ok $ARGS
    CHECKS=$((CHECKS + 1))
    python3 - "$OUT" "$order" <<'PY' || bad "$ARGS: unexpected JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["order"] == sys.argv[2], d["order"]
assert d["hashes"] == 7 and d["reps"] == 1
assert d["chunk"] == (8192 if sys.argv[2] == "sequential" else 4096), d["chunk"]
rows = [r for s in d["sizes"] for r in s["results"]]
names = {r["implementation"] for r in rows}
assert {"rbf_insert", "rbf_insert_keys", "rbf_contains"} <= names, names
# both layouts by default: the blocked rows, the one-line limits and the hash
assert d["layouts"] == "both", d["layouts"]
assert {"rbf_insert blocked", "rbf_insert_keys blocked", "rbf_contains blocked",
        "rbf_contains_keys blocked", "rbf_hash"} <= names, names
assert all(s["limit_1line_rmw_ns"] > 0 and s["hash_ns"] > 0 for s in d["sizes"])
assert all(r["speedup_vs_flat"] > 0 for r in rows if r["layout"] == "blocked")
assert all(r["ns_per_op"] > 0 and len(r["rounds_ns_per_op"]) == 1 for r in rows)
# the path of every row and the processor it ran on
assert isinstance(d["cpu_model"], str) and isinstance(d["cpu_flags"], list)
paths = {"avx512", "avx2", "portable", "reference"}
assert all(r["path"] in paths for r in rows if r["implementation"].startswith("rbf_")
           and r["implementation"] != "rbf_hash"), {r["path"] for r in rows}
assert all(r["path"] == "C" for r in rows if r["implementation"].startswith("libbloom"))
PY
done
# the switches of the paths: each row says which path ran
for sw in "RBF_NO_AVX2 portable" "RBF_NO_SIMD reference"; do
    set -- $sw
    OUT_SW=$(env "$1=1" "$RBF" bench filter --sizes 128KiB --keys 4096 --reps 1 --fill-cap 4096 --json) ||
        bad "$1=1 bench filter failed"
    CHECKS=$((CHECKS + 1))
    printf '%s' "$OUT_SW" | python3 -c '
import json, sys
d = json.load(sys.stdin)
var, want = sys.argv[1], sys.argv[2]
assert d["path_switches"] == var + "=1", d["path_switches"]
s = d["sizes"][0]
assert s["path_flat"] == want and s["path_blocked"] == want, (s["path_flat"], s["path_blocked"])
rows = [r for r in s["results"] if r["implementation"].startswith("rbf_") and r["implementation"] != "rbf_hash"]
assert rows and all(r["path"] == want for r in rows), {r["path"] for r in rows}
' "$1" "$2" || bad "$1=1: rows not on the $2 path"
done
# --threads: one filter shared by 1..N threads, every row present
ARGS="--threads 2 --sizes 64KiB --keys 4096 --reps 1 --json"
expect_ok $ARGS
CHECKS=$((CHECKS + 1))
python3 - "$OUT" <<'PY' || bad "$ARGS: unexpected JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["benchmark"] == "filter-threads" and d["max_threads"] == 2
s = d["sizes"][0]
assert s["bytes"] == 65536
got = {(r["implementation"], r["threads"]) for r in s["rows"]}
want = {("single-writer, no lock", 1)} | {(n, t) for n in ("concurrent", "mutex", "per-thread", "shared-array limit") for t in (1, 2)}
assert got == want, got
assert all(r["mops"] > 0 and r["cpu_ns_per_insert"] > 0 and len(r["rounds_ns"]) == 1 for r in s["rows"])
assert s["concurrent_2t_over_1t"] > 0 and s["concurrent_2t_over_1t_if_free_cores"] > 0
assert s["limit_2t_over_1t"] > 0 and d["line_trip_ns"] > 0
PY
expect_usage "--threads" --threads 0
expect_usage "--threads" --threads 65
expect_ok --sizes 128KiB --keys 4096 --reps 1 --fill-cap 4096 --layout blocked
CHECKS=$((CHECKS + 1))
grep -q "rbf_insert blocked" "$OUT" && ! grep -q "rbf_insert  " "$OUT" || bad "--layout blocked: rows"
expect_usage "--layout" --layout diagonal
expect_usage "512" --sizes 1032 --layout blocked
expect_usage "--sequential" --sequential=1
expect_usage "--chunk" --chunk 0
expect_usage "--chunk" --chunk 100 --batch 256
expect_usage "--chunk" --chunk 16Mi --hashes 7
finish
