#!/usr/bin/env bash
# exports.sh -- librbf.a and librbf.so define no global symbol outside the
# library's namespace: every one starts with rbf_ (public API) or rbf__
# (internal, shared between the library's own files), so linking the
# library into a program cannot clash with the program's own names.
set -u
: "${RBF_BUILD:?}"
fails=0
for lib in "$RBF_BUILD/librbf.a" "$RBF_BUILD/librbf.so"; do
  [ -e "$lib" ] || continue
  syms=$(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF >= 3 && $2 ~ /^[A-TV-Z]$/ {print $3}')
  if [ -z "$syms" ]; then
    echo "FAIL: nm found no global symbol in $lib"; fails=$((fails + 1)); continue
  fi
  # (ASan adds __odr_asan.NAME markers for the globals of an instrumented
  # build: they are the sanitizer's, not ours)
  stray=$(printf '%s\n' "$syms" | grep -v '^rbf_' | grep -v '^__odr_asan\.rbf_' | sort -u)
  if [ -n "$stray" ]; then
    echo "FAIL: $lib defines global symbols outside rbf_*:"; printf '  %s\n' $stray
    fails=$((fails + 1))
  fi
done
echo "exports: $fails failed"
[ "$fails" -eq 0 ]
