#!/bin/sh
# trace_corpora.sh DIR -- build message traces (one message per line) from
# three real corpora that Debian ships, for rbf simulate --workload
# trace:FILE and rbf model --fn trace:FILE (bench/trace_accuracy.py).
#
#   kjv.txt      natural text: the words of the King James Bible, lower case,
#                in reading order (package bible-kjv-text, via bible-kjv's
#                `bible` command)
#   csrc.txt     source code: the identifiers and keywords of the C headers
#                under /usr/include/linux and /usr/include/x86_64-linux-gnu
#                or the first multiarch directory (packages linux-libc-dev,
#                libc6-dev), files in sorted order
#   paths.txt    a request log's shape: for every file installed by every
#                Debian package (dpkg's file lists, packages in sorted
#                order), the directory that holds it -- directories repeat
#                in bursts, as URLs or flows do
#
# Install first (Debian 12):  apt-get install bible-kjv libc6-dev linux-libc-dev
# Every line is one arrival; equal lines are the same message.
set -eu
out=${1:?usage: trace_corpora.sh DIR}
mkdir -p "$out"
LC_ALL=C
export LC_ALL

command -v bible >/dev/null || { echo "trace_corpora.sh: needs bible (apt-get install bible-kjv)" >&2; exit 1; }
bible -f "Gen1:1-Rev22:21" | sed 's/^[^ ]* //' | tr 'A-Z' 'a-z' | tr -cs "a-z'" '\n' |
    grep -v '^$' > "$out/kjv.txt"

inc=/usr/include
[ -d "$inc/linux" ] || { echo "trace_corpora.sh: needs $inc/linux (apt-get install linux-libc-dev)" >&2; exit 1; }
ma=$(ls -d "$inc"/*-linux-gnu 2>/dev/null | head -n 1 || true)
find "$inc/linux" ${ma:+"$ma"} -name '*.h' -type f | sort | xargs cat |
    tr -cs 'A-Za-z0-9_' '\n' | grep '^[A-Za-z_]' > "$out/csrc.txt"

for f in $(ls /var/lib/dpkg/info/*.list | sort); do
    sed -n 's|^\(/.*\)/[^/]*$|\1|p' "$f"
done > "$out/paths.txt"

for f in kjv csrc paths; do
    printf '%-6s %10s lines %8s distinct\n' "$f" "$(wc -l < "$out/$f.txt")" "$(sort -u "$out/$f.txt" | wc -l)"
done
