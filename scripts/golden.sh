#!/usr/bin/env bash
# The outputs a user sees, kept byte for byte across a refactor.
#   scripts/golden.sh record DIR [RBF]    run every command of
#                                         scripts/golden-cmds.txt, save outputs
#   scripts/golden.sh compare DIR [RBF]   run them again and diff against DIR
# RBF is the CLI (default build/rbf).  Fields that measure time
# (elapsed_seconds, arrivals_per_second, read_seconds, model_seconds) are dropped before saving and
# comparing; renamed keys are mapped by scripts/golden-renames.sed when it
# exists (old key -> new key, one sed expression a line).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?record or compare}
dir=${2:?directory}
rbf=${3:-build/rbf}
renames=scripts/golden-renames.sed
clean() {
  sed -E -e 's/"(elapsed_seconds|arrivals_per_second|read_seconds|model_seconds)": *[-0-9.eE+]+,? *//g' -e '/^seconds +[0-9.eE+-]+ reading/d' |
    if [ -f "$renames" ] && [ "$mode" = record ]; then sed -E -f "$renames"; else cat; fi
}
mkdir -p "$dir"
n=0 bad=0
while IFS= read -r line; do
  case "$line" in '#'* | '') continue ;; esac
  n=$((n + 1))
  out="$dir/$(printf '%03d' "$n").out"
  # shellcheck disable=SC2086
  got=$("$rbf" $line 2>&1 | clean) || true
  if [ "$mode" = record ]; then
    printf '%s\n%s\n' "rbf $line" "$got" >"$out"
  else
    if ! diff -u "$out" <(printf '%s\n%s\n' "rbf $line" "$got") >"$dir/diff.$n" 2>&1; then
      bad=$((bad + 1))
      echo "DIFFERS: rbf $line (see $dir/diff.$n)"
    else
      rm -f "$dir/diff.$n"
    fi
  fi
done <scripts/golden-cmds.txt
if [ "$mode" = compare ]; then
  echo "golden: $((n - bad)) passed, $bad failed"
  [ "$bad" -eq 0 ]
else
  echo "golden: recorded $n outputs in $dir"
fi
