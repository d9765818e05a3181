#!/bin/sh
# trace_speed.sh RBF DIR -- the speed of rbf model --fn trace:FILE and
# --fn gaps:FILE at scale (docs/models.md 9.5): a trace of about 10^8
# arrivals (DIR/kjv.txt from bench/trace_corpora.sh, repeated 127 times,
# about 510 MB written to DIR/big.txt) and a gaps file of 10^6 distinct gaps.
# Prints the reading and model seconds that rbf model reports.  The goal:
# at most 1 s after the file is read (docs/models.md 9.5, 9.7).
# Needs Debian's python3 (no other package).
set -eu
rbf=${1:?usage: trace_speed.sh RBF DIR}
d=${2:?usage: trace_speed.sh RBF DIR}
[ -s "$d/kjv.txt" ] || { echo "trace_speed.sh: run bench/trace_corpora.sh $d first" >&2; exit 1; }
if [ ! -s "$d/big.txt" ]; then
    i=0
    while [ $i -lt 127 ]; do cat "$d/kjv.txt"; i=$((i + 1)); done > "$d/big.txt"
fi
echo "trace: $(wc -l < "$d/big.txt") arrivals"
for a in "--bits 20000 --hashes 5 --sigma 8000" "--bits 20000 --hashes 5 --sigma 5000 --phases 2" \
         "--bits 8000 --hashes 2 --messages 1500" "--bits 2000 --hashes 3 --messages 200 --oracle --phases 2" \
         "--bits 1000000 --hashes 4 --sigma 400000" "--bits 1000000 --hashes 4 --sigma 200000 --phases 2" \
         "--bits 1000000 --hashes 4 --messages 100000"; do
    printf '%-50s ' "$a"
    # shellcheck disable=SC2086
    "$rbf" model $a --fn "trace:$d/big.txt" 2>&1 | grep -E '^seconds|^rbf' || true
done
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    for g in range(1, 1000001):
        f.write("%d,%.6g\n" % (g, g ** -1.1))
' "$d/gaps1m.csv"
for a in "--bits 20000 --hashes 5 --sigma 8000" "--bits 60000 --hashes 3 --sigma 15000 --phases 2" \
         "--bits 1000000 --hashes 4 --sigma 400000" "--bits 1000000 --hashes 4 --sigma 200000 --phases 2" \
         "--bits 1000000 --hashes 4 --sigma 400000 --phases 2" "--bits 1000000 --hashes 1 --sigma 600000" \
         "--bits 1000000 --hashes 4 --messages 100000" "--bits 1000000 --hashes 4 --messages 100000 --phases 2" \
         "--bits 10000000 --hashes 4 --sigma 4000000" "--bits 10000000 --hashes 4 --sigma 4000000 --phases 2" \
         "--bits 10000000 --hashes 4 --messages 1000000" "--bits 10000000 --hashes 4 --messages 1000000 --phases 2"; do
    printf '%-50s gaps 10^6: ' "$a"
    # shellcheck disable=SC2086
    "$rbf" model $a --fn "gaps:$d/gaps1m.csv" --new-fraction 0.05 2>&1 | grep -E '^seconds|^rbf' || true
done
