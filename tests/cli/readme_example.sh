#!/usr/bin/env bash
# The README's library example compiles against include/rbf.h and
# build/librbf.a alone, runs, and prints what the README says it prints.
set -euo pipefail
: "${RBF_SRC:?}" "${RBF_BUILD:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The example is the ```c block between the markers in README.md.
awk '/<!-- example:begin -->/{on=1; next} /<!-- example:end -->/{on=0} on' "$RBF_SRC/README.md" |
  sed -e '/^```/d' >"$tmp/example.c"
test -s "$tmp/example.c" || { echo "no example found in README.md"; exit 1; }

# shellcheck disable=SC2086 # RBF_LINK_FLAGS is a list of flags
cc -std=c11 -Wall -Wextra -Werror ${RBF_LINK_FLAGS:-} -I"$RBF_SRC/include" "$tmp/example.c" \
  "$RBF_BUILD/librbf.a" -o "$tmp/example"
"$tmp/example" >"$tmp/out"

# The expected output is the block between the output markers.
awk '/<!-- output:begin -->/{on=1; next} /<!-- output:end -->/{on=0} on' "$RBF_SRC/README.md" |
  sed -e '/^```/d' >"$tmp/want"
if ! diff -u "$tmp/want" "$tmp/out"; then
  echo "README example output differs"
  exit 1
fi
echo "1 passed, 0 failed"
